import DocumentReader
import Foundation

/// Held-out evaluation of the OCR-B classifier on rendered MRZ lines that training never saw
/// (another seed): accuracy per class, the worst confusions and the calibration of the posteriors.
public struct OCRBEvaluation: Sendable {
    /// Cells classified.
    public let cells: Int
    /// Top-1 accuracy over all cells (0…1).
    public let accuracy: Double
    /// Top-1 accuracy per class, in `OCRBClassifier.alphabet` order.
    public let classAccuracy: [Character: Double]
    /// Most frequent confusions (truth, read, count), most frequent first.
    public let confusions: [(truth: Character, read: Character, count: Int)]
    /// Cells of class `truth` read as `read`, for any pair (e.g. D read O, 0 read O).
    public func confusionCount(truth: Character, read: Character) -> Int { confusionCounts["\(truth)\(read)"] ?? 0 }
    let confusionCounts: [String: Int]
    /// Mean posterior of the top class (0…1), to set against `accuracy`.
    public let meanConfidence: Double
    /// Expected calibration error over 10 equal-width confidence bins (0…1).
    public let calibrationError: Double
    /// Mean negative log posterior of the true class (nats).
    public let negativeLogLikelihood: Double

    /// Renders `linesPerPitch` lines of random MRZ symbols at each of 5–28 px pitch with styles
    /// drawn from `seed` (the training augmentation's ranges, strokes up to bold), and classifies
    /// every cell with `classifier` at its temperature.
    /// `temperature` overrides the classifier's own (`nil`: the classifier's).
    public static func heldOut(_ classifier: OCRBClassifier, seed: UInt64 = 999, linesPerPitch: Int = 3, temperature: Double? = nil) -> OCRBEvaluation {
        let samples = heldOutCells(seed: seed, linesPerPitch: linesPerPitch)
        return evaluate(samples.map { classifier.scores($0.features) }, labels: samples.map(\.label), temperature: temperature ?? classifier.temperature)
    }

    /// The posterior temperature that minimises the negative log-likelihood of held-out rendered
    /// cells (`seed`) under `classifier`'s discriminants.
    public static func fittedTemperature(_ classifier: OCRBClassifier, seed: UInt64 = 999, linesPerPitch: Int = 3) -> Double {
        let samples = heldOutCells(seed: seed, linesPerPitch: linesPerPitch)
        return fitTemperature(samples.map { classifier.scores($0.features) }, labels: samples.map(\.label))
    }

    /// Held-out rendered cells: feature vectors with their class indices.
    static func heldOutCells(seed: UInt64, linesPerPitch: Int) -> [(features: [Double], label: Int)] {
        var rng = SeededRNG(seed: seed)
        var out: [(features: [Double], label: Int)] = []
        for p in [5.0, 6.0, 7.5, 9.0, 12.0, 16.0, 20.0, 26.0] {
            for _ in 0..<linesPerPitch {
                let (text, img, g, dark, light) = OCRBClassifier.randomTrainingLine(pitch: p, rng: &rng)
                for (i, ch) in text.enumerated() {
                    out.append((OCRBClassifier.features(img, g, index: i, dark: dark, light: light), OCRBClassifier.alphabet.firstIndex(of: ch)!))
                }
            }
        }
        return out
    }

    /// Figures for raw discriminant `scores` (one row per cell) at posterior temperature `temperature`.
    static func evaluate(_ scores: [[Double]], labels: [Int], temperature: Double) -> OCRBEvaluation {
        let alphabet = OCRBClassifier.alphabet
        var correct = 0, nll = 0.0, confSum = 0.0
        var perClass = [Int](repeating: 0, count: alphabet.count), perClassN = perClass
        var confusion: [Int: Int] = [:]
        var binConf = [Double](repeating: 0, count: 10), binHit = binConf, binN = binConf
        for (s, y) in zip(scores, labels) {
            let p = OCRBClassifier.softmax(s, temperature: temperature)
            let top = p.indices.max { p[$0] < p[$1] }!
            perClassN[y] += 1
            if top == y { correct += 1; perClass[y] += 1 } else { confusion[y * 100 + top, default: 0] += 1 }
            nll -= log(max(p[y], 1e-300))
            confSum += p[top]
            let b = min(9, Int(p[top] * 10))
            binConf[b] += p[top]; binHit[b] += top == y ? 1 : 0; binN[b] += 1
        }
        let n = Double(max(1, labels.count))
        var ece = 0.0
        for b in 0..<10 where binN[b] > 0 { ece += abs(binConf[b] - binHit[b]) / n }
        var acc: [Character: Double] = [:]
        for c in alphabet.indices { acc[alphabet[c]] = perClassN[c] > 0 ? Double(perClass[c]) / Double(perClassN[c]) : 0 }
        let conf = confusion.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
            .prefix(12).map { (truth: alphabet[$0.key / 100], read: alphabet[$0.key % 100], count: $0.value) }
        var counts: [String: Int] = [:]
        for (key, count) in confusion { counts["\(alphabet[key / 100])\(alphabet[key % 100])"] = count }
        return OCRBEvaluation(cells: labels.count, accuracy: Double(correct) / n, classAccuracy: acc, confusions: conf,
                              confusionCounts: counts, meanConfidence: confSum / n, calibrationError: ece, negativeLogLikelihood: nll / n)
    }

    /// The temperature minimising the mean negative log-likelihood of `labels` (golden-section
    /// search on log T over 0.25…20).
    static func fitTemperature(_ scores: [[Double]], labels: [Int]) -> Double {
        func nll(_ t: Double) -> Double {
            var s = 0.0
            for (row, y) in zip(scores, labels) { s -= log(max(OCRBClassifier.softmax(row, temperature: t)[y], 1e-300)) }
            return s
        }
        var a = log(0.25), b = log(20.0)
        let r = (5.0.squareRoot() - 1) / 2
        for _ in 0..<40 {
            let c = b - r * (b - a), d = a + r * (b - a)
            if nll(exp(c)) < nll(exp(d)) { b = d } else { a = c }
        }
        return exp((a + b) / 2)
    }
}

extension OCRBEvaluation {
    /// Held-out rendered cells of one specialist group (`GlyphShapeModel.Group`) whose two best
    /// classes under `classifier` are both in the group, per pitch (px): how many, and how many the
    /// classifier alone and the classifier with the specialist (`GlyphShapeModel.rerank`) read
    /// right. Cells too small to measure (`GlyphShapeModel.minimumCapHeight`) count under both as
    /// the classifier reads them.
    public static func shapeSpecialist(_ classifier: OCRBClassifier, group: GlyphShapeModel.Group, seed: UInt64 = 999, linesPerPitch: Int = 6)
        -> [(pitch: Double, cells: Int, classifierCorrect: Int, specialistCorrect: Int)] {
        var rng = SeededRNG(seed: seed)
        var out: [(pitch: Double, cells: Int, classifierCorrect: Int, specialistCorrect: Int)] = []
        for p in [5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0, 16.0, 20.0, 26.0] {
            var n = 0, a = 0, b = 0
            for _ in 0..<linesPerPitch {
                let (text, img, g, dark, light) = OCRBClassifier.randomTrainingLine(pitch: p, rng: &rng)
                for (i, ch) in text.enumerated() where group.glyphs.contains(ch) {
                    let ranked = classifier.classify(OCRBClassifier.features(img, g, index: i, dark: dark, light: light))
                    guard GlyphShapeModel.Group.of(ranked) == group else { continue }
                    let m = GlyphShapeModel.measure(group, img, g, index: i, dark: dark, light: light)
                    n += 1
                    if ranked[0].0 == ch { a += 1 }
                    if classifier.shapeModel(group).rerank(ranked, measure: m)[0].0 == ch { b += 1 }
                }
            }
            out.append((p, n, a, b))
        }
        return out
    }
}
