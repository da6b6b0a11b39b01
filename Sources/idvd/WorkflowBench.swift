import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVHTTP
import IDVReaders
import IDVStoreSQLite
import IDVTools

extension Benchmark {
    /// `idvd bench workflow [--frames DIR] [--iterations N]`: the IDV flows' capture steps end to
    /// end over loopback HTTP on an in-process server with the production analysers: the opt-in
    /// selfie step (frames upload → `onIDVOptInCapturedFrameConfirmation`) once, then N server
    /// biometric selfie steps (frames upload → `onIDVServerBiometricAuthenticationResult`), and the
    /// document step when this build has a document reader. Prints seconds (median/min/max) as JSON.
    /// Frames: a directory of JPEG frames (default `Tests/Fixtures/selfie/katie_live`, SadTalker).
    /// Document: `--document FILE` (a page photo, e.g. `idvd specimen --seed 9 --jpeg 90`); N
    /// additional-document-scan steps (pages upload → `onIDVAdditionalDocumentScan`).
    static let workflow = Benchmark(name: "workflow", summary: "IDV flow steps over HTTP: selfie step (liveness + match) and document step", options: "[--frames DIR] [--iterations N] [--document FILE]") { args in
        let (o, _) = try CLI.parseOptions(args, valued: ["frames", "iterations", "document"], takesArguments: false, command: "bench workflow")
        let dir = o["frames"] ?? "Tests/Fixtures/selfie/katie_live"
        guard let n = Int(o["iterations"] ?? "5"), (1...1000).contains(n) else { throw CLIError("--iterations must be in 1...1000") }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }.sorted()
        guard !names.isEmpty else { throw CLIError("no JPEG/PNG frames in \(dir) (--frames DIR)") }
        let frames = try names.map { try Data(contentsOf: URL(fileURLWithPath: dir).appendingPathComponent($0)) }
        let page = try o["document"].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }

        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-bench-wf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        let config = try ServerConfig.load(file: nil, environment: [:], overrides: [
            "db.path": tmp.appendingPathComponent("b.sqlite").path, "listen.port": "0", "log.requests": "false",
            "argon2.opslimit": "1", "argon2.memlimit_kib": "8", "idv.biometric_attempts": "100",
            "idv.doc.accept_specimen_documents": "true",                               // the bench's pages are specimens
            "templates.key_file": tmp.appendingPathComponent("templates.key").path,   // not in ~/.local/state
        ])
        let store = try config.openStore()
        let services = IDVServices.production(vault: try config.openVault(), policy: config.engine.workflow)
        guard services.selfies != nil else { throw CLIError("the selfie analyser is unavailable (dlib models missing?)") }
        let app = IDVServerApp(config: config, store: store, registry: .idv(services), crypto: Sodium())
        let port = try app.start()
        defer { app.stop() }

        let http = LoopbackHTTPClient(port: port)
        var token: String?
        var current: WireChallenge?
        func send(_ path: String, _ body: Data) throws -> WireEnvelope {
            let r = try http.json("POST", path, body, bearer: token)
            let env = try JSONDecoder().decode(WireEnvelope.self, from: r.body)
            if let e = env.error, e.longErrorCode != 0 { throw CLIError("refused \(e.longErrorCode): \(e.errorString)") }
            if let t = env.session?.token { token = t }
            current = env.challenge
            return env
        }
        func answer(_ payload: JSONValue, upload: Bool = false) throws -> WireEnvelope {
            guard let ch = current else { throw CLIError("no challenge to answer") }
            return try send(upload ? "/v1/session/upload" : "/v1/session/answer", JSONEncoder().encode(WireAnswer(to: ch, payload: payload)))
        }
        let framesPayload: JSONValue = ["frames": .array(frames.map { .string($0.base64EncodedString()) })]
        let issued = try Admin(store: store, config: config, crypto: Sodium()).createUser("bench", activationRequiresIDV: false)
        _ = try send("/v1/sessions", JSONEncoder().encode(WireSessionStart()))
        _ = try answer(["user_id": "bench"])
        _ = try answer(["activation_code": .string(issued.activationCode)])
        _ = try answer(["password": "bench password 1"])
        _ = try send("/v1/flows/idv.postlogin.optin", JSONEncoder().encode(WireFlowStart()))
        _ = try answer(["password": "bench password 1"])
        _ = try answer(["is_confirm": true])
        var optin: WireEnvelope?
        let optinSeconds = try Command.measure { optin = try answer(framesPayload, upload: true) }
        guard optin?.challenge?.name == WireName.onIDVOptInCapturedFrameConfirmation else {
            throw CLIError("the frames were not accepted as a live capture (\(optin?.challenge?.status?.statusMessage ?? "?"))")
        }
        _ = try answer(["status": 0])
        var times: [Double] = []
        var verdicts: [String: Int] = [:]
        for _ in 0..<n {
            _ = try send("/v1/flows/idv.postlogin.server_biometric", JSONEncoder().encode(WireFlowStart(payload: ["reason": "bench"])))
            _ = try answer(["is_confirm": true])
            var env: WireEnvelope?
            times.append(try Command.measure { env = try answer(framesPayload, upload: true) })
            let v = env?.event?.payload["biometric_result"]?["display_text"]?.stringValue ?? "none"
            verdicts[v, default: 0] += 1
        }
        var docTimes: [Double] = []
        var docStatuses: [String: Int] = [:]
        if let page {
            for _ in 0..<n {
                _ = try send("/v1/flows/idv.postlogin.document_scan", JSONEncoder().encode(WireFlowStart(payload: ["reason": "bench"])))
                _ = try answer(["is_confirm": true])
                var env: WireEnvelope?
                docTimes.append(try Command.measure { env = try answer(["pages": [["page_index": 0, "image": .string(page.base64EncodedString())]]], upload: true) })
                let st = env?.event?.payload["document_status"]?["overall_document_status"]?.stringValue
                    ?? env?.challenge.map { "retry \($0.error?.longErrorCode ?? 0)" } ?? "none"
                docStatuses[st, default: 0] += 1
                if env?.challenge != nil { _ = try answer(["cancel": true], upload: true) }
            }
        }
        let sorted = times.sorted()
        let docSorted = docTimes.sorted()
        struct Figures: Encodable {
            let frames: Int, upload_bytes: Int, iterations: Int
            let optin_selfie_step_s: Double
            let biometric_selfie_step_median_s: Double, biometric_selfie_step_min_s: Double, biometric_selfie_step_max_s: Double
            let verdicts: [String: Int]
            let document_step_median_s: Double?, document_step_min_s: Double?, document_step_max_s: Double?
            let document_statuses: [String: Int]
        }
        try CLI.printJSON(Figures(frames: frames.count, upload_bytes: frames.reduce(0) { $0 + $1.count } * 4 / 3, iterations: n,
                                  optin_selfie_step_s: optinSeconds, biometric_selfie_step_median_s: sorted[sorted.count / 2],
                                  biometric_selfie_step_min_s: sorted[0], biometric_selfie_step_max_s: sorted[sorted.count - 1],
                                  verdicts: verdicts,
                                  document_step_median_s: docSorted.isEmpty ? nil : docSorted[docSorted.count / 2],
                                  document_step_min_s: docSorted.first, document_step_max_s: docSorted.last, document_statuses: docStatuses))
        return 0
    }
}
