import Foundation
import IDVCore
import IDVEngine
import XCTest

/// The ``RetentionStore`` rules that need a join, on both stores (``PostgresStoreContractTests``
/// inherits it): a scan report is not deleted by age while its run is open or under an open
/// review case; `unbound_devices` counts only devices never bound, and only those with no
/// session as past their period; `capture_digests` are past their period at their own expiry.
extension StoreContractTests {
    func testRetentionRulesThatJoinOtherTables() throws {
        let s = try makeSubject()
        let rs = try XCTUnwrap(s.store as? any RetentionStore, Self.storeName)
        try s.store.createUser(user("ret"))
        // One statement per call (SQLite's raw runs one).
        for sql in [
            """
            INSERT INTO flow_runs (run_id, session_id, user_id, flow, started_at, ended_at, outcome) VALUES
              ('r-ended', 'sx', 'ret', 'idv.postlogin.kyc', 100, 200, 'completed'),
              ('r-review', 'sx', 'ret', 'idv.postlogin.kyc', 100, 200, 'completed')
            """,
            """
            INSERT INTO flow_runs (run_id, session_id, user_id, flow, started_at) VALUES ('r-open', 'sx', 'ret', 'idv.postlogin.kyc', 100)
            """,
            """
            INSERT INTO review_cases (case_id, run_id, user_id, flow, triggers, opened_at) VALUES ('c-open', 'r-review', 'ret', 'idv.postlogin.kyc', '[]', 200)
            """,
            """
            INSERT INTO document_scans (scan_id, user_id, run_id, overall_status, created_at) VALUES
              ('s-ended', 'ret', 'r-ended', 'OK', 150), ('s-open', 'ret', 'r-open', 'OK', 150),
              ('s-review', 'ret', 'r-review', 'OK', 150), ('s-norun', 'ret', NULL, 'OK', 150)
            """,
            """
            INSERT INTO devices (device_id, public_key, user_id, created_at, last_used_at) VALUES
              ('d-old', 'pk', NULL, 100, NULL), ('d-session', 'pk', NULL, 100, 100), ('d-new', 'pk', NULL, 900, 950), ('d-bound', 'pk', 'ret', 100, 100)
            """,
            """
            INSERT INTO capture_digests (digest, seen_at, expires_at) VALUES ('g-1', 100, 500), ('g-2', 100, 1500)
            """
        ] { try s.raw(sql) }
        try s.store.createSession(SessionRecord(sessionID: "sess-d", tokenHash: "th-d", deviceID: "d-session", createdAt: 100, lastSeenAt: 100,
                                                idleTimeout: 900, absoluteExpiresAt: 10_000))
        let scans = try rs.retentionUsage(.scanReports, cutoff: 1000)
        XCTAssertEqual(scans.rows, 4, Self.storeName)
        XCTAssertEqual(scans.pastRetention, 2, "the ended run's and the run-less report, \(Self.storeName)")
        XCTAssertEqual(try rs.purgeRetained(.scanReports, before: 1000, limit: 10), 2, Self.storeName)
        XCTAssertEqual(try rs.retentionUsage(.scanReports, cutoff: nil).rows, 2, "s-open and s-review stay, \(Self.storeName)")
        let devices = try rs.retentionUsage(.unboundDevices, cutoff: 800)
        XCTAssertEqual(devices.rows, 3, "the bound device is not in the class, \(Self.storeName)")
        XCTAssertEqual(devices.pastRetention, 1, "d-old only: d-session has a session, d-new is recent, \(Self.storeName)")
        XCTAssertEqual(devices.bytes, (5 + 2) + (9 + 2) + (5 + 2), "device id + public key of the three unbound, \(Self.storeName)")
        let digests = try rs.retentionUsage(.captureDigests, cutoff: 1000)
        XCTAssertEqual(digests.rows, 2, Self.storeName)
        XCTAssertEqual(digests.pastRetention, 1, Self.storeName)
        XCTAssertEqual(digests.bytes, 6, Self.storeName)
        XCTAssertThrowsError(try rs.purgeRetained(.captureDigests, before: 1000, limit: 10), "its own rule: the sweep's expiry")
    }
}
