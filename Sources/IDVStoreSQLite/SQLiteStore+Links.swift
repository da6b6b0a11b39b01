import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// Schema of the verification links (SQLite migration 4).
enum VerificationLinkMigrations {
    static let v4 = """
    CREATE TABLE verification_links (
        link_id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
        flow TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER,
        session_id TEXT
    );
    CREATE INDEX verification_links_user ON verification_links(user_id);
    """
}

extension SQLiteStore: VerificationLinkStore {
    public func createVerificationLink(_ l: VerificationLinkRecord) throws {
        try query("INSERT INTO verification_links (link_id, token_hash, user_id, flow, created_at, expires_at, used_at, session_id) VALUES (?,?,?,?,?,?,?,?)",
                  [.text(l.linkID), .text(l.tokenHash), .text(l.userID), .text(l.flow), SQLValue(l.createdAt), SQLValue(l.expiresAt),
                   SQLValue(l.usedAt), SQLValue(l.sessionID)])
    }

    public func verificationLink(tokenHash: String) throws -> VerificationLinkRecord? {
        try query("SELECT link_id, token_hash, user_id, flow, created_at, expires_at, used_at, session_id FROM verification_links WHERE token_hash = ?",
                  [.text(tokenHash)]).first.map { r in
            VerificationLinkRecord(linkID: r[0].text ?? "", tokenHash: r[1].text ?? "", userID: r[2].text ?? "", flow: r[3].text ?? "",
                                   createdAt: r[4].int ?? 0, expiresAt: r[5].int ?? 0, usedAt: r[6].int, sessionID: r[7].text)
        }
    }

    public func consumeVerificationLink(linkID: String, at time: Int) throws -> Bool {
        try withTransaction {
            try query("UPDATE verification_links SET used_at = ? WHERE link_id = ? AND used_at IS NULL", [SQLValue(time), .text(linkID)])
            return changes == 1
        }
    }

    public func bindVerificationLink(linkID: String, sessionID: String) throws {
        try query("UPDATE verification_links SET session_id = ? WHERE link_id = ?", [.text(sessionID), .text(linkID)])
    }
}

