import Foundation

/// The measurements liveness rests on, as pure functions of landmark and pixel data (so they can be
/// tested and calibrated on their own).
public enum LivenessCues {
    // MARK: Planar (rigid-picture) motion

    /// A 3×3 plane projective transform (homography), row-major, `h[8]` = 1.
    public struct Homography: Sendable, Hashable {
        public var h: [Double]
        public func apply(_ p: FacePoint) -> FacePoint {
            let w = h[6] * p.x + h[7] * p.y + h[8]
            let ww = abs(w) < 1e-12 ? 1e-12 : w
            return FacePoint(x: (h[0] * p.x + h[1] * p.y + h[2]) / ww, y: (h[3] * p.x + h[4] * p.y + h[5]) / ww)
        }
    }

    /// The homography best mapping `from` onto `to` (at least four point pairs): the normalised
    /// direct linear transform (Hartley & Zisserman, "Multiple View Geometry", 2nd ed., alg. 4.2)
    /// solved by least squares with h₃₃ = 1 on Hartley-normalised coordinates. nil when degenerate.
    public static func fitHomography(from: [FacePoint], to: [FacePoint]) -> Homography? {
        guard from.count == to.count, from.count >= 4 else { return nil }
        guard let (na, ta) = normalisation(from), let (nb, tb) = normalisation(to) else { return nil }
        // Normal equations AᵀA x = Aᵀb for the 8 unknowns.
        var ata = [Double](repeating: 0, count: 64)
        var atb = [Double](repeating: 0, count: 8)
        for (p, q) in zip(na, nb) {
            let rows: [([Double], Double)] = [
                ([p.x, p.y, 1, 0, 0, 0, -q.x * p.x, -q.x * p.y], q.x),
                ([0, 0, 0, p.x, p.y, 1, -q.y * p.x, -q.y * p.y], q.y),
            ]
            for (r, b) in rows {
                for i in 0..<8 {
                    atb[i] += r[i] * b
                    for j in 0..<8 { ata[i * 8 + j] += r[i] * r[j] }
                }
            }
        }
        guard let x = solve(ata, atb, n: 8) else { return nil }
        let hn = x + [1]
        // Denormalise: H = Tb⁻¹ · Hn · Ta.
        let tbInv = [1 / tb[0], 0, -tb[2] / tb[0], 0, 1 / tb[0], -tb[5] / tb[0], 0, 0, 1]
        var h = multiply(multiply(tbInv, hn), ta)
        guard abs(h[8]) > 1e-12 else { return nil }
        h = h.map { $0 / h[8] }
        return Homography(h: h)
    }

    /// RMS distance between `to` and `from` mapped by the best homography, divided by `scale`
    /// (e.g. the inter-eye distance). A flat picture moved, tilted or bent little gives only the
    /// landmark detector's noise; a live face turning, talking or blinking gives more.
    public static func planarResidual(from: [FacePoint], to: [FacePoint], scale: Double) -> Double? {
        planarFit(from: from, to: to, scale: scale)?.residual
    }

    /// The best homography's fit of `from` onto `to`, both in units of `scale` (e.g. the inter-eye
    /// distance): `residual`, the RMS distance between `to` and `from` mapped by it (what no plane
    /// explains: a live face turning, talking, blinking); `displacement`, the RMS distance each
    /// point of `from` is carried by it (how far the face moved *as a plane*: translation,
    /// rotation, scaling, tilt). A still face gives neither; a print or a screen moved by a hand
    /// gives displacement without residual. nil when no homography fits (fewer than 4 points,
    /// degenerate points, `scale` ≤ 0).
    public static func planarFit(from: [FacePoint], to: [FacePoint], scale: Double) -> (residual: Double, displacement: Double)? {
        guard scale > 0, let hom = fitHomography(from: from, to: to) else { return nil }
        var residual = 0.0, displacement = 0.0
        for (p, q) in zip(from, to) {
            let m = hom.apply(p)
            residual += (m.x - q.x) * (m.x - q.x) + (m.y - q.y) * (m.y - q.y)
            displacement += (m.x - p.x) * (m.x - p.x) + (m.y - p.y) * (m.y - p.y)
        }
        let n = Double(from.count)
        return ((residual / n).squareRoot() / scale, (displacement / n).squareRoot() / scale)
    }

    /// Translates to the centroid and scales to mean distance √2; returns the points and the 3×3 transform.
    private static func normalisation(_ points: [FacePoint]) -> ([FacePoint], [Double])? {
        let c = FacePoint.mean(points)
        let meanDist = points.reduce(0.0) { $0 + $1.distance(to: c) } / Double(points.count)
        guard meanDist > 1e-9 else { return nil }
        let s = 2.0.squareRoot() / meanDist
        let t = [s, 0, -s * c.x, 0, s, -s * c.y, 0, 0, 1]
        return (points.map { FacePoint(x: s * ($0.x - c.x), y: s * ($0.y - c.y)) }, t)
    }

    private static func multiply(_ a: [Double], _ b: [Double]) -> [Double] {
        (0..<9).map { k in let (i, j) = (k / 3, k % 3); return (0..<3).reduce(0.0) { $0 + a[i * 3 + $1] * b[$1 * 3 + j] } }
    }

    /// Gaussian elimination with partial pivoting; nil when singular.
    private static func solve(_ a: [Double], _ b: [Double], n: Int) -> [Double]? {
        var m = a, v = b
        for col in 0..<n {
            var pivot = col
            for r in col..<n where abs(m[r * n + col]) > abs(m[pivot * n + col]) { pivot = r }
            guard abs(m[pivot * n + col]) > 1e-12 else { return nil }
            if pivot != col {
                for k in 0..<n { m.swapAt(col * n + k, pivot * n + k) }
                v.swapAt(col, pivot)
            }
            for r in (col + 1)..<n {
                let f = m[r * n + col] / m[col * n + col]
                if f == 0 { continue }
                for k in col..<n { m[r * n + k] -= f * m[col * n + k] }
                v[r] -= f * v[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for r in stride(from: n - 1, through: 0, by: -1) {
            var s = v[r]
            for k in (r + 1)..<n { s -= m[r * n + k] * x[k] }
            x[r] = s / m[r * n + r]
        }
        return x.allSatisfy(\.isFinite) ? x : nil
    }

    // MARK: Blinks

    /// Genuine blinks in an eye-aspect-ratio series (nil = no tracked face in that frame).
    ///
    /// The open-eye level is the series' median. A blink is a run of frames below
    /// `open × (1 − minimumDepth)`, lasting at most `maximumFrames`, with an open frame
    /// (at least `open × (1 − minimumDepth / 2)`) within two frames before and after it — dip and
    /// recovery (Soukupová & Čech 2016, with a per-sequence open level instead of a fixed 0.2).
    public static func blinks(ear: [Double?], minimumDepth: Double, maximumFrames: Int) -> (blinks: [BlinkEvent], deepestDip: Double) {
        let values = ear.compactMap { $0 }.filter { $0 > 0 }
        guard values.count >= 3 else { return ([], 0) }
        let open = median(values)
        guard open > 0 else { return ([], 0) }
        let closed = open * (1 - minimumDepth)
        let reopened = open * (1 - minimumDepth / 2)
        let deepest = values.map { 1 - $0 / open }.max() ?? 0
        var events: [BlinkEvent] = []
        var i = 0
        while i < ear.count {
            guard let e = ear[i], e < closed else { i += 1; continue }
            var j = i
            var low = e
            while j + 1 < ear.count, let n = ear[j + 1], n < closed { j += 1; low = min(low, n) }
            let before = ear[max(0, i - 2)..<i].contains { ($0 ?? 0) >= reopened }
            let after = ear[(j + 1)..<min(ear.count, j + 3)].contains { ($0 ?? 0) >= reopened }
            if before, after, j - i + 1 <= maximumFrames {
                events.append(BlinkEvent(startFrame: i, endFrame: j, depth: 1 - low / open))
            }
            i = j + 1
        }
        return (events, max(0, deepest))
    }

    // MARK: Head turns (active challenges)

    /// A series after a 3-frame running median (nil where the frame or both neighbours are
    /// missing; at the ends, the median of what is there). Removes one-frame pose glitches.
    public static func runningMedian(_ series: [Double?]) -> [Double?] {
        series.indices.map { i in
            guard series[i] != nil else { return nil }
            let window = (max(0, i - 1)...min(series.count - 1, i + 1)).compactMap { series[$0] }
            return median(window)
        }
    }

    /// The frame where a deliberate head turn of the challenged direction completes, or nil.
    ///
    /// `yaw` is the (smoothed) yaw series in degrees, `direction` +1 for the subject's left
    /// (`TURN_LEFT`, yaw rising), −1 for their right. The turn is the first frame after `after`
    /// from which the yaw stays at least `degrees` beyond `baseline` in that direction for
    /// `holdFrames` consecutive frames; and up to then the head must not have swung the other
    /// way by half as much — natural head motion that sways both ways, as a replayed talking-face
    /// video does, is not an answer to one direction. Returns the first frame of the hold.
    public static func turn(yaw: [Double?], after: Int, baseline: Double, direction: Double, degrees: Double, holdFrames: Int) -> Int? {
        let hold = max(1, holdFrames)
        var start = max(0, after + 1)
        while start + hold <= yaw.count {
            let held = (start..<(start + hold)).allSatisfy { k in yaw[k].map { direction * ($0 - baseline) >= degrees } ?? false }
            if held {
                let swungBack = yaw[0..<(start + hold)].contains { v in v.map { direction * ($0 - baseline) <= -degrees / 2 } ?? false }
                return swungBack ? nil : start
            }
            start += 1
        }
        return nil
    }

    // MARK: Facial action (expression dynamics)

    /// How much a facial aspect ratio changes over a sequence: the spread between the 10th and
    /// 90th percentiles of the series after a 3-frame running median (nil = no tracked face; a
    /// frame whose neighbours are not all measured is left out). Unit: that of the series (e.g.
    /// inner-lip mouth aspect ratio); 0 with fewer than three filtered values.
    ///
    /// The idea is the facial-action cue of motion-based PAD (e.g. Kollreider et al., "Real-time
    /// face detection and motion analysis with application in liveness assessment", IEEE TIFS
    /// 2007; Pan et al., ICCV 2007): a live face talks, smiles, narrows or opens its eyes; a
    /// picture's aspect ratios only change by the perspective of a tilt (a 15° tilt changes a
    /// ratio by ~3.4 %) and the landmark detector's jitter. The running median removes one-frame
    /// landmark glitches (which held pictures show too); the percentile spread ignores the rest of
    /// the outliers, so a change must last a few frames (speech and expressions do).
    public static func actionSpread(_ series: [Double?]) -> Double {
        var filtered: [Double] = []
        for i in series.indices where i >= 1 && i + 1 < series.count {
            guard let a = series[i - 1], let b = series[i], let c = series[i + 1],
                  a.isFinite, b.isFinite, c.isFinite else { continue }
            filtered.append([a, b, c].sorted()[1])
        }
        guard filtered.count >= 3 else { return 0 }
        return max(0, percentile(filtered, 0.9) - percentile(filtered, 0.1))
    }

    // MARK: Sharpness

    /// Variance of the 4-neighbour Laplacian over a greyscale buffer (grey levels²): a standard
    /// focus measure (Pech-Pacheco et al., ICPR 2000). 0 for images smaller than 3×3.
    public static func laplacianVariance(gray: [UInt8], width: Int, height: Int) -> Double {
        guard width >= 3, height >= 3, gray.count >= width * height else { return 0 }
        var sum = 0.0, sumSq = 0.0
        var n = 0.0
        gray.withUnsafeBufferPointer { g in
            for y in 1..<(height - 1) {
                let row = y * width
                for x in 1..<(width - 1) {
                    let c = Int(g[row + x])
                    let l = Int(g[row + x - 1]) + Int(g[row + x + 1]) + Int(g[row - width + x]) + Int(g[row + width + x]) - 4 * c
                    let d = Double(l)
                    sum += d; sumSq += d * d; n += 1
                }
            }
        }
        let mean = sum / n
        return max(0, sumSq / n - mean * mean)
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The value below which `fraction` (0…1) of `values` lie (nearest rank).
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let s = values.sorted()
        let rank = Int((fraction * Double(s.count - 1)).rounded())
        return s[min(max(rank, 0), s.count - 1)]
    }
}
