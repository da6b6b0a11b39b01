import FaceKit
import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
import IDVReaders
@testable import IDVStoreSQLite
import IDVTestSupport
import Imaging
import XCTest

/// Issue 18 through the server: the selfie flows on the real FaceKit reader (texture PAD fused with
/// the motion cues, fused templates, calibrated operating points, capture quality) over real HTTP,
/// real SQLite and the real vault, with the committed selfie fixtures (Tests/Fixtures/selfie):
/// a bona fide capture enrols a fused (version-2) template and is MATCHED against it; a screen
/// replay of the same bona fide clip is LIVENESS_FAILED by the texture cue; a version-1 template
/// stored before multi-frame templates still verifies; a dark capture is asked again (1060).
final class WorkflowPADTests: XCTestCase {
    static func realServer() throws -> WorkflowServer {
        try WorkflowRealImageTests.requireModels()
        return try WorkflowServer(selfies: try FaceKitSelfieAnalyser.production(policy: WorkflowPolicy()))
    }

    /// Server biometric authentication (seed 001) of the session's user with `frames`.
    static func authenticate(_ api: API, _ frames: [Data], file: StaticString = #filePath, line: UInt = #line) throws -> ServerBiometricAuthenticationResult {
        XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"]).challenge?.challengeMode, 25,
                       file: file, line: line)
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "uploadIDVSelfieFrames", file: file, line: line)
        let reply = try api.uploadFrames(frames)
        let e = try XCTUnwrap(reply.event, "\(String(describing: reply.challenge?.error))", file: file, line: line)
        XCTAssertEqual(e.name, "onIDVServerBiometricAuthenticationResult", file: file, line: line)
        return try e.payload.decode(ServerBiometricAuthenticationResult.self)
    }

    /// The details of the last `selfie_verified` audit entry.
    static func lastSelfieAudit(_ server: WorkflowServer) throws -> JSONValue {
        try XCTUnwrap(try server.audit().last { $0.action.hasSuffix("selfie_verified") }?.details)
    }

    /// Opt-in (seed 004) with `frames`: password → selfie start → upload; returns the upload's reply.
    static func optInUpload(_ api: API, _ frames: [Data]) throws -> API.Reply {
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        XCTAssertEqual(try api.answer(["is_confirm": true, "use_back_camera": false]).challenge?.name, "uploadIDVSelfieFrames")
        return try api.uploadFrames(frames)
    }

    /// `frames` re-shown on a simulated phone screen and filmed again (FaceKit `ScreenReplayAttack`:
    /// bezel, perspective, sub-pixel grid, display gamma, glare, hand motion), as JPEGs.
    static func phoneReplay(_ frames: [Data], seed: UInt64) throws -> [Data] {
        let clip = try frames.map { try Image(data: $0) }
        return try ScreenReplayAttack.frames(from: clip, device: .phone, seed: seed).frames.map { try $0.jpegData(quality: 85) }
    }

    func testBonaFideEnrolsAFusedTemplateMatchedByTheNextCaptureAndAScreenReplayIsRejected() throws {
        let server = try Self.realServer()
        let katie = try WorkflowRealImageTests.frames("katie_live")
        let api = try server.loggedIn("kate")

        // Enrolment: the bona fide capture is live; the stored template is fused from its best frames.
        let frame = try XCTUnwrap(try Self.optInUpload(api, katie).challenge)
        XCTAssertEqual(frame.name, "onIDVOptInCapturedFrameConfirmation", "\(String(describing: frame.error))")
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100)
        let enrolled = try Self.lastSelfieAudit(server)
        XCTAssertEqual(enrolled["pad_rule"], "texture-motion-v2")
        XCTAssertGreaterThanOrEqual(enrolled["texture_score"]?.doubleValue ?? 0, 0.7)
        let record = try XCTUnwrap(try server.store.biometricTemplate(userID: "kate"))
        let stored = try FaceTemplate(decoding: try server.vault.openTemplateBytes(record.sealed, userID: "kate"))
        XCTAssertEqual(stored.version, 2)
        XCTAssertEqual(stored.fusion, .qualityWeightedMean)
        XCTAssertGreaterThan(stored.sourceCount, 1)
        XCTAssertEqual(stored.sourceCount, enrolled["template_frames"]?.intValue)

        // A second bona fide capture of the same person (another cut of the clip: 2–5 s, with a head
        // turn) is MATCHED against the fused template at the fused↔fused FMR 0.1 % distance.
        let turn = try WorkflowRealImageTests.frames("katie_turn")
        let same = try Self.authenticate(api, Array(turn[20..<50]))
        let matched = try Self.lastSelfieAudit(server)
        XCTAssertEqual(same.biometricResult?.displayText, .matched, "\(matched)")
        XCTAssertEqual(matched["match_kind"], "fused_to_fused")
        XCTAssertEqual(matched["match_threshold"]?.doubleValue, FaceMatchCalibration.threshold(.fmr1in1000, for: .fusedToFused).distance)

        // The first capture re-shown on a phone screen: real blinks and real non-rigid motion (the
        // previous, motion-only rule accepts it), but the texture cue calls it an attack.
        let replay = try Self.authenticate(api, try Self.phoneReplay(katie, seed: 1))
        XCTAssertEqual(replay.biometricResult?.displayText, .livenessFailed)
        XCTAssertNil(replay.analyzeLivenessResponse, "the device gets the verdict, not the score")
        let rejected = try Self.lastSelfieAudit(server)
        XCTAssertLessThan(try XCTUnwrap(rejected["liveness_score"]?.intValue), 50)
        XCTAssertTrue(rejected["reasons"]?.arrayValue?.contains("TEXTURE_ATTACK") == true, "\(rejected)")
        XCTAssertGreaterThanOrEqual(rejected["motion_only_score"]?.intValue ?? 0, 50, "the previous rule would have accepted this replay")
        XCTAssertLessThan(rejected["texture_score"]?.doubleValue ?? 1, 0.7)

        // A phone held further away (seed 3: the face on its screen is small): asked again with 1063,
        // never accepted.
        XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"]).challenge?.challengeMode, 25)
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "uploadIDVSelfieFrames")
        let far = try XCTUnwrap(try api.uploadFrames(try Self.phoneReplay(katie, seed: 3)).challenge)
        XCTAssertEqual(far.name, "uploadIDVSelfieFrames")
        XCTAssertEqual(far.error?.longErrorCode, IDVErrorCode.selfieFaceTooSmall.rawValue)
    }

    /// A template stored before multi-frame templates (version 1: the bare 128 float32 of one image)
    /// still verifies: the capture's fused template against it is a fused↔image comparison, judged
    /// at that row's calibrated distance.
    func testVersion1TemplateStillVerifies() throws {
        let server = try Self.realServer()
        let api = try server.loggedIn("olga")
        let portrait = try Image(data: try WorkflowRealImageTests.portrait())
        let descriptor = try XCTUnwrap(try FaceEngine.shared().analyze(portrait, options: AnalysisOptions(landmarks68: false)).first?.embedding)
        let box = server.vault.sealTemplate(descriptor, userID: "olga")     // version 1: 512 bytes
        XCTAssertEqual(try server.vault.openTemplateBytes(box, userID: "olga").count, 512)
        try server.store.saveBiometricTemplate(BiometricTemplateRecord(userID: "olga", sealed: box, model: "dlib_face_recognition_resnet_model_v1",
                                                                       consentID: "consent-v1", createdAt: Int(Date().timeIntervalSince1970)))
        let same = try Self.authenticate(api, try WorkflowRealImageTests.frames("katie_live"))
        let audit = try Self.lastSelfieAudit(server)
        XCTAssertEqual(same.biometricResult?.displayText, .matched, "\(audit)")
        XCTAssertEqual(audit["match_kind"], "fused_to_image")
        XCTAssertEqual(audit["match_threshold"]?.doubleValue, FaceMatchCalibration.threshold(.fmr1in1000, for: .fusedToImage).distance)
        let other = try Self.authenticate(api, try WorkflowRealImageTests.frames("aoc_live"))
        XCTAssertEqual(other.biometricResult?.displayText, .notMatched)
    }

    /// A capture about two stops under-exposed is sent back with 1060 and the sentence of the one
    /// table (IDVCore `IDVErrorCode.message`), counting an attempt — not judged NOT_MATCHED or
    /// LIVENESS_FAILED; the well-lit capture afterwards is accepted.
    func testDarkCaptureIsAskedAgainNotJudged() throws {
        let server = try Self.realServer()
        let api = try server.loggedIn("dana")
        let katie = try WorkflowRealImageTests.frames("katie_live")
        let dark = try katie.map { data -> Data in
            let image = try Image(data: data).rgb()
            return try Image(rgb: image.pixels.map { UInt8((Double($0) * 0.22).rounded()) }, width: image.width, height: image.height)
                .jpegData(quality: 85)
        }
        let again = try XCTUnwrap(try Self.optInUpload(api, dark).challenge)
        XCTAssertEqual(again.name, "uploadIDVSelfieFrames")
        let error = try XCTUnwrap(again.error)
        XCTAssertEqual(error.longErrorCode, IDVErrorCode.selfieTooDark.rawValue)
        XCTAssertEqual(error.errorString, IDVErrorCode.selfieTooDark.message)
        XCTAssertEqual(again.attemptsLeft, 2)
        let audit = try Self.lastSelfieAudit(server)
        XCTAssertEqual(audit["result"], "recapture")
        XCTAssertEqual(audit["capture_issue"], "too_dark")
        let ok = try XCTUnwrap(try api.uploadFrames(katie).challenge)
        XCTAssertEqual(ok.name, "onIDVOptInCapturedFrameConfirmation", "\(String(describing: ok.error))")
        XCTAssertFalse(try server.audit().contains { $0.action.hasSuffix("selfie_verified") && $0.details["result"] == "NOT_MATCHED" })
    }
}
