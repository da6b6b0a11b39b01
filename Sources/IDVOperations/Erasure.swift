import Foundation
import IDVCore
import IDVEngine

// Erasing a person on request (GDPR Art. 17; issue #37; docs/DATA-PROTECTION.md "Erasure"):
// `DELETE /v1/rp/users/{user_id}` (scope `erase`) and `idvd admin erase-user USER_ID`.

/// What an erasure did, handed to whoever asked (and, without the user id, kept by the server so
/// that asking again returns the same receipt).
public struct ErasureReceipt: Codable, Sendable, Equatable {
    /// `era_` and 16 random bytes in hex.
    public var receiptID: String
    /// The erased user's id as the caller named it. Never stored: the server keeps the receipt
    /// under ``ErasureSubject/key(_:crypto:)``.
    public var userID: String?
    /// When the erasure committed, Unix seconds.
    public var erasedAt: Int
    /// Who asked: `admin` (the CLI) or `client:<client_id>` (the relying-party API).
    public var erasedBy: String
    /// Rows deleted per class of data (``ErasureCounts``).
    public var erased: ErasureCounts
    /// Flow runs that were still open and were ended (outcome `revoked`) before the erasure.
    public var flowRunsEnded: Int
    /// Review cases that were still open (closed as erased: deleted with the rest).
    public var reviewCasesClosed: Int
    /// The pseudonym the audit log named the user by (`sub_…`), or nil when no entry did: the
    /// audit's entries stay, pseudonymous, and the tombstone entry names this pseudonym.
    public var auditSubject: String?
    /// The tombstone entry (`user.erased`) in the hash chain: its seq and hash.
    public var auditSeq: Int
    public var auditHash: String

    enum CodingKeys: String, CodingKey {
        case receiptID = "receipt_id", userID = "user_id", erasedAt = "erased_at", erasedBy = "erased_by", erased
        case flowRunsEnded = "flow_runs_ended", reviewCasesClosed = "review_cases_closed", auditSubject = "audit_subject"
        case auditSeq = "audit_seq", auditHash = "audit_hash"
    }
}

/// Erasures of one user in this process run one at a time (striped by user id; never taken while
/// a session lock is held), so the receipt every caller gets is the one of the erasure that did
/// the work, with the flows it ended. Erasures in another process (the CLI, another node)
/// serialise on the store's transaction instead (``FlowEngine/eraseUser(_:by:)``).
private let erasureStripes: [NSLock] = (0..<16).map { _ in NSLock() }

/// The session changed between its read and the erasure's write (see ``FlowEngine/eraseUser(_:by:)``).
private struct SessionMoved: Error {}

private func withErasureLock<T>(_ userID: String, _ body: () throws -> T) rethrows -> T {
    var h: UInt32 = 2166136261
    for b in userID.utf8 { h = (h ^ UInt32(b)) &* 16777619 }
    return try erasureStripes[Int(h % UInt32(erasureStripes.count))].withLock(body)
}

extension FlowEngine {
    /// Erases everything the server holds about `userID` and returns the receipt:
    ///
    /// 1. every flow run still open in one of the user's sessions ends first, as a revocation
    ///    would end it (its terminal transition and audit entry), one session at a time under the
    ///    session's lock;
    /// 2. then, in ONE store transaction: every row about the user (``ErasureStore/eraseUserRows(_:limitKeyPrefix:)``:
    ///    template, kept media, scan reports, consents, review cases — an open one is closed as
    ///    erased —, links, webhook events, sessions, devices, activation code, flow runs, limit
    ///    counters, the audit pseudonym, the user row), the tombstone audit entry `user.erased`
    ///    (no user id: the pseudonym, the receipt id and the counts), the stored receipt (no user
    ///    id) and, when an endpoint subscribes to it, the `user.erased` webhook event;
    /// 3. after the commit, the deleted bytes are scrubbed from the database's files
    ///    (``ErasureStore/scrubDeletedData()``).
    ///
    /// A process killed during step 1 or 2 leaves the user whole (step 2 commits or not); killed
    /// during step 3, asking again scrubs again. Asking for a user already erased returns the
    /// stored receipt (and scrubs again); an id never seen (or malformed) throws 1016 (404).
    /// Two erasures of one user at once both return the one receipt of the erasure that
    /// committed: in one process they run one after the other (the later finds the user gone and
    /// answers the stored receipt); across processes (the API and the CLI, two nodes) the later
    /// finds the user gone inside its transaction and answers the stored receipt, and a flow the
    /// other ended is not ended twice — there, `flow_runs_ended` counts the flows the erasure that
    /// committed ended itself (each ending is audited, `session.revoked` with `cause: erasure`).
    public func eraseUser(_ userID: String, by actor: String) throws -> ErasureReceipt {
        try withErasureLock(userID) { try eraseUserLocked(userID, by: actor) }
    }

    private func eraseUserLocked(_ userID: String, by actor: String) throws -> ErasureReceipt {
        let subjectKey = ErasureSubject.key(userID, crypto: crypto)
        guard Admin.validUserID(userID), try store.user(userID) != nil else {
            guard let json = try store.erasureReceipt(subjectKey: subjectKey) else { throw IDVError(.userNotFound) }
            var receipt = try JSONDecoder().decode(ErasureReceipt.self, from: Data(json.utf8))
            receipt.userID = userID
            try store.scrubDeletedData()
            return receipt
        }
        var ended = 0
        for listed in try store.sessions(userID: userID) where !listed.state.stack.isEmpty {
            ended += try withSessionLock(listed.sessionID) {
                // Read again under the lock, and again after a version conflict: a concurrent
                // erasure of the same user (another process) may have ended the flows, or deleted
                // the session, meanwhile — then there is nothing left to end here.
                for _ in 0..<3 {
                    guard let s = try store.sessions(userID: userID).first(where: { $0.sessionID == listed.sessionID }),
                          !s.state.stack.isEmpty else { return 0 }
                    let open = s.state.stack.count
                    do {
                        try committed(Commit(session: s, now: clock.now(), requestID: "erase-" + crypto.randomID(bytes: 8))) { c in
                            try abandonAll(.revoked, c)
                            c.session.revokedAt = c.now
                            guard try store.updateSession(c.session, expectedVersion: s.version, consuming: nil) else { throw SessionMoved() }
                            try apply(.audit(AuditAction("session.revoked"), userID: nil, details: ["flow_runs_closed": .integer(open), "cause": "erasure"]),
                                      runID: nil, c)
                        }
                        return open
                    } catch is SessionMoved {
                        continue
                    }
                }
                throw IDVError(.flowInProgress, "the user's session kept changing while the erasure ended its flow; ask again")
            }
        }
        let now = clock.now()
        let receipt: ErasureReceipt = try store.withTransaction {
            guard try store.user(userID) != nil else {
                // Erased meanwhile by an erasure in another process (the CLI beside the API,
                // another node): that erasure's receipt, as asking again would return it.
                guard let json = try store.erasureReceipt(subjectKey: subjectKey) else { throw IDVError(.userNotFound) }
                var stored = try JSONDecoder().decode(ErasureReceipt.self, from: Data(json.utf8))
                stored.userID = userID
                return stored
            }
            let pseudonym = try store.auditPseudonym(userID: userID)
            let openCases = try store.openReviewCaseCount(userID: userID)
            let counts = try store.eraseUserRows(userID, limitKeyPrefix: AbuseLimits.userPairPrefix(userID, crypto: crypto))
            let receiptID = "era_" + crypto.randomID(bytes: 16)
            var details: [String: JSONValue] = ["receipt_id": .string(receiptID), "erased_by": .string(actor),
                                                "flow_runs_ended": .integer(ended), "review_cases_closed": .integer(openCases)]
            if let pseudonym { details["subject"] = .string(pseudonym) }
            for (k, v) in counts { details["erased_" + k] = .integer(v) }
            let tomb = try store.appendAudit(action: "user.erased", userID: nil, sessionID: nil, details: .object(details), at: now)
            var r = ErasureReceipt(receiptID: receiptID, userID: nil, erasedAt: now, erasedBy: actor, erased: counts, flowRunsEnded: ended,
                                   reviewCasesClosed: openCases, auditSubject: pseudonym, auditSeq: tomb.seq, auditHash: tomb.hash)
            let enc = JSONEncoder()
            enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            try store.saveErasureReceipt(subjectKey: subjectKey, receiptID: receiptID, json: String(decoding: try enc.encode(r), as: UTF8.self), at: now)
            if try store.webhookEndpoints().contains(where: { $0.events.contains(.userErased) }) {
                try enqueue(.userErased, userID: userID, data: WebhookEventData(erasureReceiptID: receiptID), runID: nil, now: now)
            }
            r.userID = userID
            return r
        }
        try store.scrubDeletedData()
        return receipt
    }
}
