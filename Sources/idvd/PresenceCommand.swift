import FaceKit
import Foundation
import IDVCore
import IDVTools
import Imaging

/// `idvd presence`: the illumination challenge from the command line — draw a sequence, simulate
/// what a phone's front camera records while its screen flashes it (the sample app `idv` and the
/// demo use this for their frame folders), and check captured frames against a sequence.
enum PresenceCLI {
    static let usage = """
    usage: idvd presence sequence
           idvd presence simulate FRAMES_DIR|VIDEO --sequence FILE|JSON --out DIR [--seed N] [--fps N]
                                  [--ambient-lux L] [--delay MS] [--no-reflection]
           idvd presence check FRAMES_DIR --sequence FILE|JSON --times FILE|JSON [--fps N]
    sequence prints a fresh random illumination sequence as the server issues it (the system's CSPRNG):
      [{"rgb": [r, g, b], "ms": n}, …] (payload.presence.illumination of uploadIDVSelfieFrames).
    simulate renders the screen's reflection into real frames (IDVTools PhoneCaptureSimulator: skin
      reflectance from the frames, screen luminance and distance, ambient light and its colour, auto
      white balance and exposure, noise, JPEG; docs/LIVENESS.md "Presence") and writes DIR/frame_NNN.jpg
      and DIR/frame_times_ms.json (each frame's capture time from the start of the sequence, as a client
      reports it). The frames are played at --fps (default 10), back and forth when the sequence is
      longer than they are; a random scene unless --ambient-lux fixes the ambient light (lux); --delay
      shows the sequence MS late (an attack), --no-reflection leaves the screen dark (an injected
      recording). --seed makes it reproducible (default: random). Prints a JSON summary.
    check measures each frame (IlluminationSample) and tests it against the sequence (IlluminationCheck):
      prints followed, score, p_value, steps measured and the failure. --times: the frame times in ms.
    --sequence takes the JSON itself or a file holding it; {"illumination": […]} (a presence payload) is accepted too.
    """

    static func run(_ args: [String]) throws -> Int32 {
        try CLI.refuseOptionForSubcommand(args.first, command: "presence")
        switch args.first {
        case "sequence":
            _ = try CLI.parseOptions(Array(args.dropFirst()), valued: [], takesArguments: false, command: "presence sequence")
            let s = IlluminationDesign().random()
            try CLI.printJSON(s.steps.map { IlluminationStepPayload(rgb: [Int($0.red), Int($0.green), Int($0.blue)], ms: $0.milliseconds) }, compact: true)
            return 0
        case "simulate": return try simulate(Array(args.dropFirst()))
        case "check": return try check(Array(args.dropFirst()))
        case "-h", "--help": print(usage); return 0
        default: throw CLIError(usage)
        }
    }

    /// A sequence from `text`: JSON, or the name of a file holding it.
    static func sequence(_ text: String) throws -> IlluminationSequence {
        var data = Data(text.utf8)
        if !text.trimmingCharacters(in: .whitespaces).hasPrefix("["), !text.trimmingCharacters(in: .whitespaces).hasPrefix("{") {
            guard let d = FileManager.default.contents(atPath: text) else { throw CLIError("cannot read the sequence file \(text)") }
            data = d
        }
        let decoder = JSONDecoder()
        let steps: [IlluminationStepPayload]
        if let s = try? decoder.decode([IlluminationStepPayload].self, from: data) {
            steps = s
        } else if let p = try? decoder.decode(PresenceChallengePayload.self, from: data), let s = p.illumination {
            steps = s
        } else {
            throw CLIError("--sequence must be [{\"rgb\": [r, g, b], \"ms\": n}, …] (0–255 per channel, 100–5000 ms)")
        }
        do { return try faceKitSequence(steps) } catch let e as IlluminationStepPayload.Invalid { throw CLIError("--sequence: \(e.description)") }
    }

    /// FaceKit's sequence for validated wire steps.
    static func faceKitSequence(_ steps: [IlluminationStepPayload]) throws -> IlluminationSequence {
        try steps.forEach { try $0.validate() }
        guard (2...64).contains(steps.count) else { throw IlluminationStepPayload.Invalid("a sequence has 2…64 steps") }
        return IlluminationSequence(steps: steps.map { IlluminationStep(red: UInt8($0.rgb[0]), green: UInt8($0.rgb[1]), blue: UInt8($0.rgb[2]), milliseconds: $0.ms) })
    }

    /// The largest face of every frame (nil where none is found), for the simulator's masks.
    static func faces(_ images: [Image], engine: FaceEngine) throws -> [FaceBox?] {
        try images.map { image in
            try engine.detect(in: image, options: DetectionOptions(maxDimension: 640, smallImageDimension: 256))
                .max { $0.box.width * $0.box.height < $1.box.width * $1.box.height }?.box
        }
    }

    /// `count` frames taken from `frames` played forwards, then backwards, then forwards… (a clip
    /// shorter than the sequence keeps moving).
    static func pingPong<T>(_ frames: [T], count: Int) -> [T] {
        guard frames.count > 1 else { return Array(repeating: frames[0], count: count) }
        let period = 2 * (frames.count - 1)
        return (0..<count).map { i in
            let k = i % period
            return frames[k < frames.count ? k : period - k]
        }
    }

    static func simulate(_ args: [String]) throws -> Int32 {
        let (o, p) = try CLI.parseOptions(args, flags: ["no-reflection", "help"],
                                          valued: ["sequence", "out", "seed", "fps", "ambient-lux", "delay"], command: "presence simulate")
        if o["help"] != nil { print(usage); return 0 }
        guard p.count == 1, let seqText = o["sequence"], let out = o["out"] else { throw CLIError(usage) }
        let sequence = try sequence(seqText)
        let fps = try Double(o["fps"] ?? "10").flatMap { $0 > 0 && $0 <= 60 ? $0 : nil } ?? { throw CLIError("--fps needs a number in (0, 60]") }()
        var seed = UInt64.random(in: 0...UInt64.max)
        if let v = o["seed"] { guard let s = UInt64(v) else { throw CLIError("--seed needs a non-negative integer") }; seed = s }
        let delay = try o["delay"].map { try Double($0).flatMap { $0 >= 0 && $0 <= 10_000 ? $0 : nil } ?? { throw CLIError("--delay needs 0…10000 ms") }() } ?? 0
        var g = SplitMix64(seed: seed)
        var scene = PhoneCaptureScene.random(using: &g)
        if let v = o["ambient-lux"] {
            guard let lux = Double(v), lux >= 1, lux <= 200_000 else { throw CLIError("--ambient-lux needs 1…200000") }
            var fixed = SplitMix64(seed: seed)
            scene = PhoneCaptureScene.random(using: &fixed, ambientLux: lux...lux)
        }
        let source = try SelfieInput.frames(at: p[0], fps: fps, seconds: 30)
        guard !source.isEmpty else { throw CLIError("no frames in \(p[0])") }
        let decoded = try source.enumerated().map { i, d -> Image in
            do { return try Image(data: d, maxPixels: 4_000_000) } catch { throw CLIError("frame \(i + 1) is not a decodable JPEG/PNG image") }
        }
        // Frames for the whole sequence and one frame interval more.
        var times = PhoneCaptureSimulator.frameTimes(count: 1, framesPerSecond: fps, using: &g)
        let count = Int(((Double(sequence.totalMilliseconds) + 1000 / fps - times[0]) * fps / 1000).rounded(.up))
        times = (0..<count).map { times[0] + Double($0) * 1000 / fps }
        let engine = try FaceEngine.shared()
        let order = pingPong(Array(decoded.indices), count: count)
        let boxes = try faces(decoded, engine: engine)
        let capture = try PhoneCaptureSimulator(scene: scene).capture(frames: order.map { decoded[$0] }, captureTimesMs: times,
                                                                      faces: order.map { boxes[$0] },
                                                                      sequence: o["no-reflection"] == nil ? sequence : nil,
                                                                      delayMs: delay, seed: g.next())
        let dir = URL(fileURLWithPath: out)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (i, f) in capture.frames.enumerated() {
            try f.write(to: dir.appendingPathComponent(String(format: "frame_%03d.jpg", i + 1)))
        }
        let rounded = capture.frameTimesMs.map { ($0 * 10).rounded() / 10 }
        try JSONEncoder().encode(rounded).write(to: dir.appendingPathComponent("frame_times_ms.json"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(scene).write(to: dir.appendingPathComponent("scene.json"))
        struct Summary: Encodable {
            let frames: Int; let out: String; let sequence_ms: Int; let seed: UInt64; let ambient_lux: Double; let face_distance_m: Double
            let reflection: Bool; let delay_ms: Double
        }
        try CLI.printJSON(Summary(frames: capture.frames.count, out: dir.path, sequence_ms: sequence.totalMilliseconds, seed: seed,
                                  ambient_lux: (scene.ambientLux * 10).rounded() / 10, face_distance_m: (scene.faceDistanceM * 1000).rounded() / 1000,
                                  reflection: o["no-reflection"] == nil, delay_ms: delay))
        return 0
    }

    static func check(_ args: [String]) throws -> Int32 {
        let (o, p) = try CLI.parseOptions(args, flags: ["help"], valued: ["sequence", "times", "fps"], command: "presence check")
        if o["help"] != nil { print(usage); return 0 }
        guard p.count == 1, let seqText = o["sequence"], let timesText = o["times"] else { throw CLIError(usage) }
        let sequence = try sequence(seqText)
        var timesData = Data(timesText.utf8)
        if !timesText.hasPrefix("[") {
            guard let d = FileManager.default.contents(atPath: timesText) else { throw CLIError("cannot read the times file \(timesText)") }
            timesData = d
        }
        guard let times = try? JSONDecoder().decode([Double].self, from: timesData) else { throw CLIError("--times must be a JSON array of milliseconds") }
        var config = LivenessConfiguration()
        try config.apply(o)
        config.texture = false
        config.identitySamples = 0
        config.templateFrames = 1
        let frames = try SelfieInput.folderFrames(URL(fileURLWithPath: p[0]))
        guard frames.count == times.count else { throw CLIError("\(frames.count) frames but \(times.count) times") }
        let report = try SelfieAnalyzer(engine: try FaceEngine.shared(), configuration: config).analyze(frames: frames)
        let check = IlluminationCheck.evaluate(samples: report.frames.map(\.illumination), frameTimesMs: times, sequence: sequence)
        try CLI.printJSON(check)
        return check.followed ? 0 : 1
    }
}

extension Command {
    static let presence = Command(name: "presence", summary: "illumination challenge: sequence, simulate (a phone camera under the flashing screen), check") { args in
        try PresenceCLI.run(args)
    }
}
