import Foundation
import IDVCore
import IDVEngine
import IDVOperations
import IDVRuntime

/// `idvd admin retention`: per class of data, the setting that bounds how long it is kept, its
/// value, how many rows and payload bytes are stored now, and how many are past their period
/// (docs/DATA-PROTECTION.md "How long"). Reads only.
enum RetentionCommand {
    struct Line: Encodable {
        let data_class: String
        /// The setting(s) that bound this class; empty when none can.
        let setting: String
        /// Its value, seconds; 0 = no time limit; nil when there is no setting.
        let seconds: Int?
        let rows: Int
        let bytes: Int
        /// Rows older than the period (deleted by the next sweep); 0 when there is no limit.
        let past_retention: Int
        let rule: String
    }

    static func report(store: any EngineStore, config: ServerConfig, now: Int) throws -> [Line] {
        var lines: [Line] = []
        func add(_ c: RetentionClass, _ setting: String, _ seconds: Int?, cutoff: Int?, _ rule: String) throws {
            let u = try store.retentionUsage(c, cutoff: cutoff)
            lines.append(Line(data_class: c.rawValue, setting: setting, seconds: seconds, rows: u.rows, bytes: u.bytes,
                              past_retention: u.pastRetention, rule: rule))
        }
        let rules: [RetentionClass: String] = [
            .templates: "from enrolment; 0: until the person opts out or is erased",
            .scanReports: "from the scan; 0: until the person is erased",
            .reviewCases: "decided cases, from the decision; open cases stay",
            .flowRuns: "ended runs, from their end (the relying party then reads 404); runs with an open review case stay",
            .consents: "from when given; the consent a kept template rests on stays",
            .erasureReceipts: "from the erasure; 0: kept (the proof an erasure happened, no personal data)",
        ]
        for (c, key, seconds) in FlowEngine.retentionPeriods(config.engine.retention) {
            try add(c, key, seconds, cutoff: seconds > 0 ? now - seconds : nil, rules[c] ?? "")
        }
        let media = config.engine.workflow.mediaRetentionSeconds
        try add(.keptMedia, "idv.media_retention_seconds", media, cutoff: now,
                media == 0 ? "deleted when the flow ends" : "kept this long after the flow ends")
        let hooks = config.webhooks.retentionSeconds
        try add(.webhookEvents, "webhooks.retention_seconds", hooks, cutoff: now - hooks,
                "delivered or failed events and their delivery log, from the event; pending ones stay")
        let absolute = config.engine.sessionAbsoluteSeconds
        try add(.sessions, "session.idle_seconds, session.absolute_seconds", absolute, cutoff: now - absolute,
                "idle or absolute expiry; past_retention counts those past the absolute limit")
        let devices = config.engine.limits.unboundDeviceTTLSeconds
        try add(.unboundDevices, "limits.unbound_device_ttl_seconds", devices, cutoff: devices > 0 ? now - devices : nil,
                "devices registered but never bound to a user, from their last use; 0: kept")
        let replay = config.engine.workflow.presence.replaySeconds
        try add(.captureDigests, "idv.capture_replay_seconds", replay, cutoff: now,
                "SHA-256 digests of judged selfie frames (no user id), to their expiry; 0: none are kept")
        try add(.auditLog, "", nil, cutoff: nil,
                "kept: the hash chain is the proof of every decision (docs/AUDIT-CHAIN.md); entries name users by pseudonym")
        return lines
    }
}
