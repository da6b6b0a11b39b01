import Foundation
import IDVCore
import IDVEngine
import IDVServerTestSupport
import IDVTestSupport
import XCTest

/// Issue 34, "don't call the unsure an attack", over HTTP on an in-process server with an analyser
/// double whose PAD evidence is scripted per capture: a capture and its retake that never showed
/// the face well enough to read its texture (too few good frames: the face turned away or blurred),
/// with life shown and nothing against them, are asked again as a capture-quality problem (1065,
/// an attempt used) — never LIVENESS_FAILED; a pair without any sign of life and nothing confident
/// against it (a person holding still) is asked once more under an active challenge (1066 with a
/// `liveness_challenge`, no attempt used) and decided with it.
final class PADUnsureOutcomesTests: XCTestCase {
    /// TestDoubleSelfieAnalyser with the next scripted PAD evidence for every capture.
    final class ScriptedPADAnalyser: SelfieAnalysing, @unchecked Sendable {
        // @unchecked: `queue` is only touched under `lock`.
        let base: TestDoubleSelfieAnalyser
        private let lock = NSLock()
        private var queue: [PADEvidence] = []

        init() throws { base = try TestDoubleSelfieAnalyser() }

        func script(_ evidence: [PADEvidence]) { lock.withLock { queue += evidence } }

        func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
            base.issueChallenge(now: now, durationSeconds: durationSeconds, deadlineSeconds: deadlineSeconds)
        }

        func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                     challenge: LivenessChallenge?) throws -> SelfieEvidence {
            var e = try base.analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
            e.pad = lock.withLock { queue.isEmpty ? nil : queue.removeFirst() }
            e.challengeNonce = challenge?.nonce   // the challenge it evaluated (its answer is in the scripted PAD evidence)
            return e
        }
    }

    /// PAD evidence: texture log-odds on `good` of 10 scored frames (nil: not read on any), motion,
    /// facial action and plane motion strengths.
    static func pad(texture: Double?, good: Int, motion: Double = 0.8, action: Double = 0.9, plane: Double = 0.3,
                    challenge: [Double]? = nil) -> PADEvidence {
        PADEvidence(rule: "texture-motion-v3", textureScore: nil, motionOnlyScore: nil,
                    texture: texture.map { TextureCue(logOdds: $0, goodFrames: good, scoredFrames: 10) },
                    motion: motion, facialAction: challenge == nil ? action : nil, challenge: challenge, planeMotion: plane)
    }

    /// Opt-in (seed 004) up to the selfie upload: password, then the start confirmation; the upload ask.
    static func optInUpload(_ api: API) throws -> WireChallenge {
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        return try XCTUnwrap(try api.answer(["is_confirm": true, "use_back_camera": false]).challenge)
    }

    /// `frame` twice as a selfie capture at 10 fps; the server's answer.
    static func upload(_ api: API, _ frame: Data) throws -> WireChallenge {
        try XCTUnwrap(try api.uploadCapture(frame).challenge)
    }

    /// A person holding still: no facial action, no non-rigid motion, the face not moved as a plane;
    /// texture clearly bona fide.
    static let still = pad(texture: 2.0, good: 10, motion: 0.2, action: 0.1, plane: 0.05)

    /// A server with `settings` and `user` logged in, opted in up to the selfie; the person holds
    /// still twice (scripted, then the evidence `then`) and the first capture is asked again with a
    /// plain 1066.
    func stillAndRetaken(_ settings: [String: String], _ user: String, then: [PADEvidence] = []) throws -> (WorkflowServer, API, WireChallenge, Data) {
        let analyser = try ScriptedPADAnalyser()
        let server = try WorkflowServer(settings, selfies: analyser)
        let api = try server.loggedIn(user)
        let frame = try TestImages.obamaSelfie()
        analyser.script([Self.still, Self.still] + then)
        let first = try Self.optInUpload(api)
        XCTAssertNil(RDNAChallengeProbe.challenge(first), "passive mode: no challenge at first")
        let retake = try Self.upload(api, frame)
        XCTAssertEqual(retake.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        XCTAssertNil(RDNAChallengeProbe.challenge(retake), "the first retake is passive")
        return (server, api, first, frame)
    }

    func testAFaceNeverSeenWellIsAskedAgainForQualityNotFailed() throws {
        let analyser = try ScriptedPADAnalyser()
        let server = try WorkflowServer(["idv.selfie_attempts": "3"], selfies: analyser)
        let api = try server.loggedIn("paula")
        let frame = try TestImages.obamaSelfie()
        // Turned away twice (texture read on 0 and 2 frames), talking and moving all along; then frontal.
        analyser.script([Self.pad(texture: nil, good: 0), Self.pad(texture: 1.2, good: 2), Self.pad(texture: 1.5, good: 9)])
        let first = try Self.optInUpload(api)
        let retake = try Self.upload(api, frame)
        XCTAssertEqual(retake.name, WireName.uploadIDVSelfieFrames)
        XCTAssertEqual(retake.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        XCTAssertEqual(retake.attemptsLeft, first.attemptsLeft, "the PAD retake uses no attempt")
        let quality = try Self.upload(api, frame)
        XCTAssertEqual(quality.name, WireName.uploadIDVSelfieFrames)
        XCTAssertEqual(quality.error?.longErrorCode, IDVErrorCode.selfieFaceNotFrontal.rawValue)
        XCTAssertEqual(quality.error?.errorString, IDVErrorCode.selfieFaceNotFrontal.message)
        XCTAssertNil(quality.status, "no verdict: \(String(describing: quality.status))")
        XCTAssertEqual(quality.attemptsLeft, first.attemptsLeft - 1, "the pair used one attempt")
        XCTAssertEqual(try Self.upload(api, frame).name, "onIDVOptInCapturedFrameConfirmation")

        let selfies = try server.audit().filter { $0.action == "idv.selfie_verified" }.map(\.details)
        XCTAssertEqual(selfies.map { $0["result"]?.stringValue ?? "?" }, ["retake", "recapture", "MATCHED"])
        XCTAssertEqual(selfies[1]["capture_issue"], "off_pose")
        XCTAssertEqual(selfies[1]["pad_outcome"], "poor_capture")
        XCTAssertEqual(selfies[1]["pad_findings"]?.arrayValue, ["few_good_frames"])
        XCTAssertEqual(selfies[1]["pad_combined"], true)
        XCTAssertFalse(selfies.contains { $0["result"] == "LIVENESS_FAILED" })
    }

    /// A person holding still twice (no facial action, no non-rigid motion, the face not moved as
    /// a plane; texture clearly bona fide) and then asked for a challenge.
    func stillTwiceThenChallenged(_ user: String, third: PADEvidence) throws -> (WorkflowServer, WireChallenge, WireChallenge, Int) {
        let (server, api, first, frame) = try stillAndRetaken(["idv.selfie_attempts": "3"], user, then: [third])
        let challenged = try Self.upload(api, frame)
        XCTAssertEqual(challenged.name, WireName.uploadIDVSelfieFrames)
        XCTAssertEqual(challenged.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        XCTAssertEqual(challenged.attemptsLeft, first.attemptsLeft, "the challenge uses no attempt either")
        let issued = try XCTUnwrap(RDNAChallengeProbe.challenge(challenged), "the ask carries the challenge: \(challenged.payload)")
        XCTAssertEqual(issued.actions.count, 2)
        return (server, first, try Self.upload(api, frame), first.attemptsLeft)
    }

    func testAPairWithoutLifeIsAskedOnceMoreUnderAChallengeAndPassesByAnsweringIt() throws {
        let (server, _, done, _) = try stillTwiceThenChallenged("petra", third: Self.pad(texture: 1.8, good: 10, motion: 0.9, plane: 0.5, challenge: [1, 1]))
        XCTAssertEqual(done.name, "onIDVOptInCapturedFrameConfirmation", "\(String(describing: done.error))")
        let selfies = try server.audit().filter { $0.action == "idv.selfie_verified" }.map(\.details)
        XCTAssertEqual(selfies.map { $0["result"]?.stringValue ?? "?" }, ["retake", "retake", "MATCHED"])
        XCTAssertEqual(selfies[1]["retake"], "challenge")
        XCTAssertEqual(selfies[1]["pad_findings"]?.arrayValue, ["cues_disagree"])
        XCTAssertEqual(selfies[2]["pad_outcome"], "bona_fide")
        XCTAssertEqual(selfies[2]["attempt"]?.intValue, 1)
    }

    func testAPairWithoutLifeThatDoesNotAnswerTheChallengeIsAnAttack() throws {
        let (server, _, failed, attempts) = try stillTwiceThenChallenged("piet", third: Self.pad(texture: 2.0, good: 10, motion: 0.2, plane: 0.4, challenge: [0, 0]))
        XCTAssertEqual(failed.status?.statusMessage, "LIVENESS_FAILED")
        XCTAssertEqual(failed.attemptsLeft, attempts - 1, "the three captures used one attempt")
        let decided = try XCTUnwrap(try server.audit().last { $0.action == "idv.selfie_verified" }).details
        XCTAssertEqual(decided["pad_outcome"], "attack")
        XCTAssertEqual(decided["pad_findings"]?.arrayValue?.first, "challenge_failed")
        XCTAssertEqual(decided["pad_combined"], true)
    }

    func testWithTheChallengeOffAPairWithoutLifeFails() throws {
        let (server, api, first, frame) = try stillAndRetaken(["idv.selfie_attempts": "3", "idv.pad.challenge_on_unsure": "false"], "pim")
        let failed = try Self.upload(api, frame)
        XCTAssertEqual(failed.status?.statusMessage, "LIVENESS_FAILED")
        XCTAssertEqual(failed.attemptsLeft, first.attemptsLeft - 1)
        let decided = try XCTUnwrap(try server.audit().last { $0.action == "idv.selfie_verified" }).details
        XCTAssertEqual(decided["pad_findings"]?.arrayValue, ["cues_disagree"])
    }

    // MARK: The captures decided together are one person

    /// Opt-in (bona fide) for `user`, then server biometric authentication up to its upload.
    func authenticationUpload(_ analyser: ScriptedPADAnalyser, _ server: WorkflowServer, _ user: String) throws -> API {
        let api = try server.loggedIn(user)
        analyser.script([Self.pad(texture: 2.0, good: 10)])
        _ = try Self.optInUpload(api)
        XCTAssertEqual(try Self.upload(api, try TestImages.obamaSelfie()).name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100)
        XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "Payment"]).challenge?.challengeMode, 25)
        XCTAssertEqual(try api.answer(["is_confirm": true, "use_back_camera": false]).challenge?.name, WireName.uploadIDVSelfieFrames)
        return api
    }

    /// Found by a trial: somebody else's live face as the first capture (unsure texture, life shown)
    /// and the victim's still photo as the retake (the face that is matched, no life) were decided
    /// together — life from one face, the match from the other: MATCHED. The earlier capture now
    /// counts only when it matched the reference too; else the retake is decided alone.
    /// Server biometric authentication for `user`: a first capture of the face in `first` with an
    /// unsure texture and life shown (asked again, 1066), then the enrolled person held still.
    /// Returns the verdict, the decided capture's audit details and the server.
    func unsureThenStill(_ user: String, first: Data) throws -> (BiometricVerdict?, JSONValue, WorkflowServer) {
        let analyser = try ScriptedPADAnalyser()
        let server = try WorkflowServer(["idv.biometric_attempts": "5"], selfies: analyser)
        let api = try authenticationUpload(analyser, server, user)
        analyser.script([Self.pad(texture: -2.5, good: 10), Self.still])
        XCTAssertEqual(try Self.upload(api, first).error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        let done = try XCTUnwrap(try api.answer(JSONValue(encoding: SelfieFramesAnswer(frames: [try TestImages.obamaSelfie(), try TestImages.obamaSelfie()],
                                                                                        fps: 10, metaData: nil, frameTimesMs: [0, 100])),
                                                route: "/v1/session/upload").event)
        let decided = try XCTUnwrap(try server.audit().last { $0.action == "idv.selfie_verified" }).details
        return (try done.payload.decode(ServerBiometricAuthenticationResult.self).biometricResult?.displayText, decided, server)
    }

    func testAnotherPersonsLiveFaceDoesNotLendItsLifeToTheRetake() throws {
        let (verdict, decided, server) = try unsureThenStill("vic", first: try TestImages.wrongPersonSelfie())
        XCTAssertEqual(verdict, .livenessFailed)
        XCTAssertEqual(decided["pad_combined"], false, "decided alone: the first capture was another face")
        XCTAssertEqual(decided["pad_outcome"], "attack")
        let retake = try XCTUnwrap(try server.audit().filter { $0.action == "idv.selfie_verified" }.dropLast().last).details
        XCTAssertEqual(retake["result"], "retake")
    }

    /// The same two captures of the one person are decided together: the first's life and the
    /// pooled texture carry the pair (MATCHED).
    func testTheSamePersonsCapturesAreDecidedTogether() throws {
        let (verdict, decided, server) = try unsureThenStill("val", first: try TestImages.obamaSelfie())
        defer { withExtendedLifetime(server) {} }
        XCTAssertEqual(verdict, .matched)
        XCTAssertEqual(decided["pad_combined"], true)
        XCTAssertEqual(decided["pad_outcome"], "bona_fide")
    }

    /// A retake left for a capture-quality recapture (an attempt used) is gone: the next attempt's
    /// capture is judged on its own and has its own retake (found by a trial: it went straight on
    /// to the challenge with the earlier attempt's capture).
    func testAQualityRecaptureEndsTheAttemptsRetake() throws {
        let (server, api, _, frame) = try stillAndRetaken(["idv.selfie_attempts": "3"], "quinn")
        defer { withExtendedLifetime(server) {} }   // the in-process server lives as long as the test
        // The retake is not a selfie at all (no face: 1032, an attempt used).
        let unusable = try XCTUnwrap(try api.answer(JSONValue(encoding: SelfieFramesAnswer(frames: [Data([0xFF, 0xD8, 0xFF, 0xE0]), Data([0xFF, 0xD8, 0xFF, 0xE0])],
                                                                                           fps: 10, metaData: nil, frameTimesMs: [0, 100])),
                                                   route: "/v1/session/upload").challenge)
        XCTAssertEqual(unusable.error?.longErrorCode, IDVErrorCode.noFaceFound.rawValue)
        // The next attempt's still: a first capture again (a plain retake, no challenge).
        let again = try Self.upload(api, frame)
        XCTAssertEqual(again.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        XCTAssertNil(RDNAChallengeProbe.challenge(again), "a new attempt's first retake is passive")
    }

    /// Under presence, the challenge is asked as presence's head-movement fallback: no flashing
    /// while the person follows the actions (the hosted page records the challenge's duration with
    /// its prompts only outside the flashing branch).
    func testUnderPresenceTheChallengeIsAskedAsTheHeadMovementFallback() throws {
        let (server, api, _, frame) = try stillAndRetaken(["idv.selfie_attempts": "3", "idv.presence": "illumination"], "pola")
        defer { withExtendedLifetime(server) {} }   // the in-process server lives as long as the test
        let challenged = try Self.upload(api, frame)
        XCTAssertNotNil(RDNAChallengeProbe.challenge(challenged))
        let presence = try XCTUnwrap(try challenged.payload.decode(SelfieUploadRequest.self).presence)
        XCTAssertEqual(presence.fallback, .active)
        XCTAssertNil(presence.illumination)
        // The capture sent on to the challenge keeps its own presence reading in the audit (this
        // client sent its frames without the sequence's frame times: not asked).
        let asked = try XCTUnwrap(try server.audit().last { $0.action == "idv.selfie_verified" }).details
        XCTAssertEqual(asked["retake"], "challenge")
        XCTAssertEqual(asked["presence"], "not_asked", "\(asked)")
        // With presence required (fallback refuse) there is no challenge: the pair is decided.
        let (strict, api2, _, _) = try stillAndRetaken(["idv.selfie_attempts": "3", "idv.presence": "illumination", "idv.presence_fallback": "refuse"], "prue")
        XCTAssertEqual(try Self.upload(api2, frame).status?.statusMessage, "LIVENESS_FAILED")
        let decided = try XCTUnwrap(try strict.audit().last { $0.action == "idv.selfie_verified" }).details
        XCTAssertEqual(decided["pad_outcome"], "attack", "no challenge was asked: audited as the attack it was decided")
    }
}

/// The `liveness_challenge` of an upload ask, as a client reads it.
enum RDNAChallengeProbe {
    static func challenge(_ ch: WireChallenge) -> LivenessChallenge? {
        // The upload ask's payload, or the start confirmation's (active liveness shows it there first).
        (try? ch.payload.decode(SelfieUploadRequest.self).livenessChallenge) ?? (try? ch.payload.decode(CaptureStartPayload.self).livenessChallenge)
    }
}
