import XCTest
@testable import MRZ

/// Check-digit-guided OCR-error correction: what is corrected, what is only flagged, and how the
/// OCR's own runner-ups are preferred.
final class CorrectionTests: XCTestCase {
    let td3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
    let td1 = ["I<UTOD231458907<<<<<<<<<<<<<<<", "7408122F1204159UTO<<<<<<<<<<<6", "ERIKSSON<<ANNA<MARIA<<<<<<<<<<"]

    func replacing(_ lines: [String], _ line: Int, _ column: Int, _ ch: Character) -> [String] {
        var out = lines; var a = Array(out[line]); a[column] = ch; out[line] = String(a); return out
    }

    func testLettersInDatesAndCheckDigitsAreCorrected() {
        // I for 1 in the birth date, O for 0 in the expiry date, G for 6 as the document-number check digit.
        var bad = replacing(td3, 1, 17, "I")   // 7408I2
        bad = replacing(bad, 1, 23, "O")       // 12O415
        bad = replacing(bad, 1, 9, "G")        // document-number check digit 6 → G
        let r = parser().parse(bad)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.lines, td3)
        XCTAssertEqual(Set(r.corrections.map { "\($0.line):\($0.column) \($0.from)→\($0.to) \($0.field)" }),
                       ["2:18 I→1 birth_date", "2:24 O→0 expiry_date", "2:10 G→6 document_number_check_digit"])
        XCTAssertTrue(r.corrections.allSatisfy { $0.source == "confusion_table" })
        XCTAssertEqual(r.fields.birthDate, "1974-08-12")
    }

    func testCorrectionCanBeTurnedOff() {
        let bad = replacing(td3, 1, 17, "I")
        let r = parser(correct: false).parse(bad)
        XCTAssertFalse(r.valid)
        XCTAssertTrue(r.corrections.isEmpty)
        XCTAssertEqual(r.lines, bad)
        XCTAssertEqual(r.checkDigit("birth_date")?.valid, false)
    }

    /// A misread check digit (a digit for another digit) is not "fixed" by changing the field to match.
    func testMisreadCheckDigitIsNotCompensatedElsewhere() {
        let bad = replacing(td3, 1, 9, "7")    // document-number check digit 6 → 7
        let r = parser().parse(bad)
        XCTAssertFalse(r.valid)
        XCTAssertTrue(r.corrections.isEmpty, "\(r.corrections)")
        XCTAssertEqual(r.checkDigit("document_number")?.expected, "6")
        XCTAssertEqual(r.checkDigit("document_number")?.found, "7")
    }

    func testFillerConfusionInDocumentNumber() {
        // Czech specimen: document number "99003853<"; its filler read as C.
        let cze = ["P<CZESPECIMEN<<VZOR<<<<<<<<<<<<<<<<<<<<<<<<<", "99003853<1CZE1101018M1207046110101111<<<<<94"]
        let bad = replacing(cze, 1, 8, "C")
        // By the table alone, C→< competes with reading one of the digits as its look-alike letter
        // (0→O, 8→B, 5→S): the check digit cannot choose, so the MRZ is flagged.
        let alone = parser().parse(bad)
        XCTAssertFalse(alone.valid)
        XCTAssertTrue(alone.corrections.isEmpty)
        // The OCR's runner-up '<' for that cell settles it.
        var alternatives: [[[Character]]] = bad.map { $0.map { _ in [] } }
        alternatives[1][8] = ["<"]
        let r = parser().parse(bad, alternatives: alternatives)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.lines, cze)
        XCTAssertEqual(r.corrections.map { "\($0.from)→\($0.to) \($0.field) \($0.source)" }, ["C→< document_number ocr_alternative"])
        // Read as K, the check digit cannot see it (K and < both weigh 0 mod 10): kept, and warned about.
        let k = parser().parse(replacing(cze, 1, 8, "K"))
        XCTAssertTrue(k.valid)
        XCTAssertTrue(k.corrections.isEmpty)
        XCTAssertEqual(k.fields.documentNumber, "99003853K")
        XCTAssertTrue(k.warnings.contains { $0.hasPrefix("document_number: 'K' at line 2 column 9") }, "\(k.warnings)")
    }

    func testAmbiguousFillerConfusionIsFlagged() {
        // "ZE184226B<<<<<" with a filler read as C: C→< and the E of "ZE"→< both satisfy the check digits.
        let r = parser().parse(replacing(td3, 1, 37, "C"))
        XCTAssertFalse(r.valid)
        XCTAssertTrue(r.corrections.isEmpty)
        XCTAssertTrue(r.errors.contains { $0 == "optional_data check digit fails and 2 different corrections would satisfy it; none applied" },
                      "\(r.errors)")
    }

    /// With the table alone two substitutions satisfy the check digit: flagged. With the OCR's
    /// runner-up for the right cell, corrected from it.
    func testOCRAlternativesBreakTies() {
        let che = ["IDCHESO002068<8<<<<<<<<<<<<<<<", "8102287F1301014CHE<<<<<<<<<<<4", "VADIS<<QUO<<<<<<<<<<<<<<<<<<<<"]
        let alone = parser().parse(che)
        XCTAssertFalse(alone.valid)
        XCTAssertTrue(alone.corrections.isEmpty)
        XCTAssertTrue(alone.errors.contains { $0.contains("different corrections would satisfy it") }, "\(alone.errors)")

        var alternatives: [[[Character]]] = che.map { $0.map { _ in [] } }
        alternatives[0][6] = ["0", "Q"]
        let helped = parser().parse(che, alternatives: alternatives)
        XCTAssertTrue(helped.valid, "\(helped.errors)")
        XCTAssertEqual(helped.lines[0], "IDCHES0002068<8<<<<<<<<<<<<<<<")
        XCTAssertEqual(helped.corrections, [MRZCorrection(line: 1, column: 7, from: "O", to: "0", field: "document_number",
                                                          source: "ocr_alternative")])
        // Alternatives index the lines as given, before trimming.
        let padded = ["  " + che[0], che[1], che[2]]
        var shifted = alternatives; shifted[0] = [[], []] + shifted[0]
        XCTAssertTrue(parser().parse(padded, alternatives: shifted).valid)
        // An alternative the check digit does not confirm is not taken.
        var wrong: [[[Character]]] = che.map { $0.map { _ in [] } }
        wrong[0][7] = ["3"]
        XCTAssertFalse(parser().parse(che, alternatives: wrong).valid)
    }

    /// Visas have no composite check digit: a table substitution confirmed by a single check digit is
    /// not applied; the same substitution offered by the OCR is.
    func testVisaNeedsTheOCRToOfferTheFix() {
        let mrvb = ["V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<", "L8988901C4XXX4009078F9612109<<<<<<<<"]
        let bad = replacing(mrvb, 1, 6, "O")
        let r = parser().parse(bad)
        XCTAssertFalse(r.valid)
        XCTAssertTrue(r.corrections.isEmpty)
        var alternatives: [[[Character]]] = bad.map { $0.map { _ in [] } }
        alternatives[1][6] = ["0"]
        let helped = parser().parse(bad, alternatives: alternatives)
        XCTAssertTrue(helped.valid, "\(helped.errors)")
        XCTAssertEqual(helped.lines, mrvb)
        // A letter in a visa's date is still forced back to a digit.
        let date = parser().parse(replacing(mrvb, 1, 15, "O"))
        XCTAssertTrue(date.valid, "\(date.errors)")
        XCTAssertEqual(date.corrections.first?.field, "birth_date")
    }

    /// The composite check digit must agree with every field correction: if it does not, nothing is applied.
    func testCompositeMustAgree() {
        // I for 1 in the birth date plus a wrong composite digit: the birth-date fix alone is not enough.
        var bad = replacing(td1, 1, 5, "Z")     // 740812 → 74081Z
        bad = replacing(bad, 1, 29, "5")        // composite 6 → 5
        let r = parser().parse(bad)
        XCTAssertFalse(r.valid)
        XCTAssertTrue(r.corrections.isEmpty, "\(r.corrections)")
        XCTAssertTrue(r.errors.contains { $0.contains("contradict the composite check digit") }, "\(r.errors)")
        // Without the wrong composite digit it is corrected.
        let ok = parser().parse(replacing(td1, 1, 5, "Z"))
        XCTAssertTrue(ok.valid, "\(ok.errors)")
        XCTAssertEqual(ok.lines, td1)
    }

    /// TD1 optional data is covered by the composite check digit only: the table alone is not enough,
    /// the OCR's runner-up confirmed by the composite is.
    func testCompositeOnlyOptionalData() {
        let mac = ["I<MAC12281507<0<<<<<<<<0212300", "6106225M1212307<<<<<<<<<<<<<<6", "CHONG<<KA<KEONG<<<<<<<<<<<<<<<"]
        let bad = replacing(mac, 0, 24, "Z")            // 0212300 → 0Z12300
        let alone = parser().parse(bad)
        XCTAssertFalse(alone.valid)
        XCTAssertTrue(alone.corrections.isEmpty)
        XCTAssertEqual(alone.checkDigit("composite")?.valid, false)
        var alternatives: [[[Character]]] = bad.map { $0.map { _ in [] } }
        alternatives[0][24] = ["2"]
        let helped = parser().parse(bad, alternatives: alternatives)
        XCTAssertTrue(helped.valid, "\(helped.errors)")
        XCTAssertEqual(helped.lines, mac)
        XCTAssertEqual(helped.corrections.map(\.field), ["optional_data"])
        XCTAssertEqual(helped.fields.optionalData, "0212300")
    }

    func testNamesAndCodesAreNeverCorrected() {
        let r = parser().parse(replacing(td3, 0, 8, "1"))      // ERI1SSON
        XCTAssertFalse(r.valid)
        XCTAssertTrue(r.corrections.isEmpty)
        XCTAssertTrue(r.errors.contains { $0.contains("'1' at line 1 column 9: not allowed in name") }, "\(r.errors)")
        let state = parser().parse(replacing(td3, 0, 4, "0"))   // UT0
        XCTAssertFalse(state.valid)
        XCTAssertTrue(state.errors.contains { $0.contains("not allowed in issuing_state") })
        let nationality = parser().parse(replacing(td3, 1, 12, "0"))   // UT0: a warning (national variants use digits)
        XCTAssertTrue(nationality.valid)
        XCTAssertFalse(nationality.fields.nationalityKnown)
        XCTAssertTrue(nationality.warnings.contains { $0.hasPrefix("nationality 'UT0'") })
    }
}
