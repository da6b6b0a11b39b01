import Foundation
import IDVCore
import IDVEngine

// Retention by age (`retention.*`; docs/DATA-PROTECTION.md "How long"): the last part of the
// expiry sweep (``FlowEngine/purgeExpired(batch:)``), and what `idvd admin retention` reports.

extension FlowEngine {
    /// The retention period of each class that has a `retention.*` setting, seconds (0 = no limit).
    public static func retentionPeriods(_ r: RetentionSettings) -> [(RetentionClass, String, Int)] {
        [(.templates, "retention.templates_seconds", r.templatesSeconds),
         (.scanReports, "retention.scan_reports_seconds", r.scanReportsSeconds),
         // Review cases before flow runs: a decided case past its period goes first, its run after.
         (.reviewCases, "retention.review_cases_seconds", r.reviewCasesSeconds),
         (.flowRuns, "retention.flow_runs_seconds", r.flowRunsSeconds),
         // Consents after templates: a consent is kept while a template rests on it.
         (.consents, "retention.consents_seconds", r.consentsSeconds),
         (.erasureReceipts, "retention.erasure_receipts_seconds", r.erasureReceiptsSeconds)]
    }

    /// Deletes, in batches of `batch` rows (one transaction each), every row of a class past its
    /// `retention.*` period: templates by creation, scan reports by creation unless their run is
    /// still open or under an open review case, ended flow runs (and their kept media) by their
    /// end unless a review case is open on them, decided review cases by the
    /// decision, consents by when recorded unless a kept template rests on them, erasure receipts
    /// by the erasure. The audit log is not touched: its entries name runs and users by id or
    /// pseudonym, so a deleted run leaves the chain whole; one `retention.purged` entry counts
    /// what went (`details`: class → rows). Returns the counts per class (absent when none).
    func purgeRetained(now: Int, batch: Int) throws -> [String: Int] {
        var purged: [String: Int] = [:]
        for (c, _, seconds) in Self.retentionPeriods(settings.retention) where seconds > 0 {
            var total = 0
            while true {
                let n = try store.purgeRetained(c, before: now - seconds, limit: batch)
                total += n
                if n < batch { break }
            }
            if total > 0 { purged[c.rawValue] = total }
        }
        if !purged.isEmpty {
            try store.appendAudit(action: "retention.purged", userID: nil, sessionID: nil,
                                  details: .object(purged.mapValues { .integer($0) }), at: now)
        }
        return purged
    }
}
