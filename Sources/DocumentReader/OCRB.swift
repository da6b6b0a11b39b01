internal import CCairo
import Foundation

/// Geometry of one rectified MRZ text line in image coordinates: the centre of cell 0 on the line's
/// centre line, the unit direction of reading, the character pitch and the cap height (pixels).
/// Cell `i` is centred at `origin + i · pitch · direction`.
public struct LineGeometry: Sendable, Equatable {
    public var originX: Double, originY: Double
    public var dirX: Double, dirY: Double
    public var pitch: Double
    public var capHeight: Double
    /// Extra pitch change per cell (perspective foreshortening along the line); 0 for a flat line.
    public var pitchSlope: Double = 0

    public init(originX: Double, originY: Double, dirX: Double, dirY: Double, pitch: Double, capHeight: Double, pitchSlope: Double = 0) {
        self.originX = originX; self.originY = originY; self.dirX = dirX; self.dirY = dirY
        self.pitch = pitch; self.capHeight = capHeight; self.pitchSlope = pitchSlope
    }

    /// Centre of cell `i` (real-valued index allowed).
    @inline(__always) public func centre(_ i: Double) -> (Double, Double) {
        let t = i * pitch + 0.5 * pitchSlope * i * i
        return (originX + t * dirX, originY + t * dirY)
    }
}

/// The OCR-B MRZ character classifier (ISO 1073-2 glyphs of the 37 MRZ symbols, ICAO 9303-3 §4.1).
///
/// Training: lines of random MRZ characters are rendered with Cairo in the Debian `fonts-ocr-b`
/// font at pitches of 4–30 px with augmentation (stroke thickening/thinning, Gaussian blur, noise,
/// contrast, sub-pixel shifts and cell-geometry jitter; half the lines also drawn large and
/// point-sampled down with JPEG quantisation, as a page is warped into a photo), and every cell goes
/// through exactly the feature extraction used at reading time. The classifier is linear
/// discriminant analysis (class means, pooled covariance with shrinkage), solved in closed form:
/// deterministic for a seed, ~2 s (12 lines per pitch). Training happens offline (`idvd ocrb train`);
/// a process loads the shipped parameters (`OCRBParameters`, `Resources/ocrb-lda.bin`) in
/// milliseconds, which equal the trained ones bit for bit. Posteriors are the softmax of the
/// discriminants.
public final class OCRBClassifier: Sendable {
    /// The MRZ alphabet in class order.
    public static let alphabet: [Character] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ<")
    /// Feature grid (columns × rows) of one cell.
    static let gw = 14, gh = 20
    static let featureCount = gw * gh + 9

    let weights: [Double]   // classes × features
    let biases: [Double]
    /// Kept for per-document adaptation (`adapted(to:)`): the Cholesky factor L of the pooled
    /// covariance, the whitened class means ν_k = L⁻¹μ_k (classes × features), an orthonormal
    /// basis of their span about the mean (the discriminant subspace, rows of `subspace`) and the
    /// log class priors.
    let covarianceFactor: [Double]
    let whitenedMeans: [Double]
    let subspace: [[Double]]
    let logPriors: [Double]
    /// Posterior temperature (> 1 softens the LDA's over-confident posteriors): posteriors are
    /// softmax(scores / T). 2.0 is within 4 % of the value minimising the negative log-likelihood of
    /// held-out rendered cells (1.93 on seed 1000 for the 12-lines-per-pitch model; `idvd bench ocrb`).
    package let temperature = 2.0
    /// The glyph-shape specialists (`GlyphShapeModel`), one per group in `Group.allCases` order,
    /// fitted on the same rendered training cells.
    let shapeModels: [GlyphShapeModel]
    /// The specialist for `group`.
    package func shapeModel(_ group: GlyphShapeModel.Group) -> GlyphShapeModel { shapeModels.first { $0.group == group }! }

    /// The shipped classifier (`OCRBParameters.shipped()`: trained offline with seed 1 and 12 lines
    /// per pitch), loaded once per process. A missing or damaged parameter file is a broken build:
    /// it stops the process with the loader's message.
    public static let shared: OCRBClassifier = {
        do { return OCRBClassifier(parameters: try OCRBParameters.shipped()) } catch {
            fatalError("OCR-B classifier: \(error)")
        }
    }()

    /// A classifier from trained parameters (`OCRBParameters`); equal to the one that was trained.
    public init(parameters p: OCRBParameters) {
        (weights, biases, covarianceFactor, logPriors) = (p.weights, p.biases, p.covarianceFactor, p.logPriors)
        whitenedMeans = p.whitenedMeans
        shapeModels = p.shapeModels
        subspace = Self.discriminantSubspace(p.whitenedMeans)
    }

    /// The parameters of this classifier, to write with `OCRBParameters.encoded()`.
    public var parameters: OCRBParameters {
        OCRBParameters(fontMetrics: Self.fontMetrics, weights: weights, biases: biases, logPriors: logPriors,
                       covarianceFactor: covarianceFactor, whitenedMeans: whitenedMeans, shapeModels: shapeModels)
    }

    /// An orthonormal basis of the span of the whitened class means about their mean (Gram–Schmidt
    /// in class order), the discriminant subspace of `adapted(to:)`.
    static func discriminantSubspace(_ nu: [Double]) -> [[Double]] {
        let k = alphabet.count, d = featureCount
        var basis: [[Double]] = []
        for c in 0..<k {
            var v = (0..<d).map { j in nu[c * d + j] - (0..<k).reduce(0.0) { $0 + nu[$1 * d + j] } / Double(k) }
            for q in basis { let p = zip(q, v).reduce(0.0) { $0 + $1.0 * $1.1 }; for j in 0..<d { v[j] -= p * q[j] } }
            let n = v.reduce(0.0) { $0 + $1 * $1 }.squareRoot()
            if n > 1e-8 { basis.append(v.map { $0 / n }) }
        }
        return basis
    }

    /// Trains from rendered glyphs; deterministic for a given seed.
    public init(seed: UInt64, linesPerPitch: Int = 12) {
        var rng = SeededRNG(seed: seed)
        var samples: [[Double]] = []
        var labels: [Int] = []
        let groups = GlyphShapeModel.Group.allCases
        var shapeSamples = groups.map { [[[Double]]](repeating: [], count: $0.glyphs.count) }
        let pitches: [Double] = [4.5, 5.5, 6.5, 8, 10, 13, 17, 22, 28]
        for p in pitches {
            for _ in 0..<linesPerPitch {
                let (text, img, geom, dark, light) = Self.randomTrainingLine(pitch: p, rng: &rng)
                for (i, ch) in text.enumerated() {
                    for _ in 0..<2 {
                        var g = geom
                        let jitterAlong = rng.uniform(-0.12, 0.12) * g.pitch
                        g.originX += jitterAlong
                        g.originY += rng.uniform(-0.12, 0.12) * g.capHeight
                        g.capHeight *= rng.uniform(0.9, 1.1)
                        g.pitch *= rng.uniform(0.97, 1.03)
                        let a = rng.uniform(-0.02, 0.02)
                        g.dirX = cos(a); g.dirY = sin(a)
                        // keep cell i near its true place despite the pitch jitter
                        let (cx, cy) = geom.centre(Double(i))
                        let (jx, jy) = g.centre(Double(i))
                        g.originX += cx - jx + jitterAlong; g.originY += cy - jy
                        samples.append(Self.features(img, g, index: i, dark: dark, light: light))
                        labels.append(Self.alphabet.firstIndex(of: ch)!)
                        for (n, group) in groups.enumerated() {
                            if let k = group.glyphs.firstIndex(of: ch),
                               let m = GlyphShapeModel.measure(group, img, g, index: i, dark: dark, light: light) {
                                shapeSamples[n][k].append(m)
                            }
                        }
                    }
                }
            }
        }
        shapeModels = zip(groups, shapeSamples).map { GlyphShapeModel($0, samples: $1) }
        let lda = Self.fitLDA(samples, labels, classes: Self.alphabet.count, shrinkage: 0.05)
        (weights, biases, covarianceFactor, logPriors) = (lda.weights, lda.biases, lda.factor, lda.logPriors)
        let k = Self.alphabet.count, d = Self.featureCount
        var nu = [Double](repeating: 0, count: k * d)
        for c in 0..<k {
            let z = Self.forwardSolve(lda.factor, d, Array(lda.means[(c * d)..<((c + 1) * d)]))
            for j in 0..<d { nu[c * d + j] = z[j] }
        }
        whitenedMeans = nu
        subspace = Self.discriminantSubspace(nu)
    }

    /// Discriminants re-estimated for one document (`adapted(to:)`): s_k(f) = w_k·f + b_k.
    package struct Adaptation: Sendable {
        let weights: [Double]
        let biases: [Double]
        /// Anchor cells used.
        let anchorCount: Int
    }

    /// Adapts the class means to one document. One MRZ is one font cut, one print, one blur, so its
    /// glyphs deviate from the rendered training glyphs consistently. From `anchors` (feature
    /// vectors whose class is known, e.g. confident digits in dates) each anchored class mean is
    /// moved towards the mean of its anchors, within the discriminant subspace (whitened space,
    /// rank ≤ 36, where estimation noise is smallest relative to what separates classes) and shrunk
    /// by n_k / (n_k + `classPrior`) (the MAP estimate under a prior worth `classPrior` cells); the
    /// pooled covariance stays. The anchors' own scatter s² in that subspace gives back the
    /// expected excess distance ½·a²·s²/n_k of an estimated mean in the class's bias.
    /// `classPrior` 1 is what the real specimens needed (22/33 exact against 19 at 2, 3 or 8 and
    /// without adaptation; generated corpus 244/300 against 245; `idvd bench document`).
    func adapted(to anchors: [(features: [Double], label: Int)], classPrior: Double = 1) -> Adaptation {
        let k = Self.alphabet.count, d = Self.featureCount
        var sums = [Double](repeating: 0, count: k * d), counts = [Double](repeating: 0, count: k)
        var projected: [(p: [Double], c: Int)] = []
        func project(_ z: [Double]) -> [Double] { subspace.map { q in zip(q, z).reduce(0.0) { $0 + $1.0 * $1.1 } } }
        for (f, c) in anchors where f.count == d && c >= 0 && c < k {
            counts[c] += 1
            let z = Self.forwardSolve(covarianceFactor, d, f)
            for j in 0..<d { sums[c * d + j] += z[j] - whitenedMeans[c * d + j] }
            projected.append((project(z), c))
        }
        var devs: [Int: [Double]] = [:]
        for c in 0..<k where counts[c] > 0 { devs[c] = project((0..<d).map { sums[c * d + $0] / counts[c] }) }
        // scatter of anchors about their class means, in the subspace
        var scatter = 0.0, free = 0.0
        var centre: [Int: [Double]] = [:]
        for c in devs.keys { centre[c] = zip(project(Array(whitenedMeans[(c * d)..<((c + 1) * d)])), devs[c]!).map { $0 + $1 } }
        for (p, c) in projected where counts[c] > 1 && centre[c] != nil { scatter += zip(p, centre[c]!).reduce(0.0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) } }
        for c in 0..<k where counts[c] > 1 && centre[c] != nil { free += counts[c] - 1 }
        let s2 = free > 0 ? scatter / free : 0
        var w = weights, b = biases
        for (c, dev) in devs {
            let a = counts[c] / (counts[c] + classPrior)
            var nu = Array(whitenedMeans[(c * d)..<((c + 1) * d)])
            for (q, x) in zip(subspace, dev) { for j in 0..<d { nu[j] += a * x * q[j] } }
            let wc = Self.backSolve(covarianceFactor, d, nu)
            for j in 0..<d { w[c * d + j] = wc[j] }
            b[c] = -0.5 * nu.reduce(0.0) { $0 + $1 * $1 } + logPriors[c] + 0.5 * a * a * s2 / counts[c]
        }
        return Adaptation(weights: w, biases: b, anchorCount: anchors.count)
    }

    /// Class posteriors for one feature vector, best first.
    package func classify(_ f: [Double], adaptation: Adaptation? = nil) -> [(Character, Double)] {
        zip(Self.alphabet, Self.softmax(scores(f, adaptation: adaptation), temperature: temperature)).sorted { $0.1 > $1.1 }
    }

    /// The linear discriminants w_k·f + b_k of one feature vector, in `alphabet` order.
    package func scores(_ f: [Double], adaptation: Adaptation? = nil) -> [Double] {
        let k = Self.alphabet.count, d = Self.featureCount
        var scores = [Double](repeating: 0, count: k)
        let bias = adaptation?.biases ?? biases
        (adaptation?.weights ?? weights).withUnsafeBufferPointer { w in
            for c in 0..<k {
                var s = bias[c]
                for j in 0..<d { s += w[c * d + j] * f[j] }
                scores[c] = s
            }
        }
        return scores
    }

    /// softmax(s / T).
    package static func softmax(_ s: [Double], temperature: Double) -> [Double] {
        let m = s.max() ?? 0
        let e = s.map { exp(($0 - m) / temperature) }
        let z = e.reduce(0, +)
        return e.map { $0 / z }
    }

    // MARK: Features

    /// Dark (ink) and light (paper) grey levels along a line: 5th and 95th percentiles of the band.
    static func inkLevels(_ img: GreyImage, _ g: LineGeometry, count: Int) -> (Double, Double) {
        var vals: [Double] = []
        vals.reserveCapacity(count * 24)
        for i in 0..<count {
            for sy in stride(from: -0.6, through: 0.6, by: 0.3) {
                for sx in stride(from: -0.4, through: 0.4, by: 0.2) {
                    let (cx, cy) = g.centre(Double(i) + sx)
                    vals.append(img.sample(cx - sy * g.capHeight * g.dirY, cy + sy * g.capHeight * g.dirX))
                }
            }
        }
        vals.sort()
        guard !vals.isEmpty else { return (0, 255) }
        let dark = vals[vals.count / 20], light = vals[vals.count * 19 / 20]
        return (dark, max(light, dark + 20))
    }

    /// The feature vector of cell `index`: ink (0 paper … 1 ink) sampled on a 14 × 20 grid over
    /// 1.0 pitch × 1.5 cap heights, horizontally re-centred on the cell's ink, plus ink extent and moment figures.
    package static func features(_ img: GreyImage, _ g: LineGeometry, index: Int, dark: Double, light: Double) -> [Double] {
        let (c0x, c0y) = g.centre(Double(index))
        let ux = g.dirX, uy = g.dirY, nx = -g.dirY, ny = g.dirX
        let inv = 1 / (light - dark)
        @inline(__always) func ink(_ a: Double, _ b: Double, _ cx: Double, _ cy: Double) -> Double {
            let v = img.sample(cx + a * ux + b * nx, cy + a * uy + b * ny, outside: light)
            return max(0, min(1, (light - v) * inv))
        }
        // Pass 1: ink centroid along the line over ±0.6 pitch, to absorb localisation error.
        var m = 0.0, mx = 0.0
        for j in 0..<12 {
            let a = (Double(j) / 11 - 0.5) * 1.2 * g.pitch
            for k in 0..<8 {
                let b = (Double(k) / 7 - 0.5) * 1.2 * g.capHeight
                let w = ink(a, b, c0x, c0y)
                m += w; mx += w * a
            }
        }
        var shift = m > 0.5 ? mx / m : 0
        shift = max(-0.3 * g.pitch, min(0.3 * g.pitch, shift))
        let cx = c0x + shift * ux, cy = c0y + shift * uy
        // Pass 2: the grid, each point averaging a 2 × 2 sub-grid.
        var f = [Double](repeating: 0, count: featureCount)
        // both axes scale with the measured cap height (print size varies around the 10-cpi pitch)
        let cellW = g.capHeight * fontMetrics.advance / fontMetrics.cap
        let sw = cellW / Double(gw), sh = 1.5 * g.capHeight / Double(gh)
        var total = 0.0
        var rowInk = [Double](repeating: 0, count: gh), colInk = [Double](repeating: 0, count: gw)
        for r in 0..<gh {
            let b = (Double(r) + 0.5) * sh - 0.75 * g.capHeight
            for c in 0..<gw {
                let a = (Double(c) + 0.5) * sw - 0.5 * cellW
                let v = 0.25 * (ink(a - sw / 4, b - sh / 4, cx, cy) + ink(a + sw / 4, b - sh / 4, cx, cy)
                              + ink(a - sw / 4, b + sh / 4, cx, cy) + ink(a + sw / 4, b + sh / 4, cx, cy))
                f[r * gw + c] = v
                total += v; rowInk[r] += v; colInk[c] += v
            }
        }
        let n = Double(gw * gh)
        func extent(_ xs: [Double]) -> Double {
            let t = xs.reduce(0, +) * 0.04
            guard let lo = xs.firstIndex(where: { $0 > t }), let hi = xs.lastIndex(where: { $0 > t }) else { return 0 }
            return Double(hi - lo + 1) / Double(xs.count)
        }
        f[gw * gh] = total / n * 2
        f[gw * gh + 1] = extent(rowInk)
        f[gw * gh + 2] = extent(colInk)
        // second and fourth moments of the ink along and across the line (roundness, width)
        var gx = 0.0, gy = 0.0
        for r in 0..<gh { gy += rowInk[r] * Double(r) }
        for c in 0..<gw { gx += colInk[c] * Double(c) }
        let t = max(total, 1e-6)
        gx /= t; gy /= t
        var vx = 0.0, vy = 0.0, kx = 0.0
        for c in 0..<gw { let d = Double(c) - gx; vx += colInk[c] * d * d; kx += colInk[c] * d * d * d * d }
        for r in 0..<gh { let d = Double(r) - gy; vy += rowInk[r] * d * d }
        vx /= t; vy /= t; kx /= t
        f[gw * gh + 3] = vx.squareRoot() / Double(gw) * 4
        f[gw * gh + 4] = vy.squareRoot() / Double(gh) * 4
        f[gw * gh + 5] = vx > 1e-6 ? kx / (vx * vx) / 3 : 0
        // longest vertical and horizontal strokes (the stem of K/R/B/D, the bars of E/F/T/Z)
        var maxCol = 0, maxRow = 0
        for c in 0..<gw { var n = 0; for r in 0..<gh where f[r * gw + c] > 0.4 { n += 1 }; maxCol = max(maxCol, n) }
        for r in 0..<gh { var n = 0; for c in 0..<gw where f[r * gw + c] > 0.4 { n += 1 }; maxRow = max(maxRow, n) }
        f[gw * gh + 6] = Double(maxCol) / Double(gh) * 3
        f[gw * gh + 7] = Double(maxRow) / Double(gw) * 3
        f[gw * gh + 8] = 1
        return f
    }

    // MARK: Training data

    struct TrainingStyle {
        var pitch: Double, stroke: Double, blur: Double, noise: Double, contrast: Double, offset: (Double, Double)
        /// Glyphs drawn with `cairo_show_text` (hinted rasteriser) instead of filled outlines.
        var hinted = false
        /// Glyph size relative to the nominal size for the pitch.
        var glyphScale = 1.0
        /// < 1: the line is drawn at `pitch / resample` and point-sampled down bilinearly without
        /// a prefilter, as a specimen page is warped into a photo (`Augmentation.apply`).
        var resample = 1.0
        /// JPEG quality for DCT quantisation with the IJG tables (`JPEGQuantiser`), nil for none.
        var jpegQuality: Int? = nil
    }

    /// One augmented training line at about `pitch` pixels: 44 symbols holding every symbol at
    /// least once (random order, random extras), rendered with a random `TrainingStyle`, with its
    /// ink levels and its vertically centred geometry (`refine`, as at reading time). Shared by
    /// training and the held-out evaluation (`OCRBEvaluation`), which differ only in their seeds.
    package static func randomTrainingLine(pitch p: Double, rng: inout SeededRNG)
        -> (text: [Character], image: GreyImage, geometry: LineGeometry, dark: Double, light: Double) {
        var text = alphabet.shuffled(using: &rng)
        while text.count < 44 { text.append(alphabet[Int(rng.next() % 37)]) }
        var style = TrainingStyle(
            pitch: p * rng.uniform(0.95, 1.05), stroke: rng.uniform(-0.06, 0.16), blur: rng.uniform(0, 0.35) * p / 6,
            noise: rng.uniform(0, 14), contrast: rng.uniform(0.35, 1.0), offset: (rng.uniform(0, 1), rng.uniform(0, 1)),
            hinted: rng.next() % 3 == 0, glyphScale: rng.uniform(0.92, 1.08))
        // Half the lines go the way a specimen page goes into a photo (`Augmentation`): drawn
        // large and point-sampled down by 0.55–0.95 without a prefilter, blurred up to σ = 0.07
        // pitch (1.6 px at the corpus's ~23 px pitch), JPEG quality 35–95 on two lines in three.
        if rng.uniform(0, 1) < 0.5 {
            style.resample = rng.uniform(0.55, 0.95)
            style.blur = rng.uniform(0, 0.07) * p
            style.jpegQuality = rng.next() % 3 == 0 ? nil : Int(rng.uniform(35, 95))
        }
        let (img, geom0) = renderLine(text, style: style)
        let (dark, light) = inkLevels(img, geom0, count: text.count)
        return (text, img, refine(img, geom0, count: text.count, dark: dark, light: light), dark, light)
    }

    /// The OCR-B font's advance width and cap height per unit font size: 720 and 710 units per 1000 in
    /// Debian's `fonts-ocr-b` 0.3 (`OCRB.otf`), as Cairo measures `H`. Reading needs only these two
    /// numbers, not the font; training checks them against Cairo (`measuredFontMetrics`).
    public static let fontMetrics: (advance: Double, cap: Double) = (0.72, 0.71)

    /// The font's metrics as Cairo measures them (text extents of `H` at size 100). With no OCR B font
    /// installed fontconfig substitutes another face, whose other metrics `trainingFontProblem` reports.
    static func measuredFontMetrics() -> (advance: Double, cap: Double) {
        let s = cairo_image_surface_create(CAIRO_FORMAT_A8, 8, 8)!
        defer { cairo_surface_destroy(s) }
        let cr = cairo_create(s)!
        defer { cairo_destroy(cr) }
        cairo_select_font_face(cr, "OCR B", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, 100)
        var e = cairo_text_extents_t()
        cairo_text_extents(cr, "H", &e)
        return (e.x_advance / 100, -e.y_bearing / 100)
    }

    /// Why this machine cannot train the classifier the shipped parameters came from, or nil: the
    /// font Cairo renders as "OCR B" must have the metrics reading assumes (`fontMetrics`).
    public static func trainingFontProblem() -> String? {
        let m = measuredFontMetrics()
        guard m != fontMetrics else { return nil }
        return "the font Cairo renders as 'OCR B' measures advance \(m.advance), cap \(m.cap) per unit size; "
            + "reading assumes \(fontMetrics.advance), \(fontMetrics.cap) (Debian fonts-ocr-b 0.3): install fonts-ocr-b"
    }

    /// Renders `text` in OCR-B at the style's pitch and returns the grey image and its exact line geometry.
    static func renderLine(_ text: [Character], style: TrainingStyle) -> (GreyImage, LineGeometry) {
        if style.resample < 0.999 {
            var big = style
            big.pitch = style.pitch / style.resample
            (big.resample, big.blur, big.noise, big.contrast, big.jpegQuality) = (1, 0, 0, 1, nil)
            let (src, g) = renderLine(text, style: big)
            let sc = style.resample
            let W = max(1, Int(Double(src.width) * sc)), H = max(1, Int(Double(src.height) * sc))
            var px = [Double](repeating: 255, count: W * H)
            for y in 0..<H {
                for x in 0..<W { px[y * W + x] = src.sample((Double(x) + 0.5) / sc - 0.5, (Double(y) + 0.5) / sc - 0.5) }
            }
            let geom = LineGeometry(originX: (g.originX + 0.5) * sc - 0.5, originY: (g.originY + 0.5) * sc - 0.5,
                                    dirX: 1, dirY: 0, pitch: g.pitch * sc, capHeight: g.capHeight * sc)
            return (degrade(px, W, H, style: style), geom)
        }
        let size = style.pitch / fontMetrics.advance * style.glyphScale
        let cap = fontMetrics.cap * size
        let margin = 2 * style.pitch
        let W = Int(Double(text.count) * style.pitch + 2 * margin), H = Int(cap * 3 + 8)
        let s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(W), Int32(H))!
        defer { cairo_surface_destroy(s) }
        let cr = cairo_create(s)!
        defer { cairo_destroy(cr) }
        cairo_set_source_rgb(cr, 1, 1, 1)
        cairo_paint(cr)
        cairo_select_font_face(cr, "OCR B", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, size)
        let x0 = margin + style.offset.0, baseline = (Double(H) + cap) / 2 + style.offset.1
        var glyphCentres: [Double] = []
        for (i, ch) in text.enumerated() {
            var e = cairo_text_extents_t()
            cairo_text_extents(cr, String(ch), &e)
            let x = x0 + Double(i) * style.pitch
            glyphCentres.append(x + style.pitch * style.glyphScale / 2)
            cairo_move_to(cr, x, baseline)
            if style.hinted {
                cairo_set_source_rgb(cr, 0, 0, 0)
                cairo_show_text(cr, String(ch))
            } else {
                cairo_text_path(cr, String(ch))
            }
        }
        cairo_set_source_rgb(cr, 0, 0, 0)
        if style.hinted {
        } else if style.stroke > 0 {
            cairo_fill_preserve(cr)
            cairo_set_line_width(cr, style.stroke * size)
            cairo_stroke(cr)
        } else {
            cairo_fill_preserve(cr)
            cairo_set_source_rgb(cr, 1, 1, 1)
            cairo_set_line_width(cr, -style.stroke * size)
            cairo_stroke(cr)
        }
        let img = (try? Raster.rgb(from: s))?.grey ?? GreyImage(width: W, height: H)
        let geom = LineGeometry(originX: glyphCentres[0] - 0.5, originY: baseline - cap / 2 - 0.5,
                                dirX: 1, dirY: 0, pitch: style.pitch, capHeight: cap)
        return (degrade(img.pixels.map(Double.init), W, H, style: style), geom)
    }

    /// The style's contrast, blur, noise and JPEG quantisation applied to a W × H grey raster.
    static func degrade(_ pixels: [Double], _ W: Int, _ H: Int, style: TrainingStyle) -> GreyImage {
        let lo = 255 * (1 - style.contrast) * 0.7, hi = 255 - 255 * (1 - style.contrast) * 0.3
        var px = pixels.map { lo + $0 / 255 * (hi - lo) }
        if style.blur > 0.1 { px = boxBlur(px, W, H, radius: style.blur) }
        var rng = SeededRNG(seed: UInt64(style.pitch * 1000) ^ UInt64(style.noise * 77))
        for i in 0..<px.count { px[i] += rng.gaussian() * style.noise }
        var img = GreyImage(width: W, height: H, pixels: px.map(clamp))
        if let q = style.jpegQuality {
            let rgb = RGBImage(width: W, height: H, pixels: img.pixels.flatMap { [$0, $0, $0] })
            img = JPEGQuantiser(quality: q).apply(rgb).grey
        }
        return img
    }

    /// Gaussian-like blur by three box passes of the given radius (pixels).
    static func boxBlur(_ src: [Double], _ W: Int, _ H: Int, radius: Double) -> [Double] {
        let sigma = radius
        var k = (-Int((3 * sigma).rounded(.up))...Int((3 * sigma).rounded(.up))).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let sum = k.reduce(0, +); k = k.map { $0 / sum }
        let r = k.count / 2
        var tmp = src, out = src
        for y in 0..<H { for x in 0..<W { var a = 0.0; for i in -r...r { a += k[i + r] * src[y * W + min(W - 1, max(0, x + i))] }; tmp[y * W + x] = a } }
        for y in 0..<H { for x in 0..<W { var a = 0.0; for i in -r...r { a += k[i + r] * tmp[min(H - 1, max(0, y + i)) * W + x] }; out[y * W + x] = a } }
        return out
    }

    // MARK: LDA

    /// Linear discriminant analysis: w_k = Σ⁻¹ μ_k, b_k = −½ μ_kᵀ Σ⁻¹ μ_k + log π_k, with
    /// Σ shrunk towards its mean diagonal by `shrinkage` (Ledoit–Wolf style) to stay well conditioned.
    static func fitLDA(_ x: [[Double]], _ y: [Int], classes: Int, shrinkage: Double)
        -> (weights: [Double], biases: [Double], means: [Double], logPriors: [Double], factor: [Double]) {
        let d = x[0].count, n = x.count
        var means = [[Double]](repeating: [Double](repeating: 0, count: d), count: classes)
        var counts = [Double](repeating: 0, count: classes)
        for (f, c) in zip(x, y) { counts[c] += 1; for j in 0..<d { means[c][j] += f[j] } }
        for c in 0..<classes where counts[c] > 0 { for j in 0..<d { means[c][j] /= counts[c] } }
        var cov = [Double](repeating: 0, count: d * d)
        var centred = [Double](repeating: 0, count: d)
        for (f, c) in zip(x, y) {
            for j in 0..<d { centred[j] = f[j] - means[c][j] }
            cov.withUnsafeMutableBufferPointer { cv in
                for a in 0..<d {
                    let ca = centred[a]
                    if ca == 0 { continue }
                    for b in a..<d { cv[a * d + b] += ca * centred[b] }
                }
            }
        }
        var meanDiag = 0.0
        for a in 0..<d { for b in a..<d { cov[a * d + b] /= Double(n - classes); cov[b * d + a] = cov[a * d + b] }; meanDiag += cov[a * d + a] }
        meanDiag /= Double(d)
        for a in 0..<d { for b in 0..<d { cov[a * d + b] *= (1 - shrinkage) }; cov[a * d + a] += shrinkage * meanDiag + 1e-6 }
        let chol = cholesky(cov, d)
        var w = [Double](repeating: 0, count: classes * d), bias = [Double](repeating: 0, count: classes)
        let logPriors = counts.map { log(max($0, 1) / Double(n)) }
        for c in 0..<classes {
            let wc = choleskySolve(chol, d, means[c])
            var q = 0.0
            for j in 0..<d { w[c * d + j] = wc[j]; q += wc[j] * means[c][j] }
            bias[c] = -0.5 * q + logPriors[c]
        }
        return (w, bias, means.flatMap { $0 }, logPriors, chol)
    }

    static func cholesky(_ a: [Double], _ n: Int) -> [Double] {
        var l = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0...i {
                var s = a[i * n + j]
                for k in 0..<j { s -= l[i * n + k] * l[j * n + k] }
                l[i * n + j] = i == j ? (max(s, 1e-12)).squareRoot() : s / l[j * n + j]
            }
        }
        return l
    }

    /// L⁻¹b (forward substitution).
    static func forwardSolve(_ l: [Double], _ n: Int, _ b: [Double]) -> [Double] {
        var y = b
        l.withUnsafeBufferPointer { l in
            for i in 0..<n { var s = y[i]; for k in 0..<i { s -= l[i * n + k] * y[k] }; y[i] = s / l[i * n + i] }
        }
        return y
    }

    /// L⁻ᵀb (backward substitution).
    static func backSolve(_ l: [Double], _ n: Int, _ b: [Double]) -> [Double] {
        var x = b
        l.withUnsafeBufferPointer { l in
            for i in stride(from: n - 1, through: 0, by: -1) { var s = x[i]; for k in (i + 1)..<n { s -= l[k * n + i] * x[k] }; x[i] = s / l[i * n + i] }
        }
        return x
    }

    static func choleskySolve(_ l: [Double], _ n: Int, _ b: [Double]) -> [Double] {
        var y = b
        for i in 0..<n { var s = y[i]; for k in 0..<i { s -= l[i * n + k] * y[k] }; y[i] = s / l[i * n + i] }
        var x = y
        for i in stride(from: n - 1, through: 0, by: -1) { var s = x[i]; for k in (i + 1)..<n { s -= l[k * n + i] * x[k] }; x[i] = s / l[i * n + i] }
        return x
    }
}
