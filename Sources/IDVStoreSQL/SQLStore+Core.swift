import Foundation
import IDVCore
import IDVCrypto
import IDVEngine

// Users, activation codes, devices, sessions and their consumed challenges, flow runs: the
// ``Store`` core, written once for both databases.

/// Column lists of the core tables, in the order the row mappers read them.
public enum CoreColumns {
    public static let user = "user_id, state, activation_requires_idv, idv_workflow, password_hash, failed_password_attempts, locked_at, created_at, updated_at"
    public static let activationCode = "user_id, code_hash, salt, expires_at, attempts_left, used_at, created_at, bound_session_id, bound_until"
    public static let device = "device_id, public_key, label, user_id, lda_enabled, created_at, last_used_at"
    public static let session = "session_id, token_hash, user_id, device_id, logged_in, created_at, last_seen_at, idle_timeout, absolute_expires_at, revoked_at, version, state"
}

extension SQLDatabase {
    // MARK: Users

    func userRow(_ r: SQLRow) throws -> UserRecord {
        UserRecord(userID: try r.text(0), state: try r.value(1, as: UserState.self), activationRequiresIDV: try r.bool(2),
                   idvWorkflow: try r.int(3), passwordHash: try r.optionalText(4), failedPasswordAttempts: try r.int(5),
                   lockedAt: try r.optionalInt(6), createdAt: try r.int(7), updatedAt: try r.int(8))
    }

    public func createUser(_ u: UserRecord) throws {
        try run("INSERT INTO users (\(CoreColumns.user)) VALUES (?,?,?,?,?,?,?,?,?)",
                [.text(u.userID), .text(u.state.rawValue), .bool(u.activationRequiresIDV), SQLCell(u.idvWorkflow), SQLCell(u.passwordHash),
                 SQLCell(u.failedPasswordAttempts), SQLCell(u.lockedAt), SQLCell(u.createdAt), SQLCell(u.updatedAt)])
    }

    public func user(_ userID: String) throws -> UserRecord? {
        try row("SELECT \(CoreColumns.user) FROM users WHERE user_id = ?", [.text(userID)]).map(userRow)
    }

    public func users() throws -> [UserRecord] {
        try rows("SELECT \(CoreColumns.user) FROM users ORDER BY user_id").map(userRow)
    }

    public func saveUser(_ u: UserRecord) throws {
        try run("""
            UPDATE users SET state = ?, activation_requires_idv = ?, idv_workflow = ?, password_hash = ?, failed_password_attempts = ?,
                locked_at = ?, created_at = ?, updated_at = ? WHERE user_id = ?
            """, [.text(u.state.rawValue), .bool(u.activationRequiresIDV), SQLCell(u.idvWorkflow), SQLCell(u.passwordHash),
                  SQLCell(u.failedPasswordAttempts), SQLCell(u.lockedAt), SQLCell(u.createdAt), SQLCell(u.updatedAt), .text(u.userID)])
    }

    // MARK: Activation codes

    public func saveActivationCode(_ c: ActivationCodeRecord) throws {
        try run("""
            INSERT INTO activation_codes (\(CoreColumns.activationCode)) VALUES (?,?,?,?,?,?,?,?,?)
            ON CONFLICT (user_id) DO UPDATE SET code_hash = excluded.code_hash, salt = excluded.salt, expires_at = excluded.expires_at,
                attempts_left = excluded.attempts_left, used_at = excluded.used_at, created_at = excluded.created_at,
                bound_session_id = excluded.bound_session_id, bound_until = excluded.bound_until
            """, [.text(c.userID), .text(c.codeHash), .text(c.salt), SQLCell(c.expiresAt), SQLCell(c.attemptsLeft), SQLCell(c.usedAt),
                  SQLCell(c.createdAt), SQLCell(c.boundSessionID), SQLCell(c.boundUntil)])
    }

    public func activationCode(userID: String) throws -> ActivationCodeRecord? {
        try row("SELECT \(CoreColumns.activationCode) FROM activation_codes WHERE user_id = ?", [.text(userID)]).map { r in
            ActivationCodeRecord(userID: try r.text(0), codeHash: try r.text(1), salt: try r.text(2), expiresAt: try r.int(3),
                                 attemptsLeft: try r.int(4), usedAt: try r.optionalInt(5), createdAt: try r.int(6),
                                 boundSessionID: try r.optionalText(7), boundUntil: try r.optionalInt(8))
        }
    }

    // MARK: Devices

    func deviceRow(_ r: SQLRow) throws -> DeviceRecord {
        DeviceRecord(deviceID: try r.text(0), publicKey: try r.text(1), label: try r.optionalText(2), userID: try r.optionalText(3),
                     ldaEnabled: try r.bool(4), createdAt: try r.int(5), lastUsedAt: try r.optionalInt(6))
    }

    public func createDevice(_ d: DeviceRecord) throws {
        try run("INSERT INTO devices (\(CoreColumns.device)) VALUES (?,?,?,?,?,?,?)",
                [.text(d.deviceID), .text(d.publicKey), SQLCell(d.label), SQLCell(d.userID), .bool(d.ldaEnabled), SQLCell(d.createdAt), SQLCell(d.lastUsedAt)])
    }

    public func device(_ deviceID: String) throws -> DeviceRecord? {
        try row("SELECT \(CoreColumns.device) FROM devices WHERE device_id = ?", [.text(deviceID)]).map(deviceRow)
    }

    public func saveDevice(_ d: DeviceRecord) throws {
        try run("UPDATE devices SET public_key = ?, label = ?, user_id = ?, lda_enabled = ?, created_at = ?, last_used_at = ? WHERE device_id = ?",
                [.text(d.publicKey), SQLCell(d.label), SQLCell(d.userID), .bool(d.ldaEnabled), SQLCell(d.createdAt), SQLCell(d.lastUsedAt), .text(d.deviceID)])
    }

    public func devices(userID: String) throws -> [DeviceRecord] {
        try rows("SELECT \(CoreColumns.device) FROM devices WHERE user_id = ? ORDER BY created_at, device_id", [.text(userID)]).map(deviceRow)
    }

    /// Deletes at most `limit` unbound devices unused since `unusedSince` that no session names.
    @discardableResult
    public func deleteUnboundDevices(unusedSince: Int, limit: Int) throws -> Int {
        try run("""
            DELETE FROM devices WHERE device_id IN (
              SELECT d.device_id FROM devices d
              WHERE d.user_id IS NULL AND COALESCE(d.last_used_at, d.created_at) < ?
                AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.device_id = d.device_id)
              LIMIT ?)
            """, [SQLCell(unusedSince), SQLCell(max(0, limit))]).affected
    }

    // MARK: Sessions

    /// A session row with its sealed state opened (a state stored as JSON text predates sealing:
    /// it is read as is and sealed at its next write).
    public func sessionRow(_ r: SQLRow) throws -> SessionRecord {
        let sessionID = try r.text(0)
        let state: SessionFlowState
        if let legacy = try? r.text(11) {
            do { state = try JSONDecoder().decode(SessionFlowState.self, from: Data(legacy.utf8)) } catch {
                throw StoreError.database("session state (unsealed) does not decode")
            }
        } else {
            noteSessionStateOpened()
            do { state = try stateSealer.open(try r.bytes(11), sessionID: sessionID) } catch {
                throw StoreError.database("session state does not open (wrong key, another session's row, or altered)")
            }
        }
        return SessionRecord(sessionID: sessionID, tokenHash: try r.text(1), userID: try r.optionalText(2), deviceID: try r.optionalText(3),
                             loggedIn: try r.bool(4), createdAt: try r.int(5), lastSeenAt: try r.int(6), idleTimeout: try r.int(7),
                             absoluteExpiresAt: try r.int(8), revokedAt: try r.optionalInt(9), version: try r.int(10), state: state)
    }

    func sealedState(_ s: SessionRecord) throws -> SQLCell {
        .bytes(try stateSealer.seal(s.state, sessionID: s.sessionID))
    }

    public func createSession(_ s: SessionRecord) throws {
        try run("INSERT INTO sessions (\(CoreColumns.session)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                [.text(s.sessionID), .text(s.tokenHash), SQLCell(s.userID), SQLCell(s.deviceID), .bool(s.loggedIn), SQLCell(s.createdAt),
                 SQLCell(s.lastSeenAt), SQLCell(s.idleTimeout), SQLCell(s.absoluteExpiresAt), SQLCell(s.revokedAt), SQLCell(s.version),
                 try sealedState(s)])
    }

    public func session(tokenHash: String) throws -> SessionRecord? {
        try row("SELECT \(CoreColumns.session) FROM sessions WHERE token_hash = ?", [.text(tokenHash)]).map(sessionRow)
    }

    public func updateSession(_ s: SessionRecord, expectedVersion: Int, consuming challengeID: String?) throws -> Bool {
        let sealed = try sealedState(s)
        return try withTransaction {
            let n = try run("""
                UPDATE sessions SET token_hash = ?, user_id = ?, device_id = ?, logged_in = ?, last_seen_at = ?, revoked_at = ?, version = ?, state = ?
                WHERE session_id = ? AND version = ?
                """, [.text(s.tokenHash), SQLCell(s.userID), SQLCell(s.deviceID), .bool(s.loggedIn), SQLCell(s.lastSeenAt), SQLCell(s.revokedAt),
                      SQLCell(expectedVersion + 1), sealed, .text(s.sessionID), SQLCell(expectedVersion)]).affected
            guard n == 1 else { return false }
            if let challengeID {
                try run("INSERT INTO consumed_challenges (challenge_id, session_id, consumed_at) VALUES (?,?,?)",
                        [.text(challengeID), .text(s.sessionID), SQLCell(s.lastSeenAt)])
            }
            return true
        }
    }

    public func touchSession(sessionID: String, at time: Int) throws {
        try run("UPDATE sessions SET last_seen_at = max(last_seen_at, ?) WHERE session_id = ?", [SQLCell(time), .text(sessionID)])
    }

    @discardableResult
    public func revokeSessions(userID: String, at time: Int) throws -> Int {
        try run("UPDATE sessions SET revoked_at = ?, version = version + 1 WHERE user_id = ? AND revoked_at IS NULL", [SQLCell(time), .text(userID)]).affected
    }

    public func liveSessionVersion(sessionID: String) throws -> Int? {
        try row("SELECT version FROM sessions WHERE session_id = ? AND revoked_at IS NULL", [.text(sessionID)])?.int(0)
    }

    /// Revoked or expired sessions, oldest use first; rows whose state does not open are skipped.
    public func purgeableSessions(now: Int, limit: Int) throws -> [SessionRecord] {
        try rows("""
            SELECT \(CoreColumns.session) FROM sessions WHERE revoked_at IS NOT NULL OR absolute_expires_at <= ? OR last_seen_at + idle_timeout <= ?
            ORDER BY last_seen_at, session_id LIMIT ?
            """, [SQLCell(now), SQLCell(now), SQLCell(max(0, limit))]).compactMap { try? sessionRow($0) }
    }

    public func deleteSession(sessionID: String, expectedVersion: Int) throws -> Bool {
        try withTransaction {
            guard try run("DELETE FROM sessions WHERE session_id = ? AND version = ?", [.text(sessionID), SQLCell(expectedVersion)]).affected == 1 else {
                return false
            }
            try run("DELETE FROM consumed_challenges WHERE session_id = ?", [.text(sessionID)])
            return true
        }
    }

    public func consumedChallengeSession(_ challengeID: String) throws -> String? {
        try row("SELECT session_id FROM consumed_challenges WHERE challenge_id = ?", [.text(challengeID)])?.text(0)
    }

    // MARK: Flow runs

    public func startFlowRun(_ r: FlowRunRecord) throws {
        try run("INSERT INTO flow_runs (run_id, session_id, user_id, flow, idv_workflow, started_at) VALUES (?,?,?,?,?,?)",
                [.text(r.runID), .text(r.sessionID), SQLCell(r.userID), .text(r.flow), SQLCell(r.idvWorkflow), SQLCell(r.startedAt)])
    }

    public func endFlowRun(runID: String, at time: Int, outcome: FlowOutcome, errorCode: Int) throws {
        try run("UPDATE flow_runs SET ended_at = ?, outcome = ?, error_code = ? WHERE run_id = ? AND ended_at IS NULL",
                [SQLCell(time), .text(outcome.rawValue), SQLCell(errorCode), .text(runID)])
    }

    @discardableResult
    public func deleteAnonymousFlowRuns(sessionID: String) throws -> Int {
        try run("DELETE FROM flow_runs WHERE session_id = ? AND user_id IS NULL", [.text(sessionID)]).affected
    }

    public func flowOutcomes(userID: String, flow: String, since: Int) throws -> [FlowOutcome] {
        try rows("""
            SELECT outcome FROM flow_runs WHERE user_id = ? AND flow = ? AND ended_at IS NOT NULL AND ended_at >= ? AND outcome IS NOT NULL
            ORDER BY ended_at DESC, started_at DESC
            """, [.text(userID), .text(flow), SQLCell(since)]).compactMap { FlowOutcome(rawValue: try $0.text(0)) }
    }
}
