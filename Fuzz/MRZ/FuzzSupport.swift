// Fuzz harness support, shared by the libFuzzer targets (compiled with Sources/MRZ by scripts/fuzz,
// where the MRZ types are in the same module) and by Tests/MRZTests/FuzzRegressionTests.swift (which
// sees this file through a symlink and imports MRZ): how a fuzz input becomes parser input, and what
// every parse result must satisfy whatever the input.
#if canImport(MRZ)
import MRZ
#endif
import Foundation

/// 2026-06-15 UTC, fixed so that runs are reproducible.
let fuzzReferenceDate = Date(timeIntervalSince1970: 1_781_481_600)

enum Oracle {
    /// ICAO 9303-3 §4.9 value of one character, computed here rather than by the parser.
    static func value(_ c: Character) -> Int? {
        if let d = c.wholeNumberValue, c.isASCII { return d }
        if c == "<" { return 0 }
        guard let a = c.asciiValue, a >= 65, a <= 90 else { return nil }
        return Int(a) - 55
    }

    static func digit(_ s: [Character]) -> Int? {
        var sum = 0
        for (i, c) in s.enumerated() { guard let v = value(c) else { return nil }; sum += v * [7, 3, 1][i % 3] }
        return sum % 10
    }

    /// Every check digit of `format` holds on `lines`, by the position tables of Doc 9303-4 to -7
    /// (and the TD1 long-number rule of 9303-5 §4.2.4, with the named BEL/PRT deviation).
    static func holds(_ format: MRZFormat, _ lines: [String], deviations: [MRZDeviation]) -> Bool {
        let a = lines.map { Array($0) }
        func cd(_ l: Int, _ ranges: [Range<Int>], _ at: Int, fillerWhenEmpty: Bool = false) -> Bool {
            let s = ranges.flatMap { Array(a[l][$0]) }
            guard let v = digit(s) else { return false }
            if fillerWhenEmpty && a[l][at] == "<" { return s.allSatisfy { $0 == "<" } }
            return a[l][at] == Character(String(v))
        }
        switch format {
        case .td3:
            return cd(1, [0..<9], 9) && cd(1, [13..<19], 19) && cd(1, [21..<27], 27)
                && cd(1, [28..<42], 42, fillerWhenEmpty: true) && cd(1, [0..<10, 13..<20, 21..<43], 43)
        case .td2:
            let number: Bool
            if a[1][9] == "<", a[1][28] != "<", let end = (28..<35).first(where: { a[1][$0] == "<" }), end - 1 > 28 {
                number = cd(1, [0..<9, 28..<(end - 1)], end - 1)
            } else { number = cd(1, [0..<9], 9) }
            return number && cd(1, [13..<19], 19) && cd(1, [21..<27], 27) && cd(1, [0..<10, 13..<20, 21..<35], 35)
        case .mrvA, .mrvB:
            return cd(1, [0..<9], 9) && cd(1, [13..<19], 19) && cd(1, [21..<27], 27)
        case .td1:
            let number: Bool
            if a[0][14] == "<", a[0][15] != "<", let end = (15..<30).first(where: { a[0][$0] == "<" }), end - 1 > 15 {
                number = deviations.contains(.longDocumentNumberCheckIncludesFiller)
                    ? cd(0, [5..<(end - 1)], end - 1) : cd(0, [5..<14, 15..<(end - 1)], end - 1)
            } else { number = cd(0, [5..<14], 14) }
            return number && cd(1, [0..<6], 6) && cd(1, [8..<14], 14)
                && digit(Array(a[0][5..<30]) + Array(a[1][0..<7]) + Array(a[1][8..<15]) + Array(a[1][18..<29]))
                    .map { Character(String($0)) == a[1][29] } == true
        case .frenchNationalID:
            return cd(1, [0..<12], 12) && cd(1, [27..<33], 33)
                && digit(Array(a[0]) + Array(a[1][0..<35])).map { Character(String($0)) == a[1][35] } == true
        case .unknown:
            return false
        }
    }

    /// The invariants broken by one result `r` of parsing `input` (the lines as given, `nil` for text
    /// input); empty when all hold.
    static func violations(_ r: MRZResult, input: [String]?, parser: MRZParser) -> [String] {
        var out: [String] = []
        func violated(_ message: String) { out.append(message) }
        if r.valid {
            if !r.errors.isEmpty { violated("valid with errors \(r.errors)") }
            if r.format == .unknown { violated("valid with format UNKNOWN") }
            if !r.checkDigits.allSatisfy(\.valid) { violated("valid with a failing check digit \(r.checkDigits)") }
            guard let shape = r.format.shape, r.lines.count == shape.lines, r.lines.allSatisfy({ $0.count == shape.length })
            else { violated("valid with lines \(r.lines) not of the format's shape"); return out }
            if !r.lines.allSatisfy({ $0.allSatisfy { value($0) != nil } }) { violated("valid with a non-MRZ character: \(r.lines)") }
            if !holds(r.format, r.lines, deviations: r.deviations) { violated("valid but the ICAO tables' check digits fail: \(r.lines)") }
            // The corrected text read again without correction: the same verdict and fields.
            let again = MRZParser(options: .init(referenceDate: parser.options.referenceDate,
                                                 expiryWindowYears: parser.options.expiryWindowYears,
                                                 correctionEnabled: false)).parse(r.lines)
            if !again.valid { violated("corrected lines \(r.lines) invalid when read again: \(again.errors)") }
            if again.fields != r.fields { violated("fields differ when \(r.lines) is read again") }
        } else if r.errors.isEmpty {
            violated("invalid without an error")
        }
        for c in r.corrections {
            if c.from == c.to { violated("a correction that changes nothing: \(c)") }
            guard c.line >= 1, c.line <= r.lines.count, c.column >= 1, c.column <= r.lines[c.line - 1].count
            else { violated("correction outside the lines: \(c)"); continue }
            if String(Array(r.lines[c.line - 1])[c.column - 1]) != c.to { violated("correction \(c) not in the lines \(r.lines)") }
        }
        // With the input lines known (no whitespace trimming), the output differs from it only where corrected.
        if let input, input.count == r.lines.count, r.format != .unknown,
           zip(input, r.lines).allSatisfy({ $0.count == $1.count }), input.allSatisfy({ $0.allSatisfy { !$0.isWhitespace } }) {
            for (l, (a, b)) in zip(input, r.lines).enumerated() {
                for (c, (x, y)) in zip(a, b).enumerated() where x != y {
                    if x == "«" && y == "<" && r.corrections.contains(where: { $0.line == l + 1 && $0.column == c + 1 }) { continue }
                    if !r.corrections.contains(where: { $0.line == l + 1 && $0.column == c + 1 }) {
                        violated("line \(l + 1) column \(c + 1) changed from \(x) to \(y) without a correction entry")
                    }
                }
            }
        }
        return out
    }
}

/// One `mrz-decode` fuzz input decoded into parser input: a valid generated MRZ
/// (`MRZSampleGenerator`, seed and format from the first 9 bytes), up to 12 substitutions (cell as 2
/// bytes, character; a first byte 0xFF ends the list), then evidence for up to 24 cells (cell as 2
/// bytes, character, probability byte) given as runner-up alternatives and as posteriors.
struct DecodeInput {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ<«a ")
    static let formats: [MRZFormat] = [.td1, .td2, .td3, .mrvA, .mrvB]

    var clean: [String]
    var lines: [String]
    var alternatives: [[[Character]]]
    var posteriors: [[[MRZCandidate]]]

    init?(_ data: UnsafeBufferPointer<UInt8>) {
        var at = 0
        func next() -> Int? {
            guard at < data.count else { return nil }
            defer { at += 1 }
            return Int(data[at])
        }
        guard data.count >= 9 else { return nil }
        var seed: UInt64 = 0
        for _ in 0..<8 { seed = seed << 8 | UInt64(next()!) }
        let format = Self.formats[next()! % Self.formats.count]
        var generator = MRZSampleGenerator(seed: seed)
        clean = generator.next(format: format).lines
        var rows = clean.map { Array($0) }
        let width = rows[0].count, cells = rows.count * width
        for _ in 0..<12 {
            guard let hi = next(), hi != 0xFF, let lo = next(), let ch = next() else { break }
            let cell = (hi << 8 | lo) % cells
            rows[cell / width][cell % width] = Self.alphabet[ch % Self.alphabet.count]
        }
        lines = rows.map { String($0) }
        alternatives = rows.map { $0.map { _ in [] } }
        posteriors = rows.map { $0.map { [MRZCandidate($0, 0.97)] } }
        for _ in 0..<24 {
            guard let hi = next(), let lo = next(), let ch = next(), let p = next() else { break }
            let cell = (hi << 8 | lo) % cells
            let (l, c) = (cell / width, cell % width)
            let alt = Self.alphabet[ch % Self.alphabet.count]
            alternatives[l][c].append(alt)
            let q = Double(p) / 255
            posteriors[l][c][0].posterior = max(0, posteriors[l][c][0].posterior - q)
            posteriors[l][c].append(MRZCandidate(alt, q))
        }
    }

    /// The invariants every parse of this input breaks (`Oracle.violations`), and the clean MRZ must
    /// parse back unchanged when no substitution was made.
    func violations(_ parser: MRZParser) -> [String] {
        let plain = parser.parse(lines)
        var out = Oracle.violations(plain, input: lines, parser: parser)
        if lines == clean && (!plain.valid || plain.lines != clean || !plain.corrections.isEmpty) {
            out.append("the generated MRZ \(clean) did not parse back: \(plain.errors)")
        }
        out += Oracle.violations(parser.parse(lines, alternatives: alternatives), input: lines, parser: parser)
        out += Oracle.violations(parser.parse(lines, posteriors: posteriors), input: lines, parser: parser)
        return out
    }
}

/// The invariants one `mrz-text` fuzz input breaks: the bytes as text (`parse(text:)`) and as lines
/// split at newlines (`parse(_:)`); invalid UTF-8 becomes U+FFFD, as from any text decoder.
func textViolations(_ data: UnsafeBufferPointer<UInt8>, _ parser: MRZParser) -> [String] {
    let text = String(decoding: data, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    return Oracle.violations(parser.parse(text: text), input: nil, parser: parser)
        + Oracle.violations(parser.parse(lines), input: lines, parser: parser)
}
