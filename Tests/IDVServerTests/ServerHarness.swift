import Foundation
import IDVCore
@testable import IDVEngine
import IDVCrypto
@testable import IDVHTTP
import IDVReaders
@testable import IDVStoreSQLite
import IDVTools
import XCTest
import IDVTestSupport

/// Locates the `idvd` binary that `swift test` built next to the test bundle.
enum IDVDBinary {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `IDVD_BINARY` (an A/B run against another build, e.g. main's), else the one beside the tests.
    static func path() throws -> String {
        if let p = ProcessInfo.processInfo.environment["IDVD_BINARY"], !p.isEmpty { return p }
        let beside = Bundle(for: ServerProcess.self).bundleURL.deletingLastPathComponent().appendingPathComponent("idvd").path
        for p in [beside, packageRoot.appendingPathComponent(".build/debug/idvd").path, packageRoot.appendingPathComponent(".build/release/idvd").path]
            where FileManager.default.isExecutableFile(atPath: p) { return p }
        throw TestData.missing("idvd binary not found beside the test bundle or under .build (run `swift build` first)")
    }

    /// Runs `idvd <args>` to completion; returns exit status and stdout.
    /// What every `idvd` these tests run gets on top of the test's environment: the default key
    /// directory (`IDVD_KEY_DIR`, KeyLocation), one temp folder of this test process removed when
    /// it exits, so default key files of the tests' databases neither pile up in ~/.local/state
    /// nor stay in the temp folder (serve and admin agree on it).
    /// Set in this test process too (first use), so in-process stores (WorkflowServer) resolve the same default.
    static let keyDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-test-keys-\(getpid())")
    static let testEnvironment: [String: String] = {
        let env = ["IDVD_KEY_DIR": keyDirectory.path]
        for (k, v) in env { setenv(k, v, 1) }
        atexit { try? FileManager.default.removeItem(at: IDVDBinary.keyDirectory) }
        return env
    }()

    /// `environment`: variables set on top of ``testEnvironment`` and this process's own.
    static func run(_ args: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: Data, stderr: Data) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try path())
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(testEnvironment) { _, n in n }.merging(environment) { _, n in n }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, o, e)
    }
}

/// A real `idvd serve` process on a free loopback port with a SQLite file in a temp directory.
final class ServerProcess {
    let dir: URL
    let dbPath: String
    let logPath: String
    private(set) var process: Process?
    private(set) var port = 0
    var settings: [String: String]
    /// Variables set for `idvd serve` and `idvd admin` on top of ``IDVDBinary/testEnvironment``.
    var environment: [String: String] = [:]

    /// Light Argon2id parameters (the minimum) keep the suite fast; production defaults are documented.
    /// Presence and the replay check are off (`PresenceTests` turns them on): these tests send the same
    /// committed frames, which no screen lit, again and again.
    static let testSettings = ["argon2.opslimit": "1", "argon2.memlimit_kib": "8", "http.threads": "4", "shutdown.grace_seconds": "5",
                                "documents.warm_up": "false", "idv.presence": "off", "idv.capture_replay_seconds": "0"]

    init(settings: [String: String] = [:], dir: URL? = nil) throws {
        let d = dir ?? FileManager.default.temporaryDirectory.appendingPathComponent("idvd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        self.dir = d
        dbPath = d.appendingPathComponent("idvd.sqlite").path
        logPath = d.appendingPathComponent("server.log").path
        self.settings = Self.testSettings.merging(settings) { _, new in new }
        _ = IDVDBinary.testEnvironment
    }

    /// Starts the server and waits for its ready line.
    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try IDVDBinary.path())
        var args = ["serve", "--db", dbPath, "--port", "0"]
        for (k, v) in settings.sorted(by: { $0.key < $1.key }) { args += ["--set", "\(k)=\(v)"] }
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(IDVDBinary.testEnvironment) { _, n in n }.merging(environment) { _, n in n }
        let out = Pipe()
        p.standardOutput = out
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        p.standardError = log
        try p.run()
        process = p
        var line = Data()
        let deadline = Date().addingTimeInterval(20)
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty {
                guard p.isRunning, Date() < deadline else {
                    throw NSError(domain: "ServerProcess", code: 1, userInfo: [NSLocalizedDescriptionKey: "idvd did not start: \(serverLog())"])
                }
                usleep(20_000)
            }
            line += chunk
        }
        let ready = try JSONDecoder().decode(JSONValue.self, from: line.prefix(while: { $0 != 0x0A }))
        XCTAssertEqual(ready["event"], "listening")
        port = ready["port"]?.intValue ?? 0
    }

    /// Sends a signal and waits for the process to exit; returns its exit status.
    @discardableResult
    func stop(signal sig: Int32 = SIGTERM) -> Int32 {
        guard let p = process else { return -1 }
        kill(p.processIdentifier, sig)
        p.waitUntilExit()
        process = nil
        return p.terminationStatus
    }

    func serverLog() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func client() -> API { API(port: port) }

    func admin(_ args: [String]) throws -> JSONValue {
        var a = ["admin"] + args + ["--db", dbPath]
        for (k, v) in settings.sorted(by: { $0.key < $1.key }) { a += ["--set", "\(k)=\(v)"] }
        let r = try IDVDBinary.run(a, environment: environment)
        guard r.status == 0 || args.first == "audit" else {
            throw NSError(domain: "admin", code: Int(r.status), userInfo: [NSLocalizedDescriptionKey: String(decoding: r.stderr, as: UTF8.self)])
        }
        return try JSONDecoder().decode(JSONValue.self, from: r.stdout)
    }

    /// Creates a user without IDV and returns its activation code.
    func createUser(_ id: String) throws -> String {
        try XCTUnwrap(admin(["create-user", id, "--no-idv"])["activation_code"]?.stringValue)
    }

    /// Creates `user` and activates it up to its first password; returns the client and the raw HTTP
    /// request answering that password. Write it with `api.http.writeAll(request)` and read the reply
    /// later with `api.http.readResponse()`, so the caller can act while the server hashes it.
    func firstPasswordRequest(user: String, password: String) throws -> (api: API, request: [UInt8]) {
        let code = try createUser(user)
        let api = client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        let ch = try XCTUnwrap(api.answer(["activation_code": .string(code)]).challenge)
        XCTAssertEqual(ch.name, "getPassword")
        let body = try api.encode(WireAnswer(to: ch, payload: ["password": .string(password)]))
        return (api, Array("POST /v1/session/answer HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(api.token ?? "")\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + Array(body))
    }

    deinit {
        if let p = process, p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        try? FileManager.default.removeItem(at: dir)
    }
}

/// A tiny typed client over ``LoopbackHTTPClient`` speaking the wire protocol.
final class API {
    let http: LoopbackHTTPClient
    var token: String?
    var last: WireEnvelope?

    init(port: Int) { http = LoopbackHTTPClient(port: port) }

    struct Reply {
        let status: Int
        let envelope: WireEnvelope?
        let raw: Data
        /// Response headers, names lowercased (e.g. `retry-after`).
        var headers: [String: String] = [:]
        var error: IDVError? { envelope?.error }
        var challenge: WireChallenge? { envelope?.challenge }
        var event: WireEvent? { envelope?.event }
    }

    func call(_ method: String, _ path: String, _ body: Data? = nil, token: String? = nil) throws -> Reply {
        let r = try http.json(method, path, body, bearer: token ?? self.token)
        let env = try? JSONDecoder().decode(WireEnvelope.self, from: r.body)
        // The token rotated at login comes in that answer's session: follow it, as IDVKit does
        // (only for calls on this client's own token).
        if token == nil, let t = env?.session?.token, self.token != nil { self.token = t }
        return Reply(status: r.status, envelope: env, raw: r.body, headers: r.headers)
    }

    func encode<T: Encodable>(_ v: T) throws -> Data { try JSONEncoder().encode(v) }

    @discardableResult
    func startSession(deviceID: String? = nil) throws -> Reply {
        let r = try call("POST", "/v1/sessions", encode(WireSessionStart(deviceID: deviceID, sdkVersion: "test")))
        token = r.envelope?.session?.token
        last = r.envelope
        return r
    }

    @discardableResult
    func answer(_ payload: JSONValue, to challenge: WireChallenge? = nil, route: String = "/v1/session/answer") throws -> Reply {
        guard let ch = challenge ?? last?.challenge else { throw NSError(domain: "API", code: 1, userInfo: [NSLocalizedDescriptionKey: "no challenge"]) }
        let r = try call("POST", route, encode(WireAnswer(to: ch, payload: payload)))
        if r.envelope?.isRefusal == false { last = r.envelope }
        return r
    }

    func current() throws -> Reply { try call("GET", "/v1/session") }

    func registerDevice(publicKey: [UInt8]) throws -> String {
        let r = try call("POST", "/v1/devices", encode(WireDeviceRegistration(publicKey: Data(publicKey).base64EncodedString(), label: "test")))
        let d = try JSONDecoder().decode(WireDevice.self, from: r.raw)
        return d.deviceID
    }
}
