import Foundation
import IDVCore
import IDVEngine

// Retention by age (``RetentionStore``; docs/DATA-PROTECTION.md "How long"), written once for
// both databases: each class's age column, the rule for what may go, and a batched delete
// (`… WHERE key IN (SELECT key … LIMIT n)`, which both SQLite and PostgreSQL run).

/// One class's table: its key, the column its age starts from, the condition a row must meet to
/// be deleted by age (besides age), the expression of its payload bytes, and which rows of the
/// table belong to the class (`scope`; all of them for most).
private struct RetentionRule {
    let table: String
    let key: String
    let since: String
    let deletable: String
    let bytes: String
    var scope = "TRUE"
}

extension SQLDatabase {

    private func retentionRule(_ c: RetentionClass) -> RetentionRule {
        switch c {
        case .templates:
            return RetentionRule(table: "biometric_templates", key: "user_id", since: "created_at", deletable: "TRUE",
                                 bytes: "length(ciphertext) + length(nonce) + length(model)")
        case .scanReports:
            // The report of a run still open, or of one a reviewer has yet to decide, stays: the
            // run's own judgement, its evidence record and the reviewer read it.
            return RetentionRule(table: "document_scans", key: "scan_id", since: "created_at",
                                 deletable: "NOT EXISTS (SELECT 1 FROM flow_runs f WHERE f.run_id = document_scans.run_id AND f.ended_at IS NULL)"
                                     + " AND NOT EXISTS (SELECT 1 FROM review_cases c WHERE c.run_id = document_scans.run_id AND c.decided_at IS NULL)",
                                 bytes: "coalesce(length(report_ciphertext), 0) + coalesce(length(report_nonce), 0) + length(scan_id)")
        case .flowRuns:
            // An open review case holds its run: the reviewer decides on it.
            return RetentionRule(table: "flow_runs", key: "run_id", since: "ended_at",
                                 deletable: "ended_at IS NOT NULL AND run_id NOT IN (SELECT run_id FROM review_cases WHERE decided_at IS NULL)",
                                 bytes: "length(run_id) + length(session_id) + length(flow) + coalesce(length(user_id), 0) + coalesce(length(outcome), 0)")
        case .reviewCases:
            return RetentionRule(table: "review_cases", key: "case_id", since: "decided_at", deletable: "decided_at IS NOT NULL",
                                 bytes: "length(case_id) + length(run_id) + length(user_id) + length(triggers) + coalesce(length(decision_reason), 0)")
        case .consents:
            // The consent a kept template rests on stays with the template.
            return RetentionRule(table: "consents", key: "consent_id", since: "recorded_at",
                                 deletable: "consent_id NOT IN (SELECT consent_id FROM biometric_templates)",
                                 bytes: "length(consent_id) + length(user_id) + length(kind)")
        case .erasureReceipts:
            return RetentionRule(table: "erasure_receipts", key: "subject_key", since: "erased_at", deletable: "TRUE",
                                 bytes: "length(receipt) + length(subject_key)")
        case .keptMedia:
            return RetentionRule(table: "idv_media", key: "media_id", since: "expires_at", deletable: "expires_at IS NOT NULL",
                                 bytes: "length(ciphertext) + length(nonce)")
        case .webhookEvents:
            return RetentionRule(table: "webhook_events", key: "event_id", since: "created_at", deletable: "TRUE", bytes: "length(body)")
        case .sessions:
            return RetentionRule(table: "sessions", key: "session_id", since: "created_at", deletable: "TRUE", bytes: "length(state)")
        case .auditLog:
            return RetentionRule(table: "audit_log", key: "seq", since: "at", deletable: "FALSE",
                                 bytes: "length(details) + length(action) + length(hash) + length(prev_hash)")
        case .unboundDevices:
            // As the sweep's `deleteUnboundDevices`: never bound, no session left on it.
            return RetentionRule(table: "devices", key: "device_id", since: "COALESCE(last_used_at, created_at)",
                                 deletable: "NOT EXISTS (SELECT 1 FROM sessions s WHERE s.device_id = devices.device_id)",
                                 bytes: "length(device_id) + length(public_key) + coalesce(length(label), 0)", scope: "user_id IS NULL")
        case .captureDigests:
            return RetentionRule(table: "capture_digests", key: "digest", since: "expires_at", deletable: "TRUE", bytes: "length(digest)")
        }
    }

    public func purgeRetained(_ dataClass: RetentionClass, before cutoff: Int, limit: Int) throws -> Int {
        switch dataClass {
        case .templates, .scanReports, .flowRuns, .reviewCases, .consents, .erasureReceipts: break
        case .keptMedia, .webhookEvents, .sessions, .auditLog, .unboundDevices, .captureDigests:
            throw StoreError.database("\(dataClass.rawValue) is not deleted by retention.* (it has its own rule)")
        }
        let r = retentionRule(dataClass)
        let batch = "SELECT \(r.key) FROM \(r.table) WHERE \(r.since) < ? AND \(r.deletable) LIMIT ?"
        let p: [SQLCell] = [SQLCell(cutoff), SQLCell(max(0, limit))]
        return try withTransaction {
            if dataClass == .flowRuns {
                // A run's kept images go with it (normally released at its end already).
                try run("DELETE FROM idv_media WHERE run_id IN (\(batch))", p)
            }
            return try run("DELETE FROM \(r.table) WHERE \(r.key) IN (\(batch))", p).affected
        }
    }

    public func retentionUsage(_ dataClass: RetentionClass, cutoff: Int?) throws -> RetentionUsage {
        let r = retentionRule(dataClass)
        guard let all = try row("SELECT count(*), coalesce(sum(\(r.bytes)), 0) FROM \(r.table) WHERE \(r.scope)") else {
            return RetentionUsage(rows: 0, bytes: 0, pastRetention: 0)
        }
        var past = 0
        if let cutoff {
            // Kept media and capture digests carry their own expiry time: past it at "now".
            let op = dataClass == .keptMedia || dataClass == .captureDigests ? "<=" : "<"
            past = try count("SELECT count(*) FROM \(r.table) WHERE \(r.scope) AND \(r.since) \(op) ? AND \(r.deletable)", [SQLCell(cutoff)])
        }
        return RetentionUsage(rows: try all.int(0), bytes: try all.int(1), pastRetention: past)
    }
}
