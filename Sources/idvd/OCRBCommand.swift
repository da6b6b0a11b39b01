import DocumentReader
import Foundation

extension Command {
    /// `idvd ocrb train|check`: trains the OCR-B classifier offline and writes the parameter file the
    /// document reader ships (`Sources/DocumentReader/Resources/ocrb-lda.bin`), or checks that the
    /// shipped file is what training produces on this machine.
    static let ocrb = Command(name: "ocrb", summary: "train the OCR-B classifier offline, or check the shipped parameters (idvd ocrb train|check)") { args in
        let usage = """
            usage: idvd ocrb train [--seed N] [--lines-per-pitch N] --out FILE
                   idvd ocrb check [--seed N] [--lines-per-pitch N] [FILE]
              train   renders OCR-B training lines with Cairo (Debian fonts-ocr-b), fits the classifier and
                      writes its parameters (format: OCRBParameters); the shipped file is seed 1, 12 lines per pitch
              check   trains the same way and compares with FILE (default: the shipped parameters)
            Needs Cairo, fontconfig and the OCR B font; reading documents needs none of them.
            Exit status: 0 done / identical, 1 different, 2 usage error or no OCR B font.
            """
        try CLI.refuseOptionForSubcommand(args.first, command: "ocrb")
        guard let sub = args.first, ["train", "check"].contains(sub) else {
            if args.isEmpty || ["-h", "--help"].contains(args[0]) { print(usage); return args.isEmpty ? 2 : 0 }
            throw CLIError("unknown ocrb subcommand '\(args[0])'\n" + usage)
        }
        let (o, positional) = try CLI.parseOptions(Array(args.dropFirst()), flags: ["help"], valued: ["seed", "lines-per-pitch", "out"],
                                                    command: "ocrb \(sub)")
        if o["help"] != nil { print(usage); return 0 }
        guard let seed = UInt64(o["seed"] ?? "1") else { throw CLIError("--seed must be a non-negative integer") }
        guard let lines = Int(o["lines-per-pitch"] ?? "12"), (1...100).contains(lines) else { throw CLIError("--lines-per-pitch must be 1–100") }
        if let problem = OCRBClassifier.trainingFontProblem() { CLI.stderr("idvd ocrb: \(problem)"); return 2 }
        var trained: OCRBClassifier?
        let seconds = Command.measure { trained = OCRBClassifier(seed: seed, linesPerPitch: lines) }
        let bytes = trained!.parameters.encoded()
        print(String(format: "trained in %.0f ms (seed %llu, %d lines per pitch): %d bytes", seconds * 1000, seed, lines, bytes.count))
        if sub == "train" {
            guard let out = o["out"] ?? positional.first else { throw CLIError("train needs --out FILE\n" + usage) }
            do { try bytes.write(to: URL(fileURLWithPath: out)) } catch { throw CLIError("cannot write \(out): \(error.localizedDescription)") }
            print("wrote \(out)")
            return 0
        }
        let shipped: Data
        if let path = positional.first {
            guard let d = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read \(path)") }
            shipped = d
        } else {
            shipped = try OCRBParameters.shipped().encoded()
        }
        if shipped == bytes { print("identical to the \(positional.first ?? "shipped") parameters"); return 0 }
        print("DIFFERENT from the \(positional.first ?? "shipped") parameters (\(shipped.count) bytes)")
        return 1
    }
}
