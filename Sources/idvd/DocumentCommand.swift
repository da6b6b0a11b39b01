import DocumentReader
import Foundation

extension Command {
    static let document = Command(name: "document", summary: "read a passport/ID page image: MRZ, fields, checks (JSON)") { args in
        let usage = """
        usage: idvd document read IMAGE [IMAGE2]      the MRZ reading of the page image(s) as JSON
               idvd document read --jsonl IMAGE…      one compact JSON line per image (corpora)
        """
        guard args.first == "read" else { print(usage); return args.isEmpty || args.first == "--help" ? 0 : 2 }
        let (o, pos) = try CLI.parseOptions(Array(args.dropFirst()), flags: ["jsonl"])
        guard !pos.isEmpty else { throw CLIError("no image given\n" + usage) }
        struct Out: Encodable {
            let file: String; let found: Bool; let lines: [String]; let mean_confidence: Double
            let angle_degrees: Double; let error: String?
        }
        let jsonl = o["jsonl"] != nil
        for path in pos {
            do {
                let img = try DocumentImage.decode(path: path)
                let r = MRZReader.read(img.grey)
                if let dir = o["debug-strips"], let r {
                    let name = (path as NSString).lastPathComponent
                    try Raster.encodePNG(r.rectified(from: img.grey)).write(to: URL(fileURLWithPath: dir + "/" + name + ".mrz.png"))
                }
                try CLI.printJSON(Out(file: path, found: r != nil, lines: r?.lines ?? [], mean_confidence: r?.meanConfidence ?? 0,
                                      angle_degrees: r?.angleDegrees ?? 0, error: nil), compact: jsonl)
            } catch {
                try CLI.printJSON(Out(file: path, found: false, lines: [], mean_confidence: 0, angle_degrees: 0, error: "\(error)"), compact: jsonl)
            }
        }
        return 0
    }
}
