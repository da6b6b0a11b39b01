internal import CVision
import Foundation
import Imaging

/// The five points a face is aligned by, in image pixels, in the order of the recognition model's
/// template: the eye centre on the image's left (the subject's right eye), the eye centre on the
/// image's right, the nose tip, the mouth corner on the image's left, the mouth corner on the
/// image's right.
public struct AlignmentPoints: Sendable, Hashable, Codable {
    /// Exactly 5 points.
    public let points: [FacePoint]

    /// - Throws: `FaceError.invalidArgument` unless there are 5 finite points.
    public init(_ points: [FacePoint]) throws {
        guard points.count == 5, points.allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else {
            throw FaceError.invalidArgument("alignment needs 5 finite points, got \(points.count)")
        }
        self.points = points
    }

    /// The five points from dlib's 68 (iBUG 300-W layout): the means of points 36–41 and 42–47 (the
    /// eye contours), point 30 (nose tip), points 48 and 54 (the outer mouth corners). nil for
    /// another count.
    public init?(landmarks68 p: [FacePoint]) {
        guard p.count == 68 else { return nil }
        try? self.init([FacePoint.mean(p[36...41]), FacePoint.mean(p[42...47]), p[30], p[48], p[54]])
    }

    /// Distance between the two eye centres, pixels.
    public var interEyeDistance: Double { points[0].distance(to: points[1]) }
}

/// Intel's `face-reidentification-retail-0095` (Open Model Zoo, Apache-2.0) through OpenCV's dnn
/// module: a 256-d face descriptor of a face aligned by 5 points, compared by cosine distance.
///
/// Input protocol (`Models/face-reid-0095/SOURCES.md`): the face warped by the least-squares
/// similarity transform of its 5 `AlignmentPoints` onto the 128 × 128 template `template`
/// (bilinear), BGR with raw 0–255 values, NCHW, no mean or scale; output 256 values, L2-normalised
/// here. The ONNX file is a FaceKit resource (`Models/face-reid-0095/`, with `LICENSE` and
/// `SOURCES.md`); every load hashes the bytes read and parses only bytes whose SHA-256 is
/// `sha256` — an altered or replaced file is refused (`FaceError.modelIntegrity`), never run.
///
/// Cost: about 16 ms of one core per face (OpenCV 4.6, one thread; `idvd bench face` measures it).
/// Thread-safe (a pool of per-thread network copies).
public final class FaceRecognizer: @unchecked Sendable {
    // @unchecked: the C++ network synchronises itself (a mutex around a pool of copies).
    private let net: OpaquePointer
    /// The ONNX file read.
    public let modelFile: URL

    /// The descriptor model (`FaceDescriptorModel.faceReidentification0095`).
    public let model = FaceDescriptorModel.faceReidentification0095
    /// File name of the shipped ONNX (opset 11, fp32; converted from Intel's IR by
    /// `../shared/models/face-reid-0095/ir2onnx.py`).
    public static let fileName = "face-reidentification-retail-0095_opset11_fp32.onnx"
    /// SHA-256 of the shipped ONNX file, checked on the bytes parsed at every load.
    public static let sha256 = "d67e37bbbeab61e82e4bd2762f9a29c27706365d5b04cc5a482554ea506ff175"
    /// Side of the aligned face the network reads, pixels.
    public static let inputSize = 128
    /// Where the 5 `AlignmentPoints` go in the 128 × 128 input (Open Model Zoo's reference
    /// landmarks for this model), pixels.
    public static let template: [FacePoint] = [
        FacePoint(x: 40.39, y: 59.08), FacePoint(x: 87.38, y: 59.08), FacePoint(x: 64.03, y: 81.98),
        FacePoint(x: 44.73, y: 105.56), FacePoint(x: 83.64, y: 105.56),
    ]

    /// The folder of the shipped model files (`Sources/FaceKit/Models/face-reid-0095`, a resource of this module).
    public static var bundledModelsDirectory: URL {
        Bundle.module.resourceURL!.appendingPathComponent("Models/face-reid-0095", isDirectory: true)
    }

    /// Loads `fileName` from `modelsDirectory`, checked against `sha256` before it is parsed.
    /// - Throws: `FaceError.modelIntegrity` when the file's hash differs (altered or replaced),
    ///   `FaceError.modelUnavailable` when it is missing or does not parse in OpenCV.
    public init(modelsDirectory: URL = FaceRecognizer.bundledModelsDirectory) throws {
        modelFile = modelsDirectory.appendingPathComponent(Self.fileName)
        var pointer: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_net_load(modelFile.path, Self.sha256, "face recognition model", &pointer, &message, message.count)
        guard status == CV_OK, let pointer else { throw FaceError(status: status, message: message) }
        net = pointer
    }

    deinit { cv_net_destroy(net) }

    private static let cache = SharedModel<FaceRecognizer> { try FaceRecognizer() }

    /// The process-wide recogniser over the bundled model (loaded and checked once).
    public static func shared() throws -> FaceRecognizer { try cache.instance() }

    /// Network copies created so far (one per thread that used it; for benchmarks).
    public var networkCopies: Int { Int(cv_net_copies(net)) }

    /// The 256-d descriptor of the face with these alignment points, L2-normalised (length 1).
    /// - Throws: `FaceError.invalidArgument` for points that cannot be aligned (coincident),
    ///   `FaceError.engineFailure` when OpenCV fails.
    public func embedding(in image: Image, points: AlignmentPoints) throws -> [Float] {
        let rgb = image.rgbPixels
        return try rgb.withUnsafeBufferPointer { try embedding(rgb: $0, width: image.width, height: image.height, points: points) }
    }

    func embedding(rgb: UnsafeBufferPointer<UInt8>, width: Int, height: Int, points: AlignmentPoints) throws -> [Float] {
        let xy = points.points.flatMap { [$0.x, $0.y] }
        let target = Self.template.flatMap { [$0.x, $0.y] }
        var out = [Float](repeating: 0, count: model.dimensions)
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_recognition_embed(net, rgb.baseAddress, Int32(width), Int32(height), xy, target, 5, Int32(Self.inputSize),
                                          &out, Int32(out.count), &message, message.count)
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return try Self.normalised(out)
    }

    /// The descriptor of an already aligned face (`inputSize` × `inputSize`, e.g. from
    /// `alignedFace`), L2-normalised.
    /// - Throws: `FaceError.invalidArgument` for another size.
    public func embedding(alignedFace face: Image) throws -> [Float] {
        guard face.width == Self.inputSize, face.height == Self.inputSize else {
            throw FaceError.invalidArgument("an aligned face is \(Self.inputSize)×\(Self.inputSize), got \(face.width)×\(face.height)")
        }
        var out = [Float](repeating: 0, count: model.dimensions)
        var message = [CChar](repeating: 0, count: 512)
        let status = face.rgb().pixels.withUnsafeBufferPointer {
            cv_recognition_embed_aligned(net, $0.baseAddress, Int32(Self.inputSize), &out, Int32(out.count), &message, message.count)
        }
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return try Self.normalised(out)
    }

    /// The face as the network sees it: `image` warped by the similarity transform of `points` onto
    /// `template`, `inputSize` × `inputSize` RGB (black outside the image).
    public static func alignedFace(in image: Image, points: AlignmentPoints) throws -> Image {
        let size = inputSize
        let rgb = image.rgbPixels
        let xy = points.points.flatMap { [$0.x, $0.y] }
        let target = template.flatMap { [$0.x, $0.y] }
        var message = [CChar](repeating: 0, count: 512)
        var status = CV_OK
        let out = [UInt8](unsafeUninitializedCapacity: size * size * 3) { buffer, initialised in
            status = rgb.withUnsafeBufferPointer {
                cv_face_align($0.baseAddress, Int32(image.width), Int32(image.height), xy, target, 5, Int32(size), buffer.baseAddress,
                              &message, message.count)
            }
            initialised = status == CV_OK ? size * size * 3 : 0
        }
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return Image(unchecked: out, width: size, height: size, format: .rgb)
    }

    /// `v` scaled to length 1.
    /// - Throws: `FaceError.engineFailure` for a zero or non-finite vector.
    static func normalised(_ v: [Float]) throws -> [Float] {
        let norm = v.reduce(0.0) { $0 + Double($1) * Double($1) }.squareRoot()
        guard norm.isFinite, norm > 0 else { throw FaceError.engineFailure("the face recognition model gave a zero or non-finite descriptor") }
        return v.map { Float(Double($0) / norm) }
    }
}

/// A model loaded once per process on first use (thread-safe).
final class SharedModel<Model: AnyObject>: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: Model?
    private let make: () throws -> Model

    init(_ make: @escaping () throws -> Model) { self.make = make }

    func instance() throws -> Model {
        try lock.withLock {
            if let value { return value }
            let model = try make()
            value = model
            return model
        }
    }
}
