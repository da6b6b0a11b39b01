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
    /// The tracked face's identity changes across the sequence (the recogniser's cosine distance
    /// above `identityDistanceThreshold`), e.g. a swapped photo. Blocking (score 0).
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
    /// The texture PAD models (MiniFASNet) score the face as a print or a screen: the aggregated
    /// bona fide probability is below `LivenessFusion.TextureLevels.line`.
    case textureAttack = "TEXTURE_ATTACK"
    /// The score is below the configured threshold although no single cue failed outright.
    case lowScore = "LOW_SCORE"

    /// Blocking reasons force the score to 0: no evidence can outweigh them.
    public var isBlocking: Bool {
        switch self {
        case .insufficientFrames, .noFace, .faceLost, .multipleFaces, .identityChanged, .challengeExpired: return true
        case .noBlink, .rigidMotion, .challengeNotMet, .textureAttack, .lowScore: return false
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
    /// the sequence's start, held `turnHoldSeconds`, with no half turn the other way first; the
    /// nose moves towards the image's right in an unmirrored frame).
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
    /// consistency (evenly spread; the template frames are compared too). Default 3.
    public var identitySamples: Int
    /// Largest cosine distance between the face recogniser's descriptors of two frames of one
    /// sequence (`FaceRecognizer`). Default 0.72: one LFW image against another of a different
    /// person is that close in 0.5 % of cases (the fit people of `bench/lfw-split.txt`), as dlib's
    /// former line 0.6 was (0.56 %); looser than the match lines, as pose and expression vary
    /// within a sequence.
    public var identityDistanceThreshold: Double
    /// Head turn for `turnLeft`/`turnRight`, degrees of (3-frame median) yaw from the first 0.5 s.
    /// Default 25: an instructed turn reaches 30° and more, while talking-head footage sways
    /// ±20° (the `katie_live` fixture: −8…+20° smoothed), which must not answer a challenge.
    public var turnDegrees: Double
    /// How long the turn must be held beyond `turnDegrees`, seconds. Default 0.3.
    public var turnHoldSeconds = 0.3
    /// Mouth aspect ratio for `openMouth`. Default 0.35.
    public var openMouthRatio: Double

    // MARK: Texture PAD and fusion
    /// Score frames with the texture PAD models (MiniFASNet, `TexturePAD`). Default true; false
    /// gives the previous, motion-only method (`LivenessFusion.Rule.motion`).
    public var texture = true
    /// Frames scored by the texture models, spread evenly over the sequence (the models' own
    /// detector and both models, about 14 ms of one core per frame). Default 10 (docs/LIVENESS.md:
    /// on the development split 10 and 15 frames separated bona fide windows from screens alike).
    public var textureFrames = 10
    /// Crop the texture models' input around the box of their own detector (`PADFaceDetector`,
    /// run on the region around the tracked face), as the models' authors do. Default true. false:
    /// around dlib's tracked box (the previous method, whose crops are shorter and tighter than the
    /// ones the models were trained on; docs/LIVENESS.md measures the difference).
    public var textureDetector = true
    /// A scored frame counts for the texture cue when its head pose is within these degrees of
    /// frontal (|yaw|, |pitch|) — the models were trained on near-frontal faces. Default 30 / 25.
    public var textureMaximumYaw = 30.0
    public var textureMaximumPitch = 25.0
    /// … and its face box is at least this sharp relative to the sequence's sharpest frame
    /// (variance of the Laplacian; motion blur). Default 0.3.
    public var textureMinimumRelativeSharpness = 0.3
    /// The map from the texture models' raw log-odds to calibrated log-odds (fitted on the
    /// development split, `TextureCalibration.development`).
    public var textureCalibration = TextureCalibration.development
    /// The fusion rule (`LivenessFusion.Rule`). Default `.textureMotion`.
    public var fusionRule = LivenessFusion.Rule.textureMotion
    /// The texture cue's levels (chosen on the development split, docs/LIVENESS.md).
    public var textureLevels = LivenessFusion.TextureLevels()

    // MARK: Tracking cost
    /// After the first detection the face is searched around its last box grown by this fraction
    /// of its size on each side. Default 0.5. 0 searches every frame whole (the previous method).
    public var trackingMargin = 0.5
    /// Every n-th frame (from the first) is searched whole, for a second face. Default 5.
    public var fullDetectionInterval = 5

    // MARK: Face template
    /// At most this many frames' descriptors are fused into the capture's template
    /// (`LivenessReport.template`): the best frame and the next best eyes-open ones of at least
    /// `templateQualityFloor` of its quality. Default 8 (about 17 ms of one core each; docs/LIVENESS.md).
    public var templateFrames = 8
    /// Least distance, in frames, between two template frames. Default 3 (0.3 s at 10 fps).
    public var templateFrameSpacing = 3
    /// A frame is fused only when its quality (`√(sharpness/max) × frontal × eyes`) is at least
    /// this fraction of the best frame's. Default 0.5.
    public var templateQualityFloor = 0.5
    /// Frames (the template's best ones) whose dlib descriptors make the probe a version-1/2 stored
    /// template is compared with (`SelfieAnalyzer.legacyProbe`). Default 5 (the version-2 template's count).
    public var legacyProbeFrames = 5
    /// Capture-quality limits the best frame is measured against (`CaptureQuality.issues`). Default
    /// `FaceQualityRequirements()` with `minSharpness` 13: video frames are softer than stills, and
    /// the development split's bona fide best frames reach 26 at the least (docs/LIVENESS.md).
    public var qualityRequirements: FaceQualityRequirements = {
        var r = FaceQualityRequirements()
        r.minSharpness = 13
        return r
    }()

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
                identitySamples: Int = 3, identityDistanceThreshold: Double = 0.72,
                turnDegrees: Double = 25, openMouthRatio: Double = 0.35,
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
        try check(turnHoldSeconds >= 0 && turnHoldSeconds <= 5, "turnHoldSeconds must be 0…5")
        try check(openMouthRatio > 0 && openMouthRatio.isFinite, "openMouthRatio must be positive")
        try check(liveResidualLevel > rigidResidualLevel && rigidResidualLevel > 0 && liveResidualLevel.isFinite,
                  "need 0 < rigidResidualLevel < liveResidualLevel")
        try check(residualSmoothingFrames >= 1 && residualSmoothingFrames % 2 == 1 && residualSmoothingFrames <= 9,
                  "residualSmoothingFrames must be odd, 1…9")
        try check(mouthActionLevel > 0 && mouthActionLevel.isFinite, "mouthActionLevel must be positive")
        try check(eyeActionLevel > 0 && eyeActionLevel.isFinite, "eyeActionLevel must be positive")
        try check(identitySamples >= 0, "identitySamples must not be negative")
        try check((1...100).contains(bestFrameJPEGQuality), "bestFrameJPEGQuality must be 1…100")
        try check(textureFrames >= 1 && textureFrames <= maximumFrames, "textureFrames must be 1…maximumFrames")
        try check(textureLevels.line.isFinite && textureLevels.scale > 0 && textureLevels.scale.isFinite,
                  "textureLevels need a finite line and a positive scale")
        try check(textureMaximumYaw > 0 && textureMaximumYaw <= 90 && textureMaximumPitch > 0 && textureMaximumPitch <= 90,
                  "textureMaximumYaw and textureMaximumPitch must be in (0, 90]")
        try check((0...1).contains(textureMinimumRelativeSharpness), "textureMinimumRelativeSharpness must be 0…1")
        try check(textureCalibration.slope > 0 && textureCalibration.slope.isFinite && textureCalibration.intercept.isFinite,
                  "textureCalibration needs a positive slope and a finite intercept")
        try check(trackingMargin >= 0 && trackingMargin <= 3, "trackingMargin must be 0…3")
        try check(fullDetectionInterval >= 1, "fullDetectionInterval must be at least 1")
        try check(templateFrames >= 1 && templateFrames <= 30, "templateFrames must be 1…30")
        try check(templateFrameSpacing >= 1, "templateFrameSpacing must be at least 1")
        try check(templateQualityFloor >= 0 && templateQualityFloor <= 1, "templateQualityFloor must be 0…1")
        try check(legacyProbeFrames >= 1 && legacyProbeFrames <= 30, "legacyProbeFrames must be 1…30")
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
    /// A template whose descriptor does not fit its model (length, finite values).
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
    /// Variance of the 4-neighbour Laplacian of the grey face box resampled to 128×128 (grey
    /// levels²; higher is sharper), as `FaceQuality.sharpness`.
    public var sharpness: Double?
    /// Mean grey level of the face box, 0–255 (`FaceQuality.brightness`).
    public var brightness: Double?
    /// RMS contrast of the face box, grey levels (`FaceQuality.contrast`).
    public var contrast: Double?
    /// Distance between the eye centres, pixels.
    public var interEyeDistance: Double?
    /// Mean grey level of the whole frame, 0–255 (also without a face: a dark capture shows here).
    public var frameBrightness: Double?
    /// Texture PAD bona fide probability of the tracked face (0…1), for the scored frames: the
    /// logistic function of `textureLogOdds`.
    public var texture: Double?
    /// The texture models' raw log-odds for the scored frames: the mean of the two models' logits
    /// of their bona fide probability (uncalibrated).
    public var textureLogOdds: Double?
    /// The box the texture crops were taken around (the models' own detector's, or the tracked
    /// box when `textureDetector` is off), frame pixels.
    public var textureBox: FaceBox?
    /// Whether the scored frame was good enough to count for the texture cue (pose, sharpness).
    public var textureGood: Bool?
    /// Whether the whole frame was searched (else only the region around the last face box).
    public var searchedWholeFrame: Bool = true
    /// Non-rigid residual of this frame against the reference frame, in inter-eye distances.
    public var residual: Double?
    /// How far the best homography from the reference frame carries the reference landmarks (RMS),
    /// in inter-eye distances: the face's motion as a plane (`LivenessCues.planarFit`).
    public var planeDisplacement: Double?
    /// The screen's light on the tracked face and on the background (presence by illumination,
    /// `IlluminationCheck`); nil without a tracked face or a visible background.
    public var illumination: IlluminationSample? = nil
    /// The tracked face's 68 landmarks (dlib / iBUG 300-W order), frame pixels. Kept in memory for
    /// calibration (`idvd bench liveness --dump`); not part of the encoded report.
    public var landmarks68: [FacePoint]? = nil

    enum CodingKeys: String, CodingKey {
        case index, width, height, tracked, box, pose, sharpness, residual, brightness, contrast, texture, illumination
        case textureLogOdds = "texture_log_odds"
        case textureBox = "texture_box"
        case textureGood = "texture_good"
        case planeDisplacement = "plane_displacement"
        case faceCount = "face_count"
        case interEyeDistance = "inter_eye_distance"
        case frameBrightness = "frame_brightness"
        case searchedWholeFrame = "searched_whole_frame"
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
    /// The plane motion statistic: 80th percentile over the frames of how far the best homography
    /// from the reference frame carries the reference landmarks (RMS, inter-eye distances;
    /// `LivenessCues.planarFit`). With little `nonRigidResidual`, a large value is a flat picture
    /// being moved (a held print or screen); a small one is a face held still. nil when not measured.
    public var planeMotion: Double?
    /// Expression dynamics: `LivenessCues.actionSpread` of the inner-lip mouth aspect ratio.
    public var mouthActionSpread: Double?
    /// Expression dynamics: `LivenessCues.actionSpread` of the eye aspect ratio ÷ its median.
    public var eyeActionSpread: Double?
    /// Largest cosine distance between an embedded frame's descriptor and the best frame's.
    public var identityDistance: Double?
    /// The evaluated challenge's nonce.
    public var challengeNonce: String?
    /// Challenged actions seen in order (a prefix of the challenge's actions).
    public var completedActions: [ChallengeAction]
    /// Frame chosen as the selfie (`autocapture_result`): sharpest, most frontal, eyes open.
    public var bestFrameIndex: Int?
    /// That frame as JPEG (the face not cropped).
    public var bestFrameJPEG: Data?
    /// The 256-d descriptor of the face in the best frame (`FaceRecognizer`, unit length).
    public var bestFrameEmbedding: [Float]?
    /// Per-frame measurements.
    public var frames: [FrameSummary]

    // MARK: Evidence of the fused method
    /// Frame rate the timings were read at, frames per second.
    public var frameRate: Double = 10
    /// The fusion rule `score` comes from.
    public var fusionRule: LivenessFusion.Rule = .motion
    /// The cue strengths the rule combined (each 0…1, decision line 0.5).
    public var fusionInputs: LivenessFusion.Inputs? = nil
    /// The previous method's score (`LivenessFusion.Rule.motion`) on the same evidence.
    public var motionScore: Int = 0
    /// Texture PAD scores; nil when texture scoring is off.
    public var texture: TextureEvidence? = nil
    /// The capture's face template (version 3): the recogniser's descriptors of
    /// `templateFrameIndices` fused with `templateWeights` (quality-weighted mean); nil without a face.
    public var template: FaceTemplate? = nil
    public var templateFrameIndices: [Int] = []
    public var templateWeights: [Double] = []
    /// Capture quality of the best frame (or of the frames, without a face).
    public var quality: CaptureQuality? = nil
    /// Thread CPU seconds per stage of this analysis.
    public var stageTimes: SelfieStageTimes = .init()
}

/// What the texture PAD models said about a sequence.
public struct TextureEvidence: Sendable, Codable, Hashable {
    /// `TexturePADModel` raw values of the models averaged per frame.
    public var models: [String]
    /// Frames scored (0-based indices) and their bona fide probabilities (0…1), in order.
    public var frames: [Int]
    public var scores: [Double]
    /// The scored frames that count for the cue (near-frontal, sharp enough; `LivenessConfiguration`).
    public var goodFrames: [Int] = []
    /// The median over the good frames of the per-frame bona fide probability (the logistic function
    /// of the median raw log-odds); nil when no frame counts. Audited as `texture_score`.
    public var score: Double?
    /// The texture cue: the median over the good frames of the per-frame raw log-odds (mean of the two
    /// models' logits), mapped by `TextureCalibration` — calibrated log-odds of bona fide against a
    /// print or a screen (0 = even odds); nil when no frame counts.
    public var logOdds: Double?
}

/// The map from the texture models' raw log-odds (the median over a sequence's good frames of the mean
/// of MiniFASNetV2's and MiniFASNetV1SE's logits) to calibrated log-odds of "bona fide" against "print
/// or screen": `slope × raw + intercept` (Platt scaling).
public struct TextureCalibration: Sendable, Codable, Hashable {
    public var slope: Double
    public var intercept: Double
    public init(slope: Double, intercept: Double) {
        self.slope = slope
        self.intercept = intercept
    }

    /// Fitted on the development split by `bench/pad_tune.py` (10 scored frames; weighted logistic regression of 37
    /// bona fide windows of 18 people against 114 screen and replay windows — real footage, simulated
    /// phone, laptop and view-filling screens —, each class weighing half; digital held prints left
    /// out, as the texture does not see them). docs/LIVENESS.md.
    public static let development = TextureCalibration(slope: 0.646, intercept: -1.510)

    /// Calibrated log-odds of a raw value.
    public func logOdds(_ raw: Double) -> Double { slope * raw + intercept }
}

/// The capture's quality evidence (ISO/IEC 29794-5 style measures of the best frame).
public struct CaptureQuality: Sendable, Codable, Hashable {
    /// The best frame's measures; nil without a tracked face.
    public var bestFrame: FaceQuality?
    /// Median over the frames of their mean grey level, 0–255.
    public var frameBrightness: Double
    /// The best frame's problems against `LivenessConfiguration.qualityRequirements` (without a
    /// face: `tooDark` / `tooBright` from the frames' brightness). A capture with issues is one
    /// to take again, whatever the match would say.
    public var issues: [FaceQualityIssue]
}

/// Thread CPU seconds spent per stage of `SelfieAnalyzer.analyze` (one core's cost).
public struct SelfieStageTimes: Sendable, Codable, Hashable {
    /// JPEG/PNG decoding (every frame once, the embedded frames again).
    public var decode = 0.0
    /// Face detection (whole frames and regions of interest).
    public var detect = 0.0
    /// 68-point landmarks of the tracked face.
    public var landmarks = 0.0
    /// Face-box statistics (brightness, contrast, sharpness) and frame brightness.
    public var quality = 0.0
    /// Texture PAD (both models on the scored frames).
    public var texture = 0.0
    /// The screen's light on the face and the background (`IlluminationSample.measure`).
    public var illumination = 0.0
    /// Motion, blink, expression cues.
    public var cues = 0.0
    /// Alignment and the recogniser's 256-d descriptors of the template and identity frames.
    public var embed = 0.0
    /// The best frame's JPEG.
    public var encode = 0.0
    /// Everything, including what is not listed.
    public var total = 0.0
    public init() {}
}
