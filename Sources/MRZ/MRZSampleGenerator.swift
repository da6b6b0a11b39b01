/// A deterministic generator of valid MRZs (TD1, TD2, TD3, MRV-A, MRV-B) with known fields, and of
/// typical OCR corruptions of them — for tests and `idvd bench mrz`. Seeded SplitMix64; the same
/// seed gives the same sequence on every platform.
public struct MRZSampleGenerator: Sendable {
    /// One generated MRZ and the field values a correct parser must return for it.
    public struct Sample: Sendable {
        public var format: MRZFormat
        public var lines: [String]
        public var documentCode: String
        public var issuingState: String
        public var surname: String
        public var givenNames: String
        public var documentNumber: String
        public var nationality: String
        /// ISO 8601 (`YYYY-MM-DD`, or `YYYY-MM` / `YYYY` when day / month are unknown).
        public var birthDate: String
        public var sex: String
        public var expiryDate: String
        public var optionalData: String
    }

    /// One OCR confusion applied by ``corrupt(_:count:)``: 0-based line and column.
    public struct Corruption: Sendable, Equatable {
        public var line: Int
        public var column: Int
        public var from: Character
        public var to: Character
    }

    var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// SplitMix64.
    public mutating func nextUInt64() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(nextUInt64() % UInt64(range.count))
    }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    static let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    static let digits = Array("0123456789")
    static let codes = ["UTO", "D", "GBR", "FRA", "NLD", "USA", "CAN", "AUS", "JPN", "ESP", "ITA", "POL", "CZE", "EST",
                        "FIN", "SWE", "NOR", "CHE", "AUT", "BEL", "IRL", "PRT", "GRC", "TUR", "IND", "BRA", "MEX", "ZAF",
                        "XXA", "XXB", "XXC", "XXX", "UNO", "EUE", "XOM", "RKS", "KOR", "SGP", "NZL", "ARG"]

    mutating func word(_ n: ClosedRange<Int>) -> String { String((0..<int(n)).map { _ in pick(Self.letters) }) }

    mutating func alnum(_ n: Int, letterShare: Int) -> String {
        String((0..<n).map { _ in int(0...99) < letterShare ? pick(Self.letters) : pick(Self.digits) })
    }

    static func check(_ s: String) -> String { String(MRZ.checkDigit(s) ?? 0) }

    static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? String(s.prefix(n)) : s + String(repeating: "<", count: n - s.count)
    }

    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// A random valid MRZ (formats in turn at random; dates valid for a reference date in 2026 with
    /// the default 20-year expiry window).
    public mutating func next() -> Sample {
        next(format: pick([.td1, .td2, .td3, .mrvA, .mrvB]))
    }

    public mutating func next(format: MRZFormat) -> Sample {
        let width = format.shape?.length ?? 44
        let state = pick(Self.codes), nationality = pick(Self.codes)
        let code: String
        switch format {
        case .td3: code = pick(["P<", "P<", "PA", "PD"])
        case .mrvA, .mrvB: code = pick(["V<", "VC", "VI"])
        case .td1: code = pick(["I<", "ID", "AC", "C<", "IR"])
        default: code = pick(["I<", "ID", "AC"])
        }
        // Names: 1–2 surname components, 0–3 given names; the name field may truncate them.
        let surnameParts = (0..<int(1...2)).map { _ in word(2...12) }
        let givenParts = (0..<int(0...3)).map { _ in word(1...10) }
        let nameWidth = format == .td1 ? 30 : width - 5
        var nameText = surnameParts.joined(separator: "<")
        if !givenParts.isEmpty { nameText += "<<" + givenParts.joined(separator: "<") }
        let nameField = Self.pad(nameText, nameWidth)
        let trimmedName = String(nameField.reversed().drop(while: { $0 == "<" }).reversed())
        let (sur, given): (String, String) = {
            if let r = trimmedName.range(of: "<<") {
                return (String(trimmedName[..<r.lowerBound]), String(trimmedName[r.upperBound...]))
            }
            return (trimmedName, "")
        }()
        func words(_ s: String) -> String { s.split(separator: "<").joined(separator: " ") }

        // Document number: 6–9 characters (some letters), or a long one (10–14) on TD1.
        let long = format == .td1 && int(0...9) == 0
        let docLength = long ? int(10...14) : int(6...9)
        let documentNumber = String(pick(Self.letters)) + alnum(docLength - 1, letterShare: 15)

        // Dates.
        let by = int(1930...2025), bm = int(1...12), bd = int(1...28)
        let unknownDay = int(0...39) == 0, unknownMonth = unknownDay && int(0...1) == 0
        let birthText = Self.two(by % 100) + (unknownMonth ? "<<" : Self.two(bm)) + (unknownDay ? "<<" : Self.two(bd))
        let birthISO = unknownMonth ? "\(by)" : (unknownDay ? "\(by)-\(Self.two(bm))" : "\(by)-\(Self.two(bm))-\(Self.two(bd))")
        let ey = int(2012...2040), em = int(1...12), ed = int(1...28)
        let expiryText = Self.two(ey % 100) + Self.two(em) + Self.two(ed)
        let expiryISO = "\(ey)-\(Self.two(em))-\(Self.two(ed))"
        let sex = pick(["M", "F", "<"])
        let optionalMax: Int = {
            switch format {
            case .td3: return 14
            case .td2: return 7
            case .mrvA: return 16
            case .mrvB: return 8
            default: return 15
            }
        }()
        var optional = int(0...2) == 0 ? "" : alnum(int(1...optionalMax), letterShare: 20)
        if optional.count > 3, int(0...3) == 0 {   // an inner filler, as on real cards
            var a = Array(optional); a[int(1...(a.count - 2))] = "<"; optional = String(a)
        }

        var lines: [String]
        let docField = Self.pad(documentNumber, 9)
        switch format {
        case .td3, .td2, .mrvA, .mrvB:
            let l1 = code + Self.pad(state, 3) + nameField
            var l2 = docField + Self.check(docField) + Self.pad(nationality, 3)
            l2 += birthText + Self.check(birthText)
            l2 += sex + expiryText + Self.check(expiryText)
            let opt = Self.pad(optional, optionalMax)
            l2 += opt
            if format == .td3 {
                l2 += optional.isEmpty ? pick(["<", "0"]) : Self.check(opt)
            }
            if format == .td3 || format == .td2 {
                let body = Array(l2)
                let composite = String(body[0..<10]) + String(body[13..<20]) + String(body[21...])
                l2 += Self.check(composite)
            }
            lines = [l1, l2]
        default: // TD1
            var l1 = code + Self.pad(state, 3)
            if long {
                let head = String(documentNumber.prefix(9)), tail = String(documentNumber.dropFirst(9))
                l1 += head + "<" + tail + Self.check(documentNumber) + "<"
                optional = String(optional.prefix(max(0, 30 - l1.count)))
                while optional.last == "<" { optional.removeLast() }
            } else {
                l1 += docField + Self.check(docField)
            }
            l1 = Self.pad(l1 + optional, 30)
            var l2 = birthText + Self.check(birthText)
            l2 += sex + expiryText + Self.check(expiryText) + Self.pad(nationality, 3)
            l2 += String(repeating: "<", count: 11)
            let a1 = Array(l1), a2 = Array(l2)
            let composite = String(a1[5..<30]) + String(a2[0..<7]) + String(a2[8..<15]) + String(a2[18..<29])
            l2 += Self.check(composite)
            lines = [l1, l2, Self.pad(nameText, 30)]
        }
        return Sample(format: format, lines: lines, documentCode: String(code.filter { $0 != "<" }), issuingState: state,
                      surname: words(sur), givenNames: words(given), documentNumber: documentNumber,
                      nationality: nationality, birthDate: birthISO, sex: sex == "<" ? "X" : sex,
                      expiryDate: expiryISO, optionalData: String(optional.reversed().drop(while: { $0 == "<" }).reversed()))
    }

    /// Typical OCR confusions: a digit read as its look-alike letter, a filler read as K/C/E, a letter
    /// read as its look-alike digit.
    public static let confusions: [Character: [Character]] = [
        "0": ["O", "Q", "D"], "1": ["I", "L"], "2": ["Z"], "5": ["S"], "6": ["G"], "8": ["B"],
        "<": ["K", "C", "E"],
        "O": ["0"], "I": ["1"], "Z": ["2"], "S": ["5"], "G": ["6"], "B": ["8"],
    ]

    /// `confusions` plus the letter look-alikes the OCR-B classifier was seen to swap in issuing-state
    /// and nationality codes (c1000 and the real specimens: `UTD`, `GGR`, `FSP`, `NLO`, `HLD`, `EQY`,
    /// `I7A`), for corrupting code fields.
    public static let codeConfusions: [Character: [Character]] = confusions.merging([
        "O": ["0", "D", "Q"], "D": ["O", "0"], "B": ["8", "G"], "E": ["F"], "F": ["E"], "N": ["H"], "H": ["N"],
        "G": ["6", "Q", "C"], "C": ["G"], "T": ["7"], "U": ["O", "V"], "Q": ["O"], "R": ["B"], "A": ["4"], "M": ["N"],
        "V": ["U"], "W": ["V"], "L": ["1"], "K": ["X"], "X": ["K"], "P": ["F"], "Y": ["T"],
    ]) { _, new in new }

    /// The issuing-state and nationality cells of a `lines.count`-line MRZ of `length` (0-based line, column).
    public static func isCodeCell(_ line: Int, _ column: Int, lineCount: Int, length: Int) -> Bool {
        if line == 0 { return (2...4).contains(column) }
        if line == 1 && lineCount == 3 { return (15...17).contains(column) }
        return line == 1 && lineCount == 2 && (10...12).contains(column)
    }

    /// `lines` with `count` OCR confusions at distinct random positions for which `allowed(line, column)`
    /// holds, and the confusions made.
    public mutating func corrupt(_ lines: [String], count: Int, confusions: [Character: [Character]] = confusions,
                                 allowed: (Int, Int) -> Bool = { _, _ in true }) -> (lines: [String], corruptions: [Corruption]) {
        var rows = lines.map { Array($0) }
        var spots: [(Int, Int)] = []
        for l in rows.indices { for c in rows[l].indices where confusions[rows[l][c]] != nil && allowed(l, c) { spots.append((l, c)) } }
        var made: [Corruption] = []
        for _ in 0..<count where !spots.isEmpty {
            let i = int(0...(spots.count - 1))
            let (l, c) = spots.remove(at: i)
            let from = rows[l][c]
            let to = pick(confusions[from]!)
            rows[l][c] = to
            made.append(Corruption(line: l, column: c, from: from, to: to))
        }
        return (rows.map { String($0) }, made)
    }

    /// `lines` with one or two OCR confusions anywhere (for benchmarks).
    public mutating func corrupt(_ lines: [String]) -> [String] {
        corrupt(lines, count: int(1...2)).lines
    }

    /// A uniform draw from `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * Double(nextUInt64() >> 11) / Double(1 << 53)
    }

    /// `lines` as an OCR with per-cell posteriors might read them (for the posterior decoder),
    /// modelled on the OCR-B classifier's softmax as the document reader lists it (runner-ups and
    /// look-alikes listed, 0–2 % of the mass left unlisted): `count` cells where `allowed` holds are
    /// misread as a look-alike (`confusions`) with posterior 0.5–0.99; the true character gets 5–100 %
    /// of the rest (one time in ten only 0.1–5 %: a confident error), and one time in twenty it is not
    /// listed at all (its mass unlisted). Elsewhere one cell in `decoyEvery` with a look-alike lists it
    /// as a decoy with posterior 0.01–0.45 (doubtful but correct); other cells are read with posterior
    /// 0.9–1. Returns the lines read, `posteriors[l][c]` (read character first) and the misreadings.
    public mutating func corruptWithPosteriors(_ lines: [String], count: Int, decoyEvery: Int = 15,
                                               confusions: [Character: [Character]] = confusions,
                                               allowed: (Int, Int) -> Bool = { _, _ in true })
        -> (lines: [String], posteriors: [[[MRZCandidate]]], corruptions: [Corruption]) {
        let (bad, made) = corrupt(lines, count: count, confusions: confusions, allowed: allowed)
        let clean = lines.map { Array($0) }
        var posteriors: [[[MRZCandidate]]] = []
        for (l, line) in bad.enumerated() {
            var row: [[MRZCandidate]] = []
            for (c, ch) in Array(line).enumerated() {
                let unlisted = uniform(0...0.02)
                if made.contains(where: { $0.line == l && $0.column == c }) {
                    let p = uniform(0.5...0.99) * (1 - unlisted)
                    var cell = [MRZCandidate(ch, p)]
                    if int(0...19) > 0 {
                        let share = int(0...9) == 0 ? uniform(0.001...0.05) : uniform(0.05...1)
                        cell.append(MRZCandidate(clean[l][c], (1 - unlisted - p) * share))
                    }
                    row.append(cell)
                } else if let decoys = confusions[ch], int(1...decoyEvery) == 1 {
                    let q = uniform(0.01...0.45)
                    row.append([MRZCandidate(ch, (1 - q) * (1 - unlisted)), MRZCandidate(pick(decoys), q * (1 - unlisted))])
                } else {
                    let p = uniform(0.9...1)
                    var cell = [MRZCandidate(ch, p * (1 - unlisted))]
                    if let decoys = confusions[ch] { cell.append(MRZCandidate(decoys[0], (1 - p) * (1 - unlisted))) }
                    row.append(cell)
                }
            }
            posteriors.append(row)
        }
        return (bad, posteriors, made)
    }
}
