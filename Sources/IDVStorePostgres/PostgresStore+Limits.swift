import Foundation
import IDVEngine
import IDVRuntime

extension PostgresStore {
    private static let limitColumns = "key, tokens_milli, failures, rounds, blocked_until, updated_at"

    public func limitCounters(_ keys: [String]) throws -> [String: LimitCounterRecord] {
        guard !keys.isEmpty else { return [:] }
        let marks = keys.indices.map { "$\($0 + 1)" }.joined(separator: ",")
        var out: [String: LimitCounterRecord] = [:]
        for r in try query("SELECT \(Self.limitColumns) FROM limit_counters WHERE key IN (\(marks))", keys.map { .text($0) }).rows {
            let c = LimitCounterRecord(key: try r.text(0), tokens: Double(try r.int(1)) / 1000, failures: try r.int(2),
                                       rounds: try r.int(3), blockedUntil: try r.int(4), updatedAt: try r.int(5))
            out[c.key] = c
        }
        return out
    }

    public func saveLimitCounter(_ c: LimitCounterRecord) throws {
        try query("""
            INSERT INTO limit_counters (\(Self.limitColumns)) VALUES ($1,$2,$3,$4,$5,$6)
            ON CONFLICT (key) DO UPDATE SET tokens_milli = EXCLUDED.tokens_milli, failures = EXCLUDED.failures,
              rounds = EXCLUDED.rounds, blocked_until = EXCLUDED.blocked_until, updated_at = EXCLUDED.updated_at
            """, [.text(c.key), PGValue(Int((c.tokens * 1000).rounded())), PGValue(c.failures), PGValue(c.rounds),
                  PGValue(c.blockedUntil), PGValue(c.updatedAt)])
    }

    public func deleteLimitCounter(key: String) throws {
        try query("DELETE FROM limit_counters WHERE key = $1", [.text(key)])
    }

    @discardableResult
    public func deleteLimitCounters(keyPrefix: String) throws -> Int {
        try query("DELETE FROM limit_counters WHERE left(key, length($1)) = $1", [.text(keyPrefix)]).affected
    }

    @discardableResult
    public func deleteIdleLimitCounters(updatedBefore: Int, now: Int, limit: Int) throws -> Int {
        try query("""
            DELETE FROM limit_counters WHERE key IN (
              SELECT key FROM limit_counters WHERE updated_at < $1 AND blocked_until <= $2 LIMIT $3 FOR UPDATE SKIP LOCKED)
            """, [PGValue(updatedBefore), PGValue(now), PGValue(limit)]).affected
    }

    public func limitCounterCount() throws -> Int {
        try query("SELECT count(*) FROM limit_counters").rows.first?.int(0) ?? 0
    }
}
