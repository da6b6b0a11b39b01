internal import CPostgres
import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime

/// The ``Store`` on PostgreSQL (libpq), for N stateless `idvd` nodes on one database.
///
/// - **Connections:** a pool per node (``PGPool``, `db.pool_size`); prepared statements per
///   connection; rows decoded by column type (``PGRow``).
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
public final class PostgresStore: Store, @unchecked Sendable {
    /// Advisory-lock keys (two-int form): namespace "IDVD", then 1 migrations, 2 write lock.
    static let lockNamespace: Int32 = 0x4944_5644
    static let migrationLock: Int32 = 1
    static let writeLock: Int32 = 2
    /// How long a sweep's claim on a session holds (another node's sweep skips it meanwhile), seconds.
    public static let sweepClaimSeconds = 60

    let pool: PGPool
    let stateSealer: SessionStateSealer
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
        get { statsLock.lock(); defer { statsLock.unlock() }; return logStats }
        set { statsLock.lock(); logStats = newValue; statsLock.unlock() }
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
        bindingsLock.lock(); defer { bindingsLock.unlock() }
        return bindings[pthread_self()]
    }

    private func setBinding(_ b: Binding?) {
        bindingsLock.lock(); defer { bindingsLock.unlock() }
        bindings[pthread_self()] = b
    }

    /// Runs `body` on the calling thread's transaction connection, or on a pooled one.
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        if let b = currentBinding() { return try body(b.connection) }
        let c = try pool.checkout()
        defer { pool.checkin(c) }
        return try body(c)
    }

    /// Runs one prepared statement (in the thread's transaction when there is one). Outside a
    /// transaction a read (`SELECT`) that failed because its connection broke is retried once on a
    /// new connection — after a server restart each pooled connection would otherwise fail one
    /// request; a write is never retried (it may have been applied before the connection broke).
    @discardableResult
    func query(_ sql: String, _ params: [PGValue] = []) throws -> PGResult {
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
        statsLock.lock(); defer { statsLock.unlock() }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        writeTransactions += 1
        writeLockWait += seconds
        lockWaits.observe(seconds)
    }

    /// The cluster-wide write lock's waits on this node so far: one observation per write transaction
    /// (seconds from `BEGIN` to holding `pg_advisory_xact_lock`, which waits for every node's writer).
    /// Served in `/metrics` as `idvd_store_write_lock_wait_seconds`, as for SQLite.
    public func writeLockWaits() -> DurationHistogram? {
        statsLock.lock(); defer { statsLock.unlock() }
        return lockWaits
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
        statsLock.lock(); defer { statsLock.unlock() }
        return WaitStatistics(writeTransactions: writeTransactions, writeLockWaitSeconds: writeLockWait,
                              connectionCheckouts: pool.checkouts, connectionWaitSeconds: pool.waitSeconds)
    }

    /// The PostgreSQL server version number (e.g. 150018), from a pooled connection.
    public func serverVersion() throws -> Int { try withConnection { $0.serverVersion } }

    // MARK: Users

    private static let userColumns = "user_id, state, activation_requires_idv, idv_workflow, password_hash, failed_password_attempts, locked_at, created_at, updated_at"

    private func userParams(_ u: UserRecord) -> [PGValue] {
        [.text(u.userID), .text(u.state.rawValue), .bool(u.activationRequiresIDV), PGValue(u.idvWorkflow),
         PGValue(u.passwordHash), PGValue(u.failedPasswordAttempts), PGValue(u.lockedAt), PGValue(u.createdAt), PGValue(u.updatedAt)]
    }

    private func userRow(_ r: PGRow) throws -> UserRecord {
        let raw = try r.text(1)
        guard let state = UserState(rawValue: raw) else { throw StoreError.database("users.state holds an unknown state") }
        return UserRecord(userID: try r.text(0), state: state, activationRequiresIDV: try r.bool(2), idvWorkflow: try r.int(3),
                          passwordHash: try r.optionalText(4), failedPasswordAttempts: try r.int(5), lockedAt: try r.optionalInt(6),
                          createdAt: try r.int(7), updatedAt: try r.int(8))
    }

    public func createUser(_ user: UserRecord) throws {
        try query("INSERT INTO users (\(Self.userColumns)) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)", userParams(user))
    }

    public func user(_ userID: String) throws -> UserRecord? {
        try query("SELECT \(Self.userColumns) FROM users WHERE user_id = $1", [.text(userID)]).rows.first.map(userRow)
    }

    public func users() throws -> [UserRecord] {
        try query("SELECT \(Self.userColumns) FROM users ORDER BY user_id").rows.map(userRow)
    }

    public func saveUser(_ user: UserRecord) throws {
        try query("UPDATE users SET state=$2, activation_requires_idv=$3, idv_workflow=$4, password_hash=$5, failed_password_attempts=$6, locked_at=$7, created_at=$8, updated_at=$9 WHERE user_id=$1",
                  userParams(user))
    }

    // MARK: Activation codes

    public func saveActivationCode(_ c: ActivationCodeRecord) throws {
        try query("""
            INSERT INTO activation_codes (user_id, code_hash, salt, expires_at, attempts_left, used_at, created_at, bound_session_id, bound_until)
            VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)
            ON CONFLICT (user_id) DO UPDATE SET code_hash = EXCLUDED.code_hash, salt = EXCLUDED.salt, expires_at = EXCLUDED.expires_at,
                attempts_left = EXCLUDED.attempts_left, used_at = EXCLUDED.used_at, created_at = EXCLUDED.created_at,
                bound_session_id = EXCLUDED.bound_session_id, bound_until = EXCLUDED.bound_until
            """,
                  [.text(c.userID), .text(c.codeHash), .text(c.salt), PGValue(c.expiresAt), PGValue(c.attemptsLeft), PGValue(c.usedAt),
                   PGValue(c.createdAt), PGValue(c.boundSessionID), PGValue(c.boundUntil)])
    }

    public func activationCode(userID: String) throws -> ActivationCodeRecord? {
        try query("SELECT user_id, code_hash, salt, expires_at, attempts_left, used_at, created_at, bound_session_id, bound_until FROM activation_codes WHERE user_id = $1",
                  [.text(userID)]).rows.first.map { r in
            ActivationCodeRecord(userID: try r.text(0), codeHash: try r.text(1), salt: try r.text(2), expiresAt: try r.int(3),
                                 attemptsLeft: try r.int(4), usedAt: try r.optionalInt(5), createdAt: try r.int(6),
                                 boundSessionID: try r.optionalText(7), boundUntil: try r.optionalInt(8))
        }
    }

    // MARK: Devices

    private static let deviceColumns = "device_id, public_key, label, user_id, lda_enabled, created_at, last_used_at"

    private func deviceRow(_ r: PGRow) throws -> DeviceRecord {
        DeviceRecord(deviceID: try r.text(0), publicKey: try r.text(1), label: try r.optionalText(2), userID: try r.optionalText(3),
                     ldaEnabled: try r.bool(4), createdAt: try r.int(5), lastUsedAt: try r.optionalInt(6))
    }

    public func createDevice(_ d: DeviceRecord) throws {
        try query("INSERT INTO devices (\(Self.deviceColumns)) VALUES ($1,$2,$3,$4,$5,$6,$7)",
                  [.text(d.deviceID), .text(d.publicKey), PGValue(d.label), PGValue(d.userID), .bool(d.ldaEnabled), PGValue(d.createdAt), PGValue(d.lastUsedAt)])
    }

    public func device(_ deviceID: String) throws -> DeviceRecord? {
        try query("SELECT \(Self.deviceColumns) FROM devices WHERE device_id = $1", [.text(deviceID)]).rows.first.map(deviceRow)
    }

    public func saveDevice(_ d: DeviceRecord) throws {
        try query("UPDATE devices SET public_key=$2, label=$3, user_id=$4, lda_enabled=$5, created_at=$6, last_used_at=$7 WHERE device_id=$1",
                  [.text(d.deviceID), .text(d.publicKey), PGValue(d.label), PGValue(d.userID), .bool(d.ldaEnabled), PGValue(d.createdAt), PGValue(d.lastUsedAt)])
    }

    public func devices(userID: String) throws -> [DeviceRecord] {
        try query("SELECT \(Self.deviceColumns) FROM devices WHERE user_id = $1 ORDER BY created_at, device_id", [.text(userID)]).rows.map(deviceRow)
    }

    // MARK: Sessions

    private static let sessionColumns = "session_id, token_hash, user_id, device_id, logged_in, created_at, last_seen_at, idle_timeout, absolute_expires_at, revoked_at, version, state"

    private func sessionRow(_ r: PGRow) throws -> SessionRecord {
        let sessionID = try r.text(0)
        let state: SessionFlowState
        do { state = try stateSealer.open(try r.bytes(11), sessionID: sessionID) } catch {
            throw StoreError.database("session state does not open (wrong key, another session's row, or altered)")
        }
        return SessionRecord(sessionID: sessionID, tokenHash: try r.text(1), userID: try r.optionalText(2), deviceID: try r.optionalText(3),
                             loggedIn: try r.bool(4), createdAt: try r.int(5), lastSeenAt: try r.int(6), idleTimeout: try r.int(7),
                             absoluteExpiresAt: try r.int(8), revokedAt: try r.optionalInt(9), version: try r.int(10), state: state)
    }

    private func sealedState(_ s: SessionRecord) throws -> PGValue {
        .bytes(try stateSealer.seal(s.state, sessionID: s.sessionID))
    }

    public func createSession(_ s: SessionRecord) throws {
        try query("INSERT INTO sessions (\(Self.sessionColumns)) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)",
                  [.text(s.sessionID), .text(s.tokenHash), PGValue(s.userID), PGValue(s.deviceID), .bool(s.loggedIn),
                   PGValue(s.createdAt), PGValue(s.lastSeenAt), PGValue(s.idleTimeout), PGValue(s.absoluteExpiresAt),
                   PGValue(s.revokedAt), PGValue(s.version), try sealedState(s)])
    }

    public func session(tokenHash: String) throws -> SessionRecord? {
        try query("SELECT \(Self.sessionColumns) FROM sessions WHERE token_hash = $1", [.text(tokenHash)]).rows.first.map(sessionRow)
    }

    public func updateSession(_ s: SessionRecord, expectedVersion: Int, consuming challengeID: String?) throws -> Bool {
        let sealed = try sealedState(s)
        return try withTransaction {
            let n = try query("UPDATE sessions SET user_id=$1, device_id=$2, logged_in=$3, last_seen_at=$4, revoked_at=$5, version=$6, state=$7, token_hash=$10 WHERE session_id=$8 AND version=$9",
                              [PGValue(s.userID), PGValue(s.deviceID), .bool(s.loggedIn), PGValue(s.lastSeenAt), PGValue(s.revokedAt),
                               PGValue(expectedVersion + 1), sealed, .text(s.sessionID), PGValue(expectedVersion), .text(s.tokenHash)]).affected
            guard n == 1 else { return false }
            if let challengeID {
                try query("INSERT INTO consumed_challenges (challenge_id, session_id, consumed_at) VALUES ($1,$2,$3)",
                          [.text(challengeID), .text(s.sessionID), PGValue(s.lastSeenAt)])
            }
            return true
        }
    }

    public func touchSession(sessionID: String, at time: Int) throws {
        try query("UPDATE sessions SET last_seen_at = GREATEST(last_seen_at, $1) WHERE session_id = $2", [PGValue(time), .text(sessionID)])
    }

    @discardableResult
    public func revokeSessions(userID: String, at time: Int) throws -> Int {
        try withTransaction {
            try query("UPDATE sessions SET revoked_at = $1, version = version + 1 WHERE user_id = $2 AND revoked_at IS NULL",
                      [PGValue(time), .text(userID)]).affected
        }
    }

    public func liveSessionVersion(sessionID: String) throws -> Int? {
        try query("SELECT version FROM sessions WHERE session_id = $1 AND revoked_at IS NULL", [.text(sessionID)]).rows.first?.int(0)
    }

    /// As the protocol says, and: the returned sessions are claimed by this store (this node) for
    /// ``sweepClaimSeconds`` counted from `now`, so a sweep on another node at the same time gets
    /// other sessions (or none), while this node is offered its own claims again exactly as SQLite
    /// offers a session again. A claimed session that was not deleted (answered or revoked
    /// meanwhile) is offered to every node once its claim lapses.
    public func purgeableSessions(now: Int, limit: Int) throws -> [SessionRecord] {
        let rows = try query("""
            UPDATE sessions SET sweep_claimed_by = $4, sweep_claimed_until = $2
            WHERE session_id IN (
                SELECT session_id FROM sessions
                WHERE (revoked_at IS NOT NULL OR absolute_expires_at <= $1 OR last_seen_at + idle_timeout <= $1)
                  AND (sweep_claimed_until IS NULL OR sweep_claimed_until <= $1 OR sweep_claimed_by = $4)
                ORDER BY last_seen_at LIMIT $3
                FOR UPDATE SKIP LOCKED)
            RETURNING \(Self.sessionColumns)
            """, [PGValue(now), PGValue(now + Self.sweepClaimSeconds), PGValue(max(0, limit)), .text(nodeID)]).rows
        return rows.compactMap { try? sessionRow($0) }.sorted { ($0.lastSeenAt, $0.sessionID) < ($1.lastSeenAt, $1.sessionID) }
    }

    public func deleteSession(sessionID: String, expectedVersion: Int) throws -> Bool {
        try withTransaction {
            let n = try query("DELETE FROM sessions WHERE session_id = $1 AND version = $2", [.text(sessionID), PGValue(expectedVersion)]).affected
            guard n == 1 else { return false }
            try query("DELETE FROM consumed_challenges WHERE session_id = $1", [.text(sessionID)])
            return true
        }
    }

    public func consumedChallengeSession(_ challengeID: String) throws -> String? {
        try query("SELECT session_id FROM consumed_challenges WHERE challenge_id = $1", [.text(challengeID)]).rows.first?.text(0)
    }

    // MARK: Flow runs

    public func startFlowRun(_ r: FlowRunRecord) throws {
        try query("INSERT INTO flow_runs (run_id, session_id, user_id, flow, idv_workflow, started_at) VALUES ($1,$2,$3,$4,$5,$6)",
                  [.text(r.runID), .text(r.sessionID), PGValue(r.userID), .text(r.flow), PGValue(r.idvWorkflow), PGValue(r.startedAt)])
    }

    public func endFlowRun(runID: String, at time: Int, outcome: FlowOutcome, errorCode: Int) throws {
        try query("UPDATE flow_runs SET ended_at = $1, outcome = $2, error_code = $3 WHERE run_id = $4 AND ended_at IS NULL",
                  [PGValue(time), .text(outcome.rawValue), PGValue(errorCode), .text(runID)])
    }

    @discardableResult
    public func deleteUnboundDevices(unusedSince: Int, limit: Int) throws -> Int {
        try query("""
            DELETE FROM devices WHERE device_id IN (
              SELECT d.device_id FROM devices d
              WHERE d.user_id IS NULL AND COALESCE(d.last_used_at, d.created_at) < $1
                AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.device_id = d.device_id)
              LIMIT $2 FOR UPDATE OF d SKIP LOCKED)
            """, [PGValue(unusedSince), PGValue(limit)]).affected
    }

    @discardableResult
    public func deleteAnonymousFlowRuns(sessionID: String) throws -> Int {
        try query("DELETE FROM flow_runs WHERE session_id = $1 AND user_id IS NULL", [.text(sessionID)]).affected
    }

    // MARK: Audit

    static func canonicalJSON(_ v: JSONValue) -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: enc.encode(v), as: UTF8.self)) ?? "null"
    }

    /// Appends in the caller's transaction (or its own): locks the chain head row, chains to it,
    /// inserts the entry and moves the head; the lock holds until COMMIT, so the next append on any
    /// node chains to this entry (docs/AUDIT-CHAIN.md).
    @discardableResult
    public func appendAudit(action: String, userID: String?, sessionID: String?, details: JSONValue, at time: Int) throws -> AuditEntry {
        let detailsJSON = Self.canonicalJSON(details)
        return try withTransaction {
            guard let head = try query("SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE").rows.first else {
                throw StoreError.database("audit_head has no row")
            }
            let seq = try head.int(0) + 1
            let prev = try head.text(1)
            let hash = AuditEntry.chainHash(prevHash: prev, seq: seq, at: time, action: action, userID: userID, sessionID: sessionID, detailsJSON: detailsJSON)
            try query("INSERT INTO audit_log (seq, at, action, user_id, session_id, details, prev_hash, hash) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
                      [PGValue(seq), PGValue(time), .text(action), PGValue(userID), PGValue(sessionID), .text(detailsJSON), .text(prev), .text(hash)])
            try query("UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1", [PGValue(seq), .text(hash)])
            return AuditEntry(seq: seq, at: time, action: action, userID: userID, sessionID: sessionID, details: details, prevHash: prev, hash: hash)
        }
    }

    static let auditColumns = "seq, at, action, user_id, session_id, details, prev_hash, hash"

    func auditRow(_ r: PGRow) throws -> (AuditEntry, String) {
        let detailsJSON = try r.text(5)
        let details = (try? JSONDecoder().decode(JSONValue.self, from: Data(detailsJSON.utf8))) ?? .null
        return (AuditEntry(seq: try r.int(0), at: try r.int(1), action: try r.text(2), userID: try r.optionalText(3), sessionID: try r.optionalText(4),
                           details: details, prevHash: try r.text(6), hash: try r.text(7)), detailsJSON)
    }

    public func auditEntries(limit: Int) throws -> [AuditEntry] {
        try query("SELECT \(Self.auditColumns) FROM audit_log ORDER BY seq DESC LIMIT $1", [PGValue(max(0, limit))]).rows
            .map { try auditRow($0).0 }.reversed()
    }

    /// Rows read per round trip by ``verifyAuditChain()``.
    static let verifyBatch = 5000

    /// Recomputes the chain in `seq` order (keyset pages of ``verifyBatch`` rows, so memory stays
    /// flat at any length). Besides each entry's links it checks the chain head: a head past the
    /// last entry means entries were removed from the end, and the first missing `seq` is returned.
    public func verifyAuditChain() throws -> Int? {
        var prev = AuditEntry.genesisHash
        var last = 0
        while true {
            let rows = try query("SELECT \(Self.auditColumns) FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2",
                                 [PGValue(last), PGValue(Self.verifyBatch)]).rows
            for r in rows {
                // The stored text is what the hash covers: no need to decode `details`.
                let seq = try r.int(0), hash = try r.text(7)
                let expect = AuditEntry.chainHash(prevHash: prev, seq: seq, at: try r.int(1), action: try r.text(2), userID: try r.optionalText(3),
                                                  sessionID: try r.optionalText(4), detailsJSON: try r.text(5))
                if try r.text(6) != prev || hash != expect || seq != last + 1 { return seq }
                prev = hash
                last = seq
            }
            if rows.count < Self.verifyBatch { break }
        }
        if let head = try query("SELECT seq, hash FROM audit_head WHERE id = 1").rows.first {
            if try head.int(0) != last || (try head.text(1)) != prev { return last + 1 }
        }
        return nil
    }

    /// Number of audit-log entries (for `idvd admin audit --verify`).
    public func auditEntryCount() throws -> Int {
        try query("SELECT count(*) FROM audit_log").rows.first?.int(0) ?? 0
    }
}
