import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime

extension PostgresStore: WorkflowStore {
    public func biometricTemplate(userID: String) throws -> BiometricTemplateRecord? {
        try query("SELECT user_id, ciphertext, nonce, key_id, model, consent_id, created_at FROM biometric_templates WHERE user_id = $1", [.text(userID)])
            .rows.first.map { r in
                BiometricTemplateRecord(userID: try r.text(0), sealed: SealedBox(ciphertext: try r.bytes(1), nonce: try r.bytes(2), keyID: try r.text(3)),
                                        model: try r.text(4), consentID: try r.text(5), createdAt: try r.int(6))
            }
    }

    public func saveBiometricTemplate(_ t: BiometricTemplateRecord) throws {
        try query("""
            INSERT INTO biometric_templates (user_id, ciphertext, nonce, key_id, model, consent_id, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7)
            ON CONFLICT (user_id) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, nonce = EXCLUDED.nonce, key_id = EXCLUDED.key_id,
                model = EXCLUDED.model, consent_id = EXCLUDED.consent_id, created_at = EXCLUDED.created_at
            """,
                  [.text(t.userID), .bytes(t.sealed.ciphertext), .bytes(t.sealed.nonce), .text(t.sealed.keyID), .text(t.model), .text(t.consentID), PGValue(t.createdAt)])
    }

    public func deleteBiometricTemplate(userID: String) throws -> Bool {
        try query("DELETE FROM biometric_templates WHERE user_id = $1", [.text(userID)]).affected > 0
    }

    public func recordConsent(_ c: ConsentRecord) throws {
        try query("INSERT INTO consents (consent_id, user_id, kind, granted, session_id, run_id, recorded_at, flow, idv_workflow, text_version) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)",
                  [.text(c.consentID), .text(c.userID), .text(c.kind), .bool(c.granted), PGValue(c.sessionID), PGValue(c.runID),
                   PGValue(c.recordedAt), .text(c.flow), PGValue(c.idvWorkflow), .text(c.textVersion)])
    }

    public func consents(userID: String) throws -> [ConsentRecord] {
        try query("SELECT consent_id, user_id, kind, granted, session_id, run_id, recorded_at, flow, idv_workflow, text_version FROM consents WHERE user_id = $1 ORDER BY recorded_at, ord",
                  [.text(userID)]).rows.map { r in
            ConsentRecord(consentID: try r.text(0), userID: try r.text(1), kind: try r.text(2), granted: try r.bool(3),
                          sessionID: try r.optionalText(4), runID: try r.optionalText(5), flow: try r.optionalText(7) ?? "", idvWorkflow: try r.optionalInt(8),
                          textVersion: try r.optionalText(9) ?? "", recordedAt: try r.int(6))
        }
    }

    public func saveDocumentScan(_ d: DocumentScanRecord) throws {
        try query("INSERT INTO document_scans (scan_id, user_id, session_id, run_id, overall_status, report_ciphertext, report_nonce, key_id, created_at, reason, idv_workflow) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)",
                  [.text(d.scanID), PGValue(d.userID), PGValue(d.sessionID), PGValue(d.runID), .text(d.overallStatus),
                   d.sealedReport.map { .bytes($0.ciphertext) } ?? .null, d.sealedReport.map { .bytes($0.nonce) } ?? .null,
                   PGValue(d.sealedReport?.keyID), PGValue(d.createdAt), .text(d.reason), PGValue(d.idvWorkflow)])
    }

    public func documentScans(userID: String) throws -> [DocumentScanRecord] {
        try query("SELECT scan_id, user_id, session_id, run_id, overall_status, report_ciphertext, report_nonce, key_id, created_at, reason, idv_workflow FROM document_scans WHERE user_id = $1 ORDER BY created_at, ord",
                  [.text(userID)]).rows.map { r in
            let sealed = try r.optionalText(7).map { SealedBox(ciphertext: try r.bytes(5), nonce: try r.bytes(6), keyID: $0) }
            return DocumentScanRecord(scanID: try r.text(0), userID: try r.optionalText(1), sessionID: try r.optionalText(2), runID: try r.optionalText(3),
                                      idvWorkflow: try r.optionalInt(10), reason: try r.optionalText(9) ?? "", overallStatus: try r.optionalText(4) ?? "",
                                      sealedReport: sealed, createdAt: try r.int(8))
        }
    }

    public func saveMedia(_ m: MediaRecord) throws {
        try query("INSERT INTO idv_media (media_id, run_id, kind, ciphertext, nonce, key_id, created_at, expires_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
                  [.text(m.mediaID), .text(m.runID), .text(m.kind), .bytes(m.sealed.ciphertext), .bytes(m.sealed.nonce), .text(m.sealed.keyID),
                   PGValue(m.createdAt), PGValue(m.expiresAt)])
    }

    public func media(_ mediaID: String) throws -> MediaRecord? {
        try query("SELECT media_id, run_id, kind, ciphertext, nonce, key_id, created_at, expires_at FROM idv_media WHERE media_id = $1", [.text(mediaID)])
            .rows.first.map { r in
                MediaRecord(mediaID: try r.text(0), runID: try r.text(1), kind: try r.text(2),
                            sealed: SealedBox(ciphertext: try r.bytes(3), nonce: try r.bytes(4), keyID: try r.text(5)),
                            createdAt: try r.int(6), expiresAt: try r.optionalInt(7))
            }
    }

    public func mediaCount(runID: String) throws -> Int {
        try query("SELECT count(*) FROM idv_media WHERE run_id = $1", [.text(runID)]).rows.first?.int(0) ?? 0
    }

    public func releaseMedia(runID: String, keepUntil: Int?) throws {
        if let keepUntil {
            try query("UPDATE idv_media SET expires_at = $1 WHERE run_id = $2 AND expires_at IS NULL", [PGValue(keepUntil), .text(runID)])
        } else {
            try query("DELETE FROM idv_media WHERE run_id = $1", [.text(runID)])
        }
    }

    /// Rows deleted per statement by ``purgeExpiredMedia(now:)``.
    static let mediaPurgeBatch = 500

    /// Deletes in batches of ``mediaPurgeBatch`` rows, skipping rows another node's purge holds
    /// (`FOR UPDATE SKIP LOCKED`): purges on several nodes at once neither wait on each other nor
    /// count a row twice.
    public func purgeExpiredMedia(now: Int) throws -> Int {
        var total = 0
        while true {
            let n = try query("""
                DELETE FROM idv_media WHERE media_id IN (
                    SELECT media_id FROM idv_media WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
                """, [PGValue(now), PGValue(Self.mediaPurgeBatch)]).affected
            total += n
            if n < Self.mediaPurgeBatch { return total }
        }
    }

    public func flowOutcomes(userID: String, flow: String, since: Int) throws -> [FlowOutcome] {
        try query("SELECT outcome FROM flow_runs WHERE user_id = $1 AND flow = $2 AND ended_at IS NOT NULL AND ended_at >= $3 AND outcome IS NOT NULL ORDER BY ended_at DESC, started_at DESC",
                  [.text(userID), .text(flow), PGValue(since)]).rows.compactMap { FlowOutcome(rawValue: try $0.text(0)) }
    }
}

extension PostgresStore {
    /// The tables holding vault-sealed boxes: the select of one batch not under a key, the binding of
    /// a row, and the update that re-seals it only when its nonce is unchanged. Selected columns:
    /// id, ciphertext, nonce, key id, then what the binding needs.
    private static let sealedTables: [(table: String, select: String, binding: @Sendable (PGRow) throws -> String, update: String)] = [
        ("biometric_templates",
         "SELECT user_id, ciphertext, nonce, key_id FROM biometric_templates WHERE key_id <> $1 ORDER BY user_id LIMIT $2",
         { VaultBinding.template(userID: try $0.text(0)) },
         "UPDATE biometric_templates SET ciphertext = $1, nonce = $2, key_id = $3 WHERE user_id = $4 AND nonce = $5"),
        ("document_scans",
         "SELECT scan_id, report_ciphertext, report_nonce, key_id FROM document_scans WHERE key_id IS NOT NULL AND key_id <> $1 ORDER BY scan_id LIMIT $2",
         { VaultBinding.scan(scanID: try $0.text(0)) },
         "UPDATE document_scans SET report_ciphertext = $1, report_nonce = $2, key_id = $3 WHERE scan_id = $4 AND report_nonce = $5"),
        ("idv_media",
         "SELECT media_id, ciphertext, nonce, key_id, run_id, kind FROM idv_media WHERE key_id <> $1 ORDER BY media_id LIMIT $2",
         { VaultBinding.media(runID: try $0.text(4), kind: try $0.text(5)) },
         "UPDATE idv_media SET ciphertext = $1, nonce = $2, key_id = $3 WHERE media_id = $4 AND nonce = $5"),
    ]
    /// The key id inside a sealed session state (`0x01 ‖ key id ‖ …`, ``SessionStateSealer``).
    private static let sessionKeyID = "encode(substring(state from 2 for 16), 'escape')"

    public func sealedInventory(vault: any Vault) throws -> SealedInventory {
        var inv = SealedInventory()
        func classify(_ table: String, _ rows: [PGRow], current: String, previous: [String]) throws {
            for r in rows {
                let id = try r.text(0), n = try r.int(1)
                guard n > 0 else { continue }
                if id == current { inv.current[table, default: 0] += n }
                else if previous.contains(id) { inv.previous[table, default: 0] += n }
                else { inv.unknown[table, default: 0] += n }
            }
        }
        for (table, column) in [("biometric_templates", "key_id"), ("document_scans", "key_id"), ("idv_media", "key_id")] {
            try classify(table, try query("SELECT \(column), count(*) FROM \(table) WHERE \(column) IS NOT NULL GROUP BY 1").rows,
                         current: vault.keyID, previous: vault.previousKeyIDs)
        }
        try classify("sessions", try query("SELECT \(Self.sessionKeyID), count(*) FROM sessions GROUP BY 1").rows,
                     current: stateSealer.vault.keyID, previous: stateSealer.vault.previousKeyIDs)
        return inv
    }

    /// As the protocol says; each batch is one write transaction, and a row changed by another node
    /// since it was read (its nonce or version moved) is left alone — it was sealed anew under the
    /// current key by that write. After the session states, the database's recorded session-state
    /// key id moves to the current key, so a node still on the old key file refuses to start.
    public func resealUnderCurrentKey(vault: any Vault, batchSize: Int = 200) throws -> [String: Int] {
        let batch = max(1, batchSize)
        var counts: [String: Int] = [:]
        func drain(_ step: () throws -> (read: Int, written: Int)) throws -> Int {
            var total = 0
            while true {
                let (read, written) = try withTransaction(step)
                total += written
                if read < batch || written == 0 { return total }
            }
        }
        for t in Self.sealedTables {
            counts[t.table] = try drain {
                let rows = try query(t.select, [.text(vault.keyID), PGValue(batch)]).rows
                var written = 0
                for r in rows {
                    let old = SealedBox(ciphertext: try r.bytes(1), nonce: try r.bytes(2), keyID: try r.text(3))
                    let new = try vault.reseal(old, associatedData: try t.binding(r))
                    written += try query(t.update, [.bytes(new.ciphertext), .bytes(new.nonce), .text(new.keyID), .text(try r.text(0)), .bytes(old.nonce)]).affected
                }
                return (rows.count, written)
            }
        }
        counts["sessions"] = try drain {
            let rows = try query("SELECT session_id, version, state FROM sessions WHERE \(Self.sessionKeyID) <> $1 ORDER BY session_id LIMIT $2",
                                 [.text(stateSealer.vault.keyID), PGValue(batch)]).rows
            var written = 0
            for r in rows {
                let sessionID = try r.text(0)
                let sealed = try stateSealer.reseal(try r.bytes(2), sessionID: sessionID)
                written += try query("UPDATE sessions SET state = $1 WHERE session_id = $2 AND version = $3",
                                     [.bytes(sealed), .text(sessionID), PGValue(try r.int(1))]).affected
            }
            return (rows.count, written)
        }
        try query("UPDATE idvd_meta SET value = $1 WHERE key = 'session_state_key_id'", [.text(stateSealer.vault.keyID)])
        return counts
    }
}
