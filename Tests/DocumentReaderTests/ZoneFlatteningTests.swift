@testable import DocumentReader
import Foundation
import XCTest

/// The zone flattening was rewritten for speed (#40: it took longer than Tesseract's recognition of the
/// name lines on a one-core start); it must give exactly what the implementation before gave.
final class ZoneFlatteningTests: XCTestCase {
    /// The flattening as it was before #40 (slice maxima at the edges, arrays copied per line): the reference.
    static func referenceFlattened(_ image: GreyImage, window: Int) -> GreyImage {
        let w = image.width, h = image.height, k = max(3, window | 1)
        func runningMax(_ src: [UInt8], count n: Int, stride: Int, lines: Int, lineStride: Int) -> [UInt8] {
            var out = src
            var g = [UInt8](repeating: 0, count: n), hh = [UInt8](repeating: 0, count: n)
            let r = k / 2
            for line in 0..<lines {
                let base = line * lineStride
                for i in 0..<n { g[i] = src[base + i * stride] }
                var prefix = g, suffix = g
                for i in 0..<n where i % k != 0 { prefix[i] = max(prefix[i], prefix[i - 1]) }
                var i = n - 2
                while i >= 0 { if (i + 1) % k != 0 { suffix[i] = max(suffix[i], suffix[i + 1]) }; i -= 1 }
                for i in 0..<n {
                    let lo = max(0, i - r), hi = min(n - 1, i + r)
                    hh[i] = (hi - lo + 1 >= k && hi / k != lo / k) ? max(suffix[lo], prefix[hi]) : g[lo...hi].max()!
                }
                for i in 0..<n { out[base + i * stride] = hh[i] }
            }
            return out
        }
        var bg = runningMax(image.pixels, count: w, stride: 1, lines: h, lineStride: w)
        bg = runningMax(bg, count: h, stride: w, lines: w, lineStride: 1)
        let blurred = GreyImage(width: w, height: h, pixels: bg).boxBlurred(radius: k / 2)
        var px = image.pixels
        for i in px.indices {
            let b = max(Int(blurred.pixels[i]), 24)
            px[i] = UInt8(min(255, Int(image.pixels[i]) * 255 / b))
        }
        return GreyImage(width: w, height: h, pixels: px)
    }

    func randomImage(_ w: Int, _ h: Int, seed: UInt64) -> GreyImage {
        var rng = SeededRNG(seed: seed)
        return GreyImage(width: w, height: h, pixels: (0..<(w * h)).map { _ in UInt8(truncatingIfNeeded: rng.next() >> 56) })
    }

    /// The maximum filter against brute force, and the flattening against the reference, on random
    /// images of odd shapes (narrower and shorter than the window included) and the windows in use
    /// (30 and 45 px: 3 mm at 10 and 15 px/mm).
    func testSameAsBeforeAndAsBruteForce() {
        for (i, (w, h, k)) in [(1, 1, 3), (7, 5, 3), (13, 40, 5), (40, 13, 9), (64, 48, 31), (20, 17, 31), (97, 61, 45), (860, 120, 31)].enumerated() {
            let img = randomImage(w, h, seed: UInt64(i + 1))
            let got = DocumentReader.maximumFiltered(img, window: k)
            if w * h <= 64 * 48 {
                let r = k / 2
                for y in 0..<h {
                    for x in 0..<w {
                        var m: UInt8 = 0
                        for yy in max(0, y - r)...min(h - 1, y + r) { for xx in max(0, x - r)...min(w - 1, x + r) { m = max(m, img.pixels[yy * w + xx]) } }
                        XCTAssertEqual(got[y * w + x], m, "\(w)×\(h) k \(k) at \(x),\(y)")
                    }
                }
            }
            XCTAssertEqual(DocumentReader.flattened(img, window: k).pixels, Self.referenceFlattened(img, window: k).pixels, "\(w)×\(h) k \(k)")
        }
    }
}
