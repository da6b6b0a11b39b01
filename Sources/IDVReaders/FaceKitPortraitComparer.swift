import FaceKit
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import Imaging

/// The production ``PortraitComparing``: the page's printed portrait against the chip's DG2 face,
/// each padded on a grey canvas (``ChipPortrait/padded(_:)``: both are all face), the largest face
/// of each described by FaceKit (dlib HOG detection, 5-point alignment,
/// `dlib_face_recognition_resnet_model_v1` 128-d descriptor), compared as kind `image_to_image`
/// with FaceKit's calibrated distances (`FaceMatchCalibration.table`, LFW). Evidence only; the
/// policy judges. On the specimens in `testdata/emrtd` (same holder): 0.46 (BDR) and 0.34 (NLD);
/// crossed: 0.76 and 0.76; the image-to-image line at FMR 0.1 % is 0.544.
///
/// Errors: a JPEG/PNG the decoder refuses (`ImageError`); a missing model file (`FaceError`).
public struct FaceKitPortraitComparer: PortraitComparing {
    public let engine: FaceEngine

    public init(engine: FaceEngine) { self.engine = engine }

    /// The 128-d descriptor of the largest face in `image` (JPEG/PNG bytes), nil when none.
    public func descriptor(_ image: Data) throws -> [Float]? {
        try descriptor(Imaging.Image(data: image))
    }

    /// The 128-d descriptor of the largest face in a decoded portrait, nil when none.
    public func descriptor(_ image: Imaging.Image) throws -> [Float]? {
        let faces = try engine.analyze(try ChipPortrait.padded(image), options: AnalysisOptions(landmarks68: false))
        return faces.max { $0.box.width * $0.box.height < $1.box.width * $1.box.height }?.embedding
    }

    public func compare(printed: Data, chip: Data) throws -> FaceMatchEvidence? {
        guard let a = try descriptor(printed), let b = try descriptor(chip) else { return nil }
        return try Self.evidence(a, b)
    }

    /// The evidence of two descriptors: distance, score and the calibrated image-to-image lines.
    public static func evidence(_ a: [Float], _ b: [Float]) throws -> FaceMatchEvidence {
        let c = try FaceMatcher.compare(a, b, kind: .imageToImage)
        let calibration = FaceMatchOperatingPoint.allCases.compactMap { point -> CalibratedDistance? in
            guard let p = MatchOperatingPoint(rawValue: point.rawValue) else { return nil }
            let t = FaceMatchCalibration.threshold(point, for: .imageToImage)
            return CalibratedDistance(operatingPoint: p, maxDistance: t.distance, measuredFMR: t.measuredFMR, measuredFNMR: t.measuredFNMR)
        }
        return FaceMatchEvidence(distance: c.distance, score: SelfieMatching.score(distance: c.distance), kind: .imageToImage, calibration: calibration)
    }
}
