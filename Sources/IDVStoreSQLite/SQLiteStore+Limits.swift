import Foundation
import IDVEngine
import IDVRuntime

/// Schema of the credential-limit counters (SQLite migration 10; IDVEngine/Limits/AbuseLimits.swift,
/// docs/LIMITS.md). `tokens_milli` is a failure budget's tokens × 1000 (PostgreSQL has no REAL in
/// this store's codec, and both stores keep one shape).
enum LimitMigrations {
    static let v10 = """
    CREATE TABLE limit_counters (
        key TEXT PRIMARY KEY,
        tokens_milli INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        rounds INTEGER NOT NULL,
        blocked_until INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX limit_counters_updated ON limit_counters(updated_at);
    """
}

extension SQLiteStore {
    private static let limitColumns = "key, tokens_milli, failures, rounds, blocked_until, updated_at"

    public func limitCounters(_ keys: [String]) throws -> [String: LimitCounterRecord] {
        guard !keys.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: keys.count).joined(separator: ",")
        var out: [String: LimitCounterRecord] = [:]
        for r in try query("SELECT \(Self.limitColumns) FROM limit_counters WHERE key IN (\(marks))", keys.map { .text($0) }) {
            let c = LimitCounterRecord(key: r[0].text ?? "", tokens: Double(r[1].int ?? 0) / 1000, failures: r[2].int ?? 0,
                                       rounds: r[3].int ?? 0, blockedUntil: r[4].int ?? 0, updatedAt: r[5].int ?? 0)
            out[c.key] = c
        }
        return out
    }

    public func saveLimitCounter(_ c: LimitCounterRecord) throws {
        try query("INSERT OR REPLACE INTO limit_counters (\(Self.limitColumns)) VALUES (?,?,?,?,?,?)",
                  [.text(c.key), SQLValue(Int((c.tokens * 1000).rounded())), SQLValue(c.failures), SQLValue(c.rounds),
                   SQLValue(c.blockedUntil), SQLValue(c.updatedAt)])
    }

    public func deleteLimitCounter(key: String) throws {
        try query("DELETE FROM limit_counters WHERE key = ?", [.text(key)])
    }

    @discardableResult
    public func deleteLimitCounters(keyPrefix: String) throws -> Int {
        // A range on the primary key, not LIKE: a prefix is matched byte for byte, with no wildcards.
        try withTransaction {
            try query("DELETE FROM limit_counters WHERE key >= ? AND key < ?", [.text(keyPrefix), .text(keyPrefix + "\u{10FFFF}")])
            return changes
        }
    }

    @discardableResult
    public func deleteIdleLimitCounters(updatedBefore: Int, now: Int, limit: Int) throws -> Int {
        try withTransaction {
            try query("""
                DELETE FROM limit_counters WHERE key IN (
                  SELECT key FROM limit_counters WHERE updated_at < ? AND blocked_until <= ? LIMIT ?)
                """, [SQLValue(updatedBefore), SQLValue(now), SQLValue(limit)])
            return changes
        }
    }

    public func limitCounterCount() throws -> Int {
        try query("SELECT count(*) FROM limit_counters").first?[0].int ?? 0
    }
}
