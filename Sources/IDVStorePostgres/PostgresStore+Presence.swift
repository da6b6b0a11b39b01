import Foundation
import IDVEngine

/// The replay check's frame digests on PostgreSQL (migration 11, the same shape as SQLite's;
/// IDVEngine Workflows/Presence.swift). Every node sees every digest: a capture replayed to another
/// node fails as on the first.
extension PostgresStore: CaptureDigestStore {
    public func knownCaptureDigests(_ digests: [String], now: Int) throws -> Int {
        guard !digests.isEmpty else { return 0 }
        let marks = digests.indices.map { "$\($0 + 2)" }.joined(separator: ",")
        return try query("SELECT count(*) FROM capture_digests WHERE expires_at > $1 AND digest IN (\(marks))",
                         [PGValue(now)] + digests.map { .text($0) }).rows.first?.int(0) ?? 0
    }

    public func recordCaptureDigests(_ digests: [String], seenAt: Int, expiresAt: Int) throws {
        guard !digests.isEmpty else { return }
        try withTransaction {
            for d in digests {
                // A digest already kept keeps its first sighting; an expired one not yet swept starts again.
                try query("""
                    INSERT INTO capture_digests (digest, seen_at, expires_at) VALUES ($1, $2, $3)
                    ON CONFLICT (digest) DO UPDATE SET seen_at = EXCLUDED.seen_at, expires_at = EXCLUDED.expires_at
                      WHERE capture_digests.expires_at <= EXCLUDED.seen_at
                    """, [.text(d), PGValue(seenAt), PGValue(expiresAt)])
            }
        }
    }

    @discardableResult
    public func purgeExpiredCaptureDigests(now: Int) throws -> Int {
        try query("DELETE FROM capture_digests WHERE expires_at <= $1", [PGValue(now)]).affected
    }
}
