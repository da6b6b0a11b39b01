/// Character classes of MRZ positions (Doc 9303-3 §4.3, §4.4): what may stand there, and therefore
/// which OCR confusions the corrector may undo.
enum CharClass: Sendable {
    /// Dates: `0-9`, `<` for unknown parts.
    case numeric
    /// A check digit: `0-9`.
    case checkDigit
    /// TD3 personal-number check digit: `0-9`, or `<` when the personal number is all fillers.
    case checkDigitOrFiller
    /// Document number, optional data, document code: `A-Z0-9<`.
    case alnum
    /// Issuing state: `A-Z<`.
    case alpha
    /// Names: `A-Z<`.
    case name
    /// Sex: `M`, `F`, `<` (and `X`, seen in practice).
    case sex

    func allows(_ b: UInt8) -> Bool {
        let digit = b >= 0x30 && b <= 0x39, letter = b >= 0x41 && b <= 0x5A, filler = b == 0x3C
        switch self {
        case .numeric: return digit || filler
        case .checkDigit: return digit
        case .checkDigitOrFiller: return digit || filler
        case .alnum: return digit || letter || filler
        case .alpha, .name: return letter || filler
        case .sex: return b == 0x4D || b == 0x46 || filler || b == 0x58
        }
    }
}

/// One data element's place in the MRZ (0-based line and columns).
struct FieldLayout: Sendable {
    let name: String
    let line: Int
    let range: Range<Int>
    let cls: CharClass
}

/// One check digit: the characters it covers and where it stands (Doc 9303-3 §4.9 and the
/// per-format tables of Parts 4–7).
struct CheckLayout: Sendable {
    let name: String
    let segments: [(line: Int, range: Range<Int>)]
    let digit: (line: Int, column: Int)
    /// TD3 personal number: `<` is a valid check digit when the covered field is all fillers.
    let fillerAllowedWhenEmpty: Bool
}

struct Layout: Sendable {
    var fields: [FieldLayout]
    var checks: [CheckLayout]
    /// Index into `checks` of the composite check digit, if any.
    var compositeIndex: Int?
}

extension Layout {
    /// The layout of `format`, given the (normalised) rows — needed to spot a long document number
    /// (Doc 9303-5 §4.2.2 note j; the same rule for TD2 in Doc 9303-6).
    /// `deviations`: the named national deviations in force (decided by `MRZParser.deviations`).
    static func make(_ format: MRZFormat, rows: [[UInt8]], deviations: Set<MRZDeviation> = []) -> Layout {
        let lt = UInt8(ascii: "<")
        switch format {
        case .td3, .mrvA, .td2, .mrvB:
            let width = format.shape!.length
            let isVisa = format == .mrvA || format == .mrvB
            var fields = [
                FieldLayout(name: "document_code", line: 0, range: 0..<2, cls: .alnum),
                FieldLayout(name: "issuing_state", line: 0, range: 2..<5, cls: .alpha),
                FieldLayout(name: "name", line: 0, range: 5..<width, cls: .name),
                FieldLayout(name: "nationality", line: 1, range: 10..<13, cls: .alnum),
                FieldLayout(name: "birth_date", line: 1, range: 13..<19, cls: .numeric),
                FieldLayout(name: "sex", line: 1, range: 20..<21, cls: .sex),
                FieldLayout(name: "expiry_date", line: 1, range: 21..<27, cls: .numeric),
            ]
            var checks: [CheckLayout] = []
            let optEnd = format == .td3 ? 42 : (format == .td2 ? 35 : width)
            // Long document number (TD2 only): position 10 is '<' and the rest continues in the optional data.
            if format == .td2, rows[1][9] == lt, rows[1][28] != lt,
               let end = (28..<optEnd).first(where: { rows[1][$0] == lt }), end - 1 > 28 {
                fields.append(FieldLayout(name: "document_number", line: 1, range: 0..<9, cls: .alnum))
                fields.append(FieldLayout(name: "document_number", line: 1, range: 28..<(end - 1), cls: .alnum))
                fields.append(FieldLayout(name: "optional_data", line: 1, range: min(end + 1, optEnd)..<optEnd, cls: .alnum))
                checks.append(CheckLayout(name: "document_number", segments: [(1, 0..<9), (1, 28..<(end - 1))],
                                          digit: (1, end - 1), fillerAllowedWhenEmpty: false))
            } else {
                fields.append(FieldLayout(name: "document_number", line: 1, range: 0..<9, cls: .alnum))
                fields.append(FieldLayout(name: "optional_data", line: 1, range: 28..<optEnd, cls: .alnum))
                checks.append(CheckLayout(name: "document_number", segments: [(1, 0..<9)], digit: (1, 9), fillerAllowedWhenEmpty: false))
            }
            checks.append(CheckLayout(name: "birth_date", segments: [(1, 13..<19)], digit: (1, 19), fillerAllowedWhenEmpty: false))
            checks.append(CheckLayout(name: "expiry_date", segments: [(1, 21..<27)], digit: (1, 27), fillerAllowedWhenEmpty: false))
            if format == .td3 {
                checks.append(CheckLayout(name: "optional_data", segments: [(1, 28..<42)], digit: (1, 42), fillerAllowedWhenEmpty: true))
            }
            var composite: Int?
            if !isVisa {
                composite = checks.count
                checks.append(CheckLayout(name: "composite", segments: [(1, 0..<10), (1, 13..<20), (1, 21..<(width - 1))],
                                          digit: (1, width - 1), fillerAllowedWhenEmpty: false))
            }
            return Layout(fields: fields, checks: checks, compositeIndex: composite)

        case .td1:
            var fields = [
                FieldLayout(name: "document_code", line: 0, range: 0..<2, cls: .alnum),
                FieldLayout(name: "issuing_state", line: 0, range: 2..<5, cls: .alpha),
                FieldLayout(name: "birth_date", line: 1, range: 0..<6, cls: .numeric),
                FieldLayout(name: "sex", line: 1, range: 7..<8, cls: .sex),
                FieldLayout(name: "expiry_date", line: 1, range: 8..<14, cls: .numeric),
                FieldLayout(name: "nationality", line: 1, range: 15..<18, cls: .alnum),
                FieldLayout(name: "optional_data_2", line: 1, range: 18..<29, cls: .alnum),
                FieldLayout(name: "name", line: 2, range: 0..<30, cls: .name),
            ]
            var checks: [CheckLayout] = []
            if rows[0][14] == lt, rows[0][15] != lt,
               let end = (15..<30).first(where: { rows[0][$0] == lt }), end - 1 > 15 {
                fields.append(FieldLayout(name: "document_number", line: 0, range: 5..<14, cls: .alnum))
                fields.append(FieldLayout(name: "document_number", line: 0, range: 15..<(end - 1), cls: .alnum))
                fields.append(FieldLayout(name: "optional_data", line: 0, range: min(end + 1, 30)..<30, cls: .alnum))
                // Doc 9303-5 §4.2.4: positions 6–14 and 16 up to the digit; the `<` at 15 is excluded,
                // except under the Belgian/Portuguese deviation, which counts it (weights shift by one).
                let segments: [(line: Int, range: Range<Int>)] = deviations.contains(.longDocumentNumberCheckIncludesFiller)
                    ? [(0, 5..<(end - 1))] : [(0, 5..<14), (0, 15..<(end - 1))]
                checks.append(CheckLayout(name: "document_number", segments: segments,
                                          digit: (0, end - 1), fillerAllowedWhenEmpty: false))
            } else {
                fields.append(FieldLayout(name: "document_number", line: 0, range: 5..<14, cls: .alnum))
                fields.append(FieldLayout(name: "optional_data", line: 0, range: 15..<30, cls: .alnum))
                checks.append(CheckLayout(name: "document_number", segments: [(0, 5..<14)], digit: (0, 14), fillerAllowedWhenEmpty: false))
            }
            checks.append(CheckLayout(name: "birth_date", segments: [(1, 0..<6)], digit: (1, 6), fillerAllowedWhenEmpty: false))
            checks.append(CheckLayout(name: "expiry_date", segments: [(1, 8..<14)], digit: (1, 14), fillerAllowedWhenEmpty: false))
            let composite = checks.count
            checks.append(CheckLayout(name: "composite", segments: [(0, 5..<30), (1, 0..<7), (1, 8..<15), (1, 18..<29)],
                                      digit: (1, 29), fillerAllowedWhenEmpty: false))
            return Layout(fields: fields, checks: checks, compositeIndex: composite)

        case .frenchNationalID:
            let fields = [
                FieldLayout(name: "document_code", line: 0, range: 0..<2, cls: .alnum),
                FieldLayout(name: "issuing_state", line: 0, range: 2..<5, cls: .alpha),
                FieldLayout(name: "surname", line: 0, range: 5..<30, cls: .name),
                FieldLayout(name: "optional_data", line: 0, range: 30..<36, cls: .alnum),
                FieldLayout(name: "document_number", line: 1, range: 0..<12, cls: .alnum),
                FieldLayout(name: "given_names", line: 1, range: 13..<27, cls: .name),
                FieldLayout(name: "birth_date", line: 1, range: 27..<33, cls: .numeric),
                FieldLayout(name: "sex", line: 1, range: 34..<35, cls: .sex),
            ]
            let checks = [
                CheckLayout(name: "document_number", segments: [(1, 0..<12)], digit: (1, 12), fillerAllowedWhenEmpty: false),
                CheckLayout(name: "birth_date", segments: [(1, 27..<33)], digit: (1, 33), fillerAllowedWhenEmpty: false),
                CheckLayout(name: "composite", segments: [(0, 0..<36), (1, 0..<35)], digit: (1, 35), fillerAllowedWhenEmpty: false),
            ]
            return Layout(fields: fields, checks: checks, compositeIndex: 2)

        case .unknown:
            return Layout(fields: [], checks: [], compositeIndex: nil)
        }
    }

    /// The class of every position (check-digit positions included), row by row.
    func classMap(shape: (lines: Int, length: Int)) -> [[CharClass?]] {
        var map = [[CharClass?]](repeating: [CharClass?](repeating: nil, count: shape.length), count: shape.lines)
        for f in fields { for c in f.range { map[f.line][c] = f.cls } }
        for ch in checks { map[ch.digit.line][ch.digit.column] = ch.fillerAllowedWhenEmpty ? .checkDigitOrFiller : .checkDigit }
        return map
    }

    /// Whether `after` (a correction of `before`) puts a filler inside a document number: a `<` with a
    /// character after it in the same field, where the correction changed either of the two cells.
    /// ICAO 9303-3 §4.2 and the field tables of 9303-4/-5/-6: a document number is left-aligned and
    /// fillers only pad it on the right, so a correction never makes `G<36…` of `GC36…`. A filler
    /// read inside a number (never made by a correction) is left as read. A `K` after the filler
    /// does not count: K and `<` weigh the same modulo 10, so no check digit can turn a misread
    /// padding `K` back (`B066854EK` is `B066854<<`; the K gets its own warning). Names are not
    /// concerned: there `<` separates the name parts.
    func introducesInnerFiller(_ before: [[UInt8]], _ after: [[UInt8]]) -> Bool {
        let lt = UInt8(ascii: "<"), k = UInt8(ascii: "K")
        for f in fields where f.name == "document_number" && f.line < after.count && f.range.upperBound <= after[f.line].count
            && f.line < before.count && f.range.upperBound <= before[f.line].count {
            var filler = false, madeFiller = false
            for c in f.range {
                let b = after[f.line][c], changed = b != before[f.line][c]
                if b == lt {
                    filler = true
                    if changed { madeFiller = true }
                } else if b != k && (madeFiller || (filler && changed)) {
                    return true
                }
            }
        }
        return false
    }

    /// The field name of a position, for corrections and messages.
    func fieldName(_ line: Int, _ column: Int) -> String {
        if let f = fields.first(where: { $0.line == line && $0.range.contains(column) }) { return f.name }
        if let ch = checks.first(where: { $0.digit.line == line && $0.digit.column == column }) { return ch.name + "_check_digit" }
        return "filler"
    }
}
