internal import CSQLite
import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVStoreSQL

private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The default ``Store``: one SQLite file in WAL mode, prepared statements only (cached per SQL
/// text), versioned migrations applied at open. One WRITER connection serialised by a recursive
/// lock — every write and every read inside a transaction — beside a few read-only READER
/// connections (WAL lets them read the last commit while the writer writes): a read outside a
/// transaction takes a free reader and never waits for the write lock. Nothing slow (Argon2id,
/// image work) runs under the write lock; the time spent waiting for it is measured
/// (``writeLockWaits()``, `idvd_store_write_lock_wait_seconds` in `/metrics`).
public final class SQLiteStore: SQLDatabase, @unchecked Sendable {
    // @unchecked: the writer connection and its statements are used under `lock` (recursive: a
    // transaction's statements run inside it), each reader under its own `Reader.lock`; the small
    // bookkeeping (free readers, counts, waits, the transaction's owner) under `stateLock`.
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
    public var readerCount: Int { stateLock.withLock { readers.count } }
    private var readerReads = 0, writerReads = 0
    /// Reads outside a transaction served by a reader connection, and those that found no reader
    /// free (or none opened) and ran on the writer.
    public var readRouting: (onReaders: Int, onWriter: Int) {
        stateLock.withLock { (readerReads, writerReads) }
    }
    private var runs: [String: Int] = [:]
    private var statesOpened = 0
    public let path: String
    /// Seals `sessions.state` at rest (flow stack + current challenge payload).
    public let stateSealer: SessionStateSealer
    /// SQLite's spelling of the shared SQL (IDVStoreSQL).
    public var dialect: SQLDialect { .sqlite }

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
            lock.withLock {
                for (_, s) in statements { sqlite3_finalize(s) }
                statements.removeAll()
                sqlite3_close(db)
                db = nil
            }
        }
    }

    /// The write lock's waits so far: one observation per transaction and per write outside one
    /// (seconds from asking for the lock — and, for a transaction, SQLite's `BEGIN IMMEDIATE`, which
    /// waits for other processes' writers — to holding it).
    public func writeLockWaits() -> DurationHistogram? {
        stateLock.withLock { lockWaits }
    }

    private var ownsTransaction: Bool {
        stateLock.withLock {
            guard let owner = transactionOwner else { return false }
            return pthread_equal(owner, pthread_self()) != 0
        }
    }

    private func observeWait(since t0: UInt64) {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        stateLock.withLock { lockWaits.observe(seconds) }
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
        lock.withLock {
            let all = stateLock.withLock {
                let all = readers
                readers.removeAll()
                freeReaders.removeAll()
                return all
            }
            for r in all { r.close() }   // waits for a reader in use to finish its statement
            guard let db else { return }
            for (_, s) in statements { sqlite3_finalize(s) }
            statements.removeAll()
            sqlite3_close(db)
            self.db = nil
        }
    }

    public func schemaVersion() throws -> Int {
        try count("PRAGMA user_version")
    }

    public var buildSchemaVersion: Int? { Self.migrations.count }

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

    /// The error of a failed statement: SQLITE_BUSY / SQLITE_LOCKED (another process held the
    /// database's lock past the 30 s busy timeout) is ``StoreError/unavailable(_:_:)`` `.busy` — the
    /// HTTP edge answers 503 with Retry-After, the client sends the request again; anything else
    /// (I/O error, full disk, corruption) is ``StoreError/database(_:)``.
    static func failure(_ rc: Int32, _ message: String) -> StoreError {
        let primary = rc & 0xff
        if primary == SQLITE_BUSY || primary == SQLITE_LOCKED { return .unavailable(.busy, message) }
        return .database(message)
    }

    private func exec(_ sql: String) throws {
        try lock.withLock {
            guard let db else { throw StoreError.closed }
            var err: UnsafeMutablePointer<CChar>?
            let rc = sqlite3_exec(db, sql, nil, nil, &err)
            if rc != SQLITE_OK {
                if rc & 0xff == SQLITE_BUSY || rc & 0xff == SQLITE_LOCKED { busyFailures += 1 }
                let msg = err.map { String(cString: $0) } ?? "error"
                sqlite3_free(err)
                throw Self.failure(rc, msg)
            }
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

    private func bind(_ s: OpaquePointer, _ params: [SQLCell]) {
        for (i, p) in params.enumerated() {
            let idx = Int32(i + 1)
            switch p {
            case .null: sqlite3_bind_null(s, idx)
            case let .int(v): sqlite3_bind_int64(s, idx, v)
            case let .double(v): sqlite3_bind_double(s, idx, v)
            case let .bool(v): sqlite3_bind_int64(s, idx, v ? 1 : 0)
            case let .text(v): sqlite3_bind_text(s, idx, v, -1, transientDestructor)
            case let .bytes(v): _ = v.withUnsafeBytes { sqlite3_bind_blob(s, idx, $0.baseAddress, Int32(v.count), transientDestructor) }
            }
        }
    }

    /// How many times each SQL text ran (since open or ``resetStatementCounts()``), and how many
    /// sealed session states were opened: what shows one pass per request (one session read and
    /// decryption, one template read per answer). Counting is a dictionary increment per statement.
    package func statementCounts() -> (statements: [String: Int], sessionStatesOpened: Int) {
        stateLock.withLock { (runs, statesOpened) }
    }

    package func resetStatementCounts() {
        stateLock.withLock {
            runs.removeAll()
            statesOpened = 0
        }
    }

    /// The rows of a statement, each as its cells (tests and diagnostics read tables raw).
    @discardableResult
    package func query(_ sql: String, _ params: [SQLCell] = []) throws -> [[SQLCell]] {
        try run(sql, params).rows.map(\.cells)
    }

    /// Counts a sealed session state opened (``statementCounts()``).
    public func noteSessionStateOpened() {
        stateLock.withLock { statesOpened += 1 }
    }

    /// Runs a statement and returns its rows and the rows it changed: a read outside this thread's
    /// transaction on a free reader connection; everything else on the writer, under the write lock
    /// (so the change count is this statement's).
    @discardableResult
    public func run(_ sql: String, _ params: [SQLCell]) throws -> SQLResult {
        if Self.isRead(sql), !ownsTransaction {
            let reader = stateLock.withLock {
                runs[sql, default: 0] += 1
                let reader = freeReaders.popLast()
                if reader != nil { readerReads += 1 } else { writerReads += 1 }
                return reader
            }
            if let reader {
                defer {
                    stateLock.withLock {
                        if readers.contains(where: { $0 === reader }) { freeReaders.append(reader) }
                    }
                }
                return try reader.lock.withLock {
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
                    return SQLResult(rows: try step(s, params, rdb), affected: 0)
                }
            }
        } else {
            stateLock.withLock { runs[sql, default: 0] += 1 }
        }
        let t0 = DispatchTime.now().uptimeNanoseconds
        return try lock.withLock {
            if transactionDepth == 0 && !Self.isRead(sql) { observeWait(since: t0) }
            guard let db else { throw StoreError.closed }
            let rows = try step(try statement(sql), params, db)
            return SQLResult(rows: rows, affected: Self.isRead(sql) ? 0 : Int(sqlite3_changes(db)))
        }
    }

    /// Binds `params` to `s`, steps it to the end and returns its rows (reset after).
    private func step(_ s: OpaquePointer, _ params: [SQLCell], _ db: OpaquePointer) throws -> [SQLRow] {
        defer { sqlite3_reset(s); sqlite3_clear_bindings(s) }
        bind(s, params)
        var rows: [SQLRow] = []
        while true {
            let rc = sqlite3_step(s)
            if rc == SQLITE_DONE { break }
            if rc == SQLITE_CONSTRAINT || (rc & 0xff) == SQLITE_CONSTRAINT {
                throw StoreError.conflict(String(cString: sqlite3_errmsg(db)))
            }
            guard rc == SQLITE_ROW else { throw Self.failure(rc, "step failed (\(rc)): \(String(cString: sqlite3_errmsg(db)))") }
            var row: [SQLCell] = []
            for c in 0..<sqlite3_column_count(s) {
                switch sqlite3_column_type(s, c) {
                case SQLITE_INTEGER: row.append(.int(sqlite3_column_int64(s, c)))
                case SQLITE_FLOAT: row.append(.double(sqlite3_column_double(s, c)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(s, c))))
                case SQLITE_BLOB:
                    let n = Int(sqlite3_column_bytes(s, c))
                    if n > 0, let p = sqlite3_column_blob(s, c) {
                        row.append(.bytes(Array(UnsafeRawBufferPointer(start: p, count: n))))
                    } else { row.append(.bytes([])) }
                default: row.append(.null)
                }
            }
            rows.append(SQLRow(row))
        }
        return rows
    }

    /// True while the calling thread's connection is inside ``withTransaction(_:)`` (holding the write lock).
    public var isInTransaction: Bool { lock.withLock { transactionDepth > 0 } }

    public func withTransaction<T>(_ body: () throws -> T) throws -> T {
        let t0 = DispatchTime.now().uptimeNanoseconds
        return try lock.withLock {
            if transactionDepth > 0 {
                transactionDepth += 1
                defer { transactionDepth -= 1 }
                return try body()
            }
            try exec("BEGIN IMMEDIATE")
            observeWait(since: t0)
            transactionDepth = 1
            stateLock.withLock { transactionOwner = pthread_self() }
            defer { stateLock.withLock { transactionOwner = nil } }
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
    }
}
