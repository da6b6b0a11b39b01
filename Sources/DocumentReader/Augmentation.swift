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

@inline(__always) func clamp(_ v: Double) -> UInt8 { v <= 0 ? 0 : v >= 255 ? 255 : UInt8(v.rounded()) }

/// A plane projective transform (3 × 3, h33 = 1) fitted to four point pairs (direct linear solve).
struct Homography: Sendable {
    var m: [Double]   // row-major 3×3

    init(matrix: [Double]) { m = matrix }

    /// The homography mapping each `from[i]` to `to[i]` (four pairs).
    init(from: [(Double, Double)], to: [(Double, Double)]) {
        var a = [[Double]](repeating: [Double](repeating: 0, count: 9), count: 8)
        for i in 0..<4 {
            let (x, y) = from[i], (u, v) = to[i]
            a[2 * i] = [x, y, 1, 0, 0, 0, -u * x, -u * y, u]
            a[2 * i + 1] = [0, 0, 0, x, y, 1, -v * x, -v * y, v]
        }
        let sol = solveLinear(a) ?? [1, 0, 0, 0, 1, 0, 0, 0]
        m = sol + [1]
    }

    @inline(__always) func apply(_ x: Double, _ y: Double) -> (Double, Double) {
        let w = m[6] * x + m[7] * y + m[8]
        return ((m[0] * x + m[1] * y + m[2]) / w, (m[3] * x + m[4] * y + m[5]) / w)
    }
}

/// Solves an n × (n+1) augmented system by Gaussian elimination with partial pivoting; nil if singular.
func solveLinear(_ aug: [[Double]]) -> [Double]? {
    var a = aug
    let n = a.count
    for col in 0..<n {
        var piv = col
        for r in col..<n where abs(a[r][col]) > abs(a[piv][col]) { piv = r }
        guard abs(a[piv][col]) > 1e-12 else { return nil }
        a.swapAt(col, piv)
        for r in 0..<n where r != col {
            let f = a[r][col] / a[col][col]
            if f != 0 { for c in col...n { a[r][c] -= f * a[col][c] } }
        }
    }
    return (0..<n).map { a[$0][n] / a[$0][$0] }
}

/// JPEG-style lossy quantisation: YCbCr, 8 × 8 DCT-II, quantisation with the IJG (libjpeg) tables
/// scaled by quality (ITU-T T.81 Annex K), inverse DCT. Reproduces blocking and ringing artefacts
/// without producing a file.
struct JPEGQuantiser {
    let qy: [Double], qc: [Double]
    static let lum: [Double] = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
                                14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
                                49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]
    static let chr: [Double] = [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99,
                                47, 66, 99, 99, 99, 99, 99, 99] + [Double](repeating: 99, count: 32)
    static let cosTable: [Double] = (0..<64).map { i in
        let u = i / 8, x = i % 8
        return cos(Double(2 * x + 1) * Double(u) * Double.pi / 16) * (u == 0 ? (1 / 8.0).squareRoot() : (2 / 8.0).squareRoot())
    }

    init(quality: Int) {
        let q = max(1, min(100, quality))
        let s = q < 50 ? 5000.0 / Double(q) : 200.0 - 2.0 * Double(q)
        qy = Self.lum.map { max(1, min(255, (($0 * s + 50) / 100).rounded(.down))) }
        qc = Self.chr.map { max(1, min(255, (($0 * s + 50) / 100).rounded(.down))) }
    }

    func apply(_ img: RGBImage) -> RGBImage {
        let W = img.width, H = img.height, n = W * H
        var planes = [[Double]](repeating: [Double](repeating: 0, count: n), count: 3)
        for i in 0..<n {
            let r = Double(img.pixels[3 * i]), g = Double(img.pixels[3 * i + 1]), b = Double(img.pixels[3 * i + 2])
            planes[0][i] = 0.299 * r + 0.587 * g + 0.114 * b - 128
            planes[1][i] = -0.168736 * r - 0.331264 * g + 0.5 * b
            planes[2][i] = 0.5 * r - 0.418688 * g - 0.081312 * b
        }
        let C = Self.cosTable
        var block = [Double](repeating: 0, count: 64), tmp = block, coef = block
        for p in 0..<3 {
            let table = p == 0 ? qy : qc
            for by in stride(from: 0, to: H, by: 8) {
                for bx in stride(from: 0, to: W, by: 8) {
                    for y in 0..<8 { for x in 0..<8 { block[y * 8 + x] = planes[p][min(H - 1, by + y) * W + min(W - 1, bx + x)] } }
                    // forward: coef = C · block · Cᵀ
                    for u in 0..<8 { for x in 0..<8 { var s = 0.0; for y in 0..<8 { s += C[u * 8 + y] * block[y * 8 + x] }; tmp[u * 8 + x] = s } }
                    for u in 0..<8 { for v in 0..<8 { var s = 0.0; for x in 0..<8 { s += tmp[u * 8 + x] * C[v * 8 + x] }; coef[u * 8 + v] = (s / table[u * 8 + v]).rounded() * table[u * 8 + v] } }
                    // inverse: block = Cᵀ · coef · C
                    for y in 0..<8 { for v in 0..<8 { var s = 0.0; for u in 0..<8 { s += C[u * 8 + y] * coef[u * 8 + v] }; tmp[y * 8 + v] = s } }
                    for y in 0..<8 where by + y < H {
                        for x in 0..<8 where bx + x < W {
                            var s = 0.0; for v in 0..<8 { s += tmp[y * 8 + v] * C[v * 8 + x] }
                            planes[p][(by + y) * W + bx + x] = s
                        }
                    }
                }
            }
        }
        var out = [UInt8](repeating: 0, count: n * 3)
        for i in 0..<n {
            let y = planes[0][i] + 128, cb = planes[1][i], cr = planes[2][i]
            out[3 * i] = clamp(y + 1.402 * cr)
            out[3 * i + 1] = clamp(y - 0.344136 * cb - 0.714136 * cr)
            out[3 * i + 2] = clamp(y + 1.772 * cb)
        }
        return RGBImage(width: W, height: H, pixels: out)
    }
}
