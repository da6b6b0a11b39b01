import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import XCTest

/// The ``RelyingPartyStore`` contract (issue #23), on SQLite here and — through
/// ``PostgresStoreContractTests``, which inherits every test — on PostgreSQL.
extension StoreContractTests {
    func testRelyingPartyClientsRunsAuditAndReviewCases() throws {
        let s = try makeSubject()
        let rp = try XCTUnwrap(s.store as? any RelyingPartyStore, Self.storeName)
        // API clients: create, read, conflict, revoke once.
        let c = APIClientRecord(clientID: "rpc_1", name: "bank", scopes: [.links, .read], secretHash: "ab", salt: "cd", createdAt: 100)
        try rp.createAPIClient(c)
        XCTAssertThrowsError(try rp.createAPIClient(c), Self.storeName) { XCTAssertEqual($0 as? StoreError, .conflict("api client exists")) }
        try rp.createAPIClient(APIClientRecord(clientID: "rpc_2", name: "review desk", scopes: [.review], secretHash: "ef", salt: "01", createdAt: 101))
        XCTAssertEqual(try rp.apiClient("rpc_1"), c, Self.storeName)
        XCTAssertEqual(try rp.apiClients().map(\.clientID), ["rpc_1", "rpc_2"])
        XCTAssertTrue(try rp.revokeAPIClient("rpc_1", at: 200))
        XCTAssertFalse(try rp.revokeAPIClient("rpc_1", at: 300), "revoked once")
        XCTAssertFalse(try rp.revokeAPIClient("rpc_none", at: 300))
        XCTAssertEqual(try rp.apiClient("rpc_1")?.revokedAt, 200)

        // Flow runs: newest first, cursor strictly after, time window, other users and flows excluded.
        try s.store.createUser(user("u1"))
        for (id, t) in [("r1", 1000), ("r2", 2000), ("r3", 2000), ("r4", 3000)] {
            try s.store.startFlowRun(FlowRunRecord(runID: id, sessionID: "s-\(id)", userID: "u1", flow: FlowName.kyc, idvWorkflow: 6, startedAt: t))
        }
        try s.store.startFlowRun(FlowRunRecord(runID: "x1", sessionID: "sx", userID: "u1", flow: "auth", idvWorkflow: nil, startedAt: 2500))
        try s.store.startFlowRun(FlowRunRecord(runID: "y1", sessionID: "sy", userID: "u2", flow: FlowName.kyc, idvWorkflow: 6, startedAt: 2500))
        try s.store.endFlowRun(runID: "r4", at: 3100, outcome: .pendingReview, errorCode: 1130)
        let all = try rp.flowRuns(userID: "u1", flows: [FlowName.kyc], since: nil, until: nil, after: nil, limit: 10).map(\.runID)
        XCTAssertEqual(all, ["r4", "r3", "r2", "r1"], Self.storeName)
        let firstTwo = try rp.flowRuns(userID: "u1", flows: [FlowName.kyc], since: nil, until: nil, after: nil, limit: 2)
        let next = try rp.flowRuns(userID: "u1", flows: [FlowName.kyc], since: nil, until: nil,
                                   after: RunCursor(time: firstTwo[1].startedAt, id: firstTwo[1].runID), limit: 2).map(\.runID)
        XCTAssertEqual(next, ["r2", "r1"], Self.storeName)
        XCTAssertEqual(try rp.flowRuns(userID: "u1", flows: [FlowName.kyc], since: 2000, until: 3000, after: nil, limit: 10).map(\.runID), ["r3", "r2"])
        let r4 = try XCTUnwrap(rp.flowRun("r4"))
        XCTAssertEqual(r4, FlowRunView(runID: "r4", sessionID: "s-r4", userID: "u1", flow: FlowName.kyc, idvWorkflow: 6, startedAt: 3000,
                                       endedAt: 3100, outcome: .pendingReview, errorCode: 1130), Self.storeName)
        XCTAssertNil(try rp.flowRun("nope"))

        // Audit entries of one session, oldest first.
        try s.store.appendAudit(action: "idv.flow_started", userID: "u1", sessionID: "s-r4", details: ["run_id": "r4"], at: 3000)
        try s.store.appendAudit(action: "other", userID: "u1", sessionID: "s-r1", details: [:], at: 3001)
        try s.store.appendAudit(action: "idv.transaction", userID: "u1", sessionID: "s-r4", details: ["run_id": "r4"], at: 3100)
        XCTAssertEqual(try rp.auditEntries(sessionID: "s-r4").map(\.action), ["idv.flow_started", "idv.transaction"], Self.storeName)

        // Review cases: one per run; decided once (compare-and-set), the run's outcome set with it.
        let rc = ReviewCaseRecord(caseID: "rev_1", runID: "r4", userID: "u1", flow: FlowName.kyc, triggers: [.matchNearThreshold, .documentWarning],
                                  openedAt: 3100)
        try rp.createReviewCase(rc)
        XCTAssertThrowsError(try rp.createReviewCase(ReviewCaseRecord(caseID: "rev_2", runID: "r4", userID: "u1", flow: FlowName.kyc, triggers: [],
                                                                      openedAt: 3200)), Self.storeName)
        XCTAssertEqual(try rp.reviewCase("rev_1"), rc, Self.storeName)
        XCTAssertEqual(try rp.reviewCase(runID: "r4"), rc)
        XCTAssertEqual(try rp.reviewCases(pending: true, after: nil, limit: 10).map(\.caseID), ["rev_1"])
        XCTAssertEqual(try rp.reviewCases(pending: false, after: nil, limit: 10).count, 0)
        XCTAssertTrue(try rp.decideReviewCase("rev_1", decision: .approve, reason: "checked", reviewer: "admin", at: 4000, runOutcome: .completed))
        XCTAssertFalse(try rp.decideReviewCase("rev_1", decision: .reject, reason: "again", reviewer: "admin", at: 4001, runOutcome: .reviewRejected))
        let decided = try XCTUnwrap(rp.reviewCase("rev_1"))
        XCTAssertEqual(decided.decision, .approve, Self.storeName)
        XCTAssertEqual(decided.decidedAt, 4000)
        XCTAssertEqual(decided.decisionReason, "checked")
        XCTAssertEqual(try rp.flowRun("r4")?.outcome, .completed, Self.storeName)
        XCTAssertEqual(try rp.reviewCases(pending: nil, after: RunCursor(time: 3100, id: "rev_1"), limit: 10).count, 0)

        // Media of one run, oldest first.
        let vault = try TemplateVault.load(keyFile: keyFile, createIfMissing: false)
        for (id, t) in [("m2", 20), ("m1", 10)] {
            try s.store.saveMedia(MediaRecord(mediaID: id, runID: "r4", kind: .selfie, sealed: vault.seal([1, 2], associatedData: "media:r4:selfie"), createdAt: t))
        }
        XCTAssertEqual(try rp.mediaRecords(runID: "r4").map(\.mediaID), ["m1", "m2"], Self.storeName)
        XCTAssertEqual(try rp.mediaRecords(runID: "r1"), [])
    }
}
