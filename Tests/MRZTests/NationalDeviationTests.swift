import XCTest
@testable import MRZ

/// Named national deviations from ICAO 9303 and OCR noise lines in text input.
///
/// Vectors are our own, built by the ICAO 9303-5 TD1 rules (§4.2.2 note j, §4.2.4): a long document
/// number (more than 9 characters) has its 9 principal characters at positions 6–14, `<` at 15, the
/// rest from 16, then its check digit. Doc 9303 excludes the `<` from the check digit; Belgian and
/// Portuguese cards of some generations count it, which moves every later character's weight.
final class NationalDeviationTests: XCTestCase {
    /// BEL, number 592012345671: ICAO check digit 1, counting the filler 9. Composite computed for each.
    let belDeviant = ["IDBEL592012345<6719<<<<<<<<<<<", "8501019F3001019BEL<<<<<<<<<<<8", "DE<SMET<<MARIE<<<<<<<<<<<<<<<<"]
    let belICAO = ["IDBEL592012345<6711<<<<<<<<<<<", "8501019F3001019BEL<<<<<<<<<<<4", "DE<SMET<<MARIE<<<<<<<<<<<<<<<<"]
    /// PRT, number 001234567ZX4: ICAO 6, counting the filler 4.
    let prtDeviant = ["I<PRT001234567<ZX44<<<<<<<<<<<", "9003152M3106305PRT<<<<<<<<<<<6", "SILVA<<JOAO<PEDRO<<<<<<<<<<<<<"]
    /// The Belgian vector with issuing state and nationality NLD (composite recomputed): no deviation.
    let nldDeviant = ["IDNLD592012345<6719<<<<<<<<<<<", "8501019F3001019NLD<<<<<<<<<<<8", "DE<SMET<<MARIE<<<<<<<<<<<<<<<<"]

    func testOracleVectors() {
        // The vectors' check digits, computed by the two rules independently of the parser.
        XCTAssertEqual(MRZ.checkDigit("592012345671"), 1)
        XCTAssertEqual(MRZ.checkDigit("592012345<671"), 9)
        XCTAssertEqual(MRZ.checkDigit("001234567ZX4"), 6)
        XCTAssertEqual(MRZ.checkDigit("001234567<ZX4"), 4)
        for lines in [belDeviant, belICAO, prtDeviant, nldDeviant] {
            let composite = String(Array(lines[0])[5..<30]) + String(Array(lines[1])[0..<7]) + String(Array(lines[1])[8..<15])
                + String(Array(lines[1])[18..<29])
            XCTAssertEqual(MRZ.checkDigit(composite).map(String.init), String(Array(lines[1])[29]), "\(lines)")
        }
    }

    func testBelgianAndPortugueseDeviationIsNamedAndWarned() {
        for (lines, number) in [(belDeviant, "592012345671"), (prtDeviant, "001234567ZX4")] {
            let r = parser().parse(lines)
            XCTAssertTrue(r.valid, "\(r.errors)")
            XCTAssertEqual(r.format, .td1)
            XCTAssertEqual(r.deviations, [.longDocumentNumberCheckIncludesFiller])
            XCTAssertTrue(r.fields.longDocumentNumber)
            XCTAssertEqual(r.fields.documentNumber, number)
            XCTAssertTrue(r.corrections.isEmpty)
            XCTAssertTrue(r.warnings.contains { $0.contains("Belgian/Portuguese deviation from ICAO 9303-5 §4.2.4") }, "\(r.warnings)")
            XCTAssertEqual(r.checkDigit("document_number")?.valid, true)
            // The same with per-cell posteriors (the document reader's path).
            var g = MRZSampleGenerator(seed: 1)
            let (_, posteriors, _) = g.corruptWithPosteriors(lines, count: 0)
            let q = parser().parse(lines, posteriors: posteriors)
            XCTAssertTrue(q.valid, "\(q.errors)")
            XCTAssertEqual(q.deviations, [.longDocumentNumberCheckIncludesFiller])
            XCTAssertEqual(q.lines, lines)
        }
    }

    func testICAOConformantBelgianCardHasNoDeviation() {
        let r = parser().parse(belICAO)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.deviations, [])
        XCTAssertFalse(r.warnings.contains { $0.contains("deviation") })
        // The 2020 Belgian specimen (PRADO BEL-BO-11004) follows the ICAO rule too.
        let specimen = ["IDBEL000590696<1015<<<<<<<<<<<", "9401013F2710017BEL000101123453", "SPECIMEN<<SPECIMEN<<<<<<<<<<<<"]
        let s = parser().parse(specimen)
        XCTAssertEqual(s.checkDigit("document_number")?.valid, true)
        XCTAssertEqual(s.checkDigit("composite")?.valid, true)
        XCTAssertEqual(s.deviations, [])
        XCTAssertEqual(s.fields.documentNumber, "000590696101")
    }

    func testDeviationIsNotAcceptedForOtherStates() {
        let r = parser().parse(nldDeviant)
        XCTAssertFalse(r.valid)
        XCTAssertEqual(r.deviations, [])
        XCTAssertEqual(r.checkDigit("document_number")?.valid, false)
        XCTAssertTrue(r.corrections.isEmpty, "\(r.corrections)")
    }

    func testNoCorrectionIsMadeToFitTheDeviation() {
        // A Belgian card whose number check digit fits neither rule: invalid, nothing changed.
        var rows = belDeviant.map { Array($0) }
        rows[0][18] = "3"
        let r = parser().parse(rows.map { String($0) })
        XCTAssertFalse(r.valid)
        XCTAssertEqual(r.deviations, [])
        XCTAssertTrue(r.corrections.isEmpty, "\(r.corrections)")
        // With the composite read O for 8 under the deviation, the composite is normalised and holds.
        var o = belDeviant.map { Array($0) }
        o[1][29] = "B"
        let q = parser().parse(o.map { String($0) })
        XCTAssertTrue(q.valid, "\(q.errors)")
        XCTAssertEqual(q.lines, belDeviant)
    }

    // MARK: OCR noise lines in text input

    let td3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
    let td1 = ["I<UTOD231458907<<<<<<<<<<<<<<<", "7408122F1204159UTO<<<<<<<<<<<6", "ERIKSSON<<ANNA<MARIA<<<<<<<<<<"]

    func testNoiseLinesAroundTheMRZAreDropped() {
        let texts = [
            "~ .\n" + td3.joined(separator: "\n"),                      // noise above
            td3[0] + "\n,,'\n" + td3[1],                               // between
            td3.joined(separator: "\n") + "\n<<K",                     // below, MRZ characters but too short
            "PASSPORT  PASSEPORT\n" + td3.joined(separator: "\n"),     // printed caption
            td1.joined(separator: "\n") + "\n" + String(repeating: "=", count: 30),   // 30 characters, none MRZ
            "x\n" + td3.joined(separator: " "),                        // one 88-character line after noise
        ]
        for text in texts {
            let r = parser().parse(text: text)
            XCTAssertTrue(r.valid, "\(text.debugDescription): \(r.errors)")
            XCTAssertTrue([.td3, .td1].contains(r.format))
            XCTAssertTrue(r.warnings.contains { $0.hasPrefix("dropped 1 line(s) that cannot be MRZ text") }, "\(r.warnings)")
        }
    }

    func testLinesAreKeptWhenDroppingWouldNotLeaveAnMRZ() {
        // A truncated line is not noise to drop when the rest is no MRZ: the error names the lengths.
        let r = parser().parse(text: td3[0] + "\n" + String(td3[1].dropLast()))
        XCTAssertFalse(r.valid)
        XCTAssertTrue(r.errors[0].contains("[44, 43]"), r.errors[0])
        // Three TD3-length lines: all can be MRZ, nothing is dropped.
        let three = parser().parse(text: (td3 + [td3[1]]).joined(separator: "\n"))
        XCTAssertFalse(three.valid)
        XCTAssertEqual(three.format, .unknown)
        // A lowercase MRZ line is MRZ text read wrong, not noise: reported, never dropped.
        let lower = parser().parse(text: td3[0].lowercased() + "\n" + td3[1] + "\nnoise")
        XCTAssertEqual(lower.format, .td3)
        XCTAssertTrue(lower.errors.contains { $0.contains("lowercase") })
    }
}
