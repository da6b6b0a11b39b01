import Foundation
import IDVCore
import IDVCrypto
import IDVTools
import IDVTestSupport
import XCTest


/// N real `idvd serve` processes ("nodes") on one PostgreSQL database, each on its own loopback
/// port, all with the same key file; `idvd admin` runs against the same database. The password
/// reaches every process in `IDVD_DB_PASSWORD` (never on a command line).
final class Cluster {
    let dir: URL
    let url: String
    let password: String?
    let keyFile: String
    var settings: [String: String]
    private(set) var nodes: [Node] = []

    /// Light Argon2id (the minimum) keeps the suite fast; no OCR-B warm-up (no document is read here).
    /// Presence and the replay check are off: the nodes are fed the same committed frames many times;
    /// so is the PAD step-up (a recording cannot follow its challenge).
    static let testSettings = ["argon2.opslimit": "1", "argon2.memlimit_kib": "8", "http.threads": "4", "http.workers": "8",
                               "shutdown.grace_seconds": "2", "documents.warm_up": "false", "db.pool_size": "6",
                               "idv.presence": "off", "idv.capture_replay_seconds": "0", "idv.pad.challenge_below": "-20"]

    init(url: String, password: String?, settings: [String: String] = [:]) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-nodes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        self.url = url
        self.password = password
        keyFile = dir.appendingPathComponent("templates.key").path
        // One key file for every node, made once (`idvd admin new-key`), as a deployment copies it to each node.
        _ = try TemplateVault.load(keyFile: keyFile, createIfMissing: true)
        self.settings = Self.testSettings.merging(settings) { _, new in new }
        self.settings["templates.key_file"] = keyFile
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["IDVD_DB"] = url
        env.removeValue(forKey: "IDVD_DB_PATH")
        if let password { env["IDVD_DB_PASSWORD"] = password }
        return env
    }

    func arguments(_ settings: [String: String]) -> [String] {
        settings.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.value)"] }
    }

    /// Starts `n` more nodes (in parallel, as a deployment would) and waits for their ready lines.
    @discardableResult
    func start(_ n: Int, settings extra: [String: String] = [:]) throws -> [Node] {
        var started: [Node] = []
        do {
            for _ in 0..<n { started.append(try Node(cluster: self, settings: settings.merging(extra) { _, new in new })) }
            try started.forEach { try $0.waitReady() }
        } catch {
            started.forEach { $0.kill() }
            throw error
        }
        nodes += started
        return started
    }

    /// Runs `idvd admin <args>` against the cluster's database; returns exit status, stdout JSON (when any), stderr.
    func admin(_ args: [String], settings extra: [String: String] = [:]) throws -> (status: Int32, json: JSONValue?, stderr: String) {
        let r = try IDVD.run(["admin"] + args + arguments(settings.merging(extra) { _, new in new }), replacing: environment)
        return (r.status, try? JSONDecoder().decode(JSONValue.self, from: r.stdout), r.errors)
    }

    /// `idvd admin create-user <id> --no-idv`; returns the activation code.
    func createUser(_ id: String) throws -> String {
        let r = try admin(["create-user", id, "--no-idv"])
        guard r.status == 0, let code = r.json?["activation_code"]?.stringValue else {
            throw ScratchPostgres.Unavailable(description: "create-user \(id) failed: \(r.stderr)")
        }
        return code
    }

    /// `idvd admin audit --verify`: (valid, entries checked).
    func verifyAudit() throws -> (valid: Bool, entries: Int, status: Int32) {
        let r = try admin(["audit", "--verify"])
        return (r.json?["chain_valid"] == .bool(true), r.json?["entries_checked"]?.intValue ?? -1, r.status)
    }

    func stopAll() { nodes.forEach { $0.stop() } }

    deinit {
        nodes.forEach { $0.kill() }
        try? FileManager.default.removeItem(at: dir)
    }
}

/// One `idvd serve` process (IDVTestSupport ``IDVDProcess``) on the cluster's database.
/// Sendable: `port` is set once before the node is shared; the process is only signalled and waited on.
final class Node: @unchecked Sendable {
    let server: IDVDProcess
    var logPath: String { server.logPath }
    var port: Int { server.port }
    var process: Process? { server.process }

    init(cluster: Cluster, settings: [String: String]) throws {
        server = try IDVDProcess(dir: cluster.dir, database: cluster.url, logName: "node-\(UUID().uuidString.prefix(8)).log")
        server.settings = settings   // the cluster's settings already hold the light test values
        server.passesDatabase = false
        server.inheritsIDVDVariables = false
        server.environment = cluster.environment.filter { $0.key.hasPrefix("IDVD_") }
        try server.launch()
    }

    func waitReady(timeout: TimeInterval = 60) throws {
        do { try server.waitReady(timeout: timeout) } catch {
            throw ScratchPostgres.Unavailable(description: "idvd serve did not start: \(log().suffix(1500))")
        }
    }

    func log() -> String { server.log() }

    var isRunning: Bool { server.process?.isRunning ?? false }

    /// SIGTERM and wait (a graceful stop).
    func stop() { server.stop() }

    /// SIGKILL and wait: the node dies mid-whatever, as on a power cut or an OOM kill.
    func kill() { server.kill() }

    func client() -> WireClient { WireClient(port: port) }
}

/// The wire protocol over one keep-alive loopback connection; the session token can be carried to
/// a client of another node (``WireClient/token``): that is all a load balancer does. Sendable:
/// each client is handed to one thread, which alone uses it.
final class WireClient: @unchecked Sendable {
    let http: LoopbackHTTPClient
    var token: String?
    var last: WireEnvelope?

    init(port: Int, token: String? = nil) { http = LoopbackHTTPClient(port: port); self.token = token }

    struct Reply {
        let status: Int
        let envelope: WireEnvelope?
        var code: Int { envelope?.error?.longErrorCode ?? 0 }
        var challenge: WireChallenge? { envelope?.challenge }
        var event: WireEvent? { envelope?.event }
    }

    func call(_ method: String, _ path: String, _ body: Data? = nil) throws -> Reply {
        let r = try http.json(method, path, body, bearer: token)
        let env = try? JSONDecoder().decode(WireEnvelope.self, from: r.body)
        if let t = env?.session?.token { token = t }
        if let env, !env.isRefusal { last = env }
        return Reply(status: r.status, envelope: env)
    }

    @discardableResult
    func startSession() throws -> Reply { try call("POST", "/v1/sessions", JSONEncoder().encode(WireSessionStart(sdkVersion: "test"))) }

    @discardableResult
    func answer(_ payload: JSONValue, to challenge: WireChallenge? = nil) throws -> Reply {
        guard let ch = challenge ?? last?.challenge else { throw ScratchPostgres.Unavailable(description: "no challenge to answer") }
        return try call("POST", "/v1/session/answer", JSONEncoder().encode(WireAnswer(to: ch, payload: payload)))
    }

    func current() throws -> Reply { try call("GET", "/v1/session") }

    @discardableResult
    func logoff() throws -> Reply { try call("POST", "/v1/session/logoff", Data("{}".utf8)) }
}

extension WireChallenge {
    /// The answer a password-only user gives to this challenge (activation or login).
    func answer(user: String, code: String?, password: String) -> JSONValue? {
        switch name {
        case WireName.getUser: return ["user_id": .string(user)]
        case WireName.getActivationCode: return code.map { ["activation_code": .string($0)] }
        case WireName.getPassword: return ["password": .string(password)]
        default: return nil
        }
    }
}
