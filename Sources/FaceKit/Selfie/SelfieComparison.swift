import Foundation

/// What a selfie is compared with.
public enum SelfieReference: Sendable, Hashable {
    /// A portrait image (JPEG or PNG), e.g. the document portrait or the chip's DG2 face; its
    /// largest face is used.
    case portrait(Data)
    /// A stored template (`FaceTemplate`, version 1, 2 or 3), e.g. the enrolled biometric template.
    case template(FaceTemplate)
}

/// Distances and display scores of the selfie step, in one place: FaceKit's `FaceMatchPolicy` /
/// `FaceMatcher` (LFW-calibrated) underneath.
public enum SelfieMatching {
    /// Largest dlib descriptor distance judged the same person: `FaceMatchPolicy.lfwCalibratedThreshold`
    /// (0.55, chosen at FMR 0.1 % on LFW; dlib's documented accuracy-optimal line is 0.6).
    public static let defaultDistanceThreshold = FaceMatchPolicy.lfwCalibratedThreshold

    /// Euclidean distance between two dlib descriptors (∞ when their lengths differ or a value is not finite).
    public static func distance(_ a: [Float], _ b: [Float]) -> Double {
        (try? FaceMatcher.distance(a, b)) ?? .infinity
    }

    /// `face_matcher_response.score` (0–1): `FaceMatcher.similarity(distance:model:)`, the model's
    /// fixed logistic curve (dlib: centred on 0.55, scale 0.06: 0.3 → 0.985, 0.55 → 0.5, 0.7 →
    /// 0.076; the recogniser: `FaceMatchCalibration.recognizerSimilarity`). A monotone rescaling,
    /// not a probability; 0 for ∞.
    public static func score(distance: Double, model: FaceDescriptorModel) -> Double {
        distance.isFinite ? FaceMatcher.similarity(distance: distance, model: model) : 0
    }
}

/// The selfie step's evidence: liveness, then the comparison of the capture with the reference.
/// No verdict: MATCHED / NOT_MATCHED / LIVENESS_FAILED is the server's policy's (IDVEngine).
public struct SelfieComparison: Sendable, Hashable {
    /// `face_matcher_response.score`, 0–1 (`SelfieMatching.score`); 0 without a face.
    public var faceMatchScore: Double
    /// Distance between the capture's probe and the reference in `model`'s units; nil without a face.
    public var distance: Double?
    /// What was compared (fused↔image against a portrait or a single-frame template, fused↔fused
    /// against a fused stored template); nil without a face. With `model`, selects the row of
    /// `FaceMatchCalibration` whose thresholds apply.
    public var kind: FaceComparisonKind?
    /// The descriptor model of the comparison: the reference's (dlib for a version-1/2 stored
    /// template, the recogniser otherwise); nil without a face.
    public var model: FaceDescriptorModel?
    /// The probe compared: the capture's template (`liveness.template`), or for a dlib reference
    /// the capture's dlib template (`SelfieAnalyzer.legacyProbe`); nil without a face.
    public var comparedProbe: FaceTemplate?
    /// Thread CPU seconds spent making the dlib probe of a version-1/2 reference (0 otherwise).
    public var legacyProbeSeconds = 0.0
    /// The liveness analysis.
    public var liveness: LivenessReport

    public init(faceMatchScore: Double, distance: Double?, kind: FaceComparisonKind? = nil, model: FaceDescriptorModel? = nil,
                liveness: LivenessReport) {
        self.faceMatchScore = faceMatchScore
        self.distance = distance
        self.kind = kind
        self.model = model
        self.liveness = liveness
    }

    /// The capture's version-3 template (fused), or the best frame's descriptor as a single one;
    /// nil without a face. This is the template to store on consent, whatever the reference was.
    public var probe: FaceTemplate? {
        liveness.template ?? liveness.bestFrameEmbedding.map { FaceTemplate(descriptor: $0, model: .current) }
    }

    /// `liveness_result.score`, 0–100.
    public var livenessScore: Int { liveness.score }
    public var reasons: [LivenessReason] { liveness.reasons }
    /// `autocapture_result.selfie_image` (JPEG).
    public var bestFrameJPEG: Data? { liveness.bestFrameJPEG }
    /// The best frame's descriptor (the recogniser's, unit length).
    public var embedding: [Float]? { liveness.bestFrameEmbedding }
}
