import Foundation

// Numerics shared by the reader's stages and the specimen tools: clamping to 8 bits, a small
// linear solver, and JPEG-style quantisation (OCR-B training lines; `Augmentation` in IDVTools).

@inline(__always) package func clamp(_ v: Double) -> UInt8 { v <= 0 ? 0 : v >= 255 ? 255 : UInt8(v.rounded()) }

/// A plane projective transform (3 × 3, h33 = 1) fitted to four point pairs (direct linear solve).
package struct Homography: Sendable {
    package var m: [Double]   // row-major 3×3

    package init(matrix: [Double]) { m = matrix }

    /// The homography mapping each `from[i]` to `to[i]` (four pairs).
    package init(from: [(Double, Double)], to: [(Double, Double)]) {
        var a = [[Double]](repeating: [Double](repeating: 0, count: 9), count: 8)
        for i in 0..<4 {
            let (x, y) = from[i], (u, v) = to[i]
            a[2 * i] = [x, y, 1, 0, 0, 0, -u * x, -u * y, u]
            a[2 * i + 1] = [0, 0, 0, x, y, 1, -v * x, -v * y, v]
        }
        let sol = solveLinear(a) ?? [1, 0, 0, 0, 1, 0, 0, 0]
        m = sol + [1]
    }

    @inline(__always) package func apply(_ x: Double, _ y: Double) -> (Double, Double) {
        let w = m[6] * x + m[7] * y + m[8]
        return ((m[0] * x + m[1] * y + m[2]) / w, (m[3] * x + m[4] * y + m[5]) / w)
    }
}

/// Solves an n × (n+1) augmented system by Gaussian elimination with partial pivoting; nil if singular.
package func solveLinear(_ aug: [[Double]]) -> [Double]? {
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
package struct JPEGQuantiser {
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

    package init(quality: Int) {
        let q = max(1, min(100, quality))
        let s = q < 50 ? 5000.0 / Double(q) : 200.0 - 2.0 * Double(q)
        qy = Self.lum.map { max(1, min(255, (($0 * s + 50) / 100).rounded(.down))) }
        qc = Self.chr.map { max(1, min(255, (($0 * s + 50) / 100).rounded(.down))) }
    }

    package func apply(_ img: RGBImage) -> RGBImage {
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
