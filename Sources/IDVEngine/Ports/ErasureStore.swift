import Foundation
import IDVCore

/// What an erasure removed, per class of data (docs/DATA-PROTECTION.md "Erasure"): row counts.
/// Keys are the classes an operator states in a retention policy: `templates`, `kept_media`,
/// `document_scans`, `consents`, `sessions`, `devices`, `activation_codes`, `verification_links`,
/// `review_cases`, `flow_runs`, `webhook_events`, `limit_counters`, `audit_subject`, `user`.
public typealias ErasureCounts = [String: Int]

/// The store's part of erasing a person (GDPR Art. 17; ``IDVOperations`` `Erasure`): delete every
/// row about one user in the caller's transaction, remember the receipt under a digest of the user
/// id (never the id itself), and make deleted bytes unrecoverable from the database files.
public protocol ErasureStore: Sendable {
    /// Deletes, inside the caller's transaction, every row about `userID`: kept media of the user's
    /// runs, document scans, the biometric template, consents, review cases, verification links,
    /// webhook events naming the user (and their deliveries), sessions (and their consumed
    /// challenges), devices, the activation code, flow runs, credential-limit counters under
    /// `limitKeyPrefix`, the user's audit pseudonym (so the audit's entries stay, pseudonymous)
    /// and the user row. Returns the number of rows per class (``ErasureCounts``).
    func eraseUserRows(_ userID: String, limitKeyPrefix: String) throws -> ErasureCounts
    /// The user's sessions (live, revoked or expired), so that their open flows end before an erasure.
    func sessions(userID: String) throws -> [SessionRecord]
    /// Review cases of the user not yet decided.
    func openReviewCaseCount(userID: String) throws -> Int
    /// The stored receipt (JSON text, without the user id) of an earlier erasure of the subject
    /// whose key is `subjectKey` (``ErasureSubject/key(_:crypto:)``); nil when none.
    func erasureReceipt(subjectKey: String) throws -> String?
    /// Stores a receipt (JSON text without the user id) under `subjectKey`, in the caller's transaction.
    func saveErasureReceipt(subjectKey: String, receiptID: String, json: String, at time: Int) throws
    /// The pseudonym the audit log names `userID` by (``appendAudit``); nil when no entry names the user.
    func auditPseudonym(userID: String) throws -> String?
    /// After an erasure committed: makes the deleted bytes unrecoverable from the database's own
    /// files. SQLite: `secure_delete` is on for every write (freed cells and pages are zeroed), and
    /// here the WAL is checkpointed with `TRUNCATE` so old page images in `-wal` are gone.
    /// PostgreSQL: nothing the server can force (dead tuples wait for `VACUUM`; see the docs).
    func scrubDeletedData() throws
}

/// How an erased subject is found again without keeping their id: SHA-256 over a fixed context
/// and the user id. One-way, but a guessed id can be confirmed by whoever holds the database —
/// the price of answering a second erasure of the same id with the same receipt.
public enum ErasureSubject {
    public static func key(_ userID: String, crypto: any EngineCrypto) -> String {
        crypto.sha256Hex("idvd-erasure-subject|" + userID)
    }
}
