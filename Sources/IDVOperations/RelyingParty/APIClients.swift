import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

// Relying-party API clients (issue #23): the bank's backend authenticates as an API client — not
// as a user session — with `Authorization: Bearer <client_id>.<secret>`. The secret is 32 random
// bytes (base64url, 43 characters), shown once by `idvd admin rp-client create`; the store keeps
// HMAC-SHA256(key: a random per-client salt, message: the secret). A fast keyed hash is right here:
// the secret has 256 bits of entropy, so there is nothing to slow down an offline guess of, and
// every API request checks it (Argon2id per request would be a denial-of-service lever).


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

    /// Creates an API client with `scopes`; audited `rp_client.created` (client id, name, scopes).
    /// Throws 1025 for a name that is empty, longer than 64 characters or not printable.
    public func createClient(name: String, scopes: [RPScope], now: Int = Int(Date().timeIntervalSince1970)) throws -> IssuedClient {
        let rp = store
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
        let rp = store
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
        try store.apiClients().map { ClientInfo(clientID: $0.clientID, name: $0.name, scopes: $0.scopes, createdAt: $0.createdAt, revokedAt: $0.revokedAt) }
    }
}

/// An API client over its rate: refused with 1133 and `Retry-After: retryAfterSeconds`.
public struct ClientRateLimited: Error, Sendable, Equatable {
    public let retryAfterSeconds: Int
    public var error: IDVError { IDVError(.clientRateLimited, "Too many requests from this API client; retry in \(retryAfterSeconds) s") }
}

/// Authenticates relying-party API clients and limits their rate (one per ``IDVServerApp``).
public final class RPClientAuthenticator: @unchecked Sendable {
    // @unchecked: `buckets` is read and written under `lock` only; the rest is immutable and Sendable.
    let store: any EngineStore
    let crypto: any EngineCrypto
    let clock: any Clock
    let perMinute: Int
    private let lock = NSLock()
    private var buckets: [String: (tokens: Double, at: Double)] = [:]

    public init(store: any EngineStore, crypto: any EngineCrypto, clock: any Clock, requestsPerMinute: Int) {
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
        guard id.hasPrefix("rpc_"), !secret.isEmpty,
              let c = try store.apiClient(id), c.revokedAt == nil, let salt = Hex.decode(c.salt), let stored = Hex.decode(c.secretHash),
              crypto.constantTimeEqual(HMACSHA256.mac(key: salt, message: Array(secret.utf8), crypto: crypto), stored) else { throw refusal }
        if let wait = take(c.clientID) { throw ClientRateLimited(retryAfterSeconds: wait) }
        return c
    }

    /// Takes one request from the client's bucket; nil when allowed, else the seconds until one is free.
    func take(_ clientID: String) -> Int? {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        let rate = Double(perMinute) / 60
        return lock.withLock {
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
}
