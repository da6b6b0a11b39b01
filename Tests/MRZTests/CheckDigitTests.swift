import XCTest
import MRZ

final class CheckDigitTests: XCTestCase {
    /// ICAO Doc 9303 Part 3 §4.9 worked examples and the Part 4 TD3 specimen (Anna Maria Eriksson).
    func testICAOExamples() {
        XCTAssertEqual(MRZ.checkDigit("520727"), 3)        // date example in §4.9
        XCTAssertEqual(MRZ.checkDigit("AB2134<<<"), 5)     // document number example in §4.9
        XCTAssertEqual(MRZ.checkDigit("L898902C3"), 6)     // TD3 specimen document number
        XCTAssertEqual(MRZ.checkDigit("740812"), 2)        // TD3 specimen birth date
        XCTAssertEqual(MRZ.checkDigit("120415"), 9)        // TD3 specimen expiry date
        XCTAssertEqual(MRZ.checkDigit("ZE184226B<<<<<"), 1) // TD3 specimen optional data
    }

    func testRejectsCharactersOutsideTheAlphabet() {
        XCTAssertNil(MRZ.checkDigit("ab12"))
        XCTAssertNil(MRZ.checkDigit("12 34"))
        XCTAssertEqual(MRZ.checkDigit(""), 0)
    }
}
