import DocumentReader
import Foundation
import IDVTools

extension Benchmark {
    static let ocrb = Benchmark(name: "ocrb", summary: "OCR-B classifier: load time of the shipped parameters (--train: training time), held-out accuracy per class, posterior calibration", options: "[--train] [--seed N] [--lines N]") { args in
        let opts = try CLI.parseOptions(args, flags: ["train"], valued: ["seed", "lines"], takesArguments: false, command: "bench ocrb").options
        let seed = UInt64(opts["seed"] ?? "999") ?? 999
        let lines = Int(opts["lines"] ?? "3") ?? 3
        var clf: OCRBClassifier?
        let load = try Command.measure { clf = OCRBClassifier(parameters: try OCRBParameters.shipped()) }
        guard let clf else { return 1 }
        print(String(format: "shipped parameters loaded (OCRBParameters.shipped): %.1f ms", load * 1000))
        if opts["train"] != nil {
            let train = Command.measure { _ = OCRBClassifier(seed: 1) }
            print(String(format: "training as idvd ocrb train does (seed 1, 12 lines per pitch): %.0f ms", train * 1000))
        }
        func show(_ title: String, _ e: OCRBEvaluation) {
            print(String(format: "%@: %d cells, accuracy %.4f, mean confidence %.4f, ECE %.4f, NLL %.4f nats",
                         title, e.cells, e.accuracy, e.meanConfidence, e.calibrationError, e.negativeLogLikelihood))
        }
        let e = OCRBEvaluation.heldOut(clf, seed: seed, linesPerPitch: lines)
        show("held-out (seed \(seed)) at the classifier's temperature", e)
        let worst = e.classAccuracy.sorted { $0.value < $1.value }.prefix(10)
        print("lowest class accuracy: " + worst.map { String(format: "%@ %.3f", String($0.key), $0.value) }.joined(separator: ", "))
        print("confusions (truth→read ×n): " + e.confusions.map { "\($0.truth)→\($0.read) ×\($0.count)" }.joined(separator: ", "))
        print("round pairs: " + [("D", "O"), ("O", "D"), ("0", "O"), ("O", "0"), ("0", "D"), ("D", "0")].map { (t: Character, r: Character) in
            "\(t)→\(r) ×\(e.confusionCount(truth: t, read: r))" }.joined(separator: ", "))
        for group in GlyphShapeModel.Group.allCases {
            for r in OCRBEvaluation.shapeSpecialist(clf, group: group, seed: seed, linesPerPitch: 2 * lines) {
                print(String(format: "%@ with two best classes in the group, pitch %.0f px: %d cells, classifier %d right, with the specialist %d",
                             String(group.glyphs), r.pitch, r.cells, r.classifierCorrect, r.specialistCorrect))
            }
        }
        let t = OCRBEvaluation.fittedTemperature(clf, seed: seed &+ 1, linesPerPitch: lines)
        show(String(format: "held-out (seed %llu) at the NLL-fitted temperature %.2f (fitted on seed %llu)", seed, t, seed &+ 1),
             OCRBEvaluation.heldOut(clf, seed: seed, linesPerPitch: lines, temperature: t))
        return 0
    }
}
