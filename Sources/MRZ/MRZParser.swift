import Foundation

/// Parses, validates and (optionally) corrects an ICAO Doc 9303 machine-readable zone.
///
/// Input: the MRZ lines as recognised (top to bottom), optionally with the OCR's runner-up characters
/// per cell. Output: an ``MRZResult``; parsing never throws and never traps — every problem with the
/// input becomes an entry in `errors` (making `valid` false) or `warnings`.
///
/// Formats are detected from line count and length (Doc 9303-4 TD3 2×44, -5 TD1 3×30, -6 TD2 2×36,
/// -7 MRV-A 2×44 / MRV-B 2×36 with document code `V`, and the French national ID card 2×36 `IDFRA…`).
/// Correction is described on `Corrector`: only changes a check digit confirms are applied.
public struct MRZParser: Sendable {
    public struct Options: Sendable {
        /// The date "now" for century rules and `expired` (default: the current date, UTC), read once
        /// when the parser is created — create a parser per request in long-running processes.
        public var referenceDate: Date
        /// How far in the future an expiry date may lie, in years (default 20): `YY` of an expiry
        /// date resolves to the latest year ≤ reference year + window. Birth dates resolve to the
        /// latest date not after the reference date (Doc 9303-3 §4.8 gives only `YYMMDD`).
        public var expiryWindowYears: Int
        /// Whether to apply check-digit-confirmed OCR corrections (default true).
        public var correctionEnabled: Bool

        public init(referenceDate: Date = Date(), expiryWindowYears: Int = 20, correctionEnabled: Bool = true) {
            self.referenceDate = referenceDate
            self.expiryWindowYears = expiryWindowYears
            self.correctionEnabled = correctionEnabled
        }
    }

    public let options: Options
    let reference: (year: Int, month: Int, day: Int)

    public init(options: MRZParser.Options = .init()) {
        self.options = options
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day], from: options.referenceDate)
        reference = (c.year ?? 2000, c.month ?? 1, c.day ?? 1)
    }

    /// Parses MRZ text: lines separated by newlines; a single line holding whitespace-separated
    /// parts is split at the whitespace; a single 90/72/88-character run is cut into 3×30, 2×36 or
    /// 2×44. Spaces inside a line are removed (MRZ text never contains spaces) with a warning. Lines
    /// that cannot be MRZ lines (`canBeMRZLine`: OCR noise above, below or between the MRZ lines) are
    /// dropped with a warning when the lines left have the shape of an MRZ.
    public func parse(text: String) -> MRZResult {
        if text.utf8.count > Self.maxInputBytes { return Self.tooLarge(text.utf8.count) }
        var lines = text.split(whereSeparator: { $0.isNewline }).map { line -> String in
            let start = line.firstIndex(where: { !$0.isWhitespace }) ?? line.endIndex
            let end = line.lastIndex(where: { !$0.isWhitespace }).map { line.index(after: $0) } ?? start
            return start < end ? String(line[start..<end]) : ""
        }.filter { !$0.isEmpty }
        var warnings: [String] = []
        // OCR noise around the MRZ: lines that cannot be MRZ lines are dropped, when what is left is an MRZ.
        if lines.count > 1 {
            let kept = lines.filter(Self.canBeMRZLine)
            if !kept.isEmpty, kept.count < lines.count, Self.hasMRZShape(kept) {
                warnings.append("dropped \(lines.count - kept.count) line(s) that cannot be MRZ text (not 30, 36 or 44 MRZ characters)")
                lines = kept
            }
        }
        if lines.count == 1 {
            let parts = lines[0].split(whereSeparator: { $0.isWhitespace }).map(String.init)
            if parts.count > 1, Set(parts.map(\.count)).count == 1, [2, 3].contains(parts.count) {
                lines = parts
            }
        }
        if lines.count == 1 {
            let line = lines[0]
            let n = line.count
            let cut = n == 90 ? 30 : (n == 72 ? 36 : (n == 88 ? 44 : 0))
            if cut > 0 {
                let chars = Array(line)
                lines = stride(from: 0, to: n, by: cut).map { String(chars[$0..<($0 + cut)]) }
                warnings.append("one \(n)-character line was split into lines of \(cut)")
            }
        }
        var removed = 0
        lines = lines.map { line in
            guard line.contains(where: { $0.isWhitespace }) else { return line }
            let kept = line.filter { !$0.isWhitespace }
            removed += line.count - kept.count
            return kept
        }
        if removed > 0 { warnings.append("removed \(removed) whitespace character(s) inside MRZ lines") }
        var result = parse(lines)
        result.warnings.insert(contentsOf: warnings, at: 0)
        return result
    }

    /// Whether a text line can be an MRZ line: 30, 36 or 44 characters once whitespace is removed, of
    /// which at least 90 % are MRZ characters (`0-9 A-Z <`; lowercase letters and `«` count, since
    /// they are reported or normalised, not dropped). A whole MRZ on one line (72, 88 or 90) counts too.
    static func canBeMRZLine(_ line: String) -> Bool {
        let chars = line.filter { !$0.isWhitespace }
        guard [30, 36, 44, 72, 88, 90].contains(chars.count) else { return false }
        let mrz = chars.filter { ch in
            ch == "<" || ch == "«" || (ch.isASCII && (ch.isLetter || ch.isNumber))
        }.count
        return mrz * 10 >= chars.count * 9
    }

    /// Whether `lines` (trimmed, non-empty) have the shape of an MRZ: 3 × 30, 2 × 36, 2 × 44 after
    /// whitespace removal, or one line of 72, 88 or 90 characters (the splits of `parse(text:)`).
    static func hasMRZShape(_ lines: [String]) -> Bool {
        let lengths = lines.map { $0.filter { !$0.isWhitespace }.count }
        return lengths == [30, 30, 30] || lengths == [36, 36] || lengths == [44, 44]
            || (lengths.count == 1 && [72, 88, 90].contains(lengths[0]))
    }

    /// Parses MRZ lines. `alternatives[line][column]` lists further plausible characters for that cell,
    /// most likely first (the character in `lines` is the first choice; the first 8 are used); it
    /// indexes the lines as given (before leading/trailing whitespace is trimmed and empty lines
    /// dropped). Any shape is accepted: missing lines or cells mean "no alternatives".
    public func parse(_ lines: [String], alternatives: [[[Character]]]? = nil) -> MRZResult {
        parse(lines, alternatives: alternatives, posteriors: nil)
    }

    /// Parses MRZ lines with the recogniser's per-cell posteriors: `posteriors[l][c]` lists candidate
    /// characters of that cell with their posterior (0…1; the read character in `lines` should be among
    /// them, else it gets the rest of the mass); indexed like `alternatives`, any shape accepted.
    /// When a check digit fails, the corrections are the maximum-a-posteriori reading that makes every
    /// check digit hold (`MRZDecoder`), applied only when it beats every rival by a 100:1 margin;
    /// with several explanations within that margin nothing is applied and the result is invalid, and
    /// so when the best reading changes a cell to a character its candidates do not list (only the
    /// look-alike table proposed it; `MRZDecoder.unsupported`) where nothing forced a change. When
    /// no reading within the search bound satisfies the check digits, the rank-only correction of
    /// `parse(_:alternatives:)` is tried with the candidates as runner-ups (most probable first), its
    /// confusion table then limited to forced fixes.
    public func parse(_ lines: [String], posteriors: [[[MRZCandidate]]]) -> MRZResult {
        let ranked = posteriors.enumerated().map { l, row in
            row.enumerated().map { c, cands -> [Character] in
                let read: Character? = l < lines.count && c < Array(lines[l]).count ? Array(lines[l])[c] : nil
                return cands.filter { $0.character != read }.sorted { $0.posterior > $1.posterior }.map(\.character)
            }
        }
        return parse(lines, alternatives: ranked, posteriors: posteriors)
    }

    func parse(_ lines: [String], alternatives: [[[Character]]]?, posteriors: [[[MRZCandidate]]]?) -> MRZResult {
        let total = lines.reduce(0) { $0 + $1.utf8.count }
        if total > Self.maxInputBytes || lines.count > 256 { return Self.tooLarge(total, lines: lines.count) }
        // 1. Normalise: trim, drop empty lines, map characters to bytes (non-ASCII → 0x80, « → 0xAB).
        var rows: [[UInt8]] = []
        var display = Display()
        var alts: [[[UInt8]]] = []
        var post: [[[(b: UInt8, p: Double)]]] = []
        for (i, line) in lines.enumerated() {
            var lead = 0, end = 0
            if line.utf8.count > 4096 {      // far beyond any MRZ: keep only its length for the message
                rows.append([UInt8](repeating: 0x80, count: line.utf8.count)); alts.append([]); post.append([])
                display.truncated.insert(rows.count - 1)
                continue
            }
            if line.utf8.allSatisfy({ $0 < 0x80 }) {
                let bytes = Array(line.utf8)
                end = bytes.count
                while lead < end, Self.isSpace(bytes[lead]) { lead += 1 }
                while end > lead, Self.isSpace(bytes[end - 1]) { end -= 1 }
                if lead == end { continue }
                rows.append(Array(bytes[lead..<end]))
            } else {
                let chars = Array(line)
                end = chars.count
                while lead < end, chars[lead].isWhitespace { lead += 1 }
                while end > lead, chars[end - 1].isWhitespace { end -= 1 }
                if lead == end { continue }
                let kept = chars[lead..<end]
                rows.append(kept.map(Self.byte))
                for (c, ch) in kept.enumerated() where !ch.isASCII { display.special[Display.key(rows.count - 1, c)] = ch }
            }
            var lineAlts: [[UInt8]] = []
            if let a = alternatives, i < a.count {
                for col in lead..<end { lineAlts.append(col < a[i].count ? a[i][col].prefix(8).map(Self.byte) : []) }
            }
            alts.append(lineAlts)
            var linePost: [[(b: UInt8, p: Double)]] = []
            if let q = posteriors, i < q.count {
                for col in lead..<end {
                    linePost.append(col < q[i].count ? q[i][col].prefix(16).map { (Self.byte($0.character), $0.posterior.isFinite ? min(max($0.posterior, 0), 1) : 0) } : [])
                }
            }
            post.append(linePost)
        }

        // 2. Format from line count and length.
        let format = Self.detect(rows)
        guard format != .unknown, let shape = format.shape else {
            let lengths = rows.prefix(8).map { String($0.count) }.joined(separator: ", ") + (rows.count > 8 ? ", …" : "")
            let error = rows.isEmpty ? "no MRZ text: the input is empty"
                : "\(rows.count) line(s) of length [\(lengths)] match no MRZ format (TD1 3×30, TD2/MRV-B 2×36, TD3/MRV-A 2×44)"
            let showable = rows.count <= 8 && rows.allSatisfy { $0.count <= 200 } && display.truncated.isEmpty
            let shown = showable ? rows.indices.map { display.text(rows, $0, 0..<rows[$0].count) } : []
            return MRZResult(valid: false, format: .unknown, lines: shown, fields: MRZFields(), checkDigits: [],
                             corrections: [], errors: [error], warnings: [])
        }

        // 3. Named national deviations, decided on the reading as given; then correction.
        let deviations = Self.deviations(format, rows)
        var layout = Layout.make(format, rows: rows, deviations: deviations)
        var classes = layout.classMap(shape: shape)
        var errors: [String] = []
        var warnings: [String] = []
        var corrections: [MRZCorrection] = []
        // With posteriors even a reading that satisfies every check digit is reviewed (`MRZDecoder.review`).
        let withPosteriors = post.contains(where: { !$0.isEmpty })
        if options.correctionEnabled && (withPosteriors || !Self.clean(rows, layout: layout, classes: classes)) {
            let corrector = Corrector(classes: classes,
                                      alternatives: alts.contains(where: { !$0.isEmpty }) ? alts : nil, layout: layout)
            let before = rows
            var applied: [Corrector.Change] = []
            var decoded = false
            if withPosteriors {
                applied = Self.normaliseFillers(&rows, classes: classes)
                let decoder = MRZDecoder(format: format, classes: classes, posteriors: post, tableAllowed: layout.compositeIndex != nil,
                                         deviations: deviations)
                switch decoder.decode(rows, layout: Layout.make(format, rows: rows, deviations: deviations)) {
                case .unchanged:
                    decoded = true
                case .decided(let changes, _):
                    Corrector.apply(changes, to: &rows); applied += changes; decoded = true
                case .ambiguous(let n):
                    errors.append("check digits fail and \(n) \(n == 1 ? "reading" : "readings") of similar likelihood would satisfy them; none applied")
                    decoded = true
                case .unsupported(let changes):
                    let cells = decoder.unsupported(changes, rows).map { "line \($0.line + 1) column \($0.column + 1)" }
                    errors.append("check digits fail and the reading that would satisfy them changes \(cells.count == 1 ? "a character" : "characters") "
                                  + "the recogniser did not offer another reading for (\(cells.joined(separator: ", "))); none applied")
                    decoded = true
                case .none:
                    rows = before; applied = []
                }
            }
            // Without a decision from the posteriors, the rank-only correction: with posteriors, a
            // character whose cell's candidates do not list it is not proposed (`MRZDecoder.unsupported`).
            if !decoded { applied = correct(&rows, layout: layout, corrector: corrector, errors: &errors, table: !withPosteriors) }
            if withPosteriors { applied += Self.trailingFillers(&rows, layout: Layout.make(format, rows: rows, deviations: deviations), posteriors: post) }
            applied += Self.decodeCodes(&rows, layout: layout, format: format, posteriors: post)
            // One entry per cell: a cell changed twice (a `«` normalised to `<`, then corrected by the
            // decoder) is listed once, from what was read to what it holds now.
            applied = Self.mergedChanges(applied, before: before)
            if !applied.isEmpty {
                let readClasses = classes
                layout = Layout.make(format, rows: rows, deviations: deviations)
                classes = layout.classMap(shape: shape)
                corrections = applied.map { c in
                    MRZCorrection(line: c.line + 1, column: c.column + 1, from: String(display.char(before, c.line, c.column)),
                                  to: String(UnicodeScalar(c.to)), field: layout.fieldName(c.line, c.column), source: c.source.rawValue)
                }
                // A look-alike swap nothing forced (the character read could stand there) and no OCR
                // evidence offered: only the check digits confirm it, and for a document number the
                // composite moves with the field's own check digit, so a single altered character is
                // "confirmed" as easily as a misread one. Applied, but never silently (`unconfirmedPrefix`).
                for (c, m) in zip(applied, corrections) where c.source == .confusionTable
                    && readClasses[c.line][c.column]?.allows(before[c.line][c.column]) == true {
                    warnings.append("\(m.field): '\(m.from)' at line \(m.line) column \(m.column) \(Self.unconfirmedPrefix) '\(m.to)' "
                                    + "by the look-alike table alone, with no OCR evidence; only the check digits confirm it")
                }
                for c in applied { display.special[Display.key(c.line, c.column)] = nil }
            }
        }

        // 4. Check digits, fields, validation.
        let checkDigits = layout.checks.map { check -> MRZCheckDigit in
            var sum = 0, i = 0, computable = true, allFiller = true
            for seg in check.segments {
                for c in seg.range {
                    let b = rows[seg.line][c]
                    if let v = MRZ.characterValue(b) { sum += v * MRZ.weights[i % 3] } else { computable = false }
                    if b != Corrector.lt { allFiller = false }
                    i += 1
                }
            }
            let d = rows[check.digit.line][check.digit.column]
            let valid = computable && (d == Corrector.lt ? check.fillerAllowedWhenEmpty && allFiller
                                                         : (d >= 0x30 && d <= 0x39 && Int(d - 0x30) == sum % 10))
            return MRZCheckDigit(name: check.name, expected: computable ? String(sum % 10) : nil,
                                 found: String(display.char(rows, check.digit.line, check.digit.column)), valid: valid)
        }
        for cd in checkDigits where !cd.valid {
            let what = cd.expected.map { "expected \($0)" } ?? "not computable (characters outside 0-9 A-Z <)"
            errors.append("\(cd.name) check digit fails: \(what), found '\(cd.found)'")
        }
        errors.append(contentsOf: charsetErrors(rows: rows, display: display, layout: layout, classes: classes))
        var fields = MRZFields()
        extractFields(format: format, layout: layout, rows: rows, display: display, into: &fields,
                      errors: &errors, warnings: &warnings)
        warnings.append(contentsOf: unverifiableWarnings(layout: layout, rows: rows))
        if deviations.contains(.longDocumentNumberCheckIncludesFiller) {
            warnings.append("document_number check digit counts the filler at position 15: the Belgian/Portuguese deviation "
                            + "from ICAO 9303-5 §4.2.4, which excludes it")
        }
        return MRZResult(valid: errors.isEmpty, format: format, lines: rows.indices.map { display.text(rows, $0, 0..<rows[$0].count) },
                         fields: fields, checkDigits: checkDigits, corrections: corrections, errors: errors, warnings: warnings,
                         deviations: MRZDeviation.allCases.filter(deviations.contains))
    }

    /// The text as given: MRZ bytes, plus the original non-ASCII characters where the bytes hold a marker.
    struct Display {
        var special: [Int: Character] = [:]
        var truncated: Set<Int> = []
        static func key(_ line: Int, _ column: Int) -> Int { line << 16 | column }
        func char(_ rows: [[UInt8]], _ line: Int, _ column: Int) -> Character {
            if !special.isEmpty, let ch = special[Self.key(line, column)] { return ch }
            return Character(UnicodeScalar(rows[line][column]))
        }
        func text(_ rows: [[UInt8]], _ line: Int, _ range: Range<Int>) -> String {
            if special.isEmpty { return String(decoding: rows[line][range], as: UTF8.self) }
            return String(range.map { char(rows, line, $0) })
        }
    }

    /// Every character allowed where it stands and every check digit holding: nothing to correct.
    static func clean(_ rows: [[UInt8]], layout: Layout, classes: [[CharClass?]]) -> Bool {
        guard layout.checks.allSatisfy({ Corrector.holds(group($0), rows) }) else { return false }
        for l in rows.indices {
            for c in rows[l].indices where !(classes[l][c]?.allows(rows[l][c]) ?? (MRZ.characterValue(rows[l][c]) != nil)) {
                return false
            }
        }
        return true
    }

    /// Issuing states whose TD1 cards (some generations) count the `<` at position 15 in a long
    /// document number's check digit (`MRZDeviation.longDocumentNumberCheckIncludesFiller`).
    static let fillerInLongNumberStates: Set<[UInt8]> = [Array("BEL".utf8), Array("PRT".utf8)]

    /// The named national deviations `rows` (normalised, as read) are to be parsed under: the
    /// long-number deviation when the issuing state is BEL or PRT, the document number is long, the
    /// ICAO 9303-5 §4.2.4 check digit fails as read and the deviant one holds. Decided once, before
    /// correction, so that no correction is ever made to fit either rule.
    static func deviations(_ format: MRZFormat, _ rows: [[UInt8]]) -> Set<MRZDeviation> {
        guard format == .td1, fillerInLongNumberStates.contains(Array(rows[0][2..<5])) else { return [] }
        let icao = Layout.make(format, rows: rows)
        guard icao.fields.filter({ $0.name == "document_number" }).count > 1,
              let standard = icao.checks.first(where: { $0.name == "document_number" }),
              !Corrector.holds(group(standard), rows) else { return [] }
        let deviant = Layout.make(format, rows: rows, deviations: [.longDocumentNumberCheckIncludesFiller])
        guard let check = deviant.checks.first(where: { $0.name == "document_number" }), Corrector.holds(group(check), rows) else { return [] }
        return [.longDocumentNumberCheckIncludesFiller]
    }

    /// The words of the warning for a correction only the check digits confirm ("FIELD: 'X' at line L
    /// column C was corrected to 'Y' by the look-alike table alone, …"): an unforced
    /// `confusion_table` correction, made only without posteriors.
    public static let unconfirmedPrefix = "was corrected to"

    /// Inputs above this size (bytes) are refused unread: an MRZ is at most 3 × 30 or 2 × 44 characters.
    static let maxInputBytes = 16_384

    static func tooLarge(_ bytes: Int, lines: Int? = nil) -> MRZResult {
        let what = lines.map { "\($0) line(s), \(bytes) bytes" } ?? "\(bytes) bytes"
        return MRZResult(valid: false, format: .unknown, lines: [], fields: MRZFields(), checkDigits: [], corrections: [],
                         errors: ["input too large for an MRZ (\(what); at most 256 lines and \(maxInputBytes) bytes are read)"],
                         warnings: [])
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }

    // MARK: - Normalisation and detection

    static func byte(_ c: Character) -> UInt8 {
        if let a = c.asciiValue { return a }
        return c == "«" ? Corrector.guillemet : 0x80
    }

    static func detect(_ rows: [[UInt8]]) -> MRZFormat {
        let lengths = rows.map(\.count)
        if lengths == [30, 30, 30] { return .td1 }
        if lengths == [36, 36] {
            if rows[0][0] == UInt8(ascii: "V") { return .mrvB }
            // IDFRA… with digits (the card number) where TD2 has the nationality code (columns 11–13).
            if rows[0].starts(with: Array("IDFRA".utf8)),
               rows[1][10..<13].contains(where: { $0 >= 0x30 && $0 <= 0x39 }) { return .frenchNationalID }
            return .td2
        }
        if lengths == [44, 44] { return rows[0][0] == UInt8(ascii: "V") ? .mrvA : .td3 }
        return .unknown
    }

    static func group(_ check: CheckLayout) -> Corrector.Group {
        var covered: [(line: Int, column: Int, weight: Int)] = []
        for seg in check.segments {
            for c in seg.range { covered.append((seg.line, c, MRZ.weights[covered.count % 3])) }
        }
        return Corrector.Group(name: check.name, covered: covered, digit: check.digit,
                               fillerAllowedWhenEmpty: check.fillerAllowedWhenEmpty)
    }

    // MARK: - Correction (policy on `Corrector`)

    /// The issuing-state and nationality fields (Doc 9303-3 §5 codes; the French card's nationality is implied).
    static func codeField(_ f: FieldLayout) -> Bool { f.name == "issuing_state" || f.name == "nationality" }

    /// Issuing-state and nationality codes outside ICAO 9303-3 §5: replaced by the listed code the
    /// cells' posteriors favour by `MRZDecoder.margin` over every other listed code and over the
    /// reading itself (`CountryCodes.decide`); otherwise left as read (the unknown code is reported).
    /// No check digit covers these fields, so only posteriors can decide: without them nothing changes.
    static func decodeCodes(_ rows: inout [[UInt8]], layout: Layout, format: MRZFormat,
                            posteriors: [[[(b: UInt8, p: Double)]]]) -> [Corrector.Change] {
        guard format != .frenchNationalID else { return [] }
        var applied: [Corrector.Change] = []
        let fields = layout.fields.filter { codeField($0) && $0.range.count == 3 && rows[$0.line].count >= $0.range.upperBound }
        // Issuing state and nationality agree on most documents (`CountryCodes.passportAgreement`):
        // each field is decided given the other's code when that one is known. Two rounds, so a field
        // the list settled in the first round (`SWF` → `SWE` on line 1) informs the other in the second.
        let passport = rows.first?.first == UInt8(ascii: "P")
        let agreement = passport ? CountryCodes.passportAgreement : CountryCodes.otherAgreement
        for _ in 0..<2 {
            for f in fields where f.line < posteriors.count {
                let candidates = f.range.map { $0 < posteriors[f.line].count ? posteriors[f.line][$0] : [] }
                let partner = fields.first { $0.name != f.name }.map { Array(rows[$0.line][$0.range]) }
                let known = partner.map { p in CountryCodes.isKnown(String(decoding: p, as: UTF8.self).replacingOccurrences(of: "<", with: "")) } ?? false
                guard case .replace(let code) = CountryCodes.decide(read: Array(rows[f.line][f.range]), candidates: candidates,
                                                                     margin: MRZDecoder.margin, partner: known ? partner : nil,
                                                                     agreement: agreement) else { continue }
                for (i, c) in f.range.enumerated() where rows[f.line][c] != code[i] {
                    rows[f.line][c] = code[i]
                    applied.append(.init(line: f.line, column: c, to: code[i], source: .codeList, cost: 0))
                }
            }
        }
        return applied
    }

    /// Log prior that an optional-data field is filled to its last cell (no `<` padding): ICAO 9303-3
    /// §4.4 pads fields right with `<`, and personal numbers rarely use the whole field. Measured on
    /// the non-empty optional-data fields of the 33 real specimens' ground truth (18, 2 full) and of
    /// the c1000 generator truth (680, none full): 2 of 698, (2 + 1)/(698 + 2) with Laplace's rule.
    static let fullFieldLogPrior = log(3.0 / 700)

    /// A run of `K` that closes an optional-data field (its last cell included) is replaced by `<`
    /// when the fillers are the better explanation by `MRZDecoder.margin`. K (value 20) and `<` (0)
    /// weigh the same modulo 10 (Doc 9303-3 §4.9), so no check digit can tell them apart and the
    /// decoder never proposes the swap; OCR-B draws both diagonals of K in `<`. Log-odds of the
    /// fillers: Σ log P(<)/P(K) over the run (posteriors, `MRZDecoder.floorPosterior` at least) minus
    /// the letters' prior: `fullFieldLogPrior` (the field then has no padding), `letterLogPrior` per K
    /// (the decoder's positional prior, a letter against a digit; against padding it would be smaller
    /// still) and `kindChangeLogPrior` when a digit precedes the run. Three cells K 0.68/0.96/0.79
    /// against `<` 0.32/0.04/0.21 (c1000's specimen-100473, `…1988KKK`) give −5.2 + 16.6: fillers.
    static func trailingFillers(_ rows: inout [[UInt8]], layout: Layout, posteriors: [[[(b: UInt8, p: Double)]]]) -> [Corrector.Change] {
        let k = UInt8(ascii: "K")
        var applied: [Corrector.Change] = []
        for f in layout.fields where f.name.hasPrefix("optional_data") && f.cls == .alnum && !f.range.isEmpty
            && f.line < rows.count && f.range.upperBound <= rows[f.line].count && f.line < posteriors.count {
            let last = f.range.upperBound - 1
            guard rows[f.line][last] == k else { continue }
            var start = last
            while start > f.range.lowerBound && rows[f.line][start - 1] == k { start -= 1 }
            func p(_ c: Int, _ b: UInt8) -> Double {
                guard c < posteriors[f.line].count else { return MRZDecoder.floorPosterior }
                return max(posteriors[f.line][c].first { $0.b == b }?.p ?? 0, MRZDecoder.floorPosterior)
            }
            let likelihood = (start...last).reduce(0.0) { $0 + log(p($1, Corrector.lt) / p($1, k)) }
            let before = start > f.range.lowerBound ? rows[f.line][start - 1] : Corrector.lt
            let digitBefore = before >= 0x30 && before <= 0x39
            let letters = fullFieldLogPrior + Double(last - start + 1) * MRZDecoder.letterLogPrior
                + (digitBefore ? MRZDecoder.kindChangeLogPrior : 0)
            guard likelihood - letters >= MRZDecoder.margin else { continue }
            for c in start...last {
                rows[f.line][c] = Corrector.lt
                applied.append(.init(line: f.line, column: c, to: Corrector.lt, source: .fillerPadding, cost: 0))
            }
        }
        return applied
    }

    /// `changes` with one entry per cell, in first-change order: the last change to a cell wins (its
    /// character and source), and a cell that ends as it was read (`before`) has none.
    static func mergedChanges(_ changes: [Corrector.Change], before: [[UInt8]]) -> [Corrector.Change] {
        var out: [Corrector.Change] = []
        var at: [Int: Int] = [:]
        for c in changes {
            let key = c.line << 16 | c.column
            if let i = at[key] { out[i] = c } else { at[key] = out.count; out.append(c) }
        }
        return out.filter { before[$0.line][$0.column] != $0.to }
    }

    /// `«` can only be a filler wherever a filler may stand.
    static func normaliseFillers(_ rows: inout [[UInt8]], classes: [[CharClass?]]) -> [Corrector.Change] {
        var applied: [Corrector.Change] = []
        for l in rows.indices {
            for c in rows[l].indices where rows[l][c] == Corrector.guillemet {
                if classes[l][c]?.allows(Corrector.lt) ?? true {
                    rows[l][c] = Corrector.lt
                    applied.append(.init(line: l, column: c, to: Corrector.lt, source: .fillerNormalisation, cost: 0.5))
                }
            }
        }
        return applied
    }

    /// The rank-only correction (policy on `Corrector`). `table`: whether the confusion table may
    /// propose unforced changes (with a composite check digit only); forced fixes use it regardless.
    func correct(_ rows: inout [[UInt8]], layout: Layout, corrector: Corrector, errors: inout [String], table: Bool = true) -> [Corrector.Change] {
        var applied = Self.normaliseFillers(&rows, classes: corrector.classes)
        let groupChecks = layout.checks.indices.filter { $0 != layout.compositeIndex }
        let groups = groupChecks.map { Self.group(layout.checks[$0]) }
        let hasComposite = layout.compositeIndex != nil
        let outcomes = groups.map { corrector.correct($0, rows, tableAllowed: hasComposite && table) }
        let lists: [[[Corrector.Change]]] = outcomes.map {
            if case .candidates(let c) = $0 { return c }
            return [[]]
        }
        let needed = outcomes.contains { if case .unchanged = $0 { return false } else { return true } }
        func ambiguous(_ g: Int, _ n: Int) {
            if n < 0 {
                errors.append("\(groups[g].name) check digit fails and too many corrections are possible to choose one; none applied")
            } else {
                errors.append("\(groups[g].name) check digit fails and \(n) different corrections would satisfy it; none applied")
            }
        }
        var anyAmbiguous = false
        for (g, o) in outcomes.enumerated() {
            if case .ambiguous(let n) = o { ambiguous(g, n); anyAmbiguous = true }
        }
        guard let ci = layout.compositeIndex else {
            // One check digit per field: each group on its own (table corrections were not offered).
            for (g, list) in lists.enumerated() where !(list.count == 1 && list[0].isEmpty) {
                if case .ambiguous = outcomes[g] { continue }
                if let pick = corrector.decisive(list) { Corrector.apply(pick, to: &rows); applied += pick } else { ambiguous(g, list.count) }
            }
            return applied
        }
        if anyAmbiguous { return applied }
        if outcomes.contains(where: { if case .unfixable = $0 { return true } else { return false } }) {
            if lists.contains(where: { !$0[0].isEmpty }) {
                errors.append("corrections not applied: another check digit fails and cannot be corrected")
            }
            return applied
        }

        // Joint decision with the composite check digit.
        let composite = Self.group(layout.checks[ci])
        var inGroups = Set<Int>()
        for g in groups {
            for p in g.covered { inGroups.insert(p.line * 64 + p.column) }
            inGroups.insert(g.digit.line * 64 + g.digit.column)
        }
        // A composite-only cell that cannot stand where it is (the composite check digit read as a
        // letter look-alike: `O`, `B`, `G`, …) is normalised first (ICAO 9303-3 §4.9: check digits are
        // digits), by the confusion table or the OCR's alternatives, so that the composite can still
        // judge the field corrections. Each normalisation is one more choice to cross-check.
        var compositePositions = composite.covered.map { ($0.line, $0.column) }
        compositePositions.append(composite.digit)
        var fixLists: [[Corrector.Change]] = []
        for (l, c) in compositePositions where !inGroups.contains(l * 64 + c) {
            guard let cls = corrector.classes[l][c], !cls.allows(rows[l][c]) else { continue }
            let options = corrector.options(rows[l][c], line: l, column: c, tier: 1, forced: true)
            if options.isEmpty { fixLists = []; break }
            fixLists.append(options)
        }
        var fixes: [[Corrector.Change]] = [[]]
        for options in fixLists { fixes = fixes.flatMap { prefix in options.map { prefix + [$0] } } }
        var combos: [[Int]] = [[]]
        for list in lists {
            combos = combos.flatMap { prefix in list.indices.map { prefix + [$0] } }
            if combos.count * fixes.count > 256 {
                errors.append("too many candidate corrections to confirm with the composite check digit; none applied")
                return applied
            }
        }
        struct Solution { let choice: [Int]; let fix: [Corrector.Change]; let edits: Int; let cost: Double }
        var solutions: [Solution] = []
        for combo in combos {
            var trial = rows
            var edits = 0, cost = 0.0
            for (g, i) in combo.enumerated() {
                Corrector.apply(lists[g][i], to: &trial); edits += lists[g][i].count; cost += corrector.cost(lists[g][i])
            }
            guard groups.allSatisfy({ Corrector.holds($0, trial) }) else { continue }
            for fix in fixes {
                var fixed = trial
                Corrector.apply(fix, to: &fixed)
                if Corrector.holds(composite, fixed) {
                    solutions.append(Solution(choice: combo, fix: fix, edits: edits + fix.count, cost: cost + corrector.cost(fix)))
                }
            }
        }
        if solutions.isEmpty && !needed {
            // Every field check digit holds; only the composite fails: the composite-only characters
            // (and the composite digit) may change, by forced fixes or OCR alternatives only.
            switch corrector.correct(composite, rows, maxEdits: 1, tableAllowed: false,
                                     changeable: { !inGroups.contains($0 * 64 + $1) }) {
            case .candidates(let fixes):
                if let pick = corrector.decisive(fixes) { Corrector.apply(pick, to: &rows); applied += pick }
                else { errors.append("composite check digit fails and \(fixes.count) different corrections would satisfy it; none applied") }
            case .ambiguous(let n):
                errors.append("composite check digit fails and \(n < 0 ? "too many" : String(n)) different corrections would satisfy it; none applied")
            case .unchanged, .unfixable:
                break
            }
            return applied
        }
        guard !solutions.isEmpty else {
            if needed { errors.append("corrections that satisfy the field check digits contradict the composite check digit; none applied") }
            return applied
        }
        let least = solutions.map(\.edits).min()!
        var best = solutions.filter { $0.edits == least }.sorted { $0.cost < $1.cost }
        if best.count > 1, best[0].cost + 1e-9 < best[1].cost { best = [best[0]] }
        var consistent = true
        for g in lists.indices {
            let picks = Set(best.map { $0.choice[g] })
            if picks.count > 1 { ambiguous(g, picks.count); consistent = false }
        }
        if Set(best.map { $0.fix.map { Int($0.to) } }).count > 1 {
            errors.append("composite check digit cannot be read: \(best.count) different digits would satisfy it; none applied")
            consistent = false
        }
        guard consistent else { return applied }
        // The composite must tell the correction from a misread check digit. A field correction that
        // makes the field's check digit hold has a rival: the field was read right and its check digit
        // was misread. When the composite holds under that rival too (a check digit standing at weight
        // 7 in the composite, misread by ±5 and "repaired" by a field change of sum ±5: 7·5 + 5 ≡ 0 mod
        // 10; the same for weights 1 and 3), only the composite would confirm the correction, and it
        // cannot: nothing is applied.
        var solved = rows
        for (g, i) in best[0].choice.enumerated() { Corrector.apply(lists[g][i], to: &solved) }
        Corrector.apply(best[0].fix, to: &solved)
        for (g, i) in best[0].choice.enumerated() {
            let unforced = lists[g][i].filter { c in
                !(c.line == groups[g].digit.line && c.column == groups[g].digit.column)
                    && corrector.classes[c.line][c.column]?.allows(rows[c.line][c.column]) == true
            }
            guard !unforced.isEmpty else { continue }
            var rival = solved
            for c in unforced { rival[c.line][c.column] = rows[c.line][c.column] }
            guard let digit = Self.computedDigit(groups[g], rival) else { continue }
            rival[groups[g].digit.line][groups[g].digit.column] = digit
            if groups.allSatisfy({ Corrector.holds($0, rival) }) && Corrector.holds(composite, rival) {
                errors.append("\(groups[g].name) check digit fails and a misread check digit explains it as well as the correction "
                              + "(the composite check digit cannot tell them apart); none applied")
                return applied
            }
        }
        for (g, i) in best[0].choice.enumerated() { Corrector.apply(lists[g][i], to: &rows); applied += lists[g][i] }
        Corrector.apply(best[0].fix, to: &rows); applied += best[0].fix
        return applied
    }

    /// The check digit `group`'s covered characters in `rows` call for (Doc 9303-3 §4.9), as an ASCII
    /// digit; nil when a covered character is outside the alphabet.
    static func computedDigit(_ group: Corrector.Group, _ rows: [[UInt8]]) -> UInt8? {
        var sum = 0
        for p in group.covered {
            guard let v = MRZ.characterValue(rows[p.line][p.column]) else { return nil }
            sum += v * p.weight
        }
        return UInt8(ascii: "0") + UInt8(sum % 10)
    }

    // MARK: - Validation messages

    func charsetErrors(rows: [[UInt8]], display: Display, layout: Layout, classes: [[CharClass?]]) -> [String] {
        var out: [String] = []
        var count = 0
        for l in rows.indices {
            for c in rows[l].indices {
                let b = rows[l][c]
                // Fast path: A-Z 0-9 < are allowed somewhere; check the class only then.
                if MRZ.characterValue(b) != nil, classes[l][c]?.allows(b) ?? true { continue }
                count += 1
                if count > 8 { continue }
                let ch = display.char(rows, l, c)
                let why: String
                if ch.isLowercase { why = "lowercase letters are not MRZ characters" }
                else if MRZ.characterValue(b) == nil { why = "not an MRZ character (0-9 A-Z <)" }
                else { why = "not allowed in \(layout.fieldName(l, c))" }
                out.append("'\(ch)' at line \(l + 1) column \(c + 1): \(why)")
            }
        }
        if count > 8 { out.append("… and \(count - 8) more invalid character(s)") }
        return out
    }

    /// Characters in check-digit-protected alphanumeric fields whose confusion partner has the same
    /// check-digit value modulo 10 (L/1, G/6, K/<): the check digit cannot vouch for them.
    func unverifiableWarnings(layout: Layout, rows: [[UInt8]]) -> [String] {
        let partner: [UInt8: String] = [UInt8(ascii: "L"): "1", UInt8(ascii: "G"): "6", UInt8(ascii: "K"): "<"]
        var out: [String] = []
        for f in layout.fields where f.cls == .alnum && (f.name == "document_number" || f.name.hasPrefix("optional_data")) {
            if f.name.hasPrefix("optional_data") {
                let covered = layout.checks.contains { ch in ch.segments.contains { $0.line == f.line && $0.range.overlaps(f.range) } }
                if !covered { continue }
            }
            for c in f.range {
                if let p = partner[rows[f.line][c]] {
                    out.append("\(f.name): '\(Character(UnicodeScalar(rows[f.line][c])))' at line \(f.line + 1) column \(c + 1) "
                               + "cannot be told from '\(p)' by the check digit (equal weight modulo 10)")
                }
            }
        }
        return out
    }
}
