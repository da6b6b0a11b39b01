/// Which characters a position of an MRZ line may hold (ICAO 9303-4 §4.2.2 TD3, -5 §4.2.2 TD1,
/// -6 TD2, -7 MRV), used as a prior when reading: names hold letters, dates and check digits hold
/// digits. Document numbers and optional data hold both and are left to the check digits (the
/// `MRZ` parser's job).
enum MRZCharacterClass: Sendable, Equatable {
    /// `A`–`Z` and `<` (names).
    case name
    /// Three-letter codes: only `0` → `O` is corrected, since a few national cards print digits here.
    case code
    /// `0`–`9` (dates, check digits) and `<` where the format allows it.
    case numeric
    /// Anything (document numbers, optional data, sex, the document code's second character).
    case any
    /// The document code's first character, a letter the format fixes: `P` (or `V`, MRV-A) on a
    /// 44-character line (ICAO 9303-4 §4.2.2, -7), `A`, `C` or `I` on TD1 and TD2 (-5, -6), also
    /// `V` (MRV-B) and `P` on a 36-character line.
    case documentCode(Set<Character>)

    /// Per line, per column classes for a block of `lineCount` lines of `lineLength` characters.
    static func layout(lineLength: Int, lineCount: Int) -> [[MRZCharacterClass]] {
        func line(_ spans: [(Int, Int, MRZCharacterClass)]) -> [MRZCharacterClass] {
            var l = [MRZCharacterClass](repeating: .any, count: lineLength)
            for (a, b, c) in spans { for i in a...b where i < lineLength { l[i] = c } }
            return l
        }
        switch (lineCount, lineLength) {
        case (3, 30):   // TD1
            return [line([(0, 0, .documentCode(["A", "C", "I"])), (2, 4, .code), (14, 14, .numeric)]),
                    line([(0, 6, .numeric), (8, 14, .numeric), (15, 17, .code), (29, 29, .numeric)]),
                    line([(0, 29, .name)])]
        case (2, 44):   // TD3
            return [line([(0, 0, .documentCode(["P", "V"])), (2, 4, .code), (5, 43, .name)]),
                    line([(9, 9, .numeric), (10, 12, .code), (13, 19, .numeric), (21, 27, .numeric), (42, 43, .numeric)])]
        case (2, 36):   // TD2 / MRV-B
            return [line([(0, 0, .documentCode(["A", "C", "I", "P", "V"])), (2, 4, .code), (5, 35, .name)]),
                    line([(9, 9, .numeric), (10, 12, .code), (13, 19, .numeric), (21, 27, .numeric)])]
        default:
            return [[MRZCharacterClass]](repeating: [MRZCharacterClass](repeating: .any, count: lineLength), count: lineCount)
        }
    }

    private static let toLetter: [Character: Character] = ["0": "O", "1": "I", "2": "Z", "5": "S", "8": "B", "6": "G", "4": "A", "7": "T"]
    private static let toDigit: [Character: Character] = ["O": "0", "D": "0", "Q": "0", "U": "0", "I": "1", "L": "1", "Z": "2",
                                                          "S": "5", "B": "8", "G": "6", "A": "4", "T": "7"]

    /// The choice among `ranked` (best first) that this class allows: the best-ranked allowed
    /// character when the top one is not allowed and is a known OCR-B look-alike of it.
    func choose(_ ranked: [(Character, Double)]) -> (Character, Double) {
        let top = ranked[0]
        switch self {
        case .any: return top
        case let .documentCode(allowed):
            // no other letter can stand here, and no check digit covers it
            guard !allowed.contains(top.0) else { return top }
            if let best = ranked.first(where: { allowed.contains($0.0) }), best.1 > 1e-3 { return best }
            return top
        case .code:
            if top.0 == "0", let o = ranked.first(where: { $0.0 == "O" }) { return o }
            return top
        case .name:
            guard top.0.isNumber else { return top }
            if let best = ranked.first(where: { $0.0.isLetter || $0.0 == "<" }), best.1 > 1e-3 { return best }
            if let l = Self.toLetter[top.0], let e = ranked.first(where: { $0.0 == l }) { return e }
            return top
        case .numeric:
            guard top.0.isLetter else { return top }
            if let best = ranked.first(where: { $0.0.isNumber || $0.0 == "<" }), best.1 > 1e-3 { return best }
            if let d = Self.toDigit[top.0], let e = ranked.first(where: { $0.0 == d }) { return e }
            return top
        }
    }
}
