import Foundation
import IDVKit

/// The codelabs' screens as terminal screens. Each prints its key facts, asks for an answer, and
/// calls the service; a synchronous refusal is shown and the screen asks again.
struct Screens {
    let ui: Terminal
    let outDir: URL

    private func challengeFacts(attemptsLeft: Int? = nil, response: RDNAChallengeResponse, error: RDNAError) {
        if let attemptsLeft { ui.fact("attempts_left", attemptsLeft < 0 ? "unlimited" : String(attemptsLeft)) }
        ui.fact("status", "\(response.status.statusCode) \(response.status.statusMessage ?? "")")
        if !error.isSuccess { ui.fact("error", "\(error.longErrorCode) \(error.errorString ?? "")") }
    }

    /// Asks until the service accepts (sync 0).
    private func ask(_ screen: String, _ hint: String, answers: AnswerSource, _ act: (String) -> RDNAError?) throws(AppExit) {
        while true {
            let a = try answers.answer(for: screen, hint: hint)
            guard let e = act(a) else { ui.fact("error", "not one of: \(hint)"); continue }
            if e.isSuccess { return }
            ui.fact("error", "\(e.longErrorCode) \(e.errorString ?? "")")
        }
    }

    // MARK: MFA screens

    func checkUser(response: RDNAChallengeResponse, error: RDNAError, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("check-user", "Who are you?")
        ui.fact("event", "getUser")
        challengeFacts(response: response, error: error)
        try ask("check-user", "user id", answers: answers) { service.setUser($0) }
    }

    func activationCode(userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("activation-code", "Enter the activation code you received")
        ui.fact("event", "getActivationCode")
        ui.fact("user", userID)
        challengeFacts(attemptsLeft: attemptsLeft, response: response, error: error)
        try ask("activation-code", "activation code (XXXXX-XXXXX)", answers: answers) { service.setActivationCode($0) }
    }

    func password(userID: String, mode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError,
                  answers: AnswerSource, service: IDVService) throws(AppExit) {
        let screen: String
        switch mode {
        case .set: screen = "set-password"
        case .verify: screen = "verify-password"
        default: screen = "reauth-password"
        }
        ui.screen(screen, mode == .set ? "Choose a password (8+ characters, a letter and a digit)" : "Enter your password")
        ui.fact("event", "getPassword")
        ui.fact("challenge_mode", mode.description)
        ui.fact("user", userID)
        challengeFacts(attemptsLeft: attemptsLeft, response: response, error: error)
        try ask(screen, "password", answers: answers) { service.setPassword($0, mode) }
    }

    func ldaConsent(userID: String, answers: AnswerSource, service: IDVService) throws(AppExit) {
        if let e = service.rdna.lastLDAError { ui.fact("lda", e.description) }
        ui.screen("lda-consent", "Use device authentication (LDA) from now on?")
        ui.fact("event", "getUserConsentForLDA")
        try ask("lda-consent", "yes | no", answers: answers) { a in
            switch a { case "yes": return service.setUserConsentForLDA(true); case "no": return service.setUserConsentForLDA(false); default: return nil }
        }
    }

    // MARK: IDV screens (seed 002 §8)

    static func documentGuideline(_ wf: RDNAIDVWorkflow) -> String {
        switch wf {
        case .activation: return "Activation process requires clear document scan. Ensure good lighting and hold your document steady."
        case .activationWithTemplate: return "Activation with biometric template. Position document within frame for verification."
        case .additionalDeviceWithTemplate: return "Additional device activation requires clear document scan. Position document within frame."
        case .additionalDeviceWithoutTemplate: return "Additional device setup. Scan your identity document clearly for verification."
        case .accountRecoveryWithTemplate: return "Account recovery process. Scan your identity document clearly for verification."
        case .accountRecoveryWithoutTemplate: return "Account recovery requires document verification. Ensure all text is visible and document is flat."
        case .postLoginKYC: return "KYC verification process. Hold document steady and avoid glare for best results."
        case .postLoginAgentKYC: return "Agent-assisted KYC process. Scan customer document clearly with proper lighting."
        default: return "Ensure you have good lighting and hold your document steady for the verification process."
        }
    }

    static func selfieGuidelines(_ wf: RDNAIDVWorkflow) -> [String] {
        switch wf {
        case .activation: return ["Ensure good lighting and position your face clearly in the frame for IDV activation process.",
                                  "Remove any sunglasses, hats, or face coverings for clear facial recognition.",
                                  "Look directly at the camera and follow any on-screen prompts during capture."]
        case .postLoginKYC: return ["Post-login KYC process - capture selfie for identity verification.",
                                    "Ensure your face is clearly visible and well-lit for verification.",
                                    "Face will be compared with document photo for identity confirmation."]
        case .postLoginSelfieBiometric: return ["Post-login selfie biometric - capture selfie for biometric authentication.",
                                                "Position your face clearly for biometric template verification.",
                                                "Ensure stable positioning and good lighting for accurate capture."]
        case .postLoginOptIn: return ["Biometric opt-in process - capture selfie for biometric enrollment.",
                                      "Position your face clearly for initial biometric template creation.",
                                      "This will enable biometric authentication for future logins."]
        default: return ["Ensure good lighting and position your face clearly in the frame.",
                         "Remove any sunglasses, hats, or face coverings for clear facial recognition.",
                         "Look directly at the camera and follow any on-screen prompts during capture."]
        }
    }

    func documentStart(workflow: RDNAIDVWorkflow, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("document-start", "Scan your identity document")
        ui.fact("event", "getIDVDocumentScanProcessStartConfirmation")
        ui.fact("idv_workflow", workflow.description)
        ui.fact("guideline", Self.documentGuideline(workflow))
        rejectedCapture(service)
        // Back here after confirming a document the server judged INVALID: say why (the server's status).
        if let ch = service.rdna.currentChallenge, ch.name == "getIDVDocumentScanProcessStartConfirmation",
           let s = ch.status, s.statusCode != 100, s.statusCode != 0, !s.statusMessage.isEmpty {   // 100: success
            ui.fact("previous_document", "\(s.statusCode) \(s.statusMessage)")
        }
        try ask("document-start", "scan FRONT.jpg [BACK.jpg] | cancel", answers: answers) { a in
            let parts = a.split(separator: " ").map(String.init)
            switch parts.first {
            case "scan" where parts.count >= 2:
                return service.setIDVDocumentScanProcessStartConfirmation(true, workflow, pages: parts.dropFirst().map { URL(fileURLWithPath: $0) })
            case "cancel": return service.setIDVDocumentScanProcessStartConfirmation(false, workflow, pages: [])
            default: return nil
            }
        }
    }

    func documentDetails(json: String, mode: RDNAChallengeOpMode, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("document-details", "Check the details read from your document")
        ui.fact("event", "getIDVConfirmDocumentDetails")
        ui.fact("challenge_mode", mode.description)
        do {
            let d = try DocumentDetails(jsonString: json).responseData
            let i = d.documentInfo
            ui.fact("name", "\(i.givenName) \(i.surname)".trimmingCharacters(in: .whitespaces))
            ui.fact("document_type", i.documentType.rawValue)
            ui.fact("document_number", i.documentNumber)
            ui.fact("date_of_birth", i.dateOfBirth ?? "N/A")
            ui.fact("expiry_date", i.expiryDate ?? "N/A")
            ui.fact("issuing_country", i.issuingCountry)
            for c in d.checksPerformed { ui.fact("check", "\(c.checkName): \(c.result.rawValue)") }
            for e in d.errors { ui.fact("document_error", "\(e)") }
            for w in d.warnings { ui.fact("warning", w) }
            ui.fact("overall_status", d.overallStatus.rawValue)
            if let p = i.portraitImage { save(p, "document-portrait") }
            for page in d.documentPages { save(page.image, "document-page-\(page.pageIndex)") }
        } catch {
            ui.fact("payload_error", "\(error)")
        }
        try ask("document-details", "confirm | rescan", answers: answers) { a in
            switch a { case "confirm": return service.setIDVConfirmDocumentDetails(true, mode); case "rescan": return service.setIDVConfirmDocumentDetails(false, mode); default: return nil }
        }
    }

    func selfieStart(workflow: RDNAIDVWorkflow, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("selfie-start", "Take a selfie")
        ui.fact("event", "getIDVSelfieProcessStartConfirmation")
        ui.fact("idv_workflow", workflow.description)
        for g in Self.selfieGuidelines(workflow) { ui.fact("guideline", g) }
        if let lc = service.rdna.pendingLivenessChallenge {
            // Active liveness: the server chose what the user must do during this capture.
            ui.fact("liveness_challenge", lc.instructions)
            ui.fact("liveness_actions", lc.actions.map(\.rawValue).joined(separator: ","))
        }
        rejectedCapture(service)
        try ask("selfie-start", "capture FRAME_FOLDER [back] [no-flash] | cancel", answers: answers) { a in
            let parts = a.split(separator: " ").map(String.init)
            switch parts.first {
            case "capture" where parts.count >= 2:
                return service.setIDVSelfieProcessStartConfirmation(true, back: parts.dropFirst(2).contains("back"), workflow,
                                                                    frames: URL(fileURLWithPath: parts[1]), noFlash: parts.dropFirst(2).contains("no-flash"))
            case "cancel": return service.setIDVSelfieProcessStartConfirmation(false, back: false, workflow, frames: nil)
            default: return nil
            }
        }
    }

    /// When the server asks for the images again, why the previous capture was rejected.
    private func rejectedCapture(_ service: IDVService) {
        guard let ch = service.rdna.currentChallenge, ch.name.hasPrefix("upload") else { return }
        ui.fact("attempts_left", String(ch.attemptsLeft))
        if let e = ch.error, !e.isSuccess { ui.fact("previous_capture", "\(e.longErrorCode) \(e.errorString)") }
        if let st = ch.status, !st.isSuccess { ui.fact("previous_capture_status", "\(st.statusCode) \(st.statusMessage)") }
    }

    /// Returns the verdict shown (`MATCHED`, `NOT_MATCHED`, `LIVENESS_FAILED`, …).
    func selfieConfirmation(json: String, mode: RDNAChallengeOpMode, answers: AnswerSource, service: IDVService) throws(AppExit) -> String? {
        ui.screen("selfie-confirmation", "Selfie result")
        ui.fact("event", "getIDVSelfieConfirmation")
        ui.fact("challenge_mode", mode.description)
        var keys: [String] = []
        var verdict: String?
        do {
            let s = try SelfieDetails(jsonString: json)
            let r = s.responseData
            verdict = r.biometricResult.displayText.rawValue
            ui.fact("verdict", r.biometricResult.displayText.rawValue)
            ui.fact("match", r.biometricResult.displayText.isSuccess ? "Selfie matches with document image" : "Selfie does not match with document image")
            if let c = r.biometricResult.resultCriteria { ui.fact("criteria", c.rawValue) }
            if let f = r.faceMatcherResponse { ui.fact("face_match_score", String(format: "%.2f%%", f.score * 100)) }
            if let l = r.analyzeLivenessResponse?.video.livenessResult.score { ui.fact("liveness_score", "\(l)%") }
            if let img = r.analyzeLivenessResponse?.video.autocaptureResult?.selfieImage { save(img, "selfie") }
            if let img = r.documentDetail?.documentInfo.portraitImage { save(img, "selfie-document-portrait") }
            for b in s.displayedButtons { ui.fact("button", "\(b.key.rawValue) — \(b.buttonText)"); keys.append(b.key.rawValue) }
        } catch {
            ui.fact("payload_error", "\(error)")
        }
        try ask("selfie-confirmation", (keys + ["close"]).joined(separator: " | "), answers: answers) { a in
            a == "close" ? service.resetAuthState() : service.setIDVSelfieConfirmation(a, mode)
        }
        return verdict
    }

    func consent(userID: String, response: RDNAChallengeResponse, mode: RDNAChallengeOpMode, error: RDNAError, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("consent", "Store your biometric template?")
        ui.fact("event", "getIDVBiometricOptInConsent")
        ui.fact("challenge_mode", mode.description)
        ui.fact("user", userID)
        challengeFacts(response: response, error: error)
        ui.fact("description", mode.rawValue == 10
                ? "Your biometric template will be used for enhanced security verification."
                : "Your selfie biometric template will be securely stored for identity verification.")
        try ask("consent", "approve | reject | close", answers: answers) { a in
            switch a {
            case "approve": return service.setIDVBiometricOptInConsent(true, mode)
            case "reject": return service.setIDVBiometricOptInConsent(false, mode)
            case "close": return service.resetAuthState()
            default: return nil
            }
        }
    }

    func optInFrame(image: String, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("optin-frame", "Use this captured frame for your template?")
        ui.fact("event", "onIDVOptInCapturedFrameConfirmation")
        save(image, "optin-frame")
        try ask("optin-frame", "approve | recapture | cancel", answers: answers) { a in
            switch a {
            case "approve": return service.setIDVBiometricOptInConfirmation(.approved)
            case "recapture": return service.setIDVBiometricOptInConfirmation(.recapture)
            case "cancel": return service.setIDVBiometricOptInConfirmation(.cancel)
            default: return nil
            }
        }
    }

    /// A result screen for a terminal IDV event; returns the verdict found in the payload, if any.
    func result(_ screen: String, _ title: String, userID: String, json: String, status: RDNARequestStatus, error: RDNAError,
                mode: RDNAChallengeOpMode?) -> String? {
        ui.screen(screen, title)
        ui.fact("user", userID)
        if let mode { ui.fact("challenge_mode", mode.description) }
        ui.fact("status", "\(status.statusCode) \(status.statusMessage ?? "")")
        ui.fact("error", "\(error.longErrorCode) \(error.errorString ?? "")")
        let v = (try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))) ?? .emptyObject
        let verdict = Self.find(v, "display_text")?.stringValue ?? Self.find(v, "overall_document_status")?.stringValue
        if let verdict { ui.fact("verdict", verdict) }
        // Seed 003's result screen lists why a document is not valid (`error_list`, `warning_list`).
        for (key, label) in [("error_list", "document_error"), ("warning_list", "document_warning")] {
            for sentence in Self.find(v, key)?.arrayValue?.compactMap(\.stringValue) ?? [] { ui.fact(label, sentence) }
        }
        if let s = Self.find(v, "face_matcher_response")?["score"]?.doubleValue { ui.fact("face_match_score", String(format: "%.2f%%", s * 100)) }
        if let s = Self.find(v, "liveness_result")?["score"]?.intValue { ui.fact("liveness_score", "\(s)%") }
        if let nfc = Self.find(v, "is_nfc_document")?.boolValue {
            // Seed 003's NFC rows: the chip's verification result (docs/CHIP.md).
            ui.fact("nfc", "is_nfc_document=\(nfc) nfc_scan_status=\(Self.find(v, "nfc_scan_status")?.stringValue ?? "") "
                    + "reason=\(Self.find(v, "nfc_scan_status_reason_code")?.stringValue ?? "")")
        }
        for key in ["front_page", "back_page", "portrait_image"] {
            if let b64 = Self.find(v, key)?.stringValue { save(b64, "\(screen)-\(key.replacingOccurrences(of: "_", with: "-"))") }
        }
        return verdict
    }

    /// The first value under `key`, depth first.
    static func find(_ v: JSONValue, _ key: String) -> JSONValue? {
        if let o = v.objectValue {
            if let hit = o[key] { return hit }
            for k in o.keys.sorted() { if let hit = find(o[k]!, key) { return hit } }
        } else if let a = v.arrayValue {
            for e in a { if let hit = find(e, key) { return hit } }
        }
        return nil
    }

    /// Writes a base64 image to the output folder and names the file on the screen. Document pages,
    /// portraits and selfies are personal data: a folder this app creates is private to the user
    /// (0700) and every image is written 0600, whatever the umask.
    func save(_ base64: String, _ name: String) {
        guard let d = Data(base64Encoded: base64), !d.isEmpty else { ui.fact(name, "(no image)"); return }
        let ext = d.starts(with: [0x89, 0x50, 0x4E, 0x47]) ? "png" : "jpg"
        let url = outDir.appendingPathComponent("\(name).\(ext)")
        let fm = FileManager.default
        do {
            if !fm.fileExists(atPath: outDir.path) {
                try fm.createDirectory(at: outDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            try? fm.removeItem(at: url)
            guard fm.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
            }
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            try handle.write(contentsOf: d)
            ui.fact(name, url.path)
        } catch {
            ui.fact(name, "could not save (\(error.localizedDescription))")
        }
    }
}

/// The LDA user-presence check of the sample app: the `lda-presence` screen, "Approve with device
/// key? [y/n]". Runs on the SDK's work queue while the screens wait for the SDK's answer, so it
/// never overlaps another screen's question. A script/input problem ends the app.
final class PresencePrompt: @unchecked Sendable {
    // @unchecked: immutable after init; it asks on the SDK work queue while the screens wait (see above).
    let ui: Terminal
    let answers: AnswerSource
    let coordinator: Coordinator

    init(ui: Terminal, answers: AnswerSource, coordinator: Coordinator) {
        self.ui = ui
        self.answers = answers
        self.coordinator = coordinator
    }

    func ask(_ purpose: LDAPurpose) -> Bool {
        ui.screen("lda-presence", "Approve with device key? [y/n]")
        ui.fact("purpose", purpose.rawValue)
        while true {
            let a: String
            do { a = try answers.answer(for: "lda-presence", hint: "y | n") } catch {
                coordinator.stop(error.code, error.message)
                return false
            }
            switch a.lowercased() {
            case "y", "yes": return true
            case "n", "no": return false
            default: ui.fact("error", "not one of: y | n")
            }
        }
    }
}
