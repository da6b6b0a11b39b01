import Foundation
import Imaging

// Presence by screen illumination (an injection defence, issue #39): the server chooses a random
// sequence of colours the phone's screen flashes while the front camera records; the face, a few
// tens of centimetres from the screen, reflects each colour, while the background, metres away,
// barely does. FaceKit MEASURES, per frame, the colour of the lit face relative to the background
// and TESTS whether those colours follow the issued sequence in order and in time; the verdict is
// the server's policy's (IDVEngine `WorkflowPolicy`). A recording or an injected video made before
// the session cannot know the sequence.
//
// The test is a permutation (Monte Carlo) test: the issued sequence's score on the capture is ranked
// among the scores of `nullDraws` sequences drawn from the same generator. A capture made without
// knowledge of the issued sequence (an injected recording, a capture lit by another session's
// sequence) is exchangeable with those draws, so its rank is uniform and it passes with probability
// at most `falseAcceptRate` — whatever it contains (docs/LIVENESS.md "Presence").

/// One step of an illumination sequence: a screen colour (sRGB, 0–255 per channel, shown full
/// screen at maximum brightness) held for `milliseconds`.
public struct IlluminationStep: Sendable, Codable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    /// How long the colour is shown, milliseconds.
    public var milliseconds: Int

    public init(red: UInt8, green: UInt8, blue: UInt8, milliseconds: Int) {
        self.red = red
        self.green = green
        self.blue = blue
        self.milliseconds = milliseconds
    }

    /// The colour as linear-light RGB (IEC 61966-2-1 sRGB decoding), each 0…1: what the display
    /// emits relative to its white.
    public var linear: [Double] { [red, green, blue].map { IlluminationSample.linear[Int($0)] } }
}

/// The generator of illumination sequences: how many steps, which colours, which step durations.
/// The server draws the sequences it issues from it, and the check draws its null sequences from
/// the same one (the false-accept rate holds only if both are the same).
public struct IlluminationDesign: Sendable, Codable, Hashable {
    /// Steps per sequence. Default 8.
    public var steps: Int
    /// The colours a step may show (sRGB); consecutive steps never repeat a colour. Default the
    /// seven saturated display colours: white, red, green, blue, cyan, magenta, yellow (no black:
    /// every step lights the face; a dark step would only add a luminance flash).
    public var palette: [[UInt8]]
    /// Step durations to draw from, milliseconds (each at least 300: at most 3.3 colour changes per
    /// second, i.e. under WCAG 2.1 §2.3.1's three flashes per second). Default 300, 350, 400: a
    /// sequence of 2.4–3.2 s, about 30 frames at 10 fps.
    public var durationsMs: [Int]

    public static let defaultPalette: [[UInt8]] = [[255, 255, 255], [255, 0, 0], [0, 255, 0], [0, 0, 255],
                                                    [0, 255, 255], [255, 0, 255], [255, 255, 0]]

    public init(steps: Int = 8, palette: [[UInt8]] = IlluminationDesign.defaultPalette, durationsMs: [Int] = [300, 350, 400]) {
        self.steps = steps
        self.palette = palette
        self.durationsMs = durationsMs
    }

    /// How many different sequences the design can draw: palette × (palette − 1)^(steps − 1)
    /// colour orders times durations^steps timings. The default: 7 · 6⁷ · 3⁸ ≈ 1.3 · 10¹⁰ (about 2³³·⁶).
    public var sequenceCount: Double {
        Double(palette.count) * pow(Double(palette.count - 1), Double(steps - 1)) * pow(Double(durationsMs.count), Double(steps))
    }

    /// Checks the design.
    /// - Throws: `LivenessError.invalidConfiguration` naming the problem.
    public func validate() throws {
        func check(_ ok: Bool, _ what: String) throws { if !ok { throw LivenessError.invalidConfiguration("illumination design: \(what)") } }
        try check((2...64).contains(steps), "steps must be 2…64")
        try check(palette.count >= 2 && palette.allSatisfy { $0.count == 3 }, "palette needs at least two RGB triples")
        try check(Set(palette).count == palette.count, "palette colours must differ")
        try check(!durationsMs.isEmpty && durationsMs.allSatisfy { (100...5000).contains($0) }, "durations must be 100…5000 ms")
    }

    /// A random sequence: each step's colour uniform over the palette without the previous step's
    /// colour, each duration uniform over `durationsMs`.
    public func random<G: RandomNumberGenerator>(using generator: inout G) -> IlluminationSequence {
        var steps: [IlluminationStep] = []
        steps.reserveCapacity(self.steps)
        var previous = -1
        for _ in 0..<self.steps {
            var c = Int.random(in: 0..<(palette.count - (previous < 0 ? 0 : 1)), using: &generator)
            if previous >= 0, c >= previous { c += 1 }
            previous = c
            let rgb = palette[c]
            steps.append(IlluminationStep(red: rgb[0], green: rgb[1], blue: rgb[2],
                                          milliseconds: durationsMs[Int.random(in: 0..<durationsMs.count, using: &generator)]))
        }
        return IlluminationSequence(steps: steps)
    }

    /// `random(using:)` with the system's cryptographically secure generator (getrandom(2) on Linux):
    /// how the server draws the sequences it issues.
    public func random() -> IlluminationSequence {
        var g = SystemRandomNumberGenerator()
        return random(using: &g)
    }
}

/// A screen-illumination sequence (the steps in the order they are shown, from time 0).
public struct IlluminationSequence: Sendable, Codable, Hashable {
    public var steps: [IlluminationStep]
    public init(steps: [IlluminationStep]) { self.steps = steps }

    /// The sequence's length, milliseconds.
    public var totalMilliseconds: Int { steps.reduce(0) { $0 + $1.milliseconds } }

    /// When each step starts, milliseconds from the start of the sequence.
    public var onsets: [Int] {
        var t = 0
        return steps.map { s in defer { t += s.milliseconds }; return t }
    }

    /// The index of the step shown at `milliseconds` (nil before 0 or after the end).
    public func step(at milliseconds: Double) -> Int? {
        guard milliseconds >= 0 else { return nil }
        var t = 0.0
        for (i, s) in steps.enumerated() {
            t += Double(s.milliseconds)
            if milliseconds < t { return i }
        }
        return nil
    }

    /// A stable 64-bit digest of the steps (FNV-1a), the seed of the check's null draws, so that
    /// checking the same capture twice gives the same p-value.
    public var seed: UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ b: UInt8) { h ^= UInt64(b); h = h &* 0x0000_0100_0000_01b3 }
        for s in steps {
            mix(s.red); mix(s.green); mix(s.blue)
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: s.milliseconds).littleEndian) { $0.forEach(mix) }
        }
        return h
    }
}

/// What one frame shows of the screen's light: the mean linear-light colour of the lit face (the
/// central part of the tracked face box) and of the background beside and above the head.
public struct IlluminationSample: Sendable, Codable, Hashable {
    /// Mean linear RGB (0…1 each, IEC 61966-2-1 decoding of the frame's sRGB values) of the face
    /// region: the face box's central 60 % in width, from 15 % below its top to 10 % above its bottom.
    public var face: [Double]
    /// Mean linear RGB of the background: the frame above the face box's bottom edge and outside the
    /// box grown by 35 % of its width on each side and 50 % of its height above; when that holds
    /// less than 2 % of the frame (a face filling the view), the top band (10 % of the height) outside
    /// the box grown by 10 %.
    public var background: [Double]
    /// Pixels sampled (every 2nd pixel of every 2nd row in the face, every 3rd in the background).
    public var facePixels: Int
    public var backgroundPixels: Int

    enum CodingKeys: String, CodingKey {
        case face, background
        case facePixels = "face_pixels"
        case backgroundPixels = "background_pixels"
    }

    public init(face: [Double], background: [Double], facePixels: Int, backgroundPixels: Int) {
        self.face = face
        self.background = background
        self.facePixels = facePixels
        self.backgroundPixels = backgroundPixels
    }

    /// sRGB code value (0–255) → linear light (0…1), IEC 61966-2-1.
    public static let linear: [Double] = (0..<256).map { v in
        let c = Double(v) / 255
        return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
    }

    /// The per-channel log ratio of face to background, `ln(face + ε) − ln(background + ε)` with
    /// ε = 1/1024: the camera's white balance and exposure scale both regions alike and cancel here;
    /// the screen's light, much stronger on the near face, does not.
    public var logRatio: [Double] {
        let e = 1.0 / 1024
        return (0..<3).map { Foundation.log(face[$0] + e) - Foundation.log(background[$0] + e) }
    }

    /// The face's own chromaticity in log space, `ln(face + ε)` minus its mean over the three
    /// channels: exposure (a gain common to the channels) cancels here; white balance, which moves
    /// slowly and weighs the whole frame, only partly follows the screen's colour. The second view
    /// of the light, for backgrounds that are dark, near or moving (the ratio's weak cases).
    public var chroma: [Double] {
        let e = 1.0 / 1024
        let l = face.map { Foundation.log($0 + e) }
        let m = (l[0] + l[1] + l[2]) / 3
        return l.map { $0 - m }
    }

    /// Measures a frame (interleaved 8-bit RGB, `width` × `height`) around the tracked face `box`.
    /// nil when the face region or the background is too small to measure (a face box under 16 px,
    /// or no background visible).
    public static func measure(rgb: UnsafeBufferPointer<UInt8>, width: Int, height: Int, box: FaceBox) -> IlluminationSample? {
        guard width > 0, height > 0, rgb.count >= width * height * 3, box.width >= 16, box.height >= 16 else { return nil }
        let lin = linear
        func clampX(_ x: Double) -> Int { min(width, max(0, Int(x.rounded()))) }
        func clampY(_ y: Double) -> Int { min(height, max(0, Int(y.rounded()))) }
        // The face: central region of the box.
        let fx0 = clampX(box.left + 0.2 * box.width), fx1 = clampX(box.right - 0.2 * box.width)
        let fy0 = clampY(box.top + 0.15 * box.height), fy1 = clampY(box.bottom - 0.1 * box.height)
        var face = [0.0, 0.0, 0.0]
        var nf = 0
        var y = fy0
        while y < fy1 {
            var x = fx0
            var i = (y * width + x) * 3
            while x < fx1 {
                face[0] += lin[Int(rgb[i])]; face[1] += lin[Int(rgb[i + 1])]; face[2] += lin[Int(rgb[i + 2])]
                nf += 1
                x += 2; i += 6
            }
            y += 2
        }
        guard nf >= 16 else { return nil }
        // The background: above the chin line, outside the head's neighbourhood.
        func background(excludeLeft: Double, excludeRight: Double, excludeTop: Double, maxY: Int) -> ([Double], Int) {
            let ex0 = clampX(excludeLeft), ex1 = clampX(excludeRight), ey0 = clampY(excludeTop)
            var sum = [0.0, 0.0, 0.0]
            var n = 0
            var y = 0
            while y < maxY {
                var x = 0
                while x < width {
                    if y >= ey0, x >= ex0, x < ex1 { x = ex1; continue }
                    let i = (y * width + x) * 3
                    sum[0] += lin[Int(rgb[i])]; sum[1] += lin[Int(rgb[i + 1])]; sum[2] += lin[Int(rgb[i + 2])]
                    n += 1
                    x += 3
                }
                y += 3
            }
            return (sum, n)
        }
        let minimum = max(16, width * height / 50 / 9)
        var (bg, nb) = background(excludeLeft: box.left - 0.35 * box.width, excludeRight: box.right + 0.35 * box.width,
                                  excludeTop: box.top - 0.5 * box.height, maxY: clampY(box.bottom))
        if nb < minimum {
            (bg, nb) = background(excludeLeft: box.left - 0.1 * box.width, excludeRight: box.right + 0.1 * box.width,
                                  excludeTop: box.top - 0.1 * box.height, maxY: max(1, height / 10))
        }
        guard nb >= 16 else { return nil }
        return IlluminationSample(face: face.map { $0 / Double(nf) }, background: bg.map { $0 / Double(nb) },
                                  facePixels: nf, backgroundPixels: nb)
    }
}

/// Settings of `IlluminationCheck`. The defaults were chosen on the development split of the
/// simulated captures (docs/LIVENESS.md "Presence").
public struct IlluminationConfiguration: Sendable, Codable, Hashable {
    /// The generator the issued sequences come from (the null draws use it too).
    public var design: IlluminationDesign
    /// Frames less than this long after a step's start are not counted for that step, milliseconds:
    /// the display's latency and response, the camera's exposure and rolling shutter mix the
    /// previous colour into them. Default 120.
    public var guardMilliseconds: Double
    /// Least fraction of the steps that must hold at least one counted frame with a measured face.
    /// Default 0.75 (6 of 8).
    public var minimumStepFraction: Double
    /// Random sequences the issued one is ranked among. Default 1999: p-values in steps of 1/2000.
    public var nullDraws: Int
    /// The largest p-value that counts as followed: the false-accept rate against any capture made
    /// without knowledge of the issued sequence. Default 0.001.
    public var falseAcceptRate: Double
    /// Least score (correlation of the measured step responses with the sequence's colours) that
    /// counts as followed, whatever the rank. Default 0.5.
    public var minimumScore: Double

    public init(design: IlluminationDesign = .init(), guardMilliseconds: Double = 120, minimumStepFraction: Double = 0.75,
                nullDraws: Int = 1999, falseAcceptRate: Double = 0.001, minimumScore: Double = 0.5) {
        self.design = design
        self.guardMilliseconds = guardMilliseconds
        self.minimumStepFraction = minimumStepFraction
        self.nullDraws = nullDraws
        self.falseAcceptRate = falseAcceptRate
        self.minimumScore = minimumScore
    }

    /// Checks every setting's range.
    /// - Throws: `LivenessError.invalidConfiguration` naming the first bad setting.
    public func validate() throws {
        func check(_ ok: Bool, _ what: String) throws { if !ok { throw LivenessError.invalidConfiguration("illumination: \(what)") } }
        try design.validate()
        try check(guardMilliseconds >= 0 && guardMilliseconds < Double(design.durationsMs.min() ?? 0),
                  "guardMilliseconds must be at least 0 and below the shortest step")
        try check(minimumStepFraction > 0 && minimumStepFraction <= 1, "minimumStepFraction must be in (0, 1]")
        try check((99...1_000_000).contains(nullDraws), "nullDraws must be 99…1 000 000")
        try check(falseAcceptRate > 0 && falseAcceptRate < 1, "falseAcceptRate must be in (0, 1)")
        try check(falseAcceptRate * Double(nullDraws + 1) >= 1, "nullDraws must be at least 1/falseAcceptRate − 1")
        try check(minimumScore >= -1 && minimumScore < 1, "minimumScore must be in [−1, 1)")
    }
}

/// Why a capture did not follow the sequence (`IlluminationReport.failure`).
public enum IlluminationFailure: String, Sendable, Codable, CaseIterable, Hashable {
    /// The frame times are missing, not one per frame, not finite or going backwards.
    case frameTimesInvalid = "frame_times_invalid"
    /// Fewer steps than `minimumStepFraction` hold a counted frame with a measured face (the frames
    /// do not cover the sequence, or the face was not found on them).
    case tooFewSteps = "too_few_steps"
    /// The response's correlation with the sequence is below `minimumScore`.
    case weakResponse = "weak_response"
    /// The issued sequence does not score above enough random ones (p-value above `falseAcceptRate`).
    case notDistinguished = "not_distinguished"
}

/// The outcome of `IlluminationCheck.evaluate`: evidence, not a verdict.
public struct IlluminationReport: Sendable, Codable, Hashable {
    /// Whether the capture follows the sequence: enough steps measured, `score ≥ minimumScore` and
    /// `pValue ≤ falseAcceptRate`.
    public var followed: Bool
    /// The capture's score (−1…1): the larger of ``ratioScore`` and ``chromaScore``; nil when not measured.
    public var score: Double?
    /// Correlation of the steps' face-to-background log ratios (`IlluminationSample.logRatio`, centred
    /// over the steps) with the steps' linear colours (centred).
    public var ratioScore: Double?
    /// Correlation of the steps' face chromaticity (`IlluminationSample.chroma`, centred over the
    /// steps) with the steps' colour chromaticity (each linear colour minus its channel mean, centred).
    public var chromaScore: Double?
    /// (1 + random sequences scoring at least `score`) ÷ (1 + `nullDraws`); nil when not measured.
    public var pValue: Double?
    /// The random sequences drawn.
    public var nullDraws: Int
    /// Steps holding at least one counted frame, and the sequence's steps.
    public var stepsMeasured: Int
    public var steps: Int
    /// Frames counted in some step.
    public var framesUsed: Int
    /// Per step, the mean face-to-background log ratio (3 values) of its counted frames; nil for a
    /// step without one.
    public var responses: [[Double]?]
    /// Why not followed; nil when followed.
    public var failure: IlluminationFailure?

    enum CodingKeys: String, CodingKey {
        case followed, score, steps, responses, failure
        case pValue = "p_value"
        case ratioScore = "ratio_score"
        case chromaScore = "chroma_score"
        case nullDraws = "null_draws"
        case stepsMeasured = "steps_measured"
        case framesUsed = "frames_used"
    }
}

/// Tests whether a capture's reflected light follows an illumination sequence.
public enum IlluminationCheck {
    /// The evidence that `samples` (one per frame, nil where no face was measured) taken at
    /// `frameTimesMs` (each frame's capture time, milliseconds from the start of the sequence, as
    /// the client reports them) follow `sequence`.
    ///
    /// Per step, the frames from `guardMilliseconds` after its start to its end are averaged, in two
    /// views of the light: the face relative to the background (`IlluminationSample.logRatio`,
    /// immune to white balance and exposure, weak when the background is near, dark or moving) and
    /// the face's own chromaticity (`IlluminationSample.chroma`, immune to exposure, weakened by white
    /// balance when the face fills the frame). Each view's step responses are centred over the steps
    /// and correlated with the steps' colours; the score is the larger of the two correlations (chosen
    /// on the development split: either view alone rejected three to four times as many simulated bona
    /// fide captures, docs/LIVENESS.md). The same is done for `configuration.nullDraws` sequences of
    /// `configuration.design` (seeded by `sequence.seed`, so the result is reproducible), and the
    /// p-value is the issued sequence's rank among them.
    ///
    /// Cost: `nullDraws` × (frames + 3 × steps) multiply-adds — about 1 ms for 30 frames and 1999
    /// draws (`idvd bench presence` prints it).
    public static func evaluate(samples: [IlluminationSample?], frameTimesMs: [Double], sequence: IlluminationSequence,
                                configuration: IlluminationConfiguration = .init()) -> IlluminationReport {
        var report = IlluminationReport(followed: false, score: nil, ratioScore: nil, chromaScore: nil, pValue: nil, nullDraws: configuration.nullDraws, stepsMeasured: 0,
                                        steps: sequence.steps.count, framesUsed: 0, responses: [], failure: nil)
        guard frameTimesMs.count == samples.count, !samples.isEmpty, frameTimesMs.allSatisfy(\.isFinite),
              zip(frameTimesMs, frameTimesMs.dropFirst()).allSatisfy({ $0 <= $1 }) else {
            report.failure = .frameTimesInvalid
            return report
        }
        var scorer = Scorer(samples: samples, times: frameTimesMs, guardMs: configuration.guardMilliseconds, steps: sequence.steps.count)
        let issued = scorer.score(sequence)
        report.responses = scorer.responses()
        report.stepsMeasured = issued.measured
        report.framesUsed = issued.frames
        let needed = Int((configuration.minimumStepFraction * Double(sequence.steps.count)).rounded(.up))
        guard report.stepsMeasured >= max(2, needed) else {
            report.failure = .tooFewSteps
            return report
        }
        let score = issued.score
        report.score = score
        report.ratioScore = issued.ratio
        report.chromaScore = issued.chroma
        var generator = SplitMix64(seed: sequence.seed)
        var atLeast = 0
        for _ in 0..<configuration.nullDraws {
            let draw = configuration.design.random(using: &generator)
            if scorer.score(draw).score >= score { atLeast += 1 }
        }
        let p = Double(1 + atLeast) / Double(1 + configuration.nullDraws)
        report.pValue = p
        if score < configuration.minimumScore {
            report.failure = .weakResponse
        } else if p > configuration.falseAcceptRate {
            report.failure = .notDistinguished
        } else {
            report.followed = true
        }
        return report
    }

    /// Scores sequences against one capture's features, reusing its buffers (the null loop runs
    /// thousands of times per check).
    struct Scorer {
        /// Per frame, `IlluminationSample.logRatio` then `.chroma` (6 values; NaN without a sample).
        let features: [Double]
        let times: [Double]
        let guardMs: Double
        var sums: [Double]
        var counts: [Int]

        init(samples: [IlluminationSample?], times: [Double], guardMs: Double, steps: Int) {
            features = samples.flatMap { s -> [Double] in s.map { $0.logRatio + $0.chroma } ?? [Double](repeating: .nan, count: 6) }
            self.times = times
            self.guardMs = guardMs
            sums = [Double](repeating: 0, count: steps * 6)
            counts = [Int](repeating: 0, count: steps)
        }

        /// The per-step mean face-to-background log ratios of the last scored sequence (nil for a step without a frame).
        func responses() -> [[Double]?] {
            counts.indices.map { k in counts[k] == 0 ? nil : (0..<3).map { sums[k * 6 + $0] / Double(counts[k]) } }
        }

        /// Bins the frames by `sequence`'s steps (from `guardMs` after a step's start to its end, frames
        /// with a sample) and correlates the measured steps' mean features with their colours (see
        /// ``IlluminationCheck/evaluate(samples:frameTimesMs:sequence:configuration:)``): the larger of
        /// the two views' correlations (each 0 when flat or fewer than two steps were measured).
        mutating func score(_ sequence: IlluminationSequence) -> (score: Double, ratio: Double, chroma: Double, measured: Int, frames: Int) {
            let k = sequence.steps.count
            if counts.count != k {
                sums = [Double](repeating: 0, count: k * 6)
                counts = [Int](repeating: 0, count: k)
            } else {
                for i in sums.indices { sums[i] = 0 }
                for i in counts.indices { counts[i] = 0 }
            }
            var step = 0
            var end = Double(sequence.steps[0].milliseconds), start = 0.0
            var used = 0
            for (f, t) in times.enumerated() {
                guard t >= 0 else { continue }
                while step < k, t >= end {
                    step += 1
                    start = end
                    if step < k { end += Double(sequence.steps[step].milliseconds) }
                }
                guard step < k else { break }
                guard t >= start + guardMs, !features[f * 6].isNaN else { continue }
                for d in 0..<6 { sums[step * 6 + d] += features[f * 6 + d] }
                counts[step] += 1
                used += 1
            }
            var measured = 0
            for i in 0..<k where counts[i] > 0 { measured += 1 }
            guard measured >= 2 else { return (0, 0, 0, measured, used) }
            let lin = IlluminationSample.linear
            // The colours (linear) and their chromaticity (minus the channel mean), per measured step.
            func colour(_ i: Int, chroma: Bool) -> (Double, Double, Double) {
                let s = sequence.steps[i]
                let c = (lin[Int(s.red)], lin[Int(s.green)], lin[Int(s.blue)])
                guard chroma else { return c }
                let m = (c.0 + c.1 + c.2) / 3
                return (c.0 - m, c.1 - m, c.2 - m)
            }
            func correlation(offset: Int, chroma: Bool) -> Double {
                var meanR = (0.0, 0.0, 0.0), meanC = (0.0, 0.0, 0.0)
                for i in 0..<k where counts[i] > 0 {
                    let n = Double(counts[i])
                    meanR.0 += sums[i * 6 + offset] / n; meanR.1 += sums[i * 6 + offset + 1] / n; meanR.2 += sums[i * 6 + offset + 2] / n
                    let c = colour(i, chroma: chroma)
                    meanC.0 += c.0; meanC.1 += c.1; meanC.2 += c.2
                }
                let m = Double(measured)
                meanR = (meanR.0 / m, meanR.1 / m, meanR.2 / m)
                meanC = (meanC.0 / m, meanC.1 / m, meanC.2 / m)
                var dot = 0.0, rr = 0.0, cc = 0.0
                for i in 0..<k where counts[i] > 0 {
                    let n = Double(counts[i])
                    let c = colour(i, chroma: chroma)
                    let a0 = sums[i * 6 + offset] / n - meanR.0, a1 = sums[i * 6 + offset + 1] / n - meanR.1, a2 = sums[i * 6 + offset + 2] / n - meanR.2
                    let b0 = c.0 - meanC.0, b1 = c.1 - meanC.1, b2 = c.2 - meanC.2
                    dot += a0 * b0 + a1 * b1 + a2 * b2
                    rr += a0 * a0 + a1 * a1 + a2 * a2
                    cc += b0 * b0 + b1 * b1 + b2 * b2
                }
                guard rr > 1e-18, cc > 1e-18 else { return 0 }
                return dot / (rr * cc).squareRoot()
            }
            let ratio = correlation(offset: 0, chroma: false), chroma = correlation(offset: 3, chroma: true)
            return (max(ratio, chroma), ratio, chroma, measured, used)
        }
    }
}
