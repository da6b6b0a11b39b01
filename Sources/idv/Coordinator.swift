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

    func handle(_ event: RDNAEvent) {
        if event.isChallenge { lastChallenge = event; failuresInARow = 0 }
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
            interact { () throws(AppExit) in try screens.password(userID: u, mode: m, attemptsLeft: a, response: r, error: e, answers: answers, service: service) }
        case let .getUserConsentForLDA(u, _):
            interact { () throws(AppExit) in try screens.ldaConsent(userID: u, answers: answers, service: service) }
        case let .onUserLoggedIn(u, s, _):
            if flow == "start" { flow = "login" }   // a login by device signature asks no password
            ui.screen("logged-in", "Welcome")
            ui.fact("user", u)
            ui.fact("session_id", s)
            record("onUserLoggedIn", error: 0, status: 100, verdict: lastVerdict)
            dashboard()
        case let .onUserLoggedOff(u):
            ui.screen("logged-off", "Logged off")
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
            if let ch = lastChallenge, service.rdna.currentChallenge != nil { handle(ch) }
            else if service.rdna.isLoggedIn { dashboard() }
            else { stop(1, "no session to continue with") }
        case let .unknown(name, _):
            ui.screen("unknown", name)
            ui.fact("note", "this app does not know \(name); resetting the flow")
            service.resetAuthState()
        case let .getIDVDocumentScanProcessStartConfirmation(wf):
            if flow == "start" { flow = "activation" }
            interact { () throws(AppExit) in try screens.documentStart(workflow: wf, answers: answers, service: service) }
        case let .getIDVConfirmDocumentDetails(json, m):
            interact { () throws(AppExit) in try screens.documentDetails(json: json, mode: m, answers: answers, service: service) }
        case let .getIDVSelfieProcessStartConfirmation(wf):
            interact { () throws(AppExit) in try screens.selfieStart(workflow: wf, answers: answers, service: service) }
        case let .getIDVSelfieConfirmation(json, m):
            interact { () throws(AppExit) in lastVerdict = try screens.selfieConfirmation(json: json, mode: m, answers: answers, service: service) }
        case let .getIDVBiometricOptInConsent(u, r, m, e):
            interact { () throws(AppExit) in try screens.consent(userID: u, response: r, mode: m, error: e, answers: answers, service: service) }
        case let .onIDVOptInCapturedFrameConfirmation(img):
            interact { () throws(AppExit) in try screens.optInFrame(image: img, answers: answers, service: service) }
        case let .onIDVAdditionalDocumentScan(u, json, s, m, e):
            let verdict = screens.result("docscan-result", "Additional document scan", userID: u, json: json, status: s, error: e, mode: m)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: verdict)
            dashboard()
        case let .onIDVCheckUserBiometricTemplateStatus(u, json, s, e):
            let verdict = s.statusCode == 100 ? "TEMPLATE_EXISTS" : s.statusCode == 600 ? "NO_TEMPLATE" : nil
            _ = screens.result("template-status", "Biometric template status", userID: u, json: json, status: s, error: e, mode: nil)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: verdict)
            dashboard()
        case let .onIDVServerBiometricAuthenticationResult(u, json, s, e):
            let verdict = screens.result("biometric-auth-result", "Server biometric authentication", userID: u, json: json, status: s, error: e, mode: nil)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: verdict)
            dashboard()
        case let .onIDVBiometricOptInStatus(u, json, s, m, e):
            let verdict = screens.result("optin-result", "Biometric opt-in", userID: u, json: json, status: s, error: e, mode: m)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: verdict ?? lastVerdict)
            dashboard()
        case let .onIDVBiometricOptOutStatus(u, json, s, m, e):
            let verdict = screens.result("optout-result", "Biometric opt-out", userID: u, json: json, status: s, error: e, mode: m)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: verdict)
            dashboard()
        case let .onIDVActivatedCustomerKYCResponse(u, s, e):
            _ = screens.result("kyc-result", "Activated customer KYC", userID: u, json: "{}", status: s, error: e, mode: .idvPostLoginKYC)
            record(event.name, error: e.longErrorCode, status: s.code, verdict: lastVerdict)
            dashboard()
        }
    }

    /// True for the calls after whose failure IDVKit delivers a follow-up callback (an answer to a
    /// challenge, a capture, an `initiate…`/`check…`); false for `resetAuthState`, `logOff`, the
    /// SDK's own LDA answer and the reports of callbacks this app does not implement.
    static func sdkDeliversFollowUp(_ api: String) -> Bool {
        if ["resetAuthState", "logOff", "deviceSignature"].contains(api) { return false }
        return api.hasPrefix("set") || api.hasPrefix("initiate") || api.hasPrefix("check") || api.hasSuffix("Capture")
    }

    /// The post-login menu.
    func dashboard() {
        lastVerdict = nil
        interact { () throws(AppExit) in
            while true {
                ui.screen("dashboard", "Logged in — what next?")
                let a = try answers.answer(for: "dashboard", hint: "kyc REASON | docscan REASON | biometric-auth REASON | template-status | optin | optout | logoff | quit")
                let parts = a.split(separator: " ", maxSplits: 1).map(String.init)
                let reason = parts.count > 1 ? parts[1] : "sample app"
                let e: RDNAError
                switch parts.first ?? "" {
                case "kyc": flow = "kyc"; e = service.initiateActivatedCustomerKYC(reason)
                case "docscan": flow = "docscan"; e = service.initiateIDVAdditionalDocumentScan(reason)
                case "biometric-auth": flow = "biometric-auth"; e = service.initiateIDVServerBiometricAuthentication(reason)
                case "template-status": flow = "template-status"; e = service.checkIDVUserBiometricTemplateStatus()
                case "optin": flow = "optin"; e = service.initiateIDVBiometricOptIn()
                case "optout": flow = "optout"; e = service.initiateIDVBiometricOptOut()
                case "logoff": flow = "logoff"; e = service.logOff("")
                case "quit": return stop(0, "bye")
                default: ui.fact("error", "unknown command '\(a)'"); continue
                }
                if e.isSuccess { return }
                ui.fact("error", "\(e.longErrorCode) \(e.errorString ?? "")")
            }
        }
    }
}
