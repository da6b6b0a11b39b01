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
import Synchronization

extension Benchmark {
    /// `idvd bench server`: starts `idvd serve` as a separate process on loopback and drives it
    /// from this process (our own keep-alive load generator; also `wrk` for the light endpoint when
    /// installed). Prints requests/s and p50/p99 latency for `GET /healthz` and for a full password
    /// login (POST /v1/sessions → getUser → getPassword(VERIFY) → onUserLoggedIn).
    static let server = Benchmark(name: "server", summary: "HTTP server: req/s and p50/p99 for /healthz and a full password login", options: "[--seconds S] [--connections N] [--threads N] [--light-argon2] [--no-wrk] [--server PATH]\n--heavy [--uploaders N] [--frames N] [--seconds S] [--light N] [--server PATH]") { args in
        let (opts, _) = try CLI.parseOptions(args, flags: ["light-argon2", "no-wrk", "heavy"],
                                             valued: ["seconds", "connections", "threads", "server", "uploaders", "frames", "light"], takesArguments: false, command: "bench server")
        // `--heavy`: heavy uploads beside light traffic (ServerHeavyBench.swift).
        if opts["heavy"] != nil { return try heavyBeside(light: opts) }
        let seconds = Double(opts["seconds"] ?? "5") ?? 5
        let connections = Int(opts["connections"] ?? "8") ?? 8
        let threads = opts["threads"] ?? "4"
        let light = opts["light-argon2"] != nil

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("bench.sqlite").path
        var settings = ["http.threads": threads, "log.requests": "true", "password.attempts": "1000000",
                        "limits.sessions_per_client": "0", "limits.sessions_per_device": "0",
                        "limits.devices_per_client": "0",
                        // The key file in the bench's own folder (removed with it), not in ~/.local/state.
                        "templates.key_file": dir.appendingPathComponent("templates.key").path]
        if light { settings["argon2.opslimit"] = "1"; settings["argon2.memlimit_kib"] = "8" }

        var config = try ServerConfig.load(file: nil, overrides: settings.merging(["db.path": db]) { a, _ in a })
        config.engine.activationCodeAttempts = 5
        // Users created offline, then the server as another process (`--server PATH` serves with
        // another idvd build: an A/B comparison on the same load).
        let (server, port, codes) = try Self.startBenchServer(db: db, config: config, settings: settings,
                                                              users: (0..<connections).map { "bench\($0)" }, executable: opts["server"])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let password = "bench password 1"

        // Activate every user over HTTP (not timed).
        for (id, code) in codes {
            let c = LoopbackHTTPClient(port: port)
            let t = try Self.loginSteps(c, user: id, answers: [["activation_code": .string(code)], ["password": .string(password)]])
            guard t.ok else { throw CLIError("activation of \(id) failed") }
        }

        print("idvd bench server — loopback, server: \(threads) libmicrohttpd threads (epoll)\(opts["server"].map { " (\($0))" } ?? ""), client: \(connections) keep-alive connections")
        print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores; argon2id: " + (light ? "light (opslimit 1, 8 KiB)" : "production (opslimit 3, 64 MiB)"))

        // Context: one Argon2id verification alone, in this process, single thread.
        let hash = try Crypto.hashPassword(password, parameters: config.engine.argon2)
        var t = [Double]()
        for _ in 0..<3 { t.append(Command.measure { _ = Crypto.verifyPassword(password, hash: hash) } * 1000) }
        print("argon2id verify alone (1 thread): " + String(format: "%.1f", t.sorted()[1]) + " ms median of 3")

        // 1. Light endpoint.
        let health = Self.drive(connections: connections, seconds: seconds, port: port) { c in
            let r = try c.request("GET", "/healthz")
            return r.status == 200
        }
        Self.report("GET /healthz (own generator)", health, seconds: seconds, unit: "req")

        if opts["no-wrk"] == nil, let wrk = ["/usr/bin/wrk", "/usr/local/bin/wrk"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: wrk)
            p.arguments = ["-t2", "-c\(connections)", "-d\(Int(seconds))s", "--latency", "http://127.0.0.1:\(port)/healthz"]
            let o = Pipe()
            p.standardOutput = o
            try p.run()
            let text = String(decoding: o.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            let keep = text.split(separator: "\n").filter { $0.contains("Requests/sec") || $0.contains(" 50%") || $0.contains(" 99%") }
            print("GET /healthz (wrk -t2 -c\(connections)): " + keep.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "; "))
        }

        // 2. Full password login: 3 requests per login, each user on its own connection.
        let counter = Counter()
        let users = codes.map(\.0)
        let loginStats = Self.drive(connections: connections, seconds: seconds, port: port) { c in
            let i = counter.next() % users.count
            return try Self.loginSteps(c, user: users[i], answers: [["password": .string(password)]]).ok
        }
        Self.report("full password login (3 requests)", loginStats, seconds: seconds, unit: "login")

        // 3. A health probe's latency while every connection logs in: what a load balancer sees
        //    when the workers are busy hashing (quick routes stay on the libmicrohttpd threads).
        final class ProbeBox: @unchecked Sendable { var stats = Stats() }   // @unchecked: written by the probing thread, read after it finished
        let probe = ProbeBox()
        let probing = Thread {
            // ~100 probes/s: a probe rather than a load
            probe.stats = Self.drive(connections: 1, seconds: seconds, port: port, pauseMicroseconds: 10_000) { c in
                try c.request("GET", "/healthz").status == 200
            }
        }
        probing.start()
        let busy = Self.drive(connections: connections, seconds: seconds, port: port) { c in
            let i = counter.next() % users.count
            return try Self.loginSteps(c, user: users[i], answers: [["password": .string(password)]]).ok
        }
        while !probing.isFinished { usleep(10_000) }
        Self.report("GET /healthz (1 connection, 10 ms apart) during the logins", probe.stats, seconds: seconds, unit: "req")
        Self.report("  the logins meanwhile", busy, seconds: seconds, unit: "login")
        return 0
    }

    /// A counter several connection threads draw from (1, 2, 3, …).
    final class Counter: Sendable {
        private let n = Atomic<Int>(0)
        func next() -> Int { n.add(1, ordering: .relaxed).newValue }
    }

    /// POST /v1/sessions, answer getUser, then each of `answers` in turn; ok when it ends in onUserLoggedIn.
    /// The benches' server: `users` created offline in a new SQLite file at `db` (no IDV, so each
    /// activates with its code alone), then `idvd serve` on a free loopback port as another process
    /// (`executable`: this binary, or `--server PATH` for an A/B run against another build) with
    /// `settings`. Returns the process, its port (from the ready line) and each user's activation code.
    /// The caller stops it (`SIGTERM`, then waits).
    static func startBenchServer(db: String, config: ServerConfig, settings: [String: String], users: [String],
                                 executable: String?) throws -> (server: Process, port: Int, codes: [(String, String)]) {
        var codes: [(String, String)] = []
        do {
            let store = try config.openStore()
            let admin = Admin(store: store, config: config, crypto: Sodium())
            for id in users { codes.append((id, try admin.createUser(id, activationRequiresIDV: false).activationCode)) }
            store.close()
        }
        let server = Process()
        server.executableURL = URL(fileURLWithPath: executable ?? CommandLine.arguments[0]).resolvingSymlinksInPath()
        var sargs = ["serve", "--db", db, "--port", "0"]
        for (k, v) in settings.sorted(by: { $0.key < $1.key }) { sargs += ["--set", "\(k)=\(v)"] }
        server.arguments = sargs
        let out = Pipe()
        server.standardOutput = out
        server.standardError = FileHandle.nullDevice
        try server.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                kill(server.processIdentifier, SIGTERM); server.waitUntilExit()
                throw CLIError("idvd serve did not start")
            }
            line += chunk
        }
        let ready = try JSONDecoder().decode(JSONValue.self, from: line.prefix(while: { $0 != 0x0A }))
        guard let port = ready["port"]?.intValue else {
            kill(server.processIdentifier, SIGTERM); server.waitUntilExit()
            throw CLIError("no port on the ready line")
        }
        return (server, port, codes)
    }

    static func loginSteps(_ c: LoopbackHTTPClient, user: String, answers: [JSONValue]) throws -> (ok: Bool, requests: Int) {
        let dec = JSONDecoder(), enc = JSONEncoder()
        var env = try dec.decode(WireEnvelope.self, from: c.json("POST", "/v1/sessions", Data("{}".utf8)).body)
        guard let token = env.session?.token else { return (false, 1) }
        var requests = 1
        for payload in [["user_id": .string(user)] as JSONValue] + answers {
            guard let ch = env.challenge else { return (false, requests) }
            env = try dec.decode(WireEnvelope.self, from: c.json("POST", "/v1/session/answer", enc.encode(WireAnswer(to: ch, payload: payload)), bearer: token).body)
            requests += 1
        }
        return (env.event?.name == WireName.onUserLoggedIn, requests)
    }

    struct Stats { var latencies: [Double] = []; var failures = 0; var note = "" }

    /// Runs `op` in a loop on `connections` threads — one `Thread` and one keep-alive connection
    /// each, all running at once — for `seconds`; collects per-op latency. (`concurrentPerform` would
    /// run only as many at a time as there are cores, so 8 "connections" were 2 on this machine.)
    /// `pauseMicroseconds` between operations is not timed.
    static func drive(connections: Int, seconds: Double, port: Int, pauseMicroseconds: UInt32 = 0,
                      _ op: @escaping @Sendable (LoopbackHTTPClient) throws -> Bool) -> Stats {
        final class Box: @unchecked Sendable { var stats = [Stats](); let lock = NSLock() }   // @unchecked: `stats` only under `lock`
        let box = Box()
        let done = DispatchGroup()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        for _ in 0..<connections {
            done.enter()
            Thread {
                let c = LoopbackHTTPClient(port: port)
                var s = Stats()
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    let ok = (try? op(c)) ?? false
                    if ok { s.latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6) } else { s.failures += 1 }
                }
                box.lock.withLock { box.stats.append(s) }
                done.leave()
            }.start()
        }
        done.wait()
        return Stats(latencies: box.stats.flatMap(\.latencies), failures: box.stats.map(\.failures).reduce(0, +))
    }

    static func report(_ name: String, _ s: Stats, seconds: Double, unit: String) {
        let sorted = s.latencies.sorted()
        func pct(_ p: Double) -> Double { sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        let rate = Double(sorted.count) / seconds
        print("\(name): " + String(format: "%.0f", rate) + " \(unit)/s, p50 " + String(format: "%.2f", pct(0.50))
              + " ms, p99 " + String(format: "%.2f", pct(0.99)) + " ms (\(sorted.count) ok, \(s.failures) failed, \(Int(seconds)) s)")
    }
}
