@testable import MRZ
import XCTest

/// The ISO 3166-1 alpha-3 ↔ alpha-2 table and the X.509 countryName of ICAO's own codes (CountryCodes), which
/// the chip's signer-country check (ICAO 9303-12 §7.1) compares the document signer's and CSCA's countryName with.
final class CountryTableTests: XCTestCase {
    func testKnownPairs() {
        let pairs = ["NLD": "NL", "DEU": "DE", "NZL": "NZ", "GBR": "GB", "FRA": "FR", "USA": "US", "CHN": "CN", "TWN": "TW", "KOR": "KR",
                     "PRK": "KP", "AUT": "AT", "AUS": "AU", "CHE": "CH", "CHL": "CL", "SVK": "SK", "SVN": "SI", "SRB": "RS", "MNE": "ME",
                     "COM": "KM", "CYM": "KY", "MYT": "YT", "ESH": "EH", "ALA": "AX", "ATA": "AQ", "BES": "BQ", "SSD": "SS", "SXM": "SX",
                     "MAC": "MO", "HKG": "HK", "ZAF": "ZA", "UKR": "UA", "IRL": "IE", "ISR": "IL", "SWZ": "SZ", "TLS": "TL"]
        for (a3, a2) in pairs {
            XCTAssertEqual(CountryCodes.alpha2(ofAlpha3: a3), a2, a3)
            XCTAssertEqual(CountryCodes.alpha3(ofAlpha2: a2), a3, a2)
            XCTAssertEqual(CountryCodes.x509CountryNames(ofIssuingState: a3), [a2], a3)
        }
        XCTAssertEqual(CountryCodes.alpha3(ofAlpha2: "nl"), "NLD", "case ignored")
        XCTAssertNil(CountryCodes.alpha2(ofAlpha3: "D"), "ICAO's own code is not ISO 3166-1")
        XCTAssertNil(CountryCodes.alpha2(ofAlpha3: "BDR"))
        XCTAssertNil(CountryCodes.alpha3(ofAlpha2: "UK"), "UK is reserved, not assigned (GB)")
        XCTAssertNil(CountryCodes.alpha3(ofAlpha2: "XK"))
    }

    /// 249 officially assigned codes, one alpha-2 each and no alpha-2 twice (a bijection); every code the MRZ
    /// checks accept maps to one alpha-2, or is an ICAO code with a documented countryName, or is one of the
    /// codes documented to have none.
    func testEveryKnownCodeMapsOnceOrIsADocumentedException() {
        XCTAssertEqual(CountryCodes.iso3166.count, 249)
        XCTAssertEqual(Set(CountryCodes.iso3166.values).count, 249, "no alpha-2 code twice")
        XCTAssertTrue(CountryCodes.iso3166.values.allSatisfy { $0.count == 2 && $0.allSatisfy { ("A"..."Z").contains($0) } })
        XCTAssertTrue(CountryCodes.iso3166.keys.allSatisfy { $0.count == 3 })
        XCTAssertTrue(CountryCodes.iso3166Alpha3.isDisjoint(with: CountryCodes.icao))
        let documented: [String: [String]] = [
            "D": ["DE"], "GBD": ["GB"], "GBN": ["GB"], "GBO": ["GB"], "GBP": ["GB"], "GBS": ["GB"], "RKS": ["XK", "KS"], "EUE": ["EU"],
            "UNO": ["UN", "ZZ"], "UNA": ["UN", "ZZ"], "UNK": ["UN", "ZZ"], "UTO": ["UT"],
        ]
        let none: Set<String> = ["XBA", "XIM", "XCC", "XCE", "XCO", "XEC", "XPO", "XES", "XMP", "XOM", "XDC", "XXA", "XXB", "XXC", "XXX"]
        XCTAssertEqual(Set(documented.keys).union(none), CountryCodes.icao, "every ICAO code is documented")
        for code in CountryCodes.iso3166Alpha3.union(CountryCodes.icao) {
            XCTAssertTrue(CountryCodes.isKnown(code), code)
            let names = CountryCodes.x509CountryNames(ofIssuingState: code)
            if let a2 = CountryCodes.iso3166[code] {
                XCTAssertEqual(names, [a2], code)
                XCTAssertEqual(CountryCodes.alpha3(ofAlpha2: a2), code, code)
            } else if let d = documented[code] {
                XCTAssertEqual(names, d, code)
            } else {
                XCTAssertTrue(none.contains(code), code)
                XCTAssertEqual(names, [], code)
            }
        }
        XCTAssertEqual(CountryCodes.x509CountryNames(ofIssuingState: "QQQ"), [], "an unknown code has none")
        XCTAssertEqual(CountryCodes.x509CountryNames(ofIssuingState: ""), [])
    }
}
