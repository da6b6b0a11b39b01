import Foundation

/// Specialists for OCR-B glyphs that the linear classifier (`OCRBClassifier`) confuses in blurred
/// photos, each deciding within one group (`GlyphShapeModel.Group`) from a few shape figures
/// measured on the glyph's own ink box.
///
/// **Round glyphs** `D`, `O`, `C`, `0`, `Q` (in a name no check digit can settle them). The shape facts it measures are those that ISO 1073-2 (OCR-B) draws the five glyphs by:
/// `D` is a straight vertical stem on the left with square top-left and bottom-left corners and a
/// round right side; `O` is a closed oval, symmetric left/right and top/bottom, with round corners;
/// `C` is the left part of that oval, open on the right; `0` is an oval narrower than `O`; `Q` is
/// the `O` with a tail out of its bottom right. On the cell sampled from the source image at its
/// native resolution (about one sample per pixel, at least 24 across the cap height), the glyph's
/// ink box is found and five figures are taken in its own coordinates (`measure`):
///
/// 1. left-minus-right corner ink (square corners on the left: `D` high, `O`/`0`/`C` near 0),
/// 2. mean corner ink (square-cornered glyphs higher),
/// 3. how far the left edge recedes at the top and bottom relative to the middle (0 for a
///    straight stem, positive for an oval),
/// 4. ink in the middle of the right side (low for the open `C`),
/// 5. width over height (`0` narrower than `O`).
///
/// **Barred glyphs** `E`, `F` (a country code read `FSP` for `ESP` is as confident as it is wrong):
/// ISO 1073-2 draws `E` as `F` with a bottom bar along the baseline; the figures are the ink along
/// the bottom fifth of the box right of the stem (high for `E`, empty for `F`), along the top
/// fifth (both) and in the middle arm (both).
///
/// Their class-conditional distributions are Gaussians fitted on rendered training cells (the
/// classifier's own training lines, `OCRBClassifier.init`), so the specialist's output is a
/// likelihood per class; `rerank` multiplies it into the classifier's posterior when the two best
/// classes both belong to one group.
public struct GlyphShapeModel: Sendable {
    /// The glyph groups, each decided by its own figures.
    public enum Group: CaseIterable, Sendable {
        case round, bar
        /// The glyphs the specialist decides between.
        public var glyphs: [Character] {
            switch self {
            case .round: return ["D", "O", "C", "0", "Q"]
            case .bar: return ["E", "F"]
            }
        }
        var dimension: Int { self == .round ? 5 : 3 }
        /// The group holding both of the two best classes of `ranked`, if any.
        package static func of(_ ranked: [(Character, Double)]) -> Group? {
            guard ranked.count >= 2 else { return nil }
            return allCases.first { $0.glyphs.contains(ranked[0].0) && $0.glyphs.contains(ranked[1].0) }
        }
    }
    let group: Group
    /// Round glyphs at a smaller cap height (pixels) are not measured: below it a corner square
    /// (¼ of the box width × ⅕ of its height) is under one pixel. On held-out rendered cells (`idvd
    /// bench ocrb`, seed 999, 12 lines per pitch) the specialist turned 527 right readings of the 558
    /// round-glyph cells whose two best classes were round into 533 with this floor, 530 with 7 px
    /// and 529 with 9 px; the real specimen 100_id-mac (cap 8 px) reads `CHONG` with it, `OHONG` at 9.
    static let minimumCapHeight = 5.0
    /// Barred glyphs (E/F) at a smaller cap height are not measured: the bottom bar is one stroke
    /// (about an eighth of the cap height in OCR-B), so below 16 px it is under 2 px and a photo's
    /// blur (σ 1–1.5 px in the generated corpus, `Augmentation`) fills the gap above it. Measured:
    /// on the real French passport specimen (cap 7.6 px) its E's bottom-bar figure (0.35–0.41) fell
    /// between the rendered F's and E's and the specialist read `CHRISTOPHF`; the rendered held-out
    /// cells have no E/F the classifier misreads (`idvd bench ocrb`), so there the floor costs nothing.
    static let minimumBarCapHeight = 16.0
    /// The smallest cap height (pixels) at which `group` is measured.
    static func minimumCapHeight(_ group: Group) -> Double { group == .bar ? minimumBarCapHeight : minimumCapHeight }

    /// Per glyph: mean and the inverse and log-determinant of the covariance of `measure`.
    let means: [[Double]]
    let inverses: [[Double]]
    let logDets: [Double]

    /// A specialist from fitted parameters (`OCRBParameters`).
    init(group: Group, means: [[Double]], inverses: [[Double]], logDets: [Double]) {
        self.group = group; self.means = means; self.inverses = inverses; self.logDets = logDets
    }

    /// Fits one Gaussian per glyph (full covariance, shrunk by 10 % towards its diagonal plus a
    /// floor of 10⁻⁴ per figure so that no figure is trusted beyond a 1 % spread).
    init(_ group: Group, samples: [[[Double]]]) {
        self.group = group
        let d = group.dimension
        var m: [[Double]] = [], inv: [[Double]] = [], ld: [Double] = []
        for s in samples {
            let n = Double(max(1, s.count))
            let mu = (0..<d).map { j in s.reduce(0.0) { $0 + $1[j] } / n }
            var cov = [Double](repeating: 0, count: d * d)
            for x in s { for a in 0..<d { for b in 0..<d { cov[a * d + b] += (x[a] - mu[a]) * (x[b] - mu[b]) / max(1, n - 1) } } }
            for a in 0..<d { for b in 0..<d where a != b { cov[a * d + b] *= 0.9 }; cov[a * d + a] += 1e-4 }
            let l = OCRBClassifier.cholesky(cov, d)
            var logDet = 0.0
            for a in 0..<d { logDet += 2 * log(l[a * d + a]) }
            var inverse = [Double](repeating: 0, count: d * d)
            for a in 0..<d {
                var e = [Double](repeating: 0, count: d); e[a] = 1
                let col = OCRBClassifier.choleskySolve(l, d, e)
                for b in 0..<d { inverse[b * d + a] = col[b] }
            }
            m.append(mu); inv.append(inverse); ld.append(logDet)
        }
        means = m; inverses = inv; logDets = ld
    }

    /// log N(x | glyph k), per glyph of `group.glyphs`.
    func logLikelihoods(_ x: [Double]) -> [Double] {
        let d = group.dimension
        return (0..<means.count).map { k in
            let diff = (0..<d).map { x[$0] - means[k][$0] }
            var q = 0.0
            for a in 0..<d { for b in 0..<d { q += diff[a] * inverses[k][a * d + b] * diff[b] } }
            return -0.5 * q - 0.5 * logDets[k]
        }
    }

    /// The group's shape figures of cell `index` of `g` (see the type's documentation), or nil when
    /// the cell is too small or holds no glyph box.
    package static func measure(_ group: Group, _ img: GreyImage, _ g: LineGeometry, index: Int, dark: Double, light: Double) -> [Double]? {
        guard g.capHeight >= minimumCapHeight(group), light > dark, g.pitch > 0 else { return nil }
        let (cx, cy) = g.centre(Double(index))
        let ux = g.dirX, uy = g.dirY, nx = -g.dirY, ny = g.dirX
        let inv = 1 / (light - dark)
        let step = min(1.0, g.capHeight / 24)
        let halfW = 0.65 * g.pitch, halfH = 0.8 * g.capHeight
        let W = Int(2 * halfW / step) + 1, H = Int(2 * halfH / step) + 1
        var v = [Double](repeating: 0, count: W * H)
        for r in 0..<H {
            let b = -halfH + Double(r) * step
            for c in 0..<W {
                let a = -halfW + Double(c) * step
                let s = img.sample(cx + a * ux + b * nx, cy + a * uy + b * ny, outside: light)
                v[r * W + c] = max(0, min(1, (light - s) * inv))
            }
        }
        let peak = v.max() ?? 0
        guard peak >= 0.3 else { return nil }
        let t = 0.5 * peak
        // the glyph's run of rows, then of columns within it: the run of profile ≥ t nearest the centre
        func run(_ prof: [Double], centre: Int) -> (Int, Int)? {
            var best: (Int, Int)?, bestDist = Int.max
            var i = 0
            while i < prof.count {
                guard prof[i] >= t else { i += 1; continue }
                var j = i
                while j + 1 < prof.count && prof[j + 1] >= t { j += 1 }
                let dist = centre < i ? i - centre : (centre > j ? centre - j : 0)
                if dist < bestDist || (dist == bestDist && j - i > best!.1 - best!.0) { best = (i, j); bestDist = dist }
                i = j + 1
            }
            return best
        }
        let innerCols = (Int(0.2 * halfW / step))..<(W - Int(0.2 * halfW / step))
        let rowProf = (0..<H).map { r in innerCols.reduce(0.0) { max($0, v[r * W + $1]) } }
        guard let (y0, y1) = run(rowProf, centre: H / 2) else { return nil }
        let colProf = (0..<W).map { c in (y0...y1).reduce(0.0) { max($0, v[$1 * W + c]) } }
        guard let (x0, x1) = run(colProf, centre: W / 2) else { return nil }
        let w = Double(x1 - x0 + 1), h = Double(y1 - y0 + 1)
        guard w >= 4, h >= 6 else { return nil }
        func mean(_ fx0: Double, _ fx1: Double, _ fy0: Double, _ fy1: Double) -> Double {
            let c0 = x0 + Int((fx0 * w).rounded(.down)), c1 = max(c0, x0 + Int((fx1 * w).rounded(.up)) - 1)
            let r0 = y0 + Int((fy0 * h).rounded(.down)), r1 = max(r0, y0 + Int((fy1 * h).rounded(.up)) - 1)
            var s = 0.0, n = 0.0
            for r in r0...min(r1, H - 1) { for c in c0...min(c1, W - 1) { s += v[r * W + c]; n += 1 } }
            return n > 0 ? s / n : 0
        }
        if group == .bar {
            return [mean(0.35, 1, 0.8, 1), mean(0.35, 1, 0, 0.2), mean(0.35, 0.85, 0.4, 0.6)]
        }
        let cornerL = 0.5 * (mean(0, 0.25, 0, 0.2) + mean(0, 0.25, 0.8, 1))
        let cornerR = 0.5 * (mean(0.75, 1, 0, 0.2) + mean(0.75, 1, 0.8, 1))
        // left edge: first column at ≥ t in each row, relative to the box width
        func leftEdge(_ fy: Double) -> Double {
            let r = y0 + min(Int(h) - 1, Int(fy * h))
            for c in x0...x1 where v[r * W + c] >= t { return Double(c - x0) / w }
            return 1
        }
        let outer = [0.08, 0.15, 0.85, 0.92].map(leftEdge).reduce(0, +) / 4
        let middle = [0.4, 0.5, 0.6].map(leftEdge).reduce(0, +) / 3
        let rightMiddle = mean(0.75, 1, 0.35, 0.65)
        return [cornerL - cornerR, 0.5 * (cornerL + cornerR), outer - middle, rightMiddle, w / h]
    }

    /// The classifier's posterior `ranked` (best first) with the specialist's likelihoods
    /// multiplied in when its two best classes are both in the group: the mass of the group's
    /// glyphs is redistributed among them in proportion to posterior × likelihood^`weight`; the
    /// other classes keep theirs. Unchanged when the cell cannot be measured.
    package func rerank(_ ranked: [(Character, Double)], measure x: [Double]?, weight: Double = 1) -> [(Character, Double)] {
        guard let x, x.count == group.dimension, Group.of(ranked) == group else { return ranked }
        let ll = logLikelihoods(x)
        var mass = 0.0, logs: [Double] = []
        for (k, ch) in group.glyphs.enumerated() {
            let p = ranked.first { $0.0 == ch }?.1 ?? 0
            mass += p
            logs.append(log(max(p, 1e-12)) + weight * ll[k])
        }
        let top = logs.max() ?? 0
        let e = logs.map { exp($0 - top) }
        let z = e.reduce(0, +)
        var out = ranked.map { pair -> (Character, Double) in
            guard let k = group.glyphs.firstIndex(of: pair.0) else { return pair }
            return (pair.0, mass * e[k] / z)
        }
        out.sort { $0.1 > $1.1 }
        return out
    }
}
