import FaceKit
import Foundation
import Imaging

/// `idvd bench liveness`: ISO/IEC 30107-3 figures of selfie PAD on the shared test data — APCER
/// per attack species and BPCER on every 3 s window of every bona fide clip, per split — for the
/// previous method (motion cues only, `LivenessFusion.Rule.motion`) and the fused method
/// (texture PAD + motion, `.textureMotion`) from the same analyses, and the per-stage cost of one
/// sequence on one core.
///
/// The dev/eval split is fixed (docs/LIVENESS.md, "Data and split"): levels are chosen on dev only.
extension Benchmark {
    static let liveness = Benchmark(name: "liveness", summary: "PAD: APCER per species, BPCER, previous vs fused method, time per 3 s sequence", hasUsage: true) { args in
        let (o, _) = try CLI.parseOptions(args, flags: ["verbose", "no-simulated", "help"],
                                          valued: ["data", "fps", "threshold", "mode", "max-frames", "seconds", "lfw", "dump", "texture-frames",
                                                   "tracking-margin"], takesArguments: false, command: "bench liveness")
        if o["help"] != nil {
            print("""
                usage: idvd bench liveness [--data DIR] [--fps N] [--seconds S] [--lfw N] [--dump FILE.jsonl]
                                           [--texture-frames N] [--tracking-margin M] [--no-simulated] [--verbose]
                                           [--threshold T] [--mode passive|active] [--max-frames N]
                  --data DIR          shared test data (default ../shared/testdata)
                  --dump FILE         one JSON line per sequence: cue strengths, texture per frame, scores, quality, times
                  --texture-frames N  frames scored by the texture models (default \(LivenessConfiguration().textureFrames))
                  --tracking-margin M 0 = detect every frame whole (the previous tracking)
                  --no-simulated      skip the simulated screen re-captures (faster)
                  --threshold, --mode, --max-frames   as for `idvd liveness analyze`
                """)
            return 0
        }
        let data = URL(fileURLWithPath: o["data"] ?? "../shared/testdata")
        let live = data.appendingPathComponent("liveness")
        guard FileManager.default.fileExists(atPath: live.path) else { throw CLIError("no test data at \(live.path) (use --data DIR)") }
        var config = LivenessConfiguration()
        try config.apply(o)
        if let v = o["texture-frames"] { guard let n = Int(v), n >= 1 else { throw CLIError("--texture-frames needs a positive integer") }; config.textureFrames = n }
        if let v = o["tracking-margin"] { guard let m = Double(v), m >= 0 else { throw CLIError("--tracking-margin needs a number ≥ 0") }; config.trackingMargin = m }
        let seconds = Double(o["seconds"] ?? "3") ?? 3
        let lfwCount = Int(o["lfw"] ?? "30") ?? 30
        let verbose = o["verbose"] != nil
        let engine = try FaceEngine.shared()
        try engine.preload()
        setBLASThreads(1)
        let pad = try TexturePAD.shared()
        let analyzer = SelfieAnalyzer(engine: engine, configuration: config, texturePAD: pad)
        let perWindow = Int((seconds * config.frameRate).rounded())

        struct Outcome {
            let species: String; let source: String; let split: String; let report: LivenessReport
            let wallSeconds: Double; let annotatedBlink: Bool?
            var previousLive: Bool { report.motionScore >= 50 && !report.reasons.contains(where: \.isBlocking) }
            var fusedLive: Bool { report.live }
            var recapture: Bool { !(report.quality?.issues.isEmpty ?? true) }
        }
        var outcomes: [Outcome] = []
        var dump: [String] = []
        func run(_ species: String, _ source: String, _ frames: [Data], split: String, blink: Bool? = nil) throws {
            var report: LivenessReport?
            let t = try Command.measure { report = try analyzer.analyze(frames: frames) }
            guard let report else { return }
            outcomes.append(Outcome(species: species, source: source, split: split, report: report, wallSeconds: t, annotatedBlink: blink))
            struct Row: Encodable {
                let species: String; let source: String; let split: String; let annotated_blink: Bool?; let frames: Int; let tracked: Int
                let blocking: [String]; let reasons: [String]; let residual: Double?; let blinks: Int
                let mouth_action: Double?; let eye_action: Double?; let inputs: LivenessFusion.Inputs?
                let texture_frames: [Int]?; let texture: [Double]?; let texture_score: Double?
                let score: Int; let motion_score: Int; let quality_issues: [String]; let best_quality: FaceQuality?
                let frame_brightness: Double?; let ear: [Double?]; let times: SelfieStageTimes
            }
            let row = Row(species: species, source: source, split: split, annotated_blink: blink, frames: report.frameCount,
                          tracked: report.trackedFrameCount, blocking: report.reasons.filter(\.isBlocking).map(\.rawValue),
                          reasons: report.reasons.map(\.rawValue), residual: report.nonRigidResidual, blinks: report.blinks.count,
                          mouth_action: report.mouthActionSpread, eye_action: report.eyeActionSpread, inputs: report.fusionInputs,
                          texture_frames: report.texture?.frames, texture: report.texture?.scores, texture_score: report.texture?.score,
                          score: report.score, motion_score: report.motionScore,
                          quality_issues: report.quality?.issues.map(\.rawValue) ?? [], best_quality: report.quality?.bestFrame,
                          frame_brightness: report.quality?.frameBrightness, ear: report.frames.map(\.eyeAspectRatio), times: report.stageTimes)
            if let d = try? JSONEncoder().encode(row) { dump.append(String(decoding: d, as: UTF8.self)) }
            if verbose {
                CLI.stderr(String(format: "%@ | %@ | %@ fused=%d previous=%d texture=%.2f residual=%.4f reasons=%@", split, species, source,
                                  report.score, report.motionScore, report.texture?.score ?? -1, report.nonRigidResidual ?? -1,
                                  report.reasons.map(\.rawValue).joined(separator: ",")))
            }
        }
        /// Non-overlapping windows of `perWindow` frames.
        func windows(_ frames: [Data]) -> [(start: Int, frames: [Data])] {
            stride(from: 0, to: frames.count - perWindow + 1, by: perWindow).map { ($0, Array(frames[$0..<($0 + perWindow)])) }
        }

        // Annotated blinks per video (approximate, from annotations_auto.jsonl).
        var blinkIntervals: [String: [[Double]]] = [:]
        if let text = try? String(contentsOf: live.appendingPathComponent("annotations_auto.jsonl"), encoding: .utf8) {
            for line in text.split(separator: "\n") {
                guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let file = obj["file"] as? String, let b = obj["blink_intervals_s"] as? [[Double]] else { continue }
                blinkIntervals[file] = b
            }
        }

        // The split (docs/LIVENESS.md): LivePortrait clips are dev, SadTalker clips and real.mov eval.
        func clipSplit(_ name: String) -> String { name.hasPrefix("liveportrait") ? "dev" : "eval" }

        // Bona fide: every real talking-face video and the live twin of the replay, in windows;
        // each window is also re-shown on three simulated screens (same split as its clip).
        let videos = live.appendingPathComponent("real-face-videos")
        var bonaFide = try FileManager.default.contentsOfDirectory(atPath: videos.path).filter { $0.hasSuffix(".mp4") }.sorted()
            .map { (videos.appendingPathComponent($0).path, $0) }
        bonaFide.append((live.appendingPathComponent("attacks/replay-video/real.mov").path, "real.mov"))
        var simulated: [(String, String, [Data], String)] = []
        for (clipIndex, (path, name)) in bonaFide.enumerated() {
            let frames = try SelfieInput.videoFrames(path, fps: config.frameRate, start: 0, seconds: nil)
            for (windowIndex, w) in windows(frames).enumerated() {
                let t0 = Double(w.start) / config.frameRate, t1 = t0 + seconds
                let blink = blinkIntervals[name].map { $0.contains { $0[0] >= t0 && $0[0] < t1 - 0.1 } }
                let source = "\(name)@\(Int(t0))s"
                try run("bona fide", source, w.frames, split: clipSplit(name), blink: blink)
                guard o["no-simulated"] == nil else { continue }
                let images = try w.frames.map { try Image(data: $0) }
                for (d, device) in ScreenReplayAttack.Device.allCases.enumerated() {
                    let seed = UInt64(1000 * (clipIndex + 1) + 10 * windowIndex + d)
                    let replay = try ScreenReplayAttack.frames(from: images, device: device, seed: seed, frameRate: config.frameRate)
                    simulated.append((Species.simulated(device), source, try replay.frames.map { try $0.jpegData(quality: 85) }, clipSplit(name)))
                }
            }
        }
        for (species, source, frames, split) in simulated { try run(species, source, frames, split: split) }
        simulated.removeAll()

        // Attack: replay on a phone screen (real footage), in windows.
        let replay = try SelfieInput.videoFrames(live.appendingPathComponent("attacks/replay-video/fake_replay_on_phone.mp4").path,
                                                  fps: config.frameRate, start: 0, seconds: nil)
        for w in windows(replay) { try run(Species.phoneVideo, "fake_replay_on_phone.mp4@\(w.start / Int(config.frameRate))s", w.frames, split: "eval") }

        // Attack: print, held — generated from portraits (faces/, the Silent-Face stills, LFW).
        var stills: [(String, URL)] = ["obama.jpg", "obama2.jpg", "obama3.jpg", "biden.jpg", "obama_small.jpg"]
            .map { ($0, data.appendingPathComponent("faces/\($0)")) }
        stills += ["image_F1.jpg", "image_T1.jpg"].map { ($0, live.appendingPathComponent("attacks/stills/\($0)")) }
        let lfw = data.appendingPathComponent("lfw/images")
        if let people = try? FileManager.default.contentsOfDirectory(atPath: lfw.path).sorted(), !people.isEmpty {
            let step = max(1, people.count / max(1, lfwCount))
            for person in stride(from: 0, to: people.count, by: step).prefix(lfwCount).map({ people[$0] }) {
                if let file = try? FileManager.default.contentsOfDirectory(atPath: lfw.appendingPathComponent(person).path).sorted().first {
                    stills.append(("lfw/\(person)", lfw.appendingPathComponent(person).appendingPathComponent(file)))
                }
            }
        }
        // Dev prints are held five times each (seeds n, n + 100, …: different hands), eval prints once
        // (seed n), as the first version of this bench did.
        for (seed, (name, url)) in stills.enumerated() {
            guard let bytes = try? Data(contentsOf: url), var photo = try? Image(data: bytes) else { continue }
            // The print shows the face large, as a held photo in front of a selfie camera would.
            if let face = try engine.detect(in: photo).first, let rect = face.box.expanded(by: 0.9).clipped(to: photo.bounds) {
                photo = try photo.cropped(rect)
            }
            let split = name.hasPrefix("lfw/") ? "eval" : "dev"
            for hand in 0..<(split == "dev" ? 5 : 1) {
                let frames = try HeldPhotoAttack.frames(from: photo, count: perWindow, seed: UInt64(seed + 1 + 100 * hand), frameRate: config.frameRate)
                    .map { try $0.jpegData(quality: 85) }
                try run(Species.heldPrint, hand == 0 ? name : "\(name)#\(hand + 1)", frames, split: split)
            }
        }

        // Attack: single stills (print photo, screen-replay face crops) as one-frame sequences.
        try run(Species.printStill, "image_F1.jpg", [Data(contentsOf: live.appendingPathComponent("attacks/stills/image_F1.jpg"))], split: "eval")
        let crops = live.appendingPathComponent("attacks/replay-face-crops")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: crops.appendingPathComponent("fake").path).sorted()) ?? [] {
            try run(Species.faceCrop, name, [Data(contentsOf: crops.appendingPathComponent("fake/\(name)"))], split: "eval")
        }

        // Figures.
        if let path = o["dump"] { try (dump.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8) }
        func pct(_ n: Int, _ d: Int) -> String { d == 0 ? "n/a" : String(format: "%5.1f %% (%d/%d)", 100 * Double(n) / Double(d), n, d) }
        func col(_ s: String) -> String { s.padding(toLength: 20, withPad: " ", startingAt: 0) }
        print("liveness PAD (ISO/IEC 30107-3), \(perWindow)-frame sequences at \(config.frameRate) fps, threshold \(config.threshold)")
        print("previous = motion cues only (\(LivenessFusion.Rule.motion.rawValue)); fused = texture PAD + motion (\(config.fusionRule.rawValue)),")
        print("  texture line \(config.textureLevels.line), strong \(config.textureLevels.strong), \(config.textureFrames) frames scored; both from the same analyses")
        print("split (fixed, docs/LIVENESS.md): dev = LivePortrait clips, their simulated screen re-captures, held prints of faces/ and the")
        print("  Silent-Face stills (levels chosen here); eval = SadTalker clips, real.mov, their re-captures, held prints of LFW, the phone")
        print("  replay video, the print still, the replay face crops (never tuned on)")
        for split in ["dev", "eval", "all"] {
            let subset = outcomes.filter { split == "all" || $0.split == split }
            guard !subset.isEmpty else { continue }
            print("[\(split)]" + String(repeating: " ", count: 44 - split.count) + col("previous") + col("fused"))
            let bona = subset.filter { $0.species == Species.bonaFide }
            let withBlink = bona.filter { $0.annotatedBlink == true }
            for (label, set) in [("BPCER  bona fide, every window", bona), ("BPCER  bona fide, annotated blink", withBlink)] {
                print("  " + label.padding(toLength: 44, withPad: " ", startingAt: 0)
                      + col(pct(set.filter { !$0.previousLive }.count, set.count)) + col(pct(set.filter { !$0.fusedLive }.count, set.count)))
            }
            print("  " + "       bona fide asked to recapture (quality)".padding(toLength: 44, withPad: " ", startingAt: 0)
                  + col("") + col(pct(bona.filter(\.recapture).count, bona.count)))
            for species in Species.attacks {
                let a = subset.filter { $0.species == species }
                guard !a.isEmpty else { continue }
                print("  " + "APCER  \(species)".padding(toLength: 44, withPad: " ", startingAt: 0)
                      + col(pct(a.filter(\.previousLive).count, a.count)) + col(pct(a.filter(\.fusedLive).count, a.count)))
            }
        }
        // Texture scores per species (median over the sequence's scored frames).
        print("texture score per sequence (10th percentile of the scored frames' bona fide probability): min / median / max")
        for species in [Species.bonaFide] + Species.attacks {
            for split in ["dev", "eval"] {
                let t = outcomes.filter { $0.species == species && $0.split == split }.compactMap { $0.report.texture?.score }.sorted()
                guard !t.isEmpty else { continue }
                print(String(format: "  %-4@ %-40@ %.3f / %.3f / %.3f  (%d)", split, species, t.first!, t[t.count / 2], t.last!, t.count))
            }
        }
        var reasonCounts: [String: [String: Int]] = [:]
        for o in outcomes where !o.fusedLive {
            for r in o.report.reasons { reasonCounts[o.species, default: [:]][r.rawValue, default: 0] += 1 }
        }
        for (species, counts) in reasonCounts.sorted(by: { $0.key < $1.key }) {
            print("reasons (fused) \(species): " + counts.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        let bonaWindows = outcomes.filter { $0.species == Species.bonaFide && $0.report.frameCount == perWindow }
        if !bonaWindows.isEmpty {
            func med(_ k: KeyPath<SelfieStageTimes, Double>) -> Double {
                let v = bonaWindows.map { $0.report.stageTimes[keyPath: k] }.sorted()
                return 1000 * v[v.count / 2]
            }
            let totals = bonaWindows.map(\.report.stageTimes.total).sorted()
            print(String(format: "time per %d-frame bona fide sequence, one core (thread CPU, OpenBLAS 1 thread), median of %d: total %.0f ms (max %.0f ms)",
                         perWindow, bonaWindows.count, 1000 * totals[totals.count / 2], 1000 * totals.last!))
            print(String(format: "  decode %.0f, detect %.0f, landmarks68 %.0f, quality %.0f, texture %.0f, cues %.1f, landmarks5+embed %.0f, best-frame JPEG %.1f ms",
                         med(\.decode), med(\.detect), med(\.landmarks), med(\.quality), med(\.texture), med(\.cues), med(\.embed), med(\.encode)))
            let wall = bonaWindows.map(\.wallSeconds).sorted()
            print(String(format: "  wall clock median %.0f ms (other processes' load shows here)", 1000 * wall[wall.count / 2]))
            // The selfie step also reads the reference: the document portrait's descriptor.
            let portraitURL = URL(fileURLWithPath: "Tests/Fixtures/selfie/katie_portrait.jpg")
            if let portrait = try? Data(contentsOf: portraitURL) {
                var costs: [Double] = []
                for _ in 0..<5 {
                    costs.append(try FaceBench.cpu { _ = try analyzer.embedding(of: .portrait(portrait)) })
                }
                costs.sort()
                print(String(format: "selfie step (liveness of %d frames + the portrait's descriptor, %@): median %.0f ms on one core (portrait %.0f ms)",
                             perWindow, portraitURL.lastPathComponent, 1000 * (totals[totals.count / 2] + costs[2]), 1000 * costs[2]))
            }
        }
        return 0
    }
}

/// Attack species names of the liveness bench (ISO/IEC 30107-3 PAI species).
enum Species {
    static let bonaFide = "bona fide"
    static let heldPrint = "print, held"
    static let phoneVideo = "replay, phone video (real footage)"
    static let printStill = "print, still (single frame)"
    static let faceCrop = "replay, face crop (single frame)"
    static func simulated(_ d: ScreenReplayAttack.Device) -> String {
        switch d {
        case .phone: return "replay, simulated phone screen"
        case .laptop: return "replay, simulated laptop screen"
        case .fillsView: return "replay, simulated screen filling view"
        }
    }
    static let attacks = [heldPrint, phoneVideo] + ScreenReplayAttack.Device.allCases.map(simulated) + [printStill, faceCrop]
}
