import Foundation

/// A named decision point of 1:1 face verification (ISO/IEC 19795-1): the false match rate a
/// threshold was calibrated for. Raw values are configuration words (`fmr_0.1`, `fmr_0.01`).
public enum FaceMatchOperatingPoint: String, Sendable, Codable, CaseIterable, Hashable {
    /// FMR 0.1 % (1 in 1 000): NIST SP 800-63B's ceiling for biometric verification.
    case fmr1in1000 = "fmr_0.1"
    /// FMR 0.01 % (1 in 10 000): what banks commonly run at.
    case fmr1in10000 = "fmr_0.01"

    /// The target false match rate, 0…1.
    public var targetFMR: Double {
        switch self {
        case .fmr1in1000: return 0.001
        case .fmr1in10000: return 0.0001
        }
    }
}

/// What a comparison compares; each kind has its own distance distribution, so its own thresholds.
public enum FaceComparisonKind: String, Sendable, Codable, CaseIterable, Hashable {
    /// One image's descriptor against one image's descriptor (`idvd face compare`, a version-1
    /// template against a single frame).
    case imageToImage = "image_to_image"
    /// A template fused from several images or frames against one image's descriptor (the selfie's
    /// fused template against the document portrait or a version-1 stored template).
    case fusedToImage = "fused_to_image"
    /// A fused template against a fused template (a selfie against a version-2 stored template).
    case fusedToFused = "fused_to_fused"

    /// The kind of comparing `a` with `b`.
    public static func of(_ a: FaceTemplate, _ b: FaceTemplate) -> FaceComparisonKind {
        switch (a.sourceCount > 1, b.sourceCount > 1) {
        case (true, true): return .fusedToFused
        case (false, false): return .imageToImage
        default: return .fusedToImage
        }
    }
}

/// A calibrated threshold: the distance of an operating point for a comparison kind, with the
/// error rates measured on people the threshold was not fitted on.
public struct CalibratedThreshold: Sendable, Hashable, Codable {
    /// The descriptor model whose distances these are.
    public var model: FaceDescriptorModel
    public var kind: FaceComparisonKind
    public var operatingPoint: FaceMatchOperatingPoint
    /// The largest descriptor distance that is a match, in `model`'s units (Euclidean for dlib,
    /// cosine distance for the recogniser).
    public var distance: Double
    /// FMR and FNMR measured at `distance` on the held-out people (0…1), with the comparison counts.
    public var measuredFMR: Double
    public var impostorComparisons: Int
    public var measuredFNMR: Double
    public var genuineComparisons: Int
}

extension FaceMatchCalibration {
    /// The calibrated thresholds of dlib's descriptor (version-1 and -2 templates), from `idvd bench
    /// face --probe-images 3` on LFW
    /// (deep-funnelled, `../shared/testdata/lfw`, 3 811 images of 2 086 people): fitted at each
    /// target FMR on every cross-identity comparison of the people of `pairs.txt` folds 1–3, and
    /// measured on the people of folds 4–5 (the folds are person-disjoint). bench/face.md has the run.
    ///
    /// - `imageToImage`: one image against the next image of the same person (942 genuine) or any
    ///   image of another person (2 218 544 impostor comparisons).
    /// - `fusedToImage`: one image against the mean descriptor of the 3 images following it (461
    ///   genuine) or of 3 images of another person (766 330 impostor). A selfie's template fuses up
    ///   to 5 frames of one capture, less diverse than 3 independent photos; fused-to-image
    ///   thresholds lie below the image-to-image ones, so either way its FMR stays at or below the
    ///   target (docs/LIVENESS.md, "Matching").
    /// - `fusedToFused`: the mean of 3 images against the mean of the 3 after them (people with
    ///   ≥ 6 images; 238 genuine) or against another person's (27 375 impostor).
    public static let table: [CalibratedThreshold] = [
        CalibratedThreshold(model: .dlibResNetV1, kind: .imageToImage, operatingPoint: .fmr1in1000, distance: 0.544,
                            measuredFMR: 1636.0 / 2_218_544, impostorComparisons: 2_218_544, measuredFNMR: 93.0 / 942, genuineComparisons: 942),
        CalibratedThreshold(model: .dlibResNetV1, kind: .imageToImage, operatingPoint: .fmr1in10000, distance: 0.473,
                            measuredFMR: 134.0 / 2_218_544, impostorComparisons: 2_218_544, measuredFNMR: 308.0 / 942, genuineComparisons: 942),
        CalibratedThreshold(model: .dlibResNetV1, kind: .fusedToImage, operatingPoint: .fmr1in1000, distance: 0.502,
                            measuredFMR: 367.0 / 766_330, impostorComparisons: 766_330, measuredFNMR: 9.0 / 461, genuineComparisons: 461),
        CalibratedThreshold(model: .dlibResNetV1, kind: .fusedToImage, operatingPoint: .fmr1in10000, distance: 0.427,
                            measuredFMR: 23.0 / 766_330, impostorComparisons: 766_330, measuredFNMR: 80.0 / 461, genuineComparisons: 461),
        // Fitted on 116 005 impostor comparisons of folds 1–3; folds 4–5 hold only 27 375, so the
        // 0.01 % point is measured with ~3 expected false matches at most (none were seen).
        CalibratedThreshold(model: .dlibResNetV1, kind: .fusedToFused, operatingPoint: .fmr1in1000, distance: 0.416,
                            measuredFMR: 0, impostorComparisons: 27_375, measuredFNMR: 1.0 / 238, genuineComparisons: 238),
        CalibratedThreshold(model: .dlibResNetV1, kind: .fusedToFused, operatingPoint: .fmr1in10000, distance: 0.341,
                            measuredFMR: 0, impostorComparisons: 27_375, measuredFNMR: 15.0 / 238, genuineComparisons: 238),
    ]

    /// The calibrated threshold of `point` for `kind` in `model`'s units (every triple is in the table).
    public static func threshold(_ point: FaceMatchOperatingPoint, for kind: FaceComparisonKind,
                                 model: FaceDescriptorModel) -> CalibratedThreshold {
        (table + recognizerTable).first { $0.model == model && $0.kind == kind && $0.operatingPoint == point }!
    }
}

/// The decision rule of `idvd face compare` and FaceKit's own helpers: a comparison is a match
/// when the descriptor distance is at most the calibrated threshold of `operatingPoint` for the
/// comparison's kind and model (`FaceMatchCalibration`). The server's verdicts come from the engine's
/// policy, which names an operating point the same way; FaceKit only publishes the table.
public struct FaceMatchPolicy: Sendable, Hashable, Codable {
    /// The operating point (default FMR 0.1 %, NIST SP 800-63B).
    public var operatingPoint: FaceMatchOperatingPoint
    /// An uncalibrated distance used instead of the table, for experiments (`--threshold`,
    /// `IDV_FACE_MATCH_THRESHOLD`), in the units of the model compared; nil in normal use.
    public var thresholdOverride: Double?

    /// The threshold of dlib's previous calibration (all 5 LFW folds, one image against one, FMR
    /// 0.11 %), in dlib's Euclidean units: kept for callers that predate the table (the server's
    /// `idv.face_match_max_distance`); `FaceMatchCalibration` supersedes it.
    public static let lfwCalibratedThreshold = 0.55

    public static let `default` = FaceMatchPolicy()

    public init(operatingPoint: FaceMatchOperatingPoint = .fmr1in1000) {
        self.operatingPoint = operatingPoint
        self.thresholdOverride = nil
    }

    /// A policy with an uncalibrated distance threshold (experiments only).
    public init(threshold: Double) {
        self.operatingPoint = .fmr1in1000
        self.thresholdOverride = threshold
    }

    /// The distance threshold for a comparison of `kind` between `model`'s descriptors.
    public func threshold(for kind: FaceComparisonKind, model: FaceDescriptorModel) -> Double {
        thresholdOverride ?? FaceMatchCalibration.threshold(operatingPoint, for: kind, model: model).distance
    }

    /// The image-to-image threshold of the model new templates use (`FaceDescriptorModel.current`).
    public var threshold: Double { threshold(for: .imageToImage, model: .current) }

    /// From `IDV_FACE_MATCH_OPERATING_POINT` (`fmr_0.1` or `fmr_0.01`) and, overriding it,
    /// `IDV_FACE_MATCH_THRESHOLD` (a decimal in 0…2); invalid values are ignored.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> FaceMatchPolicy {
        var policy = FaceMatchPolicy()
        if let text = environment["IDV_FACE_MATCH_OPERATING_POINT"], let point = FaceMatchOperatingPoint(rawValue: text) {
            policy.operatingPoint = point
        }
        if let text = environment["IDV_FACE_MATCH_THRESHOLD"], let value = Double(text), value > 0, value < 2 {
            policy.thresholdOverride = value
        }
        return policy
    }
}

/// The result of comparing two face descriptors.
public struct FaceComparison: Sendable, Hashable, Codable {
    /// The model's distance between the descriptors (0 = identical): dlib Euclidean (same person
    /// typically < 0.5, different people > 0.6) or the recogniser's cosine distance.
    public var distance: Double
    /// `FaceMatcher.similarity(distance:model:)`, 0…1.
    public var similarity: Double
    /// distance ≤ threshold.
    public var match: Bool
    /// The threshold the decision used.
    public var threshold: Double
    /// The descriptor model compared.
    public var model: FaceDescriptorModel
}

/// Compares face descriptors and templates of one `FaceDescriptorModel`.
public enum FaceMatcher {
    /// Descriptor length of dlib's ResNet v1.
    public static let descriptorLength = FaceDescriptorModel.dlibResNetV1.dimensions

    /// Centre of dlib's similarity mapping (distance 0.55, the previous single-image calibration): a
    /// fixed, monotone display scale, independent of the operating point.
    public static let similarityCentre = FaceMatchPolicy.lfwCalibratedThreshold
    /// Scale of dlib's similarity mapping (distance units): ±0.1 around the centre spans 0.16…0.84.
    public static let similarityScale = 0.06

    /// Euclidean distance between two descriptors (dlib's metric; `FaceDescriptorMetric.euclidean`).
    /// - Throws: `FaceError.invalidArgument` when the lengths differ or a value is not finite.
    public static func distance(_ a: [Float], _ b: [Float]) throws -> Double {
        try FaceDescriptorMetric.euclidean.distance(a, b)
    }

    /// The distance between two templates in their model's metric.
    /// - Throws: `FaceError.invalidArgument` when the templates are of different models (their
    ///   distances mean nothing to each other) or a descriptor is malformed.
    public static func distance(_ a: FaceTemplate, _ b: FaceTemplate) throws -> Double {
        guard a.model == b.model else {
            throw FaceError.invalidArgument("templates of different descriptor models (\(a.model.name) and \(b.model.name)) cannot be compared")
        }
        return try a.model.metric.distance(a.descriptor, b.descriptor)
    }

    /// Maps a distance to a similarity in 0…1 with a fixed logistic curve per model:
    /// `similarity = 1 / (1 + exp((distance − centre) / scale))`, for dlib centre 0.55 and scale
    /// 0.06 (0.3 → 0.985, 0.55 → 0.5, 0.6 → 0.30, 0.7 → 0.076); for the recogniser centre and scale
    /// `FaceMatchCalibration.recognizerSimilarity`. Monotone and independent of the configured
    /// threshold, so scores stay comparable across deployments.
    public static func similarity(distance: Double, model: FaceDescriptorModel = .dlibResNetV1) -> Double {
        let (centre, scale) = model == .dlibResNetV1 ? (similarityCentre, similarityScale) : FaceMatchCalibration.recognizerSimilarity
        return 1 / (1 + exp((distance - centre) / scale))
    }

    /// Distance, similarity and decision under `policy` for a comparison of `kind` between two
    /// descriptors of `model`.
    public static func compare(_ a: [Float], _ b: [Float], policy: FaceMatchPolicy = .default,
                               kind: FaceComparisonKind = .imageToImage, model: FaceDescriptorModel) throws -> FaceComparison {
        let d = try model.metric.distance(a, b)
        let t = policy.threshold(for: kind, model: model)
        return FaceComparison(distance: d, similarity: similarity(distance: d, model: model), match: d <= t, threshold: t, model: model)
    }

    /// `compare` of two templates (of one model), with the kind they make (`FaceComparisonKind.of`).
    public static func compare(_ a: FaceTemplate, _ b: FaceTemplate, policy: FaceMatchPolicy = .default) throws -> FaceComparison {
        guard a.model == b.model else {
            throw FaceError.invalidArgument("templates of different descriptor models (\(a.model.name) and \(b.model.name)) cannot be compared")
        }
        return try compare(a.descriptor, b.descriptor, policy: policy, kind: .of(a, b), model: a.model)
    }
}

// MARK: - Calibration (ISO/IEC 19795-1 operating points)

/// Threshold calibration from comparison scores: the threshold of a target false match rate and
/// the error rates at a threshold. `idvd bench face` calibrates `FaceMatchCalibration.table` with it.
public enum FaceMatchCalibration {
    /// The largest distance threshold whose false match rate on `impostorDistances` is at most
    /// `targetFMR` (a comparison matches when its distance is ≤ the threshold): with the distances
    /// sorted, just below the ⌊targetFMR × n⌋-th smallest (0-based), so at most that many impostors
    /// fall at or under it. nil when there are no impostors or the target is outside (0, 1).
    /// A target below 1 / n cannot be resolved: the threshold is then below every impostor (FMR 0)
    /// and the caller should say so.
    public static func threshold(targetFMR: Double, impostorDistances: [Double]) -> Double? {
        guard targetFMR > 0, targetFMR < 1, !impostorDistances.isEmpty else { return nil }
        let sorted = impostorDistances.sorted()
        let k = Int((targetFMR * Double(sorted.count)).rounded(.down))
        return k < sorted.count ? sorted[k].nextDown : sorted[sorted.count - 1]
    }

    /// False match rate (impostors at or under `threshold`) and false non-match rate (genuine
    /// comparisons above it), each 0…1 (0 for an empty list).
    public static func rates(threshold: Double, genuine: [Double], impostor: [Double]) -> (fmr: Double, fnmr: Double) {
        let fm = impostor.filter { $0 <= threshold }.count
        let fnm = genuine.filter { $0 > threshold }.count
        return (impostor.isEmpty ? 0 : Double(fm) / Double(impostor.count), genuine.isEmpty ? 0 : Double(fnm) / Double(genuine.count))
    }
}
