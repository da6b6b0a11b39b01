import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
import IDVHTTP
import IDVReaders
import IDVStoreSQLite
import IDVTools
import XCTest
import IDVTestSupport

/// The `idvd` binary of these tests: IDVTestSupport's ``IDVD`` (one way for every test target).
public enum IDVDBinary {
    public static let packageRoot = IDVD.packageRoot
    public static func path() throws -> String { try IDVD.binary() }
    public static var keyDirectory: URL { IDVD.keyDirectory }
    public static var testEnvironment: [String: String] { IDVD.testEnvironment }

    /// Runs `idvd <args>` to completion; returns exit status, stdout and stderr.
    public static func run(_ args: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: Data, stderr: Data) {
        let r = try IDVD.run(args, environment: environment)
        return (r.status, r.stdout, r.stderr)
    }
}

/// A real `idvd serve` process (IDVTestSupport ``IDVDProcess``) with this target's typed client.
public final class ServerProcess {
    public let server: IDVDProcess
    public var dir: URL { server.dir }
    public var dbPath: String { server.dbPath }
    public var logPath: String { server.logPath }
    public var process: Process? { server.process }
    public var port: Int { server.port }
    public var settings: [String: String] {
        get { server.settings }
        set { server.settings = newValue }
    }
    /// Variables set for `idvd serve` and `idvd admin` on top of ``IDVDBinary/testEnvironment``.
    public var environment: [String: String] {
        get { server.environment }
        set { server.environment = newValue }
    }

    public static var testSettings: [String: String] { IDVDProcess.testSettings }

    public init(settings: [String: String] = [:], dir: URL? = nil) throws {
        server = try IDVDProcess(settings: settings, dir: dir)
    }

    /// Starts the server and waits for its ready line.
    public func start() throws {
        try server.start(timeout: 20)
    }

    /// Sends a signal and waits for the process to exit; returns its exit status.
    @discardableResult
    public func stop(signal sig: Int32 = SIGTERM) -> Int32 { server.stop(signal: sig) }

    public func serverLog() -> String { server.log() }

    public func client() -> API { API(port: port) }

    public func admin(_ args: [String]) throws -> JSONValue {
        let r = try server.admin(args)
        guard r.status == 0 || args.first == "audit" else {
            throw NSError(domain: "admin", code: Int(r.status), userInfo: [NSLocalizedDescriptionKey: r.errors])
        }
        return try JSONDecoder().decode(JSONValue.self, from: r.stdout)
    }

    /// Creates a user without IDV and returns its activation code.
    public func createUser(_ id: String) throws -> String {
        try XCTUnwrap(admin(["create-user", id, "--no-idv"])["activation_code"]?.stringValue)
    }

    /// Creates `user` and activates it up to its first password; returns the client and the raw HTTP
    /// request answering that password. Write it with `api.http.writeAll(request)` and read the reply
    /// later with `api.http.readResponse()`, so the caller can act while the server hashes it.
    public func firstPasswordRequest(user: String, password: String) throws -> (api: API, request: [UInt8]) {
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
public final class API {
    public let http: LoopbackHTTPClient
    public var token: String?
    public var last: WireEnvelope?

    public init(port: Int) { http = LoopbackHTTPClient(port: port) }

    public struct Reply {
        public let status: Int
        public let envelope: WireEnvelope?
        public let raw: Data
        /// Response headers, names lowercased (e.g. `retry-after`).
        public var headers: [String: String] = [:]
        public var error: IDVError? { envelope?.error }
        public var challenge: WireChallenge? { envelope?.challenge }
        public var event: WireEvent? { envelope?.event }
    }

    public func call(_ method: String, _ path: String, _ body: Data? = nil, token: String? = nil) throws -> Reply {
        let r = try http.json(method, path, body, bearer: token ?? self.token)
        let env = try? JSONDecoder().decode(WireEnvelope.self, from: r.body)
        // The token rotated at login comes in that answer's session: follow it, as IDVKit does
        // (only for calls on this client's own token).
        if token == nil, let t = env?.session?.token, self.token != nil { self.token = t }
        return Reply(status: r.status, envelope: env, raw: r.body, headers: r.headers)
    }

    public func encode<T: Encodable>(_ v: T) throws -> Data { try JSONEncoder().encode(v) }

    @discardableResult
    public func startSession(deviceID: String? = nil) throws -> Reply {
        let r = try call("POST", "/v1/sessions", encode(WireSessionStart(deviceID: deviceID, sdkVersion: "test")))
        token = r.envelope?.session?.token
        last = r.envelope
        return r
    }

    @discardableResult
    public func answer(_ payload: JSONValue, to challenge: WireChallenge? = nil, route: String = "/v1/session/answer") throws -> Reply {
        guard let ch = challenge ?? last?.challenge else { throw NSError(domain: "API", code: 1, userInfo: [NSLocalizedDescriptionKey: "no challenge"]) }
        let r = try call("POST", route, encode(WireAnswer(to: ch, payload: payload)))
        if r.envelope?.isRefusal == false { last = r.envelope }
        return r
    }

    public func current() throws -> Reply { try call("GET", "/v1/session") }

    public func registerDevice(publicKey: [UInt8]) throws -> String {
        let r = try call("POST", "/v1/devices", encode(WireDeviceRegistration(publicKey: Data(publicKey).base64EncodedString(), label: "test")))
        let d = try JSONDecoder().decode(WireDevice.self, from: r.raw)
        return d.deviceID
    }
}
