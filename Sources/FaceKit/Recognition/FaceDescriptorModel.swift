import Foundation

/// The face descriptor models FaceKit compares, each with its own units: a distance of one model
/// means nothing to another, so templates record their model and comparisons refuse a mix.
public enum FaceDescriptorModel: Int, Sendable, Codable, CaseIterable, Hashable {
    /// dlib's `dlib_face_recognition_resnet_model_v1.dat` (Davis King, 2017; ResNet-29, LFW 99.38 %
    /// published): 128 components of length about 1.4, compared by **Euclidean distance** (0 = the
    /// same, genuine typically < 0.5, impostor > 0.6). The matcher of version-1 and version-2
    /// templates; kept so that they verify until the person's next capture replaces them.
    case dlibResNetV1 = 1
    /// Intel's `face-reidentification-retail-0095` (Open Model Zoo, Apache-2.0; MobileFaceNet with
    /// squeeze-excitation, trained on VGGFace2 per Intel's training repository; LFW 99.47 %
    /// published): 256 components, L2-normalised here, compared by **cosine distance** `1 − cos θ`
    /// (0 = the same direction, 1 = orthogonal, 2 = opposite). The matcher of version-3 templates
    /// (`FaceRecognizer`).
    case faceReidentification0095 = 2

    /// The model's name as recorded with a stored template and in evidence
    /// (`SelfieEvidence.model`): the upstream file or model name.
    public var name: String {
        switch self {
        case .dlibResNetV1: return "dlib_face_recognition_resnet_model_v1"
        case .faceReidentification0095: return "face-reidentification-retail-0095"
        }
    }

    /// The model with this `name`, nil for another.
    public init?(name: String) {
        guard let m = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = m
    }

    /// Number of descriptor components.
    public var dimensions: Int {
        switch self {
        case .dlibResNetV1: return 128
        case .faceReidentification0095: return 256
        }
    }

    /// How two descriptors of this model are compared.
    public var metric: FaceDescriptorMetric {
        switch self {
        case .dlibResNetV1: return .euclidean
        case .faceReidentification0095: return .cosine
        }
    }

    /// The model FaceKit makes new templates with.
    public static let current: FaceDescriptorModel = .faceReidentification0095
}

/// A descriptor comparison's distance function.
public enum FaceDescriptorMetric: String, Sendable, Codable, Hashable {
    /// `‖a − b‖₂` (dlib's descriptors are not normalised).
    case euclidean
    /// `1 − a·b / (‖a‖ ‖b‖)`, 0…2.
    case cosine

    /// The distance between `a` and `b` (same length, finite).
    /// - Throws: `FaceError.invalidArgument` when the lengths differ, a vector is empty or a
    ///   value (or, for cosine, a vector's length) is not finite or zero.
    public func distance(_ a: [Float], _ b: [Float]) throws -> Double {
        guard a.count == b.count, !a.isEmpty else {
            throw FaceError.invalidArgument("descriptors of different lengths (\(a.count) and \(b.count))")
        }
        switch self {
        case .euclidean:
            var sum = 0.0
            for i in 0..<a.count {
                let d = Double(a[i]) - Double(b[i])
                sum += d * d
            }
            guard sum.isFinite else { throw FaceError.invalidArgument("descriptor holds a non-finite value") }
            return sum.squareRoot()
        case .cosine:
            var dot = 0.0, na = 0.0, nb = 0.0
            for i in 0..<a.count {
                let x = Double(a[i]), y = Double(b[i])
                dot += x * y
                na += x * x
                nb += y * y
            }
            guard dot.isFinite, na.isFinite, nb.isFinite, na > 0, nb > 0 else {
                throw FaceError.invalidArgument("descriptor holds a non-finite value or has zero length")
            }
            return 1 - dot / (na * nb).squareRoot()
        }
    }
}
