import Foundation
import IDVCore
import IDVCrypto
@testable import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVStoreSQLite
import XCTest

/// The extension points, in process over a real SQLite file: a registered activation-IDV sub-flow
/// runs between the activation code and the password; a post-login flow starts by name.
final class FlowEngineTests: XCTestCase {
    /// A two-step flow standing in for the IDV engine's: asks a confirmation, then finishes with
    /// `completed` (true) or `cancelled` 146 (false). Its typed state keeps the start input's user.
    struct ConfirmFlow: Flow {
        struct State: Codable, Sendable, Equatable { var inputUser: String? }
        let name: String
        let startableByClient: Bool
        var workflow: IDVWorkflow? { .activation }
        func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
            .ask(State(inputUser: input["user_id"]?.stringValue),
                 ChallengeSpec(name: WireName.getIDVDocumentScanProcessStartConfirmation, mode: 8, workflow: 0, attemptsLeft: 3))
        }
        func subject(_ state: State, input: Bool?) -> String? { state.inputUser }
        func parse(_ state: State, answer: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> Bool {
            guard let ok = answer.payload["is_confirm"]?.boolValue else { throw IDVError(.malformedRequest, "is_confirm") }
            return ok
        }
        func reduce(_ state: State, input ok: Bool, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
            if ok { return .finish(FlowResult(outcome: .completed)) }
            return .finish(FlowResult(outcome: .cancelled, event: WireEvent(name: "onTestFlowEnded", error: IDVError(.userCancelled)),
                                      errorCode: IDVErrorCode.idvCancelledByUser.rawValue))
        }
    }

    var dir: URL!
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-engine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func makeEngine() throws -> (FlowEngine, SQLiteStore, ServerConfig) {
        var config = ServerConfig()
        config.engine.argon2OpsLimit = 1
        config.engine.argon2MemLimitKiB = 8
        let store = try SQLiteStore(path: dir.appendingPathComponent("e.sqlite").path, keyFile: dir.appendingPathComponent("e.key").path)
        var registry = FlowRegistry.standard()
        registry.register(ConfirmFlow(name: "test.idv.activation", startableByClient: false), activationFor: [.activation])
        registry.register(ConfirmFlow(name: "test.postlogin", startableByClient: true))
        return (FlowEngine(store: store, settings: config.engine, registry: registry, metrics: Metrics(), admission: AnalysisLimiter(settings: config.analysis), crypto: Sodium()), store, config)
    }

    func testActivationIDVHookRunsBetweenCodeAndPassword() throws {
        let (engine, store, config) = try makeEngine()
        let admin = Admin(store: store, config: config, crypto: Sodium())
        let issued = try admin.createUser("ivy")   // activation requires IDV (default)
        let s = try engine.startSession(WireSessionStart(), requestID: "r")
        let token = try XCTUnwrap(s.session.token)
        func answer(_ ch: WireChallenge?, _ p: JSONValue) throws -> EngineOutput {
            try engine.answer(token: token, WireAnswer(to: XCTUnwrap(ch), payload: p), viaUpload: false, requestID: "r")
        }
        let code = try answer(s.challenge, ["user_id": "ivy"])
        let idv = try answer(code.challenge, ["activation_code": .string(issued.activationCode)])
        XCTAssertEqual(idv.challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(idv.challenge?.challengeMode, 8)
        XCTAssertEqual(idv.challenge?.idvWorkflow, 0)
        XCTAssertEqual(idv.challenge?.userID, "ivy")
        // Malformed answer inside the sub-flow: refused, nothing consumed.
        XCTAssertThrowsError(try answer(idv.challenge, [:])) { XCTAssertEqual(($0 as? IDVError)?.code, .malformedRequest) }
        let pw = try answer(idv.challenge, ["is_confirm": true])
        XCTAssertEqual(pw.challenge?.name, "getPassword")
        XCTAssertEqual(pw.challenge?.challengeMode, 1)
        XCTAssertEqual(try answer(pw.challenge, ["password": "hooked in 12"]).event?.name, "onUserLoggedIn")
        let actions = try store.auditEntries(limit: 50).map(\.action)
        XCTAssertTrue(actions.contains("activation.idv_completed"), "\(actions)")
        XCTAssertNil(try store.verifyAuditChain())
    }

    func testActivationIDVCancelReturnsToGetUserWith146() throws {
        let (engine, store, config) = try makeEngine()
        let issued = try Admin(store: store, config: config, crypto: Sodium()).createUser("jack")
        let s = try engine.startSession(WireSessionStart(), requestID: "r")
        let token = try XCTUnwrap(s.session.token)
        func answer(_ ch: WireChallenge?, _ p: JSONValue) throws -> EngineOutput {
            try engine.answer(token: token, WireAnswer(to: XCTUnwrap(ch), payload: p), viaUpload: false, requestID: "r")
        }
        let code = try answer(s.challenge, ["user_id": "jack"])
        let idv = try answer(code.challenge, ["activation_code": .string(issued.activationCode)])
        let back = try answer(idv.challenge, ["is_confirm": false])
        XCTAssertEqual(back.challenge?.name, "getUser")
        XCTAssertEqual(back.challenge?.error?.longErrorCode, 146)
        XCTAssertNil(back.event, "a pre-login cancel shows as getUser carrying 146, not the sub-flow's event")
    }

    func testPostLoginFlowStartsByNameOnlyWhenLoggedIn() throws {
        let (engine, store, config) = try makeEngine()
        let issued = try Admin(store: store, config: config, crypto: Sodium()).createUser("kim", activationRequiresIDV: false)
        let s = try engine.startSession(WireSessionStart(), requestID: "r")
        var token = try XCTUnwrap(s.session.token)
        XCTAssertThrowsError(try engine.startFlow(token: token, name: "test.postlogin", input: .emptyObject, requestID: "r")) {
            XCTAssertEqual(($0 as? IDVError)?.code, .unauthenticated)
        }
        func answer(_ ch: WireChallenge?, _ p: JSONValue) throws -> EngineOutput {
            try engine.answer(token: token, WireAnswer(to: XCTUnwrap(ch), payload: p), viaUpload: false, requestID: "r")
        }
        let c = try answer(s.challenge, ["user_id": "kim"])
        XCTAssertNil(c.session.token, "the token goes out at start and at login only")
        let p = try answer(c.challenge, ["activation_code": .string(issued.activationCode)])
        let loggedIn = try answer(p.challenge, ["password": "post login 3"])
        XCTAssertEqual(loggedIn.event?.name, "onUserLoggedIn")
        // The token is rotated at login: the pre-login one stops working, the new one is sent once.
        let rotated = try XCTUnwrap(loggedIn.session.token)
        XCTAssertNotEqual(rotated, token)
        XCTAssertThrowsError(try engine.current(token: token)) { XCTAssertEqual(($0 as? IDVError)?.code, .unauthenticated) }
        token = rotated
        XCTAssertTrue(try engine.current(token: token).session.loggedIn)
        XCTAssertThrowsError(try engine.startFlow(token: token, name: "test.idv.activation", input: .emptyObject, requestID: "r")) {
            XCTAssertEqual(($0 as? IDVError)?.code, .notFound, "sub-flows are not startable by clients")
        }
        let started = try engine.startFlow(token: token, name: "test.postlogin", input: ["reason": "kyc"], requestID: "r")
        XCTAssertEqual(started.challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertThrowsError(try engine.startFlow(token: token, name: "test.postlogin", input: .emptyObject, requestID: "r")) {
            XCTAssertEqual(($0 as? IDVError)?.code, .flowInProgress)
        }
        let end = try answer(started.challenge, ["is_confirm": false])
        XCTAssertNil(end.challenge)
        XCTAssertEqual(end.event?.name, "onTestFlowEnded")
        XCTAssertEqual(end.event?.error.longErrorCode, 240)
        XCTAssertTrue(end.session.loggedIn)
    }

    func testPasswordPolicyAndActivationCodes() {
        XCTAssertNil(PasswordPolicy.violation("abcdefg1", userID: "u", minLength: 8))
        XCTAssertNotNil(PasswordPolicy.violation("abcdef1", userID: "u", minLength: 8))
        XCTAssertNotNil(PasswordPolicy.violation("abcdefgh", userID: "u", minLength: 8))
        XCTAssertNotNil(PasswordPolicy.violation("12345678", userID: "u", minLength: 8))
        XCTAssertNotNil(PasswordPolicy.violation("alice123", userID: "ALICE123", minLength: 8))
        XCTAssertNotNil(PasswordPolicy.violation("abc\u{0}defg1", userID: "u", minLength: 8))
        var config = ServerConfig()
        config.engine.limits.activationIDVRuns = 4
        let (code, rec) = ActivationCodes.issue(userID: "u", now: 1000, settings: config.engine, crypto: Sodium())
        XCTAssertTrue(ActivationCodes.matches(code, record: rec, crypto: Sodium()))
        XCTAssertTrue(ActivationCodes.matches(" " + code.lowercased() + " ", record: rec, crypto: Sodium()))
        XCTAssertFalse(ActivationCodes.matches(String(code.reversed()), record: rec, crypto: Sodium()))
        XCTAssertFalse(rec.codeHash.contains(code.replacingOccurrences(of: "-", with: "")))
        XCTAssertEqual(rec.attemptsLeft, 4)
        XCTAssertEqual(rec.expiresAt, 1000 + config.engine.activationCodeTTLSeconds)
    }

    func testArgon2idAndEd25519() throws {
        let h = try Crypto.hashPassword("pw 123456", parameters: .minimum)
        XCTAssertTrue(h.hasPrefix("$argon2id$v=19$"), h)
        XCTAssertTrue(Crypto.verifyPassword("pw 123456", hash: h))
        XCTAssertFalse(Crypto.verifyPassword("pw 123457", hash: h))
        XCTAssertFalse(Crypto.verifyPassword("pw 123456", hash: "garbage"))
        let empty = try Crypto.hashPassword("", parameters: .minimum)
        XCTAssertTrue(Crypto.verifyPassword("", hash: empty))
        XCTAssertFalse(Crypto.verifyPassword("\u{0}", hash: empty), "an embedded NUL is part of the password")
        XCTAssertEqual(Crypto.randomBytes(0), [])
        let k = Crypto.ed25519KeyPair()
        let sig = Crypto.signEd25519(message: [1, 2, 3], secretKey: k.secretKey)
        XCTAssertTrue(Crypto.verifyEd25519(signature: sig, message: [1, 2, 3], publicKey: k.publicKey))
        XCTAssertFalse(Crypto.verifyEd25519(signature: sig, message: [1, 2, 4], publicKey: k.publicKey))
        XCTAssertFalse(Crypto.verifyEd25519(signature: Array(sig.prefix(10)), message: [1, 2, 3], publicKey: k.publicKey))
    }

    func testAuditChainDetectsTampering() throws {
        let store = try SQLiteStore(path: dir.appendingPathComponent("a.sqlite").path, keyFile: dir.appendingPathComponent("a.key").path)
        for i in 1...5 { try store.appendAudit(action: "test.\(i)", userID: "u", sessionID: nil, details: ["n": .integer(i)], at: 100 + i) }
        XCTAssertNil(try store.verifyAuditChain())
        try store.query("UPDATE audit_log SET details = '{\"n\":99}' WHERE seq = 3")
        XCTAssertEqual(try store.verifyAuditChain(), 3)
        XCTAssertEqual(try store.schemaVersion(), SQLiteStore.migrations.count)
    }

    func testConfigPrecedence() throws {
        let file = dir.appendingPathComponent("c.json")
        try Data(#"{"listen.port": 9000, "db.path": "/tmp/a.sqlite", "log.requests": false}"#.utf8).write(to: file)
        let c = try ServerConfig.load(file: file.path, environment: ["IDVD_LISTEN_PORT": "9001", "IDVD_PASSWORD_ATTEMPTS": "5"],
                                      overrides: ["listen.port": "9002"])
        XCTAssertEqual(c.port, 9002)
        XCTAssertEqual(c.dbPath, "/tmp/a.sqlite")
        XCTAssertEqual(c.engine.passwordAttempts, 5)
        XCTAssertFalse(c.logRequests)
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["nope": "1"]))
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: ["IDVD_HTTP_THREADS": "0"]))
    }
}
