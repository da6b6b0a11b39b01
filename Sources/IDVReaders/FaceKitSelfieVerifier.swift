import FaceKit
import Imaging
import Foundation
import IDVCore
import IDVEngine

/// The production ``SelfieVerifying``: FaceKit's `SelfieAnalyzer` (dlib HOG detection, 68-point
/// landmarks, blink and non-rigid-motion liveness, 128-d `dlib_face_recognition_resnet_model_v1`
/// descriptor of the best frame), its report mapped to the engine's ``SelfieEvidence``; the verdict
/// is the server's (``WorkflowPolicy``).
///
/// Errors mapped to the flows' retryable codes: undecodable frame or reference → 1008
/// `invalidImage`, frame over the pixel limit → 1009 `imageTooLarge`, no face in the frames or in
/// the document portrait → 1032 `noFaceFound`, no/too many frames → 1008 with the reason.
public struct FaceKitSelfieVerifier: SelfieVerifying {
    public let analyzer: SelfieAnalyzer

    public init(analyzer: SelfieAnalyzer) { self.analyzer = analyzer }

    /// Over the shared `FaceEngine` (models from `IDV_MODELS_DIR` or ~/.cache/openidv/models), with
    /// the liveness threshold and frame limit of `policy`.
    public static func production(policy: WorkflowPolicy) throws -> FaceKitSelfieVerifier {
        var config = LivenessConfiguration()
        config.threshold = policy.livenessThreshold
        config.maximumFrames = max(config.maximumFrames, policy.maxFrames)
        return FaceKitSelfieVerifier(analyzer: SelfieAnalyzer(engine: try FaceEngine.shared(), configuration: config))
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

    /// The analyser for a capture played at `framesPerSecond` (nil: the configured rate, FaceKit's 10).
    func analyzer(framesPerSecond: Double?) -> SelfieAnalyzer {
        guard let fps = framesPerSecond, fps != analyzer.configuration.frameRate else { return analyzer }
        var config = analyzer.configuration
        config.frameRate = fps
        return SelfieAnalyzer(engine: analyzer.engine, configuration: config)
    }

    public func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                        challenge: LivenessChallenge?) throws -> SelfieEvidence {
        let analyzer = analyzer(framesPerSecond: framesPerSecond)
        let active = challenge.map(Self.activeChallenge)
        let report: LivenessReport
        var match: FaceMatchEvidence?
        do {
            switch reference {
            case .none:
                report = try analyzer.analyze(frames: frames, challenge: active)
            case let .portrait(p):
                let c = try analyzer.verify(frames: frames, against: .portrait(p), challenge: active)
                report = c.liveness
                match = c.distance.map { FaceMatchEvidence(distance: $0, score: c.faceMatchScore) }
            case let .template(t):
                let c = try analyzer.verify(frames: frames, against: .template(t), challenge: active)
                report = c.liveness
                match = c.distance.map { FaceMatchEvidence(distance: $0, score: c.faceMatchScore) }
            }
        } catch let e as LivenessError {
            switch e {
            case let .invalidFrame(index, ie): throw Self.imageError(ie, "frame \(index)")
            case let .invalidReference(ie): throw Self.imageError(ie, "the document portrait")
            case .referenceHasNoFace: throw IDVError(.noFaceFound, "The document portrait holds no face")
            case .noFrames, .tooManyFrames: throw IDVError(.invalidImage, e.description)
            case .invalidTemplate: throw IDVError(.internalError, "The stored template is not a 128-d descriptor")
            case .challengeRequired, .invalidChallenge, .invalidConfiguration:
                throw IDVError(.internalError, "liveness configuration")
            }
        }
        guard let embedding = report.bestFrameEmbedding else {
            throw IDVError(.noFaceFound, "No face was found in the selfie frames")
        }
        return SelfieEvidence(livenessScore: report.score, livenessCues: report.reasons.map { LivenessCue($0.rawValue) }, match: match,
                              frameCount: report.frameCount, trackedFrameCount: report.trackedFrameCount,
                              framesPerSecond: analyzer.configuration.frameRate, bestFrameIndex: report.bestFrameIndex,
                              bestFrameJPEG: report.bestFrameJPEG, embedding: embedding,
                              model: "dlib_face_recognition_resnet_model_v1", challengeNonce: report.challengeNonce)
    }
}
