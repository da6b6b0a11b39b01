import Foundation

/// Webhooks: how a relying party's backend hears, server to server, what happened (docs/WEBHOOKS.md).
///
/// An operator registers an endpoint (`idvd admin webhook add --url URL [--events …]`); every
/// terminal event below is written to a durable outbox in the same store transaction as the change
/// it reports, and a worker in every `idvd serve` POSTs it to each subscribed endpoint, signed with
/// the endpoint's secret (``WebhookSignature``), at least once, with retries. Receivers deduplicate
/// by ``WebhookEventEnvelope/id``.
public enum WebhookEventType: String, Codable, Sendable, CaseIterable {
    /// An identity-verification flow run ended (activation IDV, KYC, document scan, server
    /// biometric authentication, opt-in, opt-out): its outcome and reason codes.
    case verificationDecided = "verification.decided"
    /// A biometric template was stored for the user (opt-in approved, or activation/KYC consent).
    case templateCreated = "template.created"
    /// The user's biometric template was erased (opt-out).
    case templateDeleted = "template.deleted"
    /// A consent was recorded: given (opt-in) or withdrawn (opt-out, or declined at the consent step).
    case consentChanged = "consent.changed"
    /// A reviewer resolved a case the policy sent to human review.
    case reviewResolved = "review.resolved"
    /// Everything the server held about the user was erased (`DELETE /v1/rp/users/{user_id}`,
    /// `idvd admin erase-user`): `data.erasure_receipt_id` names the receipt.
    case userErased = "user.erased"

    /// Parses a comma-separated list (`--events verification.decided,consent.changed`); nil when a
    /// name is unknown. An empty list is every type.
    public static func list(_ text: String) -> [WebhookEventType]? {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if names.isEmpty { return allCases }
        var out: [WebhookEventType] = []
        for n in names {
            guard let t = WebhookEventType(rawValue: n) else { return nil }
            if !out.contains(t) { out.append(t) }
        }
        return out
    }
}

/// The outer shape of every delivered event (the JSON body of the POST), as a receiver decodes it:
/// `{"id":"<UUID>","type":"verification.decided","created_at":1764645000,"user_id":"alice",
/// "data":{…}}`. `data` holds ids and codes only — never names, document numbers, birth dates,
/// images, templates or scores (read those server to server through the relying-party API).
public struct WebhookEventEnvelope: Codable, Sendable, Equatable {
    /// Unique per event (a random UUID): the same event delivered twice carries the same id.
    public var id: String
    public var type: WebhookEventType
    /// When the change committed, Unix seconds.
    public var createdAt: Int
    /// The user the event is about (the relying party's own user id).
    public var userID: String?
    public var data: JSONValue

    enum CodingKeys: String, CodingKey { case id, type, createdAt = "created_at", userID = "user_id", data }

    public init(id: String, type: WebhookEventType, createdAt: Int, userID: String?, data: JSONValue) {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.userID = userID
        self.data = data
    }
}

/// The signature scheme of a delivery (docs/WEBHOOKS.md "Signature").
///
/// Header `IDV-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>`, where the HMAC key is the
/// endpoint's secret as printed by `idvd admin webhook add` (its UTF-8 bytes, `whsec_…` included)
/// and the message is ``signedPayload(timestamp:body:)``: the decimal timestamp, one `.`, then the
/// raw request body bytes. A receiver recomputes it over the bytes it received (before any JSON
/// parsing), compares in constant time, and refuses a timestamp older than its tolerance (replay).
/// Several `v1=` values may appear (during a secret rotation); one matching is enough.
public enum WebhookSignature {
    /// The header carrying the signature.
    public static let header = "IDV-Signature"
    /// The header carrying the event id (also in the body), for logging and deduplication.
    public static let eventIDHeader = "IDV-Event-Id"
    /// The header carrying the event type.
    public static let eventTypeHeader = "IDV-Event-Type"
    /// A receiver's default tolerance for the timestamp, seconds.
    public static let defaultTolerance = 300

    /// The bytes the HMAC covers: `"<timestamp>." + body`.
    public static func signedPayload(timestamp: Int, body: Data) -> Data {
        Data("\(timestamp).".utf8) + body
    }

    /// The header value for a timestamp and the HMAC digests (hex) computed with each secret.
    public static func headerValue(timestamp: Int, signatures: [String]) -> String {
        (["t=\(timestamp)"] + signatures.map { "v1=\($0)" }).joined(separator: ",")
    }

    /// A parsed header: the timestamp and every `v1` digest (hex, lowercased); nil when malformed.
    public static func parse(_ value: String) -> (timestamp: Int, signatures: [String])? {
        var t: Int?
        var sigs: [String] = []
        for part in value.split(separator: ",") {
            let kv = part.trimmingCharacters(in: .whitespaces)
            if kv.hasPrefix("t=") { t = Int(kv.dropFirst(2)) } else if kv.hasPrefix("v1=") { sigs.append(kv.dropFirst(3).lowercased()) }
        }
        guard let t, !sigs.isEmpty else { return nil }
        return (t, sigs)
    }
}
