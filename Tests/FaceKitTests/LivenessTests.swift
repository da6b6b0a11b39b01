import Foundation
import XCTest
@testable import FaceKit
import Imaging

/// Selfie liveness on real frame sequences (committed SadTalker fixtures, `Tests/Fixtures/selfie`)
/// and generated "print, held" attacks, through the real dlib models.
final class LivenessTests: XCTestCase {
    static let selfie = Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/selfie")

    static func frames(_ folder: String) throws -> [Data] {
        let dir = selfie.appendingPathComponent(folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jpg") }.sorted()
        return try names.map { try Data(contentsOf: dir.appendingPathComponent($0)) }
    }

    static func analyzer(_ config: LivenessConfiguration = .init()) throws -> SelfieAnalyzer {
        SelfieAnalyzer(engine: try FaceEngineTests.engine(), configuration: config)
    }

    /// A held-photo sequence of `image` (JPEG frames), `count` frames.
    static func heldPhoto(_ image: Data, count: Int = 20, seed: UInt64 = 7) throws -> [Data] {
        try HeldPhotoAttack.frames(from: Image(data: image), count: count, seed: seed, maxDimension: 384)
            .map { try $0.jpegData(quality: 85) }
    }

    static func blankJPEG(width: Int = 320, height: Int = 240, level: UInt8 = 128) throws -> Data {
        try Image(gray: [UInt8](repeating: level, count: width * height), width: width, height: height).jpegData()
    }

    // MARK: Bona fide

    func testBonaFideClipWithBlinkPassesPassiveLiveness() throws {
        let report = try Self.analyzer().analyze(frames: Self.frames("katie_live"))
        XCTAssertTrue(report.live, "reasons \(report.reasons)")
        XCTAssertGreaterThanOrEqual(report.score, 50)
        XCTAssertEqual(report.reasons, [])
        XCTAssertEqual(report.frameCount, 30)
        XCTAssertEqual(report.trackedFrameCount, 30)
        // The annotated blink at 4.48–4.6 s is frame 011 of the cut (index 10).
        XCTAssertTrue(report.blinks.contains { (9...11).contains($0.startFrame) }, "blinks \(report.blinks)")
        XCTAssertGreaterThan(try XCTUnwrap(report.nonRigidResidual), LivenessConfiguration().rigidResidualLevel)
        XCTAssertLessThan(try XCTUnwrap(report.identityDistance), 0.6)
        XCTAssertEqual(report.frames.count, 30)
    }

    func testSecondPersonClipPassesToo() throws {
        let report = try Self.analyzer().analyze(frames: Self.frames("aoc_live"))
        XCTAssertTrue(report.live, "reasons \(report.reasons)")
        XCTAssertGreaterThanOrEqual(report.blinks.count, 1)
    }

    func testBestFrameIsEyesOpenAndFrontal() throws {
        let report = try Self.analyzer().analyze(frames: Self.frames("katie_live"))
        let index = try XCTUnwrap(report.bestFrameIndex)
        let best = report.frames[index]
        let ears = report.frames.compactMap(\.eyeAspectRatio).sorted()
        let medianEAR = ears[ears.count / 2]
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(best.eyeAspectRatio), 0.85 * medianEAR, "eyes open")
        XCTAssertFalse(report.blinks.contains { ($0.startFrame...$0.endFrame).contains(index) }, "not a blink frame")
        let pose = try XCTUnwrap(best.pose)
        XCTAssertLessThan(abs(pose.yaw), 12, "frontal")
        // The clip turns to about ±20° around frame 17 and 26; those are not chosen.
        let yaws = report.frames.compactMap { $0.pose.map { abs($0.yaw) } }
        XCTAssertGreaterThan(yaws.max() ?? 0, 15)
        // The JPEG is that frame, decodable, with one face; the embedding is the recogniser's (256-d).
        let jpeg = try XCTUnwrap(report.bestFrameJPEG)
        let image = try Image(data: jpeg)
        XCTAssertEqual(image.width, best.width)
        XCTAssertEqual(try FaceEngineTests.engine().detect(in: image).count, 1)
        XCTAssertEqual(report.bestFrameEmbedding?.count, FaceDescriptorModel.faceReidentification0095.dimensions)
    }

    // MARK: Attacks

    func testHeldPhotoOfTheSamePersonFailsAsRigidWithoutBlink() throws {
        let portrait = try Data(contentsOf: Self.selfie.appendingPathComponent("katie_portrait.jpg"))
        let report = try Self.analyzer().analyze(frames: Self.heldPhoto(portrait))
        XCTAssertFalse(report.live)
        XCTAssertLessThan(report.score, 50)
        XCTAssertTrue(report.reasons.contains(.noBlink), "\(report.reasons)")
        XCTAssertTrue(report.reasons.contains(.rigidMotion), "\(report.reasons)")
        XCTAssertEqual(report.trackedFrameCount, 20, "the face is tracked, so the failure is the motion's")
        XCTAssertLessThan(try XCTUnwrap(report.nonRigidResidual), LivenessConfiguration().rigidResidualLevel)
    }

    func testHeldPhotoOfAnOfficialPortraitFails() throws {
        let report = try Self.analyzer().analyze(frames: Self.heldPhoto(Fixtures.face("obama_small.jpg"), seed: 11))
        XCTAssertFalse(report.live)
        XCTAssertTrue(report.reasons.contains(.rigidMotion), "\(report.reasons)")
    }

    func testSingleStillCannotProveLiveness() throws {
        // The print-attack still of the Silent-Face set and a live still: both single frames.
        for name in ["live_exif_rotated.jpg", "obama_small.jpg"] {
            let report = try Self.analyzer().analyze(frames: [Fixtures.face(name)])
            XCTAssertFalse(report.live, name)
            XCTAssertEqual(report.score, 0, name)
            XCTAssertTrue(report.reasons.contains(.insufficientFrames), name)
            XCTAssertEqual(report.trackedFrameCount, 1, name)
            XCTAssertNotNil(report.bestFrameJPEG, "a single frame is still analysed: \(name)")
        }
    }

    // MARK: Active challenges

    func testActiveChallengePerformedInOrderPasses() throws {
        // katie_turn (SadTalker KatieHill 0–5 s): frontal for 1.2 s, then a turn to the subject's
        // right (yaw −22…−35° from index 13, held ~1 s), then a blink at index 45.
        let challenge = ActiveChallenge(nonce: "n1", actions: [.turnRight, .blink], duration: 5, deadline: .distantFuture)
        let report = try Self.analyzer(LivenessConfiguration(mode: .active)).analyze(frames: Self.frames("katie_turn"), challenge: challenge)
        XCTAssertEqual(report.completedActions, [.turnRight, .blink])
        XCTAssertTrue(report.live, "\(report.reasons)")
        XCTAssertEqual(report.mode, .active)
        XCTAssertEqual(report.challengeNonce, "n1")
    }

    func testActiveChallengeWithAbsentOrMisorderedActionsFails() throws {
        let analyzer = try Self.analyzer(LivenessConfiguration(mode: .active))
        let frames = try Self.frames("katie_turn")
        // The mouth never opens wide (inner-lip ratio stays below 0.35) in katie_live.
        let absent = ActiveChallenge(nonce: "n2", actions: [.openMouth], duration: 5, deadline: .distantFuture)
        let r1 = try analyzer.analyze(frames: Self.frames("katie_live"), challenge: absent)
        XCTAssertFalse(r1.live)
        XCTAssertEqual(r1.reasons, [.challengeNotMet])
        XCTAssertEqual(r1.completedActions, [])
        // The blink comes after the turn, so "blink, then turn" is not met.
        let misordered = ActiveChallenge(nonce: "n3", actions: [.blink, .turnRight], duration: 5, deadline: .distantFuture)
        let r2 = try analyzer.analyze(frames: frames, challenge: misordered)
        XCTAssertFalse(r2.live)
        XCTAssertEqual(r2.completedActions, [.blink])
        XCTAssertTrue(r2.reasons.contains(.challengeNotMet))
        // Right actions, but the duration (3 s) ends before the blink (index 45).
        let tooSlow = ActiveChallenge(nonce: "n4", actions: [.turnRight, .blink], duration: 3, deadline: .distantFuture)
        XCTAssertFalse(try analyzer.analyze(frames: frames, challenge: tooSlow).live)
        // Expired.
        let expired = ActiveChallenge(nonce: "n5", actions: [.blink], duration: 5, deadline: Date(timeIntervalSinceNow: -1))
        let r4 = try analyzer.analyze(frames: frames, challenge: expired)
        XCTAssertEqual(r4.score, 0)
        XCTAssertTrue(r4.reasons.contains(.challengeExpired))
    }

    /// The web helper's replay: a talking-face clip looped to 6 s sways its head ±20° both ways and
    /// blinks; neither turn direction may be read from that, and a real turn answers only its own
    /// direction.
    func testHeadTurnsAreDirectionAndMagnitudeStrict() throws {
        let analyzer = try Self.analyzer(LivenessConfiguration(mode: .active))
        let looped = try Self.frames("katie_live") + Self.frames("katie_live")
        XCTAssertEqual(looped.count, 60)
        for turn in [ChallengeAction.turnRight, .turnLeft] {
            let c = ActiveChallenge(nonce: "loop", actions: [turn, .blink], duration: 6, deadline: .distantFuture)
            let r = try analyzer.analyze(frames: looped, challenge: c)
            XCTAssertFalse(r.live, "\(turn) read from natural head sway")
            XCTAssertEqual(r.completedActions, [], "\(turn)")
        }
        let wrongWay = ActiveChallenge(nonce: "w", actions: [.turnLeft, .blink], duration: 5, deadline: .distantFuture)
        let r = try analyzer.analyze(frames: Self.frames("katie_turn"), challenge: wrongWay)
        XCTAssertFalse(r.live)
        XCTAssertEqual(r.completedActions, [])
    }

    func testTurnCueNeedsAHeldTurnWithoutASwingTheOtherWay() {
        let base = 0.0
        // 25° reached for one frame only: no turn; held three frames: a turn at its first frame.
        let spike: [Double?] = [0, 1, 30, 2, 0, 1]
        XCTAssertNil(LivenessCues.turn(yaw: spike, after: -1, baseline: base, direction: 1, degrees: 25, holdFrames: 3))
        let held: [Double?] = [0, 1, 10, 27, 30, 28, 12]
        XCTAssertEqual(LivenessCues.turn(yaw: held, after: -1, baseline: base, direction: 1, degrees: 25, holdFrames: 3), 3)
        XCTAssertNil(LivenessCues.turn(yaw: held, after: -1, baseline: base, direction: -1, degrees: 25, holdFrames: 3))
        XCTAssertNil(LivenessCues.turn(yaw: held, after: 3, baseline: base, direction: 1, degrees: 25, holdFrames: 3), "only after frame 3")
        // A sway the other way first (−15° ≤ −12.5°) disqualifies the turn.
        let sway: [Double?] = [0, -15, -5, 27, 30, 28]
        XCTAssertNil(LivenessCues.turn(yaw: sway, after: -1, baseline: base, direction: 1, degrees: 25, holdFrames: 3))
        // A missing frame inside the hold breaks it.
        let gap: [Double?] = [0, 27, nil, 30, 28, 29]
        XCTAssertEqual(LivenessCues.turn(yaw: gap, after: -1, baseline: base, direction: 1, degrees: 25, holdFrames: 3), 3)
        XCTAssertEqual(LivenessCues.runningMedian([0, 30, 0, 20, 22, nil, 5]) as [Double?], [15, 0, 20, 20, 21, nil, 5])
    }

    func testActiveModeNeedsAChallenge() throws {
        let analyzer = try Self.analyzer(LivenessConfiguration(mode: .active))
        XCTAssertThrowsError(try analyzer.analyze(frames: [Self.blankJPEG()], challenge: nil)) {
            XCTAssertEqual($0 as? LivenessError, .challengeRequired)
        }
    }

    func testMalformedChallengeIsRefused() throws {
        let analyzer = try Self.analyzer()
        for duration in [Double.nan, -1, 0, .infinity, 1e300] {
            let c = ActiveChallenge(nonce: "x", actions: [.blink], duration: duration, deadline: .distantFuture)
            XCTAssertThrowsError(try analyzer.analyze(frames: [Self.blankJPEG()], challenge: c)) {
                guard case .invalidChallenge = $0 as? LivenessError else { return XCTFail("\($0)") }
            }
        }
        let empty = ActiveChallenge(nonce: "x", actions: [], duration: 5, deadline: .distantFuture)
        XCTAssertThrowsError(try analyzer.analyze(frames: [Self.blankJPEG()], challenge: empty)) {
            XCTAssertEqual($0 as? LivenessError, .challengeRequired)
        }
    }

    func testRandomChallengeIsSeededAndWellFormed() {
        var a = SplitMix64(seed: 42), b = SplitMix64(seed: 42)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let c1 = ActiveChallenge.random(using: &a, now: now), c2 = ActiveChallenge.random(using: &b, now: now)
        XCTAssertEqual(c1, c2)
        XCTAssertEqual(c1.nonce.count, 32)
        XCTAssertTrue(c1.nonce.allSatisfy(\.isHexDigit))
        XCTAssertEqual(c1.actions.count, 2)
        XCTAssertEqual(c1.actions.filter { [.turnLeft, .turnRight].contains($0) }.count, 1)
        XCTAssertEqual(c1.deadline, now.addingTimeInterval(120))
        XCTAssertNotEqual(ActiveChallenge.random().nonce, ActiveChallenge.random().nonce)
    }

    // MARK: Bad input

    func testZeroFramesAreRefused() throws {
        XCTAssertThrowsError(try Self.analyzer().analyze(frames: [])) { XCTAssertEqual($0 as? LivenessError, .noFrames) }
    }

    func testTooManyFramesAreRefusedBeforeDecoding() throws {
        // 500 non-images: refused on the count, not on the first bad frame.
        let frames = [Data](repeating: Data("not a frame".utf8), count: 500)
        XCTAssertThrowsError(try Self.analyzer().analyze(frames: frames)) {
            XCTAssertEqual($0 as? LivenessError, .tooManyFrames(count: 500, limit: 150))
        }
    }

    func testUndecodableOrOversizedFrameIsNamed() throws {
        var frames = try Array(Self.frames("katie_live").prefix(12))
        frames[2] = Data("garbage".utf8)
        XCTAssertThrowsError(try Self.analyzer().analyze(frames: frames)) {
            XCTAssertEqual($0 as? LivenessError, .invalidFrame(index: 2, .notAnImage))
        }
        let small = LivenessConfiguration(maximumFramePixels: 100_000) // frames are 384×384 = 147 456 px
        XCTAssertThrowsError(try Self.analyzer(small).analyze(frames: Array(frames.prefix(1)))) {
            guard case .invalidFrame(0, .tooManyPixels) = $0 as? LivenessError else { return XCTFail("\($0)") }
        }
    }

    func testFramesOfDifferentSizesAreHandled() throws {
        let frames = try Self.frames("katie_live").enumerated().map { i, data -> Data in
            guard i % 3 == 1 else { return data }
            return try Image(data: data).resized(width: 300, height: 300).jpegData(quality: 85)
        }
        let report = try Self.analyzer().analyze(frames: frames)
        XCTAssertEqual(report.trackedFrameCount, 30)
        XCTAssertEqual(Set(report.frames.map(\.width)), [300, 384])
        XCTAssertTrue(report.live, "scale changes are absorbed by the homography: \(report.reasons)")
    }

    func testFramesWithoutAFace() throws {
        let blank = try Self.blankJPEG()
        let report = try Self.analyzer().analyze(frames: [Data](repeating: blank, count: 12))
        XCTAssertFalse(report.live)
        XCTAssertEqual(report.score, 0)
        XCTAssertEqual(report.reasons, [.noFace])
        XCTAssertNil(report.bestFrameJPEG)
        XCTAssertNil(report.bestFrameEmbedding)
    }

    func testFaceLeavingTheFrameTooLong() throws {
        var frames = try Self.frames("katie_live")
        let blank = try Self.blankJPEG(width: 384, height: 384)
        for i in 12..<20 { frames[i] = blank } // 0.8 s without a face
        let report = try Self.analyzer().analyze(frames: frames)
        XCTAssertFalse(report.live)
        XCTAssertEqual(report.score, 0)
        XCTAssertTrue(report.reasons.contains(.faceLost), "\(report.reasons)")
        XCTAssertEqual(report.trackedFrameCount, 22)
    }

    func testSecondFaceIsRefused() throws {
        let two = try Fixtures.face("two_people.jpg")
        let report = try Self.analyzer().analyze(frames: [Data](repeating: two, count: 10))
        XCTAssertFalse(report.live)
        XCTAssertTrue(report.reasons.contains(.multipleFaces), "\(report.reasons)")
    }

    // MARK: Comparison evidence (the verdict is the server policy's, tested in IDVReadersTests)

    func testSelfieComparisonAgainstPortraitAndTemplate() throws {
        let analyzer = try Self.analyzer()
        let portrait = try Data(contentsOf: Self.selfie.appendingPathComponent("katie_portrait.jpg"))
        let katie = try Self.frames("katie_live")
        let model = FaceDescriptorModel.faceReidentification0095
        let strict = FaceMatchCalibration.threshold(.fmr1in10000, for: .fusedToImage, model: model).distance
        let matched = try analyzer.verify(frames: katie, against: .portrait(portrait))
        XCTAssertTrue(matched.liveness.live)
        XCTAssertEqual(matched.model, model)
        XCTAssertGreaterThan(matched.faceMatchScore, 0.5)
        XCTAssertLessThan(try XCTUnwrap(matched.distance), strict)
        XCTAssertGreaterThanOrEqual(matched.livenessScore, 50)

        let other = try analyzer.verify(frames: Self.frames("aoc_live"), against: .portrait(portrait))
        XCTAssertGreaterThan(try XCTUnwrap(other.distance), FaceMatchCalibration.threshold(.fmr1in1000, for: .fusedToImage, model: model).distance)
        XCTAssertTrue(other.liveness.live)
        XCTAssertLessThan(other.faceMatchScore, 0.5)

        // A held print of the portrait itself: the right face, but not live.
        let attack = try analyzer.verify(frames: Self.heldPhoto(portrait, count: 15), against: .portrait(portrait))
        XCTAssertFalse(attack.liveness.live)
        XCTAssertLessThan(attack.livenessScore, 50)
        XCTAssertFalse(attack.reasons.isEmpty)

        // The capture's fused template is what was compared with the portrait (fused↔image).
        XCTAssertEqual(matched.kind, .fusedToImage)
        XCTAssertEqual(matched.comparedProbe, matched.probe)
        XCTAssertGreaterThan(try XCTUnwrap(matched.liveness.template).sourceCount, 1)
        // Re-comparison against the stored (fused, version-3) template of the first capture.
        let stored = try FaceTemplate(decoding: try XCTUnwrap(matched.probe).encoded())
        XCTAssertEqual(stored.version, 3)
        let again = try analyzer.verify(frames: katie, against: .template(stored))
        XCTAssertEqual(try XCTUnwrap(again.distance), 0, accuracy: 1e-6)
        XCTAssertEqual(again.kind, .fusedToFused)
        XCTAssertGreaterThan(again.faceMatchScore, 0.99)
    }

    /// A portrait cropped tight to the face (as a chip's DG2 face or a page crop can be) is found
    /// on a grey margin, and gives the same person's descriptor.
    func testTightPortraitIsFoundOnAMargin() throws {
        let analyzer = try Self.analyzer()
        let data = try Data(contentsOf: Self.selfie.appendingPathComponent("katie_portrait.jpg"))
        let image = try Image(data: data)
        let face = try XCTUnwrap(analyzer.engine.detect(in: image).first).box
        let tight = try Image(data: image.cropped(XCTUnwrap(face.expanded(by: -0.15).clipped(to: image.bounds))).jpegData(quality: 92))
        XCTAssertTrue(try analyzer.engine.detect(in: tight).isEmpty, "the crop must leave the detector no margin for this test")
        let a = try analyzer.embedding(of: .portrait(tight.jpegData(quality: 92)))
        let b = try analyzer.embedding(of: .portrait(data))
        XCTAssertLessThan(try FaceDescriptorMetric.cosine.distance(a, b),
                          FaceMatchCalibration.threshold(.fmr1in10000, for: .imageToImage, model: .faceReidentification0095).distance)
    }

    func testBadReferencesAreRefusedBeforeAnalysis() throws {
        let analyzer = try Self.analyzer()
        let frames = [Data("never decoded".utf8)]
        XCTAssertThrowsError(try analyzer.verify(frames: frames, against: .template(FaceTemplate(descriptor: [0.1, 0.2], model: .dlibResNetV1)))) {
            guard case .invalidTemplate = $0 as? LivenessError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try analyzer.verify(frames: frames, against: .template(FaceTemplate(descriptor: [Float](repeating: 0.1, count: 128),
                                                                                                   model: .faceReidentification0095)))) {
            guard case .invalidTemplate = $0 as? LivenessError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try analyzer.verify(frames: frames, against: .template(FaceTemplate(descriptor: [Float](repeating: .nan, count: 128),
                                                                                                   model: .dlibResNetV1)))) {
            guard case .invalidTemplate = $0 as? LivenessError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try analyzer.verify(frames: frames, against: .portrait(Data("x".utf8)))) {
            XCTAssertEqual($0 as? LivenessError, .invalidReference(.notAnImage))
        }
        XCTAssertThrowsError(try analyzer.verify(frames: frames, against: .portrait(Self.blankJPEG()))) {
            XCTAssertEqual($0 as? LivenessError, .referenceHasNoFace)
        }
    }

    func testMatchScoreScale() {
        for model in FaceDescriptorModel.allCases {
            XCTAssertGreaterThan(SelfieMatching.score(distance: 0, model: model), 0.99)
            XCTAssertLessThan(SelfieMatching.score(distance: 1.5, model: model), 0.001)
            XCTAssertEqual(SelfieMatching.score(distance: .infinity, model: model), 0)
        }
        XCTAssertEqual(SelfieMatching.score(distance: SelfieMatching.defaultDistanceThreshold, model: .dlibResNetV1), 0.5, accuracy: 1e-12)
        XCTAssertEqual(SelfieMatching.score(distance: FaceMatchCalibration.recognizerSimilarity.centre, model: .faceReidentification0095), 0.5,
                       accuracy: 1e-12)
        XCTAssertEqual(SelfieMatching.defaultDistanceThreshold, FaceMatchPolicy.lfwCalibratedThreshold)
        XCTAssertEqual(SelfieMatching.distance([0, 0], [3, 4]), 5)
        XCTAssertEqual(SelfieMatching.distance([0], [3, 4]), .infinity)
    }
}
