import XCTest
@testable import DocumentReader

final class OCRBClassifierTests: XCTestCase {
    /// Held-out rendered lines (a different seed from training, every pitch from 5 to 26 px,
    /// blur, noise, contrast): the top-1 accuracy over all cells must be at least 99 %, and the
    /// true class must be among the top three on every cell.
    func testHeldOutRenderedGlyphs() {
        let clf = OCRBClassifier.shared
        var rng = SeededRNG(seed: 999)
        var correct = 0, total = 0, top3 = 0
        for p in [5.0, 6.0, 7.5, 9.0, 12.0, 16.0, 20.0, 26.0] {
            for _ in 0..<3 {
                var text = OCRBClassifier.alphabet.shuffled(using: &rng)
                while text.count < 44 { text.append(OCRBClassifier.alphabet[Int(rng.next() % 37)]) }
                let style = OCRBClassifier.TrainingStyle(pitch: p, stroke: rng.uniform(-0.04, 0.07), blur: rng.uniform(0, 0.3) * p / 6,
                                                         noise: rng.uniform(0, 10), contrast: rng.uniform(0.4, 1), offset: (rng.uniform(0, 1), rng.uniform(0, 1)))
                let (img, g0) = OCRBClassifier.renderLine(text, style: style)
                let (dark, light) = OCRBClassifier.inkLevels(img, g0, count: text.count)
                let g = OCRBClassifier.refine(img, g0, count: text.count, dark: dark, light: light)
                for (i, ch) in text.enumerated() {
                    let r = clf.classify(OCRBClassifier.features(img, g, index: i, dark: dark, light: light))
                    total += 1
                    if r[0].0 == ch { correct += 1 }
                    if r.prefix(3).contains(where: { $0.0 == ch }) { top3 += 1 }
                }
            }
        }
        let acc = Double(correct) / Double(total)
        print("OCR-B held-out accuracy: \(correct)/\(total) = \(acc), top-3 \(top3)")
        XCTAssertGreaterThanOrEqual(acc, 0.99)
        XCTAssertEqual(top3, total)
    }

    func testTrainingIsDeterministic() {
        let a = OCRBClassifier(seed: 7, linesPerPitch: 1), b = OCRBClassifier(seed: 7, linesPerPitch: 1)
        XCTAssertEqual(a.weights, b.weights)
        XCTAssertEqual(a.biases, b.biases)
    }
}
