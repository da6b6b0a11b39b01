import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVStoreSQL

// What PostgreSQL does differently from the shared SQL (IDVStoreSQL): the work several nodes share
// — the expiry sweep, device and counter clean-up, the media purge, webhook delivery and the
// outbox's retention — takes its rows `FOR UPDATE SKIP LOCKED`, so nodes running it at once neither
// wait on each other nor handle a row twice; and key rotation records the session-state key.
// Statements here are in PostgreSQL's own spelling (`$n`).

extension PostgresStore {
    /// As the protocol says, and: the returned sessions are claimed by this store (this node) for
    /// ``sweepClaimSeconds`` counted from `now`, so a sweep on another node at the same time gets
    /// other sessions (or none), while this node is offered its own claims again exactly as SQLite
    /// offers a session again. A claimed session that was not deleted (answered or revoked
    /// meanwhile) is offered to every node once its claim lapses.
    public func purgeableSessions(now: Int, limit: Int) throws -> [SessionRecord] {
        let rows = try query("""
            UPDATE sessions SET sweep_claimed_by = $4, sweep_claimed_until = $2
            WHERE session_id IN (
                SELECT session_id FROM sessions
                WHERE (revoked_at IS NOT NULL OR absolute_expires_at <= $1 OR last_seen_at + idle_timeout <= $1)
                  AND (sweep_claimed_until IS NULL OR sweep_claimed_until <= $1 OR sweep_claimed_by = $4)
                ORDER BY last_seen_at LIMIT $3
                FOR UPDATE SKIP LOCKED)
            RETURNING \(CoreColumns.session)
            """, [SQLCell(now), SQLCell(now + Self.sweepClaimSeconds), SQLCell(max(0, limit)), .text(nodeID)]).rows
        return rows.compactMap { try? sessionRow($0) }.sorted { ($0.lastSeenAt, $0.sessionID) < ($1.lastSeenAt, $1.sessionID) }
    }

    @discardableResult
    public func deleteUnboundDevices(unusedSince: Int, limit: Int) throws -> Int {
        try query("""
            DELETE FROM devices WHERE device_id IN (
              SELECT d.device_id FROM devices d
              WHERE d.user_id IS NULL AND COALESCE(d.last_used_at, d.created_at) < $1
                AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.device_id = d.device_id)
              LIMIT $2 FOR UPDATE OF d SKIP LOCKED)
            """, [SQLCell(unusedSince), SQLCell(max(0, limit))]).affected
    }

    @discardableResult
    public func deleteIdleLimitCounters(updatedBefore: Int, now: Int, limit: Int) throws -> Int {
        try query("""
            DELETE FROM limit_counters WHERE key IN (
              SELECT key FROM limit_counters WHERE updated_at < $1 AND blocked_until <= $2 LIMIT $3 FOR UPDATE SKIP LOCKED)
            """, [SQLCell(updatedBefore), SQLCell(now), SQLCell(max(0, limit))]).affected
    }

    /// Rows deleted per statement by ``purgeExpiredMedia(now:)``.
    static let mediaPurgeBatch = 500

    /// Deletes in batches of ``mediaPurgeBatch`` rows, skipping rows another node's purge holds.
    @discardableResult
    public func purgeExpiredMedia(now: Int) throws -> Int {
        var total = 0
        while true {
            let n = try query("""
                DELETE FROM idv_media WHERE media_id IN (
                    SELECT media_id FROM idv_media WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
                """, [SQLCell(now), SQLCell(Self.mediaPurgeBatch)]).affected
            total += n
            if n < Self.mediaPurgeBatch { return total }
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
            SELECT \(WebhookColumns.delivery), \(WebhookColumns.claim)
            FROM claimed d JOIN webhook_endpoints p ON p.endpoint_id = d.endpoint_id JOIN webhook_events e ON e.event_id = d.event_id
            ORDER BY d.next_attempt_at, d.ord
            """, [SQLCell(now), SQLCell(max(0, limit)), .text(claimant), SQLCell(now + leaseSeconds)]).rows.map { try claimRow($0, now: now) }
    }

    /// The delivery rows go with their event (`ON DELETE CASCADE`); rows locked by a claim are skipped.
    public func purgeWebhookEvents(before: Int, limit: Int) throws -> Int {
        try query("""
            DELETE FROM webhook_events WHERE event_id IN (
                SELECT e.event_id FROM webhook_events e WHERE e.created_at < $1
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.event_id AND d.state = 'pending')
                LIMIT $2 FOR UPDATE SKIP LOCKED)
            """, [SQLCell(before), SQLCell(max(0, limit))]).affected
    }

    /// After key rotation: the database's recorded session-state key id moves to the current key,
    /// so a node still on the old key file refuses to start.
    public func sessionStatesResealed() throws {
        try query("UPDATE idvd_meta SET value = $1 WHERE key = 'session_state_key_id'", [.text(stateSealer.vault.keyID)])
    }
}
