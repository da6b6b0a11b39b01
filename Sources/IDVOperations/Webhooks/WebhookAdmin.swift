import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// `idvd admin webhook add|list|remove|deliveries|redeliver` (docs/WEBHOOKS.md). Every change is audited
/// (ids only — never the URL's query or the secret).
extension Admin {
    /// What `webhook add` prints: the signing secret, shown once.
    public struct AddedWebhook: Codable, Sendable {
        public let endpointID: String
        public let url: String
        public let events: [WebhookEventType]
        public let secret: String
        public let note: String
        enum CodingKeys: String, CodingKey { case endpointID = "endpoint_id", url, events, secret, note }
    }

    /// One endpoint as `webhook list` prints it (no secret).
    public struct WebhookRow: Codable, Sendable {
        public let endpointID: String
        public let url: String
        public let events: [WebhookEventType]
        public let createdAt: Int
        public let keyID: String
        /// Until when deliveries are also signed with the secret before the last rotation (nil: none).
        public let previousSecretUntil: Int?
        enum CodingKeys: String, CodingKey {
            case endpointID = "endpoint_id", url, events, createdAt = "created_at", keyID = "key_id", previousSecretUntil = "previous_secret_until"
        }
    }

    /// What `webhook rotate-secret` prints: the new secret, shown once, and how long the old one still signs.
    public struct RotatedWebhook: Codable, Sendable {
        public let endpointID: String
        public let secret: String
        public let previousSecretUntil: Int?
        public let note: String
        enum CodingKeys: String, CodingKey { case endpointID = "endpoint_id", secret, previousSecretUntil = "previous_secret_until", note }
    }

    /// The longest overlap of a secret rotation, seconds (30 days).
    public static let maxWebhookSecretOverlap = 30 * 86_400

    /// A new endpoint signing secret: `whsec_` and 32 random bytes, base64url (the HMAC key is the whole string).
    private func newWebhookSecret() -> String { "whsec_" + Hex.base64url(crypto.randomBytes(32)) }

    /// Registers an endpoint for `events` (empty: every type): checks the URL (1140), draws a secret
    /// (`whsec_` + 32 random bytes base64url), seals it with `vault` (the server's key: the
    /// deliverer must sign with it) and returns it — the only time it is shown.
    public func addWebhook(url: String, events: [WebhookEventType], vault: any Vault, now: Int = Int(Date().timeIntervalSince1970)) throws -> AddedWebhook {
        try WebhookURLPolicy.check(url, allowHTTP: config.webhooks.allowHTTP)
        let ws = store
        let id = "wh_" + crypto.randomID(bytes: 8)
        let secret = newWebhookSecret()
        let types = events.isEmpty ? WebhookEventType.allCases : events
        let sealed = vault.seal(Array(secret.utf8), associatedData: VaultBinding.webhookSecret(endpointID: id))
        try store.withTransaction {
            try ws.createWebhookEndpoint(WebhookEndpointRecord(endpointID: id, url: url, events: types, secret: sealed, createdAt: now))
            try store.appendAudit(action: "admin.webhook_add", userID: nil, sessionID: nil,
                                  details: ["endpoint_id": .string(id), "events": .array(types.map { .string($0.rawValue) })], at: now)
        }
        return AddedWebhook(endpointID: id, url: url, events: types, secret: secret,
                            note: "the secret is shown only now; the server keeps it sealed under templates.key_file to sign deliveries (docs/WEBHOOKS.md)")
    }

    public func listWebhooks() throws -> [WebhookRow] {
        try store.webhookEndpoints().map {
            WebhookRow(endpointID: $0.endpointID, url: $0.url, events: $0.events, createdAt: $0.createdAt, keyID: $0.secret.keyID,
                       previousSecretUntil: $0.previousSecret == nil ? nil : $0.previousUntil)
        }
    }

    /// Gives an endpoint a new signing secret (shown once) without breaking its receiver: for
    /// `overlapSeconds` (0 … 30 days) every delivery carries a `v1=` signature under each secret,
    /// the new one first (docs/WEBHOOKS.md "Rotating the secret"), so the receiver can switch when
    /// it likes; with 0 the old secret stops at once. Audited `admin.webhook_rotate_secret`. 1141
    /// when the endpoint is unknown; 1025 for an overlap out of range.
    public func rotateWebhookSecret(_ endpointID: String, overlapSeconds: Int, vault: any Vault,
                                    now: Int = Int(Date().timeIntervalSince1970)) throws -> RotatedWebhook {
        guard (0...Self.maxWebhookSecretOverlap).contains(overlapSeconds) else {
            throw IDVError(.invalidArgument, "the overlap (--overlap) must be 0…\(Self.maxWebhookSecretOverlap) seconds")
        }
        let ws = store
        let secret = newWebhookSecret()
        let binding = VaultBinding.webhookSecret(endpointID: endpointID)
        let until = overlapSeconds > 0 ? now + overlapSeconds : nil
        try store.withTransaction {
            guard let e = try ws.webhookEndpoints().first(where: { $0.endpointID == endpointID }) else { throw IDVError(.webhookEndpointNotFound) }
            let sealed = vault.seal(Array(secret.utf8), associatedData: binding)
            guard try ws.setWebhookSecrets(endpointID: endpointID, expected: e.secret, secret: sealed,
                                           previous: until == nil ? nil : e.secret, previousUntil: until) else {
                throw IDVError(.webhookEndpointNotFound, "the endpoint changed meanwhile; try again")
            }
            try store.appendAudit(action: "admin.webhook_rotate_secret", userID: nil, sessionID: nil,
                                  details: ["endpoint_id": .string(endpointID), "previous_secret_until": until.map { .integer($0) } ?? .null], at: now)
        }
        return RotatedWebhook(endpointID: endpointID, secret: secret, previousSecretUntil: until,
                              note: until == nil ? "the secret is shown only now; deliveries are signed with it alone from now on"
                                  : "the secret is shown only now; deliveries carry a signature under each secret until previous_secret_until")
    }

    /// Removes an endpoint (1141 when unknown); its pending deliveries end as `failed` (`endpoint_removed`).
    public func removeWebhook(_ endpointID: String, now: Int = Int(Date().timeIntervalSince1970)) throws -> [String: JSONValue] {
        let ws = store
        try store.withTransaction {
            guard try ws.deleteWebhookEndpoint(endpointID) else { throw IDVError(.webhookEndpointNotFound) }
            try store.appendAudit(action: "admin.webhook_remove", userID: nil, sessionID: nil, details: ["endpoint_id": .string(endpointID)], at: now)
        }
        return ["removed": .string(endpointID)]
    }

    /// `inventory` with the webhook endpoints' sealed secrets counted in (table `webhook_endpoints`).
    func withWebhookSecrets(_ inventory: SealedInventory, vault: any Vault) throws -> SealedInventory {
        var inv = inventory
        for e in try store.webhookEndpoints() {
            for box in [e.secret] + (e.previousSecret.map { [$0] } ?? []) {
                if box.keyID == vault.keyID { inv.current["webhook_endpoints", default: 0] += 1 }
                else if vault.previousKeyIDs.contains(box.keyID) { inv.previous["webhook_endpoints", default: 0] += 1 }
                else { inv.unknown["webhook_endpoints", default: 0] += 1 }
            }
        }
        return inv
    }

    /// `idvd admin rekey`: re-seals every endpoint secret not under the current key (a previous
    /// secret still in its overlap too); returns how many sealed secrets were re-sealed.
    func resealWebhookSecrets(vault: any Vault) throws -> Int {
        let ws = store
        var n = 0
        for e in try ws.webhookEndpoints() {
            let stale = [e.secret, e.previousSecret].compactMap { $0 }.filter { !vault.isCurrent($0) }.count
            guard stale > 0 else { continue }
            let binding = VaultBinding.webhookSecret(endpointID: e.endpointID)
            let box = vault.isCurrent(e.secret) ? e.secret : try vault.reseal(e.secret, associatedData: binding)
            let previous = try e.previousSecret.map { vault.isCurrent($0) ? $0 : try vault.reseal($0, associatedData: binding) }
            if try ws.setWebhookSecrets(endpointID: e.endpointID, expected: e.secret, secret: box, previous: previous, previousUntil: e.previousUntil) {
                n += stale
            }
        }
        return n
    }

    /// The delivery log, newest first (no bodies: ids, types, states, statuses, failure categories).
    public func webhookDeliveries(limit: Int, state: WebhookDeliveryState?, eventID: String?) throws -> [WebhookDeliveryRecord] {
        try store.webhookDeliveries(limit: limit, state: state, eventID: eventID)
    }

    /// Makes an event's deliveries pending again, due now (1142 when nothing is to redeliver).
    public func redeliverWebhookEvent(_ eventID: String, now: Int = Int(Date().timeIntervalSince1970)) throws -> [String: JSONValue] {
        let ws = store
        return try store.withTransaction {
            guard try ws.webhookEvent(eventID) != nil else { throw IDVError(.webhookEventNotFound) }
            let n = try ws.redeliverWebhookEvent(eventID: eventID, at: now)
            try store.appendAudit(action: "admin.webhook_redeliver", userID: nil, sessionID: nil,
                                  details: ["event_id": .string(eventID), "deliveries": .integer(n)], at: now)
            return ["event_id": .string(eventID), "deliveries": .integer(n)]
        }
    }
}
