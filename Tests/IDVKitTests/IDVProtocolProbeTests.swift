import Foundation
import IDVKit
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVHTTP
import IDVStoreSQLite
import XCTest

/// A protocol probe for the IDV part of the SDK until the workflow engine lands: a REAL `idvd`
/// HTTP server (IDVServerApp, SQLite, libmicrohttpd, the flow engine) with ONE test-only flow
/// registered under the KYC flow name. The flow checks the SDK's answers exactly as WireMapping
/// documents them (routes, payload keys, base64 images) and walks the seed-000 challenge sequence;
/// its verdicts are fixed test data, NOT biometrics. The real flows replace it in the server.
struct ProtocolProbeKYCFlow: Flow {
    enum State: String, Codable, Sendable { case document, pages, details, selfie, frames, confirm, consent }
    var name: String { "idv.postlogin.kyc" }
    var startableByClient: Bool { true }
    var workflow: IDVWorkflow? { .postLoginKYC }
    static let mode = ChallengeOpMode.idvPostLoginKYC.rawValue

    func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        guard input["reason"]?.stringValue == "annual review" else { throw IDVError(.malformedRequest, "payload.reason missing") }
        return .ask(.document, ChallengeSpec(name: WireName.getIDVDocumentScanProcessStartConfirmation, mode: Self.mode, workflow: 6, attemptsLeft: 3))
    }

    static func isJPEG(_ b64: String?) -> Bool {
        guard let b64, let d = Data(base64Encoded: b64) else { return false }
        return d.starts(with: [0xFF, 0xD8, 0xFF])
    }

    func end(_ facts: Facts, code: Int, status: Int) -> Transition<State> {
        .finish(FlowResult(outcome: code == 0 ? .completed : .cancelled,
                           event: WireEvent(name: "onIDVActivatedCustomerKYCResponse", userID: facts.session.userID,
                                            error: code == 0 ? .none : IDVError(longErrorCode: code, shortErrorCode: 1, errorString: "User Cancelled"),
                                            status: RequestStatus(statusCode: status, statusMessage: status == 100 ? "Success" : "Cancelled")),
                           errorCode: code))
    }

    func subject(_ state: State, input: JSONValue?) -> String? { nil }

    /// The SDK's answers checked exactly as WireMapping documents them (1001 otherwise).
    func parse(_ state: State, answer: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> JSONValue {
        let p = answer.payload
        switch state {
        case .pages where p["cancel"]?.boolValue != true:
            guard let pages = p["pages"]?.arrayValue, pages.count == 1,
                  pages[0]["page_index"]?.intValue == 0, Self.isJPEG(pages[0]["image"]?.stringValue) else {
                throw IDVError(.malformedRequest, "pages")
            }
        case .details:
            guard p["is_confirm"]?.boolValue == true else { throw IDVError(.malformedRequest, "is_confirm") }
        case .frames where p["cancel"]?.boolValue != true:
            guard p["fps"]?.doubleValue == 10,
                  let frames = p["frames"]?.arrayValue, frames.count == 30, frames.allSatisfy({ Self.isJPEG($0.stringValue) }),
                  p["meta_data"] == ["sdk": "IDVKit", "sdk_version": .string(IDVKit.version), "platform": "linux", "camera": "front",
                                     "frame_count": 30, "fps": 10] else {
                throw IDVError(.malformedRequest, "frames")
            }
        case .confirm:
            guard p["action"]?.stringValue == "continue-flow" else { throw IDVError(.actionNotOffered) }
        case .consent:
            guard p["is_opt_in"]?.boolValue != nil else { throw IDVError(.malformedRequest, "is_opt_in") }
        default:
            break
        }
        return p
    }

    func reduce(_ state: State, input p: JSONValue, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        switch state {
        case .document:
            guard p["is_confirm"]?.boolValue == true else { return end(facts, code: 240, status: 400) }
            return .ask(.pages, ChallengeSpec(name: "uploadIDVDocumentPages", mode: Self.mode, workflow: 6, attemptsLeft: 3, payload: ["max_pages": 2]))
        case .pages:
            if p["cancel"]?.boolValue == true { return end(facts, code: 240, status: 400) }
            let pages = p["pages"]?.arrayValue ?? []
            let details: JSONValue = ["response_data": ["document_info": ["surname": "HILL", "given_name": "KATIE", "document_number": "L898902C3",
                                                                          "issuing_country": "UTO", "document_type": "PASSPORT",
                                                                          "portrait_image": pages[0]["image"]!],
                                                        "document_pages": .array(pages), "checks_performed": [["check_name": "MRZ check digits", "result": "PASSED"]],
                                                        "errors": [], "warnings": [], "overall_status": "VALID"]]
            return .ask(.details, ChallengeSpec(name: WireName.getIDVConfirmDocumentDetails, mode: Self.mode, workflow: 6, attemptsLeft: 3, payload: details))
        case .details:
            return .ask(.selfie, ChallengeSpec(name: WireName.getIDVSelfieProcessStartConfirmation, mode: Self.mode, workflow: 6, attemptsLeft: 3))
        case .selfie:
            guard p["is_confirm"]?.boolValue == true, p["use_back_camera"]?.boolValue == false else { return end(facts, code: 240, status: 400) }
            return .ask(.frames, ChallengeSpec(name: "uploadIDVSelfieFrames", mode: Self.mode, workflow: 6, attemptsLeft: 3, payload: ["max_frames": 150]))
        case .frames:
            if p["cancel"]?.boolValue == true { return end(facts, code: 240, status: 400) }
            let frames = p["frames"]?.arrayValue ?? []
            let selfie: JSONValue = ["response_data": ["biometric_result": ["display_text": "MATCHED", "result_criteria": "FACE_MATCH"],
                                                       "face_matcher_response": ["score": 0.91],
                                                       "analyze_liveness_response": ["video": ["liveness_result": ["score": 88],
                                                                                               "autocapture_result": ["selfie_image": frames[15]]]]],
                                     "action_buttons": ["success_button": [["button_text": "Continue", "key": "continue-flow"]],
                                                        "failure_button": [["button_text": "Recapture Selfie", "key": "reinit-idv-selfie"]]]]
            return .ask(.confirm, ChallengeSpec(name: WireName.getIDVSelfieConfirmation, mode: Self.mode, workflow: 6, attemptsLeft: 3, payload: selfie))
        case .confirm:
            return .ask(.consent, ChallengeSpec(name: WireName.getIDVBiometricOptInConsent, mode: Self.mode, workflow: 6, attemptsLeft: 1))
        case .consent:
            return end(facts, code: 0, status: 100)
        }
    }
}

final class IDVProtocolProbeTests: XCTestCase {
    static func startServer() throws -> (IDVServerApp, URL, String, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvkit-probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var config = ServerConfig()
        config.port = 0
        config.dbPath = dir.appendingPathComponent("idvd.sqlite").path
        config.engine.argon2OpsLimit = 1
        config.engine.argon2MemLimitKiB = 8
        config.logRequests = false
        config.shutdownGraceSeconds = 1
        // The key file beside the test database, in the folder the tests remove (not ~/.local/state).
        let store = try SQLiteStore(path: config.dbPath, keyFile: dir.appendingPathComponent("idvd.key").path)
        var registry = FlowRegistry.standard()
        registry.register(ProtocolProbeKYCFlow())
        let app = IDVServerApp(config: config, store: store, registry: registry, crypto: Sodium())
        let port = try app.start()
        let code = try Admin(store: store, config: config, crypto: Sodium()).createUser("katie", activationRequiresIDV: false).activationCode
        return (app, URL(string: "http://127.0.0.1:\(port)")!, code, dir)
    }

    /// Logs in (activation) through the async API.
    func activate(_ sdk: RDNA, _ url: URL, _ code: String) async throws {
        _ = try await sdk.asyncAPI.initialize(RDNAConfiguration(serverURL: url))
        _ = try await sdk.asyncAPI.setUser("katie")
        _ = try await sdk.asyncAPI.setActivationCode(code)
        let ev = try await sdk.asyncAPI.setPassword("Katie pass 1", challengeMode: .set)
        XCTAssertEqual(ev.last?.name, "onUserLoggedIn")
    }

    func testKYCSequenceThroughTheAsyncAPIWithUploads() async throws {
        let (app, url, code, dir) = try Self.startServer()
        defer { app.stop(); try? FileManager.default.removeItem(at: dir) }
        let sdk = RDNA()
        try await activate(sdk, url, code)
        sdk.setDocumentCaptureProvider(ImageFileDocumentCapture(pageFiles: [Paths.fixtures.appendingPathComponent("katie_portrait.jpg")]))
        sdk.setSelfieCaptureProvider(FrameFolderSelfieCapture(folder: Paths.fixtures.appendingPathComponent("katie_live")))
        let api = sdk.asyncAPI

        var ev = try await api.initiateActivatedCustomerKYC(reason: "annual review")
        XCTAssertEqual(ev, [.getIDVDocumentScanProcessStartConfirmation(idvWorkflow: .postLoginKYC)])
        // The wrong answer for the current challenge is refused locally.
        do { _ = try await api.setIDVConfirmDocumentDetails(true, challenge: .idvPostLoginKYC); XCTFail() } catch { XCTAssertEqual(error.longErrorCode, 1002) }
        ev = try await api.setIDVDocumentScanProcessStartConfirmation(true, idvWorkflow: .postLoginKYC)
        guard case let .getIDVConfirmDocumentDetails(json, mode)? = ev.last else { return XCTFail("\(ev)") }
        XCTAssertEqual(mode, .idvPostLoginKYC)
        let details = try DocumentDetails(jsonString: json)
        XCTAssertEqual(details.responseData.overallStatus, .valid)
        XCTAssertEqual(details.responseData.documentPages.first?.image,
                       try Data(contentsOf: Paths.fixtures.appendingPathComponent("katie_portrait.jpg")).base64EncodedString())
        ev = try await api.setIDVConfirmDocumentDetails(true, challenge: .idvPostLoginKYC)
        XCTAssertEqual(ev, [.getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginKYC)])
        ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginKYC)
        guard case let .getIDVSelfieConfirmation(sj, _)? = ev.last else { return XCTFail("\(ev)") }
        let selfie = try SelfieDetails(jsonString: sj)
        XCTAssertEqual(selfie.responseData.biometricResult.displayText.rawValue, "MATCHED")
        XCTAssertEqual(selfie.displayedButtons.map(\.key.rawValue), ["continue-flow"])
        ev = try await api.setIDVSelfieConfirmation("continue-flow", challenge: .idvPostLoginKYC)
        guard case .getIDVBiometricOptInConsent(_, _, .idvPostLoginKYC, _)? = ev.last else { return XCTFail("\(ev)") }
        ev = try await api.setIDVBiometricOptInConsent(true, challenge: .idvPostLoginKYC)
        guard case let .onIDVActivatedCustomerKYCResponse("katie", status, error)? = ev.last else { return XCTFail("\(ev)") }
        XCTAssertEqual(status.statusCode, 100)
        XCTAssertEqual(error.longErrorCode, 0)
        XCTAssertNil(sdk.currentChallenge)

        // Cancel on the start screen: the terminal event with 240.
        _ = try await api.initiateActivatedCustomerKYC(reason: "annual review")
        ev = try await api.setIDVDocumentScanProcessStartConfirmation(false, idvWorkflow: .postLoginKYC)
        guard case let .onIDVActivatedCustomerKYCResponse(_, s2, e2)? = ev.last else { return XCTFail("\(ev)") }
        XCTAssertEqual(e2.longErrorCode, 240)
        XCTAssertEqual(s2.statusCode, 400)
    }

    func testCaptureFailureAndResetThroughDelegates() async throws {
        let (app, url, code, dir) = try Self.startServer()
        defer { app.stop(); try? FileManager.default.removeItem(at: dir) }
        let sdk = RDNA()
        try await activate(sdk, url, code)
        let rec = Recorder()
        sdk.setCallbacks(rec)
        sdk.setIDVDocumentProcessingDelegate(rec)
        sdk.setIDVKYCManagementDelegate(rec)
        // No provider: refused at once.
        XCTAssertEqual(sdk.initiateActivatedCustomerKYC(reason: "annual review").longErrorCode, 0)
        // Callbacks go to the queue given at initialize (global for the async initialize above).
        guard case .getIDVDocumentScanProcessStartConfirmation(.postLoginKYC)? = rec.next() else { return XCTFail() }
        XCTAssertEqual(sdk.setIDVDocumentScanProcessStartConfirmation(true, idvWorkflow: .postLoginKYC).longErrorCode, 1025)
        // A provider whose file is not an image: 1008 as a callback, the challenge stays open.
        let bad = dir.appendingPathComponent("page.jpg")
        try Data("plain text".utf8).write(to: bad)
        sdk.setDocumentCaptureProvider(ImageFileDocumentCapture(pageFiles: [bad]))
        XCTAssertEqual(sdk.setIDVDocumentScanProcessStartConfirmation(true, idvWorkflow: .postLoginKYC).longErrorCode, 0)
        guard case let .onRequestFailed(api, e)? = rec.next() else { return XCTFail() }
        XCTAssertEqual(api, "documentCapture")
        XCTAssertEqual(e.longErrorCode, 1008)
        XCTAssertEqual(e.errorString, "document capture: page.jpg is not a JPEG or PNG image")
        // The start confirmation comes again (the codelabs' screen shows again) while the upload
        // challenge stays open; confirming again with a good file captures again.
        guard case .getIDVDocumentScanProcessStartConfirmation(.postLoginKYC)? = rec.next() else { return XCTFail() }
        XCTAssertEqual(sdk.currentChallenge?.name, "uploadIDVDocumentPages")
        sdk.setDocumentCaptureProvider(ImageFileDocumentCapture(pageFiles: [Paths.fixtures.appendingPathComponent("katie_portrait.jpg")]))
        XCTAssertEqual(sdk.setIDVDocumentScanProcessStartConfirmation(true, idvWorkflow: .postLoginKYC).longErrorCode, 0)
        guard case .getIDVConfirmDocumentDetails(_, .idvPostLoginKYC)? = rec.next() else { return XCTFail() }
        // Another flow while one is in progress goes to the server (which decides about the open one),
        // here the probe server, which offers no opt-in (1007): reported, and — as this app registered
        // no biometric delegate for the opt-in's result — reported as a callback the app lacks (1034).
        XCTAssertEqual(sdk.initiateIDVBiometricOptIn().longErrorCode, 0)
        guard case let .onRequestFailed("initiateIDVBiometricOptIn", refused)? = rec.next() else { return XCTFail() }
        XCTAssertEqual(refused.longErrorCode, 1007)
        guard case let .onRequestFailed("onIDVBiometricOptInStatus", missing)? = rec.next() else { return XCTFail() }
        XCTAssertEqual(missing.longErrorCode, 1034)
        // resetAuthState ends the flow: onAuthStateReset, no challenge, still logged in.
        XCTAssertEqual(sdk.resetAuthState().longErrorCode, 0)
        guard case .onAuthStateReset? = rec.next() else { return XCTFail() }
        XCTAssertNil(sdk.currentChallenge)
        XCTAssertTrue(sdk.isLoggedIn)
    }
}

/// The sample app's IDV screens, scripted, against the probe server.
final class SampleAppIDVScreenTests: XCTestCase {
    func testScriptedKYCScreensPrintFactsAndSaveImages() throws {
        let (app, url, code, dir) = try IDVProtocolProbeTests.startServer()
        defer { app.stop(); try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out")
        let script = dir.appendingPathComponent("kyc.txt")
        try """
        check-user: katie
        activation-code: \(code)
        set-password: Katie pass 1
        dashboard: kyc annual review
        kyc: start
        document-start: scan \(Paths.fixtures.appendingPathComponent("katie_portrait.jpg").path)
        document-details: confirm
        selfie-start: capture \(Paths.fixtures.appendingPathComponent("katie_live").path)
        selfie-confirmation: not-offered-key
        selfie-confirmation: continue-flow
        consent: approve
        dashboard: quit
        """.write(to: script, atomically: true, encoding: .utf8)
        let r = try SampleAppTests.runIDV(["--server", url.absoluteString, "--script", script.path, "--out", out.path])
        XCTAssertEqual(r.status, 0, r.out)
        for fact in ["idv_workflow: IDV_POSTLOGIN_KYC (6)", "guideline: KYC verification process. Hold document steady and avoid glare for best results.",
                     "check: MRZ check digits: PASSED", "overall_status: VALID", "verdict: MATCHED", "face_match_score: 91.00%",
                     "liveness_score: 88%", "button: continue-flow — Continue", "challenge_mode: IDV_POSTLOGIN_KYC (9)",
                     "RESULT flow=kyc event=onIDVActivatedCustomerKYCResponse error=0 status=100 verdict=MATCHED"] {
            XCTAssertTrue(r.out.contains(fact), "missing '\(fact)' in:\n\(r.out)")
        }
        // The offered-key rule is the server's: the probe refuses the unknown key (1020) and the screen asks again.
        XCTAssertTrue(r.out.contains("error: 1020"), r.out)
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("document-page-0.jpg")),
                       try Data(contentsOf: Paths.fixtures.appendingPathComponent("katie_portrait.jpg")))
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("selfie.jpg")),
                       try Data(contentsOf: Paths.fixtures.appendingPathComponent("katie_live/frame_016.jpg")))
        // Personal images are private to the user: the folder the app created 0700, each image 0600.
        let mode = { (url: URL) -> Int? in
            (try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
        }
        XCTAssertEqual(mode(out), 0o700)
        for file in ["document-page-0.jpg", "selfie.jpg"] {
            XCTAssertEqual(mode(out.appendingPathComponent(file)), 0o600, file)
        }
    }
}
