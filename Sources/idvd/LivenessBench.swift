import FaceKit
import Foundation
import IDVEngine
import IDVRuntime
import IDVReaders
import Imaging

/// `idvd bench liveness`: ISO/IEC 30107-3 figures of selfie PAD on the shared test data, per split
/// of the fixed by-person split (`bench/liveness-split.json`; docs/LIVENESS.md "Data and split"):
/// APCER per attack species and BPCER on every 3 s window of every bona fide clip, each with its
/// 95 % Clopper–Pearson interval, the share of bona fide presentations asked to retake, the
/// previous rules' figures from the same analyses, and the cost of one sequence on one core.
extension Benchmark {
    static let liveness = Benchmark(name: "liveness", summary: "PAD: APCER per species, BPCER, retakes (95 % intervals), time per 3 s sequence",
                                    hasUsage: true) { args in
        // --help prints the usage wherever it is run: before the split file or the data are looked for.
        if try LivenessBench.parse(args).options["help"] != nil { print(LivenessBench.usage); return 0 }
        return try LivenessBench(args).run()
    }
}

/// Attack species names of the liveness bench (ISO/IEC 30107-3 PAI species).
enum Species {
    static let bonaFide = "bona fide"
    static let realReplay = "replay, real footage"
    static let heldPrint = "print, held (simulated)"
    static let printStill = "print, still (single frame)"
    static let faceCrop = "replay, face crop (single frame)"
    static func simulated(_ d: ScreenReplayAttack.Device) -> String {
        switch d {
        case .phone: return "replay, simulated phone screen"
        case .laptop: return "replay, simulated laptop screen"
        case .fillsView: return "replay, simulated screen filling the view"
        }
    }
    static let attacks = [realReplay, heldPrint] + ScreenReplayAttack.Device.allCases.map(simulated) + [printStill, faceCrop]
}

final class LivenessBench {
    let options: [String: String]
    let data: URL
    let live: URL
    let split: PADSplit
    var config = LivenessConfiguration()
    let seconds: Double
    let lfwCount: Int
    let verbose: Bool
    let study: Bool
    let cache: FrameCache
    var perWindow: Int { Int((seconds * config.frameRate).rounded()) }

    static let usage = """
        usage: idvd bench liveness [--data DIR] [--split FILE] [--fps N] [--seconds S] [--lfw N] [--dump FILE.jsonl]
                                   [--study] [--texture-frames N] [--no-simulated] [--only dev|eval] [--no-frame-cache]
                                   [--verbose] [--threshold T] [--max-frames N] [--config FILE]
          --data DIR          shared test data (default ../shared/testdata)
          --split FILE        the fixed by-person split (default bench/liveness-split.json)
          --dump FILE         one JSON line per presentation: cues, texture per frame, decision, quality, times
          --study             also score every tracked frame with both texture crops (dlib box; the models' own
                              detector box) into the dump (slower; for calibration on dev)
          --lfw N             held prints of the first N LFW people of each split (default 30)
          --texture-frames N  frames scored by the texture models (default \(LivenessConfiguration().textureFrames))
          --no-simulated      skip the simulated screen re-captures (faster)
          --only SPLIT        analyse one split only
          --config FILE       judge with the policy settings of an idvd config file (e.g. one `idvd liveness calibrate` wrote)
          frames of videos are decoded once into IDVD_FRAME_CACHE (default ~/.cache/openidv/liveness-frames)
        """

    /// The command's options (`CLI.parseOptions`); throws `CLIError` on an unknown option or a missing value.
    static func parse(_ args: [String]) throws -> (options: [String: String], positional: [String]) {
        try CLI.parseOptions(args, flags: ["verbose", "no-simulated", "help", "study", "no-frame-cache"],
                             valued: ["data", "split", "fps", "threshold", "max-frames", "seconds", "lfw", "dump",
                                      "texture-frames", "only", "config"],
                             takesArguments: false, command: "bench liveness")
    }

    init(_ args: [String]) throws {
        let (o, _) = try Self.parse(args)
        options = o
        data = URL(fileURLWithPath: o["data"] ?? "../shared/testdata")
        live = data.appendingPathComponent("liveness")
        split = try PADSplit.load(o["split"] ?? "bench/liveness-split.json")
        try config.apply(o)
        if let v = o["texture-frames"] {
            guard let n = Int(v), n >= 1 else { throw CLIError("--texture-frames needs a positive integer") }
            config.textureFrames = n
        }
        seconds = Double(o["seconds"] ?? "3") ?? 3
        lfwCount = Int(o["lfw"] ?? "30") ?? 30
        verbose = o["verbose"] != nil
        study = o["study"] != nil
        cache = FrameCache(directory: o["no-frame-cache"] != nil ? nil : FrameCache.defaultDirectory)
        if let s = o["only"], !["dev", "eval"].contains(s) { throw CLIError("--only is dev or eval") }
        if let file = o["config"] { policy = try ServerConfig.load(file: file, environment: [:]).engine.workflow }
    }

    /// One analysed presentation.
    struct Outcome {
        let species: String; let source: String; let clip: String; let window: Int; let person: String; let split: String
        let report: LivenessReport
        let wallSeconds: Double
        /// false: a window cut only to stand in for the retake of a clip's one window.
        var counted = true
        var previousLive: Bool { report.motionScore >= 50 && !report.reasons.contains(where: \.isBlocking) }
        var oneCaptureLive: Bool { report.live }
        var presentation: PADPresentation { presentation(answering: nil) }
        /// With `analyzer`: a window that can be asked which challenge actions it answers.
        func presentation(answering analyzer: SelfieAnalyzer?) -> PADPresentation {
            PADPresentation(species: species, capture: clip, window: window, report: report, counted: counted, analyzer: analyzer)
        }
    }
    /// The server's policy the decisions are made with (defaults, or `--config FILE`).
    var policy = WorkflowPolicy()
    var outcomes: [Outcome] = []
    var dump: [String] = []
    var analyzer: SelfieAnalyzer!
    var engine: FaceEngine!
    var pad: TexturePAD!
    var detector: PADFaceDetector!

    func run() throws -> Int32 {
        if options["help"] != nil { print(Self.usage); return 0 }
        guard FileManager.default.fileExists(atPath: live.path) else { throw CLIError("no test data at \(live.path) (use --data DIR)") }
        engine = try FaceEngine.shared()
        try engine.preload()
        setBLASThreads(1)
        pad = try TexturePAD.shared()
        detector = try PADFaceDetector.shared()
        analyzer = SelfieAnalyzer(engine: engine, configuration: config, texturePAD: pad)
        let only = options["only"]

        // Bona fide clips (each window), their simulated screen re-captures, and a held print of each person.
        var personStills: [(person: String, jpeg: Data)] = []
        for (clipIndex, (clip, person)) in split.bona_fide_clips.sorted(by: { $0.key < $1.key }).enumerated() {
            let s = try split.split(of: person)
            if let only, only != s { continue }
            let frames = try cache.frames(live.appendingPathComponent(clip).path, fps: config.frameRate)
            for (w, range, counted) in windows(frames.count) {
                let window = Array(frames[range])
                let source = "\(clip)@\(String(format: "%.1f", Double(range.lowerBound) / config.frameRate))s" + (counted ? "" : " (retake)")
                let report = try judge(Species.bonaFide, source: source, clip: clip, window: w, person: person, split: s, frames: window,
                                       counted: counted)
                if w == 0, let best = report?.bestFrameJPEG { personStills.append((person, best)) }
                guard options["no-simulated"] == nil else { continue }
                let images = try window.map { try Image(data: $0) }
                for (d, device) in ScreenReplayAttack.Device.allCases.enumerated() {
                    let seed = UInt64(1000 * (clipIndex + 1) + 10 * w + d)
                    let replay = try ScreenReplayAttack.frames(from: images, device: device, seed: seed, frameRate: config.frameRate)
                    try judge(Species.simulated(device), source: source, clip: clip, window: w, person: person, split: s,
                              frames: try replay.frames.map { try $0.jpegData(quality: 85) }, counted: counted)
                }
            }
        }

        // Real replays (real footage of a screen), in windows.
        for (clip, person) in split.attack_clips.sorted(by: { $0.key < $1.key }) {
            let s = try split.split(of: person)
            if let only, only != s { continue }
            let frames = try cache.frames(live.appendingPathComponent(clip).path, fps: config.frameRate)
            for (w, range, counted) in windows(frames.count) {
                let source = "\(clip)@\(String(format: "%.1f", Double(range.lowerBound) / config.frameRate))s" + (counted ? "" : " (retake)")
                try judge(Species.realReplay, source: source, clip: clip, window: w, person: person, split: s, frames: Array(frames[range]),
                          counted: counted)
            }
        }

        // Print, held (simulated): each person's best frame (two hands), the stills, LFW people (one hand).
        var prints: [(name: String, person: String, hands: Int, image: Image)] = []
        for (person, jpeg) in personStills { prints.append(("\(person) (own clip)", person, 2, try Image(data: jpeg))) }
        for (path, person) in split.stills.sorted(by: { $0.key < $1.key }) {
            guard let bytes = try? Data(contentsOf: data.appendingPathComponent(path)) else { continue }
            prints.append((path, person, 2, try Image(data: bytes)))
        }
        let lfw = data.appendingPathComponent("lfw/images")
        for (s, people) in [("dev", split.lfw_dev_first_by_hash), ("eval", split.lfw_eval_first_by_hash)] {
            for name in people.prefix(lfwCount) {
                let dir = lfw.appendingPathComponent(name)
                guard let file = try? FileManager.default.contentsOfDirectory(atPath: dir.path).sorted().first,
                      let bytes = try? Data(contentsOf: dir.appendingPathComponent(file)) else { continue }
                prints.append(("lfw/\(name)", "lfw:\(s)", 1, try Image(data: bytes)))
            }
        }
        for (index, p) in prints.enumerated() {
            let s = p.person.hasPrefix("lfw:") ? String(p.person.dropFirst(4)) : try split.split(of: p.person)
            if let only, only != s { continue }
            var photo = p.image
            // The print shows the face large, as a held photo in front of a selfie camera would.
            if let face = try engine.detect(in: photo).first, let rect = face.box.expanded(by: 0.9).clipped(to: photo.bounds) {
                photo = try photo.cropped(rect)
            }
            for hand in 0..<p.hands {
                let frames = try HeldPhotoAttack.frames(from: photo, count: perWindow, seed: UInt64(index + 1 + 100 * hand), frameRate: config.frameRate)
                    .map { try $0.jpegData(quality: 85) }
                try judge(Species.heldPrint, source: hand == 0 ? p.name : "\(p.name)#\(hand + 1)", clip: p.name, window: hand,
                          person: p.person, split: s, frames: frames)
            }
        }

        // Single stills (a print photo, screen-replay face crops) as one-frame sequences: people outside the
        // tuning data, counted in eval.
        if only != "dev" {
            try judge(Species.printStill, source: "image_F1.jpg", clip: "image_F1.jpg", window: 0, person: "silentface_sample", split: "eval",
                      frames: [Data(contentsOf: live.appendingPathComponent("attacks/stills/image_F1.jpg"))])
            let crops = live.appendingPathComponent("attacks/replay-face-crops/fake")
            for name in (try? FileManager.default.contentsOfDirectory(atPath: crops.path).sorted()) ?? [] {
                try judge(Species.faceCrop, source: name, clip: name, window: 0, person: "replay_face_crops", split: "eval",
                          frames: [Data(contentsOf: crops.appendingPathComponent(name))])
            }
        }

        if let path = options["dump"] { try (dump.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8) }
        printFigures()
        return 0
    }

    // MARK: One presentation

    /// Analyses one presentation, records it (and its dump line); returns the report.
    @discardableResult
    func judge(_ species: String, source: String, clip: String, window: Int, person: String, split s: String,
               frames: [Data], counted: Bool = true) throws -> LivenessReport? {
        var report: LivenessReport?
        let t = try Command.measure { report = try analyzer.analyze(frames: frames) }
        guard let report else { return nil }
        outcomes.append(Outcome(species: species, source: source, clip: clip, window: window, person: person, split: s,
                                report: report, wallSeconds: t, counted: counted))
        let studied = study ? try studyFrames(frames, report: report) : nil
        let row = DumpRow(species: species, source: source, clip: clip, window: window, person: person, split: s, report: report,
                          study: studied)
        if let d = try? JSONEncoder().encode(row) { dump.append(String(decoding: d, as: UTF8.self)) }
        if verbose {
            CLI.stderr(String(format: "%@ | %@ | %@ fused=%d previous=%d texture=%.2f residual=%.4f reasons=%@", s, species, source,
                              report.score, report.motionScore, report.texture?.score ?? -1, report.nonRigidResidual ?? -1,
                              report.reasons.map(\.rawValue).joined(separator: ",")))
        }
        return report
    }

    /// The windows of a clip of `count` frames (`PADWindows.cut`), each with whether it counts; a
    /// clip with one window only gets a second, uncounted one from its end (starting at least 1 s
    /// later) to stand in for a retake — none when the clip is shorter than that.
    func windows(_ count: Int) -> [(Int, Range<Int>, Bool)] {
        let cut = PADWindows.cut(count, perWindow: perWindow)
        var out = cut.enumerated().map { ($0.offset, $0.element, true) }
        if cut.count == 1, count - perWindow >= Int(config.frameRate.rounded()) {
            out.append((1, (count - perWindow)..<count, false))
        }
        return out
    }

    /// Texture scores of every tracked frame with the two crops: around dlib's tracked box (as the
    /// analyser did so far) and around the box of the models' own detector, run on the whole frame
    /// and on the region around the tracked face.
    struct StudyFrame: Encodable {
        let i: Int
        let dlib: [Double]?
        let full_box: [Double]?; let full_conf: Double?; let full: [Double]?
        let roi_box: [Double]?; let roi_conf: Double?; let roi: [Double]?
    }

    func studyFrames(_ frames: [Data], report: LivenessReport) throws -> [StudyFrame] {
        var out: [StudyFrame] = []
        for summary in report.frames {
            guard let box = summary.box else { continue }
            let image = try Image(data: frames[summary.index])
            let rgb = image.rgbPixels
            try rgb.withUnsafeBufferPointer { buffer in
                func tex(_ b: FaceBox) throws -> [Double] {
                    try pad.score(rgb: buffer, width: image.width, height: image.height, box: b).perModel
                }
                let full = PADFaceDetector.matching(try detector.detect(rgb: buffer, width: image.width, height: image.height), tracked: box)
                var roi: PADFaceDetector.Detection?
                if let region = box.expanded(by: 1.0).clipped(to: image.bounds) {
                    roi = PADFaceDetector.matching(try detector.detect(rgb: buffer, width: image.width, height: image.height, region: region),
                                                   tracked: box)
                }
                func coords(_ b: FaceBox) -> [Double] { [b.left, b.top, b.right, b.bottom].map { ($0 * 10).rounded() / 10 } }
                out.append(StudyFrame(i: summary.index, dlib: try tex(box),
                                      full_box: full.map { coords($0.box) }, full_conf: full?.confidence, full: try full.map { try tex($0.box) },
                                      roi_box: roi.map { coords($0.box) }, roi_conf: roi?.confidence, roi: try roi.map { try tex($0.box) }))
            }
        }
        return out
    }

    /// A dump line: the evidence of one presentation, enough to re-run any decision rule on it.
    struct DumpRow: Encodable {
        let species: String; let source: String; let clip: String; let window: Int; let person: String; let split: String
        let frames: Int; let tracked: Int; let blocking: [String]; let reasons: [String]
        let residual: Double?; let plane_motion: Double?; let blinks: [BlinkEvent]; let mouth_action: Double?; let eye_action: Double?
        let identity_distance: Double?
        let inputs: LivenessFusion.Inputs?; let texture_frames: [Int]?; let texture: [Double]?; let texture_score: Double?
        let texture_log_odds: Double?; let texture_good: Int?
        let score: Int; let motion_score: Int; let quality_issues: [String]; let best_quality: FaceQuality?
        let frame_brightness: Double?; let times: SelfieStageTimes
        let per_frame: [PerFrame]
        let study: [StudyFrame]?
        struct PerFrame: Encodable {
            let i: Int; let w: Int; let h: Int; let box: [Double]?; let pose: [Double]?; let sharp: Double?; let bright: Double?
            let contrast: Double?; let ied: Double?; let ear: Double?; let mar: Double?; let res: Double?; let pd: Double?; let tex: Double?
            let faces: Int; let frame_bright: Double?
        }

        init(species: String, source: String, clip: String, window: Int, person: String, split: String, report r: LivenessReport,
             study: [StudyFrame]?) {
            self.species = species; self.source = source; self.clip = clip; self.window = window; self.person = person; self.split = split
            frames = r.frameCount; tracked = r.trackedFrameCount
            blocking = r.reasons.filter(\.isBlocking).map(\.rawValue); reasons = r.reasons.map(\.rawValue)
            residual = r.nonRigidResidual; plane_motion = r.planeMotion; blinks = r.blinks; mouth_action = r.mouthActionSpread; eye_action = r.eyeActionSpread
            identity_distance = r.identityDistance
            inputs = r.fusionInputs; texture_frames = r.texture?.frames; texture = r.texture?.scores; texture_score = r.texture?.score
            texture_log_odds = r.texture?.logOdds; texture_good = r.texture?.goodFrames.count
            score = r.score; motion_score = r.motionScore; quality_issues = r.quality?.issues.map(\.rawValue) ?? []
            best_quality = r.quality?.bestFrame; frame_brightness = r.quality?.frameBrightness; times = r.stageTimes
            func round(_ x: Double?, _ k: Double = 1000) -> Double? { x.map { ($0 * k).rounded() / k } }
            per_frame = r.frames.map { f in
                PerFrame(i: f.index, w: f.width, h: f.height, box: f.box.map { [$0.left, $0.top, $0.right, $0.bottom].map { ($0 * 10).rounded() / 10 } },
                         pose: f.pose.map { [$0.yaw, $0.pitch, $0.roll].map { ($0 * 10).rounded() / 10 } }, sharp: round(f.sharpness, 10),
                         bright: round(f.brightness, 10), contrast: round(f.contrast, 10), ied: round(f.interEyeDistance, 10),
                         ear: round(f.eyeAspectRatio), mar: round(f.mouthAspectRatio), res: round(f.residual, 10000), pd: round(f.planeDisplacement, 10000), tex: round(f.texture, 10000),
                         faces: f.faceCount, frame_bright: round(f.frameBrightness, 10))
            }
            self.study = study
        }
    }

    // MARK: Figures

    func printFigures() {
        func col(_ s: String, _ n: Int = 36) -> String { s.padding(toLength: n, withPad: " ", startingAt: 0) }
        let p = policy.pad
        print("liveness PAD (ISO/IEC 30107-3), \(perWindow)-frame sequences at \(config.frameRate) fps; 95 % Clopper–Pearson intervals")
        print("split: by person, fixed (bench/liveness-split.json, docs/LIVENESS.md); levels chosen on dev only")
        print("server policy (IDVEngine judgePAD): texture line \(p.textureLine), unsure margin \(p.unsureMargin), min good frames "
              + "\(p.minimumGoodFrames), plane motion level \(p.planeMotionLevel), retake on unsure \(p.retakeOnUnsure); texture: \(config.textureFrames) frames, "
              + (config.textureDetector ? "crops of the models' own detector" : "crops of the tracked dlib box")
              + String(format: ", calibration %.3f × raw %+.3f", config.textureCalibration.slope, config.textureCalibration.intercept))
        print("columns: policy = the server's decision (a capture it is unsure about is retaken with the next window of the same clip and")
        print("  decided on both); one capture = FaceKit's \(config.fusionRule.rawValue) on the capture alone; motion-v1 = motion cues only;")
        print("  BPNRR/APNRR = presentations the server asks again for quality before any PAD decision (ISO/IEC 30107-3 non-response)")
        for s in ["dev", "eval"] {
            let subset = outcomes.filter { $0.split == s }
            guard !subset.isEmpty else { continue }
            let evaluation = PADEvaluation(presentations: subset.map { $0.presentation(answering: analyzer) })
            let decisions = evaluation.decisions(policy)
            let rates = evaluation.rates(policy, species: [Species.bonaFide] + Species.attacks)
            let counted = subset.indices.filter { subset[$0].counted }
            let bona = counted.filter { subset[$0].species == Species.bonaFide }
            let people = Set(bona.map { subset[$0].person }).count
            print("[\(s)] \(bona.count) bona fide windows of \(people) people".padding(toLength: 46, withPad: " ", startingAt: 0)
                  + col("policy (server)", 38) + col("one capture") + col("motion-v1"))
            print("  " + col("BPCER  bona fide, every window", 44) + col(rates.bpcer.formatted, 38)
                  + col(PADErrorRate(errors: bona.filter { !subset[$0].oneCaptureLive }.count, total: bona.count).formatted)
                  + col(PADErrorRate(errors: bona.filter { !subset[$0].previousLive }.count, total: bona.count).formatted))
            // Why each non-response was asked again: the server's capture-quality gate before judging
            // (no face: 1032; an issue hiding the liveness evidence: 1060–1064), or a poor-capture pair.
            var causes: [String: Int] = [:]
            for i in bona where decisions[i].nonResponse {
                let p = subset[i].presentation
                let cause = !p.acquired ? "no face" : policy.recapture(p.evidence).map(\.rawValue) ?? "poor capture (pair)"
                causes[cause, default: 0] += 1
            }
            print("  " + col("BPNRR  bona fide asked again for quality", 44) + col(rates.bpnrr.formatted, 38)
                  + "(never classified: " + causes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")")
            let unknown = bona.filter { decisions[$0].askedChallenge }.count
            let steppedUp = bona.filter { decisions[$0].askedChallenge && decisions[$0].final.findings.contains(.textureNotConclusive) }.count
            print("  " + col("       bona fide asked for a challenge", 44) + col(rates.challenged.formatted, 38)
                  + "(step-up, texture not conclusive \(steppedUp); no sign of life \(unknown - steppedUp). "
                  + "Not measurable: the recordings do not follow challenges; BPCER if none did: "
                  + PADErrorRate(errors: rates.bpcer.errors + unknown, total: rates.bpcer.total).formatted + ")")
            print("  " + col("       bona fide asked to retake", 44) + col(rates.retakes.formatted, 38)
                  + (rates.retakesNotSimulated > 0 ? "(\(rates.retakesNotSimulated) with no other window: decided on the one capture)" : ""))
            for (species, rate) in rates.apcer {
                let idx = counted.filter { subset[$0].species == species }
                print("  " + col("APCER  \(species)", 44) + col(rate.formatted, 38)
                      + col(PADErrorRate(errors: idx.filter { subset[$0].oneCaptureLive }.count, total: idx.count).formatted)
                      + col(PADErrorRate(errors: idx.filter { subset[$0].previousLive }.count, total: idx.count).formatted)
                      + "APNRR \(PADErrorRate(errors: idx.filter { decisions[$0].nonResponse }.count, total: idx.count).formatted)"
                      + "  sent to a challenge \(idx.filter { decisions[$0].askedChallenge }.count)"
                      + " (answered \(idx.filter { decisions[$0].askedChallenge && decisions[$0].challenged?.outcome == .bonaFide }.count))")
            }
            // Every bona fide window the policy rejected or asked again, and why.
            for i in bona where !decisions[i].accepted || decisions[i].retaken {
                let o = subset[i], d = decisions[i]
                let pad = o.presentation.evidence.pad
                print("  bona fide \(d.accepted ? "retaken, accepted" : d.nonResponse ? "asked again for quality" : d.askedChallenge ? "asked for a challenge" : "REJECTED"): \(o.source) — first: \(d.first.findings.map(\.rawValue).joined(separator: ","))"
                      + (d.retaken ? "; with the retake: \(d.final.findings.isEmpty ? "bona fide" : d.final.findings.map(\.rawValue).joined(separator: ","))" : "")
                      + String(format: "; texture %.2f on %d good frames, motion %.2f, facial action %.2f, plane motion %.2f",
                               pad?.texture?.logOdds ?? .nan, pad?.texture?.goodFrames ?? 0, pad?.motion ?? .nan, pad?.facialAction ?? .nan,
                               pad?.planeMotion ?? .nan)
                      + (o.report.reasons.isEmpty ? "" : "; cues \(o.report.reasons.map(\.rawValue).joined(separator: ","))"))
            }
            for i in counted where subset[i].species != Species.bonaFide && decisions[i].accepted {
                let o = subset[i]
                let pad = o.presentation.evidence.pad
                print("  attack accepted: \(o.species) \(o.source)"
                      + String(format: " — texture %.2f on %d good frames, motion %.2f, facial action %.2f, plane motion %.2f",
                               pad?.texture?.logOdds ?? .nan, pad?.texture?.goodFrames ?? 0, pad?.motion ?? .nan, pad?.facialAction ?? .nan,
                               pad?.planeMotion ?? .nan)
                      + (decisions[i].retaken ? " (retaken; decided on both: \(decisions[i].final.findings.isEmpty ? "bona fide" : decisions[i].final.findings.map(\.rawValue).joined(separator: ",")))" : "")
                      + (decisions[i].askedChallenge ? " (then challenged: \(decisions[i].challenged.map { $0.outcome.rawValue } ?? "not evaluated"))" : ""))
            }
            printActive(subset, split: s)
        }
        // Texture cue per species (calibrated log-odds, the median over the good frames).
        print("texture cue per window (calibrated log-odds): min / median / max")
        for species in [Species.bonaFide] + Species.attacks {
            for s in ["dev", "eval"] {
                let t = outcomes.filter { $0.species == species && $0.split == s && $0.counted }.compactMap { $0.report.texture?.logOdds }.sorted()
                guard !t.isEmpty else { continue }
                print(String(format: "  %-4@ %-44@ %6.2f / %6.2f / %6.2f  (%d)", s, species, t.first!, t[t.count / 2], t.last!, t.count))
            }
        }
        printCost()
    }

    /// Active mode: what a server-issued challenge adds against replays. Each attack window is judged
    /// against each of the 8 challenges `ActiveChallenge.random` can issue (a head turn and a blink or
    /// an open mouth, in either order), over the window's own length; APCER is the share of (window,
    /// challenge) pairs the policy accepts — a recording answers a challenge it could not know only if
    /// it happens to show those actions in that order. The bona fide clips were not recorded answering
    /// challenges, so active-mode BPCER cannot be measured on them.
    func printActive(_ subset: [Outcome], split s: String) {
        let turns: [ChallengeAction] = [.turnLeft, .turnRight], others: [ChallengeAction] = [.blink, .openMouth]
        var challenges: [[ChallengeAction]] = []
        for t in turns { for o in others { challenges += [[t, o], [o, t]] } }
        let duration = Double(perWindow) / config.frameRate
        var lines: [(String, PADErrorRate, Int)] = []
        var answered: [Int: [String]] = [:] // window → the challenges it passed
        for species in Species.attacks {
            let idx = subset.indices.filter { subset[$0].species == species }
            guard !idx.isEmpty, subset[idx[0]].report.frameCount >= config.minimumFrames else { continue }
            var errors = 0, total = 0, anyWindow = Set<Int>()
            for actions in challenges {
                let challenge = ActiveChallenge(nonce: "bench", actions: actions, duration: duration, deadline: .distantFuture)
                var presentations: [PADPresentation] = []
                for i in idx {
                    var p = subset[i].presentation
                    let done = analyzer.completedActions(challenge, frames: subset[i].report.frames, blinks: subset[i].report.blinks)
                    let strengths = actions.indices.map { $0 < done.count ? 1.0 : 0.0 }
                    p.evidence.pad?.challenge = strengths
                    p.evidence.pad?.facialAction = nil
                    if done.count < actions.count { p.evidence.livenessCues.append(.challengeNotMet) }
                    p.evidence.challengeNonce = nil
                    presentations.append(p)
                }
                let d = PADEvaluation(presentations: presentations).decisions(policy)
                for (k, i) in idx.enumerated() where subset[i].counted {
                    total += 1
                    if d[k].accepted {
                        errors += 1
                        anyWindow.insert(i)
                        answered[i, default: []].append(actions.map(\.rawValue).joined(separator: ","))
                    }
                }
            }
            lines.append((species, PADErrorRate(errors: errors, total: total), anyWindow.count))
        }
        guard !lines.isEmpty else { return }
        print("  active mode (each window against the 8 possible challenges, \(String(format: "%.0f", duration)) s):")
        for (species, rate, windows) in lines {
            print("    APCER  " + species.padding(toLength: 42, withPad: " ", startingAt: 0) + rate.formatted
                  + "  (\(windows) window\(windows == 1 ? "" : "s") answered some challenge)")
        }
        // Every attack window that answered a challenge, and which.
        for (i, list) in answered.sorted(by: { $0.key < $1.key }) {
            let o = subset[i], pad = o.presentation.evidence.pad
            print("    answered: \(o.species) \(o.source) — \(list.joined(separator: "; "))"
                  + String(format: " (texture %.2f, motion %.2f, plane motion %.2f)", pad?.texture?.logOdds ?? .nan, pad?.motion ?? .nan,
                           pad?.planeMotion ?? .nan))
        }
    }

    func printCost() {
        let bonaWindows = outcomes.filter { $0.species == Species.bonaFide && $0.report.frameCount == perWindow }
        guard !bonaWindows.isEmpty else { return }
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
            for _ in 0..<5 { costs.append((try? FaceBench.cpu { _ = try analyzer.embedding(of: .portrait(portrait)) }) ?? 0) }
            costs.sort()
            print(String(format: "selfie step (liveness of %d frames + the portrait's descriptor, %@): median %.0f ms on one core (portrait %.0f ms)",
                         perWindow, portraitURL.lastPathComponent, 1000 * (totals[totals.count / 2] + costs[2]), 1000 * costs[2]))
        }
    }
}
