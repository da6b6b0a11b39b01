import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVStorePostgres
import IDVStoreSQLite
import IDVTools

/// A PostgreSQL server for a benchmark: `--db` / `IDVD_DB` when it names one (password from the
/// environment as for `idvd serve`), else a throw-away cluster from `scripts/pg-scratch start
/// --durable` of the checkout (stopped at the end), else none.
final class BenchPostgres {
    let url: String
    let password: String?
    private let scratchDir: String?
    private let script: String?
    let asyncCommit: Bool
    var scratchDescription: String {
        asyncCommit ? "a throw-away cluster (scripts/pg-scratch --async-commit: fsync on, synchronous_commit off, as SQLite WAL + synchronous=NORMAL)"
                    : "a throw-away cluster (scripts/pg-scratch --durable: PostgreSQL's defaults, fsync and synchronous_commit on)"
    }

    /// `asyncCommit`: the throw-away cluster runs with `synchronous_commit=off` (fsync on) — SQLite
    /// WAL + `synchronous=NORMAL`'s durability — instead of PostgreSQL's defaults.
    init?(explicit: String?, asyncCommit: Bool = false) throws {
        if let u = explicit ?? ProcessInfo.processInfo.environment["IDVD_DB"], DatabaseLocation(u).isPostgres {
            var config = ServerConfig()
            config.db.passwordFile = ProcessInfo.processInfo.environment["IDVD_DB_PASSWORD_FILE"] ?? ""
            url = u
            password = try config.databasePassword()
            scratchDir = nil
            script = nil
            self.asyncCommit = false
            return
        }
        let candidates = [FileManager.default.currentDirectoryPath + "/scripts/pg-scratch",
                          URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
                              .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                              .appendingPathComponent("scripts/pg-scratch").path]
        guard let s = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: s)
        p.arguments = ["start", asyncCommit ? "--async-commit" : "--durable", "--owner", String(getpid())]
        self.asyncCommit = asyncCommit
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.standardError
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { return nil }
        var v: [String: String] = [:]
        for line in text.split(separator: "\n") { if let eq = line.firstIndex(of: "=") { v[String(line[..<eq])] = String(line[line.index(after: eq)...]) } }
        guard let u = v["PG_SCRATCH_URL"], let d = v["PG_SCRATCH_DIR"], let f = v["PG_SCRATCH_PASSWORD_FILE"] else { return nil }
        url = u
        password = (try? String(contentsOfFile: f, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        scratchDir = d
        script = s
    }

    var settings: PostgresConnectionSettings { PostgresConnectionSettings(url: url, password: password) }
    var isScratch: Bool { scratchDir != nil }

    /// A fresh database for one run; returns its URL.
    func freshDatabase() throws -> (url: String, name: String) {
        let name = "idvd_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12)
        return (try PostgresServer.createDatabase(named: name, settings: settings), name)
    }

    func drop(_ name: String) { try? PostgresServer.dropDatabase(named: name, settings: settings) }

    func stop() {
        guard let scratchDir, let script else { return }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: script)
        p.arguments = ["stop", scratchDir]
        try? p.run()
        p.waitUntilExit()
    }
}

extension Benchmark {
    /// `idvd bench nodes`: the same load on 1 node on SQLite, 1 node on PostgreSQL and N nodes on one
    /// PostgreSQL (real `idvd serve` processes on loopback; the client's connections spread round-robin
    /// over the nodes, as a load balancer with keep-alive would). Prints requests/s and p50/p99 of a
    /// light request (`GET /healthz`, one store read; `GET /v1/session`, authenticate + unseal the
    /// session) and of a full password login (3 requests, each a write transaction), with the p99 of
    /// the password answer alone under that load. Argon2id is light by default so the store, not
    /// hashing, is what is measured (`--argon2 production` for the CPU-bound case).
    static let nodes = Benchmark(name: "nodes", summary: "1 node on SQLite vs 1 and N nodes on one PostgreSQL: light-request and full-flow throughput, answer p99", options: "[--seconds S] [--connections N] [--nodes N] [--argon2 production] [--db URL] [--server PATH] [--async-commit] [--set key=value]...") { args in
        let (rest, extra) = try Command.splitSettings(args)
        let (opts, _) = try CLI.parseOptions(rest, flags: ["async-commit"], valued: ["seconds", "connections", "nodes", "argon2", "db", "server"],
                                             takesArguments: false, command: "bench nodes")
        let seconds = Double(opts["seconds"] ?? "5") ?? 5
        let connections = Int(opts["connections"] ?? "8") ?? 8
        let nodeCount = max(2, Int(opts["nodes"] ?? "2") ?? 2)
        let production = opts["argon2"] == "production"
        let pg = try BenchPostgres(explicit: opts["db"], asyncCommit: opts["async-commit"] != nil)
        defer { pg?.stop() }

        let cores = ProcessInfo.processInfo.activeProcessorCount
        print("idvd bench nodes — loopback; client: \(connections) keep-alive connections spread round-robin over the nodes; \(Int(seconds)) s per figure")
        if !extra.isEmpty { print("node settings: " + extra.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")) }
        print("machine: \(cores) cores shared by the client, every node and PostgreSQL; argon2id: " + (production ? "production (opslimit 3, 64 MiB)" : "light (opslimit 1, 8 KiB)"))
        if let pg { print("PostgreSQL: " + (pg.isScratch ? pg.scratchDescription : DatabaseLocation(pg.url).redacted) + "; a fresh database per configuration") }
        else { print("PostgreSQL: none (set --db / IDVD_DB to a postgresql:// URL, or run from a checkout with scripts/pg-scratch): SQLite only") }

        var configs: [(name: String, nodes: Int, postgres: Bool)] = [("1 node, SQLite", 1, false)]
        if pg != nil { configs += [("1 node, PostgreSQL", 1, true), ("\(nodeCount) nodes, PostgreSQL", nodeCount, true)] }
        var rows: [(String, [String: Stats])] = []
        for cfg in configs {
            let figures = try Self.runNodes(cfg.nodes, postgres: cfg.postgres ? pg : nil, seconds: seconds, connections: connections,
                                            production: production, executable: opts["server"], extra: extra)
            rows.append((cfg.name, figures))
            print("\n\(cfg.name):")
            for key in ["GET /healthz", "GET /v1/session", "full password login (3 requests)", "  its password answer"] {
                if let s = figures[key] { Self.report("  " + key, s, seconds: seconds, unit: key.hasPrefix("full") ? "login" : "req") }
            }
            for key in figures.keys.sorted() where key.hasSuffix(" store") { print("  " + (figures[key]?.note ?? "")) }
        }
        if rows.count == 3 {
            func rate(_ r: (String, [String: Stats]), _ k: String) -> Double { Double(r.1[k]?.latencies.count ?? 0) / seconds }
            print("\nratios (throughput relative to 1 node on SQLite):")
            for k in ["GET /healthz", "GET /v1/session", "full password login (3 requests)"] {
                let base = max(rate(rows[0], k), 1e-9)
                print("  \(k): " + rows.map { "\($0.0) " + String(format: "%.2f", rate($0, k) / base) }.joined(separator: ", "))
            }
        }
        return 0
    }

    /// Starts `n` nodes on a fresh store, activates one user per connection, drives the three loads.
    static func runNodes(_ n: Int, postgres: BenchPostgres?, seconds: Double, connections: Int, production: Bool,
                         executable: String?, extra: [String: String]) throws -> [String: Stats] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-bench-nodes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let keyFile = dir.appendingPathComponent("templates.key").path
        _ = try TemplateVault.create(keyFile: keyFile)
        // A node on PostgreSQL spends its threads' time waiting for database round trips: 8 libmicrohttpd
        // threads, 16 workers and 16 connections keep one node from being limited by its own threads
        // (with 4/4/8, one node gave a third of two nodes' throughput). The same for every configuration.
        var settings = ["http.threads": "8", "http.workers": "16", "db.pool_size": "16", "log.requests": "false", "password.attempts": "1000000", "documents.warm_up": "false",
                        "limits.sessions_per_client": "0", "limits.sessions_per_device": "0", "limits.auth_failures_per_client": "0",
                        "limits.devices_per_client": "0",
                        "templates.key_file": keyFile, "session.sweep_seconds": "0"]
        if !production { settings["argon2.opslimit"] = "1"; settings["argon2.memlimit_kib"] = "8" }
        settings.merge(extra) { _, new in new }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "IDVD_DB_PATH")
        var dropName: String?
        if let postgres {
            let fresh = try postgres.freshDatabase()
            dropName = fresh.name
            env["IDVD_DB"] = fresh.url
            if let pw = postgres.password { env["IDVD_DB_PASSWORD"] = pw }
        } else {
            env["IDVD_DB"] = dir.appendingPathComponent("bench.sqlite").path
        }
        defer { if let dropName { postgres?.drop(dropName) } }

        // Users, created by `idvd admin` before the nodes start (the schema with them).
        var codes: [(String, String)] = []
        let exe = URL(fileURLWithPath: executable ?? CommandLine.arguments[0]).resolvingSymlinksInPath()
        func run(_ a: [String]) throws -> Data {
            let p = Process()
            p.executableURL = exe
            p.arguments = a + settings.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.value)"] }
            p.environment = env
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.standardError
            try p.run()
            let d = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw CLIError("idvd \(a.joined(separator: " ")) failed") }
            return d
        }
        for i in 0..<connections {
            let j = try JSONDecoder().decode(JSONValue.self, from: run(["admin", "create-user", "bench\(i)", "--no-idv"]))
            codes.append(("bench\(i)", j["activation_code"]?.stringValue ?? ""))
        }

        var processes: [Process] = []
        var logs: [String] = []
        defer { for p in processes where p.isRunning { kill(p.processIdentifier, SIGTERM); p.waitUntilExit() } }
        var ports: [Int] = []
        for i in 0..<n {
            let p = Process()
            p.executableURL = exe
            p.arguments = ["serve", "--port", "0"] + settings.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.value)"] }
            p.environment = env
            let out = Pipe()
            p.standardOutput = out
            let log = dir.appendingPathComponent("node\(i).log").path
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            logs.append(log)
            try p.run()
            processes.append(p)
            var line = Data()
            while !line.contains(0x0A) {
                let chunk = out.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw CLIError("idvd serve did not start") }
                line += chunk
            }
            let ready = try JSONDecoder().decode(JSONValue.self, from: line.prefix(while: { $0 != 0x0A }))
            guard let port = ready["port"]?.intValue else { throw CLIError("no port on the ready line") }
            ports.append(port)
        }
        let password = "bench password 1"
        for (i, (id, code)) in codes.enumerated() {
            let c = LoopbackHTTPClient(port: ports[i % ports.count])
            guard try loginSteps(c, user: id, answers: [["activation_code": .string(code)], ["password": .string(password)]]).ok else {
                throw CLIError("activation of \(id) failed")
            }
        }
        // One logged-in token per connection for the session reads.
        var tokens: [String] = []
        for (i, (id, _)) in codes.enumerated() {
            let c = LoopbackHTTPClient(port: ports[i % ports.count])
            let dec = JSONDecoder(), enc = JSONEncoder()
            var env = try dec.decode(WireEnvelope.self, from: c.json("POST", "/v1/sessions", Data("{}".utf8)).body)
            var token = env.session?.token ?? ""
            for payload in [["user_id": .string(id)], ["password": .string(password)]] as [JSONValue] {
                guard let ch = env.challenge else { break }
                env = try dec.decode(WireEnvelope.self, from: c.json("POST", "/v1/session/answer", enc.encode(WireAnswer(to: ch, payload: payload)), bearer: token).body)
                if let t = env.session?.token { token = t }   // rotated at login
            }
            tokens.append(token)
        }

        let counter = Counter()
        var out: [String: Stats] = [:]
        out["GET /healthz"] = driveSpread(connections: connections, seconds: seconds, ports: ports) { c, _ in
            try c.request("GET", "/healthz").status == 200
        }
        let sessionTokens = tokens
        out["GET /v1/session"] = driveSpread(connections: connections, seconds: seconds, ports: ports) { c, i in
            try c.json("GET", "/v1/session", nil, bearer: sessionTokens[i]).status == 200
        }
        final class AnswerTimes: @unchecked Sendable { let lock = NSLock(); var ms: [Double] = [] }   // @unchecked: `ms` only under `lock`
        let answers = AnswerTimes()
        let users = codes.map(\.0)
        out["full password login (3 requests)"] = driveSpread(connections: connections, seconds: seconds, ports: ports) { c, _ in
            let i = counter.next() % users.count
            let dec = JSONDecoder(), enc = JSONEncoder()
            var env = try dec.decode(WireEnvelope.self, from: c.json("POST", "/v1/sessions", Data("{}".utf8)).body)
            guard let token = env.session?.token, let ch = env.challenge else { return false }
            env = try dec.decode(WireEnvelope.self, from: c.json("POST", "/v1/session/answer", enc.encode(WireAnswer(to: ch, payload: ["user_id": .string(users[i])])), bearer: token).body)
            guard let pw = env.challenge else { return false }
            let t0 = DispatchTime.now().uptimeNanoseconds
            env = try dec.decode(WireEnvelope.self, from: c.json("POST", "/v1/session/answer", enc.encode(WireAnswer(to: pw, payload: ["password": .string(password)])), bearer: token).body)
            let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
            answers.lock.withLock { answers.ms.append(ms) }
            return env.event?.name == WireName.onUserLoggedIn
        }
        out["  its password answer"] = Stats(latencies: answers.ms, failures: 0)
        // The nodes' own account of the store waits (PostgreSQL: the `store closed` log line).
        for p in processes { kill(p.processIdentifier, SIGTERM); p.waitUntilExit() }
        for (i, log) in logs.enumerated() {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").last(where: { $0.contains("\"store closed\"") }),
                  let j = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) else { continue }
            let txns = j["write_transactions"]?.intValue ?? 0
            let wait = j["write_lock_wait_seconds"]?.doubleValue ?? 0
            let conn = j["connection_wait_seconds"]?.doubleValue ?? 0
            out["node\(i) store"] = Stats(latencies: [], failures: 0, note: "node \(i): \(txns) write transactions, waited "
                + String(format: "%.2f", wait) + " s for the write lock (" + String(format: "%.2f", txns > 0 ? wait / Double(txns) * 1000 : 0)
                + " ms each on average), " + String(format: "%.2f", conn) + " s for a pooled connection")
        }
        return out
    }

    /// ``drive(connections:seconds:port:pauseMicroseconds:_:)`` with connection i on node i mod N;
    /// `op` gets the connection's index.
    static func driveSpread(connections: Int, seconds: Double, ports: [Int],
                            _ op: @escaping @Sendable (LoopbackHTTPClient, Int) throws -> Bool) -> Stats {
        final class Box: @unchecked Sendable { var stats = [Stats](); let lock = NSLock() }   // @unchecked: `stats` only under `lock`
        let box = Box()
        let done = DispatchGroup()
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        for i in 0..<connections {
            done.enter()
            Thread {
                let c = LoopbackHTTPClient(port: ports[i % ports.count])
                var s = Stats()
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    let ok = (try? op(c, i)) ?? false
                    if ok { s.latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6) } else { s.failures += 1 }
                }
                box.lock.withLock { box.stats.append(s) }
                done.leave()
            }.start()
        }
        done.wait()
        return Stats(latencies: box.stats.flatMap(\.latencies), failures: box.stats.map(\.failures).reduce(0, +))
    }

    /// `idvd bench audit [--records N] [--writers W] [--appends A] [--db URL]`: fills the audit log of
    /// a fresh store with N entries through the store (batches of 1,000 appends per transaction) and
    /// times the chain check in process (`verifyAuditChain`); then W writer threads append A entries
    /// each, one append per write transaction as the engine makes them (on PostgreSQL the writers are
    /// split over two store instances — two connection pools, as two nodes — so appends race across
    /// "nodes" for the chain head), and `idvd admin audit --verify` checks the whole chain as an
    /// operator runs it. Prints entries/s and seconds. SQLite always; PostgreSQL as for `idvd bench nodes`.
    static let audit = Benchmark(name: "audit", summary: "audit chain: append rate (batched, and concurrent writers over 2 pools) and `admin audit --verify` time (SQLite, PostgreSQL)",
                                options: "[--records N] [--writers N] [--appends N] [--db URL] [--async-commit]") { args in
        let (opts, _) = try CLI.parseOptions(args, flags: ["async-commit"], valued: ["records", "writers", "appends", "db"], takesArguments: false, command: "bench audit")
        guard let n = Int(opts["records"] ?? "100000"), n >= 1 else { throw CLIError("--records must be a positive number") }
        guard let writers = Int(opts["writers"] ?? "8"), writers >= 1 else { throw CLIError("--writers must be a positive number") }
        guard let appends = Int(opts["appends"] ?? "250"), appends >= 1 else { throw CLIError("--appends must be a positive number") }
        let pg = try BenchPostgres(explicit: opts["db"], asyncCommit: opts["async-commit"] != nil)
        defer { pg?.stop() }
        print("idvd bench audit — \(n) records, then \(writers) concurrent writers × \(appends) appends; machine: \(ProcessInfo.processInfo.activeProcessorCount) cores"
              + (pg == nil ? "; PostgreSQL: none (SQLite only)" : "; PostgreSQL: " + (pg!.isScratch ? pg!.scratchDescription : DatabaseLocation(pg!.url).redacted)))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-bench-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let keyFile = dir.appendingPathComponent("templates.key").path
        _ = try TemplateVault.create(keyFile: keyFile)
        var targets: [(String, String, () throws -> any EngineStore)] = []
        let sqlitePath = dir.appendingPathComponent("audit.sqlite").path
        targets.append(("SQLite", sqlitePath, { try SQLiteStore(path: sqlitePath, keyFile: keyFile) }))
        var dropName: String?
        if let pg {
            let fresh = try pg.freshDatabase()
            dropName = fresh.name
            let settings = PostgresConnectionSettings(url: fresh.url, password: pg.password)
            targets.append(("PostgreSQL", fresh.url, { try PostgresStore(settings: settings, keyFile: keyFile) }))
        }
        defer { if let dropName { pg?.drop(dropName) } }
        let details: JSONValue = ["flow": "idv.postlogin.server_biometric", "idv_audit_transaction_id": "txn_0123456789abcdef", "outcome": "matched"]
        for (name, location, open) in targets {
            let store = try open()
            let fill = try Command.measure {
                var done = 0
                while done < n {
                    let batch = min(1000, n - done)
                    try store.withTransaction {
                        for i in 0..<batch {
                            try store.appendAudit(action: "bench.step", userID: "user\((done + i) % 997)", sessionID: "s\((done + i) % 4099)",
                                                  details: details, at: 1_800_000_000 + done + i)
                        }
                    }
                    done += batch
                }
            }
            var bad: Int?
            let verify = try Command.measure { bad = try store.verifyAuditChain() }
            print("\(name): append " + String(format: "%.0f", Double(n) / fill) + " entries/s (one writer, transactions of 1000); verifyAuditChain of \(n) "
                  + String(format: "%.2f", verify) + " s (" + String(format: "%.0f", Double(n) / verify) + " entries/s, " + (bad == nil ? "valid" : "BROKEN at \(bad!)") + ")")

            // Concurrent writers, one append per transaction; on PostgreSQL over two store instances.
            let second: (any EngineStore)? = name == "PostgreSQL" ? try open() : nil
            final class Failures: @unchecked Sendable { let lock = NSLock(); var messages: [String] = [] }   // @unchecked: `messages` only under `lock`
            let failures = Failures()
            let gate = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for w in 0..<writers {
                let target: any EngineStore = (w % 2 == 1 ? second : nil) ?? store
                group.enter()
                Thread {
                    gate.wait()
                    for i in 0..<appends {
                        do {
                            _ = try target.withTransaction {
                                try target.appendAudit(action: "bench.concurrent", userID: "writer\(w)", sessionID: "s\(i % 4099)", details: details,
                                                       at: 1_900_000_000 + i)
                            }
                        } catch { failures.lock.withLock { failures.messages.append("\(error)") } }
                    }
                    group.leave()
                }.start()
            }
            let concurrent = Command.measure {
                for _ in 0..<writers { gate.signal() }
                group.wait()
            }
            let total = n + writers * appends
            let count = try store.auditEntryCount()
            second?.close()
            store.close()

            var env = ProcessInfo.processInfo.environment
            env["IDVD_DB"] = location
            env.removeValue(forKey: "IDVD_DB_PATH")
            if let pw = pg?.password { env["IDVD_DB_PASSWORD"] = pw }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            p.arguments = ["admin", "audit", "--verify", "--set", "templates.key_file=\(keyFile)"]
            p.environment = env
            let out = Pipe()
            p.standardOutput = out
            var verdict = Data()
            let cli = try Command.measure {
                try p.run()
                verdict = out.fileHandleForReading.readDataToEndOfFile()
                p.waitUntilExit()
            }
            let v = try? JSONDecoder().decode(JSONValue.self, from: verdict)
            let valid = v?["chain_valid"] == .bool(true)
            print("\(name): \(writers) concurrent writers" + (second == nil ? "" : " over 2 pools") + ": append " + String(format: "%.0f", Double(writers * appends) / concurrent)
                  + " entries/s (one per transaction), \(failures.messages.count) failed" + (failures.messages.first.map { " (first: \($0))" } ?? "")
                  + "; entries \(count) of \(total) expected; `idvd admin audit --verify` of \(v?["entries_checked"]?.intValue ?? -1): "
                  + (valid ? "valid" : "NOT valid (\(String(decoding: verdict, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))")
                  + ", " + String(format: "%.2f", cli) + " s wall (exit \(p.terminationStatus))")
        }
        return 0
    }
}
