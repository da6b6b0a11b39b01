import Foundation
import IDVCore
import IDVKit
import XCTest
import IDVTestSupport

/// The sample app's codelab screens (issue #35), scripted against a real `idvd` (the document
/// reader, FaceKit and the dlib models): the entry screens with the codelabs' texts and busy
/// titles, the template-status gating of seeds 001 and 004, Recapture that rescans in KYC, errors
/// shown on the screen they happened on (an unusable page, a refused answer, a lost network), the
/// codelabs' alerts, seed 000's Close without an SDK call followed by a new KYC, seed 000's
/// Continue after a failed match, and the opt-in password dialog's Cancel.
final class SampleAppCodelabScreenTests: XCTestCase {
    let password = "Katie pass 2026"

    func run(_ server: IDVDServer, _ script: String, env: [String: String] = [:], timeout: TimeInterval = 300) throws -> (status: Int32, out: String) {
        let file = server.dir.appendingPathComponent("script-\(UUID().uuidString).txt")
        try script.write(to: file, atomically: true, encoding: .utf8)
        return try SampleAppTests.runIDV(["--server", server.url.absoluteString, "--script", file.path, "--out", server.dir.appendingPathComponent("out").path,
                                          "--timeout", "120"], env: env, timeout: timeout)
    }

    func results(_ out: String) -> [String] {
        out.split(separator: "\n").filter { $0.hasPrefix("RESULT ") }.map { String($0.dropFirst(7)) }
    }

    /// `texts` appear in `out` in this order.
    func assertInOrder(_ out: String, _ texts: [String], file: StaticString = #filePath, line: UInt = #line) {
        var rest = Substring(out)
        for t in texts {
            guard let r = rest.range(of: t) else {
                XCTFail("missing, or out of order: '\(t)'\n\(out)", file: file, line: line)
                return
            }
            rest = rest[r.upperBound...]
        }
    }

    func testEntryScreensGatingAlertsRecaptureAndVisibleErrors() throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("katie")
        let doc = try server.specimen()
        let live = Paths.fixtures.appendingPathComponent("katie_live").path
        let notAPage = Paths.fixtures.appendingPathComponent("katie_portrait.jpg").path
        let r = try run(server, """
        check-user: katie
        activation-code: \(code)
        set-password: \(password)
        # Seed 001: no template yet, Start Authentication is disabled.
        dashboard: biometric-auth
        biometric-auth: start
        biometric-auth: back
        # Seed 004: Start Opt-Out is disabled without a template; opt-in is not, and its password dialog can be cancelled.
        dashboard: optout
        optout: back
        dashboard: optin
        optin: start
        reauth-password: cancel
        optin: start
        reauth-password: \(password)
        selfie-start: capture \(live)
        optin-frame: approve
        optin: back
        # Seed 000: the KYC screen; an unusable page; Recapture; a refused answer; the consent's Close without an SDK call.
        dashboard: kyc
        kyc: start
        document-start: scan \(notAPage)
        document-start: scan \(doc.path)
        document-details: recapture
        document-start: scan \(doc.path)
        document-details: confirm
        selfie-start: capture \(live)
        selfie-confirmation: reinit-idv-document-scan-not-offered
        selfie-confirmation: continue-flow
        consent: close
        kyc: start
        document-start: cancel
        # Seed 003 and its result screen; seed 001 with the template now stored.
        dashboard: docscan
        docscan: start
        document-start: scan \(doc.path)
        docscan: back
        dashboard: biometric-auth
        biometric-auth: start
        selfie-start: capture \(live)
        dashboard: quit
        """)
        XCTAssertEqual(r.status, 0, r.out)
        let out = r.out
        // Seed 001's gate and card.
        assertInOrder(out, ["── biometric-auth ── Biometric Authentication", "[Checking Template Status...]", "⚠️ Biometric Template Status",
                            "No biometric template found on the server. Please complete biometric opt-in first.",
                            "Status: No biometric template exists for the user (Code: 600)", "(Start Authentication)",
                            "biometric-auth> start", "error: Start Authentication is disabled: Please complete biometric opt-in first"])
        // Seed 004: opt-out disabled, opt-in's dialog, its Cancel, then the opt-in, then the screen checks again.
        assertInOrder(out, ["── optout ── Biometric Opt-Out", "[Checking Status...]", "(Start Opt-Out)",
                            "── optin ── Biometric Opt-In", "[Start Opt-In]", "optin> start", "[Processing...]",
                            "── reauth-password ── 🔐 Biometric Opt-In Authentication", "Please verify your password to create biometric template",
                            "3 attempt(s) remaining", "[Cancel] [Verify & Continue]", "reauth-password> cancel", "sync: cancelPassword → 0",
                            "── alert ── Opt-In Failed", "User Cancelled",
                            "── alert ── Success", "Biometric template stored successfully! You can now use biometric authentication.",
                            "✅ Biometric Template Status", "(Start Opt-In)"])
        // Seed 000's screen and the steps, the errors where they happened, Recapture, Close, a new KYC without the old alert.
        assertInOrder(out, ["── kyc ── Activated Customer KYC", "Complete your identity verification", "What is KYC?",
                            "KYC (Know Your Customer) is a verification process to confirm your identity.",
                            "1. Document Scan", "2. Confirm Document Details", "3. Selfie Capture", "4. Biometric Consent",
                            "• Have a valid government-issued ID ready", "• Allow camera permissions when prompted",
                            "[Start KYC Verification]", "kyc> start", "[Initiating...]",
                            "guideline: KYC verification process. Hold document steady and avoid glare for best results.",
                            "[Starting Scan...]",
                            "── document-start", "error: 1031 No machine-readable zone",
                            "── document-details ── Confirm Document Details", "Document Number: GC3664952", "[Close] [Recapture] [Confirm]",
                            "document-details> recapture", "sync: rescanIDVDocument → 0", "── document-start",
                            "── document-details", "document-details> confirm",
                            "guideline: Post-login KYC process - capture selfie for identity verification.", "[Starting Capture...]",
                            "── selfie-confirmation", "name: JOHN GARCIA LOPEZ", "✓ Selfie matches with document image", "Status: MATCHED",
                            "── request-failed ── setIDVSelfieConfirmation", "── selfie-confirmation", "error: 1020",
                            "── consent ── Biometric Consent", "• Your biometric data will be encrypted and stored securely",
                            "• Rejecting will not affect your current authentication", "consent> close",
                            "note: back to the KYC screen without an SDK call", "── kyc ── Activated Customer KYC", "kyc> start",
                            "── document-start", "document-start> cancel",
                            "── alert ── Error", "KYC verification failed: User Cancelled", "[Go to Dashboard]"])
        // The new KYC after the Close shows no alert of the run that was left.
        let afterClose = out.components(separatedBy: "consent> close").last ?? ""
        let beforeCancel = afterClose.components(separatedBy: "document-start> cancel").first ?? ""
        XCTAssertFalse(beforeCancel.contains("── alert"), "an alert before the new KYC's first screen:\n\(beforeCancel)")
        XCTAssertFalse(beforeCancel.contains("── kyc-result"), beforeCancel)
        XCTAssertTrue(beforeCancel.contains("IDVKit: the server ended a flow the app had left open (onIDVActivatedCustomerKYCResponse, 240)"),
                      "IDVKit logs the run it did not deliver:\n\(beforeCancel)")
        // Seed 003's result screen with its NFC rows and Done, back to its entry screen.
        assertInOrder(out, ["── docscan ── Additional Document Scan", "[Start Additional Document Scan]", "[Starting...]",
                            "── docscan-result ── Document Scan Result", "Document Status: OK", "Category: MRZ",
                            "Is NFC Document: No", "NFC Scan Status: NOT DONE", "Reason: ", "[Done]", "── docscan ── Additional Document Scan"])
        // Seed 001 with the template: enabled, its success alert, Back to Dashboard.
        assertInOrder(out, ["✅ Biometric Template Status", "[Start Authentication]", "[Authenticating...]",
                            "guideline: Post-login selfie biometric - capture selfie for biometric authentication.",
                            "── alert ── ✅ Authentication Success", "Biometric Result: MATCHED", "Use Case: RDNA_IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC",
                            "Transaction ID: txn_", "[Back to Dashboard]", "── dashboard"])
        XCTAssertEqual(results(out).filter { $0.contains("onIDVActivatedCustomerKYCResponse") },
                       ["flow=kyc event=onIDVActivatedCustomerKYCResponse error=240 status=400 verdict=-"], "one KYC result: the cancel, none for the run left")
        XCTAssertFalse(out.contains(password), "passwords are never printed")
    }

    /// Seed 000's KYC selfie screen has one button, Continue, and sends "true": after a failed match
    /// (a second person) it ends the KYC unverified — the codelab's error alert — instead of looping.
    func testSeed000ContinueAfterAFailedMatchEndsTheKYC() throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("katie")
        let doc = try server.specimen()
        let r = try run(server, """
        check-user: katie
        activation-code: \(code)
        set-password: \(password)
        dashboard: kyc
        kyc: start
        document-start: scan \(doc.path)
        document-details: confirm
        selfie-start: capture \(Paths.fixtures.appendingPathComponent("aoc_live").path)
        selfie-confirmation: true
        dashboard: quit
        """)
        XCTAssertEqual(r.status, 0, r.out)
        assertInOrder(r.out, ["✗ Selfie does not match with document image", "Status: NOT_MATCHED", "selfie-confirmation> true",
                              "── alert ── Error", "KYC verification failed: Identity not verified: NOT_MATCHED", "[Go to Dashboard]"])
        XCTAssertEqual(results(r.out).last, "flow=kyc event=onIDVActivatedCustomerKYCResponse error=0 status=400 verdict=NOT_MATCHED", r.out)
        XCTAssertEqual(r.out.components(separatedBy: "── selfie-confirmation").count - 1, 1, "the selfie result is shown once, not again and again")
    }

    /// A capture the server rejects (opt-in: a printed photo held to the camera is not live) brings
    /// the selfie start back with why — the print moved by a hand shows no sign of life, but its
    /// texture is a camera photo's, so the policy is unsure: 1066 (retake), 1066 again with an active
    /// challenge the print cannot answer, then 400 LIVENESS_FAILED (retry hints too when there are
    /// any; never attack cues) — and its Close ends the opt-in with seed 004's "Opt-In Failed".
    func testARejectedSelfieCaptureIsToldOnTheSelfieScreen() throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("katie")
        let attack = try server.heldPhotoAttack()
        let r = try run(server, """
        check-user: katie
        activation-code: \(code)
        set-password: \(password)
        dashboard: optin
        optin: start
        reauth-password: \(password)
        selfie-start: capture \(attack.path)
        selfie-start: capture \(attack.path)
        selfie-start: capture \(attack.path)
        selfie-start: cancel
        optin: back
        dashboard: quit
        """)
        XCTAssertEqual(r.status, 0, r.out)
        assertInOrder(r.out, ["selfie-start> capture", "[Starting Capture...]", "── selfie-start ── Take a selfie", "error: 1066 ",
                              "selfie-start> capture", "error: 1066 ", "selfie-start> capture", "error: 400 LIVENESS_FAILED",
                              "selfie-start> cancel", "── alert ── Opt-In Failed", "User Cancelled", "── optin"])
        // Each 1066 says what it asks: the plain retake its guidance; the one whose upload request
        // carries a liveness challenge (its actions shown on the screen) one more check under those
        // movements — never the plain retake's sentence twice.
        let asked = r.out.components(separatedBy: "── selfie-start ──").dropFirst().filter { $0.contains("error: 1066 ") }
        XCTAssertFalse(asked.isEmpty, r.out)
        for screen in asked {
            let challenged = screen.contains("  liveness_challenge: ")
            let sentence = challenged ? IDVErrorCode.selfieRetakeChallengeMessage : IDVErrorCode.selfieRetake.message
            XCTAssertTrue(screen.contains("  error: 1066 \(sentence)\n"), screen)
        }
        XCTAssertEqual(asked.filter { $0.contains("  liveness_challenge: ") }.count, 1, "the print is sent on to one active challenge: \(r.out)")
    }

    /// The server goes away while a screen is answered: the same screen comes back saying so (1028).
    /// Interactive mode (one answer per prompt on stdin), so the test stops the server between two answers.
    func testALostNetworkIsToldOnTheScreen() throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("katie")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Paths.binary("idv"))
        p.arguments = ["--server", server.url.absoluteString, "--timeout", "5", "--out", server.dir.appendingPathComponent("out").path]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = output
        final class Seen: @unchecked Sendable { var text = "" }
        let lock = NSLock()
        let box = Seen()
        output.fileHandleForReading.readabilityHandler = { h in
            let d = h.availableData
            lock.withLock { box.text += String(decoding: d, as: UTF8.self) }
        }
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        /// Waits until the app shows `prompt` for the `n`th time, then answers `answer` (nil: ends the input).
        func answer(_ prompt: String, _ n: Int = 1, _ answer: String?, before: () -> Void = {}, file: StaticString = #filePath, line: UInt = #line) {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, lock.withLock({ box.text.components(separatedBy: prompt).count - 1 }) < n { usleep(50_000) }
            guard lock.withLock({ box.text.components(separatedBy: prompt).count - 1 }) >= n else {
                return XCTFail("the app never showed '\(prompt)' ×\(n):\n\(lock.withLock { box.text })", file: file, line: line)
            }
            before()
            if let answer { input.fileHandleForWriting.write(Data((answer + "\n").utf8)) } else { try? input.fileHandleForWriting.close() }
        }
        answer("check-user> ", 1, "katie")
        answer("activation-code> ", 1, code)
        answer("set-password> ", 1, password)
        answer("dashboard> ", 1, "docscan")
        answer("docscan> ", 1, "start")
        // The server goes away while the document start is on screen; the scan cannot reach it.
        answer("document-start> ", 1, "scan \(Paths.fixtures.appendingPathComponent("katie_portrait.jpg").path)", before: { server.stop() })
        answer("document-start> ", 2, nil)
        p.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        let out = lock.withLock { box.text }
        assertInOrder(out, ["document-start> ", "── request-failed ── setIDVDocumentScanProcessStartConfirmation", "error: 1028",
                            "── document-start", "error: 1028", "document-start> "])
    }
}
