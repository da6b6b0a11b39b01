import Foundation
import IDVCore
import IDVEngine

// The relying-party API's store calls (``RelyingPartyStore``): API clients, the verification read
// model, the review queue — written once for both databases. Compare-and-set statements are single
// `UPDATE … WHERE … IS NULL` statements.

enum RelyingPartyColumns {
    static let client = "client_id, name, scopes, secret_hash, salt, created_at, revoked_at"
    static let run = "run_id, session_id, user_id, flow, idv_workflow, started_at, ended_at, outcome, error_code"
    static let reviewCase = "case_id, run_id, user_id, flow, triggers, opened_at, decided_at, decision, decision_reason, reviewer"
}

extension SQLDatabase {
    // MARK: API clients

    func clientRow(_ r: SQLRow) throws -> APIClientRecord {
        APIClientRecord(clientID: try r.text(0), name: try r.text(1), scopes: try r.text(2).split(separator: ",").compactMap { RPScope(rawValue: String($0)) },
                        secretHash: try r.text(3), salt: try r.text(4), createdAt: try r.int(5), revokedAt: try r.optionalInt(6))
    }

    public func createAPIClient(_ c: APIClientRecord) throws {
        let r = try run("INSERT INTO api_clients (\(RelyingPartyColumns.client)) VALUES (?,?,?,?,?,?,?) ON CONFLICT (client_id) DO NOTHING",
                        [.text(c.clientID), .text(c.name), .text(c.scopes.map(\.rawValue).joined(separator: ",")), .text(c.secretHash), .text(c.salt),
                         SQLCell(c.createdAt), SQLCell(c.revokedAt)])
        if r.affected != 1 { throw StoreError.conflict("api client exists") }
    }

    public func apiClient(_ clientID: String) throws -> APIClientRecord? {
        try row("SELECT \(RelyingPartyColumns.client) FROM api_clients WHERE client_id = ?", [.text(clientID)]).map(clientRow)
    }

    public func apiClients() throws -> [APIClientRecord] {
        try rows("SELECT \(RelyingPartyColumns.client) FROM api_clients ORDER BY created_at, client_id").map(clientRow)
    }

    public func revokeAPIClient(_ clientID: String, at time: Int) throws -> Bool {
        try run("UPDATE api_clients SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL", [SQLCell(time), .text(clientID)]).affected == 1
    }

    // MARK: Verifications (flow runs)

    func runRow(_ r: SQLRow) throws -> FlowRunView {
        FlowRunView(runID: try r.text(0), sessionID: try r.text(1), userID: try r.optionalText(2), flow: try r.text(3), idvWorkflow: try r.optionalInt(4),
                    startedAt: try r.int(5), endedAt: try r.optionalInt(6), outcome: try r.optionalText(7).flatMap(FlowOutcome.init(rawValue:)),
                    errorCode: try r.optionalInt(8))
    }

    public func flowRun(_ runID: String) throws -> FlowRunView? {
        try row("SELECT \(RelyingPartyColumns.run) FROM flow_runs WHERE run_id = ?", [.text(runID)]).map(runRow)
    }

    public func flowRuns(userID: String, flows: [String], since: Int?, until: Int?, after: RunCursor?, limit: Int) throws -> [FlowRunView] {
        guard !flows.isEmpty else { return [] }
        var params: [SQLCell] = [.text(userID)] + flows.map { .text($0) }
        var sql = "SELECT \(RelyingPartyColumns.run) FROM flow_runs WHERE user_id = ? AND flow IN (\(flows.map { _ in "?" }.joined(separator: ",")))"
        if let since { sql += " AND started_at >= ?"; params.append(SQLCell(since)) }
        if let until { sql += " AND started_at < ?"; params.append(SQLCell(until)) }
        if let after {
            sql += " AND (started_at < ? OR (started_at = ? AND run_id < ?))"
            params += [SQLCell(after.time), SQLCell(after.time), .text(after.id)]
        }
        sql += " ORDER BY started_at DESC, run_id DESC LIMIT ?"
        params.append(SQLCell(max(0, limit)))
        return try rows(sql, params).map(runRow)
    }

    // MARK: Review cases

    func caseRow(_ r: SQLRow) throws -> ReviewCaseRecord {
        ReviewCaseRecord(caseID: try r.text(0), runID: try r.text(1), userID: try r.text(2), flow: try r.text(3),
                         triggers: try r.text(4).split(separator: ",").compactMap { ReviewTrigger(rawValue: String($0)) },
                         openedAt: try r.int(5), decidedAt: try r.optionalInt(6), decision: try r.optionalValue(7, as: ReviewDecision.self),
                         decisionReason: try r.optionalText(8), reviewer: try r.optionalText(9))
    }

    public func createReviewCase(_ c: ReviewCaseRecord) throws {
        let r = try run("INSERT INTO review_cases (\(RelyingPartyColumns.reviewCase)) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                        [.text(c.caseID), .text(c.runID), .text(c.userID), .text(c.flow), .text(c.triggers.map(\.rawValue).joined(separator: ",")),
                         SQLCell(c.openedAt), SQLCell(c.decidedAt), SQLCell(c.decision?.rawValue), SQLCell(c.decisionReason), SQLCell(c.reviewer)])
        if r.affected != 1 { throw StoreError.conflict("review case exists") }
    }

    public func reviewCase(_ caseID: String) throws -> ReviewCaseRecord? {
        try row("SELECT \(RelyingPartyColumns.reviewCase) FROM review_cases WHERE case_id = ?", [.text(caseID)]).map(caseRow)
    }

    public func reviewCase(runID: String) throws -> ReviewCaseRecord? {
        try row("SELECT \(RelyingPartyColumns.reviewCase) FROM review_cases WHERE run_id = ?", [.text(runID)]).map(caseRow)
    }

    public func reviewCases(pending: Bool?, after: RunCursor?, limit: Int) throws -> [ReviewCaseRecord] {
        var params: [SQLCell] = []
        var sql = "SELECT \(RelyingPartyColumns.reviewCase) FROM review_cases WHERE TRUE"
        if let pending { sql += pending ? " AND decided_at IS NULL" : " AND decided_at IS NOT NULL" }
        if let after {
            sql += " AND (opened_at > ? OR (opened_at = ? AND case_id > ?))"
            params += [SQLCell(after.time), SQLCell(after.time), .text(after.id)]
        }
        sql += " ORDER BY opened_at, case_id LIMIT ?"
        params.append(SQLCell(max(0, limit)))
        return try rows(sql, params).map(caseRow)
    }

    public func decideReviewCase(_ caseID: String, decision: ReviewDecision, reason: String, reviewer: String, at time: Int,
                                 runOutcome: FlowOutcome) throws -> Bool {
        try withTransaction {
            let r = try run("""
                UPDATE review_cases SET decided_at = ?, decision = ?, decision_reason = ?, reviewer = ?
                WHERE case_id = ? AND decided_at IS NULL RETURNING run_id
                """, [SQLCell(time), .text(decision.rawValue), .text(reason), .text(reviewer), .text(caseID)])
            guard r.affected == 1, let runID = try r.rows.first?.text(0) else { return false }
            // The decision replaces the pending state: its outcome says it, and 1130 (under review) goes.
            try run("UPDATE flow_runs SET outcome = ?, error_code = 0 WHERE run_id = ? AND outcome = ?",
                    [.text(runOutcome.rawValue), .text(runID), .text(FlowOutcome.pendingReview.rawValue)])
            return true
        }
    }
}
