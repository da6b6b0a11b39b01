import Foundation
import Imaging

/// Synthesises the ISO/IEC 30107-3 attack species "replay, screen": a bona fide video played on a
/// phone or laptop screen held in front of the selfie camera and re-captured by it.
///
/// Each output frame is the clip's frame shown on a display and seen through a camera:
/// - **display**: the frame fitted into the screen (letterboxed, as a player shows it), sampled on
///   the screen's pixel grid — RGB sub-pixel stripes with a dark matrix between them, so the
///   camera's own sampling of the grid makes moiré — under the display's transfer curve (gamma,
///   raised black level, a little desaturation) and a specular glare of the room's light;
/// - **device**: a bezel around the screen and the room behind the device (a smooth random
///   texture), unless the screen fills the camera's view;
/// - **hand**: the device wanders smoothly (translation, rotation, scale and out-of-plane tilt,
///   sums of two sinusoids, 0.2–1.2 Hz, as in `HeldPhotoAttack`);
/// - **camera**: a slight defocus and sensor noise (the caller re-encodes as JPEG).
///
/// Deterministic for a seed. Used by `idvd bench liveness` for the simulated screen-replay species
/// (the real-footage species is the shared `fake_replay_on_phone.mp4`).
public enum ScreenReplayAttack {
    /// Where the replay is shown.
    public enum Device: String, Sendable, Codable, CaseIterable {
        /// A phone held upright: a 9:19.5 screen with thin bezels, the video letterboxed.
        case phone
        /// A laptop or tablet screen: 16:10, wider bezels, the video pillarboxed.
        case laptop
        /// A screen held so close that it fills the camera's view: no bezel, no room, the video
        /// cropped to the view (the hardest case for a texture model: only the display's pixel
        /// grid, transfer curve and glare remain).
        case fillsView = "fills_view"
    }

    /// The display and the hand holding it.
    public struct Setup: Sendable {
        public var device: Device
        /// Screen width as a fraction of the camera frame's width (phone 0.45–0.6, laptop 0.8–0.95;
        /// ignored for `fillsView`, which uses 1.15).
        public var coverage: Double
        /// Screen pixel pitch in camera pixels (0.4–1.5: near or finer than the camera's own grid,
        /// so the camera aliases it into moiré).
        public var pixelPitch: Double
        /// Modulation depth of the sub-pixel grid that reaches the sensor (0.05–0.3): the camera
        /// lens's MTF at the grid frequency. The grid's own contrast is total; the lens blurs most
        /// of it away before the sensor samples it, so the moiré is faint, as in real re-captures.
        public var gridDepth: Double
        /// White-point cast of the display against the room's light: gains of red and blue
        /// (a display is usually bluer than indoor light; 0.9–1.1 each).
        public var whitePoint: (red: Double, blue: Double)
        /// Display gamma relative to the video's 2.2 encoding (1.8–2.6).
        public var gamma: Double
        /// Display black level, fraction of white (0.005–0.04).
        public var blackLevel: Double
        /// Peak added brightness of the glare (0.05–0.25 of white).
        public var glare: Double
        /// Out-of-plane tilt amplitude, degrees.
        public var tilt: Double
        /// Hand translation amplitude, fraction of the frame.
        public var shift: Double

        /// A random setup of `device` (ranges above).
        public static func random(_ device: Device, using rng: inout SplitMix64) -> Setup {
            let coverage: Double
            switch device {
            case .phone: coverage = rng.uniform(0.45, 0.6)
            case .laptop: coverage = rng.uniform(0.8, 0.95)
            case .fillsView: coverage = 1.15
            }
            return Setup(device: device, coverage: coverage, pixelPitch: rng.uniform(0.4, 1.5), gridDepth: rng.uniform(0.05, 0.3),
                         whitePoint: (rng.uniform(0.9, 1.0), rng.uniform(1.0, 1.1)), gamma: rng.uniform(1.8, 2.6),
                         blackLevel: rng.uniform(0.005, 0.04), glare: rng.uniform(0.05, 0.25), tilt: rng.uniform(5, 15),
                         shift: rng.uniform(0.01, 0.03))
        }
    }

    /// The re-captured frames of `clip` (upright RGB or grey images, one per frame at `frameRate`),
    /// each `width`×`height` (default: the first frame's size) with the setup drawn from `seed`.
    /// - Throws: `ImageError.invalidArgument` for an empty clip or a frame count above 1000.
    public static func frames(from clip: [Image], device: Device, seed: UInt64, frameRate: Double = 10,
                              width: Int? = nil, height: Int? = nil) throws -> (frames: [Image], setup: Setup) {
        guard let first = clip.first, clip.count <= 1000 else { throw ImageError.invalidArgument("a clip needs 1…1000 frames") }
        var rng = SplitMix64(seed: seed)
        let setup = Setup.random(device, using: &rng)
        let w = width ?? first.width, h = height ?? first.height
        guard w >= 32, h >= 32, w <= 4096, h <= 4096 else { throw ImageError.invalidArgument("output size must be 32…4096 a side") }

        // Screen geometry in camera pixels at rest (before the hand's motion), centred.
        let aspect: Double // screen height ÷ width
        switch setup.device {
        case .phone: aspect = 19.5 / 9
        case .laptop: aspect = 10.0 / 16
        case .fillsView: aspect = Double(h) / Double(w)
        }
        var screenW = setup.coverage * Double(w)
        var screenH = screenW * aspect
        if setup.device == .phone, screenH > 1.25 * Double(h) { // a phone is shown whole enough to see its face area
            screenH = 1.25 * Double(h); screenW = screenH / aspect
        }
        let bezel: (side: Double, top: Double) = setup.device == .phone ? (0.04 * screenW, 0.09 * screenW)
            : setup.device == .laptop ? (0.035 * screenW, 0.06 * screenW) : (0, 0)
        // Content placement inside the screen (letterbox / pillarbox; fillsView crops to cover).
        let cw = Double(first.width), ch = Double(first.height)
        let fit = setup.device == .fillsView ? max(screenW / cw, screenH / ch) : min(screenW / cw, screenH / ch)
        let contentW = cw * fit, contentH = ch * fit
        let contentX0 = (screenW - contentW) / 2, contentY0 = (screenH - contentH) / 2

        // The room behind the device: smooth colour noise, fixed for the sequence.
        let room = roomTexture(width: w, height: h, rng: &rng).map { pow(Double($0) / 255, 2.2) } // linear light
        let bezelGrey = rng.uniform(12, 45)
        let glareCentre = (x: rng.uniform(0.2, 0.8), y: rng.uniform(0.15, 0.6))
        let glareRadius = rng.uniform(0.25, 0.5)
        func wave() -> (Double) -> Double {
            let f1 = rng.uniform(0.2, 0.6), f2 = rng.uniform(0.6, 1.2)
            let p1 = rng.uniform(0, 2 * .pi), p2 = rng.uniform(0, 2 * .pi)
            return { t in 0.7 * sin(2 * .pi * f1 * t + p1) + 0.3 * sin(2 * .pi * f2 * t + p2) }
        }
        let (tx, ty, rot, sc, tiltX, tiltY) = (wave(), wave(), wave(), wave(), wave(), wave())
        // Display transfer: video value v → linear v^2.2 → shown (v^gamma) with a raised black,
        // desaturated by 8 %, then the camera's auto-exposure maps it back with 1/2.2.
        var transfer = [Double](repeating: 0, count: 256)
        for v in 0..<256 {
            let shown = setup.blackLevel + (1 - setup.blackLevel) * pow(Double(v) / 255, setup.gamma)
            transfer[v] = shown
        }
        let samples = 3 // supersampling per axis: the camera pixel integrates the screen's grid

        var out: [Image] = []
        out.reserveCapacity(clip.count)
        for (i, frame) in clip.enumerated() {
            let src = frame.rgb()
            let t = Double(i) / frameRate
            // Hand motion: device plane (centred screen coordinates, camera pixels) → camera frame.
            let angle = rot(t) * 3 * .pi / 180
            let s = 1 + sc(t) * 0.03
            let focal = Double(max(w, h))
            let ax = tiltX(t) * setup.tilt * .pi / 180, ay = tiltY(t) * setup.tilt * .pi / 180
            let forward = [s * cos(angle) * cos(ay), -s * sin(angle), tx(t) * setup.shift * Double(w),
                           s * sin(angle), s * cos(angle) * cos(ax), ty(t) * setup.shift * Double(h),
                           sin(ay) / focal, sin(ax) / focal, 1]
            guard let inv = invert(forward) else { continue }
            let glareShift = (x: 0.05 * tx(t + 0.7), y: 0.05 * ty(t + 0.3))
            var pixels = [UInt8](repeating: 0, count: w * h * 3)
            src.pixels.withUnsafeBufferPointer { sp in
                room.withUnsafeBufferPointer { rp in
                    pixels.withUnsafeMutableBufferPointer { dp in
                        for y in 0..<h {
                            for x in 0..<w {
                                var acc = (0.0, 0.0, 0.0)
                                // The glare varies slowly: evaluated once per camera pixel, at its centre.
                                let glare: Double = {
                                    let fx = Double(x) - Double(w) / 2, fy = Double(y) - Double(h) / 2
                                    let d = inv[6] * fx + inv[7] * fy + inv[8]
                                    let u = (inv[0] * fx + inv[1] * fy + inv[2]) / d + screenW / 2
                                    let v = (inv[3] * fx + inv[4] * fy + inv[5]) / d + screenH / 2
                                    let gx = u / screenW - glareCentre.x - glareShift.x, gy = v / screenH - glareCentre.y - glareShift.y
                                    return setup.glare * exp(-(gx * gx + gy * gy) / (glareRadius * glareRadius * 0.5))
                                }()
                                for sy in 0..<samples {
                                    for sx in 0..<samples {
                                        let fx = Double(x) + (Double(sx) + 0.5) / Double(samples) - 0.5 - Double(w) / 2
                                        let fy = Double(y) + (Double(sy) + 0.5) / Double(samples) - 0.5 - Double(h) / 2
                                        let d = inv[6] * fx + inv[7] * fy + inv[8]
                                        // Device-plane coordinates with the screen's top-left at (0, 0).
                                        let u = (inv[0] * fx + inv[1] * fy + inv[2]) / d + screenW / 2
                                        let v = (inv[3] * fx + inv[4] * fy + inv[5]) / d + screenH / 2
                                        if u >= 0, v >= 0, u < screenW, v < screenH {
                                            // The screen pixel and the sub-pixel stripe this point falls on.
                                            let gu = u / setup.pixelPitch, gv = v / setup.pixelPitch
                                            let pu = gu - gu.rounded(.down), pv = gv - gv.rounded(.down)
                                            let stripe = min(2, Int(pu * 3))
                                            let lit = (pu * 3 - Double(stripe)) < 0.8 && pv < 0.85 // dark matrix between cells
                                            // The content value at this screen pixel's centre.
                                            let px = (gu.rounded(.down) + 0.5) * setup.pixelPitch - contentX0
                                            let py = (gv.rounded(.down) + 0.5) * setup.pixelPitch - contentY0
                                            // The cell's displayed value per channel (black outside the video).
                                            let inside = px >= 0 && py >= 0 && px < contentW && py < contentH
                                            let qx = inside ? min(Int(px / fit), src.width - 1) : 0
                                            let qy = inside ? min(Int(py / fit), src.height - 1) : 0
                                            func cellMean(_ c: Int) -> Double {
                                                inside ? transfer[Int(sp[(qy * src.width + qx) * 3 + c])] : setup.blackLevel
                                            }
                                            // True emission: only the lit stripe's channel, at 1 / (its share of
                                            // the cell); what reaches the sensor is the cell's mean plus
                                            // `gridDepth` of that modulation (the lens blurs the rest away).
                                            let boost = 3 / (0.8 * 0.85)
                                            let depth = setup.gridDepth
                                            var rgb = (0.0, 0.0, 0.0)
                                            let m0 = cellMean(0), m1 = cellMean(1), m2 = cellMean(2)
                                            rgb.0 = m0 + depth * ((lit && stripe == 0 ? boost * m0 : 0) - m0)
                                            rgb.1 = m1 + depth * ((lit && stripe == 1 ? boost * m1 : 0) - m1)
                                            rgb.2 = m2 + depth * ((lit && stripe == 2 ? boost * m2 : 0) - m2)
                                            // The display's white point and a little desaturation, then the glare.
                                            let grey = (rgb.0 + rgb.1 + rgb.2) / 3
                                            acc.0 += (0.92 * rgb.0 + 0.08 * grey) * setup.whitePoint.red
                                            acc.1 += 0.92 * rgb.1 + 0.08 * grey
                                            acc.2 += (0.92 * rgb.2 + 0.08 * grey) * setup.whitePoint.blue
                                            acc.0 += glare; acc.1 += glare; acc.2 += glare
                                        } else if u >= -bezel.side, u < screenW + bezel.side, v >= -bezel.top, v < screenH + bezel.top {
                                            let g = bezelGrey / 255 * (1 + 0.3 * (v / max(1, screenH)))
                                            let lin = pow(g, 2.2)
                                            acc.0 += lin; acc.1 += lin; acc.2 += lin
                                        } else {
                                            let o = (y * w + x) * 3
                                            acc.0 += rp[o]; acc.1 += rp[o + 1]; acc.2 += rp[o + 2]
                                        }
                                    }
                                }
                                let n = Double(samples * samples)
                                let o = (y * w + x) * 3
                                dp[o] = encode(acc.0 / n)
                                dp[o + 1] = encode(acc.1 / n)
                                dp[o + 2] = encode(acc.2 / n)
                            }
                        }
                    }
                }
            }
            pixels = defocusAndNoise(pixels, width: w, height: h, rng: &rng)
            out.append(try Image(rgb: pixels, width: w, height: h))
        }
        return (out, setup)
    }

    /// Linear light → 8-bit sRGB-like (1/2.2), clipped.
    private static func encode(_ linear: Double) -> UInt8 {
        let v = pow(max(0, min(1, linear)), 1 / 2.2) * 255
        return UInt8(v.rounded())
    }

    /// A smooth random colour texture (bilinear upsampling of a coarse random grid).
    private static func roomTexture(width: Int, height: Int, rng: inout SplitMix64) -> [UInt8] {
        let gw = 9, gh = 7
        let base = (rng.uniform(60, 170), rng.uniform(60, 170), rng.uniform(60, 170))
        var grid = [Double](repeating: 0, count: gw * gh * 3)
        for k in 0..<(gw * gh) {
            let l = rng.uniform(-50, 50)
            grid[k * 3] = base.0 + l + rng.uniform(-15, 15)
            grid[k * 3 + 1] = base.1 + l + rng.uniform(-15, 15)
            grid[k * 3 + 2] = base.2 + l + rng.uniform(-15, 15)
        }
        var out = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            let gy = Double(y) / Double(height - 1) * Double(gh - 1)
            let y0 = min(gh - 2, Int(gy)), dy = gy - Double(y0)
            for x in 0..<width {
                let gx = Double(x) / Double(width - 1) * Double(gw - 1)
                let x0 = min(gw - 2, Int(gx)), dx = gx - Double(x0)
                for c in 0..<3 {
                    let a = grid[(y0 * gw + x0) * 3 + c], b = grid[(y0 * gw + x0 + 1) * 3 + c]
                    let d = grid[((y0 + 1) * gw + x0) * 3 + c], e = grid[((y0 + 1) * gw + x0 + 1) * 3 + c]
                    let v = (a * (1 - dx) + b * dx) * (1 - dy) + (d * (1 - dx) + e * dx) * dy
                    out[(y * width + x) * 3 + c] = UInt8(max(0, min(255, v)).rounded())
                }
            }
        }
        return out
    }

    /// A [1 2 1]/4 blur in each direction (slight defocus) and Gaussian sensor noise (σ = 2.5 levels).
    private static func defocusAndNoise(_ p: [UInt8], width: Int, height: Int, rng: inout SplitMix64) -> [UInt8] {
        var tmp = [Double](repeating: 0, count: p.count)
        for y in 0..<height {
            for x in 0..<width {
                let l = max(0, x - 1), r = min(width - 1, x + 1)
                for c in 0..<3 {
                    tmp[(y * width + x) * 3 + c] = (Double(p[(y * width + l) * 3 + c]) + 2 * Double(p[(y * width + x) * 3 + c])
                        + Double(p[(y * width + r) * 3 + c])) / 4
                }
            }
        }
        var out = p
        for y in 0..<height {
            let u = max(0, y - 1), d = min(height - 1, y + 1)
            for x in 0..<width {
                for c in 0..<3 {
                    let v = (tmp[(u * width + x) * 3 + c] + 2 * tmp[(y * width + x) * 3 + c] + tmp[(d * width + x) * 3 + c]) / 4
                    out[(y * width + x) * 3 + c] = UInt8(max(0, min(255, v + 2.5 * rng.gaussian())).rounded())
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
