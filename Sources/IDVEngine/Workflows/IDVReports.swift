import Foundation
import IDVCore

// Builders of the seeds' payload shapes from the internal reports (ARCHITECTURE.md §5: both
// document shapes are views of one internal report).

enum IDVReports {
    static func b64(_ d: Data?) -> String? { d.map { $0.base64EncodedString() } }

    static func checkResult(_ r: CheckResult) -> DocumentCheckResult {
        switch r {
        case .passed: return .passed
        case .failed: return .failed
        case .warning: return .warning
        case .notPerformed: return .notPerformed
        }
    }

    static func scanStatus(_ r: CheckResult) -> DocumentScanStatus {
        switch r {
        case .passed: return .ok
        case .failed: return .error
        case .warning: return .warning
        case .notPerformed: return .notDone
        }
    }

    /// Seed 002 §6.1: `getIDVConfirmDocumentDetails` payload.
    static func documentDetails(_ doc: DocumentEvidence, judged: DocumentJudgement) -> DocumentDetails {
        let f = doc.fields
        let info = DocumentInfo(surname: f.surname, givenName: f.givenNames, dateOfBirth: f.dateOfBirth, documentNumber: f.documentNumber,
                                expiryDate: f.dateOfExpiry, issuingCountry: f.issuingState,
                                documentType: DocumentKind(icaoDocumentCode: f.documentType),
                                portraitImage: b64(doc.portraitJPEG), nationality: f.nationality, sex: f.sex, personalNumber: f.personalNumber)
        let pages = doc.pageImages.enumerated().map { DocumentPage(pageIndex: $0.offset, image: $0.element.base64EncodedString()) }
        let overall: DocumentOverallStatus = judged.status == .valid ? .valid : judged.status == .invalid ? .invalid : .other("WARNING")
        return DocumentDetails(responseData: DocumentDetailsResponse(
            documentInfo: info, documentPages: pages,
            checksPerformed: judged.checks.map { DocumentCheck(checkName: DocumentWording.name($0.id), result: checkResult($0.result),
                                                               category: DocumentWording.category($0.id)) },
            errors: judged.errors.map(DocumentWording.sentence), warnings: judged.warnings.map(DocumentWording.sentence), overallStatus: overall))
    }

    /// Seed 003 §4: `onIDVAdditionalDocumentScan` payload. `withImages` false gives the stored form.
    /// Seed 003's NFC rows of a judged document: `is_nfc_document` (chip data was sent),
    /// `nfc_scan_status` (`OK` genuine: authentic and Active Authentication verified; `ERROR` when a chip finding
    /// made the document INVALID; `WARNING` otherwise, e.g. authentic but a copy not excluded; `NOT DONE` without
    /// chip data), the reason's sentence and code.
    static func nfcRows(_ doc: DocumentEvidence, policy: WorkflowPolicy) -> (Bool, DocumentScanStatus, ChipVerificationReason) {
        guard let chip = doc.chip else { return (false, .notDone, .noChipData) }
        let reason = policy.chipReason(chip)
        if policy.chipGenuine(chip) { return (true, .ok, reason) }
        return (true, policy.chipIsError(chip) ? .error : .warning, reason)
    }

    static func additionalScan(_ doc: DocumentEvidence, judged: DocumentJudgement, withImages: Bool,
                               policy: WorkflowPolicy = WorkflowPolicy()) -> AdditionalDocumentScanDetails {
        let f = doc.fields
        typealias L = AdditionalDocumentScanDetails.Label
        var identity: [String: JSONValue] = [
            L.surnameAndGivenNames: .string([f.surname, f.givenNames].filter { !$0.isEmpty }.joined(separator: " ")),
            L.surname: .string(f.surname), L.givenName: .string(f.givenNames),
            L.documentNumber: .string(f.documentNumber), L.issuingStateCode: .string(f.issuingState),
        ]
        if let v = f.dateOfBirth { identity[L.dateOfBirth] = .string(v) }
        if let v = f.sex { identity[L.sex] = .string(v) }
        if let v = f.nationality { identity[L.nationality] = .string(v) }
        if let v = f.dateOfExpiry { identity[L.dateOfExpiry] = .string(v) }
        let images = withImages
            ? DocumentImages(frontPage: b64(doc.pageImages.first), backPage: doc.pageImages.count > 1 ? b64(doc.pageImages[1]) : nil,
                             portraitImage: b64(doc.portraitJPEG))
            : DocumentImages()
        let overall: DocumentScanStatus = judged.status == .valid ? .ok : judged.status == .invalid ? .error : .warning
        let nfc = nfcRows(doc, policy: policy)
        return AdditionalDocumentScanDetails(
            version: "1", identityData: identity,
            documentInfo: ScannedDocumentInfo(documentNumber: f.documentNumber, expiryDate: f.dateOfExpiry, issuingAuthority: f.issuingState,
                                              documentImages: images),
            documentStatus: DocumentScanStatusReport(
                overallDocumentStatus: overall, errorList: judged.errors.map(DocumentWording.sentence),
                warningList: judged.warnings.map(DocumentWording.sentence),
                checksPerformed: judged.checks.map { DocumentScanCheck(checkName: DocumentWording.name($0.id), checkStatus: scanStatus($0.result),
                                                                       checkCategory: DocumentWording.category($0.id)) },
                isNFCDocument: nfc.0, nfcScanStatus: nfc.1.rawValue, nfcScanStatusReason: DocumentWording.sentence(nfc.2, chip: doc.chip, policy: policy),
                nfcScanStatusReasonCode: nfc.2.rawValue))
    }

    /// The `action_buttons` policy (ARCHITECTURE.md §5, seed 002 §6.3): what the server offers
    /// after a selfie verdict, given what attempts remain.
    static func actionButtons(verdict: BiometricVerdict, policy: WorkflowPolicy, selfieLeft: Int, documentLeft: Int, documentStep: Bool) -> ActionButtons {
        if verdict == .matched {
            return ActionButtons(successButton: [ActionButton(buttonText: "Continue", key: .continueFlow)], failureButton: [])
        }
        var f: [ActionButton] = []
        if selfieLeft > 0 { f.append(ActionButton(buttonText: "Recapture Selfie", key: .reinitSelfie)) }
        if documentStep, documentLeft > 0 { f.append(ActionButton(buttonText: "Rescan Document", key: .reinitDocumentScan)) }
        if verdict == .notMatched, policy.continueAnywayAfterNotMatched {
            f.append(ActionButton(buttonText: "Continue Anyway", key: .continueFlow))
        }
        return ActionButtons(successButton: [], failureButton: f)
    }
}
