import Foundation
import MRZ

extension Command {
    /// `idvd mrz parse [--jsonl] [--no-correct] [--reference-date YYYY-MM-DD] [--expiry-window N] [LINE…]`
    static let mrz = Command(name: "mrz", summary: "parse, validate and correct ICAO 9303 MRZ text (idvd mrz parse)") { args in
        let usage = """
            usage: idvd mrz parse [options] [LINE ...]
              Lines come from the arguments, or from stdin when none are given; prints the result as JSON.
              --jsonl               read one JSON array of MRZ lines per input line, write one result per line
              --no-correct          report check digits as read, without OCR-error correction
              --reference-date D    date for century rules and 'expired' (YYYY-MM-DD, default today, UTC)
              --expiry-window N     years an expiry date may lie in the future (default 20)
            Exit status: 0 when every MRZ is valid, 1 when one is not, 2 on a usage error.
            """
        guard args.first == "parse" else {
            if args.isEmpty || ["-h", "--help"].contains(args[0]) { print(usage); return args.isEmpty ? 2 : 0 }
            throw CLIError("unknown mrz subcommand '\(args[0])'\n" + usage)
        }
        let (opts, positional) = try CLI.parseOptions(Array(args.dropFirst()), flags: ["jsonl", "no-correct", "help"])
        if opts["help"] != nil { print(usage); return 0 }
        var options = MRZParser.Options()
        if opts["no-correct"] != nil { options.correctionEnabled = false }
        if let d = opts["reference-date"] {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX"); f.timeZone = TimeZone(identifier: "UTC"); f.dateFormat = "yyyy-MM-dd"
            guard let date = f.date(from: d) else { throw CLIError("--reference-date must be YYYY-MM-DD, got '\(d)'") }
            options.referenceDate = date
        }
        if let w = opts["expiry-window"] {
            guard let n = Int(w), (0...99).contains(n) else { throw CLIError("--expiry-window must be an integer 0–99, got '\(w)'") }
            options.expiryWindowYears = n
        }
        let parser = MRZParser(options: options)

        if opts["jsonl"] != nil {
            guard positional.isEmpty else { throw CLIError("--jsonl reads stdin only; got arguments") }
            var allValid = true
            var lineNumber = 0
            while let line = readLine(strippingNewline: true) {
                lineNumber += 1
                if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                let result: MRZResult
                if let data = line.data(using: .utf8),
                   let lines = try? JSONDecoder().decode([String].self, from: data) {
                    result = parser.parse(lines)
                } else {
                    result = MRZResult(valid: false, format: .unknown, lines: [], fields: MRZFields(), checkDigits: [],
                                       corrections: [], errors: ["input line \(lineNumber) is not a JSON array of strings"], warnings: [])
                }
                allValid = allValid && result.valid
                try CLI.printJSON(result, compact: true)
            }
            return allValid ? 0 : 1
        }

        let result: MRZResult
        if positional.isEmpty {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            guard let text = String(data: data, encoding: .utf8) else { throw CLIError("stdin is not UTF-8 text") }
            result = parser.parse(text: text)
        } else {
            result = parser.parse(text: positional.joined(separator: "\n"))
        }
        try CLI.printJSON(result)
        return result.valid ? 0 : 1
    }
}

extension Benchmark {
    /// `idvd bench mrz [--count N]`: parses per second on generated MRZs, clean and with one or two OCR
    /// confusions, across TD1, TD2, TD3, MRV-A and MRV-B.
    static let mrz = Benchmark(name: "mrz", summary: "MRZ parses per second, clean and OCR-corrupted") { args in
        let (opts, _) = try CLI.parseOptions(args)
        let count = Int(opts["count"] ?? "") ?? 20_000
        var generator = MRZSampleGenerator(seed: 20_261_129)
        let clean = (0..<count).map { _ in generator.next().lines }
        let corrupted = clean.map { generator.corrupt($0) }
        let parser = MRZParser()
        var results: [(String, Double, Int)] = []
        for (label, corpus) in [("clean", clean), ("corrupted", corrupted)] {
            var valid = 0
            _ = parser.parse(corpus[0])
            let seconds = Command.measure { for lines in corpus where parser.parse(lines).valid { valid += 1 } }
            results.append((label, seconds, valid))
        }
        print("mrz parse: \(count) MRZs per corpus (TD1/TD2/TD3/MRV-A/MRV-B, seeded)")
        for (label, seconds, valid) in results {
            let rate = Double(count) / seconds
            print(String(format: "  %-10@ %10.0f parses/s  (%.3f s, %.1f µs/parse, %d valid after parsing)",
                         label as NSString, rate, seconds, 1e6 * seconds / Double(count), valid))
        }
        return 0
    }
}
