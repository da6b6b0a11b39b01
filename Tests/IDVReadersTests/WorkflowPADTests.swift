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
import IDVServerTestSupport
import Imaging
import XCTest

/// Issue 18 through the server: the selfie flows on the real FaceKit reader (texture PAD fused with
/// the motion cues, fused templates, calibrated operating points, capture quality) over real HTTP,
/// real SQLite and the real vault, with the committed selfie fixtures (Tests/Fixtures/selfie):
/// a bona fide capture enrols a fused (version-3) template and is MATCHED against it; a screen
/// replay of the same bona fide clip is LIVENESS_FAILED by the texture cue; version-1 and -2
/// templates (dlib) still verify, and the owner's confident match replaces them with a version-3
/// one; a dark capture is asked again (1060).
final class WorkflowPADTests: XCTestCase {
    static func realServer() throws -> WorkflowServer {
        try RealImages.requireModels()
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

    /// Uploads `frames` as an opt-in capture that is decided together with the earlier one(s) of its
    /// attempt: the frame to confirm comes back, and the audit says MATCHED, bona fide, combined,
    /// one attempt used.
    static func uploadDecidedTogether(_ api: API, _ frames: [Data], _ server: WorkflowServer, file: StaticString = #filePath, line: UInt = #line) throws {
        let ok = try XCTUnwrap(try api.uploadFrames(frames).challenge, file: file, line: line)
        XCTAssertEqual(ok.name, "onIDVOptInCapturedFrameConfirmation",
                       "\(String(describing: ok.error)) \(String(describing: try? lastSelfieAudit(server)))", file: file, line: line)
        let decided = try lastSelfieAudit(server)
        XCTAssertEqual(decided["result"], "MATCHED", file: file, line: line)
        XCTAssertEqual(decided["pad_outcome"], "bona_fide", file: file, line: line)
        XCTAssertEqual(decided["pad_combined"], true, file: file, line: line)
        XCTAssertEqual(decided["attempt"]?.intValue, 1, file: file, line: line)
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
        let katie = try RealImages.frames("katie_live")
        let api = try server.loggedIn("kate")

        // Enrolment: the bona fide capture is live; the stored template is fused from its best frames.
        let frame = try XCTUnwrap(try Self.optInUpload(api, katie).challenge)
        XCTAssertEqual(frame.name, "onIDVOptInCapturedFrameConfirmation", "\(String(describing: frame.error))")
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100)
        let enrolled = try Self.lastSelfieAudit(server)
        XCTAssertEqual(enrolled["pad_rule"], "texture-motion-v3")
        XCTAssertEqual(enrolled["pad_outcome"], "bona_fide")
        XCTAssertGreaterThanOrEqual(enrolled["texture_score"]?.doubleValue ?? 0, 0.7)
        let record = try XCTUnwrap(try server.store.biometricTemplate(userID: "kate"))
        let stored = try FaceTemplate(decoding: try server.vault.openTemplateBytes(record.sealed, userID: "kate"))
        XCTAssertEqual(stored.version, 3)
        XCTAssertEqual(stored.model, .faceReidentification0095)
        XCTAssertEqual(record.model, FaceDescriptorModel.faceReidentification0095.name)
        XCTAssertEqual(stored.fusion, .qualityWeightedMean)
        XCTAssertGreaterThan(stored.sourceCount, 1)
        XCTAssertEqual(stored.sourceCount, enrolled["template_frames"]?.intValue)

        // A second bona fide capture of the same person (another cut of the clip: 2–5 s, with a head
        // turn) is MATCHED against the fused template at the fused↔fused FMR 0.1 % distance.
        let turn = try RealImages.frames("katie_turn")
        let same = try Self.authenticate(api, Array(turn[20..<50]))
        let matched = try Self.lastSelfieAudit(server)
        XCTAssertEqual(same.biometricResult?.displayText, .matched, "\(matched)")
        XCTAssertEqual(matched["match_kind"], "fused_to_fused")
        XCTAssertEqual(matched["match_threshold"]?.doubleValue,
                       FaceMatchCalibration.threshold(.fmr1in1000, for: .fusedToFused, model: .faceReidentification0095).distance)

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
        // Confident attack evidence: refused at once, no retake asked for.
        XCTAssertEqual(rejected["pad_outcome"], "attack")
        XCTAssertTrue(rejected["pad_findings"]?.arrayValue?.contains("texture_attack") == true, "\(rejected)")
        XCTAssertLessThan(try XCTUnwrap(rejected["texture_log_odds"]?.doubleValue), PADPolicy.defaultTextureLine - PADPolicy.defaultUnsureMargin)

        // A phone held further away (seed 3: the face on its screen is small): asked again with 1063,
        // never accepted.
        XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"]).challenge?.challengeMode, 25)
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "uploadIDVSelfieFrames")
        let far = try XCTUnwrap(try api.uploadFrames(try Self.phoneReplay(katie, seed: 3)).challenge)
        XCTAssertEqual(far.name, "uploadIDVSelfieFrames")
        XCTAssertEqual(far.error?.longErrorCode, IDVErrorCode.selfieFaceTooSmall.rawValue)
    }

    /// Stores `bytes` as `user`'s template of dlib's model under consent `consentID`.
    static func storeLegacyTemplate(_ server: WorkflowServer, _ user: String, _ bytes: [UInt8], consentID: String) throws {
        try server.store.saveBiometricTemplate(BiometricTemplateRecord(userID: user, sealed: server.vault.sealTemplate(bytes: bytes, userID: user),
                                                                       model: FaceDescriptorModel.dlibResNetV1.name, consentID: consentID,
                                                                       createdAt: Int(Date().timeIntervalSince1970)))
    }

    /// The user's stored template, decoded.
    static func storedTemplate(_ server: WorkflowServer, _ user: String) throws -> (FaceTemplate, BiometricTemplateRecord) {
        let record = try XCTUnwrap(try server.store.biometricTemplate(userID: user))
        return (try FaceTemplate(decoding: try server.vault.openTemplateBytes(record.sealed, userID: user)), record)
    }

    /// A template stored before multi-frame templates (version 1: the bare 128 float32 of one dlib
    /// descriptor) still verifies, in dlib's units: the capture's dlib probe against it is a
    /// fused↔image comparison judged at dlib's calibrated distance. Another person's capture is
    /// NOT_MATCHED and changes nothing; the owner's confident match replaces it with the capture's
    /// version-3 template under the same consent (audited `template_upgraded`), and the next
    /// authentication is judged in the new model's units against it.
    func testVersion1TemplateStillVerifiesAndTheOwnersNextMatchReplacesIt() throws {
        let server = try Self.realServer()
        let api = try server.loggedIn("olga")
        let portrait = try Image(data: try RealImages.portrait())
        let descriptor = try XCTUnwrap(try FaceEngine.shared().analyze(portrait, options: AnalysisOptions(landmarks68: false)).first?.embedding)
        let box = server.vault.sealTemplate(descriptor, userID: "olga")     // version 1: 512 bytes
        XCTAssertEqual(try server.vault.openTemplateBytes(box, userID: "olga").count, 512)
        try server.store.saveBiometricTemplate(BiometricTemplateRecord(userID: "olga", sealed: box, model: FaceDescriptorModel.dlibResNetV1.name,
                                                                       consentID: "consent-v1", createdAt: Int(Date().timeIntervalSince1970)))
        let other = try Self.authenticate(api, try RealImages.frames("aoc_live"))
        XCTAssertEqual(other.biometricResult?.displayText, .notMatched)
        XCTAssertEqual(try Self.storedTemplate(server, "olga").0.version, 1, "another person's capture replaces nothing")

        let same = try Self.authenticate(api, try RealImages.frames("katie_live"))
        let audit = try Self.lastSelfieAudit(server)
        XCTAssertEqual(same.biometricResult?.displayText, .matched, "\(audit)")
        XCTAssertEqual(audit["match_kind"], "fused_to_image")
        XCTAssertEqual(audit["match_threshold"]?.doubleValue, FaceMatchCalibration.threshold(.fmr1in1000, for: .fusedToImage, model: .dlibResNetV1).distance)
        let (upgraded, record) = try Self.storedTemplate(server, "olga")
        XCTAssertEqual(upgraded.version, 3)
        XCTAssertEqual(upgraded.model, .faceReidentification0095)
        XCTAssertGreaterThan(upgraded.sourceCount, 1)
        XCTAssertEqual(record.model, FaceDescriptorModel.faceReidentification0095.name)
        XCTAssertEqual(record.consentID, "consent-v1", "the consent on record covers the replacement")
        let upgradeAudit = try XCTUnwrap(try server.audit().last { $0.action.hasSuffix("template_upgraded") }?.details)
        XCTAssertEqual(upgradeAudit["from_model"], .string(FaceDescriptorModel.dlibResNetV1.name))
        XCTAssertEqual(upgradeAudit["to_model"], .string(FaceDescriptorModel.faceReidentification0095.name))
        XCTAssertEqual(upgradeAudit["consent_id"], "consent-v1")
        XCTAssertNil(upgradeAudit["embedding"])

        // From now on the owner is compared with the recogniser: fused↔fused against the version-3 template.
        let next = try Self.authenticate(api, Array(try RealImages.frames("katie_turn")[20..<50]))
        let nextAudit = try Self.lastSelfieAudit(server)
        XCTAssertEqual(next.biometricResult?.displayText, .matched, "\(nextAudit)")
        XCTAssertEqual(nextAudit["match_kind"], "fused_to_fused")
        XCTAssertEqual(nextAudit["match_threshold"]?.doubleValue,
                       FaceMatchCalibration.threshold(.fmr1in1000, for: .fusedToFused, model: .faceReidentification0095).distance)
        XCTAssertEqual(try server.audit().filter { $0.action.hasSuffix("template_upgraded") }.count, 1, "a version-3 template is not replaced")
        let stranger = try Self.authenticate(api, try RealImages.frames("aoc_live"))
        XCTAssertEqual(stranger.biometricResult?.displayText, .notMatched)
    }

    /// A version-2 template (dlib descriptors of several frames fused) verifies too; with
    /// `idv.upgrade_legacy_templates` off it is kept as it is.
    func testVersion2TemplateVerifiesAndIsKeptWhenUpgradesAreOff() throws {
        try RealImages.requireModels()
        let server = try WorkflowServer(["idv.upgrade_legacy_templates": "false"], selfies: try FaceKitSelfieAnalyser.production(policy: WorkflowPolicy()))
        let api = try server.loggedIn("vera")
        let engine = try FaceEngine.shared()
        let turn = try RealImages.frames("katie_turn")
        let descriptors = try [0, 5, 10].map { i -> [Float] in
            try XCTUnwrap(engine.analyze(Image(data: turn[i]), options: AnalysisOptions(landmarks68: false)).first?.embedding)
        }
        let v2 = try FaceTemplate.fused(descriptors, model: .dlibResNetV1)
        XCTAssertEqual(v2.version, 2)
        try Self.storeLegacyTemplate(server, "vera", v2.encoded(), consentID: "consent-v2")
        let same = try Self.authenticate(api, try RealImages.frames("katie_live"))
        let audit = try Self.lastSelfieAudit(server)
        XCTAssertEqual(same.biometricResult?.displayText, .matched, "\(audit)")
        XCTAssertEqual(audit["match_kind"], "fused_to_fused")
        XCTAssertEqual(audit["match_threshold"]?.doubleValue, FaceMatchCalibration.threshold(.fmr1in1000, for: .fusedToFused, model: .dlibResNetV1).distance)
        XCTAssertEqual(try Self.storedTemplate(server, "vera").0, v2, "kept: idv.upgrade_legacy_templates is off")
        XCTAssertTrue(try server.audit().filter { $0.action.hasSuffix("template_upgraded") }.isEmpty)
    }

    /// Issue 34: a capture the policy is unsure about — here the face leaves the view for a second
    /// (FACE_LOST) — is not called an attack: the same challenge comes back with 1066 and its
    /// guidance, the attempt is not used, and the retake is decided together with it (MATCHED with
    /// the enrolment's frame confirmation).
    func testUnsureCaptureIsRetakenWithoutUsingAnAttempt() throws {
        let server = try Self.realServer()
        let api = try server.loggedIn("ulla")
        let katie = try RealImages.frames("katie_live")
        let size = try Image(data: katie[0])
        let empty = try Image(rgb: [UInt8](repeating: 128, count: size.width * size.height * 3), width: size.width, height: size.height)
            .jpegData(quality: 85)
        var away = katie
        for i in 10..<21 { away[i] = empty }     // 1.1 s without a face, longer than the 0.5 s allowed
        let again = try XCTUnwrap(try Self.optInUpload(api, away).challenge)
        XCTAssertEqual(again.name, "uploadIDVSelfieFrames")
        let error = try XCTUnwrap(again.error)
        XCTAssertEqual(error.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        XCTAssertEqual(error.errorString, IDVErrorCode.selfieRetake.message)
        XCTAssertEqual(again.attemptsLeft, 3, "a retake the policy asks for uses no attempt")
        let retake = try Self.lastSelfieAudit(server)
        XCTAssertEqual(retake["result"], "retake")
        XCTAssertEqual(retake["pad_findings"]?.arrayValue, ["face_not_kept"])
        XCTAssertTrue(retake["reasons"]?.arrayValue?.contains("FACE_LOST") == true, "\(retake)")
        // The retake: the whole capture. Decided on both captures: bona fide, then the frame to confirm.
        try Self.uploadDecidedTogether(api, katie, server)
        XCTAssertFalse(try server.audit().contains { $0.action.hasSuffix("selfie_verified") && $0.details["result"] == "LIVENESS_FAILED" })
    }

    /// A capture about two stops under-exposed is sent back with 1060 and the sentence of the one
    /// table (IDVCore `IDVErrorCode.message`), counting an attempt — not judged NOT_MATCHED or
    /// LIVENESS_FAILED; the well-lit capture afterwards is accepted.
    func testDarkCaptureIsAskedAgainNotJudged() throws {
        let server = try Self.realServer()
        let api = try server.loggedIn("dana")
        let katie = try RealImages.frames("katie_live")
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
