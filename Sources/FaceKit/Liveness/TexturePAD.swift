internal import CVision
import Foundation
import Imaging

/// The two MiniFASNet texture presentation-attack detectors (minivision-ai/Silent-Face-Anti-Spoofing,
/// Apache-2.0; `Sources/FaceKit/Models/minifasnet/SOURCES.md`), as ONNX files shipped with FaceKit
/// and run through OpenCV's dnn module. Each classifies an 80×80 face crop into 3 classes; class 1
/// is bona fide (a live face), 0 and 2 are attacks (print, screen).
public enum TexturePADModel: String, Sendable, Codable, CaseIterable {
    /// MiniFASNetV2 on a crop of the face box × 2.7 (`2.7_80x80_MiniFASNetV2.pth`).
    case miniFASNetV2 = "minifasnetv2_27"
    /// MiniFASNetV1SE on a crop of the face box × 4.0 (`4_0_0_80x80_MiniFASNetV1SE.pth`).
    case miniFASNetV1SE = "minifasnetv1se_40"

    /// File name inside the models folder.
    public var fileName: String { rawValue + ".onnx" }

    /// SHA-256 of the ONNX file as committed (checked on the bytes parsed at every load).
    public var sha256: String {
        switch self {
        case .miniFASNetV2: return "6c73c881e0a5a1bccc993b90eea569f0677c697d7e12af7bb411c1fd15de4744"
        case .miniFASNetV1SE: return "9bdc7365cf6cb64c7df33c82ce2e0c08db46c4924409eaa9aed11ade3e31fa2f"
        }
    }

    /// Crop scale around the face detector's box (the upstream file names' prefix).
    public var cropScale: Double {
        switch self {
        case .miniFASNetV2: return 2.7
        case .miniFASNetV1SE: return 4.0
        }
    }

    /// Side of the square network input, pixels.
    public var inputSize: Int { 80 }
    /// Output classes (softmax); `bonaFideClass` is the live one.
    public var classCount: Int { 3 }
    public var bonaFideClass: Int { 1 }
}

/// What the texture models say about one face crop.
public struct TextureScore: Sendable, Hashable, Codable {
    /// Mean of the models' bona fide (class 1) softmax probabilities, 0…1. The upstream predictor
    /// sums the two softmaxes and calls a face real when class 1 is the argmax of the sum; with
    /// three classes that needs at least 1/3 here, and more than 1/2 always wins.
    public var bonaFide: Double
    /// Each model's bona fide probability, in `TexturePADModel.allCases` order.
    public var perModel: [Double]

    enum CodingKeys: String, CodingKey {
        case bonaFide = "bona_fide"
        case perModel = "per_model"
    }
}

/// Texture PAD: the MiniFASNet pair on face crops (input protocol of the upstream repository:
/// the detector's box scaled by 2.7 / 4.0 about its centre, kept inside the image, resized to
/// 80×80, raw BGR 0–255). Thread-safe; about 2 × 2.2 ms of one core per face.
///
/// What it learned is printed-photo and screen texture from the authors' (unpublished) capture
/// set-ups: it cannot see a digitally simulated print (no paper), and a screen held so close that
/// its border leaves the view fooled it on most such windows of our data. It is one cue of the
/// fused liveness evidence (`LivenessFusion`), never the only one.
public final class TexturePAD: @unchecked Sendable {
    // @unchecked: the C++ models synchronise themselves (a mutex around a pool of network copies).
    private let models: [(TexturePADModel, OpaquePointer)]
    /// The folder the ONNX files were read from.
    public let modelsDirectory: URL

    /// The models shipped with FaceKit (`Sources/FaceKit/Models/minifasnet`, a resource of this module).
    public static var bundledModelsDirectory: URL {
        Bundle.module.resourceURL!.appendingPathComponent("Models/minifasnet", isDirectory: true)
    }

    /// Loads both models from `modelsDirectory`, each checked against its SHA-256 before parsing.
    /// - Throws: `FaceError.modelIntegrity` when a file's hash differs (altered or replaced),
    ///   `FaceError.modelUnavailable` when one is missing or does not parse.
    public init(modelsDirectory: URL = TexturePAD.bundledModelsDirectory) throws {
        var loaded: [(TexturePADModel, OpaquePointer)] = []
        for model in TexturePADModel.allCases {
            var pointer: OpaquePointer?
            var message = [CChar](repeating: 0, count: 512)
            let path = modelsDirectory.appendingPathComponent(model.fileName).path
            let status = cv_pad_model_load(path, model.sha256, &pointer, &message, message.count)
            guard status == CV_OK, let pointer else {
                loaded.forEach { cv_pad_model_destroy($0.1) }
                throw FaceError(status: status, message: message)
            }
            loaded.append((model, pointer))
        }
        models = loaded
        self.modelsDirectory = modelsDirectory
    }

    deinit { models.forEach { cv_pad_model_destroy($0.1) } }

    private static let cache = Cache()

    /// The process-wide instance over the bundled models (loaded and checked once).
    public static func shared() throws -> TexturePAD { try cache.instance() }

    /// SHA-256 of a file, 64 lowercase hex digits (libsodium).
    public static func sha256(ofFile url: URL) throws -> String {
        var out = [CChar](repeating: 0, count: 65)
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_sha256_file(url.path, &out, &message, message.count)
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return messageString(out)
    }

    /// The crop a model sees for `box` in a `width`×`height` image (upstream protocol).
    public static func cropRect(width: Int, height: Int, box: FaceBox, scale: Double) -> PixelRect? {
        var x: Int32 = 0, y: Int32 = 0, w: Int32 = 0, h: Int32 = 0
        guard cv_pad_crop_box(Int32(width), Int32(height), box.left, box.top, box.right, box.bottom, scale, &x, &y, &w, &h) == CV_OK else {
            return nil
        }
        return PixelRect(x: Int(x), y: Int(y), width: Int(w), height: Int(h))
    }

    /// Scores the face in `box` (image pixels, e.g. a dlib detection or a tracked box).
    /// - Throws: `FaceError.invalidArgument` for a box that does not fit the image.
    public func score(in image: Image, box: FaceBox) throws -> TextureScore {
        let rgb = image.rgbPixels
        return try rgb.withUnsafeBufferPointer { try score(rgb: $0, width: image.width, height: image.height, box: box) }
    }

    /// `score(in:box:)` on an RGB buffer (`width` × `height` × 3 bytes, row-major), read in place.
    public func score(rgb: UnsafeBufferPointer<UInt8>, width: Int, height: Int, box: FaceBox) throws -> TextureScore {
        var per: [Double] = []
        for (model, pointer) in models {
            var p = [Float](repeating: 0, count: model.classCount)
            var message = [CChar](repeating: 0, count: 512)
            let status = cv_pad_classify(pointer, rgb.baseAddress, Int32(width), Int32(height), box.left, box.top, box.right, box.bottom,
                                         model.cropScale, Int32(model.inputSize), &p, Int32(model.classCount), &message, message.count)
            guard status == CV_OK else { throw FaceError(status: status, message: message) }
            per.append(Double(p[model.bonaFideClass]))
        }
        return TextureScore(bonaFide: per.reduce(0, +) / Double(per.count), perModel: per)
    }

    private final class Cache: @unchecked Sendable {
        // @unchecked: `value` is read and written under `lock` only.
        private let lock = NSLock()
        private var value: TexturePAD?
        func instance() throws -> TexturePAD {
            try lock.withLock {
                if let value { return value }
                let pad = try TexturePAD()
                value = pad
                return pad
            }
        }
    }
}
