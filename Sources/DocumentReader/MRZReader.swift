import Foundation
import MRZ

/// The recognised MRZ text of one image, in the shape the `MRZ` parser takes:
/// `lines[l]`, `alternatives[l][c]` (runner-up characters, most likely first) and
/// `confidences[l][c]` (posterior of the chosen character, 0…1).
public struct MRZReading: Sendable, Equatable {
    public var lines: [String]
    public var alternatives: [[[Character]]]
    public var confidences: [[Double]]
    /// Where the MRZ was found (image coordinates, reading direction).
    public var geometry: [LineGeometry]
    /// Text direction in the image, degrees counter-clockwise-from-x in image axes (y down), 0…360.
    public var angleDegrees: Double
    /// `twinConfidences[l][c]`: the classifier's posterior (0…1) for the cell's *check-digit twin*,
    /// the character with the same ICAO 9303-3 §4.9 check-digit value modulo 10 (K↔<, L↔1, G↔6;
    /// see `MRZReader.checkDigitTwin`), 0 when the cell has none. A check digit cannot confirm
    /// such a cell, so the reader relies on this figure to call it doubtful.
    public var twinConfidences: [[Double]] = []
    /// `posteriors[l][c]`: the classifier's full posterior over the 37 MRZ symbols for cell `c` of
    /// line `l` (every symbol of `OCRBClassifier.alphabet` present, values 0…1 summing to 1,
    /// temperature-calibrated on held-out rendered cells, see `OCRBClassifier.temperature`), from
    /// the model adapted to this document (`OCRBClassifier.adapted(to:)`; name positions keep the
    /// unadapted model), re-weighed by a glyph-shape specialist where the two best classes were
    /// both among D/O/C/0/Q or both E/F (`GlyphShapeModel`), before any positional prior or K/`<` rule. Empty when the reading was not
    /// made by `MRZReader`.
    public var posteriors: [[[Character: Double]]] = []

    /// The same reading with its geometry in other pixel coordinates: point → k · point + (x, y).
    public func mapped(k: Double, x: Double, y: Double) -> MRZReading {
        var r = self
        r.geometry = geometry.map { g in
            LineGeometry(originX: k * g.originX + x, originY: k * g.originY + y, dirX: g.dirX, dirY: g.dirY,
                         pitch: k * g.pitch, capHeight: k * g.capHeight, pitchSlope: k * g.pitchSlope)
        }
        return r
    }

    /// Mean per-character confidence.
    public var meanConfidence: Double {
        let all = confidences.flatMap { $0 }
        return all.isEmpty ? 0 : all.reduce(0, +) / Double(all.count)
    }
}

/// Locates and reads the MRZ of a page image with the OCR-B classifier (`OCRBClassifier`).
public enum MRZReader {
    /// OCR-B characters that differ by a few pixels at low resolution; each cell's alternatives end
    /// with the look-alikes of its chosen character.
    static let lookAlikes: [Character: [Character]] = [
        "0": ["O", "D", "Q"], "O": ["0", "D", "Q"], "D": ["0", "O"], "Q": ["0", "O"], "1": ["I"], "I": ["1"],
        "2": ["Z"], "Z": ["2"], "5": ["S"], "S": ["5"], "8": ["B"], "B": ["8"], "6": ["G"], "G": ["6"], "K": ["<"], "<": ["K"],
    ]

    /// Characters with the same check-digit value modulo 10 (ICAO 9303-3 §4.9: K = 20, L = 21,
    /// G = 16, `<` = 0) that OCR-B also draws alike: a swap between them leaves every check digit
    /// true, so only the recogniser's own confidence can vouch for them.
    public static let checkDigitTwin: [Character: Character] = ["K": "<", "<": "K", "L": "1", "1": "L", "G": "6", "6": "G"]

    /// First-pass posterior a cell needs to serve as an adaptation anchor (the posterior scale is
    /// calibrated, so 0.9 keeps roughly one wrong anchor in ten at worst).
    static let anchorConfidence = 0.9
    /// Anchors needed before the class means are adapted to the document.
    static let minimumAnchors = 10

    /// Runner-ups kept per cell: posteriors at least this large.
    public static let alternativeThreshold = 0.02

    /// Weight of one check digit that holds (ICAO 9303-3 §4.9, composite included) against the mean
    /// log posterior of the cells, when `read` chooses among (location, direction) readings. A check
    /// digit holds by chance once in ten, so text read from the wrong place or the wrong way round
    /// rarely has more than one; the MRZ itself, even misread in a cell or two, keeps most of its
    /// 4 (TD1) or 5 (TD3) check digits. Chosen on the first 300 generated images of seed 100000,
    /// before the localiser trimmed line ends: 0.2, 0.3 and 0.5 chose the best of the readings
    /// offered in the same 298 cases, confidence alone in 295 (since the trimming, 294/300 exact
    /// either way: the wrong candidates no longer come first).
    static let checkDigitWeight = 0.3

    /// Reads the MRZ, or nil when no MRZ-like text block is found.
    ///
    /// Every candidate location of `MRZLocaliser.locate` is read in both directions; the reading
    /// with the highest `candidateScore` wins (the parser's verdict: check digits that hold, then
    /// the classifier's confidence). A reading that parses valid (every check digit holds) ends the
    /// search: no other location or direction can do better.
    public static func read(_ image: GreyImage, classifier: OCRBClassifier = .shared) -> MRZReading? {
        var best: (MRZReading, Double)?
        // the verdict on the text as read: correcting garbage (MAP search, `MRZDecoder`) would cost up
        // to 0.5 s per reading, the check digits of the raw text cost microseconds
        let parser = MRZParser(options: .init(correctionEnabled: false))
        for loc in MRZLocaliser.locate(image) {
            for flipped in [false, true] {
                var geoms = loc.lines
                if flipped {
                    geoms = geoms.reversed().map { g in
                        let last = Double(loc.lineLength - 1)
                        let (ex, ey) = g.centre(last)
                        // reversed: pitch at the far end is p + q·(n−1), slope negated
                        return LineGeometry(originX: ex, originY: ey, dirX: -g.dirX, dirY: -g.dirY,
                                            pitch: g.pitch + g.pitchSlope * last, capHeight: g.capHeight, pitchSlope: -g.pitchSlope)
                    }
                }
                let r = recognise(image, geoms, count: loc.lineLength, classifier: classifier,
                                  angle: flipped ? loc.angleDegrees + 180 : loc.angleDegrees)
                let (score, valid) = candidateScore(r, parser: parser)
                if best == nil || score > best!.1 { best = (r, score) }
                if valid { return r }
            }
        }
        return best?.0
    }

    /// The score `read` ranks readings by: the mean log posterior of the cells (each floored at
    /// 10⁻⁴) plus `checkDigitWeight` per check digit that holds in the text as read (`parser` should
    /// not correct); and whether that text parses valid.
    static func candidateScore(_ r: MRZReading, parser: MRZParser) -> (score: Double, valid: Bool) {
        let confidences = r.confidences.flatMap { $0 }
        let meanLog = confidences.map { log(max($0, 1e-4)) }.reduce(0, +) / Double(max(1, confidences.count))
        let parsed = parser.parse(r.lines)
        return (meanLog + checkDigitWeight * Double(parsed.checkDigits.filter(\.valid).count), parsed.valid)
    }

    /// Classifies every cell of the given lines.
    public static func recognise(_ image: GreyImage, _ geoms: [LineGeometry], count: Int,
                                 classifier: OCRBClassifier = .shared, angle: Double = 0) -> MRZReading {
        var lines: [String] = [], alts: [[[Character]]] = [], confs: [[Double]] = [], twins: [[Double]] = []
        var posts: [[[Character: Double]]] = []
        let classes = MRZCharacterClass.layout(lineLength: count, lineCount: geoms.count)
        // Pass 1: features of every cell and their scores under the rendered-glyph model.
        var feats: [[[Double]]] = []
        var cells: [(grid: CellGrid, scale: Double, dark: Double, light: Double)] = []
        for g0 in geoms {
            let (dark, light) = OCRBClassifier.inkLevels(image, g0, count: count)
            let grid = CellGrid(image, OCRBClassifier.refine(image, g0, count: count, dark: dark, light: light),
                                count: count, dark: dark, light: light)
            let f = grid.features(image, count: count, dark: dark, light: light)
            feats.append(f.features)
            cells.append((grid, f.glyphScale, dark, light))
        }
        // First pass: the rendered-glyph model, with the glyph-shape specialists (`GlyphShapeModel`)
        // settling cells whose two best classes are both among D, O, C, 0, Q (or both E/F) from the
        // glyph's shape on the image itself. Names keep this pass (below), so it alone decides D/O/C there.
        // A cell's shape figures are measured once per group and reused by the adapted pass.
        var shapeFigures = feats.map { $0.map { _ in [GlyphShapeModel.Group: [Double]?]() } }
        var first: [[[(Character, Double)]]] = []
        for l in feats.indices {
            first.append(feats[l].indices.map { i in
                Self.shapeRerank(classifier.classify(feats[l][i]), image, cells[l], index: i, classifier: classifier,
                                 figures: &shapeFigures[l][i])
            })
        }
        // The French national ID card (2 × 36, `IDFRA…`) is not ICAO-laid-out: no prior on line 2.
        let frenchCard = count == 36 && geoms.count == 2 && String(first[0].map(\.[0].0)).hasPrefix("IDFRA")
        // Pass 2: the document's own glyphs. Anchors are cells whose class the position decides and
        // the first pass is sure of once the symbols the position forbids are pooled with their
        // look-alikes (digits in dates and check digits, letters in codes and names, fillers;
        // `anchorLabel`); the class means are re-estimated from them (`OCRBClassifier.adapted(to:)`).
        var anchors: [(features: [Double], label: Int)] = []
        for l in feats.indices where !(frenchCard && l == 1) {
            for i in 0..<count {
                if let a = Self.anchorLabel(first[l][i], classes[l][i]), let label = OCRBClassifier.alphabet.firstIndex(of: a) {
                    anchors.append((feats[l][i], label))
                }
            }
        }
        let adaptation = anchors.count >= MRZReader.minimumAnchors ? classifier.adapted(to: anchors) : nil
        // Classes the document itself vouched for (`anchorLabel`); see the guard below.
        let anchored = Set(anchors.map(\.label))
        for l in feats.indices {
            var text = "", la: [[Character]] = [], lc: [Double] = [], ranks: [[Character: Double]] = []
            for i in 0..<count {
                // Names carry no check digit, so there the adapted model could slip a wrong letter
                // past every check; they keep the first pass.
                var ranked = adaptation == nil || (classes[l][i] == .name) ? first[l][i]
                    : Self.shapeRerank(classifier.classify(feats[l][i], adaptation: adaptation), image, cells[l], index: i,
                                       classifier: classifier, figures: &shapeFigures[l][i])
                // The adapted pass re-estimates only the anchored classes' means, so a class with no
                // anchor stays where the rendered glyphs put it: a cell the first pass was sure of
                // (`anchorConfidence`) that the adapted pass hands to such a class has lost its class
                // to a mean that moved on evidence from other cells, not gained evidence for the new one
                // (62_pass-aus: line 2's fillers at 28 and 38, first-pass `<` 0.9998 and 0.97, went to
                // K, which no cell anchors, once 33 filler anchors had moved the `<` mean; whether
                // the app's red frame over line 1's fillers is what moved it is unverified). Keep the
                // first pass. Specimens 31/33 against 30, /tmp/c1000 unchanged at 996; `idvd bench document`.
                if let top = OCRBClassifier.alphabet.firstIndex(of: ranked[0].0), ranked[0].0 != first[l][i][0].0,
                   first[l][i][0].1 >= Self.anchorConfidence, !anchored.contains(top) {
                    ranked = first[l][i]
                }
                let chosen = frenchCard && l == 1 ? ranked[0] : classes[l][i].choose(ranked)
                text.append(chosen.0)
                lc.append(chosen.1)
                ranks.append(Dictionary(ranked.map { ($0.0, $0.1) }, uniquingKeysWith: max))
                la.append(ranked.filter { $0.0 != chosen.0 }.prefix(3).filter { $0.1 >= alternativeThreshold || $0.0 == ranked[0].0 }.map(\.0))
            }
            // A K standing alone between fillers, with the filler as its runner-up, is a bold `<`
            // (OCR-B `<` and K share both diagonals; ICAO names and optional data never hold a
            // one-letter component between fillers that the classifier itself doubts).
            var chars = Array(text)
            for i in 1..<max(1, chars.count - 1) where chars[i] == "K" && chars[i - 1] == "<" && chars[i + 1] == "<" && la[i].contains("<") {
                chars[i] = "<"
                la[i] = ["K"] + la[i].filter { $0 != "<" && $0 != "K" }
            }
            if chars.last == "K" && chars.count > 2 && chars[chars.count - 2] == "<" && la[chars.count - 1].contains("<") {
                chars[chars.count - 1] = "<"
                la[chars.count - 1] = ["K"] + la[chars.count - 1].filter { $0 != "<" && $0 != "K" }
            }
            // The name field's padding: ICAO 9303-3 §4.6 separates name components by one filler and
            // the primary from the secondary identifier by two, so once a name has begun, three
            // fillers in a row end it and every later cell of the field is a filler. A letter read
            // there (`…<<<<CCC`, `…<<<K<<`) is a misread filler: it becomes `<` with the classifier's
            // own posterior for `<` as its confidence, so a cell the classifier was sure held a letter
            // stays unclear (and no check digit covers names) instead of passing as read.
            if !frenchCard {   // the French card's line 1 ends with a department code after its name
                Self.fillNamePadding(&chars, &la, &lc, ranks: ranks, classes: classes[l])
            }
            // OCR-B look-alikes are always offered to the parser, after the ranked runner-ups.
            for i in chars.indices {
                for l in MRZReader.lookAlikes[chars[i]] ?? [] where !la[i].contains(l) { la[i].append(l) }
            }
            text = String(chars)
            let tc = chars.indices.map { i in MRZReader.checkDigitTwin[chars[i]].flatMap { ranks[i][$0] } ?? 0 }
            lines.append(text); alts.append(la); confs.append(lc); twins.append(tc); posts.append(ranks)
        }
        var a = angle.truncatingRemainder(dividingBy: 360)
        if a < 0 { a += 360 }
        return MRZReading(lines: lines, alternatives: alts, confidences: confs, geometry: geoms, angleDegrees: a, twinConfidences: twins,
                          posteriors: posts)
    }
}

extension MRZReader {
    /// `ranked` (one cell's posterior, best first) re-weighed by the glyph-shape specialist of the
    /// group holding its two best classes (`GlyphShapeModel.Group.of`), if any: the shape figures
    /// are measured on cell `index` of the line's fitted grid at the glyph scale the features used,
    /// once per group: `figures` keeps them (nil = not measurable) for the cell's next pass.
    static func shapeRerank(_ ranked: [(Character, Double)], _ image: GreyImage,
                            _ line: (grid: CellGrid, scale: Double, dark: Double, light: Double),
                            index i: Int, classifier: OCRBClassifier,
                            figures: inout [GlyphShapeModel.Group: [Double]?]) -> [(Character, Double)] {
        guard let group = GlyphShapeModel.Group.of(ranked) else { return ranked }
        let m: [Double]?
        if let known = figures[group] {
            m = known
        } else {
            m = GlyphShapeModel.measure(group, image, line.grid.cell(i, glyphScale: line.scale), index: i, dark: line.dark, light: line.light)
            figures[group] = .some(m)
        }
        return classifier.shapeModel(group).rerank(ranked, measure: m)
    }

    /// The class a cell anchors the per-document adaptation with, or nil. The position rules out
    /// some symbols (ICAO 9303-3 §4.2: digits in dates and check digits, letters in codes and
    /// names; codes pool nothing, since a few national cards print digits there), so the posterior
    /// of a symbol the position allows is pooled with that of its OCR-B look-alikes the position
    /// forbids (a date cell read `O` 0.4 / `0` 0.6 is a `0` for sure):
    /// the cell anchors its best allowed symbol when that pooled mass is at least
    /// `anchorConfidence`. Names exclude K (OCR-B K and `<` share both diagonals); `.any` cells
    /// anchor only `<`.
    static func anchorLabel(_ ranked: [(Character, Double)], _ cls: MRZCharacterClass) -> Character? {
        let allowed: (Character) -> Bool
        switch cls {
        case .numeric: allowed = { $0.isNumber }
        case .code: allowed = { $0.isLetter }
        case .name: allowed = { ($0.isLetter && $0 != "K") || $0 == "<" }
        case .any: allowed = { $0 == "<" }
        case let .documentCode(letters): allowed = { letters.contains($0) }
        }
        let forbidden: (Character) -> Bool
        switch cls {
        case .numeric: forbidden = { $0.isLetter }
        case .name: forbidden = { $0.isNumber }
        // a few national cards print digits in a code field (`MRZCharacterClass.code`)
        case .code, .any, .documentCode: forbidden = { _ in false }
        }
        guard let best = ranked.first(where: { allowed($0.0) }) else { return nil }
        let pooled = (lookAlikes[best.0] ?? []).filter(forbidden).reduce(best.1) { acc, c in acc + (ranked.first { $0.0 == c }?.1 ?? 0) }
        return pooled >= anchorConfidence ? best.0 : nil
    }

    /// Applies the name-padding rule (ICAO 9303-3 §4.6) to one line: in each run of name cells, after
    /// the first `<<<` that follows a letter, every cell becomes `<`; its confidence becomes the
    /// posterior the classifier gave `<` (`ranks`), and the letter read moves to the front of its
    /// alternatives. Returns the columns changed.
    @discardableResult
    static func fillNamePadding(_ chars: inout [Character], _ alternatives: inout [[Character]], _ confidences: inout [Double],
                                ranks: [[Character: Double]], classes: [MRZCharacterClass]) -> [Int] {
        var changed: [Int] = []
        var i = 0
        while i < chars.count {
            guard i < classes.count, classes[i] == .name else { i += 1; continue }
            var end = i
            while end < chars.count && end < classes.count && classes[end] == .name { end += 1 }
            // the span i..<end is one name field
            var seenLetter = false, run = 0, padFrom: Int?
            for c in i..<end {
                if chars[c] == "<" {
                    run += 1
                    if seenLetter && run >= 3 { padFrom = c + 1; break }
                } else { seenLetter = true; run = 0 }
            }
            if let from = padFrom {
                for c in from..<end where chars[c] != "<" {
                    alternatives[c] = [chars[c]] + alternatives[c].filter { $0 != chars[c] && $0 != "<" }
                    confidences[c] = c < ranks.count ? ranks[c]["<"] ?? 0 : 0
                    chars[c] = "<"
                    changed.append(c)
                }
            }
            i = end
        }
        return changed
    }
}

extension MRZReading {
    /// The rectified MRZ as one grey image (each line resampled along its geometry, `scale` pixels
    /// per cap height), for inspection.
    public func rectified(from image: GreyImage, pixelsPerCap: Double = 24) -> GreyImage {
        let count = lines.first?.count ?? 0
        guard let g0 = geometry.first, count > 0 else { return GreyImage(width: 1, height: 1) }
        let lineH = Int(pixelsPerCap * 1.8)
        let W = Int(Double(count) * pixelsPerCap * g0.pitch / g0.capHeight + pixelsPerCap)
        var out = GreyImage(width: max(1, W), height: lineH * geometry.count)
        for (l, g) in geometry.enumerated() {
            let s = g.capHeight / pixelsPerCap
            for y in 0..<lineH {
                let b = (Double(y) - Double(lineH) / 2) * s
                for x in 0..<W {
                    let a = (Double(x) - pixelsPerCap / 2) * s - 0.5 * g.pitch
                    let (cx, cy) = g.centre(0)
                    out[x, l * lineH + y] = clamp(image.sample(cx + a * g.dirX - b * g.dirY, cy + a * g.dirY + b * g.dirX))
                }
            }
        }
        return out
    }
}

extension MRZReading {
    /// The cells as the recogniser samples them, for inspection: per text line, one row of the line
    /// resampled along its fitted cell grid (`CellGrid`: `refine`, `fitLine`, `verticalOffsets`),
    /// each cell drawn over ±0.5 of its local pitch about its fitted centre and at its own normal
    /// offset, with a one-pixel grey rule between cells; `pixelsPerCap` pixels per cap height.
    /// Shows where the grid puts each cell (a slip at a line end shows as a glyph split by a rule).
    public func cellView(from image: GreyImage, pixelsPerCap: Double = 24) -> GreyImage {
        let count = lines.first?.count ?? 0
        guard !geometry.isEmpty, count > 0 else { return GreyImage(width: 1, height: 1) }
        let lineH = Int(pixelsPerCap * 1.8)
        let cellW = Int((pixelsPerCap * OCRBClassifier.fontMetrics.advance / OCRBClassifier.fontMetrics.cap).rounded()) + 1
        var out = GreyImage(width: cellW * count, height: lineH * geometry.count)
        for (l, g0) in geometry.enumerated() {
            let (dark, light) = OCRBClassifier.inkLevels(image, g0, count: count)
            let grid = CellGrid(image, OCRBClassifier.refine(image, g0, count: count, dark: dark, light: light),
                                count: count, dark: dark, light: light)
            for i in 0..<count {
                let c = grid.cell(i)
                let (cx, cy) = c.centre(Double(i))
                let s = c.capHeight / pixelsPerCap
                for y in 0..<lineH {
                    let b = (Double(y) - Double(lineH) / 2) * s
                    for x in 0..<cellW {
                        let a = ((Double(x) + 0.5) / Double(cellW) - 0.5) * c.pitch
                        out[i * cellW + x, l * lineH + y] = x == 0 ? 160 : clamp(image.sample(cx + a * c.dirX - b * c.dirY, cy + a * c.dirY + b * c.dirX))
                    }
                }
            }
        }
        return out
    }
}
