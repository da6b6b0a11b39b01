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
        XCTAssertEqual(template.version, 2)
        XCTAssertEqual(template.sourceCount, report.templateFrameIndices.count)
        XCTAssertGreaterThanOrEqual(template.sourceCount, 3)
        XCTAssertEqual(report.templateFrameIndices.first, report.bestFrameIndex)
        let picks = report.templateFrameIndices.sorted()
        for (a, b) in zip(picks, picks.dropFirst()) {
            XCTAssertGreaterThanOrEqual(b - a, LivenessConfiguration().templateFrameSpacing)
        }
        XCTAssertEqual(report.templateWeights.count, template.sourceCount)
        XCTAssertTrue(report.templateWeights.allSatisfy { $0 > 0 && $0 <= 1 })
        // The fused descriptor lies near the best frame's own.
        let best = try XCTUnwrap(report.bestFrameEmbedding)
        XCTAssertLessThan(try FaceMatcher.distance(template.descriptor, best), 0.3)
    }

    /// A template stored before templates were versioned (the bare 128 float32 of one frame) still
    /// verifies the same person's new capture, and still refuses another person's.
    func testOldSingleDescriptorTemplateStillVerifies() throws {
        let engine = try FaceEngineTests.engine()
        let portrait = try Image(data: Data(contentsOf: LivenessTests.selfie.appendingPathComponent("katie_portrait.jpg")))
        let descriptor = try XCTUnwrap(engine.analyze(portrait, options: AnalysisOptions(landmarks68: false)).first?.embedding)
        var stored: [UInt8] = []
        for f in descriptor { withUnsafeBytes(of: f.bitPattern.littleEndian) { stored += $0 } }
        XCTAssertEqual(stored.count, 512)
        let old = try FaceTemplate(decoding: stored)
        XCTAssertEqual(old.version, 1)

        let katie = try XCTUnwrap(Self.reports.report("katie_live").template)
        let aoc = try XCTUnwrap(Self.reports.report("aoc_live").template)
        let kind = FaceComparisonKind.of(katie, old)
        XCTAssertEqual(kind, .fusedToImage)
        let policy = FaceMatchPolicy(operatingPoint: .fmr1in10000)
        let same = try FaceMatcher.compare(katie.descriptor, old.descriptor, policy: policy, kind: kind)
        XCTAssertTrue(same.match, "distance \(same.distance), threshold \(same.threshold)")
        let other = try FaceMatcher.compare(aoc.descriptor, old.descriptor, policy: FaceMatchPolicy(operatingPoint: .fmr1in1000), kind: kind)
        XCTAssertFalse(other.match, "distance \(other.distance)")
        // A new (version 2) template of one capture against another capture of the same person.
        let again = try FaceTemplate(decoding: katie.encoded())
        XCTAssertEqual(FaceComparisonKind.of(katie, again), .fusedToFused)
        XCTAssertEqual(try FaceMatcher.distance(katie.descriptor, again.descriptor), 0, accuracy: 1e-6)
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
