import Foundation
import IDVCore
import IDVEngine

// Erasing a person (``ErasureStore``; docs/DATA-PROTECTION.md "Erasure"), written once for both
// databases: every row about the user is deleted in the caller's transaction, so a process killed
// mid-way leaves either everything or nothing erased. The audit log keeps its entries — they name
// the user by a random pseudonym (``SQLDatabase/auditSubject(_:)``), and deleting the pseudonym's
// row here is what turns them into a pseudonymous tombstone without touching a hashed byte.

extension SQLDatabase {
    public func eraseUserRows(_ userID: String, limitKeyPrefix: String) throws -> ErasureCounts {
        try withTransaction {
            let u: [SQLCell] = [.text(userID)]
            var n = ErasureCounts()
            n["kept_media"] = try run("DELETE FROM idv_media WHERE run_id IN (SELECT run_id FROM flow_runs WHERE user_id = ?)", u).affected
            n["document_scans"] = try run("DELETE FROM document_scans WHERE user_id = ?", u).affected
            n["templates"] = try run("DELETE FROM biometric_templates WHERE user_id = ?", u).affected
            n["consents"] = try run("DELETE FROM consents WHERE user_id = ?", u).affected
            n["review_cases"] = try run("DELETE FROM review_cases WHERE user_id = ?", u).affected
            n["verification_links"] = try run("DELETE FROM verification_links WHERE user_id = ?", u).affected
            try run("DELETE FROM webhook_deliveries WHERE event_id IN (SELECT event_id FROM webhook_events WHERE user_id = ?)", u)
            n["webhook_events"] = try run("DELETE FROM webhook_events WHERE user_id = ?", u).affected
            try run("DELETE FROM consumed_challenges WHERE session_id IN (SELECT session_id FROM sessions WHERE user_id = ?)", u)
            n["sessions"] = try run("DELETE FROM sessions WHERE user_id = ?", u).affected
            n["devices"] = try run("DELETE FROM devices WHERE user_id = ?", u).affected
            n["activation_codes"] = try run("DELETE FROM activation_codes WHERE user_id = ?", u).affected
            n["flow_runs"] = try run("DELETE FROM flow_runs WHERE user_id = ?", u).affected
            n["limit_counters"] = try deleteLimitCounters(keyPrefix: limitKeyPrefix)
            n["audit_subject"] = try run("DELETE FROM audit_subjects WHERE user_id = ?", u).affected
            n["user"] = try run("DELETE FROM users WHERE user_id = ?", u).affected
            return n
        }
    }

    public func sessions(userID: String) throws -> [SessionRecord] {
        try rows("SELECT \(CoreColumns.session) FROM sessions WHERE user_id = ? ORDER BY created_at", [.text(userID)]).map(sessionRow)
    }

    public func openReviewCaseCount(userID: String) throws -> Int {
        try count("SELECT count(*) FROM review_cases WHERE user_id = ? AND decided_at IS NULL", [.text(userID)])
    }

    public func erasureReceipt(subjectKey: String) throws -> String? {
        try row("SELECT receipt FROM erasure_receipts WHERE subject_key = ?", [.text(subjectKey)])?.text(0)
    }

    /// Stores the receipt of an erasure (in the caller's transaction). A user id the relying party
    /// reused after an earlier erasure has an older receipt under the same key: the newest erasure's
    /// receipt replaces it (the older one stays anchored by its own `user.erased` audit entry).
    public func saveErasureReceipt(subjectKey: String, receiptID: String, json: String, at time: Int) throws {
        try run("DELETE FROM erasure_receipts WHERE subject_key = ?", [.text(subjectKey)])
        try run("INSERT INTO erasure_receipts (subject_key, receipt_id, receipt, erased_at) VALUES (?,?,?,?)",
                [.text(subjectKey), .text(receiptID), .text(json), SQLCell(time)])
    }

    public func auditPseudonym(userID: String) throws -> String? {
        try row("SELECT pseudonym FROM audit_subjects WHERE user_id = ?", [.text(userID)])?.text(0)
    }

    /// The pseudonym the audit log stores for `userID` (in the caller's transaction), drawn at the
    /// user's first entry: `sub_` and 16 random bytes in hex. While the user exists, reads map it
    /// back (``AuditColumns/read``); once the user is erased its row is gone and it names no one.
    func auditSubject(_ userID: String) throws -> String {
        if let p = try auditPseudonym(userID: userID) { return p }
        var rng = SystemRandomNumberGenerator()
        let p = "sub_" + (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &rng)) }.joined()
        try run("INSERT INTO audit_subjects (user_id, pseudonym) VALUES (?,?)", [.text(userID), .text(p)])
        return p
    }
}
