internal import CVision
import Foundation
import Imaging

/// The face detector MiniFASNet's crops are defined on: Silent-Face-Anti-Spoofing's RetinaFace
/// (MobileNet backbone, WIDER FACE; minivision-ai, Apache-2.0), a Caffe network shipped with FaceKit
/// (`Sources/FaceKit/Models/minifasnet/`, `SOURCES.md`) and run through OpenCV's dnn module the way
/// upstream's `Detection.get_bbox` runs it: the image resized to about 192² pixels keeping its
/// aspect ratio, BGR, means (104, 117, 123) subtracted.
///
/// Its boxes are taller than wide and looser than dlib's HOG boxes (which end at the eyebrows);
/// the texture models were trained on crops of *these* boxes scaled by 2.7 and 4.0
/// (`TexturePADModel.cropScale`). Thread-safe; about 3 ms of one core per call at 192².
public final class PADFaceDetector: @unchecked Sendable {
    // @unchecked: the C++ detector synchronises itself (a mutex around a pool of network copies).
    private let pointer: OpaquePointer

    /// File names and SHA-256 of the Caffe description and weights (checked at every load).
    public static let prototxt = (name: "Widerface-RetinaFace.prototxt", sha256: "9fe2f141b4baee039ed9442da2833e216af40a6ff3e639e7b39258812bcda808")
    public static let weights = (name: "Widerface-RetinaFace.caffemodel", sha256: "d08338a2c207df16a9c566f767fea67fb43ba6fff76ce11e938fe3fabefb9402")
    /// Upstream's input size: images of at least this many pixels squared are resized to about that area.
    public static let inputSide = 192

    /// Loads both files from `modelsDirectory`, each checked against its SHA-256 before parsing.
    /// - Throws: `FaceError.modelIntegrity` when a file's hash differs, `FaceError.modelUnavailable`
    ///   when one is missing or does not parse.
    public init(modelsDirectory: URL = TexturePAD.bundledModelsDirectory) throws {
        var p: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_pad_detector_load(modelsDirectory.appendingPathComponent(Self.prototxt.name).path, Self.prototxt.sha256,
                                          modelsDirectory.appendingPathComponent(Self.weights.name).path, Self.weights.sha256,
                                          &p, &message, message.count)
        guard status == CV_OK, let p else { throw FaceError(status: status, message: message) }
        pointer = p
    }

    deinit { cv_pad_detector_destroy(pointer) }

    /// A detection: the box (image pixels, exclusive right/bottom as upstream's `right − left + 1`
    /// width) and the detector's confidence (0…1).
    public struct Detection: Sendable, Hashable {
        public var box: FaceBox
        public var confidence: Double
    }

    /// Faces in `region` of an RGB image (the whole image when nil), most confident first, at most `limit`.
    /// - Throws: `FaceError.invalidArgument` for a region that does not fit the image.
    public func detect(rgb: UnsafeBufferPointer<UInt8>, width: Int, height: Int, region: PixelRect? = nil,
                       limit: Int = 8) throws -> [Detection] {
        let r = region ?? PixelRect(x: 0, y: 0, width: width, height: height)
        var out = [Float](repeating: 0, count: 5 * max(1, limit))
        var count: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_pad_detect(pointer, rgb.baseAddress, Int32(width), Int32(height), Int32(r.x), Int32(r.y), Int32(r.width),
                                   Int32(r.height), Int32(Self.inputSide), &out, Int32(max(1, limit)), &count, &message, message.count)
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return (0..<Int(count)).map { i in
            Detection(box: FaceBox(left: Double(out[5 * i]), top: Double(out[5 * i + 1]),
                                   right: Double(out[5 * i + 2]) + 1, bottom: Double(out[5 * i + 3]) + 1),
                      confidence: Double(out[5 * i + 4]))
        }
    }

    /// The detection that is the tracked face (dlib box `tracked`): the most confident one whose box
    /// holds the tracked box's centre and overlaps it by at least `minimumOverlap` of the tracked
    /// box's area; nil when none does.
    public static func matching(_ detections: [Detection], tracked: FaceBox, minimumOverlap: Double = 0.5) -> Detection? {
        let c = tracked.center
        let area = max(1, tracked.width * tracked.height)
        return detections.first { d in
            guard d.box.left <= c.x, c.x <= d.box.right, d.box.top <= c.y, c.y <= d.box.bottom else { return false }
            let w = min(d.box.right, tracked.right) - max(d.box.left, tracked.left)
            let h = min(d.box.bottom, tracked.bottom) - max(d.box.top, tracked.top)
            return w > 0 && h > 0 && w * h >= minimumOverlap * area
        }
    }

    private static let cache = Cache()

    /// The process-wide instance over the bundled files (loaded and checked once).
    public static func shared() throws -> PADFaceDetector { try cache.instance() }

    private final class Cache: @unchecked Sendable {
        private let lock = NSLock()
        private var value: PADFaceDetector?
        func instance() throws -> PADFaceDetector {
            lock.lock()
            defer { lock.unlock() }
            if let value { return value }
            let d = try PADFaceDetector()
            value = d
            return d
        }
    }
}
