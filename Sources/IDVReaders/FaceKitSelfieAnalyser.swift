import FaceKit
import Imaging
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// The production ``SelfieAnalysing``: FaceKit's `SelfieAnalyzer` (dlib HOG detection, 68-point
/// landmarks, MiniFASNet texture PAD fused with blink/expression and non-rigid-motion cues by rule
/// `texture-motion-v3`: the policy judges its typed cues, `judgePAD`), capture quality, a version-3
/// template fused from the good frames' 256-d `face-reidentification-retail-0095` descriptors; a
/// version-1/2 stored template is still compared in dlib's units), its report mapped to the engine's
/// ``SelfieEvidence``; the verdict is the server's (``WorkflowPolicy``). docs/LIVENESS.md.
///
/// Errors mapped to the flows' retryable codes: undecodable frame or reference → 1008
/// `invalidImage`, frame over the pixel limit → 1009 `imageTooLarge`, no face in the frames (and
/// no capture-quality issue to explain it) or in the document portrait → 1032 `noFaceFound`,
/// no/too many frames → 1008 with the reason. A stored template that is not version 1, 2 or 3
/// → 1030 `internalError`.
public struct FaceKitSelfieAnalyser: SelfieAnalysing {
    public let analyzer: SelfieAnalyzer
    /// The illumination design the sequences are drawn from and the check's levels (FaceKit
    /// `IlluminationConfiguration`: 8 steps of 7 colours, p ≤ 0.001 among 1999 random sequences).
    public let illumination: IlluminationConfiguration

    public init(analyzer: SelfieAnalyzer, illumination: IlluminationConfiguration = .init()) {
        self.analyzer = analyzer
        self.illumination = illumination
    }

    /// Over the shared `FaceEngine` (models from `IDV_MODELS_DIR` or ~/.cache/openidv/models) and
    /// the shared `FaceRecognizer` (loaded and SHA-256-checked now, so an altered model file is
    /// refused at start), with the liveness threshold and frame limit of `policy`.
    /// - Throws: `FaceError` when the recogniser's model is missing or altered.
    public static func production(policy: WorkflowPolicy) throws -> FaceKitSelfieAnalyser {
        var config = LivenessConfiguration()
        config.threshold = policy.livenessThreshold
        config.maximumFrames = max(config.maximumFrames, policy.maxFrames)
        return FaceKitSelfieAnalyser(analyzer: SelfieAnalyzer(engine: try FaceEngine.shared(), configuration: config,
                                                              recognizer: try FaceRecognizer.shared()))
    }

    static func imageError(_ e: ImageError, _ what: String) -> IDVError {
        if case .tooManyPixels = e { return IDVError(.imageTooLarge, "\(what) has too many pixels") }
        return IDVError(.invalidImage, "\(what) is not a decodable JPEG/PNG image")
    }

    /// FaceKit's `ActiveChallenge` for a server-issued challenge (unknown action names are dropped;
    /// an empty action list is refused by FaceKit).
    static func activeChallenge(_ c: LivenessChallenge) -> ActiveChallenge {
        ActiveChallenge(nonce: c.nonce, actions: c.actions.compactMap(ChallengeAction.init(rawValue:)), duration: c.durationSeconds,
                        deadline: Date(timeIntervalSince1970: TimeInterval(c.expiresAt)))
    }

    /// A fresh challenge from FaceKit's `ActiveChallenge.random` (system CSPRNG): one head turn and
    /// one of blink / open mouth in random order, a 128-bit nonce; due `deadlineSeconds` after `now`
    /// (Unix seconds).
    public func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
        let c = ActiveChallenge.random(duration: Double(durationSeconds), validity: TimeInterval(deadlineSeconds),
                                       now: Date(timeIntervalSince1970: TimeInterval(now)))
        return LivenessChallenge(nonce: c.nonce, actions: c.actions.map(\.rawValue), durationSeconds: c.duration,
                                 deadlineSeconds: deadlineSeconds, expiresAt: now + deadlineSeconds)
    }

    /// A fresh sequence of the configured design, drawn with the system's CSPRNG (getrandom(2)).
    public func issueIllumination() -> [IlluminationStepPayload]? {
        illumination.design.random().steps.map { IlluminationStepPayload(rgb: [Int($0.red), Int($0.green), Int($0.blue)], ms: $0.milliseconds) }
    }

    /// FaceKit's sequence for the issued wire steps (nil when a step is out of range: never for a
    /// sequence this verifier issued, which the sealed challenge returns unchanged).
    static func sequence(_ steps: [IlluminationStepPayload]) -> IlluminationSequence? {
        guard !steps.isEmpty, steps.allSatisfy({ (try? $0.validate()) != nil }) else { return nil }
        return IlluminationSequence(steps: steps.map { IlluminationStep(red: UInt8($0.rgb[0]), green: UInt8($0.rgb[1]), blue: UInt8($0.rgb[2]),
                                                                         milliseconds: $0.ms) })
    }

    /// The presence evidence of an analysed capture: FaceKit's `IlluminationCheck` of the frames'
    /// illumination samples at the client's frame times against the issued sequence.
    func presence(_ report: LivenessReport, _ capture: IlluminationCapture) -> PresenceEvidence {
        guard let sequence = Self.sequence(capture.steps) else {
            return .notFollowed(IlluminationMeasurement(score: nil, pValue: nil, stepsMeasured: 0, steps: capture.steps.count, failure: "sequence_invalid"))
        }
        let r = IlluminationCheck.evaluate(samples: report.frames.map(\.illumination), frameTimesMs: capture.frameTimesMs, sequence: sequence,
                                           configuration: illumination)
        let m = IlluminationMeasurement(score: r.score, pValue: r.pValue, stepsMeasured: r.stepsMeasured, steps: r.steps, failure: r.failure?.rawValue)
        return r.followed ? .followed(m) : .notFollowed(m)
    }

    /// The analyser for a capture played at `framesPerSecond` (nil: the configured rate, FaceKit's 10).
    func analyzer(framesPerSecond: Double?) -> SelfieAnalyzer {
        guard let fps = framesPerSecond, fps != analyzer.configuration.frameRate else { return analyzer }
        var config = analyzer.configuration
        config.frameRate = fps
        return SelfieAnalyzer(engine: analyzer.engine, configuration: config, texturePAD: analyzer.texturePAD, recognizer: analyzer.recognizer)
    }

    public func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                        challenge: LivenessChallenge?) throws -> SelfieEvidence {
        try analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge, illumination: nil)
    }

    public func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                        challenge: LivenessChallenge?, illumination capture: IlluminationCapture?) throws -> SelfieEvidence {
        let analyzer = analyzer(framesPerSecond: framesPerSecond)
        let active = challenge.map(Self.activeChallenge)
        let report: LivenessReport
        var comparison: SelfieComparison?
        do {
            switch reference {
            case .none:
                report = try analyzer.analyze(frames: frames, challenge: active)
            case let .portrait(p):
                comparison = try analyzer.verify(frames: frames, against: .portrait(p), challenge: active)
                report = comparison!.liveness
            case let .template(bytes):
                let stored: FaceTemplate
                do { stored = try FaceTemplate(decoding: [UInt8](bytes)) } catch {
                    throw IDVError(.internalError, "The stored template is not a FaceKit template (version 1, 2 or 3)")
                }
                comparison = try analyzer.verify(frames: frames, against: .template(stored), challenge: active)
                report = comparison!.liveness
            }
        } catch let e as LivenessError {
            switch e {
            case let .invalidFrame(index, ie): throw Self.imageError(ie, "frame \(index)")
            case let .invalidReference(ie): throw Self.imageError(ie, "the document portrait")
            case .referenceHasNoFace: throw IDVError(.noFaceFound, "The document portrait holds no face")
            case .noFrames, .tooManyFrames: throw IDVError(.invalidImage, e.description)
            case .invalidTemplate: throw IDVError(.internalError, "The stored template's descriptor does not fit its model")
            case .challengeRequired, .invalidChallenge, .invalidConfiguration:
                throw IDVError(.internalError, "liveness configuration")
            }
        }
        let issues = Self.captureIssues(report.quality)
        // No face at all: a capture too dark/bright to find one in is evidence for a recapture;
        // otherwise there is nothing to judge.
        if report.bestFrameEmbedding == nil, issues.isEmpty {
            throw IDVError(.noFaceFound, "No face was found in the selfie frames")
        }
        var e = Self.evidence(report, comparison: comparison, framesPerSecond: analyzer.configuration.frameRate)
        if let capture { e.presence = presence(report, capture) }
        return e
    }

    /// The engine's evidence from FaceKit's report (and comparison, when there was a reference):
    /// the fused liveness score with its rule, texture score and the motion-only score beside it;
    /// the capture's version-3 template (the recogniser's descriptors of its good frames fused) and
    /// descriptor, whatever the reference was; the comparison's distance, kind, model and FaceKit's
    /// calibrated distances for that kind and model (`FaceMatchCalibration`); the capture-quality
    /// issues.
    public static func evidence(_ report: LivenessReport, comparison: SelfieComparison?, framesPerSecond: Double) -> SelfieEvidence {
        let template = report.template ?? report.bestFrameEmbedding.map { FaceTemplate(descriptor: $0, model: .current) }
        var match: FaceMatchEvidence?
        if let c = comparison, let d = c.distance, let model = c.model {
            match = matchEvidence(distance: d, score: c.faceMatchScore, kind: c.kind, model: model)
        }
        let pad = padEvidence(report)
        return SelfieEvidence(livenessScore: report.score, livenessCues: report.reasons.map { LivenessCue($0.rawValue) }, match: match,
                              frameCount: report.frameCount, trackedFrameCount: report.trackedFrameCount,
                              framesPerSecond: framesPerSecond, bestFrameIndex: report.bestFrameIndex,
                              bestFrameJPEG: report.bestFrameJPEG, embedding: template?.descriptor ?? [],
                              model: (template?.model ?? .current).name, challengeNonce: report.challengeNonce,
                              captureIssues: captureIssues(report.quality), pad: pad, template: template.map { $0.encoded() } ?? [],
                              templateFrames: template?.sourceCount ?? 0)
    }

    /// A comparison as the engine's evidence: the distance and score with FaceKit's calibrated
    /// distances for `kind` (nil: uncalibrated) and `model`, one per operating point.
    public static func matchEvidence(distance: Double, score: Double, kind: FaceComparisonKind?, model: FaceDescriptorModel) -> FaceMatchEvidence {
        let calibration = kind.map { k in
            FaceMatchOperatingPoint.allCases.compactMap { point -> CalibratedDistance? in
                guard let p = MatchOperatingPoint(rawValue: point.rawValue) else { return nil }
                let t = FaceMatchCalibration.threshold(point, for: k, model: model)
                return CalibratedDistance(operatingPoint: p, maxDistance: t.distance, measuredFMR: t.measuredFMR, measuredFNMR: t.measuredFNMR)
            }
        } ?? []
        return FaceMatchEvidence(distance: distance, score: score, kind: kind.flatMap { FaceMatchKind(rawValue: $0.rawValue) },
                                 calibration: calibration, model: model.name, metric: model.metric == .cosine ? .cosine : .euclidean)
    }

    /// The typed PAD evidence of a report: the rule, the raw texture score and the motion-only score
    /// (audited), the calibrated texture cue with its good and scored frames, the non-rigid motion
    /// strength and the plane motion (nil when fewer than two frames were tracked), and the facial action (passive) or
    /// the challenged actions (active) — the cues the server's policy judges (`judgePAD`).
    public static func padEvidence(_ report: LivenessReport) -> PADEvidence {
        let inputs = report.fusionInputs
        let texture = report.texture.flatMap { t in
            t.logOdds.map { TextureCue(logOdds: $0, goodFrames: t.goodFrames.count, scoredFrames: t.frames.count) }
        }
        return PADEvidence(rule: report.fusionRule.rawValue, textureScore: report.texture?.score, motionOnlyScore: report.motionScore,
                           texture: texture, motion: report.trackedFrameCount >= 2 ? inputs?.motion : nil,
                           facialAction: inputs?.facialAction, challenge: inputs?.challenge,
                           planeMotion: report.trackedFrameCount >= 2 ? report.planeMotion : nil)
    }

    /// FaceKit's quality issues as the engine's capture issues (eyes closed and a second face are
    /// liveness evidence, not capture quality: they are left to the PAD cues).
    static func captureIssues(_ q: CaptureQuality?) -> [CaptureIssue] {
        var out: [CaptureIssue] = []
        for i in q?.issues ?? [] {
            let c: CaptureIssue?
            switch i {
            case .tooDark: c = .tooDark
            case .tooBright: c = .tooBright
            case .blurred: c = .blurred
            case .faceTooSmall: c = .faceTooSmall
            case .lowContrast: c = .lowContrast
            case .headTurned, .headTiltedUpOrDown, .headTiltedSideways: c = .offPose
            case .multipleFaces, .eyesClosed: c = nil
            }
            if let c, !out.contains(c) { out.append(c) }
        }
        return out
    }
}
