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
