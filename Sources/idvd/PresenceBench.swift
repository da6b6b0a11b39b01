import FaceKit
import Foundation
import IDVEngine
import IDVTools
import Imaging

/// `idvd bench presence`: the illumination challenge's error rates on simulated captures of real
/// bona fide video (IDVTools `PhoneCaptureSimulator` over ../shared/testdata/liveness/bona-fide-more
/// and real-face-videos), split dev/eval by person, with exact 95 % intervals — false rejects of
/// bona fide captures, false accepts of four attacks (no reflection: an injected recording; another
/// session's sequence; a replay of a passing upload, re-encoded so the digest check does not apply;
/// the sequence shown late; and two presentation attacks, a flat print and a replay display filling
/// the camera's view, lit by the issued sequence) — and the measurement's cost per frame; each also with the policy's
/// retake of a faint reflection (`idv.presence_retake_p`, IDVEngine `PresencePolicy`): a capture the
/// policy would ask again is captured again in the same scene under a new sequence, and the second
/// capture decides. docs/LIVENESS.md "Presence".
extension Benchmark {
    static let presence = Benchmark(name: "presence", summary: "illumination challenge: FRR / FAR per attack with 95 % CIs on simulated captures, cost per frame",
                                    hasUsage: true) { args in
        let (o, _) = try CLI.parseOptions(args, flags: ["verbose", "help", "texture"],
                                          valued: ["data", "windows", "scenes", "split", "dump", "lux", "delays", "far", "min-score", "guard", "draws", "clips", "retake-p",
                                                   "variants"],
                                          takesArguments: false, command: "bench presence")
        if o["help"] != nil {
            print("""
                usage: idvd bench presence [--data DIR] [--split dev|eval|all] [--windows N] [--scenes N] [--lux LO-HI]
                                           [--delays MS,MS,…] [--far P] [--min-score S] [--guard MS] [--draws N]
                                           [--retake-p P] [--clips N] [--variants V,V,…] [--dump FILE.jsonl] [--texture] [--verbose]
                  --data DIR       shared test data (default ../shared/testdata)
                  --split S        which people (default all; dev and eval are printed apart either way)
                  --windows N      3 s windows per clip (default 2), --scenes N simulated scenes per window (default 2)
                  --lux LO-HI      ambient light range, lux (default 50-1000, log-uniform)
                  --delays LIST    delays of the late-sequence attack, ms (default 250,500,1000)
                  --far, --min-score, --guard, --draws   IlluminationConfiguration (defaults: FaceKit's)
                  --retake-p P     idv.presence_retake_p of the "with the retake" figures (default: the server's, 0.1)
                  --clips N        at most N clips (a quick look)
                  --variants LIST  only these captures (default all): bona fide, no reflection, another session's sequence,
                                   delayed N ms (one per --delays), print filling the view, screen filling the view,
                                   print held in view; e.g. --variants "print filling the view,screen filling the view"
                                   (a print: paper gloss 0–0.03 per scene; a replay display: glass glare 0.01–0.06 per scene;
                                   a held print: gloss 0–0.03, the sheet 0.1–1.0 face boxes past the face, the room around it;
                                   all at face distance, lit by the issued sequence — IDVTools PhoneCaptureSimulator.Surface)
                  --texture        also the FaceKit PAD texture evidence (calibrated log-odds, as the server's selfie
                                   analyser gives the PAD policy) of each variant's first capture, of the same scene
                                   rendered with the screen dark, and of the raw window frames: quantiles, the shares
                                   below idv.pad.texture_line and idv.pad.challenge_below, and the share that passes
                                   the illumination check with texture at the line (about 3 × slower)
                  --dump FILE      one JSON line per capture: split, clip, scene, variant, sequence, frame times,
                                   per-frame face-to-background log ratios, the surface of a print or screen, the report
                Each split also gets two diagnostic rules on the first captures (not the server's, which scores the
                larger of the check's two views): the face-to-background ratio view alone, and both views each at the line.
                """)
            return 0
        }
        let data = URL(fileURLWithPath: o["data"] ?? "../shared/testdata").appendingPathComponent("liveness")
        guard FileManager.default.fileExists(atPath: data.path) else { throw CLIError("no test data at \(data.path) (use --data DIR)") }
        func int(_ key: String, _ d: Int) throws -> Int {
            guard let v = o[key] else { return d }
            guard let n = Int(v), n >= 1 else { throw CLIError("--\(key) needs a positive integer") }
            return n
        }
        let windowsPerClip = try int("windows", 2), scenesPerWindow = try int("scenes", 2), maxClips = try int("clips", 10_000)
        let splitWanted = o["split"] ?? "all"
        guard ["dev", "eval", "all"].contains(splitWanted) else { throw CLIError("--split is dev, eval or all") }
        var lux = 50.0...1000.0
        if let v = o["lux"] {
            let parts = v.split(separator: "-").compactMap { Double($0) }
            guard parts.count == 2, parts[0] >= 1, parts[1] >= parts[0] else { throw CLIError("--lux needs LO-HI, e.g. 50-1000") }
            lux = parts[0]...parts[1]
        }
        let delays = try (o["delays"] ?? "250,500,1000").split(separator: ",").map { s -> Double in
            guard let d = Double(s), d > 0 else { throw CLIError("--delays needs positive milliseconds") }
            return d
        }
        let delayVariants = delays.map { "delayed \(Int($0)) ms" }
        let surfaceVariants = ["print filling the view", "screen filling the view", "print held in view"]
        let allVariants = ["bona fide", "no reflection", "another session's sequence"] + delayVariants + surfaceVariants
        var selected = Set(allVariants)
        if let v = o["variants"] {
            let names = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !names.isEmpty else { throw CLIError("--variants needs at least one of: \(allVariants.joined(separator: ", "))") }
            for n in names where !allVariants.contains(n) {
                throw CLIError("--variants: no variant \"\(n)\" (there are: \(allVariants.joined(separator: ", ")))")
            }
            selected = Set(names)
        }
        var check = IlluminationConfiguration()
        if let v = o["far"] { guard let p = Double(v) else { throw CLIError("--far needs a number") }; check.falseAcceptRate = p }
        if let v = o["min-score"] { guard let s = Double(v) else { throw CLIError("--min-score needs a number") }; check.minimumScore = s }
        if let v = o["guard"] { guard let g = Double(v) else { throw CLIError("--guard needs milliseconds") }; check.guardMilliseconds = g }
        if let v = o["draws"] { guard let n = Int(v) else { throw CLIError("--draws needs an integer") }; check.nullDraws = n }
        if check.falseAcceptRate * Double(check.nullDraws + 1) < 1 { check.nullDraws = Int((1 / check.falseAcceptRate).rounded(.up)) * 2 - 1 }
        try check.validate()
        var retake = PresencePolicy()
        if let v = o["retake-p"] {
            guard let p = Double(v), (0...0.5).contains(p) else { throw CLIError("--retake-p needs a number from 0 to 0.5") }
            retake.retakePValue = p
        }
        let verbose = o["verbose"] != nil
        let padPolicy = WorkflowPolicy().pad

        let engine = try FaceEngine.shared()
        try engine.preload()
        setBLASThreads(1)
        // The analysis the server runs, without what presence does not use (texture, descriptors).
        var config = LivenessConfiguration()
        config.texture = false
        config.identitySamples = 0
        config.templateFrames = 1
        let analyzer = SelfieAnalyzer(engine: engine, configuration: config)
        let texture = o["texture"] != nil ? try PresenceTexture(engine: engine) : nil
        var textureRows: [PresenceTexture.Row] = []

        // The people and their split: sorted person ids, even positions dev, odd positions eval.
        let clips = try PresenceData.clips(data)
        let people = Array(Set(clips.map(\.person))).sorted()
        func split(_ person: String) -> String { (people.firstIndex(of: person) ?? 0) % 2 == 0 ? "dev" : "eval" }

        /// `followed`: the first capture alone; `followedWithRetake`: after the policy's retake, when it asks one.
        /// `ratioAlone`, `bothViews`: the diagnostic rules of the first capture (``viewsAlone``).
        struct Outcome { let split: String; let variant: String; let lux: Double; let followed: Bool; let followedWithRetake: Bool; let retaken: Bool
                         let ratioAlone: Bool; let bothViews: Bool; var margin: Double? = nil }
        typealias Surface = PhoneCaptureSimulator.Surface
        var outcomes: [Outcome] = []
        var sampleCPU: [Double] = [], checkCPU: [Double] = []
        var dump: FileHandle?
        if let path = o["dump"] {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CLIError("cannot write \(path)") }
            dump = FileHandle(forWritingAtPath: path)
        }
        defer { try? dump?.close() }
        let design = check.design
        var clipCount = 0
        for (clipIndex, clip) in clips.enumerated() {
            let s = split(clip.person)
            guard splitWanted == "all" || splitWanted == s else { continue }
            guard clipCount < maxClips else { break }
            clipCount += 1
            let all = try SelfieInput.videoFrames(clip.path, fps: 10, start: 0, seconds: nil)
            let perWindow = 34
            let windows = stride(from: 0, to: max(1, all.count - perWindow + 1), by: perWindow).prefix(windowsPerClip)
            for (w, start) in windows.enumerated() {
                let source = try all[start..<min(all.count, start + perWindow)].map { try Image(data: $0, maxPixels: 4_000_000) }
                guard source.count >= 20 else { continue }
                let faces = try PresenceCLI.faces(source, engine: engine)
                guard faces.contains(where: { $0 != nil }) else { continue }
                if let texture {
                    let t = try texture.logOdds(Array(all[start..<min(all.count, start + perWindow)]))
                    textureRows.append(.init(split: s, variant: "window", rendering: .raw, logOdds: t, followed: nil))
                }
                for sc in 0..<scenesPerWindow {
                    let sceneSeed = UInt64(clipIndex + 1) &* 1_000_003 &+ UInt64(w) &* 1009 &+ UInt64(sc) &* 17 &+ 5
                    var g = SplitMix64(seed: sceneSeed)
                    let scene = PhoneCaptureScene.random(using: &g, ambientLux: lux)
                    let sequence = design.random(using: &g)
                    let first = PhoneCaptureSimulator.frameTimes(count: 1, framesPerSecond: 10, using: &g)[0]
                    let count = Int(((Double(sequence.totalMilliseconds) + 100 - first) / 100).rounded(.up))
                    let times = (0..<count).map { first + Double($0) * 100 }
                    let order = PresenceCLI.pingPong(Array(source.indices), count: count)
                    let frames = order.map { source[$0] }, boxes = order.map { faces[$0] }
                    let simulator = PhoneCaptureSimulator(scene: scene)
                    let other = design.random(using: &g)
                    var variants: [(String, IlluminationSequence?, Double, IlluminationSequence)] = [
                        ("bona fide", sequence, 0, sequence), ("no reflection", nil, 0, sequence),
                        // A passing capture replayed into another session (re-encoded: new bytes): its light
                        // followed the first session's sequence, the check uses the new session's.
                        ("another session's sequence", sequence, 0, other),
                    ]
                    for d in delays { variants.append(("delayed \(Int(d)) ms", sequence, d, sequence)) }
                    // The presentation attacks: a print or a replay display filling the view, lit by the
                    // issued sequence (the phone shows it to whatever is in front of it). Each has its own
                    // generator (its surface, its captures' noise, its retake's sequence), seeded by the
                    // scene, so that its captures are the same whichever variants run, and the others'
                    // are those of a run without it.
                    variants += surfaceVariants.map { ($0, sequence, 0, sequence) }
                    variants = variants.filter { selected.contains($0.0) }
                    var bonaFideSamples: [IlluminationSample?]?
                    var bonaFideTimes: [Double] = []
                    var lastCapture: [Data] = []
                    /// The variant's capture: the light shown (`shown`, late by `delay`) judged against
                    /// `judged`; "another session's sequence" reuses the bona fide capture's measurements.
                    func captureAndCheck(_ variant: String, _ shown: IlluminationSequence?, _ delay: Double, _ judged: IlluminationSequence,
                                         reuse: Bool, surface: Surface = .person,
                                         seed: UInt64? = nil) throws -> (IlluminationReport, [IlluminationSample?], [Double]) {
                        let samples: [IlluminationSample?], reported: [Double]
                        if reuse, let b = bonaFideSamples {
                            samples = b
                            reported = bonaFideTimes
                        } else {
                            let capture = try simulator.capture(frames: frames, captureTimesMs: times, faces: boxes, sequence: shown,
                                                                delayMs: delay, surface: surface, seed: seed ?? g.next())
                            let report = try analyzer.analyze(frames: capture.frames)
                            sampleCPU.append(report.stageTimes.illumination / Double(max(1, report.frameCount)))
                            samples = report.frames.map(\.illumination)
                            reported = capture.frameTimesMs
                            lastCapture = capture.frames
                        }
                        let t0 = threadCPUSeconds()
                        let r = IlluminationCheck.evaluate(samples: samples, frameTimesMs: reported, sequence: judged, configuration: check)
                        checkCPU.append(threadCPUSeconds() - t0)
                        return (r, samples, reported)
                    }
                    for (variant, shown, delay, judged) in variants {
                        let reuse = variant == "another session's sequence"
                        var own = SplitMix64(seed: sceneSeed ^ (0x5355_5246_4143_4500 &+ UInt64(surfaceVariants.firstIndex(of: variant) ?? 0)))
                        let surface: Surface
                        switch variant {
                        case "print filling the view": surface = .printFillingView(gloss: own.uniform(0, 0.03))
                        case "screen filling the view": surface = .screenFillingView(glare: own.uniform(0.01, 0.06))
                        case "print held in view": surface = .printHeld(gloss: own.uniform(0, 0.03), margin: own.uniform(0.1, 1.0))
                        default: surface = .person
                        }
                        let ownSeed: UInt64? = surface == .person ? nil : own.next()
                        let (r, samples, reported) = try captureAndCheck(variant, shown, delay, judged, reuse: reuse, surface: surface, seed: ownSeed)
                        if variant == "bona fide" { bonaFideSamples = samples; bonaFideTimes = reported }
                        // The texture of this first capture, and (a person or a surface lit by the sequence)
                        // of the same scene and surface with the screen dark (its own seed: no generator moves).
                        if let texture, !reuse {
                            textureRows.append(.init(split: s, variant: variant, rendering: .flashed, logOdds: try texture.logOdds(lastCapture),
                                                     followed: r.followed))
                            if variant == "bona fide" || surface != .person {
                                let dark = try simulator.capture(frames: frames, captureTimesMs: times, faces: boxes, sequence: nil,
                                                                 surface: surface, seed: sceneSeed ^ 0x4441_524b_5343_5245)
                                textureRows.append(.init(split: s, variant: variant, rendering: .unflashed, logOdds: try texture.logOdds(dark.frames),
                                                         followed: nil))
                            }
                        }
                        // The policy's retake: the same scene, a new sequence the server issues; the attack
                        // repeats itself against it (its light: none, the new one late, the other session's
                        // capture replayed again against yet another sequence, or the print or display held
                        // again in front of the phone, lit by the new sequence).
                        var second: IlluminationReport?
                        if !r.followed, retake.retakes(pValue: r.pValue) {
                            if surface != .person {
                                let fresh = design.random(using: &own)
                                second = try captureAndCheck(variant, fresh, 0, fresh, reuse: false, surface: surface, seed: own.next()).0
                            } else {
                                let fresh = design.random(using: &g)
                                switch variant {
                                case "bona fide": second = try captureAndCheck(variant, fresh, 0, fresh, reuse: false).0
                                case "no reflection": second = try captureAndCheck(variant, nil, 0, fresh, reuse: false).0
                                case "another session's sequence": second = try captureAndCheck(variant, sequence, 0, fresh, reuse: true).0
                                default: second = try captureAndCheck(variant, fresh, delay, fresh, reuse: false).0
                                }
                            }
                        }
                        let alone = Self.viewsAlone(samples, reported, judged, check)
                        outcomes.append(Outcome(split: s, variant: variant, lux: scene.ambientLux, followed: r.followed,
                                                followedWithRetake: r.followed || (second?.followed ?? false), retaken: second != nil,
                                                ratioAlone: alone.ratio, bothViews: alone.ratio && alone.chroma, margin: surface.margin))
                        if verbose {
                            CLI.stderr("\(s) \(clip.name)@w\(w)s\(sc) \(variant): followed=\(r.followed) score=\(r.score.map { String(format: "%.3f", $0) } ?? "-") p=\(r.pValue.map { String(format: "%.4f", $0) } ?? "-") steps=\(r.stepsMeasured)/\(r.steps) lux=\(Int(scene.ambientLux)) d=\(String(format: "%.2f", scene.faceDistanceM))"
                                       + " ratio=\(r.ratioScore.map { String(format: "%.3f", $0) } ?? "-") chroma=\(r.chromaScore.map { String(format: "%.3f", $0) } ?? "-")"
                                       + (surface == .person ? "" : " \(surface.label)"))
                            if let second {
                                CLI.stderr("\(s) \(clip.name)@w\(w)s\(sc) \(variant) retake: followed=\(second.followed) score=\(second.score.map { String(format: "%.3f", $0) } ?? "-") p=\(second.pValue.map { String(format: "%.4f", $0) } ?? "-")"
                                           + " ratio=\(second.ratioScore.map { String(format: "%.3f", $0) } ?? "-") chroma=\(second.chromaScore.map { String(format: "%.3f", $0) } ?? "-")")
                            }
                        }
                        if let dump {
                            let line = PresenceDumpLine(split: s, clip: clip.name, person: clip.person, window: w, scene: sc, variant: variant,
                                                        parameters: scene, sequence: judged.steps.map { [Int($0.red), Int($0.green), Int($0.blue), $0.milliseconds] },
                                                        shown: shown?.steps.map { [Int($0.red), Int($0.green), Int($0.blue), $0.milliseconds] },
                                                        delay_ms: delay, times: reported.map { ($0 * 10).rounded() / 10 },
                                                        features: samples.map { $0?.logRatio.map { ($0 * 1e5).rounded() / 1e5 } },
                                                        face: samples.map { $0?.face.map { ($0 * 1e6).rounded() / 1e6 } },
                                                        background: samples.map { $0?.background.map { ($0 * 1e6).rounded() / 1e6 } },
                                                        surface: surface == .person ? nil : surface.label, report: r)
                            let encoder = JSONEncoder()
                            encoder.outputFormatting = [.sortedKeys]
                            dump.write(try encoder.encode(line))
                            dump.write(Data("\n".utf8))
                        }
                    }
                }
            }
        }

        // Figures.
        func interval(_ split: String, _ variant: String, errorWhenFollowed: Bool, lux range: ClosedRange<Double>? = nil,
                      withRetake: Bool = false, rule: ((Outcome) -> Bool)? = nil) -> BinomialInterval {
            let set = outcomes.filter { o in (o.split == split || split == "all") && o.variant == variant && (range?.contains(o.lux) ?? true) }
            let followed = rule ?? { withRetake ? $0.followedWithRetake : $0.followed }
            return BinomialInterval(errors: set.filter { followed($0) == errorWhenFollowed }.count, trials: set.count)
        }
        print("Presence by illumination (\(design.steps) steps of \(design.durationsMs.map(String.init).joined(separator: "/")) ms, \(design.palette.count) colours; "
              + "FAR line \(check.falseAcceptRate), minimum score \(check.minimumScore), guard \(Int(check.guardMilliseconds)) ms, \(check.nullDraws) null draws)")
        print("ambient \(Int(lux.lowerBound))–\(Int(lux.upperBound)) lux; \(clipCount) clips, \(people.count) people; \(windowsPerClip) windows × \(scenesPerWindow) scenes per clip at most")
        let variants = allVariants.filter { $0 != "bona fide" && selected.contains($0) }
        let bands = [50.0...150.0, 150.0...400.0, 400.0...1000.0, 1000.0...200_000.0]
        let marginBands = [0.1...0.35, 0.35...0.6, 0.6...1.0]
        let bonaFide = selected.contains("bona fide")
        for sp in ["dev", "eval", "all"] where splitWanted == "all" || splitWanted == sp || sp == "all" && splitWanted != "all" {
            guard outcomes.contains(where: { $0.split == sp || sp == "all" }) else { continue }
            print("\n\(sp):")
            if bonaFide {
                print("  FRR  bona fide (not followed)              " + interval(sp, "bona fide", errorWhenFollowed: false).description)
                for band in bands {
                    let i = interval(sp, "bona fide", errorWhenFollowed: false, lux: band)
                    guard i.trials > 0 else { continue }
                    print("       ambient \(Int(band.lowerBound))–\(Int(band.upperBound)) lux".padding(toLength: 47, withPad: " ", startingAt: 0) + i.description)
                }
            }
            for v in variants {
                print("  FAR  \(v)".padding(toLength: 47, withPad: " ", startingAt: 0) + interval(sp, v, errorWhenFollowed: true).description)
                // The presentation attacks' light is the screen's share of the light on the surface: by ambient band.
                for band in bands where surfaceVariants.contains(v) {
                    let i = interval(sp, v, errorWhenFollowed: true, lux: band)
                    guard i.trials > 0 else { continue }
                    print("       ambient \(Int(band.lowerBound))–\(Int(band.upperBound)) lux".padding(toLength: 47, withPad: " ", startingAt: 0) + i.description)
                }
                // The held print: by how far the sheet reaches past the face box (FaceKit's background
                // patch starts 0.35 box widths beside the box and 0.5 box heights above it).
                for band in marginBands where v == "print held in view" {
                    let set = outcomes.filter { ($0.split == sp || sp == "all") && $0.variant == v && band.contains($0.margin ?? -1) }
                    guard !set.isEmpty else { continue }
                    let i = BinomialInterval(errors: set.filter(\.followed).count, trials: set.count)
                    print("       sheet margin \(String(format: "%.2f", band.lowerBound))–\(String(format: "%.2f", band.upperBound)) box".padding(toLength: 47, withPad: " ", startingAt: 0) + i.description)
                }
            }
            if texture != nil {
                for line in PresenceTexture.lines(textureRows, split: sp, variants: allVariants.filter { selected.contains($0) }, policy: padPolicy) {
                    print(line)
                }
            }
            let asked = outcomes.filter { ($0.split == sp || sp == "all") && $0.retaken }
            print("  with the retake (idv.presence_retake_p \(retake.retakePValue)): the second capture decides when the first is asked again")
            if bonaFide {
                print("  FRR  bona fide (not followed)              " + interval(sp, "bona fide", errorWhenFollowed: false, withRetake: true).description
                      + "; retakes asked: \(asked.filter { $0.variant == "bona fide" }.count)")
                for band in bands {
                    let i = interval(sp, "bona fide", errorWhenFollowed: false, lux: band, withRetake: true)
                    guard i.trials > 0 else { continue }
                    print("       ambient \(Int(band.lowerBound))–\(Int(band.upperBound)) lux".padding(toLength: 47, withPad: " ", startingAt: 0) + i.description)
                }
            }
            for v in variants {
                print("  FAR  \(v)".padding(toLength: 47, withPad: " ", startingAt: 0) + interval(sp, v, errorWhenFollowed: true, withRetake: true).description
                      + "; retakes asked: \(asked.filter { $0.variant == v }.count)")
                for band in bands where surfaceVariants.contains(v) {
                    let i = interval(sp, v, errorWhenFollowed: true, lux: band, withRetake: true)
                    guard i.trials > 0 else { continue }
                    print("       ambient \(Int(band.lowerBound))–\(Int(band.upperBound)) lux".padding(toLength: 47, withPad: " ", startingAt: 0) + i.description)
                }
            }
            // What two other rules would make of the same first captures (not the server's check, which
            // scores the larger of the two views): the face-to-background ratio view alone, and both views
            // each followed alone at the line. Either keeps the blind-capture bound (each view's rank test).
            for (label, rule) in [("the ratio view alone", { (o: Outcome) in o.ratioAlone }), ("both views, each alone at the line", { (o: Outcome) in o.bothViews })] {
                print("  diagnostic, first capture, \(label) (not the server's rule):")
                if bonaFide {
                    print("  FRR  bona fide (not followed)              " + interval(sp, "bona fide", errorWhenFollowed: false, rule: rule).description)
                }
                for v in variants {
                    print("  FAR  \(v)".padding(toLength: 47, withPad: " ", startingAt: 0) + interval(sp, v, errorWhenFollowed: true, rule: rule).description)
                }
            }
        }
        func median(_ xs: [Double]) -> Double { xs.isEmpty ? 0 : xs.sorted()[xs.count / 2] }
        print("\ncost (thread CPU, one core): measuring a frame (IlluminationSample) median \(String(format: "%.1f", median(sampleCPU) * 1e6)) µs; "
              + "the check of a capture (\(check.nullDraws) null draws) median \(String(format: "%.2f", median(checkCPU) * 1e3)) ms, max \(String(format: "%.2f", (checkCPU.max() ?? 0) * 1e3)) ms")
        print("replay of a passing upload byte for byte: refused by the frame digests the server keeps (idv.capture_replay_seconds), not by this check")
        return 0
    }
}

extension Benchmark {
    /// The check on one view of the light alone, for the bench's diagnostic lines: `ratio`, the
    /// face-to-background log ratio alone (each sample replaced by a grey face over a background that
    /// keeps the sample's ratio: its chroma is flat, so that view scores 0); `chroma`, the face's own
    /// colour alone (the background set to the face: the ratio is flat). Same configuration, same
    /// null draws as the server's check, which scores the larger of the two.
    static func viewsAlone(_ samples: [IlluminationSample?], _ times: [Double], _ sequence: IlluminationSequence,
                           _ check: IlluminationConfiguration) -> (ratio: Bool, chroma: Bool) {
        let e = 1.0 / 1024, grey = 0.25
        let ratioOnly = samples.map { s in
            s.map { s in
                IlluminationSample(face: [grey, grey, grey], background: s.logRatio.map { max(0, (grey + e) * Foundation.exp(-$0) - e) },
                                   facePixels: s.facePixels, backgroundPixels: s.backgroundPixels)
            }
        }
        let chromaOnly = samples.map { s in
            s.map { IlluminationSample(face: $0.face, background: $0.face, facePixels: $0.facePixels, backgroundPixels: $0.backgroundPixels) }
        }
        return (IlluminationCheck.evaluate(samples: ratioOnly, frameTimesMs: times, sequence: sequence, configuration: check).followed,
                IlluminationCheck.evaluate(samples: chromaOnly, frameTimesMs: times, sequence: sequence, configuration: check).followed)
    }
}

/// Thread CPU seconds (CLOCK_THREAD_CPUTIME_ID) since an arbitrary origin.
func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// One line of `idvd bench presence --dump`.
struct PresenceDumpLine: Encodable {
    let split: String, clip: String, person: String, window: Int, scene: Int, variant: String
    let parameters: PhoneCaptureScene
    /// The judged sequence and the one shown ([r, g, b, ms] per step; nil: no reflection).
    let sequence: [[Int]], shown: [[Int]]?
    let delay_ms: Double
    let times: [Double]
    let features: [[Double]?]
    /// Per frame, the face's and the background's mean linear RGB (`IlluminationSample`).
    let face: [[Double]?], background: [[Double]?]
    /// The presentation surface of "print filling the view" and "screen filling the view" (nil: a person).
    let surface: String?
    let report: IlluminationReport
}

extension PhoneCaptureSimulator.Surface {
    /// "print, gloss 0.0120" — for the bench's verbose lines and dump.
    var label: String {
        switch self {
        case .person: return "person"
        case .printFillingView(let gloss): return "print, gloss \(String(format: "%.4f", gloss))"
        case .screenFillingView(let glare): return "screen, glare \(String(format: "%.4f", glare))"
        case .printHeld(let gloss, let margin): return "held print, gloss \(String(format: "%.4f", gloss)), margin \(String(format: "%.2f", margin))"
        }
    }

    /// The held print's margin around the face box (nil for the other surfaces).
    var margin: Double? {
        if case .printHeld(_, let m) = self { return m }
        return nil
    }
}

/// The bona fide clips of the presence figures and their people.
enum PresenceData {
    struct Clip { let path: String; let name: String; let person: String }

    /// `liveness/bona-fide-more/*.mp4` (people from its manifest.jsonl) and
    /// `liveness/real-face-videos/*.mp4` (one person per clip, named by the clip).
    static func clips(_ liveness: URL) throws -> [Clip] {
        var out: [Clip] = []
        let more = liveness.appendingPathComponent("bona-fide-more")
        var person: [String: String] = [:]
        if let text = try? String(contentsOf: more.appendingPathComponent("manifest.jsonl"), encoding: .utf8) {
            for line in text.split(separator: "\n") {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let f = o["file"] as? String, let p = o["person"] as? String else { continue }
                person[f] = p
            }
        }
        for dir in [more, liveness.appendingPathComponent("real-face-videos")] {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { continue }
            for n in names.sorted() where n.hasSuffix(".mp4") {
                out.append(Clip(path: dir.appendingPathComponent(n).path, name: n,
                                person: person[n] ?? String(n.dropLast(4))))
            }
        }
        guard !out.isEmpty else { throw CLIError("no bona fide clips under \(liveness.path)") }
        return out
    }
}
