import XCTest
@testable import MRZ

/// Correction defects that other MRZ parsers' test suites exposed, pinned with ICAO 9303 rules and
/// our own vectors:
/// - a check-digit cell read as a letter look-alike (`O`, `B`, `G`, …) is a digit by ICAO 9303-3
///   §4.9 and is normalised before the composite cross-check, so it no longer blocks corrections the
///   check digits confirm;
/// - a check digit misread as another digit is never "repaired" by changing the characters it covers:
///   a misread by ±5 of a check digit standing at weight 7 in the composite (the document number's in
///   TD3, TD2, MRV) shifts the composite by 8·5 ≡ 0 (mod 10), so the composite cannot tell that
///   repair from the misread.
final class CheckDigitSoundnessTests: XCTestCase {
    let td3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
    let td1 = ["I<UTOD231458907<<<<<<<<<<<<<<<", "7408122F1204159UTO<<<<<<<<<<<6", "ERIKSSON<<ANNA<MARIA<<<<<<<<<<"]
    let td2 = ["I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<", "D231458907UTO7408122F1204159<<<<<<<6"]

    func replacing(_ lines: [String], _ line: Int, _ column: Int, _ ch: Character) -> [String] {
        var out = lines; var a = Array(out[line]); a[column] = ch; out[line] = String(a); return out
    }

    // MARK: A check-digit cell read as a letter

    func testCompositeReadAsLetterIsNormalisedBeforeTheCrossCheck() {
        // TD3: composite 0 read O, expiry 120415 read 12O415 (a forced, unique fix).
        var bad = replacing(td3, 1, 43, "O")
        bad = replacing(bad, 1, 23, "O")
        let r = parser().parse(bad)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.lines, td3)
        XCTAssertEqual(Set(r.corrections.map { "\($0.column) \($0.from)→\($0.to) \($0.field)" }),
                       ["44 O→0 composite_check_digit", "24 O→0 expiry_date"])
        // TD1: composite 6 read G, birth date 740812 read 74O812.
        var bad1 = replacing(td1, 1, 29, "G")
        bad1 = replacing(bad1, 1, 2, "O")
        let r1 = parser().parse(bad1)
        XCTAssertTrue(r1.valid, "\(r1.errors)")
        XCTAssertEqual(r1.lines, td1)
        // TD2: composite 6 read G, birth-date check digit 2 read Z.
        var bad2 = replacing(td2, 1, 35, "G")
        bad2 = replacing(bad2, 1, 19, "Z")
        let r2 = parser().parse(bad2)
        XCTAssertTrue(r2.valid, "\(r2.errors)")
        XCTAssertEqual(r2.lines, td2)
        // The same through the posterior decoder (the document reader's path), the two cells read
        // as the letters with posterior 0.9–1 and the digits listed as runner-ups.
        for (read, clean) in [(bad, td3), (bad1, td1), (bad2, td2)] {
            for seed in 1...5 {
                var g = MRZSampleGenerator(seed: UInt64(seed))
                let (_, posteriors, _) = g.corruptWithPosteriors(read, count: 0)
                let q = parser().parse(read, posteriors: posteriors)
                XCTAssertTrue(q.valid, "\(read) seed \(seed): \(q.errors)")
                XCTAssertEqual(q.lines, clean)
            }
        }
    }

    func testNormalisedCompositeMustStillHold() {
        // The composite 0 read B: normalised it is 8, which does not hold; nothing is applied.
        var bad = replacing(td3, 1, 43, "B")
        bad = replacing(bad, 1, 23, "O")
        let r = parser().parse(bad)
        XCTAssertFalse(r.valid)
        XCTAssertTrue(r.corrections.isEmpty, "\(r.corrections)")
        XCTAssertEqual(r.checkDigit("composite")?.valid, false)
    }

    /// Every generated TD1/TD2/TD3 whose composite digit has a letter look-alike, with the composite
    /// read as that letter and one date digit read as its look-alike: recovered exactly.
    func testGeneratedCompositeLookAlikes() {
        var g = MRZSampleGenerator(seed: 9_304)
        let lookAlike: [Character: Character] = ["0": "O", "1": "I", "2": "Z", "5": "S", "6": "G", "8": "B"]
        var tried = 0
        for _ in 0..<3_000 {
            let s = g.next()
            guard [.td1, .td2, .td3].contains(s.format) else { continue }
            let width = s.lines[0].count
            // the composite is the last cell of line 2 in TD1, TD2 and TD3
            guard let letter = lookAlike[Array(s.lines[1])[width - 1]] else { continue }
            var bad = replacing(s.lines, 1, width - 1, letter)
            // one date digit with a look-alike: birth date (TD1 line 2 columns 0–5, others 13–18)
            let birth = s.format == .td1 ? 0..<6 : 13..<19
            guard let c = birth.first(where: { lookAlike[Array(s.lines[1])[$0]] != nil }) else { continue }
            bad = replacing(bad, 1, c, lookAlike[Array(s.lines[1])[c]]!)
            tried += 1
            let r = parser().parse(bad)
            XCTAssertTrue(r.valid && r.lines == s.lines, "\(bad): \(r.errors)")
        }
        XCTAssertGreaterThan(tried, 500)
    }

    // MARK: A check digit misread as another digit

    /// The document number check digit 6 of the ICAO TD3 specimen read 1 (6 − 5): the number could be
    /// "repaired" to fit (L898902C3 → two letter/digit swaps) and the composite would agree, since
    /// the check digit weighs 7 there and 7·5 + 5 ≡ 0 (mod 10). Nothing may be applied.
    func testCheckDigitMisreadByFiveIsNotRepairedThroughTheField() {
        for digit: Character in ["1", "0", "2", "3", "4", "5", "7", "8", "9"] {
            let r = parser().parse(replacing(td3, 1, 9, digit))
            XCTAssertFalse(r.valid, "check digit read \(digit): \(r.lines) \(r.corrections)")
            XCTAssertFalse(r.corrections.contains { $0.field == "document_number" }, "\(digit): \(r.corrections)")
        }
    }

    /// Every field check digit (and the composite) of generated MRZs of every format, read as each
    /// other digit in turn, with no OCR alternatives: a misread digit-for-digit check digit cannot be
    /// confirmed by anything, so the MRZ must come out invalid — never valid with other text.
    func testDigitMisreadCheckDigitsNeverValidate() {
        var g = MRZSampleGenerator(seed: 5_555)
        let p = parser()
        var cases = 0, bySix = 0
        for _ in 0..<400 {
            let s = g.next()
            let layout = Layout.make(s.format, rows: s.lines.map { Array($0.utf8) })
            for check in layout.checks {
                let at = check.digit
                let read = Array(s.lines[at.line])[at.column]
                guard let d = read.wholeNumberValue else { continue }
                for wrong in 0...9 where wrong != d {
                    let bad = replacing(s.lines, at.line, at.column, Character(String(wrong)))
                    let r = p.parse(bad)
                    cases += 1
                    if (wrong - d + 10) % 10 == 5 { bySix += 1 }
                    XCTAssertFalse(r.valid, "\(check.name) check digit \(d) read \(wrong) in \(s.lines): valid as \(r.lines), \(r.corrections)")
                }
            }
        }
        XCTAssertGreaterThan(cases, 10_000)
        XCTAssertGreaterThan(bySix, 1_000)
    }

    /// The same misreads through the posterior decoder: the read check digit confident (0.9–1), the
    /// true digit unlisted, other cells as `corruptWithPosteriors` lists clean cells. The decoder may
    /// restore the true reading but never validates another one.
    func testDigitMisreadCheckDigitsWithPosteriors() {
        var g = MRZSampleGenerator(seed: 5_556)
        let p = parser()
        var cases = 0, wrongValid = 0
        for _ in 0..<120 {
            let s = g.next()
            let layout = Layout.make(s.format, rows: s.lines.map { Array($0.utf8) })
            guard let check = layout.checks.first(where: { $0.name == "document_number" }) else { continue }
            let at = check.digit
            guard let d = Array(s.lines[at.line])[at.column].wholeNumberValue else { continue }
            let wrong = (d + 5) % 10
            let bad = replacing(s.lines, at.line, at.column, Character(String(wrong)))
            let (_, posteriors, _) = g.corruptWithPosteriors(bad, count: 0)
            let r = p.parse(bad, posteriors: posteriors)
            cases += 1
            if r.valid && r.lines != s.lines { wrongValid += 1; XCTFail("\(bad) valid as \(r.lines): \(r.corrections)") }
        }
        XCTAssertGreaterThan(cases, 80)
        XCTAssertEqual(wrongValid, 0)
    }

    /// A correction the check digits confirm independently still applies: a digit read as its
    /// look-alike letter in the TD3 personal number (its own check digit and the composite both
    /// confirm it, and a misread check digit would not satisfy the composite), and a letter in a date.
    func testConfirmedFieldCorrectionStillApplies() {
        let bad = replacing(td3, 1, 33, "Z")       // ZE184226B → ZE1842Z6B
        var alternatives: [[[Character]]] = bad.map { $0.map { _ in [] } }
        alternatives[1][33] = ["2"]
        let r = parser().parse(bad, alternatives: alternatives)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.lines, td3)
        let date = parser().parse(replacing(td3, 1, 16, "B"))   // birth date 740812 → 740B12
        XCTAssertTrue(date.valid, "\(date.errors)")
        XCTAssertEqual(date.lines, td3)
    }
}
