internal import CVision
import Foundation
import Imaging

/// Capture-quality measures of one face, in the spirit of ISO/IEC 29794-5 (face image quality).
/// Every value has a unit; none is a pass/fail by itself (see `FaceQualityRequirements`).
public struct FaceQuality: Sendable, Hashable, Codable {
    /// Face box width, pixels.
    public var faceWidth: Double
    /// Face box height, pixels.
    public var faceHeight: Double
    /// Distance between the eye centres, pixels (ISO/IEC 19794-5 inter-eye distance).
    public var interEyeDistance: Double
    /// Variance of the 4-neighbour Laplacian of the grey face box resampled to 128×128 pixels,
    /// grey levels² (0–255 scale). Higher is sharper; out-of-focus or motion-blurred faces fall
    /// well below 100.
    public var sharpness: Double
    /// Mean grey level of the face box, 0–255.
    public var brightness: Double
    /// Standard deviation of the grey levels of the face box (RMS contrast), 0–255.
    public var contrast: Double
    /// Head pose, degrees (see `HeadPose`); nil without 68 landmarks.
    public var yaw: Double?
    public var pitch: Double?
    public var roll: Double?
    /// Eye aspect ratios (Soukupová & Čech 2016), dimensionless; nil without 68 landmarks.
    public var rightEyeAspectRatio: Double?
    public var leftEyeAspectRatio: Double?
    /// Faces the detector found in the whole image.
    public var faceCount: Int
    /// More than one face in the image.
    public var multipleFaces: Bool { faceCount > 1 }

    /// Problems against `requirements`, in a fixed order; empty when the face is acceptable.
    public func issues(_ requirements: FaceQualityRequirements = .init()) -> [FaceQualityIssue] {
        var out: [FaceQualityIssue] = []
        if multipleFaces && !requirements.allowMultipleFaces { out.append(.multipleFaces) }
        if interEyeDistance < requirements.minInterEyeDistance { out.append(.faceTooSmall) }
        if sharpness < requirements.minSharpness { out.append(.blurred) }
        if brightness < requirements.brightness.lowerBound { out.append(.tooDark) }
        if brightness > requirements.brightness.upperBound { out.append(.tooBright) }
        if contrast < requirements.minContrast { out.append(.lowContrast) }
        if let yaw, abs(yaw) > requirements.maxYaw { out.append(.headTurned) }
        if let pitch, abs(pitch) > requirements.maxPitch { out.append(.headTiltedUpOrDown) }
        if let roll, abs(roll) > requirements.maxRoll { out.append(.headTiltedSideways) }
        if let r = rightEyeAspectRatio, let l = leftEyeAspectRatio, min(r, l) < requirements.minEyeAspectRatio {
            out.append(.eyesClosed)
        }
        return out
    }
}

/// A quality problem of a face capture.
public enum FaceQualityIssue: String, Sendable, Codable, CaseIterable {
    case multipleFaces = "multiple_faces"
    case faceTooSmall = "face_too_small"
    case blurred
    case tooDark = "too_dark"
    case tooBright = "too_bright"
    case lowContrast = "low_contrast"
    case headTurned = "head_turned"
    case headTiltedUpOrDown = "head_pitched"
    case headTiltedSideways = "head_rolled"
    case eyesClosed = "eyes_closed"
}

/// Acceptance limits for `FaceQuality.issues`; configuration with documented defaults.
public struct FaceQualityRequirements: Sendable, Hashable, Codable {
    /// Minimum inter-eye distance, pixels. Default 40 (a face about 100 pixels wide; ISO/IEC
    /// 19794-5 asks 60–90 for stored portraits, selfies from phone cameras clear it easily).
    public var minInterEyeDistance: Double = 40
    /// Minimum `sharpness`, grey levels². Default 40.
    public var minSharpness: Double = 40
    /// Acceptable mean grey level. Default 50…215.
    public var brightness: ClosedRange<Double> = 50...215
    /// Minimum RMS contrast, grey levels. Default 20.
    public var minContrast: Double = 20
    /// Maximum |yaw|, degrees. Default 25.
    public var maxYaw: Double = 25
    /// Maximum |pitch|, degrees. Default 25.
    public var maxPitch: Double = 25
    /// Maximum |roll|, degrees. Default 20.
    public var maxRoll: Double = 20
    /// Minimum eye aspect ratio of the less open eye. Default 0.15.
    public var minEyeAspectRatio: Double = 0.15
    /// Accept images with more than one face. Default false.
    public var allowMultipleFaces = false

    public init() {}
}

extension FaceEngine {
    /// Quality measures of `face` in `image`; `faceCount` is how many faces the image holds.
    public func quality(of face: FaceAnalysis, in image: Image, faceCount: Int) throws -> FaceQuality {
        let gray = image.grayPixels
        guard let rect = face.box.clipped(to: image.bounds), rect.width >= 2, rect.height >= 2 else {
            throw FaceError.invalidArgument("face box lies outside the image")
        }
        var mean = 0.0, sd = 0.0, lap = 0.0
        let status = gray.withUnsafeBufferPointer {
            cv_region_statistics($0.baseAddress, Int32(image.width), Int32(image.height), Int32(rect.x), Int32(rect.y),
                                 Int32(rect.width), Int32(rect.height), 128, &mean, &sd, &lap)
        }
        guard status == CV_OK else { throw FaceError.invalidArgument("face region too small for quality measures") }
        let pose = face.pose
        let has68 = face.landmarks68.count == 68
        return FaceQuality(faceWidth: face.box.width, faceHeight: face.box.height, interEyeDistance: face.interEyeDistance,
                           sharpness: lap, brightness: mean, contrast: sd,
                           yaw: pose?.yaw, pitch: pose?.pitch, roll: pose?.roll,
                           rightEyeAspectRatio: has68 ? face.rightEyeAspectRatio : nil,
                           leftEyeAspectRatio: has68 ? face.leftEyeAspectRatio : nil,
                           faceCount: faceCount)
    }
}
