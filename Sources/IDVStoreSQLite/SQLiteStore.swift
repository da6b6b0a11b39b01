internal import CSQLite
import Foundation
import IDVCore
import IDVCrypto
import IDVEngine

/// A value bound to or read from a SQLite statement.
enum SQLValue: Sendable, Equatable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])

    init(_ s: String?) { self = s.map { .text($0) } ?? .null }
    init(_ i: Int?) { self = i.map { .int(Int64($0)) } ?? .null }
    init(_ b: Bool) { self = .int(b ? 1 : 0) }

    var int: Int? { if case let .int(i) = self { return Int(i) }; return nil }
    var text: String? { if case let .text(s) = self { return s }; return nil }
}

private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The default ``Store``: one SQLite file in WAL mode, prepared statements only (cached per SQL
/// text), versioned migrations applied at open. One WRITER connection serialised by a recursive
/// lock — every write and every read inside a transaction — beside a few read-only READER
/// connections (WAL lets them read the last commit while the writer writes): a read outside a
/// transaction takes a free reader and never waits for the write lock. Nothing slow (Argon2id,
/// image work) runs under the write lock; the time spent waiting for it is measured
/// (``writeLockWaits()``, `idvd_store_write_lock_wait_seconds` in `/metrics`).
public final class SQLiteStore: Store, @unchecked Sendable {
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private let lock = NSRecursiveLock()
    private var transactionDepth = 0
    /// The thread inside the writer's transaction (guarded by `stateLock`): its reads stay on the writer.
    private var transactionOwner: pthread_t?
    /// How many statements run by ``exec(_:)`` failed with SQLITE_BUSY or SQLITE_LOCKED (read by
    /// ``retryingBusyAtOpen(_:)`` to tell a transient lock from a real failure).
    private var busyFailures = 0
    private let stateLock = NSLock()
    private var lockWaits = DurationHistogram(buckets: DurationHistogram.lockWaitBuckets)
    private var readers: [Reader] = []
    private var freeReaders: [Reader] = []
    /// Read-only connections opened beside the writer (0 for an in-memory database).
    public var readerCount: Int { stateLock.lock(); defer { stateLock.unlock() }; return readers.count }
    private var readerReads = 0, writerReads = 0
    /// Reads outside a transaction served by a reader connection, and those that found no reader
    /// free (or none opened) and ran on the writer.
    public var readRouting: (onReaders: Int, onWriter: Int) {
        stateLock.lock(); defer { stateLock.unlock() }
        return (readerReads, writerReads)
    }
    private var runs: [String: Int] = [:]
    private var statesOpened = 0
    public let path: String
    /// Seals `sessions.state` at rest (flow stack + current challenge payload).
    let stateSealer: SessionStateSealer

    /// Migrations: index + 1 is the schema version (`PRAGMA user_version`). Append, never edit.
    static let migrations: [String] = [
        // 1: core tables + tables reserved for the IDV workflow engine.
        """
        CREATE TABLE users (
            user_id TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            activation_requires_idv INTEGER NOT NULL,
            idv_workflow INTEGER NOT NULL,
            password_hash TEXT,
            failed_password_attempts INTEGER NOT NULL DEFAULT 0,
            locked_at INTEGER,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        );
        CREATE TABLE activation_codes (
            user_id TEXT PRIMARY KEY REFERENCES users(user_id) ON DELETE CASCADE,
            code_hash TEXT NOT NULL,
            salt TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            attempts_left INTEGER NOT NULL,
            used_at INTEGER,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE devices (
            device_id TEXT PRIMARY KEY,
            public_key TEXT NOT NULL,
            label TEXT,
            user_id TEXT REFERENCES users(user_id) ON DELETE SET NULL,
            lda_enabled INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            last_used_at INTEGER
        );
        CREATE INDEX devices_user ON devices(user_id);
        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            user_id TEXT,
            device_id TEXT,
            logged_in INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            last_seen_at INTEGER NOT NULL,
            idle_timeout INTEGER NOT NULL,
            absolute_expires_at INTEGER NOT NULL,
            revoked_at INTEGER,
            version INTEGER NOT NULL,
            state TEXT NOT NULL
        );
        CREATE INDEX sessions_user ON sessions(user_id);
        CREATE TABLE consumed_challenges (
            challenge_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            consumed_at INTEGER NOT NULL
        );
        CREATE TABLE flow_runs (
            run_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            user_id TEXT,
            flow TEXT NOT NULL,
            idv_workflow INTEGER,
            started_at INTEGER NOT NULL,
            ended_at INTEGER,
            outcome TEXT,
            error_code INTEGER
        );
        CREATE TABLE audit_log (
            seq INTEGER PRIMARY KEY,
            at INTEGER NOT NULL,
            action TEXT NOT NULL,
            user_id TEXT,
            session_id TEXT,
            details TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        );
        CREATE TABLE biometric_templates (
            user_id TEXT PRIMARY KEY REFERENCES users(user_id) ON DELETE CASCADE,
            ciphertext BLOB NOT NULL,
            nonce BLOB NOT NULL,
            key_id TEXT NOT NULL,
            model TEXT NOT NULL,
            consent_id TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE consents (
            consent_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            granted INTEGER NOT NULL,
            session_id TEXT,
            run_id TEXT,
            recorded_at INTEGER NOT NULL
        );
        CREATE TABLE document_scans (
            scan_id TEXT PRIMARY KEY,
            user_id TEXT,
            session_id TEXT,
            run_id TEXT,
            overall_status TEXT,
            report_ciphertext BLOB,
            report_nonce BLOB,
            key_id TEXT,
            created_at INTEGER NOT NULL
        );
        """,
        // 2: IDV workflow engine (Workflows/WorkflowStore.swift): consent provenance, scan reasons, kept images.
        WorkflowMigrations.v2,
        // 3: activation code bound to the session using it until activation completes.
        "ALTER TABLE activation_codes ADD COLUMN bound_session_id TEXT; ALTER TABLE activation_codes ADD COLUMN bound_until INTEGER;",
        // 4: verification links of the hosted page (SQLiteStore+Links.swift; IDVEngine/Links/VerificationLinks.swift).
        VerificationLinkMigrations.v4,
        // 5: the operator's chip trust material (SQLiteStore+Trust.swift; docs/CHIP.md "Trust management").
        TrustMaterialMigrations.v5,
        // 6: the relying-party API: API clients, review cases, read-model indexes (SQLiteStore+RelyingParty.swift).
        RelyingPartyMigrations.v6,
        // 7: the webhook outbox: endpoints, events, deliveries (SQLiteStore+Webhooks.swift; docs/WEBHOOKS.md).
        WebhookMigrations.v7,
        // 8: the audit chain's head (last seq and hash), moved in the transaction of each append, so
        // that deleting the newest entries is detected (PostgreSQL has had `audit_head` since 1).
        """
        CREATE TABLE audit_head (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            seq INTEGER NOT NULL,
            hash TEXT NOT NULL
        );
        INSERT INTO audit_head (id, seq, hash) VALUES (1,
            COALESCE((SELECT seq FROM audit_log ORDER BY seq DESC LIMIT 1), 0),
            COALESCE((SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1), '\(AuditEntry.genesisHash)'));
        """,
        // 9: a webhook endpoint's previous secret during a rotation's overlap (SQLiteStore+Webhooks.swift).
        WebhookMigrations.v9,
        // 10: the credential-limit counters every node shares (SQLiteStore+Limits.swift; docs/LIMITS.md).
        LimitMigrations.v10,
        // 11: the digests of judged selfie frames, for the replay check (SQLiteStore+Presence.swift; docs/WORKFLOWS.md).
        PresenceMigrations.v11,
    ]

    /// Opens (creating if needed) the database at `path`, sets WAL and foreign keys, and applies
    /// pending migrations. Throws ``StoreError/database(_:)`` when the file cannot be opened or
    /// the schema is newer than this build. Session flow state is sealed with a subkey of
    /// `keyFile` (the server's `templates.key_file`; default `<path>.key`, created 0600 when
    /// missing; ``SessionStateSealer``); throws ``VaultError`` when the key file is unusable.
    ///
    /// File modes: a new database file is created 0600 (owner only) before SQLite opens it, and
    /// SQLite gives its `-wal` and `-shm` files the database file's mode. An existing database
    /// file readable or writable by group or others is refused (``StoreError/database(_:)`` naming
    /// the path and the `chmod 600` remedy): it holds sealed session state, audit rows and
    /// personal data, and a loosened mode is more likely a mistake than a choice.
    ///
    /// `readers` read-only connections are opened beside the writer (none for `:memory:` and URI names).
    public init(path: String, keyFile: String? = nil, previousKeyFiles: [String] = [], readers readerCount: Int = 4) throws {
        self.path = path
        try Self.secureFile(path)
        stateSealer = try SessionStateSealer.forStore(dbPath: path, keyFile: keyFile, previousKeyFiles: previousKeyFiles)
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let handle else {
            let msg = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw StoreError.database("cannot open database: \(msg)")
        }
        db = handle
        // Several idvd processes on one file serialise on the write lock (BEGIN IMMEDIATE) rather
        // than fail: an answer's transaction can include image analysis (≈1 s), so wait up to 30 s.
        sqlite3_busy_timeout(handle, 30_000)
        try retryingBusyAtOpen { try exec("PRAGMA journal_mode=WAL") }
        try retryingBusyAtOpen { try exec("PRAGMA synchronous=NORMAL") }
        try retryingBusyAtOpen { try exec("PRAGMA foreign_keys=ON") }
        try retryingBusyAtOpen { try migrate() }
        if !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") {
            for _ in 0..<max(0, readerCount) {
                let r = try Reader(path: path)
                readers.append(r)
                freeReaders.append(r)
            }
        }
    }

    /// One read-only connection and its statement cache; used by one thread at a time (taken from
    /// `freeReaders` under `stateLock`, then held under its own `lock` while it steps).
    final class Reader {
        let lock = NSLock()
        var db: OpaquePointer?
        var statements: [String: OpaquePointer] = [:]

        init(path: String) throws {
            var handle: OpaquePointer?
            let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
            guard rc == SQLITE_OK, let handle else {
                let msg = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
                sqlite3_close(handle)
                throw StoreError.database("cannot open a reader connection: \(msg)")
            }
            db = handle
            sqlite3_busy_timeout(handle, 30_000)
        }

        func close() {
            lock.lock(); defer { lock.unlock() }
            for (_, s) in statements { sqlite3_finalize(s) }
            statements.removeAll()
            sqlite3_close(db)
            db = nil
        }
    }

    /// The write lock's waits so far: one observation per transaction and per write outside one
    /// (seconds from asking for the lock — and, for a transaction, SQLite's `BEGIN IMMEDIATE`, which
    /// waits for other processes' writers — to holding it).
    public func writeLockWaits() -> DurationHistogram? {
        stateLock.lock(); defer { stateLock.unlock() }
        return lockWaits
    }

    private var ownsTransaction: Bool {
        stateLock.lock(); defer { stateLock.unlock() }
        guard let owner = transactionOwner else { return false }
        return pthread_equal(owner, pthread_self()) != 0
    }

    private func observeWait(since t0: UInt64) {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        stateLock.lock(); lockWaits.observe(seconds); stateLock.unlock()
    }

    /// A statement that only reads (runs on a reader connection when one is free).
    private static func isRead(_ sql: String) -> Bool {
        sql.hasPrefix("SELECT") || sql == "PRAGMA user_version"
    }

    deinit { close() }

    /// The SQLite library version linked, e.g. "3.40.1".
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// Creates `path` empty with mode 0600 when missing; refuses an existing file whose mode gives
    /// group or others any access. In-memory and URI names are left alone.
    static func secureFile(_ path: String) throws {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
        var st = stat()
        if stat(path, &st) == 0 {
            let mode = st.st_mode & 0o777
            if mode & 0o077 != 0 {
                throw StoreError.database("database file \(path) is readable or writable by group or others (mode "
                                          + String(mode, radix: 8) + "); run `chmod 600 \(path)` (and its -wal/-shm files) and start again")
            }
            return
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd >= 0 {
            // the process umask cannot loosen 0600, only tighten it; make it exact anyway
            fchmod(fd, 0o600)
            Foundation.close(fd)
        } else if errno != EEXIST {
            throw StoreError.database("cannot create database file \(path): \(String(cString: strerror(errno)))")
        }
    }

    public func close() {
        lock.lock(); defer { lock.unlock() }
        stateLock.lock()
        let all = readers
        readers.removeAll()
        freeReaders.removeAll()
        stateLock.unlock()
        for r in all { r.close() }   // waits for a reader in use to finish its statement
        guard let db else { return }
        for (_, s) in statements { sqlite3_finalize(s) }
        statements.removeAll()
        sqlite3_close(db)
        self.db = nil
    }

    public func schemaVersion() throws -> Int {
        try query("PRAGMA user_version").first?[0].int ?? 0
    }

    /// Applies the missing migrations one transaction each, reading the version under the write
    /// lock (`BEGIN IMMEDIATE`): of several processes opening a new file at once, one applies each
    /// migration and the others find it applied.
    /// Runs one opening step again while it fails only because another connection holds a lock,
    /// for up to 30 s (the busy timeout). SQLite answers SQLITE_BUSY at once, without calling the
    /// busy handler, where waiting could deadlock: `PRAGMA journal_mode=WAL` upgrades a shared lock,
    /// and several processes opening a new file at once (or one closing it, which checkpoints)
    /// meet exactly there. Any other failure is thrown at once.
    private func retryingBusyAtOpen(_ step: () throws -> Void) throws {
        let deadline = DispatchTime.now() + .seconds(30)
        var pause: useconds_t = 1_000
        while true {
            let before = busyFailures
            do { return try step() } catch {
                guard busyFailures != before, DispatchTime.now() < deadline else { throw error }
                usleep(pause)
                pause = min(pause * 2, 50_000)
            }
        }
    }

    private func migrate() throws {
        while try withTransaction({ () -> Bool in
            let current = try schemaVersion()
            guard current <= Self.migrations.count else {
                throw StoreError.database("schema version \(current) is newer than this build (\(Self.migrations.count))")
            }
            guard current < Self.migrations.count else { return false }
            try exec(Self.migrations[current])
            try exec("PRAGMA user_version = \(current + 1)")
            return true
        }) {}
    }

    // MARK: Low level

    private func exec(_ sql: String) throws {
        lock.lock(); defer { lock.unlock() }
        guard let db else { throw StoreError.closed }
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            if rc & 0xff == SQLITE_BUSY || rc & 0xff == SQLITE_LOCKED { busyFailures += 1 }
            let msg = err.map { String(cString: $0) } ?? "error"
            sqlite3_free(err)
            throw StoreError.database(msg)
        }
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        guard let db else { throw StoreError.closed }
        if let s = statements[sql] { return s }
        var s: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &s, nil) == SQLITE_OK, let s else {
            throw StoreError.database("prepare failed: \(String(cString: sqlite3_errmsg(db)))")
        }
        statements[sql] = s
        return s
    }

    private func bind(_ s: OpaquePointer, _ params: [SQLValue]) {
        for (i, p) in params.enumerated() {
            let idx = Int32(i + 1)
            switch p {
            case .null: sqlite3_bind_null(s, idx)
            case let .int(v): sqlite3_bind_int64(s, idx, v)
            case let .double(v): sqlite3_bind_double(s, idx, v)
            case let .text(v): sqlite3_bind_text(s, idx, v, -1, transientDestructor)
            case let .blob(v): _ = v.withUnsafeBytes { sqlite3_bind_blob(s, idx, $0.baseAddress, Int32(v.count), transientDestructor) }
            }
        }
    }

    /// How many times each SQL text ran (since open or ``resetStatementCounts()``), and how many
    /// sealed session states were opened: what shows one pass per request (one session read and
    /// decryption, one template read per answer). Counting is a dictionary increment per statement.
    public func statementCounts() -> (statements: [String: Int], sessionStatesOpened: Int) {
        stateLock.lock(); defer { stateLock.unlock() }
        return (runs, statesOpened)
    }

    public func resetStatementCounts() {
        stateLock.lock(); defer { stateLock.unlock() }
        runs.removeAll()
        statesOpened = 0
    }

    /// Runs a statement and returns its rows: a read outside this thread's transaction on a free
    /// reader connection; everything else on the writer, under the write lock.
    @discardableResult
    func query(_ sql: String, _ params: [SQLValue] = []) throws -> [[SQLValue]] {
        if Self.isRead(sql), !ownsTransaction {
            stateLock.lock()
            runs[sql, default: 0] += 1
            let reader = freeReaders.popLast()
            if reader != nil { readerReads += 1 } else { writerReads += 1 }
            stateLock.unlock()
            if let reader {
                reader.lock.lock()
                defer {
                    reader.lock.unlock()
                    stateLock.lock()
                    if readers.contains(where: { $0 === reader }) { freeReaders.append(reader) }
                    stateLock.unlock()
                }
                guard let rdb = reader.db else { throw StoreError.closed }
                let s: OpaquePointer
                if let cached = reader.statements[sql] { s = cached } else {
                    var p: OpaquePointer?
                    guard sqlite3_prepare_v2(rdb, sql, -1, &p, nil) == SQLITE_OK, let p else {
                        throw StoreError.database("prepare failed: \(String(cString: sqlite3_errmsg(rdb)))")
                    }
                    reader.statements[sql] = p
                    s = p
                }
                return try step(s, params, rdb)
            }
        } else {
            stateLock.lock(); runs[sql, default: 0] += 1; stateLock.unlock()
        }
        let t0 = DispatchTime.now().uptimeNanoseconds
        lock.lock(); defer { lock.unlock() }
        if transactionDepth == 0 && !Self.isRead(sql) { observeWait(since: t0) }
        guard let db else { throw StoreError.closed }
        return try step(try statement(sql), params, db)
    }

    /// Binds `params` to `s`, steps it to the end and returns its rows (reset after).
    private func step(_ s: OpaquePointer, _ params: [SQLValue], _ db: OpaquePointer) throws -> [[SQLValue]] {
        defer { sqlite3_reset(s); sqlite3_clear_bindings(s) }
        bind(s, params)
        var rows: [[SQLValue]] = []
        while true {
            let rc = sqlite3_step(s)
            if rc == SQLITE_DONE { break }
            if rc == SQLITE_CONSTRAINT || (rc & 0xff) == SQLITE_CONSTRAINT {
                throw StoreError.conflict(String(cString: sqlite3_errmsg(db)))
            }
            guard rc == SQLITE_ROW else { throw StoreError.database("step failed (\(rc)): \(String(cString: sqlite3_errmsg(db)))") }
            var row: [SQLValue] = []
            for c in 0..<sqlite3_column_count(s) {
                switch sqlite3_column_type(s, c) {
                case SQLITE_INTEGER: row.append(.int(sqlite3_column_int64(s, c)))
                case SQLITE_FLOAT: row.append(.double(sqlite3_column_double(s, c)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(s, c))))
                case SQLITE_BLOB:
                    let n = Int(sqlite3_column_bytes(s, c))
                    if n > 0, let p = sqlite3_column_blob(s, c) {
                        row.append(.blob(Array(UnsafeRawBufferPointer(start: p, count: n))))
                    } else { row.append(.blob([])) }
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }

    var changes: Int { db.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// True while the calling thread's connection is inside ``withTransaction(_:)`` (holding the write lock).
    public var isInTransaction: Bool {
        lock.lock(); defer { lock.unlock() }
        return transactionDepth > 0
    }

    public func withTransaction<T>(_ body: () throws -> T) throws -> T {
        let t0 = DispatchTime.now().uptimeNanoseconds
        lock.lock(); defer { lock.unlock() }
        if transactionDepth > 0 {
            transactionDepth += 1
            defer { transactionDepth -= 1 }
            return try body()
        }
        try exec("BEGIN IMMEDIATE")
        observeWait(since: t0)
        transactionDepth = 1
        stateLock.lock(); transactionOwner = pthread_self(); stateLock.unlock()
        defer { stateLock.lock(); transactionOwner = nil; stateLock.unlock() }
        do {
            let result = try body()
            transactionDepth = 0
            try exec("COMMIT")
            return result
        } catch {
            transactionDepth = 0
            try? exec("ROLLBACK")
            throw error
        }
    }

    // MARK: Users

    private static let userColumns = "user_id, state, activation_requires_idv, idv_workflow, password_hash, failed_password_attempts, locked_at, created_at, updated_at"

    private func userParams(_ u: UserRecord) -> [SQLValue] {
        [.text(u.userID), .text(u.state.rawValue), SQLValue(u.activationRequiresIDV), SQLValue(u.idvWorkflow),
         SQLValue(u.passwordHash), SQLValue(u.failedPasswordAttempts), SQLValue(u.lockedAt), SQLValue(u.createdAt), SQLValue(u.updatedAt)]
    }

    private func userRow(_ r: [SQLValue]) -> UserRecord {
        UserRecord(userID: r[0].text ?? "", state: UserState(rawValue: r[1].text ?? "") ?? .locked,
                   activationRequiresIDV: (r[2].int ?? 1) != 0, idvWorkflow: r[3].int ?? 0, passwordHash: r[4].text,
                   failedPasswordAttempts: r[5].int ?? 0, lockedAt: r[6].int, createdAt: r[7].int ?? 0, updatedAt: r[8].int ?? 0)
    }

    public func createUser(_ user: UserRecord) throws {
        try query("INSERT INTO users (\(Self.userColumns)) VALUES (?,?,?,?,?,?,?,?,?)", userParams(user))
    }

    public func user(_ userID: String) throws -> UserRecord? {
        try query("SELECT \(Self.userColumns) FROM users WHERE user_id = ?", [.text(userID)]).first.map(userRow)
    }

    public func users() throws -> [UserRecord] {
        try query("SELECT \(Self.userColumns) FROM users ORDER BY user_id").map(userRow)
    }

    public func saveUser(_ user: UserRecord) throws {
        var p = userParams(user)
        p.append(p.removeFirst())
        try query("UPDATE users SET state=?, activation_requires_idv=?, idv_workflow=?, password_hash=?, failed_password_attempts=?, locked_at=?, created_at=?, updated_at=? WHERE user_id=?", p)
    }

    // MARK: Activation codes

    public func saveActivationCode(_ c: ActivationCodeRecord) throws {
        try query("INSERT OR REPLACE INTO activation_codes (user_id, code_hash, salt, expires_at, attempts_left, used_at, created_at, bound_session_id, bound_until) VALUES (?,?,?,?,?,?,?,?,?)",
                  [.text(c.userID), .text(c.codeHash), .text(c.salt), SQLValue(c.expiresAt), SQLValue(c.attemptsLeft), SQLValue(c.usedAt), SQLValue(c.createdAt),
                   c.boundSessionID.map { .text($0) } ?? .null, SQLValue(c.boundUntil)])
    }

    public func activationCode(userID: String) throws -> ActivationCodeRecord? {
        try query("SELECT user_id, code_hash, salt, expires_at, attempts_left, used_at, created_at, bound_session_id, bound_until FROM activation_codes WHERE user_id = ?", [.text(userID)])
            .first.map { r in
                ActivationCodeRecord(userID: r[0].text ?? "", codeHash: r[1].text ?? "", salt: r[2].text ?? "", expiresAt: r[3].int ?? 0,
                                     attemptsLeft: r[4].int ?? 0, usedAt: r[5].int, createdAt: r[6].int ?? 0,
                                     boundSessionID: r[7].text, boundUntil: r[8].int)
            }
    }

    // MARK: Devices

    private func deviceRow(_ r: [SQLValue]) -> DeviceRecord {
        DeviceRecord(deviceID: r[0].text ?? "", publicKey: r[1].text ?? "", label: r[2].text, userID: r[3].text,
                     ldaEnabled: (r[4].int ?? 0) != 0, createdAt: r[5].int ?? 0, lastUsedAt: r[6].int)
    }
    private static let deviceColumns = "device_id, public_key, label, user_id, lda_enabled, created_at, last_used_at"

    public func createDevice(_ d: DeviceRecord) throws {
        try query("INSERT INTO devices (\(Self.deviceColumns)) VALUES (?,?,?,?,?,?,?)",
                  [.text(d.deviceID), .text(d.publicKey), SQLValue(d.label), SQLValue(d.userID), SQLValue(d.ldaEnabled), SQLValue(d.createdAt), SQLValue(d.lastUsedAt)])
    }

    public func device(_ deviceID: String) throws -> DeviceRecord? {
        try query("SELECT \(Self.deviceColumns) FROM devices WHERE device_id = ?", [.text(deviceID)]).first.map(deviceRow)
    }

    public func saveDevice(_ d: DeviceRecord) throws {
        try query("UPDATE devices SET public_key=?, label=?, user_id=?, lda_enabled=?, created_at=?, last_used_at=? WHERE device_id=?",
                  [.text(d.publicKey), SQLValue(d.label), SQLValue(d.userID), SQLValue(d.ldaEnabled), SQLValue(d.createdAt), SQLValue(d.lastUsedAt), .text(d.deviceID)])
    }

    public func devices(userID: String) throws -> [DeviceRecord] {
        try query("SELECT \(Self.deviceColumns) FROM devices WHERE user_id = ? ORDER BY created_at", [.text(userID)]).map(deviceRow)
    }

    // MARK: Sessions

    private static let sessionColumns = "session_id, token_hash, user_id, device_id, logged_in, created_at, last_seen_at, idle_timeout, absolute_expires_at, revoked_at, version, state"

    private func sessionRow(_ r: [SQLValue]) throws -> SessionRecord {
        let sessionID = r[0].text ?? ""
        let state: SessionFlowState
        switch r[11] {
        case let .blob(b):
            stateLock.lock(); statesOpened += 1; stateLock.unlock()
            do { state = try stateSealer.open(b, sessionID: sessionID) } catch {
                throw StoreError.database("session state does not open (wrong key, another session's row, or altered)")
            }
        case let .text(t):   // written before sealing existed; sealed on the next write
            state = try JSONDecoder().decode(SessionFlowState.self, from: Data(t.utf8))
        default:
            state = SessionFlowState()
        }
        return SessionRecord(sessionID: r[0].text ?? "", tokenHash: r[1].text ?? "", userID: r[2].text, deviceID: r[3].text,
                             loggedIn: (r[4].int ?? 0) != 0, createdAt: r[5].int ?? 0, lastSeenAt: r[6].int ?? 0,
                             idleTimeout: r[7].int ?? 0, absoluteExpiresAt: r[8].int ?? 0, revokedAt: r[9].int,
                             version: r[10].int ?? 0, state: state)
    }

    private func sealedState(_ s: SessionRecord) throws -> SQLValue {
        .blob(try stateSealer.seal(s.state, sessionID: s.sessionID))
    }

    public func createSession(_ s: SessionRecord) throws {
        try query("INSERT INTO sessions (\(Self.sessionColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                  [.text(s.sessionID), .text(s.tokenHash), SQLValue(s.userID), SQLValue(s.deviceID), SQLValue(s.loggedIn),
                   SQLValue(s.createdAt), SQLValue(s.lastSeenAt), SQLValue(s.idleTimeout), SQLValue(s.absoluteExpiresAt),
                   SQLValue(s.revokedAt), SQLValue(s.version), try sealedState(s)])
    }

    public func session(tokenHash: String) throws -> SessionRecord? {
        try query("SELECT \(Self.sessionColumns) FROM sessions WHERE token_hash = ?", [.text(tokenHash)]).first.map(sessionRow)
    }

    public func updateSession(_ s: SessionRecord, expectedVersion: Int, consuming challengeID: String?) throws -> Bool {
        let sealed = try sealedState(s)
        return try withTransaction {
            try query("UPDATE sessions SET token_hash=?, user_id=?, device_id=?, logged_in=?, last_seen_at=?, revoked_at=?, version=?, state=? WHERE session_id=? AND version=?",
                      [.text(s.tokenHash), SQLValue(s.userID), SQLValue(s.deviceID), SQLValue(s.loggedIn), SQLValue(s.lastSeenAt), SQLValue(s.revokedAt),
                       SQLValue(expectedVersion + 1), sealed, .text(s.sessionID), SQLValue(expectedVersion)])
            guard changes == 1 else { return false }
            if let challengeID {
                try query("INSERT INTO consumed_challenges (challenge_id, session_id, consumed_at) VALUES (?,?,?)",
                          [.text(challengeID), .text(s.sessionID), SQLValue(s.lastSeenAt)])
            }
            return true
        }
    }

    public func touchSession(sessionID: String, at time: Int) throws {
        try query("UPDATE sessions SET last_seen_at = max(last_seen_at, ?) WHERE session_id = ?", [SQLValue(time), .text(sessionID)])
    }

    @discardableResult
    public func revokeSessions(userID: String, at time: Int) throws -> Int {
        try withTransaction {
            try query("UPDATE sessions SET revoked_at = ?, version = version + 1 WHERE user_id = ? AND revoked_at IS NULL", [SQLValue(time), .text(userID)])
            return changes
        }
    }

    public func liveSessionVersion(sessionID: String) throws -> Int? {
        try query("SELECT version FROM sessions WHERE session_id = ? AND revoked_at IS NULL", [.text(sessionID)]).first?[0].int
    }

    public func purgeableSessions(now: Int, limit: Int) throws -> [SessionRecord] {
        try query("SELECT \(Self.sessionColumns) FROM sessions WHERE revoked_at IS NOT NULL OR absolute_expires_at <= ? OR last_seen_at + idle_timeout <= ? ORDER BY last_seen_at LIMIT ?",
                  [SQLValue(now), SQLValue(now), SQLValue(limit)]).compactMap { try? sessionRow($0) }
    }

    public func deleteSession(sessionID: String, expectedVersion: Int) throws -> Bool {
        try withTransaction {
            try query("DELETE FROM sessions WHERE session_id = ? AND version = ?", [.text(sessionID), SQLValue(expectedVersion)])
            guard changes == 1 else { return false }
            try query("DELETE FROM consumed_challenges WHERE session_id = ?", [.text(sessionID)])
            return true
        }
    }

    public func consumedChallengeSession(_ challengeID: String) throws -> String? {
        try query("SELECT session_id FROM consumed_challenges WHERE challenge_id = ?", [.text(challengeID)]).first?[0].text
    }

    // MARK: Flow runs

    public func startFlowRun(_ r: FlowRunRecord) throws {
        try query("INSERT INTO flow_runs (run_id, session_id, user_id, flow, idv_workflow, started_at) VALUES (?,?,?,?,?,?)",
                  [.text(r.runID), .text(r.sessionID), SQLValue(r.userID), .text(r.flow), SQLValue(r.idvWorkflow), SQLValue(r.startedAt)])
    }

    public func endFlowRun(runID: String, at time: Int, outcome: FlowOutcome, errorCode: Int) throws {
        try query("UPDATE flow_runs SET ended_at = ?, outcome = ?, error_code = ? WHERE run_id = ? AND ended_at IS NULL",
                  [SQLValue(time), .text(outcome.rawValue), SQLValue(errorCode), .text(runID)])
    }

    @discardableResult
    public func deleteUnboundDevices(unusedSince: Int, limit: Int) throws -> Int {
        try withTransaction {
            try query("""
                DELETE FROM devices WHERE device_id IN (
                  SELECT d.device_id FROM devices d
                  WHERE d.user_id IS NULL AND COALESCE(d.last_used_at, d.created_at) < ?
                    AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.device_id = d.device_id)
                  LIMIT ?)
                """, [SQLValue(unusedSince), SQLValue(limit)])
            return changes
        }
    }

    @discardableResult
    public func deleteAnonymousFlowRuns(sessionID: String) throws -> Int {
        try withTransaction {
            try query("DELETE FROM flow_runs WHERE session_id = ? AND user_id IS NULL", [.text(sessionID)])
            return changes
        }
    }

    // MARK: Audit

    private static func canonicalJSON(_ v: JSONValue) -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: enc.encode(v), as: UTF8.self)) ?? "null"
    }

    @discardableResult
    public func appendAudit(action: String, userID: String?, sessionID: String?, details: JSONValue, at time: Int) throws -> AuditEntry {
        let detailsJSON = Self.canonicalJSON(details)
        return try withTransaction {
            // The chain continues from its head (not from the newest row: were rows deleted, the
            // chain would silently continue from the survivors and hide the gap).
            guard let head = try query("SELECT seq, hash FROM audit_head WHERE id = 1").first,
                  let headSeq = head[0].int, let prev = head[1].text else { throw StoreError.database("audit_head has no row") }
            let seq = headSeq + 1
            let hash = AuditEntry.chainHash(prevHash: prev, seq: seq, at: time, action: action, userID: userID, sessionID: sessionID, detailsJSON: detailsJSON)
            try query("INSERT INTO audit_log (seq, at, action, user_id, session_id, details, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?)",
                      [SQLValue(seq), SQLValue(time), .text(action), SQLValue(userID), SQLValue(sessionID), .text(detailsJSON), .text(prev), .text(hash)])
            try query("UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1", [SQLValue(seq), .text(hash)])
            return AuditEntry(seq: seq, at: time, action: action, userID: userID, sessionID: sessionID, details: details, prevHash: prev, hash: hash)
        }
    }

    func auditRow(_ r: [SQLValue]) -> (AuditEntry, String) {
        let detailsJSON = r[5].text ?? "null"
        let details = (try? JSONDecoder().decode(JSONValue.self, from: Data(detailsJSON.utf8))) ?? .null
        return (AuditEntry(seq: r[0].int ?? 0, at: r[1].int ?? 0, action: r[2].text ?? "", userID: r[3].text, sessionID: r[4].text,
                           details: details, prevHash: r[6].text ?? "", hash: r[7].text ?? ""), detailsJSON)
    }

    public func auditEntries(limit: Int) throws -> [AuditEntry] {
        try query("SELECT seq, at, action, user_id, session_id, details, prev_hash, hash FROM audit_log ORDER BY seq DESC LIMIT ?", [SQLValue(limit)])
            .map { auditRow($0).0 }.reversed()
    }

    /// The first seq where the chain breaks (an altered, reordered or missing entry), or nil when
    /// it verifies; entries deleted from the end are found by comparing with the head
    /// (`audit_head`, migration 6): then the answer is the first missing seq.
    public func verifyAuditChain() throws -> Int? {
        var prev = AuditEntry.genesisHash
        var last = 0
        for r in try query("SELECT seq, at, action, user_id, session_id, details, prev_hash, hash FROM audit_log ORDER BY seq") {
            let (e, json) = auditRow(r)
            let expect = AuditEntry.chainHash(prevHash: prev, seq: e.seq, at: e.at, action: e.action, userID: e.userID, sessionID: e.sessionID, detailsJSON: json)
            if e.prevHash != prev || e.hash != expect || e.seq != last + 1 { return e.seq }
            prev = e.hash
            last = e.seq
        }
        if let head = try query("SELECT seq, hash FROM audit_head WHERE id = 1").first {
            if head[0].int != last || head[1].text != prev { return last + 1 }
        } else {
            return last + 1   // the head row itself is gone
        }
        return nil
    }
}

extension ServerConfig {
    /// The SQLite store of this configuration, its session states sealed under the same key files.
    public func openStore() throws -> SQLiteStore {
        try SQLiteStore(path: dbPath, keyFile: storeKeyFile(), previousKeyFiles: workflow.resolvedPreviousKeyFiles)
    }
}
