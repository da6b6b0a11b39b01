import Foundation
import IDVCore

/// How long each class of personal data is kept (`retention.*`; docs/DATA-PROTECTION.md "How
/// long"), seconds; 0 = no time limit (kept until the person is erased). Enforced by the expiry
/// sweep (``FlowEngine`` `purgeExpired`, IDVOperations Maintenance.swift), in batches.
public struct RetentionSettings: Sendable, Equatable {
    /// Biometric templates, from enrolment (`retention.templates_seconds`). Default 0: a template
    /// exists only with the person's consent and is kept until they opt out or are erased.
    public var templatesSeconds = 0
    /// Document scan reports (names, document number, birth date, chip evidence), from the scan
    /// (`retention.scan_reports_seconds`); the report of a run still open, or of one under an open
    /// review case, is kept until the run ends or the case is decided. Default 0: the evidence
    /// record and verified claims are built from them; the operator states the period its
    /// regulator asks for.
    public var scanReportsSeconds = 0
    /// Ended flow runs and their outcomes, from their end (`retention.flow_runs_seconds`); a run
    /// with an open review case is kept. A verification past retention reads as 404. Default 0.
    public var flowRunsSeconds = 0
    /// Decided review cases, from the decision (`retention.review_cases_seconds`); open cases are
    /// never deleted by age. Default 0.
    public var reviewCasesSeconds = 0
    /// Consent records, from when they were recorded (`retention.consents_seconds`); the consent
    /// a kept template rests on is kept with it. Default 0.
    public var consentsSeconds = 0
    /// Erasure receipts, from the erasure (`retention.erasure_receipts_seconds`). Default 0: the
    /// receipt is the proof an erasure happened, and holds no personal data.
    public var erasureReceiptsSeconds = 0

    public init() {}
}

/// A class of data the retention rules and `idvd admin retention` speak of.
public enum RetentionClass: String, Sendable, CaseIterable, Codable {
    case templates
    case scanReports = "scan_reports"
    case flowRuns = "flow_runs"
    case reviewCases = "review_cases"
    case consents
    case erasureReceipts = "erasure_receipts"
    case keptMedia = "kept_media"
    case webhookEvents = "webhook_events"
    case sessions
    case auditLog = "audit_log"
    /// Registered devices never bound to a user (`limits.unbound_device_ttl_seconds`, from last use).
    case unboundDevices = "unbound_devices"
    /// SHA-256 digests of judged selfie frames, for the replay check (`idv.capture_replay_seconds`, to their expiry).
    case captureDigests = "capture_digests"
}

/// What is stored of one class now: rows, payload bytes (the lengths of the stored values, not
/// counting indexes or page overhead) and the rows older than the cutoff asked about.
public struct RetentionUsage: Sendable, Equatable {
    public var rows: Int
    public var bytes: Int
    public var pastRetention: Int
    public init(rows: Int, bytes: Int, pastRetention: Int) {
        self.rows = rows
        self.bytes = bytes
        self.pastRetention = pastRetention
    }
}

/// The store's part of retention: count and delete, by age, in batches.
public protocol RetentionStore: Sendable {
    /// Deletes at most `limit` rows of `dataClass` whose age starts before `cutoff` (epoch seconds),
    /// under the class's rule (a flow run: ended, no open review case, its kept media with it; a
    /// scan report: its run ended and no open review case on it; a review case: decided; a
    /// consent: no kept template rests on it). Returns the rows deleted.
    /// Only the classes with a `retention.*` setting are accepted.
    func purgeRetained(_ dataClass: RetentionClass, before cutoff: Int, limit: Int) throws -> Int
    /// Rows and payload bytes of `dataClass` now, and how many are past `cutoff` (nil: none can
    /// be; for kept media and capture digests the cutoff is "now", against their own expiry time).
    func retentionUsage(_ dataClass: RetentionClass, cutoff: Int?) throws -> RetentionUsage
}
