import Foundation
import IDVCore
import IDVEngine

// The webhook outbox (``WebhookStore``; IDVEngine Webhooks/Outbox.swift, docs/WEBHOOKS.md), written
// once for both databases. PostgreSQL claims due deliveries and purges old events with
// `FOR UPDATE SKIP LOCKED` (its own `claimWebhookDeliveries` and `purgeWebhookEvents`), so that
// several nodes share the work; the versions here hold the whole database for the transaction,
// which SQLite's write transaction does.

/// Column lists of the webhook tables, in the order the row mappers read them.
public enum WebhookColumns {
    public static let delivery = "d.delivery_id, d.event_id, d.event_type, d.endpoint_id, d.state, d.attempts, d.created_at, d.next_attempt_at, "
        + "d.last_attempt_at, d.last_status, d.last_error, d.delivered_at"
    /// What a claim reads beside the delivery (columns 12…20 of a claim row).
    public static let claim = "p.url, p.secret_ciphertext, p.secret_nonce, p.key_id, e.body, p.previous_ciphertext, p.previous_nonce, p.previous_key_id, p.previous_until"

    static func events(_ e: [WebhookEventType]) -> String { e.map(\.rawValue).joined(separator: ",") }
    static func events(_ s: String) -> [WebhookEventType] { s.split(separator: ",").compactMap { WebhookEventType(rawValue: String($0)) } }
}

extension SQLDatabase {
    public func deliveryRow(_ r: SQLRow) throws -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(deliveryID: try r.text(0), eventID: try r.text(1), eventType: try r.value(2, as: WebhookEventType.self),
                              endpointID: try r.text(3), state: try r.value(4, as: WebhookDeliveryState.self), attempts: try r.int(5),
                              createdAt: try r.int(6), nextAttemptAt: try r.optionalInt(7), lastAttemptAt: try r.optionalInt(8),
                              lastStatus: try r.optionalInt(9), lastError: try r.optionalValue(10, as: WebhookFailure.self),
                              deliveredAt: try r.optionalInt(11))
    }

    /// A claim row (``WebhookColumns/delivery`` then ``WebhookColumns/claim``) at `now`: the
    /// previous secret only while its rotation overlap lasts.
    public func claimRow(_ r: SQLRow, now: Int) throws -> WebhookClaim {
        let overlap = (try r.optionalInt(20) ?? 0) > now
        return WebhookClaim(delivery: try deliveryRow(r), url: try r.text(12),
                            secret: SealedBox(ciphertext: try r.bytes(13), nonce: try r.bytes(14), keyID: try r.text(15)),
                            previousSecret: overlap ? try r.optionalText(19).map { SealedBox(ciphertext: try r.bytes(17), nonce: try r.bytes(18), keyID: $0) } : nil,
                            body: Data(try r.bytes(16)))
    }

    public func createWebhookEndpoint(_ e: WebhookEndpointRecord) throws {
        try run("INSERT INTO webhook_endpoints (endpoint_id, url, events, secret_ciphertext, secret_nonce, key_id, created_at) VALUES (?,?,?,?,?,?,?)",
                [.text(e.endpointID), .text(e.url), .text(WebhookColumns.events(e.events)), .bytes(e.secret.ciphertext), .bytes(e.secret.nonce),
                 .text(e.secret.keyID), SQLCell(e.createdAt)])
    }

    public func webhookEndpoints() throws -> [WebhookEndpointRecord] {
        try rows("""
            SELECT endpoint_id, url, events, secret_ciphertext, secret_nonce, key_id, created_at,
                   previous_ciphertext, previous_nonce, previous_key_id, previous_until
            FROM webhook_endpoints ORDER BY created_at, \(dialect.insertionOrder)
            """).map { r in
            let previous = try r.optionalText(9).map { SealedBox(ciphertext: try r.bytes(7), nonce: try r.bytes(8), keyID: $0) }
            return WebhookEndpointRecord(endpointID: try r.text(0), url: try r.text(1), events: WebhookColumns.events(try r.text(2)),
                                         secret: SealedBox(ciphertext: try r.bytes(3), nonce: try r.bytes(4), keyID: try r.text(5)), createdAt: try r.int(6),
                                         previousSecret: previous, previousUntil: previous == nil ? nil : try r.optionalInt(10))
        }
    }

    public func setWebhookSecrets(endpointID: String, expected: SealedBox, secret: SealedBox, previous: SealedBox?, previousUntil: Int?) throws -> Bool {
        try run("""
            UPDATE webhook_endpoints SET secret_ciphertext = ?, secret_nonce = ?, key_id = ?,
                   previous_ciphertext = ?, previous_nonce = ?, previous_key_id = ?, previous_until = ?
            WHERE endpoint_id = ? AND secret_nonce = ?
            """, [.bytes(secret.ciphertext), .bytes(secret.nonce), .text(secret.keyID), SQLCell(previous?.ciphertext), SQLCell(previous?.nonce),
                  SQLCell(previous?.keyID), previous == nil ? .null : SQLCell(previousUntil), .text(endpointID), .bytes(expected.nonce)]).affected == 1
    }

    public func deleteWebhookEndpoint(_ endpointID: String) throws -> Bool {
        try withTransaction {
            guard try run("DELETE FROM webhook_endpoints WHERE endpoint_id = ?", [.text(endpointID)]).affected == 1 else { return false }
            try run("""
                UPDATE webhook_deliveries SET state = 'failed', last_error = ?, next_attempt_at = NULL, claimed_by = NULL, claimed_until = NULL
                WHERE endpoint_id = ? AND state = 'pending'
                """, [.text(WebhookFailure.endpointRemoved.rawValue), .text(endpointID)])
            return true
        }
    }

    @discardableResult
    public func enqueueWebhookEvent(_ e: WebhookEventRecord) throws -> Int {
        try withTransaction {
            try run("INSERT INTO webhook_events (event_id, type, created_at, user_id, run_id, body) VALUES (?,?,?,?,?,?)",
                    [.text(e.eventID), .text(e.type.rawValue), SQLCell(e.createdAt), SQLCell(e.userID), SQLCell(e.runID), .bytes(Array(e.body))])
            var n = 0
            for r in try rows("SELECT endpoint_id, events FROM webhook_endpoints") where WebhookColumns.events(try r.text(1)).contains(e.type) {
                let endpointID = try r.text(0)
                try run("""
                    INSERT INTO webhook_deliveries (delivery_id, event_id, endpoint_id, event_type, state, attempts, created_at, next_attempt_at)
                    VALUES (?,?,?,?,'pending',0,?,?)
                    """, [.text(e.eventID + "." + endpointID), .text(e.eventID), .text(endpointID), .text(e.type.rawValue),
                          SQLCell(e.createdAt), SQLCell(e.createdAt)])
                n += 1
            }
            return n
        }
    }

    public func webhookEvent(_ eventID: String) throws -> WebhookEventRecord? {
        try row("SELECT event_id, type, created_at, user_id, run_id, body FROM webhook_events WHERE event_id = ?", [.text(eventID)]).map { r in
            WebhookEventRecord(eventID: try r.text(0), type: try r.value(1, as: WebhookEventType.self), createdAt: try r.int(2),
                               userID: try r.optionalText(3), runID: try r.optionalText(4), body: Data(try r.bytes(5)))
        }
    }

    /// One write transaction: the due, unclaimed rows are read and claimed together.
    public func claimWebhookDeliveries(now: Int, limit: Int, claimant: String, leaseSeconds: Int) throws -> [WebhookClaim] {
        try withTransaction {
            let claims = try rows("""
                SELECT \(WebhookColumns.delivery), \(WebhookColumns.claim)
                FROM webhook_deliveries d JOIN webhook_endpoints p ON p.endpoint_id = d.endpoint_id JOIN webhook_events e ON e.event_id = d.event_id
                WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND (d.claimed_until IS NULL OR d.claimed_until <= ?)
                ORDER BY d.next_attempt_at, d.\(dialect.insertionOrder) LIMIT ?
                """, [SQLCell(now), SQLCell(now), SQLCell(max(0, limit))]).map { try claimRow($0, now: now) }
            for c in claims {
                try run("UPDATE webhook_deliveries SET claimed_by = ?, claimed_until = ? WHERE delivery_id = ?",
                        [.text(claimant), SQLCell(now + leaseSeconds), .text(c.delivery.deliveryID)])
            }
            return claims
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
        return try run("""
            UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, last_attempt_at = ?, last_status = ?, last_error = ?,
                next_attempt_at = ?, delivered_at = ?, claimed_by = NULL, claimed_until = NULL
            WHERE delivery_id = ? AND claimed_by = ? AND state = 'pending'
            """, [.text(state.rawValue), SQLCell(at), SQLCell(status), SQLCell(failure?.rawValue), SQLCell(next),
                  SQLCell(state == .delivered ? at : nil), .text(deliveryID), .text(claimant)]).affected == 1
    }

    public func webhookDeliveries(limit: Int, state: WebhookDeliveryState?, eventID: String?) throws -> [WebhookDeliveryRecord] {
        var conditions: [String] = []
        var params: [SQLCell] = []
        if let state { conditions.append("d.state = ?"); params.append(.text(state.rawValue)) }
        if let eventID { conditions.append("d.event_id = ?"); params.append(.text(eventID)) }
        params.append(SQLCell(max(0, limit)))
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try rows("""
            SELECT \(WebhookColumns.delivery) FROM webhook_deliveries d \(filter)
            ORDER BY d.created_at DESC, d.\(dialect.insertionOrder) DESC LIMIT ?
            """, params).map(deliveryRow)
    }

    public func webhookOutboxDepth() throws -> Int {
        try count("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'")
    }

    /// Events older than `before` with no pending delivery, at most `limit`, with their deliveries.
    public func purgeWebhookEvents(before: Int, limit: Int) throws -> Int {
        try withTransaction {
            let n = try run("""
                DELETE FROM webhook_events WHERE event_id IN (
                    SELECT e.event_id FROM webhook_events e WHERE e.created_at < ?
                    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.event_id AND d.state = 'pending') LIMIT ?)
                """, [SQLCell(before), SQLCell(max(0, limit))]).affected
            try run("DELETE FROM webhook_deliveries WHERE event_id NOT IN (SELECT event_id FROM webhook_events)")
            return n
        }
    }

    public func redeliverWebhookEvent(eventID: String, at: Int) throws -> Int {
        try run("""
            UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, delivered_at = NULL, claimed_by = NULL, claimed_until = NULL
            WHERE event_id = ? AND endpoint_id IN (SELECT endpoint_id FROM webhook_endpoints)
            """, [SQLCell(at), .text(eventID)]).affected
    }
}
