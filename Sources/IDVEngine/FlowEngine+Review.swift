import Foundation
import IDVCore

// A reviewer's decision (IDVOperations `RelyingPartyAPI.decide`, `idvd admin review decide`),
// applied as effects in one engine transaction like any answer.

extension FlowEngine {
    /// Applies a review decision as effects in one transaction (the run's session named in its
    /// audit entry, which carries the run id): the audit, then ``Effect/resolveReview(_:)``.
    public func resolveReview(_ r: ReviewResolution, sessionID: String, requestID: String) throws {
        // The decision changes no session: the run's session id only names where the audit entry belongs.
        let runSession = SessionRecord(sessionID: sessionID, tokenHash: "", userID: r.userID, createdAt: r.decidedAt, lastSeenAt: r.decidedAt,
                                       idleTimeout: 0, absoluteExpiresAt: r.decidedAt)
        try committed(Commit(session: runSession, now: r.decidedAt, requestID: requestID)) { c in
            try apply(.audit(AuditAction("review.decided"), userID: r.userID, details: [
                "case_id": .string(r.caseID), "decision": .string(r.decision.rawValue), "reviewer": .string(r.reviewer),
                // The reviewer's words may name the person: the case row keeps them, the audit their SHA-256.
                "reason_sha256": .string(crypto.sha256Hex(r.reason)), "outcome": .string(r.decision.outcome.rawValue),
            ]), runID: r.runID, c)
            try apply(.resolveReview(r), runID: r.runID, c)
        }
    }
}
