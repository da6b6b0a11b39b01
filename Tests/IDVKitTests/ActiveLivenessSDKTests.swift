import Foundation
import IDVKit
import XCTest
import IDVTestSupport

/// A selfie capture provider that records the challenge the SDK hands it and returns a frame folder.
final class ChallengeRecordingCapture: SelfieCaptureProvider, @unchecked Sendable {
    let folder: FrameFolderSelfieCapture
    private let lock = NSLock()
    private var seen: [RDNALivenessChallenge?] = []
    init(folder: URL) { self.folder = FrameFolderSelfieCapture(folder: folder) }

    var challenges: [RDNALivenessChallenge?] { lock.withLock { seen } }

    func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedSelfie {
        try captureSelfie(useBackCamera: useBackCamera, workflow: workflow, challenge: nil)
    }

    func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow, challenge: RDNALivenessChallenge?) throws(CaptureError) -> CapturedSelfie {
        lock.withLock { seen.append(challenge) }
        return try folder.captureSelfie(useBackCamera: useBackCamera, workflow: workflow)
    }
}

/// Active liveness through the SDK against a real `idvd` with `idv.liveness_mode = active`: the
/// server's challenge reaches the app (``RDNA/pendingLivenessChallenge``) and the capture provider,
/// a capture without the challenged actions fails liveness, and the retake gets a new challenge.
/// Under passive liveness the provider gets no challenge.
final class ActiveLivenessSDKTests: XCTestCase {
    let password = "Active liveness 2026"

    func loggedIn(_ server: IDVDServer, _ user: String) async throws -> (RDNA, RDNAAsyncAPI) {
        try await server.sdkLoggedIn(user, password: password)
    }

    /// Starts seed 004 opt-in up to the selfie start screen.
    @discardableResult
    func optInToSelfieStart(_ api: RDNAAsyncAPI) async throws -> [RDNAEvent] {
        try await api.optInToSelfieStart(password: password)
    }

    func testTheServersChallengeReachesTheAppAndTheCaptureProvider() async throws {
        // The test redraws the challenge (reset, start again) until it holds OPEN_MOUTH — the
        // redraw the user's challenge budget exists to bound — so the budget is made large here.
        let server = try IDVDServer(settings: ["idv.liveness_mode": "active", "idv.biometric_attempts": "40"])
        try server.start()
        defer { server.stop() }
        let (sdk, api) = try await loggedIn(server, "ada")
        let capture = ChallengeRecordingCapture(folder: Paths.fixtures.appendingPathComponent("katie_live"))
        sdk.setSelfieCaptureProvider(capture)
        XCTAssertNil(sdk.pendingLivenessChallenge, "no selfie step yet")

        // katie_live blinks and moves a little but never opens her mouth: take a challenge with
        // OPEN_MOUTH (the server picks the actions at random) so the capture certainly misses it.
        _ = try await optInToSelfieStart(api)
        var restarts = 0
        while sdk.pendingLivenessChallenge?.actions.contains(.openMouth) != true, restarts < 30 {
            restarts += 1
            let reset = try await api.resetAuthState()
            XCTAssertEqual(reset.last?.name, "onAuthStateReset")
            _ = try await optInToSelfieStart(api)
        }
        let first = try XCTUnwrap(sdk.pendingLivenessChallenge, "the selfie start carries the server's challenge")
        XCTAssertTrue(first.actions.contains(.openMouth), "30 challenges without OPEN_MOUTH (p = 2^-30)")
        XCTAssertEqual(first.nonce.count, 32)
        XCTAssertTrue(first.nonce.allSatisfy { $0.isHexDigit && !$0.isUppercase }, first.nonce)
        XCTAssertEqual(first.actions.count, 2)
        XCTAssertEqual(first.actions.filter { $0 == .turnLeft || $0 == .turnRight }.count, 1, "one head turn")
        XCTAssertEqual(first.durationSeconds, 6)
        XCTAssertGreaterThan(first.expiresAt, Date())
        XCTAssertLessThanOrEqual(first.expiresAt, Date().addingTimeInterval(121))
        XCTAssertTrue(first.instructions.contains("open your mouth"), first.instructions)
        XCTAssertTrue(first.instructions.contains("within 6 seconds"), first.instructions)

        // Confirm: the SDK captures with the challenge and uploads; the frames miss OPEN_MOUTH.
        let ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginOptIn)
        XCTAssertEqual(capture.challenges, [first], "the provider got exactly the server's challenge")
        XCTAssertEqual(ev.last, .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginOptIn), "asked to retake")
        let retake = try XCTUnwrap(sdk.currentChallenge)
        XCTAssertEqual(retake.status?.statusMessage, "LIVENESS_FAILED")
        let reasons = retake.payload["liveness_reasons"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertTrue(reasons.contains("CHALLENGE_NOT_MET"), "\(reasons)")
        // A challenge is single-use: the retake comes with a new one, which the next capture gets.
        let second = try XCTUnwrap(sdk.pendingLivenessChallenge)
        XCTAssertNotEqual(second.nonce, first.nonce)
        _ = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginOptIn)
        XCTAssertEqual(capture.challenges, [first, second])
    }

    func testPassiveModeHandsTheProviderNoChallenge() async throws {
        let server = try IDVDServer()
        try server.start()
        defer { server.stop() }
        let (sdk, api) = try await loggedIn(server, "pia")
        let capture = ChallengeRecordingCapture(folder: Paths.fixtures.appendingPathComponent("katie_live"))
        sdk.setSelfieCaptureProvider(capture)
        _ = try await optInToSelfieStart(api)
        XCTAssertNil(sdk.pendingLivenessChallenge)
        let ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginOptIn)
        guard case .onIDVOptInCapturedFrameConfirmation? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(capture.challenges, [nil])
    }

    func testChallengePayloadDecoding() throws {
        let payload: JSONValue = ["liveness_challenge": ["nonce": "00112233445566778899aabbccddeeff", "actions": ["TURN_RIGHT", "BLINK", "NOD"],
                                                         "duration_seconds": 4.5, "deadline_seconds": 120, "expires_at": 1_800_000_000]]
        let c = try XCTUnwrap(RDNALivenessChallenge(payload: payload))
        XCTAssertEqual(c.actions, [.turnRight, .blink, .other("NOD")])
        XCTAssertEqual(c.actions.map(\.isKnown), [true, true, false])
        XCTAssertEqual(RDNALivenessAction.knownValues.map(\.rawValue), ["TURN_LEFT", "TURN_RIGHT", "BLINK", "OPEN_MOUTH"])
        XCTAssertEqual(RDNALivenessAction(rawValue: "OPEN_MOUTH").instruction, "open your mouth")
        XCTAssertEqual(RDNALivenessAction(rawValue: "turn_left"), .other("turn_left"), "case-sensitive")
        XCTAssertEqual(c.expiresAt, Date(timeIntervalSince1970: 1_800_000_000))
        XCTAssertEqual(c.instructions, "Look at the camera, then turn your head to your right, then blink once, then nod, within 4.5 seconds.")
        // Round trip in the wire shape.
        let back = try JSONDecoder().decode(RDNALivenessChallenge.self, from: JSONEncoder().encode(c))
        XCTAssertEqual(back, c)
        XCTAssertNil(RDNALivenessChallenge(payload: ["max_frames": 60]))
        XCTAssertNil(RDNALivenessChallenge(payload: ["liveness_challenge": ["nonce": "x"]]), "malformed: no actions")
    }
}
