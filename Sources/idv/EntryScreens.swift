import Foundation
import IDVKit

/// The post-login codelabs' own screens: the entry screen each flow starts from (seed 000's
/// Activated Customer KYC, seed 003's Additional Document Scan, seed 001's Biometric
/// Authentication, seed 004's Opt-In and Opt-Out), with their busy states and the template-status
/// gating, and the results each one shows (the codelabs' alerts and seed 003's result screen).
/// Words: ``Words``.
enum EntryScreen: String {
    case kyc
    case documentScan = "docscan"
    case serverBiometric = "biometric-auth"
    case optIn = "optin"
    case optOut = "optout"

    /// Whether the entry screen checks the template status first (seeds 001 and 004).
    var checksTemplate: Bool { self == .serverBiometric || self == .optIn || self == .optOut }

    var title: String {
        switch self {
        case .kyc: return Words.KYC.title
        case .documentScan: return Words.DocumentScan.title
        case .serverBiometric: return Words.ServerBiometric.title
        case .optIn: return Words.OptIn.title
        case .optOut: return Words.OptOut.title
        }
    }

    var startButton: String {
        switch self {
        case .kyc: return Words.KYC.start
        case .documentScan: return Words.DocumentScan.start
        case .serverBiometric: return Words.ServerBiometric.start
        case .optIn: return Words.OptIn.start
        case .optOut: return Words.OptOut.start
        }
    }

    var busyTitle: String {
        switch self {
        case .kyc: return Words.KYC.busy
        case .documentScan: return Words.DocumentScan.busy
        case .serverBiometric: return Words.ServerBiometric.busy
        case .optIn: return Words.OptIn.busy
        case .optOut: return Words.OptOut.busy
        }
    }

    var checkingTitle: String {
        switch self {
        case .serverBiometric: return Words.ServerBiometric.checking
        case .optIn: return Words.OptIn.checking
        default: return Words.OptOut.checking
        }
    }

    /// The start button's gate: seed 001 L1004–L1025 (authentication needs a template), seed 004
    /// L1873–L1874 (opt-in needs none), L1653–L1672 (opt-out needs one). Nil: not gated.
    func startEnabled(templateExists: Bool?) -> Bool {
        switch self {
        case .kyc, .documentScan: return true
        case .serverBiometric, .optOut: return templateExists == true
        case .optIn: return templateExists == false
        }
    }

    /// The note shown under a disabled start button.
    var disabledNote: String {
        switch self {
        case .serverBiometric: return Words.ServerBiometric.disabledNote
        case .optIn: return Words.OptIn.disabledNote
        case .optOut: return Words.OptOut.disabledNote
        default: return ""
        }
    }
}

extension Screens {
    // MARK: Entry screens

    /// An entry screen's texts (without its button row).
    func entry(_ e: EntryScreen) {
        ui.screen(e.rawValue, e.title)
        switch e {
        case .kyc:
            ui.text(Words.KYC.subtitle)
            ui.text("\n" + Words.KYC.infoTitle)
            ui.text(Words.KYC.infoText)
            ui.text("")
            for s in Words.KYC.steps { ui.text(s) }
            ui.text("")
            for r in Words.KYC.requirements { ui.text(r) }
        case .documentScan: ui.text(Words.DocumentScan.subtitle)
        case .serverBiometric: ui.text(Words.ServerBiometric.subtitle)
        case .optIn: ui.text(Words.OptIn.subtitle)
        case .optOut: ui.text(Words.OptOut.subtitle)
        }
    }

    /// The template status section of seeds 001 and 004 (seed 001 L826–L846): the card's title and
    /// text, "Status: … (Code: …)", and seed 004's "Template exists" / "No template".
    func templateCard(exists: Bool, statusCode: Int, statusMessage: String) {
        ui.text("")
        ui.text(exists ? Words.TemplateStatus.existsTitle : Words.TemplateStatus.noneTitle)
        ui.text(exists ? Words.TemplateStatus.exists : Words.TemplateStatus.none)
        ui.text(Words.TemplateStatus.code(statusMessage, statusCode))
        ui.fact("template", exists ? Words.TemplateStatus.templateExists : Words.TemplateStatus.noTemplate)
    }

    /// The entry screen's start button (disabled by its gate, with its note) and the question:
    /// `start` or `back` (to the dashboard). Returns true for start (only when enabled).
    func askStart(_ e: EntryScreen, templateExists: Bool?, answers: AnswerSource) throws(AppExit) -> Bool {
        let enabled = e.startEnabled(templateExists: templateExists)
        ui.buttons([e.startButton], disabled: enabled ? [] : [e.startButton])
        if !enabled { ui.text(e.disabledNote) }
        while true {
            let a = try answers.answer(for: e.rawValue, hint: enabled ? "start | back" : "back (\(e.startButton) is disabled)")
            switch a {
            case "start" where enabled: return true
            case "start": ui.error("\(e.startButton) is disabled: \(e.disabledNote)")
            case "back": return false
            default: ui.error("not one of: start | back")
            }
        }
    }

    // MARK: Results

    /// Seed 000 L963–L999: the KYC result alert by the dual validation — "Success" / "Error", the
    /// codelab's message, "Go to Dashboard". Returns whether it was a success.
    @discardableResult
    func kycResult(userID: String, status: RDNARequestStatus, error: RDNAError) -> Bool {
        ui.screen("kyc-result", Words.KYC.title)
        ui.fact("user", userID)
        ui.fact("status", "\(status.statusCode) \(status.statusMessage ?? "")")
        ui.fact("error", "\(error.longErrorCode) \(error.errorString ?? "")")
        let message: String
        let ok: Bool
        if error.longErrorCode != 0 {
            (ok, message) = (false, Words.KYC.failed(error.errorString ?? Words.KYC.unknownError))
        } else if status.statusCode != 100 && status.statusCode != 0 {
            (ok, message) = (false, Words.KYC.failed(status.statusMessage ?? Words.KYC.serverError))
        } else {
            (ok, message) = (true, Words.KYC.success)
        }
        ui.alert(ok ? Words.KYC.successTitle : Words.KYC.errorTitle, message, buttons: [Words.KYC.goToDashboard])
        return ok
    }

    /// Seed 003 L669–L720: an error or a failed status → the "Error" alert (OK); otherwise the
    /// result screen (L960–L1445): name, portrait, Document Status with its hint, the error and
    /// warning lists, the identity data, the page images, the checks with their category, the NFC
    /// rows, Done. Returns the overall document status shown.
    func documentScanResult(userID: String, json: String, status: RDNARequestStatus, error: RDNAError, mode: RDNAChallengeOpMode) -> String? {
        if error.longErrorCode != 0 || (status.statusCode != 100 && status.statusCode != 0) {
            ui.screen("docscan-result", Words.DocumentScan.title)
            ui.fact("challenge_mode", mode.description)
            ui.fact("status", "\(status.statusCode) \(status.statusMessage ?? "")")
            ui.fact("error", "\(error.longErrorCode) \(error.errorString ?? "")")
            let message = error.longErrorCode != 0 ? (error.errorString ?? Words.DocumentScan.scanFailed) : (status.statusMessage ?? Words.DocumentScan.serverFailed)
            ui.alert(Words.DocumentScan.errorTitle, message, buttons: [Words.DocumentScan.ok])
            return nil
        }
        ui.screen("docscan-result", Words.DocumentScan.resultTitle)
        ui.fact("user", userID)
        ui.fact("challenge_mode", mode.description)
        ui.fact("status", "\(status.statusCode) \(status.statusMessage ?? "")")
        ui.fact("error", "\(error.longErrorCode) \(error.errorString ?? "")")
        let v = (try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))) ?? .emptyObject
        let identity = v["identity_data"]?.objectValue ?? [:]
        let name = identity["Surname and given names"]?.stringValue
            ?? "\(identity["Given name"]?.stringValue ?? "") \(identity["Surname"]?.stringValue ?? "")".trimmingCharacters(in: .whitespaces)
        if !name.isEmpty { ui.fact("name", name) }
        let images = v["document_info"]?["document_images"]
        if let p = images?["portrait_image"]?.stringValue { save(p, "docscan-result-portrait-image") }
        let st = v["document_status"]
        let overall = st?["overall_document_status"]?.stringValue
        if let overall {
            ui.text("\(Words.DocumentScan.documentStatus): \(overall)")
            if overall == "ERROR" { ui.text(Words.DocumentScan.errorHint) } else if overall == "WARNING" { ui.text(Words.DocumentScan.warningHint) }
            ui.fact("verdict", overall)
        }
        for e in st?["error_list"]?.arrayValue?.compactMap(\.stringValue) ?? [] { ui.fact("document_error", e) }
        for w in st?["warning_list"]?.arrayValue?.compactMap(\.stringValue) ?? [] { ui.fact("document_warning", w) }
        for k in identity.keys.sorted() { ui.text("\(k): \(identity[k]?.stringValue ?? identity[k].map { "\($0)" } ?? "")") }
        for key in ["front_page", "back_page"] {
            if let b64 = images?[key]?.stringValue { save(b64, "docscan-result-\(key.replacingOccurrences(of: "_", with: "-"))") }
        }
        for c in st?["checks_performed"]?.arrayValue ?? [] {
            ui.fact("check", "\(c["check_name"]?.stringValue ?? ""): \(c["check_status"]?.stringValue ?? "")")
            ui.text("  \(Words.DocumentScan.category(c["check_category"]?.stringValue ?? ""))")
        }
        // Seed 003's NFC rows (L1254–L1289): shown when any of the three is present.
        let isNFC = st?["is_nfc_document"]?.boolValue, scan = st?["nfc_scan_status"]?.stringValue, reason = st?["nfc_scan_status_reason"]?.stringValue
        if let isNFC { ui.text("\(Words.DocumentScan.isNFCDocument): \(isNFC ? Words.DocumentScan.yes : Words.DocumentScan.no)") }
        if let scan { ui.text("\(Words.DocumentScan.nfcScanStatus): \(scan)") }
        if let reason { ui.text("\(Words.DocumentScan.nfcReason): \(reason)") }
        if isNFC != nil || scan != nil || reason != nil {
            ui.fact("nfc", "is_nfc_document=\(isNFC.map(String.init) ?? "") nfc_scan_status=\(scan ?? "") "
                    + "reason=\(st?["nfc_scan_status_reason_code"]?.stringValue ?? "")")
        }
        ui.buttons([Words.DocumentScan.done])
        return overall
    }

    /// Seed 001 L915–L996: "Authentication Error" (with the error code), "Authentication Failed"
    /// (a failed status), "Authentication Complete" (a payload that is not JSON), else
    /// "✅ Authentication Success" (MATCHED; "Back to Dashboard") or "❌ Authentication Failed" (OK),
    /// each with the biometric result, use case, transaction id and attempts left. Returns the
    /// verdict and whether the alert leads to the dashboard (success) or back to the screen.
    func serverBiometricResult(userID: String, json: String, status: RDNARequestStatus, error: RDNAError) -> (verdict: String?, toDashboard: Bool) {
        ui.screen("biometric-auth-result", Words.ServerBiometric.title)
        ui.fact("user", userID)
        ui.fact("status", "\(status.statusCode) \(status.statusMessage ?? "")")
        ui.fact("error", "\(error.longErrorCode) \(error.errorString ?? "")")
        let v = try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        let displayText = v?["biometric_result"]?["display_text"]?.stringValue
        if let displayText { ui.fact("verdict", displayText) }
        if error.longErrorCode != 0 {
            ui.alert(Words.ServerBiometric.errorTitle, Words.ServerBiometric.errorMessage(error), buttons: [Words.ServerBiometric.ok])
            return (displayText, false)
        }
        if status.statusCode != 100 && status.statusCode != 0 {
            ui.alert(Words.ServerBiometric.failedTitle, Words.ServerBiometric.statusMessage(status), buttons: [Words.ServerBiometric.ok])
            return (displayText, false)
        }
        guard let v, v.objectValue != nil else {
            ui.alert(Words.ServerBiometric.completeTitle, Words.ServerBiometric.complete, buttons: [Words.ServerBiometric.ok])
            return (nil, false)
        }
        let shown = displayText ?? Words.ServerBiometric.unknown
        let message = Words.ServerBiometric.result(shown, useCase: v["idv_audit_info"]?["orchestration_use_case"]?.stringValue ?? Words.ServerBiometric.notAvailable,
                                                   transactionID: v["idv_audit_info"]?["idv_audit_transaction_id"]?.stringValue ?? Words.ServerBiometric.notAvailable,
                                                   attemptsLeft: v["attempts_left"]?.intValue ?? 0)
        if shown == "MATCHED" {
            ui.alert(Words.ServerBiometric.successTitle, message, buttons: [Words.ServerBiometric.backToDashboard])
            return (shown, true)
        }
        ui.alert(Words.ServerBiometric.failureTitle, message, buttons: [Words.ServerBiometric.ok])
        return (shown, false)
    }

    /// Seed 004 L1330–L1348 (opt-in) and L1630–L1650 (opt-out): "Success" with the codelab's
    /// sentence, "No Template" (opt-out, 600), or "Opt-In Failed" / "Opt-Out Failed" with the
    /// status message (opt-in: the error string when the status is a success). Returns the verdict,
    /// if the payload names one, and whether the screen checks the template status again (after
    /// "Success" and "No Template", as the codelab does).
    func optInOutResult(optIn: Bool, userID: String, json: String, status: RDNARequestStatus, error: RDNAError,
                        mode: RDNAChallengeOpMode) -> (verdict: String?, recheck: Bool) {
        ui.screen(optIn ? "optin-result" : "optout-result", optIn ? Words.OptIn.title : Words.OptOut.title)
        ui.fact("user", userID)
        ui.fact("challenge_mode", mode.description)
        ui.fact("status", "\(status.statusCode) \(status.statusMessage ?? "")")
        ui.fact("error", "\(error.longErrorCode) \(error.errorString ?? "")")
        let v = (try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))) ?? .emptyObject
        let verdict = Self.find(v, "display_text")?.stringValue
        if let verdict { ui.fact("verdict", verdict) }
        // Seed 004 L1336 / L1636: success is error 0 and status 100 (not 0).
        let ok = error.longErrorCode == 0 && status.statusCode == 100
        if optIn {
            if ok { ui.alert(Words.OptIn.successTitle, Words.OptIn.success, buttons: [Words.Common.ok]) }
            else if status.statusCode != 100 && status.statusCode != 0 { ui.alert(Words.OptIn.failedTitle, status.statusMessage ?? "", buttons: [Words.Common.ok]) }
            else { ui.alert(Words.OptIn.failedTitle, error.errorString ?? "", buttons: [Words.Common.ok]) }
            return (verdict, ok)
        }
        if ok { ui.alert(Words.OptOut.successTitle, Words.OptOut.success, buttons: [Words.Common.ok]) }
        else if status.statusCode == 600 { ui.alert(Words.OptOut.noneTitle, Words.OptOut.none, buttons: [Words.Common.ok]) }
        else { ui.alert(Words.OptOut.failedTitle, status.statusMessage ?? "", buttons: [Words.Common.ok]) }
        return (verdict, ok || status.statusCode == 600)
    }

    /// The template-status result of the dashboard's own `template-status` (not a codelab screen:
    /// the card of seed 001 on its own).
    func templateStatusResult(userID: String, status: RDNARequestStatus, error: RDNAError) {
        ui.screen("template-status", Words.Menu.templateStatus)
        ui.fact("user", userID)
        ui.fact("status", "\(status.statusCode) \(status.statusMessage ?? "")")
        ui.fact("error", "\(error.longErrorCode) \(error.errorString ?? "")")
        if error.isSuccess { templateCard(exists: status.statusCode == 100, statusCode: Int(status.statusCode), statusMessage: status.statusMessage ?? "") }
    }
}
