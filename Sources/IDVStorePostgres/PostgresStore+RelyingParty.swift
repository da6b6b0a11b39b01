import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// The relying-party API's store calls on PostgreSQL (migration 6; the SQLite twin is
/// SQLiteStore+RelyingParty.swift). Compare-and-set statements are single `UPDATE … WHERE … IS NULL`
/// statements: the row lock makes a second writer on any node re-read the row and find it changed.
extension PostgresStore: RelyingPartyStore {
    private static func scopes(_ s: String) -> [RPScope] { s.split(separator: ",").compactMap { RPScope(rawValue: String($0)) } }

    private static let clientColumns = "client_id, name, scopes, secret_hash, salt, created_at, revoked_at"

    private func clientRow(_ r: PGRow) throws -> APIClientRecord {
        APIClientRecord(clientID: try r.text(0), name: try r.text(1), scopes: Self.scopes(try r.text(2)), secretHash: try r.text(3),
                        salt: try r.text(4), createdAt: try r.int(5), revokedAt: try r.optionalInt(6))
    }

    public func createAPIClient(_ c: APIClientRecord) throws {
        let r = try query("INSERT INTO api_clients (\(Self.clientColumns)) VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (client_id) DO NOTHING",
                          [.text(c.clientID), .text(c.name), .text(c.scopes.map(\.rawValue).joined(separator: ",")), .text(c.secretHash), .text(c.salt),
                           PGValue(c.createdAt), PGValue(c.revokedAt)])
        if r.affected != 1 { throw StoreError.conflict("api client exists") }
    }

    public func apiClient(_ clientID: String) throws -> APIClientRecord? {
        try query("SELECT \(Self.clientColumns) FROM api_clients WHERE client_id = $1", [.text(clientID)]).rows.first.map(clientRow)
    }

    public func apiClients() throws -> [APIClientRecord] {
        try query("SELECT \(Self.clientColumns) FROM api_clients ORDER BY created_at, client_id").rows.map(clientRow)
    }

    public func revokeAPIClient(_ clientID: String, at time: Int) throws -> Bool {
        try query("UPDATE api_clients SET revoked_at = $1 WHERE client_id = $2 AND revoked_at IS NULL", [PGValue(time), .text(clientID)]).affected == 1
    }

    private static let runColumns = "run_id, session_id, user_id, flow, idv_workflow, started_at, ended_at, outcome, error_code"

    private func runRow(_ r: PGRow) throws -> FlowRunView {
        FlowRunView(runID: try r.text(0), sessionID: try r.text(1), userID: try r.optionalText(2), flow: try r.text(3), idvWorkflow: try r.optionalInt(4),
                    startedAt: try r.int(5), endedAt: try r.optionalInt(6), outcome: try r.optionalText(7).flatMap(FlowOutcome.init(rawValue:)),
                    errorCode: try r.optionalInt(8))
    }

    public func flowRun(_ runID: String) throws -> FlowRunView? {
        try query("SELECT \(Self.runColumns) FROM flow_runs WHERE run_id = $1", [.text(runID)]).rows.first.map(runRow)
    }

    public func flowRuns(userID: String, flows: [String], since: Int?, until: Int?, after: RunCursor?, limit: Int) throws -> [FlowRunView] {
        guard !flows.isEmpty else { return [] }
        var p: [PGValue] = [.text(userID)]
        func arg(_ v: PGValue) -> String { p.append(v); return "$\(p.count)" }
        var sql = "SELECT \(Self.runColumns) FROM flow_runs WHERE user_id = $1 AND flow IN (\(flows.map { arg(.text($0)) }.joined(separator: ",")))"
        if let since { sql += " AND started_at >= \(arg(PGValue(since)))" }
        if let until { sql += " AND started_at < \(arg(PGValue(until)))" }
        if let after {
            let t = arg(PGValue(after.time)), id = arg(.text(after.id))
            sql += " AND (started_at < \(t) OR (started_at = \(t) AND run_id < \(id)))"
        }
        sql += " ORDER BY started_at DESC, run_id DESC LIMIT \(arg(PGValue(max(0, limit))))"
        return try query(sql, p).rows.map(runRow)
    }

    public func auditEntries(sessionID: String) throws -> [AuditEntry] {
        try query("SELECT \(Self.auditColumns) FROM audit_log WHERE session_id = $1 ORDER BY seq LIMIT 10000", [.text(sessionID)]).rows
            .map { try auditRow($0).0 }
    }

    public func mediaRecords(runID: String) throws -> [MediaRecord] {
        try query("SELECT media_id FROM idv_media WHERE run_id = $1 ORDER BY created_at, media_id", [.text(runID)]).rows
            .map { try $0.text(0) }.compactMap { try media($0) }
    }

    private static let caseColumns = "case_id, run_id, user_id, flow, triggers, opened_at, decided_at, decision, decision_reason, reviewer"

    private func caseRow(_ r: PGRow) throws -> ReviewCaseRecord {
        ReviewCaseRecord(caseID: try r.text(0), runID: try r.text(1), userID: try r.text(2), flow: try r.text(3),
                         triggers: try r.text(4).split(separator: ",").compactMap { ReviewTrigger(rawValue: String($0)) },
                         openedAt: try r.int(5), decidedAt: try r.optionalInt(6), decision: try r.optionalText(7).flatMap(ReviewDecision.init(rawValue:)),
                         decisionReason: try r.optionalText(8), reviewer: try r.optionalText(9))
    }

    public func createReviewCase(_ c: ReviewCaseRecord) throws {
        let r = try query("INSERT INTO review_cases (\(Self.caseColumns)) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) ON CONFLICT DO NOTHING",
                          [.text(c.caseID), .text(c.runID), .text(c.userID), .text(c.flow), .text(c.triggers.map(\.rawValue).joined(separator: ",")),
                           PGValue(c.openedAt), PGValue(c.decidedAt), PGValue(c.decision?.rawValue), PGValue(c.decisionReason), PGValue(c.reviewer)])
        if r.affected != 1 { throw StoreError.conflict("review case exists") }
    }

    public func reviewCase(_ caseID: String) throws -> ReviewCaseRecord? {
        try query("SELECT \(Self.caseColumns) FROM review_cases WHERE case_id = $1", [.text(caseID)]).rows.first.map(caseRow)
    }

    public func reviewCase(runID: String) throws -> ReviewCaseRecord? {
        try query("SELECT \(Self.caseColumns) FROM review_cases WHERE run_id = $1", [.text(runID)]).rows.first.map(caseRow)
    }

    public func reviewCases(pending: Bool?, after: RunCursor?, limit: Int) throws -> [ReviewCaseRecord] {
        var p: [PGValue] = []
        func arg(_ v: PGValue) -> String { p.append(v); return "$\(p.count)" }
        var sql = "SELECT \(Self.caseColumns) FROM review_cases WHERE TRUE"
        if let pending { sql += pending ? " AND decided_at IS NULL" : " AND decided_at IS NOT NULL" }
        if let after {
            let t = arg(PGValue(after.time)), id = arg(.text(after.id))
            sql += " AND (opened_at > \(t) OR (opened_at = \(t) AND case_id > \(id)))"
        }
        sql += " ORDER BY opened_at, case_id LIMIT \(arg(PGValue(max(0, limit))))"
        return try query(sql, p).rows.map(caseRow)
    }

    public func decideReviewCase(_ caseID: String, decision: ReviewDecision, reason: String, reviewer: String, at time: Int,
                                 runOutcome: FlowOutcome) throws -> Bool {
        try withTransaction {
            let r = try query("UPDATE review_cases SET decided_at = $1, decision = $2, decision_reason = $3, reviewer = $4 WHERE case_id = $5 AND decided_at IS NULL RETURNING run_id",
                              [PGValue(time), .text(decision.rawValue), .text(reason), .text(reviewer), .text(caseID)])
            guard r.affected == 1, let runID = try r.rows.first?.text(0) else { return false }
            // The decision replaces the pending state: its outcome says it, and 1130 (under review) goes.
            try query("UPDATE flow_runs SET outcome = $1, error_code = 0 WHERE run_id = $2 AND outcome = $3",
                      [.text(runOutcome.rawValue), .text(runID), .text(FlowOutcome.pendingReview.rawValue)])
            return true
        }
    }
}
