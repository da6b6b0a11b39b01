import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVStoreSQLite
import IDVStoreSQL
import IDVTools
import IDVTestSupport
import IDVServerTestSupport
import XCTest

/// Issue #37 item 2: retention a bank can state. Rows of every `retention.*` class, some past their
/// period and some inside it, in a real SQLite file of a running `idvd`; `idvd admin retention`
/// reports them, `idvd admin purge-expired` deletes exactly those past it, the relying party reads
/// 404 for a deleted verification and the audit chain still verifies.
final class RetentionTests: XCTestCase {
    func testTheSweepDeletesRowsPastRetentionAndKeepsTheRest() throws {
        let server = try WorkflowServer([:], wallClock: true)
        let db = server.config.dbPath
        let bank = try RelyingPartyTests.createClient(db: db, scope: "read", port: server.port)
        let now = Int(Date().timeIntervalSince1970)
        let old = now - 10 * 86400, recent = now - 3600
        let s = server.store
        func seed(_ sql: String, _ p: [SQLCell]) throws { _ = try s.query(sql, p) }
        _ = try server.createUser("ret.user", idv: false)
        // Flow runs: old ended (goes), old ended under an open review (stays), recent ended (stays), old open (stays).
        for (run, started, ended) in [("run-old", old, old), ("run-review", old, old), ("run-new", recent, recent)] as [(String, Int, Int)] {
            try seed("INSERT INTO flow_runs (run_id, session_id, user_id, flow, idv_workflow, started_at, ended_at, outcome) VALUES (?, 'sess-x', 'ret.user', 'idv.postlogin.kyc', 1, ?, ?, 'completed')",
                     [.text(run), SQLCell(started), SQLCell(ended)])
        }
        try seed("INSERT INTO flow_runs (run_id, session_id, user_id, flow, started_at) VALUES ('run-open', 'sess-x', 'ret.user', 'idv.postlogin.kyc', ?)", [SQLCell(old)])
        // Review cases: decided long ago (goes), decided recently (stays), open (stays).
        for (id, run, decided) in [("case-old", "run-a", old as Int?), ("case-new", "run-b", recent as Int?), ("case-open", "run-review", nil)] {
            try seed("INSERT INTO review_cases (case_id, run_id, user_id, flow, triggers, opened_at, decided_at, decision) VALUES (?, ?, 'ret.user', 'idv.postlogin.kyc', '[]', ?, ?, ?)",
                     [.text(id), .text(run), SQLCell(old), SQLCell(decided), SQLCell(decided == nil ? nil : "approved")])
        }
        // Scan reports: old (goes), recent (stays), old of a run still open and old of a run under
        // an open review case (both stay: the run's judgement and the reviewer read them).
        for (id, run, at) in [("scan-old", "run-old", old), ("scan-new", "run-new", recent), ("scan-open", "run-open", old), ("scan-review", "run-review", old)] {
            try seed("INSERT INTO document_scans (scan_id, user_id, run_id, overall_status, report_ciphertext, report_nonce, key_id, created_at) VALUES (?, 'ret.user', ?, 'OK', ?, ?, 'k', ?)",
                     [.text(id), .text(run), .bytes(Array(repeating: 7, count: 100)), .bytes(Array(repeating: 1, count: 24)), SQLCell(at)])
        }
        // Devices never bound: one unused 10 days (past limits.unbound_device_ttl_seconds, 7 days), one recent; a bound one is not in the class.
        for (id, user, at) in [("dev-old", nil, old), ("dev-new", nil, recent), ("dev-bound", "ret.user", old)] as [(String, String?, Int)] {
            try seed("INSERT INTO devices (device_id, public_key, user_id, created_at, last_used_at) VALUES (?, 'pk', ?, ?, ?)",
                     [.text(id), SQLCell(user), SQLCell(at), SQLCell(at)])
        }
        // Capture digests: one past its expiry, one not.
        for (d, expires) in [("digest-expired", now - 60), ("digest-kept", now + 86400)] {
            try seed("INSERT INTO capture_digests (digest, seen_at, expires_at) VALUES (?, ?, ?)", [.text(d), SQLCell(old), SQLCell(expires)])
        }
        // Consents: old (goes), old but a template rests on it (stays while the template does), recent (stays).
        for (id, at) in [("consent-old", old), ("consent-held", old), ("consent-new", recent)] {
            try seed("INSERT INTO consents (consent_id, user_id, kind, granted, recorded_at) VALUES (?, 'ret.user', 'biometric_template', 1, ?)", [.text(id), SQLCell(at)])
        }
        try seed("INSERT INTO biometric_templates (user_id, ciphertext, nonce, key_id, model, consent_id, created_at) VALUES ('ret.user', ?, ?, 'k', 'dlib', 'consent-held', ?)",
                 [.bytes(Array(repeating: 3, count: 64)), .bytes(Array(repeating: 1, count: 24)), SQLCell(old)])
        for (key, at) in [("subject-old", old), ("subject-new", recent)] {
            try seed("INSERT INTO erasure_receipts (subject_key, receipt_id, receipt, erased_at) VALUES (?, ?, '{}', ?)", [.text(key), .text("r-" + key), SQLCell(at)])
        }
        func count(_ table: String) throws -> Int { try s.query("SELECT count(*) FROM \(table)")[0][0].int ?? -1 }
        func ids(_ sql: String) throws -> Set<String> { Set(try s.query(sql).compactMap { $0[0].text }) }
        let two = "\(2 * 86400)"
        let sets = ["retention.scan_reports_seconds", "retention.flow_runs_seconds", "retention.review_cases_seconds",
                    "retention.consents_seconds", "retention.erasure_receipts_seconds"].flatMap { ["--set", "\($0)=\(two)"] }

        // What is kept, for how long, how much, and how much is past its period.
        let r = try IDVDBinary.run(["admin", "retention", "--db", db] + sets)
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        let lines = try XCTUnwrap(try JSONDecoder().decode(JSONValue.self, from: r.stdout).arrayValue)
        var byClass: [String: JSONValue] = [:]
        for l in lines { byClass[l["data_class"]?.stringValue ?? ""] = l }
        XCTAssertEqual(Set(byClass.keys), Set(RetentionClass.allCases.map(\.rawValue)))
        XCTAssertEqual(byClass["scan_reports"]?["setting"], "retention.scan_reports_seconds")
        XCTAssertEqual(byClass["scan_reports"]?["seconds"], .integer(2 * 86400))
        XCTAssertEqual(byClass["scan_reports"]?["rows"], .integer(4))
        XCTAssertEqual(byClass["scan_reports"]?["past_retention"], .integer(1), "not the reports of an open run or an open review")
        XCTAssertGreaterThanOrEqual(byClass["scan_reports"]?["bytes"]?.intValue ?? 0, 4 * 124)
        XCTAssertEqual(byClass["unbound_devices"]?["setting"], "limits.unbound_device_ttl_seconds")
        XCTAssertEqual(byClass["unbound_devices"]?["seconds"], .integer(7 * 86400))
        XCTAssertEqual(byClass["unbound_devices"]?["rows"], .integer(2), "the bound device is not in the class")
        XCTAssertEqual(byClass["unbound_devices"]?["past_retention"], .integer(1))
        XCTAssertEqual(byClass["capture_digests"]?["setting"], "idv.capture_replay_seconds")
        XCTAssertEqual(byClass["capture_digests"]?["rows"], .integer(2))
        XCTAssertEqual(byClass["capture_digests"]?["past_retention"], .integer(1))
        XCTAssertEqual(byClass["capture_digests"]?["bytes"], .integer("digest-expired".utf8.count + "digest-kept".utf8.count))
        XCTAssertEqual(byClass["flow_runs"]?["past_retention"], .integer(1), "only the ended run with no open review")
        XCTAssertEqual(byClass["review_cases"]?["past_retention"], .integer(1))
        XCTAssertEqual(byClass["consents"]?["past_retention"], .integer(1), "not the consent a template rests on")
        XCTAssertEqual(byClass["erasure_receipts"]?["past_retention"], .integer(1))
        XCTAssertEqual(byClass["templates"]?["seconds"], .integer(0), "templates: no time limit by default")
        XCTAssertEqual(byClass["templates"]?["rows"], .integer(1))
        XCTAssertEqual(byClass["templates"]?["past_retention"], .integer(0))
        XCTAssertNil(byClass["audit_log"]?["seconds"], "no setting: the audit log is kept")
        XCTAssertGreaterThan(byClass["audit_log"]?["rows"]?.intValue ?? 0, 0)
        XCTAssertEqual(byClass["webhook_events"]?["setting"], "webhooks.retention_seconds")

        XCTAssertEqual(try bank.call("GET", "/v1/rp/verifications/run-old").status, 200, "readable while kept")
        // The sweep.
        let p = try IDVDBinary.run(["admin", "purge-expired", "--db", db] + sets)
        XCTAssertEqual(p.status, 0, String(decoding: p.stderr, as: UTF8.self))
        let report = try JSONDecoder().decode(JSONValue.self, from: p.stdout)
        XCTAssertEqual(report["retention"], .object(["scan_reports": .integer(1), "flow_runs": .integer(1), "review_cases": .integer(1),
                                                     "consents": .integer(1), "erasure_receipts": .integer(1)]), "\(report)")
        XCTAssertEqual(try ids("SELECT scan_id FROM document_scans"), ["scan-new", "scan-open", "scan-review"])
        XCTAssertEqual(report["unbound_devices"], 1)
        XCTAssertEqual(report["capture_digests"], 1)
        XCTAssertEqual(try ids("SELECT device_id FROM devices"), ["dev-new", "dev-bound"])
        XCTAssertEqual(try ids("SELECT digest FROM capture_digests"), ["digest-kept"])
        XCTAssertEqual(try ids("SELECT run_id FROM flow_runs"), ["run-review", "run-new", "run-open"])
        XCTAssertEqual(try ids("SELECT case_id FROM review_cases"), ["case-new", "case-open"])
        XCTAssertEqual(try ids("SELECT consent_id FROM consents"), ["consent-held", "consent-new"])
        XCTAssertEqual(try ids("SELECT subject_key FROM erasure_receipts"), ["subject-new"])
        XCTAssertEqual(try count("biometric_templates"), 1, "templates: no limit set")
        // A verification past retention is 404 to the relying party; the audit chain is whole and says what went.
        XCTAssertEqual(try bank.call("GET", "/v1/rp/verifications/run-old").status, 404)
        XCTAssertEqual(try bank.call("GET", "/v1/rp/verifications/run-old/evidence").status, 404)
        XCTAssertEqual(try bank.call("GET", "/v1/rp/verifications/run-new").status, 200, "a run inside retention is still there")
        let verify = try IDVDBinary.run(["admin", "audit", "--verify", "--db", db])
        XCTAssertEqual(verify.status, 0, String(decoding: verify.stdout, as: UTF8.self))
        XCTAssertEqual(try count("audit_log WHERE action = 'retention.purged'"), 1)
        // A second sweep finds nothing more.
        let again = try JSONDecoder().decode(JSONValue.self, from: try IDVDBinary.run(["admin", "purge-expired", "--db", db] + sets).stdout)
        XCTAssertEqual(again["retention"], .object([:]))
        // Templates with a period: the old one goes, and then its consent may go too.
        let t = try IDVDBinary.run(["admin", "purge-expired", "--db", db, "--set", "retention.templates_seconds=\(two)"] + sets)
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: t.stdout)["retention"],
                       .object(["templates": .integer(1), "consents": .integer(1)]))
        XCTAssertEqual(try ids("SELECT consent_id FROM consents"), ["consent-new"])
    }
}
