import DocumentReader
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVReaders
import Imaging
import MRZ

extension Command {
    static let document = Command(name: "document", summary: "read passport/ID page images: MRZ, fields, portrait, checks (JSON)") { args in
        let usage = """
        usage: idvd document read IMAGE [IMAGE2] [--shape internal|seed002|seed003] [--images] [--no-portrait]
                                  [--flow selfie|document-scan] [--no-visual-zone] [--timing]
                                  [--config FILE] [--set KEY=VALUE]...
               idvd document read --jsonl IMAGE|DIR…      one compact report line per image (corpora)
          IMAGE is a JPEG or PNG photo or scan of a passport page or ID card side, any orientation; IMAGE2
          the other side (for a TD1 card the front, whose printed names are cross-checked with the MRZ's).
          Prints the internal report (mrz.lines as read, mrz.valid, fields, checks_performed, errors,
          warnings, overall_status); --shape seed002 / seed003 prints the seed payloads instead
          (with Base64 images). --images adds Base64 images to the internal report (without it the
          page images are not made: images.page_jpeg_bytes is empty).
          --flow judges as the server's policy does in the document step of a flow that matches a selfie
            (selfie, the default: activation and KYC — no portrait is INVALID) or of the document-scan-only
            flow (document-scan: no portrait is a WARNING); one rule, `WorkflowPolicy.judge`.
          --config FILE, --set KEY=VALUE  the policy's settings, read exactly as `idvd serve` reads them:
            defaults < --config FILE (or IDVD_CONFIG; a flat JSON object) < IDVD_* environment variables
            < --set (repeatable; `idvd serve --help` lists every key). The document policy is the
            idv.doc.* keys, e.g. --config docs/idvd.production.json makes a UTO specimen INVALID as the
            production server does; other keys are checked and have no effect here.
          --no-portrait  skip the portrait search (the "Portrait found" check is then not performed)
          --no-visual-zone  skip the cross-check of the names with the visual zone or the card front (Tesseract)
          --working-size N|full  decode pages whose longer side exceeds N pixels at N (default 2400;
            `full`: at their own size, as before scaled decoding existed — for A/B figures)
          --portrait-search document|page  where the portrait search starts (default document: inside the
            MRZ's document frame; page: the whole page, as before — for A/B figures)
          --name-lines first|top  which visual-zone text lines Tesseract recognises first (default first:
            the lines whose width fits the MRZ's names; top: every line from the top, as before — A/B figures)
          --debug-strips DIR writes the rectified MRZ of each image to DIR (FILE.mrz.png, FILE being the
            image's file name with its extension: photo.jpg.mrz.png) and the cells as the recogniser
            samples them (FILE.cells.png, one tile per cell of the fitted grid), and the rectified visual
            zone given to Tesseract (FILE.viz.png; for a TD1 card the text above its MRZ, and its front as
            Tesseract gets it upright, FRONT.front.png).
          --timing  prints to stderr, per document, the time from process start to the reading's start and
            end and each stage's time (decode, MRZ, checks, page images, portrait, visual zone)
          --jsonl reads each IMAGE, and every file of each DIR (sorted by name, not recursive), as its own
            document. A file that cannot be read gets the line {"file":…,"error":…} and the batch goes on.
          Exit code 0 when the run completed: a report was produced (whatever its verdict) or, with --jsonl,
          every file got its line (report or error line); 2 on usage errors and, without --jsonl, when a
          file cannot be read.
        """
        try CLI.refuseOptionForSubcommand(args.first, command: "document")
        guard args.first == "read" else {
            print(usage)
            return args.isEmpty || args.first == "--help" || args.first == "-h" ? 0 : 2
        }
        let (rest, settings) = try splitSettings(Array(args.dropFirst()))
        let (o, pos) = try CLI.parseOptions(rest, flags: ["jsonl", "images", "no-portrait", "no-visual-zone", "timing", "help"],
                                            valued: ["shape", "flow", "working-size", "portrait-search", "name-lines", "debug-strips", "config"], command: "document read")
        if o["help"] != nil { print(usage); return 0 }
        let policy = try servedPolicy(configFile: o["config"], settings: settings)
        guard !pos.isEmpty else { throw CLIError("no image given\n" + usage) }
        let shape = o["shape"] ?? "internal"
        let flow = o["flow"] ?? "selfie"
        guard ["selfie", "document-scan"].contains(flow) else { throw CLIError("--flow must be selfie or document-scan") }
        guard ["internal", "seed002", "seed003"].contains(shape) else { throw CLIError("--shape must be internal, seed002 or seed003") }
        let jsonl = o["jsonl"] != nil
        if !jsonl && pos.count > 2 { throw CLIError("at most two page images per document (use --jsonl for many documents)") }
        var options = DocumentReaderOptions()
        if o["no-portrait"] != nil { options.detectPortrait = false }
        if o["no-visual-zone"] != nil { options.checkVisualZone = false }
        // The page images are made only when printed (--images, the seed shapes): ~30 ms of one core a page.
        options.pageImages = o["images"] != nil || shape != "internal"
        try applyReaderOptions(o, to: &options)
        keepFreedBuffersForReuse()
        // Tesseract starts on a second thread while the page is decoded and its MRZ read.
        DocumentReader.prepare(options: options)
        let timingWanted = o["timing"] != nil
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
            let readStart = Command.secondsSinceProcessStart()
            let report = DocumentReader.read(pages: pages, options: options)
            if timingWanted {
                let t = report.timing
                FileHandle.standardError.write(Data(String(format: "timing %@: read started %.3f s after process start, stages decode %.3f, mrz %.3f, checks %.3f, page images %.3f, portrait %.3f, visual zone %.3f s (sum %.3f s), done %.3f s after process start\n",
                    files[0], readStart, t.decode, t.mrz, t.checks, t.pageImages, t.portrait, t.visualZone, t.total, Command.secondsSinceProcessStart()).utf8))
            }
            if report.pageFailures.count == pages.count, !pages.isEmpty {
                // Not a decodable image (truncated, corrupt, not JPEG/PNG): an error line with --jsonl, as for a
                // missing file; otherwise the same sentence on stderr and exit 2, as for a file that cannot be read.
                let why = report.findings.first.map(DocumentWording.sentence) ?? "cannot decode \(files[0])"
                guard jsonl else { throw CLIError("\(files.joined(separator: ", ")): \(why)") }
                try CLI.printJSON(ErrorLine(file: files[0], error: why), compact: true)
                continue
            }
            if let dir = o["debug-strips"] {
                func write(_ image: GreyImage, _ file: String, _ suffix: String) throws {
                    try Raster.encodePNG(image).write(to: URL(fileURLWithPath: dir + "/" + (file as NSString).lastPathComponent + suffix))
                }
                let decoded = files.map { f in (file: f, image: try? DocumentImage.decode(path: f)) }
                // The first page with an MRZ; for a TD1 card the other page is its front.
                var card: (file: String, frame: MRZDocumentFrame, turns: Int)?
                for (f, img) in decoded {
                    guard let img, let r = MRZReader.read(img.grey) else { continue }
                    try write(r.rectified(from: img.grey), f, ".mrz.png")
                    try write(r.cellView(from: img.grey), f, ".cells.png")
                    guard let frame = MRZDocumentFrame(reading: r) else { continue }
                    if frame.mrzOnBack {
                        if let side = DocumentReader.cardMRZSideTextImage(img.grey, frame: frame) { try write(side, f, ".viz.png") }
                        if card == nil { card = (f, frame, Int((r.angleDegrees / 90).rounded()) % 4) }
                    } else if let viz = DocumentReader.visualZoneImage(img.grey, frame: frame) {
                        try write(viz, f, ".viz.png")
                    }
                }
                if let card, let (f, img) = decoded.first(where: { $0.file != card.file }), let img,
                   let front = DocumentReader.cardFrontImage(img.grey, quarterTurns: -card.turns, pixelsPerMM: card.frame.pixelsPerMM) {
                    try write(front, f, ".front.png")
                }
            }
            // The reader gives evidence; the verdict and the sentences are the server's policy's.
            let judged = report.judged(by: policy, needsPortrait: flow == "selfie" && options.detectPortrait)
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

extension Command {
    /// The server's workflow policy (`WorkflowPolicy`, the `idv.*` settings) as `idvd serve` reads
    /// it: defaults, then `configFile` (or `IDVD_CONFIG`), then the `IDVD_*` environment, then
    /// `settings` (`--set`). Every key is checked as the server checks it (an unknown key or a bad
    /// value is a usage error), so a configuration the server refuses is refused here too.
    static func servedPolicy(configFile: String?, settings: [String: String]) throws -> WorkflowPolicy {
        let file = configFile ?? ProcessInfo.processInfo.environment["IDVD_CONFIG"]
        do { return try ServerConfig.load(file: file, overrides: settings).engine.workflow } catch { throw CLIError("\(error)") }
    }
}

extension Benchmark {
    /// The from-process-start figures of `bench document`: `count` fresh `idvd document read` runs on
    /// `file` (median and range of wall time and peak RSS), one on a 64-megapixel page made from it
    /// at the working size and one decoded in full, and PassportEye's on `file` when asked.
    static func processFigures(first file: String, onePage: String, count: Int, passportEye: Bool) throws {
        guard count > 0 else { return }
        let me = Command.selfExecutable
        func mb(_ b: Int) -> Double { Double(b) / 1_048_576 }
        func runs(_ args: [String], _ n: Int) throws -> [ProcessCost] {
            try (0..<n).map { _ in
                let c = try Command.measureProcess(me, args)
                guard c.exitStatus == 0 else { throw CLIError("idvd \(args.joined(separator: " ")) exited with \(c.exitStatus)") }
                return c
            }
        }
        @discardableResult
        func line(_ label: String, _ c: [ProcessCost]) -> Double {
            let t = c.map(\.seconds).sorted(), m = c.map(\.maxRSSBytes).sorted()
            let u = c.map(\.userSeconds).sorted(), y = c.map(\.systemSeconds).sorted()
            print(String(format: "%@: %d run(s), from process start to exit median %.3f s (%.3f–%.3f), CPU median %.3f s user + %.3f s sys, peak RSS median %.0f MB (%.0f–%.0f)",
                         label, c.count, t[t.count / 2], t[0], t[t.count - 1], u[u.count / 2], y[y.count / 2],
                         mb(m[m.count / 2]), mb(m[0]), mb(m[m.count - 1])))
            return t[t.count / 2]
        }
        // One page, the full report (MRZ, portrait search, visual-zone names): in this process once
        // warm (every model loaded), then as fresh processes (everything loaded per process).
        let pageName = (onePage as NSString).lastPathComponent
        let pageData = try Data(contentsOf: URL(fileURLWithPath: onePage))
        _ = DocumentReader.read(pages: [pageData], options: DocumentReaderOptions())
        let warm = (0..<count).map { _ in Command.measure { _ = DocumentReader.read(pages: [pageData], options: DocumentReaderOptions()) } }.sorted()
        print(String(format: "idvd document read %@ in this process, warm: %d run(s), median %.3f s (%.3f–%.3f)",
                     pageName, warm.count, warm[warm.count / 2], warm[0], warm[warm.count - 1]))
        // Fresh processes of the page alternated with bare starts (`idvd version`: the same binary
        // loaded, linked and exited, nothing read), so that the page's cost over a bare start is
        // measured pair by pair at the same moment of a shared machine's load.
        var pages: [ProcessCost] = [], bare: [ProcessCost] = []
        for _ in 0..<count {
            pages += try runs(["document", "read", onePage], 1)
            bare += try runs(["version"], 1)
        }
        let fresh = line("idvd document read \(pageName) (one page, full report, fresh process)", pages)
        line("idvd version (bare start: load, link, exit)", bare)
        let over = zip(pages, bare).map { $0.seconds - $1.seconds }.sorted()
        print(String(format: "idvd document read %@ over a bare start, pair by pair: min %.3f s, median %.3f s, max %.3f s (%d pairs)",
                     pageName, over[0], over[over.count / 2], over[over.count - 1], over.count))
        line("idvd document read \(pageName) --no-portrait --no-visual-zone (MRZ only)", try runs(["document", "read", onePage, "--no-portrait", "--no-visual-zone"], count))
        var passportEyeFigure = "PassportEye 2.2.2 15.2 s (one run recorded in bench/DOCUMENT-BENCH.md, loaded machine, MRZ misread)"
        defer {
            print(String(format: "one page %@, full report: from process start %.3f s (median of %d), warm %.3f s per image; %@",
                         pageName, fresh, count, warm[warm.count / 2], passportEyeFigure))
        }
        // A 64-megapixel page: the specimen enlarged to just under Raster.maxPixels, JPEG quality 90.
        let source = try Imaging.Image(data: try Data(contentsOf: URL(fileURLWithPath: file)))
        let k = (Double(Raster.maxPixels - 100_000) / Double(source.width * source.height)).squareRoot()
        let big = try source.resized(width: Int(Double(source.width) * k), height: Int(Double(source.height) * k))
        let path = NSTemporaryDirectory() + "idvd-bench-64mp-\(getpid()).jpg"
        try big.jpegData(quality: 90).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let label = String(format: "%d × %d page (%.1f MP)", big.width, big.height, Double(big.width * big.height) / 1e6)
        line("idvd document read \(label), decoded at the working size", try runs(["document", "read", path], 1))
        line("idvd document read \(label), decoded in full (--working-size full)", try runs(["document", "read", path, "--working-size", "full"], 1))
        guard passportEye else { return }
        let python = "/usr/bin/python3"
        guard (try? Command.measureProcess(python, ["-c", "import passporteye"]))?.exitStatus == 0 else {
            print("PassportEye: not measured (python3 cannot import passporteye; pip install PassportEye==2.2.2)")
            return
        }
        let pe = try Command.measureProcess(python, ["-c", "import sys; from passporteye import read_mrz; m = read_mrz(sys.argv[1]); print(m.to_dict() if m else None)", onePage])
        print(String(format: "PassportEye read_mrz %@: 1 run, from process start to exit %.3f s, peak RSS %.0f MB", pageName, pe.seconds, mb(pe.maxRSSBytes)))
        passportEyeFigure = String(format: "PassportEye read_mrz %.3f s from process start (1 run, measured now)", pe.seconds)
    }
}

extension Command {
    /// `--working-size N|full`, `--portrait-search document|page` and `--name-lines first|top`
    /// (document read, bench document).
    static func applyReaderOptions(_ o: [String: String], to options: inout DocumentReaderOptions) throws {
        if let w = o["working-size"] {
            if w == "full" { options.workingMaxDimension = nil } else {
                guard let n = Int(w), n >= 64 else { throw CLIError("--working-size must be a number of pixels ≥ 64 or 'full', got '\(w)'") }
                options.workingMaxDimension = n
            }
        }
        if let p = o["portrait-search"] {
            guard let v = DocumentReaderOptions.PortraitSearchStart(rawValue: p) else { throw CLIError("--portrait-search must be document or page, got '\(p)'") }
            options.portraitSearch = v
        }
        if let n = o["name-lines"] {
            guard n == "first" || n == "top" else { throw CLIError("--name-lines must be first or top, got '\(n)'") }
            options.nameLinesFirst = n == "first"
        }
    }
}

extension Benchmark {
    static let document = Benchmark(name: "document", summary: "MRZ reading: success rate and time per image (specimens + generated corpus)", hasUsage: true) { args in
        let usage = """
        usage: idvd bench document [--corpus DIR] [--truth TSV] [--limit N] [--portrait] [--jsonl OUT]
                                   [--working-size N|full] [--portrait-search document|page] [--name-lines first|top]
                                   [--processes N] [--page FILE] [--passporteye]
          --corpus DIR   images written by `idvd specimen --augment --count N --out DIR` (with .json truth)
          --truth TSV    real specimens: ground_truth.tsv (default ../shared/testdata/mrz-images/ground_truth.tsv)
          --portrait     time the full report (with face detection) instead of MRZ reading only
          --jsonl OUT    per-image results (file, expected, got, exact, ms) for side-by-side comparison
          --working-size, --portrait-search, --name-lines   as for `idvd document read` (A/B figures)
          --processes N  afterwards, time the full report of one page (--page, else specimens/100_pass-uto.jpg,
                         else the first specimen) N times warm in this process and as N fresh `idvd document
                         read` processes (from process start to exit, CPU and peak RSS of each; default
                         5, 0 = none), each followed by a bare start (`idvd version`) and the page's time
                         over it pair by pair (min, median, max; run under `taskset -c 0` for one core),
                         printed beside PassportEye's figure; then one each on a
                         64-megapixel page made from the first specimen, decoded at the working size
                         and in full (the decode before scaled decoding)
          --passporteye  also time one fresh PassportEye process (python3 -m passporteye's read_mrz)
                         on the same specimen, when python3 can import passporteye
        Success = the MRZ lines after check-digit correction equal the truth exactly (so every field is
        exact). "Wrong but not flagged" = not exact, yet the report has a valid MRZ, no failed check
        but expiry and no warning (it would be VALID were the document in date). Time = decode + locate + recognise + parse, one thread, per image.
        """
        let (o, _) = try CLI.parseOptions(args, flags: ["portrait", "passporteye", "help"],
                                            valued: ["corpus", "truth", "limit", "jsonl", "working-size", "portrait-search", "name-lines", "processes", "page"],
                                            takesArguments: false, command: "bench document")
        if o["help"] != nil { print(usage); return 0 }
        if let page = o["page"], !FileManager.default.isReadableFile(atPath: page) { throw CLIError("--page: cannot read \(page)") }
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
        try Command.applyReaderOptions(o, to: &options)
        let processes = try o["processes"].map { v -> Int in
            guard let n = Int(v), n >= 0 else { throw CLIError("--processes must be a count ≥ 0, got '\(v)'") }
            return n
        } ?? 5
        var stages: [DocumentReport.Timing] = []
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
                    stages.append(r.timing)
                } else if let img = try? DocumentImage.decode(data, maxDimension: options.workingMaxDimension), let reading = MRZReader.read(img.grey) {
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
        if !stages.isEmpty {
            func mean(_ k: KeyPath<DocumentReport.Timing, Double>) -> Double { 1000 * stages.map { $0[keyPath: k] }.reduce(0, +) / Double(stages.count) }
            print(String(format: "full report, mean per image over %d (portrait search from the %@): decode %.1f ms, MRZ %.1f ms, checks + quality %.1f ms, "
                         + "page images %.1f ms, portrait %.1f ms, visual-zone names %.1f ms = %.1f ms",
                         stages.count, options.portraitSearch == .documentFrame ? "document frame" : "whole page", mean(\.decode), mean(\.mrz),
                         mean(\.checks), mean(\.pageImages), mean(\.portrait), mean(\.visualZone), mean(\.total)))
        }
        let first = items.first { $0.set == "specimens" }?.file ?? items[0].file
        try processFigures(first: first, onePage: o["page"] ?? items.first { $0.file.hasSuffix("specimens/100_pass-uto.jpg") }?.file ?? first,
                           count: processes, passportEye: o["passporteye"] != nil)
        return 0
    }
}

/// Keeps memory the reader frees in the heap for its next buffers, for this short-lived command.
/// One page read allocates and frees image-sized buffers (the page and its grey copy, the rectified
/// zones, the face detector's HOG pyramid levels: 0.1–2 MB each) dozens of times; with glibc's
/// defaults each one above 128 KB (the dynamic threshold grows only as such blocks are freed) gets
/// its own `mmap` and goes back to the system on `free`, so its pages fault in again on every reuse.
/// Here blocks are mapped on their own only above 64 MB and the heap is trimmed only above 128 MB
/// free (`mallopt`, M_MMAP_THRESHOLD / M_TRIM_THRESHOLD): one generated TD3 page took ~12,300 page
/// faults instead of ~16,500 and ~4 % less CPU, for ~11 MB more peak memory
/// (bench/DOCUMENT-BENCH.md, session 13). `idvd serve` keeps glibc's defaults.
/// `mallopt` is declared in <malloc.h>, which Swift's Glibc module does not import: it is looked
/// up by name (glibc's own, the parameters' values from that header); elsewhere nothing is done.
func keepFreedBuffersForReuse() {
    #if canImport(Glibc)
    typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }  // RTLD_DEFAULT
    let mallopt = unsafeBitCast(symbol, to: MallOpt.self)
    let (mmapThreshold, trimThreshold): (Int32, Int32) = (-3, -1)  // M_MMAP_THRESHOLD, M_TRIM_THRESHOLD
    _ = mallopt(mmapThreshold, 64 << 20)
    _ = mallopt(trimThreshold, 128 << 20)
    #endif
}
