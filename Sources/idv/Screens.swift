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
        ui.screen("check-user", Words.MFA.checkUser)
        ui.fact("event", "getUser")
        challengeFacts(response: response, error: error)
        try ask("check-user", "user id", answers: answers) { service.setUser($0) }
    }

    func activationCode(userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("activation-code", Words.MFA.activationCode)
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
        ui.screen(screen, mode == .set ? Words.MFA.setPassword : Words.MFA.verifyPassword)
        ui.fact("event", "getPassword")
        ui.fact("challenge_mode", mode.description)
        ui.fact("user", userID)
        challengeFacts(attemptsLeft: attemptsLeft, response: response, error: error)
        try ask(screen, "password", answers: answers) { service.setPassword($0, mode) }
    }

    func ldaConsent(userID: String, answers: AnswerSource, service: IDVService) throws(AppExit) {
        if let e = service.rdna.lastLDAError { ui.fact("lda", e.description) }
        ui.screen("lda-consent", Words.MFA.ldaConsent)
        ui.fact("event", "getUserConsentForLDA")
        try ask("lda-consent", "yes | no", answers: answers) { a in
            switch a { case "yes": return service.setUserConsentForLDA(true); case "no": return service.setUserConsentForLDA(false); default: return nil }
        }
    }

    // MARK: IDV step screens (seed 002 §8; seeds 000, 001, 003 and 004 reuse them)

    /// The error banner of a screen shown again (``ChallengeNotice``): why the last answer did not
    /// go through, on the screen it happened on.
    private func problems(_ notice: ChallengeNotice?) {
        for p in notice?.problems ?? [] { ui.error(p) }
    }

    /// The codelabs' `showError(error.errorString ?? fallback)` for a sync refusal of a button's call.
    static func or(_ fallback: String) -> (RDNAError) -> String {
        { e in (e.errorString ?? "").isEmpty ? fallback : e.errorString! }
    }

    /// `getIDVDocumentScanProcessStartConfirmation` (seed 002 §8.1; seed 000 §6.3; seed 003 §6.3), and
    /// the same screen after an unusable page or a refused/undelivered answer, saying why. Answers:
    /// `scan FRONT [BACK]` ("Scan Document") or `cancel` (Close: 146 before login, the flow's
    /// terminal event with 240 after).
    func documentStart(workflow: RDNAIDVWorkflow, notice: ChallengeNotice?, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("document-start", Words.DocumentStart.title)
        ui.fact("event", "getIDVDocumentScanProcessStartConfirmation")
        ui.fact("idv_workflow", workflow.description)
        ui.fact("guideline", Words.DocumentStart.guideline(workflow))
        if let ch = service.rdna.currentChallenge { ui.fact("attempts_left", String(ch.attemptsLeft)) }
        problems(notice)
        ui.buttons([Words.Common.close, Words.DocumentStart.scan])
        try askButton("document-start", "scan FRONT.jpg [BACK.jpg] | cancel", answers: answers) { a in
            let parts = a.split(separator: " ").map(String.init)
            switch parts.first {
            case "scan" where parts.count >= 2:
                return (Words.DocumentStart.busy, Self.or(Words.DocumentStart.startFailed),
                        { service.setIDVDocumentScanProcessStartConfirmation(true, workflow, pages: parts.dropFirst().map { URL(fileURLWithPath: $0) }) })
            case "cancel", "close":
                return (nil, Self.or(Words.DocumentStart.cancelFailed), { service.setIDVDocumentScanProcessStartConfirmation(false, workflow, pages: []) })
            default: return nil
            }
        }
    }

    /// `getIDVConfirmDocumentDetails` (seed 002 §8.2, seed 000 §6.4). Answers: `confirm`, `recapture`
    /// (rescans, in every mode: `rescanIDVDocument`), `close` (mode 9: the cancel API, KYC ends with
    /// 240, seed 000 L1265; mode 8: `resetAuthState`, L1255).
    func documentDetails(json: String, mode: RDNAChallengeOpMode, notice: ChallengeNotice?, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("document-details", Words.DocumentDetails.title)
        ui.fact("event", "getIDVConfirmDocumentDetails")
        ui.fact("challenge_mode", mode.description)
        problems(notice)
        do {
            let d = try DocumentDetails(jsonString: json).responseData
            let i = d.documentInfo
            ui.fact("name", "\(i.givenName) \(i.surname)".trimmingCharacters(in: .whitespaces))
            if let p = i.portraitImage { save(p, "document-portrait") }
            let values = ["document_type": i.documentType.rawValue, "document_number": i.documentNumber, "date_of_birth": i.dateOfBirth,
                          "expiry_date": i.expiryDate, "issuing_country": i.issuingCountry]
            for row in Words.DocumentDetails.rows {
                let v = values[row.key].flatMap { $0 }.flatMap { $0.isEmpty ? nil : $0 } ?? Words.DocumentDetails.notAvailable
                ui.text("\(row.label): \(v)")
            }
            for page in d.documentPages { save(page.image, "document-page-\(page.pageIndex)") }
            for c in d.checksPerformed { ui.fact("check", "\(c.checkName): \(c.result.rawValue)") }
            for e in d.errors { ui.fact("document_error", "\(e)") }
            for w in d.warnings { ui.fact("warning", w) }
            ui.fact("overall_status", d.overallStatus.rawValue)
        } catch {
            ui.fact("payload_error", "\(error)")
        }
        let closeable = mode == .idvPostLoginKYC || mode == .idvActivation
        ui.buttons((closeable ? [Words.Common.close] : []) + [Words.DocumentDetails.recapture, Words.DocumentDetails.confirm])
        try askButton("document-details", "confirm | recapture\(closeable ? " | close" : "")", answers: answers) { a in
            switch a {
            case "confirm": return (nil, Self.or(Words.DocumentDetails.confirmFailed), { service.setIDVConfirmDocumentDetails(true, mode) })
            case "recapture", "rescan": return (nil, Self.or(Words.DocumentDetails.recaptureFailed), { service.rescanIDVDocument(mode) })
            case "close" where mode == .idvPostLoginKYC:
                return (nil, Self.or(Words.DocumentDetails.cancelFailed), { service.setIDVConfirmDocumentDetails(false, mode) })
            case "close" where mode == .idvActivation: return (nil, Self.or(Words.DocumentDetails.cancelFailed), { service.resetAuthState() })
            default: return nil
            }
        }
    }

    /// `getIDVSelfieProcessStartConfirmation` (seed 002 §8.3): the workflow's three guidelines (all
    /// eleven sets and the default), the active-liveness instructions when the server issued a
    /// challenge, and the same screen after a rejected capture, saying why. Answers:
    /// `capture FRAME_FOLDER [back] [no-flash]` ("Capture Selfie", `back` = the camera switch, `no-flash` = decline the
    /// illumination sequence) or `cancel` (Close).
    func selfieStart(workflow: RDNAIDVWorkflow, notice: ChallengeNotice?, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("selfie-start", Words.SelfieStart.title)
        ui.fact("event", "getIDVSelfieProcessStartConfirmation")
        ui.fact("idv_workflow", workflow.description)
        for g in Words.SelfieStart.guidelines(workflow) { ui.fact("guideline", g) }
        if let lc = service.rdna.pendingLivenessChallenge {
            // Active liveness: the server chose what the user must do during this capture.
            ui.text(Words.SelfieStart.challengeTitle)
            ui.fact("liveness_challenge", lc.instructions)
            ui.fact("liveness_actions", lc.actions.map(\.rawValue).joined(separator: ","))
        }
        if let ch = service.rdna.currentChallenge { ui.fact("attempts_left", String(ch.attemptsLeft)) }
        problems(notice)
        ui.text("\(Words.SelfieStart.backCamera): off")
        ui.buttons([Words.Common.close, Words.SelfieStart.capture])
        try askButton("selfie-start", "capture FRAME_FOLDER [back] [no-flash] | cancel", answers: answers) { a in
            let parts = a.split(separator: " ").map(String.init)
            switch parts.first {
            case "capture" where parts.count >= 2:
                // `no-flash` declines the server's illumination sequence (presence), as a person
                // sensitive to flashing light would: the server asks again with its fallback.
                // After 1071 (the screen's light too faint on the face) the simulated person follows the
                // guidance: the retake is rendered in a dimmer room.
                let dimmer = notice?.error.longErrorCode == IDVErrorCode.presenceRetake.rawValue
                return (Words.SelfieStart.busy, Self.or(Words.SelfieStart.startFailed), {
                    service.setIDVSelfieProcessStartConfirmation(true, back: parts.dropFirst(2).contains("back"), workflow,
                                                                  frames: URL(fileURLWithPath: parts[1]), noFlash: parts.dropFirst(2).contains("no-flash"),
                                                                  dimmerRoom: dimmer)
                })
            case "cancel", "close":
                return (nil, Self.or(Words.SelfieStart.cancelFailed), { service.setIDVSelfieProcessStartConfirmation(false, back: false, workflow, frames: nil) })
            default: return nil
            }
        }
    }

    /// What a screen's answer led to: an SDK call the SDK answers, or (seed 000 mode 9) a Close that
    /// only navigates back to the KYC screen, without an SDK call.
    enum Exit { case answered, navigatedBack }

    /// `getIDVSelfieConfirmation` (seed 002 §8.4): the holder's name (the document's, else the user
    /// id), the document photo and the selfie (saved), the match text, "Status: …", the scores the
    /// server sent (a MATCHED verdict only), and the server's buttons. Answers: an offered key, `true`
    /// (seed 000's one "Continue" button, L1413), or `close` (mode 8: `resetAuthState`; mode 9: back
    /// to the KYC screen with no SDK call, L1443). Returns the verdict shown and how the screen was left.
    func selfieConfirmation(userID: String, json: String, mode: RDNAChallengeOpMode, notice: ChallengeNotice?, answers: AnswerSource,
                            service: IDVService) throws(AppExit) -> (verdict: String?, exit: Exit) {
        ui.screen("selfie-confirmation", Words.SelfieConfirmation.title)
        ui.fact("event", "getIDVSelfieConfirmation")
        ui.fact("challenge_mode", mode.description)
        problems(notice)
        var keys: [String] = []
        var verdict: String?
        do {
            let s = try SelfieDetails(jsonString: json)
            let r = s.responseData
            let name = r.documentDetail?.documentInfo.name ?? ""
            ui.fact("name", name.isEmpty ? ((s.userID ?? "").isEmpty ? userID : s.userID!) : name)
            if let img = r.documentDetail?.documentInfo.portraitImage { save(img, "selfie-document-portrait") }
            if let img = r.analyzeLivenessResponse?.video.autocaptureResult?.selfieImage { save(img, "selfie") }
            verdict = r.biometricResult.displayText.rawValue
            ui.fact("verdict", r.biometricResult.displayText.rawValue)
            ui.text(r.biometricResult.displayText.isSuccess ? Words.SelfieConfirmation.matched : Words.SelfieConfirmation.notMatched)
            ui.text(Words.SelfieConfirmation.status(r.biometricResult.displayText.rawValue))
            if let f = r.faceMatcherResponse { ui.fact("face_match_score", String(format: "%.2f%%", f.score * 100)) }
            if let l = r.analyzeLivenessResponse?.video.livenessResult.score { ui.fact("liveness_score", "\(l)%") }
            if let c = r.biometricResult.resultCriteria { ui.fact("criteria", c.rawValue) }
            for b in s.displayedButtons { ui.fact("button", "\(b.key.rawValue) — \(b.buttonText)"); keys.append(b.key.rawValue) }
        } catch {
            ui.fact("payload_error", "\(error)")
        }
        if mode == .idvPostLoginKYC {
            // Seed 000's own screen: one "Continue" that sends "true" (L1413).
            ui.fact("button", "\(SelfieConfirmationAnswer.continueString) — \(Words.SelfieConfirmation.kycContinue) (seed 000)")
            keys.append(SelfieConfirmationAnswer.continueString)
        }
        var exit = Exit.answered
        try askButton("selfie-confirmation", (keys + ["close"]).joined(separator: " | "), answers: answers) { a in
            if a == "close" {
                if mode == .idvPostLoginKYC { exit = .navigatedBack; return (nil, Self.or(""), { .none }) }
                return (nil, Self.or(Words.SelfieConfirmation.cancelFailed), { service.resetAuthState() })
            }
            return (Words.SelfieConfirmation.busy, Self.or(Words.SelfieConfirmation.confirmFailed), { service.setIDVSelfieConfirmation(a, mode) })
        }
        return (verdict, exit)
    }

    /// `getIDVBiometricOptInConsent` (seed 002 §8.5): the description for the mode, the four bullets,
    /// Approve / Reject. Answers: `approve`, `reject`, `close` (mode 8: `resetAuthState`; mode 9:
    /// back to the KYC screen with no SDK call, seed 000 L1570).
    func consent(userID: String, response: RDNAChallengeResponse, mode: RDNAChallengeOpMode, error: RDNAError, answers: AnswerSource,
                 service: IDVService) throws(AppExit) -> Exit {
        ui.screen("consent", Words.Consent.title)
        ui.fact("event", "getIDVBiometricOptInConsent")
        ui.fact("challenge_mode", mode.description)
        ui.fact("user", userID)
        challengeFacts(response: response, error: error)
        ui.fact("description", Words.Consent.description(mode))
        for b in Words.Consent.bullets { ui.text(b) }
        ui.buttons([Words.Consent.reject, Words.Consent.approve])
        var exit = Exit.answered
        try askButton("consent", "approve | reject | close", answers: answers) { a in
            switch a {
            case "approve": return (Words.Consent.busy, Self.or(Words.Consent.failed), { service.setIDVBiometricOptInConsent(true, mode) })
            case "reject": return (Words.Consent.busy, Self.or(Words.Consent.failed), { service.setIDVBiometricOptInConsent(false, mode) })
            case "close" where mode == .idvPostLoginKYC: exit = .navigatedBack; return (nil, Self.or(""), { .none })
            case "close": return (nil, Self.or(Words.SelfieConfirmation.cancelFailed), { service.resetAuthState() })
            default: return nil
            }
        }
        return exit
    }

    /// `onIDVOptInCapturedFrameConfirmation` (seed 004 §6.5): the frame (saved), Approve / Recapture / Cancel.
    func optInFrame(image: String, notice: ChallengeNotice?, answers: AnswerSource, service: IDVService) throws(AppExit) {
        ui.screen("optin-frame", Words.FrameConfirmation.title)
        ui.fact("event", "onIDVOptInCapturedFrameConfirmation")
        problems(notice)
        save(image, "optin-frame")
        if let p = notice.flatMap({ try? JSONDecoder().decode(JSONValue.self, from: Data($0.response.payloadJSON.utf8)) }),
           let score = p["liveness_score"]?.intValue {
            ui.fact("liveness_score", "\(score)%")
        }
        ui.buttons([Words.FrameConfirmation.approve, Words.FrameConfirmation.recapture, Words.FrameConfirmation.cancel])
        try askButton("optin-frame", "approve | recapture | cancel", answers: answers) { a in
            let failed = { (e: RDNAError) in Words.OptIn.confirmationFailed(e.errorString ?? "") }
            switch a {
            case "approve": return (nil, failed, { service.setIDVBiometricOptInConfirmation(.approved) })
            case "recapture": return (nil, failed, { service.setIDVBiometricOptInConfirmation(.recapture) })
            case "cancel": return (nil, failed, { service.setIDVBiometricOptInConfirmation(.cancel) })
            default: return nil
            }
        }
    }

    /// The password dialog of opt-in (mode 6) and opt-out (mode 7) (seed 004 §6.4,
    /// `PasswordValidationDialogViewController`): its title and message for the mode, the attempts
    /// badge (≤ 3), the error box (seed 004 L1163–L1169: the error, else a status other than 100),
    /// Verify & Continue / Cancel. Answers: the password, or `cancel` (IDVKit's `cancelPassword`:
    /// the flow ends with 240).
    func passwordDialog(userID: String, mode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError,
                        answers: AnswerSource, service: IDVService) throws(AppExit) {
        let (title, message) = mode == .biometricOptIn ? (Words.PasswordDialog.optInTitle, Words.PasswordDialog.optInMessage)
            : mode == .biometricOptOut ? (Words.PasswordDialog.optOutTitle, Words.PasswordDialog.optOutMessage)
            : (Words.PasswordDialog.defaultTitle, Words.PasswordDialog.defaultMessage)
        ui.screen("reauth-password", title)
        ui.text(message)
        ui.fact("event", "getPassword")
        ui.fact("challenge_mode", mode.description)
        ui.fact("user", userID)
        challengeFacts(attemptsLeft: attemptsLeft, response: response, error: error)
        if attemptsLeft >= 0, attemptsLeft <= 3 { ui.text(Words.PasswordDialog.attempts(attemptsLeft)) }
        if !error.isSuccess { ui.error(error.errorString ?? "") }
        else if response.status.statusCode != 100 { ui.error(response.status.statusMessage ?? Words.PasswordDialog.invalidPassword) }
        ui.text("(\(Words.PasswordDialog.placeholder))")
        ui.buttons([Words.PasswordDialog.cancel, Words.PasswordDialog.submit])
        try ask("reauth-password", "password | cancel", answers: answers) { a in
            a == "cancel" ? service.cancelPassword(mode) : service.setPassword(a, mode)
        }
    }

    /// Asks until a button's call is accepted (sync 0): `act` maps the answer to the button's busy
    /// title (shown while the SDK works, the codelabs' "…ing…"), the fallback sentence of its
    /// `showError` and the call; nil = not one of the buttons. A refused call is shown on this
    /// screen and the buttons come back.
    private func askButton(_ screen: String, _ hint: String, answers: AnswerSource,
                           _ act: (String) -> (busy: String?, failure: (RDNAError) -> String, call: () -> RDNAError)?) throws(AppExit) {
        while true {
            let a = try answers.answer(for: screen, hint: hint)
            guard let b = act(a) else { ui.error("not one of: \(hint)"); continue }
            if let busy = b.busy { ui.busy(busy) }
            let e = b.call()
            if e.isSuccess { return }
            ui.error("\(e.longErrorCode) \(b.failure(e))")
        }
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
