import Foundation

// MARK: - getIDVConfirmDocumentDetails (seed 002 §6.1)

/// The `documentDetails` JSON string of `getIDVConfirmDocumentDetails(_:challenge:)`: what the
/// server read from the scanned document, shown for the user to confirm or reject
/// (seed 002 §6.1, example L1875–L1900; ARCHITECTURE §5). Used in the activation (mode 8) and KYC
/// (mode 9) flows.
///
/// Shape: `{ "response_data": { "document_info": {…}, "document_pages": […], "checks_performed": […],
/// "errors": […], "warnings": […], "overall_status": "VALID" } }`.
public struct DocumentDetails: IDVPayload {
    /// `response_data` (required; seed 002 L1983–L1987 renders nothing without it).
    public var responseData: DocumentDetailsResponse

    enum CodingKeys: String, CodingKey { case responseData = "response_data" }

    public init(responseData: DocumentDetailsResponse) {
        self.responseData = responseData
    }
}

/// `response_data` of ``DocumentDetails`` (seed 002 §6.1).
public struct DocumentDetailsResponse: Codable, Equatable, Sendable {
    /// `document_info`: the fields read from the document.
    public var documentInfo: DocumentInfo
    /// `document_pages`: the captured page images; index 0 is the front, 1 the back.
    public var documentPages: [DocumentPage]
    /// `checks_performed`: each validity check and its result.
    public var checksPerformed: [DocumentCheck]
    /// `errors`: why the document is invalid, one human-readable sentence each (empty when valid).
    public var errors: [String]
    /// `warnings`: non-blocking findings, one sentence each (e.g. "Minor wear detected on document surface").
    public var warnings: [String]
    /// `overall_status`: `VALID`, `INVALID`, or another string shown as a warning.
    public var overallStatus: DocumentOverallStatus

    enum CodingKeys: String, CodingKey {
        case documentInfo = "document_info"
        case documentPages = "document_pages"
        case checksPerformed = "checks_performed"
        case errors, warnings
        case overallStatus = "overall_status"
    }

    public init(documentInfo: DocumentInfo, documentPages: [DocumentPage], checksPerformed: [DocumentCheck],
                errors: [String], warnings: [String], overallStatus: DocumentOverallStatus) {
        self.documentInfo = documentInfo
        self.documentPages = documentPages
        self.checksPerformed = checksPerformed
        self.errors = errors
        self.warnings = warnings
        self.overallStatus = overallStatus
    }
}

/// `response_data.document_info` of ``DocumentDetails`` (seed 002 §6.1). Text fields are as read from
/// the document (ICAO 9303 MRZ or visual zone); dates are ISO 8601 `YYYY-MM-DD`; countries are
/// ICAO 9303-3 §5 codes as written in the MRZ without filler (`USA`; Germany is `D`); images are standard
/// base64 (no `data:` prefix, no line breaks) of JPEG or PNG bytes.
public struct DocumentInfo: Codable, Equatable, Sendable {
    /// `surname`: primary identifier (ICAO 9303-3 §4.6), e.g. `DOE`. Required.
    public var surname: String
    /// `given_name`: secondary identifier, space-separated given names, e.g. `JOHN`; may be empty. Required.
    public var givenName: String
    /// `date_of_birth`: `YYYY-MM-DD`; absent when unreadable or unknown on the document.
    public var dateOfBirth: String?
    /// `document_number`, e.g. `AB123456`. Required.
    public var documentNumber: String
    /// `expiry_date`: `YYYY-MM-DD`; absent when the document has none or it is unreadable.
    public var expiryDate: String?
    /// `issuing_country`: issuing state or organisation, alpha-3, e.g. `USA`. Required.
    public var issuingCountry: String
    /// `document_type`: `PASSPORT`, `ID_CARD`, `VISA` (``DocumentKind``, from the ICAO 9303 document
    /// code), or any other string kept verbatim. Required.
    public var documentType: DocumentKind
    /// `portrait_image`: base64 image of the holder's portrait cropped from the document.
    public var portraitImage: String?
    /// `signature_image`: base64 image of the holder's signature cropped from the document.
    public var signatureImage: String?
    /// `nationality`: alpha-3 (ours; one of the seed's "… more fields").
    public var nationality: String?
    /// `sex`: `M`, `F` or `X` as in ICAO 9303-3 (ours).
    public var sex: String?
    /// `personal_number`: the MRZ optional-data / personal number field, when present (ours).
    public var personalNumber: String?

    enum CodingKeys: String, CodingKey {
        case surname
        case givenName = "given_name"
        case dateOfBirth = "date_of_birth"
        case documentNumber = "document_number"
        case expiryDate = "expiry_date"
        case issuingCountry = "issuing_country"
        case documentType = "document_type"
        case portraitImage = "portrait_image"
        case signatureImage = "signature_image"
        case nationality, sex
        case personalNumber = "personal_number"
    }

    public init(surname: String, givenName: String, dateOfBirth: String? = nil, documentNumber: String,
                expiryDate: String? = nil, issuingCountry: String, documentType: DocumentKind,
                portraitImage: String? = nil, signatureImage: String? = nil, nationality: String? = nil,
                sex: String? = nil, personalNumber: String? = nil) {
        self.surname = surname
        self.givenName = givenName
        self.dateOfBirth = dateOfBirth
        self.documentNumber = documentNumber
        self.expiryDate = expiryDate
        self.issuingCountry = issuingCountry
        self.documentType = documentType
        self.portraitImage = portraitImage
        self.signatureImage = signatureImage
        self.nationality = nationality
        self.sex = sex
        self.personalNumber = personalNumber
    }

    /// The name label of the confirmation screen: `"<given_name> <surname>"`, trimmed (seed 002 L1998–L2000).
    public var displayName: String {
        "\(givenName) \(surname)".trimmingCharacters(in: .whitespaces)
    }
}

/// One `document_pages` element (seed 002 §6.1): `{ "page_index": 0, "image": "<base64>" }`.
public struct DocumentPage: Codable, Equatable, Sendable {
    /// `page_index`: 0 = front (data page), 1 = back; others are extra pages.
    public var pageIndex: Int
    /// `image`: base64 JPEG or PNG of the whole page.
    public var image: String

    enum CodingKeys: String, CodingKey {
        case pageIndex = "page_index"
        case image
    }

    public init(pageIndex: Int, image: String) {
        self.pageIndex = pageIndex
        self.image = image
    }
}

/// One `checks_performed` element (seed 002 §6.1): `{ "check_name": "Document Authenticity",
/// "result": "PASSED" }`, plus our optional `category`.
public struct DocumentCheck: Codable, Equatable, Sendable {
    /// `check_name`: a human-readable name, e.g. `MRZ Check Digits`, `Document Expiry`.
    public var checkName: String
    /// `result`: `PASSED`, `FAILED`, `WARNING`, `NOT_PERFORMED`, or another string.
    public var result: DocumentCheckResult
    /// `category` (ours, optional): the group the check belongs to, e.g. `MRZ`, `EXPIRY`, `IMAGE_QUALITY`, `CHIP`.
    public var category: String?

    enum CodingKeys: String, CodingKey {
        case checkName = "check_name"
        case result, category
    }

    public init(checkName: String, result: DocumentCheckResult, category: String? = nil) {
        self.checkName = checkName
        self.result = result
        self.category = category
    }
}

// MARK: - onIDVAdditionalDocumentScan (seed 003 §4)

/// The `documentDetails` JSON string of `onIDVAdditionalDocumentScan(_:documentDetails:status:challenge:error:)`
/// (seed 003 §4; workflow 7, challenge mode 10; ARCHITECTURE §5). The seed has no literal example;
/// this is the shape its prose (L108–L112) and accessor code (L474–L498, L1073–L1289) read.
///
/// Shape: `{ "version": "1.0", "identity_data": {"<label>": <value>, …}, "document_info": {…,
/// "document_images": {…}}, "document_status": {…} }`.
public struct AdditionalDocumentScanDetails: IDVPayload {
    /// `version`: response schema version (seed 003 §4.1, L112), e.g. `"1.0"`; optional.
    public var version: String?
    /// `identity_data`: open label → value map with Regula-style labels (seed 003 §4.2), e.g.
    /// `"Surname and given names"`, `"Given name"`, `"Surname"`, `"Date of birth"`, `"Sex"`,
    /// `"Nationality"`. Values are normally strings; any JSON value is kept as it is.
    public var identityData: [String: JSONValue]
    /// `document_info`: document fields and images.
    public var documentInfo: ScannedDocumentInfo
    /// `document_status`: validation outcome.
    public var documentStatus: DocumentScanStatusReport

    enum CodingKeys: String, CodingKey {
        case version
        case identityData = "identity_data"
        case documentInfo = "document_info"
        case documentStatus = "document_status"
    }

    public init(version: String? = nil, identityData: [String: JSONValue], documentInfo: ScannedDocumentInfo,
                documentStatus: DocumentScanStatusReport) {
        self.version = version
        self.identityData = identityData
        self.documentInfo = documentInfo
        self.documentStatus = documentStatus
    }

    /// The `identity_data` labels the seed's code reads (L476–L479, L1081).
    public enum Label {
        /// Full name, surname first.
        public static let surnameAndGivenNames = "Surname and given names"
        /// Given names.
        public static let givenName = "Given name"
        /// Surname.
        public static let surname = "Surname"
        /// Date of birth, `YYYY-MM-DD`.
        public static let dateOfBirth = "Date of birth"
        /// `M`, `F` or `X`.
        public static let sex = "Sex"
        /// Nationality, alpha-3.
        public static let nationality = "Nationality"
        /// Document number (ours).
        public static let documentNumber = "Document number"
        /// Date of expiry, `YYYY-MM-DD` (ours).
        public static let dateOfExpiry = "Date of expiry"
        /// Issuing state, alpha-3 (ours).
        public static let issuingStateCode = "Issuing state code"
    }

    /// The displayed name (seed 003 L1080–L1081): `identity_data["Surname and given names"]`, else
    /// `"<Given name> <Surname>"` trimmed; nil when that is empty.
    public var displayName: String? {
        if let full = identityData[Label.surnameAndGivenNames]?.stringValue, !full.isEmpty { return full }
        let given = identityData[Label.givenName]?.stringValue ?? ""
        let surname = identityData[Label.surname]?.stringValue ?? ""
        let joined = "\(given) \(surname)".trimmingCharacters(in: .whitespaces)
        return joined.isEmpty ? nil : joined
    }

    /// True when the transport outcome and the document outcome are both clean: callers still check
    /// `RDNARequestStatus` separately (seed 003 §7 rule 7: a document can be `ERROR` with status 100).
    public var isDocumentOK: Bool { documentStatus.overallDocumentStatus == .ok }
}

/// `document_info` of ``AdditionalDocumentScanDetails`` (seed 003 §4.3). Dates are `YYYY-MM-DD`.
public struct ScannedDocumentInfo: Codable, Equatable, Sendable {
    /// `document_number`.
    public var documentNumber: String?
    /// `issue_date`, `YYYY-MM-DD`, when the document shows one.
    public var issueDate: String?
    /// `expiry_date`, `YYYY-MM-DD`.
    public var expiryDate: String?
    /// `issuing_authority`: issuing state or authority (alpha-3 code from the MRZ, or the printed authority).
    public var issuingAuthority: String?
    /// `document_images`: the page and crop images (required object; its members are optional).
    public var documentImages: DocumentImages

    enum CodingKeys: String, CodingKey {
        case documentNumber = "document_number"
        case issueDate = "issue_date"
        case expiryDate = "expiry_date"
        case issuingAuthority = "issuing_authority"
        case documentImages = "document_images"
    }

    public init(documentNumber: String? = nil, issueDate: String? = nil, expiryDate: String? = nil,
                issuingAuthority: String? = nil, documentImages: DocumentImages) {
        self.documentNumber = documentNumber
        self.issueDate = issueDate
        self.expiryDate = expiryDate
        self.issuingAuthority = issuingAuthority
        self.documentImages = documentImages
    }
}

/// `document_info.document_images` (seed 003 §4.3): standard base64 JPEG/PNG, each optional.
public struct DocumentImages: Codable, Equatable, Sendable {
    /// `front_page`: the front (data) page.
    public var frontPage: String?
    /// `back_page`: the back page.
    public var backPage: String?
    /// `portrait_image`: the holder's portrait cropped from the document.
    public var portraitImage: String?
    /// `signature_image`: the holder's signature cropped from the document.
    public var signatureImage: String?

    enum CodingKeys: String, CodingKey {
        case frontPage = "front_page"
        case backPage = "back_page"
        case portraitImage = "portrait_image"
        case signatureImage = "signature_image"
    }

    public init(frontPage: String? = nil, backPage: String? = nil, portraitImage: String? = nil,
                signatureImage: String? = nil) {
        self.frontPage = frontPage
        self.backPage = backPage
        self.portraitImage = portraitImage
        self.signatureImage = signatureImage
    }
}

/// `document_status` of ``AdditionalDocumentScanDetails`` (seed 003 §4.4).
public struct DocumentScanStatusReport: Codable, Equatable, Sendable {
    /// `overall_document_status`: `OK`, `WARNING`, `ERROR`, `NOT DONE`, or another string.
    public var overallDocumentStatus: DocumentScanStatus
    /// `error_list`: one sentence per error (may be empty).
    public var errorList: [String]
    /// `warning_list`: one sentence per warning (may be empty).
    public var warningList: [String]
    /// `checks_performed`: each check with its status and category.
    public var checksPerformed: [DocumentScanCheck]
    /// `is_nfc_document`: whether the document has an ICAO 9303-10 contactless chip.
    public var isNFCDocument: Bool?
    /// `nfc_scan_status`: outcome of reading the chip, e.g. `NOT DONE`.
    public var nfcScanStatus: String?
    /// `nfc_scan_status_reason`: why the chip was (not) read, as a sentence for people.
    public var nfcScanStatusReason: String?
    /// `nfc_scan_status_reason_code` (ours): the same reason, machine-readable (``ChipVerificationReason`` raw value).
    public var nfcScanStatusReasonCode: String?

    enum CodingKeys: String, CodingKey {
        case overallDocumentStatus = "overall_document_status"
        case errorList = "error_list"
        case warningList = "warning_list"
        case checksPerformed = "checks_performed"
        case isNFCDocument = "is_nfc_document"
        case nfcScanStatus = "nfc_scan_status"
        case nfcScanStatusReason = "nfc_scan_status_reason"
        case nfcScanStatusReasonCode = "nfc_scan_status_reason_code"
    }

    public init(overallDocumentStatus: DocumentScanStatus, errorList: [String], warningList: [String],
                checksPerformed: [DocumentScanCheck], isNFCDocument: Bool? = nil, nfcScanStatus: String? = nil,
                nfcScanStatusReason: String? = nil, nfcScanStatusReasonCode: String? = nil) {
        self.nfcScanStatusReasonCode = nfcScanStatusReasonCode
        self.overallDocumentStatus = overallDocumentStatus
        self.errorList = errorList
        self.warningList = warningList
        self.checksPerformed = checksPerformed
        self.isNFCDocument = isNFCDocument
        self.nfcScanStatus = nfcScanStatus
        self.nfcScanStatusReason = nfcScanStatusReason
    }
}

/// One `document_status.checks_performed` element (seed 003 §4.4, L1364–L1366):
/// `{ "check_name": …, "check_status": "OK", "check_category": … }`.
public struct DocumentScanCheck: Codable, Equatable, Sendable {
    /// `check_name`, e.g. `MRZ Check Digits`.
    public var checkName: String
    /// `check_status`: `OK`, `ERROR`, `WARNING`, `NOT DONE`, or another string.
    public var checkStatus: DocumentScanStatus
    /// `check_category`, e.g. `MRZ`; optional (the seed shows "" when absent).
    public var checkCategory: String?

    enum CodingKeys: String, CodingKey {
        case checkName = "check_name"
        case checkStatus = "check_status"
        case checkCategory = "check_category"
    }

    public init(checkName: String, checkStatus: DocumentScanStatus, checkCategory: String? = nil) {
        self.checkName = checkName
        self.checkStatus = checkStatus
        self.checkCategory = checkCategory
    }
}
