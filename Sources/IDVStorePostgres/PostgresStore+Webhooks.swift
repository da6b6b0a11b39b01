import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// The webhook outbox on PostgreSQL (migration 6; IDVEngine/Webhooks/Outbox.swift, docs/WEBHOOKS.md).
/// Several nodes deliver from one database: a claim is one statement that takes due, unclaimed rows
/// `FOR UPDATE SKIP LOCKED` and stamps them with the node's id and a lease, as the expiry sweep
/// claims sessions — so no two nodes hold one delivery at once.
extension PostgresStore: WebhookStore {
    static let deliveryColumns = "d.delivery_id, d.event_id, d.event_type, d.endpoint_id, d.state, d.attempts, d.created_at, d.next_attempt_at, "
        + "d.last_attempt_at, d.last_status, d.last_error, d.delivered_at"

    private static func events(_ e: [WebhookEventType]) -> String { e.map(\.rawValue).joined(separator: ",") }
    private static func events(_ s: String) -> [WebhookEventType] { s.split(separator: ",").compactMap { WebhookEventType(rawValue: String($0)) } }

    private func delivery(_ r: PGRow) throws -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(deliveryID: try r.text(0), eventID: try r.text(1),
                              eventType: WebhookEventType(rawValue: try r.text(2)) ?? .verificationDecided, endpointID: try r.text(3),
                              state: WebhookDeliveryState(rawValue: try r.text(4)) ?? .pending, attempts: try r.int(5), createdAt: try r.int(6),
                              nextAttemptAt: try r.optionalInt(7), lastAttemptAt: try r.optionalInt(8), lastStatus: try r.optionalInt(9),
                              lastError: try r.optionalText(10).flatMap(WebhookFailure.init(rawValue:)), deliveredAt: try r.optionalInt(11))
    }

    public func createWebhookEndpoint(_ e: WebhookEndpointRecord) throws {
        try query("INSERT INTO webhook_endpoints (endpoint_id, url, events, secret_ciphertext, secret_nonce, key_id, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7)",
                  [.text(e.endpointID), .text(e.url), .text(Self.events(e.events)), .bytes(e.secret.ciphertext), .bytes(e.secret.nonce),
                   .text(e.secret.keyID), PGValue(e.createdAt)])
    }

    public func webhookEndpoints() throws -> [WebhookEndpointRecord] {
        try query("""
            SELECT endpoint_id, url, events, secret_ciphertext, secret_nonce, key_id, created_at,
                   previous_ciphertext, previous_nonce, previous_key_id, previous_until
            FROM webhook_endpoints ORDER BY created_at, ord
            """).rows.map { r in
            let previous = try r.optionalText(9).map { SealedBox(ciphertext: try r.bytes(7), nonce: try r.bytes(8), keyID: $0) }
            return WebhookEndpointRecord(endpointID: try r.text(0), url: try r.text(1), events: Self.events(try r.text(2)),
                                         secret: SealedBox(ciphertext: try r.bytes(3), nonce: try r.bytes(4), keyID: try r.text(5)), createdAt: try r.int(6),
                                         previousSecret: previous, previousUntil: previous == nil ? nil : try r.optionalInt(10))
        }
    }

    public func setWebhookSecrets(endpointID: String, expected: SealedBox, secret: SealedBox, previous: SealedBox?, previousUntil: Int?) throws -> Bool {
        try query("""
            UPDATE webhook_endpoints SET secret_ciphertext = $1, secret_nonce = $2, key_id = $3,
                   previous_ciphertext = $4, previous_nonce = $5, previous_key_id = $6, previous_until = $7
            WHERE endpoint_id = $8 AND secret_nonce = $9
            """, [.bytes(secret.ciphertext), .bytes(secret.nonce), .text(secret.keyID),
                  previous.map { .bytes($0.ciphertext) } ?? .null, previous.map { .bytes($0.nonce) } ?? .null, PGValue(previous?.keyID),
                  previous == nil ? .null : PGValue(previousUntil), .text(endpointID), .bytes(expected.nonce)]).affected == 1
    }

    public func deleteWebhookEndpoint(_ endpointID: String) throws -> Bool {
        try withTransaction {
            guard try query("DELETE FROM webhook_endpoints WHERE endpoint_id = $1", [.text(endpointID)]).affected == 1 else { return false }
            try query("UPDATE webhook_deliveries SET state = 'failed', last_error = $1, next_attempt_at = NULL, claimed_by = NULL, claimed_until = NULL WHERE endpoint_id = $2 AND state = 'pending'",
                      [.text(WebhookFailure.endpointRemoved.rawValue), .text(endpointID)])
            return true
        }
    }

    @discardableResult
    public func enqueueWebhookEvent(_ e: WebhookEventRecord) throws -> Int {
        try withTransaction {
            try query("INSERT INTO webhook_events (event_id, type, created_at, user_id, run_id, body) VALUES ($1,$2,$3,$4,$5,$6)",
                      [.text(e.eventID), .text(e.type.rawValue), PGValue(e.createdAt), PGValue(e.userID), PGValue(e.runID), .bytes(Array(e.body))])
            var n = 0
            for r in try query("SELECT endpoint_id, events FROM webhook_endpoints").rows where Self.events(try r.text(1)).contains(e.type) {
                let endpointID = try r.text(0)
                try query("INSERT INTO webhook_deliveries (delivery_id, event_id, endpoint_id, event_type, state, attempts, created_at, next_attempt_at) VALUES ($1,$2,$3,$4,'pending',0,$5,$6)",
                          [.text(e.eventID + "." + endpointID), .text(e.eventID), .text(endpointID), .text(e.type.rawValue),
                           PGValue(e.createdAt), PGValue(e.createdAt)])
                n += 1
            }
            return n
        }
    }

    public func webhookEvent(_ eventID: String) throws -> WebhookEventRecord? {
        try query("SELECT event_id, type, created_at, user_id, run_id, body FROM webhook_events WHERE event_id = $1", [.text(eventID)]).rows.first.map { r in
            WebhookEventRecord(eventID: try r.text(0), type: WebhookEventType(rawValue: try r.text(1)) ?? .verificationDecided, createdAt: try r.int(2),
                               userID: try r.optionalText(3), runID: try r.optionalText(4), body: Data(try r.bytes(5)))
        }
    }

    /// One statement: a row another node is claiming is skipped (`SKIP LOCKED`), and a row another
    /// node claimed a moment ago no longer matches once its lock is released (its lease is set).
    public func claimWebhookDeliveries(now: Int, limit: Int, claimant: String, leaseSeconds: Int) throws -> [WebhookClaim] {
        try query("""
            WITH claimed AS (
                UPDATE webhook_deliveries SET claimed_by = $3, claimed_until = $4
                WHERE delivery_id IN (
                    SELECT delivery_id FROM webhook_deliveries
                    WHERE state = 'pending' AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
                    ORDER BY next_attempt_at, ord LIMIT $2
                    FOR UPDATE SKIP LOCKED)
                RETURNING *)
            SELECT \(Self.deliveryColumns), p.url, p.secret_ciphertext, p.secret_nonce, p.key_id, e.body,
                   p.previous_ciphertext, p.previous_nonce, p.previous_key_id, p.previous_until
            FROM claimed d JOIN webhook_endpoints p ON p.endpoint_id = d.endpoint_id JOIN webhook_events e ON e.event_id = d.event_id
            ORDER BY d.next_attempt_at, d.ord
            """, [PGValue(now), PGValue(max(0, limit)), .text(claimant), PGValue(now + leaseSeconds)]).rows.map { r in
            let overlap = (try r.optionalInt(20) ?? 0) > now
            return WebhookClaim(delivery: try delivery(r), url: try r.text(12),
                                secret: SealedBox(ciphertext: try r.bytes(13), nonce: try r.bytes(14), keyID: try r.text(15)),
                                previousSecret: overlap ? try r.optionalText(19).map { SealedBox(ciphertext: try r.bytes(17), nonce: try r.bytes(18), keyID: $0) } : nil,
                                body: Data(try r.bytes(16)))
        }
    }

    @discardableResult
    public func recordWebhookAttempt(deliveryID: String, claimant: String, result: WebhookAttemptResult) throws -> Bool {
        let (state, status, failure, at, next): (WebhookDeliveryState, Int?, WebhookFailure?, Int, Int?)
        switch result {
        case let .delivered(s, t): (state, status, failure, at, next) = (.delivered, s, nil, t, nil)
        case let .retry(s, f, t, n): (state, status, failure, at, next) = (.pending, s, f, t, n)
        case let .gaveUp(s, f, t): (state, status, failure, at, next) = (.failed, s, f, t, nil)
        }
        return try query("""
            UPDATE webhook_deliveries SET state = $1, attempts = attempts + 1, last_attempt_at = $2, last_status = $3, last_error = $4,
                next_attempt_at = $5, delivered_at = $6, claimed_by = NULL, claimed_until = NULL
            WHERE delivery_id = $7 AND claimed_by = $8 AND state = 'pending'
            """, [.text(state.rawValue), PGValue(at), PGValue(status), PGValue(failure?.rawValue), PGValue(next),
                  PGValue(state == .delivered ? at : nil), .text(deliveryID), .text(claimant)]).affected == 1
    }

    public func webhookDeliveries(limit: Int, state: WebhookDeliveryState?, eventID: String?) throws -> [WebhookDeliveryRecord] {
        var conditions: [String] = []
        var params: [PGValue] = []
        if let state { params.append(.text(state.rawValue)); conditions.append("d.state = $\(params.count)") }
        if let eventID { params.append(.text(eventID)); conditions.append("d.event_id = $\(params.count)") }
        params.append(PGValue(max(0, limit)))
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try query("SELECT \(Self.deliveryColumns) FROM webhook_deliveries d \(filter) ORDER BY d.created_at DESC, d.ord DESC LIMIT $\(params.count)",
                         params).rows.map { try delivery($0) }
    }

    public func webhookOutboxDepth() throws -> Int {
        try query("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'").rows.first?.int(0) ?? 0
    }

    /// The delivery rows go with their event (`ON DELETE CASCADE`); rows locked by a claim are skipped.
    public func purgeWebhookEvents(before: Int, limit: Int) throws -> Int {
        try query("""
            DELETE FROM webhook_events WHERE event_id IN (
                SELECT e.event_id FROM webhook_events e WHERE e.created_at < $1
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.event_id AND d.state = 'pending')
                LIMIT $2 FOR UPDATE SKIP LOCKED)
            """, [PGValue(before), PGValue(max(0, limit))]).affected
    }

    public func redeliverWebhookEvent(eventID: String, at: Int) throws -> Int {
        try query("""
            UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = $1, delivered_at = NULL, claimed_by = NULL, claimed_until = NULL
            WHERE event_id = $2 AND endpoint_id IN (SELECT endpoint_id FROM webhook_endpoints)
            """, [PGValue(at), .text(eventID)]).affected
    }
}
