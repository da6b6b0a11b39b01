import DocumentReader
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import MRZ

// The `idvd document read` views of a DocumentReader report: the seed shapes and the internal
// report as JSON, with the policy's verdict and the wording table's sentences (the reader gives
// neither).

/// Seed 002 `getIDVConfirmDocumentDetails` payload (spec seed-002 §6.1; ARCHITECTURE.md §5):
/// `{ "response_data": { document_info, document_pages, checks_performed, errors, warnings, overall_status } }`.
/// Dates are ISO 8601; images are standard Base64 JPEG.
public struct Seed002DocumentDetails: Codable, Sendable, Equatable {
    public struct DocumentInfo: Codable, Sendable, Equatable {
        public var surname: String
        public var given_name: String
        /// `given_name surname`, read by the selfie screen (seed 002 §6.2).
        public var name: String
        public var date_of_birth: String
        public var document_number: String
        public var expiry_date: String
        public var issuing_country: String
        public var nationality: String
        public var sex: String
        /// `PASSPORT`, `ID_CARD`, `VISA` or `UNKNOWN`.
        public var document_type: String
        public var portrait_image: String?
        public var signature_image: String?
    }
    public struct Page: Codable, Sendable, Equatable { public var page_index: Int; public var image: String }
    public struct Check: Codable, Sendable, Equatable { public var check_name: String; public var result: String }
    public struct ResponseData: Codable, Sendable, Equatable {
        public var document_info: DocumentInfo
        public var document_pages: [Page]
        public var checks_performed: [Check]
        public var errors: [String]
        public var warnings: [String]
        public var overall_status: String
    }
    public var response_data: ResponseData
}

/// Seed 003 `onIDVAdditionalDocumentScan` payload (spec seed-003 §4.5): `identity_data` with the
/// Regula-style labels the app reads, `document_info` with `document_images`, `document_status`.
/// Status words: `OK` / `WARNING` / `ERROR`; check status `OK` / `ERROR` / `NOT DONE`.
public struct Seed003DocumentScan: Codable, Sendable, Equatable {
    public struct DocumentImages: Codable, Sendable, Equatable {
        public var front_page: String?
        public var back_page: String?
        public var portrait_image: String?
        public var signature_image: String?
    }
    public struct DocumentInfo: Codable, Sendable, Equatable {
        public var document_number: String
        /// The MRZ carries no issue date: absent, as in the server's `onIDVAdditionalDocumentScan`.
        public var issue_date: String?
        public var expiry_date: String
        public var issuing_authority: String
        public var document_images: DocumentImages
    }
    public struct Check: Codable, Sendable, Equatable {
        public var check_name: String; public var check_status: String; public var check_category: String
    }
    public struct DocumentStatus: Codable, Sendable, Equatable {
        public var overall_document_status: String
        public var error_list: [String]
        public var warning_list: [String]
        public var checks_performed: [Check]
        public var is_nfc_document: Bool
        public var nfc_scan_status: String
        public var nfc_scan_status_reason: String
    }
    public var version: String
    public var identity_data: [String: String]
    public var document_info: DocumentInfo
    public var document_status: DocumentStatus
}

extension DocumentReport {
    /// The engine's evidence of this report (what ``DocumentReaderAdapter`` hands the flows).
    public var evidence: DocumentEvidence { DocumentReaderAdapter.evidence(of: self) }

    /// The policy's judgement of this report, as of `today` (ISO 8601, UTC; default: the reading's
    /// reference date): the server's one rule (`WorkflowPolicy.judge`), for the document step of a
    /// flow that matches a selfie against the portrait when `needsPortrait` (activation, KYC: no
    /// portrait → INVALID under `idv.doc.require_portrait`), else for the document-scan-only flow.
    public func judged(by policy: WorkflowPolicy = WorkflowPolicy(), today: String? = nil, needsPortrait: Bool = false) -> DocumentJudgement {
        policy.judge(evidence, today: today ?? WorkflowPolicy.utcDay(Int(referenceDate.timeIntervalSince1970)), needsPortrait: needsPortrait)
    }

    static func documentType(_ f: MRZFields) -> String {
        switch f.documentType {
        case "passport": return "PASSPORT"
        case "identity_card": return "ID_CARD"
        case "visa": return "VISA"
        default: return "UNKNOWN"
        }
    }

    /// The seed 002 view of this report, judged as `judged`.
    public func seed002(_ judged: DocumentJudgement) -> Seed002DocumentDetails {
        let f = fields
        let info = Seed002DocumentDetails.DocumentInfo(
            surname: f.surname, given_name: f.givenNames,
            name: [f.givenNames, f.surname].filter { !$0.isEmpty }.joined(separator: " "),
            date_of_birth: f.birthDate ?? "", document_number: f.documentNumber, expiry_date: f.expiryDate ?? "",
            issuing_country: f.issuingState, nationality: f.nationality, sex: f.sex, document_type: Self.documentType(f),
            portrait_image: portraitJPEG?.base64EncodedString(), signature_image: nil)
        return Seed002DocumentDetails(response_data: .init(
            document_info: info,
            document_pages: pagesJPEG.enumerated().map { .init(page_index: $0.offset, image: $0.element.base64EncodedString()) },
            checks_performed: judged.checks.map { .init(check_name: DocumentWording.name($0.id), result: $0.result.rawValue) },
            errors: judged.errors.map(DocumentWording.sentence), warnings: judged.warnings.map(DocumentWording.sentence),
            overall_status: judged.status.rawValue))
    }

    /// The seed 003 view of this report, judged as `judged`.
    public func seed003(_ judged: DocumentJudgement) -> Seed003DocumentScan {
        let f = fields
        var identity: [String: String] = [:]
        if !f.surname.isEmpty || !f.givenNames.isEmpty {
            identity["Surname and given names"] = [f.surname, f.givenNames].filter { !$0.isEmpty }.joined(separator: " ")
            identity["Surname"] = f.surname
            identity["Given name"] = f.givenNames
        }
        // The same rows as the server's `onIDVAdditionalDocumentScan` (IDVReports.additionalScan).
        typealias L = AdditionalDocumentScanDetails.Label
        identity[L.documentNumber] = f.documentNumber
        identity[L.issuingStateCode] = f.issuingState
        if let d = f.birthDate { identity[L.dateOfBirth] = d }
        if !f.sex.isEmpty { identity[L.sex] = f.sex }
        if !f.nationality.isEmpty { identity[L.nationality] = f.nationality }
        if let d = f.expiryDate { identity[L.dateOfExpiry] = d }
        let status: String = judged.status == .valid ? "OK" : (judged.status == .warning ? "WARNING" : "ERROR")
        func word(_ r: CheckResult) -> String { r == .passed ? "OK" : (r == .failed ? "ERROR" : "NOT DONE") }
        return Seed003DocumentScan(
            version: "1", identity_data: identity,
            document_info: .init(document_number: f.documentNumber, issue_date: nil, expiry_date: f.expiryDate ?? "",
                                 issuing_authority: f.issuingState,
                                 document_images: .init(front_page: pagesJPEG.first?.base64EncodedString(),
                                                        back_page: pagesJPEG.count > 1 ? pagesJPEG[1].base64EncodedString() : nil,
                                                        portrait_image: portraitJPEG?.base64EncodedString(), signature_image: nil)),
            document_status: .init(overall_document_status: status, error_list: judged.errors.map(DocumentWording.sentence),
                                   warning_list: judged.warnings.map(DocumentWording.sentence),
                                   checks_performed: judged.checks.map { .init(check_name: DocumentWording.name($0.id), check_status: word($0.result),
                                                                              check_category: DocumentWording.category($0.id)) },
                                   is_nfc_document: false, nfc_scan_status: DocumentScanStatus.notDone.rawValue,
                                   nfc_scan_status_reason: ChipVerificationReason.noChipData.sentence))
    }
}

/// The internal report as JSON (the `idvd document read` output), judged as `judged`. Images
/// appear as byte counts unless `includeImages` is set, then as Base64.
public struct DocumentReportJSON: Encodable {
    let report: DocumentReport
    let judged: DocumentJudgement
    let includeImages: Bool
    public init(_ report: DocumentReport, judged: DocumentJudgement, includeImages: Bool = false) {
        self.report = report
        self.judged = judged
        self.includeImages = includeImages
    }

    /// One `checks_performed` entry: the wording table's name, category and sentence.
    struct CheckOut: Encodable {
        let name: String; let category: String; let result: CheckResult; let detail: String
    }

    struct MRZOut: Encodable {
        let found: Bool; let page_index: Int?; let lines: [String]; let lines_corrected: [String]; let valid: Bool
        let format: String?; let mean_confidence: Double; let low_confidence_cells: Int; let angle_degrees: Double
        let cap_height_pixels: Double; let check_digits: [MRZCheckDigit]; let corrections: [MRZCorrection]
        let errors: [String]; let warnings: [String]; let doubtful_twins: [DocumentReport.DoubtfulCell]
    }
    struct Images: Encodable { let portrait_jpeg_bytes: Int?; let page_jpeg_bytes: [Int]; let portrait_image: String?; let document_pages: [String]? }
    enum Keys: String, CodingKey { case mrz, fields, checks_performed, errors, warnings, overall_status, images }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        let m = report.mrz
        try c.encode(MRZOut(found: m.found, page_index: m.pageIndex, lines: m.linesRead, lines_corrected: m.result?.lines ?? [],
                            valid: m.result?.valid ?? false, format: m.result?.format.rawValue, mean_confidence: m.meanConfidence,
                            low_confidence_cells: m.lowConfidenceCells, angle_degrees: m.angleDegrees, cap_height_pixels: (m.capHeightPixels * 100).rounded() / 100,   // pixels to 0.01
                            check_digits: m.result?.checkDigits ?? [], corrections: m.result?.corrections ?? [],
                            errors: m.result?.errors ?? [], warnings: m.result?.warnings ?? [],
                            doubtful_twins: m.doubtfulTwins), forKey: .mrz)
        try c.encode(report.fields, forKey: .fields)
        try c.encode(judged.checks.map { CheckOut(name: DocumentWording.name($0.id), category: DocumentWording.category($0.id),
                                                  result: $0.result, detail: DocumentWording.detail($0)) }, forKey: .checks_performed)
        try c.encode(judged.errors.map(DocumentWording.sentence), forKey: .errors)
        try c.encode(judged.warnings.map(DocumentWording.sentence), forKey: .warnings)
        try c.encode(judged.status, forKey: .overall_status)
        try c.encode(Images(portrait_jpeg_bytes: report.portraitJPEG?.count, page_jpeg_bytes: report.pagesJPEG.map(\.count),
                            portrait_image: includeImages ? report.portraitJPEG?.base64EncodedString() : nil,
                            document_pages: includeImages ? report.pagesJPEG.map { $0.base64EncodedString() } : nil), forKey: .images)
    }
}
