import Foundation

/// How several descriptors of one capture become one descriptor (descriptor-level fusion).
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
    /// A template made with a descriptor model this build does not know, or one its version
    /// cannot hold (version 2 holds dlib descriptors only).
    case unsupportedModel(Int)
    /// Descriptors of different lengths, of another length than the model's, none at all, or
    /// non-finite values.
    case invalidDescriptors(String)

    public var description: String {
        switch self {
        case .unrecognisedFormat(let d): return "not a face template: \(d)"
        case .unsupportedVersion(let v): return "face template version \(v) is not supported (1, 2 and 3 are)"
        case .unsupportedModel(let m):
            return "face template of descriptor model \(m) (1, dlib ResNet v1, in versions 1–3; 2, face-reidentification-retail-0095, in version 3)"
        case .invalidDescriptors(let d): return "invalid descriptors: \(d)"
        }
    }
}

/// A stored face template: one descriptor of a `FaceDescriptorModel`, possibly fused from several
/// frames of one capture, with its format version and how it was made.
///
/// **Formats.** Version 1 (before multi-frame templates): the bare dlib descriptor, 128
/// little-endian IEEE-754 float32 values (512 bytes). Version 2: the 8-byte header `"IDVT"`,
/// version (u8 = 2), descriptor model (u8 = 1, dlib_face_recognition_resnet_model_v1), fusion (u8:
/// 0 single, 1 mean, 2 quality-weighted mean), frames fused (u8), then the 128 float32 as in
/// version 1. Version 3: the same header with version 3 and model 2
/// (face-reidentification-retail-0095), then its 256 float32, unit length (`FaceRecognizer`); the
/// model byte decides the length (a version-3 header with model 1 holds 128). A version-1 blob
/// never starts with `"IDVT"`: read as float32 that would be 3.4 × 10¹², and descriptor components
/// lie within ±1. All three decode; new templates are version 3. Versions 1 and 2 are compared in
/// dlib's units, version 3 in the recogniser's (`FaceMatcher.distance(_:_:)` refuses a mix): a
/// version-1 or -2 template verifies with dlib until the person's next capture replaces it
/// (docs/LIVENESS.md, "Template versions").
public struct FaceTemplate: Sendable, Hashable, Codable {
    /// Format version this build writes (for `FaceDescriptorModel.current`).
    public static let currentVersion = 3
    static let magic: [UInt8] = Array("IDVT".utf8)

    /// 1 (bare dlib descriptor), 2 (header + dlib descriptor) or 3 (header + any model's descriptor).
    public var version: Int
    /// The model whose units `descriptor` is in.
    public var model: FaceDescriptorModel
    public var fusion: DescriptorFusion
    /// Number of descriptors fused into `descriptor` (1 for a single one).
    public var sourceCount: Int
    /// The (fused) descriptor, `model.dimensions` components.
    public var descriptor: [Float]

    /// A template of `model` (version 3 for the recogniser's descriptors, 2 for dlib's unless given).
    public init(descriptor: [Float], model: FaceDescriptorModel, fusion: DescriptorFusion = .single, sourceCount: Int = 1,
                version: Int? = nil) {
        self.descriptor = descriptor
        self.model = model
        self.fusion = fusion
        self.sourceCount = sourceCount
        self.version = version ?? (model == .dlibResNetV1 ? 2 : 3)
    }

    /// Whether this template is compared with dlib's descriptor (versions 1 and 2): it verifies
    /// until the person's next capture replaces it with a version-3 one.
    public var isLegacy: Bool { model != FaceDescriptorModel.current }

    /// Checks the descriptor: `model.dimensions` finite components.
    /// - Throws: `FaceTemplateError.invalidDescriptors`.
    public func validate() throws {
        guard descriptor.count == model.dimensions else {
            throw FaceTemplateError.invalidDescriptors("\(model.name) descriptors have \(model.dimensions) components, got \(descriptor.count)")
        }
        guard descriptor.allSatisfy(\.isFinite) else { throw FaceTemplateError.invalidDescriptors("non-finite component") }
    }

    /// Fuses descriptors of one capture (all of `model`): the `weights`-weighted mean (all equal
    /// when nil); for a cosine model (the recogniser) the mean of the unit descriptors, scaled back
    /// to unit length. A single descriptor gives a `.single` template.
    /// - Throws: `FaceTemplateError.invalidDescriptors` for none, a length other than
    ///   `model.dimensions`, non-finite values, a zero cosine descriptor or mean, or weights that are
    ///   negative, non-finite, all zero or of another count.
    public static func fused(_ descriptors: [[Float]], weights: [Double]? = nil, model: FaceDescriptorModel) throws -> FaceTemplate {
        guard let first = descriptors.first else { throw FaceTemplateError.invalidDescriptors("no descriptor") }
        guard descriptors.allSatisfy({ $0.count == model.dimensions }) else {
            throw FaceTemplateError.invalidDescriptors("every \(model.name) descriptor must have \(model.dimensions) components")
        }
        guard descriptors.allSatisfy({ $0.allSatisfy(\.isFinite) }) else { throw FaceTemplateError.invalidDescriptors("non-finite component") }
        let w = weights ?? [Double](repeating: 1, count: descriptors.count)
        guard w.count == descriptors.count, w.allSatisfy({ $0 >= 0 && $0.isFinite }), w.reduce(0, +) > 0 else {
            throw FaceTemplateError.invalidDescriptors("weights must be one non-negative finite value per descriptor, not all zero")
        }
        func unit(_ v: [Double]) throws -> [Float] {
            let n = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
            guard n > 0, n.isFinite else { throw FaceTemplateError.invalidDescriptors("a zero-length descriptor cannot be compared by angle") }
            return v.map { Float($0 / n) }
        }
        let cosine = model.metric == .cosine
        if descriptors.count == 1 {
            return FaceTemplate(descriptor: cosine ? try unit(first.map(Double.init)) : first, model: model)
        }
        let total = w.reduce(0, +)
        var sum = [Double](repeating: 0, count: first.count)
        for (d, wk) in zip(descriptors, w) where wk > 0 {
            // Each descriptor at unit length first for the cosine model, so that none weighs by its norm.
            let scale = cosine ? 1 / max(1e-12, d.reduce(0.0) { $0 + Double($1) * Double($1) }.squareRoot()) : 1
            for i in 0..<d.count { sum[i] += wk * scale * Double(d[i]) }
        }
        let mean = sum.map { $0 / total }
        let equal = weights == nil || Set(w).count == 1
        return FaceTemplate(descriptor: cosine ? try unit(mean) : mean.map { Float($0) }, model: model,
                            fusion: equal ? .mean : .qualityWeightedMean, sourceCount: descriptors.count)
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

    /// The bytes to store (this template's version: 1 bare, 2 or 3 with the header).
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(8 + descriptor.count * 4)
        if version >= 2 {
            out += Self.magic
            out += [UInt8(version), UInt8(model.rawValue), fusion.code, UInt8(min(255, sourceCount))]
        }
        for f in descriptor { withUnsafeBytes(of: f.bitPattern.littleEndian) { out += $0 } }
        return out
    }

    /// Reads a version-1, -2 or -3 template.
    /// - Throws: `FaceTemplateError` naming what is wrong.
    public init(decoding bytes: [UInt8]) throws {
        func floats(_ slice: ArraySlice<UInt8>, _ model: FaceDescriptorModel) throws -> [Float] {
            guard slice.count == model.dimensions * 4 else {
                throw FaceTemplateError.unrecognisedFormat("\(slice.count) descriptor bytes, expected \(model.dimensions * 4) for \(model.name)")
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
            guard version == 2 || version == 3 else { throw FaceTemplateError.unsupportedVersion(version) }
            guard let model = FaceDescriptorModel(rawValue: Int(bytes[5])), version == 3 || model == .dlibResNetV1 else {
                throw FaceTemplateError.unsupportedModel(Int(bytes[5]))
            }
            guard let fusion = DescriptorFusion(code: bytes[6]) else {
                throw FaceTemplateError.unrecognisedFormat("unknown fusion code \(bytes[6])")
            }
            self.init(descriptor: try floats(bytes[8...], model), model: model, fusion: fusion, sourceCount: max(1, Int(bytes[7])),
                      version: version)
        } else {
            self.init(descriptor: try floats(bytes[...], .dlibResNetV1), model: .dlibResNetV1, fusion: .single, sourceCount: 1, version: 1)
        }
    }
}
