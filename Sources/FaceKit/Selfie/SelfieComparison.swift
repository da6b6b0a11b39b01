import Foundation

/// What a selfie is compared with.
public enum SelfieReference: Sendable, Hashable {
    /// A portrait image (JPEG or PNG), e.g. the document portrait; its largest face is used.
    case portrait(Data)
    /// A stored template (`FaceTemplate`, version 1 or 2), e.g. the enrolled biometric template.
    case template(FaceTemplate)
}

/// 1:1 comparison of 128-d dlib descriptors for the selfie step, in one place: FaceKit's
/// `FaceMatchPolicy` / `FaceMatcher` (LFW-calibrated) underneath.
public enum SelfieMatching {
    /// Largest descriptor distance judged the same person: `FaceMatchPolicy.lfwCalibratedThreshold`
    /// (0.55, chosen at FMR 0.1 % on LFW; dlib's documented accuracy-optimal line is 0.6).
    public static let defaultDistanceThreshold = FaceMatchPolicy.lfwCalibratedThreshold

    /// Euclidean distance between two descriptors (∞ when their lengths differ or a value is not finite).
    public static func distance(_ a: [Float], _ b: [Float]) -> Double {
        (try? FaceMatcher.distance(a, b)) ?? .infinity
    }

    /// `face_matcher_response.score` (0–1): `FaceMatcher.similarity(distance:)`, the fixed logistic
    /// curve centred on 0.55 (scale 0.06): 0.3 → 0.985, 0.55 → 0.5, 0.7 → 0.076. With the default
    /// threshold, score ≥ 0.5 ⇔ matched. A monotone rescaling, not a probability; 0 for ∞.
    public static func score(distance: Double) -> Double {
        distance.isFinite ? FaceMatcher.similarity(distance: distance) : 0
    }
}

/// The selfie step's evidence: liveness, then the comparison of the capture's template (fused from
/// its best frames, `LivenessReport.template`) with the reference. No verdict: MATCHED /
/// NOT_MATCHED / LIVENESS_FAILED is the server's policy's (IDVEngine).
public struct SelfieComparison: Sendable, Hashable {
    /// `face_matcher_response.score`, 0–1 (`SelfieMatching.score`); 0 without a face.
    public var faceMatchScore: Double
    /// Descriptor distance between the capture's template and the reference; nil without a face.
    public var distance: Double?
    /// What was compared (fused↔image against a portrait or a version-1 template, fused↔fused
    /// against a fused stored template); nil without a face. Selects the row of
    /// `FaceMatchCalibration.table` whose thresholds apply.
    public var kind: FaceComparisonKind?
    /// The liveness analysis.
    public var liveness: LivenessReport

    public init(faceMatchScore: Double, distance: Double?, kind: FaceComparisonKind? = nil, liveness: LivenessReport) {
        self.faceMatchScore = faceMatchScore
        self.distance = distance
        self.kind = kind
        self.liveness = liveness
    }

    /// The capture's template (fused), or the best frame's descriptor as a single one; nil without a face.
    public var probe: FaceTemplate? {
        liveness.template ?? liveness.bestFrameEmbedding.map { FaceTemplate(descriptor: $0) }
    }

    /// `liveness_result.score`, 0–100.
    public var livenessScore: Int { liveness.score }
    public var reasons: [LivenessReason] { liveness.reasons }
    /// `autocapture_result.selfie_image` (JPEG).
    public var bestFrameJPEG: Data? { liveness.bestFrameJPEG }
    /// The best frame's 128-d descriptor (for creating a template on opt-in).
    public var embedding: [Float]? { liveness.bestFrameEmbedding }
}
