import Foundation
import IDVCore
import IDVEngine
import IDVServerTestSupport
import IDVTestSupport
import XCTest

/// Issue 34, "don't call the unsure an attack": a capture and its retake that never showed the face
/// well enough to read its texture (too few good frames: the face turned away or blurred), with
/// life shown and nothing against them, are asked again as a capture-quality problem (1065, an
/// attempt used) — never LIVENESS_FAILED; the same pair without any sign of life is. Over HTTP on
/// an in-process server, with an analyser double whose PAD evidence is scripted per capture.
final class PADPoorCaptureTests: XCTestCase {
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
            return e
        }
    }

    /// PAD evidence: texture log-odds on `good` of 10 scored frames (nil: not read on any), motion,
    /// facial action and plane motion strengths.
    static func pad(texture: Double?, good: Int, motion: Double = 0.8, action: Double = 0.9, plane: Double = 0.3) -> PADEvidence {
        PADEvidence(rule: "texture-motion-v3", textureScore: nil, motionOnlyScore: nil,
                    texture: texture.map { TextureCue(logOdds: $0, goodFrames: good, scoredFrames: 10) },
                    motion: motion, facialAction: action, challenge: nil, planeMotion: plane)
    }

    func optInUpload(_ api: API) throws -> WireChallenge {
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        return try XCTUnwrap(try api.answer(["is_confirm": true, "use_back_camera": false]).challenge)
    }

    func upload(_ api: API, _ frame: Data) throws -> WireChallenge {
        try XCTUnwrap(try api.answer(JSONValue(encoding: SelfieFramesAnswer(frames: [frame, frame], fps: 10, metaData: nil, frameTimesMs: [0, 100])),
                                     route: "/v1/session/upload").challenge)
    }

    func testAFaceNeverSeenWellIsAskedAgainForQualityNotFailed() throws {
        let analyser = try ScriptedPADAnalyser()
        let server = try WorkflowServer(["idv.selfie_attempts": "3"], selfies: analyser)
        let api = try server.loggedIn("paula")
        let frame = try TestImages.obamaSelfie()
        // Turned away twice (texture read on 0 and 2 frames), talking and moving all along; then frontal.
        analyser.script([Self.pad(texture: nil, good: 0), Self.pad(texture: 1.2, good: 2), Self.pad(texture: 1.5, good: 9)])
        let first = try optInUpload(api)
        let retake = try upload(api, frame)
        XCTAssertEqual(retake.name, WireName.uploadIDVSelfieFrames)
        XCTAssertEqual(retake.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        XCTAssertEqual(retake.attemptsLeft, first.attemptsLeft, "the PAD retake uses no attempt")
        let quality = try upload(api, frame)
        XCTAssertEqual(quality.name, WireName.uploadIDVSelfieFrames)
        XCTAssertEqual(quality.error?.longErrorCode, IDVErrorCode.selfieFaceNotFrontal.rawValue)
        XCTAssertEqual(quality.error?.errorString, IDVErrorCode.selfieFaceNotFrontal.message)
        XCTAssertNil(quality.status, "no verdict: \(String(describing: quality.status))")
        XCTAssertEqual(quality.attemptsLeft, first.attemptsLeft - 1, "the pair used one attempt")
        XCTAssertEqual(try upload(api, frame).name, "onIDVOptInCapturedFrameConfirmation")

        let selfies = try server.audit().filter { $0.action == "idv.selfie_verified" }.map(\.details)
        XCTAssertEqual(selfies.map { $0["result"]?.stringValue ?? "?" }, ["retake", "recapture", "MATCHED"])
        XCTAssertEqual(selfies[1]["capture_issue"], "off_pose")
        XCTAssertEqual(selfies[1]["pad_outcome"], "poor_capture")
        XCTAssertEqual(selfies[1]["pad_findings"]?.arrayValue, ["few_good_frames"])
        XCTAssertEqual(selfies[1]["pad_combined"], true)
        XCTAssertFalse(selfies.contains { $0["result"] == "LIVENESS_FAILED" })
    }

    func testTheSamePairWithoutAnySignOfLifeIsAnAttack() throws {
        let analyser = try ScriptedPADAnalyser()
        let server = try WorkflowServer(["idv.selfie_attempts": "3"], selfies: analyser)
        let api = try server.loggedIn("piet")
        let frame = try TestImages.obamaSelfie()
        let lifeless = Self.pad(texture: nil, good: 0, motion: 0.2, action: 0.1, plane: 0.05)
        analyser.script([lifeless, lifeless])
        let first = try optInUpload(api)
        XCTAssertEqual(try upload(api, frame).error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        let failed = try upload(api, frame)
        XCTAssertEqual(failed.status?.statusMessage, "LIVENESS_FAILED")
        XCTAssertEqual(failed.attemptsLeft, first.attemptsLeft - 1)
        let decided = try XCTUnwrap(try server.audit().last { $0.action == "idv.selfie_verified" }).details
        XCTAssertEqual(decided["pad_outcome"], "attack")
        XCTAssertEqual(decided["pad_findings"]?.arrayValue, ["few_good_frames", "cues_disagree"])
    }
}
