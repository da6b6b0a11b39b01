import Foundation
import MRZ

extension Command {
    /// `idvd mrz parse [--jsonl] [--no-correct] [--reference-date YYYY-MM-DD] [--expiry-window N] [LINE…]`
    static let mrz = Command(name: "mrz", summary: "parse, validate and correct ICAO 9303 MRZ text (idvd mrz parse)") { args in
        let usage = """
            usage: idvd mrz parse [options] [LINE ...]
              Lines come from the arguments, or from stdin when none are given; prints the result as JSON.
              --jsonl               read one JSON array of MRZ lines per input line (or an object {"lines": [...],
                                    "alternatives": [[cell runner-ups as a string, ...], ...]}), write one result per line
              --no-correct          report check digits as read, without OCR-error correction
              --reference-date D    date for century rules and 'expired' (YYYY-MM-DD, default today, UTC)
              --expiry-window N     years an expiry date may lie in the future (default 20)
            Exit status: 0 when every MRZ is valid, 1 when one is not, 2 on a usage error.
            """
        try CLI.refuseOptionForSubcommand(args.first, command: "mrz")
        guard args.first == "parse" else {
            if args.isEmpty || ["-h", "--help"].contains(args[0]) { print(usage); return args.isEmpty ? 2 : 0 }
            throw CLIError("unknown mrz subcommand '\(args[0])'\n" + usage)
        }
        let (opts, positional) = try CLI.parseOptions(Array(args.dropFirst()), flags: ["jsonl", "no-correct", "help"],
                                                        valued: ["reference-date", "expiry-window"], command: "mrz parse")
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
                struct Record: Decodable { let lines: [String]; let alternatives: [[String]]? }
                let data = Data(line.utf8)
                let result: MRZResult
                if let lines = try? JSONDecoder().decode([String].self, from: data) {
                    result = parser.parse(lines)
                } else if let record = try? JSONDecoder().decode(Record.self, from: data) {
                    // {"lines": [...], "alternatives": [["", "0Q", …], …]}: per cell, the OCR's runner-ups in order.
                    result = parser.parse(record.lines, alternatives: record.alternatives?.map { $0.map { Array($0) } })
                } else {
                    result = MRZResult(valid: false, format: .unknown, lines: [], fields: MRZFields(), checkDigits: [], corrections: [],
                                       errors: ["input line \(lineNumber) is neither a JSON array of strings nor an object with \"lines\""],
                                       warnings: [])
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
    /// `idvd bench mrz [--count N]`: parses per second on generated MRZs across TD1, TD2, TD3, MRV-A
    /// and MRV-B: clean; with one or two OCR confusions (characters only, rank-free correction); and
    /// read with per-cell posteriors (`MRZSampleGenerator.corruptWithPosteriors`: one to three
    /// misread cells, doubtful decoys elsewhere; the MAP decoder). For the corrupted corpora it counts
    /// separately: recovered (valid and equal to the clean MRZ), wrong corrections (a corrected cell
    /// that does not hold the clean character) and wrong but valid (valid yet not the clean MRZ —
    /// check-digit-blind confusions such as 1↔L, 6↔G, `<`↔K, or two that cancel). The `codes` row
    /// misreads one or two issuing-state / nationality cells (letter look-alikes included) with
    /// posteriors and counts recovered, left unknown (reported), wrong but listed, wrong corrections.
    static let mrz = Benchmark(name: "mrz", summary: "MRZ parses per second, clean, OCR-corrupted and posterior-decoded", options: "[--count N]") { args in
        let (opts, _) = try CLI.parseOptions(args, valued: ["count"], takesArguments: false, command: "bench mrz")
        let count = Int(opts["count"] ?? "") ?? 20_000
        var generator = MRZSampleGenerator(seed: 20_261_129)
        let clean = (0..<count).map { _ in generator.next().lines }
        let corrupted = clean.map { generator.corrupt($0) }
        let withPosteriors = clean.map { generator.corruptWithPosteriors($0, count: generator.int(1...3)) }
        let parser = MRZParser()
        struct Row { let label: String; let seconds: Double; let valid: Int; let recovered: Int?; let wrongCorrections: Int?; let wrongValid: Int? }
        var rows: [Row] = []
        for (label, corpus) in [("clean", clean), ("corrupted", corrupted)] {
            var valid = 0
            _ = parser.parse(corpus[0])
            let seconds = Command.measure { for lines in corpus where parser.parse(lines).valid { valid += 1 } }
            if label == "clean" { rows.append(Row(label: label, seconds: seconds, valid: valid, recovered: nil, wrongCorrections: nil, wrongValid: nil)); continue }
            var recovered = 0, wrong = 0, wrongValid = 0
            for (k, lines) in corpus.enumerated() {
                let r = parser.parse(lines)
                let truth = clean[k].map { Array($0) }
                wrong += r.corrections.filter { truth[$0.line - 1][$0.column - 1] != Character($0.to) }.count
                if r.valid { if r.lines == clean[k] { recovered += 1 } else { wrongValid += 1 } }
            }
            rows.append(Row(label: label, seconds: seconds, valid: valid, recovered: recovered, wrongCorrections: wrong, wrongValid: wrongValid))
        }
        do {
            var valid = 0
            let seconds = Command.measure {
                for s in withPosteriors where parser.parse(s.lines, posteriors: s.posteriors).valid { valid += 1 }
            }
            var recovered = 0, wrong = 0, wrongValid = 0
            for (k, s) in withPosteriors.enumerated() {
                let r = parser.parse(s.lines, posteriors: s.posteriors)
                let truth = clean[k].map { Array($0) }
                wrong += r.corrections.filter { truth[$0.line - 1][$0.column - 1] != Character($0.to) }.count
                if r.valid { if r.lines == clean[k] { recovered += 1 } else { wrongValid += 1 } }
            }
            rows.append(Row(label: "posterior", seconds: seconds, valid: valid, recovered: recovered, wrongCorrections: wrong, wrongValid: wrongValid))
        }
        do {
            // The same posterior corpus through the rank-only correction (runner-ups by posterior, no
            // probabilities): what the decoder is measured against.
            let ranked = withPosteriors.map { s in
                s.posteriors.enumerated().map { l, row in
                    row.enumerated().map { c, cands in
                        cands.filter { $0.character != Array(s.lines[l])[c] }.sorted { $0.posterior > $1.posterior }.map(\.character)
                    }
                }
            }
            var valid = 0
            let seconds = Command.measure {
                for (k, s) in withPosteriors.enumerated() where parser.parse(s.lines, alternatives: ranked[k]).valid { valid += 1 }
            }
            var recovered = 0, wrong = 0, wrongValid = 0
            for (k, s) in withPosteriors.enumerated() {
                let r = parser.parse(s.lines, alternatives: ranked[k])
                let truth = clean[k].map { Array($0) }
                wrong += r.corrections.filter { truth[$0.line - 1][$0.column - 1] != Character($0.to) }.count
                if r.valid { if r.lines == clean[k] { recovered += 1 } else { wrongValid += 1 } }
            }
            rows.append(Row(label: "pos/ranks", seconds: seconds, valid: valid, recovered: recovered, wrongCorrections: wrong, wrongValid: wrongValid))
        }
        // Code fields: one or two cells of the issuing state / nationality misread as a look-alike
        // (letters included: `codeConfusions`), with posteriors; no check digit covers them, only the
        // ICAO code list. Drawn after the other corpora, which stay as they were.
        let codeCorpus = clean.map { lines in
            generator.corruptWithPosteriors(lines, count: generator.int(1...2), confusions: MRZSampleGenerator.codeConfusions) { l, c in
                MRZSampleGenerator.isCodeCell(l, c, lineCount: lines.count, length: lines[0].count)
            }
        }
        var codeRecovered = 0, codeWrong = 0, codeKept = 0, codeSilent = 0, codeMisread = 0
        let codeSeconds = Command.measure {
            for (k, s) in codeCorpus.enumerated() {
                let r = parser.parse(s.lines, posteriors: s.posteriors)
                let truth = clean[k].map { Array($0) }
                if s.lines != clean[k] { codeMisread += 1 }
                codeWrong += r.corrections.filter { truth[$0.line - 1][$0.column - 1] != Character($0.to) }.count
                if r.lines == clean[k] { if s.lines != clean[k] { codeRecovered += 1 } }
                else if r.fields.issuingStateKnown && r.fields.nationalityKnown { codeSilent += 1 }
                else { codeKept += 1 }
            }
        }
        print("mrz parse: \(count) MRZs per corpus (TD1/TD2/TD3/MRV-A/MRV-B, seeded)")
        for r in rows {
            let rate = Double(count) / r.seconds
            var line = "  " + r.label.padding(toLength: 10, withPad: " ", startingAt: 0)
                + String(format: "%9.0f parses/s  (%.3f s, %.1f µs/parse, %d valid after parsing)", rate, r.seconds, 1e6 * r.seconds / Double(count), r.valid)
            if let rec = r.recovered, let w = r.wrongCorrections, let wv = r.wrongValid {
                line += "; recovered \(rec), wrong corrections \(w), wrong but valid \(wv)"
            }
            print(line)
        }
        print(String(format: "  codes     %9.0f parses/s  (%.3f s); %d with a code misread: recovered %d, left unknown (reported) %d, "
                     + "wrong but listed %d, wrong corrections %d", Double(count) / codeSeconds, codeSeconds, codeMisread,
                     codeRecovered, codeKept, codeSilent, codeWrong))
        return 0
    }
}
