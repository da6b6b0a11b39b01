import FaceKit
import Foundation
import IDVCore
import IDVEngine
import IDVReaders
import IDVServerTestSupport
import IDVTestSupport
import Imaging
import XCTest

/// Issue 34, the full-frame replay, with real frames and FaceKit's analyser on an in-process
/// server, the step-up on (`idv.pad.challenge_below`): a real capture whose
/// texture is not conclusive is asked once more under an active challenge; the same person's
/// frames answering it are MATCHED; her clip re-shown on a screen filling the camera's view shows
/// real life but cannot answer a challenge drawn after it — LIVENESS_FAILED.
final class PADStepUpRealFramesTests: XCTestCase {
    /// FaceKit's analyser, but every challenge it issues is a turn to the subject's right and then
    /// a blink — what the committed `katie_turn` frames do (a recording follows only the challenge
    /// it happens to show; a person follows any). The evaluation is FaceKit's own.
    struct TurnRightThenBlink: SelfieAnalysing {
        let base: FaceKitSelfieAnalyser
        func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                     challenge: LivenessChallenge?) throws -> SelfieEvidence {
            try base.analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
        }
        func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
            var c = base.issueChallenge(now: now, durationSeconds: durationSeconds, deadlineSeconds: deadlineSeconds)
            c.actions = [ChallengeAction.turnRight.rawValue, ChallengeAction.blink.rawValue]
            return c
        }
    }

    /// The step-up level here: the committed clips of Katie read 2.85–3.62 (above the default
    /// 2.75, where they pass at once, as the other tests show), so this server steps up below 4.5,
    /// as an operator wanting more challenges would set it.
    static let level = 4.5

    func testAnInconclusiveRealCaptureIsSteppedUpAndAScreenFillingTheViewCannotAnswer() throws {
        try RealImages.requireModels()
        let analyser = TurnRightThenBlink(base: try FaceKitSelfieAnalyser.production(policy: WorkflowPolicy()))
        let server = try WorkflowServer(["idv.pad.challenge_below": String(Self.level), "idv.selfie_attempts": "3"], selfies: analyser)
        let api = try server.loggedIn("kate")
        let katie = try RealImages.frames("katie_live")

        // Enrolment: katie_live shows life (a blink, talking); its texture, above the default level, is under this
        // operator's stricter level, so the capture is asked once more under a challenge.
        let asked = try XCTUnwrap(try WorkflowPADTests.optInUpload(api, katie).challenge)
        XCTAssertEqual(asked.name, WireName.uploadIDVSelfieFrames)
        XCTAssertEqual(asked.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue, "\(String(describing: try? WorkflowPADTests.lastSelfieAudit(server)))")
        let challenge = try XCTUnwrap(try asked.payload.decode(SelfieUploadRequest.self).livenessChallenge)
        XCTAssertEqual(challenge.actions, ["TURN_RIGHT", "BLINK"])
        let stepped = try WorkflowPADTests.lastSelfieAudit(server)
        XCTAssertEqual(stepped["retake"], "challenge")
        XCTAssertEqual(stepped["pad_findings"]?.arrayValue, ["texture_not_conclusive"])
        let texture = try XCTUnwrap(stepped["texture_log_odds"]?.doubleValue)
        XCTAssertGreaterThanOrEqual(texture, PADPolicy.defaultTextureLine)
        XCTAssertLessThan(texture, Self.level)
        XCTAssertGreaterThanOrEqual(texture, PADPolicy.defaultChallengeBelow, "the default level accepts it at once")

        // She follows it (real frames: the turn, then the blink): decided with the first capture.
        try WorkflowPADTests.uploadDecidedTogether(api, try RealImages.frames("katie_turn"), server)
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100, "enrolled")

        // Her clip on a screen filling the camera's view, for server biometric authentication:
        // real blinks and talking, no bezel in sight.
        let clip = try katie.map { try Image(data: $0) }
        let screen = try ScreenReplayAttack.frames(from: clip, device: .fillsView, seed: 5).frames.map { try $0.jpegData(quality: 85) }
        XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"]).challenge?.challengeMode, 25)
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "uploadIDVSelfieFrames")
        var reply = try api.uploadFrames(screen)
        var asks: [Int] = []
        // Asked again (a retake, then the challenge) at most twice; the replay can only repeat itself.
        while let ask = reply.challenge, ask.name == WireName.uploadIDVSelfieFrames, asks.count < 2 {
            asks.append(ask.error?.longErrorCode ?? 0)
            reply = try api.uploadFrames(screen)
        }
        let result = try XCTUnwrap(reply.event, "\(String(describing: reply.challenge))").payload.decode(ServerBiometricAuthenticationResult.self)
        XCTAssertEqual(result.biometricResult?.displayText, .livenessFailed, "\(String(describing: try? WorkflowPADTests.lastSelfieAudit(server)))")
        let refused = try WorkflowPADTests.lastSelfieAudit(server)
        XCTAssertEqual(refused["pad_outcome"], "attack")
        XCTAssertEqual(refused["pad_findings"]?.arrayValue?.first, "challenge_failed", "\(refused)")
        XCTAssertEqual(refused["pad_combined"], true)
        // Stepped up at once (1066 with the challenge): its texture reaches the line — passive
        // evidence alone would have accepted this replay.
        XCTAssertEqual(asks, [IDVErrorCode.selfieRetake.rawValue])
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(refused["texture_log_odds"]?.doubleValue), PADPolicy.defaultTextureLine)
        let screenStepped = try XCTUnwrap(try server.audit().filter { $0.action.hasSuffix("selfie_verified") }.dropLast().last?.details)
        XCTAssertEqual(screenStepped["retake"], "challenge")
        XCTAssertEqual(screenStepped["pad_findings"]?.arrayValue, ["texture_not_conclusive"])
    }
}
