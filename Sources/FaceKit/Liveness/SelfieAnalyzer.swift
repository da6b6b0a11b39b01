internal import CVision
import Foundation
import Imaging

/// Selfie analysis on a short frame sequence (e.g. 2–4 s at 10–15 fps of JPEG frames from the
/// selfie capture provider): per-frame face measurements, tracking of one face, liveness
/// (presentation-attack detection, passive or active), the best frame (`autocapture_result`) and
/// the comparison with a document portrait or a stored template (`verify`). Evidence only.
///
/// Cost: one HOG detection plus 68-point landmarks per frame (frames detected at most
/// `detectionMaxDimension` on their long side), and the recogniser's 256-d descriptors (about
/// 17 ms each) only for the template frames (at most `templateFrames`) and the `identitySamples`
/// others, aligned by the 5 points of their 68. Safe to call from several threads (the engine and
/// the recogniser are).
public struct SelfieAnalyzer: Sendable {
    public let engine: FaceEngine
    public let configuration: LivenessConfiguration
    /// The texture PAD models; nil = `TexturePAD.shared()` (the bundled, SHA-256-checked files),
    /// loaded on first use when `configuration.texture` is on.
    public let texturePAD: TexturePAD?
    /// The texture models' own face detector; nil = `PADFaceDetector.shared()` (bundled, checked),
    /// loaded on first use when `configuration.textureDetector` is on.
    public let padDetector: PADFaceDetector?
    /// The face recogniser of the capture's template; nil = `FaceRecognizer.shared()` (the bundled,
    /// SHA-256-checked model), loaded on first use.
    public let recognizer: FaceRecognizer?

    public init(engine: FaceEngine, configuration: LivenessConfiguration = .init(), texturePAD: TexturePAD? = nil,
                padDetector: PADFaceDetector? = nil, recognizer: FaceRecognizer? = nil) {
        self.engine = engine
        self.configuration = configuration
        self.texturePAD = texturePAD
        self.padDetector = padDetector
        self.recognizer = recognizer
    }

    /// What a frame's tracking step found (internal).
    struct Observation {
        var summary: FrameSummary
        /// The tracked face: box and 68 landmarks (5-point landmarks are computed only for the
        /// frames whose descriptor is needed).
        var face: FaceAnalysis?
        var secondFace: Bool
    }

    /// Thread CPU seconds (CLOCK_THREAD_CPUTIME_ID) since an arbitrary origin.
    static func cpuNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Judges liveness of `frames` (JPEG or PNG each, in capture order, `configuration.frameRate` apart).
    ///
    /// - Parameters:
    ///   - challenge: an active challenge to evaluate; required in `.active` mode.
    ///   - now: the time the frames are judged at (checked against the challenge's deadline).
    /// - Returns: the report (evidence: per-frame measurements and texture scores, cue strengths,
    ///   the fused score, the fused face template, capture quality, stage times); a sequence that
    ///   cannot be live (too few frames, no face, …) is a report with reasons, not an error.
    /// - Throws: `LivenessError.noFrames`, `.tooManyFrames` (before decoding anything),
    ///   `.invalidFrame` (a frame that is not a decodable image within `maximumFramePixels`),
    ///   `.challengeRequired`, `.invalidConfiguration`; `FaceError` from the engine (e.g. missing
    ///   models, a texture model failing its SHA-256 check).
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
        let pad = config.texture ? try texturePAD ?? TexturePAD.shared() : nil
        let detector = config.texture && config.textureDetector ? try padDetector ?? PADFaceDetector.shared() : nil
        let t0 = Self.cpuNow()
        var times = SelfieStageTimes()
        var observations = try track(frames, pad: pad, detector: detector, times: &times)
        var reasons: [LivenessReason] = []
        func add(_ r: LivenessReason) { if !reasons.contains(r) { reasons.append(r) } }
        let tCues = Self.cpuNow()

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
        // The same fits give how far the face moved as a plane (the displacement the homography
        // itself carries the reference landmarks): evidence of a flat picture being moved when no
        // residual comes with it, and nothing at all when the face is still.
        var residuals: [Double] = []
        var displacements: [Double] = []
        let smoothed = Self.smoothedLandmarks(observations, window: config.residualSmoothingFrames)
        if let first = smoothed.firstIndex(where: { $0 != nil }), let reference = smoothed[first] {
            for i in (first + 1)..<observations.count {
                guard let points = smoothed[i], let f = observations[i].face else { continue }
                if let fit = LivenessCues.planarFit(from: reference, to: points, scale: max(1, f.interEyeDistance)) {
                    observations[i].summary.residual = fit.residual
                    observations[i].summary.planeDisplacement = fit.displacement
                    residuals.append(fit.residual)
                    displacements.append(fit.displacement)
                }
            }
        }
        let residual: Double? = residuals.isEmpty ? nil : LivenessCues.percentile(residuals, 0.8)
        let planeMotion: Double? = displacements.isEmpty ? nil : LivenessCues.percentile(displacements, 0.8)

        // Blinks.
        let blinkMaxFrames = max(1, Int((config.blinkMaximumDuration * config.frameRate).rounded(.down)))
        let (blinks, deepestDip) = LivenessCues.blinks(ear: observations.map { $0.face.map(\.eyeAspectRatio) },
                                                      minimumDepth: config.blinkMinimumDepth, maximumFrames: blinkMaxFrames)

        // Expression dynamics (facial action besides blinks): mouth and eye opening over the sequence.
        let mouthSpread: Double? = tracked.count >= 3 ? LivenessCues.actionSpread(observations.map { $0.face?.mouthAspectRatio }) : nil
        let earLevel = LivenessCues.median(tracked.compactMap { $0.face?.eyeAspectRatio })
        let eyeSpread: Double? = tracked.count >= 3 && earLevel > 0
            ? LivenessCues.actionSpread(observations.map { $0.face.map { $0.eyeAspectRatio / earLevel } }) : nil
        times.cues += Self.cpuNow() - tCues

        // Best frame, the fused template and identity consistency.
        let best = bestFrame(observations)
        var bestJPEG: Data?
        var bestEmbedding: [Float]?
        var identityDistance: Double?
        var template: FaceTemplate?
        var templateFrames: [Int] = []
        var templateWeights: [Double] = []
        if let best, best.face != nil {
            let e = try captureEmbeddings(observations, frames: frames, best: best, times: &times)
            (bestJPEG, bestEmbedding, template) = (e.bestJPEG, e.bestEmbedding, e.template)
            (templateFrames, templateWeights, identityDistance) = (e.templateFrames, e.templateWeights, e.identityDistance)
            if let d = identityDistance, d > config.identityDistanceThreshold { add(.identityChanged) }
        }

        // Texture PAD over the scored frames: the median over the good ones (near-frontal, sharp enough).
        let texture = pad == nil ? nil : textureEvidence(&observations)

        // Cue strengths (decision line 0.5 each) and their fusion.
        let measurable = tracked.count >= 2
        let motion = Self.motionStrength(residual, rigid: config.rigidResidualLevel, live: config.liveResidualLevel)
        var completed: [ChallengeAction] = []
        let mode: LivenessMode = challenge == nil ? .passive : .active
        var inputs = LivenessFusion.Inputs(facialAction: nil, challenge: nil, motion: motion,
                                           texture: texture?.logOdds.map { LivenessFusion.textureStrength($0, levels: config.textureLevels) })
        if let challenge {
            if now > challenge.deadline { add(.challengeExpired) }
            completed = completedActions(challenge, frames: observations.map(\.summary), blinks: blinks)
            inputs.challenge = challenge.actions.indices.map { $0 < completed.count ? 1 : 0 }
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
            inputs.facialAction = max(blinkStrength, actionStrength)
        }
        let blocked = reasons.contains(where: \.isBlocking)
        let rule = pad == nil ? LivenessFusion.Rule.motion : config.fusionRule
        let outcome = LivenessFusion.apply(rule, inputs, blocked: blocked, measurable: measurable)
        let motionOutcome = LivenessFusion.apply(.motion, inputs, blocked: blocked, measurable: measurable)
        outcome.failed.forEach(add)
        let live = outcome.score >= config.threshold && !blocked
        if !live, reasons.isEmpty { add(.lowScore) }

        // Capture quality of the best frame (and of the frames when no face was found).
        let quality = captureQuality(observations, best: best)
        times.total = Self.cpuNow() - t0
        return LivenessReport(live: live, score: outcome.score, threshold: config.threshold, mode: mode,
                              reasons: live ? [] : reasons, frameCount: frames.count, trackedFrameCount: tracked.count,
                              blinks: blinks, nonRigidResidual: residual, planeMotion: planeMotion,
                              mouthActionSpread: mouthSpread, eyeActionSpread: eyeSpread, identityDistance: identityDistance,
                              challengeNonce: challenge?.nonce, completedActions: completed,
                              bestFrameIndex: best?.summary.index, bestFrameJPEG: bestJPEG,
                              bestFrameEmbedding: bestEmbedding, frames: observations.map(\.summary),
                              frameRate: config.frameRate, fusionRule: rule, fusionInputs: inputs,
                              motionScore: motionOutcome.score, texture: texture, template: template,
                              templateFrameIndices: templateFrames, templateWeights: templateWeights,
                              quality: quality, stageTimes: times)
    }

    // MARK: Steps

    func decode(_ data: Data, index: Int) throws -> Image {
        do { return try Image(data: data, maxPixels: configuration.maximumFramePixels) } catch let e as ImageError {
            throw LivenessError.invalidFrame(index: index, e)
        }
    }

    /// Detection, landmarks, quality measures and texture scores of the tracked face: the largest
    /// face of the first frame that has one, then the largest near its last position.
    ///
    /// After the first detection the face is searched in a region of interest around its last box
    /// (the box grown by `trackingMargin` on each side, detected at a scale that puts the face near
    /// 120 px wide), falling back to the whole frame when it is not found there; every
    /// `fullDetectionInterval`-th frame is searched whole, for a second face entering the view.
    func track(_ frames: [Data], pad: TexturePAD?, detector: PADFaceDetector?, times: inout SelfieStageTimes) throws -> [Observation] {
        let config = configuration
        let full = DetectionOptions(maxDimension: config.detectionMaxDimension, smallImageDimension: 256)
        var last: FaceBox?
        var out: [Observation] = []
        out.reserveCapacity(frames.count)
        let textureIndices = Self.spread(count: frames.count, picks: config.textureFrames)
        for (i, data) in frames.enumerated() {
            var t = Self.cpuNow()
            func lap(_ slot: inout Double) { let n = Self.cpuNow(); slot += n - t; t = n }
            let image = try decode(data, index: i)
            let rgb = image.rgbPixels
            lap(&times.decode)
            var summary = FrameSummary(index: i, width: image.width, height: image.height, faceCount: 0, tracked: false)
            var faces: [DetectedFace] = []
            var searchedWhole = true
            try rgb.withUnsafeBufferPointer { buffer in
                if let lastBox = last, config.trackingMargin > 0, config.fullDetectionInterval > 1, i % config.fullDetectionInterval != 0,
                   let roi = lastBox.expanded(by: config.trackingMargin).clipped(to: image.bounds), roi.width >= 40, roi.height >= 40 {
                    let crop = try image.rgb().cropped(roi)
                    let scale = min(1, 120 / max(1, lastBox.width))
                    let options = DetectionOptions(maxDimension: max(64, Int((Double(max(roi.width, roi.height)) * scale).rounded())), upsample: 0)
                    faces = try crop.rgbPixels.withUnsafeBufferPointer {
                        try engine.detect(rgb: $0, width: crop.width, height: crop.height, options: options)
                    }.map { f in
                        var f = f
                        f.box = FaceBox(left: f.box.left + Double(roi.x), top: f.box.top + Double(roi.y),
                                        right: f.box.right + Double(roi.x), bottom: f.box.bottom + Double(roi.y))
                        return f
                    }
                    searchedWhole = false
                }
                if faces.isEmpty {
                    faces = try engine.detect(rgb: buffer, width: image.width, height: image.height, options: full)
                    searchedWhole = true
                }
            }
            faces.sort { $0.box.width * $0.box.height > $1.box.width * $1.box.height }
            lap(&times.detect)
            summary.faceCount = faces.count
            summary.searchedWholeFrame = searchedWhole
            var chosen: DetectedFace?
            if let lastBox = last {
                // The largest face near where the tracked face was.
                chosen = faces.first { $0.box.center.distance(to: lastBox.center) < 0.75 * max(lastBox.width, $0.box.width) }
            } else {
                chosen = faces.first
            }
            var second = false
            var analysis: FaceAnalysis?
            let gray = image.grayPixels
            summary.frameBrightness = Self.meanLevel(gray)
            if let face = chosen {
                last = face.box
                let area = face.box.width * face.box.height
                second = faces.contains { $0 != face && $0.box.width * $0.box.height >= config.secondFaceAreaRatio * area }
                let points = try rgb.withUnsafeBufferPointer {
                    try engine.landmarks(rgb: $0, width: image.width, height: image.height, box: face.box, count: 68)
                }
                let a = FaceAnalysis(box: face.box, confidence: face.confidence, detector: face.detector,
                                     landmarks5: [], landmarks68: points, embedding: nil)
                analysis = a
                lap(&times.landmarks)
                summary.tracked = true
                summary.box = face.box
                summary.pose = a.pose
                summary.eyeAspectRatio = a.eyeAspectRatio
                summary.mouthAspectRatio = a.mouthAspectRatio
                summary.interEyeDistance = a.interEyeDistance
                summary.landmarks68 = points
                if let stats = Self.regionStatistics(gray, width: image.width, height: image.height, box: face.box) {
                    summary.brightness = stats.mean
                    summary.contrast = stats.stddev
                    summary.sharpness = stats.laplacianVariance
                }
                lap(&times.quality)
                summary.illumination = rgb.withUnsafeBufferPointer {
                    IlluminationSample.measure(rgb: $0, width: image.width, height: image.height, box: face.box)
                }
                lap(&times.illumination)
                if let pad, textureIndices.contains(i) {
                    try rgb.withUnsafeBufferPointer { buffer in
                        guard let box = try Self.textureBox(buffer, image: image, tracked: face.box, detector: detector) else { return }
                        let score = try pad.score(rgb: buffer, width: image.width, height: image.height, box: box)
                        let raw = score.perModel.map(Self.logit).reduce(0, +) / Double(max(1, score.perModel.count))
                        summary.textureLogOdds = raw
                        summary.texture = 1 / (1 + exp(-raw))
                        summary.textureBox = box
                    }
                    lap(&times.texture)
                }
            } else if let lastBox = last {
                second = faces.contains { $0.box.width * $0.box.height >= config.secondFaceAreaRatio * lastBox.width * lastBox.height }
            }
            out.append(Observation(summary: summary, face: analysis, secondFace: second))
        }
        return out
    }

    /// The box the texture crops are taken around: with `detector`, the models' own detector run on
    /// the tracked box grown by its size on each side (3 × its width and height, clipped), taking the
    /// detection that is the tracked face (`PADFaceDetector.matching`) — nil when it finds none, so the
    /// frame is not scored; without one, the tracked box itself.
    static func textureBox(_ rgb: UnsafeBufferPointer<UInt8>, image: Image, tracked: FaceBox, detector: PADFaceDetector?) throws -> FaceBox? {
        guard let detector else { return tracked }
        guard let region = tracked.expanded(by: 1.0).clipped(to: image.bounds), region.width >= 8, region.height >= 8 else { return nil }
        let found = try detector.detect(rgb: rgb, width: image.width, height: image.height, region: region)
        return PADFaceDetector.matching(found, tracked: tracked)?.box
    }

    /// ln(p / (1 − p)) with p kept in [1e-6, 1 − 1e-6] (a saturated softmax gives ±13.8).
    static func logit(_ p: Double) -> Double {
        let q = min(max(p, 1e-6), 1 - 1e-6)
        return log(q / (1 - q))
    }

    /// The texture cue from the scored frames: marks the good ones (pose within
    /// `textureMaximumYaw`/`Pitch`, sharpness at least `textureMinimumRelativeSharpness` of the
    /// sequence's sharpest tracked frame) and takes the median of their raw log-odds, calibrated.
    func textureEvidence(_ observations: inout [Observation]) -> TextureEvidence {
        let config = configuration
        let sharpest = observations.compactMap(\.summary.sharpness).max() ?? 0
        var scored: [(Int, Double)] = []
        var good: [(Int, Double)] = []
        for k in observations.indices {
            guard let raw = observations[k].summary.textureLogOdds else { continue }
            let s = observations[k].summary
            scored.append((s.index, s.texture ?? 0))
            let pose = s.pose ?? HeadPose(yaw: 90, pitch: 90, roll: 90)
            let ok = abs(pose.yaw) <= config.textureMaximumYaw && abs(pose.pitch) <= config.textureMaximumPitch
                && (s.sharpness ?? 0) >= config.textureMinimumRelativeSharpness * sharpest
            observations[k].summary.textureGood = ok
            if ok { good.append((s.index, raw)) }
        }
        let median = good.isEmpty ? nil : LivenessCues.median(good.map(\.1))
        return TextureEvidence(models: TexturePADModel.allCases.map(\.rawValue), frames: scored.map(\.0), scores: scored.map(\.1),
                               goodFrames: good.map(\.0), score: median.map { 1 / (1 + exp(-$0)) },
                               logOdds: median.map(config.textureCalibration.logOdds))
    }

    /// `picks` frame indices of `0..<count` spread evenly (all of them when `picks ≥ count`).
    static func spread(count: Int, picks: Int) -> Set<Int> {
        guard picks > 0, count > 0 else { return [] }
        guard picks < count else { return Set(0..<count) }
        let step = Double(count - 1) / Double(max(1, picks - 1))
        return Set((0..<picks).map { min(count - 1, Int((Double($0) * step).rounded())) })
    }

    /// Mean of every 4th grey level in both directions, 0–255.
    static func meanLevel(_ gray: [UInt8]) -> Double {
        guard !gray.isEmpty else { return 0 }
        var sum = 0, n = 0
        var i = 0
        while i < gray.count { sum += Int(gray[i]); n += 1; i += 7 }
        return Double(sum) / Double(max(1, n))
    }

    /// `cv_region_statistics` of the face box (resampled to 128×128): mean, RMS contrast and the
    /// variance of the Laplacian, as `FaceQuality` measures them.
    static func regionStatistics(_ gray: [UInt8], width: Int, height: Int, box: FaceBox) -> (mean: Double, stddev: Double, laplacianVariance: Double)? {
        guard let rect = box.clipped(to: PixelRect(x: 0, y: 0, width: width, height: height)), rect.width >= 8, rect.height >= 8 else { return nil }
        var mean = 0.0, sd = 0.0, lap = 0.0
        let status = gray.withUnsafeBufferPointer {
            cv_region_statistics($0.baseAddress, Int32(width), Int32(height), Int32(rect.x), Int32(rect.y),
                                 Int32(rect.width), Int32(rect.height), 128, &mean, &sd, &lap)
        }
        return status == CV_OK ? (mean, sd, lap) : nil
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

    /// The sharpest, most frontal, eyes-open tracked frame.
    func bestFrame(_ observations: [Observation]) -> Observation? {
        let tracked = observations.filter { $0.face != nil }
        guard !tracked.isEmpty else { return nil }
        let maxSharp = tracked.compactMap(\.summary.sharpness).max() ?? 0
        let openLevel = LivenessCues.median(tracked.compactMap(\.summary.eyeAspectRatio))
        return tracked.max { frameQuality($0, maxSharp: maxSharp, openLevel: openLevel) < frameQuality($1, maxSharp: maxSharp, openLevel: openLevel) }
    }

    /// The best frame's quality measure: `√(sharpness / max sharpness) × frontal × eyes`.
    func frameQuality(_ o: Observation, maxSharp: Double, openLevel: Double) -> Double {
        let sharp = maxSharp > 0 ? ((o.summary.sharpness ?? 0) / maxSharp).squareRoot() : 1
        let pose = o.summary.pose ?? HeadPose(yaw: 45, pitch: 45, roll: 45)
        let frontal = max(0.05, 1 - (abs(pose.yaw) + 0.5 * abs(pose.pitch) + 0.25 * abs(pose.roll)) / 45)
        let ear = o.summary.eyeAspectRatio ?? 0
        let eyes = openLevel > 0 && ear >= 0.85 * openLevel ? 1.0 : 0.2
        return sharp * frontal * eyes
    }

    /// The capture's quality evidence: the best frame's `FaceQuality` and its issues against
    /// `qualityRequirements` (eyes-closed is not checked: the best frame is an eyes-open one when
    /// there is one); without a tracked face, the frames' mean brightness against the same limits.
    func captureQuality(_ observations: [Observation], best: Observation?) -> CaptureQuality {
        let req = configuration.qualityRequirements
        let frameLevel = LivenessCues.median(observations.compactMap(\.summary.frameBrightness))
        guard let best, let face = best.face else {
            var issues: [FaceQualityIssue] = []
            if frameLevel < req.brightness.lowerBound { issues.append(.tooDark) }
            if frameLevel > req.brightness.upperBound { issues.append(.tooBright) }
            return CaptureQuality(bestFrame: nil, frameBrightness: frameLevel, issues: issues)
        }
        let s = best.summary
        let q = FaceQuality(faceWidth: face.box.width, faceHeight: face.box.height, interEyeDistance: face.interEyeDistance,
                            sharpness: s.sharpness ?? 0, brightness: s.brightness ?? 0, contrast: s.contrast ?? 0,
                            yaw: s.pose?.yaw, pitch: s.pose?.pitch, roll: s.pose?.roll,
                            rightEyeAspectRatio: nil, leftEyeAspectRatio: nil, faceCount: 1)
        return CaptureQuality(bestFrame: q, frameBrightness: frameLevel, issues: q.issues(req))
    }

    /// The prefix of `challenge.actions` seen in order, each after the previous one, all within
    /// `challenge.duration` seconds of sequence time, read from a sequence's per-frame measurements
    /// (`LivenessReport.frames`: head pose, mouth aspect ratio of the tracked face) and its blinks —
    /// so a benchmark can ask which of the possible challenges a recorded sequence would answer.
    public func completedActions(_ challenge: ActiveChallenge, frames: [FrameSummary], blinks: [BlinkEvent]) -> [ChallengeAction] {
        let config = configuration
        let yaws = LivenessCues.runningMedian(frames.map { $0.tracked ? $0.pose?.yaw : nil })
        let mars = frames.map { $0.tracked ? $0.mouthAspectRatio : nil }
        // The subject faces the camera when the capture starts: the baseline is the first 0.5 s.
        let startYaws = yaws.compactMap { $0 }.prefix(max(3, Int((0.5 * config.frameRate).rounded())))
        let baseYaw = LivenessCues.median(Array(startYaws))
        let hold = max(2, Int((config.turnHoldSeconds * config.frameRate).rounded()))
        let lastFrame = Int((challenge.duration * config.frameRate).rounded(.down))
        var cursor = -1
        var done: [ChallengeAction] = []
        for action in challenge.actions {
            var hit: Int?
            switch action {
            case .turnLeft:
                hit = LivenessCues.turn(yaw: yaws, after: cursor, baseline: baseYaw, direction: 1, degrees: config.turnDegrees, holdFrames: hold)
            case .turnRight:
                hit = LivenessCues.turn(yaw: yaws, after: cursor, baseline: baseYaw, direction: -1, degrees: config.turnDegrees, holdFrames: hold)
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
