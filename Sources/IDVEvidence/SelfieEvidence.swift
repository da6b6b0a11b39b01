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

/// The comparison of the best frame with the reference.
public struct FaceMatchEvidence: Sendable, Equatable {
    /// Euclidean distance between the 128-d descriptors (dlib ResNet v1); lower is more similar.
    public var distance: Double
    /// `face_matcher_response.score`, 0–1: a fixed monotone rescaling of `distance` (FaceKit
    /// `SelfieMatching.score`), higher is more similar. Not a probability.
    public var score: Double
    public init(distance: Double, score: Double) {
        self.distance = distance
        self.score = score
    }
}

/// What a selfie analyser measured on one capture: liveness cues and score, the match against the
/// reference, the frames and the rate they were judged at, the best frame and its descriptor.
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
    /// The face descriptor of the best frame (the template on consent).
    public var embedding: [Float]
    /// Descriptor model name recorded with a template.
    public var model: String
    /// The nonce of the active challenge the analyser evaluated (nil in passive analysis).
    public var challengeNonce: String?

    public init(livenessScore: Int, livenessCues: [LivenessCue] = [], match: FaceMatchEvidence?, frameCount: Int,
                trackedFrameCount: Int, framesPerSecond: Double, bestFrameIndex: Int? = nil, bestFrameJPEG: Data?,
                embedding: [Float], model: String = "dlib_face_recognition_resnet_model_v1", challengeNonce: String? = nil) {
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
    }
}
