import Foundation
import XCTest
@testable import DocumentReader

/// The OCR-B classifier is trained offline (`idvd ocrb train`) and its parameters ship as a resource
/// (`Resources/ocrb-lda.bin`, `OCRBParameters`): the shipped file must be what training produces,
/// load into a classifier equal to the trained one, and refuse damaged files with a clear error.
final class OCRBParameterTests: XCTestCase {
    /// Retrains exactly as the shipped file was made (seed 1, 12 lines per pitch; ~2 s) and compares
    /// byte for byte. Needs Cairo and Debian's fonts-ocr-b, as `scripts/bootstrap` installs them.
    func testShippedParametersAreWhatTrainingProduces() throws {
        if let problem = OCRBClassifier.trainingFontProblem() { XCTFail(problem); return }
        let trained = OCRBClassifier(seed: 1, linesPerPitch: 12).parameters.encoded()
        let shipped = try OCRBParameters.shipped().encoded()
        XCTAssertEqual(trained.count, shipped.count)
        XCTAssertTrue(trained == shipped, "the shipped ocrb-lda.bin is not what `idvd ocrb train` produces here: retrain it")
    }

    /// A classifier built from parameters equals the trained one: scores, posteriors and the
    /// per-document adaptation (whose subspace is recomputed at load) agree exactly.
    func testLoadedClassifierEqualsTrained() throws {
        let trained = OCRBClassifier(seed: 5, linesPerPitch: 1)
        let loaded = OCRBClassifier(parameters: try OCRBParameters(decoding: trained.parameters.encoded()))
        XCTAssertEqual(loaded.weights, trained.weights)
        XCTAssertEqual(loaded.biases, trained.biases)
        XCTAssertEqual(loaded.covarianceFactor, trained.covarianceFactor)
        XCTAssertEqual(loaded.whitenedMeans, trained.whitenedMeans)
        XCTAssertEqual(loaded.subspace, trained.subspace)
        XCTAssertEqual(loaded.shapeModels.map(\.means), trained.shapeModels.map(\.means))
        var rng = SeededRNG(seed: 3)
        let (text, img, g, dark, light) = OCRBClassifier.randomTrainingLine(pitch: 10, rng: &rng)
        let features = text.indices.map { OCRBClassifier.features(img, g, index: $0, dark: dark, light: light) }
        let anchors = zip(features, text).prefix(20).map { ($0, OCRBClassifier.alphabet.firstIndex(of: $1)!) }
        let (a, b) = (trained.adapted(to: anchors), loaded.adapted(to: anchors))
        XCTAssertEqual(a.weights, b.weights)
        XCTAssertEqual(a.biases, b.biases)
        for f in features { XCTAssertEqual(trained.scores(f), loaded.scores(f)) }
    }

    func testDamagedFilesAreRefused() throws {
        let good = try OCRBParameters.shipped().encoded()
        XCTAssertEqual(try OCRBParameters(decoding: good), try OCRBParameters.shipped())
        func refused(_ data: Data, _ expected: String) {
            XCTAssertThrowsError(try OCRBParameters(decoding: data)) { XCTAssertTrue("\($0)".contains(expected), "\($0)") }
        }
        refused(Data("not parameters".utf8), "magic IDVOCRB missing")
        refused(good.prefix(good.count / 2), "truncated")
        var flipped = good
        flipped[good.count / 2] ^= 0x01
        refused(flipped, "hash mismatch")
        var version = good
        version[8] = 9
        refused(version, "version 9")
        var classes = good
        classes[12] = 36
        refused(classes, "36 classes")
    }

    /// The reading path needs the font's two metrics only: they equal what Cairo measures for the
    /// installed OCR B font (720 and 710 units per 1000).
    func testFontMetricsMatchTheTrainingFont() {
        XCTAssertNil(OCRBClassifier.trainingFontProblem())
        XCTAssertEqual(OCRBClassifier.fontMetrics.advance, 0.72)
        XCTAssertEqual(OCRBClassifier.fontMetrics.cap, 0.71)
    }
}
