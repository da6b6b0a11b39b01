import Foundation
import IDVCore
import IDVEngine

// The hash-chained audit log (docs/AUDIT-CHAIN.md), written once: each entry's hash covers the
// previous entry's hash, its own sequence number, time, action, user, session and details (as
// stored, canonical JSON); the chain head (`audit_head`: last seq and hash) moves in the same
// transaction, so removing the newest entries is detected too.

enum AuditColumns {
    static let all = "seq, at, action, user_id, session_id, details, prev_hash, hash"
    /// Rows read per round trip by `verifyAuditChain()`: memory stays flat at any length.
    static let verifyBatch = 5000
}

extension JSONValue {
    /// The details as the chain hashes and stores them: JSON with sorted keys and unescaped slashes.
    var canonicalJSON: String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: enc.encode(self), as: UTF8.self)) ?? "null"
    }
}

extension SQLDatabase {
    /// Appends in the caller's transaction (or its own): reads the chain head (locked on PostgreSQL,
    /// `FOR UPDATE`; SQLite's write transaction holds the whole file), chains to it, inserts the
    /// entry and moves the head — so the next append, on any node, chains to this entry. The chain
    /// continues from its head, never from the newest row: were rows deleted, continuing from the
    /// survivors would hide the gap.
    @discardableResult
    public func appendAudit(action: String, userID: String?, sessionID: String?, details: JSONValue, at time: Int) throws -> AuditEntry {
        let detailsJSON = details.canonicalJSON
        return try withTransaction {
            guard let head = try row("SELECT seq, hash FROM audit_head WHERE id = 1" + dialect.forUpdate) else {
                throw StoreError.database("audit_head has no row")
            }
            let seq = try head.int(0) + 1
            let prev = try head.text(1)
            let hash = AuditEntry.chainHash(prevHash: prev, seq: seq, at: time, action: action, userID: userID, sessionID: sessionID,
                                            detailsJSON: detailsJSON)
            try run("INSERT INTO audit_log (\(AuditColumns.all)) VALUES (?,?,?,?,?,?,?,?)",
                    [SQLCell(seq), SQLCell(time), .text(action), SQLCell(userID), SQLCell(sessionID), .text(detailsJSON), .text(prev), .text(hash)])
            try run("UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1", [SQLCell(seq), .text(hash)])
            return AuditEntry(seq: seq, at: time, action: action, userID: userID, sessionID: sessionID, details: details, prevHash: prev, hash: hash)
        }
    }

    func auditRow(_ r: SQLRow) throws -> AuditEntry {
        let detailsJSON = try r.text(5)
        let details = (try? JSONDecoder().decode(JSONValue.self, from: Data(detailsJSON.utf8))) ?? .null
        return AuditEntry(seq: try r.int(0), at: try r.int(1), action: try r.text(2), userID: try r.optionalText(3), sessionID: try r.optionalText(4),
                          details: details, prevHash: try r.text(6), hash: try r.text(7))
    }

    public func auditEntries(limit: Int) throws -> [AuditEntry] {
        try rows("SELECT \(AuditColumns.all) FROM audit_log ORDER BY seq DESC LIMIT ?", [SQLCell(max(0, limit))]).map(auditRow).reversed()
    }

    /// The entries of one session, oldest first (a run's entries carry its `run_id` in `details`).
    public func auditEntries(sessionID: String) throws -> [AuditEntry] {
        try rows("SELECT \(AuditColumns.all) FROM audit_log WHERE session_id = ? ORDER BY seq LIMIT 10000", [.text(sessionID)]).map(auditRow)
    }

    /// Recomputes the chain in `seq` order, in keyset pages of 5,000 rows (memory stays flat at any
    /// length), from the stored details text (what the hash covers). Returns the `seq` of the first
    /// entry that does not verify: its hash, its link to the previous hash, or a gap in `seq`. Then
    /// the head: a head past the last entry means entries were removed from the end, and a missing
    /// head row means the head itself was removed — either way the first `seq` not accounted for,
    /// `last + 1`, is returned. nil: the whole chain verifies.
    public func verifyAuditChain() throws -> Int? {
        var prev = AuditEntry.genesisHash
        var last = 0
        while true {
            let page = try rows("SELECT \(AuditColumns.all) FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?",
                                [SQLCell(last), SQLCell(AuditColumns.verifyBatch)])
            for r in page {
                let seq = try r.int(0), hash = try r.text(7)
                let expect = AuditEntry.chainHash(prevHash: prev, seq: seq, at: try r.int(1), action: try r.text(2), userID: try r.optionalText(3),
                                                  sessionID: try r.optionalText(4), detailsJSON: try r.text(5))
                if try r.text(6) != prev || hash != expect || seq != last + 1 { return seq }
                prev = hash
                last = seq
            }
            if page.count < AuditColumns.verifyBatch { break }
        }
        guard let head = try row("SELECT seq, hash FROM audit_head WHERE id = 1") else { return last + 1 }
        if try head.int(0) != last || (try head.text(1)) != prev { return last + 1 }
        return nil
    }

    /// Number of audit-log entries (`idvd admin audit --verify`).
    public func auditEntryCount() throws -> Int {
        try count("SELECT count(*) FROM audit_log")
    }
}
