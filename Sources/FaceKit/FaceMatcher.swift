import Foundation

/// The decision rule for face verification (1:1): a comparison is a match when the Euclidean
/// distance between the two 128-d descriptors is at most `threshold`.
///
/// The threshold is configuration: pass a policy, or read it from the environment
/// (`IDV_FACE_MATCH_THRESHOLD`) with `fromEnvironment()`. The default,
/// `FaceMatchPolicy.lfwCalibratedThreshold`, was calibrated on LFW (see that constant).
public struct FaceMatchPolicy: Sendable, Hashable, Codable {
    /// The largest descriptor distance still called a match (dlib ResNet v1 units, 0…~2).
    public var threshold: Double

    /// Default decision threshold, calibrated with `idvd bench face` on LFW (deep-funnelled,
    /// `../shared/testdata/lfw`: the 3 000 View-2 pairs of 5 folds, 3 811 images, and the 7 255 541
    /// impostor pairs formed from every two of those images showing different people).
    /// Chosen at false match rate 0.1 % on those impostor pairs (ISO/IEC 19795-1 FMR), rounded:
    /// at 0.55, FMR = 0.11 % and FNMR = 8.7 % on the 1 500 genuine View-2 pairs (accuracy 95.7 %).
    /// dlib's own 0.6 maximises LFW accuracy instead (98.5 %; FMR 0.56 %, FNMR 2.3 %); the
    /// cross-validated accuracy-optimal threshold is 0.61 (98.77 % ± 0.25). Relying parties that
    /// prefer fewer false rejections raise it through configuration.
    public static let lfwCalibratedThreshold = 0.55

    public static let `default` = FaceMatchPolicy()

    public init(threshold: Double = FaceMatchPolicy.lfwCalibratedThreshold) {
        self.threshold = threshold
    }

    /// The policy from `IDV_FACE_MATCH_THRESHOLD` (a decimal in 0…2) when set and valid, else the default.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> FaceMatchPolicy {
        if let text = environment["IDV_FACE_MATCH_THRESHOLD"], let value = Double(text), value > 0, value < 2 {
            return FaceMatchPolicy(threshold: value)
        }
        return .default
    }
}

/// The result of comparing two face descriptors.
public struct FaceComparison: Sendable, Hashable, Codable {
    /// Euclidean distance between the descriptors (0 = identical; same person typically < 0.5,
    /// different people typically > 0.6).
    public var distance: Double
    /// `FaceMatcher.similarity(distance:)`, 0…1.
    public var similarity: Double
    /// distance ≤ threshold.
    public var match: Bool
    /// The threshold the decision used.
    public var threshold: Double
}

/// Compares dlib 128-d face descriptors.
public enum FaceMatcher {
    /// Descriptor length of dlib's ResNet v1.
    public static let descriptorLength = 128

    /// Centre of the similarity mapping: the default threshold, so that with the default policy
    /// `similarity ≥ 0.5` exactly when `match` is true.
    public static let similarityCentre = FaceMatchPolicy.lfwCalibratedThreshold
    /// Scale of the similarity mapping (distance units): ±0.1 around the centre spans 0.16…0.84.
    public static let similarityScale = 0.06

    /// Euclidean distance between two descriptors.
    /// - Throws: `FaceError.invalidArgument` when the lengths differ or a value is not finite.
    public static func distance(_ a: [Float], _ b: [Float]) throws -> Double {
        guard a.count == b.count, !a.isEmpty else {
            throw FaceError.invalidArgument("descriptors of different lengths (\(a.count) and \(b.count))")
        }
        var sum = 0.0
        for i in 0..<a.count {
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
        }
        guard sum.isFinite else { throw FaceError.invalidArgument("descriptor holds a non-finite value") }
        return sum.squareRoot()
    }

    /// Maps a distance to a similarity in 0…1 with a fixed logistic curve:
    /// `similarity = 1 / (1 + exp((distance − similarityCentre) / similarityScale))`
    /// (centre 0.55, scale 0.06): distance 0.3 → 0.985, 0.55 → 0.5, 0.6 → 0.30, 0.7 → 0.076. Monotone and
    /// independent of the configured threshold, so scores stay comparable across deployments.
    public static func similarity(distance: Double) -> Double {
        1 / (1 + exp((distance - similarityCentre) / similarityScale))
    }

    /// Distance, similarity and decision under `policy`.
    public static func compare(_ a: [Float], _ b: [Float], policy: FaceMatchPolicy = .default) throws -> FaceComparison {
        let d = try distance(a, b)
        return FaceComparison(distance: d, similarity: similarity(distance: d), match: d <= policy.threshold, threshold: policy.threshold)
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
