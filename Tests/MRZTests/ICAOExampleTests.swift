import XCTest
@testable import MRZ

/// The ICAO Doc 9303 (8th ed.) "Utopia" examples (Part 4 TD3, Part 5 TD1, Part 6 TD2, Part 7 MRV-A/B),
/// field by field. Text from Tests/Fixtures/mrz/icao-*.txt.
final class ICAOExampleTests: XCTestCase {
    let p = parser()

    func parseFixture(_ name: String) throws -> MRZResult {
        let r = p.parse(text: try Fixtures.text(name))
        XCTAssertTrue(r.valid, "\(name): \(r.errors)")
        XCTAssertTrue(r.corrections.isEmpty)
        XCTAssertTrue(r.checkDigits.allSatisfy(\.valid))
        return r
    }

    func testTD3Passport() throws {
        let r = try parseFixture("icao-td3.txt")
        XCTAssertEqual(r.format, .td3)
        let f = r.fields
        XCTAssertEqual(f.documentCode, "P"); XCTAssertEqual(f.documentType, "passport")
        XCTAssertEqual(f.issuingState, "UTO"); XCTAssertTrue(f.issuingStateKnown)
        XCTAssertEqual(f.surname, "ERIKSSON"); XCTAssertEqual(f.givenNames, "ANNA MARIA")
        XCTAssertFalse(f.nameTruncated)
        XCTAssertEqual(f.documentNumber, "L898902C3")
        XCTAssertEqual(f.nationality, "UTO")
        XCTAssertEqual(f.birthDate, "1974-08-12")
        XCTAssertEqual(f.sex, "F")
        XCTAssertEqual(f.expiryDate, "2012-04-15")
        XCTAssertEqual(f.expired, true)
        XCTAssertEqual(f.optionalData, "ZE184226B")
        XCTAssertNil(f.optionalData2)
        XCTAssertEqual(r.checkDigits.map(\.name), ["document_number", "birth_date", "expiry_date", "optional_data", "composite"])
        XCTAssertEqual(r.checkDigits.map(\.found), ["6", "2", "9", "1", "0"])
        XCTAssertEqual(r.checkDigits.map(\.expected), ["6", "2", "9", "1", "0"])
        XCTAssertEqual(f.raw["name"], "ERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<")
        XCTAssertEqual(f.raw["optional_data"], "ZE184226B<<<<<")
    }

    func testTD1Card() throws {
        let r = try parseFixture("icao-td1.txt")
        XCTAssertEqual(r.format, .td1)
        let f = r.fields
        XCTAssertEqual(f.documentCode, "I"); XCTAssertEqual(f.documentType, "identity_card")
        XCTAssertEqual(f.issuingState, "UTO")
        XCTAssertEqual(f.documentNumber, "D23145890"); XCTAssertFalse(f.longDocumentNumber)
        XCTAssertEqual(f.birthDate, "1974-08-12"); XCTAssertEqual(f.sex, "F"); XCTAssertEqual(f.expiryDate, "2012-04-15")
        XCTAssertEqual(f.nationality, "UTO")
        XCTAssertEqual(f.optionalData, ""); XCTAssertEqual(f.optionalData2, "")
        XCTAssertEqual(f.surname, "ERIKSSON"); XCTAssertEqual(f.givenNames, "ANNA MARIA")
        XCTAssertEqual(r.checkDigits.map(\.name), ["document_number", "birth_date", "expiry_date", "composite"])
        XCTAssertEqual(r.checkDigits.map(\.found), ["7", "2", "9", "6"])
    }

    func testTD2Card() throws {
        let r = try parseFixture("icao-td2.txt")
        XCTAssertEqual(r.format, .td2)
        let f = r.fields
        XCTAssertEqual(f.documentCode, "I"); XCTAssertEqual(f.issuingState, "UTO")
        XCTAssertEqual(f.surname, "ERIKSSON"); XCTAssertEqual(f.givenNames, "ANNA MARIA")
        XCTAssertEqual(f.documentNumber, "D23145890"); XCTAssertEqual(f.nationality, "UTO")
        XCTAssertEqual(f.birthDate, "1974-08-12"); XCTAssertEqual(f.sex, "F"); XCTAssertEqual(f.expiryDate, "2012-04-15")
        XCTAssertEqual(f.optionalData, "")
        XCTAssertEqual(r.checkDigits.map(\.found), ["7", "2", "9", "6"])
    }

    func testMRVA() throws {
        let r = try parseFixture("icao-mrva.txt")
        XCTAssertEqual(r.format, .mrvA)
        let f = r.fields
        XCTAssertEqual(f.documentCode, "V"); XCTAssertEqual(f.documentType, "visa")
        XCTAssertEqual(f.issuingState, "UTO"); XCTAssertEqual(f.nationality, "XXX"); XCTAssertTrue(f.nationalityKnown)
        XCTAssertEqual(f.surname, "ERIKSSON"); XCTAssertEqual(f.givenNames, "ANNA MARIA")
        XCTAssertEqual(f.documentNumber, "L8988901C")
        XCTAssertEqual(f.birthDate, "1940-09-07"); XCTAssertEqual(f.sex, "F"); XCTAssertEqual(f.expiryDate, "1996-12-10")
        XCTAssertEqual(f.optionalData, "6ZE184226B")
        XCTAssertEqual(r.checkDigits.map(\.name), ["document_number", "birth_date", "expiry_date"])   // no composite on visas
    }

    func testMRVB() throws {
        let r = try parseFixture("icao-mrvb.txt")
        XCTAssertEqual(r.format, .mrvB)
        XCTAssertEqual(r.fields.documentNumber, "L8988901C")
        XCTAssertEqual(r.fields.nationality, "XXX")
        XCTAssertEqual(r.fields.birthDate, "1940-09-07")
        XCTAssertEqual(r.fields.expiryDate, "1996-12-10")
        XCTAssertEqual(r.fields.optionalData, "")
        XCTAssertEqual(r.checkDigits.count, 3)
    }

    /// Doc 9303-5 §4.2.2 note j: a document number longer than 9 characters continues in the optional
    /// data after a '<' in the check-digit position, followed by its check digit over all of it.
    func testTD1LongDocumentNumber() {
        let r = parser().parse(["I<UTOD23145890<7349<<<<<<<<<<<", "7408122F1204159UTO<<<<<<<<<<<6", "ERIKSSON<<ANNA<MARIA<<<<<<<<<<"])
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.fields.documentNumber, "D23145890734")
        XCTAssertTrue(r.fields.longDocumentNumber)
        XCTAssertEqual(r.checkDigit("document_number")?.found, "9")
        XCTAssertEqual(r.fields.optionalData, "")
    }

    /// The French national ID card (1988–2021) is 2×36 but not TD2: its own layout and check digits.
    func testFrenchNationalIDCard() {
        let r = parser().parse(["IDFRABERTHIER<<<<<<<<<<<<<<<<<<<<<<<", "9409923102854CORINNE<<<<<<<6512068F4"])
        XCTAssertEqual(r.format, .frenchNationalID)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.fields.surname, "BERTHIER")
        XCTAssertEqual(r.fields.givenNames, "CORINNE")
        XCTAssertEqual(r.fields.documentNumber, "940992310285")
        XCTAssertEqual(r.fields.birthDate, "1965-12-06")
        XCTAssertEqual(r.fields.sex, "F")
        XCTAssertEqual(r.fields.nationality, "FRA")
        XCTAssertNil(r.fields.expiryDate)
        XCTAssertEqual(r.checkDigits.map(\.name), ["document_number", "birth_date", "composite"])
        // One changed birth-date digit breaks it.
        let bad = parser(correct: false).parse(["IDFRABERTHIER<<<<<<<<<<<<<<<<<<<<<<<", "9409923102854CORINNE<<<<<<<6512078F4"])
        XCTAssertFalse(bad.valid)
        XCTAssertEqual(bad.checkDigit("birth_date")?.valid, false)
    }

    func testJSONShapeIsSnakeCase() throws {
        let r = parser().parse(text: try Fixtures.text("icao-td3.txt"))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(r)) as! [String: Any]
        XCTAssertEqual(json["valid"] as? Bool, true)
        XCTAssertEqual(json["format"] as? String, "TD3")
        let fields = json["fields"] as! [String: Any]
        XCTAssertEqual(fields["document_number"] as? String, "L898902C3")
        XCTAssertEqual(fields["birth_date"] as? String, "1974-08-12")
        XCTAssertEqual(fields["expiry_date"] as? String, "2012-04-15")
        XCTAssertEqual(fields["given_names"] as? String, "ANNA MARIA")
        XCTAssertEqual(fields["issuing_state"] as? String, "UTO")
        let cds = json["check_digits"] as! [[String: Any]]
        XCTAssertEqual(cds.first?["name"] as? String, "document_number")
        XCTAssertNotNil(json["corrections"] as? [Any])
        // Round trip.
        XCTAssertEqual(try JSONDecoder().decode(MRZResult.self, from: JSONEncoder().encode(r)), r)
    }
}
