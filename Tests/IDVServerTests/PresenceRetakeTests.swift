import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVServerTestSupport
import IDVTestSupport
import XCTest

/// The presence policy's retake (`idv.presence_retake_p`, Workflows/Presence.swift) over HTTP on an
/// in-process server, with an analyser double whose presence evidence is scripted per capture, so
/// every branch is decided exactly: a faint reflection (not followed, p within the retake line) is
/// asked again once under a new sequence with 1071 and no attempt used; a second faint one, one
/// far from the sequence, a capture not measured, or any capture with the retake off is
/// LIVENESS_FAILED at once; a followed one is live.
final class PresenceRetakeTests: XCTestCase {
    /// TestDoubleSelfieAnalyser with an illumination sequence per ask and the next scripted presence
    /// evidence for every capture made under one.
    final class ScriptedPresenceAnalyser: SelfieAnalysing, @unchecked Sendable {
        // @unchecked: `queue` and `issued` are only touched under `lock`.
        let base: TestDoubleSelfieAnalyser
        private let lock = NSLock()
        private var queue: [PresenceEvidence] = []
        private var issued = 0

        init() throws { base = try TestDoubleSelfieAnalyser() }

        func script(_ evidence: [PresenceEvidence]) { lock.withLock { queue += evidence } }
        var sequencesIssued: Int { lock.withLock { issued } }

        func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
            base.issueChallenge(now: now, durationSeconds: durationSeconds, deadlineSeconds: deadlineSeconds)
        }

        func issueIllumination() -> [IlluminationStepPayload]? {
            let colours = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]]
            return lock.withLock {
                issued += 1
                // Each ask its own order, so a test can tell a new sequence from the old one.
                return (0..<8).map { IlluminationStepPayload(rgb: colours[($0 + issued) % colours.count], ms: 300 + 50 * (($0 + issued) % 3)) }
            }
        }

        func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                     challenge: LivenessChallenge?) throws -> SelfieEvidence {
            try base.analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
        }

        func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                     challenge: LivenessChallenge?, illumination: IlluminationCapture?) throws -> SelfieEvidence {
            var e = try base.analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
            if illumination != nil {
                e.presence = lock.withLock { queue.isEmpty ? .notOffered : queue.removeFirst() }
            }
            return e
        }
    }

    static func faint(_ p: Double) -> PresenceEvidence {
        .notFollowed(IlluminationMeasurement(score: 0.74, pValue: p, stepsMeasured: 8, steps: 8, failure: "not_distinguished"))
    }
    static let followed = PresenceEvidence.followed(IlluminationMeasurement(score: 0.93, pValue: 0.0005, stepsMeasured: 8, steps: 8))
    static let unmeasured = PresenceEvidence.notFollowed(IlluminationMeasurement(score: nil, pValue: nil, stepsMeasured: 3, steps: 8,
                                                                                 failure: "too_few_steps"))

    /// Opt-in up to its selfie upload challenge.
    func optInUpload(_ api: API) throws -> WireChallenge {
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        return try XCTUnwrap(try api.answer(["is_confirm": true, "use_back_camera": false]).challenge)
    }

    func upload(_ api: API, _ frame: Data) throws -> API.Reply {
        try api.uploadCapture(frame)
    }

    func steps(_ ch: WireChallenge?) throws -> [IlluminationStepPayload] {
        let ch = try XCTUnwrap(ch)
        XCTAssertEqual(ch.name, WireName.uploadIDVSelfieFrames)
        return try XCTUnwrap(try ch.payload.decode(SelfieUploadRequest.self).presence?.illumination, "no sequence in \(ch.name)")
    }

    func testAFaintReflectionIsAskedAgainOnceUnderANewSequenceAndOnlyThat() throws {
        let analyser = try ScriptedPresenceAnalyser()
        let server = try WorkflowServer(["idv.presence": "illumination", "idv.selfie_attempts": "3"], selfies: analyser)
        let api = try server.loggedIn("pat")
        let frame = try TestImages.obamaSelfie()

        // 1. Faint (p 0.02): the same upload asked again with 1071, no attempt used, a new sequence.
        analyser.script([Self.faint(0.02), Self.faint(0.03)])
        let first = try optInUpload(api)
        let sequence1 = try steps(first)
        let retake = try upload(api, frame)
        let again = try XCTUnwrap(retake.challenge)
        XCTAssertEqual(again.name, WireName.uploadIDVSelfieFrames)
        XCTAssertEqual(again.error?.longErrorCode, 1071)
        XCTAssertEqual(again.attemptsLeft, first.attemptsLeft, "a retake uses no attempt")
        XCTAssertNotEqual(try steps(again), sequence1, "the retake is under a new sequence")
        // 2. Faint again: no second retake in this attempt — LIVENESS_FAILED, an attempt used.
        let failed = try XCTUnwrap(try upload(api, frame).challenge)
        XCTAssertEqual(failed.status?.statusMessage, "LIVENESS_FAILED")
        XCTAssertTrue(failed.payload["liveness_reasons"]?.arrayValue?.contains("ILLUMINATION_NOT_FOLLOWED") ?? false)
        XCTAssertEqual(failed.attemptsLeft, first.attemptsLeft - 1)
        // 3. The next attempt has its own retake: faint, then followed → live, offered for the template.
        analyser.script([Self.faint(0.09), Self.followed])
        XCTAssertEqual(try XCTUnwrap(try upload(api, frame).challenge).error?.longErrorCode, 1071)
        XCTAssertEqual(try upload(api, frame).challenge?.name, "onIDVOptInCapturedFrameConfirmation")

        // The audit names the retake and its measurement; the judged captures keep theirs.
        let selfies = try server.audit().filter { $0.action == "idv.selfie_verified" }.map(\.details)
        XCTAssertEqual(selfies.map { $0["result"]?.stringValue ?? "?" }, ["retake", "LIVENESS_FAILED", "retake", "MATCHED"])
        XCTAssertEqual(selfies[0]["retake"], "presence")
        XCTAssertEqual(selfies[0]["presence_p"]?.doubleValue, 0.02)
        XCTAssertEqual(selfies[0]["error_code"]?.intValue, 1071)
        XCTAssertEqual(selfies[1]["reason"], "presence_not_followed")
        XCTAssertEqual(selfies[1]["presence_p"]?.doubleValue, 0.03)
        XCTAssertEqual(analyser.sequencesIssued, 4, "a sequence for every upload asked: the first, its retake, after the failure, its retake")
    }

    func testFarFromTheSequenceUnmeasuredOrWithTheRetakeOffIsRefusedAtOnce() throws {
        for (settings, evidence, what) in [([String: String](), Self.faint(0.5), "p 0.5 is beyond the retake line 0.1"),
                                           ([:], Self.unmeasured, "too few steps measured: no p-value"),
                                           (["idv.presence_retake_p": "0"], Self.faint(0.02), "retake off")] {
            let analyser = try ScriptedPresenceAnalyser()
            let server = try WorkflowServer(["idv.presence": "illumination"].merging(settings) { _, n in n }, selfies: analyser)
            let api = try server.loggedIn("pam")
            analyser.script([evidence])
            let first = try optInUpload(api)
            let failed = try XCTUnwrap(try upload(api, try TestImages.obamaSelfie()).challenge, what)
            XCTAssertEqual(failed.status?.statusMessage, "LIVENESS_FAILED", what)
            XCTAssertNotEqual(failed.error?.longErrorCode, 1071, what)
            XCTAssertEqual(failed.attemptsLeft, first.attemptsLeft - 1, what)
        }
    }

    /// Server biometric authentication: a retake left unused (cancelled, or the session reset) counts
    /// toward `idv.biometric_attempts` as the LIVENESS_FAILED it stood in for — no free "close" probes.
    func testAServerBiometricRetakeLeftUnusedCountsAsAFailure() throws {
        let analyser = try ScriptedPresenceAnalyser()
        let server = try WorkflowServer(["idv.presence": "illumination", "idv.biometric_attempts": "5"], selfies: analyser)
        let api = try server.loggedIn("pia")
        let frame = try TestImages.obamaSelfie()
        analyser.script([Self.followed])
        _ = try optInUpload(api)
        XCTAssertEqual(try upload(api, frame).challenge?.name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100)

        func authenticationUpload() throws -> WireChallenge {
            XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "Payment"]).challenge?.challengeMode, 25)
            return try XCTUnwrap(try api.answer(["is_confirm": true, "use_back_camera": false]).challenge)
        }
        // Faint → 1071; cancelled: the device hears the cancel (240), the run counts as a failure.
        analyser.script([Self.faint(0.02)])
        _ = try authenticationUpload()
        XCTAssertEqual(try upload(api, frame).challenge?.error?.longErrorCode, 1071)
        let cancelled = try XCTUnwrap(try api.answer(["cancel": true], route: "/v1/session/upload").event)
        XCTAssertEqual(cancelled.error.longErrorCode, 240)
        XCTAssertEqual(try cancelled.payload.decode(ServerBiometricAuthenticationResult.self).attemptsLeft, 4, "the forfeited retake counted")
        // Faint → 1071; the session reset (resetAuthState): forfeited the same way.
        analyser.script([Self.faint(0.04)])
        _ = try authenticationUpload()
        XCTAssertEqual(try upload(api, frame).challenge?.error?.longErrorCode, 1071)
        let reset = try api.call("POST", "/v1/session/reset")
        XCTAssertEqual(reset.event?.name, "onAuthStateReset")
        api.last = reset.envelope
        analyser.script([Self.followed])
        _ = try authenticationUpload()
        let done = try XCTUnwrap(try upload(api, frame).event)
        let result = try done.payload.decode(ServerBiometricAuthenticationResult.self)
        XCTAssertEqual(result.biometricResult?.displayText, .matched)
        XCTAssertEqual(result.attemptsLeft, 5, "a MATCHED resets the failures")
        let outcomes = try server.store.flowOutcomes(userID: "pia", flow: FlowName.serverBiometric, since: 0)
        XCTAssertEqual(outcomes, [.matched, .livenessFailed, .livenessFailed], "newest first")
    }

    func testTheRetakeLineIsASettingWithItsRange() throws {
        XCTAssertEqual(try ServerConfig.load(file: nil, environment: [:], overrides: [:]).engine.workflow.presence.retakePValue, 0.1)
        XCTAssertEqual(try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.presence_retake_p": "0.05"]).engine.workflow.presence.retakePValue, 0.05)
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.presence_retake_p": "0.9"]))
    }

    /// Active liveness under presence: a client that cannot flash keeps its capture's challenge as
    /// the head-movement fallback — the same nonce, no second draw of the user's liveness
    /// challenges (a fresh-user trial saw two draws per run before).
    func testDecliningTheFlashingKeepsTheActiveChallenge() throws {
        let analyser = try ScriptedPresenceAnalyser()
        let server = try WorkflowServer(["idv.presence": "illumination", "idv.liveness_mode": "active", "idv.biometric_attempts": "2"],
                                        selfies: analyser)
        let api = try server.loggedIn("dora")
        let asked = try optInUpload(api)
        let issued = try XCTUnwrap(try asked.payload.decode(SelfieUploadRequest.self).livenessChallenge)
        XCTAssertEqual(try steps(asked).count, 8)
        let declined = try XCTUnwrap(try api.answer(JSONValue(encoding: SelfieFramesAnswer.declining(.declined)), route: "/v1/session/upload").challenge)
        let fallback = try declined.payload.decode(SelfieUploadRequest.self)
        XCTAssertEqual(fallback.presence?.fallback, .active)
        XCTAssertNil(fallback.presence?.illumination)
        XCTAssertEqual(fallback.livenessChallenge, issued, "the capture's own challenge, not a new draw")
        // One challenge drawn of the two: another session's template status says one is left.
        let other = try server.session("dora")
        XCTAssertEqual(try other.startFlow(FlowName.templateStatus).event?.payload["attempts_left"]?.intValue, 1)
    }
}
