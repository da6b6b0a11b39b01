import Foundation
import IDVEngine

/// Schema of the replay check's frame digests (SQLite migration 11; IDVEngine
/// Workflows/Presence.swift, docs/WORKFLOWS.md): one row per distinct frame of every judged selfie
/// capture, kept until `expires_at` (`idv.capture_replay_seconds`), deleted by the expiry sweep.
enum PresenceMigrations {
    static let v11 = """
    CREATE TABLE capture_digests (
        digest TEXT PRIMARY KEY,
        seen_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
    );
    CREATE INDEX capture_digests_expires ON capture_digests(expires_at);
    """
}

extension SQLiteStore: CaptureDigestStore {
    public func knownCaptureDigests(_ digests: [String], now: Int) throws -> Int {
        guard !digests.isEmpty else { return 0 }
        var known = 0
        // In slices under SQLite's host-parameter limit.
        for start in stride(from: 0, to: digests.count, by: 400) {
            let slice = digests[start..<min(digests.count, start + 400)]
            let marks = Array(repeating: "?", count: slice.count).joined(separator: ",")
            known += try query("SELECT count(*) FROM capture_digests WHERE expires_at > ? AND digest IN (\(marks))",
                               [SQLValue(now)] + slice.map { .text($0) }).first?[0].int ?? 0
        }
        return known
    }

    public func recordCaptureDigests(_ digests: [String], seenAt: Int, expiresAt: Int) throws {
        guard !digests.isEmpty else { return }
        try withTransaction {
            for d in digests {
                // A digest already kept keeps its first sighting; an expired one not yet swept starts again.
                try query("""
                    INSERT INTO capture_digests (digest, seen_at, expires_at) VALUES (?, ?, ?)
                    ON CONFLICT (digest) DO UPDATE SET seen_at = excluded.seen_at, expires_at = excluded.expires_at
                      WHERE capture_digests.expires_at <= excluded.seen_at
                    """, [.text(d), SQLValue(seenAt), SQLValue(expiresAt)])
            }
        }
    }

    @discardableResult
    public func purgeExpiredCaptureDigests(now: Int) throws -> Int {
        try withTransaction {
            try query("DELETE FROM capture_digests WHERE expires_at <= ?", [SQLValue(now)])
            return changes
        }
    }
}
