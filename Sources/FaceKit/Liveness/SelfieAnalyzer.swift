import Foundation
import Imaging

/// Selfie analysis on a short frame sequence (e.g. 2–4 s at 10–15 fps of JPEG frames from the
/// selfie capture provider): per-frame face measurements, tracking of one face, liveness
/// (presentation-attack detection, passive or active), the best frame (`autocapture_result`) and
/// the comparison with a document portrait or a stored template (`verify`). Evidence only.
///
/// Cost: one HOG detection plus 5- and 68-point landmarks per frame (frames detected at most
/// `detectionMaxDimension` on their long side), and 128-d descriptors only for the best frame and
/// `identitySamples` others. Safe to call from several threads (the engine is).
public struct SelfieAnalyzer: Sendable {
    public let engine: FaceEngine
    public let configuration: LivenessConfiguration

    public init(engine: FaceEngine, configuration: LivenessConfiguration = .init()) {
        self.engine = engine
        self.configuration = configuration
    }

    /// What a frame's tracking step found (internal).
    struct Observation {
        var summary: FrameSummary
        var face: FaceAnalysis?
        var secondFace: Bool
    }

    /// Judges liveness of `frames` (JPEG or PNG each, in capture order, `configuration.frameRate` apart).
    ///
    /// - Parameters:
    ///   - challenge: an active challenge to evaluate; required in `.active` mode.
    ///   - now: the time the frames are judged at (checked against the challenge's deadline).
    /// - Returns: the report; a sequence that cannot be live (too few frames, no face, …) is a
    ///   report with reasons, not an error.
    /// - Throws: `LivenessError.noFrames`, `.tooManyFrames` (before decoding anything),
    ///   `.invalidFrame` (a frame that is not a decodable image within `maximumFramePixels`),
    ///   `.challengeRequired`, `.invalidConfiguration`; `FaceError` from the engine (e.g. missing models).
    public func analyze(frames: [Data], challenge: ActiveChallenge? = nil, now: Date = Date()) throws -> LivenessReport {
        let config = configuration
        try config.validate()
        guard !frames.isEmpty else { throw LivenessError.noFrames }
        guard frames.count <= config.maximumFrames else {
            throw LivenessError.tooManyFrames(count: frames.count, limit: config.maximumFrames)
        }
        if config.mode == .active, challenge == nil { throw LivenessError.challengeRequired }
        if let challenge, challenge.actions.isEmpty { throw LivenessError.challengeRequired }
        if let challenge, !(challenge.duration > 0 && challenge.duration <= 3600) {
            throw LivenessError.invalidChallenge("duration must be in (0, 3600] seconds")
        }

        let observations = try track(frames)
        var reasons: [LivenessReason] = []
        func add(_ r: LivenessReason) { if !reasons.contains(r) { reasons.append(r) } }

        // Tracking verdicts.
        let tracked = observations.filter { $0.face != nil }
        if frames.count < config.minimumFrames { add(.insufficientFrames) }
        if tracked.isEmpty { add(.noFace) } else {
            var longestGap = 0, gap = 0
            for o in observations {
                gap = o.face == nil ? gap + 1 : 0
                longestGap = max(longestGap, gap)
            }
            let allowedGap = max(1, Int((config.maximumFaceLostDuration * config.frameRate).rounded(.down)))
            if longestGap > allowedGap || Double(tracked.count) < config.minimumTrackedFraction * Double(frames.count) {
                add(.faceLost)
            }
        }
        if observations.contains(where: \.secondFace) { add(.multipleFaces) }

        // Non-rigid motion against the first tracked frame, on landmarks averaged over
        // `residualSmoothingFrames` neighbouring frames (the detector's per-frame jitter is
        // independent between frames and shrinks; real motion is coherent and stays).
        var summaries = observations.map(\.summary)
        var residuals: [Double] = []
        let smoothed = Self.smoothedLandmarks(observations, window: config.residualSmoothingFrames)
        if let first = smoothed.firstIndex(where: { $0 != nil }), let reference = smoothed[first] {
            for i in (first + 1)..<observations.count {
                guard let points = smoothed[i], let f = observations[i].face else { continue }
                if let r = LivenessCues.planarResidual(from: reference, to: points, scale: max(1, f.interEyeDistance)) {
                    summaries[i].residual = r
                    residuals.append(r)
                }
            }
        }
        let residual: Double? = residuals.isEmpty ? nil : LivenessCues.percentile(residuals, 0.8)

        // Blinks.
        let blinkMaxFrames = max(1, Int((config.blinkMaximumDuration * config.frameRate).rounded(.down)))
        let (blinks, deepestDip) = LivenessCues.blinks(ear: observations.map { $0.face.map(\.eyeAspectRatio) },
                                                      minimumDepth: config.blinkMinimumDepth, maximumFrames: blinkMaxFrames)

        // Expression dynamics (facial action besides blinks): mouth and eye opening over the sequence.
        let mouthSpread: Double? = tracked.count >= 3 ? LivenessCues.actionSpread(observations.map { $0.face?.mouthAspectRatio }) : nil
        let earLevel = LivenessCues.median(tracked.compactMap { $0.face?.eyeAspectRatio })
        let eyeSpread: Double? = tracked.count >= 3 && earLevel > 0
            ? LivenessCues.actionSpread(observations.map { $0.face.map { $0.eyeAspectRatio / earLevel } }) : nil

        // Best frame and identity consistency.
        let best = bestFrame(observations)
        var bestJPEG: Data?
        var bestEmbedding: [Float]?
        var identityDistance: Double?
        if let best, let face = best.face {
            let image = try decode(frames[best.summary.index], index: best.summary.index)
            bestJPEG = try image.jpegData(quality: config.bestFrameJPEGQuality)
            bestEmbedding = try engine.embedding(in: image, landmarks: face.landmarks5)
            if let bestEmbedding, config.identitySamples > 0, tracked.count > 1 {
                let step = Double(tracked.count - 1) / Double(max(1, config.identitySamples - 1))
                let picks = Set((0..<config.identitySamples).map { min(tracked.count - 1, Int((Double($0) * step).rounded())) })
                for p in picks.sorted() where tracked[p].summary.index != best.summary.index {
                    guard let f = tracked[p].face else { continue }
                    let img = try decode(frames[tracked[p].summary.index], index: tracked[p].summary.index)
                    let e = try engine.embedding(in: img, landmarks: f.landmarks5)
                    identityDistance = max(identityDistance ?? 0, SelfieMatching.distance(e, bestEmbedding))
                }
                if let d = identityDistance, d > config.identityDistanceThreshold { add(.identityChanged) }
            }
        }

        // Evidence strengths (decision line 0.5 each).
        // Cue reasons are only given when there was motion to measure (two tracked frames or more).
        let measurable = tracked.count >= 2
        var strengths: [Double] = []
        let motion = Self.motionStrength(residual, rigid: config.rigidResidualLevel, live: config.liveResidualLevel)
        var completed: [ChallengeAction] = []
        let mode: LivenessMode = challenge == nil ? .passive : .active
        if let challenge {
            if now > challenge.deadline { add(.challengeExpired) }
            completed = completedActions(challenge, observations: observations, blinks: blinks)
            strengths += challenge.actions.indices.map { $0 < completed.count ? 1 : 0 }
            if completed.count < challenge.actions.count { add(.challengeNotMet) }
        } else {
            let blinkStrength: Double
            if let deepest = blinks.map(\.depth).max() {
                blinkStrength = 0.5 + 0.5 * min(1, max(0, (deepest - config.blinkMinimumDepth) / max(0.05, 0.6 - config.blinkMinimumDepth)))
            } else {
                blinkStrength = 0.45 * min(1, deepestDip / config.blinkMinimumDepth)
            }
            // Facial action: a blink or expression dynamics, whichever is stronger (each on its own
            // decision line; 0.5 at the configured level, 1.0 at twice it).
            let action = max((mouthSpread ?? 0) / config.mouthActionLevel, (eyeSpread ?? 0) / config.eyeActionLevel)
            let actionStrength = action < 1 ? 0.49 * action : 0.5 + 0.5 * min(1, action - 1)
            let facial = max(blinkStrength, actionStrength)
            if facial < 0.5, measurable { add(.noBlink) }
            strengths.append(facial)
        }
        strengths.append(motion)
        if motion < 0.5, measurable { add(.rigidMotion) }

        let score: Int
        if reasons.contains(where: \.isBlocking) {
            score = 0
        } else {
            let mean = strengths.reduce(0, +) / Double(strengths.count)
            score = strengths.allSatisfy({ $0 >= 0.5 })
                ? min(100, max(50, 50 + Int((50 * (mean - 0.5) / 0.5).rounded())))
                : min(49, max(0, Int((49 * mean).rounded())))
        }
        let live = score >= config.threshold && !reasons.contains(where: \.isBlocking)
        if !live, reasons.isEmpty { add(.lowScore) }
        return LivenessReport(live: live, score: score, threshold: config.threshold, mode: mode,
                              reasons: live ? [] : reasons, frameCount: frames.count, trackedFrameCount: tracked.count,
                              blinks: blinks, nonRigidResidual: residual,
                              mouthActionSpread: mouthSpread, eyeActionSpread: eyeSpread, identityDistance: identityDistance,
                              challengeNonce: challenge?.nonce, completedActions: completed,
                              bestFrameIndex: best?.summary.index, bestFrameJPEG: bestJPEG,
                              bestFrameEmbedding: bestEmbedding, frames: summaries)
    }

    /// Liveness, then the 1:1 comparison of the best frame with `reference`: evidence only (the
    /// verdict is the server's policy's, IDVEngine `WorkflowPolicy`).
    ///
    /// - Returns: the liveness report and the descriptor distance (nil without a face in the frames).
    /// - Throws: `LivenessError.invalidReference`, `.referenceHasNoFace`, `.invalidTemplate` (checked
    ///   before the frames), and everything `analyze` throws.
    public func verify(frames: [Data], against reference: SelfieReference, challenge: ActiveChallenge? = nil,
                       now: Date = Date()) throws -> SelfieComparison {
        let referenceEmbedding = try embedding(of: reference)
        let report = try analyze(frames: frames, challenge: challenge, now: now)
        let distance = report.bestFrameEmbedding.map { SelfieMatching.distance($0, referenceEmbedding) }
        return SelfieComparison(faceMatchScore: distance.map { SelfieMatching.score(distance: $0) } ?? 0, distance: distance, liveness: report)
    }

    /// The 128-d descriptor of the reference (the largest face of a portrait, or a template as given).
    public func embedding(of reference: SelfieReference) throws -> [Float] {
        switch reference {
        case .template(let t):
            guard t.count == 128 else { throw LivenessError.invalidTemplate("expected 128 components, got \(t.count)") }
            guard t.allSatisfy(\.isFinite) else { throw LivenessError.invalidTemplate("non-finite component") }
            return t
        case .portrait(let data):
            let image: Image
            do { image = try Image(data: data) } catch let e as ImageError { throw LivenessError.invalidReference(e) }
            let options = AnalysisOptions(landmarks68: false, embedding: true, maxFaces: 1)
            guard let e = try engine.analyze(image, options: options).first?.embedding else { throw LivenessError.referenceHasNoFace }
            return e
        }
    }

    // MARK: Steps

    func decode(_ data: Data, index: Int) throws -> Image {
        do { return try Image(data: data, maxPixels: configuration.maximumFramePixels) } catch let e as ImageError {
            throw LivenessError.invalidFrame(index: index, e)
        }
    }

    /// Detection, landmarks and tracking of the largest face of the first frame that has one.
    func track(_ frames: [Data]) throws -> [Observation] {
        let config = configuration
        let options = AnalysisOptions(
            detection: DetectionOptions(maxDimension: config.detectionMaxDimension, smallImageDimension: 256),
            landmarks68: true, embedding: false, maxFaces: 4)
        var last: FaceBox?
        var out: [Observation] = []
        out.reserveCapacity(frames.count)
        for (i, data) in frames.enumerated() {
            let image = try decode(data, index: i)
            let faces = try engine.analyze(image, options: options)
            var summary = FrameSummary(index: i, width: image.width, height: image.height, faceCount: faces.count, tracked: false)
            var chosen: FaceAnalysis?
            if let lastBox = last {
                // The largest face near where the tracked face was.
                chosen = faces.first { $0.box.center.distance(to: lastBox.center) < 0.75 * max(lastBox.width, $0.box.width) }
            } else {
                chosen = faces.first
            }
            var second = false
            if let face = chosen {
                last = face.box
                let area = face.box.width * face.box.height
                second = faces.contains { $0 != face && $0.box.width * $0.box.height >= config.secondFaceAreaRatio * area }
                summary.tracked = true
                summary.box = face.box
                summary.pose = face.pose
                summary.eyeAspectRatio = face.eyeAspectRatio
                summary.mouthAspectRatio = face.mouthAspectRatio
                summary.sharpness = Self.sharpness(image, box: face.box)
                summary.landmarks68 = face.landmarks68
            } else if let lastBox = last {
                second = faces.contains { $0.box.width * $0.box.height >= config.secondFaceAreaRatio * lastBox.width * lastBox.height }
            }
            out.append(Observation(summary: summary, face: chosen, secondFace: second))
        }
        return out
    }

    /// Per frame, the mean of the 68 landmarks over the `window` frames centred on it (all of them
    /// tracked, else nil).
    static func smoothedLandmarks(_ observations: [Observation], window: Int) -> [[FacePoint]?] {
        let half = max(0, window - 1) / 2
        return observations.indices.map { i -> [FacePoint]? in
            guard i - half >= 0, i + half < observations.count else { return nil }
            var sum = [FacePoint](repeating: FacePoint(x: 0, y: 0), count: 68)
            for k in (i - half)...(i + half) {
                guard let points = observations[k].face?.landmarks68, points.count == 68 else { return nil }
                for j in 0..<68 { sum[j].x += points[j].x; sum[j].y += points[j].y }
            }
            let n = Double(2 * half + 1)
            return sum.map { FacePoint(x: $0.x / n, y: $0.y / n) }
        }
    }

    /// Variance of the Laplacian of the face box, scaled to 128 px wide, in grey levels².
    static func sharpness(_ image: Image, box: FaceBox) -> Double? {
        guard let rect = box.clipped(to: image.bounds), rect.width >= 8, rect.height >= 8,
              let crop = try? image.cropped(rect).grayscale() else { return nil }
        let h = max(8, Int((Double(rect.height) * 128 / Double(rect.width)).rounded()))
        guard let scaled = try? crop.resized(width: 128, height: min(h, 512)) else { return nil }
        return LivenessCues.laplacianVariance(gray: scaled.pixels, width: scaled.width, height: scaled.height)
    }

    /// The sharpest, most frontal, eyes-open tracked frame.
    func bestFrame(_ observations: [Observation]) -> Observation? {
        let tracked = observations.filter { $0.face != nil }
        guard !tracked.isEmpty else { return nil }
        let maxSharp = tracked.compactMap(\.summary.sharpness).max() ?? 0
        let openLevel = LivenessCues.median(tracked.compactMap(\.summary.eyeAspectRatio))
        func quality(_ o: Observation) -> Double {
            let sharp = maxSharp > 0 ? ((o.summary.sharpness ?? 0) / maxSharp).squareRoot() : 1
            let pose = o.summary.pose ?? HeadPose(yaw: 45, pitch: 45, roll: 45)
            let frontal = max(0.05, 1 - (abs(pose.yaw) + 0.5 * abs(pose.pitch) + 0.25 * abs(pose.roll)) / 45)
            let ear = o.summary.eyeAspectRatio ?? 0
            let eyes = openLevel > 0 && ear >= 0.85 * openLevel ? 1.0 : 0.2
            return sharp * frontal * eyes
        }
        return tracked.max { quality($0) < quality($1) }
    }

    /// The prefix of `challenge.actions` seen in order, each after the previous one, all within
    /// `challenge.duration` seconds of sequence time.
    func completedActions(_ challenge: ActiveChallenge, observations: [Observation], blinks: [BlinkEvent]) -> [ChallengeAction] {
        let config = configuration
        let yaws = observations.map { $0.face?.pose?.yaw }
        let mars = observations.map { $0.face?.mouthAspectRatio }
        let startYaws = yaws.compactMap { $0 }.prefix(3)
        let baseYaw = LivenessCues.median(Array(startYaws))
        let lastFrame = Int((challenge.duration * config.frameRate).rounded(.down))
        var cursor = -1
        var done: [ChallengeAction] = []
        for action in challenge.actions {
            var hit: Int?
            switch action {
            case .turnLeft:
                hit = yaws.indices.first { $0 > cursor && (yaws[$0].map { $0 - baseYaw >= config.turnDegrees } ?? false) }
            case .turnRight:
                hit = yaws.indices.first { $0 > cursor && (yaws[$0].map { baseYaw - $0 >= config.turnDegrees } ?? false) }
            case .blink:
                hit = blinks.first { $0.startFrame > cursor }?.startFrame
            case .openMouth:
                // Open after having been closed (below half the open ratio) earlier in the sequence.
                let firstClosed = mars.firstIndex { ($0 ?? 1) < config.openMouthRatio / 2 }
                if let firstClosed {
                    hit = mars.indices.first { $0 > max(cursor, firstClosed) && ($0 < mars.count) && (mars[$0] ?? 0) >= config.openMouthRatio }
                }
            }
            guard let h = hit, h <= lastFrame else { break }
            done.append(action)
            cursor = h
        }
        return done
    }

    /// Strength (0…1, decision line 0.5) of the non-rigid motion cue from the residual.
    static func motionStrength(_ residual: Double?, rigid: Double, live: Double) -> Double {
        guard let r = residual else { return 0 }
        if r < rigid { return 0.5 * r / rigid * 0.98 }
        return 0.5 + 0.5 * min(1, (r - rigid) / (live - rigid))
    }
}
