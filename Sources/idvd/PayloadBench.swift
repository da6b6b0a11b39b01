import Foundation
import IDVCore
import Imaging

extension Benchmark {
    /// `idvd bench payload [--image-kb N] [--iterations N]`: encode and decode a `DocumentDetails`
    /// payload (seed 002 §6.1) carrying a portrait and two page images of N KiB of base64 each,
    /// through IDVCore's `toJSONString()` / `init(jsonString:)`, and, for comparison, Foundation's
    /// plain `JSONDecoder` (which lacks field-naming errors). Prints payload size, median seconds per
    /// operation and MB/s as JSON.
    static let payload = Benchmark(name: "payload", summary: "IDVCore payload JSON encode/decode (DocumentDetails with images)", options: "[--image-kb N] [--iterations N]") { args in
        let (options, _) = try CLI.parseOptions(args, valued: ["image-kb", "iterations"], takesArguments: false, command: "bench payload")
        guard let imageKB = Int(options["image-kb"] ?? "1024"), (1...65_536).contains(imageKB) else {
            throw CLIError("--image-kb must be an integer in 1...65536")
        }
        guard let iterations = Int(options["iterations"] ?? "20"), (1...10_000).contains(iterations) else {
            throw CLIError("--iterations must be an integer in 1...10000")
        }
        // Synthetic base64 (valid alphabet, includes "/" and "+"), no personal data.
        let image = String(repeating: "AB+/", count: imageKB * 256)
        let details = DocumentDetails(responseData: DocumentDetailsResponse(
            documentInfo: DocumentInfo(surname: "ERIKSSON", givenName: "ANNA MARIA", dateOfBirth: "1974-08-12",
                                       documentNumber: "L898902C3", expiryDate: "2032-04-15", issuingCountry: "UTO",
                                       documentType: .passport, portraitImage: image),
            documentPages: [DocumentPage(pageIndex: 0, image: image), DocumentPage(pageIndex: 1, image: image)],
            checksPerformed: [DocumentCheck(checkName: "MRZ Check Digits", result: .passed, category: "MRZ")],
            errors: [], warnings: [], overallStatus: .valid))
        let text = try details.toJSONString()
        let data = Data(text.utf8)
        func median(_ body: () throws -> Void) rethrows -> Double {
            var times: [Double] = []
            for _ in 0..<iterations { times.append(try Command.measure(body)) }
            return times.sorted()[times.count / 2]
        }
        let encode = try median { _ = try details.toJSONString() }
        let decode = try median { _ = try DocumentDetails(jsonString: text) }
        let plain = try median { _ = try JSONDecoder().decode(DocumentDetails.self, from: data) }
        let megabytes = Double(data.count) / 1_000_000
        struct Figures: Encodable {
            let payload_bytes: Int, iterations: Int
            let encode_s: Double, decode_s: Double, foundation_decode_s: Double
            let encode_mb_per_s: Double, decode_mb_per_s: Double, foundation_decode_mb_per_s: Double
        }
        try CLI.printJSON(Figures(payload_bytes: data.count, iterations: iterations,
                                  encode_s: encode, decode_s: decode, foundation_decode_s: plain,
                                  encode_mb_per_s: megabytes / encode, decode_mb_per_s: megabytes / decode,
                                  foundation_decode_mb_per_s: megabytes / plain))
        return 0
    }
}
