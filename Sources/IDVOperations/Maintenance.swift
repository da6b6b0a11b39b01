import Foundation
import IDVCore
import IDVEngine

// The expiry sweep: an operation over the engine (its session locks, transactions and flows'
// abandon effects), run by `idvd serve` every `session.sweep_seconds` and by `idvd admin purge-expired`.

/// A session answered or revoked while the sweep held it: left for the next sweep.
private struct SweepConflict: Error {}

extension FlowEngine {

    /// What one expiry sweep did.
    public struct PurgeReport: Codable, Sendable, Equatable {
        /// Session rows deleted (expired or revoked).
        public var sessions: Int
        /// Open flow runs closed (outcome `expired` or `revoked`).
        public var flowRunsClosed: Int
        /// Kept media rows past `idv.media_retention_seconds` deleted.
        public var mediaPurged: Int
        /// Of ``sessions``, those that never identified a user: deleted with their flow runs, no
        /// audit record each — one `session.anonymous_expired` record counts them per sweep.
        public var anonymousSessions: Int = 0
        /// Registered devices never bound to a user and unused for `limits.unbound_device_ttl_seconds`, deleted.
        public var unboundDevices: Int = 0
        /// Credential-limit counters (``LimitCounterRecord``) idle long enough to be forgotten, deleted.
        public var limitCounters: Int = 0
        /// Digests of selfie frames past `idv.capture_replay_seconds` (the replay check), deleted.
        public var captureDigests: Int = 0
        /// Rows deleted by age under the `retention.*` settings, per class (``RetentionClass``
        /// raw value: `templates`, `scan_reports`, `flow_runs`, `review_cases`, `consents`,
        /// `erasure_receipts`); a class with nothing deleted is absent.
        public var retention: [String: Int] = [:]
        public init(sessions: Int, flowRunsClosed: Int, mediaPurged: Int, anonymousSessions: Int = 0, unboundDevices: Int = 0, limitCounters: Int = 0,
                    captureDigests: Int = 0) {
            self.sessions = sessions
            self.flowRunsClosed = flowRunsClosed
            self.mediaPurged = mediaPurged
            self.anonymousSessions = anonymousSessions
            self.unboundDevices = unboundDevices
            self.limitCounters = limitCounters
            self.captureDigests = captureDigests
        }
        enum CodingKeys: String, CodingKey {
            case sessions, flowRunsClosed = "flow_runs_closed", mediaPurged = "media_purged", anonymousSessions = "anonymous_sessions"
            case unboundDevices = "unbound_devices", limitCounters = "limit_counters", captureDigests = "capture_digests"
            case retention
        }
    }

    /// The expiry sweep (`idvd serve` every `session.sweep_seconds`, `idvd admin purge-expired`):
    /// every session that is revoked or past idle/absolute expiry has its open flow runs closed —
    /// outcome `expired` (or `revoked`), audited with the run's `idv_audit_transaction_id`, its
    /// sealed media dropped — and its row deleted, one transaction per session guarded by the
    /// session's version (a session answered meanwhile is left for the next sweep). A session that
    /// never identified a user (no user, not logged in) leaves nothing behind: its row and its
    /// flow runs are deleted with no audit record of its own; one `session.anonymous_expired`
    /// record per sweep counts them (`count`), so anonymous traffic adds at most one audit row per
    /// sweep and the hash chain stays whole. Then registered devices never bound to a user and
    /// unused for `limits.unbound_device_ttl_seconds` are deleted (counted, not audited: such a
    /// device never belonged to anyone), kept media past their retention, and selfie frame digests past `idv.capture_replay_seconds`; last the classes with a `retention.*`
    /// period (``purgeRetained(now:batch:)``). Logs counts only.
    public func purgeExpired(batch: Int = 500) throws -> PurgeReport {
        let now = clock.now()
        var report = PurgeReport(sessions: 0, flowRunsClosed: 0, mediaPurged: 0)
        var seen = Set<String>()
        while true {
            let candidates = try store.purgeableSessions(now: now, limit: batch).filter { !seen.contains($0.sessionID) }
            if candidates.isEmpty { break }
            for s in candidates {
                seen.insert(s.sessionID)
                try withSessionLock(s.sessionID) {
                    let reason: AbandonReason = s.revokedAt != nil ? .revoked : .expired
                    let closed = s.state.stack.count
                    let anonymous = s.userID == nil && !s.loggedIn
                    do {
                        try committed(Commit(session: s, now: now, requestID: "sweep-" + crypto.randomID(bytes: 8))) { c in
                            try abandonAll(reason, c)
                            if anonymous {
                                try store.deleteAnonymousFlowRuns(sessionID: s.sessionID)
                            } else if closed > 0 || s.revokedAt == nil {
                                try apply(.audit(AuditAction("session.\(reason.rawValue)"), userID: nil, details: ["flow_runs_closed": .integer(closed)]),
                                          runID: nil, c)
                            }
                            guard try store.deleteSession(sessionID: s.sessionID, expectedVersion: s.version) else { throw SweepConflict() }
                        }
                        report.sessions += 1
                        if anonymous { report.anonymousSessions += 1 } else { report.flowRunsClosed += closed }
                    } catch is SweepConflict {
                        // Answered or revoked meanwhile: left for the next sweep.
                    }
                }
            }
        }
        if report.anonymousSessions > 0 {
            try store.appendAudit(action: "session.anonymous_expired", userID: nil, sessionID: nil,
                                  details: ["count": .integer(report.anonymousSessions)], at: now)
            metrics.flowOutcome(flow: "session", outcome: "anonymous_expired", count: report.anonymousSessions)
        }
        if settings.limits.unboundDeviceTTLSeconds > 0 {
            // After the sessions: a device's last session row is gone once that session expired.
            let cutoff = now - settings.limits.unboundDeviceTTLSeconds
            while true {
                let n = try store.deleteUnboundDevices(unusedSince: cutoff, limit: batch)
                report.unboundDevices += n
                if n < batch { break }
            }
        }
        // Credential-limit counters idle past the budget's window and a pair's memory (docs/LIMITS.md).
        let idleCutoff = now - limits.counterIdleSeconds
        while true {
            let n = try store.deleteIdleLimitCounters(updatedBefore: idleCutoff, now: now, limit: batch)
            report.limitCounters += n
            if n < batch { break }
        }
        report.mediaPurged = try store.purgeExpiredMedia(now: now)
        report.captureDigests = try store.purgeExpiredCaptureDigests(now: now)
        report.retention = try purgeRetained(now: now, batch: batch)
        return report
    }
}
