import Foundation
import IDVTestSupport
import XCTest

/// The words both clients show are the codelabs' own where a codelab gives them (issue #35): the
/// hosted page's table (`Sources/IDVWeb/Assets/words.js`) and the sample app's
/// (`Sources/idv/Words.swift`) note the seed file and line beside every codelab string
/// (`// seed 000 L911`). Each noted string must stand on that line of that seed, so a typo, an
/// "improved" wording or a wrong citation fails here. A note with anything after the line number
/// (a range, "(storyboard text)", "(idem)") says the string is not verbatim on that line and is
/// not checked. Missing seeds fail under CI=true and skip elsewhere.
final class CodelabWordsTests: XCTestCase {
    static let seeds = WebPaths.packageRoot.appendingPathComponent("../shared/seeds").standardized

    /// The seed's lines (1-based), by seed number ("000" … "004").
    func seedLines() throws -> [String: [String]] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: Self.seeds.path) else {
            throw TestData.missing("the codelabs are not at \(Self.seeds.path)")
        }
        var out: [String: [String]] = [:]
        for n in names where n.hasSuffix(".txt") {
            let text = try String(contentsOf: Self.seeds.appendingPathComponent(n), encoding: .utf8)
            out[String(n.prefix(3))] = text.components(separatedBy: "\n")
        }
        guard out.count == 5 else { throw TestData.missing("expected five codelabs in \(Self.seeds.path), found \(out.count)") }
        return out
    }

    struct Cited { let file: String; let line: Int; let text: String; let seed: String; let seedLine: Int }

    /// The last string literal of each line of `source` that ends in `// seed NNN LNNN` and nothing else.
    /// `quote` is the literal's delimiter (`'` in JavaScript, `"` in Swift).
    func cited(in source: URL, quote: Character) throws -> [Cited] {
        let text = try String(contentsOf: source, encoding: .utf8)
        let note = try NSRegularExpression(pattern: "//\\s*seed (\\d{3}) L(\\d+)\\s*$")
        var out: [Cited] = []
        for (i, line) in text.components(separatedBy: "\n").enumerated() {
            let ns = line as NSString
            guard let m = note.firstMatch(in: line, range: NSRange(location: 0, length: ns.length)) else { continue }
            let code = String(line[..<line.index(line.startIndex, offsetBy: m.range.location)])
            // The cited string is the line's last literal (a row's label after its key).
            guard let literal = Self.literals(code, quote: quote).last else {
                XCTFail("\(source.lastPathComponent):\(i + 1) cites a seed line but holds no string literal: \(line)")
                continue
            }
            out.append(Cited(file: source.lastPathComponent, line: i + 1, text: literal, seed: ns.substring(with: m.range(at: 1)),
                             seedLine: Int(ns.substring(with: m.range(at: 2)))!))
        }
        return out
    }

    /// Stands for an interpolation (`\(…)` in Swift, `${…}` in a JavaScript template) in a literal.
    static let hole: Character = "\u{0}"

    /// The string literals of one line of code, unescaped (`\'`, `\"`, `\\`, `\n`), an
    /// interpolation kept as ``hole``. `quote` opens and closes a literal; in JavaScript a backtick
    /// template literal counts too.
    static func literals(_ code: String, quote: Character) -> [String] {
        var out: [String] = []
        var current: String?
        var closing: Character = quote
        var escaped = false
        var depth = 0            // inside an interpolation: nesting of ( or {
        let chars = Array(code)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            defer { i += 1 }
            guard var s = current else {
                if c == quote || (quote == "'" && c == "`") { current = ""; closing = c }
                continue
            }
            if depth > 0 {
                if c == "(" || c == "{" { depth += 1 } else if c == ")" || c == "}" { depth -= 1 }
                continue
            }
            if escaped {
                escaped = false
                if c == "(" && closing == "\"" { s.append(hole); depth = 1 } else { s.append(c == "n" ? "\n" : c) }
                current = s
                continue
            }
            if c == "\\" { escaped = true; continue }
            if closing == "`", c == "$", i + 1 < chars.count, chars[i + 1] == "{" { s.append(hole); depth = 1; i += 1; current = s; continue }
            if c == closing { out.append(s); current = nil; continue }
            s.append(c)
            current = s
        }
        return out
    }

    /// Whether the seed's line holds `literal`: the same text, an interpolation in either matching
    /// any text (its fixed parts in order; the seed's own escapes read as written, `\\(` as `\(`).
    static func line(_ seedLine: String, holds literal: String) -> Bool {
        let seed = seedLine.replacingOccurrences(of: "\\\\(", with: "\\(").replacingOccurrences(of: "\\n", with: "\n")
        var rest = Substring(seed)
        for part in literal.split(separator: hole, omittingEmptySubsequences: true) {
            guard let r = rest.range(of: part) else { return false }
            rest = rest[r.upperBound...]
        }
        return true
    }

    func check(_ cites: [Cited], against seeds: [String: [String]], file: StaticString = #filePath, line: UInt = #line) {
        for c in cites {
            guard let lines = seeds[c.seed], c.seedLine >= 1, c.seedLine <= lines.count else {
                XCTFail("\(c.file):\(c.line) cites seed \(c.seed) L\(c.seedLine), which does not exist", file: file, line: line)
                continue
            }
            XCTAssertTrue(Self.line(lines[c.seedLine - 1], holds: c.text),
                          "\(c.file):\(c.line): '\(c.text)' is not on seed \(c.seed) L\(c.seedLine): \(lines[c.seedLine - 1].trimmingCharacters(in: .whitespaces))",
                          file: file, line: line)
        }
    }

    func testThePagesWordsAreTheCodelabsOnTheCitedLines() throws {
        let seeds = try seedLines()
        let cites = try cited(in: WebPaths.assets.appendingPathComponent("words.js"), quote: "'")
        XCTAssertGreaterThanOrEqual(cites.count, 120, "words.js cites fewer codelab lines than it did when this test was written")
        check(cites, against: seeds)
    }

    func testTheSampleAppsWordsAreTheCodelabsOnTheCitedLines() throws {
        let seeds = try seedLines()
        let cites = try cited(in: WebPaths.packageRoot.appendingPathComponent("Sources/idv/Words.swift"), quote: "\"")
        XCTAssertGreaterThanOrEqual(cites.count, 125, "Words.swift cites fewer codelab lines than it did when this test was written")
        check(cites, against: seeds)
    }

    /// The check fails on a string that is not on its cited line (so the tests above can fail).
    func testTheCheckCatchesAWrongCitation() throws {
        let seeds = try seedLines()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("codelab-words-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let js = dir.appendingPathComponent("words.js")
        try """
          title: 'Activated Customer KYC', // seed 000 L911
          start: 'Start KYC verification', // seed 000 L1064
          busy: 'Initiating...', // seed 000 L1064
          failed: (why) => `KYC verification failed: ${why}`, // seed 000 L973
          passed: (why) => `KYC verification passed: ${why}`, // seed 000 L973
        """.write(to: js, atomically: true, encoding: .utf8)
        let cites = try cited(in: js, quote: "'")
        XCTAssertEqual(cites.map(\.text), ["Activated Customer KYC", "Start KYC verification", "Initiating...",
                                            "KYC verification failed: \(Self.hole)", "KYC verification passed: \(Self.hole)"])
        let wrong = cites.filter { c in !Self.line(seeds[c.seed]?[c.seedLine - 1] ?? "", holds: c.text) }
        XCTAssertEqual(wrong.map(\.text), ["Start KYC verification", "Initiating...", "KYC verification passed: \(Self.hole)"],
                       "a changed letter, a wrong line and a changed template are all caught")
    }
}
