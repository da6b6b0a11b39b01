import Foundation
import IDVTestSupport
import XCTest
@testable import FaceKit

/// Liveness on the shared test data (`../shared/testdata/liveness`, never committed): the phone
/// replay and its live twin, and the print still. Videos are turned into 10 fps frames by Debian's
/// `ffmpeg`. Skips with a message when the data or ffmpeg is absent — and fails under CI (`CI=true`).
final class LivenessSharedDataTests: XCTestCase {
    func videoFrames(_ relative: String, start: Double, seconds: Double) throws -> [Data] {
        let video = try Fixtures.shared("liveness/\(relative)")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("liveness-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        _ = try TestData.tool("/usr/bin/ffmpeg")
        process.arguments = ["-nostdin", "-v", "error", "-ss", String(start), "-i", video.path, "-t", String(seconds),
                             "-vf", "fps=10,scale='min(640,iw)':-2", "-q:v", "3", dir.appendingPathComponent("f_%03d.jpg").path]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        return try names.map { try Data(contentsOf: dir.appendingPathComponent($0)) }
    }

    /// The real screen-replay footage: the texture models call the phone screen an attack, and the
    /// motion cues (the previous method) reject it too.
    func testPhoneReplayIsRejectedByTextureAndMotion() throws {
        let frames = try videoFrames("attacks/replay-video/fake_replay_on_phone.mp4", start: 3, seconds: 3)
        XCTAssertEqual(frames.count, 30)
        let report = try LivenessTests.analyzer().analyze(frames: frames)
        XCTAssertFalse(report.live)
        XCTAssertLessThan(report.score, 50)
        XCTAssertLessThan(report.motionScore, 50)
        XCTAssertTrue(report.reasons.contains(.textureAttack), "\(report.reasons)")
        XCTAssertLessThan(try XCTUnwrap(report.texture?.logOdds), LivenessConfiguration().textureLevels.line - 2)
        XCTAssertTrue(report.reasons.contains(.rigidMotion), "\(report.reasons)")
        XCTAssertTrue(report.reasons.contains(.noBlink), "\(report.reasons)")
        XCTAssertLessThan(try XCTUnwrap(report.mouthActionSpread), LivenessConfiguration().mouthActionLevel)
        XCTAssertLessThan(try XCTUnwrap(report.eyeActionSpread), LivenessConfiguration().eyeActionLevel)
        XCTAssertGreaterThan(report.trackedFrameCount, 24, "the screen face is tracked; the failure is the motion's")
    }

    func testLiveTwinOfTheReplayPasses() throws {
        let frames = try videoFrames("attacks/replay-video/real.mov", start: 0, seconds: 3)
        let report = try LivenessTests.analyzer().analyze(frames: frames)
        XCTAssertTrue(report.live, "\(report.reasons)")
        XCTAssertFalse(report.blinks.isEmpty)
        XCTAssertGreaterThan(try XCTUnwrap(report.texture?.logOdds), LivenessConfiguration().textureLevels.line)
    }

    func testTalkingWindowWithoutABlinkPassesOnExpressionDynamics() throws {
        // LivePortrait driving clip d10, 0–3 s (dev split): the subject talks but does not blink.
        let frames = try videoFrames("real-face-videos/liveportrait_d10.mp4", start: 0, seconds: 3)
        XCTAssertEqual(frames.count, 30)
        let report = try LivenessTests.analyzer().analyze(frames: frames)
        XCTAssertTrue(report.blinks.isEmpty, "no blink in this window: \(report.blinks)")
        XCTAssertGreaterThan(try XCTUnwrap(report.mouthActionSpread), 2 * LivenessConfiguration().mouthActionLevel)
        XCTAssertTrue(report.live, "\(report.reasons)")
        XCTAssertGreaterThanOrEqual(report.score, 50)
    }

    func testPrintStillAndReplayCropAreSingleFramesThatCannotBeLive() throws {
        let still = try Data(contentsOf: Fixtures.shared("liveness/attacks/stills/image_F1.jpg"))
        let crop = try Data(contentsOf: Fixtures.shared("liveness/attacks/replay-face-crops/fake/0.png"))
        for frame in [still, crop] {
            let report = try LivenessTests.analyzer().analyze(frames: [frame])
            XCTAssertFalse(report.live)
            XCTAssertEqual(report.score, 0)
            XCTAssertTrue(report.reasons.contains(.insufficientFrames))
        }
    }
}
