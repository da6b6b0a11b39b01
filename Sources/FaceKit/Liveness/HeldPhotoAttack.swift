import Foundation
import Imaging

/// Synthesises the ISO/IEC 30107-3 attack species "print, held": a still photo held in front of
/// the camera by hand. Each frame is the photo under a smoothly wandering perspective transform
/// (translation, in-plane rotation, scale and out-of-plane tilt of the held sheet), with slight
/// lighting drift, occasional motion blur and sensor noise, on a plain background where the
/// sheet does not cover the frame. Deterministic for a given seed.
///
/// Used for PAD tests and the `idvd bench liveness` APCER of that species; `idvd liveness
/// make-attack` writes such a sequence as JPEG frames.
public enum HeldPhotoAttack {
    /// The attack's parameters (amplitudes of the hand's wobble).
    public struct Wobble: Sendable, Hashable {
        /// Translation, fraction of the frame size. Default 0.04.
        public var shift: Double = 0.04
        /// In-plane rotation, degrees. Default 4.
        public var rotation: Double = 4
        /// Scale change, fraction. Default 0.05.
        public var scale: Double = 0.05
        /// Out-of-plane tilt about each axis, degrees. Default 15.
        public var tilt: Double = 15
        /// Lighting gain change, fraction. Default 0.08.
        public var gain: Double = 0.08
        /// Probability a frame is motion-blurred. Default 0.25.
        public var blurProbability: Double = 0.25
        public init() {}
    }

    /// `count` frames (at `frameRate` fps) of `photo` held by hand, each at most `maxDimension`
    /// pixels on its long side.
    /// - Throws: `ImageError.invalidArgument` for a count outside 1…1000.
    public static func frames(from photo: Image, count: Int = 30, seed: UInt64 = 1, frameRate: Double = 10,
                              maxDimension: Int = 512, wobble: Wobble = Wobble()) throws -> [Image] {
        guard (1...1000).contains(count) else { throw ImageError.invalidArgument("frame count must be 1…1000") }
        let src = try photo.rgb().resized(maxDimension: maxDimension)
        let (w, h) = (src.width, src.height)
        var rng = SplitMix64(seed: seed)
        // Each parameter wanders as a sum of two sinusoids (0.2–1.2 Hz), random phases.
        func wave() -> (Double) -> Double {
            let f1 = Double.random(in: 0.2...0.6, using: &rng), f2 = Double.random(in: 0.6...1.2, using: &rng)
            let p1 = Double.random(in: 0...(2 * .pi), using: &rng), p2 = Double.random(in: 0...(2 * .pi), using: &rng)
            return { t in 0.7 * sin(2 * .pi * f1 * t + p1) + 0.3 * sin(2 * .pi * f2 * t + p2) }
        }
        let (tx, ty, rot, sc, tiltX, tiltY, gain) = (wave(), wave(), wave(), wave(), wave(), wave(), wave())
        let background = UInt8.random(in: 60...170, using: &rng)
        var out: [Image] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            let t = Double(i) / frameRate
            let cx = Double(w) / 2, cy = Double(h) / 2
            let angle = rot(t) * wobble.rotation * .pi / 180
            let s = 1.08 + sc(t) * wobble.scale
            // Out-of-plane tilt as a projective term about the centre (small-angle pinhole model,
            // focal length about the frame's long side).
            let focal = Double(max(w, h))
            let ax = tiltX(t) * wobble.tilt * .pi / 180, ay = tiltY(t) * wobble.tilt * .pi / 180
            // Forward map, photo (centred) → frame (centred): x' = (A·x) / (1 + gx·x + gy·y).
            let a = [s * cos(angle) * cos(ay), -s * sin(angle), s * sin(angle), s * cos(angle) * cos(ax)]
            let gx = sin(ay) / focal, gy = sin(ax) / focal
            let forward = [a[0], a[1], tx(t) * wobble.shift * Double(w),
                           a[2], a[3], ty(t) * wobble.shift * Double(h),
                           gx, gy, 1]
            guard let inverse = invert(forward) else { continue }
            let g = 1 + gain(t) * wobble.gain
            let blur = Double.random(in: 0..<1, using: &rng) < wobble.blurProbability
            var pixels = [UInt8](repeating: 0, count: w * h * 3)
            src.pixels.withUnsafeBufferPointer { sp in
                pixels.withUnsafeMutableBufferPointer { dp in
                    for y in 0..<h {
                        for x in 0..<w {
                            let fx = Double(x) - cx, fy = Double(y) - cy
                            let d = inverse[6] * fx + inverse[7] * fy + inverse[8]
                            let u = (inverse[0] * fx + inverse[1] * fy + inverse[2]) / d + cx
                            let v = (inverse[3] * fx + inverse[4] * fy + inverse[5]) / d + cy
                            let o = (y * w + x) * 3
                            guard u >= 0, v >= 0, u < Double(w - 1), v < Double(h - 1) else {
                                dp[o] = background; dp[o + 1] = background; dp[o + 2] = background
                                continue
                            }
                            let x0 = Int(u), y0 = Int(v)
                            let du = u - Double(x0), dv = v - Double(y0)
                            let i00 = (y0 * w + x0) * 3, i10 = i00 + 3, i01 = i00 + w * 3, i11 = i01 + 3
                            for c in 0..<3 {
                                let top = Double(sp[i00 + c]) * (1 - du) + Double(sp[i10 + c]) * du
                                let bottom = Double(sp[i01 + c]) * (1 - du) + Double(sp[i11 + c]) * du
                                let value = (top * (1 - dv) + bottom * dv) * g
                                dp[o + c] = UInt8(max(0, min(255, value.rounded())))
                            }
                        }
                    }
                }
            }
            if blur { pixels = horizontalBlur(pixels, width: w, height: h, radius: 2) }
            // Sensor noise, ±3 grey levels.
            for k in stride(from: 0, to: pixels.count, by: 1) where k % 7 == 0 {
                let n = Int.random(in: -3...3, using: &rng)
                pixels[k] = UInt8(max(0, min(255, Int(pixels[k]) + n)))
            }
            out.append(try Image(rgb: pixels, width: w, height: h))
        }
        return out
    }

    private static func horizontalBlur(_ p: [UInt8], width: Int, height: Int, radius: Int) -> [UInt8] {
        var out = p
        let n = 2 * radius + 1
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<3 {
                    var sum = 0
                    for k in -radius...radius { sum += Int(p[(y * width + min(width - 1, max(0, x + k))) * 3 + c]) }
                    out[(y * width + x) * 3 + c] = UInt8(sum / n)
                }
            }
        }
        return out
    }

    private static func invert(_ m: [Double]) -> [Double]? {
        let det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6])
        guard abs(det) > 1e-12 else { return nil }
        let c = [m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
                 m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
                 m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3]]
        return c.map { $0 / det }
    }
}
