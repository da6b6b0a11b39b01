import Foundation
import IDVCore
import IDVCrypto
import IDVEngine

// The IDV workflow tables (``WorkflowStore``): biometric templates, consents, document scans, the
// media a run keeps, and key rotation over every sealed box — written once for both databases.

extension SQLDatabase {
    // MARK: Templates

    public func biometricTemplate(userID: String) throws -> BiometricTemplateRecord? {
        try row("SELECT user_id, ciphertext, nonce, key_id, model, consent_id, created_at FROM biometric_templates WHERE user_id = ?",
                [.text(userID)]).map { r in
            BiometricTemplateRecord(userID: try r.text(0), sealed: SealedBox(ciphertext: try r.bytes(1), nonce: try r.bytes(2), keyID: try r.text(3)),
                                    model: try r.text(4), consentID: try r.text(5), createdAt: try r.int(6))
        }
    }

    public func saveBiometricTemplate(_ t: BiometricTemplateRecord) throws {
        try run("""
            INSERT INTO biometric_templates (user_id, ciphertext, nonce, key_id, model, consent_id, created_at) VALUES (?,?,?,?,?,?,?)
            ON CONFLICT (user_id) DO UPDATE SET ciphertext = excluded.ciphertext, nonce = excluded.nonce, key_id = excluded.key_id,
                model = excluded.model, consent_id = excluded.consent_id, created_at = excluded.created_at
            """, [.text(t.userID), .bytes(t.sealed.ciphertext), .bytes(t.sealed.nonce), .text(t.sealed.keyID), .text(t.model), .text(t.consentID),
                  SQLCell(t.createdAt)])
    }

    @discardableResult
    public func deleteBiometricTemplate(userID: String) throws -> Bool {
        try run("DELETE FROM biometric_templates WHERE user_id = ?", [.text(userID)]).affected > 0
    }

    // MARK: Consents and document scans

    public func recordConsent(_ c: ConsentRecord) throws {
        try run("""
            INSERT INTO consents (consent_id, user_id, kind, granted, session_id, run_id, recorded_at, flow, idv_workflow, text_version)
            VALUES (?,?,?,?,?,?,?,?,?,?)
            """, [.text(c.consentID), .text(c.userID), .text(c.kind), .bool(c.granted), SQLCell(c.sessionID), SQLCell(c.runID),
                  SQLCell(c.recordedAt), .text(c.flow), SQLCell(c.idvWorkflow), .text(c.textVersion)])
    }

    public func consents(userID: String) throws -> [ConsentRecord] {
        try rows("""
            SELECT consent_id, user_id, kind, granted, session_id, run_id, recorded_at, flow, idv_workflow, text_version FROM consents
            WHERE user_id = ? ORDER BY recorded_at, \(dialect.insertionOrder)
            """, [.text(userID)]).map { r in
            ConsentRecord(consentID: try r.text(0), userID: try r.text(1), kind: try r.text(2), granted: try r.bool(3),
                          sessionID: try r.optionalText(4), runID: try r.optionalText(5), flow: try r.optionalText(7) ?? "",
                          idvWorkflow: try r.optionalInt(8), textVersion: try r.optionalText(9) ?? "", recordedAt: try r.int(6))
        }
    }

    public func saveDocumentScan(_ d: DocumentScanRecord) throws {
        try run("""
            INSERT INTO document_scans (scan_id, user_id, session_id, run_id, overall_status, report_ciphertext, report_nonce, key_id, created_at,
                reason, idv_workflow) VALUES (?,?,?,?,?,?,?,?,?,?,?)
            """, [.text(d.scanID), SQLCell(d.userID), SQLCell(d.sessionID), SQLCell(d.runID), .text(d.overallStatus),
                  SQLCell(d.sealedReport?.ciphertext), SQLCell(d.sealedReport?.nonce), SQLCell(d.sealedReport?.keyID), SQLCell(d.createdAt),
                  .text(d.reason), SQLCell(d.idvWorkflow)])
    }

    public func documentScans(userID: String) throws -> [DocumentScanRecord] {
        try rows("""
            SELECT scan_id, user_id, session_id, run_id, overall_status, report_ciphertext, report_nonce, key_id, created_at, reason, idv_workflow
            FROM document_scans WHERE user_id = ? ORDER BY created_at, \(dialect.insertionOrder)
            """, [.text(userID)]).map { r in
            let sealed = try r.optionalText(7).map { SealedBox(ciphertext: try r.bytes(5), nonce: try r.bytes(6), keyID: $0) }
            return DocumentScanRecord(scanID: try r.text(0), userID: try r.optionalText(1), sessionID: try r.optionalText(2), runID: try r.optionalText(3),
                                      idvWorkflow: try r.optionalInt(10), reason: try r.optionalText(9) ?? "", overallStatus: try r.optionalText(4) ?? "",
                                      sealedReport: sealed, createdAt: try r.int(8))
        }
    }

    // MARK: Media

    public func saveMedia(_ m: MediaRecord) throws {
        try run("INSERT INTO idv_media (media_id, run_id, kind, ciphertext, nonce, key_id, created_at, expires_at) VALUES (?,?,?,?,?,?,?,?)",
                [.text(m.mediaID), .text(m.runID), .text(m.kind.rawValue), .bytes(m.sealed.ciphertext), .bytes(m.sealed.nonce), .text(m.sealed.keyID),
                 SQLCell(m.createdAt), SQLCell(m.expiresAt)])
    }

    func mediaRow(_ r: SQLRow) throws -> MediaRecord {
        MediaRecord(mediaID: try r.text(0), runID: try r.text(1), kind: try r.value(2, as: MediaKind.self),
                    sealed: SealedBox(ciphertext: try r.bytes(3), nonce: try r.bytes(4), keyID: try r.text(5)),
                    createdAt: try r.int(6), expiresAt: try r.optionalInt(7))
    }

    public func media(_ mediaID: String) throws -> MediaRecord? {
        try row("SELECT media_id, run_id, kind, ciphertext, nonce, key_id, created_at, expires_at FROM idv_media WHERE media_id = ?",
                [.text(mediaID)]).map(mediaRow)
    }

    /// Kept media of a run (review evidence), oldest first.
    public func mediaRecords(runID: String) throws -> [MediaRecord] {
        try rows("SELECT media_id, run_id, kind, ciphertext, nonce, key_id, created_at, expires_at FROM idv_media WHERE run_id = ? ORDER BY created_at, media_id",
                 [.text(runID)]).map(mediaRow)
    }

    public func mediaCount(runID: String) throws -> Int {
        try count("SELECT count(*) FROM idv_media WHERE run_id = ?", [.text(runID)])
    }

    public func releaseMedia(runID: String, keepUntil: Int?) throws {
        if let keepUntil {
            try run("UPDATE idv_media SET expires_at = ? WHERE run_id = ? AND expires_at IS NULL", [SQLCell(keepUntil), .text(runID)])
        } else {
            try run("DELETE FROM idv_media WHERE run_id = ?", [.text(runID)])
        }
    }

    @discardableResult
    public func purgeExpiredMedia(now: Int) throws -> Int {
        try run("DELETE FROM idv_media WHERE expires_at IS NOT NULL AND expires_at <= ?", [SQLCell(now)]).affected
    }

    // MARK: Key rotation

    /// The counts of sealed boxes by key id, per table, classified against `vault` (session states
    /// against the store's own sealer).
    public func sealedInventory(vault: any Vault) throws -> SealedInventory {
        var inv = SealedInventory()
        func classify(_ table: String, _ rows: [SQLRow], current: String, previous: [String]) throws {
            for r in rows {
                let id = try r.text(0), n = try r.int(1)
                guard n > 0 else { continue }
                if id == current { inv.current[table, default: 0] += n }
                else if previous.contains(id) { inv.previous[table, default: 0] += n }
                else { inv.unknown[table, default: 0] += n }
            }
        }
        for t in SealedTable.all {
            try classify(t.name, try rows("SELECT key_id, count(*) FROM \(t.name) WHERE key_id IS NOT NULL GROUP BY key_id"),
                         current: vault.keyID, previous: vault.previousKeyIDs)
        }
        try classify("sessions", try rows("SELECT \(dialect.sessionStateKeyID), count(*) FROM sessions WHERE \(dialect.sessionStateSealed) GROUP BY 1"),
                     current: stateSealer.vault.keyID, previous: stateSealer.vault.previousKeyIDs)
        return inv
    }

    /// Re-seals every box not under `vault`'s current key, one write transaction per batch of
    /// `batchSize` rows; a row changed since it was read (its nonce or version moved) is left alone:
    /// that write sealed it under the current key. Then ``sessionStatesResealed()`` (PostgreSQL
    /// records the session-state key the database is now sealed under).
    public func resealUnderCurrentKey(vault: any Vault, batchSize: Int = 200) throws -> [String: Int] {
        let batch = max(1, batchSize)
        var counts: [String: Int] = [:]
        /// Runs `step` (one batch, in a transaction) until a batch comes back short; returns rows written.
        func drain(_ step: () throws -> (read: Int, written: Int)) throws -> Int {
            var total = 0
            while true {
                let (read, written) = try withTransaction(step)
                total += written
                if read < batch || written == 0 { return total }
            }
        }
        for t in SealedTable.all {
            counts[t.name] = try drain {
                let page = try rows(t.select, [.text(vault.keyID), SQLCell(batch)])
                var written = 0
                for r in page {
                    let old = SealedBox(ciphertext: try r.bytes(1), nonce: try r.bytes(2), keyID: try r.text(3))
                    let new = try vault.reseal(old, associatedData: try t.binding(r))
                    written += try run(t.update, [.bytes(new.ciphertext), .bytes(new.nonce), .text(new.keyID), .text(try r.text(0)), .bytes(old.nonce)]).affected
                }
                return (page.count, written)
            }
        }
        counts["sessions"] = try drain {
            let page = try rows("""
                SELECT session_id, version, state FROM sessions WHERE \(dialect.sessionStateSealed) AND \(dialect.sessionStateKeyID) <> ?
                ORDER BY session_id LIMIT ?
                """, [.text(stateSealer.vault.keyID), SQLCell(batch)])
            var written = 0
            for r in page {
                let sessionID = try r.text(0)
                let sealed = try stateSealer.reseal(try r.bytes(2), sessionID: sessionID)
                written += try run("UPDATE sessions SET state = ? WHERE session_id = ? AND version = ?",
                                   [.bytes(sealed), .text(sessionID), SQLCell(try r.int(1))]).affected
            }
            return (page.count, written)
        }
        try sessionStatesResealed()
        return counts
    }

    public func sessionStatesResealed() throws {}
}

/// A table of vault-sealed boxes: the select of one batch not under a key (id, ciphertext, nonce,
/// key id, then what the binding needs), the associated data of a row, and the update that
/// re-seals a row only when its nonce is unchanged.
struct SealedTable: Sendable {
    let name: String
    let select: String
    let binding: @Sendable (SQLRow) throws -> String
    let update: String

    static let all = [
        SealedTable(name: "biometric_templates",
                    select: "SELECT user_id, ciphertext, nonce, key_id FROM biometric_templates WHERE key_id <> ? ORDER BY user_id LIMIT ?",
                    binding: { VaultBinding.template(userID: try $0.text(0)) },
                    update: "UPDATE biometric_templates SET ciphertext = ?, nonce = ?, key_id = ? WHERE user_id = ? AND nonce = ?"),
        SealedTable(name: "document_scans",
                    select: "SELECT scan_id, report_ciphertext, report_nonce, key_id FROM document_scans WHERE key_id IS NOT NULL AND key_id <> ? ORDER BY scan_id LIMIT ?",
                    binding: { VaultBinding.scan(scanID: try $0.text(0)) },
                    update: "UPDATE document_scans SET report_ciphertext = ?, report_nonce = ?, key_id = ? WHERE scan_id = ? AND report_nonce = ?"),
        SealedTable(name: "idv_media",
                    select: "SELECT media_id, ciphertext, nonce, key_id, run_id, kind FROM idv_media WHERE key_id <> ? ORDER BY media_id LIMIT ?",
                    binding: { VaultBinding.media(runID: try $0.text(4), kind: try $0.text(5)) },
                    update: "UPDATE idv_media SET ciphertext = ?, nonce = ?, key_id = ? WHERE media_id = ? AND nonce = ?"),
        // The evidence-signing keys' private halves (IDVOperations Evidence/EvidenceSigning.swift).
        SealedTable(name: "signing_keys",
                    select: "SELECT kid, secret_ciphertext, secret_nonce, key_id FROM signing_keys WHERE key_id <> ? ORDER BY kid LIMIT ?",
                    binding: { VaultBinding.evidenceSigningKey(kid: try $0.text(0)) },
                    update: "UPDATE signing_keys SET secret_ciphertext = ?, secret_nonce = ?, key_id = ? WHERE kid = ? AND secret_nonce = ?"),
    ]
}
