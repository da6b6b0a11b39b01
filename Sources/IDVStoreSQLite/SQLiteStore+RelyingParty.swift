import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// Schema of the relying-party API: API clients, review cases, and the indexes its read model
/// pages by (IDVEngine/RelyingParty; PostgreSQL twin in PostgresMigrations.swift).
enum RelyingPartyMigrations {
    static let v6 = """
    CREATE TABLE api_clients (
        client_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        scopes TEXT NOT NULL,
        secret_hash TEXT NOT NULL,
        salt TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
    );
    CREATE TABLE review_cases (
        case_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        triggers TEXT NOT NULL,
        opened_at INTEGER NOT NULL,
        decided_at INTEGER,
        decision TEXT,
        decision_reason TEXT,
        reviewer TEXT
    );
    CREATE INDEX review_cases_open ON review_cases(decided_at, opened_at);
    CREATE INDEX flow_runs_user_started ON flow_runs(user_id, started_at);
    CREATE INDEX audit_log_session ON audit_log(session_id);
    """
}

extension SQLiteStore: RelyingPartyStore {
    private static func scopes(_ s: String?) -> [RPScope] { (s ?? "").split(separator: ",").compactMap { RPScope(rawValue: String($0)) } }

    private func clientRow(_ r: [SQLValue]) -> APIClientRecord {
        APIClientRecord(clientID: r[0].text ?? "", name: r[1].text ?? "", scopes: Self.scopes(r[2].text), secretHash: r[3].text ?? "",
                        salt: r[4].text ?? "", createdAt: r[5].int ?? 0, revokedAt: r[6].int)
    }

    private static let clientColumns = "client_id, name, scopes, secret_hash, salt, created_at, revoked_at"

    public func createAPIClient(_ c: APIClientRecord) throws {
        try withTransaction {
            if try apiClient(c.clientID) != nil { throw StoreError.conflict("api client exists") }
            try query("INSERT INTO api_clients (\(Self.clientColumns)) VALUES (?,?,?,?,?,?,?)",
                      [.text(c.clientID), .text(c.name), .text(c.scopes.map(\.rawValue).joined(separator: ",")), .text(c.secretHash), .text(c.salt),
                       SQLValue(c.createdAt), SQLValue(c.revokedAt)])
        }
    }

    public func apiClient(_ clientID: String) throws -> APIClientRecord? {
        try query("SELECT \(Self.clientColumns) FROM api_clients WHERE client_id = ?", [.text(clientID)]).first.map(clientRow)
    }

    public func apiClients() throws -> [APIClientRecord] {
        try query("SELECT \(Self.clientColumns) FROM api_clients ORDER BY created_at, client_id").map(clientRow)
    }

    public func revokeAPIClient(_ clientID: String, at time: Int) throws -> Bool {
        try withTransaction {
            try query("UPDATE api_clients SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL", [SQLValue(time), .text(clientID)])
            return changes == 1
        }
    }

    private static let runColumns = "run_id, session_id, user_id, flow, idv_workflow, started_at, ended_at, outcome, error_code"

    private func runRow(_ r: [SQLValue]) -> FlowRunView {
        FlowRunView(runID: r[0].text ?? "", sessionID: r[1].text ?? "", userID: r[2].text, flow: r[3].text ?? "", idvWorkflow: r[4].int,
                    startedAt: r[5].int ?? 0, endedAt: r[6].int, outcome: r[7].text.flatMap(FlowOutcome.init(rawValue:)), errorCode: r[8].int)
    }

    public func flowRun(_ runID: String) throws -> FlowRunView? {
        try query("SELECT \(Self.runColumns) FROM flow_runs WHERE run_id = ?", [.text(runID)]).first.map(runRow)
    }

    public func flowRuns(userID: String, flows: [String], since: Int?, until: Int?, after: RunCursor?, limit: Int) throws -> [FlowRunView] {
        guard !flows.isEmpty else { return [] }
        var sql = "SELECT \(Self.runColumns) FROM flow_runs WHERE user_id = ? AND flow IN (\(flows.map { _ in "?" }.joined(separator: ",")))"
        var p: [SQLValue] = [.text(userID)] + flows.map { .text($0) }
        if let since { sql += " AND started_at >= ?"; p.append(SQLValue(since)) }
        if let until { sql += " AND started_at < ?"; p.append(SQLValue(until)) }
        if let after { sql += " AND (started_at < ? OR (started_at = ? AND run_id < ?))"; p += [SQLValue(after.time), SQLValue(after.time), .text(after.id)] }
        sql += " ORDER BY started_at DESC, run_id DESC LIMIT ?"
        p.append(SQLValue(max(0, limit)))
        return try query(sql, p).map(runRow)
    }

    public func auditEntries(sessionID: String) throws -> [AuditEntry] {
        try query("SELECT seq, at, action, user_id, session_id, details, prev_hash, hash FROM audit_log WHERE session_id = ? ORDER BY seq LIMIT 10000",
                  [.text(sessionID)]).map { auditRow($0).0 }
    }

    public func mediaRecords(runID: String) throws -> [MediaRecord] {
        try query("SELECT media_id FROM idv_media WHERE run_id = ? ORDER BY created_at, media_id", [.text(runID)])
            .compactMap { $0[0].text }.compactMap { try media($0) }
    }

    private static let caseColumns = "case_id, run_id, user_id, flow, triggers, opened_at, decided_at, decision, decision_reason, reviewer"

    private func caseRow(_ r: [SQLValue]) -> ReviewCaseRecord {
        ReviewCaseRecord(caseID: r[0].text ?? "", runID: r[1].text ?? "", userID: r[2].text ?? "", flow: r[3].text ?? "",
                         triggers: (r[4].text ?? "").split(separator: ",").compactMap { ReviewTrigger(rawValue: String($0)) },
                         openedAt: r[5].int ?? 0, decidedAt: r[6].int, decision: r[7].text.flatMap(ReviewDecision.init(rawValue:)),
                         decisionReason: r[8].text, reviewer: r[9].text)
    }

    public func createReviewCase(_ c: ReviewCaseRecord) throws {
        try withTransaction {
            if try reviewCase(runID: c.runID) != nil || reviewCase(c.caseID) != nil { throw StoreError.conflict("review case exists") }
            try query("INSERT INTO review_cases (\(Self.caseColumns)) VALUES (?,?,?,?,?,?,?,?,?,?)",
                      [.text(c.caseID), .text(c.runID), .text(c.userID), .text(c.flow), .text(c.triggers.map(\.rawValue).joined(separator: ",")),
                       SQLValue(c.openedAt), SQLValue(c.decidedAt), SQLValue(c.decision?.rawValue), SQLValue(c.decisionReason), SQLValue(c.reviewer)])
        }
    }

    public func reviewCase(_ caseID: String) throws -> ReviewCaseRecord? {
        try query("SELECT \(Self.caseColumns) FROM review_cases WHERE case_id = ?", [.text(caseID)]).first.map(caseRow)
    }

    public func reviewCase(runID: String) throws -> ReviewCaseRecord? {
        try query("SELECT \(Self.caseColumns) FROM review_cases WHERE run_id = ?", [.text(runID)]).first.map(caseRow)
    }

    public func reviewCases(pending: Bool?, after: RunCursor?, limit: Int) throws -> [ReviewCaseRecord] {
        var sql = "SELECT \(Self.caseColumns) FROM review_cases WHERE 1 = 1"
        var p: [SQLValue] = []
        if let pending { sql += pending ? " AND decided_at IS NULL" : " AND decided_at IS NOT NULL" }
        if let after { sql += " AND (opened_at > ? OR (opened_at = ? AND case_id > ?))"; p += [SQLValue(after.time), SQLValue(after.time), .text(after.id)] }
        sql += " ORDER BY opened_at, case_id LIMIT ?"
        p.append(SQLValue(max(0, limit)))
        return try query(sql, p).map(caseRow)
    }

    public func decideReviewCase(_ caseID: String, decision: ReviewDecision, reason: String, reviewer: String, at time: Int,
                                 runOutcome: FlowOutcome) throws -> Bool {
        try withTransaction {
            try query("UPDATE review_cases SET decided_at = ?, decision = ?, decision_reason = ?, reviewer = ? WHERE case_id = ? AND decided_at IS NULL",
                      [SQLValue(time), .text(decision.rawValue), .text(reason), .text(reviewer), .text(caseID)])
            guard changes == 1, let c = try reviewCase(caseID) else { return false }
            // The decision replaces the pending state: its outcome says it, and 1130 (under review) goes.
            try query("UPDATE flow_runs SET outcome = ?, error_code = 0 WHERE run_id = ? AND outcome = ?",
                      [.text(runOutcome.rawValue), .text(c.runID), .text(FlowOutcome.pendingReview.rawValue)])
            return true
        }
    }
}
