import Foundation
import IDVCore

// Relying-party API clients (issue #23): the bank's backend authenticates as an API client — not
// as a user session — with `Authorization: Bearer <client_id>.<secret>`. The secret is 32 random
// bytes (base64url, 43 characters), shown once by `idvd admin rp-client create`; the store keeps
// HMAC-SHA256(key: a random per-client salt, message: the secret). A fast keyed hash is right here:
// the secret has 256 bits of entropy, so there is nothing to slow down an offline guess of, and
// every API request checks it (Argon2id per request would be a denial-of-service lever).

/// What an API client may do. A client holds one or more.
public enum RPScope: String, Codable, Sendable, CaseIterable, Comparable {
    /// Read users' state, verifications, document scans, consents and audit records (`GET /v1/rp/…`).
    case read
    /// Start verifications for users (`POST /v1/rp/verifications`: a hosted-page link).
    case links
    /// See and decide review cases (`/v1/rp/reviews…`), with their evidence and sealed images.
    case review

    public static func < (a: RPScope, b: RPScope) -> Bool { a.rawValue < b.rawValue }

    /// Parses `read,links,review` (comma-separated, at least one, no unknown names); 1025 otherwise.
    public static func parse(_ text: String) throws -> [RPScope] {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var out = Set<RPScope>()
        for n in names {
            guard let s = RPScope(rawValue: n) else {
                throw IDVError(.invalidArgument, "unknown scope '\(n.prefix(32))'; scopes are \(allCases.map(\.rawValue).joined(separator: ", "))")
            }
            out.insert(s)
        }
        guard !out.isEmpty else { throw IDVError(.invalidArgument, "--scope needs at least one of read, links, review") }
        return out.sorted()
    }
}

/// One relying-party API client as stored: the secret only as its keyed hash.
public struct APIClientRecord: Sendable, Equatable {
    /// `rpc_` + 24 hex digits.
    public var clientID: String
    /// The operator's label (1–64 printable characters), e.g. the bank's system name.
    public var name: String
    public var scopes: [RPScope]
    /// HMAC-SHA256(key: `salt`, message: secret), lowercase hex.
    public var secretHash: String
    /// 32 random bytes, lowercase hex.
    public var salt: String
    public var createdAt: Int
    public var revokedAt: Int?

    public init(clientID: String, name: String, scopes: [RPScope], secretHash: String, salt: String, createdAt: Int, revokedAt: Int? = nil) {
        self.clientID = clientID
        self.name = name
        self.scopes = scopes
        self.secretHash = secretHash
        self.salt = salt
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    public func allows(_ scope: RPScope) -> Bool { scopes.contains(scope) }
}

/// The store calls of the relying-party API: clients, the verification read model and the review
/// queue. ``SQLiteStore`` and ``PostgresStore`` conform (tables of the `api_clients` / `review_cases`
/// migration). Every method is atomic.
public protocol RelyingPartyStore: WorkflowStore {
    /// Inserts a client; ``StoreError/conflict(_:)`` when the id exists.
    func createAPIClient(_ client: APIClientRecord) throws
    func apiClient(_ clientID: String) throws -> APIClientRecord?
    /// Every client, oldest first.
    func apiClients() throws -> [APIClientRecord]
    /// Marks the client revoked at `time` if it is not yet; false when unknown or already revoked.
    func revokeAPIClient(_ clientID: String, at time: Int) throws -> Bool

    /// One flow run (a verification), or nil.
    func flowRun(_ runID: String) throws -> FlowRunView?
    /// The user's runs of `flows`, newest first (started_at, then run id, descending), started in
    /// `since..<until`, strictly after `after` in that order, at most `limit`.
    func flowRuns(userID: String, flows: [String], since: Int?, until: Int?, after: RunCursor?, limit: Int) throws -> [FlowRunView]
    /// The audit entries of a session, oldest first (a run's entries carry its `run_id` in `details`).
    func auditEntries(sessionID: String) throws -> [AuditEntry]
    /// Kept media of a run (review evidence), oldest first.
    func mediaRecords(runID: String) throws -> [MediaRecord]

    /// Opens a review case; ``StoreError/conflict(_:)`` when the run already has one.
    func createReviewCase(_ c: ReviewCaseRecord) throws
    func reviewCase(_ caseID: String) throws -> ReviewCaseRecord?
    func reviewCase(runID: String) throws -> ReviewCaseRecord?
    /// Cases by state (`pending`: undecided), oldest first, strictly after `after`
    /// (opened_at, case id ascending), at most `limit`.
    func reviewCases(pending: Bool?, after: RunCursor?, limit: Int) throws -> [ReviewCaseRecord]
    /// Compare-and-set: records the decision only when the case is still pending, and sets the
    /// run's outcome in the same commit; false (nothing written) when it was already decided.
    func decideReviewCase(_ caseID: String, decision: ReviewDecision, reason: String, reviewer: String, at time: Int,
                          runOutcome: FlowOutcome) throws -> Bool
}

/// A position in a list ordered by (time, id): the last item of the previous page.
public struct RunCursor: Sendable, Equatable {
    public var time: Int
    public var id: String
    public init(time: Int, id: String) { self.time = time; self.id = id }

    /// The opaque wire form: base64url of `v1:<time>:<id>`.
    public var token: String { Hex.base64url(Array("v1:\(time):\(id)".utf8)) }

    /// Parses a wire cursor; 1134 `invalidCursor` when it is not one this server issued.
    public init(token: String) throws {
        guard token.count <= 200, let raw = Hex.base64urlDecode(token), let text = String(bytes: raw, encoding: .utf8) else {
            throw IDVError(.invalidCursor, "cursor is not a cursor this server issued (use next_cursor of the previous page)")
        }
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1", let t = Int(parts[1]), t >= 0, !parts[2].isEmpty, parts[2].count <= 64,
              parts[2].allSatisfy({ $0.isHexDigit || $0 == "_" || $0.isLetter }) else {
            throw IDVError(.invalidCursor, "cursor is not a cursor this server issued (use next_cursor of the previous page)")
        }
        time = t
        id = String(parts[2])
    }
}

/// A flow run as the read model sees it (the `flow_runs` row).
public struct FlowRunView: Sendable, Equatable {
    public var runID: String
    public var sessionID: String
    public var userID: String?
    public var flow: String
    public var idvWorkflow: Int?
    public var startedAt: Int
    public var endedAt: Int?
    public var outcome: FlowOutcome?
    public var errorCode: Int?
    public init(runID: String, sessionID: String, userID: String?, flow: String, idvWorkflow: Int?, startedAt: Int, endedAt: Int?,
                outcome: FlowOutcome?, errorCode: Int?) {
        self.runID = runID
        self.sessionID = sessionID
        self.userID = userID
        self.flow = flow
        self.idvWorkflow = idvWorkflow
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.errorCode = errorCode
    }
}

/// HMAC-SHA256 (RFC 2104) over ``EngineCrypto/sha256(_:)``.
public enum HMACSHA256 {
    public static func mac(key: [UInt8], message: [UInt8], crypto: any EngineCrypto) -> [UInt8] {
        var k = key.count > 64 ? crypto.sha256(key) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        let inner = crypto.sha256(k.map { $0 ^ 0x36 } + message)
        return crypto.sha256(k.map { $0 ^ 0x5C } + inner)
    }
}

/// Settings of the relying-party API (`rp.*`; appended to ``ServerConfig/settings``).
public struct RelyingPartySettings: Sendable, Equatable {
    /// Requests per minute one API client may send (a token bucket of this size refilled at this
    /// rate, per `idvd` process); above it 429 with 1133 and `Retry-After`.
    public var requestsPerMinute = 600
    /// Lifetime of a link `POST /v1/rp/verifications` creates when the request names none, seconds.
    public var linkTTLSeconds = 24 * 3600

    public init() {}

    static let settings: [ServerConfig.Setting] = [
        ServerConfig.Setting(key: "rp.rate_limit_per_minute", env: ServerConfig.envName("rp.rate_limit_per_minute"),
                             summary: "requests per minute one relying-party API client may send (per idvd process); above it 429 (1133)",
                             apply: { c, v in
                                 guard let n = Int(v.trimmingCharacters(in: .whitespaces)), n >= 1, n <= 1_000_000 else {
                                     throw IDVServerError.configuration("rp.rate_limit_per_minute must be an integer in 1…1000000, got '\(v)'")
                                 }
                                 c.rp.requestsPerMinute = n
                             }, current: { "\($0.rp.requestsPerMinute)" }),
    ]
}

extension Admin {
    /// What `rp-client create` prints: the credentials, shown once (`authorization` is the header value).
    public struct IssuedClient: Codable, Sendable {
        public let clientID: String
        public let name: String
        public let scopes: [RPScope]
        public let secret: String
        /// `Bearer <client_id>.<secret>`.
        public let authorization: String
        public let createdAt: Int
        enum CodingKeys: String, CodingKey { case clientID = "client_id", name, scopes, secret, authorization, createdAt = "created_at" }
    }

    /// A client as `rp-client list` prints it (never the secret or its hash).
    public struct ClientInfo: Codable, Sendable, Equatable {
        public let clientID: String
        public let name: String
        public let scopes: [RPScope]
        public let createdAt: Int
        public let revokedAt: Int?
        enum CodingKeys: String, CodingKey { case clientID = "client_id", name, scopes, createdAt = "created_at", revokedAt = "revoked_at" }
    }

    func rpStore() throws -> any RelyingPartyStore {
        guard let s = store as? any RelyingPartyStore else { throw IDVServerError.configuration("this store holds no relying-party API clients") }
        return s
    }

    /// Creates an API client with `scopes`; audited `rp_client.created` (client id, name, scopes).
    /// Throws 1025 for a name that is empty, longer than 64 characters or not printable.
    public func createClient(name: String, scopes: [RPScope], now: Int = Int(Date().timeIntervalSince1970)) throws -> IssuedClient {
        let rp = try rpStore()
        guard !name.isEmpty, name.count <= 64, name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw IDVError(.invalidArgument, "--name must be 1–64 printable characters")
        }
        guard !scopes.isEmpty else { throw IDVError(.invalidArgument, "--scope needs at least one of read, links, review") }
        let secret = crypto.token()
        let salt = crypto.randomBytes(32)
        let rec = APIClientRecord(clientID: "rpc_" + crypto.randomID(bytes: 12), name: name, scopes: scopes.sorted(),
                                  secretHash: Hex.encode(HMACSHA256.mac(key: salt, message: Array(secret.utf8), crypto: crypto)),
                                  salt: Hex.encode(salt), createdAt: now)
        try store.withTransaction {
            try rp.createAPIClient(rec)
            try store.appendAudit(action: "rp_client.created", userID: nil, sessionID: nil,
                                  details: ["client_id": .string(rec.clientID), "name": .string(name),
                                            "scopes": .array(rec.scopes.map { .string($0.rawValue) })], at: now)
        }
        return IssuedClient(clientID: rec.clientID, name: name, scopes: rec.scopes, secret: secret,
                            authorization: "Bearer \(rec.clientID).\(secret)", createdAt: now)
    }

    /// Revokes a client (its credentials stop working at once); audited `rp_client.revoked`.
    /// Throws 1007 when the client is unknown or already revoked.
    public func revokeClient(_ clientID: String, now: Int = Int(Date().timeIntervalSince1970)) throws -> ClientInfo {
        let rp = try rpStore()
        return try store.withTransaction {
            guard try rp.revokeAPIClient(clientID, at: now), let c = try rp.apiClient(clientID) else {
                throw IDVError(.notFound, "no live API client with that id")
            }
            try store.appendAudit(action: "rp_client.revoked", userID: nil, sessionID: nil, details: ["client_id": .string(clientID)], at: now)
            return ClientInfo(clientID: c.clientID, name: c.name, scopes: c.scopes, createdAt: c.createdAt, revokedAt: c.revokedAt)
        }
    }

    /// Every client (revoked ones too), oldest first.
    public func listClients() throws -> [ClientInfo] {
        try rpStore().apiClients().map { ClientInfo(clientID: $0.clientID, name: $0.name, scopes: $0.scopes, createdAt: $0.createdAt, revokedAt: $0.revokedAt) }
    }
}

/// An API client over its rate: refused with 1133 and `Retry-After: retryAfterSeconds`.
public struct ClientRateLimited: Error, Sendable, Equatable {
    public let retryAfterSeconds: Int
    public var error: IDVError { IDVError(.clientRateLimited, "Too many requests from this API client; retry in \(retryAfterSeconds) s") }
}

/// Authenticates relying-party API clients and limits their rate (one per ``IDVServerApp``).
public final class RPClientAuthenticator: @unchecked Sendable {
    let store: any Store
    let crypto: any EngineCrypto
    let clock: any Clock
    let perMinute: Int
    private let lock = NSLock()
    private var buckets: [String: (tokens: Double, at: Double)] = [:]

    public init(store: any Store, crypto: any EngineCrypto, clock: any Clock, requestsPerMinute: Int) {
        self.store = store
        self.crypto = crypto
        self.clock = clock
        perMinute = max(1, requestsPerMinute)
    }

    /// The client of `Authorization: Bearer <client_id>.<secret>` (the token part given here).
    /// 1131 when absent, malformed, unknown, wrong or revoked (one message: which part was wrong
    /// is not said); ``ClientRateLimited`` (1133, with the seconds to wait) when over its rate.
    public func authenticate(_ token: String?) throws -> APIClientRecord {
        let refusal = IDVError(.clientUnauthenticated, "Send Authorization: Bearer <client_id>.<secret> of a live API client")
        guard let token, token.count <= 200, let dot = token.firstIndex(of: ".") else { throw refusal }
        let id = String(token[..<dot]), secret = String(token[token.index(after: dot)...])
        guard id.hasPrefix("rpc_"), !secret.isEmpty, let rp = store as? any RelyingPartyStore,
              let c = try rp.apiClient(id), c.revokedAt == nil, let salt = Hex.decode(c.salt), let stored = Hex.decode(c.secretHash),
              crypto.constantTimeEqual(HMACSHA256.mac(key: salt, message: Array(secret.utf8), crypto: crypto), stored) else { throw refusal }
        if let wait = take(c.clientID) { throw ClientRateLimited(retryAfterSeconds: wait) }
        return c
    }

    /// Takes one request from the client's bucket; nil when allowed, else the seconds until one is free.
    func take(_ clientID: String) -> Int? {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        let rate = Double(perMinute) / 60
        lock.lock(); defer { lock.unlock() }
        var b = buckets[clientID] ?? (tokens: Double(perMinute), at: now)
        b.tokens = min(Double(perMinute), b.tokens + (now - b.at) * rate)
        b.at = now
        if b.tokens >= 1 {
            b.tokens -= 1
            buckets[clientID] = b
            return nil
        }
        buckets[clientID] = b
        return max(1, Int(((1 - b.tokens) / rate).rounded(.up)))
    }
}
