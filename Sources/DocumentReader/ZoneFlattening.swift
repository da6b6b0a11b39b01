import Foundation

// The background flattening of a rectified zone before Tesseract reads it (`DocumentReader.flattened`):
// each pixel divided by the paper's local brightness, estimated as the maximum over a square window
// then box-blurred. Tinted boxes, guilloche shading and uneven light become paper white, so that
// Tesseract's global (Otsu) threshold keeps the ink. Written for speed: on a one-core start it ran
// longer than Tesseract's recognition of the name lines (21 ms of a 860 × 620 zone, perf).

extension DocumentReader {
    /// `image` divided by its local background (`maximumFiltered` over a `window` × `window` square,
    /// `window` made odd and at least 3, then `boxBlurred` with the same radius), background floored at
    /// 24 grey levels; the result is 255 · pixel / background, clipped at 255.
    static func flattened(_ image: GreyImage, window: Int) -> GreyImage {
        let k = max(3, window | 1)
        let background = GreyImage(width: image.width, height: image.height, pixels: maximumFiltered(image, window: k)).boxBlurred(radius: k / 2)
        var px = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBufferPointer { src in
            background.pixels.withUnsafeBufferPointer { bg in
                px.withUnsafeMutableBufferPointer { out in
                    for i in 0..<out.count {
                        let b = max(Int(bg[i]), 24)
                        out[i] = UInt8(min(255, Int(src[i]) * 255 / b))
                    }
                }
            }
        }
        return GreyImage(width: image.width, height: image.height, pixels: px)
    }

    /// The maximum of `image` over the `k` × `k` square around each pixel (`k` odd), clipped at the
    /// image's edges, row-major `width` × `height` bytes. Exact, in time independent of `k`: van Herk /
    /// Gil–Werman running maxima (M. van Herk, Pattern Recognition Letters 13(7), 1992) over the line
    /// padded with `k / 2` zeros each side (zero, the least grey level, changes no maximum), cut into
    /// blocks of `k`: a window is the maximum of its first cell's suffix maximum within its block and
    /// its last cell's prefix maximum within the next. Rows first, then columns, the columns taken a
    /// whole row of cells at a time.
    static func maximumFiltered(_ image: GreyImage, window k: Int) -> [UInt8] {
        let w = image.width, h = image.height, r = k / 2
        guard w > 0, h > 0, k > 1 else { return image.pixels }
        var rows = [UInt8](repeating: 0, count: w * h)
        // Rows: one padded line at a time.
        let n = ((w + 2 * r + k - 1) / k) * k
        var line = [UInt8](repeating: 0, count: n), prefix = line, suffix = line
        image.pixels.withUnsafeBufferPointer { src in
            rows.withUnsafeMutableBufferPointer { dst in
                line.withUnsafeMutableBufferPointer { l in
                    prefix.withUnsafeMutableBufferPointer { p in
                        suffix.withUnsafeMutableBufferPointer { q in
                            for y in 0..<h {
                                for x in 0..<w { l[r + x] = src[y * w + x] }
                                var b = 0
                                while b < n {
                                    p[b] = l[b]
                                    for i in (b + 1)..<(b + k) { p[i] = max(p[i - 1], l[i]) }
                                    q[b + k - 1] = l[b + k - 1]
                                    var i = b + k - 2
                                    while i >= b { q[i] = max(q[i + 1], l[i]); i -= 1 }
                                    b += k
                                }
                                for x in 0..<w { dst[y * w + x] = max(q[x], p[x + k - 1]) }
                            }
                        }
                    }
                }
            }
        }
        // Columns: the same along y, each step a whole row of w cells (padded rows are zeros).
        let m = ((h + 2 * r + k - 1) / k) * k
        var colPrefix = [UInt8](repeating: 0, count: m * w), colSuffix = colPrefix
        var out = [UInt8](repeating: 0, count: w * h)
        rows.withUnsafeBufferPointer { src in
            colPrefix.withUnsafeMutableBufferPointer { p in
                colSuffix.withUnsafeMutableBufferPointer { q in
                    out.withUnsafeMutableBufferPointer { dst in
                        /// Row `i` of the padded column lines: the row-filtered image's row i − r, or zeros.
                        func copyRow(_ i: Int, into d: UnsafeMutableBufferPointer<UInt8>) {
                            let y = i - r
                            if y >= 0 && y < h { for x in 0..<w { d[i * w + x] = src[y * w + x] } }
                        }
                        var b = 0
                        while b < m {
                            copyRow(b, into: p)
                            for i in (b + 1)..<(b + k) {
                                copyRow(i, into: p)
                                for x in 0..<w { p[i * w + x] = max(p[i * w + x], p[(i - 1) * w + x]) }
                            }
                            copyRow(b + k - 1, into: q)
                            var i = b + k - 2
                            while i >= b {
                                copyRow(i, into: q)
                                for x in 0..<w { q[i * w + x] = max(q[i * w + x], q[(i + 1) * w + x]) }
                                i -= 1
                            }
                            b += k
                        }
                        for y in 0..<h {
                            for x in 0..<w { dst[y * w + x] = max(q[y * w + x], p[(y + k - 1) * w + x]) }
                        }
                    }
                }
            }
        }
        return out
    }
}

extension GreyImage {
    /// Mean over the (2·`radius` + 1)² square around each pixel, clipped at the edges (integral image).
    func boxBlurred(radius: Int) -> GreyImage {
        let w = width, h = height, r = max(0, radius)
        var integral = [Int](repeating: 0, count: (w + 1) * (h + 1))
        var out = [UInt8](repeating: 0, count: w * h)
        pixels.withUnsafeBufferPointer { px in
            integral.withUnsafeMutableBufferPointer { s in
                for y in 0..<h {
                    var row = 0
                    for x in 0..<w {
                        row += Int(px[y * w + x])
                        s[(y + 1) * (w + 1) + x + 1] = s[y * (w + 1) + x + 1] + row
                    }
                }
                out.withUnsafeMutableBufferPointer { o in
                    for y in 0..<h {
                        let y0 = max(0, y - r), y1 = min(h, y + r + 1)
                        for x in 0..<w {
                            let x0 = max(0, x - r), x1 = min(w, x + r + 1)
                            let sum = s[y1 * (w + 1) + x1] - s[y0 * (w + 1) + x1] - s[y1 * (w + 1) + x0] + s[y0 * (w + 1) + x0]
                            o[y * w + x] = UInt8(sum / ((y1 - y0) * (x1 - x0)))
                        }
                    }
                }
            }
        }
        return GreyImage(width: w, height: h, pixels: out)
    }
}
