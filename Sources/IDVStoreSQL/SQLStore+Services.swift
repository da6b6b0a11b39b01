import Foundation
import IDVCore
import IDVEngine

// Verification links, chip trust material and the abuse-limit counters, written once for both
// databases. Compare-and-set writes are single statements: `affected` says whether this one won.

extension SQLDatabase {
    // MARK: Verification links (``VerificationLinkStore``)

    public func createVerificationLink(_ l: VerificationLinkRecord) throws {
        try run("INSERT INTO verification_links (link_id, token_hash, user_id, flow, created_at, expires_at, used_at, session_id) VALUES (?,?,?,?,?,?,?,?)",
                [.text(l.linkID), .text(l.tokenHash), .text(l.userID), .text(l.flow), SQLCell(l.createdAt), SQLCell(l.expiresAt),
                 SQLCell(l.usedAt), SQLCell(l.sessionID)])
    }

    public func verificationLink(tokenHash: String) throws -> VerificationLinkRecord? {
        try row("SELECT link_id, token_hash, user_id, flow, created_at, expires_at, used_at, session_id FROM verification_links WHERE token_hash = ?",
                [.text(tokenHash)]).map { r in
            VerificationLinkRecord(linkID: try r.text(0), tokenHash: try r.text(1), userID: try r.text(2), flow: try r.text(3),
                                   createdAt: try r.int(4), expiresAt: try r.int(5), usedAt: try r.optionalInt(6), sessionID: try r.optionalText(7))
        }
    }

    /// One statement: a second redemption (on any node) finds the link used and changes nothing.
    public func consumeVerificationLink(linkID: String, at time: Int) throws -> Bool {
        try run("UPDATE verification_links SET used_at = ? WHERE link_id = ? AND used_at IS NULL", [SQLCell(time), .text(linkID)]).affected == 1
    }

    public func bindVerificationLink(linkID: String, sessionID: String) throws {
        try run("UPDATE verification_links SET session_id = ? WHERE link_id = ?", [.text(sessionID), .text(linkID)])
    }

    // MARK: Chip trust material (``TrustMaterialStore``)

    public func trustMaterials() throws -> [TrustMaterialRecord] {
        try rows("SELECT trust_id, kind, sha256, content, cscas, crls, document_signers, source_name, imported_at FROM trust_material ORDER BY imported_at, trust_id")
            .map { r in
                TrustMaterialRecord(id: try r.text(0), kind: try r.text(1), sha256: try r.text(2), bytes: Data(try r.bytes(3)), cscas: try r.int(4),
                                    crls: try r.int(5), documentSigners: try r.int(6), sourceName: try r.text(7), importedAt: try r.int(8))
            }
    }

    /// One statement: of two imports of one file at once, one inserts; the other changes nothing (false).
    public func addTrustMaterial(_ t: TrustMaterialRecord) throws -> Bool {
        try run("""
            INSERT INTO trust_material (trust_id, kind, sha256, content, cscas, crls, document_signers, source_name, imported_at)
            VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING
            """, [.text(t.id), .text(t.kind), .text(t.sha256), .bytes(Array(t.bytes)), SQLCell(t.cscas), SQLCell(t.crls), SQLCell(t.documentSigners),
                  .text(t.sourceName), SQLCell(t.importedAt)]).affected == 1
    }

    public func removeTrustMaterial(id: String) throws -> Bool {
        try run("DELETE FROM trust_material WHERE trust_id = ?", [.text(id)]).affected == 1
    }

    // MARK: Abuse-limit counters (docs/LIMITS.md)

    public func limitCounters(_ keys: [String]) throws -> [String: LimitCounterRecord] {
        guard !keys.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: keys.count).joined(separator: ",")
        var out: [String: LimitCounterRecord] = [:]
        for r in try rows("SELECT key, tokens_milli, failures, rounds, blocked_until, updated_at FROM limit_counters WHERE key IN (\(marks))",
                          keys.map { .text($0) }) {
            let c = LimitCounterRecord(key: try r.text(0), tokens: Double(try r.int(1)) / 1000, failures: try r.int(2),
                                       rounds: try r.int(3), blockedUntil: try r.int(4), updatedAt: try r.int(5))
            out[c.key] = c
        }
        return out
    }

    /// The tokens are kept in thousandths (an integer column on both databases).
    public func saveLimitCounter(_ c: LimitCounterRecord) throws {
        try run("""
            INSERT INTO limit_counters (key, tokens_milli, failures, rounds, blocked_until, updated_at) VALUES (?,?,?,?,?,?)
            ON CONFLICT (key) DO UPDATE SET tokens_milli = excluded.tokens_milli, failures = excluded.failures,
              rounds = excluded.rounds, blocked_until = excluded.blocked_until, updated_at = excluded.updated_at
            """, [.text(c.key), SQLCell(Int((c.tokens * 1000).rounded())), SQLCell(c.failures), SQLCell(c.rounds),
                  SQLCell(c.blockedUntil), SQLCell(c.updatedAt)])
    }

    public func deleteLimitCounter(key: String) throws {
        try run("DELETE FROM limit_counters WHERE key = ?", [.text(key)])
    }

    /// A prefix matched character for character (`substr`, not `LIKE`: no wildcards).
    @discardableResult
    public func deleteLimitCounters(keyPrefix: String) throws -> Int {
        try run("DELETE FROM limit_counters WHERE substr(key, 1, length(?)) = ?", [.text(keyPrefix), .text(keyPrefix)]).affected
    }

    @discardableResult
    public func deleteIdleLimitCounters(updatedBefore: Int, now: Int, limit: Int) throws -> Int {
        try run("""
            DELETE FROM limit_counters WHERE key IN (
              SELECT key FROM limit_counters WHERE updated_at < ? AND blocked_until <= ? LIMIT ?)
            """, [SQLCell(updatedBefore), SQLCell(now), SQLCell(max(0, limit))]).affected
    }

    public func limitCounterCount() throws -> Int {
        try count("SELECT count(*) FROM limit_counters")
    }
}
