import Foundation
import IDVCore

/// The persistent state of the server, as domain records. Everything above this protocol (HTTP,
/// flows, admin) talks only to it, so another database (PostgreSQL, a later issue) is one more
/// conforming type and nothing above changes.
///
/// Contract for implementations:
/// - Every method is atomic and safe to call from any thread.
/// - ``withTransaction(_:)`` runs several calls as one atomic unit (nested calls join it).
/// - ``updateSession(_:expectedVersion:consuming:)`` is a compare-and-set on the session's
///   `version`: it writes only when the stored version equals `expectedVersion` (then stores
///   `expectedVersion + 1`) and records the consumed challenge id in the same commit. This is
///   what makes "concurrent answers to one challenge: exactly one wins" hold across processes.
/// - Times are Unix seconds (`Int`).
///
/// Tables reserved for the IDV workflow engine (created by migration 1, methods added with it):
/// `biometric_templates`, `consents`, `document_scans`; `flow_runs` and the hash-chained
/// `audit_log` are already used here.
public protocol Store: AnyObject, Sendable {
    /// The schema version after migrations (SQLite `user_version`).
    func schemaVersion() throws -> Int
    /// The schema version this build's migrations reach (nil: the store has no migrations), for
    /// `/readyz`: a database behind it is not ready.
    var buildSchemaVersion: Int? { get }
    /// Closes the store; later calls throw. Idempotent.
    func close()
    /// Runs `body` as one transaction: all of its store calls commit together or not at all.
    func withTransaction<T>(_ body: () throws -> T) throws -> T

    // MARK: Users
    /// Inserts a user; throws ``StoreError/conflict`` when the user id exists.
    func createUser(_ user: UserRecord) throws
    func user(_ userID: String) throws -> UserRecord?
    func users() throws -> [UserRecord]
    /// Replaces the stored user with the same id.
    func saveUser(_ user: UserRecord) throws

    // MARK: Activation codes (one live code per user)
    /// Stores the user's activation code, replacing any previous one.
    func saveActivationCode(_ code: ActivationCodeRecord) throws
    func activationCode(userID: String) throws -> ActivationCodeRecord?

    // MARK: Devices
    func createDevice(_ device: DeviceRecord) throws
    func device(_ deviceID: String) throws -> DeviceRecord?
    func saveDevice(_ device: DeviceRecord) throws
    func devices(userID: String) throws -> [DeviceRecord]

    // MARK: Sessions and challenges
    func createSession(_ session: SessionRecord) throws
    func session(tokenHash: String) throws -> SessionRecord?
    /// Compare-and-set (see the type's contract). Returns false when the version moved (another
    /// answer won); then nothing was written. Throws ``StoreError/conflict`` when
    /// `consuming` was already consumed. Writes the record's ``SessionRecord/tokenHash`` too (the
    /// token is rotated at login: the pre-login token stops working).
    func updateSession(_ session: SessionRecord, expectedVersion: Int, consuming challengeID: String?) throws -> Bool
    /// Moves `last_seen_at` (idle expiry) without touching the version.
    func touchSession(sessionID: String, at time: Int) throws
    /// Revokes every live session of a user; returns how many.
    @discardableResult func revokeSessions(userID: String, at time: Int) throws -> Int
    /// The session that consumed `challengeID`, or nil when it was never consumed.
    func consumedChallengeSession(_ challengeID: String) throws -> String?
    /// The stored `version` of a live (not revoked) session, without reading its state; nil when
    /// the session is gone or revoked. The engine's in-transaction staleness check.
    func liveSessionVersion(sessionID: String) throws -> Int?
    /// Sessions that can no longer be used — revoked, or past idle or absolute expiry at `now` —
    /// oldest first, at most `limit`. Rows whose state does not open are skipped.
    func purgeableSessions(now: Int, limit: Int) throws -> [SessionRecord]
    /// Deletes a session row and its consumed challenge ids when its version is still
    /// `expectedVersion`; returns false (nothing deleted) otherwise.
    func deleteSession(sessionID: String, expectedVersion: Int) throws -> Bool

    /// Deletes at most `limit` devices that no user is bound to (`user_id` NULL), last used (or,
    /// never used, registered) before `unusedSince` (Unix seconds), and that no session row
    /// names; returns how many. The expiry sweep's end of device registrations that never led to
    /// a login (docs/LIMITS.md), so they are limited per address and also do not stay forever.
    @discardableResult func deleteUnboundDevices(unusedSince: Int, limit: Int) throws -> Int

    // MARK: Abuse-limit counters shared by every node (Limits/AbuseLimits.swift, docs/LIMITS.md)
    /// The counters named by `keys` (keys without a counter are absent from the result).
    func limitCounters(_ keys: [String]) throws -> [String: LimitCounterRecord]
    /// Inserts `counter`, or replaces the one with its key.
    func saveLimitCounter(_ counter: LimitCounterRecord) throws
    /// Deletes the counter `key` (nothing when there is none).
    func deleteLimitCounter(key: String) throws
    /// Deletes every counter whose key starts with `keyPrefix`; returns how many.
    @discardableResult func deleteLimitCounters(keyPrefix: String) throws -> Int
    /// Deletes at most `limit` counters last updated before `updatedBefore` whose back-off ended by
    /// `now` (Unix seconds); returns how many. The expiry sweep's end of idle limits.
    @discardableResult func deleteIdleLimitCounters(updatedBefore: Int, now: Int, limit: Int) throws -> Int
    /// How many counters are stored (`/metrics`: `idvd_limit_counters`).
    func limitCounterCount() throws -> Int

    // MARK: Flow runs (outcomes for metrics and audit)
    func startFlowRun(_ run: FlowRunRecord) throws
    func endFlowRun(runID: String, at time: Int, outcome: FlowOutcome, errorCode: Int) throws
    /// Deletes the flow runs of session `sessionID` that never had a user (`user_id` NULL): the
    /// expiry sweep's end of a session that never identified one (docs/LIMITS.md). Returns how many.
    @discardableResult func deleteAnonymousFlowRuns(sessionID: String) throws -> Int

    // MARK: Audit log (append-only, hash-chained)
    /// Appends an entry, chaining its hash to the previous one; returns the stored entry.
    /// `details` must hold ids and codes only — never secrets or personal data.
    @discardableResult func appendAudit(action: String, userID: String?, sessionID: String?, details: JSONValue, at time: Int) throws -> AuditEntry
    /// The last `limit` entries, oldest first.
    func auditEntries(limit: Int) throws -> [AuditEntry]
    /// Recomputes the whole chain; returns the `seq` of the first entry that does not verify, or nil.
    func verifyAuditChain() throws -> Int?
    /// Number of audit-log entries (`idvd admin audit --verify`).
    func auditEntryCount() throws -> Int
    /// Time spent waiting for the store's write lock so far (one observation per transaction), or
    /// nil when the store does not measure it (the default). Served in `/metrics` as
    /// `idvd_store_write_lock_wait_seconds`.
    func writeLockWaits() -> DurationHistogram?
}

extension Store {
    public func writeLockWaits() -> DurationHistogram? { nil }
    public var buildSchemaVersion: Int? { nil }
}

/// Errors a ``Store`` throws.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A unique key already exists (user id taken, challenge already consumed).
    case conflict(String)
    /// The store was closed.
    case closed
    /// The database failed (I/O, corruption, full disk); the message names the statement, never values.
    case database(String)
    /// The database cannot serve for now, though nothing is wrong with the request or the data:
    /// it cannot be reached, is shutting down or starting up, has no connection to spare, or
    /// rolled the transaction back in a conflict between writers. The HTTP edge answers 503 with
    /// `Retry-After` and code 1038 `storeUnavailable` (docs/OPERATIONS.md); the message names the
    /// cause, never values.
    case unavailable(StoreUnavailability, String)

    public var description: String {
        switch self {
        case let .conflict(m): return "conflict: \(m)"
        case .closed: return "store closed"
        case let .database(m): return "database: \(m)"
        case let .unavailable(r, m): return "database unavailable (\(r.rawValue)): \(m)"
        }
    }
}

/// Why the database cannot serve for now (``StoreError/unavailable(_:_:)``): the label of
/// `idvd_store_unavailable_total{reason}` and of `/readyz`'s reasons.
public enum StoreUnavailability: String, Sendable, CaseIterable, Codable {
    /// No connection could be made, or the connection broke (PostgreSQL SQLSTATE class 08, a
    /// refused or lost socket).
    case unreachable
    /// The server is shutting down or starting up (SQLSTATE 57P01 admin_shutdown, 57P02
    /// crash_shutdown, 57P03 cannot_connect_now; "the database system is starting up").
    case shuttingDown = "shutting_down"
    /// The server has no connection slot left (SQLSTATE 53300 too_many_connections).
    case tooManyConnections = "too_many_connections"
    /// This node's connection pool had no free connection within `db.checkout_timeout_seconds`.
    case poolExhausted = "pool_exhausted"
    /// The server rolled the transaction back in a conflict between writers (SQLSTATE 40001
    /// serialization_failure, 40P01 deadlock_detected).
    case writeConflict = "write_conflict"
    /// SQLite: another process held the database's lock past the busy timeout (SQLITE_BUSY).
    case busy

    /// Seconds a client should wait before sending the same request again (`Retry-After`).
    public var retryAfterSeconds: Int {
        switch self {
        case .unreachable, .shuttingDown: return 5
        case .tooManyConnections: return 2
        case .poolExhausted, .writeConflict, .busy: return 1
        }
    }
}

/// A user's lifecycle state.
public enum UserState: String, Codable, Sendable, CaseIterable {
    /// Created by an admin; waits for activation with its one-time code.
    case pendingActivation = "pending_activation"
    /// Activated: has a password; may log in.
    case active
    /// Locked after `password.lock_threshold` wrong passwords, until `locked_at` + the lock's
    /// length (``PasswordLockout``; docs/LIMITS.md); `idvd admin unlock-user` unlocks at once.
    case locked
}

public struct UserRecord: Codable, Sendable, Equatable {
    public var userID: String
    public var state: UserState
    /// Whether activation must pass an IDV workflow (default on; seed 002 §11.2 #1).
    public var activationRequiresIDV: Bool
    /// The ``IDVWorkflow`` raw value used for activation IDV (default 0 `IDV_ACTIVATION`).
    public var idvWorkflow: Int
    /// Argon2id string (libsodium `crypto_pwhash_str`), nil before activation.
    public var passwordHash: String?
    /// Consecutive wrong passwords since the last right one, on every path that checks one (login,
    /// LDA fallback, opt-in/opt-out re-authentication).
    public var failedPasswordAttempts: Int
    public var lockedAt: Int?
    public var createdAt: Int
    public var updatedAt: Int

    public init(userID: String, state: UserState = .pendingActivation, activationRequiresIDV: Bool = true,
                idvWorkflow: Int = IDVWorkflow.activation.rawValue, passwordHash: String? = nil,
                failedPasswordAttempts: Int = 0, lockedAt: Int? = nil, createdAt: Int, updatedAt: Int) {
        self.userID = userID
        self.state = state
        self.activationRequiresIDV = activationRequiresIDV
        self.idvWorkflow = idvWorkflow
        self.passwordHash = passwordHash
        self.failedPasswordAttempts = failedPasswordAttempts
        self.lockedAt = lockedAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A one-time activation code, stored as SHA-256(salt ‖ code) — never in clear.
public struct ActivationCodeRecord: Codable, Sendable, Equatable {
    public var userID: String
    public var codeHash: String
    public var salt: String
    public var expiresAt: Int
    public var attemptsLeft: Int
    public var usedAt: Int?
    public var createdAt: Int
    /// The session the accepted code is bound to while its activation runs (IDV, set password);
    /// nil when free. The code is consumed (`usedAt`) only when activation completes.
    public var boundSessionID: String?
    /// Until when the binding holds (the bound session's absolute expiry, Unix seconds): after it,
    /// or once released (IDV ended without success), another session may use the code.
    public var boundUntil: Int?

    public init(userID: String, codeHash: String, salt: String, expiresAt: Int, attemptsLeft: Int, usedAt: Int? = nil, createdAt: Int,
                boundSessionID: String? = nil, boundUntil: Int? = nil) {
        self.boundSessionID = boundSessionID
        self.boundUntil = boundUntil
        self.userID = userID
        self.codeHash = codeHash
        self.salt = salt
        self.expiresAt = expiresAt
        self.attemptsLeft = attemptsLeft
        self.usedAt = usedAt
        self.createdAt = createdAt
    }
}

/// One abuse-limit counter in the store, so that every `idvd` node on one database counts
/// together (``AbuseLimits``): a client's failure budget (a token bucket: `tokens` left at
/// `updatedAt`) or the back-off of one (credential kind, user, client) pair (`failures` since its
/// last back-off, `rounds` of back-off so far, `blockedUntil`). `key` is a table prefix and the
/// SHA-256 of what it counts (`auth|…`, `pair|…`), so neither user ids nor addresses are stored.
public struct LimitCounterRecord: Codable, Sendable, Equatable {
    public var key: String
    public var tokens: Double
    public var failures: Int
    public var rounds: Int
    /// Unix seconds; 0 when the pair never backed off.
    public var blockedUntil: Int
    /// Unix seconds of the last change.
    public var updatedAt: Int
    public init(key: String, tokens: Double = 0, failures: Int = 0, rounds: Int = 0, blockedUntil: Int = 0, updatedAt: Int) {
        self.key = key
        self.tokens = tokens
        self.failures = failures
        self.rounds = rounds
        self.blockedUntil = blockedUntil
        self.updatedAt = updatedAt
    }
}

/// An SDK install, identified by its Ed25519 public key; bound to a user at activation/login.
public struct DeviceRecord: Codable, Sendable, Equatable {
    public var deviceID: String
    /// Raw 32-byte Ed25519 public key, standard base64.
    public var publicKey: String
    public var label: String?
    public var userID: String?
    /// The user consented to LDA on this device and proved possession of the key.
    public var ldaEnabled: Bool
    public var createdAt: Int
    public var lastUsedAt: Int?

    public init(deviceID: String, publicKey: String, label: String? = nil, userID: String? = nil,
                ldaEnabled: Bool = false, createdAt: Int, lastUsedAt: Int? = nil) {
        self.deviceID = deviceID
        self.publicKey = publicKey
        self.label = label
        self.userID = userID
        self.ldaEnabled = ldaEnabled
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// One session: an opaque bearer token (stored as its SHA-256) bound to a device and, once known,
/// a user; carries the flow stack and the current challenge.
public struct SessionRecord: Codable, Sendable, Equatable {
    public var sessionID: String
    public var tokenHash: String
    public var userID: String?
    public var deviceID: String?
    public var loggedIn: Bool
    public var createdAt: Int
    public var lastSeenAt: Int
    /// Idle timeout in seconds (expires `lastSeenAt + idleTimeout`).
    public var idleTimeout: Int
    public var absoluteExpiresAt: Int
    public var revokedAt: Int?
    /// Compare-and-set counter; bumped by every committed answer.
    public var version: Int
    public var state: SessionFlowState

    public init(sessionID: String, tokenHash: String, userID: String? = nil, deviceID: String? = nil, loggedIn: Bool = false,
                createdAt: Int, lastSeenAt: Int, idleTimeout: Int, absoluteExpiresAt: Int, revokedAt: Int? = nil,
                version: Int = 0, state: SessionFlowState = SessionFlowState()) {
        self.sessionID = sessionID
        self.tokenHash = tokenHash
        self.userID = userID
        self.deviceID = deviceID
        self.loggedIn = loggedIn
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.idleTimeout = idleTimeout
        self.absoluteExpiresAt = absoluteExpiresAt
        self.revokedAt = revokedAt
        self.version = version
        self.state = state
    }

    public var idleExpiresAt: Int { lastSeenAt + idleTimeout }
    public func isExpired(at now: Int) -> Bool { now >= absoluteExpiresAt || now >= idleExpiresAt }
}

/// The persisted flow machinery of a session: a stack of flow frames (a sub-flow — e.g. the IDV
/// activation steps — runs on top of its caller) and the challenge currently asked.
public struct SessionFlowState: Codable, Sendable, Equatable {
    public var stack: [FlowFrame]
    public var challenge: PendingChallenge?
    public init(stack: [FlowFrame] = [], challenge: PendingChallenge? = nil) { self.stack = stack; self.challenge = challenge }
}

/// One flow's persisted state: which flow, which run, and the flow's own typed `Codable` state
/// (``Flow/State``, encoded), so flows added later need no schema change.
public struct FlowFrame: Codable, Sendable, Equatable {
    public var flow: String
    public var runID: String
    public var state: JSONValue
    public init(flow: String, runID: String, state: JSONValue) {
        self.flow = flow
        self.runID = runID
        self.state = state
    }
}

/// The challenge a session waits on, as the engine keeps it (the client sees it as a ``WireChallenge``).
public struct PendingChallenge: Codable, Sendable, Equatable {
    public var challengeID: String
    public var name: String
    public var mode: Int
    public var workflow: Int?
    public var attemptsLeft: Int
    public var userID: String?
    public var payload: JSONValue
    public var error: IDVError?
    public var status: RequestStatus?

    public init(challengeID: String, spec: ChallengeSpec, userID: String?) {
        self.challengeID = challengeID
        name = spec.name
        mode = spec.mode
        workflow = spec.workflow
        attemptsLeft = spec.attemptsLeft
        self.userID = spec.userID ?? userID
        payload = spec.payload
        error = spec.error
        status = spec.status
    }

    /// The wire form.
    public var wire: WireChallenge {
        WireChallenge(name: name, challengeID: challengeID, challengeMode: mode, idvWorkflow: workflow, attemptsLeft: attemptsLeft,
                      userID: userID, payload: payload, error: error, status: status)
    }
}

public struct FlowRunRecord: Codable, Sendable, Equatable {
    public var runID: String
    public var sessionID: String
    public var userID: String?
    public var flow: String
    public var idvWorkflow: Int?
    public var startedAt: Int
    public init(runID: String, sessionID: String, userID: String?, flow: String, idvWorkflow: Int?, startedAt: Int) {
        self.runID = runID
        self.sessionID = sessionID
        self.userID = userID
        self.flow = flow
        self.idvWorkflow = idvWorkflow
        self.startedAt = startedAt
    }
}

/// One audit-log entry. `hash` = SHA-256 hex of `prev_hash|seq|at|action|user_id|session_id|details`.
public struct AuditEntry: Codable, Sendable, Equatable {
    public var seq: Int
    public var at: Int
    public var action: String
    public var userID: String?
    public var sessionID: String?
    public var details: JSONValue
    public var prevHash: String
    public var hash: String

    enum CodingKeys: String, CodingKey {
        case seq, at, action, userID = "user_id", sessionID = "session_id", details, prevHash = "prev_hash", hash
    }

    public init(seq: Int, at: Int, action: String, userID: String?, sessionID: String?, details: JSONValue, prevHash: String, hash: String) {
        self.seq = seq
        self.at = at
        self.action = action
        self.userID = userID
        self.sessionID = sessionID
        self.details = details
        self.prevHash = prevHash
        self.hash = hash
    }

    public static let genesisHash = String(repeating: "0", count: 64)
}
