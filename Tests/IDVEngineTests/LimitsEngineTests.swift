import Foundation
import IDVCore
import IDVCrypto
@testable import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVStoreSQLite
import XCTest

/// The abuse limits in the engine (docs/LIMITS.md), over a real SQLite file with a ManualClock:
/// clients are told apart by the address the HTTP layer hands in, time moves by `advance`.
final class LimitsEngineTests: XCTestCase {
    /// The activation IDV step stand-in: one confirmation, `is_confirm: false` cancels (146).
    struct ConfirmIDV: Flow {
        struct State: Codable, Sendable, Equatable {}
        var name: String { "test.idv" }
        func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
            .ask(State(), ChallengeSpec(name: WireName.getIDVDocumentScanProcessStartConfirmation, mode: 8, workflow: 0, attemptsLeft: 1))
        }
        func subject(_ state: State, input: Bool?) -> String? { nil }
        func parse(_ state: State, answer: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> Bool { answer.payload["is_confirm"]?.boolValue ?? false }
        func reduce(_ state: State, input ok: Bool, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
            ok ? .finish(FlowResult(outcome: .completed))
               : .finish(FlowResult(outcome: .attemptsExhausted, errorCode: IDVErrorCode.attemptsExhausted.rawValue))
        }
    }

    /// Records whether Argon2id ever runs while the store's write lock is held.
    final class LockWatchingCrypto: EngineCrypto, @unchecked Sendable {
        let inner = Sodium()
        var store: SQLiteStore?
        private let lock = NSLock()
        private(set) var calls: [(String, Bool)] = []
        func note(_ what: String) { lock.lock(); calls.append((what, store?.isInTransaction ?? true)); lock.unlock() }
        func randomBytes(_ n: Int) -> [UInt8] { inner.randomBytes(n) }
        func sha256(_ data: [UInt8]) -> [UInt8] { inner.sha256(data) }
        func hashPassword(_ password: String, parameters: Argon2Parameters) throws -> String {
            note("hash"); return try inner.hashPassword(password, parameters: parameters)
        }
        func verifyPassword(_ password: String, hash: String) -> Bool { note("verify"); return inner.verifyPassword(password, hash: hash) }
        func verifyEd25519(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
            inner.verifyEd25519(signature: signature, message: message, publicKey: publicKey)
        }
        func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool { inner.constantTimeEqual(a, b) }
    }

    var dir: URL!
    let clock = ManualClock(1_800_000_000)
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-limits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func makeEngine(_ tune: (inout ServerConfig) -> Void = { _ in }, crypto: (any EngineCrypto)? = nil) throws -> (FlowEngine, SQLiteStore, Admin) {
        var config = ServerConfig()
        config.engine.argon2OpsLimit = 1
        config.engine.argon2MemLimitKiB = 8
        tune(&config)
        let store = try SQLiteStore(path: dir.appendingPathComponent("e.sqlite").path, keyFile: dir.appendingPathComponent("e.key").path)
        var registry = FlowRegistry.standard()
        registry.register(ConfirmIDV(), activationFor: [.activation])
        let c = crypto ?? Sodium()
        return (FlowEngine(store: store, settings: config.engine, registry: registry, metrics: Metrics(), admission: AnalysisLimiter(settings: config.analysis), crypto: c, clock: clock), store,
                Admin(store: store, config: config, crypto: c))
    }

    /// One client of the engine: its address and the session it holds.
    struct Client {
        let engine: FlowEngine
        let address: String
        var token: String
        var challenge: WireChallenge?
        init(_ engine: FlowEngine, _ address: String) throws {
            self.engine = engine
            self.address = address
            let s = try engine.startSession(WireSessionStart(), requestID: "r")
            token = try XCTUnwrap(s.session.token)
            challenge = s.challenge
        }
        @discardableResult
        mutating func answer(_ p: JSONValue) throws -> EngineOutput {
            let out = try engine.answer(token: token, WireAnswer(to: XCTUnwrap(challenge), payload: p), viaUpload: false, requestID: "r", client: address)
            challenge = out.challenge
            return out
        }
    }

    /// Activates `user` (no IDV) with password `pw`.
    func activate(_ engine: FlowEngine, _ admin: Admin, _ user: String, _ pw: String) throws {
        let code = try admin.createUser(user, activationRequiresIDV: false, now: clock.now()).activationCode
        var c = try Client(engine, "192.0.2.1")
        try c.answer(["user_id": .string(user)])
        try c.answer(["activation_code": .string(code)])
        XCTAssertEqual(try c.answer(["password": .string(pw)]).event?.name, "onUserLoggedIn")
    }

    func throttled(_ body: () throws -> Any) -> ThrottledError? {
        do { _ = try body(); return nil } catch let t as ThrottledError { return t } catch { XCTFail("\(error)"); return nil }
    }

    // Item 5: a stranger's wrong passwords make the stranger back off, not the user; the user lock
    // needs `password.lock_threshold`, is temporary, grows, and a right password after it unlocks.
    func testAStrangerBacksOffAndTheUserLockIsTemporaryWithGrowingBackoff() throws {
        let (engine, store, admin) = try makeEngine { c in
            c.engine.passwordAttempts = 3
            c.engine.limits.passwordLockThreshold = 6
            c.engine.limits.passwordLockSeconds = 100
            c.engine.limits.backoffSeconds = 10
        }
        try activate(engine, admin, "ada", "right pw 42")
        var stranger = try Client(engine, "198.51.100.7")
        XCTAssertEqual(try stranger.answer(["user_id": "ada"]).challenge?.attemptsLeft, 3)
        XCTAssertEqual(try stranger.answer(["password": "guess 1"]).challenge?.attemptsLeft, 2)
        XCTAssertEqual(try stranger.answer(["password": "guess 2"]).challenge?.attemptsLeft, 1)
        let backedOff = try stranger.answer(["password": "guess 3"])
        XCTAssertEqual(backedOff.challenge?.name, "getUser")
        XCTAssertEqual(backedOff.challenge?.error?.longErrorCode, 1011)
        XCTAssertTrue(backedOff.challenge?.error?.errorString.contains("10 seconds") == true, "\(String(describing: backedOff.challenge?.error))")
        // The user, from their own address, is not locked out by the stranger.
        XCTAssertEqual(try store.user("ada")?.state, .active)
        var owner = try Client(engine, "203.0.113.5")
        XCTAssertEqual(try owner.answer(["user_id": "ada"]).challenge?.name, "getPassword")
        // The stranger, meanwhile, backs off; the refusal at getUser is counted as the back-off limit's
        // (the wrong password that started it is not a refusal).
        XCTAssertTrue(engine.limits.render().contains(#"idvd_limit_refusals_total{limit="auth_backoff"} 0"#), engine.limits.render())
        var again = try Client(engine, "198.51.100.7")
        XCTAssertEqual(try again.answer(["user_id": "ada"]).challenge?.error?.longErrorCode, 1011)
        XCTAssertTrue(engine.limits.render().contains(#"idvd_limit_refusals_total{limit="auth_backoff"} 1"#), engine.limits.render())
        XCTAssertEqual(owner.challenge?.name, "getPassword")
        XCTAssertEqual(try owner.answer(["password": "right pw 42"]).event?.name, "onUserLoggedIn")

        // Many strangers (the user-wide count): at the threshold the USER locks, temporarily.
        for (i, addr) in ["198.51.100.8", "198.51.100.9", "198.51.100.10"].enumerated() {
            var s = try Client(engine, addr)
            try s.answer(["user_id": "ada"])
            try s.answer(["password": .string("spray \(i) a")])
            if i < 2 { try s.answer(["password": .string("spray \(i) b")]) }
        }
        // 5 wrong so far since the owner's success; the 6th locks.
        var last = try Client(engine, "198.51.100.11")
        try last.answer(["user_id": "ada"])
        let locked = try last.answer(["password": "spray 6"])
        XCTAssertEqual(locked.challenge?.error?.longErrorCode, 1011)
        let u = try XCTUnwrap(try store.user("ada"))
        XCTAssertEqual(u.state, .locked)
        XCTAssertEqual(PasswordLockout.lockedUntil(u, engine.settings.limits), clock.now() + 100)
        // Locked for everyone, the right password too (it is not even asked).
        var owner2 = try Client(engine, "203.0.113.5")
        XCTAssertEqual(try owner2.answer(["user_id": "ada"]).challenge?.error?.longErrorCode, 1011)
        // The lock ends by itself; one more wrong password locks again, twice as long.
        clock.advance(by: 101)
        var s7 = try Client(engine, "198.51.100.12")
        XCTAssertEqual(try s7.answer(["user_id": "ada"]).challenge?.name, "getPassword")
        XCTAssertEqual(try s7.answer(["password": "spray 7"]).challenge?.error?.longErrorCode, 1011)
        XCTAssertEqual(PasswordLockout.lockedUntil(try XCTUnwrap(try store.user("ada")), engine.settings.limits), clock.now() + 200)
        clock.advance(by: 201)
        // After it, the right password unlocks (audited).
        var owner3 = try Client(engine, "203.0.113.5")
        try owner3.answer(["user_id": "ada"])
        XCTAssertEqual(try owner3.answer(["password": "right pw 42"]).event?.name, "onUserLoggedIn")
        XCTAssertEqual(try store.user("ada")?.state, .active)
        XCTAssertEqual(try store.user("ada")?.failedPasswordAttempts, 0)
        let actions = try store.auditEntries(limit: 500).map(\.action)
        for a in ["password.client_backoff", "user.locked", "user.unlocked"] { XCTAssertTrue(actions.contains(a), "\(a) not in \(actions)") }
        XCTAssertNil(try store.verifyAuditChain())
    }

    // Item 5: back-off doubles per further failure; the budget across users is per client.
    func testBackoffGrowsAndPasswordSprayingIsLimitedPerClient() throws {
        let (engine, _, admin) = try makeEngine { c in
            c.engine.passwordAttempts = 2
            c.engine.limits.backoffSeconds = 10
            c.engine.limits.authFailuresPerClient = 5
            c.engine.limits.authFailureWindowSeconds = 100
        }
        for u in ["u1", "u2", "u3", "u4"] { try activate(engine, admin, u, "right pw 42") }
        var a = try Client(engine, "198.51.100.7")
        try a.answer(["user_id": "u1"])
        try a.answer(["password": "x1"])
        XCTAssertEqual(try a.answer(["password": "x2"]).challenge?.error?.longErrorCode, 1011)   // backs off 10 s
        var b = try Client(engine, "198.51.100.7")
        try b.answer(["user_id": "u2"])
        // A password challenge already open for u1 in another session of this client: refused before hashing.
        var c = try Client(engine, "198.51.100.7")
        try c.answer(["user_id": "u3"])
        XCTAssertNil(throttled { try b.answer(["password": "y1"]) })   // 3rd failure of this client
        clock.advance(by: 11)
        var d = try Client(engine, "198.51.100.7")
        try d.answer(["user_id": "u1"])
        // After the back-off one more wrong password backs off again, twice as long (20 s).
        let twice = try d.answer(["password": "x3"])   // 4th failure of the client
        XCTAssertTrue(twice.challenge?.error?.errorString.contains("20 seconds") == true, "\(String(describing: twice.challenge?.error))")
        XCTAssertNil(throttled { try c.answer(["password": "z1"]) })   // 5th: the budget is spent now
        var e = try Client(engine, "198.51.100.7")
        try e.answer(["user_id": "u4"])
        let t = try XCTUnwrap(throttled { try e.answer(["password": "right pw 42"]) }, "a spraying client is refused even the right password")
        XCTAssertEqual(t.error.code, .authThrottled)
        XCTAssertGreaterThan(t.retryAfterSeconds, 0)
        // Another client is unaffected.
        var other = try Client(engine, "203.0.113.9")
        try other.answer(["user_id": "u4"])
        XCTAssertEqual(try other.answer(["password": "right pw 42"]).event?.name, "onUserLoggedIn")
        XCTAssertTrue(engine.limits.render().contains(#"idvd_limit_refusals_total{limit="auth_client"} 1"#), engine.limits.render())
    }

    // The credential limits are in the store: two engines on one database (two nodes) count a
    // client's failures together, and a new process (a restart) still knows them.
    func testTwoNodesOnOneStoreShareBackoffsAndBudgets() throws {
        let tune: (inout ServerConfig) -> Void = { c in
            c.engine.passwordAttempts = 4
            c.engine.limits.backoffSeconds = 10
            c.engine.limits.authFailuresPerClient = 6
            c.engine.limits.authFailureWindowSeconds = 600
        }
        let (node1, _, admin) = try makeEngine(tune)
        let (node2, _, _) = try makeEngine(tune)
        for u in ["u1", "u2"] { try activate(node1, admin, u, "right pw 42") }
        // Four wrong passwords for u1, alternating nodes: the fourth backs the client off on both.
        for i in 0..<4 {
            var c = try Client(i % 2 == 0 ? node1 : node2, "198.51.100.7")
            try c.answer(["user_id": "u1"])
            let out = try c.answer(["password": .string("wrong \(i)")])
            XCTAssertEqual(out.challenge?.error?.longErrorCode, i < 3 ? 1014 : 1011, "failure \(i + 1)")
        }
        for node in [node1, node2] {
            var c = try Client(node, "198.51.100.7")
            XCTAssertEqual(try c.answer(["user_id": "u1"]).challenge?.error?.longErrorCode, 1011, "backed off on every node")
        }
        // Two more failures for u2 on node 2 spend the client's budget of 6 across both nodes.
        for i in 0..<2 {
            var c = try Client(node2, "198.51.100.7")
            try c.answer(["user_id": "u2"])
            XCTAssertNotNil(try c.answer(["password": .string("spray \(i)")]).challenge?.error)
        }
        // A third engine on the same file, started now (a restarted node), refuses the client too.
        let (node3, _, _) = try makeEngine(tune)
        var late = try Client(node3, "198.51.100.7")
        try late.answer(["user_id": "u2"])
        let t = try XCTUnwrap(throttled { try late.answer(["password": "right pw 42"]) }, "budget spent on the other nodes")
        XCTAssertEqual(t.error.code, .authThrottled)
        // The right password from another client resets u1's pair for that client only; the sweep
        // keeps the running back-off and drops counters once idle past the window and the memory.
        var owner = try Client(node3, "203.0.113.9")
        try owner.answer(["user_id": "u1"])
        XCTAssertEqual(try owner.answer(["password": "right pw 42"]).event?.name, "onUserLoggedIn")
        XCTAssertEqual(try node1.purgeExpired().limitCounters, 0, "still in use")
        clock.advance(by: node1.limits.counterIdleSeconds + 1)
        XCTAssertEqual(try node1.purgeExpired().limitCounters, 3, "the u1 and u2 pairs and the address's budget")
    }

    // Item 5: wrong activation codes back off the client; the code stays usable.
    func testWrongActivationCodesBackOffAndNeverKillTheCode() throws {
        let (engine, store, admin) = try makeEngine { c in
            c.engine.activationCodeAttempts = 2
            c.engine.limits.backoffSeconds = 30
        }
        let code = try admin.createUser("pat", activationRequiresIDV: false, now: clock.now()).activationCode
        for round in 0..<3 {
            var s = try Client(engine, "198.51.100.7")
            try s.answer(["user_id": "pat"])
            // The first back-off after `activation.code_attempts` wrong codes; after it, each wrong code backs off again, twice as long.
            if round == 0 { XCTAssertEqual(try s.answer(["activation_code": "00000-00000"]).challenge?.error?.longErrorCode, 1012) }
            let backoff = try s.answer(["activation_code": .string("11111-1111\(round)")]).challenge?.error
            XCTAssertEqual(backoff?.longErrorCode, 1111)
            XCTAssertTrue(backoff?.errorString.contains(PasswordLockout.retryText(until: 30 << round, now: 0)) == true, "\(String(describing: backoff))")
            var blocked = try Client(engine, "198.51.100.7")
            XCTAssertEqual(try blocked.answer(["user_id": "pat"]).challenge?.error?.longErrorCode, 1111)
            XCTAssertTrue(engine.limits.render().contains("idvd_limit_refusals_total{limit=\"auth_backoff\"} \(round + 1)"), engine.limits.render())
            clock.advance(by: 30 << round)
        }
        XCTAssertEqual(try store.activationCode(userID: "pat")?.attemptsLeft, 3, "wrong codes do not use the code up")
        var owner = try Client(engine, "203.0.113.5")
        try owner.answer(["user_id": "pat"])
        XCTAssertEqual(try owner.answer(["activation_code": .string(code)]).challenge?.name, "getPassword")
    }

    // Item 3: whole IDV runs per activation code; attempts_left moves.
    func testAnActivationCodeStartsAtMostIDVRunsRuns() throws {
        let (engine, _, admin) = try makeEngine { $0.engine.limits.activationIDVRuns = 2 }
        let code = try admin.createUser("ivy", now: clock.now()).activationCode
        var lefts: [Int] = []
        for _ in 0..<2 {
            var c = try Client(engine, "192.0.2.1")
            lefts.append(try XCTUnwrap(try c.answer(["user_id": "ivy"]).challenge?.attemptsLeft))
            XCTAssertEqual(try c.answer(["activation_code": .string(code)]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
            XCTAssertEqual(try c.answer(["is_confirm": false]).challenge?.error?.longErrorCode, 1010)
        }
        XCTAssertEqual(lefts, [2, 1])
        var c = try Client(engine, "192.0.2.1")
        let done = try c.answer(["user_id": "ivy"])
        XCTAssertEqual(done.challenge?.name, "getUser")
        XCTAssertEqual(done.challenge?.error?.longErrorCode, 1112)
    }

    // Item 6: Argon2id never runs under the write lock (set, verify, wrong, right); length in bytes.
    func testArgon2idRunsOutsideTheWriteLockAndPasswordsAreLimitedInBytes() throws {
        let crypto = LockWatchingCrypto()
        let (engine, store, admin) = try makeEngine(crypto: crypto)
        crypto.store = store
        let code = try admin.createUser("zed", activationRequiresIDV: false, now: clock.now()).activationCode
        var c = try Client(engine, "192.0.2.1")
        try c.answer(["user_id": "zed"])
        try c.answer(["activation_code": .string(code)])
        // 32 characters, 752 bytes: within 128 characters, over the 512-byte policy.
        let family = "a1" + String(repeating: "👨‍👩‍👧‍👦", count: 30)
        XCTAssertEqual(family.count, 32)
        XCTAssertEqual(try c.answer(["password": .string(family)]).challenge?.error?.longErrorCode, 1015)
        // 600 characters, 1,200 bytes: refused as malformed before anything is hashed.
        let long = String(repeating: "é", count: 600)
        XCTAssertThrowsError(try c.answer(["password": .string(long)])) { XCTAssertEqual(($0 as? IDVError)?.code, .malformedRequest) }
        XCTAssertEqual(try c.answer(["password": "fine pw 12"]).event?.name, "onUserLoggedIn")
        var l = try Client(engine, "192.0.2.1")
        try l.answer(["user_id": "zed"])
        XCTAssertThrowsError(try l.answer(["password": .string(long)])) { XCTAssertEqual(($0 as? IDVError)?.code, .malformedRequest) }
        try l.answer(["password": "wrong pw 1"])
        XCTAssertEqual(try l.answer(["password": "fine pw 12"]).event?.name, "onUserLoggedIn")
        XCTAssertEqual(crypto.calls.map(\.0), ["hash", "verify", "verify"])
        XCTAssertEqual(crypto.calls.filter(\.1).count, 0, "Argon2id ran inside the write lock: \(crypto.calls)")
    }

    // Item 2: per device; anonymous sessions leave no rows, one count per sweep.
    func testSessionsPerDeviceAndAnonymousExpiryLeavesNoRows() throws {
        let (engine, store, admin) = try makeEngine { c in
            c.engine.limits.sessionsPerDevicePerMinute = 2
            c.engine.sessionIdleSeconds = 60
        }
        let key = Crypto.ed25519KeyPair().publicKey
        let device = try engine.registerDevice(WireDeviceRegistration(publicKey: Data(key).base64EncodedString()))
        _ = try engine.startSession(WireSessionStart(deviceID: device.deviceID), requestID: "r")
        _ = try engine.startSession(WireSessionStart(deviceID: device.deviceID), requestID: "r")
        let t = try XCTUnwrap(throttled { try engine.startSession(WireSessionStart(deviceID: device.deviceID), requestID: "r") })
        XCTAssertEqual(t.error.code, .sessionRateLimited)
        clock.advance(by: 30)
        XCTAssertNoThrow(try engine.startSession(WireSessionStart(deviceID: device.deviceID), requestID: "r"))

        try activate(engine, admin, "kay", "right pw 42")
        let auditBefore = try store.auditEntryCount()
        for i in 0..<10 {
            var c = try Client(engine, "192.0.2.\(i)")
            if i % 2 == 0 { try c.answer(["user_id": .string("nobody-\(i)")]) }   // unknown user: still anonymous
            if i == 3 { _ = try engine.reset(token: c.token, requestID: "r") }
        }
        var known = try Client(engine, "192.0.2.99")
        try known.answer(["user_id": "kay"])
        clock.advance(by: 61)
        let r = try engine.purgeExpired()
        XCTAssertEqual(r.anonymousSessions, 13, "10 + the 3 device sessions")
        XCTAssertEqual(r.sessions, 15, "+ kay's activation session and the identified one")
        XCTAssertEqual(try store.query("SELECT count(*) FROM sessions").first?[0].int, 0)
        XCTAssertEqual(try store.query("SELECT count(*) FROM flow_runs").first?[0].int, 2,
                       "only the two sessions that named a user keep their (auth) runs")
        let added = try store.auditEntries(limit: 1000).suffix(try store.auditEntryCount() - auditBefore)
        XCTAssertEqual(added.filter { $0.action == "session.anonymous_expired" }.map { $0.details["count"] }, [.integer(13)])
        XCTAssertEqual(added.filter { $0.action == "session.expired" }.count, 2)
        XCTAssertFalse(added.contains { $0.action == "session.reset" }, "an anonymous reset leaves no audit row")
        XCTAssertNil(try store.verifyAuditChain())
    }
}
