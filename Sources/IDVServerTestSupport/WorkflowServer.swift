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
import IDVTestSupport
import XCTest

// Support for the workflow tests: an in-process `IDVServerApp` on a loopback port (real HTTP, real
// SQLite, real vault) over the TEST DOUBLES of IDVTestSupport (real images from ../shared/testdata,
// scripted evidence in the real readers' shape). The in-process server keeps the doubles out of the
// shipped `idvd` binary.

/// An in-process server with the IDV flows over the test doubles, on a free loopback port.
public final class WorkflowServer {
    public let dir: URL
    public let config: ServerConfig
    public let store: SQLiteStore
    public let vault: TemplateVault
    public let app: IDVServerApp
    public let port: Int
    /// The engine's clock: starts at the wall clock; tests advance it instead of sleeping (unless
    /// the server was made with `wallClock`, for tests that mix in other processes' clocks).
    public let clock = ManualClock()

    public init(_ settings: [String: String] = [:], selfies: (any SelfieAnalysing)? = nil, documents: (any DocumentReading)? = nil,
         wallClock: Bool = false, chips: (any ChipVerifying)? = nil) throws {
        _ = IDVDBinary.testEnvironment   // the default key directory, shared with the idvd these tests run
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-wf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var o = ServerProcess.testSettings.merging(["db.path": dir.appendingPathComponent("idvd.sqlite").path, "listen.port": "0",
                                                   "log.requests": "false"]) { _, n in n }
        o.merge(settings) { _, n in n }
        config = try ServerConfig.load(file: nil, environment: [:], overrides: o)
        store = try SQLiteStore(path: config.dbPath, keyFile: config.storeKeyFile(), previousKeyFiles: config.keys.resolvedPreviousKeyFiles)
        vault = try TemplateVault.load(keyFile: config.keys.resolvedKeyFile(dbPath: config.dbPath), createIfMissing: true)
        let services = IDVServices(documents: try documents ?? TestDoubleDocumentReader(), selfies: try selfies ?? TestDoubleSelfieAnalyser(),
                                   vault: vault, chips: chips)
        app = IDVServerApp(config: config, store: store, registry: .idv(services), crypto: Sodium(),
                           clock: wallClock ? SystemClock() : clock)
        port = try app.start()
    }

    deinit {
        app.stop()
        try? FileManager.default.removeItem(at: dir)
    }

    public func client() -> API { API(port: port) }

    /// Creates a user; returns the activation code.
    public func createUser(_ id: String, idv: Bool, workflow: IDVWorkflow = .activation) throws -> String {
        try Admin(store: store, config: config, crypto: Sodium()).createUser(id, activationRequiresIDV: idv, idvWorkflow: workflow).activationCode
    }

    public static let password = "correct horse 42"

    /// A logged-in session of a freshly activated user (no IDV at activation).
    public func loggedIn(_ user: String) throws -> API {
        let code = try createUser(user, idv: false)
        let api = client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        try api.answer(["activation_code": .string(code)])
        let done = try api.answer(["password": .string(Self.password)])
        XCTAssertEqual(done.event?.name, "onUserLoggedIn")
        return api
    }

    /// A new logged-in session of an existing, activated `user` (password login).
    public func session(_ user: String) throws -> API {
        let api = client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        XCTAssertEqual(try api.answer(["password": .string(Self.password)]).event?.name, "onUserLoggedIn")
        return api
    }

    /// Every audit entry (oldest first).
    public func audit() throws -> [AuditEntry] { try store.auditEntries(limit: 100_000) }

    public func transactions() throws -> [JSONValue] { try audit().filter { $0.action == "idv.transaction" }.map(\.details) }
}

extension API {
    /// Starts a post-login flow by name.
    @discardableResult
    public func startFlow(_ name: String, _ payload: JSONValue = .emptyObject) throws -> Reply {
        let r = try call("POST", "/v1/flows/\(name)", encode(WireFlowStart(payload: payload)))
        if r.envelope?.isRefusal == false { last = r.envelope }
        return r
    }

    @discardableResult
    public func uploadPages(_ pages: [Data]) throws -> Reply {
        try answer(["pages": .array(pages.enumerated().map { ["page_index": .integer($0.offset), "image": .string($0.element.base64EncodedString())] })],
                   route: "/v1/session/upload")
    }

    @discardableResult
    public func uploadFrames(_ frames: [Data]) throws -> Reply {
        try answer(["frames": .array(frames.map { .string($0.base64EncodedString()) })], route: "/v1/session/upload")
    }

    /// `frame` twice as one selfie capture at 10 fps, with its frame times; the server's reply.
    @discardableResult
    public func uploadCapture(_ frame: Data) throws -> Reply {
        try answer(JSONValue(encoding: SelfieFramesAnswer(frames: [frame, frame], fps: 10, metaData: nil, frameTimesMs: [0, 100])),
                   route: "/v1/session/upload")
    }

    /// Document start → upload → (confirm details); returns the reply to the upload.
    @discardableResult
    public func scanDocument(_ page: Data) throws -> Reply {
        let s = try answer(["is_confirm": true])
        XCTAssertEqual(s.challenge?.name, "uploadIDVDocumentPages", "\(String(describing: s.error))")
        return try uploadPages([page])
    }

    /// Selfie start → upload; returns the reply to the upload.
    @discardableResult
    public func captureSelfie(_ frame: Data) throws -> Reply {
        let s = try answer(["is_confirm": true, "use_back_camera": false])
        XCTAssertEqual(s.challenge?.name, "uploadIDVSelfieFrames", "\(String(describing: s.error))")
        return try uploadFrames([frame, frame])
    }
}

extension API {
    /// Enrols a template for this session's user through the opt-in flow (password re-auth).
    public func optIn(frame: Data) throws -> WireEvent {
        let pw = try XCTUnwrap(try startFlow("idv.postlogin.optin").challenge)
        XCTAssertEqual(pw.name, "getPassword")
        XCTAssertEqual(pw.challengeMode, 6)
        XCTAssertEqual(try answer(["password": .string(WorkflowServer.password)]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        let fc = try XCTUnwrap(try captureSelfie(frame).challenge)
        XCTAssertEqual(fc.name, "onIDVOptInCapturedFrameConfirmation")
        return try XCTUnwrap(try answer(["status": 0]).event)
    }
}
