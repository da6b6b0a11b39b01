import Foundation
import IDVCore
import Synchronization

// Abuse limits (docs/LIMITS.md): how many sessions a client may open, how many wrong passwords and
// activation codes a client may send for one user before it backs off, and how many failures a
// client may have across users. The credential limits (back-offs and failure budgets) are counters
// in the store, shared by every `idvd` node on one database, changed in the transaction of the
// answer that failed; the session and device-registration rates are token buckets in memory per
// process (with N nodes behind a balancer a client may open up to N× as many). The lock-out of a
// USER across all clients is the user row (``PasswordLockout``).

/// The abuse-limit settings (config keys `limits.*`, `password.lock_*`, `activation.idv_runs`):
/// part of ``EngineSettings`` (`settings.limits`).
public struct LimitSettings: Sendable, Equatable {
    /// New sessions per client address per minute (also the burst); 0 = no limit.
    public var sessionsPerClientPerMinute = 120
    /// New sessions per registered device per minute (also the burst); 0 = no limit.
    public var sessionsPerDevicePerMinute = 30
    /// Device registrations (`POST /v1/devices`, a permanent row each) per client address per
    /// minute (also the burst); 0 = no limit.
    public var devicesPerClientPerMinute = 20
    /// Failed authentications (wrong passwords, wrong activation codes — any user) one client
    /// address, or one device, may have per ``authFailureWindowSeconds`` (a token bucket refilled
    /// over the window); beyond it every password or code it sends is refused 1111. 0 = no limit.
    public var authFailuresPerClient = 30
    public var authFailureWindowSeconds = 900
    /// The first back-off of a (user, client) pair once the client has sent `password.attempts`
    /// wrong passwords (or `activation.code_attempts` wrong codes) for that user; it doubles with
    /// each further failure after a back-off ends, up to ``backoffMaxSeconds``.
    public var backoffSeconds = 30
    public var backoffMaxSeconds = 3600
    /// Consecutive wrong passwords for a user, from all clients and every path that checks one,
    /// that lock the USER (temporarily) — see ``PasswordLockout``.
    public var passwordLockThreshold = 10
    /// The first user lock, seconds; each further wrong password once a lock has ended doubles it,
    /// up to ``passwordLockMaxSeconds``.
    public var passwordLockSeconds = 300
    public var passwordLockMaxSeconds = 86_400
    /// Identity-verification runs one activation code may start (stored as the code's `attempts_left`).
    public var activationIDVRuns = 3
    /// A registered device that no user was ever bound to (a `POST /v1/devices` row whose sessions
    /// never logged in) is deleted by the expiry sweep once unused for this long, seconds; 0 = kept.
    public var unboundDeviceTTLSeconds = 7 * 86_400
    /// At most this many client keys are tracked per table; beyond it idle ones are dropped first.
    public var maxTrackedKeys = 100_000

    public init() {}
}

/// A request refused because a limit holds: the refusal's error (1110, 1111) and when to retry.
/// The HTTP layer answers it with status 429 and `Retry-After: retryAfterSeconds`.
public struct ThrottledError: Error, Equatable, Sendable {
    public var error: IDVError
    /// Whole seconds until the request can succeed again (≥ 1).
    public var retryAfterSeconds: Int
    public init(_ error: IDVError, retryAfterSeconds: Int) {
        self.error = error
        self.retryAfterSeconds = max(1, retryAfterSeconds)
    }
}

/// An abuse limit, as `/metrics` names it (`idvd_limit_refusals_total{limit=…}`, docs/LIMITS.md).
public enum AbuseLimit: String, CaseIterable, Sendable {
    /// New sessions per client address per minute (`limits.sessions_per_client`), 1110.
    case sessionClient = "session_client"
    /// New sessions per device per minute (`limits.sessions_per_device`), 1110.
    case sessionDevice = "session_device"
    /// Device registrations per client address per minute (`limits.devices_per_client`), 1110.
    case deviceClient = "device_client"
    /// A client backing off for one user after wrong passwords, codes or device signatures
    /// (`password.attempts`, `activation.code_attempts`, `limits.backoff_seconds`): 1111, or 1011 at `getUser`.
    case authBackoff = "auth_backoff"
    /// A client's failure budget across users (`limits.auth_failures_per_client`), 1111.
    case authClient = "auth_client"
}

/// What a limit counts: wrong passwords, wrong activation codes, or invalid LDA device signatures
/// (a device's Ed25519 signature over `getDeviceSignature`'s challenge that does not verify).
public enum CredentialKind: String, Sendable, Codable, CaseIterable {
    case password
    case activationCode = "activation_code"
    case deviceSignature = "device_signature"
}

/// Who sent a request, as the limits key it: the peer address and, when the session has one, the device.
public struct ClientIdentity: Sendable, Equatable {
    /// The peer IP address as text, or nil when unknown (engine tests, in-process callers).
    public var address: String?
    public var deviceID: String?
    public init(address: String?, deviceID: String? = nil) {
        self.address = address
        self.deviceID = deviceID
    }
    /// The key of (user, client) back-off: the address, else the device, else nil (not tracked).
    var pairKey: String? { address.map { "a:" + $0 } ?? deviceID.map { "d:" + $0 } }
}

/// What the limits know about this client and the subject user, for a reducer (``Facts/client``).
public struct ClientCredentialFacts: Sendable, Equatable {
    /// Wrong passwords / codes this client sent for the subject since its last success (or back-off).
    public var passwordFailures = 0
    public var codeFailures = 0
    /// Until when the client backs off for the subject (Unix seconds), if it does.
    public var passwordBlockedUntil: Int?
    public var codeBlockedUntil: Int?
    /// How long the next back-off of this client for the subject lasts, seconds (per kind).
    public var nextPasswordBackoff: Int
    public var nextCodeBackoff: Int
    public init(passwordFailures: Int = 0, codeFailures: Int = 0, passwordBlockedUntil: Int? = nil, codeBlockedUntil: Int? = nil,
                nextPasswordBackoff: Int = LimitSettings().backoffSeconds, nextCodeBackoff: Int = LimitSettings().backoffSeconds) {
        self.passwordFailures = passwordFailures
        self.codeFailures = codeFailures
        self.passwordBlockedUntil = passwordBlockedUntil
        self.codeBlockedUntil = codeBlockedUntil
        self.nextPasswordBackoff = nextPasswordBackoff
        self.nextCodeBackoff = nextCodeBackoff
    }
}

/// The temporary lock of a user after ``LimitSettings/passwordLockThreshold`` consecutive wrong
/// passwords (from all clients, on every path that checks one: login, the LDA fallback, opt-in and
/// opt-out re-authentication): the user row says `locked` with `locked_at`; the lock lasts
/// `password.lock_seconds × 2^(failures − threshold)`, at most `password.lock_max_seconds`, so
/// each wrong password after a lock ended locks again for twice as long. A right password after
/// the lock ended unlocks (and zeroes the count); `idvd admin unlock-user` unlocks at once.
public enum PasswordLockout {
    /// When the lock of `user` ends (Unix seconds); nil when the user is not locked. A `locked`
    /// user without `locked_at` (an operator's or an older build's lock) stays locked until unlocked.
    public static func lockedUntil(_ user: UserRecord, _ s: LimitSettings) -> Int? {
        guard user.state == .locked else { return nil }
        guard let at = user.lockedAt else { return Int.max }
        let over = max(0, user.failedPasswordAttempts - s.passwordLockThreshold)
        let seconds = over >= 30 ? s.passwordLockMaxSeconds : min(s.passwordLockMaxSeconds, s.passwordLockSeconds << over)
        return at + seconds
    }

    /// Whether `user` is locked at `now`.
    public static func isLocked(_ user: UserRecord, now: Int, _ s: LimitSettings) -> Bool {
        (lockedUntil(user, s) ?? Int.min) > now
    }

    /// `user` after one more wrong password at `now`: counted and, at the threshold (or after a
    /// lock ended), locked. `locked` says whether this failure locked the user.
    public static func failed(_ user: UserRecord, now: Int, _ s: LimitSettings) -> (user: UserRecord, locked: Bool) {
        var u = user
        u.failedPasswordAttempts += 1
        u.updatedAt = now
        if u.failedPasswordAttempts >= s.passwordLockThreshold {
            u.state = .locked
            u.lockedAt = now
            return (u, true)
        }
        return (u, false)
    }

    /// `user` after a right password: unlocked, the count zeroed; nil when nothing changes.
    public static func succeeded(_ user: UserRecord, now: Int) -> UserRecord? {
        guard user.failedPasswordAttempts != 0 || user.state == .locked || user.lockedAt != nil else { return nil }
        var u = user
        u.failedPasswordAttempts = 0
        if u.state == .locked { u.state = .active }
        u.lockedAt = nil
        u.updatedAt = now
        return u
    }

    /// A sentence for people: when to try again.
    public static func retryText(until: Int, now: Int) -> String {
        let s = max(1, until - now)
        if s >= 7200 { return "try again in \((s + 3599) / 3600) hours" }
        if s >= 120 { return "try again in \((s + 59) / 60) minutes" }
        return "try again in \(s) seconds"
    }
}

/// The abuse limits of the engine (thread-safe). Session and device-registration rates: token
/// buckets in memory. Credential limits: ``LimitCounterRecord``s in the store — a failure budget per
/// client key (address, device) and a back-off per (credential kind, user, client) pair — read
/// before a credential is checked and changed inside the transaction of the answer, so that every
/// node on one database counts each failure once. Uses the engine's clock (Unix seconds), so tests
/// advance a ``ManualClock`` instead of sleeping.
public final class AbuseLimits: Sendable {
    public let settings: LimitSettings
    /// `password.attempts` and `activation.code_attempts`: failures before a (user, client) pair backs off.
    let attempts: [CredentialKind: Int]
    private let store: any Store
    private let crypto: any EngineCrypto

    struct Bucket { var tokens: Double; var at: Int }

    /// The in-memory limits of this process, under ``tables``' lock.
    private struct Tables {
        var sessionClients: [String: Bucket] = [:]
        var sessionDevices: [String: Bucket] = [:]
        var deviceClients: [String: Bucket] = [:]
        var refusals: [AbuseLimit: Int] = [:]

        /// Counts a refusal by `limit` and makes its error.
        mutating func refuse(_ limit: AbuseLimit, _ code: IDVErrorCode, _ message: String, retryAfter: Int) -> ThrottledError {
            refusals[limit, default: 0] += 1
            return ThrottledError(IDVError(code, message + " (retry after \(max(1, retryAfter)) s)"), retryAfterSeconds: retryAfter)
        }
    }
    private let tables = Mutex(Tables())

    public init(settings engine: EngineSettings, store: any Store, crypto: any EngineCrypto) {
        settings = engine.limits
        self.store = store
        self.crypto = crypto
        // An invalid device signature falls back to the password: it backs off after as many as a password.
        attempts = [.password: engine.passwordAttempts, .activationCode: engine.activationCodeAttempts,
                    .deviceSignature: engine.passwordAttempts]
    }

    // MARK: Token buckets

    /// Takes one token from `table[key]` (capacity `capacity`, refilled `capacity` per `window`
    /// seconds); returns nil when taken, else the seconds until one is there.
    private static func take(_ table: inout [String: Bucket], _ key: String, capacity: Int, window: Int, now: Int) -> Int? {
        let rate = Double(capacity) / Double(max(1, window))
        var b = table[key] ?? Bucket(tokens: Double(capacity), at: now)
        b.tokens = min(Double(capacity), b.tokens + Double(max(0, now - b.at)) * rate)
        b.at = now
        if b.tokens >= 1 {
            b.tokens -= 1
            table[key] = b
            return nil
        }
        table[key] = b
        return Int(((1 - b.tokens) / rate).rounded(.up))
    }

    /// `c`'s tokens refilled to `now` (capacity `capacity`, `capacity` per `window` seconds); a
    /// missing counter is a full bucket.
    private static func refilled(_ c: LimitCounterRecord?, key: String, capacity: Int, window: Int, now: Int) -> LimitCounterRecord {
        let rate = Double(capacity) / Double(max(1, window))
        var c = c ?? LimitCounterRecord(key: key, tokens: Double(capacity), updatedAt: now)
        c.tokens = min(Double(capacity), c.tokens + Double(max(0, now - c.updatedAt)) * rate)
        c.updatedAt = max(c.updatedAt, now)
        return c
    }

    /// Drops idle entries when a table grew past `maxTracked` (``LimitSettings/maxTrackedKeys``).
    private static func prune<V>(_ table: inout [String: V], maxTracked: Int, idle: (V) -> Bool) {
        guard table.count > maxTracked else { return }
        table = table.filter { !idle($0.value) }
        if table.count > maxTracked { table.removeAll(keepingCapacity: true) }
    }

    // MARK: Sessions

    /// A new session from client address `address` (nil: not limited). Throws 1110.
    public func admitSession(address: String?, now: Int) throws {
        guard let address, settings.sessionsPerClientPerMinute > 0 else { return }
        let cap = settings.sessionsPerClientPerMinute, maxTracked = settings.maxTrackedKeys
        try tables.withLock { t in
            Self.prune(&t.sessionClients, maxTracked: maxTracked) { $0.at < now - 60 }
            if let wait = Self.take(&t.sessionClients, address, capacity: cap, window: 60, now: now) {
                throw t.refuse(.sessionClient, .sessionRateLimited, "Too many new sessions from this address", retryAfter: wait)
            }
        }
    }

    /// A device registration from client address `address` (nil: not limited). Throws 1110.
    public func admitDeviceRegistration(address: String?, now: Int) throws {
        guard let address, settings.devicesPerClientPerMinute > 0 else { return }
        let cap = settings.devicesPerClientPerMinute, maxTracked = settings.maxTrackedKeys
        try tables.withLock { t in
            Self.prune(&t.deviceClients, maxTracked: maxTracked) { $0.at < now - 60 }
            if let wait = Self.take(&t.deviceClients, address, capacity: cap, window: 60, now: now) {
                throw t.refuse(.deviceClient, .sessionRateLimited, "Too many device registrations from this address", retryAfter: wait)
            }
        }
    }

    /// A new session bound to registered device `deviceID`. Throws 1110.
    public func admitSession(deviceID: String, now: Int) throws {
        guard settings.sessionsPerDevicePerMinute > 0 else { return }
        let cap = settings.sessionsPerDevicePerMinute, maxTracked = settings.maxTrackedKeys
        try tables.withLock { t in
            Self.prune(&t.sessionDevices, maxTracked: maxTracked) { $0.at < now - 60 }
            if let wait = Self.take(&t.sessionDevices, deviceID, capacity: cap, window: 60, now: now) {
                throw t.refuse(.sessionDevice, .sessionRateLimited, "Too many new sessions for this device", retryAfter: wait)
            }
        }
    }

    // MARK: Credentials (counters in the store)

    /// The store key of the back-off of (`kind`, `userID`, client key `client`): it starts with
    /// ``userPairPrefix(_:crypto:)``, so every back-off for one user can be cleared at once.
    private func pairKey(_ kind: CredentialKind, _ userID: String, _ client: String) -> String {
        Self.userPairPrefix(userID, crypto: crypto) + crypto.sha256Hex("\(kind.rawValue)|\(userID)|\(client)")
    }

    /// The key prefix of every client's back-off for `userID` (`idvd admin unlock-user` deletes them).
    public static func userPairPrefix(_ userID: String, crypto: any EngineCrypto) -> String {
        "pair|" + crypto.sha256Hex("user|" + userID) + "|"
    }

    /// The store keys of the client's failure budgets: one per address and one per device.
    private func budgetKeys(_ client: ClientIdentity) -> [String] {
        [client.address.map { "a:" + $0 }, client.deviceID.map { "d:" + $0 }].compactMap { $0 }.map { "auth|" + crypto.sha256Hex($0) }
    }

    /// Before a password is checked or an activation code compared for `userID`: throws 1111 when
    /// this client backs off for the user, or has spent its failure budget across users. Reads the
    /// store outside any transaction; throws ``StoreError`` when it cannot.
    public func checkCredential(_ kind: CredentialKind, userID: String, client: ClientIdentity, now: Int) throws {
        let pair = client.pairKey.map { pairKey(kind, userID, $0) }
        let budgets = settings.authFailuresPerClient > 0 ? budgetKeys(client) : []
        let counters = try store.limitCounters((pair.map { [$0] } ?? []) + budgets)
        if let pair, let b = counters[pair], b.blockedUntil > now {
            let what: String
            switch kind {
            case .password: what = "Too many wrong passwords for this user from this client"
            case .activationCode: what = "Too many wrong activation codes for this user from this client"
            case .deviceSignature: what = "Too many invalid device signatures for this user from this client; answer with the password"
            }
            throw tables.withLock { $0.refuse(.authBackoff, .authThrottled, what, retryAfter: b.blockedUntil - now) }
        }
        let cap = settings.authFailuresPerClient, window = settings.authFailureWindowSeconds
        for key in budgets {
            let c = Self.refilled(counters[key], key: key, capacity: cap, window: window, now: now)
            if c.tokens < 1 {
                let wait = Int(((1 - c.tokens) / (Double(cap) / Double(max(1, window)))).rounded(.up))
                throw tables.withLock { $0.refuse(.authClient, .authThrottled, "Too many failed attempts from this client", retryAfter: wait) }
            }
        }
    }

    /// The store key of `userID`'s PAD challenge budget: under ``userPairPrefix(_:crypto:)``, so
    /// `idvd admin unlock-user` restores it and erasing the user deletes it.
    private func padChallengeKey(_ userID: String) -> String { Self.userPairPrefix(userID, crypto: crypto) + "pad-challenges" }

    /// PAD challenges `userID` may still be asked: a bucket of `capacity` refilled over `window`
    /// seconds (whole challenges). Read in the answer's transaction.
    public func padChallengesLeft(userID: String, capacity: Int, window: Int, now: Int) throws -> Int {
        let key = padChallengeKey(userID)
        return Int(Self.refilled(try store.limitCounters([key])[key], key: key, capacity: capacity, window: window, now: now).tokens.rounded(.down))
    }

    /// `userID`'s PAD challenges moved by `delta`, inside the answer's transaction: −1 one drawn,
    /// +n a run's draws given back (its capture answered the last and MATCHED); kept within 0…`capacity`. The counter is
    /// held from idle pruning until the bucket would be full again.
    public func adjustPADChallenges(userID: String, by delta: Double, capacity: Int, window: Int, now: Int) throws {
        let key = padChallengeKey(userID)
        var c = Self.refilled(try store.limitCounters([key])[key], key: key, capacity: capacity, window: window, now: now)
        c.tokens = min(Double(capacity), max(0, c.tokens + delta))
        let rate = Double(capacity) / Double(max(1, window))
        c.blockedUntil = now + Int(((Double(capacity) - c.tokens) / rate).rounded(.up))
        try store.saveLimitCounter(c)
    }

    /// What the limits hold for this client and `userID` (nil user: nothing); read in the answer's transaction.
    public func facts(userID: String?, client: ClientIdentity, now: Int) throws -> ClientCredentialFacts {
        guard let userID, let pk = client.pairKey else { return ClientCredentialFacts() }
        let pKey = pairKey(.password, userID, pk), cKey = pairKey(.activationCode, userID, pk)
        let counters = try store.limitCounters([pKey, cKey])
        let p = counters[pKey].flatMap(fresh), c = counters[cKey].flatMap(fresh)
        return ClientCredentialFacts(passwordFailures: p?.failures ?? 0, codeFailures: c?.failures ?? 0,
                                     passwordBlockedUntil: p.flatMap { $0.blockedUntil > now ? $0.blockedUntil : nil },
                                     codeBlockedUntil: c.flatMap { $0.blockedUntil > now ? $0.blockedUntil : nil },
                                     nextPasswordBackoff: backoff(rounds: p?.rounds ?? 0), nextCodeBackoff: backoff(rounds: c?.rounds ?? 0))
        func fresh(_ b: LimitCounterRecord) -> LimitCounterRecord? { forgotten(b, now: now) ? nil : b }
    }

    /// A long quiet spell (twice `limits.backoff_max_seconds`) forgets a pair's history.
    private func forgotten(_ b: LimitCounterRecord, now: Int) -> Bool {
        b.blockedUntil <= now && now - b.updatedAt > 2 * settings.backoffMaxSeconds
    }

    /// How long a counter is kept once idle: the budget's window or a pair's memory, whichever is longer.
    package var counterIdleSeconds: Int { max(settings.authFailureWindowSeconds, 2 * settings.backoffMaxSeconds) }

    /// The back-off after `rounds` earlier ones: `limits.backoff_seconds × 2^rounds`, at most `limits.backoff_max_seconds`.
    func backoff(rounds: Int) -> Int {
        rounds >= 30 ? settings.backoffMaxSeconds : min(settings.backoffMaxSeconds, settings.backoffSeconds << rounds)
    }

    /// A wrong password or code from `client` for `userID`, inside the answer's transaction (so it
    /// counts once, on whichever node, and not at all when that transaction rolls back): the pair's
    /// count, its back-off once the count reaches the kind's attempts, a token of each budget.
    public func recordFailure(_ kind: CredentialKind, userID: String, client: ClientIdentity, now: Int) throws {
        if let pk = client.pairKey {
            let key = pairKey(kind, userID, pk)
            let limit = max(1, attempts[kind] ?? 3)
            var b = try store.limitCounters([key])[key] ?? LimitCounterRecord(key: key, updatedAt: now)
            if forgotten(b, now: now) { b = LimitCounterRecord(key: key, updatedAt: now) }
            b.failures += 1
            b.updatedAt = now
            if b.failures >= limit {
                let seconds = backoff(rounds: b.rounds)
                b.rounds += 1
                b.blockedUntil = now + seconds
                b.failures = limit - 1   // after the back-off, one more failure backs off again (twice as long)
            }
            try store.saveLimitCounter(b)
        }
        guard settings.authFailuresPerClient > 0 else { return }
        let keys = budgetKeys(client)
        let counters = try store.limitCounters(keys)
        for key in keys {
            var c = Self.refilled(counters[key], key: key, capacity: settings.authFailuresPerClient,
                                  window: settings.authFailureWindowSeconds, now: now)
            c.tokens = max(0, c.tokens - 1)
            try store.saveLimitCounter(c)
        }
    }

    /// A right password or code from `client` for `userID`, inside the answer's transaction: the
    /// pair's history is forgotten.
    public func recordSuccess(_ kind: CredentialKind, userID: String, client: ClientIdentity) throws {
        guard let pk = client.pairKey else { return }
        try store.deleteLimitCounter(key: pairKey(kind, userID, pk))
    }

    /// Counts a refusal the flows answered themselves (a back-off seen at `getUser`, answered 1011 or
    /// 1111 in the challenge rather than thrown here), once its transaction committed.
    public func countRefusal(_ limit: AbuseLimit) {
        tables.withLock { $0.refusals[limit, default: 0] += 1 }
    }

    /// `/metrics` text: refusals by limit, keys tracked, and the configured limits.
    public func render() -> String {
        let (refusals, tracked) = tables.withLock { t in
            (t.refusals, [("session_client", t.sessionClients.count), ("session_device", t.sessionDevices.count), ("device_client", t.deviceClients.count)])
        }
        var s = "# HELP idvd_limit_refusals_total Requests refused by an abuse limit (1110, 1111), by limit.\n# TYPE idvd_limit_refusals_total counter\n"
        for limit in AbuseLimit.allCases {
            s += "idvd_limit_refusals_total{limit=\"\(limit.rawValue)\"} \(refusals[limit] ?? 0)\n"
        }
        s += "# HELP idvd_limit_tracked_keys Client keys the in-memory limits of this process track, by table.\n# TYPE idvd_limit_tracked_keys gauge\n"
        for (name, n) in tracked {
            s += "idvd_limit_tracked_keys{table=\"\(name)\"} \(n)\n"
        }
        if let n = try? store.limitCounterCount() {
            s += "# HELP idvd_limit_counters Credential-limit counters in the store (failure budgets and back-offs, all nodes).\n# TYPE idvd_limit_counters gauge\n"
            s += "idvd_limit_counters \(n)\n"
        }
        s += "# HELP idvd_limit_setting The configured abuse limits (docs/LIMITS.md).\n# TYPE idvd_limit_setting gauge\n"
        let values: [(String, Int)] = [
            ("limits.sessions_per_client", settings.sessionsPerClientPerMinute), ("limits.sessions_per_device", settings.sessionsPerDevicePerMinute),
            ("limits.devices_per_client", settings.devicesPerClientPerMinute),
            ("limits.auth_failures_per_client", settings.authFailuresPerClient), ("limits.auth_failure_window_seconds", settings.authFailureWindowSeconds),
            ("limits.backoff_seconds", settings.backoffSeconds), ("limits.backoff_max_seconds", settings.backoffMaxSeconds),
            ("password.attempts", attempts[.password] ?? 0), ("activation.code_attempts", attempts[.activationCode] ?? 0),
            ("password.lock_threshold", settings.passwordLockThreshold), ("password.lock_seconds", settings.passwordLockSeconds),
            ("password.lock_max_seconds", settings.passwordLockMaxSeconds), ("activation.idv_runs", settings.activationIDVRuns),
        ]
        for (k, v) in values { s += "idvd_limit_setting{name=\"\(k)\"} \(v)\n" }
        return s
    }
}
