import Foundation

/// What a selfie is compared with.
public enum SelfieReference: Sendable, Hashable {
    /// A portrait image (JPEG or PNG), e.g. the document portrait; its largest face is used.
    case portrait(Data)
    /// A stored 128-d descriptor (dlib ResNet v1), e.g. the enrolled biometric template.
    case template([Float])
}

/// `biometric_result.display_text` (seed 002 §6.2).
public enum SelfieMatchResult: String, Sendable, Codable, CaseIterable {
    case matched = "MATCHED"
    case notMatched = "NOT_MATCHED"
    case livenessFailed = "LIVENESS_FAILED"
}

/// 1:1 comparison of 128-d dlib descriptors, in one place.
public enum SelfieMatching {
    /// Largest Euclidean descriptor distance judged the same person: 0.6, dlib's documented line for
    /// `dlib_face_recognition_resnet_model_v1` (99.38 % on LFW; dlib `dnn_face_recognition_ex.cpp`).
    /// Replace with FaceKit's LFW-calibrated value once the face branch publishes one.
    public static let defaultDistanceThreshold = 0.6

    /// Euclidean distance between two descriptors (∞ when their lengths differ).
    public static func distance(_ a: [Float], _ b: [Float]) -> Double {
        guard a.count == b.count else { return .infinity }
        return zip(a, b).reduce(0.0) { $0 + Double(($1.0 - $1.1) * ($1.0 - $1.1)) }.squareRoot()
    }

    /// `face_matcher_response.score` (0–1) for a distance: `1 − distance / (2 × threshold)`, clamped.
    /// So 1 is identical, 0.5 sits exactly on the threshold (≥ 0.5 ⇔ matched), 0 is twice the
    /// threshold or farther. A monotone rescaling, not a probability.
    public static func score(distance: Double, threshold: Double = defaultDistanceThreshold) -> Double {
        guard distance.isFinite, threshold > 0 else { return 0 }
        return min(1, max(0, 1 - distance / (2 * threshold)))
    }
}

/// The selfie step's verdict (seed 002 §6.2 `response_data`): liveness, then face match.
public struct SelfieVerdict: Sendable, Hashable {
    public var result: SelfieMatchResult
    /// `biometric_result.result_criteria`: `FACE_MATCH` when the match decided, `LIVENESS` when liveness failed.
    public var resultCriteria: String
    /// `face_matcher_response.score`, 0–1 (`SelfieMatching.score`); 0 without a face.
    public var faceMatchScore: Double
    /// Descriptor distance between the best frame and the reference; nil without a face.
    public var distance: Double?
    /// The distance threshold used.
    public var matchThreshold: Double
    /// The liveness analysis behind the verdict.
    public var liveness: LivenessReport

    /// `MATCHED`, `NOT_MATCHED` or `LIVENESS_FAILED`.
    public var displayText: String { result.rawValue }
    /// `liveness_result.score`, 0–100.
    public var livenessScore: Int { liveness.score }
    public var live: Bool { liveness.live }
    public var reasons: [LivenessReason] { liveness.reasons }
    /// `autocapture_result.selfie_image` (JPEG).
    public var bestFrameJPEG: Data? { liveness.bestFrameJPEG }
    /// The best frame's 128-d descriptor (for creating a template on opt-in).
    public var embedding: [Float]? { liveness.bestFrameEmbedding }
}
