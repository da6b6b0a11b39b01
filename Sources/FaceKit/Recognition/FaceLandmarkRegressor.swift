internal import CVision
import Foundation
import Imaging

/// Intel's `landmarks-regression-retail-0009` (Open Model Zoo, Apache-2.0) through OpenCV's dnn
/// module: the 5 `AlignmentPoints` of a face from its box.
///
/// Input protocol (`Models/face-reid-0095/SOURCES.md`): the face box resampled (bilinear) to
/// 48 × 48, BGR with raw 0–255 values, NCHW; output 10 values, the (x, y) of the left eye, right
/// eye, nose tip, left and right mouth corner, each in 0…1 of the box. The ONNX file ships with
/// FaceKit and is SHA-256-checked at every load like `FaceRecognizer`'s. About 0.5 ms of one core
/// per face.
public final class FaceLandmarkRegressor: @unchecked Sendable {
    // @unchecked: the C++ network synchronises itself (a mutex around a pool of copies).
    private let net: OpaquePointer
    /// The ONNX file read.
    public let modelFile: URL

    /// File name of the shipped ONNX (opset 11, fp32, converted from Intel's IR by `ir2onnx.py`).
    public static let fileName = "landmarks-regression-retail-0009_opset11_fp32.onnx"
    /// SHA-256 of the shipped ONNX file, checked on the bytes parsed at every load.
    public static let sha256 = "2346f7fbdc3a27aef7b64fc29a3ba33bc7d930409e3fad8f377860d493ae6e01"
    /// Side of the square input, pixels.
    public static let inputSize = 48

    /// Loads the model from `modelsDirectory` (default: FaceKit's), checked against `sha256`.
    /// - Throws: `FaceError.modelIntegrity` (hash differs), `FaceError.modelUnavailable` (missing,
    ///   does not parse).
    public init(modelsDirectory: URL = FaceRecognizer.bundledModelsDirectory) throws {
        modelFile = modelsDirectory.appendingPathComponent(Self.fileName)
        var pointer: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_net_load(modelFile.path, Self.sha256, "landmark regression model", &pointer, &message, message.count)
        guard status == CV_OK, let pointer else { throw FaceError(status: status, message: message) }
        net = pointer
    }

    deinit { cv_net_destroy(net) }

    private static let cache = SharedModel<FaceLandmarkRegressor> { try FaceLandmarkRegressor() }

    /// The process-wide regressor over the bundled model (loaded and checked once).
    public static func shared() throws -> FaceLandmarkRegressor { try cache.instance() }

    /// The 5 points of the face in `box` (image pixels; the box may extend past the image).
    /// - Throws: `FaceError.invalidArgument` for a box under 4 pixels or not finite.
    public func points(in image: Image, box: FaceBox) throws -> AlignmentPoints {
        let rgb = image.rgbPixels
        var xy = [Double](repeating: 0, count: 10)
        var message = [CChar](repeating: 0, count: 512)
        let status = rgb.withUnsafeBufferPointer {
            cv_landmarks_regress(net, $0.baseAddress, Int32(image.width), Int32(image.height), box.left, box.top, box.right, box.bottom,
                                 Int32(Self.inputSize), 5, &xy, &message, message.count)
        }
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return try AlignmentPoints((0..<5).map { FacePoint(x: xy[2 * $0], y: xy[2 * $0 + 1]) })
    }

    /// The network's 10 raw outputs (x, y in 0…1 of the crop) on a 48 × 48 crop.
    /// - Throws: `FaceError.invalidArgument` for another size.
    public func rawOutputs(crop: Image) throws -> [Float] {
        guard crop.width == Self.inputSize, crop.height == Self.inputSize else {
            throw FaceError.invalidArgument("the crop is \(Self.inputSize)×\(Self.inputSize), got \(crop.width)×\(crop.height)")
        }
        var out = [Float](repeating: 0, count: 10)
        var message = [CChar](repeating: 0, count: 512)
        let status = crop.rgb().pixels.withUnsafeBufferPointer {
            cv_landmarks_regress_crop(net, $0.baseAddress, Int32(Self.inputSize), 5, &out, &message, message.count)
        }
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return out
    }
}
