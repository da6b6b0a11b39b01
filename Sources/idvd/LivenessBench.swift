import FaceKit
import Foundation
import Imaging

/// `idvd bench liveness`: ISO/IEC 30107-3 figures of passive liveness on the shared test data —
/// APCER per attack species, BPCER on bona fide windows — at the configured threshold, and the
/// time to analyse one 3 s sequence on one core.
extension Benchmark {
    static let liveness = Benchmark(name: "liveness", summary: "PAD: APCER per species, BPCER, time per 3 s sequence") { args in
        let (o, _) = try CLI.parseOptions(args, flags: ["verbose"])
        let data = URL(fileURLWithPath: o["data"] ?? "../shared/testdata")
        let live = data.appendingPathComponent("liveness")
        guard FileManager.default.fileExists(atPath: live.path) else { throw CLIError("no test data at \(live.path) (use --data DIR)") }
        var config = LivenessConfiguration()
        try config.apply(o)
        let seconds = Double(o["seconds"] ?? "3") ?? 3
        let lfwCount = Int(o["lfw"] ?? "30") ?? 30
        let verbose = o["verbose"] != nil
        let engine = try FaceEngine.shared()
        try engine.preload()
        let analyzer = SelfieAnalyzer(engine: engine, configuration: config)
        let perWindow = Int((seconds * config.frameRate).rounded())

        struct Outcome {
            let species: String; let source: String; let split: String; let report: LivenessReport
            let seconds: Double; let cpuSeconds: Double; let annotatedBlink: Bool?
        }
        var outcomes: [Outcome] = []
        var dump: [String] = []
        func cpuNow() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
        func run(_ species: String, _ source: String, _ frames: [Data], split: String, blink: Bool? = nil) throws {
            var report: LivenessReport?
            let c0 = cpuNow()
            let t = try Command.measure { report = try analyzer.analyze(frames: frames) }
            let cpu = cpuNow() - c0
            guard let report else { return }
            outcomes.append(Outcome(species: species, source: source, split: split, report: report, seconds: t, cpuSeconds: cpu, annotatedBlink: blink))
            struct Row: Encodable {
                let species: String; let source: String; let split: String; let annotated_blink: Bool?; let frames: Int
                let blocking: [String]; let residual: Double?; let residuals: [Double?]; let ear: [Double?]
                let mouth_action: Double?; let eye_action: Double?
                let landmarks: [[Double]?]
            }
            let row = Row(species: species, source: source, split: split, annotated_blink: blink, frames: report.frameCount,
                          blocking: report.reasons.filter(\.isBlocking).map(\.rawValue), residual: report.nonRigidResidual,
                          residuals: report.frames.map(\.residual), ear: report.frames.map(\.eyeAspectRatio),
                          mouth_action: report.mouthActionSpread, eye_action: report.eyeActionSpread,
                          landmarks: report.frames.map { $0.landmarks68?.flatMap { [$0.x, $0.y] } })
            if let d = try? JSONEncoder().encode(row) { dump.append(String(decoding: d, as: UTF8.self)) }
            if verbose {
                CLI.stderr(String(format: "%@ %@ live=%@ score=%d residual=%.4f blinks=%d mouth=%.3f eye=%.3f reasons=%@", species, source,
                                  report.live ? "yes" : "no", report.score, report.nonRigidResidual ?? -1, report.blinks.count,
                                  report.mouthActionSpread ?? -1, report.eyeActionSpread ?? -1,
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

        // Bona fide: every real talking-face video and the live twin of the replay, in windows.
        let videos = live.appendingPathComponent("real-face-videos")
        var bonaFide = try FileManager.default.contentsOfDirectory(atPath: videos.path).filter { $0.hasSuffix(".mp4") }.sorted()
            .map { (videos.appendingPathComponent($0).path, $0) }
        bonaFide.append((live.appendingPathComponent("attacks/replay-video/real.mov").path, "real.mov"))
        for (path, name) in bonaFide {
            let frames = try SelfieInput.videoFrames(path, fps: config.frameRate, start: 0, seconds: nil)
            for w in windows(frames) {
                let t0 = Double(w.start) / config.frameRate, t1 = t0 + seconds
                let blink = blinkIntervals[name].map { $0.contains { $0[0] >= t0 && $0[0] < t1 - 0.1 } }
                try run("bona fide", "\(name)@\(Int(t0))s", w.frames, split: name.hasPrefix("liveportrait") ? "dev" : "eval", blink: blink)
            }
        }

        // Attack: replay on a phone screen (video), in windows.
        let replay = try SelfieInput.videoFrames(live.appendingPathComponent("attacks/replay-video/fake_replay_on_phone.mp4").path,
                                                  fps: config.frameRate, start: 0, seconds: nil)
        for w in windows(replay) { try run("replay, phone video", "fake_replay_on_phone.mp4@\(w.start / Int(config.frameRate))s", w.frames, split: "eval") }

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
        for (seed, (name, url)) in stills.enumerated() {
            guard let bytes = try? Data(contentsOf: url), var photo = try? Image(data: bytes) else { continue }
            // The print shows the face large, as a held photo in front of a selfie camera would.
            if let face = try engine.detect(in: photo).first, let rect = face.box.expanded(by: 0.9).clipped(to: photo.bounds) {
                photo = try photo.cropped(rect)
            }
            let frames = try HeldPhotoAttack.frames(from: photo, count: perWindow, seed: UInt64(seed + 1), frameRate: config.frameRate)
                .map { try $0.jpegData(quality: 85) }
            try run("print, held", name, frames, split: name.hasPrefix("lfw/") ? "eval" : "dev")
        }

        // Attack: single stills (print photo, screen-replay face crops) as one-frame sequences.
        try run("print, still", "image_F1.jpg", [Data(contentsOf: live.appendingPathComponent("attacks/stills/image_F1.jpg"))], split: "eval")
        let crops = live.appendingPathComponent("attacks/replay-face-crops/fake")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: crops.path).sorted()) ?? [] {
            try run("replay, face crop", name, [Data(contentsOf: crops.appendingPathComponent(name))], split: "eval")
        }

        // Figures.
        if let path = o["dump"] { try (dump.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8) }
        func pct(_ n: Int, _ d: Int) -> String { d == 0 ? "n/a" : String(format: "%5.1f %% (%d/%d)", 100 * Double(n) / Double(d), n, d) }
        func residuals(_ o: [Outcome]) -> String {
            let r = o.compactMap(\.report.nonRigidResidual).sorted()
            guard !r.isEmpty else { return "" }
            return String(format: "residual min %.3f median %.3f max %.3f", r.first!, r[r.count / 2], r.last!)
        }
        print("liveness (passive PAD, ISO/IEC 30107-3), threshold \(config.threshold), \(perWindow)-frame sequences at \(config.frameRate) fps")
        print("split: dev = LivePortrait clips + held prints of faces/ and the Silent-Face stills (thresholds chosen on these);")
        print("       eval = SadTalker clips, real.mov, held prints of LFW, phone replay, stills, face crops (never tuned on)")
        for split in ["dev", "eval", "all"] {
            let subset = outcomes.filter { split == "all" || $0.split == split }
            let bona = subset.filter { $0.species == "bona fide" }
            guard !subset.isEmpty else { continue }
            print("[\(split)]")
            print("  BPCER  bona fide, all windows          \(pct(bona.filter { !$0.report.live }.count, bona.count))  \(residuals(bona))")
            let withBlink = bona.filter { $0.annotatedBlink == true }
            print("  BPCER  bona fide, annotated blink      \(pct(withBlink.filter { !$0.report.live }.count, withBlink.count))")
            for species in ["print, held", "replay, phone video", "print, still", "replay, face crop"] {
                let a = subset.filter { $0.species == species }
                guard !a.isEmpty else { continue }
                print("  APCER  \(species.padding(toLength: 30, withPad: " ", startingAt: 0)) \(pct(a.filter(\.report.live).count, a.count))  \(residuals(a))")
            }
        }
        var reasonCounts: [String: [String: Int]] = [:]
        for o in outcomes where !o.report.live {
            for r in o.report.reasons { reasonCounts[o.species, default: [:]][r.rawValue, default: 0] += 1 }
        }
        for (species, counts) in reasonCounts.sorted(by: { $0.key < $1.key }) {
            print("reasons \(species): " + counts.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        let full = outcomes.filter { $0.report.frameCount == perWindow && $0.species != "print, held" }
        if !full.isEmpty {
            let wall = full.map(\.seconds).sorted(), cpu = full.map(\.cpuSeconds).sorted()
            let frames = Double(full.reduce(0) { $0 + $1.report.frameCount })
            print(String(format: "time   %d sequences of %d frames (%.0f s), one thread: CPU median %.0f ms, max %.0f ms per sequence (%.1f ms per frame); wall median %.0f ms",
                         full.count, perWindow, seconds, 1000 * cpu[cpu.count / 2], 1000 * cpu.last!, 1000 * cpu.reduce(0, +) / frames,
                         1000 * wall[wall.count / 2]))
        }
        return 0
    }
}
