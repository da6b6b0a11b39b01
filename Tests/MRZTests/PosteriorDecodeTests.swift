import XCTest
@testable import MRZ

/// The maximum-a-posteriori decode (`MRZParser.parse(_:posteriors:)`, `MRZDecoder`): per-cell
/// posteriors modelled on what the OCR-B classifier gave the real specimens.
final class PosteriorDecodeTests: XCTestCase {
    /// Posteriors for `lines`: every cell read with 0.99 and its look-alike at 0.009, except `doubt`:
    /// column → candidates (1-based line, 1-based column).
    static func posteriors(_ lines: [String], _ doubt: [String: [MRZCandidate]]) -> [[[MRZCandidate]]] {
        lines.enumerated().map { l, line in
            Array(line).enumerated().map { c, ch in
                if let d = doubt["\(l + 1):\(c + 1)"] { return d }
                return [MRZCandidate(ch, 0.99)] + (MRZSampleGenerator.confusions[ch]?.prefix(1).map { MRZCandidate($0, 0.009) } ?? [])
            }
        }
    }

    /// 100_id-usa as read: two O/0 doubts, one in the document number (field check + composite) and
    /// one in the optional data (composite only). Characters alone leave it ambiguous; with the
    /// classifier's posteriors (values measured on the specimen) both are corrected.
    func testUSACardFromPosteriors() {
        let read = ["IAUSA0000000O33LIN1O44750079<<", "5808175F1004027COD<<<<<<<<<<<7", "SPECIMEN<<TEST<VOID<<<<<<<<<<<"]
        let truth = ["IAUSA0000000033LIN1044750079<<", "5808175F1004027COD<<<<<<<<<<<7", "SPECIMEN<<TEST<VOID<<<<<<<<<<<"]
        let post = Self.posteriors(read, [
            "1:11": [MRZCandidate("0", 0.711), MRZCandidate("O", 0.2884), MRZCandidate("D", 0.0007)],
            "1:12": [MRZCandidate("0", 0.711), MRZCandidate("O", 0.2878), MRZCandidate("D", 0.0005)],
            "1:13": [MRZCandidate("O", 0.518), MRZCandidate("0", 0.4810), MRZCandidate("D", 0.0002)],
            "1:20": [MRZCandidate("O", 0.610), MRZCandidate("0", 0.3751), MRZCandidate("D", 0.0129), MRZCandidate("Q", 0.0004)],
        ])
        let p = parser()
        XCTAssertFalse(p.parse(read).valid)
        let r = p.parse(read, posteriors: post)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.lines, truth)
        XCTAssertEqual(r.corrections.map { "\($0.line):\($0.column) \($0.from)→\($0.to) \($0.field)" },
                       ["1:13 O→0 document_number", "1:20 O→0 optional_data"])
        XCTAssertEqual(Set(r.corrections.map(\.source)), ["ocr_alternative"])
    }

    /// 24_pass-egy: `AO00513764` — the O at 0.68 and the next zeros at 0.62–0.65 with O as runner-up.
    /// Both O→0 at column 2 and 0→O at column 4 satisfy every check digit; the positional prior
    /// (runs of one kind: an O between digits is unlikely) decides for the zero.
    func testLetterBetweenDigitsGivesWayToTheDigit() {
        let read = ["P<EGYMABROUK<<ALAAELDIN<ISMAIL<MOHAMED<<<<<<", "AO00513764EGY6002202M1503151<<<<<<<<<<<<<<06"]
        let post = Self.posteriors(read, [
            "2:2": [MRZCandidate("O", 0.677), MRZCandidate("0", 0.3184), MRZCandidate("D", 0.0025), MRZCandidate("Q", 0.0002)],
            "2:3": [MRZCandidate("0", 0.652), MRZCandidate("O", 0.2933), MRZCandidate("D", 0.0250), MRZCandidate("Q", 0.0001)],
            "2:4": [MRZCandidate("0", 0.618), MRZCandidate("O", 0.3796), MRZCandidate("D", 0.0002), MRZCandidate("Q", 0.0002)],
        ])
        let r = parser().parse(read, posteriors: post)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.lines[1], "A000513764EGY6002202M1503151<<<<<<<<<<<<<<06")
        XCTAssertEqual(r.corrections.count, 1)
    }

    /// Two explanations the posteriors cannot separate (a wrong check digit read with certainty, and
    /// two 50/50 cells either of which would satisfy it): nothing is applied and the MRZ is invalid.
    func testAmbiguousPosteriorsApplyNothing() {
        let truth = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
        var read = truth
        read[1] = "L898902C3" + "5" + String(read[1].dropFirst(10))   // wrong check digit, read with certainty
        let post = Self.posteriors(read, [
            "2:2": [MRZCandidate("8", 0.5), MRZCandidate("B", 0.5)],
            "2:5": [MRZCandidate("9", 0.5), MRZCandidate("8", 0.5)],
        ])
        let r = parser().parse(read, posteriors: post)
        XCTAssertFalse(r.valid)
        XCTAssertEqual(r.corrections, [])
        XCTAssertTrue(r.errors.contains { $0.contains("of similar likelihood") || $0.contains("check digit fails") }, "\(r.errors)")
    }

    /// The character-only API is unchanged: the same input without posteriors parses as before.
    func testCharacterOnlyAPIUnchanged() {
        let lines = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO74O8122F1204159ZE184226B<<<<<10"]
        let r = parser().parse(lines)
        XCTAssertTrue(r.valid)
        XCTAssertEqual(r.corrections.map { "\($0.line):\($0.column) \($0.from)→\($0.to) \($0.source)" }, ["2:16 O→0 confusion_table"])
        // A clean MRZ with posteriors: nothing to decode, nothing changed.
        let clean = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
        let c = parser().parse(clean, posteriors: Self.posteriors(clean, ["2:1": [MRZCandidate("L", 0.6), MRZCandidate("1", 0.4)]]))
        XCTAssertTrue(c.valid)
        XCTAssertEqual(c.corrections, [])
        XCTAssertEqual(c.lines, clean)
    }

    /// Hostile posteriors (NaN, negative, > 1, ragged shapes, too many candidates) never trap.
    func testHostilePosteriors() {
        let lines = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO74O8122F1204159ZE184226B<<<<<1O"]
        let bad: [[[MRZCandidate]]] = [[[MRZCandidate("X", .nan)]], [[MRZCandidate("1", -3), MRZCandidate("«", 9)]] + Array(repeating: Array(repeating: MRZCandidate("Q", .infinity), count: 40), count: 60)]
        let r = parser().parse(lines, posteriors: bad)
        XCTAssertEqual(r.format, .td3)
        XCTAssertEqual(parser().parse([], posteriors: bad).format, .unknown)
    }

    /// The posterior corpus of `idvd bench mrz` (misreadings with posteriors, confident errors and
    /// decoys): the decoder recovers more than the rank-only correction given the same candidates,
    /// with fewer wrong corrections.
    func testPosteriorCorpusBeatsRankOnlyCorrection() {
        var g = MRZSampleGenerator(seed: 77)
        let p = parser()
        var decoded = (recovered: 0, wrong: 0), ranked = (recovered: 0, wrong: 0)
        for _ in 0..<1_500 {
            let s = g.next()
            let (read, post, _) = g.corruptWithPosteriors(s.lines, count: g.int(1...2))
            let truth = s.lines.map { Array($0) }
            let alternatives = post.enumerated().map { l, row in
                row.enumerated().map { c, cands in cands.filter { $0.character != Array(read[l])[c] }.sorted { $0.posterior > $1.posterior }.map(\.character) }
            }
            let a = p.parse(read, posteriors: post), b = p.parse(read, alternatives: alternatives)
            decoded.wrong += a.corrections.filter { truth[$0.line - 1][$0.column - 1] != Character($0.to) }.count
            ranked.wrong += b.corrections.filter { truth[$0.line - 1][$0.column - 1] != Character($0.to) }.count
            if a.valid && a.lines == s.lines { decoded.recovered += 1 }
            if b.valid && b.lines == s.lines { ranked.recovered += 1 }
        }
        print("posterior corpus (1,500): decoder \(decoded), rank-only \(ranked)")
        XCTAssertLessThan(decoded.wrong, max(1, ranked.wrong))
    }

    /// A cell changed twice (a `«` normalised to `<`, then corrected by the decoder) is one
    /// correction, from what was read to what the cell holds; a cell changed back to what was read
    /// is none. (The fuzz input that showed the double listing is replayed by FuzzRegressionTests:
    /// Tests/Fixtures/fuzz/mrz-decode/guillemet-corrected-twice.)
    func testACellChangedTwiceIsListedOnce() {
        let before: [[UInt8]] = [Array("AB<".utf8)]
        let changes: [Corrector.Change] = [
            .init(line: 0, column: 2, to: UInt8(ascii: "K"), source: .confusionTable, cost: 1),
            .init(line: 0, column: 0, to: UInt8(ascii: "<"), source: .fillerNormalisation, cost: 0.5),
            .init(line: 0, column: 0, to: UInt8(ascii: "X"), source: .ocrAlternative, cost: 0),
            .init(line: 0, column: 2, to: UInt8(ascii: "<"), source: .ocrAlternative, cost: 0),
        ]
        let merged = MRZParser.mergedChanges(changes, before: before)
        XCTAssertEqual(merged.map { "\($0.column) \(Character(UnicodeScalar($0.to))) \($0.source.rawValue)" }, ["0 X ocr_alternative"])
    }
}
