import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

extension PostgresStore: VerificationLinkStore {
    public func createVerificationLink(_ l: VerificationLinkRecord) throws {
        try query("INSERT INTO verification_links (link_id, token_hash, user_id, flow, created_at, expires_at, used_at, session_id) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
                  [.text(l.linkID), .text(l.tokenHash), .text(l.userID), .text(l.flow), PGValue(l.createdAt), PGValue(l.expiresAt),
                   PGValue(l.usedAt), PGValue(l.sessionID)])
    }

    public func verificationLink(tokenHash: String) throws -> VerificationLinkRecord? {
        try query("SELECT link_id, token_hash, user_id, flow, created_at, expires_at, used_at, session_id FROM verification_links WHERE token_hash = $1",
                  [.text(tokenHash)]).rows.first.map { r in
            VerificationLinkRecord(linkID: try r.text(0), tokenHash: try r.text(1), userID: try r.text(2), flow: try r.text(3),
                                   createdAt: try r.int(4), expiresAt: try r.int(5), usedAt: try r.optionalInt(6), sessionID: try r.optionalText(7))
        }
    }

    /// One statement: the row lock makes a second redemption (on any node) wait, re-read the row and
    /// find it used.
    public func consumeVerificationLink(linkID: String, at time: Int) throws -> Bool {
        try query("UPDATE verification_links SET used_at = $1 WHERE link_id = $2 AND used_at IS NULL", [PGValue(time), .text(linkID)]).affected == 1
    }

    public func bindVerificationLink(linkID: String, sessionID: String) throws {
        try query("UPDATE verification_links SET session_id = $1 WHERE link_id = $2", [.text(sessionID), .text(linkID)])
    }
}
