import Foundation
#if canImport(Glibc)
import Glibc
#endif
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVStoreSQLite
import IDVWebhooks

extension Benchmark {
    static let webhooks = Benchmark(name: "webhooks", summary: "webhook outbox (SQLite): enqueue cost in a write transaction, drain rate and event-to-receipt latency to a loopback receiver", options: "[--events N] [--batch N] [--poll-ms MS]") { args in
        let (opts, _) = try CLI.parseOptions(args, valued: ["events", "batch", "poll-ms"], takesArguments: false, command: "bench webhooks")
        guard let n = Int(opts["events"] ?? "2000"), n >= 1 else { throw CLIError("--events must be a positive number") }
        guard let batch = Int(opts["batch"] ?? "16"), batch >= 1 else { throw CLIError("--batch must be a positive number") }
        guard let pollMs = Int(opts["poll-ms"] ?? "20"), pollMs >= 1 else { throw CLIError("--poll-ms must be a positive number") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-bench-webhooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let keyFile = dir.appendingPathComponent("templates.key").path
        let vault = try TemplateVault.create(keyFile: keyFile)
        let store = try SQLiteStore(path: dir.appendingPathComponent("hooks.sqlite").path, keyFile: keyFile)
        defer { store.close() }
        let sink = try BenchSink()
        defer { sink.stop() }
        var config = ServerConfig()
        config.webhooks.batch = batch
        config.webhooks.pollMilliseconds = pollMs
        _ = try Admin(store: store, config: config, crypto: Sodium()).addWebhook(url: "http://127.0.0.1:\(sink.port)/hook", events: [], vault: vault)
        print("idvd bench webhooks — \(n) events, one endpoint on loopback, batch \(batch), poll \(pollMs) ms; SQLite; machine: \(ProcessInfo.processInfo.activeProcessorCount) cores (shared)")
        let body = Data(#"{"created_at":0,"data":{"flow":"idv.postlogin.kyc","idv_workflow":6,"outcome":"completed","run_id":"0123456789abcdef0123456789abcdef","success":true},"id":"x","type":"verification.decided","user_id":"bench"}"#.utf8)
        func enqueue(_ i: Int) throws -> String {
            let id = String(format: "%08x-0000-4000-8000-%012x", i, i)
            _ = try store.withTransaction {
                try store.enqueueWebhookEvent(WebhookEventRecord(eventID: id, type: .verificationDecided, createdAt: Int(Date().timeIntervalSince1970),
                                                                 userID: "bench", runID: nil, body: body))
            }
            return id
        }
        // 1. What an answer's transaction pays for its event: one event row and one delivery row.
        let t1 = try Command.measure { for i in 0..<n { _ = try enqueue(i) } }
        print(String(format: "enqueue: %d events in %.2f s — %.0f events/s, %.0f µs per event (one transaction each; SQLite WAL, synchronous=NORMAL)",
                     n, t1, Double(n) / t1, t1 / Double(n) * 1e6))
        // The marginal cost inside a transaction that is open anyway (as an answer's is): all in one.
        let t1b = try Command.measure {
            _ = try store.withTransaction {
                for i in 0..<n {
                    try store.enqueueWebhookEvent(WebhookEventRecord(eventID: "m-\(i)", type: .verificationDecided, createdAt: 0, userID: nil, runID: nil, body: body))
                }
            }
        }
        print(String(format: "enqueue inside an open transaction: %.0f µs per event (the marginal cost an answer's transaction pays)", t1b / Double(n) * 1e6))
        // 2. Drain: the worker delivers the backlog.
        let deliverer = WebhookDeliverer(store: store, vault: vault, settings: config.webhooks)
        let t2 = Command.measure {
            deliverer.start()
            while sink.count < 2 * n { usleep(2_000) }
        }
        print(String(format: "drain: %d deliveries in %.2f s — %.0f deliveries/s (signed, URLSession, up to %d concurrent per batch)", 2 * n, t2, Double(2 * n) / t2, batch))
        // 3. Latency: events one at a time while the worker runs (bounded below by the poll interval).
        let m = min(n, 200)
        var sent: [String: Double] = [:]
        for i in 0..<m {
            let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
            sent[try enqueue(2 * n + i)] = now
            usleep(5_000)
        }
        while sink.count < 2 * n + m { usleep(2_000) }
        deliverer.stop()
        let arrivals = sink.arrivals
        let latencies = sent.compactMap { id, t in arrivals[id].map { ($0 - t) * 1000 } }.sorted()
        func pct(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        print(String(format: "latency (commit → receiver, %d events 5 ms apart): p50 %.1f ms, p95 %.1f ms, max %.1f ms (poll %d ms)",
                     latencies.count, pct(0.5), pct(0.95), latencies.last ?? 0, pollMs))
        let dup = sink.count - Set(arrivals.keys).count
        print("outbox depth after: \(try store.webhookOutboxDepth()); duplicates received: \(dup)")
        return 0
    }
}

/// A minimal HTTP sink on loopback for the benchmark: reads each request, answers 204, records the
/// arrival time of each `IDV-Event-Id`.
final class BenchSink: @unchecked Sendable {
    // @unchecked: `times` and `received` only under `lock`; `fd` is set in init and closed by
    // `stop()` on the thread that owns the sink (the accept thread only reads it).
    private let lock = NSLock()
    private var times: [String: Double] = [:]
    private var received = 0
    private var fd: Int32 = -1
    let port: Int

    init() throws {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard s >= 0, rc == 0, listen(s, 128) == 0 else { throw CLIError("cannot listen on loopback") }
        var bound = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) } }
        port = Int(UInt16(bigEndian: bound.sin_port))
        fd = s
        Thread { [self] in
            while true {
                let c = accept(s, nil, nil)
                if c < 0 { return }
                Thread { [self] in serve(c) }.start()
            }
        }.start()
    }

    var count: Int { lock.withLock { received } }
    var arrivals: [String: Double] { lock.withLock { times } }

    func stop() { if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)); Glibc.close(fd); fd = -1 } }

    /// Keep-alive: answers every request on the connection until the client closes it.
    private func serve(_ c: Int32) {
        defer { Glibc.close(c) }
        var buf = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            // One request: headers, then Content-Length bytes.
            var end: Int?
            while end == nil {
                if let r = Self.headerEnd(buf) { end = r; break }
                let n = read(c, &chunk, chunk.count)
                if n <= 0 { return }
                buf += chunk[0..<n]
            }
            let head = String(decoding: buf[0..<end!], as: UTF8.self).lowercased()
            var length = 0, id = ""
            for line in head.split(separator: "\r\n") {
                if line.hasPrefix("content-length:") { length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0 }
                if line.hasPrefix("idv-event-id:") { id = line.dropFirst(13).trimmingCharacters(in: .whitespaces) }
            }
            while buf.count < end! + 4 + length {
                let n = read(c, &chunk, chunk.count)
                if n <= 0 { return }
                buf += chunk[0..<n]
            }
            buf.removeFirst(end! + 4 + length)
            let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
            lock.withLock { received += 1; if times[id] == nil { times[id] = now } }
            let reply = Array("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n".utf8)
            _ = reply.withUnsafeBytes { write(c, $0.baseAddress, $0.count) }
        }
    }

    private static func headerEnd(_ b: [UInt8]) -> Int? {
        guard b.count >= 4 else { return nil }
        for i in 0...(b.count - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 { return i }
        return nil
    }
}
