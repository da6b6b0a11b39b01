import FaceKit
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVReaders
import Imaging

/// Reading a selfie sequence from a folder of frames or a video (through Debian's `ffmpeg`).
enum SelfieInput {
    static let frameExtensions: Set<String> = ["jpg", "jpeg", "png"]

    /// The frames of `path`: a folder's JPEG/PNG files in name order, or a video decoded by
    /// `ffmpeg` at `fps`, from `start` seconds for at most `seconds`, scaled to at most 640 px wide.
    static func frames(at path: String, fps: Double, start: Double = 0, seconds: Double? = nil) throws -> [Data] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { throw CLIError("no such file or folder: \(path)") }
        if isDir.boolValue { return try folderFrames(URL(fileURLWithPath: path)) }
        return try videoFrames(path, fps: fps, start: start, seconds: seconds)
    }

    /// The frame files of a folder capture, in the order they are played (name order).
    static func folderFrameNames(_ url: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path)
            .filter { frameExtensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .sorted()
    }

    static func folderFrames(_ url: URL) throws -> [Data] {
        try folderFrameNames(url).map { try Data(contentsOf: url.appendingPathComponent($0)) }
    }

    static func videoFrames(_ path: String, fps: Double, start: Double, seconds: Double?) throws -> [Data] {
        try decodeVideo(path, fps: fps, start: start, seconds: seconds).frames
    }

    /// A video decoded by `ffmpeg` straight into memory — its frames never touch the disk, so
    /// nothing of an operator's customers' faces is left behind, whatever ends the run: its frames
    /// (JPEG, at `fps` frames per second from `start` seconds for at most `seconds`, at most 640 px
    /// wide, read from ffmpeg's standard output as a stream of JPEG images) and the first line
    /// `ffmpeg` reported on stderr (nil when it reported nothing; a truncated video can decode in
    /// part and report why it stopped).
    /// Throws a `CLIError` naming `path` when `ffmpeg` cannot be run or fails ("could not be decoded").
    static func decodeVideo(_ path: String, fps: Double, start: Double, seconds: Double?) throws -> (frames: [Data], diagnostic: String?) {
        var args = ["-nostdin", "-v", "error", "-ss", String(start), "-i", path]
        if let seconds { args += ["-t", String(seconds)] }
        args += ["-vf", "fps=\(fps),scale='min(640,iw)':-2", "-q:v", "3", "-f", "image2pipe", "-c:v", "mjpeg", "-"]
        let run: Subprocess.Result
        do { run = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["ffmpeg"] + args) } catch {
            throw CLIError("cannot run ffmpeg (install Debian's ffmpeg): \(error)")
        }
        // "[mov,mp4,… @ 0x55…] moov atom not found": the cause, without ffmpeg's component and address.
        let first = String(decoding: run.stderr, as: UTF8.self).split(separator: "\n").first.map {
            String($0).replacingOccurrences(of: #"^\[[^\]]* @ 0x[0-9a-fA-F]+\] "#, with: "", options: .regularExpression)
                .trimmingCharacters(in: .whitespaces)
        }
        guard run.status == 0 else {
            throw CLIError("\(path) could not be decoded (ffmpeg: \(first ?? "exit \(run.status)"))")
        }
        return (jpegImages(in: run.stdout), first)
    }

    /// The JPEG images of a stream of them, end to end (ffmpeg's `image2pipe` of `mjpeg`): each runs
    /// from its SOI marker (FF D8) to its EOI marker (FF D9). Inside a baseline JPEG's entropy-coded
    /// data every FF byte is followed by 00 or a restart marker (ITU-T T.81, B.1.1.5), so the first
    /// FF D9 after an SOI ends that image. Bytes before an SOI or after the last EOI are dropped.
    static func jpegImages(in stream: Data) -> [Data] {
        let bytes = [UInt8](stream)
        var frames: [Data] = [], i = 0, start: Int?
        while i + 1 < bytes.count {
            if bytes[i] == 0xFF {
                if start == nil, bytes[i + 1] == 0xD8 { start = i; i += 2; continue }
                if let s = start, bytes[i + 1] == 0xD9 {
                    frames.append(Data(bytes[s...(i + 1)]))
                    start = nil
                    i += 2
                    continue
                }
            }
            i += 1
        }
        return frames
    }
}

/// The JSON of `idvd liveness analyze` (no images, no descriptors).
struct LivenessOutput: Encodable {
    let live: Bool
    let score: Int
    let threshold: Int
    let mode: String
    let reasons: [String]
    let frame_count: Int
    let tracked_frames: Int
    let blinks: [BlinkEvent]
    let non_rigid_residual: Double?
    let mouth_action_spread: Double?
    let eye_action_spread: Double?
    let identity_distance: Double?
    let challenge_nonce: String?
    let completed_actions: [String]
    let best_frame_index: Int?
    /// The frames fused into the capture's template (best first) and their quality weights.
    let template_frames: [Int]
    let template_weights: [Double]
    let template_model: String?
    /// The texture cue as the server's policy reads it: calibrated log-odds of bona fide against print
    /// or screen (0 even odds; compare with `idv.pad.texture_line`, default −1.6), and the good-quality
    /// frames its median rests on of the frames scored; nil when no frame could be scored.
    let texture_log_odds: Double?
    let texture_good_frames: Int?
    let texture_scored_frames: Int?
    /// How far the face moved as a plane, in inter-eye distances (80th percentile over the frames):
    /// large with no non-rigid motion is a flat picture moved by a hand, small a face held still
    /// (`idv.pad.plane_motion_level`); nil with fewer than two tracked frames.
    let plane_motion: Double?
    let frames: [FrameSummary]?

    /// `pad`: the capture's PAD evidence as the server receives it (`FaceKitSelfieAnalyser.evidence`).
    init(_ r: LivenessReport, pad: PADEvidence?, includeFrames: Bool) {
        live = r.live; score = r.score; threshold = r.threshold; mode = r.mode.rawValue
        reasons = r.reasons.map(\.rawValue); frame_count = r.frameCount; tracked_frames = r.trackedFrameCount
        blinks = r.blinks; non_rigid_residual = r.nonRigidResidual.map { ($0 * 10000).rounded() / 10000 }
        mouth_action_spread = r.mouthActionSpread.map { ($0 * 10000).rounded() / 10000 }
        eye_action_spread = r.eyeActionSpread.map { ($0 * 10000).rounded() / 10000 }
        identity_distance = r.identityDistance.map { ($0 * 10000).rounded() / 10000 }
        challenge_nonce = r.challengeNonce; completed_actions = r.completedActions.map(\.rawValue)
        best_frame_index = r.bestFrameIndex; frames = includeFrames ? r.frames : nil
        template_frames = r.templateFrameIndices; template_weights = r.templateWeights.map { ($0 * 1000).rounded() / 1000 }
        template_model = r.template?.model.name
        texture_log_odds = pad?.texture.map { ($0.logOdds * 100).rounded() / 100 }
        texture_good_frames = pad?.texture?.goodFrames
        texture_scored_frames = pad?.texture?.scoredFrames
        plane_motion = pad?.planeMotion.map { ($0 * 10000).rounded() / 10000 }
    }
}

extension LivenessConfiguration {
    /// Applies `--fps`, `--threshold`, `--mode`, `--max-frames` options.
    mutating func apply(_ o: [String: String]) throws {
        if let v = o["fps"] { guard let d = Double(v), d > 0 else { throw CLIError("--fps needs a positive number") }; frameRate = d }
        if let v = o["threshold"] { guard let t = Int(v), (1...100).contains(t) else { throw CLIError("--threshold needs 1…100") }; threshold = t }
        if let v = o["mode"] { guard let m = LivenessMode(rawValue: v) else { throw CLIError("--mode is passive or active") }; mode = m }
        if let v = o["max-frames"] { guard let m = Int(v), m >= 1 else { throw CLIError("--max-frames needs a positive integer") }; maximumFrames = m }
    }
}

enum LivenessCLI {
    static let analyzeUsage = """
    usage: idvd liveness analyze FRAMES_DIR|VIDEO [--fps N] [--start S] [--seconds S] [--threshold T]
                                 [--challenge TURN_LEFT,BLINK [--duration S]] [--best-frame OUT.jpg] [--frames]
           idvd liveness make-attack --from IMAGE --out DIR [--frames N] [--seed S] [--whole]
           idvd liveness texture IMAGE...
           idvd liveness calibrate --bona-fide PATH… --attack SPECIES=PATH… [--target-apcer PERCENT] [--max-bpcer PERCENT] [--force] [--out FILE]  (below)
    texture prints the MiniFASNet texture PAD score (0–1, bona fide probability) of each image's largest face.
    make-attack writes the "print, held" attack species: the still (cropped around its face unless --whole)
    under hand-held perspective wobble, lighting drift and blur, as JPEG frames; with --screen phone|laptop|fills_view
    --from VIDEO|FRAMES_DIR it writes "replay, screen": the clip re-shown on a simulated display (bezel,
    perspective, pixel grid, gamma, glare, hand motion) and re-captured.
    A folder's JPEG/PNG frames are read in name order, taken --fps apart (default 10); a video is decoded by
    ffmpeg at --fps. Prints JSON: live, score (0–100), reasons, blinks, non_rigid_residual,
    mouth_action_spread, eye_action_spread, texture_log_odds (calibrated; the server's texture line is
    idv.pad.texture_line, default -1.6) with texture_good_frames of texture_scored_frames, plane_motion
    (inter-eye distances the face moved as a plane), …; exit 0 when live,
    1 when not. --challenge evaluates an active challenge (TURN_LEFT, TURN_RIGHT, BLINK, OPEN_MOUTH, in order).
    """

    static func challenge(_ o: [String: String]) throws -> ActiveChallenge? {
        guard let list = o["challenge"] else { return nil }
        let actions = try list.split(separator: ",").map { name -> ChallengeAction in
            // TURN_LEFT or turnLeft.
            let upper = name.uppercased(), snake = name.replacingOccurrences(of: "([a-z])([A-Z])", with: "$1_$2", options: .regularExpression).uppercased()
            guard let a = ChallengeAction(rawValue: upper) ?? ChallengeAction(rawValue: snake) else {
                throw CLIError("unknown challenge action \(name); known: \(ChallengeAction.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return a
        }
        let duration = try o["duration"].map { v -> Double in
            guard let d = Double(v), d > 0 else { throw CLIError("--duration needs positive seconds") }
            return d
        } ?? 15
        var random = ActiveChallenge.random(duration: duration)
        random.actions = actions
        return random
    }

    static func analyze(_ args: [String]) throws -> Int32 {
        let (o, p) = try CLI.parseOptions(args, flags: ["frames"],
                                          valued: ["fps", "threshold", "mode", "max-frames", "start", "seconds", "challenge", "duration", "best-frame"],
                                          command: "liveness analyze")
        guard p.count == 1 else { throw CLIError(analyzeUsage) }
        var config = LivenessConfiguration()
        try config.apply(o)
        let start = Double(o["start"] ?? "0") ?? 0
        let seconds = o["seconds"].flatMap(Double.init) ?? Double(config.maximumFrames) / config.frameRate
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: p[0], isDirectory: &isDir), !isDir.boolValue,
           SelfieInput.frameExtensions.contains((p[0] as NSString).pathExtension.lowercased()) {
            throw CLIError("\(p[0]) is a single image: liveness is judged on a sequence of frames (a folder of JPEG/PNG frames "
                           + "or a video); for one image see `idvd liveness texture` or `idvd face`\n\(analyzeUsage)")
        }
        let frames = try SelfieInput.frames(at: p[0], fps: config.frameRate, start: start, seconds: seconds)
        guard frames.count >= 2 else {
            throw CLIError("\(p[0]) gave \(frames.count) frame\(frames.count == 1 ? "" : "s"): liveness needs a sequence of frames "
                           + "(a folder of JPEG/PNG frames or a video)")
        }
        let analyzer = SelfieAnalyzer(engine: try FaceEngine.shared(), configuration: config)
        let report = try analyzer.analyze(frames: frames, challenge: try challenge(o))
        if let out = o["best-frame"], let jpeg = report.bestFrameJPEG { try jpeg.write(to: URL(fileURLWithPath: out)) }
        let pad = FaceKitSelfieAnalyser.evidence(report, comparison: nil, framesPerSecond: report.frameRate).pad
        try CLI.printJSON(LivenessOutput(report, pad: pad, includeFrames: o["frames"] != nil))
        return report.live ? 0 : 1
    }

    static func texture(_ args: [String]) throws -> Int32 {
        let (_, paths) = try CLI.parseOptions(args, valued: [], command: "liveness texture")
        guard !paths.isEmpty else { throw CLIError(analyzeUsage) }
        let engine = try FaceEngine.shared()
        let pad = try TexturePAD.shared()
        struct Row: Encodable { let image: String; let faces: Int; let box: FaceBox?; let texture: TextureScore? }
        var rows: [Row] = []
        for path in paths {
            let image = try FaceCLI.load(path)
            let faces = try engine.detect(in: image, options: DetectionOptions(maxDimension: 640, smallImageDimension: 256))
            let face = faces.max { $0.box.width * $0.box.height < $1.box.width * $1.box.height }
            rows.append(Row(image: path, faces: faces.count, box: face?.box, texture: try face.map { try pad.score(in: image, box: $0.box) }))
        }
        try CLI.printJSON(rows)
        return 0
    }

    static func makeAttack(_ args: [String]) throws -> Int32 {
        let (o, _) = try CLI.parseOptions(args, flags: ["whole"], valued: ["from", "out", "frames", "seed", "screen", "fps"],
                                          takesArguments: false, command: "liveness make-attack")
        guard let from = o["from"], let out = o["out"] else { throw CLIError(analyzeUsage) }
        let count = try Int(o["frames"] ?? "30").flatMap { (1...1000).contains($0) ? $0 : nil } ?? { throw CLIError("--frames needs 1…1000") }()
        let seed = try UInt64(o["seed"] ?? "1") ?? { throw CLIError("--seed needs a non-negative integer") }()
        if let screen = o["screen"] {
            // "replay, screen": the video's frames re-shown on a simulated display and re-captured.
            guard let device = ScreenReplayAttack.Device(rawValue: screen) else {
                throw CLIError("--screen is one of \(ScreenReplayAttack.Device.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let fps = Double(o["fps"] ?? "10") ?? 10
            let clip = try SelfieInput.frames(at: from, fps: fps, seconds: Double(count) / fps).prefix(count).map { try Image(data: $0) }
            let replay = try ScreenReplayAttack.frames(from: clip, device: device, seed: seed, frameRate: fps)
            let dir = URL(fileURLWithPath: out)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for (i, f) in replay.frames.enumerated() {
                try f.jpegData(quality: 85).write(to: dir.appendingPathComponent(String(format: "frame_%03d.jpg", i + 1)))
            }
            struct Out: Encodable { let frames: Int; let seed: UInt64; let out: String; let species: String; let device: String; let coverage: Double; let pixel_pitch: Double }
            try CLI.printJSON(Out(frames: replay.frames.count, seed: seed, out: dir.path, species: "replay, screen (simulated)",
                                  device: device.rawValue, coverage: replay.setup.coverage, pixel_pitch: replay.setup.pixelPitch))
            return 0
        }
        var photo = try Image(data: Data(contentsOf: URL(fileURLWithPath: from)))
        // The print shows the face large, as a photo held up to a selfie camera would (--whole keeps the image).
        if o["whole"] == nil, let face = try FaceEngine.shared().detect(in: photo).first,
           let rect = face.box.expanded(by: 0.9).clipped(to: photo.bounds) {
            photo = try photo.cropped(rect)
        }
        let frames = try HeldPhotoAttack.frames(from: photo, count: count, seed: seed)
        let dir = URL(fileURLWithPath: out)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (i, f) in frames.enumerated() {
            try f.jpegData(quality: 85).write(to: dir.appendingPathComponent(String(format: "frame_%03d.jpg", i + 1)))
        }
        struct Out: Encodable { let frames: Int; let seed: UInt64; let out: String; let species: String }
        try CLI.printJSON(Out(frames: frames.count, seed: seed, out: dir.path, species: "print, held"))
        return 0
    }
}

extension Command {
    static let liveness = Command(name: "liveness", summary: "selfie liveness (PAD): analyze FRAMES_DIR|VIDEO, make-attack, texture, calibrate") { args in
        try CLI.refuseOptionForSubcommand(args.first, command: "liveness")
        switch args.first {
        case "analyze": return try LivenessCLI.analyze(Array(args.dropFirst()))
        case "make-attack": return try LivenessCLI.makeAttack(Array(args.dropFirst()))
        case "texture": return try LivenessCLI.texture(Array(args.dropFirst()))
        case "calibrate": return try LivenessCalibrate.run(Array(args.dropFirst()))
        case "-h", "--help": print(LivenessCLI.analyzeUsage + "\n\n" + LivenessCalibrate.usage); return 0
        default: throw CLIError(LivenessCLI.analyzeUsage)
        }
    }

    static let selfie = Command(name: "selfie", summary: "selfie verify FRAMES_DIR|VIDEO --against PORTRAIT: liveness + face match") { args in
        let usage = """
        usage: idvd selfie verify FRAMES_DIR|VIDEO --against PORTRAIT [--fps N] [--threshold T]
                                  [--operating-point fmr_0.1|fmr_0.01] [--match-threshold D]
        Prints JSON: display_text (MATCHED / NOT_MATCHED / LIVENESS_FAILED, the server policy's verdict), result_criteria,
        face_matcher_score (0–1), distance (the cosine distance of the capture's fused template to the portrait,
        face-reidentification-retail-0095), match_threshold (the operating point's calibrated distance, default
        fmr_0.1; --match-threshold D: a fixed cosine distance), match_kind, match_model,
        liveness_score (0–100, agreeing with the PAD reading), reasons, capture_issues and recapture_code (1060–1065: the
        server would ask again), pad_outcome (bona_fide / unsure / attack / challenge: the server policy's reading of this
        capture; challenge: passive evidence with texture below idv.pad.challenge_below, stepped up), pad_findings,
        texture_log_odds (calibrated), retake_code (1066 when the server would ask again) and retake_challenge (true when
        that 1066 carries an active challenge); the verdict here then decides on this capture alone.
        Exit 0 when MATCHED.
        """
        try CLI.refuseOptionForSubcommand(args.first, command: "selfie")
        guard args.first == "verify" else {
            if ["-h", "--help"].contains(args.first ?? "") { print(usage); return 0 }
            throw CLIError(usage)
        }
        let (o, p) = try CLI.parseOptions(Array(args.dropFirst()),
                                          valued: ["against", "fps", "threshold", "mode", "max-frames", "match-threshold", "operating-point",
                                                   "challenge", "duration", "best-frame"], command: "selfie verify")
        guard p.count == 1, let against = o["against"] else { throw CLIError(usage) }
        var config = LivenessConfiguration()
        try config.apply(o)
        let frames = try SelfieInput.frames(at: p[0], fps: config.frameRate, seconds: Double(config.maximumFrames) / config.frameRate)
        let portrait = try Data(contentsOf: URL(fileURLWithPath: against))
        // The server's judge: WorkflowPolicy on the evidence (the reader gives no verdict).
        var policy = WorkflowPolicy()
        policy.livenessThreshold = config.threshold
        if let v = o["match-threshold"] {
            guard let d = Double(v), d > 0, d <= 2 else { throw CLIError("--match-threshold needs a cosine distance in (0, 2]") }
            policy.faceMatchMaxCosineDistance = d
            policy.faceMatchOperatingPoint = nil
        }
        if let v = o["operating-point"] {
            guard let p = MatchOperatingPoint(rawValue: v) else { throw CLIError("--operating-point must be fmr_0.1 or fmr_0.01") }
            policy.faceMatchOperatingPoint = p
        }
        let analyzer = SelfieAnalyzer(engine: try FaceEngine.shared(), configuration: config)
        let v = try analyzer.verify(frames: frames, against: .portrait(portrait), challenge: try LivenessCLI.challenge(o))
        let evidence = FaceKitSelfieAnalyser.evidence(v.liveness, comparison: v, framesPerSecond: config.frameRate)
        // The server's PAD reading of this one capture; a tool cannot retake, so an unsure capture is
        // decided on its own evidence for the verdict (the server would ask again: retake_code 1066).
        let now = Int(Date().timeIntervalSince1970)
        let (score, cues, _) = policy.livenessCues(evidence, challenge: nil, now: now)
        let first = policy.judgePAD(evidence, cues: cues, score: score)
        // A capture stepped up to a challenge (the server would ask 1066 with one) is decided, here, as
        // when no challenge can be asked: on its own evidence.
        let pad = (first.outcome == .unsure ? policy.judgePAD(evidence, cues: cues, score: score, final: true) : first).decidedWithoutChallenge
        let judged = policy.judge(evidence, reference: .portrait(portrait), challenge: nil, now: now, pad: pad)
        if let out = o["best-frame"], let jpeg = v.bestFrameJPEG { try jpeg.write(to: URL(fileURLWithPath: out)) }
        struct Out: Encodable {
            let display_text: String; let result_criteria: String; let face_matcher_score: Double; let distance: Double?
            let match_threshold: Double?; let match_kind: String?; let match_model: String?; let liveness_score: Int; let live: Bool
            let reasons: [String]
            let best_frame_index: Int?; let capture_issues: [String]; let recapture_code: Int?
            let pad_outcome: String; let pad_findings: [String]; let texture_log_odds: Double?; let retake_code: Int?
            let retake_challenge: Bool
        }
        try CLI.printJSON(Out(display_text: judged.verdict.rawValue, result_criteria: judged.resultCriteria.rawValue,
                              face_matcher_score: (v.faceMatchScore * 1000).rounded() / 1000,
                              distance: v.distance.map { ($0 * 10000).rounded() / 10000 }, match_threshold: judged.matchThreshold,
                              match_kind: v.kind?.rawValue, match_model: v.model?.name, liveness_score: judged.livenessScore, live: v.liveness.live,
                              reasons: v.reasons.map(\.rawValue), best_frame_index: v.liveness.bestFrameIndex,
                              capture_issues: evidence.captureIssues.map(\.rawValue), recapture_code: (policy.recapture(evidence) ?? (pad.outcome == .poorCapture ? evidence.captureIssues.first ?? .offPose : nil))?.errorCode.rawValue,
                              pad_outcome: first.outcome.rawValue, pad_findings: first.findings.map(\.rawValue),
                              texture_log_odds: evidence.pad?.texture.map { ($0.logOdds * 100).rounded() / 100 },
                              retake_code: first.outcome == .unsure || first.outcome == .challenge ? IDVErrorCode.selfieRetake.rawValue : nil,
                              retake_challenge: first.outcome == .challenge))
        return judged.verdict == .matched ? 0 : 1
    }
}
