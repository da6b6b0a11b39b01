import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
@testable import IDVHTTP
@testable import IDVStoreSQLite
import IDVTools
import IDVTestSupport
import IDVServerTestSupport
import XCTest

/// The relying-party API (issue #23) as a bank's backend uses it: API clients made by the real
/// `idvd admin rp-client`, the read API, a verification started from the backend, the review queue.
/// Real HTTP on loopback, real SQLite; the IDV flows run in-process over the test doubles (scripted
/// evidence: match distance 0.35 against the 0.55 threshold, liveness 91) or in a real `idvd serve`.
final class RelyingPartyTests: XCTestCase {
    /// A backend's client: the `Authorization` value of `idvd admin rp-client create`.
    struct Backend {
        let http: LoopbackHTTPClient
        let credentials: String
        let clientID: String

        func call(_ method: String, _ path: String, _ body: JSONValue? = nil) throws -> (status: Int, body: JSONValue, headers: [String: String]) {
            let data = try body.map { try JSONEncoder().encode($0) }
            var headers = ["Authorization": "Bearer \(credentials)"]
            if data != nil { headers["Content-Type"] = "application/json" }
            let r = try http.request(method, path, body: data, headers: headers)
            return (r.status, (try? JSONDecoder().decode(JSONValue.self, from: r.body)) ?? .null, r.headers)
        }
    }

    /// `idvd admin rp-client create` on the database at `db`; the backend for `port`.
    static func createClient(db: String, scope: String, port: Int, name: String = "bank backend") throws -> Backend {
        let r = try IDVDBinary.run(["admin", "rp-client", "create", "--name", name, "--scope", scope, "--db", db])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        let out = try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        let id = try XCTUnwrap(out["client_id"]?.stringValue)
        let secret = try XCTUnwrap(out["secret"]?.stringValue)
        XCTAssertEqual(out["authorization"]?.stringValue, "Bearer \(id).\(secret)")
        XCTAssertTrue(id.hasPrefix("rpc_"))
        return Backend(http: LoopbackHTTPClient(port: port), credentials: "\(id).\(secret)", clientID: id)
    }

    static func admin(_ args: [String], db: String) throws -> (status: Int32, out: JSONValue, err: String) {
        let r = try IDVDBinary.run(["admin"] + args + ["--db", db])
        return (r.status, (try? JSONDecoder().decode(JSONValue.self, from: r.stdout)) ?? .null, String(decoding: r.stderr, as: UTF8.self))
    }

    /// The user of a `/verify/#link=TOKEN` URL goes through KYC on the hosted page's protocol: redeem,
    /// password, start the link's flow, document, selfie, continue. Returns the KYC's terminal event.
    func driveUser(_ server: WorkflowServer, url: String, flow: String) throws -> WireEvent {
        let token = try XCTUnwrap(url.components(separatedBy: "#link=").last)
        let http = LoopbackHTTPClient(port: server.port)
        let r = try http.request("POST", WireLinks.redeemPath, body: try JSONEncoder().encode(WireLinkRedeem(link: token)))
        XCTAssertEqual(r.status, 201)
        let redeemed = try JSONDecoder().decode(WireEnvelope.self, from: r.body)   // the envelope, plus `link`
        let api = server.client()
        api.token = redeemed.session?.token
        api.last = redeemed
        XCTAssertEqual(redeemed.challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).event?.name, "onUserLoggedIn")
        XCTAssertEqual(try api.startFlow(flow, ["reason": "Account opening"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(try api.scanDocument(try TestImages.obamaPassportPage()).challenge?.name, "getIDVConfirmDocumentDetails")
        try api.answer(["is_confirm": true])
        let c = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).challenge)
        XCTAssertEqual(try c.payload.decode(SelfieDetails.self).responseData.biometricResult.displayText, .matched)
        // Under review: no consent is asked, the device hears 1130 (not decided).
        let done = try api.answer(["action": "continue-flow"])
        XCTAssertNil(done.challenge, "a run under review asks no consent")
        return try XCTUnwrap(done.event)
    }

    func testBankBackendStartsAVerificationReadsItsOutcomeAndResolvesTheReviewCase() throws {
        let server = try WorkflowServer(["review.match_band": "0.25"])
        let db = server.config.dbPath
        let bank = try Self.createClient(db: db, scope: "read,links,review", port: server.port)
        _ = try server.loggedIn("kim")

        // 1. The backend starts a verification: a hosted-page link with a reason and an expiry.
        let created = try bank.call("POST", "/v1/rp/verifications", ["user_id": "kim", "reason": "Account opening", "expires_in": 600])
        XCTAssertEqual(created.status, 201, "\(created.body)")
        XCTAssertEqual(created.body["flow"], "idv.postlogin.kyc")
        XCTAssertEqual(created.headers["cache-control"], "no-store")
        let url = try XCTUnwrap(created.body["url"]?.stringValue)
        XCTAssertTrue(url.contains("/verify/#link="))
        XCTAssertEqual(created.body["expires_at"]?.intValue, server.clock.now() + 600)

        // 2. The user goes through it; the policy sends the match near the threshold to review.
        let event = try driveUser(server, url: url, flow: "idv.postlogin.kyc")
        XCTAssertEqual(event.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertEqual(event.error.longErrorCode, 1130)
        XCTAssertEqual(event.status.statusCode, 400)
        let kyc = try event.payload.decode(KYCResponse.self)
        XCTAssertTrue(kyc.isUnderReview)
        XCTAssertFalse(kyc.isSuccess)
        XCTAssertNil(try server.store.biometricTemplate(userID: "kim"), "no template from an undecided verification")

        // 3. The backend reads the outcome: pending review, with the scores the device never sees.
        let user = try bank.call("GET", "/v1/rp/users/kim")
        XCTAssertEqual(user.status, 200)
        XCTAssertEqual(user.body["activated"], true)
        XCTAssertEqual(user.body["template"]?["status_code"], 600)
        XCTAssertEqual(user.body["last_kyc"]?["outcome"], "pending_review")
        let list = try bank.call("GET", "/v1/rp/users/kim/verifications")
        let kycItem = try XCTUnwrap(list.body["items"]?.arrayValue?.first { $0["flow"] == "idv.postlogin.kyc" })
        XCTAssertEqual(kycItem["outcome"], "pending_review")
        XCTAssertEqual(kycItem["error_code"], 1130)
        XCTAssertEqual(kycItem["review"]?["state"], "pending")
        XCTAssertEqual(kycItem["review"]?["triggers"], ["match_near_threshold"])
        let vid = try XCTUnwrap(kycItem["verification_id"]?.stringValue)
        let v = try bank.call("GET", "/v1/rp/verifications/\(vid)")
        XCTAssertEqual(v.status, 200, "\(v.body)")
        XCTAssertEqual(v.body["selfie"]?["result"], "MATCHED")
        XCTAssertEqual(v.body["selfie"]?["liveness_score"], 91)
        XCTAssertEqual(try XCTUnwrap(v.body["selfie"]?["face_match_score"]?.doubleValue), 1 - 0.35 / 1.2, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(v.body["selfie"]?["match_threshold"]?.doubleValue), 0.55, accuracy: 1e-9)
        XCTAssertEqual(v.body["selfie"]?["presence_assurance"], "not_checked", "idv.presence off in this test server")
        XCTAssertEqual(v.body["selfie"]?["presence"], "not_asked")
        XCTAssertEqual(v.body["document"]?["result"], "VALID")
        XCTAssertEqual(v.body["reason"], "Account opening")
        let report = try XCTUnwrap(v.body["documents"]?.arrayValue?.first?["report"])
        XCTAssertEqual(report["document_info"]?["document_number"]?.stringValue?.isEmpty, false, "document fields are served to the backend")
        XCTAssertNotNil(report["document_status"])

        // 4. The review queue: the case, the evidence, the images held for this run only.
        let queue = try bank.call("GET", "/v1/rp/reviews")
        XCTAssertEqual(queue.body["items"]?.arrayValue?.count, 1)
        let caseID = try XCTUnwrap(queue.body["items"]?.arrayValue?.first?["case_id"]?.stringValue)
        let shown = try bank.call("GET", "/v1/rp/reviews/\(caseID)")
        XCTAssertEqual(shown.status, 200)
        XCTAssertEqual(shown.body["verification"]?["verification"]?["verification_id"]?.stringValue, vid)
        let selfie = try XCTUnwrap(shown.body["images"]?["selfie"]?.stringValue)
        XCTAssertEqual(Data(base64Encoded: selfie), try TestImages.obamaSelfie(), "the best frame, sealed to the run, opened for the reviewer")
        XCTAssertNotNil(shown.body["images"]?["portrait"]?.stringValue)
        XCTAssertFalse(try server.store.mediaRecords(runID: vid).isEmpty, "held until the decision")

        // 5. The reviewer approves: audited, the outcome changes, the held images go (retention 0).
        let decided = try bank.call("POST", "/v1/rp/reviews/\(caseID)/decision", ["decision": "approve", "reason": "document and face checked by hand"])
        XCTAssertEqual(decided.status, 200, "\(decided.body)")
        XCTAssertEqual(decided.body["state"], "approved")
        XCTAssertEqual(decided.body["reviewer"]?.stringValue, "client:\(bank.clientID)")
        let after = try bank.call("GET", "/v1/rp/verifications/\(vid)")
        XCTAssertEqual(after.body["verification"]?["outcome"], "completed")
        XCTAssertEqual(after.body["verification"]?["error_code"]?.intValue ?? 0, 0, "the decision replaces 1130 (under review)")
        XCTAssertEqual(after.body["verification"]?["review"]?["decision"], "approve")
        XCTAssertTrue(try server.store.mediaRecords(runID: vid).isEmpty, "images purged after review (idv.media_retention_seconds = 0)")
        XCTAssertEqual(try bank.call("GET", "/v1/rp/reviews/\(caseID)").body["images"], [:])
        let again = try bank.call("POST", "/v1/rp/reviews/\(caseID)/decision", ["decision": "reject", "reason": "second thoughts"])
        XCTAssertEqual(again.status, 409)
        XCTAssertEqual(again.body["error"]?["long_error_code"], 1135)
        XCTAssertEqual(try bank.call("GET", "/v1/rp/reviews").body["items"]?.arrayValue?.count, 0)
        XCTAssertEqual(try bank.call("GET", "/v1/rp/reviews?state=decided").body["items"]?.arrayValue?.count, 1)

        // 6. The verification's audit records, with their chain positions; the chain verifies.
        let audit = try bank.call("GET", "/v1/rp/verifications/\(vid)/audit")
        let records = try XCTUnwrap(audit.body["items"]?.arrayValue)
        let actions = records.compactMap { $0["action"]?.stringValue }
        XCTAssertEqual(actions.first, "idv.flow_started")
        for a in ["idv.document_read", "idv.selfie_verified", "idv.review_opened", "idv.transaction", "review.decided"] {
            XCTAssertTrue(actions.contains(a), "\(a) in \(actions)")
        }
        let seqs = records.compactMap { $0["seq"]?.intValue }
        XCTAssertEqual(seqs, seqs.sorted())
        let decidedEntry = try XCTUnwrap(records.first { $0["action"] == "review.decided" })
        XCTAssertEqual(decidedEntry["details"]?["decision"], "approve")
        XCTAssertEqual(decidedEntry["details"]?["reason_sha256"]?.stringValue, Sodium().sha256Hex("document and face checked by hand"))
        XCTAssertNil(decidedEntry["details"]?["reason"], "the reviewer's words stay on the case, not in the audit")
        let all = try server.audit()
        let e = try XCTUnwrap(all.first { $0.seq == decidedEntry["seq"]?.intValue })
        XCTAssertEqual(e.hash, decidedEntry["hash"]?.stringValue)
        XCTAssertEqual(e.prevHash, decidedEntry["prev_hash"]?.stringValue)
        XCTAssertNil(try server.store.verifyAuditChain())
        XCTAssertTrue(all.contains { $0.action == "rp_client.created" && $0.details["client_id"]?.stringValue == bank.clientID })
        XCTAssertTrue(all.contains { $0.action == "rp.verification_requested" && $0.details["client_id"]?.stringValue == bank.clientID })

        // 7. A second case, rejected by the operator with `idvd admin review decide`.
        let second = try bank.call("POST", "/v1/rp/verifications", ["user_id": "kim", "reason": "Limit increase"])
        XCTAssertEqual(try driveUser(server, url: try XCTUnwrap(second.body["url"]?.stringValue), flow: "idv.postlogin.kyc").error.longErrorCode, 1130)
        let pending = try Self.admin(["review", "list"], db: db)
        XCTAssertEqual(pending.status, 0, pending.err)
        let case2 = try XCTUnwrap(pending.out["items"]?.arrayValue?.first?["case_id"]?.stringValue)
        let show = try Self.admin(["review", "show", case2], db: db)
        XCTAssertEqual(show.out["review"]?["triggers"], ["match_near_threshold"])
        XCTAssertFalse(show.out["images"]?["selfie"]?.stringValue?.hasPrefix("/9j") ?? true, "without --images the images are not printed")
        let rejected = try Self.admin(["review", "decide", case2, "--decision", "reject", "--reason", "photo does not match the holder"], db: db)
        XCTAssertEqual(rejected.status, 0, rejected.err)
        XCTAssertEqual(rejected.out["state"], "rejected")
        XCTAssertEqual(rejected.out["reviewer"], "admin")
        let run2 = try XCTUnwrap(rejected.out["verification_id"]?.stringValue)
        XCTAssertEqual(try bank.call("GET", "/v1/rp/verifications/\(run2)").body["verification"]?["outcome"], "review_rejected")
        XCTAssertEqual(try Self.admin(["review", "decide", case2, "--decision", "approve", "--reason", "x"], db: db).status, 2)

        // 8. Paging the user's verifications one at a time reaches every one, newest first.
        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try bank.call("GET", "/v1/rp/users/kim/verifications?limit=1" + (cursor.map { "&cursor=\($0)" } ?? ""))
            XCTAssertEqual(page.status, 200, "\(page.body)")
            seen += page.body["items"]?.arrayValue?.compactMap { $0["verification_id"]?.stringValue } ?? []
            cursor = page.body["next_cursor"]?.stringValue
        } while cursor != nil && seen.count < 10
        XCTAssertEqual(seen.count, 2)
        XCTAssertEqual(Set(seen), [vid, run2])
        XCTAssertEqual(try bank.call("GET", "/v1/rp/users/kim/verifications?since=\(server.clock.now() + 1)").body["items"], [])
    }

    /// Without review settings: a decided KYC (consent given, template made), an additional document
    /// scan and an opt-out (consent withdrawn) read back through the API, filtered by time.
    func testDecidedKYCDocumentScanAndConsentsReadBack() throws {
        let server = try WorkflowServer()
        let bank = try Self.createClient(db: server.config.dbPath, scope: "read", port: server.port)
        let api = try server.loggedIn("lou")
        try api.startFlow("idv.postlogin.kyc", ["reason": "Account upgrade"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        try api.captureSelfie(try TestImages.obamaSelfie())
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).challenge?.name, "getIDVBiometricOptInConsent")
        XCTAssertTrue(try XCTUnwrap(try api.answer(["is_opt_in": true]).event).payload.decode(KYCResponse.self).isSuccess)
        let afterKYC = try bank.call("GET", "/v1/rp/users/lou")
        XCTAssertEqual(afterKYC.body["template"]?["status_code"], 100)
        XCTAssertEqual(afterKYC.body["last_kyc"]?["outcome"], "completed")
        XCTAssertNil(afterKYC.body["last_kyc"]?["review"])
        let kycID = try XCTUnwrap(afterKYC.body["last_kyc"]?["verification_id"]?.stringValue)
        let kyc = try bank.call("GET", "/v1/rp/verifications/\(kycID)")
        XCTAssertEqual(kyc.body["consent"], true)
        XCTAssertEqual(kyc.body["template_created"], true)
        XCTAssertEqual(kyc.body["selfie"]?["result"], "MATCHED")

        server.clock.advance(by: 100)
        let t1 = server.clock.now()
        try api.startFlow("idv.postlogin.document_scan", ["reason": "Address proof"])
        XCTAssertEqual(try api.scanDocument(try TestImages.obamaPassportPage()).event?.name, "onIDVAdditionalDocumentScan")
        server.clock.advance(by: 100)
        try api.startFlow("idv.postlogin.optout")
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).event?.name, "onIDVBiometricOptOutStatus")

        let scans = try bank.call("GET", "/v1/rp/users/lou/document-scans")
        XCTAssertEqual(scans.body["items"]?.arrayValue?.count, 1, "the KYC's own report is not an additional scan")
        XCTAssertEqual(scans.body["items"]?.arrayValue?.first?["reason"], "Address proof")
        XCTAssertNotNil(scans.body["items"]?.arrayValue?.first?["report"]?["identity_data"])
        let consents = try XCTUnwrap(try bank.call("GET", "/v1/rp/users/lou/consents").body["items"]?.arrayValue)
        XCTAssertEqual(consents.compactMap { $0["event"]?.stringValue }, ["withdrawn", "given"], "newest first")
        XCTAssertEqual(consents.last?["verification_id"]?.stringValue, kycID)
        let flows = try XCTUnwrap(try bank.call("GET", "/v1/rp/users/lou/verifications").body["items"]?.arrayValue).compactMap { $0["flow"]?.stringValue }
        XCTAssertEqual(flows, ["idv.postlogin.optout", "idv.postlogin.document_scan", "idv.postlogin.kyc"])
        let window = try bank.call("GET", "/v1/rp/users/lou/verifications?since=\(t1)&until=\(t1 + 100)")
        XCTAssertEqual(window.body["items"]?.arrayValue?.compactMap { $0["flow"]?.stringValue }, ["idv.postlogin.document_scan"])
        XCTAssertEqual(try bank.call("GET", "/v1/rp/users/nobody").body["error"]?["long_error_code"], 1016)
        XCTAssertEqual(try bank.call("GET", "/v1/rp/verifications/nope").status, 404)
        XCTAssertEqual(try bank.call("GET", "/v1/rp/users/lou?x=1").body["error"]?["long_error_code"], 1025)
    }

    func testScopesRevocationRateLimitAndBadCursorsOnRealIdvd() throws {
        let server = try ServerProcess(settings: ["rp.rate_limit_per_minute": "4"])
        _ = try server.createUser("ann")
        try server.start()
        defer { server.stop() }
        let reader = try Self.createClient(db: server.dbPath, scope: "read", port: server.port, name: "reporting")
        // Read scope: reads work; creating links and reviewing are 403 1132.
        let u = try reader.call("GET", "/v1/rp/users/ann")
        XCTAssertEqual(u.status, 200)
        XCTAssertEqual(u.body["state"], "pending_activation")
        XCTAssertEqual(u.headers["cache-control"], "no-store")
        let link = try reader.call("POST", "/v1/rp/verifications", ["user_id": "ann", "reason": "Onboarding"])
        XCTAssertEqual(link.status, 403)
        XCTAssertEqual(link.body["error"]?["long_error_code"], 1132)
        let review = try reader.call("GET", "/v1/rp/reviews")
        XCTAssertEqual(review.status, 403)
        let decide = try reader.call("POST", "/v1/rp/reviews/rev_x/decision", ["decision": "approve", "reason": "x"])
        XCTAssertEqual(decide.status, 403)
        XCTAssertEqual(decide.body["error"]?["long_error_code"], 1132)
        // Rate: 4 a minute; the fifth request is 429 with Retry-After.
        let fifth = try reader.call("GET", "/v1/rp/users/ann")
        XCTAssertEqual(fifth.status, 429)
        XCTAssertEqual(fifth.body["error"]?["long_error_code"], 1133)
        XCTAssertGreaterThanOrEqual(Int(fifth.headers["retry-after"] ?? "") ?? 0, 1)

        // Bad pagination arguments get clear refusals (a fresh client: the first one is spent).
        let paging = try Self.createClient(db: server.dbPath, scope: "read", port: server.port, name: "paging")
        for (query, code) in [("cursor=not-a-cursor", 1134), ("cursor=" + Hex.base64url(Array("v1:abc:x".utf8)), 1134), ("since=yesterday", 1134)] {
            let r = try paging.call("GET", "/v1/rp/users/ann/verifications?\(query)")
            XCTAssertEqual(r.status, 400, query)
            XCTAssertEqual(r.body["error"]?["long_error_code"]?.intValue, code, query)
            XCTAssertTrue(r.body["error"]?["error_string"]?.stringValue?.contains(query.hasPrefix("since") ? "Unix seconds" : "next_cursor") ?? false, "\(r.body)")
        }
        XCTAssertEqual(try paging.call("GET", "/v1/rp/users/ann/verifications?limit=0").body["error"]?["long_error_code"], 1025)
        // A repeated argument is refused (which one would count?), naming it.
        let twice = try paging.call("GET", "/v1/rp/users/ann/verifications?limit=5&limit=500")
        XCTAssertEqual(twice.status, 400)
        XCTAssertEqual(twice.body["error"]?["long_error_code"], 1025)
        XCTAssertEqual(twice.body["error"]?["error_string"], "query argument 'limit' is given more than once")
        let links = try Self.createClient(db: server.dbPath, scope: "read,links", port: server.port, name: "onboarding")
        // A user pending activation gets an activation link; an unknown user is 404 1016.
        let created = try links.call("POST", "/v1/rp/verifications", ["user_id": "ann", "reason": "Onboarding"])
        XCTAssertEqual(created.status, 201, "\(created.body)")
        XCTAssertEqual(created.body["flow"], "idv.activation")
        XCTAssertEqual(try links.call("POST", "/v1/rp/verifications", ["user_id": "nobody", "reason": "x"]).body["error"]?["long_error_code"], 1016)
        // A misspelt optional field is refused, naming it, not silently ignored (nothing created).
        let misspelt = try links.call("POST", "/v1/rp/verifications", ["user_id": "ann", "reason": "Onboarding", "expires_at": 600])
        XCTAssertEqual(misspelt.status, 400)
        XCTAssertEqual(misspelt.body["error"]?["long_error_code"], 1001)
        XCTAssertEqual(misspelt.body["error"]?["error_string"], "Unknown field expires_at")

        // Revoked (idvd admin rp-client revoke, while the server runs): refused at once, 401 1131.
        let revoked = try Self.admin(["rp-client", "revoke", links.clientID], db: server.dbPath)
        XCTAssertEqual(revoked.status, 0, revoked.err)
        XCTAssertNotNil(revoked.out["revoked_at"]?.intValue)
        let refused = try links.call("GET", "/v1/rp/users/ann")
        XCTAssertEqual(refused.status, 401)
        XCTAssertEqual(refused.body["error"]?["long_error_code"], 1131)
        XCTAssertEqual(refused.headers["www-authenticate"], "Bearer realm=\"idvd-rp\", error=\"invalid_token\"")
        // A wrong secret, a user session token, no header: the same 401.
        let forged = Backend(http: links.http, credentials: links.clientID + ".AAAA", clientID: links.clientID)
        XCTAssertEqual(try forged.call("GET", "/v1/rp/users/ann").body["error"]?["long_error_code"], 1131)
        let anonymous = try LoopbackHTTPClient(port: server.port).request("GET", "/v1/rp/users/ann")
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(anonymous.headers["www-authenticate"], "Bearer realm=\"idvd-rp\"", "no credentials sent: no error attribute (RFC 6750 §3.1)")
        let list = try Self.admin(["rp-client", "list"], db: server.dbPath)
        XCTAssertEqual(list.out.arrayValue?.count, 3)
        XCTAssertFalse(String(decoding: try JSONEncoder().encode(list.out), as: UTF8.self).contains("secret"), "list never shows secrets")
        let audit = try server.admin(["audit", "--limit", "100"])["entries"]?.arrayValue ?? []
        XCTAssertEqual(audit.filter { $0["action"] == "rp_client.created" }.count, 3)
        XCTAssertEqual(audit.filter { $0["action"] == "rp_client.revoked" }.count, 1)
        // Bad admin input: unknown scope, no scope.
        XCTAssertEqual(try Self.admin(["rp-client", "create", "--name", "x", "--scope", "read,write"], db: server.dbPath).status, 2)
        XCTAssertEqual(try Self.admin(["rp-client", "create", "--name", "x"], db: server.dbPath).status, 2)
    }

    /// The cursor's wire form round-trips and refuses what this server did not issue.
    func testRunCursorRoundTripAndRefusals() throws {
        let c = RunCursor(time: 1_796_000_000, id: "abc123")
        XCTAssertEqual(try RunCursor(token: c.token), c)
        for bad in ["", "!!", Hex.base64url(Array("v2:1:a".utf8)), Hex.base64url(Array("v1:-1:a".utf8)), Hex.base64url(Array("v1:1:".utf8)),
                    String(repeating: "A", count: 300)] {
            XCTAssertThrowsError(try RunCursor(token: bad), bad) { XCTAssertEqual(($0 as? IDVError)?.longErrorCode, 1134) }
        }
        XCTAssertThrowsError(try RPListQuery(query: ["since": "10", "until": "5"])) { XCTAssertEqual(($0 as? IDVError)?.longErrorCode, 1134) }
        XCTAssertThrowsError(try RPListQuery(query: ["page": "2"])) { XCTAssertEqual(($0 as? IDVError)?.longErrorCode, 1025) }
        XCTAssertEqual(try RPListQuery(query: ["limit": "7", "since": "3"]), RPListQuery(since: 3, limit: 7))
        // HMAC-SHA256, RFC 4231 test case 2.
        let mac = HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8), crypto: Sodium())
        XCTAssertEqual(Hex.encode(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // The one hex and base64url decoder (stored secret hashes, salts, cursors, key files).
        XCTAssertEqual(Hex.decode(Hex.encode(mac)), mac)
        XCTAssertEqual(Hex.decode("00fFa0"), [0x00, 0xFF, 0xA0])
        for bad in ["0", "0g", "zz", " 0"] { XCTAssertNil(Hex.decode(bad), bad) }
        XCTAssertEqual(Hex.base64urlDecode(Hex.base64url([0xFB, 0xFF, 0x01])), [0xFB, 0xFF, 0x01])
        for bad in ["a+b", "a/b", "a=", "é"] { XCTAssertNil(Hex.base64urlDecode(bad), bad) }
    }
}
