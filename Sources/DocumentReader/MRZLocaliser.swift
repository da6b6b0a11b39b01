import Foundation

/// A 2-D affine map `(x, y) → (a·x + b·y + c, d·x + e·y + f)`.
struct Affine2D: Sendable {
    var a, b, c, d, e, f: Double
    static let identity = Affine2D(a: 1, b: 0, c: 0, d: 0, e: 1, f: 0)
    @inline(__always) func apply(_ x: Double, _ y: Double) -> (Double, Double) { (a * x + b * y + c, d * x + e * y + f) }
    /// `self ∘ other` (apply `other` first).
    func after(_ o: Affine2D) -> Affine2D {
        Affine2D(a: a * o.a + b * o.d, b: a * o.b + b * o.e, c: a * o.c + b * o.f + c,
                 d: d * o.a + e * o.d, e: d * o.b + e * o.e, f: d * o.c + e * o.f + f)
    }
}

/// A connected component of ink: bounding box, pixel count, centroid.
struct Blob: Sendable {
    var minX: Int, minY: Int, maxX: Int, maxY: Int, count: Int
    var sx: Double, sy: Double
    var width: Int { maxX - minX + 1 }
    var height: Int { maxY - minY + 1 }
    var cx: Double { sx / Double(count) }
    var cy: Double { sy / Double(count) }
    var midX: Double { Double(minX + maxX) / 2 }
    var midY: Double { Double(minY + maxY) / 2 }
}

/// A located MRZ: one `LineGeometry` per text line (top to bottom in reading order), in the
/// coordinates of the image given to `MRZLocaliser.locate`, and the characters per line.
public struct MRZLocation: Sendable {
    public var lines: [LineGeometry]
    public var lineLength: Int
    /// Text direction in the image, degrees (0 = left-to-right horizontal, 90 = top-to-bottom).
    public var angleDegrees: Double
    /// The localiser's score (0…1): how well the lines fit an MRZ layout.
    public var score: Double = 0
}

/// Finds the machine-readable zone in a page photo and rectifies it to straight lines of cells.
///
/// Method: local-mean binarisation (integral image), connected components of ink, the dominant
/// text direction from the angles between neighbouring character-sized components (a histogram
/// over 0–180°), rotation of the working image to make text horizontal, chaining of components
/// into text lines, and selection of 2 or 3 parallel, equally long, evenly spaced lines of
/// 30/36/44 fixed-pitch cells (ICAO 9303-3 §4.2, -4, -5). Pitch and origin are fitted by least
/// squares over all character centres of a line, which absorbs mild perspective. The 0°/180°
/// ambiguity is left to the recogniser (`MRZReader`), which reads both ways.
public enum MRZLocaliser {
    /// Candidate MRZs, best first (up to `limit`), in `image` coordinates.
    public static func locate(_ image: GreyImage, limit: Int = 3) -> [MRZLocation] {
        guard image.width >= 16, image.height >= 16 else { return [] }
        // Working scale: ~1000 px on the long side, at least 2× for tiny images.
        let maxDim = max(image.width, image.height)
        var work: GreyImage
        var toOrig: Affine2D
        if maxDim > 1200 {
            let f = Int((Double(maxDim) / 1000).rounded(.up))
            work = image.downscaled(by: f)
            toOrig = Affine2D(a: Double(f), b: 0, c: Double(f) / 2 - 0.5, d: 0, e: Double(f), f: Double(f) / 2 - 0.5)
        } else if maxDim < 700 {
            let s = maxDim < 400 ? 3.0 : 2.0
            work = resample(image, width: Int(Double(image.width) * s), height: Int(Double(image.height) * s),
                            map: Affine2D(a: 1 / s, b: 0, c: 0.5 / s - 0.5, d: 0, e: 1 / s, f: 0.5 / s - 0.5))
            toOrig = Affine2D(a: 1 / s, b: 0, c: 0.5 / s - 0.5, d: 0, e: 1 / s, f: 0.5 / s - 0.5)
        } else {
            work = image
            toOrig = .identity
        }
        let blobs0 = components(binarise(work))
        var angles = dominantAngles(blobs0)
        if angles.isEmpty { angles = [0] }
        var found: [(MRZLocation, Double)] = []
        var tried: [Double] = []
        for theta in angles + angles.map({ $0 + 90 }) {
            let t = theta.truncatingRemainder(dividingBy: 180)
            if tried.contains(where: { abs($0 - t) < 2 || abs(abs($0 - t) - 180) < 2 }) { continue }
            tried.append(t)
            let (rot, rotToWork) = rotateToHorizontal(work, degrees: t)
            let blobs = components(binarise(rot))
            for (lines, n, score) in findMRZ(blobs) {
                let map = toOrig.after(rotToWork)
                let geoms = lines.map { transform($0, map) }
                found.append((MRZLocation(lines: geoms, lineLength: n, angleDegrees: t, score: score), score))
            }
            if found.count >= 1 && theta == angles[0] && found.max(by: { $0.1 < $1.1 })!.1 > 0.8 { break }
        }
        return found.sorted { $0.1 > $1.1 }.prefix(limit).map(\.0)
    }

    // MARK: Steps

    static func resample(_ src: GreyImage, width: Int, height: Int, map: Affine2D, outside: Double = 255) -> GreyImage {
        var px = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let (u, v) = map.apply(Double(x), Double(y))
                px[y * width + x] = clamp(src.sample(u, v, outside: outside))
            }
        }
        return GreyImage(width: width, height: height, pixels: px)
    }

    /// Rotates so that text at `degrees` (image angle, y down) becomes horizontal.
    /// Returns the new image and the map from its pixels to `image` pixels.
    static func rotateToHorizontal(_ image: GreyImage, degrees: Double) -> (GreyImage, Affine2D) {
        if abs(degrees) < 0.3 { return (image, .identity) }
        let t = degrees * Double.pi / 180, c = cos(t), s = sin(t)
        let W = Double(image.width), H = Double(image.height)
        let nw = Int((abs(W * c) + abs(H * s)).rounded(.up)), nh = Int((abs(W * s) + abs(H * c)).rounded(.up))
        // new (x, y) → old: old = centre + R(t)·(new − newCentre)
        let ncx = Double(nw - 1) / 2, ncy = Double(nh - 1) / 2, ocx = (W - 1) / 2, ocy = (H - 1) / 2
        let map = Affine2D(a: c, b: -s, c: ocx - c * ncx + s * ncy, d: s, e: c, f: ocy - s * ncx - c * ncy)
        // fill outside with the median grey so the border makes no ink
        let outside = Double(image.pixels[image.pixels.count / 2])
        return (resample(image, width: nw, height: nh, map: map, outside: max(outside, 128)), map)
    }

    /// Ink mask: pixel darker than its local mean (window ≈ 1/40 of the long side) by a margin.
    static func binarise(_ img: GreyImage) -> (mask: [Bool], width: Int, height: Int) {
        let W = img.width, H = img.height
        let r = max(6, max(W, H) / 45)
        var integral = [Int](repeating: 0, count: (W + 1) * (H + 1))
        for y in 0..<H {
            var row = 0
            for x in 0..<W {
                row += Int(img.pixels[y * W + x])
                integral[(y + 1) * (W + 1) + x + 1] = integral[y * (W + 1) + x + 1] + row
            }
        }
        var mask = [Bool](repeating: false, count: W * H)
        for y in 0..<H {
            let y0 = max(0, y - r), y1 = min(H, y + r + 1)
            for x in 0..<W {
                let x0 = max(0, x - r), x1 = min(W, x + r + 1)
                let sum = integral[y1 * (W + 1) + x1] - integral[y0 * (W + 1) + x1] - integral[y1 * (W + 1) + x0] + integral[y0 * (W + 1) + x0]
                let mean = Double(sum) / Double((x1 - x0) * (y1 - y0))
                let v = Double(img.pixels[y * W + x])
                mask[y * W + x] = v < mean - (8 + 0.1 * mean)
            }
        }
        return (mask, W, H)
    }

    /// 8-connected components (two-pass union–find).
    static func components(_ bin: (mask: [Bool], width: Int, height: Int)) -> [Blob] {
        let W = bin.width, H = bin.height
        var labels = [Int32](repeating: -1, count: W * H)
        var parent: [Int32] = []
        func find(_ x: Int32) -> Int32 {
            var x = x
            while parent[Int(x)] != x { parent[Int(x)] = parent[Int(parent[Int(x)])]; x = parent[Int(x)] }
            return x
        }
        func union(_ a: Int32, _ b: Int32) {
            let ra = find(a), rb = find(b)
            if ra != rb { if ra < rb { parent[Int(rb)] = ra } else { parent[Int(ra)] = rb } }
        }
        for y in 0..<H {
            for x in 0..<W where bin.mask[y * W + x] {
                var l: Int32 = -1
                let neighbours = [(x - 1, y), (x - 1, y - 1), (x, y - 1), (x + 1, y - 1)]
                for (nx, ny) in neighbours where nx >= 0 && ny >= 0 && nx < W {
                    let nl = labels[ny * W + nx]
                    if nl >= 0 { if l < 0 { l = nl } else if nl != l { union(l, nl) } }
                }
                if l < 0 { l = Int32(parent.count); parent.append(l) }
                labels[y * W + x] = l
            }
        }
        var index = [Int32](repeating: -1, count: parent.count)
        var blobs: [Blob] = []
        for y in 0..<H {
            for x in 0..<W {
                let l = labels[y * W + x]
                if l < 0 { continue }
                let root = Int(find(l))
                if index[root] < 0 { index[root] = Int32(blobs.count); blobs.append(Blob(minX: x, minY: y, maxX: x, maxY: y, count: 0, sx: 0, sy: 0)) }
                let i = Int(index[root])
                blobs[i].minX = min(blobs[i].minX, x); blobs[i].maxX = max(blobs[i].maxX, x)
                blobs[i].minY = min(blobs[i].minY, y); blobs[i].maxY = max(blobs[i].maxY, y)
                blobs[i].count += 1; blobs[i].sx += Double(x); blobs[i].sy += Double(y)
            }
        }
        return blobs.filter { $0.count >= 4 }
    }

    /// Dominant text directions (degrees in [0, 180)), strongest first, from nearest-neighbour
    /// vectors between character-sized components.
    static func dominantAngles(_ blobs: [Blob]) -> [Double] {
        let chars = blobs.filter { b in
            let s = max(b.width, b.height)
            return s >= 4 && s <= 80 && Double(b.count) > 0.12 * Double(b.width * b.height)
        }
        guard chars.count >= 10 else { return [] }
        // grid hash
        let cell = 40
        var grid: [Int: [Int]] = [:]
        for (i, b) in chars.enumerated() { grid[(Int(b.midY) / cell) * 100_000 + Int(b.midX) / cell, default: []].append(i) }
        var hist = [Double](repeating: 0, count: 180)
        for (i, b) in chars.enumerated() {
            let s = Double(max(b.width, b.height))
            var best = Double.infinity, bestAngle = 0.0
            let gx = Int(b.midX) / cell, gy = Int(b.midY) / cell
            for dy in -2...2 {
                for dx in -2...2 {
                    for j in grid[(gy + dy) * 100_000 + gx + dx] ?? [] where j != i {
                        let o = chars[j]
                        let so = Double(max(o.width, o.height))
                        guard so > 0.6 * s && so < 1.6 * s else { continue }
                        let vx = o.midX - b.midX, vy = o.midY - b.midY
                        let d = (vx * vx + vy * vy).squareRoot()
                        if d < best && d < 2.2 * s { best = d; bestAngle = atan2(vy, vx) * 180 / Double.pi }
                    }
                }
            }
            if best.isFinite {
                var a = bestAngle.truncatingRemainder(dividingBy: 180)
                if a < 0 { a += 180 }
                hist[Int(a) % 180] += 1
            }
        }
        // smooth circularly and pick peaks
        var smooth = [Double](repeating: 0, count: 180)
        for i in 0..<180 { for k in -2...2 { smooth[i] += hist[(i + k + 180) % 180] * (3 - Double(abs(k))) } }
        var peaks: [(Double, Double)] = []
        for i in 0..<180 where smooth[i] > 0 && smooth[i] >= smooth[(i + 179) % 180] && smooth[i] > smooth[(i + 1) % 180] {
            // sub-degree refinement by the weighted mean of ±2 bins
            var w = 0.0, m = 0.0
            for k in -2...2 { let v = hist[(i + k + 180) % 180]; w += v; m += v * Double(k) }
            var a = Double(i) + 0.5 + (w > 0 ? m / w : 0)
            if a >= 180 { a -= 180 }; if a < 0 { a += 180 }
            peaks.append((a, smooth[i]))
        }
        peaks.sort { $0.1 > $1.1 }
        return peaks.prefix(2).map(\.0)
    }

    /// Text lines in a horizontal-text image: chains of components, each with its blobs sorted by x.
    static func chains(_ blobs: [Blob]) -> [[Blob]] {
        let cand = blobs.filter { $0.height >= 3 && $0.height <= 90 && $0.width <= 12 * $0.height }
            .sorted { $0.minX < $1.minX }
        var parent = Array(0..<cand.count)
        func find(_ x: Int) -> Int { var x = x; while parent[x] != x { parent[x] = parent[parent[x]]; x = parent[x] }; return x }
        var linkedRight = [Bool](repeating: false, count: cand.count)
        for i in 0..<cand.count {
            let a = cand[i]
            let h = Double(a.height)
            var best = -1, bestGap = Double.infinity
            var j = i + 1
            while j < cand.count && Double(cand[j].minX - a.maxX) < 2.0 * max(h, 4) {
                let b = cand[j]
                let hb = Double(b.height)
                let gap = Double(b.minX - a.maxX)
                if gap > -0.3 * h && abs(b.midY - a.midY) < 0.45 * max(h, hb) && hb < 2.2 * h && h < 2.2 * hb && gap < bestGap {
                    best = j; bestGap = gap
                }
                j += 1
            }
            if best >= 0 && !linkedRight[i] {
                linkedRight[i] = true
                let ra = find(i), rb = find(best)
                if ra != rb { parent[rb] = ra }
            }
        }
        var groups: [Int: [Blob]] = [:]
        for i in 0..<cand.count { groups[find(i), default: []].append(cand[i]) }
        return groups.values.filter { $0.count >= 8 }.map { $0.sorted { $0.minX < $1.minX } }
    }

    struct TextLine {
        var blobs: [Blob]
        var capHeight: Double
        var left: Double, right: Double
        var slope: Double, intercept: Double   // centre line y = intercept + slope·x
        var pitch: Double
        var cy: Double { intercept + slope * (left + right) / 2 }
    }

    static func textLine(_ blobs: [Blob]) -> TextLine? {
        let heights = blobs.map { Double($0.height) }.sorted()
        let cap = heights[heights.count * 3 / 4]
        let tall = blobs.filter { Double($0.height) > 0.75 * cap && Double($0.height) < 1.3 * cap }
        guard tall.count >= 4 else { return nil }
        // least-squares centre line over tall components, refitted without outliers
        var fitSet = tall
        var slope = 0.0, mx = 0.0, my = 0.0
        for _ in 0..<3 {
            let n = Double(fitSet.count)
            mx = fitSet.map(\.midX).reduce(0, +) / n; my = fitSet.map(\.midY).reduce(0, +) / n
            var sxx = 0.0, sxy = 0.0
            for b in fitSet { sxx += (b.midX - mx) * (b.midX - mx); sxy += (b.midX - mx) * (b.midY - my) }
            slope = sxx > 0 ? sxy / sxx : 0
            let kept = tall.filter { abs($0.midY - (my + slope * ($0.midX - mx))) < 0.2 * cap }
            if kept.count < 4 || kept.count == fitSet.count { break }
            fitSet = kept
        }
        // pitch: median spacing between centres of consecutive narrow blobs
        var spacings: [Double] = []
        for k in 1..<blobs.count where Double(blobs[k].width) < 1.0 * cap && Double(blobs[k - 1].width) < 1.0 * cap {
            spacings.append(blobs[k].midX - blobs[k - 1].midX)
        }
        spacings.sort()
        let pitch = spacings.isEmpty ? cap : spacings[spacings.count / 2]
        let intercept = my - slope * mx
        let kept = trimmedEnds(blobs, pitch: pitch, capHeight: cap) { $0.midY - (intercept + slope * $0.midX) }
        return TextLine(blobs: kept, capHeight: cap, left: Double(kept.first!.minX), right: Double(kept.last!.maxX),
                        slope: slope, intercept: intercept, pitch: pitch)
    }

    /// A chain without the components at its ends that are not glyphs of the line: the chaining
    /// links any component of similar height within two heights, so a card edge or a stripe of a
    /// cluttered background next to the first or last glyph is often chained on, and the line
    /// comes out a cell too long (the grid then slips by a cell). An MRZ line is one run of
    /// fixed-pitch glyphs of one cap height on one baseline (ICAO 9303-3 §4.2: no spaces, every
    /// position printed), so an end component is dropped (up to `maxTrim` at each end) when
    /// - the gap between its box and its neighbour's exceeds 1.2 pitches (neighbouring OCR-B glyph
    ///   boxes leave at most ≈ 0.9 pitch between them, for two `I`s, and up to ≈ 10 % more where
    ///   perspective widens the pitch),
    /// - it is taller than 1.35 cap heights (glyphs reach ≈ 1.1 cap, `cap` being the 75th percentile height), or
    /// - its centre lies more than 0.3 cap heights off the centre line of its neighbours (glyphs
    ///   keep within ≈ 0.1 of each other). The centre line is the fitted straight one, moved to the
    ///   median offset of the next `neighbours` components inward: a page bent near the spine, or
    ///   a fit made on the tall glyphs of one half of the line only (a TD3 line 1 is fillers after
    ///   the name), leaves the glyphs at a line end 0.3–0.35 cap off the straight fit while they
    ///   lie on their neighbours' line (62_pass-aus: the last glyph of both lines 0.33 cap off
    ///   the fit, 0.14 off its neighbours; trimming it made the grid one cell short), whereas a
    ///   stray component is off its neighbours as much as off the fit.
    /// Chosen from five failing images of the first 300 generated ones (seed 100000), where the
    /// stray components lay 2.3–3.6 pitches from the glyphs, 1.4–1.9 cap heights tall or
    /// 0.4–0.6 cap heights off the line; checked on the 33 real specimens (unchanged).
    static func trimmedEnds(_ blobs: [Blob], pitch: Double, capHeight cap: Double, maxTrim: Int = 3,
                            neighbours: Int = 4, offLine: (Blob) -> Double) -> [Blob] {
        func stray(_ b: Blob, gap: Double, inward: ArraySlice<Blob>) -> Bool {
            let near = inward.map(offLine).sorted()
            let local = near.isEmpty ? 0 : near[near.count / 2]
            return gap > 1.2 * pitch || Double(b.height) > 1.35 * cap || abs(offLine(b) - local) > 0.3 * cap
        }
        var lo = 0, hi = blobs.count - 1
        while lo < maxTrim && hi - lo + 1 > 8
            && stray(blobs[lo], gap: Double(blobs[lo + 1].minX - blobs[lo].maxX), inward: blobs[(lo + 1)...min(hi, lo + neighbours)]) { lo += 1 }
        while blobs.count - 1 - hi < maxTrim && hi - lo + 1 > 8
            && stray(blobs[hi], gap: Double(blobs[hi].minX - blobs[hi - 1].maxX), inward: blobs[max(lo, hi - neighbours)...(hi - 1)]) { hi -= 1 }
        return Array(blobs[lo...hi])
    }

    /// MRZ candidates in a horizontal-text image: (line geometries, characters per line, score 0…1).
    static func findMRZ(_ blobs: [Blob]) -> [([LineGeometry], Int, Double)] {
        let lines = chains(blobs).compactMap(textLine).filter { ($0.right - $0.left) > 18 * $0.pitch * 0.9 }
            .sorted { $0.cy < $1.cy }
        var out: [([LineGeometry], Int, Double)] = []
        for i in 0..<lines.count {
            for count in [3, 2] {
                guard i + count <= lines.count else { continue }
                // take the next lines below that look alike
                var group = [lines[i]]
                var k = i + 1
                while group.count < count && k < lines.count {
                    let last = group.last!, c = lines[k]
                    let spacing = c.cy - last.cy
                    if spacing > 1.2 * last.capHeight && spacing < 3.2 * last.capHeight
                        && abs(c.capHeight - last.capHeight) < 0.35 * last.capHeight
                        && abs((c.right - c.left) - (last.right - last.left)) < 0.2 * (last.right - last.left)
                        && abs(c.left - last.left) < 3 * last.pitch {
                        group.append(c)
                    } else if spacing > 3.2 * last.capHeight { break }
                    k += 1
                }
                guard group.count == count else { continue }
                let pitch = group.map(\.pitch).sorted()[count / 2]
                let span = group.map { $0.right - $0.left }.max()!
                let est = span / pitch + 0.4
                let options = count == 3 ? [30] : [36, 44]
                let n = options.min { abs(Double($0) - est) < abs(Double($1) - est) }!
                let fit = abs(Double(n) - est) / Double(n)
                guard fit < 0.2 else { continue }
                let geoms = group.map { lineGeometry($0, cells: n) }
                let score = (1 - fit) * Double(min(group.map(\.blobs.count).reduce(0, +), n * count)) / Double(n * count)
                out.append((geoms, n, score))
            }
        }
        return out
    }

    /// Fits cell centres `x = x0 + i·p + ½·q·i²` to the line's blobs and returns its geometry.
    ///
    /// The narrow blobs (one glyph each; merged filler runs are wider than a pitch) are given cell
    /// indices two ways, and the fit that puts more of them within 0.25 pitch of a cell centre is
    /// kept (the straight one on a tie):
    /// - straight: rounding each blob's offset from the left end against a constant-pitch grid,
    ///   then against the fitted quadratic;
    /// - walked: along the line, each blob a whole number of local pitches after the one before
    ///   (ICAO 9303-3 §4.2: fixed 10-per-inch pitch, every position printed), the local pitch being
    ///   the median of the neighbouring single-cell spacings; a blob that sits more than 0.3 pitch
    ///   off a whole number (a speck, a broken glyph) is passed over.
    /// Under perspective the pitch changes along the line (specimen-100128: 13 → 15.5 px over 30
    /// cells), which bows mid-line glyphs half a pitch off the constant-pitch chord, where rounding
    /// gives them the neighbour's index; walking does not, but one wrong step shifts every index
    /// after it, hence the choice. The outer edges of the first and last blobs (≈ 0.3 pitch from
    /// the end cell centres) also hold the ends, where trailing fillers merged into one blob.
    static func lineGeometry(_ l: TextLine, cells n: Int) -> LineGeometry {
        let straight = cellFit(l, cells: n, walked: false), walked = cellFit(l, cells: n, walked: true)
        let (x0, p, q) = walked.onCentre > straight.onCentre ? (walked.x0, walked.p, walked.q) : (straight.x0, straight.p, straight.q)
        let norm = (1 + l.slope * l.slope).squareRoot()
        return LineGeometry(originX: x0, originY: l.intercept + l.slope * x0, dirX: 1 / norm, dirY: l.slope / norm,
                            pitch: p * norm, capHeight: l.capHeight, pitchSlope: q * norm)
    }

    /// One of `lineGeometry`'s two fits (in the line's x coordinate) and how many narrow blobs lie
    /// within 0.25 pitch of their nearest cell centre under it.
    static func cellFit(_ l: TextLine, cells n: Int, walked: Bool) -> (x0: Double, p: Double, q: Double, onCentre: Int) {
        var p = (l.right - l.left) / (Double(n) - 0.4)
        var x0 = l.left + 0.3 * p
        var q = 0.0
        let narrow = l.blobs.filter { Double($0.width) < 1.0 * p }.map(\.midX)
        var walkIndex = [Double?](repeating: nil, count: narrow.count)
        if walked, let first = narrow.first {
            var gaps: [Double] = []
            for k in 1..<max(1, narrow.count) { gaps.append(narrow[k] - narrow[k - 1]) }
            // single-cell spacings: within 0.6–1.4 of the mean pitch
            let single = gaps.enumerated().filter { $0.element > 0.6 * p && $0.element < 1.4 * p }
            var last = (k: 0, i: max(0, ((first - x0) / p).rounded()))
            walkIndex[0] = last.i
            for k in 1..<max(1, narrow.count) {
                let near = single.filter { abs($0.offset - (k - 1)) <= 4 }.map(\.element).sorted()
                let local = near.isEmpty ? p : near[near.count / 2]
                let steps = (narrow[k] - narrow[last.k]) / local
                guard steps.rounded() >= 1, abs(steps - steps.rounded()) <= 0.3 else { continue }
                last = (k, last.i + steps.rounded())
                walkIndex[k] = last.i
            }
        }
        for pass in 0..<4 {
            var rows: [[Double]] = [], rhs: [Double] = []
            for (k, pos) in narrow.enumerated() {
                var i: Double
                if walked {
                    guard let w = walkIndex[k] else { continue }
                    i = w
                } else {
                    i = ((pos - x0) / p).rounded()
                    if q != 0 {
                        var bestD = Double.infinity
                        for c in 0..<n {
                            let dc = Double(c)
                            let d: Double = abs(x0 + dc * p + 0.5 * q * dc * dc - pos)
                            if d < bestD { bestD = d; i = dc }
                        }
                    }
                }
                let tolerated = walked && pass == 0 ? Double.infinity : 0.35 * p
                guard i >= 0 && i < Double(n) && abs(pos - (x0 + i * p + 0.5 * q * i * i)) < tolerated else { continue }
                rows.append([1, i, 0.5 * i * i]); rhs.append(pos)
            }
            for _ in 0..<3 {
                rows.append([1, 0, 0]); rhs.append(l.left + 0.3 * p)
                let last = Double(n - 1)
                rows.append([1, last, 0.5 * last * last]); rhs.append(l.right - 0.3 * p)
            }
            guard rows.count >= 14 else { break }
            let quadratic = walked ? pass >= 1 : pass >= 2
            let k = quadratic ? 3 : 2
            var ata = [[Double]](repeating: [Double](repeating: 0, count: k + 1), count: k)
            for (r, y) in zip(rows, rhs) {
                for a in 0..<k { for b in 0..<k { ata[a][b] += r[a] * r[b] }; ata[a][k] += r[a] * y }
            }
            guard let sol = solveLinear(ata), sol[1] > 0.8 * p, sol[1] < 1.25 * p else { break }
            x0 = sol[0]; p = sol[1]; q = quadratic ? sol[2] : 0
            if abs(q) * Double(n) > 0.25 * p { q = 0 }
        }
        var onCentre = 0
        for pos in narrow {
            var bestD = Double.infinity
            for c in 0..<n {
                let dc = Double(c)
                bestD = min(bestD, abs(x0 + dc * p + 0.5 * q * dc * dc - pos))
            }
            if bestD < 0.25 * p { onCentre += 1 }
        }
        return (x0, p, q, onCentre)
    }

    /// Maps a geometry through an affine map (origin, direction, lengths).
    static func transform(_ g: LineGeometry, _ m: Affine2D) -> LineGeometry {
        let (ox, oy) = m.apply(g.originX, g.originY)
        let (ex, ey) = m.apply(g.originX + g.dirX * g.pitch, g.originY + g.dirY * g.pitch)
        let (hx, hy) = m.apply(g.originX - g.dirY * g.capHeight, g.originY + g.dirX * g.capHeight)
        let dx = ex - ox, dy = ey - oy
        let p = (dx * dx + dy * dy).squareRoot()
        let h = ((hx - ox) * (hx - ox) + (hy - oy) * (hy - oy)).squareRoot()
        return LineGeometry(originX: ox, originY: oy, dirX: dx / p, dirY: dy / p, pitch: p, capHeight: h,
                            pitchSlope: g.pitchSlope * p / g.pitch)
    }
}
