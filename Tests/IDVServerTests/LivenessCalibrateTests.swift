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
            XCTAssertFalse(out.contains("warning: the line") || out.contains("warning: BPCER"),
                           "a line within 2 log-odds of the default, BPCER \u{2264} 15 %: no warning\n\(out)")
        }
        // Four attack windows cannot show APCER at 5 %: the operator is told, with the number that could.
        XCTAssertTrue(after.contains("warning: too few windows for APCER phone-replay: 0/4, whose 95 % upper bound is 60.2 %, above 5.0 %. "
                                     + "Showing it at or below 5.0 % takes at least 72 attack windows with none in error."), after)

        // The server reads the file: the calibrated line, and the operator's other settings untouched.
        let loaded = try ServerConfig.load(file: config.path, environment: [:])
        XCTAssertEqual(loaded.engine.workflow.pad.textureLine, line, accuracy: 1e-9)
        XCTAssertEqual(loaded.engine.workflow.selfieAttempts, 4)
        XCTAssertEqual(loaded.engine.workflow.livenessThreshold, 50)
    }

    /// A bona fide clip filed as an attack species (an attack the texture does not see: its texture
    /// reads live) drives the line far above the default and refuses the real people with it: both
    /// warnings are printed, saying why and what to do, and the line — BPCER above the 15 % bound —
    /// is printed but not written (exit 3) unless the operator passes --force.
    func testALineFarFromTheDefaultIsWarnedAndNotWrittenAboveTheBPCERBound() throws {
        let root = TestData.shared.appendingPathComponent("liveness")
        let bona = ["bona-fide-more/grid_bbaf2n.mp4", "bona-fide-more/grid_lbax4n.mp4", "attacks/replay-video/real.mov"]
        let misfiled = "bona-fide-more/grid_brbk7n.mp4"
        for f in bona + [misfiled] { _ = try TestData.sharedFile("liveness/\(f)") }
        _ = try TestData.tool("/usr/bin/ffmpeg")
        let (dir, _, _) = try Self.shortCapture()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("pad.json")
        let args = ["liveness", "calibrate", "--bona-fide"] + bona.map { root.appendingPathComponent($0).path }
            + ["--attack", "misfiled=" + root.appendingPathComponent(misfiled).path, "--out", out.path]
        let cache = dir.appendingPathComponent("frames")
        let r = try IDVDBinary.run(args, environment: ["IDVD_FRAME_CACHE": cache.path])
        let text = String(decoding: r.stdout, as: UTF8.self), errors = String(decoding: r.stderr, as: UTF8.self)
        XCTAssertEqual(r.status, 3, text + errors)
        XCTAssertTrue(text.contains("6 bona fide windows of 3 captures, 1 attack windows of 1 species (misfiled: 1 capture);"), text)
        XCTAssertFalse(text.contains("skipped"), text)

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
        let percent = 100 * Double(parts[0]) / Double(parts[1])
        XCTAssertTrue(after.contains(String(format: "warning: BPCER at this line is %.1f %% (%d/%d), above 15 %%", percent, parts[0], parts[1])), after)
        XCTAssertTrue(after.contains("record bona fide captures of at least 30 people") && after.contains("idv.liveness_mode = active"), after)
        // One attack window: far too few to show APCER at 5 % (0 of 72 would).
        XCTAssertTrue(after.contains("warning: too few windows for APCER misfiled: 0/1, whose 95 % upper bound is 97.5 %, above 5.0 %. "
                                     + "Showing it at or below 5.0 % takes at least 72 attack windows with none in error."), after)
        XCTAssertTrue(after.contains(String(format: "not written: BPCER at idv.pad.texture_line = %.2f is %.1f %% (%d/%d), above --max-bpcer 15.0 %%",
                                            line, percent, parts[0], parts[1])), after)
        XCTAssertFalse(text.contains("wrote idv.pad.texture_line"), text)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path), "above the BPCER bound: nothing written")
        // Calibration keeps no copy of the captures' frames: decoded privately and removed.
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache.path), "no frame cache")

        // --force writes the same line, and says why it needed forcing.
        let forced = try IDVDBinary.run(args + ["--force"], environment: ["IDVD_FRAME_CACHE": cache.path])
        let forcedText = String(decoding: forced.stdout, as: UTF8.self)
        XCTAssertEqual(forced.status, 0, forcedText + String(decoding: forced.stderr, as: UTF8.self))
        XCTAssertTrue(forcedText.contains(String(format: "wrote idv.pad.texture_line = %.2f to %@ (--force: BPCER above --max-bpcer)", line, out.path)),
                      forcedText)
        XCTAssertEqual(try ServerConfig.load(file: out.path, environment: [:]).engine.workflow.pad.textureLine, line, accuracy: 1e-9)
    }

    /// A folder of per-person subfolders is searched: a video in a subfolder and a subfolder of frames
    /// two levels down are one capture each. A corrupt video among them is named with ffmpeg's cause,
    /// counted as skipped in the header, and the line is not written (exit 4) without --force. With
    /// --force, --out given as a symbolic link to a 0600 config file writes the target: the link stays
    /// a link, the file keeps its mode and its other keys.
    func testNestedCapturesAreFoundAndASkippedCaptureKeepsTheLineUnwritten() throws {
        let root = TestData.shared.appendingPathComponent("liveness")
        let clip = root.appendingPathComponent("bona-fide-more/grid_bbaf2n.mp4")
        let replay = root.appendingPathComponent("attacks/real-more/replay_lestari_phone.mp4")
        let clipData = try TestData.sharedFile("liveness/bona-fide-more/grid_bbaf2n.mp4")
        _ = try TestData.sharedFile("liveness/attacks/real-more/replay_lestari_phone.mp4")
        _ = try TestData.tool("/usr/bin/ffmpeg")
        let (dir, _, live) = try Self.shortCapture()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        let bona = dir.appendingPathComponent("bona")
        try fm.createDirectory(at: bona.appendingPathComponent("alice"), withIntermediateDirectories: true)
        try fm.createDirectory(at: bona.appendingPathComponent("bob"), withIntermediateDirectories: true)
        try fm.copyItem(at: clip, to: bona.appendingPathComponent("alice/take1.mp4"))
        try fm.copyItem(at: live, to: bona.appendingPathComponent("bob/take1"))
        // A video cut after its first box (ftyp): no index (ffmpeg: "moov atom not found").
        try Data(clipData.prefix(32)).write(to: bona.appendingPathComponent("broken.mp4"))
        let config = dir.appendingPathComponent("etc/idvd.json"), link = dir.appendingPathComponent("link.json")
        try fm.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(#"{"idv.selfie_attempts": 4}"#.utf8).write(to: config)
        try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
        try fm.createSymbolicLink(atPath: link.path, withDestinationPath: "etc/idvd.json")
        let args = ["liveness", "calibrate", "--bona-fide", bona.path, "--attack", "monitor-replay-laptop=" + replay.path,
                    "--max-bpcer", "100", "--target-apcer", "100", "--out", link.path]

        let r = try IDVDBinary.run(args)
        let text = String(decoding: r.stdout, as: UTF8.self), errors = String(decoding: r.stderr, as: UTF8.self)
        XCTAssertEqual(r.status, 4, text + errors)
        XCTAssertTrue(text.contains("bona fide windows of 2 captures, "), text)
        XCTAssertTrue(text.contains("; 1 named capture skipped (bona fide: 1)"), text)
        XCTAssertTrue(errors.contains(bona.appendingPathComponent("broken.mp4").path
                                      + " could not be decoded (ffmpeg: moov atom not found): skipped"), errors)
        XCTAssertTrue(text.contains("not written: 1 named capture was skipped (see above)"), text)
        // The table's column fits the longest species name (21 characters), whole.
        XCTAssertNotNil(text.range(of: #"\n  APCER monitor-replay-laptop[ 1][ 0-9][0-9]\.[0-9] % \([0-9]+/[0-9]+\)"#, options: .regularExpression), text)
        XCTAssertEqual(String(decoding: try Data(contentsOf: config), as: UTF8.self), #"{"idv.selfie_attempts": 4}"#, "nothing written")

        let forced = try IDVDBinary.run(args + ["--force"])
        let forcedText = String(decoding: forced.stdout, as: UTF8.self)
        XCTAssertEqual(forced.status, 0, forcedText + String(decoding: forced.stderr, as: UTF8.self))
        XCTAssertTrue(forcedText.contains("(--force: 1 capture skipped)"), forcedText)
        XCTAssertEqual(try fm.destinationOfSymbolicLink(atPath: link.path), "etc/idvd.json", "the link stays a link")
        let attributes = try fm.attributesOfItem(atPath: config.path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let loaded = try ServerConfig.load(file: config.path, environment: [:])
        XCTAssertEqual(loaded.engine.workflow.selfieAttempts, 4)
        XCTAssertNotEqual(loaded.engine.workflow.pad.textureLine, PADPolicy.defaultTextureLine)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: config.deletingLastPathComponent().path), ["idvd.json"], "no temporary file left")
    }

    /// Inputs refused before any capture is analysed, each with exit status 2 and nothing written.
    func testInputsThatWouldDropOrDoubleCountCapturesAreRefused() throws {
        let (dir, short, live) = try Self.shortCapture()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        let out = dir.appendingPathComponent("x.json")
        func refused(_ args: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let r = try IDVDBinary.run(["liveness", "calibrate"] + args)
            let errors = String(decoding: r.stderr, as: UTF8.self)
            XCTAssertEqual(r.status, 2, errors, file: file, line: line)
            XCTAssertTrue(errors.contains(message), errors, file: file, line: line)
            XCTAssertFalse(fm.fileExists(atPath: out.path), "nothing written", file: file, line: line)
        }
        // A folder holding a JPEG and videos: neither one frame capture nor a folder of videos.
        let stray = dir.appendingPathComponent("stray/phone")
        try fm.createDirectory(at: stray, withIntermediateDirectories: true)
        try Data("not a video".utf8).write(to: stray.appendingPathComponent("a.mp4"))
        try fm.copyItem(at: live.appendingPathComponent("frame_001.jpg"), to: stray.appendingPathComponent("cover.jpg"))
        try refused(["--bona-fide", live.path, "--attack", "phone-replay=" + stray.path, "--out", out.path],
                    "\(stray.path) mixes 1 image frame with 1 other capture")
        // The same capture on both sides, also through a link.
        try refused(["--bona-fide", live.path, "--attack", "print=" + live.path, "--out", out.path],
                    "\(live.path) is given twice: as bona fide and as attack species 'print'")
        let alias = dir.appendingPathComponent("alias")
        try fm.createSymbolicLink(atPath: alias.path, withDestinationPath: live.path)
        try refused(["--bona-fide", live.path, "--attack", "print=" + alias.path, "--out", out.path], "is given twice")
        // A species name that could fake a table row.
        try refused(["--bona-fide", live.path, "--attack", "print\nAPCER x=" + short.path, "--out", out.path],
                    "an attack species name may not hold a control character")
        // Usage and input errors exit 2, not 1 (no line reaches the target).
        try refused(["--bona-fide", live.path, "--attack", "print=" + short.path, "--config", "/nonexistent.json", "--out", out.path],
                    "--config /nonexistent.json")
        try refused(["--bona-fide", live.path, "--attack", "print=" + short.path, "--out", "/nonexistent/dir/x.json"],
                    "--out /nonexistent/dir/x.json: no folder /nonexistent/dir")
        try refused(["--bona-fide", live.path, "--attack", "print=" + short.path, "--out", "/dev/null"], "--out /dev/null is not a regular file")
        let notJSON = dir.appendingPathComponent("notes.txt")
        try Data("[1, 2]".utf8).write(to: notJSON)
        try refused(["--bona-fide", live.path, "--attack", "print=" + short.path, "--out", notJSON.path], "is not a flat JSON config file")
        XCTAssertEqual(try String(contentsOf: notJSON, encoding: .utf8), "[1, 2]")
        try refused(["--bona-fide", live.path, "--attack", "print=" + short.path, "--fps", "0", "--out", out.path],
                    "--fps needs a rate above 0 and at most 60, got '0'")
        try refused(["--bona-fide", live.path, "--attack", "print=" + short.path, "--max-bpcer", "150", "--out", out.path],
                    "--max-bpcer needs a percentage 0…100")
        // A named species whose every capture is skipped is fatal, though another species was read.
        let copy = dir.appendingPathComponent("copy")
        try fm.copyItem(at: live, to: copy)
        try refused(["--bona-fide", live.path, "--attack", "print=" + copy.path, "short=" + short.path, "--out", out.path],
                    "no capture of attack species 'short' was read (every one skipped, see above): nothing to calibrate, nothing written")
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
        XCTAssertTrue(String(decoding: noBona.stderr, as: UTF8.self).contains("no capture of the bona fide side was read (every one skipped"))
        let noAttack = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", live.path, "--attack", "print=" + short.path,
                                           "--out", dir.appendingPathComponent("b.json").path])
        XCTAssertEqual(noAttack.status, 2)
        XCTAssertTrue(String(decoding: noAttack.stderr, as: UTF8.self).contains("no capture of attack species 'print' was read (every one skipped"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("b.json").path), "nothing written")
        let help = try IDVDBinary.run(["liveness", "calibrate", "--help"])
        XCTAssertEqual(help.status, 0)
        let helpText = String(decoding: help.stdout, as: UTF8.self)
        for phrase in ["--target-apcer PERCENT", "--max-bpcer PERCENT", "--force", "BPNRR (quality)", "APCER / APNRR SPECIES",
                       "bona fide challenged", "the step-up", "default 15 %, the iBeta", "Exit status: 0 the line was written",
                       "2 usage or input", "3 BPCER above --max-bpcer", "4 a named", "no frame is written to disk"] {
            XCTAssertTrue(helpText.contains(phrase), phrase + "\n" + helpText)
        }
    }

    /// A second fresh-user trial: a frame file that is not an image, a video cut off partway and
    /// a config file `idvd serve` would refuse each cost the run's line, with the cause named —
    /// never an exit 1 ("no line reaches the target") or a line written from part of a capture.
    func testDamagedCapturesAreNamedAndSkippedAndAConfigServeRefusesIsNotEdited() throws {
        let (dir, _, live) = try Self.shortCapture()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        let ffmpeg = try TestData.tool("/usr/bin/ffmpeg")
        _ = try TestData.sharedFile("liveness/bona-fide-more/dpe_d.mp4")   // fails when the shared clip is missing
        let mov = TestData.shared.appendingPathComponent("liveness/bona-fide-more/dpe_d.mp4")   // 13 s of H.264
        let out = dir.appendingPathComponent("x.json")
        // Two frame captures under one species; one frame file of the second is not an image.
        let prints = dir.appendingPathComponent("print")
        for name in ["a", "b"] {
            let d = prints.appendingPathComponent(name)
            try fm.createDirectory(at: d, withIntermediateDirectories: true)
            for f in try fm.contentsOfDirectory(atPath: live.path).filter({ $0.hasSuffix(".jpg") }) {
                try fm.copyItem(at: live.appendingPathComponent(f), to: d.appendingPathComponent(f))
            }
        }
        try Data("junk".utf8).write(to: prints.appendingPathComponent("b/frame_005.jpg"))
        // Beside them, a video cut off at 60 % of its bytes (moov atom first, so ffmpeg decodes the part that is there).
        let whole = dir.appendingPathComponent("whole.mp4"), cut = prints.appendingPathComponent("cut.mp4")
        let remux = Process()
        remux.executableURL = URL(fileURLWithPath: ffmpeg)
        remux.arguments = ["-nostdin", "-v", "error", "-i", mov.path, "-c", "copy", "-movflags", "+faststart", whole.path]
        try remux.run()
        remux.waitUntilExit()
        XCTAssertEqual(remux.terminationStatus, 0)
        let bytes = try Data(contentsOf: whole)
        try bytes.prefix(bytes.count * 6 / 10).write(to: cut)

        var r = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", live.path, "--attack", "print=" + prints.path, "--max-bpcer", "100",
                                    "--out", out.path])
        var errors = String(decoding: r.stderr, as: UTF8.self), text = String(decoding: r.stdout, as: UTF8.self)
        XCTAssertEqual(r.status, 4, errors + text)
        XCTAssertTrue(errors.contains("\(prints.path)/b: the frame file frame_005.jpg is not a usable image"), errors)
        XCTAssertTrue(errors.contains("\(cut.path) decoded only in part ("), errors)
        XCTAssertTrue(errors.contains("; ffmpeg: "), errors)
        XCTAssertTrue(text.contains("2 named captures skipped (print: 2)"), text)
        XCTAssertFalse(fm.fileExists(atPath: out.path), "nothing written")

        // A nested object: `idvd serve --config` refuses it, so calibrate does not edit it either.
        try Data(#"{"idv.selfie_attempts": 4, "a": {"b": 1}}"#.utf8).write(to: out)
        r = try IDVDBinary.run(["liveness", "calibrate", "--bona-fide", live.path, "--attack", "print=" + prints.appendingPathComponent("a").path,
                                "--out", out.path])
        errors = String(decoding: r.stderr, as: UTF8.self)
        XCTAssertEqual(r.status, 2, errors)
        XCTAssertTrue(errors.contains("'a' must be a string, number or boolean"), errors)
        XCTAssertEqual(try Data(contentsOf: out), Data(#"{"idv.selfie_attempts": 4, "a": {"b": 1}}"#.utf8), "left as it was")
    }

    /// Video frames are decoded in memory: a calibration run, stopped by SIGTERM in the middle
    /// of it, leaves no file in the temporary folder (an operator's customers' faces), and a full run
    /// writes none there either.
    func testCalibrationWritesNoDecodedFrameToDisk() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("calibrate-\(UUID().uuidString)")
        let tmp = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try TestData.tool("/usr/bin/ffmpeg")
        _ = try TestData.sharedFile("liveness/bona-fide-more/dpe_d.mp4")
        let video = TestData.shared.appendingPathComponent("liveness/bona-fide-more/dpe_d.mp4")
        let live = IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures/selfie/katie_live")
        func start() throws -> Process {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: try IDVDBinary.path())
            p.arguments = ["liveness", "calibrate", "--bona-fide", video.path, "--attack", "print=" + live.path, "--max-bpcer", "100",
                           "--out", dir.appendingPathComponent("x.json").path]
            p.environment = ProcessInfo.processInfo.environment.merging(IDVDBinary.testEnvironment) { _, n in n }
                .merging(["TMPDIR": tmp.path]) { _, n in n }
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        // Watched every 2 ms from the start to the end of a whole run: nothing appears in TMPDIR.
        let whole = try start()
        var appeared: Set<String> = []
        while whole.isRunning {
            appeared.formUnion((try? FileManager.default.subpathsOfDirectory(atPath: tmp.path)) ?? [])
            usleep(2_000)
        }
        XCTAssertEqual(whole.terminationStatus, 0)
        XCTAssertEqual(appeared, [], "nothing written to the temporary folder")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.json").path))
        // Stopped a moment in (ffmpeg decoding or the windows being judged): nothing left either.
        let stopped = try start()
        usleep(300_000)
        stopped.terminate()
        stopped.waitUntilExit()
        XCTAssertEqual(try FileManager.default.subpathsOfDirectory(atPath: tmp.path), [], "nothing left behind")
    }
}
