import Foundation

/// How several 128-d descriptors of one capture become one descriptor (descriptor-level fusion).
public enum DescriptorFusion: String, Sendable, Codable, CaseIterable {
    /// A single descriptor, nothing fused (version-1 templates).
    case single
    /// Arithmetic mean of the descriptors.
    case mean
    /// Mean weighted by each frame's capture quality (`FaceTemplate.qualityWeight`).
    case qualityWeightedMean = "quality_weighted_mean"

    var code: UInt8 {
        switch self {
        case .single: return 0
        case .mean: return 1
        case .qualityWeightedMean: return 2
        }
    }

    init?(code: UInt8) {
        switch code {
        case 0: self = .single
        case 1: self = .mean
        case 2: self = .qualityWeightedMean
        default: return nil
        }
    }
}

/// Why template bytes were refused.
public enum FaceTemplateError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Neither a version-1 template (128 little-endian float32, 512 bytes) nor a versioned one.
    case unrecognisedFormat(String)
    /// A versioned template of a version this build does not know.
    case unsupportedVersion(Int)
    /// A template made with another descriptor model (its distances are not comparable).
    case unsupportedModel(Int)
    /// Descriptors of different lengths, none at all, or non-finite values.
    case invalidDescriptors(String)

    public var description: String {
        switch self {
        case .unrecognisedFormat(let d): return "not a face template: \(d)"
        case .unsupportedVersion(let v): return "face template version \(v) is not supported (1 and 2 are)"
        case .unsupportedModel(let m): return "face template of descriptor model \(m) (only 1, dlib ResNet v1, is supported)"
        case .invalidDescriptors(let d): return "invalid descriptors: \(d)"
        }
    }
}

/// A stored face template: one 128-d dlib ResNet v1 descriptor, possibly fused from several frames
/// of one capture, with its format version and how it was made.
///
/// **Formats.** Version 1 (before multi-frame templates): the bare descriptor, 128 little-endian
/// IEEE-754 float32 values (512 bytes). Version 2: the 8-byte header `"IDVT"`, version (u8 = 2),
/// descriptor model (u8: 1 = dlib_face_recognition_resnet_model_v1), fusion (u8: 0 single, 1 mean,
/// 2 quality-weighted mean), frames fused (u8), then the descriptor as in version 1. A version-1
/// blob never starts with `"IDVT"`: read as float32 that would be 3.4 × 10¹², and descriptor
/// components lie within ±1. Both decode; new templates are written as version 2.
public struct FaceTemplate: Sendable, Hashable, Codable {
    /// Format version this build writes.
    public static let currentVersion = 2
    static let magic: [UInt8] = Array("IDVT".utf8)
    /// Descriptor model code 1: `dlib_face_recognition_resnet_model_v1.dat` (128-d).
    public static let dlibResNetV1 = 1

    /// 1 (bare descriptor) or 2.
    public var version: Int
    /// Descriptor model code (`dlibResNetV1`).
    public var model: Int
    public var fusion: DescriptorFusion
    /// Number of descriptors fused into `descriptor` (1 for a single one).
    public var sourceCount: Int
    /// The (fused) 128-d descriptor.
    public var descriptor: [Float]

    public init(descriptor: [Float], fusion: DescriptorFusion = .single, sourceCount: Int = 1,
                version: Int = FaceTemplate.currentVersion, model: Int = FaceTemplate.dlibResNetV1) {
        self.descriptor = descriptor
        self.fusion = fusion
        self.sourceCount = sourceCount
        self.version = version
        self.model = model
    }

    /// Fuses descriptors of one capture: the `weights`-weighted mean (all equal when nil).
    /// A single descriptor gives a `.single` template.
    /// - Throws: `FaceTemplateError.invalidDescriptors` for none, unequal lengths, a length other
    ///   than 128, non-finite values, or weights that are negative, non-finite, all zero or of
    ///   another count.
    public static func fused(_ descriptors: [[Float]], weights: [Double]? = nil) throws -> FaceTemplate {
        guard let first = descriptors.first else { throw FaceTemplateError.invalidDescriptors("no descriptor") }
        guard first.count == FaceMatcher.descriptorLength, descriptors.allSatisfy({ $0.count == first.count }) else {
            throw FaceTemplateError.invalidDescriptors("every descriptor must have \(FaceMatcher.descriptorLength) components")
        }
        guard descriptors.allSatisfy({ $0.allSatisfy(\.isFinite) }) else { throw FaceTemplateError.invalidDescriptors("non-finite component") }
        let w = weights ?? [Double](repeating: 1, count: descriptors.count)
        guard w.count == descriptors.count, w.allSatisfy({ $0 >= 0 && $0.isFinite }), w.reduce(0, +) > 0 else {
            throw FaceTemplateError.invalidDescriptors("weights must be one non-negative finite value per descriptor, not all zero")
        }
        if descriptors.count == 1 { return FaceTemplate(descriptor: first, fusion: .single, sourceCount: 1) }
        let total = w.reduce(0, +)
        var sum = [Double](repeating: 0, count: first.count)
        for (d, wk) in zip(descriptors, w) where wk > 0 {
            for i in 0..<d.count { sum[i] += wk * Double(d[i]) }
        }
        let equal = weights == nil || Set(w).count == 1
        return FaceTemplate(descriptor: sum.map { Float($0 / total) }, fusion: equal ? .mean : .qualityWeightedMean,
                            sourceCount: descriptors.count)
    }

    /// The fusion weight of a frame from its measurements: `√(sharpness / best sharpness) ×
    /// frontal`, with `frontal = max(0.05, 1 − (|yaw| + ½|pitch| + ¼|roll|) / 45°)` — the best
    /// frame's quality measure of `SelfieAnalyzer` without the eyes term (the frames fused are
    /// eyes-open ones already).
    public static func qualityWeight(sharpness: Double?, bestSharpness: Double, pose: HeadPose?) -> Double {
        let sharp = bestSharpness > 0 ? min(1, max(0, (sharpness ?? 0) / bestSharpness)).squareRoot() : 1
        let p = pose ?? HeadPose(yaw: 45, pitch: 45, roll: 45)
        let frontal = max(0.05, 1 - (abs(p.yaw) + 0.5 * abs(p.pitch) + 0.25 * abs(p.roll)) / 45)
        return sharp * frontal
    }

    /// The bytes to store (version 2 unless this template is a version-1 one read back).
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(8 + descriptor.count * 4)
        if version >= 2 {
            out += Self.magic
            out += [UInt8(version), UInt8(model), fusion.code, UInt8(min(255, sourceCount))]
        }
        for f in descriptor { withUnsafeBytes(of: f.bitPattern.littleEndian) { out += $0 } }
        return out
    }

    /// Reads a version-1 or version-2 template.
    /// - Throws: `FaceTemplateError` naming what is wrong.
    public init(decoding bytes: [UInt8]) throws {
        func floats(_ slice: ArraySlice<UInt8>) throws -> [Float] {
            guard slice.count == FaceMatcher.descriptorLength * 4 else {
                throw FaceTemplateError.unrecognisedFormat("\(slice.count) descriptor bytes, expected \(FaceMatcher.descriptorLength * 4)")
            }
            var out = [Float]()
            out.reserveCapacity(slice.count / 4)
            var i = slice.startIndex
            while i < slice.endIndex {
                let bits = UInt32(slice[i]) | UInt32(slice[i + 1]) << 8 | UInt32(slice[i + 2]) << 16 | UInt32(slice[i + 3]) << 24
                out.append(Float(bitPattern: bits))
                i += 4
            }
            guard out.allSatisfy({ $0.isFinite && abs($0) < 16 }) else {
                throw FaceTemplateError.invalidDescriptors("a component is not finite or out of the descriptor's range")
            }
            return out
        }
        if bytes.count >= 8, Array(bytes[0..<4]) == Self.magic {
            let version = Int(bytes[4])
            guard version == 2 else { throw FaceTemplateError.unsupportedVersion(version) }
            guard Int(bytes[5]) == Self.dlibResNetV1 else { throw FaceTemplateError.unsupportedModel(Int(bytes[5])) }
            guard let fusion = DescriptorFusion(code: bytes[6]) else {
                throw FaceTemplateError.unrecognisedFormat("unknown fusion code \(bytes[6])")
            }
            self.init(descriptor: try floats(bytes[8...]), fusion: fusion, sourceCount: max(1, Int(bytes[7])), version: 2,
                      model: Self.dlibResNetV1)
        } else {
            self.init(descriptor: try floats(bytes[...]), fusion: .single, sourceCount: 1, version: 1, model: Self.dlibResNetV1)
        }
    }
}
