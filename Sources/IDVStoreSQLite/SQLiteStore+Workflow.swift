internal import CSQLite
import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime

enum WorkflowMigrations {
    static let v2 = """
    ALTER TABLE consents ADD COLUMN flow TEXT;
    ALTER TABLE consents ADD COLUMN idv_workflow INTEGER;
    ALTER TABLE consents ADD COLUMN text_version TEXT;
    CREATE INDEX consents_user ON consents(user_id);
    ALTER TABLE document_scans ADD COLUMN reason TEXT;
    ALTER TABLE document_scans ADD COLUMN idv_workflow INTEGER;
    CREATE INDEX document_scans_user ON document_scans(user_id);
    CREATE TABLE idv_media (
        media_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        ciphertext BLOB NOT NULL,
        nonce BLOB NOT NULL,
        key_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER
    );
    CREATE INDEX idv_media_run ON idv_media(run_id);
    CREATE INDEX flow_runs_user_flow ON flow_runs(user_id, flow, ended_at);
    """
}

extension SQLiteStore: WorkflowStore {
    private static func blob(_ v: SQLValue) -> [UInt8] { if case let .blob(b) = v { return b }; return [] }

    public func biometricTemplate(userID: String) throws -> BiometricTemplateRecord? {
        try query("SELECT user_id, ciphertext, nonce, key_id, model, consent_id, created_at FROM biometric_templates WHERE user_id = ?", [.text(userID)])
            .first.map { r in
                BiometricTemplateRecord(userID: r[0].text ?? "", sealed: SealedBox(ciphertext: Self.blob(r[1]), nonce: Self.blob(r[2]), keyID: r[3].text ?? ""),
                                        model: r[4].text ?? "", consentID: r[5].text ?? "", createdAt: r[6].int ?? 0)
            }
    }

    public func saveBiometricTemplate(_ t: BiometricTemplateRecord) throws {
        try query("INSERT OR REPLACE INTO biometric_templates (user_id, ciphertext, nonce, key_id, model, consent_id, created_at) VALUES (?,?,?,?,?,?,?)",
                  [.text(t.userID), .blob(t.sealed.ciphertext), .blob(t.sealed.nonce), .text(t.sealed.keyID), .text(t.model), .text(t.consentID), SQLValue(t.createdAt)])
    }

    public func deleteBiometricTemplate(userID: String) throws -> Bool {
        try withTransaction {
            let n = try query("SELECT count(*) FROM biometric_templates WHERE user_id = ?", [.text(userID)]).first?[0].int ?? 0
            try query("DELETE FROM biometric_templates WHERE user_id = ?", [.text(userID)])
            return n > 0
        }
    }

    public func recordConsent(_ c: ConsentRecord) throws {
        try query("INSERT INTO consents (consent_id, user_id, kind, granted, session_id, run_id, recorded_at, flow, idv_workflow, text_version) VALUES (?,?,?,?,?,?,?,?,?,?)",
                  [.text(c.consentID), .text(c.userID), .text(c.kind), SQLValue(c.granted), SQLValue(c.sessionID), SQLValue(c.runID),
                   SQLValue(c.recordedAt), .text(c.flow), SQLValue(c.idvWorkflow), .text(c.textVersion)])
    }

    public func consents(userID: String) throws -> [ConsentRecord] {
        try query("SELECT consent_id, user_id, kind, granted, session_id, run_id, recorded_at, flow, idv_workflow, text_version FROM consents WHERE user_id = ? ORDER BY recorded_at, rowid", [.text(userID)])
            .map { r in
                ConsentRecord(consentID: r[0].text ?? "", userID: r[1].text ?? "", kind: r[2].text ?? "", granted: (r[3].int ?? 0) != 0,
                              sessionID: r[4].text, runID: r[5].text, flow: r[7].text ?? "", idvWorkflow: r[8].int,
                              textVersion: r[9].text ?? "", recordedAt: r[6].int ?? 0)
            }
    }

    public func saveDocumentScan(_ d: DocumentScanRecord) throws {
        try query("INSERT INTO document_scans (scan_id, user_id, session_id, run_id, overall_status, report_ciphertext, report_nonce, key_id, created_at, reason, idv_workflow) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                  [.text(d.scanID), SQLValue(d.userID), SQLValue(d.sessionID), SQLValue(d.runID), .text(d.overallStatus),
                   d.sealedReport.map { .blob($0.ciphertext) } ?? .null, d.sealedReport.map { .blob($0.nonce) } ?? .null,
                   SQLValue(d.sealedReport?.keyID), SQLValue(d.createdAt), .text(d.reason), SQLValue(d.idvWorkflow)])
    }

    public func documentScans(userID: String) throws -> [DocumentScanRecord] {
        try query("SELECT scan_id, user_id, session_id, run_id, overall_status, report_ciphertext, report_nonce, key_id, created_at, reason, idv_workflow FROM document_scans WHERE user_id = ? ORDER BY created_at, rowid", [.text(userID)])
            .map { r in
                let sealed = r[7].text.map { SealedBox(ciphertext: Self.blob(r[5]), nonce: Self.blob(r[6]), keyID: $0) }
                return DocumentScanRecord(scanID: r[0].text ?? "", userID: r[1].text, sessionID: r[2].text, runID: r[3].text, idvWorkflow: r[10].int,
                                          reason: r[9].text ?? "", overallStatus: r[4].text ?? "", sealedReport: sealed, createdAt: r[8].int ?? 0)
            }
    }

    public func saveMedia(_ m: MediaRecord) throws {
        try query("INSERT INTO idv_media (media_id, run_id, kind, ciphertext, nonce, key_id, created_at, expires_at) VALUES (?,?,?,?,?,?,?,?)",
                  [.text(m.mediaID), .text(m.runID), .text(m.kind), .blob(m.sealed.ciphertext), .blob(m.sealed.nonce), .text(m.sealed.keyID),
                   SQLValue(m.createdAt), SQLValue(m.expiresAt)])
    }

    public func media(_ mediaID: String) throws -> MediaRecord? {
        try query("SELECT media_id, run_id, kind, ciphertext, nonce, key_id, created_at, expires_at FROM idv_media WHERE media_id = ?", [.text(mediaID)])
            .first.map { r in
                MediaRecord(mediaID: r[0].text ?? "", runID: r[1].text ?? "", kind: r[2].text ?? "",
                            sealed: SealedBox(ciphertext: Self.blob(r[3]), nonce: Self.blob(r[4]), keyID: r[5].text ?? ""),
                            createdAt: r[6].int ?? 0, expiresAt: r[7].int)
            }
    }

    public func mediaCount(runID: String) throws -> Int {
        try query("SELECT count(*) FROM idv_media WHERE run_id = ?", [.text(runID)]).first?[0].int ?? 0
    }

    public func releaseMedia(runID: String, keepUntil: Int?) throws {
        if let keepUntil {
            try query("UPDATE idv_media SET expires_at = ? WHERE run_id = ? AND expires_at IS NULL", [SQLValue(keepUntil), .text(runID)])
        } else {
            try query("DELETE FROM idv_media WHERE run_id = ?", [.text(runID)])
        }
    }

    public func purgeExpiredMedia(now: Int) throws -> Int {
        try withTransaction {
            let n = try query("SELECT count(*) FROM idv_media WHERE expires_at IS NOT NULL AND expires_at <= ?", [SQLValue(now)]).first?[0].int ?? 0
            try query("DELETE FROM idv_media WHERE expires_at IS NOT NULL AND expires_at <= ?", [SQLValue(now)])
            return n
        }
    }

    public func flowOutcomes(userID: String, flow: String, since: Int) throws -> [FlowOutcome] {
        try query("SELECT outcome FROM flow_runs WHERE user_id = ? AND flow = ? AND ended_at IS NOT NULL AND ended_at >= ? ORDER BY ended_at DESC, started_at DESC",
                  [.text(userID), .text(flow), SQLValue(since)]).compactMap { $0[0].text.flatMap(FlowOutcome.init(rawValue:)) }
    }
}

extension SQLiteStore {
    /// The tables holding vault-sealed boxes: the select of one batch not under a key, the binding of
    /// a row, and the update that re-seals it only when its nonce is unchanged. Selected columns:
    /// id, ciphertext, nonce, key id, then what the binding needs.
    private static let sealedTables: [(table: String, keyColumn: String, select: String, binding: @Sendable ([SQLValue]) -> String, update: String)] = [
        ("biometric_templates", "key_id",
         "SELECT user_id, ciphertext, nonce, key_id FROM biometric_templates WHERE key_id <> ? LIMIT ?",
         { VaultBinding.template(userID: $0[0].text ?? "") },
         "UPDATE biometric_templates SET ciphertext = ?, nonce = ?, key_id = ? WHERE user_id = ? AND nonce = ?"),
        ("document_scans", "key_id",
         "SELECT scan_id, report_ciphertext, report_nonce, key_id FROM document_scans WHERE key_id IS NOT NULL AND key_id <> ? LIMIT ?",
         { VaultBinding.scan(scanID: $0[0].text ?? "") },
         "UPDATE document_scans SET report_ciphertext = ?, report_nonce = ?, key_id = ? WHERE scan_id = ? AND report_nonce = ?"),
        ("idv_media", "key_id",
         "SELECT media_id, ciphertext, nonce, key_id, run_id, kind FROM idv_media WHERE key_id <> ? LIMIT ?",
         { VaultBinding.media(runID: $0[4].text ?? "", kind: $0[5].text ?? "") },
         "UPDATE idv_media SET ciphertext = ?, nonce = ?, key_id = ? WHERE media_id = ? AND nonce = ?"),
    ]
    /// The key id inside a sealed session state (`0x01 ‖ key id ‖ …`, ``SessionStateSealer``).
    private static let sessionKeyID = "CAST(substr(state, 2, 16) AS TEXT)"

    public func sealedInventory(vault: any Vault) throws -> SealedInventory {
        var inv = SealedInventory()
        func classify(_ table: String, _ rows: [[SQLValue]], current: String, previous: [String]) {
            for r in rows {
                guard let id = r[0].text, let n = r[1].int, n > 0 else { continue }
                if id == current { inv.current[table, default: 0] += n }
                else if previous.contains(id) { inv.previous[table, default: 0] += n }
                else { inv.unknown[table, default: 0] += n }
            }
        }
        for t in Self.sealedTables {
            classify(t.table, try query("SELECT \(t.keyColumn), count(*) FROM \(t.table) WHERE \(t.keyColumn) IS NOT NULL GROUP BY 1"),
                     current: vault.keyID, previous: vault.previousKeyIDs)
        }
        classify("sessions", try query("SELECT \(Self.sessionKeyID), count(*) FROM sessions WHERE typeof(state) = 'blob' GROUP BY 1"),
                 current: stateSealer.vault.keyID, previous: stateSealer.vault.previousKeyIDs)
        return inv
    }

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
        for t in Self.sealedTables {
            counts[t.table] = try drain {
                let rows = try query(t.select, [.text(vault.keyID), SQLValue(batch)])
                var written = 0
                for r in rows {
                    let old = SealedBox(ciphertext: Self.blob(r[1]), nonce: Self.blob(r[2]), keyID: r[3].text ?? "")
                    let new = try vault.reseal(old, associatedData: t.binding(r))
                    try query(t.update, [.blob(new.ciphertext), .blob(new.nonce), .text(new.keyID), r[0], .blob(old.nonce)])
                    written += changes
                }
                return (rows.count, written)
            }
        }
        counts["sessions"] = try drain {
            let rows = try query("SELECT session_id, version, state FROM sessions WHERE typeof(state) = 'blob' AND \(Self.sessionKeyID) <> ? LIMIT ?",
                                 [.text(stateSealer.vault.keyID), SQLValue(batch)])
            var written = 0
            for r in rows {
                let sessionID = r[0].text ?? ""
                let sealed = try stateSealer.reseal(Self.blob(r[2]), sessionID: sessionID)
                try query("UPDATE sessions SET state = ? WHERE session_id = ? AND version = ?", [.blob(sealed), r[0], r[1]])
                written += changes
            }
            return (rows.count, written)
        }
        return counts
    }

    /// Number of audit-log entries (for `idvd admin audit --verify`).
    public func auditEntryCount() throws -> Int {
        try query("SELECT count(*) FROM audit_log").first?[0].int ?? 0
    }
}
