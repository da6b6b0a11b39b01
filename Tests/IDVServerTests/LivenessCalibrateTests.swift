import Foundation
import IDVEngine
import IDVRuntime
import IDVServerTestSupport
import IDVTestSupport
import XCTest

/// `idvd liveness calibrate` (issue 34) through the real binary on the shared clips: real bona fide
/// videos and real screen replays of the same kind of capture; it prints BPCER, retakes and APCER
/// per species with 95 % intervals, finds the texture line for APCER 0 %, and writes the setting
/// into a config file the server reads — keeping the file's other keys.
final class LivenessCalibrateTests: XCTestCase {
    func testCalibrationOnTheSharedClipsWritesTheSettingTheServerReads() throws {
        let root = TestData.shared.appendingPathComponent("liveness")
        let bona = ["bona-fide-more/grid_bbaf2n.mp4", "bona-fide-more/grid_lbax4n.mp4", "attacks/replay-video/real.mov"]
        let replays = ["attacks/real-more/replay_lestari_phone.mp4", "attacks/replay-video/fake_replay_on_phone.mp4"]
        for f in bona + replays { _ = try TestData.sharedFile("liveness/\(f)") }
        _ = try TestData.tool("/usr/bin/ffmpeg")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("calibrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // An operator's config file: calibration sets its key there and keeps the rest.
        let config = dir.appendingPathComponent("idvd.json")
        try Data(#"{"idv.liveness_threshold": 50, "idv.selfie_attempts": 4}"#.utf8).write(to: config)

        let r = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide"] + bona.map { root.appendingPathComponent($0).path }
                                   + ["--attack"] + replays.map { "phone-replay=" + root.appendingPathComponent($0).path }
                                   + ["--out", config.path],
                                   environment: ["IDVD_FRAME_CACHE": dir.appendingPathComponent("frames").path])
        let out = String(decoding: r.stdout, as: UTF8.self)
        XCTAssertEqual(r.status, 0, out + String(decoding: r.stderr, as: UTF8.self))
        // real.mov gives 4 windows, the GRID clips one each; the replays 1 + 3 windows.
        XCTAssertTrue(out.contains("6 bona fide windows of 3 captures, 4 attack windows of 1 species"), out)
        XCTAssertTrue(out.contains("at the current texture line -1.60:"), out)
        let lineRow = try XCTUnwrap(out.split(separator: "\n").first { $0.hasPrefix("texture line for APCER ≤ 0.0 % on every species") }, out)
        let line = try XCTUnwrap(Double(try XCTUnwrap(lineRow.split(separator: "=").last).trimmingCharacters(in: .whitespaces)))
        // At the line found, every replay window is refused, with its exact interval (0 of 4: 0–60.2 %).
        let after = out.components(separatedBy: lineRow).last ?? ""
        XCTAssertTrue(after.contains("APCER phone-replay     0.0 % (0/4) [0.0–60.2]"), after)
        XCTAssertTrue(after.contains("BPCER"), after)
        XCTAssertTrue(after.contains("bona fide retaken"), after)
        XCTAssertTrue(out.contains("wrote idv.pad.texture_line = \(String(format: "%.2f", line)) to \(config.path)"), out)

        // The server reads the file: the calibrated line, and the operator's other settings untouched.
        let loaded = try ServerConfig.load(file: config.path, environment: [:])
        XCTAssertEqual(loaded.engine.workflow.pad.textureLine, line, accuracy: 1e-9)
        XCTAssertEqual(loaded.engine.workflow.selfieAttempts, 4)
        XCTAssertEqual(loaded.engine.workflow.livenessThreshold, 50)
    }

    func testBadArgumentsAreRefusedClearly() throws {
        let noAttack = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", "/nonexistent"])
        XCTAssertEqual(noAttack.status, 2)
        XCTAssertTrue(String(decoding: noAttack.stderr, as: UTF8.self).contains("calibration needs bona fide captures and attacks"))
        let badPair = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", "/nonexistent", "--attack", "print"])
        XCTAssertEqual(badPair.status, 2)
        XCTAssertTrue(String(decoding: badPair.stderr, as: UTF8.self).contains("--attack takes SPECIES=PATH, got 'print'"))
        let missing = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", "/nonexistent", "--attack", "print=/nonexistent"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(String(decoding: missing.stderr, as: UTF8.self).contains("no such file or folder: /nonexistent"))
        let help = try IDVDBinary.run(["liveness", "calibrate", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(String(decoding: help.stdout, as: UTF8.self).contains("--target-apcer PERCENT"))
    }
}
