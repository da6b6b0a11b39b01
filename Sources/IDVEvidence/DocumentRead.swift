import Foundation

/// The identity fields read from a document (ICAO 9303 MRZ field names). Dates are ISO 8601
/// `YYYY-MM-DD` (century resolved by the reader).
public struct DocumentFields: Sendable, Equatable {
    /// The MRZ document code (ICAO 9303 Part 3 §4.2.2), e.g. `P`, `I`, `ID`, `V`; the wire's
    /// `document_type` is its ``DocumentKind``.
    public var documentType: String
    /// `TD1`, `TD2`, `TD3`, `MRVA`, `MRVB`.
    public var format: String
    public var issuingState: String
    public var surname: String
    public var givenNames: String
    public var documentNumber: String
    public var nationality: String?
    public var dateOfBirth: String?
    public var sex: String?
    public var dateOfExpiry: String?
    public var personalNumber: String?
    public init(documentType: String, format: String, issuingState: String, surname: String, givenNames: String, documentNumber: String,
                nationality: String? = nil, dateOfBirth: String? = nil, sex: String? = nil, dateOfExpiry: String? = nil, personalNumber: String? = nil) {
        self.documentType = documentType
        self.format = format
        self.issuingState = issuingState
        self.surname = surname
        self.givenNames = givenNames
        self.documentNumber = documentNumber
        self.nationality = nationality
        self.dateOfBirth = dateOfBirth
        self.sex = sex
        self.dateOfExpiry = dateOfExpiry
        self.personalNumber = personalNumber
    }
}

/// What a document reader returns for the uploaded pages: the fields read and the evidence —
/// checks with what they measured, findings — from which the policy judges and one internal report
/// builds both seed shapes (seed 002 `DocumentDetails`, seed 003 `AdditionalDocumentScanDetails`).
public struct DocumentEvidence: Sendable, Equatable {
    public var fields: DocumentFields
    /// Every check the reader performed (IDVEvidence ``CheckOutcome``).
    public var checks: [CheckOutcome]
    /// What the reader found that a person should hear about, in the order found.
    public var findings: [DocumentFinding]
    /// True when the MRZ parser accepted the MRZ: a known format, every check digit holding, every
    /// field well-formed (ICAO 9303-3 §4).
    public var mrzValid: Bool
    /// True when every MRZ check digit (and the composite) verified (ICAO 9303-3 §4.9).
    public var mrzCheckDigitsValid: Bool
    /// The portrait cropped from the data page, JPEG; nil when none was found.
    public var portraitJPEG: Data?
    /// The page images as read (JPEG or PNG), index = page index.
    public var pageImages: [Data]
    /// The MRZ lines as read and corrected from the page (empty when none), for the DG1 cross-check.
    public var mrzLines: [String]
    /// What the chip reader found on the chip files sent with the pages; nil when none were sent.
    public var chip: ChipEvidence?
    /// The portrait printed on the page compared with the chip's DG2 face (``PortraitComparing``):
    /// nil when there was no chip portrait, no printed portrait, no comparer, or no face in one of them.
    public var chipPortraitComparison: FaceMatchEvidence?
    public init(fields: DocumentFields, checks: [CheckOutcome], findings: [DocumentFinding] = [], mrzValid: Bool,
                mrzCheckDigitsValid: Bool, portraitJPEG: Data?, pageImages: [Data], mrzLines: [String] = [], chip: ChipEvidence? = nil) {
        self.mrzLines = mrzLines
        self.chip = chip
        self.fields = fields
        self.checks = checks
        self.findings = findings
        self.mrzValid = mrzValid
        self.mrzCheckDigitsValid = mrzCheckDigitsValid
        self.portraitJPEG = portraitJPEG
        self.pageImages = pageImages
    }

    /// The outcome of check `id`, if the reader performed it.
    public func check(_ id: DocumentCheckID) -> CheckOutcome? { checks.first { $0.id == id } }
}
