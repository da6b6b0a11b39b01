internal import CPostgres
import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVStoreSQL

/// The ``Store`` on PostgreSQL (libpq), for N stateless `idvd` nodes on one database.
///
/// - **Connections:** a pool per node (``PGPool``, `db.pool_size`); prepared statements per
///   connection; rows decoded by column type (IDVStoreSQL ``SQLRow``).
/// - **Transactions:** ``withTransaction(_:)`` binds one pooled connection to the calling thread
///   (nested calls and every store call on that thread join it), runs at READ COMMITTED and first
///   takes the store-wide write lock, a transaction-scoped advisory lock
///   (`pg_advisory_xact_lock(0x49445644, 2)`), held to COMMIT. Write transactions therefore run one
///   at a time across all nodes, exactly as SQLite's `BEGIN IMMEDIATE` runs them one at a time
///   across processes: whatever a flow reads inside its transaction (failed-password counters,
///   activation-code bindings, biometric outcomes) cannot change under it, and no two transactions
///   wait on each other's row locks (no deadlock). Reads outside a transaction take no lock.
/// - **Session compare-and-set:** `UPDATE sessions … WHERE session_id = $ AND version = $` — correct
///   on its own at READ COMMITTED (a second updater waits for the first's row lock, re-reads the
///   row and finds the version moved) and serialised by the write lock besides; the consumed
///   challenge id is inserted in the same transaction (its primary key refuses a second use).
/// - **Audit chain:** each append locks the chain head row (`audit_head`, `SELECT … FOR UPDATE`),
///   links to its hash, inserts the entry and moves the head, all in the appending transaction, so
///   entries are chained in commit order whatever the number of writers (docs/AUDIT-CHAIN.md).
/// - **Expiry sweep:** ``purgeableSessions(now:limit:)`` claims the sessions it returns for
///   ``sweepClaimSeconds`` (`FOR UPDATE SKIP LOCKED`), so sweeps running on several nodes at once
///   share the work instead of repeating it; the media purge deletes in `SKIP LOCKED` batches.
/// - **Migrations:** applied at open under a session-level advisory lock
///   (`pg_advisory_lock(0x49445644, 1)`), so nodes starting together apply each migration once.
/// - **Keys:** session states are sealed with ``SessionStateSealer`` exactly as with SQLite; the
///   database records the session-state key id (`idvd_meta`), and a node whose key file does not
///   hold that key refuses to open the store (a node with another key would write states no other
///   node opens).
///
/// Every method is safe from any thread. Errors never carry parameter values or the password.
public final class PostgresStore: SQLDatabase, @unchecked Sendable {
    // @unchecked: the mutable state — the threads' transaction bindings and the wait statistics —
    // is read and written under `bindingsLock` and `statsLock`; the pool is thread-safe.
    /// Advisory-lock keys (two-int form): namespace "IDVD", then 1 migrations, 2 write lock.
    static let lockNamespace: Int32 = 0x4944_5644
    static let migrationLock: Int32 = 1
    static let writeLock: Int32 = 2
    /// How long a sweep's claim on a session holds (another node's sweep skips it meanwhile), seconds.
    public static let sweepClaimSeconds = 60

    let pool: PGPool
    public let stateSealer: SessionStateSealer
    /// PostgreSQL's spelling of the shared SQL (IDVStoreSQL).
    public var dialect: SQLDialect { .postgres }
    /// The URL with the password (if any) redacted, for messages.
    public let redactedURL: String
    /// Names this store instance (one per node) in the expiry sweep's claims.
    public let nodeID = UUID().uuidString

    private struct Binding { let connection: PGConnection; var depth: Int }
    private let bindingsLock = NSLock()
    private var bindings: [pthread_t: Binding] = [:]
    private let statsLock = NSLock()
    private var writeLockWait: Double = 0
    private var writeTransactions = 0
    private var lockWaits = DurationHistogram(buckets: DurationHistogram.lockWaitBuckets)

    /// Migrations: index + 1 is the schema version. Mirrors `SQLiteStore.migrations` one for one.
    public static var migrationCount: Int { PostgresMigrations.all.count }

    /// Connects (one pooled connection opened to check the server), applies pending migrations
    /// under the migration lock (`createSchema: false` instead refuses a database without the
    /// OpenIDV schema — `idvd admin` commands other than `create-user` must not create one on a
    /// mistyped URL), and checks the session-state key (see the type's notes). Throws
    /// ``StoreError/database(_:)`` when the server cannot be reached, the schema is newer than this
    /// build or missing, or the key differs; ``VaultError`` when a key file is missing or unusable
    /// (with PostgreSQL the key file is made once — `idvd admin new-key FILE` — and copied to every node).
    public init(settings: PostgresConnectionSettings, keyFile: String, previousKeyFiles: [String] = [], createSchema: Bool = true) throws {
        redactedURL = settings.redactedURL
        // Never created here: nodes each creating a missing key file would seal with different keys.
        stateSealer = try SessionStateSealer(masterKey: TemplateVault.load(keyFile: keyFile, previousKeyFiles: previousKeyFiles, createIfMissing: false))
        pool = PGPool(settings: settings)
        do {
            try migrate(createSchema: createSchema)
            try checkSessionKey()
        } catch {
            pool.close()
            throw error
        }
    }

    deinit { pool.close() }

    /// Whether ``close()`` logs the node's ``waitStatistics`` (`idvd serve` turns it on).
    public var logsStatisticsOnClose: Bool {
        get { statsLock.withLock { logStats } }
        set { statsLock.withLock { logStats = newValue } }
    }
    private var logStats = false

    /// Closes the pool; with ``logsStatisticsOnClose`` the first close logs a `store closed` line with
    /// the wait statistics (counts and seconds only).
    public func close() {
        guard !pool.isClosed else { return }
        pool.close()
        guard logsStatisticsOnClose else { return }
        let w = waitStatistics
        Log.event("store closed", ["engine": "postgresql", "write_transactions": .integer(w.writeTransactions),
                                   "write_lock_wait_seconds": .number(w.writeLockWaitSeconds),
                                   "connection_checkouts": .integer(w.connectionCheckouts),
                                   "connection_wait_seconds": .number(w.connectionWaitSeconds)])
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { pool.isClosed }

    // MARK: Migrations

    private func migrate(createSchema: Bool) throws {
        let c = try pool.connect()
        defer { c.close() }
        try c.execute("SELECT pg_advisory_lock(\(Self.lockNamespace), \(Self.migrationLock))")
        defer { try? c.execute("SELECT pg_advisory_unlock(\(Self.lockNamespace), \(Self.migrationLock))") }
        let exists = try c.query("SELECT to_regclass('idvd_schema') IS NOT NULL").rows.first?.bool(0) ?? false
        if !exists {
            guard createSchema else {
                throw StoreError.database("no OpenIDV schema in the database at \(redactedURL) (`idvd admin create-user` or `idvd serve` creates it)")
            }
            try c.execute("CREATE TABLE idvd_schema (version BIGINT NOT NULL); INSERT INTO idvd_schema VALUES (0)")
        }
        let current = try c.query("SELECT version FROM idvd_schema").rows.first?.int(0) ?? 0
        guard current <= PostgresMigrations.all.count else {
            throw StoreError.database("schema version \(current) is newer than this build (\(PostgresMigrations.all.count))")
        }
        for v in current..<PostgresMigrations.all.count {
            do {
                try c.execute("BEGIN")
                try c.execute(PostgresMigrations.all[v])
                try c.execute("UPDATE idvd_schema SET version = \(v + 1)")
                try c.execute("COMMIT")
            } catch {
                try? c.execute("ROLLBACK")
                throw error
            }
        }
    }

    public func schemaVersion() throws -> Int {
        try query("SELECT version FROM idvd_schema").rows.first?.int(0) ?? 0
    }

    public var buildSchemaVersion: Int? { PostgresMigrations.all.count }

    /// Records the session-state key id when the database has none; refuses a node that does not
    /// hold the recorded key (current or previous).
    private func checkSessionKey() throws {
        let mine = stateSealer.vault.keyID
        try query("INSERT INTO idvd_meta (key, value) VALUES ('session_state_key_id', $1) ON CONFLICT (key) DO NOTHING", [.text(mine)])
        let recorded = try query("SELECT value FROM idvd_meta WHERE key = 'session_state_key_id'").rows.first?.text(0) ?? mine
        guard recorded == mine || stateSealer.vault.previousKeyIDs.contains(recorded) else {
            throw StoreError.database("this node's key file does not hold the key the database's session states are sealed under "
                                      + "(session-state key id \(recorded), this node has \(mine)): every node must use the same "
                                      + "templates.key_file (and templates.previous_key_files during a key rotation)")
        }
    }

    // MARK: Connections and transactions

    private func currentBinding() -> Binding? {
        bindingsLock.withLock { bindings[pthread_self()] }
    }

    private func setBinding(_ b: Binding?) {
        bindingsLock.withLock { bindings[pthread_self()] = b }
    }

    /// Runs `body` on the calling thread's transaction connection, or on a pooled one.
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        if let b = currentBinding() { return try body(b.connection) }
        let c = try pool.checkout()
        defer { pool.checkin(c) }
        return try body(c)
    }

    /// Runs one statement of the shared SQL (`?` placeholders, rendered for PostgreSQL).
    @discardableResult
    public func run(_ sql: String, _ params: [SQLCell]) throws -> SQLResult {
        try query(dialect.render(sql), params)
    }

    /// Runs one prepared statement in PostgreSQL's own spelling (`$n`; in the thread's transaction
    /// when there is one). Outside a transaction a read (`SELECT`) that failed because its
    /// connection broke is retried once on a new connection — after a server restart each pooled
    /// connection would otherwise fail one request; a write is never retried (it may have been
    /// applied before the connection broke).
    @discardableResult
    package func query(_ sql: String, _ params: [SQLCell] = []) throws -> SQLResult {
        if let b = currentBinding() { return try b.connection.query(sql, params) }
        for attempt in 0..<2 {
            let c = try pool.checkout()
            do {
                let r = try c.query(sql, params)
                pool.checkin(c)
                return r
            } catch {
                let broken = !c.isHealthy
                pool.checkin(c)
                guard broken, attempt == 0, sql.hasPrefix("SELECT") else { throw error }
            }
        }
        throw StoreError.database("unreachable")
    }

    /// True while the calling thread is inside ``withTransaction(_:)``.
    public var isInTransaction: Bool { currentBinding() != nil }

    public func withTransaction<T>(_ body: () throws -> T) throws -> T {
        if var b = currentBinding() {
            b.depth += 1
            setBinding(b)
            defer { b.depth -= 1; setBinding(b) }
            return try body()
        }
        let c = try pool.checkout()
        defer { pool.checkin(c) }
        let t0 = DispatchTime.now().uptimeNanoseconds
        do {
            try c.execute("BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(\(Self.lockNamespace), \(Self.writeLock))")
        } catch {
            try? c.execute("ROLLBACK")
            throw error
        }
        recordWriteLock(since: t0)
        setBinding(Binding(connection: c, depth: 1))
        defer { setBinding(nil) }
        do {
            let result = try body()
            // A statement that failed inside the transaction aborted it on the server even when the
            // caller went on; COMMIT would then roll back silently — report that failure instead.
            if let e = c.transactionError { throw e }
            try c.execute("COMMIT")
            c.transactionError = nil
            return result
        } catch {
            try? c.execute("ROLLBACK")
            c.transactionError = nil
            throw error
        }
    }

    private func recordWriteLock(since t0: UInt64) {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        statsLock.withLock {
            writeTransactions += 1
            writeLockWait += seconds
            lockWaits.observe(seconds)
        }
    }

    /// The cluster-wide write lock's waits on this node so far: one observation per write transaction
    /// (seconds from `BEGIN` to holding `pg_advisory_xact_lock`, which waits for every node's writer).
    /// Served in `/metrics` as `idvd_store_write_lock_wait_seconds`, as for SQLite.
    public func writeLockWaits() -> DurationHistogram? {
        statsLock.withLock { lockWaits }
    }

    /// What this node's store has waited for, since it opened: the write lock (seconds over all
    /// write transactions, the transactions counted) and free pool connections.
    public struct WaitStatistics: Sendable, Equatable {
        public var writeTransactions: Int
        public var writeLockWaitSeconds: Double
        public var connectionCheckouts: Int
        public var connectionWaitSeconds: Double
    }

    public var waitStatistics: WaitStatistics {
        statsLock.withLock { WaitStatistics(writeTransactions: writeTransactions, writeLockWaitSeconds: writeLockWait,
                                            connectionCheckouts: pool.checkouts, connectionWaitSeconds: pool.waitSeconds) }
    }

    /// The PostgreSQL server version number (e.g. 150018), from a pooled connection.
    public func serverVersion() throws -> Int { try withConnection { $0.serverVersion } }
}
