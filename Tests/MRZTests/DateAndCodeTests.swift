import XCTest
@testable import MRZ

/// Doc 9303-3 §4.8 dates with explicit century rules, and §5 codes.
final class DateAndCodeTests: XCTestCase {
    /// A TD3 MRZ with the given birth and expiry `YYMMDD` (check digits computed).
    func td3(birth: String, expiry: String, sex: String = "F", state: String = "UTO", nationality: String = "UTO") -> [String] {
        func cd(_ s: String) -> String { MRZ.checkDigit(s).map(String.init) ?? "0" }
        var l2 = "L898902C3" + cd("L898902C3") + nationality + birth + cd(birth) + sex + expiry + cd(expiry) + "ZE184226B<<<<<"
        l2 += cd("ZE184226B<<<<<")
        let a = Array(l2)
        l2 += cd(String(a[0..<10]) + String(a[13..<20]) + String(a[21...]))
        return ["P<" + state + "ERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", l2]
    }

    func testCenturyRules() {
        let p = parser()   // reference 2026-06-15, expiry window 20 years
        XCTAssertEqual(p.parse(td3(birth: "260615", expiry: "300101")).fields.birthDate, "2026-06-15")   // today
        XCTAssertEqual(p.parse(td3(birth: "260616", expiry: "300101")).fields.birthDate, "1926-06-16")   // tomorrow → last century
        XCTAssertEqual(p.parse(td3(birth: "000229", expiry: "300101")).fields.birthDate, "2000-02-29")
        XCTAssertEqual(p.parse(td3(birth: "740812", expiry: "460101")).fields.expiryDate, "2046-01-01")  // reference + 20
        XCTAssertEqual(p.parse(td3(birth: "740812", expiry: "470101")).fields.expiryDate, "1947-01-01")
        let narrow = parser(window: 10)
        XCTAssertEqual(narrow.parse(td3(birth: "740812", expiry: "400101")).fields.expiryDate, "1940-01-01")
        XCTAssertEqual(narrow.parse(td3(birth: "740812", expiry: "360101")).fields.expiryDate, "2036-01-01")
    }

    func testExpired() {
        let p = parser()
        XCTAssertEqual(p.parse(td3(birth: "740812", expiry: "260614")).fields.expired, true)
        XCTAssertEqual(p.parse(td3(birth: "740812", expiry: "260615")).fields.expired, false)
    }

    func testUnknownDateParts() {
        let p = parser()
        let noDay = p.parse(td3(birth: "7408<<", expiry: "300101"))
        XCTAssertTrue(noDay.valid, "\(noDay.errors)")
        XCTAssertEqual(noDay.fields.birthDate, "1974-08")
        let noMonth = p.parse(td3(birth: "74<<<<", expiry: "300101"))
        XCTAssertTrue(noMonth.valid)
        XCTAssertEqual(noMonth.fields.birthDate, "1974")
        let nothing = p.parse(td3(birth: "<<<<<<", expiry: "300101"))
        XCTAssertTrue(nothing.valid)
        XCTAssertNil(nothing.fields.birthDate)
        let zeroDay = p.parse(td3(birth: "740800", expiry: "300101"))
        XCTAssertTrue(zeroDay.valid)
        XCTAssertEqual(zeroDay.fields.birthDate, "1974-08")
        XCTAssertTrue(zeroDay.warnings.contains { $0.contains("day 00 read as unknown") })
    }

    func testImpossibleDatesAreErrors() {
        let p = parser()
        for (birth, message) in [("741312", "month 13 does not exist"), ("750229", "day 29 does not exist in 1975-2"),
                                 ("740832", "day 32 does not exist"), ("74<812", "not a date")] {
            let r = p.parse(td3(birth: birth, expiry: "300101"))
            XCTAssertFalse(r.valid, birth)
            XCTAssertTrue(r.errors.contains { $0.contains(message) }, "\(birth): \(r.errors)")
            XCTAssertNil(r.fields.birthDate)
        }
    }

    func testSex() {
        let p = parser()
        XCTAssertEqual(p.parse(td3(birth: "740812", expiry: "300101", sex: "M")).fields.sex, "M")
        XCTAssertEqual(p.parse(td3(birth: "740812", expiry: "300101", sex: "<")).fields.sex, "X")
        let bad = p.parse(td3(birth: "740812", expiry: "300101", sex: "Q"))
        XCTAssertFalse(bad.valid)
        XCTAssertTrue(bad.errors.contains { $0.contains("not allowed in sex") })
    }

    func testCodes() {
        let p = parser()
        for code in ["D<<", "EUE", "UNO", "UNA", "UNK", "XOM", "XXA", "XXB", "XXC", "XXX", "UTO", "GBD", "RKS", "FRA", "NLD"] {
            let r = p.parse(td3(birth: "740812", expiry: "300101", state: code, nationality: code))
            XCTAssertTrue(r.valid, code)
            XCTAssertTrue(r.fields.issuingStateKnown, code); XCTAssertTrue(r.fields.nationalityKnown, code)
            XCTAssertEqual(r.fields.issuingState, code.replacingOccurrences(of: "<", with: ""))
            XCTAssertTrue(r.warnings.allSatisfy { !$0.contains("is not an ISO") }, code)
        }
        let unknown = p.parse(td3(birth: "740812", expiry: "300101", state: "QQQ", nationality: "ZZZ"))
        XCTAssertTrue(unknown.valid)    // a warning, not an error: national variants exist (Romania's "132")
        XCTAssertFalse(unknown.fields.issuingStateKnown); XCTAssertFalse(unknown.fields.nationalityKnown)
        XCTAssertEqual(unknown.warnings.filter { $0.contains("is not an ISO 3166-1 alpha-3 or ICAO code") }.count, 2)
        XCTAssertEqual(CountryCodes.iso3166Alpha3.count, 249)
    }

    /// Name conventions (Doc 9303-3 §4.6): components, truncation, a filler misread inside the name.
    func testNames() {
        let p = parser()
        let full = p.parse(["P<UTONILAVADHANANANDA<<CHAYAPA<DEJTHAMRONG<K", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"])
        XCTAssertEqual(full.fields.surname, "NILAVADHANANANDA")
        XCTAssertEqual(full.fields.givenNames, "CHAYAPA DEJTHAMRONG K")
        XCTAssertTrue(full.fields.nameTruncated)
        let onlyPrimary = p.parse(["P<UTOARKFREITH<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"])
        XCTAssertEqual(onlyPrimary.fields.surname, "ARKFREITH"); XCTAssertEqual(onlyPrimary.fields.givenNames, "")
        let misread = p.parse(["P<UTOERIKSSON<<ANNA<MARIA<<<K<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"])
        XCTAssertTrue(misread.warnings.contains { $0.contains("double filler") }, "\(misread.warnings)")
    }
}
