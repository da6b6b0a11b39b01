import FaceKit
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import Imaging

/// The production ``PortraitComparing``: the page's printed portrait against the chip's DG2 face,
/// each padded on a grey canvas (``ChipPortrait/padded(_:)``: both are all face), the largest face
/// of each found by dlib (HOG detection, 68 landmarks) and described by FaceKit's recogniser
/// (`FaceRecognizer`, face-reidentification-retail-0095, aligned by 5 points from the 68), compared
/// as kind `image_to_image` in cosine distance with FaceKit's calibrated distances
/// (`FaceMatchCalibration`, LFW). Evidence only; the policy judges.
///
/// Errors: a JPEG/PNG the decoder refuses (`ImageError`); a missing or altered model file (`FaceError`).
public struct FaceKitPortraitComparer: PortraitComparing {
    public let engine: FaceEngine
    /// The recogniser; nil = `FaceRecognizer.shared()` (the bundled, SHA-256-checked model).
    public let recognizer: FaceRecognizer?

    public init(engine: FaceEngine, recognizer: FaceRecognizer? = nil) {
        self.engine = engine
        self.recognizer = recognizer
    }

    /// The recogniser's 256-d descriptor (unit length) of the largest face in `image` (JPEG/PNG
    /// bytes), nil when none.
    public func descriptor(_ image: Data) throws -> [Float]? {
        try descriptor(Imaging.Image(data: image))
    }

    /// The recogniser's descriptor of the largest face in a decoded portrait, nil when none.
    public func descriptor(_ image: Imaging.Image) throws -> [Float]? {
        let canvas = try ChipPortrait.padded(image)
        let faces = try engine.analyze(canvas, options: AnalysisOptions(landmarks68: true, embedding: false))
        guard let face = faces.max(by: { $0.box.width * $0.box.height < $1.box.width * $1.box.height }),
              let points = AlignmentPoints(landmarks68: face.landmarks68) else { return nil }
        return try (recognizer ?? FaceRecognizer.shared()).embedding(in: canvas, points: points)
    }

    public func compare(printed: Data, chip: Data) throws -> FaceMatchEvidence? {
        guard let a = try descriptor(printed), let b = try descriptor(chip) else { return nil }
        return try Self.evidence(a, b)
    }

    /// The evidence of two recogniser descriptors: cosine distance, score and the calibrated
    /// image-to-image lines.
    public static func evidence(_ a: [Float], _ b: [Float]) throws -> FaceMatchEvidence {
        let model = FaceDescriptorModel.faceReidentification0095
        let c = try FaceMatcher.compare(a, b, kind: .imageToImage, model: model)
        return FaceKitSelfieAnalyser.matchEvidence(distance: c.distance, score: c.similarity, kind: .imageToImage, model: model)
    }
}
