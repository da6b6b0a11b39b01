import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVStorePostgres
@testable import IDVStoreSQLite
import XCTest

/// The ``Store`` / ``WorkflowStore`` contract as tests. This class runs them on SQLite;
/// ``PostgresStoreContractTests`` (a subclass) runs the very same tests on PostgreSQL. A test here
/// uses only the protocol, plus three hooks every store provides: reopening the same database
/// (restart), raw SQL (tampering), and the audit-entry count.
class StoreContractTests: XCTestCase {
    /// A store under test and its hooks.
    struct Subject {
        let store: any WorkflowStore
        /// Opens the same database again with these key files (a restart, a key rotation).
        let reopen: (_ keyFile: String, _ previousKeyFiles: [String]) throws -> any WorkflowStore
        /// Runs SQL directly on the database (the same SQL works on both stores).
        let raw: (String) throws -> Void
    }

    /// Which store these tests run on (in failure messages).
    class var storeName: String { "SQLite" }

    var dir: URL!
    var keyFile: String { dir.appendingPathComponent("store.key").path }
    private var opened: [any WorkflowStore] = []

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("store-contract-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        _ = try TemplateVault.load(keyFile: keyFile, createIfMissing: true)
    }

    override func tearDown() {
        opened.forEach { $0.close() }
        opened.removeAll()
        try? FileManager.default.removeItem(at: dir)
    }

    /// Keeps `store` to close at tear-down.
    func track<S: WorkflowStore>(_ store: S) -> S { opened.append(store); return store }

    /// A new, empty store (SQLite: a file in the test's directory).
    func makeSubject() throws -> Subject {
        let path = dir.appendingPathComponent("contract.sqlite").path
        let store = track(try SQLiteStore(path: path, keyFile: keyFile))
        return Subject(store: store,
                       reopen: { [unowned self] key, previous in self.track(try SQLiteStore(path: path, keyFile: key, previousKeyFiles: previous)) },
                       raw: { sql in try store.query(sql) })
    }

    // MARK: Helpers

    func user(_ id: String, at t: Int = 1000) -> UserRecord { UserRecord(userID: id, createdAt: t, updatedAt: t) }

    func session(_ id: String, user: String? = nil, at t: Int = 1000, idle: Int = 900, absolute: Int = 43_200) -> SessionRecord {
        SessionRecord(sessionID: id, tokenHash: "tok-" + id, userID: user, createdAt: t, lastSeenAt: t, idleTimeout: idle,
                      absoluteExpiresAt: t + absolute,
                      state: SessionFlowState(stack: [FlowFrame(flow: "auth", runID: "run-" + id, state: ["step": "password", "n": .integer(1)])],
                                              challenge: PendingChallenge(challengeID: "ch-" + id,
                                                                          spec: ChallengeSpec(name: "getPassword", attemptsLeft: 3, payload: ["hint": "x"]),
                                                                          userID: user)))
    }

    /// Runs `body(i)` for i in 0..<n on n threads released together; returns when all finished.
    func concurrently(_ n: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for i in 0..<n {
            done.enter()
            Thread { gate.wait(); body(i); done.leave() }.start()
        }
        for _ in 0..<n { gate.signal() }
        done.wait()
    }

    final class Box<T>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: T
        init(_ v: T) { value = v }
        func mutate(_ f: (inout T) -> Void) { lock.lock(); f(&value); lock.unlock() }
        var get: T { lock.lock(); defer { lock.unlock() }; return value }
    }

    // MARK: Schema

    func testSchemaIsAtTheLatestVersionAndReopeningIsANoOp() throws {
        let s = try makeSubject()
        XCTAssertEqual(try s.store.schemaVersion(), SQLiteStore.migrations.count, Self.storeName)
        let again = try s.reopen(keyFile, [])
        XCTAssertEqual(try again.schemaVersion(), SQLiteStore.migrations.count)
    }

    // MARK: Users, codes, devices

    func testUsersRoundTripAndADuplicateIdIsAConflict() throws {
        let s = try makeSubject().store
        var u = user("alice")
        u.passwordHash = "$argon2id$v=19$…"
        u.activationRequiresIDV = false
        u.idvWorkflow = 3
        try s.createUser(u)
        try s.createUser(user("bob"))
        XCTAssertEqual(try s.user("alice"), u)
        XCTAssertNil(try s.user("carol"))
        XCTAssertEqual(try s.users().map(\.userID), ["alice", "bob"])
        XCTAssertThrowsError(try s.createUser(user("alice"))) { e in
            guard case StoreError.conflict = e else { return XCTFail("\(Self.storeName): \(e) is not a conflict") }
        }
        u.state = .locked
        u.lockedAt = 2000
        u.failedPasswordAttempts = 3
        u.updatedAt = 2000
        try s.saveUser(u)
        XCTAssertEqual(try s.user("alice"), u)
    }

    func testActivationCodeIsReplacedAndKeepsItsBinding() throws {
        let s = try makeSubject().store
        try s.createUser(user("alice"))
        try s.saveActivationCode(ActivationCodeRecord(userID: "alice", codeHash: "h1", salt: "s1", expiresAt: 5000, attemptsLeft: 5, createdAt: 1000))
        let second = ActivationCodeRecord(userID: "alice", codeHash: "h2", salt: "s2", expiresAt: 6000, attemptsLeft: 4, usedAt: nil, createdAt: 1100,
                                          boundSessionID: "sess-1", boundUntil: 7000)
        try s.saveActivationCode(second)
        XCTAssertEqual(try s.activationCode(userID: "alice"), second)
        XCTAssertNil(try s.activationCode(userID: "bob"))
    }

    func testDevicesRoundTripAndListByUser() throws {
        let s = try makeSubject().store
        try s.createUser(user("alice"))
        var d1 = DeviceRecord(deviceID: "d1", publicKey: "AAAA", label: "phone", createdAt: 10)
        let d2 = DeviceRecord(deviceID: "d2", publicKey: "BBBB", userID: "alice", ldaEnabled: true, createdAt: 20, lastUsedAt: 30)
        try s.createDevice(d1)
        try s.createDevice(d2)
        XCTAssertEqual(try s.device("d1"), d1)
        XCTAssertEqual(try s.devices(userID: "alice"), [d2])
        d1.userID = "alice"
        d1.lastUsedAt = 40
        try s.saveDevice(d1)
        XCTAssertEqual(try s.devices(userID: "alice").map(\.deviceID), ["d1", "d2"])
        XCTAssertThrowsError(try s.createDevice(d1))
    }

    /// The sweep's end of device registrations that never led to a login: only devices without a
    /// user, unused before the cutoff, that no session names — at most `limit` at a time.
    func testOnlyOldUnboundDevicesWithoutSessionsAreDeleted() throws {
        let s = try makeSubject().store
        try s.createUser(user("alice"))
        try s.createDevice(DeviceRecord(deviceID: "old1", publicKey: "AAAA", createdAt: 10))
        try s.createDevice(DeviceRecord(deviceID: "old2", publicKey: "AAAA", createdAt: 20))
        try s.createDevice(DeviceRecord(deviceID: "old3", publicKey: "AAAA", createdAt: 30))
        try s.createDevice(DeviceRecord(deviceID: "recent", publicKey: "AAAA", createdAt: 10, lastUsedAt: 500))
        try s.createDevice(DeviceRecord(deviceID: "bound", publicKey: "AAAA", userID: "alice", createdAt: 10))
        try s.createDevice(DeviceRecord(deviceID: "in-session", publicKey: "AAAA", createdAt: 10))
        var withDevice = session("s1")
        withDevice.deviceID = "in-session"
        try s.createSession(withDevice)
        XCTAssertEqual(try s.deleteUnboundDevices(unusedSince: 100, limit: 2), 2, Self.storeName)
        XCTAssertEqual(try s.deleteUnboundDevices(unusedSince: 100, limit: 2), 1)
        XCTAssertEqual(try s.deleteUnboundDevices(unusedSince: 100, limit: 2), 0)
        for gone in ["old1", "old2", "old3"] { XCTAssertNil(try s.device(gone), gone) }
        for kept in ["recent", "bound", "in-session"] { XCTAssertNotNil(try s.device(kept), kept) }
        XCTAssertEqual(try s.deleteUnboundDevices(unusedSince: 600, limit: 10), 1, "recent, once its last use is before the cutoff")
        XCTAssertNil(try s.device("recent"))
    }

    /// The credential-limit counters every node shares: upsert, read several at once, delete, and
    /// the sweep's idle delete that spares a back-off still running.
    func testLimitCountersRoundTripAndOnlyIdleEndedOnesAreSwept() throws {
        let s = try makeSubject().store
        XCTAssertEqual(try s.limitCounters(["auth|x"]), [:])
        try s.saveLimitCounter(LimitCounterRecord(key: "auth|a", tokens: 29.25, updatedAt: 100))
        try s.saveLimitCounter(LimitCounterRecord(key: "pair|b", failures: 2, rounds: 1, blockedUntil: 900, updatedAt: 50))
        try s.saveLimitCounter(LimitCounterRecord(key: "pair|c", failures: 1, updatedAt: 60))
        var a = try XCTUnwrap(try s.limitCounters(["auth|a", "pair|b", "none"])["auth|a"], Self.storeName)
        XCTAssertEqual(a.tokens, 29.25, accuracy: 0.001)
        XCTAssertEqual(try s.limitCounters(["auth|a", "pair|b", "none"]).count, 2)
        XCTAssertEqual(try s.limitCounters(["pair|b"])["pair|b"], LimitCounterRecord(key: "pair|b", failures: 2, rounds: 1, blockedUntil: 900, updatedAt: 50))
        a.tokens = 28.25
        a.updatedAt = 120
        try s.saveLimitCounter(a)
        XCTAssertEqual(try s.limitCounters(["auth|a"])["auth|a"]?.updatedAt, 120, "replaced, not duplicated")
        XCTAssertEqual(try s.limitCounterCount(), 3)
        // Idle before 110 and not blocked at 200: pair|c only (pair|b still backs off until 900).
        XCTAssertEqual(try s.deleteIdleLimitCounters(updatedBefore: 110, now: 200, limit: 10), 1)
        XCTAssertNil(try s.limitCounters(["pair|c"])["pair|c"])
        XCTAssertEqual(try s.deleteIdleLimitCounters(updatedBefore: 110, now: 1000, limit: 10), 1, "once its back-off ended")
        try s.deleteLimitCounter(key: "auth|a")
        try s.deleteLimitCounter(key: "auth|a")
        XCTAssertEqual(try s.limitCounterCount(), 0)
    }

    // MARK: Sessions

    func testSessionStateRoundTripsSealedAndTheTokenFindsIt() throws {
        let subject = try makeSubject()
        let s = subject.store
        let rec = session("s1", user: "alice")
        try s.createSession(rec)
        XCTAssertEqual(try s.session(tokenHash: "tok-s1"), rec)
        XCTAssertNil(try s.session(tokenHash: "tok-none"))
        // The same database under another key does not open the state (it is sealed, bound to the key).
        let otherKey = dir.appendingPathComponent("other.key").path
        _ = try TemplateVault.load(keyFile: otherKey, createIfMissing: true)
        do {
            let other = try subject.reopen(otherKey, [])
            XCTAssertThrowsError(try other.session(tokenHash: "tok-s1"), "\(Self.storeName): a state opened under another key")
        } catch {
            // PostgreSQL refuses a node with another key at open: also a refusal.
            XCTAssertTrue("\(error)".contains("same templates.key_file"), "\(error)")
        }
    }

    func testCompareAndSetLetsExactlyOneOfTwentyConcurrentUpdatesWin() throws {
        let s = try makeSubject().store
        let base = session("s1")
        try s.createSession(base)
        let wins = Box(0), conflicts = Box(0), errors = Box([String]())
        concurrently(20) { i in
            var next = base
            next.lastSeenAt = 2000 + i
            next.state.challenge = nil
            do {
                if try s.updateSession(next, expectedVersion: 0, consuming: "ch-s1") { wins.mutate { $0 += 1 } }
            } catch StoreError.conflict {
                conflicts.mutate { $0 += 1 }
            } catch {
                errors.mutate { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(wins.get, 1, Self.storeName)
        XCTAssertEqual(errors.get, [])
        let stored = try XCTUnwrap(s.session(tokenHash: "tok-s1"))
        XCTAssertEqual(stored.version, 1)
        XCTAssertNil(stored.state.challenge)
        XCTAssertEqual(try s.consumedChallengeSession("ch-s1"), "s1")
        XCTAssertEqual(try s.liveSessionVersion(sessionID: "s1"), 1)
    }

    func testAConsumedChallengeCannotBeConsumedAgainAndNothingIsWritten() throws {
        let s = try makeSubject().store
        try s.createSession(session("s1"))
        try s.createSession(session("s2"))
        XCTAssertTrue(try s.updateSession(session("s1"), expectedVersion: 0, consuming: "shared-challenge"))
        var two = session("s2")
        two.loggedIn = true
        XCTAssertThrowsError(try s.updateSession(two, expectedVersion: 0, consuming: "shared-challenge")) { e in
            guard case StoreError.conflict = e else { return XCTFail("\(e)") }
        }
        let stored = try XCTUnwrap(s.session(tokenHash: "tok-s2"))
        XCTAssertEqual(stored.version, 0, "\(Self.storeName): the update rolled back with the refused consumption")
        XCTAssertFalse(stored.loggedIn)
        // A stale version writes nothing and says so.
        XCTAssertFalse(try s.updateSession(two, expectedVersion: 7, consuming: nil))
    }

    func testTouchNeverMovesLastSeenBackAndKeepsTheVersion() throws {
        let s = try makeSubject().store
        try s.createSession(session("s1", at: 1000))
        try s.touchSession(sessionID: "s1", at: 1500)
        try s.touchSession(sessionID: "s1", at: 1200)
        let r = try XCTUnwrap(s.session(tokenHash: "tok-s1"))
        XCTAssertEqual(r.lastSeenAt, 1500)
        XCTAssertEqual(r.version, 0)
    }

    func testRevokeSessionsCountsBumpsAndHidesThem() throws {
        let s = try makeSubject().store
        try s.createSession(session("a1", user: "alice"))
        try s.createSession(session("a2", user: "alice"))
        try s.createSession(session("b1", user: "bob"))
        XCTAssertEqual(try s.revokeSessions(userID: "alice", at: 3000), 2)
        XCTAssertEqual(try s.revokeSessions(userID: "alice", at: 3001), 0)
        XCTAssertNil(try s.liveSessionVersion(sessionID: "a1"))
        XCTAssertEqual(try s.liveSessionVersion(sessionID: "b1"), 0)
        let a1 = try XCTUnwrap(s.session(tokenHash: "tok-a1"))
        XCTAssertEqual(a1.revokedAt, 3000)
        XCTAssertEqual(a1.version, 1)
    }

    func testPurgeableSessionsAreRevokedOrExpiredAndDeleteIsGuardedByVersion() throws {
        let s = try makeSubject().store
        try s.createSession(session("live", at: 1000, idle: 900))
        try s.createSession(session("idle", at: 100, idle: 900))            // idle expiry 1000
        try s.createSession(session("absolute", at: 900, idle: 5000, absolute: 50))  // absolute 950
        try s.createSession(session("revoked", user: "u", at: 1000))
        try s.revokeSessions(userID: "u", at: 1001)
        XCTAssertTrue(try s.updateSession(session("idle", at: 100, idle: 900), expectedVersion: 0, consuming: "ch-consumed"))
        let found = try s.purgeableSessions(now: 1100, limit: 10)
        XCTAssertEqual(Set(found.map(\.sessionID)), ["idle", "absolute", "revoked"], Self.storeName)
        let idle = try XCTUnwrap(found.first { $0.sessionID == "idle" })
        XCTAssertFalse(try s.deleteSession(sessionID: "idle", expectedVersion: idle.version + 1))
        XCTAssertTrue(try s.deleteSession(sessionID: "idle", expectedVersion: idle.version))
        XCTAssertNil(try s.session(tokenHash: "tok-idle"))
        XCTAssertNil(try s.consumedChallengeSession("ch-consumed"), "consumed ids go with their session")
        XCTAssertNotNil(try s.session(tokenHash: "tok-live"))
        XCTAssertEqual(try s.purgeableSessions(now: 1100, limit: 1).count, 1)
    }

    // MARK: Transactions

    func testATransactionThatThrowsLeavesNothingBehind() throws {
        let subject = try makeSubject()
        let s = subject.store
        try s.appendAudit(action: "before", userID: nil, sessionID: nil, details: .emptyObject, at: 1)
        struct Refused: Error {}
        XCTAssertThrowsError(try s.withTransaction {
            try s.createUser(user("ghost"))
            try s.createSession(session("ghost-session"))
            try s.appendAudit(action: "inside", userID: "ghost", sessionID: nil, details: ["n": 1], at: 2)
            throw Refused()
        }) { XCTAssertTrue($0 is Refused) }
        XCTAssertNil(try s.user("ghost"), Self.storeName)
        XCTAssertNil(try s.session(tokenHash: "tok-ghost-session"))
        XCTAssertEqual(try s.auditEntryCount(), 1)
        XCTAssertNil(try s.verifyAuditChain())
        // The next append chains to the entry that did commit.
        let next = try s.appendAudit(action: "after", userID: nil, sessionID: nil, details: .emptyObject, at: 3)
        XCTAssertEqual(next.seq, 2)
        XCTAssertNil(try s.verifyAuditChain())
    }

    func testNestedTransactionsJoinTheOuterOne() throws {
        let s = try makeSubject().store
        struct Late: Error {}
        XCTAssertThrowsError(try s.withTransaction {
            try s.withTransaction { try s.createUser(user("inner")) }
            XCTAssertNotNil(try s.user("inner"), "the outer transaction sees the inner one's write")
            throw Late()
        })
        XCTAssertNil(try s.user("inner"), "\(Self.storeName): the inner write rolled back with the outer transaction")
        try s.withTransaction {
            try s.withTransaction { try s.createUser(user("kept")) }
        }
        XCTAssertNotNil(try s.user("kept"))
    }

    // MARK: Audit chain

    func testAuditChainVerifiesAndFindsTheFirstAlteredEntry() throws {
        let subject = try makeSubject()
        let s = subject.store
        for i in 1...6 { try s.appendAudit(action: "test.\(i)", userID: "u", sessionID: i % 2 == 0 ? "s" : nil, details: ["n": .integer(i), "b": "x/y"], at: 100 + i) }
        XCTAssertNil(try s.verifyAuditChain())
        let last = try s.auditEntries(limit: 2)
        XCTAssertEqual(last.map(\.seq), [5, 6])
        XCTAssertEqual(last[1].prevHash, last[0].hash)
        XCTAssertEqual(last[1].details, ["n": .integer(6), "b": "x/y"])
        try subject.raw("UPDATE audit_log SET details = '{\"n\":99}' WHERE seq = 4")
        XCTAssertEqual(try s.verifyAuditChain(), 4, Self.storeName)
    }

    /// Removing the chain head row is tampering like any other: both stores report the first
    /// entry not accounted for (the two copies of this code once disagreed — SQLite answered
    /// `last + 1`, PostgreSQL nil, "the chain verifies").
    func testAMissingChainHeadIsReportedAsTampering() throws {
        let subject = try makeSubject()
        let s = subject.store
        for i in 1...3 { try s.appendAudit(action: "test.\(i)", userID: "u", sessionID: nil, details: ["n": .integer(i)], at: 100 + i) }
        XCTAssertNil(try s.verifyAuditChain())
        try subject.raw("DELETE FROM audit_head")
        XCTAssertEqual(try s.verifyAuditChain(), 4, Self.storeName)
    }

    /// A row the code cannot read as its record is an error, never a record with made-up values
    /// (the two copies of the row mapping once disagreed — SQLite read an unknown user state as
    /// `locked`, a missing number as 0 and missing text as "", where PostgreSQL threw).
    func testARowThatDoesNotReadAsItsRecordIsAnErrorNotADefault() throws {
        let subject = try makeSubject()
        let s = subject.store
        try s.createUser(user("odd"))
        try s.createUser(user("odd2"))
        try subject.raw("UPDATE users SET state = 'bogus' WHERE user_id = 'odd'")
        XCTAssertThrowsError(try s.user("odd"), Self.storeName) { XCTAssertEqual(($0 as? StoreError).map { "\($0)".hasPrefix("database:") }, true, "\($0)") }
        XCTAssertThrowsError(try s.users(), Self.storeName)
        // A value of the wrong type: PostgreSQL refuses to store it; SQLite stores it, and reading it is an error.
        try subject.raw("UPDATE users SET state = 'active' WHERE user_id = 'odd'")
        if (try? subject.raw("UPDATE users SET created_at = 'yesterday' WHERE user_id = 'odd2'")) != nil {
            XCTAssertThrowsError(try s.user("odd2"), Self.storeName)
        }
        XCTAssertEqual(try s.user("odd")?.state, .active)
    }

    func testConcurrentAppendsFromManyThreadsStayOneLinearChain() throws {
        let subject = try makeSubject()
        let s = subject.store
        let errors = Box([String]())
        concurrently(8) { t in
            for i in 0..<25 {
                do {
                    try s.withTransaction {
                        try s.appendAudit(action: "thread.\(t)", userID: nil, sessionID: nil, details: ["i": .integer(i)], at: 1000 + i)
                        if i % 5 == 0 { try s.createUser(UserRecord(userID: "u\(t)-\(i)", createdAt: i, updatedAt: i)) }
                    }
                } catch { errors.mutate { $0.append("\(error)") } }
            }
        }
        XCTAssertEqual(errors.get, [], Self.storeName)
        XCTAssertEqual(try s.auditEntryCount(), 200)
        XCTAssertNil(try s.verifyAuditChain())
        XCTAssertEqual(try s.auditEntries(limit: 200).map(\.seq), Array(1...200))
        XCTAssertEqual(try s.users().count, 40)
    }

    // MARK: Flow runs and workflow records

    // MARK: Chip trust material (migration 5)

    func testTrustMaterialIsKeptOncePerDigestListedOldestFirstAndRemoved() throws {
        let subject = try makeSubject()
        let t = try XCTUnwrap(subject.store as? any TrustMaterialStore, Self.storeName)
        func record(_ id: String, sha: String, at time: Int, bytes: [UInt8] = [0x30, 0x82, 0x00, 0x00, 0xFF]) -> TrustMaterialRecord {
            TrustMaterialRecord(id: id, kind: "csca", sha256: sha, bytes: Data(bytes), cscas: 1, crls: 0, documentSigners: 0, sourceName: "test.der", importedAt: time)
        }
        XCTAssertEqual(try t.trustMaterials(), [])
        XCTAssertTrue(try t.addTrustMaterial(record("t2", sha: "bb", at: 20, bytes: Array(0...255))))
        XCTAssertTrue(try t.addTrustMaterial(record("t1", sha: "aa", at: 10)))
        XCTAssertFalse(try t.addTrustMaterial(record("t3", sha: "aa", at: 30)), "the same digest again: \(Self.storeName)")
        XCTAssertFalse(try t.addTrustMaterial(record("t1", sha: "cc", at: 40)), "the same id again")
        XCTAssertEqual(try t.trustMaterials(), [record("t1", sha: "aa", at: 10), record("t2", sha: "bb", at: 20, bytes: Array(0...255))], Self.storeName)
        // Another connection / node sees it; it survives a reopen.
        subject.store.close()
        let again = try XCTUnwrap(try subject.reopen(keyFile, []) as? any TrustMaterialStore)
        XCTAssertEqual(try again.trustMaterials().map(\.id), ["t1", "t2"])
        XCTAssertTrue(try again.removeTrustMaterial(id: "t1"))
        XCTAssertFalse(try again.removeTrustMaterial(id: "t1"))
        XCTAssertEqual(try again.trustMaterials().map(\.id), ["t2"])
    }

    func testConcurrentImportsOfOneFileKeepOneRecord() throws {
        let s = try makeSubject().store
        let t = try XCTUnwrap(s as? any TrustMaterialStore)
        let added = Box([Bool]()), errors = Box([String]())
        concurrently(8) { i in
            do {
                let ok = try t.addTrustMaterial(TrustMaterialRecord(id: "t\(i)", kind: "master_list", sha256: "same", bytes: Data([1, 2, 3]), cscas: 3, crls: 0,
                                                                    documentSigners: 0, sourceName: "ml.ml", importedAt: 100 + i))
                added.mutate { $0.append(ok) }
            } catch { errors.mutate { $0.append("\(error)") } }
        }
        XCTAssertEqual(errors.get, [], Self.storeName)
        XCTAssertEqual(added.get.filter { $0 }.count, 1, Self.storeName)
        XCTAssertEqual(try t.trustMaterials().count, 1)
    }

    func testFlowRunsEndOnceAndOutcomesComeNewestFirst() throws {
        let s = try makeSubject().store
        for (i, run) in ["r1", "r2", "r3"].enumerated() {
            try s.startFlowRun(FlowRunRecord(runID: run, sessionID: "s", userID: "alice", flow: "idv.biometric", idvWorkflow: 8, startedAt: 100 + i))
        }
        try s.startFlowRun(FlowRunRecord(runID: "other", sessionID: "s", userID: "alice", flow: "auth", idvWorkflow: nil, startedAt: 100))
        try s.endFlowRun(runID: "r1", at: 200, outcome: .notMatched, errorCode: 0)
        try s.endFlowRun(runID: "r2", at: 300, outcome: .matched, errorCode: 0)
        try s.endFlowRun(runID: "r2", at: 400, outcome: .expired, errorCode: 0)   // already ended: no change
        try s.endFlowRun(runID: "other", at: 500, outcome: .loggedIn, errorCode: 0)
        XCTAssertEqual(try s.flowOutcomes(userID: "alice", flow: "idv.biometric", since: 0), [.matched, .notMatched], Self.storeName)
        XCTAssertEqual(try s.flowOutcomes(userID: "alice", flow: "idv.biometric", since: 250), [.matched])
        XCTAssertEqual(try s.flowOutcomes(userID: "bob", flow: "idv.biometric", since: 0), [])
    }

    /// The expiry sweep of a session that never identified a user deletes its runs without a user
    /// — and only those, and only that session's (docs/LIMITS.md).
    func testAnonymousFlowRunsOfOneSessionAreDeletedAndNothingElse() throws {
        let s = try makeSubject().store
        try s.startFlowRun(FlowRunRecord(runID: "a1", sessionID: "anon", userID: nil, flow: "auth", idvWorkflow: nil, startedAt: 100))
        try s.startFlowRun(FlowRunRecord(runID: "a2", sessionID: "anon", userID: nil, flow: "auth", idvWorkflow: nil, startedAt: 110))
        try s.startFlowRun(FlowRunRecord(runID: "k1", sessionID: "anon", userID: "alice", flow: "idv.biometric", idvWorkflow: 8, startedAt: 120))
        try s.startFlowRun(FlowRunRecord(runID: "o1", sessionID: "other", userID: nil, flow: "auth", idvWorkflow: nil, startedAt: 100))
        try s.endFlowRun(runID: "a1", at: 200, outcome: .reset, errorCode: 0)
        try s.endFlowRun(runID: "k1", at: 200, outcome: .matched, errorCode: 0)
        XCTAssertEqual(try s.deleteAnonymousFlowRuns(sessionID: "anon"), 2, Self.storeName)
        XCTAssertEqual(try s.deleteAnonymousFlowRuns(sessionID: "anon"), 0)
        XCTAssertEqual(try s.flowOutcomes(userID: "alice", flow: "idv.biometric", since: 0), [.matched], "a run with a user is kept")
        XCTAssertEqual(try s.withTransaction { try s.deleteAnonymousFlowRuns(sessionID: "other") }, 1, "inside a transaction too")
    }

    func testTemplatesConsentsScansAndMediaRoundTrip() throws {
        let s = try makeSubject().store
        let vault = try TemplateVault.load(keyFile: keyFile, createIfMissing: true)
        try s.createUser(user("alice"))
        XCTAssertNil(try s.biometricTemplate(userID: "alice"))
        let t1 = BiometricTemplateRecord(userID: "alice", sealed: vault.sealTemplate([0.25, -1, 3], userID: "alice"), model: "dlib", consentID: "c1", createdAt: 10)
        try s.saveBiometricTemplate(t1)
        let t2 = BiometricTemplateRecord(userID: "alice", sealed: vault.sealTemplate([1, 2, 3], userID: "alice"), model: "dlib", consentID: "c2", createdAt: 20)
        try s.saveBiometricTemplate(t2)
        XCTAssertEqual(try s.biometricTemplate(userID: "alice"), t2, Self.storeName)
        XCTAssertTrue(try s.deleteBiometricTemplate(userID: "alice"))
        XCTAssertFalse(try s.deleteBiometricTemplate(userID: "alice"))

        let c1 = ConsentRecord(consentID: "c1", userID: "alice", kind: "biometric_template", granted: true, sessionID: "s", runID: "r", flow: "idv.optin",
                               idvWorkflow: 6, textVersion: "v1", recordedAt: 50)
        let c2 = ConsentRecord(consentID: "c0", userID: "alice", kind: "biometric_template", granted: false, sessionID: nil, runID: nil, flow: "idv.optout",
                               idvWorkflow: nil, textVersion: "v1", recordedAt: 50)
        try s.recordConsent(c1)
        try s.recordConsent(c2)
        XCTAssertEqual(try s.consents(userID: "alice"), [c1, c2], "same time: insertion order")
        XCTAssertThrowsError(try s.recordConsent(c1))

        let report = vault.seal(Array("{\"doc\":1}".utf8), associatedData: VaultBinding.scan(scanID: "scan1"))
        let scan = DocumentScanRecord(scanID: "scan1", userID: "alice", sessionID: "s", runID: "r", idvWorkflow: 7, reason: "address change",
                                      overallStatus: "VALID", sealedReport: report, createdAt: 60)
        let bare = DocumentScanRecord(scanID: "scan0", userID: "alice", sessionID: nil, runID: nil, idvWorkflow: nil, reason: "kyc",
                                      overallStatus: "INVALID", sealedReport: nil, createdAt: 60)
        try s.saveDocumentScan(scan)
        try s.saveDocumentScan(bare)
        XCTAssertEqual(try s.documentScans(userID: "alice"), [scan, bare])

        let page = MediaRecord(mediaID: "m1", runID: "r", kind: .portrait, sealed: vault.seal([1, 2, 3, 0, 255], associatedData: VaultBinding.media(runID: "r", kind: "portrait")), createdAt: 70)
        let frame = MediaRecord(mediaID: "m2", runID: "r", kind: .selfie, sealed: vault.seal([9], associatedData: VaultBinding.media(runID: "r", kind: "selfie")), createdAt: 71)
        let other = MediaRecord(mediaID: "m3", runID: "r2", kind: .portrait, sealed: vault.seal([], associatedData: VaultBinding.media(runID: "r2", kind: "portrait")), createdAt: 72)
        for m in [page, frame, other] { try s.saveMedia(m) }
        XCTAssertEqual(try s.media("m1"), page)
        XCTAssertEqual(try s.mediaCount(runID: "r"), 2)
        try s.releaseMedia(runID: "r", keepUntil: 500)
        XCTAssertEqual(try s.media("m2")?.expiresAt, 500)
        try s.releaseMedia(runID: "r", keepUntil: 900)   // only rows not yet released
        XCTAssertEqual(try s.media("m2")?.expiresAt, 500)
        XCTAssertEqual(try s.purgeExpiredMedia(now: 499), 0)
        XCTAssertEqual(try s.purgeExpiredMedia(now: 500), 2)
        XCTAssertEqual(try s.mediaCount(runID: "r"), 0)
        try s.releaseMedia(runID: "r2", keepUntil: nil)
        XCTAssertNil(try s.media("m3"))
    }

    // MARK: Verification links

    func testAVerificationLinkIsRedeemedOnceOfTwentyConcurrentTries() throws {
        let s = try makeSubject().store
        let links = try XCTUnwrap(s as? any VerificationLinkStore, "\(Self.storeName) keeps no verification links")
        try s.createUser(user("alice"))
        let link = VerificationLinkRecord(linkID: "l1", tokenHash: "th1", userID: "alice", flow: "idv.postlogin.kyc", createdAt: 10, expiresAt: 100)
        try links.createVerificationLink(link)
        XCTAssertEqual(try links.verificationLink(tokenHash: "th1"), link)
        XCTAssertNil(try links.verificationLink(tokenHash: "nope"))
        XCTAssertThrowsError(try links.createVerificationLink(link))
        let wins = Box(0)
        concurrently(20) { i in if (try? links.consumeVerificationLink(linkID: "l1", at: 20 + i)) == true { wins.mutate { $0 += 1 } } }
        XCTAssertEqual(wins.get, 1, Self.storeName)
        try links.bindVerificationLink(linkID: "l1", sessionID: "sess")
        let used = try XCTUnwrap(links.verificationLink(tokenHash: "th1"))
        XCTAssertNotNil(used.usedAt)
        XCTAssertEqual(used.sessionID, "sess")
    }

    // MARK: Restart and key rotation

    func testEverythingCommittedSurvivesAReopen() throws {
        let subject = try makeSubject()
        let s = subject.store
        try s.createUser(user("alice"))
        try s.createSession(session("s1", user: "alice"))
        XCTAssertTrue(try s.updateSession(session("s1", user: "alice"), expectedVersion: 0, consuming: "c-1"))
        try s.appendAudit(action: "a", userID: "alice", sessionID: "s1", details: .emptyObject, at: 5)
        s.close()
        let again = try subject.reopen(keyFile, [])
        XCTAssertEqual(try again.user("alice")?.userID, "alice", Self.storeName)
        XCTAssertEqual(try again.session(tokenHash: "tok-s1")?.version, 1)
        XCTAssertEqual(try again.consumedChallengeSession("c-1"), "s1")
        XCTAssertEqual(try again.auditEntryCount(), 1)
        XCTAssertNil(try again.verifyAuditChain())
    }

    func testAClosedStoreRefusesCalls() throws {
        let s = try makeSubject().store
        s.close()
        s.close()
        XCTAssertThrowsError(try s.user("x")) { e in XCTAssertEqual(e as? StoreError, .closed, "\(Self.storeName): \(e)") }
    }

    func testRekeyResealsEveryBoxAndTheOldKeyIsNoLongerNeeded() throws {
        let subject = try makeSubject()
        let s = subject.store
        let old = try TemplateVault.load(keyFile: keyFile, createIfMissing: true)
        try s.createUser(user("alice"))
        try s.saveBiometricTemplate(BiometricTemplateRecord(userID: "alice", sealed: old.sealTemplate([0.5, 0.25], userID: "alice"), model: "dlib", consentID: "c", createdAt: 1))
        try s.saveDocumentScan(DocumentScanRecord(scanID: "sc", userID: "alice", sessionID: nil, runID: nil, idvWorkflow: nil, reason: "r", overallStatus: "VALID",
                                                  sealedReport: old.seal([7, 7], associatedData: VaultBinding.scan(scanID: "sc")), createdAt: 1))
        try s.saveMedia(MediaRecord(mediaID: "m", runID: "run", kind: .portrait, sealed: old.seal([1], associatedData: VaultBinding.media(runID: "run", kind: "portrait")), createdAt: 1))
        for i in 0..<5 { try s.createSession(session("s\(i)", user: "alice")) }
        s.close()

        let newKey = dir.appendingPathComponent("new.key").path
        let vault = try TemplateVault.load(keyFile: newKey, previousKeyFiles: [keyFile], createIfMissing: true)
        let rotated = try subject.reopen(newKey, [keyFile])
        let before = try rotated.sealedInventory(vault: vault)
        XCTAssertEqual(before.previous, ["biometric_templates": 1, "document_scans": 1, "idv_media": 1, "sessions": 5], Self.storeName)
        XCTAssertEqual(before.current, [:])
        let counts = try rotated.resealUnderCurrentKey(vault: vault, batchSize: 2)
        XCTAssertEqual(counts, ["biometric_templates": 1, "document_scans": 1, "idv_media": 1, "sessions": 5, "signing_keys": 0], "no evidence key yet (EvidenceKeyRekeyTests reseals some)")
        XCTAssertEqual(try rotated.sealedInventory(vault: vault).current, ["biometric_templates": 1, "document_scans": 1, "idv_media": 1, "sessions": 5])
        rotated.close()

        // Without the old key everything still opens.
        let fresh = try subject.reopen(newKey, [])
        let only = try TemplateVault.load(keyFile: newKey, createIfMissing: false)
        let t = try XCTUnwrap(fresh.biometricTemplate(userID: "alice"))
        XCTAssertEqual(try only.openTemplate(t.sealed, userID: "alice"), [0.5, 0.25])
        XCTAssertEqual(try fresh.session(tokenHash: "tok-s3")?.sessionID, "s3")
        XCTAssertEqual(try only.open(XCTUnwrap(fresh.media("m")).sealed, associatedData: VaultBinding.media(runID: "run", kind: "portrait")), [1])
    }

    // MARK: Chip trust material (migration 5)

    func testTrustMaterialIsKeptOnceListedRemovedAndSurvivesAReopen() throws {
        let s = try makeSubject()
        let t = try XCTUnwrap(s.store as? any TrustMaterialStore, Self.storeName)
        func record(_ n: UInt8, at time: Int) -> TrustMaterialRecord {
            TrustMaterialRecord(id: "tm_\(n)", kind: "csca_certificate", sha256: String(repeating: String(n), count: 64), bytes: Data([0x30, 0x82, n, 0]),
                                cscas: 1, crls: 0, documentSigners: 0, sourceName: "csca\(n).cer", importedAt: time)
        }
        XCTAssertEqual(try t.trustMaterials(), [])
        XCTAssertTrue(try t.addTrustMaterial(record(2, at: 20)))
        XCTAssertTrue(try t.addTrustMaterial(record(1, at: 10)))
        var again = record(1, at: 30)
        again.id = "tm_other"
        XCTAssertFalse(try t.addTrustMaterial(again), "the same file (sha256) is kept once")
        XCTAssertEqual(try t.trustMaterials(), [record(1, at: 10), record(2, at: 20)], "oldest first, bytes as given")
        XCTAssertTrue(try t.removeTrustMaterial(id: "tm_2"))
        XCTAssertFalse(try t.removeTrustMaterial(id: "tm_2"))
        let reopened = try XCTUnwrap(try s.reopen(keyFile, []) as? any TrustMaterialStore)
        XCTAssertEqual(try reopened.trustMaterials(), [record(1, at: 10)])
    }
}
