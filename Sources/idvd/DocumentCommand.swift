import DocumentReader
import Foundation
import IDVEngine
import IDVReaders
import Imaging
import MRZ

extension Command {
    static let document = Command(name: "document", summary: "read passport/ID page images: MRZ, fields, portrait, checks (JSON)") { args in
        let usage = """
        usage: idvd document read IMAGE [IMAGE2] [--shape internal|seed002|seed003] [--images] [--no-portrait]
               idvd document read --jsonl IMAGE|DIR…      one compact report line per image (corpora)
          IMAGE is a JPEG or PNG photo or scan of a passport page or ID card side, any orientation.
          Prints the internal report (mrz.lines as read, mrz.valid, fields, checks_performed, errors,
          warnings, overall_status); --shape seed002 / seed003 prints the seed payloads instead
          (with Base64 images). --images adds Base64 images to the internal report.
          --debug-strips DIR writes the rectified MRZ of each image to DIR (NAME.mrz.png) and the cells
            as the recogniser samples them (NAME.cells.png, one tile per cell of the fitted grid).
          --jsonl reads each IMAGE, and every file of each DIR (sorted by name, not recursive), as its own
            document. A file that cannot be read gets the line {"file":…,"error":…} and the batch goes on.
          Exit code 0 when the run completed: a report was produced (whatever its verdict) or, with --jsonl,
          every file got its line (report or error line); 2 on usage errors and, without --jsonl, when a
          file cannot be read.
        """
        guard args.first == "read" else {
            print(usage)
            return args.isEmpty || args.first == "--help" || args.first == "-h" ? 0 : 2
        }
        let (o, pos) = try CLI.parseOptions(Array(args.dropFirst()), flags: ["jsonl", "images", "no-portrait", "help"])
        if o["help"] != nil { print(usage); return 0 }
        guard !pos.isEmpty else { throw CLIError("no image given\n" + usage) }
        let shape = o["shape"] ?? "internal"
        guard ["internal", "seed002", "seed003"].contains(shape) else { throw CLIError("--shape must be internal, seed002 or seed003") }
        let jsonl = o["jsonl"] != nil
        if !jsonl && pos.count > 2 { throw CLIError("at most two page images per document (use --jsonl for many documents)") }
        var options = DocumentReaderOptions()
        if o["no-portrait"] != nil { options.detectPortrait = false }
        var documents: [[String]] = [pos]
        if jsonl {
            documents = []
            for p in pos {
                var isDir: ObjCBool = false
                if FileManager.default.fileExists(atPath: p, isDirectory: &isDir), isDir.boolValue {
                    let names = ((try? FileManager.default.contentsOfDirectory(atPath: p)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
                    let base = p.hasSuffix("/") ? p : p + "/"
                    for n in names {
                        var sub: ObjCBool = false
                        if FileManager.default.fileExists(atPath: base + n, isDirectory: &sub), !sub.boolValue { documents.append([base + n]) }
                    }
                } else {
                    documents.append([p])
                }
            }
        }
        struct ErrorLine: Encodable { let file: String; let error: String }
        documents: for files in documents {
            var pages: [Data] = []
            for f in files {
                guard let d = FileManager.default.contents(atPath: f) else {
                    let why = FileManager.default.fileExists(atPath: f) ? "cannot read \(f) (permission or I/O error)" : "cannot read \(f): no such file"
                    if jsonl { try CLI.printJSON(ErrorLine(file: f, error: why), compact: true); continue documents }
                    throw CLIError(why)
                }
                pages.append(d)
            }
            let report = DocumentReader.read(pages: pages, options: options)
            if jsonl, report.pageFailures.count == pages.count, !pages.isEmpty {
                // Not a decodable image (truncated, corrupt, not JPEG/PNG): an error line, as for a missing file.
                try CLI.printJSON(ErrorLine(file: files[0], error: report.findings.first.map(DocumentWording.sentence) ?? "cannot decode \(files[0])"),
                                  compact: true)
                continue
            }
            if let dir = o["debug-strips"] {
                for f in files {
                    if let img = try? DocumentImage.decode(path: f), let r = MRZReader.read(img.grey) {
                        let name = (f as NSString).lastPathComponent
                        try Raster.encodePNG(r.rectified(from: img.grey)).write(to: URL(fileURLWithPath: dir + "/" + name + ".mrz.png"))
                        try Raster.encodePNG(r.cellView(from: img.grey)).write(to: URL(fileURLWithPath: dir + "/" + name + ".cells.png"))
                    }
                }
            }
            // The reader gives evidence; the verdict and the sentences are the server's policy's.
            let judged = report.judged()
            switch shape {
            case "seed002": try CLI.printJSON(report.seed002(judged), compact: jsonl)
            case "seed003": try CLI.printJSON(report.seed003(judged), compact: jsonl)
            default:
                let json = DocumentReportJSON(report, judged: judged, includeImages: o["images"] != nil)
                if jsonl {
                    struct Line: Encodable { let file: String; let report: DocumentReportJSON }
                    try CLI.printJSON(Line(file: files[0], report: json), compact: true)
                } else {
                    try CLI.printJSON(json)
                }
            }
        }
        return 0
    }
}

extension Benchmark {
    static let document = Benchmark(name: "document", summary: "MRZ reading: success rate and time per image (specimens + generated corpus)") { args in
        let usage = """
        usage: idvd bench document [--corpus DIR] [--truth TSV] [--limit N] [--portrait] [--jsonl OUT]
          --corpus DIR   images written by `idvd specimen --augment --count N --out DIR` (with .json truth)
          --truth TSV    real specimens: ground_truth.tsv (default ../shared/testdata/mrz-images/ground_truth.tsv)
          --portrait     time the full report (with face detection) instead of MRZ reading only
          --jsonl OUT    per-image results (file, expected, got, exact, ms) for side-by-side comparison
        Success = the MRZ lines after check-digit correction equal the truth exactly (so every field is
        exact). "Wrong but not flagged" = not exact, yet the report has a valid MRZ, no failed check
        but expiry and no warning (it would be VALID were the document in date). Time = decode + locate + recognise + parse, one thread, per image.
        """
        let (o, pos) = try CLI.parseOptions(args, flags: ["portrait", "help"])
        if o["help"] != nil || !pos.isEmpty { print(usage); return pos.isEmpty ? 0 : 2 }
        struct Item { let file: String; let expected: [String]; let set: String }
        var items: [Item] = []
        // Default: the shared test data beside the checkout, found from the working directory or,
        // when run from elsewhere, from the checkout holding the binary (the nearest folder above
        // it with a Package.swift).
        let relative = "../shared/testdata/mrz-images/ground_truth.tsv"
        var root = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        while root.path != "/" && !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root = root.deletingLastPathComponent()
        }
        let fromBinary = root.appendingPathComponent(relative).standardized.path
        let truth = o["truth"] ?? (FileManager.default.fileExists(atPath: relative) ? relative : fromBinary)
        if o["truth"] != "none", let text = try? String(contentsOfFile: truth, encoding: .utf8) {
            let base = (truth as NSString).deletingLastPathComponent
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let cols = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard cols.count >= 3 else { continue }
                items.append(Item(file: base + "/" + cols[0], expected: cols[2].split(separator: "|").map(String.init), set: "specimens"))
            }
        } else if o["truth"] != "none" {
            CLI.stderr("bench document: no ground truth at \(truth) (skipping the real specimens)")
        }
        if let dir = o["corpus"] {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
            struct Truth: Decodable { let file: String; let mrz_lines: [String] }
            for n in names {
                guard let d = FileManager.default.contents(atPath: dir + "/" + n), let t = try? JSONDecoder().decode(Truth.self, from: d) else { continue }
                items.append(Item(file: dir + "/" + t.file, expected: t.mrz_lines, set: "generated"))
            }
            if let limit = o["limit"].flatMap(Int.init) {
                let gen = items.filter { $0.set == "generated" }.prefix(limit)
                items = items.filter { $0.set != "generated" } + gen
            }
        }
        guard !items.isEmpty else { throw CLIError("nothing to measure (give --corpus DIR or a --truth TSV)") }
        let loadTime = try Command.measure { _ = OCRBClassifier(parameters: try OCRBParameters.shipped()) }
        _ = OCRBClassifier.shared
        print(String(format: "OCR-B classifier: shipped parameters loaded in %.1f ms (once per process; trained offline by idvd ocrb train)", loadTime * 1000))
        var options = DocumentReaderOptions()
        options.detectPortrait = o["portrait"] != nil
        var out: FileHandle?
        if let path = o["jsonl"] { _ = FileManager.default.createFile(atPath: path, contents: nil); out = FileHandle(forWritingAtPath: path) }
        struct Row: Encodable { let file: String; let set: String; let expected: [String]; let got: [String]; let exact: Bool; let ms: Double }
        var results: [String: (ok: Int, n: Int, unflagged: Int, times: [Double])] = [:]
        for (i, item) in items.enumerated() {
            guard let data = FileManager.default.contents(atPath: item.file) else { CLI.stderr("missing \(item.file)"); continue }
            var got: [String] = []
            let t = Command.measure {
                if options.detectPortrait {
                    let r = DocumentReader.read(pages: [data], options: options)
                    got = r.mrz.result?.lines ?? []
                } else if let img = try? DocumentImage.decode(data), let reading = MRZReader.read(img.grey) {
                    got = reading.parsed().lines   // exactly as DocumentReader.read parses it
                }
            }
            let exact = got == item.expected
            var r = results[item.set] ?? (0, 0, 0, [])
            r.n += 1; if exact { r.ok += 1 }; r.times.append(t)
            if !exact {
                // Wrong but not flagged: the report (outside the timing) would say VALID but for expiry.
                var ro = options
                ro.detectPortrait = false
                let report = DocumentReader.read(pages: [data], options: ro)
                let failed = report.checks.filter { $0.result == .failed && $0.id != .documentNotExpired }
                let warnings = report.judged().warnings
                if failed.isEmpty && warnings.isEmpty && (report.mrz.result?.valid ?? false) { r.unflagged += 1 }
            }
            results[item.set] = r
            if let out, let line = try? JSONEncoder().encode(Row(file: item.file, set: item.set, expected: item.expected, got: got, exact: exact, ms: t * 1000)) {
                out.write(line + Data("\n".utf8))
            }
            if (i + 1) % 100 == 0 { CLI.stderr("bench document: \(i + 1)/\(items.count)") }
        }
        try? out?.close()
        for set in ["specimens", "generated"] {
            guard let r = results[set] else { continue }
            let s = r.times.sorted()
            print(String(format: "%@: %d/%d exact (%.1f %%), %d wrong but not flagged  time per image: mean %.0f ms, median %.0f ms, p95 %.0f ms",
                         set, r.ok, r.n, 100 * Double(r.ok) / Double(r.n), r.unflagged, 1000 * s.reduce(0, +) / Double(s.count),
                         1000 * s[s.count / 2], 1000 * s[min(s.count - 1, s.count * 95 / 100)]))
        }
        return 0
    }
}
