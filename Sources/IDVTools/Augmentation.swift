import DocumentReader
import Foundation

/// How a rendered specimen is turned into a "photo": placed on a background canvas with rotation
/// and perspective, then lit unevenly, blurred, noised and passed through JPEG-style quantisation.
/// All randomness comes from a `SeededRNG`, so a seed reproduces the same image.
public struct Augmentation: Codable, Sendable, Equatable {
    /// Output canvas size in pixels.
    public var canvasWidth = 1600
    public var canvasHeight = 1200
    /// In-plane rotation of the document, degrees counter-clockwise (any value, e.g. 90, 180, 7.5).
    public var rotationDegrees = 0.0
    /// Size of the (rotated) document relative to the largest that fits the canvas (0.2…1).
    public var documentScale = 0.85
    /// Perspective: each corner moved by up to this fraction of the document size.
    public var perspective = 0.0
    /// Gaussian blur σ in output pixels (0 = none).
    public var blurSigma = 0.0
    /// Additive Gaussian noise σ in grey levels (0 = none).
    public var noiseSigma = 0.0
    /// JPEG quality 1…100 for DCT quantisation with the IJG tables (nil = none).
    public var jpegQuality: Int? = nil
    /// Lighting gradient strength 0…1: brightness falls linearly across the image by this fraction.
    public var lighting = 0.0
    /// Background: false = plain grey, true = textured clutter.
    public var clutteredBackground = false

    public init() {}

    /// A random augmentation. `anyRotation` draws 0/90/180/270 plus ±8°; otherwise ±8° only.
    public static func random(using rng: inout SeededRNG, anyRotation: Bool = true) -> Augmentation {
        var a = Augmentation()
        let quarter = anyRotation ? Double(rng.next() % 4) * 90 : 0
        a.rotationDegrees = quarter + rng.uniform(-8, 8)
        a.documentScale = rng.uniform(0.6, 0.92)
        a.perspective = rng.uniform(0, 0.06)
        a.blurSigma = rng.uniform(0, 1.6)
        a.noiseSigma = rng.uniform(0, 10)
        a.jpegQuality = rng.next() % 3 == 0 ? nil : Int(rng.uniform(35, 95))
        a.lighting = rng.uniform(0, 0.5)
        a.clutteredBackground = rng.next() % 2 == 0
        return a
    }

    /// Applies the augmentation to `image`. The same `seed` gives the same result.
    public func apply(to image: RGBImage, seed: UInt64) -> RGBImage {
        var rng = SeededRNG(seed: seed ^ 0xA5A5_5A5A_1234_5678)
        let W = max(16, min(canvasWidth, 8000)), H = max(16, min(canvasHeight, 8000))
        // Destination corners: the document scaled into the canvas, rotated about the centre, jittered.
        let rot = rotationDegrees * Double.pi / 180
        let bw = abs(Double(image.width) * cos(rot)) + abs(Double(image.height) * sin(rot))
        let bh = abs(Double(image.width) * sin(rot)) + abs(Double(image.height) * cos(rot))
        let scale = min(Double(W) / bw, Double(H) / bh) * max(0.2, min(documentScale, 1.0))
        let cx = Double(W) / 2 + rng.uniform(-0.04, 0.04) * Double(W), cy = Double(H) / 2 + rng.uniform(-0.04, 0.04) * Double(H)
        let hw = Double(image.width) / 2, hh = Double(image.height) / 2
        let src = [(0.0, 0.0), (Double(image.width), 0.0), (Double(image.width), Double(image.height)), (0.0, Double(image.height))]
        var dst: [(Double, Double)] = []
        for (sx, sy) in src {
            let jx = rng.uniform(-perspective, perspective) * Double(image.width)
            let jy = rng.uniform(-perspective, perspective) * Double(image.height)
            let x = (sx - hw + jx) * scale, y = (sy - hh + jy) * scale
            // counter-clockwise on screen (y down)
            dst.append((cx + x * cos(rot) + y * sin(rot), cy - x * sin(rot) + y * cos(rot)))
        }
        let h = Homography(from: dst, to: src)   // canvas → document

        var out = [UInt8](repeating: 0, count: W * H * 3)
        // Background.
        let base = (rng.uniform(60, 200), rng.uniform(60, 200), rng.uniform(60, 200))
        var blobs: [(Double, Double, Double, Double, Double, Double)] = []
        if clutteredBackground {
            for _ in 0..<12 {
                blobs.append((rng.uniform(0, Double(W)), rng.uniform(0, Double(H)), rng.uniform(40, 300),
                              rng.uniform(-60, 60), rng.uniform(-60, 60), rng.uniform(-60, 60)))
            }
        }
        let stripe = rng.uniform(8, 30)
        for y in 0..<H {
            for x in 0..<W {
                var r = base.0, g = base.1, b = base.2
                if clutteredBackground {
                    let t = sin(Double(x + 2 * y) / stripe) * 12
                    r += t; g += t; b += t
                    for bl in blobs where abs(Double(x) - bl.0) < bl.2 && abs(Double(y) - bl.1) < bl.2 {
                        r += bl.3; g += bl.4; b += bl.5
                    }
                }
                let o = (y * W + x) * 3
                out[o] = clamp(r); out[o + 1] = clamp(g); out[o + 2] = clamp(b)
            }
        }
        // Warp the document in with bilinear sampling (supersampled edges are not needed for a corpus).
        image.pixels.withUnsafeBufferPointer { p in
            for y in 0..<H {
                for x in 0..<W {
                    let (u, v) = h.apply(Double(x) + 0.5, Double(y) + 0.5)
                    let su = u - 0.5, sv = v - 0.5
                    guard su >= -0.5, sv >= -0.5, su <= Double(image.width) - 0.5, sv <= Double(image.height) - 0.5 else { continue }
                    let x0 = max(0, min(image.width - 1, Int(su.rounded(.down)))), y0 = max(0, min(image.height - 1, Int(sv.rounded(.down))))
                    let x1 = min(x0 + 1, image.width - 1), y1 = min(y0 + 1, image.height - 1)
                    let ax = max(0, min(1, su - Double(x0))), ay = max(0, min(1, sv - Double(y0)))
                    let o = (y * W + x) * 3
                    for c in 0..<3 {
                        let v00 = Double(p[(y0 * image.width + x0) * 3 + c]), v10 = Double(p[(y0 * image.width + x1) * 3 + c])
                        let v01 = Double(p[(y1 * image.width + x0) * 3 + c]), v11 = Double(p[(y1 * image.width + x1) * 3 + c])
                        out[o + c] = clamp((v00 * (1 - ax) + v10 * ax) * (1 - ay) + (v01 * (1 - ax) + v11 * ax) * ay)
                    }
                }
            }
        }
        var img = RGBImage(width: W, height: H, pixels: out)
        if lighting > 0 {
            let ang = rng.uniform(0, 2 * Double.pi), dx = cos(ang), dy = sin(ang)
            let span = abs(dx) * Double(W) + abs(dy) * Double(H)
            let off = min(0, dx * Double(W)) + min(0, dy * Double(H))
            for y in 0..<H {
                for x in 0..<W {
                    let t = (dx * Double(x) + dy * Double(y) - off) / span   // 0…1
                    let f = 1 - lighting * t
                    let o = (y * W + x) * 3
                    for c in 0..<3 { img.pixels[o + c] = clamp(Double(img.pixels[o + c]) * f) }
                }
            }
        }
        if blurSigma > 0.05 { img = Self.gaussianBlur(img, sigma: blurSigma) }
        if noiseSigma > 0 {
            for i in 0..<img.pixels.count { img.pixels[i] = clamp(Double(img.pixels[i]) + rng.gaussian() * noiseSigma) }
        }
        if let q = jpegQuality { img = JPEGQuantiser(quality: q).apply(img) }
        return img
    }

    static func gaussianBlur(_ img: RGBImage, sigma: Double) -> RGBImage {
        let r = max(1, Int((3 * sigma).rounded(.up)))
        var k = (-r...r).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let s = k.reduce(0, +)
        k = k.map { $0 / s }
        let W = img.width, H = img.height
        var tmp = [Double](repeating: 0, count: W * H * 3)
        var out = [UInt8](repeating: 0, count: W * H * 3)
        img.pixels.withUnsafeBufferPointer { p in
            for y in 0..<H {
                for x in 0..<W {
                    for c in 0..<3 {
                        var acc = 0.0
                        for i in -r...r {
                            let xx = min(W - 1, max(0, x + i))
                            acc += k[i + r] * Double(p[(y * W + xx) * 3 + c])
                        }
                        tmp[(y * W + x) * 3 + c] = acc
                    }
                }
            }
        }
        for y in 0..<H {
            for x in 0..<W {
                for c in 0..<3 {
                    var acc = 0.0
                    for i in -r...r {
                        let yy = min(H - 1, max(0, y + i))
                        acc += k[i + r] * tmp[(yy * W + x) * 3 + c]
                    }
                    out[(y * W + x) * 3 + c] = clamp(acc)
                }
            }
        }
        return RGBImage(width: W, height: H, pixels: out)
    }
}
