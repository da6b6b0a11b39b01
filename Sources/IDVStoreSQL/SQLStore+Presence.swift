import Foundation
import IDVCore
import IDVEngine

// The selfie replay check's frame digests (``CaptureDigestStore``; IDVEngine Workflows/Presence.swift,
// migration 12 of both stores), written once for both databases. On PostgreSQL every node sees
// every digest: a capture replayed to another node fails as on the first.

extension SQLDatabase {
    public func knownCaptureDigests(_ digests: [String], now: Int) throws -> Int {
        var known = 0
        // In slices well under SQLite's host-parameter limit (a capture has at most 300 frames).
        for start in stride(from: 0, to: digests.count, by: 400) {
            let slice = digests[start..<min(digests.count, start + 400)]
            known += try count("SELECT count(*) FROM capture_digests WHERE expires_at > ? AND digest IN (\(slice.map { _ in "?" }.joined(separator: ",")))",
                               [SQLCell(now)] + slice.map { .text($0) })
        }
        return known
    }

    public func recordCaptureDigests(_ digests: [String], seenAt: Int, expiresAt: Int) throws {
        guard !digests.isEmpty else { return }
        try withTransaction {
            for d in digests {
                // A digest kept already keeps its first sighting; an expired one not yet swept starts again.
                try run("""
                    INSERT INTO capture_digests (digest, seen_at, expires_at) VALUES (?, ?, ?)
                    ON CONFLICT (digest) DO UPDATE SET seen_at = excluded.seen_at, expires_at = excluded.expires_at
                      WHERE capture_digests.expires_at <= excluded.seen_at
                    """, [.text(d), SQLCell(seenAt), SQLCell(expiresAt)])
            }
        }
    }

    @discardableResult
    public func purgeExpiredCaptureDigests(now: Int) throws -> Int {
        try run("DELETE FROM capture_digests WHERE expires_at <= ?", [SQLCell(now)]).affected
    }
}
