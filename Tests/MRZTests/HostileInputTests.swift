import XCTest
@testable import MRZ

/// Hostile input: empty, wrong lengths, lowercase, non-ASCII, 1 MB of text, random strings —
/// always a result with a clear error, never a crash.
final class HostileInputTests: XCTestCase {
    let p = parser()
    let td3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]

    func testEmpty() {
        for r in [p.parse([]), p.parse([""]), p.parse(["", "  ", "\t"]), p.parse(text: ""), p.parse(text: "\n\n  \n")] {
            XCTAssertFalse(r.valid)
            XCTAssertEqual(r.format, .unknown)
            XCTAssertEqual(r.errors, ["no MRZ text: the input is empty"])
        }
    }

    func testWrongLengthsAndLineCounts() {
        let cases: [[String]] = [
            [td3[0]],                                  // one line
            [td3[0], String(td3[1].dropLast())],       // 44 + 43
            [td3[0], td3[1], td3[1]],                  // three lines of 44
            [String(td3[0].prefix(30)), String(td3[1].prefix(30))],   // 2 × 30
            [td3[0] + "<", td3[1] + "<"],              // 2 × 45
        ]
        for lines in cases {
            let r = p.parse(lines)
            XCTAssertFalse(r.valid)
            XCTAssertEqual(r.format, .unknown)
            XCTAssertEqual(r.errors.count, 1)
            XCTAssertTrue(r.errors[0].contains("match no MRZ format"), r.errors[0])
            XCTAssertTrue(r.checkDigits.isEmpty)
        }
        XCTAssertTrue(p.parse([td3[0], String(td3[1].dropLast())]).errors[0].contains("[44, 43]"))
    }

    func testLowercaseIsAnErrorNotSilentlyUppercased() {
        let r = p.parse([td3[0].lowercased(), td3[1]])
        XCTAssertFalse(r.valid)
        XCTAssertEqual(r.format, .td3)
        XCTAssertTrue(r.errors.contains { $0.contains("lowercase letters are not MRZ characters") }, "\(r.errors)")
        XCTAssertTrue(r.corrections.isEmpty)
        XCTAssertEqual(r.lines[0], td3[0].lowercased())   // nothing lost
    }

    func testNonASCIIIsReportedAndKept() {
        // The Spanish specimen prints Ñ in the name: an error, and the text keeps the Ñ.
        let esp = ["IDESPAAA1000014<00000023T<<<<<", "7212018F1101236ESP<<<<<<<<<<<8", "ESPAÑOLA<ESPAÑOLA<CARMEN<<<<<<"]
        let r = p.parse(esp)
        XCTAssertEqual(r.format, .td1)
        XCTAssertFalse(r.valid)
        XCTAssertTrue(r.errors.contains { $0.contains("'Ñ' at line 3 column 5: not an MRZ character") }, "\(r.errors)")
        XCTAssertEqual(r.lines[2], esp[2])
        XCTAssertEqual(r.fields.raw["name"], esp[2])
        // Emoji, combining marks, zero-width characters in an otherwise valid MRZ.
        for odd in ["😀", "e\u{301}", "\u{200B}", "\u{0}"] {
            var l2 = Array(td3[1]); l2[30] = Character(odd)
            let r2 = p.parse([td3[0], String(l2)])
            XCTAssertFalse(r2.valid, odd)
            XCTAssertEqual(r2.format, .td3, odd)
            XCTAssertTrue(r2.errors.contains { $0.contains("not an MRZ character") || $0.contains("lowercase") }, "\(odd): \(r2.errors)")
        }
    }

    func testGuillemetIsAFiller() {
        let r = p.parse([td3[0].replacingOccurrences(of: "<<<<<<", with: "<«<<<«"), td3[1]])
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.lines, td3)
        XCTAssertFalse(r.corrections.isEmpty)
        XCTAssertTrue(r.corrections.allSatisfy { $0.source == "filler_normalisation" && $0.from == "«" && $0.to == "<" })
    }

    func testOneMegabyteOfText() {
        var g = MRZSampleGenerator(seed: 1)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<<<<<< \n".utf8)
        let big = String(decoding: (0..<1_048_576).map { _ in alphabet[g.int(0...(alphabet.count - 1))] }, as: UTF8.self)
        let r1 = p.parse(text: big)
        XCTAssertFalse(r1.valid); XCTAssertEqual(r1.format, .unknown)
        XCTAssertEqual(r1.errors, ["input too large for an MRZ (1048576 bytes; at most 256 lines and 16384 bytes are read)"])
        XCTAssertTrue(r1.lines.isEmpty)                 // far too much to echo
        let oneLine = String(repeating: "P<UTO", count: 209_716)
        let r2 = p.parse([oneLine])
        XCTAssertFalse(r2.valid)
        XCTAssertTrue(r2.errors[0].contains("1 line(s), 1048580 bytes"), r2.errors[0])
        let r3 = p.parse(Array(repeating: "P<UTO", count: 10_000))
        XCTAssertEqual(r3.format, .unknown)
        XCTAssertTrue(r3.errors[0].hasPrefix("input too large"))
        // Just below the limit: read, and refused for its shape.
        let r4 = p.parse(text: String(big.prefix(4_000)))
        XCTAssertEqual(r4.format, .unknown)
        XCTAssertTrue(r4.errors[0].contains("match no MRZ format"), r4.errors[0])
    }

    func testHugeAlternativesAreBounded() {
        var bad = td3; var a = Array(bad[1]); a[16] = "Q"; a[5] = "O"; bad[1] = String(a)
        let everything = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<")
        let alternatives: [[[Character]]] = bad.map { $0.map { _ in Array(repeating: everything, count: 30).flatMap { $0 } } }
        let r = p.parse(bad, alternatives: alternatives)     // returns (quickly), whatever it decides
        XCTAssertEqual(r.format, .td3)
        if r.valid { XCTAssertTrue(r.checkDigits.allSatisfy(\.valid)) } else { XCTAssertFalse(r.errors.isEmpty) }
    }

    func testTextForms() {
        // CRLF, surrounding blank lines and spaces; one line holding both; one 88-character run;
        // the ICAO PDF's spaced rendering.
        let forms = ["\r\n" + td3[0] + "\r\n" + td3[1] + "\r\n\r\n", "  " + td3[0] + "\n\t" + td3[1] + "  ",
                     td3[0] + " " + td3[1], td3[0] + td3[1],
                     "P<UTOERIKSSON<< ANNA< MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F120 4159ZE184226B<<<<<10"]
        for text in forms {
            let r = p.parse(text: text)
            XCTAssertTrue(r.valid, "\(text.debugDescription): \(r.errors)")
            XCTAssertEqual(r.lines, td3)
        }
    }

    /// 6,000 random strings (random and exact MRZ lengths, random and MRZ alphabets), with random
    /// alternatives of any shape: every call returns, and `valid` always means every check digit holds.
    func testRandomInputNeverCrashes() {
        var g = MRZSampleGenerator(seed: 7)
        let mrzAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<<<<<<<<OIZSGBKCE«")
        let wild = Array("aZ9< \n\t«ÑÉ😀\u{301}\u{0}-/.,;#")
        for _ in 0..<6_000 {
            let shape = g.pick([(3, 30), (2, 36), (2, 44), (g.int(0...4), g.int(0...60))])
            let alphabet = g.int(0...3) == 0 ? wild : mrzAlphabet
            let lines = (0..<shape.0).map { _ in String((0..<shape.1).map { _ in alphabet[g.int(0...(alphabet.count - 1))] }) }
            var alternatives: [[[Character]]]? = nil
            if g.int(0...2) == 0 {
                alternatives = (0..<g.int(0...4)).map { _ in (0..<g.int(0...50)).map { _ in
                    (0..<g.int(0...3)).map { _ in alphabet[g.int(0...(alphabet.count - 1))] } } }
            }
            let r = p.parse(lines, alternatives: alternatives)
            if r.valid {
                XCTAssertTrue(r.checkDigits.allSatisfy(\.valid))
                XCTAssertTrue(r.errors.isEmpty)
                XCTAssertNotEqual(r.format, .unknown)
            } else {
                XCTAssertFalse(r.errors.isEmpty)
            }
            _ = p.parse(text: lines.joined(separator: g.pick(["\n", " ", "", "\r\n"])))
        }
    }
}

extension MRZSampleGenerator {
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
}
