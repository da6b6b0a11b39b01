import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVStorePostgres
@testable import IDVStoreSQLite
import XCTest

/// Every ``StoreContractTests`` test again on PostgreSQL (a fresh database per test on the scratch
/// cluster, ``ScratchPostgres``), plus what only a store shared by several nodes must do:
/// migrations raced by nodes starting together, a node with another key refused, sweeps on two
/// nodes sharing the work, the write lock, a swallowed statement error, a broken connection.
final class PostgresStoreContractTests: StoreContractTests {
    override class var storeName: String { "PostgreSQL" }

    private var databases: [String] = []

    override func tearDown() {
        super.tearDown()
        databases.forEach(ScratchPostgres.drop)
        databases.removeAll()
    }

    func settings(_ url: String, poolSize: Int = 8) throws -> PostgresConnectionSettings {
        PostgresConnectionSettings(url: url, password: try ScratchPostgres.require().password, poolSize: poolSize)
    }

    func newDatabase() throws -> String {
        let url = try ScratchPostgres.freshDatabase()
        databases.append(url)
        return url
    }

    func open(_ url: String, key: String? = nil, previous: [String] = [], poolSize: Int = 8, createSchema: Bool = true) throws -> PostgresStore {
        track(try PostgresStore(settings: settings(url, poolSize: poolSize), keyFile: key ?? keyFile, previousKeyFiles: previous, createSchema: createSchema))
    }

    override func makeSubject() throws -> Subject {
        let url = try newDatabase()
        let store = try open(url)
        return Subject(store: store,
                       reopen: { [unowned self] key, previous in try self.open(url, key: key, previous: previous) },
                       raw: { sql in try store.withConnection { try $0.execute(sql) } })
    }

    // MARK: Only PostgreSQL

    func testMigrationsMirrorSQLiteOneForOne() {
        XCTAssertEqual(PostgresStore.migrationCount, SQLiteStore.migrations.count,
                       "a SQLite migration was added without its PostgreSQL twin (Sources/IDVStorePostgres/PostgresMigrations.swift)")
    }

    func testNodesStartingTogetherApplyEachMigrationOnce() throws {
        let url = try newDatabase()
        let opened = Box([PostgresStore]()), errors = Box([String]())
        let settings = try settings(url, poolSize: 2), key = keyFile
        concurrently(6) { _ in
            do {
                let s = try PostgresStore(settings: settings, keyFile: key)
                opened.mutate { $0.append(s) }
            } catch { errors.mutate { $0.append("\(error)") } }
        }
        opened.get.forEach { _ = track($0) }
        XCTAssertEqual(errors.get, [])
        XCTAssertEqual(opened.get.count, 6)
        let s = try XCTUnwrap(opened.get.first)
        XCTAssertEqual(try s.schemaVersion(), PostgresStore.migrationCount)
        XCTAssertEqual(try s.query("SELECT count(*) FROM idvd_schema").rows.first?.int(0), 1)
        XCTAssertEqual(try s.query("SELECT count(*) FROM audit_head").rows.first?.int(0), 1)
    }

    func testASchemaNewerThanThisBuildIsRefused() throws {
        let url = try newDatabase()
        let s = try open(url)
        try s.withConnection { try $0.execute("UPDATE idvd_schema SET version = 999") }
        XCTAssertThrowsError(try open(url)) { e in XCTAssertTrue("\(e)".contains("newer than this build"), "\(e)") }
    }

    func testWithoutCreateSchemaAnEmptyDatabaseIsRefused() throws {
        let url = try newDatabase()
        XCTAssertThrowsError(try open(url, createSchema: false)) { e in XCTAssertTrue("\(e)".contains("no OpenIDV schema"), "\(e)") }
        _ = try open(url)
        XCTAssertEqual(try open(url, createSchema: false).schemaVersion(), PostgresStore.migrationCount)
    }

    func testANodeWithAnotherKeyFileIsRefusedAndARotatingNodeIsNot() throws {
        let url = try newDatabase()
        _ = try open(url)
        let other = dir.appendingPathComponent("other.key").path
        XCTAssertThrowsError(try open(url, key: other)) { e in XCTAssertTrue("\(e)".contains("does not exist"), "\(e)") }
        _ = try TemplateVault.load(keyFile: other, createIfMissing: true)
        XCTAssertThrowsError(try open(url, key: other)) { e in
            XCTAssertTrue("\(e)".contains("same templates.key_file"), "\(e)")
        }
        // The new key as current with the recorded one as previous: a node in the middle of a rotation.
        XCTAssertNoThrow(try open(url, key: other, previous: [keyFile]))
    }

    func testSweepsOnTwoNodesClaimDisjointSessions() throws {
        let url = try newDatabase()
        let a = try open(url), b = try open(url)
        for i in 0..<40 { try a.createSession(session("x\(i)", at: 100, idle: 10)) }
        let got = Box([String: [String]]())
        concurrently(2) { i in
            let s = i == 0 ? a : b
            let ids = ((try? s.purgeableSessions(now: 1000, limit: 25)) ?? []).map(\.sessionID)
            got.mutate { $0["node\(i)"] = ids }
        }
        let n0 = Set(got.get["node0"] ?? []), n1 = Set(got.get["node1"] ?? [])
        XCTAssertTrue(n0.isDisjoint(with: n1), "both nodes claimed \(n0.intersection(n1))")
        XCTAssertEqual(n0.count + n1.count, 40)
        // A node is offered its own claims again; the other node is not, until the claim lapses.
        XCTAssertEqual(Set(try a.purgeableSessions(now: 1000, limit: 50).map(\.sessionID)), n0)
        XCTAssertEqual(Set(try b.purgeableSessions(now: 1000, limit: 50).map(\.sessionID)), n1)
        XCTAssertEqual(try b.purgeableSessions(now: 1000 + PostgresStore.sweepClaimSeconds, limit: 50).count, 40)
    }

    func testMediaPurgesOnTwoNodesDeleteEachRowOnce() throws {
        let url = try newDatabase()
        let a = try open(url), b = try open(url)
        let vault = try TemplateVault.load(keyFile: keyFile, createIfMissing: true)
        try a.withTransaction {
            for i in 0..<1200 {
                try a.saveMedia(MediaRecord(mediaID: "m\(i)", runID: "r\(i % 7)", kind: .selfie, sealed: vault.seal([UInt8(i % 256)], associatedData: "x"),
                                            createdAt: 1, expiresAt: i < 1100 ? 50 : 5000))
            }
        }
        let counts = Box([Int]())
        concurrently(2) { i in
            let n = (try? (i == 0 ? a : b).purgeExpiredMedia(now: 100)) ?? -1
            counts.mutate { $0.append(n) }
        }
        XCTAssertEqual(counts.get.reduce(0, +), 1100, "\(counts.get)")
        XCTAssertEqual(try a.query("SELECT count(*) FROM idv_media").rows.first?.int(0), 100)
    }

    func testWriteTransactionsOfTwoNodesRunOneAtATime() throws {
        let url = try newDatabase()
        let a = try open(url), b = try open(url)
        try a.createUser(user("counter"))
        // Read-modify-write of one counter from two nodes, 2 × 30 times: with the write lock no
        // increment is lost (at plain READ COMMITTED without it, some would be).
        concurrently(2) { i in
            let s = i == 0 ? a : b
            for _ in 0..<30 {
                try? s.withTransaction {
                    var u = try XCTUnwrap(s.user("counter"))
                    u.failedPasswordAttempts += 1
                    try s.saveUser(u)
                }
            }
        }
        XCTAssertEqual(try a.user("counter")?.failedPasswordAttempts, 60)
        XCTAssertEqual(a.waitStatistics.writeTransactions + b.waitStatistics.writeTransactions, 60)
        // Each node's lock-wait histogram (`idvd_store_write_lock_wait_seconds`) has one observation per
        // write transaction, and its sum is the total wait.
        for s in [a, b] {
            let h = try XCTUnwrap(s.writeLockWaits())
            XCTAssertEqual(h.count, s.waitStatistics.writeTransactions)
            XCTAssertEqual(h.sum, s.waitStatistics.writeLockWaitSeconds, accuracy: 1e-9)
            XCTAssertEqual(h.counts.last, h.count, "every wait is under the last bound (5 s)")
        }
    }

    func testASwallowedStatementErrorFailsTheTransactionAtCommit() throws {
        let s = try makeSubject().store as! PostgresStore
        try s.createUser(user("alice"))
        XCTAssertThrowsError(try s.withTransaction {
            try s.createUser(user("bob"))
            _ = try? s.createUser(user("alice"))   // a conflict the caller ignores: PostgreSQL aborted the transaction
        }) { e in
            guard case StoreError.conflict = e else { return XCTFail("\(e)") }
        }
        XCTAssertNil(try s.user("bob"), "nothing of the failed transaction was committed")
        try s.createUser(user("carol"))   // the connection went back to the pool clean
        XCTAssertNotNil(try s.user("carol"))
    }

    func testAConnectionEndedByTheServerIsReplaced() throws {
        let url = try newDatabase()
        let s = try open(url, poolSize: 2)
        try s.createUser(user("alice"))
        let killer = try open(url)
        _ = try killer.withConnection { c in
            try c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        }
        // Every pooled connection of `s` is gone; the store notices at checkout and reconnects.
        for _ in 0..<4 { XCTAssertEqual(try s.user("alice")?.userID, "alice") }
    }

    func testAuditTruncatedAtTheEndIsDetectedByTheChainHead() throws {
        let s = try makeSubject().store as! PostgresStore
        for i in 1...5 { try s.appendAudit(action: "a\(i)", userID: nil, sessionID: nil, details: .emptyObject, at: i) }
        try s.withConnection { try $0.execute("DELETE FROM audit_log WHERE seq >= 4") }
        XCTAssertEqual(try s.verifyAuditChain(), 4)
    }

    func testTheURLPasswordNeverAppearsInMessages() throws {
        let server = try ScratchPostgres.require()
        let withPassword = ScratchPostgres.url(server.url, database: "no_such_db").replacingOccurrences(of: "://idvd@", with: "://idvd:hunter2secret@")
        let settings = PostgresConnectionSettings(url: withPassword)
        XCTAssertEqual(settings.redactedURL.contains("hunter2secret"), false)
        XCTAssertTrue(settings.redactedURL.contains("idvd:***@"), settings.redactedURL)
        XCTAssertThrowsError(try PostgresStore(settings: settings, keyFile: keyFile)) { e in
            XCTAssertFalse("\(e)".contains("hunter2secret"), "\(e)")
        }
    }
}
