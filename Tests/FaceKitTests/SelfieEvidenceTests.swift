import Foundation
import Imaging
import XCTest
@testable import FaceKit

/// The evidence of the fused method on real frames (committed SadTalker fixtures, Apache-2.0):
/// texture scores, the fused liveness score, the capture's fused template, capture quality.
final class SelfieEvidenceTests: XCTestCase {
    static let reports = ReportCache()

    /// One analysis per fixture folder for the whole class (each is ~1 s of the suite's time).
    final class ReportCache: @unchecked Sendable {
        private var reports: [String: LivenessReport] = [:]
        private let lock = NSLock()
        func report(_ folder: String) throws -> LivenessReport {
            lock.lock()
            defer { lock.unlock() }
            if let r = reports[folder] { return r }
            let r = try LivenessTests.analyzer().analyze(frames: LivenessTests.frames(folder))
            reports[folder] = r
            return r
        }
    }

    func testBonaFideClipIsAcceptedByTheFusedRule() throws {
        let report = try Self.reports.report("katie_live")
        XCTAssertEqual(report.fusionRule, .textureMotion)
        XCTAssertTrue(report.live, "\(report.reasons)")
        XCTAssertGreaterThanOrEqual(report.score, 50)
        let texture = try XCTUnwrap(report.texture)
        XCTAssertEqual(texture.models, ["minifasnetv2_27", "minifasnetv1se_40"])
        // Scored on the crops of the models' own detector (every spread frame holds the face) and
        // aggregated over the good frames: near-frontal, sharp enough.
        XCTAssertEqual(texture.frames.count, LivenessConfiguration().textureFrames)
        XCTAssertGreaterThanOrEqual(texture.goodFrames.count, 8, "most of the 10 spread frames are frontal and sharp")
        XCTAssertTrue(Set(texture.goodFrames).isSubset(of: Set(texture.frames)))
        XCTAssertGreaterThan(try XCTUnwrap(texture.logOdds), LivenessConfiguration().textureLevels.line)
        XCTAssertGreaterThan(try XCTUnwrap(texture.score), 0.5)
        for f in report.frames where texture.frames.contains(f.index) {
            let box = try XCTUnwrap(f.textureBox), tracked = try XCTUnwrap(f.box)
            // The detector's box is taller than dlib's and holds its centre.
            XCTAssertGreaterThan(box.height, tracked.height)
            XCTAssertTrue(box.left < tracked.center.x && tracked.center.x < box.right && box.top < tracked.center.y && tracked.center.y < box.bottom)
        }
        let inputs = try XCTUnwrap(report.fusionInputs)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(inputs.facialAction), 0.5)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(inputs.texture), 0.5)
        // The previous method's score is kept beside it, from the same evidence.
        XCTAssertGreaterThanOrEqual(report.motionScore, 50)
        XCTAssertEqual(report.quality?.issues, [])
        // Stage times add up to no more than the total.
        let t = report.stageTimes
        XCTAssertGreaterThan(t.total, 0)
        XCTAssertLessThanOrEqual(t.decode + t.detect + t.landmarks + t.quality + t.texture + t.cues + t.embed + t.encode, t.total * 1.001)
        XCTAssertGreaterThan(t.texture, 0)
    }

    func testCaptureTemplateFusesSeveralSpreadEyesOpenFrames() throws {
        let report = try Self.reports.report("katie_live")
        let template = try XCTUnwrap(report.template)
        XCTAssertEqual(template.version, 3)
        XCTAssertEqual(template.model, .faceReidentification0095)
        XCTAssertEqual(template.sourceCount, report.templateFrameIndices.count)
        // A steady, sharp capture fuses many frames (quality-weighted, not a fixed count).
        XCTAssertGreaterThanOrEqual(template.sourceCount, 5)
        XCTAssertLessThanOrEqual(template.sourceCount, LivenessConfiguration().templateFrames)
        XCTAssertEqual(report.templateFrameIndices.first, report.bestFrameIndex)
        let picks = report.templateFrameIndices.sorted()
        for (a, b) in zip(picks, picks.dropFirst()) {
            XCTAssertGreaterThanOrEqual(b - a, LivenessConfiguration().templateFrameSpacing)
        }
        XCTAssertEqual(report.templateWeights.count, template.sourceCount)
        XCTAssertTrue(report.templateWeights.allSatisfy { $0 > 0 && $0 <= 1 })
        // The fused descriptor lies near the best frame's own, and every embedded frame near the best.
        let best = try XCTUnwrap(report.bestFrameEmbedding)
        XCTAssertEqual(best.count, 256)
        XCTAssertLessThan(try FaceDescriptorMetric.cosine.distance(template.descriptor, best), 0.15)
        XCTAssertLessThan(try XCTUnwrap(report.identityDistance), LivenessConfiguration().identityDistanceThreshold)
    }

    /// A template stored before this model (version 1: the bare 128 float32 of one dlib descriptor)
    /// still verifies the same person's new capture — in dlib's units, with a dlib probe made from
    /// the capture — and still refuses another person's; the capture's own template to store is a
    /// version-3 one.
    func testOldSingleDescriptorTemplateStillVerifies() throws {
        let engine = try FaceEngineTests.engine()
        let portrait = try Image(data: Data(contentsOf: LivenessTests.selfie.appendingPathComponent("katie_portrait.jpg")))
        let descriptor = try XCTUnwrap(engine.analyze(portrait, options: AnalysisOptions(landmarks68: false)).first?.embedding)
        var stored: [UInt8] = []
        for f in descriptor { withUnsafeBytes(of: f.bitPattern.littleEndian) { stored += $0 } }
        XCTAssertEqual(stored.count, 512)
        let old = try FaceTemplate(decoding: stored)
        XCTAssertEqual(old.version, 1)
        XCTAssertTrue(old.isLegacy)

        let analyzer = try LivenessTests.analyzer()
        let same = try analyzer.verify(frames: LivenessTests.frames("katie_live"), against: .template(old))
        XCTAssertEqual(same.model, .dlibResNetV1)
        XCTAssertEqual(same.kind, .fusedToImage)
        let probe = try XCTUnwrap(same.comparedProbe)
        XCTAssertEqual(probe.model, .dlibResNetV1)
        XCTAssertEqual(probe.sourceCount, min(LivenessConfiguration().legacyProbeFrames, same.liveness.templateFrameIndices.count))
        let strict = FaceMatchCalibration.threshold(.fmr1in10000, for: .fusedToImage, model: .dlibResNetV1).distance
        XCTAssertLessThanOrEqual(try XCTUnwrap(same.distance), strict)
        XCTAssertGreaterThan(same.legacyProbeSeconds, 0)
        XCTAssertEqual(same.probe?.model, .faceReidentification0095, "the template to store is the new model's")
        let other = try analyzer.verify(frames: LivenessTests.frames("aoc_live"), against: .template(old))
        XCTAssertGreaterThan(try XCTUnwrap(other.distance), FaceMatchCalibration.threshold(.fmr1in1000, for: .fusedToImage, model: .dlibResNetV1).distance)
        // A version-3 template of one capture against another cut of the same capture's frames: fused↔fused, near.
        let katie = try XCTUnwrap(Self.reports.report("katie_live").template)
        let again = try FaceTemplate(decoding: katie.encoded())
        XCTAssertEqual(FaceComparisonKind.of(katie, again), .fusedToFused)
        XCTAssertEqual(try FaceMatcher.distance(katie, again), 0, accuracy: 1e-6)
        XCTAssertThrowsError(try FaceMatcher.distance(katie, old))
    }

    /// A capture in a dark room: the evidence names the problem (too dark) so the flow can ask for a
    /// recapture instead of deciding on it.
    func testDarkCaptureIsReportedTooDark() throws {
        let frames = try LivenessTests.frames("katie_live").map { data -> Data in
            let image = try Image(data: data).rgb()
            // About 2 stops darker, as an under-exposed indoor capture: levels × 0.22.
            let dark = image.pixels.map { UInt8((Double($0) * 0.22).rounded()) }
            return try Image(rgb: dark, width: image.width, height: image.height).jpegData(quality: 85)
        }
        let report = try LivenessTests.analyzer().analyze(frames: frames)
        let quality = try XCTUnwrap(report.quality)
        XCTAssertTrue(quality.issues.contains(.tooDark), "\(quality)")
        XCTAssertLessThan(quality.frameBrightness, LivenessConfiguration().qualityRequirements.brightness.lowerBound)
        // The well-lit capture of the same clip has no issue.
        XCTAssertEqual(try Self.reports.report("katie_live").quality?.issues, [])
    }

    func testFacelessFramesReportTheirBrightness() throws {
        let black = try LivenessTests.blankJPEG(level: 8)
        let report = try LivenessTests.analyzer().analyze(frames: [Data](repeating: black, count: 12))
        XCTAssertEqual(report.reasons.first, .noFace)
        XCTAssertNil(report.quality?.bestFrame)
        XCTAssertEqual(report.quality?.issues, [.tooDark])
        XCTAssertNil(report.template)
    }
}
