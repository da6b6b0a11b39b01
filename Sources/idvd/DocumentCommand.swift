import DocumentReader
import Foundation

extension Command {
    static let document = Command(name: "document", summary: "read passport/ID page images: MRZ, fields, portrait, checks (JSON)") { args in
        let usage = """
        usage: idvd document read IMAGE [IMAGE2] [--shape internal|seed002|seed003] [--images] [--no-portrait]
               idvd document read --jsonl IMAGE…          one compact report line per image (corpora)
          IMAGE is a JPEG or PNG photo or scan of a passport page or ID card side, any orientation.
          Prints the internal report (mrz.lines as read, mrz.valid, fields, checks_performed, errors,
          warnings, overall_status); --shape seed002 / seed003 prints the seed payloads instead
          (with Base64 images). --images adds Base64 images to the internal report.
          --debug-strips DIR writes the rectified MRZ of each image to DIR.
          Exit code 0 when a report was produced (whatever its verdict), 2 on usage errors.
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
        let documents: [[String]] = jsonl ? pos.map { [$0] } : [pos]
        for files in documents {
            var pages: [Data] = []
            for f in files {
                guard let d = FileManager.default.contents(atPath: f) else { throw CLIError("cannot read \(f)") }
                pages.append(d)
            }
            let report = DocumentReader.read(pages: pages, options: options)
            if let dir = o["debug-strips"] {
                for f in files {
                    if let img = try? DocumentImage.decode(path: f), let r = MRZReader.read(img.grey) {
                        let name = (f as NSString).lastPathComponent
                        try Raster.encodePNG(r.rectified(from: img.grey)).write(to: URL(fileURLWithPath: dir + "/" + name + ".mrz.png"))
                    }
                }
            }
            switch shape {
            case "seed002": try CLI.printJSON(report.seed002, compact: jsonl)
            case "seed003": try CLI.printJSON(report.seed003, compact: jsonl)
            default:
                if jsonl {
                    struct Line: Encodable { let file: String; let report: DocumentReportJSON }
                    try CLI.printJSON(Line(file: files[0], report: DocumentReportJSON(report, includeImages: o["images"] != nil)), compact: true)
                } else {
                    try CLI.printJSON(DocumentReportJSON(report, includeImages: o["images"] != nil))
                }
            }
        }
        return 0
    }
}
