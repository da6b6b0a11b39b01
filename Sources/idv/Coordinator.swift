import Foundation
import IDVKit

/// One finished flow, for the `RESULT` lines and the summary.
struct FlowResult {
    let flow: String
    let event: String
    let error: Int
    let status: Int?
    let verdict: String?

    var line: String {
        "RESULT flow=\(flow) event=\(event) error=\(error) status=\(status.map(String.init) ?? "-") verdict=\(verdict ?? "-")"
    }
}

/// The codelabs' coordinator: turns each SDK event into the screen that handles it, tracks which
/// flow is running, and records how each flow ended. Runs on the app's callback queue.
final class Coordinator: @unchecked Sendable {
    // @unchecked: its mutable state is touched only on the app's one serial callback queue.
    let service: IDVService
    let ui: Terminal
    let answers: AnswerSource
    let screens: Screens
    private let done = DispatchSemaphore(value: 0)
    private(set) var exitCode: Int32 = 0
    private(set) var results: [FlowResult] = []
    /// The flow in progress (`activation`, `login`, `kyc`, `docscan`, `biometric-auth`, `template-status`, `optin`, `optout`).
    var flow = "start"
    var lastVerdict: String?
    /// The last challenge shown, re-shown after a failed request so the user can try again.
    private var lastChallenge: RDNAEvent?
    private var failuresInARow = 0

    init(service: IDVService, ui: Terminal, answers: AnswerSource, outDir: URL) {
        self.service = service
        self.ui = ui
        self.answers = answers
        screens = Screens(ui: ui, outDir: outDir)
    }

    /// Blocks until the app ends; returns the exit status.
    func wait() -> Int32 { done.wait(); return exitCode }

    func stop(_ code: Int32, _ message: String? = nil) {
        if let message { ui.line(code == 0 ? message : "idv: \(message)") }
        printSummary()
        exitCode = code
        done.signal()
    }

    func record(_ event: String, error: Int, status: Int?, verdict: String? = nil) {
        let r = FlowResult(flow: flow, event: event, error: error, status: status, verdict: verdict)
        results.append(r)
        ui.line(r.line)
    }

    func printSummary() {
        guard !results.isEmpty else { return }
        ui.line("\nSummary")
        ui.line("  " + ["flow", "event", "error", "status", "verdict"].map { $0.padding(toLength: 16, withPad: " ", startingAt: 0) }.joined())
        for r in results {
            let cols = [r.flow, r.event, String(r.error), r.status.map(String.init) ?? "-", r.verdict ?? "-"]
            ui.line("  " + cols.map { $0.count >= 16 ? $0 + " " : $0.padding(toLength: 16, withPad: " ", startingAt: 0) }.joined())
        }
    }

    /// Runs a screen's interaction; a script/input problem ends the app.
    private func interact(_ body: () throws(AppExit) -> Void) {
        do { try body() } catch { stop(error.code, error.message) }
    }

    // MARK: Event → screen

    /// The entry screen the running post-login flow was started from (its result comes back to it),
    /// the one waiting for its template status, and that status as last heard.
    private var entry: EntryScreen?
    private var entryReason: String?
    private var checkingTemplateFor: EntryScreen?
    private var templateExists: Bool?
    /// The notice (error, status) of the last challenge, re-shown with it after a failed request.
    private var lastNotice: ChallengeNotice?

    func handle(_ event: RDNAEvent, _ notice: ChallengeNotice? = nil) {
        if event.isChallenge { lastChallenge = event; lastNotice = notice; failuresInARow = 0 }
        switch event {
        case let .onInitialized(sid):
            ui.screen("initialized", "SDK ready")
            ui.fact("session_id", sid)
        case let .onInitializeError(e):
            ui.screen("initialize-error", "Could not start")
            ui.fact("error", "\(e.longErrorCode) \(e.errorString ?? "")")
            stop(1, "initialize failed with \(e.longErrorCode)")
        case let .getUser(r, e):
            if !e.isSuccess && flow != "start" { record("getUser", error: e.longErrorCode, status: r.status.code, verdict: lastVerdict) }
            flow = "start"; lastVerdict = nil
            interact { () throws(AppExit) in try screens.checkUser(response: r, error: e, answers: answers, service: service) }
        case let .getActivationCode(u, a, r, e):
            flow = "activation"
            interact { () throws(AppExit) in try screens.activationCode(userID: u, attemptsLeft: a, response: r, error: e, answers: answers, service: service) }
        case let .getPassword(u, m, a, r, e):
            if m == .verify && flow != "activation" { flow = "login" }
            if m == .biometricOptIn || m == .biometricOptOut {
                interact { () throws(AppExit) in
                    try screens.passwordDialog(userID: u, mode: m, attemptsLeft: a, response: r, error: e, answers: answers, service: service)
                }
            } else {
                interact { () throws(AppExit) in try screens.password(userID: u, mode: m, attemptsLeft: a, response: r, error: e, answers: answers, service: service) }
            }
        case let .getUserConsentForLDA(u, _):
            interact { () throws(AppExit) in try screens.ldaConsent(userID: u, answers: answers, service: service) }
        case let .onUserLoggedIn(u, s, _):
            if flow == "start" { flow = "login" }   // a login by device signature asks no password
            ui.screen("logged-in", Words.MFA.loggedIn)
            ui.fact("user", u)
            ui.fact("session_id", s)
            record("onUserLoggedIn", error: 0, status: 100, verdict: lastVerdict)
            dashboard()
        case let .onUserLoggedOff(u):
            ui.screen("logged-off", Words.MFA.loggedOff)
            ui.fact("user", u ?? "-")
            record("onUserLoggedOff", error: 0, status: 100)
            flow = "start"
        case .onAuthStateReset:
            ui.screen("reset", "Flow ended by resetAuthState")
            record("onAuthStateReset", error: 0, status: nil)
            dashboard()
        case let .onRequestFailed(api, e):
            ui.screen("request-failed", api)
            ui.fact("error", "\(e.longErrorCode) \(e.errorString ?? "")")
            record("onRequestFailed:\(api)", error: e.longErrorCode, status: nil)
            failuresInARow += 1
            if failuresInARow > 3 { return stop(1, "giving up after repeated failures") }
            // After a failed answer or initiation the SDK itself delivers what comes next (the same
            // challenge again with the error, or the flow's terminal event): wait for it.
            if Self.sdkDeliversFollowUp(api) { return }
            if let ch = lastChallenge, service.rdna.currentChallenge != nil { handle(ch, lastNotice) }
            else if service.rdna.isLoggedIn { dashboard() }
            else { stop(1, "no session to continue with") }
        case let .unknown(name, _):
            ui.screen("unknown", name)
            ui.fact("note", "this app does not know \(name); resetting the flow")
            service.resetAuthState()
        case let .getIDVDocumentScanProcessStartConfirmation(wf):
            if flow == "start" { flow = "activation" }
            interact { () throws(AppExit) in try screens.documentStart(workflow: wf, notice: notice, answers: answers, service: service) }
        case let .getIDVConfirmDocumentDetails(json, m):
            interact { () throws(AppExit) in try screens.documentDetails(json: json, mode: m, notice: notice, answers: answers, service: service) }
        case let .getIDVSelfieProcessStartConfirmation(wf):
            interact { () throws(AppExit) in try screens.selfieStart(workflow: wf, notice: notice, answers: answers, service: service) }
        case let .getIDVSelfieConfirmation(json, m):
            interact { () throws(AppExit) in
                let shown = try screens.selfieConfirmation(userID: service.rdna.currentChallenge?.userID ?? "", json: json, mode: m, notice: notice,
                                                           answers: answers, service: service)
                lastVerdict = shown.verdict
                if shown.exit == .navigatedBack { leftWithoutSDKCall() }
            }
        case let .getIDVBiometricOptInConsent(u, r, m, e):
            interact { () throws(AppExit) in
                if try screens.consent(userID: u, response: r, mode: m, error: e, answers: answers, service: service) == .navigatedBack {
                    leftWithoutSDKCall()
                }
            }
        case let .onIDVOptInCapturedFrameConfirmation(img):
            interact { () throws(AppExit) in try screens.optInFrame(image: img, notice: notice, answers: answers, service: service) }
        case let .onIDVAdditionalDocumentScan(u, json, s, m, e):
            let verdict = screens.documentScanResult(userID: u, json: json, status: s, error: e, mode: m)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: verdict)
            // Seed 003: the result's Done and the error alert's OK both lead back to the entry screen (L1433–L1443, L684–L709).
            if entry == .documentScan { openEntry(.documentScan) } else { dashboard() }
        case let .onIDVCheckUserBiometricTemplateStatus(u, _, s, e):
            if let waiting = checkingTemplateFor {
                // An entry screen's status check (seed 001 L788–L822, seed 004 L1110–L1126): the card, then the gated button.
                checkingTemplateFor = nil
                let exists = e.isSuccess && s.statusCode == 100
                templateExists = exists
                screens.templateCard(exists: exists, statusCode: e.isSuccess ? s.code : 0,
                                     statusMessage: e.isSuccess ? (s.statusMessage ?? "") : Words.TemplateStatus.errorMessage(e.errorString ?? ""))
                return prompt(waiting)
            }
            let verdict = s.statusCode == 100 ? "TEMPLATE_EXISTS" : s.statusCode == 600 ? "NO_TEMPLATE" : nil
            screens.templateStatusResult(userID: u, status: s, error: e)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: verdict)
            dashboard()
        case let .onIDVServerBiometricAuthenticationResult(u, json, s, e):
            let shown = screens.serverBiometricResult(userID: u, json: json, status: s, error: e)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: shown.verdict)
            // Seed 001: "Back to Dashboard" after a success; OK leaves the user on the screen, to try again (L1210–L1220).
            if shown.toDashboard { dashboard() } else { backToEntry(.serverBiometric, recheck: false) }
        case let .onIDVBiometricOptInStatus(u, json, s, m, e):
            let shown = screens.optInOutResult(optIn: true, userID: u, json: json, status: s, error: e, mode: m)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: shown.verdict ?? lastVerdict)
            backToEntry(.optIn, recheck: shown.recheck)
        case let .onIDVBiometricOptOutStatus(u, json, s, m, e):
            let shown = screens.optInOutResult(optIn: false, userID: u, json: json, status: s, error: e, mode: m)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: shown.verdict)
            backToEntry(.optOut, recheck: shown.recheck)
        case let .onIDVActivatedCustomerKYCResponse(u, s, e):
            screens.kycResult(userID: u, status: s, error: e)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: lastVerdict)
            // "Go to Dashboard" (seed 000 L994).
            dashboard()
        }
    }

    /// True for the calls after whose failure IDVKit delivers a follow-up callback (an answer to a
    /// challenge, a capture, an `initiate…`/`check…`); false for `resetAuthState`, `logOff`, the
    /// SDK's own LDA answer and the reports of callbacks this app does not implement.
    static func sdkDeliversFollowUp(_ api: String) -> Bool {
        if ["resetAuthState", "logOff", "deviceSignature"].contains(api) { return false }
        return api.hasPrefix("set") || api.hasPrefix("initiate") || api.hasPrefix("check") || api.hasSuffix("Capture")
            || api == "rescanIDVDocument" || api == "cancelPassword"
    }

    /// Seed 000 §1.5/§1.6: in KYC (mode 9) the selfie confirmation's and the consent's Close only
    /// navigate back to the KYC screen — no SDK call, no event, no alert. The open KYC is the
    /// server's to end when the next flow starts (IDVKit does not deliver that old run's end).
    private func leftWithoutSDKCall() {
        ui.fact("note", "back to the KYC screen without an SDK call (seed 000 L1443, L1570)")
        openEntry(.kyc)
    }

    /// The result of a flow started from `e` leads back to it: checking the template status again
    /// when the codelab does, else with the status it showed.
    private func backToEntry(_ e: EntryScreen, recheck: Bool) {
        guard entry == e else { return dashboard() }
        if recheck { openEntry(e) } else { screens.entry(e); prompt(e) }
    }

    // MARK: Entry screens (seeds 000, 001, 003, 004)

    /// Shows entry screen `e` (the side menu's item): its texts, then — for the screens gated on the
    /// template status — "Checking…" while the status is asked (the answer arrives as
    /// `onIDVCheckUserBiometricTemplateStatus`, then ``prompt(_:)``), else its start button at once.
    func openEntry(_ e: EntryScreen, reason: String? = nil) {
        entry = e
        if let reason { entryReason = reason }
        screens.entry(e)
        guard e.checksTemplate else { return prompt(e) }
        ui.busy(e.checkingTitle)
        checkingTemplateFor = e
        flow = e.rawValue
        let err = service.checkIDVUserBiometricTemplateStatus()
        if !err.isSuccess {
            // Seed 001 L777–L784 / seed 004 L1102–L1107: the status stays unknown (the button disabled) and an alert says why.
            checkingTemplateFor = nil
            templateExists = nil
            if e == .serverBiometric {
                ui.alert(Words.ServerBiometric.checkErrorTitle, Words.ServerBiometric.checkFailed(err.errorString ?? ""), buttons: [Words.Common.ok])
            } else {
                ui.alert(Words.Common.errorTitle, Words.Common.checkFailed(err.errorString ?? ""), buttons: [Words.Common.ok])
            }
            prompt(e)
        }
    }

    /// The entry screen's start button (gated) and what pressing it does: its busy title, the
    /// flow's initiation, a sync refusal shown as the codelab shows it (KYC: the error banner;
    /// the others: an alert) with the button back; `back` returns to the dashboard.
    private func prompt(_ e: EntryScreen) {
        interact { () throws(AppExit) in
            while try screens.askStart(e, templateExists: e.checksTemplate ? templateExists : nil, answers: answers) {
                ui.busy(e.busyTitle)
                flow = e.rawValue
                lastVerdict = nil
                let err: RDNAError
                switch e {
                case .kyc: err = service.initiateActivatedCustomerKYC(entryReason ?? Words.KYC.reason)
                case .documentScan: err = service.initiateIDVAdditionalDocumentScan(entryReason ?? Words.DocumentScan.reason)
                case .serverBiometric: err = service.initiateIDVServerBiometricAuthentication(entryReason ?? Words.ServerBiometric.reason)
                case .optIn: err = service.initiateIDVBiometricOptIn()
                case .optOut: err = service.initiateIDVBiometricOptOut()
                }
                if err.isSuccess { return }
                let why = err.errorString ?? ""
                switch e {
                case .kyc: ui.error(why.isEmpty ? Words.KYC.initiateFailed : why)                                            // seed 000 L1031
                case .documentScan: ui.alert(Words.DocumentScan.errorTitle, why.isEmpty ? Words.DocumentScan.startFailed : why, buttons: [Words.DocumentScan.ok])   // seed 003 L752–L756
                case .serverBiometric: ui.alert(Words.ServerBiometric.errorTitle, Words.ServerBiometric.initiateFailed(why), buttons: [Words.Common.ok])      // seed 001 L869
                case .optIn: ui.alert(Words.Common.errorTitle, Words.OptIn.initiateFailed(why), buttons: [Words.Common.ok])                                  // seed 004 L1147
                case .optOut: ui.alert(Words.Common.errorTitle, Words.OptOut.initiateFailed(why), buttons: [Words.Common.ok])                                // seed 004 L1529
                }
            }
            entry = nil
            dashboard()
        }
    }

    /// The post-login menu (the codelabs' side menu): each item opens its entry screen.
    func dashboard() {
        lastVerdict = nil
        interact { () throws(AppExit) in
            while true {
                ui.screen("dashboard", Words.Menu.title)
                for item in [Words.Menu.kyc, Words.Menu.documentScan, Words.Menu.biometricAuthentication, Words.Menu.optIn, Words.Menu.optOut,
                             Words.Menu.templateStatus, Words.Menu.logOff] {
                    ui.text("• \(item)")
                }
                let a = try answers.answer(for: "dashboard", hint: "kyc [REASON] | docscan [REASON] | biometric-auth [REASON] | optin | optout | template-status | logoff | quit")
                let parts = a.split(separator: " ", maxSplits: 1).map(String.init)
                let reason = parts.count > 1 ? parts[1] : nil
                switch parts.first ?? "" {
                case "kyc": return openEntry(.kyc, reason: reason ?? Words.KYC.reason)
                case "docscan": return openEntry(.documentScan, reason: reason ?? Words.DocumentScan.reason)
                case "biometric-auth": return openEntry(.serverBiometric, reason: reason ?? Words.ServerBiometric.reason)
                case "optin": return openEntry(.optIn)
                case "optout": return openEntry(.optOut)
                case "template-status":
                    flow = "template-status"
                    entry = nil
                    let e = service.checkIDVUserBiometricTemplateStatus()
                    if e.isSuccess { return }
                    ui.error("\(e.longErrorCode) \(e.errorString ?? "")")
                case "logoff":
                    flow = "logoff"
                    entry = nil
                    let e = service.logOff("")
                    if e.isSuccess { return }
                    ui.error("\(e.longErrorCode) \(e.errorString ?? "")")
                case "quit": return stop(0, "bye")
                default: ui.error("unknown command '\(a)'")
                }
            }
        }
    }
}
