/// The machine-readable-zone formats of ICAO Doc 9303 (8th ed.) and named real-world deviations.
public enum MRZFormat: String, Codable, Sendable, CaseIterable {
    /// Doc 9303-5: ID-1 card, 3 lines × 30 characters.
    case td1 = "TD1"
    /// Doc 9303-6: ID-2 card, 2 lines × 36 characters.
    case td2 = "TD2"
    /// Doc 9303-4: passport booklet (ID-3), 2 lines × 44 characters.
    case td3 = "TD3"
    /// Doc 9303-7: full-page visa, 2 lines × 44 characters (document code `V`).
    case mrvA = "MRV-A"
    /// Doc 9303-7: smaller visa, 2 lines × 36 characters (document code `V`).
    case mrvB = "MRV-B"
    /// French national identity card issued 1988–2021: 2 lines × 36 characters, not ICAO-conformant
    /// (`IDFRA`, surname on line 1, 12-character number, given names and birth date on line 2).
    case frenchNationalID = "FRA-CNI"
    /// Line count / lengths match no format.
    case unknown = "UNKNOWN"

    /// Lines and characters per line, nil for `.unknown`.
    public var shape: (lines: Int, length: Int)? {
        switch self {
        case .td1: return (3, 30)
        case .td2, .mrvB, .frenchNationalID: return (2, 36)
        case .td3, .mrvA: return (2, 44)
        case .unknown: return nil
        }
    }
}

/// A named national deviation from ICAO Doc 9303 that the parser accepts (with a warning) instead of
/// reporting the MRZ invalid. The French national ID card, a whole format of its own, is
/// `MRZFormat.frenchNationalID` instead.
public enum MRZDeviation: String, Codable, Sendable, CaseIterable {
    /// TD1 card of Belgium or Portugal (some generations) with a long document number (Doc 9303-5
    /// §4.2.2 note j) whose check digit also counts the `<` at position 15, which Doc 9303-5 §4.2.4
    /// excludes: the characters after it are weighed one step later. Accepted only for issuing state
    /// `BEL` or `PRT`, only when the ICAO rule fails and this one holds as read.
    case longDocumentNumberCheckIncludesFiller = "long_document_number_check_includes_filler"
}

/// The data elements of an MRZ, keyed by their ICAO 9303 names (snake_case in JSON).
/// Text values have fillers removed (name components joined by single spaces); `raw` holds every
/// field exactly as it stands in the (corrected) MRZ.
public struct MRZFields: Codable, Sendable, Equatable {
    /// Document code, 1–2 characters without filler (`P`, `PA`, `I`, `ID`, `AC`, `V`, `C1`…).
    public var documentCode: String = ""
    /// Kind of document from the code's first character: `passport`, `visa`, `identity_card`
    /// (`I`/`A`/`C` official travel documents), or `unknown`.
    public var documentType: String = "unknown"
    /// Issuing state or organisation code, fillers removed (`UTO`, `D`).
    public var issuingState: String = ""
    /// Whether `issuing_state` is an ISO 3166-1 alpha-3 code or an ICAO Doc 9303-3 §5 code.
    public var issuingStateKnown: Bool = false
    /// Primary identifier (surname), components separated by a space.
    public var surname: String = ""
    /// Secondary identifier (given names), components separated by a space.
    public var givenNames: String = ""
    /// True when the name fills the whole name field, i.e. it may be truncated (Doc 9303-3 §4.6).
    public var nameTruncated: Bool = false
    /// Document number without filler; for long numbers (TD1/TD2) including the overflow part.
    public var documentNumber: String = ""
    /// True when the document number overflowed into the optional data (Doc 9303-5 §4.2.2 note j).
    public var longDocumentNumber: Bool = false
    /// Nationality code, fillers removed.
    public var nationality: String = ""
    /// Whether `nationality` is an ISO 3166-1 alpha-3 code or an ICAO code.
    public var nationalityKnown: Bool = false
    /// Date of birth, ISO 8601 (`1974-08-12`; `1974-08` or `1974` when day/month are unknown `<<`),
    /// nil when the year is unknown or the text is not a date.
    public var birthDate: String?
    /// `M`, `F`, or `X` (unspecified: `<` or `X` in the MRZ).
    public var sex: String = ""
    /// Date of expiry, ISO 8601, nil when absent (FRA-CNI) or not a date.
    public var expiryDate: String?
    /// Whether the document had expired on the reference date (nil when the expiry is unknown).
    public var expired: Bool?
    /// Optional data / personal number (TD3 28–41, TD2 and MRV 28–end, TD1 line 1 after any long
    /// document number; FRA-CNI: the administrative code of line 1), outer fillers trimmed.
    public var optionalData: String = ""
    /// TD3 only: the personal number (Doc 9303-4: positions 29–42 of line 2, protected by its own
    /// check digit) — the same text as `optional_data`.
    public var personalNumber: String?
    /// TD1 only: optional data of line 2 (positions 19–29).
    public var optionalData2: String?
    /// Every field exactly as in the MRZ, including fillers, keyed like the fields above.
    public var raw: [String: String] = [:]

    public init() {}

    enum CodingKeys: String, CodingKey {
        case documentCode = "document_code", documentType = "document_type"
        case issuingState = "issuing_state", issuingStateKnown = "issuing_state_known"
        case surname, givenNames = "given_names", nameTruncated = "name_truncated"
        case documentNumber = "document_number", longDocumentNumber = "long_document_number"
        case nationality, nationalityKnown = "nationality_known"
        case birthDate = "birth_date", sex, expiryDate = "expiry_date", expired
        case optionalData = "optional_data", personalNumber = "personal_number", optionalData2 = "optional_data_2", raw
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(documentCode, forKey: .documentCode)
        try c.encode(documentType, forKey: .documentType)
        try c.encode(issuingState, forKey: .issuingState)
        try c.encode(issuingStateKnown, forKey: .issuingStateKnown)
        try c.encode(surname, forKey: .surname)
        try c.encode(givenNames, forKey: .givenNames)
        try c.encode(nameTruncated, forKey: .nameTruncated)
        try c.encode(documentNumber, forKey: .documentNumber)
        try c.encode(longDocumentNumber, forKey: .longDocumentNumber)
        try c.encode(nationality, forKey: .nationality)
        try c.encode(nationalityKnown, forKey: .nationalityKnown)
        try c.encode(birthDate, forKey: .birthDate)          // null when unknown, never omitted
        try c.encode(sex, forKey: .sex)
        try c.encode(expiryDate, forKey: .expiryDate)
        try c.encode(expired, forKey: .expired)
        try c.encode(optionalData, forKey: .optionalData)
        try c.encodeIfPresent(personalNumber, forKey: .personalNumber)
        try c.encodeIfPresent(optionalData2, forKey: .optionalData2)
        try c.encode(raw, forKey: .raw)
    }
}

/// One check digit of the MRZ (Doc 9303-3 §4.9) and whether it holds.
public struct MRZCheckDigit: Codable, Sendable, Equatable {
    /// `document_number`, `birth_date`, `expiry_date`, `optional_data` (TD3 personal number) or `composite`.
    public var name: String
    /// The digit computed from the covered characters, nil when they hold a character outside `0-9A-Z<`.
    public var expected: String?
    /// The character printed in the check-digit position.
    public var found: String
    public var valid: Bool

    public init(name: String, expected: String?, found: String, valid: Bool) {
        self.name = name; self.expected = expected; self.found = found; self.valid = valid
    }
}

/// One character the corrector changed. `line` and `column` are 1-based, as ICAO numbers positions.
public struct MRZCorrection: Codable, Sendable, Equatable {
    public var line: Int
    public var column: Int
    public var from: String
    public var to: String
    /// The field the character belongs to (`document_number`, `birth_date`, …).
    public var field: String
    /// `ocr_alternative` (a runner-up the OCR offered), `confusion_table` (O→0, K→<, …),
    /// `filler_normalisation` (`«` → `<`, a character that can only be a filler) or `code_list` (an
    /// issuing-state / nationality code outside ICAO 9303-3 §5 replaced by the listed code the
    /// recogniser's posteriors favour by 100:1, `MRZParser.parse(_:posteriors:)`) or `filler_padding`
    /// (a run of `K` closing an optional-data field read as the `<` padding it more likely is).
    public var source: String

    public init(line: Int, column: Int, from: String, to: String, field: String, source: String) {
        self.line = line; self.column = column; self.from = from; self.to = to; self.field = field; self.source = source
    }
}

/// The outcome of parsing one MRZ. `valid` is true only when the format is known, every character is
/// in the MRZ alphabet, every check digit holds (after any confirmed correction) and every field is
/// well-formed (dates are dates, sex is M/F/<, names hold letters only).
/// Unknown country codes and unverifiable characters are `warnings`, not errors.
public struct MRZResult: Codable, Sendable, Equatable {
    public var valid: Bool
    public var format: MRZFormat
    /// The MRZ lines as corrected (the input lines when nothing was corrected).
    public var lines: [String]
    public var fields: MRZFields
    public var checkDigits: [MRZCheckDigit]
    public var corrections: [MRZCorrection]
    /// Human-readable reasons the MRZ is not valid (empty when `valid`).
    public var errors: [String]
    /// Human-readable remarks that do not make the MRZ invalid.
    public var warnings: [String]
    /// The named national deviations from Doc 9303 this MRZ was read under (each also has a warning).
    public var deviations: [MRZDeviation]

    public init(valid: Bool, format: MRZFormat, lines: [String], fields: MRZFields, checkDigits: [MRZCheckDigit],
                corrections: [MRZCorrection], errors: [String], warnings: [String], deviations: [MRZDeviation] = []) {
        self.valid = valid; self.format = format; self.lines = lines; self.fields = fields
        self.checkDigits = checkDigits; self.corrections = corrections; self.errors = errors; self.warnings = warnings
        self.deviations = deviations
    }

    enum CodingKeys: String, CodingKey {
        case valid, format, lines, fields, checkDigits = "check_digits", corrections, errors, warnings, deviations
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(valid: try c.decode(Bool.self, forKey: .valid), format: try c.decode(MRZFormat.self, forKey: .format),
                  lines: try c.decode([String].self, forKey: .lines), fields: try c.decode(MRZFields.self, forKey: .fields),
                  checkDigits: try c.decode([MRZCheckDigit].self, forKey: .checkDigits),
                  corrections: try c.decode([MRZCorrection].self, forKey: .corrections),
                  errors: try c.decode([String].self, forKey: .errors), warnings: try c.decode([String].self, forKey: .warnings),
                  deviations: try c.decodeIfPresent([MRZDeviation].self, forKey: .deviations) ?? [])
    }

    /// The check digit named `name`, if the format has one.
    public func checkDigit(_ name: String) -> MRZCheckDigit? { checkDigits.first { $0.name == name } }
}
