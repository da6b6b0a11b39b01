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
    /// A temp folder holding `short/`: the first three frames of `katie_live` (shorter than a
    /// window, so calibrate skips it); returns the folder (remove it after), `short` and `katie_live`.
    static func shortCapture() throws -> (URL, URL, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("calibrate-\(UUID().uuidString)")
        let short = dir.appendingPathComponent("short")
        try FileManager.default.createDirectory(at: short, withIntermediateDirectories: true)
        let live = IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures/selfie/katie_live")
        for name in try FileManager.default.contentsOfDirectory(atPath: live.path).filter({ $0.hasSuffix(".jpg") }).sorted().prefix(3) {
            try FileManager.default.copyItem(at: live.appendingPathComponent(name), to: short.appendingPathComponent(name))
        }
        return (dir, short, live)
    }

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
        // The texture stops every replay at that line: no step-up needed for these captures (advice; the default stays in force).
        XCTAssertTrue(after.contains(String(format: "step-up: these attack captures need idv.pad.challenge_below ≥ %.2f (no step-up)", line)), after)
        XCTAssertTrue(after.contains(String(format: "in force %.2f", PADPolicy.defaultChallengeBelow)), after)
        // Four attack windows, every one scoring far below the default: the line written lies far
        // below it, and the operator is told what that means and what to do before going live.
        if line < -1.6 - 2 {
            let warning = String(format: "warning: the line %.2f is %.2f log-odds below the default -1.60.", line, -1.6 - line)
            XCTAssertTrue(after.contains(warning) && after.contains("too few attack captures"), after)
            XCTAssertTrue(after.contains("remove idv.pad.texture_line from \(config.path)"), after)
        } else {
            XCTAssertFalse(out.contains("warning:"), "a line within 2 log-odds of the default, BPCER \u{2264} 15 %: no warning\n\(out)")
        }

        // The server reads the file: the calibrated line, and the operator's other settings untouched.
        let loaded = try ServerConfig.load(file: config.path, environment: [:])
        XCTAssertEqual(loaded.engine.workflow.pad.textureLine, line, accuracy: 1e-9)
        XCTAssertEqual(loaded.engine.workflow.selfieAttempts, 4)
        XCTAssertEqual(loaded.engine.workflow.livenessThreshold, 50)
    }

    /// A bona fide clip filed as an attack species (an attack the texture does not see: its texture
    /// reads live) drives the line far above the default and refuses the real people with it: both
    /// warnings are printed, saying why and what to do. A species whose only capture was skipped
    /// (three frames, shorter than a window) is said to be left out and not counted in the header.
    func testALineFarFromTheDefaultIsWarnedAndASkippedSpeciesIsNotCounted() throws {
        let root = TestData.shared.appendingPathComponent("liveness")
        let bona = ["bona-fide-more/grid_bbaf2n.mp4", "bona-fide-more/grid_lbax4n.mp4", "attacks/replay-video/real.mov"]
        let misfiled = "bona-fide-more/grid_brbk7n.mp4"
        for f in bona + [misfiled] { _ = try TestData.sharedFile("liveness/\(f)") }
        _ = try TestData.tool("/usr/bin/ffmpeg")
        let (dir, short, _) = try Self.shortCapture()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("pad.json")
        let r = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide"] + bona.map { root.appendingPathComponent($0).path }
                                   + ["--attack", "misfiled=" + root.appendingPathComponent(misfiled).path, "short=" + short.path,
                                      "--out", out.path],
                                   environment: ["IDVD_FRAME_CACHE": dir.appendingPathComponent("frames").path])
        let text = String(decoding: r.stdout, as: UTF8.self), errors = String(decoding: r.stderr, as: UTF8.self)
        XCTAssertEqual(r.status, 0, text + errors)
        XCTAssertTrue(text.contains("6 bona fide windows of 3 captures, 1 attack windows of 1 species (misfiled: 1 capture);"), text)
        XCTAssertFalse(text.contains("short"), text)
        XCTAssertTrue(errors.contains("\(short.path) is shorter than 2.5 s: skipped"), errors)
        XCTAssertTrue(errors.contains("no capture of attack species 'short' was read (every one skipped): left out of the calibration"), errors)

        let lineRow = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("texture line for APCER ≤ 0.0 % on every species") }, text)
        let line = try XCTUnwrap(Double(try XCTUnwrap(lineRow.split(separator: "=").last).trimmingCharacters(in: .whitespaces)))
        XCTAssertGreaterThan(line, -1.6 + 2, text)
        let after = text.components(separatedBy: lineRow).last ?? ""
        XCTAssertTrue(after.contains(String(format: "warning: the line %.2f is %.2f log-odds above the default -1.60.", line, line + 1.6)), after)
        XCTAssertTrue(after.contains("an attack species the texture does not see"), after)
        // BPCER at the line, as printed in its block, and the warning that quotes it.
        let bpcer = try XCTUnwrap(after.split(separator: "\n").first { $0.hasPrefix("  BPCER ") }, after)
        let counts = try XCTUnwrap(bpcer.split(separator: "(").dropFirst().first?.split(separator: ")").first, String(bpcer))
        let parts = counts.split(separator: "/").compactMap { Int($0) }
        XCTAssertEqual(parts.count, 2, String(bpcer))
        XCTAssertGreaterThan(Double(parts[0]) / Double(parts[1]), 0.15, String(bpcer))
        XCTAssertTrue(after.contains(String(format: "warning: BPCER at this line is %.1f %% (%d/%d), above 15 %%", 100 * Double(parts[0]) / Double(parts[1]),
                                            parts[0], parts[1])), after)
        XCTAssertTrue(after.contains("record bona fide captures of at least 30 people") && after.contains("idv.liveness_mode = active"), after)
        XCTAssertTrue(text.contains("wrote idv.pad.texture_line = \(String(format: "%.2f", line)) to \(out.path)"), text)
    }

    func testBadArgumentsAreRefusedClearly() throws {
        let noAttackGiven = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", "/nonexistent"])
        XCTAssertEqual(noAttackGiven.status, 2)
        XCTAssertTrue(String(decoding: noAttackGiven.stderr, as: UTF8.self).contains("calibration needs bona fide captures and attacks"))
        let badPair = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", "/nonexistent", "--attack", "print"])
        XCTAssertEqual(badPair.status, 2)
        XCTAssertTrue(String(decoding: badPair.stderr, as: UTF8.self).contains("--attack takes SPECIES=PATH, got 'print'"))
        let missing = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", "/nonexistent", "--attack", "print=/nonexistent"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(String(decoding: missing.stderr, as: UTF8.self).contains("no such file or folder: /nonexistent"))
        // Captures that were all skipped (three frames: shorter than a window) leave nothing to calibrate.
        let (dir, short, live) = try Self.shortCapture()
        defer { try? FileManager.default.removeItem(at: dir) }
        let noBona = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", short.path, "--attack", "print=" + live.path,
                                         "--out", dir.appendingPathComponent("a.json").path])
        XCTAssertEqual(noBona.status, 2)
        XCTAssertTrue(String(decoding: noBona.stderr, as: UTF8.self).contains("no bona fide capture was read (every one skipped)"))
        let noAttack = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", live.path, "--attack", "print=" + short.path,
                                           "--out", dir.appendingPathComponent("b.json").path])
        XCTAssertEqual(noAttack.status, 2)
        XCTAssertTrue(String(decoding: noAttack.stderr, as: UTF8.self).contains("no attack capture was read (every one skipped)"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("b.json").path), "nothing written")
        let help = try IDVDBinary.run(["liveness", "calibrate", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(String(decoding: help.stdout, as: UTF8.self).contains("--target-apcer PERCENT"))
    }
}
