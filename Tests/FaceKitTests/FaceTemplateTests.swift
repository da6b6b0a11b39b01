import Foundation
import XCTest
@testable import FaceKit

/// The versioned template format, descriptor fusion and threshold calibration.
final class FaceTemplateTests: XCTestCase {
    func descriptor(_ seed: Float) -> [Float] { (0..<128).map { Float(sin(Double($0) * 0.37 + Double(seed))) * 0.1 } }

    /// A version-1 blob exactly as the vault wrote it before templates were versioned: 128 LE float32.
    func versionOneBytes(_ d: [Float]) -> [UInt8] {
        var out: [UInt8] = []
        for f in d { withUnsafeBytes(of: f.bitPattern.littleEndian) { out += $0 } }
        return out
    }

    func testVersionOneTemplatesStillDecode() throws {
        let d = descriptor(1)
        let t = try FaceTemplate(decoding: versionOneBytes(d))
        XCTAssertEqual(t.version, 1)
        XCTAssertEqual(t.fusion, .single)
        XCTAssertEqual(t.sourceCount, 1)
        XCTAssertEqual(t.descriptor, d)
        // Read back and written again it stays a version-1 blob.
        XCTAssertEqual(t.encoded(), versionOneBytes(d))
    }

    func testVersionTwoRoundTrip() throws {
        let t = try FaceTemplate.fused([descriptor(1), descriptor(2), descriptor(3)], weights: [1, 0.5, 0.25], model: .dlibResNetV1)
        XCTAssertEqual(t.version, 2)
        XCTAssertTrue(t.isLegacy)
        XCTAssertEqual(t.fusion, .qualityWeightedMean)
        XCTAssertEqual(t.sourceCount, 3)
        let bytes = t.encoded()
        XCTAssertEqual(bytes.count, 8 + 512)
        XCTAssertEqual(Array(bytes.prefix(4)), Array("IDVT".utf8))
        XCTAssertEqual(try FaceTemplate(decoding: bytes), t)
    }

    func testFusionIsTheWeightedMean() throws {
        let a = [Float](repeating: 0.2, count: 128), b = [Float](repeating: -0.1, count: 128)
        XCTAssertEqual(try FaceTemplate.fused([a, b], model: .dlibResNetV1).descriptor.first!, 0.05, accuracy: 1e-6)
        XCTAssertEqual(try FaceTemplate.fused([a, b], model: .dlibResNetV1).fusion, .mean)
        XCTAssertEqual(try FaceTemplate.fused([a, b], weights: [3, 1], model: .dlibResNetV1).descriptor.first!, 0.125, accuracy: 1e-6)
        XCTAssertEqual(try FaceTemplate.fused([a], model: .dlibResNetV1).fusion, .single)
        XCTAssertEqual(try FaceTemplate.fused([a, b], weights: [2, 2], model: .dlibResNetV1).fusion, .mean)
    }

    func testBadInputIsRefused() {
        let dlib = FaceDescriptorModel.dlibResNetV1
        XCTAssertThrowsError(try FaceTemplate.fused([], model: dlib))
        XCTAssertThrowsError(try FaceTemplate.fused([descriptor(1), Array(descriptor(2).prefix(127))], model: dlib))
        XCTAssertThrowsError(try FaceTemplate.fused([[Float](repeating: .nan, count: 128)], model: dlib))
        XCTAssertThrowsError(try FaceTemplate.fused([descriptor(1), descriptor(2)], weights: [0, 0], model: dlib))
        XCTAssertThrowsError(try FaceTemplate.fused([descriptor(1), descriptor(2)], weights: [1, -1], model: dlib))
        XCTAssertThrowsError(try FaceTemplate.fused([descriptor(1)], weights: [1, 1], model: dlib))
        // A dlib descriptor is not a recogniser descriptor, nor a zero vector one.
        XCTAssertThrowsError(try FaceTemplate.fused([descriptor(1)], model: .faceReidentification0095))
        XCTAssertThrowsError(try FaceTemplate.fused([[Float](repeating: 0, count: 256)], model: .faceReidentification0095))
        XCTAssertThrowsError(try FaceTemplate(decoding: [1, 2, 3]))
        XCTAssertThrowsError(try FaceTemplate(decoding: Array("IDVT".utf8) + [4, 2, 0, 1] + versionOneBytes(unit(1)))) { e in
            XCTAssertEqual(e as? FaceTemplateError, .unsupportedVersion(4))
        }
        XCTAssertThrowsError(try FaceTemplate(decoding: Array("IDVT".utf8) + [2, 9, 0, 1] + versionOneBytes(descriptor(1)))) { e in
            XCTAssertEqual(e as? FaceTemplateError, .unsupportedModel(9))
        }
        // Version 2 holds dlib descriptors only; a version-3 header's model decides the length.
        XCTAssertThrowsError(try FaceTemplate(decoding: Array("IDVT".utf8) + [2, 2, 0, 1] + versionOneBytes(unit(1)))) { e in
            XCTAssertEqual(e as? FaceTemplateError, .unsupportedModel(2))
        }
        XCTAssertThrowsError(try FaceTemplate(decoding: Array("IDVT".utf8) + [3, 2, 0, 1] + versionOneBytes(descriptor(1)))) { e in
            guard case .unrecognisedFormat = e as? FaceTemplateError else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try FaceTemplate(decoding: versionOneBytes([Float](repeating: 1e20, count: 128))))
    }

    /// A unit 256-d descriptor, as the recogniser makes them.
    func unit(_ seed: Float) -> [Float] {
        let v = (0..<256).map { Float(cos(Double($0) * 0.23 + Double(seed))) }
        let n = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return v.map { $0 / n }
    }

    func testVersionThreeRoundTripAndCosineFusion() throws {
        let model = FaceDescriptorModel.faceReidentification0095
        let t = try FaceTemplate.fused([unit(1), unit(2), unit(3)], weights: [1, 0.5, 0.25], model: model)
        XCTAssertEqual(t.version, 3)
        XCTAssertEqual(t.model, model)
        XCTAssertFalse(t.isLegacy)
        XCTAssertEqual(t.sourceCount, 3)
        // The fused descriptor is back at unit length.
        XCTAssertEqual(t.descriptor.reduce(0) { $0 + Double($1) * Double($1) }, 1, accuracy: 1e-5)
        let bytes = t.encoded()
        XCTAssertEqual(bytes.count, 8 + 1024)
        XCTAssertEqual(Array(bytes.prefix(8)), Array("IDVT".utf8) + [3, 2, 2, 3])
        XCTAssertEqual(try FaceTemplate(decoding: bytes), t)
        // Descriptors of twice the length weigh the same: each is taken at unit length first.
        let scaled = try FaceTemplate.fused([unit(1).map { $0 * 2 }, unit(2)], model: model)
        let plain = try FaceTemplate.fused([unit(1), unit(2)], model: model)
        for (a, b) in zip(scaled.descriptor, plain.descriptor) { XCTAssertEqual(a, b, accuracy: 1e-6) }
        // Templates of different models are not compared.
        let old = try FaceTemplate.fused([descriptor(1)], model: .dlibResNetV1)
        XCTAssertThrowsError(try FaceMatcher.distance(t, old))
        XCTAssertThrowsError(try FaceMatcher.compare(t, old))
        XCTAssertEqual(try FaceMatcher.distance(t, t), 0, accuracy: 1e-6)
        XCTAssertEqual(try FaceMatcher.compare(t, t).model, model)
    }

    func testCosineAndEuclideanMetrics() throws {
        XCTAssertEqual(try FaceDescriptorMetric.cosine.distance([1, 0], [0, 1]), 1, accuracy: 1e-12)
        XCTAssertEqual(try FaceDescriptorMetric.cosine.distance([1, 0], [-2, 0]), 2, accuracy: 1e-12)
        XCTAssertEqual(try FaceDescriptorMetric.cosine.distance([3, 4], [6, 8]), 0, accuracy: 1e-12)
        XCTAssertEqual(try FaceDescriptorMetric.euclidean.distance([0, 0], [3, 4]), 5)
        XCTAssertThrowsError(try FaceDescriptorMetric.cosine.distance([0, 0], [1, 0]))
        XCTAssertThrowsError(try FaceDescriptorMetric.cosine.distance([1], [1, 0]))
        XCTAssertEqual(FaceDescriptorModel(name: "face-reidentification-retail-0095"), .faceReidentification0095)
        XCTAssertNil(FaceDescriptorModel(name: "other"))
    }

    func testQualityWeight() {
        let frontal = HeadPose(yaw: 0, pitch: 0, roll: 0)
        XCTAssertEqual(FaceTemplate.qualityWeight(sharpness: 100, bestSharpness: 100, pose: frontal), 1)
        XCTAssertEqual(FaceTemplate.qualityWeight(sharpness: 25, bestSharpness: 100, pose: frontal), 0.5, accuracy: 1e-12)
        XCTAssertEqual(FaceTemplate.qualityWeight(sharpness: 100, bestSharpness: 100, pose: HeadPose(yaw: 22.5, pitch: 0, roll: 0)), 0.5, accuracy: 1e-12)
        XCTAssertEqual(FaceTemplate.qualityWeight(sharpness: 100, bestSharpness: 100, pose: nil), 0.05, accuracy: 1e-12)
    }

    func testCalibrationThresholdAndRates() throws {
        // 10 000 impostor distances 0.5, 0.5001, …: FMR 0.1 % allows 10 at or under the threshold.
        let impostors = (0..<10_000).map { 0.5 + Double($0) * 1e-4 }.shuffled()
        let t = try XCTUnwrap(FaceMatchCalibration.threshold(targetFMR: 0.001, impostorDistances: impostors))
        XCTAssertEqual(impostors.filter { $0 <= t }.count, 10)
        let genuine = [0.3, 0.4, 0.6, 0.7]
        let r = FaceMatchCalibration.rates(threshold: t, genuine: genuine, impostor: impostors)
        XCTAssertEqual(r.fmr, 0.001, accuracy: 1e-12)
        XCTAssertEqual(r.fnmr, 0.5)
        // A target below 1 / n puts the threshold under every impostor.
        let tiny = try XCTUnwrap(FaceMatchCalibration.threshold(targetFMR: 1e-5, impostorDistances: impostors))
        XCTAssertLessThan(tiny, 0.5)
        XCTAssertNil(FaceMatchCalibration.threshold(targetFMR: 0.001, impostorDistances: []))
        XCTAssertNil(FaceMatchCalibration.threshold(targetFMR: 0, impostorDistances: impostors))
    }
}

/// The fusion rules of the liveness cues.
final class LivenessFusionTests: XCTestCase {
    let levels = LivenessFusion.TextureLevels()

    func inputs(action: Double = 1, motion: Double = 1, texture: Double? = 1) -> LivenessFusion.Inputs {
        LivenessFusion.Inputs(facialAction: action, challenge: nil, motion: motion, texture: texture)
    }

    func testTextureStrengthIsLogisticAroundTheLine() {
        let l = LivenessFusion.TextureLevels(line: -1.6, scale: 1)
        XCTAssertEqual(LivenessFusion.textureStrength(-1.6, levels: l), 0.5, accuracy: 1e-12)
        XCTAssertEqual(LivenessFusion.textureStrength(-0.6, levels: l), 1 / (1 + exp(-1)), accuracy: 1e-12)
        XCTAssertEqual(LivenessFusion.textureStrength(-2.6, levels: l), 1 / (1 + exp(1)), accuracy: 1e-12)
        XCTAssertGreaterThan(LivenessFusion.textureStrength(30, levels: l), 0.999_999)
        XCTAssertLessThan(LivenessFusion.textureStrength(-30, levels: l), 1e-6)
        XCTAssertEqual(LivenessFusion.TextureLevels().line, -1.6, "the server policy's default idv.pad.texture_line")
    }

    func testPreviousRuleIgnoresTexture() {
        let o = LivenessFusion.apply(.motion, inputs(texture: 0), blocked: false)
        XCTAssertEqual(o.score, 100)
        XCTAssertEqual(o.failed, [])
        let rigid = LivenessFusion.apply(.motion, inputs(motion: 0.3), blocked: false)
        XCTAssertLessThan(rigid.score, 50)
        XCTAssertEqual(rigid.failed, [.rigidMotion])
    }

    func testTextureAttackFailsWhateverTheMotion() {
        let o = LivenessFusion.apply(.textureMotion, inputs(texture: 0.1), blocked: false)
        XCTAssertLessThan(o.score, 50)
        XCTAssertEqual(o.failed, [.textureAttack])
        // Without texture evidence the rule cannot pass, but names no texture attack.
        let none = LivenessFusion.apply(.textureMotion, inputs(texture: nil), blocked: false)
        XCTAssertLessThan(none.score, 50)
        XCTAssertEqual(none.failed, [])
    }

    func testBlockedScoresZeroAndFacialActionStaysRequired() {
        XCTAssertEqual(LivenessFusion.apply(.textureMotion, inputs(), blocked: true).score, 0)
        let noAction = LivenessFusion.apply(.textureMotion, inputs(action: 0.3), blocked: false)
        XCTAssertLessThan(noAction.score, 50)
        XCTAssertEqual(noAction.failed, [.noBlink])
        let challenge = LivenessFusion.Inputs(facialAction: nil, challenge: [1, 0], motion: 1, texture: 1)
        XCTAssertEqual(LivenessFusion.apply(.textureMotion, challenge, blocked: false).failed, [.challengeNotMet])
    }

    /// `texture-motion-v3`: strong texture never stands in for missing landmark motion (the texture
    /// models do not see a digitally made print, whose only evidence is that it moves like a plane).
    func testStrongTextureDoesNotStandInForMotion() {
        let strong = LivenessFusion.textureStrength(8, levels: levels)
        let still = LivenessFusion.apply(.textureMotion, inputs(action: 1, motion: 0.3, texture: strong), blocked: false)
        XCTAssertLessThan(still.score, 50)
        XCTAssertEqual(still.failed, [.rigidMotion])
        XCTAssertEqual(LivenessFusion.apply(.motion, inputs(action: 1, motion: 0.3, texture: 1), blocked: false).failed, [.rigidMotion])
    }

    func testEveryCuePassingScoresAtLeastFifty() {
        let o = LivenessFusion.apply(.textureMotion, inputs(action: 0.5, motion: 0.5, texture: 0.5), blocked: false)
        XCTAssertEqual(o.score, 50)
        XCTAssertEqual(o.failed, [])
        XCTAssertEqual(LivenessFusion.apply(.textureMotion, inputs(), blocked: false).score, 100)
    }
}
