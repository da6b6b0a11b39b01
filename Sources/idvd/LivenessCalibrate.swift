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
                                   [--target-apcer PERCENT] [--max-bpcer PERCENT] [--force]
                                   [--out FILE] [--config FILE] [--fps N] [--seconds S]
      PATH is a video, a folder of JPEG/PNG frames (one capture), or a folder of videos and subfolders,
      searched down to \(maximumDepth) levels: each video is one capture, each subfolder of frames one capture.
      A folder holding both frames and videos (or frames and subfolders of captures) is refused.
      Captures are cut into non-overlapping S-second windows (default 3 s at --fps, above 0 and at most
      60, default 10; a last piece of at least 5/6 of a window counts too), each judged as one selfie.
      SPECIES names an attack species (e.g. print, phone-replay, monitor-replay; no control characters);
      give --attack once per species, or several SPECIES=PATH after it. The same capture may not be given
      twice (on both sides, or under two species).
      Prints, at the current setting (defaults, or --config FILE) and at the texture line that keeps every
      species' APCER at or below --target-apcer (default 0), each with its 95 % Clopper–Pearson interval:
        BPCER                  bona fide windows refused as attacks
        BPNRR (quality)        bona fide windows asked again for quality (no face, dark, blurred) before any PAD decision
        bona fide challenged   bona fide windows sent on to an active challenge (its outcome needs a person)
        bona fide retaken      bona fide captures asked to retake; a capture the policy is unsure about is
                               retaken with its next window and decided on both
        APCER / APNRR SPECIES  attack windows accepted as bona fide / asked again for quality, per species
      and, in passive mode, the step-up: the idv.pad.challenge_below these attack captures need (advice,
      not written). Warns when a 95 % upper bound exceeds max(target, 5 %) for APCER or --max-bpcer for
      BPCER (too few windows to show it), saying how many windows would be needed.
      Writes {"idv.pad.texture_line": …} to --out (default pad-calibration.json); when FILE is an existing
      flat JSON config file, that key is set in it and every other key kept — point it at your idvd config.
      A symbolic link is followed; the file keeps its mode and owner (written beside it, then renamed);
      anything but a regular file is refused. --out and --config are checked before any capture is read.
      The line is not written (exit 3) when BPCER there exceeds --max-bpcer (default 15 %, the iBeta
      level 1 bound), nor (exit 4) when a named capture was skipped (too short for a window, not
      decodable or decoded only in part, or a frame file that is not an image); --force writes it all the same. Warns when the line lies more than 2.0 log-odds from
      the default (-1.6). Every named species, and the bona fide side, must yield a capture.
      Video frames are decoded in memory (ffmpeg's output read from a pipe): no frame is written to disk.
      Exit status: 0 the line was written; 1 no line reaches the target (nothing written); 2 usage or input
      error: bad option, missing or mixed folder, a species with no capture read, unreadable --config,
      --out not writable (nothing written); 3 BPCER above --max-bpcer (printed, not written); 4 a named
      capture was skipped (printed, not written).
    """

    /// The exit statuses besides 0 (written) and 2 (a usage or input error, thrown as `CLIError`).
    enum Exit: Int32 {
        case written = 0
        case noLine = 1
        case bpcerAboveBound = 3
        case capturesSkipped = 4
    }

    /// How deep `captures(_:)` searches folders of captures (the folder given is level 0).
    static let maximumDepth = 8

    /// The captures of `path` (file paths, in name order): a video (any file) or a frame folder is
    /// one; a folder of videos and subfolders gives one per video and per subfolder of frames,
    /// searched down to ``maximumDepth`` levels. Throws a `CLIError` for a missing path, an
    /// unreadable folder, a folder mixing frames with videos or subfolders of captures, one nested
    /// too deep, or a folder that yields no capture.
    static func captures(_ path: String) throws -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { throw CLIError("no such file or folder: \(path)") }
        guard isDir.boolValue else { return [path] }
        let found = try folderCaptures(URL(fileURLWithPath: path), depth: 0)
        guard !found.isEmpty else { throw CLIError("\(path) holds no video and no folder of frames") }
        return found
    }

    private static func folderCaptures(_ url: URL, depth: Int) throws -> [String] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { !$0.hasPrefix(".") }.sorted() } catch {
            throw CLIError("cannot read the folder \(url.path): \(error.localizedDescription)")
        }
        var frames = 0, videos = 0, inner: [String] = []
        for name in names {
            let child = url.appendingPathComponent(name)
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: child.path, isDirectory: &isDir) else { continue }
            let ext = child.pathExtension.lowercased()
            if isDir.boolValue {
                guard depth + 1 <= maximumDepth else { throw CLIError("\(child.path) is nested more than \(maximumDepth) folders deep") }
                inner += try folderCaptures(child, depth: depth + 1)
            } else if SelfieInput.frameExtensions.contains(ext) {
                frames += 1
            } else if videoExtensions.contains(ext) {
                videos += 1
                inner.append(child.path)
            }
        }
        guard frames > 0 else { return inner }
        guard inner.isEmpty else {
            throw CLIError("\(url.path) mixes \(frames) image frame\(frames == 1 ? "" : "s") with \(inner.count) other capture"
                           + "\(inner.count == 1 ? "" : "s") (videos or folders of them): a folder is either the frames of one "
                           + "capture or a folder of captures; move the images or the videos out")
        }
        return [url.path]
    }

    static let videoExtensions: Set<String> = ["mp4", "mov", "m4v", "webm", "mkv", "avi", "3gp"]

    /// `--bona-fide A B --attack print=C replay=D`: the values after each option up to the next option.
    /// Throws a `CLIError` for a value of `--attack` that is not SPECIES=PATH, or a species name that
    /// is reserved or holds a control character.
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
                let species = String(a[..<eq])
                guard !species.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
                    throw CLIError("an attack species name may not hold a control character (newline, tab…): "
                                   + "\(species.debugDescription)")
                }
                guard species != Species.bonaFide else { throw CLIError("'\(species)' is not an attack species name") }
                attacks.append((species, String(a[a.index(after: eq)...])))
            default: rest.append(a)
            }
        }
        return (bona, attacks, rest)
    }

    /// A percentage option 0…100 as a share 0…1 (`fallback` when absent); a `CLIError` otherwise.
    private static func share(_ value: String?, _ name: String, fallback: Double) throws -> Double {
        guard let value else { return fallback }
        guard let x = Double(value), (0...100).contains(x) else { throw CLIError("--\(name) needs a percentage 0…100, got '\(value)'") }
        return x / 100
    }

    /// The frames of one capture and why it cannot be judged: nil frames with the cause when it is
    /// too short for a window, cannot be decoded, or decoded only in part (ffmpeg reported an error)
    /// (skipped and counted by the caller).
    private static func read(_ capture: String, fps: Double, perWindow: Int, seconds: Double) -> (frames: [Data]?, skipped: String?) {
        var isDir: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: capture, isDirectory: &isDir)
        let frames: [Data], diagnostic: String?
        do {
            if isDir.boolValue { (frames, diagnostic) = (try SelfieInput.folderFrames(URL(fileURLWithPath: capture)), nil) } else {
                (frames, diagnostic) = try SelfieInput.decodeVideo(capture, fps: fps, start: 0, seconds: nil)
            }
        } catch let error as CLIError {
            return (nil, error.description)
        } catch {
            return (nil, "\(capture) could not be read: \(error.localizedDescription)")
        }
        guard !frames.isEmpty else {
            return (nil, "\(capture) could not be decoded: no frame" + (diagnostic.map { " (ffmpeg: \($0))" } ?? ""))
        }
        guard !PADWindows.cut(frames.count, perWindow: perWindow).isEmpty else {
            return (nil, String(format: "%@ is shorter than %.1f s (%d frame%@ at %g fps)", capture, 5.0 / 6.0 * seconds, frames.count,
                                frames.count == 1 ? "" : "s", fps) + (diagnostic.map { "; ffmpeg: \($0)" } ?? ""))
        }
        // ffmpeg runs at `-v error`: anything it reported means the video was cut off or damaged, and
        // what decoded is only part of the capture — judged, it would stand for a capture it is not.
        if let diagnostic {
            return (nil, String(format: "%@ decoded only in part (%d frame%@ at %g fps; ffmpeg: %@)", capture, frames.count,
                                frames.count == 1 ? "" : "s", fps, diagnostic))
        }
        return (frames, nil)
    }

    /// How a message names frame `index` (0-based) of `capture`: its file in a folder of frames,
    /// else its place in the decoded video.
    private static func frameName(_ capture: String, _ index: Int) -> String {
        if let names = try? SelfieInput.folderFrameNames(URL(fileURLWithPath: capture)), names.indices.contains(index) {
            return "the frame file \(names[index])"
        }
        return "decoded frame \(index + 1)"
    }

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { print(usage); return 0 }
        let (bonaPaths, attackPaths, rest) = try lists(args)
        let (o, positional) = try CLI.parseOptions(rest, flags: ["force"],
                                                   valued: ["target-apcer", "max-bpcer", "out", "config", "fps", "seconds"],
                                                   command: "liveness calibrate")
        guard positional.isEmpty else { throw CLIError("unexpected argument '\(positional[0])'\n\(usage)") }
        guard !bonaPaths.isEmpty, !attackPaths.isEmpty else { throw CLIError("calibration needs bona fide captures and attacks\n\(usage)") }
        let target = try share(o["target-apcer"], "target-apcer", fallback: 0)
        let maxBPCER = try share(o["max-bpcer"], "max-bpcer", fallback: bpcerWarningRate)
        let force = o["force"] != nil
        var policy = WorkflowPolicy()
        if let file = o["config"] {
            do { policy = try ServerConfig.load(file: file, environment: [:]).engine.workflow } catch {
                throw CLIError("--config \(file): \(error)")
            }
        }
        var config = LivenessConfiguration()
        if let v = o["fps"] {
            guard let f = Double(v), f > 0, f <= 60 else { throw CLIError("--fps needs a rate above 0 and at most 60, got '\(v)'") }
            config.frameRate = f
        }
        let seconds = try o["seconds"].map { v -> Double in
            guard let x = Double(v), x >= 1, x <= 15 else { throw CLIError("--seconds needs 1…15") }
            return x
        } ?? 3
        // Every input is checked before the long analysis: the file written, and every capture found.
        let out = try ConfigFileTarget(o["out"] ?? "pad-calibration.json")
        let discovered = try (bonaPaths.map { (Species.bonaFide, $0) } + attackPaths).map { species, path in
            (species, path, try captures(path))
        }
        var seen: [String: (species: String, path: String)] = [:]
        for (species, _, list) in discovered {
            for capture in list {
                let key = identity(of: capture)
                if let earlier = seen[key] {
                    let side = { (s: String) in s == Species.bonaFide ? "bona fide" : "attack species '\(s)'" }
                    throw CLIError("\(capture) is given twice: as \(side(earlier.species))"
                                   + (earlier.path == capture ? "" : " (as \(earlier.path))") + " and as \(side(species)); "
                                   + "each capture may be judged once, on one side")
                }
                seen[key] = (species, capture)
            }
        }

        let perWindow = Int((seconds * config.frameRate).rounded())
        let engine = try FaceEngine.shared()
        let analyzer = SelfieAnalyzer(engine: engine, configuration: config)

        var presentations: [PADPresentation] = []
        var captureCount: [String: Int] = [:], skipped: [String: Int] = [:]
        var order: [String] = [], grouped: [String: [String]] = [:]
        for (species, _, list) in discovered {
            if !order.contains(species) { order.append(species) }
            grouped[species, default: []] += list
        }
        for species in order {
            for capture in grouped[species] ?? [] {
                let (read, cause) = read(capture, fps: config.frameRate, perWindow: perWindow, seconds: seconds)
                guard let frames = read else {
                    CLI.stderr("idvd: \(cause ?? capture): skipped")
                    skipped[species, default: 0] += 1
                    continue
                }
                var cut = PADWindows.cut(frames.count, perWindow: perWindow).map { ($0, true) }
                // One window only: the capture's end stands in for its retake (not counted itself).
                if cut.count == 1, frames.count - perWindow >= Int(config.frameRate.rounded()) {
                    cut.append(((frames.count - perWindow)..<frames.count, false))
                }
                var judged: [PADPresentation] = [], start = 0
                do {
                    for (w, (range, counted)) in cut.enumerated() {
                        start = range.lowerBound
                        let report = try analyzer.analyze(frames: Array(frames[range]))
                        judged.append(PADPresentation(species: species, capture: capture, window: w, report: report, counted: counted,
                                                      analyzer: analyzer))
                    }
                } catch let LivenessError.invalidFrame(index, error) {
                    // Skipped and counted like an undecodable video; its frame named as the operator sees it.
                    CLI.stderr("idvd: \(capture): \(frameName(capture, start + index)) is not a usable image (\(error.description)): skipped")
                    skipped[species, default: 0] += 1
                    continue
                }
                captureCount[species, default: 0] += 1
                presentations += judged
            }
            // Every side named must have been read: a species left out would leave its attacks unmeasured.
            guard captureCount[species, default: 0] > 0 else {
                throw CLIError("no capture of " + (species == Species.bonaFide ? "the bona fide side" : "attack species '\(species)'")
                               + " was read (every one skipped, see above): nothing to calibrate, nothing written")
            }
        }
        let skippedTotal = skipped.values.reduce(0, +)
        let evaluation = PADEvaluation(presentations: presentations)
        let windows = presentations.filter(\.counted)
        print("PAD calibration (ISO/IEC 30107-3): \(windows.filter(\.isBonaFide).count) bona fide windows of \(captureCount[Species.bonaFide] ?? 0) captures, "
              + "\(windows.filter { !$0.isBonaFide }.count) attack windows of \(order.count - 1) species "
              + "(\(order.dropFirst().map { "\($0): \(captureCount[$0, default: 0]) capture\(captureCount[$0, default: 0] == 1 ? "" : "s")" }.joined(separator: ", "))); "
              + "\(perWindow)-frame windows at \(config.frameRate) fps"
              + (skippedTotal == 0 ? "" : "; \(skippedTotal) named capture\(skippedTotal == 1 ? "" : "s") skipped ("
                 + order.filter { skipped[$0, default: 0] > 0 }.map { "\($0): \(skipped[$0]!)" }.joined(separator: ", ") + ")"))
        let width = max(15, order.map(\.count).max() ?? 0)
        func show(_ title: String, _ p: WorkflowPolicy) {
            let r = evaluation.rates(p, species: order)
            print(title)
            print("  BPCER                " + r.bpcer.formatted)
            print("  BPNRR (quality)      " + r.bpnrr.formatted)
            print("  bona fide challenged " + r.challenged.formatted + "  (sent on to an active challenge: its outcome needs a person, not a recording)")
            print("  bona fide retaken    " + r.retakes.formatted + (r.retakesNotSimulated > 0 ? "  (\(r.retakesNotSimulated) decided on one capture: no other window)" : ""))
            for (species, rate) in r.apcer {
                print("  APCER " + species.padding(toLength: width, withPad: " ", startingAt: 0) + rate.formatted
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
            return Exit.noLine.rawValue
        }
        var calibrated = policy
        calibrated.pad.textureLine = line
        show(String(format: "texture line for APCER ≤ %.1f %% on every species: idv.pad.texture_line = %.2f", 100 * target, line), calibrated)
        let atLine = evaluation.rates(calibrated, species: order)
        let bpcerTooHigh = atLine.bpcer.rate > maxBPCER
        let willWrite = force || (!bpcerTooHigh && skippedTotal == 0)
        for text in warnings(line: line, bpcer: atLine.bpcer, bound: maxBPCER, out: out.path, written: willWrite) { print(text) }
        for text in sampleWarnings(bpcer: atLine.bpcer, apcer: atLine.apcer, target: target, maxBPCER: maxBPCER) { print(text) }
        // The step-up (passive mode): the level these captures need, beside the one in force; advice, not written.
        if !calibrated.activeLiveness, calibrated.pad.challengeOnUnsure {
            let now = atLine.challenged
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
        let lineText = String(format: "%.2f", line)
        guard willWrite else {
            if bpcerTooHigh {
                print(String(format: "not written: BPCER at idv.pad.texture_line = %@ is %.1f %% (%d/%d), above --max-bpcer %.1f %%; "
                             + "nothing written to %@ (--force writes it all the same)", lineText, 100 * atLine.bpcer.rate,
                             atLine.bpcer.errors, atLine.bpcer.total, 100 * maxBPCER, out.path))
            }
            if skippedTotal > 0 {
                print("not written: \(skippedTotal) named capture\(skippedTotal == 1 ? " was" : "s were") skipped (see above), so the line "
                      + "does not measure every capture given; nothing written to \(out.path) (fix or remove them, or --force writes it all the same)")
            }
            return (bpcerTooHigh ? Exit.bpcerAboveBound : Exit.capturesSkipped).rawValue
        }
        try out.write(["idv.pad.texture_line": .number(line)])
        print("wrote idv.pad.texture_line = \(lineText) to \(out.path)"
              + (force && (bpcerTooHigh || skippedTotal > 0) ? " (--force: " + [bpcerTooHigh ? "BPCER above --max-bpcer" : nil,
                 skippedTotal > 0 ? "\(skippedTotal) capture\(skippedTotal == 1 ? "" : "s") skipped" : nil].compactMap { $0 }.joined(separator: ", ") + ")" : ""))
        return Exit.written.rawValue
    }

    /// One file however it is named (a link, `a/../a`): its device and inode, else its resolved path.
    static func identity(of path: String) -> String {
        var st = stat()
        if stat(path, &st) == 0 { return "\(st.st_dev):\(st.st_ino)" }
        return URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
    }

    /// How far (log-odds) a calibrated line may lie from ``PADPolicy/defaultTextureLine`` before the
    /// operator is warned, and the default `--max-bpcer` (iBeta level 1 allows 15 %).
    static let lineWarningDistance = 2.0
    static let bpcerWarningRate = 0.15
    /// The APCER a species' 95 % upper bound must reach (or the target, when higher) before the
    /// sample is said to support the calibration.
    static let apcerSampleBound = 0.05

    /// The warnings for texture line `line` (calibrated log-odds), at which bona fide presentations
    /// are rejected at `bpcer`, to be written to `out` (`written`: whether it will be): empty when
    /// the line is within ``lineWarningDistance`` of ``PADPolicy/defaultTextureLine`` and BPCER is at
    /// most `bound` (a share 0…1); otherwise what it means and what to do (docs/LIVENESS.md
    /// "Calibrating on your own devices").
    static func warnings(line: Double, bpcer: PADErrorRate, bound: Double = bpcerWarningRate, out: String, written: Bool = true) -> [String] {
        let base = PADPolicy.defaultTextureLine
        let far = abs(line - base) > lineWarningDistance, rejects = bpcer.rate > bound
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
                               + "refused as attacks.", 100 * bpcer.rate, bpcer.errors, bpcer.total, 100 * bound))
        }
        text.append("  Too few or unrepresentative captures do this too. Before going live: record bona fide captures of at least 30 "
                    + "people on your own devices and in your own light, more attack captures of each species, check that each "
                    + "species' captures are the attack they name, and calibrate again. An attack the texture does not see is "
                    + "stopped by the active challenge (idv.liveness_mode = active) and the illumination challenge, not by a higher "
                    + "line. " + (written ? "The line is written all the same; to keep the default, remove idv.pad.texture_line from \(out)."
                                          : "The line is not written."))
        return text
    }

    /// The fewest presentations in which 0 errors put the two-sided 95 % Clopper–Pearson upper bound
    /// at or below `rate` (0 < rate < 1): ln(0.025) / ln(1 − rate), about 3.7 / rate.
    static func presentationsNeeded(for rate: Double) -> Int {
        Int((log(0.025) / log(1 - rate)).rounded(.up))
    }

    /// Warnings that the windows are too few to support the result: BPCER whose 95 % upper bound
    /// exceeds `maxBPCER`, and each species' APCER whose upper bound exceeds the larger of `target`
    /// and ``apcerSampleBound`` (shares 0…1); each says the bound and how many windows would be needed.
    static func sampleWarnings(bpcer: PADErrorRate, apcer: [(species: String, rate: PADErrorRate)], target: Double,
                               maxBPCER: Double) -> [String] {
        var text: [String] = []
        func check(_ name: String, _ r: PADErrorRate, _ bound: Double, _ kind: String) {
            guard r.total > 0, bound > 0, bound < 1, r.interval95.upperBound > bound else { return }
            text.append(String(format: "warning: too few windows for %@: %d/%d, whose 95 %% upper bound is %.1f %%, above %.1f %%. "
                               + "Showing it at or below %.1f %% takes at least %d %@ windows with none in error.",
                               name, r.errors, r.total, 100 * r.interval95.upperBound, 100 * bound, 100 * bound,
                               presentationsNeeded(for: bound), kind))
        }
        check("BPCER", bpcer, maxBPCER, "bona fide")
        for (species, rate) in apcer { check("APCER \(species)", rate, max(target, apcerSampleBound), "attack") }
        return text
    }
}

/// The config file `idvd liveness calibrate --out` edits, checked before any capture is read: a
/// symbolic link is followed to its target; the target must be a regular file holding a flat JSON
/// object, or absent in an existing, writable folder. Writing sets keys in it, keeps every other key,
/// and keeps the file's mode and owner: a temporary file beside it, given them, synced, renamed over it.
struct ConfigFileTarget {
    /// The path as given (for messages) and the file written (the link's target).
    let path: String
    let target: String

    /// Throws a `CLIError` (nothing written) for a link loop, a target that is not a regular file,
    /// one that is not a flat JSON object, or a file or folder that cannot be written.
    init(_ path: String) throws {
        self.path = path
        var target = URL(fileURLWithPath: path).standardizedFileURL.path
        var hops = 0
        while let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: target) {
            hops += 1
            guard hops <= 32 else { throw CLIError("--out \(path): too many levels of symbolic links; nothing written") }
            target = destination.hasPrefix("/") ? destination
                : URL(fileURLWithPath: target).deletingLastPathComponent().appendingPathComponent(destination).standardizedFileURL.path
        }
        self.target = target
        let folder = URL(fileURLWithPath: target).deletingLastPathComponent().path
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw CLIError("--out \(path): no folder \(folder); nothing written")
        }
        guard access(folder, W_OK | X_OK) == 0 else { throw CLIError("--out \(path): cannot write in \(folder); nothing written") }
        var st = stat()
        if lstat(target, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFREG else {
                throw CLIError("--out \(path)\(target == path ? "" : " (\(target))") is not a regular file; nothing written")
            }
            guard access(target, W_OK) == 0 else { throw CLIError("--out \(path): \(target) is not writable; nothing written") }
            _ = try existing()
        }
    }

    /// The keys in the target now (empty when it does not exist); a `CLIError` when it is not a flat JSON object.
    func existing() throws -> [String: JSONValue] {
        guard FileManager.default.fileExists(atPath: target) else { return [:] }
        guard let data = FileManager.default.contents(atPath: target) else { throw CLIError("--out \(path): cannot read \(target); nothing written") }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
            throw CLIError("\(path) exists and is not a flat JSON config file; nothing written")
        }
        // What `idvd serve --config` reads: a string, number or boolean per key.
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            switch value {
            case .string, .integer, .number, .bool: continue
            default: throw CLIError("\(path) is not a flat JSON config file ('\(key)' must be a string, number or boolean, "
                                    + "as idvd serve --config reads it); nothing written")
            }
        }
        return object
    }

    /// Sets `settings` (each checked as an idvd setting first) in the target, every other key kept.
    func write(_ settings: [String: JSONValue]) throws {
        var object = try existing()
        for (k, v) in settings {
            var probe = ServerConfig()
            guard case let .number(x) = v else { continue }
            try probe.set(k, String(x))   // refuses an unknown key or a value out of range before writing
            object[k] = v
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(object) + Data("\n".utf8)

        var old = stat()
        let exists = stat(target, &old) == 0
        let folder = URL(fileURLWithPath: target).deletingLastPathComponent().path
        var template = Array("\(folder)/.\(URL(fileURLWithPath: target).lastPathComponent).XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { throw CLIError("--out \(path): cannot create a file in \(folder): \(String(cString: strerror(errno))); nothing written") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        func fail(_ what: String) -> CLIError {
            let reason = String(cString: strerror(errno))
            close(fd)
            return CLIError("--out \(path): \(what): \(reason); nothing written")
        }
        let written = data.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue }; return false }
                offset += n
            }
            return true
        }
        guard written else { throw fail("cannot write") }
        if exists {
            guard fchmod(fd, old.st_mode & 0o7777) == 0 else { throw fail("cannot keep the file's mode") }
            if old.st_uid != geteuid() || old.st_gid != getegid() {
                guard fchown(fd, old.st_uid, old.st_gid) == 0 else {
                    throw fail("cannot keep the file's owner (uid \(old.st_uid), gid \(old.st_gid)); run as root or as its owner")
                }
            }
        } else {
            let mask = umask(0)
            umask(mask)
            guard fchmod(fd, 0o666 & ~mask) == 0 else { throw fail("cannot set the file's mode") }
        }
        guard fsync(fd) == 0 else { throw fail("cannot sync") }
        guard close(fd) == 0 else { throw CLIError("--out \(path): cannot close: \(String(cString: strerror(errno))); nothing written") }
        guard rename(temporary, target) == 0 else {
            throw CLIError("--out \(path): cannot replace \(target): \(String(cString: strerror(errno))); nothing written")
        }
        renamed = true
        let dirfd = open(folder, O_RDONLY | O_DIRECTORY)
        if dirfd >= 0 { _ = fsync(dirfd); close(dirfd) }
    }
}
