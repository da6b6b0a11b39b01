import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// Schema of the webhook outbox (SQLite migration 6; IDVEngine/Webhooks/Outbox.swift, docs/WEBHOOKS.md):
/// endpoints (the signing secret sealed under the server's key), events (the exact body sent) and one
/// delivery row per event and endpoint — the delivery log — with its claim (`claimed_by/_until`).
enum WebhookMigrations {
    static let v7 = """
    CREATE TABLE webhook_endpoints (
        endpoint_id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        secret_ciphertext BLOB NOT NULL,
        secret_nonce BLOB NOT NULL,
        key_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE webhook_events (
        event_id TEXT PRIMARY KEY,
        type TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        user_id TEXT,
        run_id TEXT,
        body BLOB NOT NULL
    );
    CREATE TABLE webhook_deliveries (
        delivery_id TEXT PRIMARY KEY,
        event_id TEXT NOT NULL REFERENCES webhook_events(event_id) ON DELETE CASCADE,
        endpoint_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        next_attempt_at INTEGER,
        last_attempt_at INTEGER,
        last_status INTEGER,
        last_error TEXT,
        delivered_at INTEGER,
        claimed_by TEXT,
        claimed_until INTEGER
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);
    CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
    """

    /// 9: an endpoint's previous secret during a rotation's overlap (`webhook rotate-secret`).
    static let v9 = """
    ALTER TABLE webhook_endpoints ADD COLUMN previous_ciphertext BLOB;
    ALTER TABLE webhook_endpoints ADD COLUMN previous_nonce BLOB;
    ALTER TABLE webhook_endpoints ADD COLUMN previous_key_id TEXT;
    ALTER TABLE webhook_endpoints ADD COLUMN previous_until INTEGER;
    """
}

/// Shared by both stores: the text forms of the outbox columns.
enum WebhookColumns {
    static func events(_ e: [WebhookEventType]) -> String { e.map(\.rawValue).joined(separator: ",") }
    static func events(_ s: String) -> [WebhookEventType] { s.split(separator: ",").compactMap { WebhookEventType(rawValue: String($0)) } }
    static let delivery = "d.delivery_id, d.event_id, d.event_type, d.endpoint_id, d.state, d.attempts, d.created_at, d.next_attempt_at, "
        + "d.last_attempt_at, d.last_status, d.last_error, d.delivered_at"
}

extension SQLiteStore: WebhookStore {
    private static func bytes(_ v: SQLValue) -> [UInt8] { if case let .blob(b) = v { return b }; return [] }

    private func delivery(_ r: [SQLValue], from i: Int = 0) -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(deliveryID: r[i].text ?? "", eventID: r[i + 1].text ?? "",
                              eventType: WebhookEventType(rawValue: r[i + 2].text ?? "") ?? .verificationDecided,
                              endpointID: r[i + 3].text ?? "", state: WebhookDeliveryState(rawValue: r[i + 4].text ?? "") ?? .pending,
                              attempts: r[i + 5].int ?? 0, createdAt: r[i + 6].int ?? 0, nextAttemptAt: r[i + 7].int, lastAttemptAt: r[i + 8].int,
                              lastStatus: r[i + 9].int, lastError: r[i + 10].text.flatMap(WebhookFailure.init(rawValue:)), deliveredAt: r[i + 11].int)
    }

    public func createWebhookEndpoint(_ e: WebhookEndpointRecord) throws {
        try query("INSERT INTO webhook_endpoints (endpoint_id, url, events, secret_ciphertext, secret_nonce, key_id, created_at) VALUES (?,?,?,?,?,?,?)",
                  [.text(e.endpointID), .text(e.url), .text(WebhookColumns.events(e.events)), .blob(e.secret.ciphertext), .blob(e.secret.nonce),
                   .text(e.secret.keyID), SQLValue(e.createdAt)])
    }

    public func webhookEndpoints() throws -> [WebhookEndpointRecord] {
        try query("""
            SELECT endpoint_id, url, events, secret_ciphertext, secret_nonce, key_id, created_at,
                   previous_ciphertext, previous_nonce, previous_key_id, previous_until
            FROM webhook_endpoints ORDER BY created_at, rowid
            """).map { r in
            let previous = r[9].text.map { SealedBox(ciphertext: Self.bytes(r[7]), nonce: Self.bytes(r[8]), keyID: $0) }
            return WebhookEndpointRecord(endpointID: r[0].text ?? "", url: r[1].text ?? "", events: WebhookColumns.events(r[2].text ?? ""),
                                         secret: SealedBox(ciphertext: Self.bytes(r[3]), nonce: Self.bytes(r[4]), keyID: r[5].text ?? ""), createdAt: r[6].int ?? 0,
                                         previousSecret: previous, previousUntil: previous == nil ? nil : r[10].int)
        }
    }

    public func setWebhookSecrets(endpointID: String, expected: SealedBox, secret: SealedBox, previous: SealedBox?, previousUntil: Int?) throws -> Bool {
        try withTransaction {
            try query("""
                UPDATE webhook_endpoints SET secret_ciphertext = ?, secret_nonce = ?, key_id = ?,
                       previous_ciphertext = ?, previous_nonce = ?, previous_key_id = ?, previous_until = ?
                WHERE endpoint_id = ? AND secret_nonce = ?
                """, [.blob(secret.ciphertext), .blob(secret.nonce), .text(secret.keyID),
                      previous.map { .blob($0.ciphertext) } ?? .null, previous.map { .blob($0.nonce) } ?? .null, SQLValue(previous?.keyID),
                      previous == nil ? .null : SQLValue(previousUntil), .text(endpointID), .blob(expected.nonce)])
            return changes == 1
        }
    }

    public func deleteWebhookEndpoint(_ endpointID: String) throws -> Bool {
        try withTransaction {
            try query("DELETE FROM webhook_endpoints WHERE endpoint_id = ?", [.text(endpointID)])
            guard changes == 1 else { return false }
            try query("UPDATE webhook_deliveries SET state = 'failed', last_error = ?, next_attempt_at = NULL, claimed_by = NULL, claimed_until = NULL WHERE endpoint_id = ? AND state = 'pending'",
                      [.text(WebhookFailure.endpointRemoved.rawValue), .text(endpointID)])
            return true
        }
    }

    @discardableResult
    public func enqueueWebhookEvent(_ e: WebhookEventRecord) throws -> Int {
        try withTransaction {
            try query("INSERT INTO webhook_events (event_id, type, created_at, user_id, run_id, body) VALUES (?,?,?,?,?,?)",
                      [.text(e.eventID), .text(e.type.rawValue), SQLValue(e.createdAt), SQLValue(e.userID), SQLValue(e.runID), .blob(Array(e.body))])
            var n = 0
            for r in try query("SELECT endpoint_id, events FROM webhook_endpoints") where WebhookColumns.events(r[1].text ?? "").contains(e.type) {
                let endpointID = r[0].text ?? ""
                try query("INSERT INTO webhook_deliveries (delivery_id, event_id, endpoint_id, event_type, state, attempts, created_at, next_attempt_at) VALUES (?,?,?,?,'pending',0,?,?)",
                          [.text(e.eventID + "." + endpointID), .text(e.eventID), .text(endpointID), .text(e.type.rawValue),
                           SQLValue(e.createdAt), SQLValue(e.createdAt)])
                n += 1
            }
            return n
        }
    }

    public func webhookEvent(_ eventID: String) throws -> WebhookEventRecord? {
        try query("SELECT event_id, type, created_at, user_id, run_id, body FROM webhook_events WHERE event_id = ?", [.text(eventID)]).first.map { r in
            WebhookEventRecord(eventID: r[0].text ?? "", type: WebhookEventType(rawValue: r[1].text ?? "") ?? .verificationDecided,
                               createdAt: r[2].int ?? 0, userID: r[3].text, runID: r[4].text, body: Data(Self.bytes(r[5])))
        }
    }

    /// One write transaction (`BEGIN IMMEDIATE`: other processes on the file wait): the due,
    /// unclaimed rows are read and claimed together.
    public func claimWebhookDeliveries(now: Int, limit: Int, claimant: String, leaseSeconds: Int) throws -> [WebhookClaim] {
        try withTransaction {
            let rows = try query("""
                SELECT \(WebhookColumns.delivery), p.url, p.secret_ciphertext, p.secret_nonce, p.key_id, e.body,
                       p.previous_ciphertext, p.previous_nonce, p.previous_key_id, p.previous_until
                FROM webhook_deliveries d JOIN webhook_endpoints p ON p.endpoint_id = d.endpoint_id JOIN webhook_events e ON e.event_id = d.event_id
                WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND (d.claimed_until IS NULL OR d.claimed_until <= ?)
                ORDER BY d.next_attempt_at, d.rowid LIMIT ?
                """, [SQLValue(now), SQLValue(now), SQLValue(max(0, limit))])
            var claims: [WebhookClaim] = []
            for r in rows {
                let d = delivery(r)
                try query("UPDATE webhook_deliveries SET claimed_by = ?, claimed_until = ? WHERE delivery_id = ?",
                          [.text(claimant), SQLValue(now + leaseSeconds), .text(d.deliveryID)])
                let overlap = (r[20].int ?? 0) > now
                claims.append(WebhookClaim(delivery: d, url: r[12].text ?? "",
                                           secret: SealedBox(ciphertext: Self.bytes(r[13]), nonce: Self.bytes(r[14]), keyID: r[15].text ?? ""),
                                           previousSecret: overlap ? r[19].text.map { SealedBox(ciphertext: Self.bytes(r[17]), nonce: Self.bytes(r[18]), keyID: $0) } : nil,
                                           body: Data(Self.bytes(r[16]))))
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
        return try withTransaction {
            try query("""
                UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, last_attempt_at = ?, last_status = ?, last_error = ?,
                    next_attempt_at = ?, delivered_at = ?, claimed_by = NULL, claimed_until = NULL
                WHERE delivery_id = ? AND claimed_by = ? AND state = 'pending'
                """, [.text(state.rawValue), SQLValue(at), SQLValue(status), SQLValue(failure?.rawValue), SQLValue(next),
                      SQLValue(state == .delivered ? at : nil), .text(deliveryID), .text(claimant)])
            return changes == 1
        }
    }

    public func webhookDeliveries(limit: Int, state: WebhookDeliveryState?, eventID: String?) throws -> [WebhookDeliveryRecord] {
        try query("""
            SELECT \(WebhookColumns.delivery) FROM webhook_deliveries d
            WHERE (? IS NULL OR d.state = ?) AND (? IS NULL OR d.event_id = ?)
            ORDER BY d.created_at DESC, d.rowid DESC LIMIT ?
            """, [SQLValue(state?.rawValue), SQLValue(state?.rawValue), SQLValue(eventID), SQLValue(eventID), SQLValue(max(0, limit))])
            .map { delivery($0) }
    }

    public func webhookOutboxDepth() throws -> Int {
        try query("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'").first?[0].int ?? 0
    }

    public func purgeWebhookEvents(before: Int, limit: Int) throws -> Int {
        try withTransaction {
            try query("""
                DELETE FROM webhook_events WHERE event_id IN (
                    SELECT e.event_id FROM webhook_events e WHERE e.created_at < ?
                    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.event_id AND d.state = 'pending') LIMIT ?)
                """, [SQLValue(before), SQLValue(max(0, limit))])
            let n = changes
            try query("DELETE FROM webhook_deliveries WHERE event_id NOT IN (SELECT event_id FROM webhook_events)")
            return n
        }
    }

    public func redeliverWebhookEvent(eventID: String, at: Int) throws -> Int {
        try withTransaction {
            try query("""
                UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, delivered_at = NULL, claimed_by = NULL, claimed_until = NULL
                WHERE event_id = ? AND endpoint_id IN (SELECT endpoint_id FROM webhook_endpoints)
                """, [SQLValue(at), .text(eventID)])
            return changes
        }
    }
}
