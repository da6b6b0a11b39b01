import Foundation
import Imaging

/// A point in image pixels: origin top-left, `x` right, `y` down.
public struct FacePoint: Sendable, Hashable, Codable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    /// Euclidean distance in pixels.
    public func distance(to other: FacePoint) -> Double { hypot(x - other.x, y - other.y) }
    /// The mean of `points` (their centroid); the origin for an empty list.
    public static func mean(_ points: some Collection<FacePoint>) -> FacePoint {
        guard !points.isEmpty else { return FacePoint(x: 0, y: 0) }
        let n = Double(points.count)
        return FacePoint(x: points.reduce(0) { $0 + $1.x } / n, y: points.reduce(0) { $0 + $1.y } / n)
    }
}

/// A face box in image pixels; `right` and `bottom` are exclusive edges. A detector's box may
/// extend past the image borders (a face cut by the frame); `clipped(to:)` trims it.
public struct FaceBox: Sendable, Hashable, Codable {
    public var left: Double
    public var top: Double
    public var right: Double
    public var bottom: Double
    public init(left: Double, top: Double, right: Double, bottom: Double) {
        self.left = left; self.top = top; self.right = right; self.bottom = bottom
    }
    /// Width in pixels.
    public var width: Double { right - left }
    /// Height in pixels.
    public var height: Double { bottom - top }
    public var center: FacePoint { FacePoint(x: (left + right) / 2, y: (top + bottom) / 2) }
    /// The integer rectangle covering this box, trimmed to `bounds`; nil when outside it.
    public func clipped(to bounds: PixelRect) -> PixelRect? {
        let x0 = Int(left.rounded(.down)), y0 = Int(top.rounded(.down))
        let r = PixelRect(x: x0, y: y0, width: Int(right.rounded(.up)) - x0, height: Int(bottom.rounded(.up)) - y0)
        return r.intersection(bounds)
    }
    /// This box grown by `fraction` of its size on every side (0.2 adds 20 % of the width left and right).
    public func expanded(by fraction: Double) -> FaceBox {
        FaceBox(left: left - width * fraction, top: top - height * fraction,
                right: right + width * fraction, bottom: bottom + height * fraction)
    }
    /// Intersection over union with `other` (0…1).
    public func iou(_ other: FaceBox) -> Double {
        let w = max(0, min(right, other.right) - max(left, other.left))
        let h = max(0, min(bottom, other.bottom) - max(top, other.top))
        let inter = w * h
        let union = width * height + other.width * other.height - inter
        return union > 0 ? inter / union : 0
    }
}

/// Head orientation in degrees, estimated from 68 landmarks (see `FaceLandmarks.headPose`).
public struct HeadPose: Sendable, Hashable, Codable {
    /// Rotation about the vertical axis; positive when the nose points towards the image's right
    /// side (the subject turns to their left).
    public var yaw: Double
    /// Rotation about the horizontal axis; positive when the subject looks up.
    public var pitch: Double
    /// Rotation in the image plane; positive when the head tilts counter-clockwise as seen in the
    /// image (the image-right eye higher than the image-left eye).
    public var roll: Double
    public init(yaw: Double, pitch: Double, roll: Double) { self.yaw = yaw; self.pitch = pitch; self.roll = roll }
}

/// Measures on dlib's landmark layouts.
///
/// 68 points (iBUG 300-W layout): 0–16 jaw, 17–21 and 22–26 brows, 27–35 nose (30 tip), 36–41 the
/// eye on the image's left (the subject's right eye), 42–47 the eye on the image's right (the
/// subject's left eye), 48–59 outer lips, 60–67 inner lips.
/// 5 points (dlib `shape_predictor_5_face_landmarks`): 0–1 corners of the image-right eye
/// (outer, inner), 2–3 corners of the image-left eye (outer, inner), 4 below the nose.
public enum FaceLandmarks {
    /// Eye aspect ratio (Soukupová & Čech, "Real-Time Eye Blink Detection using Facial
    /// Landmarks", CVWW 2016): (‖p2−p6‖ + ‖p3−p5‖) / (2‖p1−p4‖) over the six eye points p1…p6.
    /// Dimensionless; about 0.25–0.35 for an open eye, below about 0.2 for a closed one.
    /// Returns 0 unless given exactly six points.
    public static func eyeAspectRatio(_ eye: [FacePoint]) -> Double {
        guard eye.count == 6 else { return 0 }
        let width = eye[0].distance(to: eye[3])
        guard width > 0 else { return 0 }
        return (eye[1].distance(to: eye[5]) + eye[2].distance(to: eye[4])) / (2 * width)
    }

    /// Mouth aspect ratio on the inner lips of the 68-point layout (points 60–67):
    /// (‖p61−p67‖ + ‖p62−p66‖ + ‖p63−p65‖) / (3‖p60−p64‖). Dimensionless; near 0 with the lips
    /// closed, above about 0.5 wide open. Returns 0 unless given 68 points.
    public static func mouthAspectRatio(_ points68: [FacePoint]) -> Double {
        guard points68.count == 68 else { return 0 }
        let p = points68
        let width = p[60].distance(to: p[64])
        guard width > 0 else { return 0 }
        return (p[61].distance(to: p[67]) + p[62].distance(to: p[66]) + p[63].distance(to: p[65])) / (3 * width)
    }

    /// Points 36–41 (the subject's right eye, on the image's left).
    public static func rightEye(_ points68: [FacePoint]) -> [FacePoint] { points68.count == 68 ? Array(points68[36...41]) : [] }
    /// Points 42–47 (the subject's left eye, on the image's right).
    public static func leftEye(_ points68: [FacePoint]) -> [FacePoint] { points68.count == 68 ? Array(points68[42...47]) : [] }

    /// Centres of the two eyes (image-left first) from 68 or 5 landmarks; nil for other counts.
    public static func eyeCentres(_ points: [FacePoint]) -> (FacePoint, FacePoint)? {
        switch points.count {
        case 68: return (FacePoint.mean(points[36...41]), FacePoint.mean(points[42...47]))
        case 5: return (FacePoint.mean(points[2...3]), FacePoint.mean(points[0...1]))
        default: return nil
        }
    }

    /// Distance between the eye centres in pixels (ISO/IEC 19794-5 "inter-eye distance"), or 0.
    public static func interEyeDistance(_ points: [FacePoint]) -> Double {
        guard let (a, b) = eyeCentres(points) else { return 0 }
        return a.distance(to: b)
    }

    /// A generic 3-D face (arbitrary units, x right, y up, z towards the camera) for six 68-layout
    /// points: nose tip 30, chin 8, outer eye corners 36 and 45, mouth corners 48 and 54. The
    /// widely used head-pose reference model (as in OpenCV head-pose tutorials).
    static let poseModel: [(index: Int, x: Double, y: Double, z: Double)] = [
        (30, 0, 0, 0), (8, 0, -330, -65), (36, -225, 170, -135), (45, 225, 170, -135),
        (48, -150, -150, -125), (54, 150, -150, -125),
    ]

    /// Yaw, pitch and roll in degrees from 68 landmarks; nil for other counts or a degenerate fit.
    ///
    /// Method: a scaled-orthographic (weak-perspective) camera is fitted by least squares to six
    /// landmarks and the generic 3-D model above — the first step of POSIT (DeMenthon & Davis,
    /// "Model-based object pose in 25 lines of code", IJCV 1995). The two rows of the fitted 2×3
    /// projection are normalised and orthogonalised into a rotation, whose angles are read as
    /// yaw = atan2(R13, R33), pitch = atan2(R23, √(R13² + R33²)), roll = atan2(R21, R11).
    /// Closed form, no iteration, microseconds per frame; accurate to a few degrees within about
    /// ±40° of frontal, which is what liveness head-turn checks and capture quality need.
    public static func headPose(_ points68: [FacePoint]) -> HeadPose? {
        guard points68.count == 68 else { return nil }
        let n = Double(poseModel.count)
        // Centre both point sets.
        var mx = 0.0, my = 0.0, mz = 0.0, mu = 0.0, mv = 0.0
        for m in poseModel {
            mx += m.x; my += m.y; mz += m.z
            mu += points68[m.index].x; mv -= points68[m.index].y // image y down → up
        }
        mx /= n; my /= n; mz /= n; mu /= n; mv /= n
        // Normal equations: M (2×3) = (Σ u Xᵀ) (Σ X Xᵀ)⁻¹.
        var a = [[Double]](repeating: [0, 0, 0], count: 3)
        var bu = [0.0, 0.0, 0.0], bv = [0.0, 0.0, 0.0]
        for m in poseModel {
            let x = [m.x - mx, m.y - my, m.z - mz]
            let u = points68[m.index].x - mu, v = -points68[m.index].y - mv
            for i in 0..<3 {
                for j in 0..<3 { a[i][j] += x[i] * x[j] }
                bu[i] += u * x[i]; bv[i] += v * x[i]
            }
        }
        guard let inv = invert3(a) else { return nil }
        let r1 = (0..<3).map { i in (0..<3).reduce(0.0) { $0 + inv[i][$1] * bu[$1] } }
        let r2raw = (0..<3).map { i in (0..<3).reduce(0.0) { $0 + inv[i][$1] * bv[$1] } }
        guard let n1 = normalised(r1) else { return nil }
        let dot = zip(n1, r2raw).reduce(0.0) { $0 + $1.0 * $1.1 }
        guard let n2 = normalised(zip(r2raw, n1).map { $0 - dot * $1 }) else { return nil }
        let n3 = [n1[1] * n2[2] - n1[2] * n2[1], n1[2] * n2[0] - n1[0] * n2[2], n1[0] * n2[1] - n1[1] * n2[0]]
        // R rows are n1, n2, n3: R13 = n1[2], R23 = n2[2], R33 = n3[2], R11 = n1[0], R21 = n2[0].
        let deg = 180 / Double.pi
        let yaw = atan2(n1[2], n3[2]) * deg
        let pitch = atan2(n2[2], hypot(n1[2], n3[2])) * deg
        let roll = atan2(n2[0], n1[0]) * deg
        return HeadPose(yaw: yaw, pitch: pitch, roll: roll)
    }

    private static func normalised(_ v: [Double]) -> [Double]? {
        let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).squareRoot()
        return len > 1e-12 ? v.map { $0 / len } : nil
    }

    private static func invert3(_ m: [[Double]]) -> [[Double]]? {
        let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        guard abs(det) > 1e-9 else { return nil }
        let c: [[Double]] = [
            [m[1][1] * m[2][2] - m[1][2] * m[2][1], m[0][2] * m[2][1] - m[0][1] * m[2][2], m[0][1] * m[1][2] - m[0][2] * m[1][1]],
            [m[1][2] * m[2][0] - m[1][0] * m[2][2], m[0][0] * m[2][2] - m[0][2] * m[2][0], m[0][2] * m[1][0] - m[0][0] * m[1][2]],
            [m[1][0] * m[2][1] - m[1][1] * m[2][0], m[0][1] * m[2][0] - m[0][0] * m[2][1], m[0][0] * m[1][1] - m[0][1] * m[1][0]],
        ]
        return c.map { $0.map { $0 / det } }
    }
}
