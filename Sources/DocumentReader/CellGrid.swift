import Foundation

// Where each MRZ cell is: vertical centring of a located line (`OCRBClassifier.refine`, used
// identically in training and reading), then, in reading only, the per-boundary dynamic-programming
// fit along the line (`CellGrid.fitLine`, which replaced the single global phase/pitch search
// `align`) and the per-cell vertical offsets across it (`CellGrid.verticalOffsets`).

extension OCRBClassifier {
    /// Re-centres a line on its vertical ink profile (rows of the band ±1.1 cap heights, summed
    /// along the line; the centre of the run of rows holding ≥ 35 % of the peak ink, with linear
    /// box-filter maximum) and sets the cap height from the pitch with the OCR-B
    /// proportion (MRZ print is 10 characters per inch at a fixed font size, ICAO 9303-3 §4.2).
    /// Applied identically in training and reading, so both see the same normalisation.
    static func refine(_ img: GreyImage, _ g: LineGeometry, count: Int, dark: Double, light: Double) -> LineGeometry {
        let rows = 89
        var profile = [Double](repeating: 0, count: rows)
        let nx = -g.dirY, ny = g.dirX
        let inv = 1 / (light - dark)
        let span = 2.2 * g.capHeight
        for r in 0..<rows {
            let b = (Double(r) / Double(rows - 1) - 0.5) * span
            var s = 0.0
            var i = 0.0
            while i <= Double(count - 1) {
                let (cx, cy) = g.centre(i)
                s += max(0, min(1, (light - img.sample(cx + b * nx, cy + b * ny, outside: light)) * inv))
                i += 0.25
            }
            profile[r] = s
        }
        var out = g
        out.capHeight = g.pitch * fontMetrics.cap / fontMetrics.advance
        // box filter of one cap height, minus the flanks, searched within ±0.5 cap of the old centre
        let step = span / Double(rows - 1)
        let half = out.capHeight / 2 / step, flank = 0.3 * out.capHeight / step
        func sum(_ a: Double, _ b: Double) -> Double {
            var s = 0.0
            let lo = max(0, Int(a.rounded(.up))), hi = min(rows - 1, Int(b.rounded(.down)))
            guard lo <= hi else { return 0 }
            for r in lo...hi { s += profile[r] }
            return s
        }
        let mid = Double(rows / 2)
        var bestC = mid, bestS = -Double.infinity
        var c = mid - 0.5 * out.capHeight / step
        while c <= mid + 0.5 * out.capHeight / step {
            let sc = sum(c - half, c + half) - 1.5 * (sum(c - half - flank, c - half - 0.01) + sum(c + half + 0.01, c + half + flank))
            if sc > bestS { bestS = sc; bestC = c }
            c += 0.5
        }
        let off = (bestC - mid) * step
        out.originX += off * nx; out.originY += off * ny
        return out
    }
}

/// Per-line cell-boundary fit by dynamic programming (Viterbi over boundary offsets).
///
/// A located line (`LineGeometry`, from `MRZLocaliser`) predicts the `count + 1` cell boundaries
/// `b_i = s(i − ½)` along the line, `s(x) = x·pitch + ½·pitchSlope·x²`. Under perspective and blur
/// that prediction drifts by up to half a cell, so each boundary is given an offset `o_i` from its
/// prediction in steps of 1/16 pitch within ±`range` pitch, and the offsets minimise
///
///     Σ_i ink(b_i + o_i)                                  OCR-B glyphs never touch: boundaries are blank
///   + smoothness · Σ_i ((o_{i+1} − o_i) / pitch)²         neighbouring pitches agree (smooth perspective)
///   + emptyCell · Σ_i max(0, ½ − cellInk_i / typical)     every MRZ position holds a printed glyph
///   + outside · (ink just before b_0 + ink just after b_n)  the quiet zone around the MRZ
///
/// (ink: mean over the band ±0.45 cap heights, 0 paper … 1 ink, smoothed over ±⅛ pitch; `typical`
/// is the median cell ink at the predicted grid), exactly by Viterbi in O(count · states²). The
/// cell centres (midpoints of consecutive boundaries) are then refitted by least squares to
/// `x0 + i·p + ½·q·i²`, so the result is again a `LineGeometry`; what a cubic adds to that
/// (`alongOffsets`) moves each cell along the line.
struct CellGrid: Sendable {
    /// The line after the along-line fit (`fitLine`).
    let line: LineGeometry
    /// Per-cell offsets along the normal (`verticalOffsets`), pixels.
    let normalOffsets: [Double]
    /// Per-cell offsets along the line from `line`'s quadratic (`alongOffsets`), pixels.
    let alongOffsets: [Double]

    /// Fits the cells of one located line of `count` cells: `fitLine` along it (with the cubic
    /// remainder `alongOffsets`), then `verticalOffsets` across it. `g` should already be
    /// vertically centred (`OCRBClassifier.refine`).
    init(_ img: GreyImage, _ g: LineGeometry, count: Int, dark: Double, light: Double) {
        if let b = Self.boundaries(img, g, count: count, dark: dark, light: light) {
            line = Self.refit(g, boundaries: b)
            alongOffsets = Self.alongOffsets(g, fitted: line, boundaries: b)
        } else {
            line = g
            alongOffsets = [Double](repeating: 0, count: max(0, count))
        }
        normalOffsets = Self.verticalOffsets(img, line, count: count, dark: dark, light: light)
    }

    /// The geometry to read cell `i` with (`OCRBClassifier.features(image, cell(i), index: i, …)`):
    /// its fitted centre (moved by `alongOffsets[i]`), local pitch and size; the size (cap
    /// height, which `features` scales both axes of its sampling grid by) times `glyphScale`.
    /// `shift` moves the cell along the line's normal (pixels, as `normalOffsets`).
    func cell(_ i: Int, glyphScale: Double = 1, shift: Double = 0) -> LineGeometry {
        var c = Self.local(line, at: i, normalOffset: (i >= 0 && i < normalOffsets.count ? normalOffsets[i] : 0) + shift)
        let along = i >= 0 && i < alongOffsets.count ? alongOffsets[i] : 0
        c.originX += along * c.dirX; c.originY += along * c.dirY
        c.capHeight *= glyphScale
        return c
    }

    /// What the quadratic `refit` leaves of the boundary fit: a cubic in the cell index fitted by
    /// least squares to the residuals of the cell midpoints (`boundaries`, pixels along `g`) from
    /// `fitted`'s cell centres; per cell, pixels along the line. A perspective view maps the
    /// evenly printed cells through a ratio of linear functions, `t(i) = a·i / (1 + c·i)`, whose
    /// series has a cubic term the quadratic cannot hold, and a page bent near the spine adds
    /// its own: on the real specimen 62_pass-aus (a bent page seen at a slant) the midpoints
    /// swing ±0.1 pitch about the quadratic in an S (−0.13 at the start, +0.10 at cell 13, −0.05
    /// at cell 28), enough to put the `<` after `CITIZEN` a tenth of a pitch off its cell and read
    /// `H`. A cubic has two more coefficients than the quadratic over 30–44 midpoints, so it
    /// follows that swing and not the 1/16-pitch steps of single boundaries.
    static func alongOffsets(_ g: LineGeometry, fitted: LineGeometry, boundaries b: [Double]) -> [Double] {
        let n = b.count - 1
        guard n >= 8 else { return [Double](repeating: 0, count: max(0, n)) }
        let residuals = (0..<n).map { i -> Double in
            let (cx, cy) = fitted.centre(Double(i))
            return 0.5 * (b[i] + b[i + 1]) - ((cx - g.originX) * g.dirX + (cy - g.originY) * g.dirY)
        }
        var ata = [[Double]](repeating: [Double](repeating: 0, count: 5), count: 4)
        for i in 0..<n {
            let x = 2 * Double(i) / Double(n - 1) - 1
            let row = [1, x, x * x, x * x * x]
            for a in 0..<4 { for c in 0..<4 { ata[a][c] += row[a] * row[c] }; ata[a][4] += row[a] * residuals[i] }
        }
        guard let c = solveLinear(ata) else { return [Double](repeating: 0, count: n) }
        let offsets = (0..<n).map { i in
            let x = 2 * Double(i) / Double(n - 1) - 1
            return c[0] + c[1] * x + c[2] * x * x + c[3] * x * x * x
        }
        // A swing under one step of the boundary search (1/16 pitch) is not resolved by it: the
        // quadratic stands (the real specimens' flat lines swing ≤ 0.05 pitch, 62_pass-aus 0.10–0.16).
        let worst = offsets.map(abs).max() ?? 0
        return worst < fitted.pitch / 16 ? [Double](repeating: 0, count: n) : offsets
    }

    /// Cost weights. Chosen on the real specimens and the first 300 images of the seed-100000
    /// generated corpus: smoothness 30 / empty cell 2 / outside 1 / range ±0.8 pitch gave 20/33
    /// and 253/300; widening the range to ±1.3 pitch (so a whole-cell slip at a line end can be
    /// undone) with the empty-cell and quiet-zone terms raised to 6 and 3 gave 21/33 and 262/300
    /// (±1.6, 8, 5 gave the same). Not tuned on any other corpus.
    struct Weights: Sendable {
        var smoothness = 30.0
        var emptyCell = 6.0
        var outside = 3.0
        /// Offset range, pitches either side of the prediction.
        var range = 1.3
    }

    static func fitLine(_ img: GreyImage, _ g: LineGeometry, count n: Int, dark: Double, light: Double,
                        weights w: Weights = Weights()) -> LineGeometry {
        guard let b = boundaries(img, g, count: n, dark: dark, light: light, weights: w) else { return g }
        return refit(g, boundaries: b)
    }

    /// The fitted boundary positions `t_0 … t_n` (pixels along the line from `g`'s origin), or nil
    /// when the line is too small to fit.
    static func boundaries(_ img: GreyImage, _ g: LineGeometry, count n: Int, dark: Double, light: Double,
                           weights w: Weights = Weights()) -> [Double]? {
        let p = g.pitch
        guard n >= 2, p >= 2, p.isFinite, g.capHeight.isFinite, light > dark else { return nil }
        let steps = 16.0
        let h = p / steps
        let J = Int((w.range * steps).rounded())
        let S = 2 * J + 1
        func s(_ x: Double) -> Double { x * p + 0.5 * g.pitchSlope * x * x }
        let P = (0...n).map { s(Double($0) - 0.5) }
        guard P[n] - P[0] > Double(n) * p * 0.5 else { return nil }
        let tmin = P[0] - Double(J + 1) * h - p
        let K = Int(((P[n] + Double(J + 1) * h + p - tmin) / h).rounded(.up)) + 1
        // column ink along the line
        let ux = g.dirX, uy = g.dirY, nx = -g.dirY, ny = g.dirX
        let inv = 1 / (light - dark)
        let bands = [-0.45, -0.3, -0.15, 0, 0.15, 0.3, 0.45].map { $0 * g.capHeight }
        var col = [Double](repeating: 0, count: K)
        for k in 0..<K {
            let t = tmin + Double(k) * h
            let cx = g.originX + t * ux, cy = g.originY + t * uy
            var sum = 0.0
            for b in bands { sum += max(0, min(1, (light - img.sample(cx + b * nx, cy + b * ny, outside: light)) * inv)) }
            col[k] = sum / Double(bands.count)
        }
        var prefix = [Double](repeating: 0, count: K + 1)
        for k in 0..<K { prefix[k + 1] = prefix[k] + col[k] }
        func mean(_ a: Int, _ b: Int) -> Double {   // mean of col[a..<b], clamped
            let lo = max(0, min(K, a)), hi = max(0, min(K, b))
            return hi > lo ? (prefix[hi] - prefix[lo]) / Double(hi - lo) : 0
        }
        let r = 2   // ±⅛ pitch smoothing of the boundary ink
        let base = P.map { Int((($0 - tmin) / h).rounded()) }
        // typical cell ink at the prediction
        var cells = (0..<n).map { mean(base[$0], base[$0 + 1]) }
        cells.sort()
        let typical = max(cells[n / 2], 1e-3)
        let quiet = Int((0.6 * steps).rounded()), guardBand = Int((0.1 * steps).rounded())
        @inline(__always) func emit(_ i: Int, _ j: Int) -> Double { mean(base[i] + j - J - r, base[i] + j - J + r + 1) / typical }
        // Viterbi
        var cost = [Double](repeating: 0, count: S)
        for j in 0..<S {
            let k = base[0] + j - J
            cost[j] = emit(0, j) + w.outside * mean(k - guardBand - quiet, k - guardBand) / typical
        }
        var back = [Int32](repeating: 0, count: n * S)
        var next = [Double](repeating: 0, count: S)
        let smooth = (0..<(2 * S)).map { d in w.smoothness * (Double(d) / steps) * (Double(d) / steps) }
        for i in 0..<n {
            for j2 in 0..<S {
                let kB = base[i + 1] + j2 - J
                var best = Double.infinity, arg = 0
                for j1 in 0..<S {
                    let kA = base[i] + j1 - J
                    guard kB - kA >= Int(0.3 * steps) else { continue }
                    let content = mean(kA, kB) / typical
                    let c = cost[j1] + smooth[abs(j2 - j1)] + w.emptyCell * max(0, 0.5 - content)
                    if c < best { best = c; arg = j1 }
                }
                var e = emit(i + 1, j2)
                if i + 1 == n { e += w.outside * mean(kB + guardBand + 1, kB + guardBand + 1 + quiet) / typical }
                next[j2] = best + e
                back[i * S + j2] = Int32(arg)
            }
            swap(&cost, &next)
        }
        var j = cost.indices.min { cost[$0] < cost[$1] }!
        guard cost[j].isFinite else { return nil }
        var out = [Double](repeating: 0, count: n + 1)
        out[n] = P[n] + Double(j - J) * h
        for i in stride(from: n - 1, through: 0, by: -1) {
            j = Int(back[i * S + j])
            out[i] = P[i] + Double(j - J) * h
        }
        return out
    }

    /// The geometry to read cell `i` of `g` with: the same centre for cell `i`, but the local
    /// pitch `pitch + pitchSlope·i` (the derivative of the cell position) as a constant pitch and
    /// the cap height scaled with it, so that a glyph foreshortened by perspective is sampled at
    /// its own size (`features` scales its sampling grid with the cap height).
    static func local(_ g: LineGeometry, at i: Int) -> LineGeometry {
        let x = Double(i)
        let p = g.pitch + g.pitchSlope * x
        guard g.pitchSlope != 0, p > 0.25 * g.pitch, p.isFinite else { return g }
        let (cx, cy) = g.centre(x)
        return LineGeometry(originX: cx - x * p * g.dirX, originY: cy - x * p * g.dirY, dirX: g.dirX, dirY: g.dirY,
                            pitch: p, capHeight: g.capHeight * p / g.pitch)
    }

    /// Least-squares `x0 + i·p + ½·q·i²` through the midpoints of consecutive boundaries (pixels
    /// along `g` from its origin); `q` is dropped when it would change the pitch by more than half
    /// along the line.
    static func refit(_ g: LineGeometry, boundaries b: [Double]) -> LineGeometry {
        let n = b.count - 1
        guard n >= 3 else { return g }
        func solve(_ k: Int) -> [Double]? {
            var ata = [[Double]](repeating: [Double](repeating: 0, count: k + 1), count: k)
            for i in 0..<n {
                let x = Double(i), y = 0.5 * (b[i] + b[i + 1])
                let row = [1, x, 0.5 * x * x]
                for a in 0..<k { for c in 0..<k { ata[a][c] += row[a] * row[c] }; ata[a][k] += row[a] * y }
            }
            return solveLinear(ata)
        }
        guard var sol = solve(3) ?? solve(2) else { return g }
        if sol.count < 3 || abs(sol[2]) * Double(n) > 0.5 * abs(sol[1]) { guard let lin = solve(2) else { return g }; sol = lin + [0] }
        guard sol[1] > 0.7 * g.pitch, sol[1] < 1.4 * g.pitch else { return g }
        var out = g
        out.originX += sol[0] * g.dirX; out.originY += sol[0] * g.dirY
        out.pitch = sol[1]; out.pitchSlope = sol[2]
        return out
    }
}

extension CellGrid {
    /// Per-cell offsets (pixels, along the line's normal, positive = image "down" of the reading
    /// direction) that re-centre each cell vertically on its glyph: per cell, the centre of the
    /// one-cap-height window holding the most ink (minus 1.5 × the ink in 0.25-cap flanks, as in
    /// `refine`; the middle of the plateau when the glyph is shorter than the window), searched
    /// within ±0.45 cap; then a weighted least-squares quadratic in the cell index through those
    /// centres (weights = ink in the window, × 0.3 for cells under 0.7 × the median ink such as
    /// fillers; two passes dropping cells more than 0.12 cap off), so a bent page is followed
    /// without one cell jumping alone. All zero unless the curve leaves the straight line by at
    /// least 0.08 cap somewhere: a flat line keeps `refine`'s centring.
    static func verticalOffsets(_ img: GreyImage, _ g: LineGeometry, count n: Int, dark: Double, light: Double) -> [Double] {
        // Both figures chosen on the real specimens (0.08: 21/33 against 19/33 with no gate, 20/33
        // with 0.15) and checked neutral on the first 300 generated images (seed 100000).
        let lowInkWeight = 0.3, minimumBend = 0.08
        guard n >= 4, light > dark else { return [Double](repeating: 0, count: max(0, n)) }
        let inv = 1 / (light - dark)
        let rows = 25
        var centres = [Double](repeating: 0, count: n), weights = [Double](repeating: 0, count: n)
        for i in 0..<n {
            let c = local(g, at: i)
            let (cx, cy) = c.centre(Double(i))
            let cap = c.capHeight, nx = -c.dirY, ny = c.dirX
            var prof = [Double](repeating: 0, count: rows)
            for k in 0..<rows {
                let b = (Double(k) / Double(rows - 1) - 0.5) * 2.0 * cap
                var s = 0.0
                for a in [-0.3, -0.15, 0, 0.15, 0.3] {
                    let ax = a * c.pitch
                    s += max(0, min(1, (light - img.sample(cx + ax * c.dirX + b * nx, cy + ax * c.dirY + b * ny, outside: light)) * inv))
                }
                prof[k] = s
            }
            let step = 2.0 * cap / Double(rows - 1)
            func sum(_ lo: Double, _ hi: Double) -> Double {   // rows with centre offsets in [lo, hi] (cap units → rows)
                let a = max(0, Int(((lo * cap) / step + Double(rows - 1) / 2).rounded(.up)))
                let b = min(rows - 1, Int(((hi * cap) / step + Double(rows - 1) / 2).rounded(.down)))
                guard a <= b else { return 0 }
                return prof[a...b].reduce(0, +)
            }
            var scores: [(Double, Double, Double)] = []   // (centre, score, inside)
            var cc = -0.45
            while cc <= 0.4501 {
                let inside = sum(cc - 0.5, cc + 0.5)
                scores.append((cc, inside - 1.5 * (sum(cc - 0.75, cc - 0.51) + sum(cc + 0.51, cc + 0.75)), inside))
                cc += 1.0 / 24
            }
            // a glyph shorter than the window (`<`) gives a plateau: take its middle
            let best = scores.map(\.1).max() ?? 0
            let plateau = scores.filter { $0.1 >= best - 0.03 * abs(best) - 1e-9 }
            centres[i] = plateau.map(\.0).reduce(0, +) / Double(max(1, plateau.count)) * cap
            weights[i] = max(0, plateau.map(\.2).max() ?? 0)
        }
        // cells with little ink (fillers, faint glyphs) place the line poorly: leave them out
        let medianInk = weights.sorted()[n / 2]
        for i in 0..<n where weights[i] < 0.7 * medianInk { weights[i] *= lowInkWeight }
        var use = weights
        var coef = [0.0, 0.0, 0.0]
        for _ in 0..<2 {
            var ata = [[Double]](repeating: [Double](repeating: 0, count: 4), count: 3)
            for i in 0..<n where use[i] > 0 {
                let x = Double(i) / Double(n - 1)
                let row = [1, x, x * x]
                for a in 0..<3 { for b in 0..<3 { ata[a][b] += use[i] * row[a] * row[b] }; ata[a][3] += use[i] * row[a] * centres[i] }
            }
            guard let sol = solveLinear(ata) else { break }
            coef = sol
            for i in 0..<n {
                let x = Double(i) / Double(n - 1)
                let r = centres[i] - (coef[0] + coef[1] * x + coef[2] * x * x)
                use[i] = abs(r) > 0.12 * local(g, at: i).capHeight ? 0 : weights[i]
            }
        }
        let offsets = (0..<n).map { i in
            let x = Double(i) / Double(n - 1)
            return coef[0] + coef[1] * x + coef[2] * x * x
        }
        // a straight line the vertical centring (`refine`) already fits: leave it as it is
        let worst = zip(offsets, 0..<n).map { abs($0) / local(g, at: $1).capHeight }.max() ?? 0
        return worst < minimumBend ? [Double](repeating: 0, count: n) : offsets
    }

    /// `local(g, at: i)` moved by `offset` pixels along the normal.
    static func local(_ g: LineGeometry, at i: Int, normalOffset offset: Double) -> LineGeometry {
        var c = local(g, at: i)
        c.originX -= offset * c.dirY; c.originY += offset * c.dirX
        return c
    }
}

extension CellGrid {
    /// The height of the line's glyphs, in cap heights of the pitch (`refine`'s `capHeight`, which
    /// `cell(i)` carries scaled to the local pitch): per cell, the extent across the line of the
    /// rows whose darkest point (17 samples over ±0.4 local pitch) is at least half the cell's
    /// darkest, over ±1 cap height about the cell's centre in 33 rows; then the 90th percentile
    /// over the cells holding ink (≥ 0.3 of full ink contrast), so the tallest glyphs (letters and
    /// digits, not fillers) decide. nil when fewer than 4 cells hold ink.
    func glyphHeight(_ img: GreyImage, count n: Int, dark: Double, light: Double) -> Double? {
        glyphExtent(img, count: n, dark: dark, light: light)?.height
    }

    /// `glyphHeight` and `centre`: the median, over the cells at least 0.8 of that height, of the
    /// middle of their extent relative to the cell centre (pixels along the normal, as
    /// `normalOffsets`). `refine` centres a one-cap (of the pitch) window on the ink, which leaves a
    /// shorter glyph anywhere inside it: this is where the glyphs themselves are centred.
    func glyphExtent(_ img: GreyImage, count n: Int, dark: Double, light: Double) -> (height: Double, centre: Double)? {
        guard n >= 4, light > dark else { return nil }
        let inv = 1 / (light - dark), rows = 33
        var heights: [Double] = [], mids: [(height: Double, mid: Double)] = []
        for i in 0..<n {
            let c = cell(i)
            let (cx, cy) = c.centre(Double(i))
            let nx = -c.dirY, ny = c.dirX
            var prof = [Double](repeating: 0, count: rows)
            for k in 0..<rows {
                let b = (Double(k) / Double(rows - 1) - 0.5) * 2 * c.capHeight
                var m = 0.0
                for j in 0..<17 {
                    let a = (Double(j) / 16 - 0.5) * 0.8 * c.pitch
                    m = max(m, (light - img.sample(cx + a * c.dirX + b * nx, cy + a * c.dirY + b * ny, outside: light)) * inv)
                }
                prof[k] = min(1, m)
            }
            let peak = prof.max() ?? 0
            guard peak >= 0.3, let lo = prof.firstIndex(where: { $0 >= 0.5 * peak }),
                  let hi = prof.lastIndex(where: { $0 >= 0.5 * peak }) else { continue }
            heights.append(Double(hi - lo) / Double(rows - 1) * 2)
            mids.append((heights.last!, (Double(lo + hi) / 2 / Double(rows - 1) - 0.5) * 2 * c.capHeight))
        }
        guard heights.count >= 4 else { return nil }
        heights.sort()
        let h = heights[min(heights.count - 1, heights.count * 9 / 10)]
        let centres = mids.filter { $0.height >= 0.8 * h }.map(\.mid).sorted()
        return (h, centres.isEmpty ? 0 : centres[centres.count / 2])
    }
}

extension CellGrid {
    /// A line whose glyphs measure under this (`glyphHeight`, cap heights of the pitch) is sampled
    /// at its measured glyph height rather than at the pitch's. On the 33 real specimens the
    /// lines measure 0.875–1.25 (median 1.0), except the Luxembourg passport photographed at an
    /// angle (100_pass-lux: 0.69 and 0.75; 28 px glyphs at a 32.5 px pitch), whose lines read
    /// `LUK…KFTTY` and `…OSO6OO2YO4Y…` at the pitch's size and right at 0.7–0.9 of it. No clean
    /// line measured taller than 1.25 (62_pass-aus line 1 measures 1.44 because the red frame an
    /// app drew on the photo runs just above its fillers), so there is no gate for glyphs larger
    /// than the pitch implies.
    static let shortGlyphs = 0.8
    /// The smallest glyph scale used (a measurement below it is taken as this).
    static let minimumGlyphScale = 0.6

    /// The classifier features of every cell of the line (`OCRBClassifier.features` at `cell(i)`),
    /// with the glyph size `glyphScale` (cap heights of the pitch): 1, or the measured
    /// `glyphHeight` (at least `minimumGlyphScale`) when that is under `shortGlyphs`, and then
    /// each cell moved along the normal to the glyphs' measured centre (`glyphExtent`). Returns
    /// `count` feature vectors and the scale used.
    func features(_ img: GreyImage, count: Int, dark: Double, light: Double) -> (features: [[Double]], glyphScale: Double) {
        var scale = 1.0, shift = 0.0
        if let e = glyphExtent(img, count: count, dark: dark, light: light), e.height < Self.shortGlyphs {
            scale = max(Self.minimumGlyphScale, e.height)
            shift = e.centre
        }
        return ((0..<count).map { OCRBClassifier.features(img, cell($0, glyphScale: scale, shift: shift), index: $0, dark: dark, light: light) }, scale)
    }
}
