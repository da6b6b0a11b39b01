import FaceKit
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// `idvd liveness calibrate`: an operator's own captures — bona fide ones of real people on their
/// devices, and attacks (prints, screens) made the way they expect them — judged by the server's
/// policy: APCER per attack species and BPCER with 95 % Clopper–Pearson intervals (ISO/IEC
/// 30107-3), the share of bona fide captures asked to retake, and the texture line that holds a
/// target APCER, written as the `idv.pad.texture_line` setting the server reads (docs/LIVENESS.md
/// "Calibrating on your own devices").
enum LivenessCalibrate {
    static let usage = """
    usage: idvd liveness calibrate --bona-fide PATH [PATH…] --attack SPECIES=PATH [SPECIES=PATH…]
                                   [--target-apcer PERCENT] [--out FILE] [--config FILE] [--fps N] [--seconds S]
      PATH is a video, a folder of JPEG/PNG frames (one capture), or a folder of such videos and frame
      folders (one capture each). Captures are cut into non-overlapping S-second windows (default 3 s at
      --fps, default 10; a last piece of at least 5/6 of a window counts too), each judged as one selfie.
      SPECIES names an attack species (e.g. print, phone-replay, monitor-replay); give --attack once per
      species, or several SPECIES=PATH after it.
      Prints, at the current setting (defaults, or --config FILE) and at the texture line that keeps every
      species' APCER at or below --target-apcer (default 0): BPCER, the share of bona fide captures asked
      to retake, and APCER per species, each with its 95 % Clopper–Pearson interval. A capture the policy
      is unsure about is retaken with the next window of the same capture and decided on both.
      Writes {"idv.pad.texture_line": …} to --out (default pad-calibration.json); when FILE is an existing
      flat JSON config file, that key is set in it and every other key kept — point it at your idvd config.
      Warns (and still writes) when that line lies more than 2.0 log-odds from the default (-1.6) or BPCER
      there exceeds 15 %: too few or unrepresentative captures, or an attack species the texture does not see.
      A capture too short for a window is skipped; a species with no capture read is left out.
      Exit 0 when a line was written, 1 when no line reaches the target (nothing written).
    """

    /// The captures of `path`: a video or a frame folder is one; a folder of videos and frame folders gives one each.
    static func captures(_ path: String) throws -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { throw CLIError("no such file or folder: \(path)") }
        guard isDir.boolValue else { return [path] }
        let url = URL(fileURLWithPath: path)
        let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }.sorted()
        if names.contains(where: { SelfieInput.frameExtensions.contains(($0 as NSString).pathExtension.lowercased()) }) { return [path] }
        var out: [String] = []
        for name in names {
            let child = url.appendingPathComponent(name)
            var childIsDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: child.path, isDirectory: &childIsDir)
            if childIsDir.boolValue {
                let inner = (try? FileManager.default.contentsOfDirectory(atPath: child.path)) ?? []
                if inner.contains(where: { SelfieInput.frameExtensions.contains(($0 as NSString).pathExtension.lowercased()) }) {
                    out.append(child.path)
                }
            } else if videoExtensions.contains(child.pathExtension.lowercased()) {
                out.append(child.path)
            }
        }
        guard !out.isEmpty else { throw CLIError("\(path) holds no video and no folder of frames") }
        return out
    }

    static let videoExtensions: Set<String> = ["mp4", "mov", "m4v", "webm", "mkv", "avi", "3gp"]

    /// `--bona-fide A B --attack print=C replay=D`: the values after each option up to the next option.
    static func lists(_ args: [String]) throws -> (bonaFide: [String], attacks: [(String, String)], options: [String]) {
        var bona: [String] = [], attacks: [(String, String)] = [], rest: [String] = []
        var current: String?
        for a in args {
            if a == "--bona-fide" || a == "--attack" { current = a; continue }
            if a.hasPrefix("--") { current = nil; rest.append(a); continue }
            switch current {
            case "--bona-fide": bona.append(a)
            case "--attack":
                guard let eq = a.firstIndex(of: "="), eq != a.startIndex, a.index(after: eq) != a.endIndex else {
                    throw CLIError("--attack takes SPECIES=PATH, got '\(a)'")
                }
                attacks.append((String(a[..<eq]), String(a[a.index(after: eq)...])))
            default: rest.append(a)
            }
        }
        return (bona, attacks, rest)
    }

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { print(usage); return 0 }
        let (bonaPaths, attackPaths, rest) = try lists(args)
        let (o, positional) = try CLI.parseOptions(rest, valued: ["target-apcer", "out", "config", "fps", "seconds"],
                                                   command: "liveness calibrate")
        guard positional.isEmpty else { throw CLIError("unexpected argument '\(positional[0])'\n\(usage)") }
        guard !bonaPaths.isEmpty, !attackPaths.isEmpty else { throw CLIError("calibration needs bona fide captures and attacks\n\(usage)") }
        let target = try o["target-apcer"].map { v -> Double in
            guard let x = Double(v), (0...100).contains(x) else { throw CLIError("--target-apcer needs a percentage 0…100") }
            return x / 100
        } ?? 0
        var policy = WorkflowPolicy()
        if let file = o["config"] { policy = try ServerConfig.load(file: file, environment: [:]).engine.workflow }
        var config = LivenessConfiguration()
        if let v = o["fps"] { guard let f = Double(v), f > 0, f <= 60 else { throw CLIError("--fps needs 0…60") }; config.frameRate = f }
        let seconds = try o["seconds"].map { v -> Double in
            guard let x = Double(v), x >= 1, x <= 15 else { throw CLIError("--seconds needs 1…15") }
            return x
        } ?? 3
        let out = o["out"] ?? "pad-calibration.json"
        for path in bonaPaths + attackPaths.map(\.1) where !FileManager.default.fileExists(atPath: path) {
            throw CLIError("no such file or folder: \(path)")
        }
        let perWindow = Int((seconds * config.frameRate).rounded())
        let engine = try FaceEngine.shared()
        let analyzer = SelfieAnalyzer(engine: engine, configuration: config)
        let cache = FrameCache(directory: FrameCache.defaultDirectory)

        var presentations: [PADPresentation] = []
        var captureCount: [String: Int] = [:]
        func judge(_ species: String, _ path: String) throws {
            for capture in try captures(path) {
                let frames = try cache.frames(capture, fps: config.frameRate)
                var cut = PADWindows.cut(frames.count, perWindow: perWindow).map { ($0, true) }
                guard !cut.isEmpty else {
                    CLI.stderr("idvd: \(capture) is shorter than \(String(format: "%.1f", 5.0 / 6.0 * seconds)) s: skipped")
                    continue
                }
                // One window only: the capture's end stands in for its retake (not counted itself).
                if cut.count == 1, frames.count - perWindow >= Int(config.frameRate.rounded()) {
                    cut.append(((frames.count - perWindow)..<frames.count, false))
                }
                captureCount[species, default: 0] += 1
                for (w, (range, counted)) in cut.enumerated() {
                    let report = try analyzer.analyze(frames: Array(frames[range]))
                    presentations.append(PADPresentation(species: species, capture: capture, window: w, report: report, counted: counted,
                                                         analyzer: analyzer))
                }
            }
        }
        for path in bonaPaths { try judge(Species.bonaFide, path) }
        var order = [Species.bonaFide]
        for (species, path) in attackPaths {
            guard species != Species.bonaFide else { throw CLIError("'\(species)' is not an attack species name") }
            try judge(species, path)
            if !order.contains(species) { order.append(species) }
        }
        // Only captures that were read count: a species whose every capture was skipped is left out
        // (it has no presentation to judge), and said so.
        for species in order.dropFirst() where captureCount[species, default: 0] == 0 {
            CLI.stderr("idvd: no capture of attack species '\(species)' was read (every one skipped): left out of the calibration")
        }
        order = order.filter { captureCount[$0, default: 0] > 0 }
        guard order.first == Species.bonaFide else { throw CLIError("no bona fide capture was read (every one skipped): nothing to calibrate") }
        guard order.count > 1 else { throw CLIError("no attack capture was read (every one skipped): nothing to calibrate") }
        let evaluation = PADEvaluation(presentations: presentations)
        let windows = presentations.filter(\.counted)
        print("PAD calibration (ISO/IEC 30107-3): \(windows.filter(\.isBonaFide).count) bona fide windows of \(captureCount[Species.bonaFide] ?? 0) captures, "
              + "\(windows.filter { !$0.isBonaFide }.count) attack windows of \(order.count - 1) species "
              + "(\(order.dropFirst().map { "\($0): \(captureCount[$0, default: 0]) capture\(captureCount[$0, default: 0] == 1 ? "" : "s")" }.joined(separator: ", "))); "
              + "\(perWindow)-frame windows at \(config.frameRate) fps")
        func show(_ title: String, _ p: WorkflowPolicy) {
            let r = evaluation.rates(p, species: order)
            print(title)
            print("  BPCER                " + r.bpcer.formatted)
            print("  BPNRR (quality)      " + r.bpnrr.formatted)
            print("  bona fide challenged " + r.challenged.formatted + "  (sent on to an active challenge: its outcome needs a person, not a recording)")
            print("  bona fide retaken    " + r.retakes.formatted + (r.retakesNotSimulated > 0 ? "  (\(r.retakesNotSimulated) decided on one capture: no other window)" : ""))
            for (species, rate) in r.apcer {
                print("  APCER " + species.padding(toLength: 15, withPad: " ", startingAt: 0) + rate.formatted
                      + (r.apnrr[species].map { "   APNRR (quality) " + $0.formatted } ?? ""))
            }
        }
        show(String(format: "at the current texture line %.2f:", policy.pad.textureLine), policy)
        guard let line = evaluation.line(forAPCER: target, policy: policy, species: order) else {
            var high = policy
            high.pad.textureLine = 20
            let r = evaluation.rates(high, species: order)
            let blind = r.apcer.filter { $0.rate.rate > target }.map(\.species)
            print(String(format: "no texture line keeps APCER at or below %.1f %%: %@ pass%@ through the other cues (motion, facial action) "
                         + "at any line; nothing written", 100 * target, blind.joined(separator: ", "), blind.count == 1 ? "es" : ""))
            return 1
        }
        var calibrated = policy
        calibrated.pad.textureLine = line
        show(String(format: "texture line for APCER ≤ %.1f %% on every species: idv.pad.texture_line = %.2f", 100 * target, line), calibrated)
        for text in warnings(line: line, bpcer: evaluation.rates(calibrated, species: order).bpcer, out: out) { print(text) }
        // The step-up (passive mode): the level these captures need, beside the one in force; advice, not written.
        if !calibrated.activeLiveness, calibrated.pad.challengeOnUnsure {
            let now = evaluation.rates(calibrated, species: order).challenged
            if let level = evaluation.challengeLevel(forAPCER: target, policy: calibrated, species: order) {
                var at = calibrated
                at.pad.challengeBelow = level
                print(String(format: "step-up: these attack captures need idv.pad.challenge_below ≥ %.2f%@ (bona fide sent to a challenge there %@); "
                             + "in force %.2f (%@); not written — raise it when your attack captures include screens filling the view",
                             level, level <= line ? " (no step-up)" : "", evaluation.rates(at, species: order).challenged.formatted,
                             calibrated.pad.challengeBelow, now.formatted))
            } else {
                print(String(format: "step-up: no idv.pad.challenge_below keeps APCER at or below %.1f %% at this line "
                             + "(an attack answers its challenges); in force %.2f (bona fide sent to a challenge %@)",
                             100 * target, calibrated.pad.challengeBelow, now.formatted))
            }
        }
        try write(["idv.pad.texture_line": .number(line)], to: out)
        print("wrote idv.pad.texture_line = \(String(format: "%.2f", line)) to \(out)")
        return 0
    }

    /// How far (log-odds) a calibrated line may lie from ``PADPolicy/defaultTextureLine`` before the
    /// operator is warned, and the BPCER at the line above which they are (iBeta level 1 allows 15 %).
    static let lineWarningDistance = 2.0
    static let bpcerWarningRate = 0.15

    /// The warnings for writing texture line `line` (calibrated log-odds) to `out`, at which bona fide
    /// presentations are rejected at `bpcer`: empty when the line is within ``lineWarningDistance`` of
    /// ``PADPolicy/defaultTextureLine`` and BPCER is at most ``bpcerWarningRate``; otherwise what it
    /// means and what to do (docs/LIVENESS.md "Calibrating on your own devices").
    static func warnings(line: Double, bpcer: PADErrorRate, out: String) -> [String] {
        let base = PADPolicy.defaultTextureLine
        let far = abs(line - base) > lineWarningDistance, rejects = bpcer.rate > bpcerWarningRate
        guard far || rejects else { return [] }
        var text: [String] = []
        if far {
            text.append(String(format: "warning: the line %.2f is %.2f log-odds %@ the default %.2f.", line, abs(line - base),
                               line > base ? "above" : "below", base))
            if line > base {
                text.append("  Some attack captures score like live faces on texture, so the line climbs to refuse them and refuses real "
                            + "people with it: an attack species the texture does not see (or captures filed under the wrong species).")
            } else {
                text.append("  Every attack capture scores far below the default, so nothing holds the line up: too few attack captures, "
                            + "or only easy ones. A line this low lets through the attacks your captures did not include.")
            }
        }
        if rejects {
            text.append(String(format: "warning: BPCER at this line is %.1f %% (%d/%d), above %.0f %%: that share of real people would be "
                               + "refused as attacks.", 100 * bpcer.rate, bpcer.errors, bpcer.total, 100 * bpcerWarningRate))
        }
        text.append("  Too few or unrepresentative captures do this too. Before going live: record bona fide captures of at least 30 "
                    + "people on your own devices and in your own light, more attack captures of each species, check that each "
                    + "species' captures are the attack they name, and calibrate again. An attack the texture does not see is "
                    + "stopped by the active challenge (idv.liveness_mode = active) and the illumination challenge, not by a higher "
                    + "line. The line is written all the same; to keep the default, remove idv.pad.texture_line from \(out).")
        return text
    }

    /// Sets `settings` in the flat JSON config file `path` (created when missing; every other key kept).
    static func write(_ settings: [String: JSONValue], to path: String) throws {
        var object: [String: JSONValue] = [:]
        if let data = FileManager.default.contents(atPath: path) {
            guard let existing = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
                throw CLIError("\(path) exists and is not a flat JSON config file; nothing written")
            }
            object = existing
        }
        for (k, v) in settings {
            var probe = ServerConfig()
            guard case let .number(x) = v else { continue }
            try probe.set(k, String(x))   // refuses an unknown key or a value out of range before writing
            object[k] = v
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try (encoder.encode(object) + Data("\n".utf8)).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
