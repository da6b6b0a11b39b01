import Foundation
import Imaging

// Liveness (presentation-attack detection, ISO/IEC 30107-3 "PAD") on a selfie frame sequence:
// the vocabulary shared by `SelfieAnalyzer`, the server's workflow engine and `idvd liveness`.

/// Why a sequence was judged not live (or could not be judged). The raw values are the
/// machine-readable reason codes of `liveness_result.reasons` and of `idvd liveness analyze`.
public enum LivenessReason: String, Sendable, Codable, CaseIterable, Hashable {
    /// Fewer frames than `LivenessConfiguration.minimumFrames` (e.g. a single still): analysable,
    /// but motion evidence cannot be shown. Blocking (score 0).
    case insufficientFrames = "INSUFFICIENT_FRAMES"
    /// No frame holds a face. Blocking (score 0).
    case noFace = "NO_FACE"
    /// The tracked face is missing from too many frames, or for too long at a stretch
    /// (`maximumFaceLostDuration`, `minimumTrackedFraction`). Blocking (score 0).
    case faceLost = "FACE_LOST"
    /// A second face of comparable size appears beside the tracked one. Blocking (score 0).
    case multipleFaces = "MULTIPLE_FACES"
    /// The tracked face's identity changes across the sequence (descriptor distance above
    /// `identityDistanceThreshold`), e.g. a swapped photo. Blocking (score 0).
    case identityChanged = "IDENTITY_CHANGED"
    /// Passive mode: no facial action — neither a genuine blink (eye-aspect-ratio dip and recovery
    /// within a human blink's duration) nor expression dynamics (the mouth or eye opening changing
    /// by `mouthActionLevel` / `eyeActionLevel`). The code keeps its name for compatibility.
    case noBlink = "NO_BLINK"
    /// The landmark configuration moves like a flat picture: every frame is explained by a
    /// homography of the reference frame's landmarks to within `rigidResidualLevel`.
    case rigidMotion = "RIGID_MOTION"
    /// Active mode: the challenged actions were not all seen, in order, within the challenge's duration.
    case challengeNotMet = "CHALLENGE_NOT_MET"
    /// Active mode: the sequence arrived after the challenge's deadline. Blocking (score 0).
    case challengeExpired = "CHALLENGE_EXPIRED"
    /// The score is below the configured threshold although no single cue failed outright.
    case lowScore = "LOW_SCORE"

    /// Blocking reasons force the score to 0: no evidence can outweigh them.
    public var isBlocking: Bool {
        switch self {
        case .insufficientFrames, .noFace, .faceLost, .multipleFaces, .identityChanged, .challengeExpired: return true
        case .noBlink, .rigidMotion, .challengeNotMet, .lowScore: return false
        }
    }
}

/// Which evidence liveness rests on.
public enum LivenessMode: String, Sendable, Codable, CaseIterable {
    /// Bona fide motion the subject makes unprompted: facial action (a genuine blink, or the mouth or
    /// eye opening changing — talking, expressions) and non-rigid landmark motion.
    case passive
    /// A server-issued `ActiveChallenge`: the challenged actions in order within its duration, and
    /// non-rigid landmark motion.
    case active
}

/// One action of an `ActiveChallenge`.
public enum ChallengeAction: String, Sendable, Codable, CaseIterable, Hashable {
    /// The subject turns their head to their own left (head-pose yaw rises by `turnDegrees` over
    /// the sequence's start; the nose moves towards the image's right in an unmirrored frame).
    case turnLeft = "TURN_LEFT"
    /// The subject turns their head to their own right (yaw falls by `turnDegrees`).
    case turnRight = "TURN_RIGHT"
    /// A genuine blink (see `LivenessReason.noBlink`).
    case blink = "BLINK"
    /// The mouth opens: inner-lip mouth aspect ratio at least `openMouthRatio`.
    case openMouth = "OPEN_MOUTH"
}

/// A server-issued active liveness challenge: actions to perform in order, bound to a nonce, to be
/// completed within `duration` seconds of sequence time and delivered before `deadline`.
///
/// The nonce is echoed in `LivenessReport.challengeNonce`; the server keeps the challenge it issued
/// and checks the nonce itself (the frames cannot carry it).
public struct ActiveChallenge: Sendable, Codable, Hashable {
    /// Random identifier (32 lowercase hex digits from `random(using:)`).
    public var nonce: String
    /// Actions in the order they must be performed.
    public var actions: [ChallengeAction]
    /// Longest allowed sequence time, in seconds, from the first frame to the last action.
    public var duration: Double
    /// The latest time the frames may be analysed (wall clock).
    public var deadline: Date

    public init(nonce: String, actions: [ChallengeAction], duration: Double, deadline: Date) {
        self.nonce = nonce
        self.actions = actions
        self.duration = duration
        self.deadline = deadline
    }

    /// A fresh challenge: one head turn (left or right) and one other action (blink or open mouth),
    /// in random order, a 128-bit nonce, `duration` seconds of sequence time, due `validity`
    /// seconds from `now`.
    public static func random<G: RandomNumberGenerator>(using generator: inout G, duration: Double = 6,
                                                        validity: TimeInterval = 120, now: Date = Date()) -> ActiveChallenge {
        let nonce = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        let turn: ChallengeAction = Bool.random(using: &generator) ? .turnLeft : .turnRight
        let other: ChallengeAction = Bool.random(using: &generator) ? .blink : .openMouth
        let actions = Bool.random(using: &generator) ? [turn, other] : [other, turn]
        return ActiveChallenge(nonce: nonce, actions: actions, duration: duration, deadline: now.addingTimeInterval(validity))
    }

    /// `random(using:)` with the system's cryptographic generator.
    public static func random(duration: Double = 6, validity: TimeInterval = 120, now: Date = Date()) -> ActiveChallenge {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator, duration: duration, validity: validity, now: now)
    }
}

/// Settings of `SelfieAnalyzer`. Every default is documented with where it comes from; the
/// calibration (what was tuned on which data) is in `docs/LIVENESS.md`.
public struct LivenessConfiguration: Sendable, Codable, Hashable {
    /// Evidence required when no challenge is given. Default passive. In `.active` mode a call
    /// without a challenge is refused (`LivenessError.challengeRequired`); a challenge given in
    /// passive mode is evaluated too (both modes are always available).
    public var mode: LivenessMode
    /// `live` ⇔ `score ≥ threshold` (1–100). Default 50: the score's "every required cue passed" line.
    public var threshold: Int
    /// Frame rate of the sequence, frames per second (timing of blinks and challenges). Default 10.
    public var frameRate: Double

    // MARK: Limits
    /// Fewer frames are analysed but cannot be live (`INSUFFICIENT_FRAMES`). Default 10 (1 s at 10 fps).
    public var minimumFrames: Int
    /// More frames are refused (`LivenessError.tooManyFrames`) before any is decoded. Default 150
    /// (15 s at 10 fps, 10 s at 15 fps).
    public var maximumFrames: Int
    /// Largest frame accepted, in pixels (width × height), checked by `Image` before allocation.
    /// Default 4 000 000 (a 2 MP selfie frame has room to spare).
    public var maximumFramePixels: Int
    /// Frames are detected on at most this long side (pixels). Default 640.
    public var detectionMaxDimension: Int

    // MARK: Tracking
    /// Another face whose box area is at least this fraction of the tracked face's is a second
    /// person (`MULTIPLE_FACES`). Default 0.25 (smaller faces, e.g. on a poster far behind, are ignored).
    public var secondFaceAreaRatio: Double
    /// Longest run without the tracked face, in seconds, before `FACE_LOST`. Default 0.5.
    public var maximumFaceLostDuration: Double
    /// Least fraction of frames holding the tracked face. Default 0.8.
    public var minimumTrackedFraction: Double

    // MARK: Cues
    /// A blink's eye-aspect-ratio dip, as a fraction of the sequence's open-eye level (median EAR),
    /// must reach at least this. Default 0.2: chosen on the development split (docs/LIVENESS.md) —
    /// at 10 fps the frame rarely falls on full closure, so sampled dips are shallower than
    /// Soukupová & Čech's 0.2-EAR line on a 0.3 open eye (a 0.33 dip).
    public var blinkMinimumDepth: Double
    /// Longest closure counted as a blink, seconds. Default 0.5 (human blinks last 0.1–0.4 s).
    public var blinkMaximumDuration: Double
    /// Non-rigid residual (RMS distance, in inter-eye distances, of the 68 landmarks from the best
    /// homography of the reference frame's landmarks, after smoothing, 80th percentile over the
    /// frames) at which the motion cue sits on its decision line (strength 0.5). Default 0.03:
    /// the development split's held prints reach at most 0.026 (docs/LIVENESS.md).
    public var rigidResidualLevel: Double
    /// Residual at which the motion cue is at full strength (1.0). Default 0.06.
    public var liveResidualLevel: Double
    /// Expression dynamics, mouth: `LivenessCues.actionSpread` of the inner-lip mouth aspect ratio
    /// (opening height ÷ mouth width) at which the facial-action cue sits on its decision line.
    /// Default 0.10: about twice the largest spread of the development split's held prints (0.050);
    /// the development bona fide windows that rely on it reach ≥ 0.148 (docs/LIVENESS.md).
    public var mouthActionLevel: Double
    /// Expression dynamics, eyes: `LivenessCues.actionSpread` of the mean eye aspect ratio divided
    /// by its median (a fraction of the open-eye level) at which the facial-action cue sits on its
    /// decision line. Default 0.30: about twice the largest of the development split's held prints
    /// (0.137); development bona fide windows that rely on it reach ≥ 0.577 (slow closures, squints).
    public var eyeActionLevel: Double
    /// Frames (odd) over which landmarks are averaged before the non-rigid residual. Default 3.
    public var residualSmoothingFrames: Int
    /// Tracked frames whose descriptors are compared with the best frame's for identity
    /// consistency (evenly spread). Default 3.
    public var identitySamples: Int
    /// Largest descriptor distance between frames of one sequence. Default 0.6 (dlib's documented
    /// same-person line; looser than the match threshold, as pose and expression vary within a sequence).
    public var identityDistanceThreshold: Double
    /// Head turn for `turnLeft`/`turnRight`, degrees of yaw from the sequence's start. Default 15.
    public var turnDegrees: Double
    /// Mouth aspect ratio for `openMouth`. Default 0.35.
    public var openMouthRatio: Double

    // MARK: Best frame
    /// JPEG quality of `bestFrameJPEG`. Default 85.
    public var bestFrameJPEGQuality: Int

    public init(mode: LivenessMode = .passive, threshold: Int = 50, frameRate: Double = 10,
                minimumFrames: Int = 10, maximumFrames: Int = 150, maximumFramePixels: Int = 4_000_000,
                detectionMaxDimension: Int = 640, secondFaceAreaRatio: Double = 0.25,
                maximumFaceLostDuration: Double = 0.5, minimumTrackedFraction: Double = 0.8,
                blinkMinimumDepth: Double = 0.2, blinkMaximumDuration: Double = 0.5,
                rigidResidualLevel: Double = 0.03, liveResidualLevel: Double = 0.06, residualSmoothingFrames: Int = 3,
                mouthActionLevel: Double = 0.10, eyeActionLevel: Double = 0.30,
                identitySamples: Int = 3, identityDistanceThreshold: Double = 0.6,
                turnDegrees: Double = 15, openMouthRatio: Double = 0.35,
                bestFrameJPEGQuality: Int = 85) {
        self.mode = mode
        self.threshold = threshold
        self.frameRate = frameRate
        self.minimumFrames = minimumFrames
        self.maximumFrames = maximumFrames
        self.maximumFramePixels = maximumFramePixels
        self.detectionMaxDimension = detectionMaxDimension
        self.secondFaceAreaRatio = secondFaceAreaRatio
        self.maximumFaceLostDuration = maximumFaceLostDuration
        self.minimumTrackedFraction = minimumTrackedFraction
        self.blinkMinimumDepth = blinkMinimumDepth
        self.blinkMaximumDuration = blinkMaximumDuration
        self.rigidResidualLevel = rigidResidualLevel
        self.liveResidualLevel = liveResidualLevel
        self.residualSmoothingFrames = residualSmoothingFrames
        self.mouthActionLevel = mouthActionLevel
        self.eyeActionLevel = eyeActionLevel
        self.identitySamples = identitySamples
        self.identityDistanceThreshold = identityDistanceThreshold
        self.turnDegrees = turnDegrees
        self.openMouthRatio = openMouthRatio
        self.bestFrameJPEGQuality = bestFrameJPEGQuality
    }

    /// Checks every setting's range.
    /// - Throws: `LivenessError.invalidConfiguration` naming the first bad setting.
    public func validate() throws {
        func check(_ ok: Bool, _ what: String) throws { if !ok { throw LivenessError.invalidConfiguration(what) } }
        try check((1...100).contains(threshold), "threshold must be 1…100")
        try check(frameRate > 0 && frameRate <= 240, "frameRate must be in (0, 240]")
        try check(minimumFrames >= 1, "minimumFrames must be at least 1")
        try check(maximumFrames >= minimumFrames, "maximumFrames must be at least minimumFrames")
        try check(maximumFramePixels > 0, "maximumFramePixels must be positive")
        try check(detectionMaxDimension >= 64, "detectionMaxDimension must be at least 64")
        try check(blinkMinimumDepth > 0 && blinkMinimumDepth < 1, "blinkMinimumDepth must be in (0, 1)")
        try check(blinkMaximumDuration > 0 && blinkMaximumDuration <= 10, "blinkMaximumDuration must be in (0, 10] seconds")
        try check(maximumFaceLostDuration >= 0 && maximumFaceLostDuration <= 60, "maximumFaceLostDuration must be 0…60 seconds")
        try check((0...1).contains(minimumTrackedFraction), "minimumTrackedFraction must be 0…1")
        try check(secondFaceAreaRatio > 0 && secondFaceAreaRatio.isFinite, "secondFaceAreaRatio must be positive")
        try check(identityDistanceThreshold > 0 && identityDistanceThreshold.isFinite, "identityDistanceThreshold must be positive")
        try check(turnDegrees > 0 && turnDegrees < 90, "turnDegrees must be in (0, 90)")
        try check(openMouthRatio > 0 && openMouthRatio.isFinite, "openMouthRatio must be positive")
        try check(liveResidualLevel > rigidResidualLevel && rigidResidualLevel > 0 && liveResidualLevel.isFinite,
                  "need 0 < rigidResidualLevel < liveResidualLevel")
        try check(residualSmoothingFrames >= 1 && residualSmoothingFrames % 2 == 1 && residualSmoothingFrames <= 9,
                  "residualSmoothingFrames must be odd, 1…9")
        try check(mouthActionLevel > 0 && mouthActionLevel.isFinite, "mouthActionLevel must be positive")
        try check(eyeActionLevel > 0 && eyeActionLevel.isFinite, "eyeActionLevel must be positive")
        try check(identitySamples >= 0, "identitySamples must not be negative")
        try check((1...100).contains(bestFrameJPEGQuality), "bestFrameJPEGQuality must be 1…100")
    }
}

/// Why `SelfieAnalyzer` refused a call (nothing was judged). Each case is distinct; the description
/// is a sentence with no image data.
public enum LivenessError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Zero frames.
    case noFrames
    /// More frames than `maximumFrames`; refused before decoding.
    case tooManyFrames(count: Int, limit: Int)
    /// Frame `index` (0-based) could not be decoded.
    case invalidFrame(index: Int, ImageError)
    /// Active mode without a challenge, or a challenge without actions.
    case challengeRequired
    /// A challenge whose duration is not a positive number of seconds (at most an hour).
    case invalidChallenge(String)
    /// The reference portrait could not be decoded.
    case invalidReference(ImageError)
    /// The reference portrait holds no face.
    case referenceHasNoFace
    /// A template that is not a 128-d finite descriptor.
    case invalidTemplate(String)
    case invalidConfiguration(String)

    public var description: String {
        switch self {
        case .noFrames: return "no frames: a selfie sequence needs at least one frame"
        case let .tooManyFrames(count, limit): return "\(count) frames exceed the limit of \(limit) frames per sequence"
        case let .invalidFrame(index, error): return "frame \(index): \(error.description)"
        case .challengeRequired: return "active liveness needs a challenge with at least one action"
        case .invalidChallenge(let detail): return "invalid challenge: \(detail)"
        case .invalidReference(let error): return "reference portrait: \(error.description)"
        case .referenceHasNoFace: return "reference portrait: no face found"
        case .invalidTemplate(let detail): return "invalid template: \(detail)"
        case .invalidConfiguration(let detail): return "invalid liveness configuration: \(detail)"
        }
    }
}

/// What one frame showed (no pixels, no descriptor).
public struct FrameSummary: Sendable, Codable, Hashable {
    /// 0-based position in the sequence.
    public var index: Int
    /// Frame size in pixels.
    public var width: Int
    public var height: Int
    /// Faces the detector found.
    public var faceCount: Int
    /// Whether the tracked face was found in this frame.
    public var tracked: Bool
    /// Tracked face box, frame pixels.
    public var box: FaceBox?
    /// Head pose, degrees (see `HeadPose`).
    public var pose: HeadPose?
    /// Mean eye aspect ratio (Soukupová & Čech 2016).
    public var eyeAspectRatio: Double?
    /// Inner-lip mouth aspect ratio.
    public var mouthAspectRatio: Double?
    /// Variance of the Laplacian of the face crop scaled to 128 px wide (grey levels²; higher is sharper).
    public var sharpness: Double?
    /// Non-rigid residual of this frame against the reference frame, in inter-eye distances.
    public var residual: Double?
    /// The tracked face's 68 landmarks (dlib / iBUG 300-W order), frame pixels. Kept in memory for
    /// calibration (`idvd bench liveness --dump`); not part of the encoded report.
    public var landmarks68: [FacePoint]? = nil

    enum CodingKeys: String, CodingKey {
        case index, width, height, tracked, box, pose, sharpness, residual
        case faceCount = "face_count"
        case eyeAspectRatio = "eye_aspect_ratio"
        case mouthAspectRatio = "mouth_aspect_ratio"
    }
}

/// A blink found in the sequence.
public struct BlinkEvent: Sendable, Codable, Hashable {
    /// First and last closed frame (0-based indices).
    public var startFrame: Int
    public var endFrame: Int
    /// Closure depth: 1 − (lowest EAR / open-eye EAR).
    public var depth: Double

    enum CodingKeys: String, CodingKey {
        case depth
        case startFrame = "start_frame"
        case endFrame = "end_frame"
    }
}

/// The outcome of `SelfieAnalyzer.analyze`.
///
/// **Score (0–100).** Each required cue yields a strength in 0…1 whose decision line is 0.5
/// (passive: facial action — the stronger of a genuine blink and expression dynamics of mouth or
/// eyes — and the non-rigid motion; active: each challenged action, seen in order, and the
/// non-rigid motion).
/// - 0: a blocking reason (no/lost/several faces, too few frames, identity change, expired challenge).
/// - 1–49: at least one required cue failed; `49 × mean strength`.
/// - 50–100: every required cue passed; `50 + 50 × (mean strength − 0.5) / 0.5`, so it grows with the
///   depth of the blink (or the size of the expression change) and the non-rigid motion beyond the
///   rigid level.
/// `live` ⇔ `score ≥ threshold`.
public struct LivenessReport: Sendable, Codable, Hashable {
    public var live: Bool
    /// 0–100, see above.
    public var score: Int
    /// The configured threshold the verdict used.
    public var threshold: Int
    /// `.active` when a challenge was evaluated.
    public var mode: LivenessMode
    /// Failed or blocking checks; empty when live.
    public var reasons: [LivenessReason]
    /// Frames received.
    public var frameCount: Int
    /// Frames holding the tracked face.
    public var trackedFrameCount: Int
    /// Genuine blinks found.
    public var blinks: [BlinkEvent]
    /// The non-rigid residual statistic (80th percentile of per-frame residuals), inter-eye distances.
    public var nonRigidResidual: Double?
    /// Expression dynamics: `LivenessCues.actionSpread` of the inner-lip mouth aspect ratio.
    public var mouthActionSpread: Double?
    /// Expression dynamics: `LivenessCues.actionSpread` of the eye aspect ratio ÷ its median.
    public var eyeActionSpread: Double?
    /// Largest descriptor distance between sampled frames and the best frame.
    public var identityDistance: Double?
    /// The evaluated challenge's nonce.
    public var challengeNonce: String?
    /// Challenged actions seen in order (a prefix of the challenge's actions).
    public var completedActions: [ChallengeAction]
    /// Frame chosen as the selfie (`autocapture_result`): sharpest, most frontal, eyes open.
    public var bestFrameIndex: Int?
    /// That frame as JPEG (the face not cropped).
    public var bestFrameJPEG: Data?
    /// The 128-d descriptor of the face in the best frame (dlib ResNet v1).
    public var bestFrameEmbedding: [Float]?
    /// Per-frame measurements.
    public var frames: [FrameSummary]
}
