import Foundation

// Selfie evidence: what the face reader measured on a frame sequence, in typed form. No verdict:
// `WorkflowPolicy` (IDVEngine) decides MATCHED / NOT_MATCHED / LIVENESS_FAILED from it.

/// A liveness cue code (ISO/IEC 30107-3 PAD evidence), e.g. `NO_BLINK`, `RIGID_MOTION`,
/// `CHALLENGE_NOT_MET`: an open vocabulary (the face reader may add codes), upper-case snake case,
/// never personal data. The codes are reported on the wire as `liveness_result.reasons`.
public struct LivenessCue: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The flow's own cues (the policy adds them; the reader never does):
    /// the analyser did not evaluate the challenge the server issued.
    public static let challengeNotEvaluated = LivenessCue("CHALLENGE_NOT_EVALUATED")
    /// The frames arrived after the server-issued challenge's deadline.
    public static let challengeExpired = LivenessCue("CHALLENGE_EXPIRED")
}

/// A named decision point of 1:1 face verification (ISO/IEC 19795-1): the false match rate a
/// distance threshold was calibrated for. Raw values are configuration words.
public enum MatchOperatingPoint: String, Sendable, Codable, CaseIterable, Hashable {
    /// FMR 0.1 % (1 in 1 000): NIST SP 800-63B's ceiling for biometric verification.
    case fmr1in1000 = "fmr_0.1"
    /// FMR 0.01 % (1 in 10 000).
    case fmr1in10000 = "fmr_0.01"
}

/// What a comparison compared: each kind has its own distance distribution, so its own thresholds.
public enum FaceMatchKind: String, Sendable, Codable, CaseIterable, Hashable {
    /// One image's descriptor against one image's (e.g. a single frame against a version-1 template).
    case imageToImage = "image_to_image"
    /// A template fused from several frames against one image's descriptor (the selfie's fused
    /// template against the document portrait or a version-1 stored template).
    case fusedToImage = "fused_to_image"
    /// A fused template against a fused stored template.
    case fusedToFused = "fused_to_fused"
}

/// The analyser's calibration of its distance for one operating point and the comparison's kind:
/// the largest distance that keeps the false match rate at the target on people the threshold was
/// not fitted on, with the rates measured there (FaceKit: `FaceMatchCalibration.table`, LFW).
public struct CalibratedDistance: Sendable, Equatable, Codable {
    public var operatingPoint: MatchOperatingPoint
    /// Largest matching descriptor distance.
    public var maxDistance: Double
    /// FMR and FNMR (0…1) measured at `maxDistance` on held-out people.
    public var measuredFMR: Double
    public var measuredFNMR: Double
    public init(operatingPoint: MatchOperatingPoint, maxDistance: Double, measuredFMR: Double, measuredFNMR: Double) {
        self.operatingPoint = operatingPoint
        self.maxDistance = maxDistance
        self.measuredFMR = measuredFMR
        self.measuredFNMR = measuredFNMR
    }
}

/// How a face comparison's distance is measured (each descriptor model has its own).
public enum FaceDistanceMetric: String, Sendable, Codable, CaseIterable, Hashable {
    /// Euclidean distance of dlib's 128-d ResNet descriptors (version-1/2 templates).
    case euclidean
    /// Cosine distance `1 − cos θ` of the face recogniser's unit descriptors (version-3 templates).
    case cosine
}

/// The descriptor models the face reader names (FaceKit `FaceDescriptorModel.name`): the model a
/// template was made with and a distance was measured in.
public enum FaceDescriptorModelName {
    /// dlib's `dlib_face_recognition_resnet_model_v1` (128-d, Euclidean): version-1 and -2 templates.
    public static let dlibResNetV1 = "dlib_face_recognition_resnet_model_v1"
    /// Intel's `face-reidentification-retail-0095` (256-d, cosine): version-3 templates.
    public static let faceReidentification0095 = "face-reidentification-retail-0095"
}

/// The comparison of the capture's (fused) template with the reference.
public struct FaceMatchEvidence: Sendable, Equatable {
    /// The distance between the descriptors in `metric`, lower is more similar: Euclidean for
    /// dlib's (a version-1/2 stored template), cosine for the recogniser's (portraits, version-3).
    public var distance: Double
    /// `face_matcher_response.score`, 0–1: a fixed monotone rescaling of `distance` (FaceKit
    /// `SelfieMatching.score`), higher is more similar. Not a probability.
    public var score: Double
    /// What was compared (nil: not reported; the policy then uses its fixed distance line).
    public var kind: FaceMatchKind?
    /// The analyser's calibrated distances for `kind`, one per operating point (empty: uncalibrated).
    public var calibration: [CalibratedDistance]
    /// The descriptor model the distance is in (`FaceDescriptorModelName`).
    public var model: String
    /// How `distance` is measured (selects the policy's fixed line in `distance` mode).
    public var metric: FaceDistanceMetric
    public init(distance: Double, score: Double, kind: FaceMatchKind? = nil, calibration: [CalibratedDistance] = [],
                model: String = FaceDescriptorModelName.dlibResNetV1, metric: FaceDistanceMetric = .euclidean) {
        self.distance = distance
        self.score = score
        self.kind = kind
        self.calibration = calibration
        self.model = model
        self.metric = metric
    }

    /// The calibrated distance of `point`, if the analyser reported one.
    public func calibrated(_ point: MatchOperatingPoint) -> CalibratedDistance? { calibration.first { $0.operatingPoint == point } }
}

/// Why a capture is unfit to decide on (measured on its best frame, or on the frames when no face
/// was found): evidence for asking the user to take it again, not for a verdict.
public enum CaptureIssue: String, Sendable, Codable, CaseIterable, Hashable {
    case tooDark = "too_dark"
    case tooBright = "too_bright"
    case blurred
    case faceTooSmall = "face_too_small"
    case lowContrast = "low_contrast"
    /// Head turned, pitched or rolled beyond the analyser's pose limits.
    case offPose = "off_pose"
}

/// What a selfie analyser measured on one capture: liveness cues and score (and how it was made),
/// the match against the reference, capture-quality issues, the frames and the rate they were
/// judged at, the best frame, and the capture's (fused) descriptor and template.
public struct SelfieEvidence: Sendable, Equatable {
    /// Liveness score, integer 0–100 (ISO/IEC 30107-3 PAD: higher = more likely bona fide).
    public var livenessScore: Int
    /// Cues that speak against a bona fide presentation (empty when every cue passed).
    public var livenessCues: [LivenessCue]
    /// The comparison with the reference; nil with no reference (enrolment capture).
    public var match: FaceMatchEvidence?
    /// Frames in the capture.
    public var frameCount: Int
    /// Frames in which the face was tracked.
    public var trackedFrameCount: Int
    /// The frame rate the sequence was judged at, frames per second (the client's `fps`, or the
    /// analyser's default when it sent none).
    public var framesPerSecond: Double
    /// Index of the best frame (sharpest, most frontal, eyes open), nil without a face.
    public var bestFrameIndex: Int?
    /// The best frame, JPEG (shown back to the user; never stored beyond retention).
    public var bestFrameJPEG: Data?
    /// The capture's face descriptor (fused from its best frames, or the best frame's alone), in
    /// `model`'s units.
    public var embedding: [Float]
    /// Descriptor model name of `embedding` and `template`, recorded with a stored template
    /// (`FaceDescriptorModelName`).
    public var model: String
    /// The nonce of the active challenge the analyser evaluated (nil in passive analysis).
    public var challengeNonce: String?
    /// Capture-quality issues (empty: fit to decide on).
    public var captureIssues: [CaptureIssue]
    /// How the liveness score was made; nil when the analyser does not say.
    public var pad: PADEvidence?
    /// The template to store on consent, as the analyser's versioned bytes (FaceKit `FaceTemplate`:
    /// version 3 = `IDVT` header + the recogniser's descriptor fused from several frames; version 2
    /// the same with dlib's; version 1 = the bare 128 little-endian float32 of `embedding`, the
    /// default when none is given).
    public var template: [UInt8]
    /// Frames fused into `embedding` / `template` (1: a single frame).
    public var templateFrames: Int
    /// Whether the reflected light followed the server's illumination sequence (`.notOffered` when
    /// none was asked of this capture).
    public var presence: PresenceEvidence = .notOffered

    public init(livenessScore: Int, livenessCues: [LivenessCue] = [], match: FaceMatchEvidence?, frameCount: Int,
                trackedFrameCount: Int, framesPerSecond: Double, bestFrameIndex: Int? = nil, bestFrameJPEG: Data?,
                embedding: [Float], model: String = "dlib_face_recognition_resnet_model_v1", challengeNonce: String? = nil,
                captureIssues: [CaptureIssue] = [], pad: PADEvidence? = nil, template: [UInt8]? = nil, templateFrames: Int = 1) {
        self.livenessScore = livenessScore
        self.livenessCues = livenessCues
        self.match = match
        self.frameCount = frameCount
        self.trackedFrameCount = trackedFrameCount
        self.framesPerSecond = framesPerSecond
        self.bestFrameIndex = bestFrameIndex
        self.bestFrameJPEG = bestFrameJPEG
        self.embedding = embedding
        self.model = model
        self.challengeNonce = challengeNonce
        self.captureIssues = captureIssues
        self.pad = pad
        self.template = template ?? Self.version1Template(embedding)
        self.templateFrames = templateFrames
    }

    /// A version-1 template: the descriptor as little-endian float32.
    public static func version1Template(_ descriptor: [Float]) -> [UInt8] {
        descriptor.flatMap { f in withUnsafeBytes(of: f.bitPattern.littleEndian) { Array($0) } }
    }
}
