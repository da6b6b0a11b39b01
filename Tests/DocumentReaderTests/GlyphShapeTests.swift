import Foundation
import XCTest
@testable import DocumentReader
import Imaging
import IDVTools

/// Renders `linesPerPitch` lines of `text` at each pitch in `pitches` (stroke, noise, contrast and
/// sub-pixel offset drawn from `seed`; blur up to `maxBlur` × pitch), as the classifier's training
/// does, and returns each non-filler cell with its `group` shape figures (nil when not measurable).
func renderedShapeCells(_ text: String, group: GlyphShapeModel.Group, pitches: [Double], linesPerPitch: Int,
                        maxBlur: Double, seed: UInt64) -> [(glyph: Character, pitch: Double, figures: [Double]?)] {
    var rng = SeededRNG(seed: seed)
    let glyphs = Array(text)
    var cells: [(glyph: Character, pitch: Double, figures: [Double]?)] = []
    for p in pitches {
        for _ in 0..<linesPerPitch {
            let style = OCRBClassifier.TrainingStyle(pitch: p, stroke: rng.uniform(-0.04, 0.08), blur: rng.uniform(0, maxBlur) * p,
                                                     noise: rng.uniform(0, 8), contrast: rng.uniform(0.5, 1), offset: (rng.uniform(0, 1), rng.uniform(0, 1)))
            let (img, g0) = OCRBClassifier.renderLine(glyphs, style: style)
            let (dark, light) = OCRBClassifier.inkLevels(img, g0, count: glyphs.count)
            let g = OCRBClassifier.refine(img, g0, count: glyphs.count, dark: dark, light: light)
            for (i, ch) in glyphs.enumerated() where ch != "<" {
                cells.append((ch, p, GlyphShapeModel.measure(group, img, g, index: i, dark: dark, light: light)))
            }
        }
    }
    return cells
}

/// Document `seed` of the corpus `idvd specimen --augment --count N --seed S` writes (format by seed
/// parity, augmentation drawn after the identity), as the JPEG 92 that command saves, with its truth.
func regeneratedCorpusDocument(seed: UInt64) throws -> (jpeg: Data, identity: SpecimenIdentity, mrzLines: [String]) {
    var rng = SeededRNG(seed: seed)
    let format: SpecimenFormat = seed % 2 == 0 ? .td1 : .td3
    let identity = SpecimenIdentity.random(format, using: &rng)
    var specimen = try SpecimenGenerator.render(identity, format: format, seed: seed)
    specimen.image = Augmentation.random(using: &rng).apply(to: specimen.image, seed: seed)
    return (try DocumentImage(rgb: specimen.image).jpeg(maxDimension: 100_000, quality: 92), identity, specimen.mrzLines)
}

/// The round-glyph specialist (`GlyphShapeModel`, group `.round`): D/O/C/0/Q told apart by OCR-B shape facts.
final class RoundGlyphTests: XCTestCase {
    /// Rendered lines the classifier never trained on (seed 4242; 12–22 px pitch, mild blur and
    /// noise): the specialist's likelihoods put every measurable D above O and every O above D
    /// (at least 95 % of cells each), a D's left corners carry clearly more ink than its right
    /// ones while an O's are balanced, and a C's right side is open where the O's is closed.
    func testSpecialistSeparatesRenderedRoundLetters() {
        let model = OCRBClassifier.shared.shapeModel(.round)
        let d = GlyphShapeModel.Group.round.glyphs.firstIndex(of: "D")!, o = GlyphShapeModel.Group.round.glyphs.firstIndex(of: "O")!
        var figures: [Character: [[Double]]] = [:]
        var dRight = 0, dTotal = 0, oRight = 0, oTotal = 0
        for cell in renderedShapeCells("DOCDO0DQODCOD<DOODDOCODOD", group: .round, pitches: [12, 16, 22], linesPerPitch: 3,
                                       maxBlur: 0.06, seed: 4242) {
            guard let m = cell.figures else { XCTFail("\(cell.glyph) at pitch \(cell.pitch) not measured"); continue }
            figures[cell.glyph, default: []].append(m)
            let ll = model.logLikelihoods(m)
            if cell.glyph == "D" { dTotal += 1; if ll[d] > ll[o] { dRight += 1 } }
            if cell.glyph == "O" { oTotal += 1; if ll[o] > ll[d] { oRight += 1 } }
        }
        print("round glyphs: D over O \(dRight)/\(dTotal), O over D \(oRight)/\(oTotal)")
        XCTAssertGreaterThanOrEqual(Double(dRight), 0.95 * Double(dTotal))
        XCTAssertGreaterThanOrEqual(Double(oRight), 0.95 * Double(oTotal))
        func mean(_ c: Character, _ k: Int) -> Double { let f = figures[c] ?? []; return f.map { $0[k] }.reduce(0, +) / Double(max(1, f.count)) }
        // figure 0: left-minus-right corner ink; figure 3: ink in the middle of the right side
        XCTAssertGreaterThan(mean("D", 0), mean("O", 0) + 0.2, "D's square left corners")
        XCTAssertLessThan(abs(mean("O", 0)), 0.1, "O is symmetric left/right")
        XCTAssertLessThan(mean("C", 3), mean("O", 3) - 0.3, "C is open on the right")
    }

    /// The specialist only re-weighs cells whose two best classes are round glyphs, keeps the
    /// other classes' posteriors, and leaves a cell it could not measure as it was.
    func testRerankTouchesOnlyRoundPairs() {
        let model = OCRBClassifier.shared.shapeModel(.round)
        let dLike = [0.4, 0.5, 0.0, 0.78, 0.67]   // figures measured on a D of generated specimen 100881
        let kFiller: [(Character, Double)] = [("K", 0.6), ("<", 0.3), ("D", 0.1)]
        XCTAssertEqual(model.rerank(kFiller, measure: dLike).map(\.0), ["K", "<", "D"])
        let oThenD: [(Character, Double)] = [("O", 0.7), ("D", 0.25), ("U", 0.05)]
        XCTAssertEqual(model.rerank(oThenD, measure: nil).map(\.1), [0.7, 0.25, 0.05])
        let r = model.rerank(oThenD, measure: dLike)
        XCTAssertEqual(r.first?.0, "D")
        XCTAssertEqual(r.first { $0.0 == "U" }?.1 ?? 0, 0.05, accuracy: 1e-12)
        XCTAssertEqual(r.map(\.1).reduce(0, +), 1, accuracy: 1e-9)
    }

    /// Generated documents whose names the classifier alone read with D and O swapped (seed-100000
    /// corpus, `idvd specimen --augment --count 1000 --seed 100000`, format by seed parity): each
    /// is regenerated exactly as that command writes it (JPEG 92) and must now read exactly.
    /// 100881 read `PAPADDPDULDS<<BJDRN` (O → D four times), 100811 `ABOULLAH` (D → O).
    func testGeneratedNamesWithRoundLettersReadExactly() throws {
        var options = DocumentReaderOptions()
        options.detectPortrait = false
        for (seed, name) in [(UInt64(100881), "P<D<<PAPADOPOULOS<<BJORN"), (100811, "P<GBRABDULLAH<<PIERRE<ALAIN")] {
            let document = try regeneratedCorpusDocument(seed: seed)
            XCTAssertTrue(document.mrzLines[0].hasPrefix(name), "regenerated document \(seed) is not the corpus one")
            let report = DocumentReader.read(pages: [document.jpeg], options: options)
            XCTAssertEqual(report.mrz.result?.lines ?? [], document.mrzLines, "seed \(seed)")
        }
    }

    /// The Macao resident card specimen (real photo, 8 px cap height): its name `CHONG` was read
    /// `OHONG` (C → O); the specialist's open-right-side figure reads it right.
    func testMacaoSpecimenNameReadsCHONG() throws {
        let data = try Data(contentsOf: Paths.fixtures.appendingPathComponent("documents/id-mac-specimen.jpg"))
        var options = DocumentReaderOptions()
        options.detectPortrait = false
        let report = DocumentReader.read(pages: [data], options: options)
        XCTAssertEqual(report.mrz.result?.lines ?? [],
                       ["I<MAC12281507<0<<<<<<<<0212300", "6106225M1212307<<<<<<<<<<<<<<6", "CHONG<<KA<KEONG<<<<<<<<<<<<<<<"])
    }
}

/// The barred-glyph specialist (`GlyphShapeModel`, group `.bar`): E told from F by its bottom bar.
final class BarGlyphTests: XCTestCase {
    /// Rendered E and F cells (seed 4243, 18–26 px pitch, mild blur and noise): E's bottom bar
    /// carries ink where F has none, and the likelihoods put every E above F and every F above E.
    func testSpecialistSeparatesRenderedEAndF() {
        let model = OCRBClassifier.shared.shapeModel(.bar)
        var bottom: [Character: [Double]] = [:]
        var right = 0, total = 0
        for cell in renderedShapeCells("EFEFFEEF<EFFE", group: .bar, pitches: [18, 22, 26], linesPerPitch: 2, maxBlur: 0.05, seed: 4243) {
            guard let m = cell.figures else { XCTFail("\(cell.glyph) at pitch \(cell.pitch) not measured"); continue }
            bottom[cell.glyph, default: []].append(m[0])
            let ll = model.logLikelihoods(m)
            total += 1
            if (cell.glyph == "E") == (ll[0] > ll[1]) { right += 1 }
        }
        XCTAssertEqual(right, total)
        XCTAssertGreaterThan(bottom["E"]!.min()!, bottom["F"]!.max()! + 0.2, "E's bottom bar")
    }

    /// Generated document 100186 of the seed-100000 corpus (regenerated as `idvd specimen --augment`
    /// writes it) had its country code `ESP` read `FSP` on both lines, confidently; it now reads
    /// exactly. Below 16 px cap height E/F are left to the classifier: the French passport
    /// specimen's `CHRISTOPHE` (cap 7.6 px) keeps its E.
    func testGeneratedCountryCodeEReadsE() throws {
        var options = DocumentReaderOptions()
        options.detectPortrait = false
        let document = try regeneratedCorpusDocument(seed: 100186)
        XCTAssertEqual(document.identity.nationality, "ESP", "regenerated document 100186 is not the corpus one")
        XCTAssertEqual(DocumentReader.read(pages: [document.jpeg], options: options).mrz.result?.lines ?? [], document.mrzLines)
        let data = try Paths.sharedData("mrz-images/specimens/43_pass-fra.jpg")
        XCTAssertEqual(DocumentReader.read(pages: [data], options: options).mrz.result?.lines.first,
                       "P<FRAULYSSE<<CHRISTOPHE<<<<<<<<<<<<<<<<<<<<<")
    }
}
