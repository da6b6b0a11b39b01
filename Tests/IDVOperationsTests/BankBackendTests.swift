import Foundation
import IDVCore
import IDVCrypto
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVTestSupport
import IDVServerTestSupport
import IDVTools
import XCTest

/// Issue #23's done-when, as ONE bank's backend sees it, against a real `idvd serve` process on
/// loopback with a real SQLite file, the REAL readers (DocumentReader on an `idvd specimen` TD3
/// page, FaceKit on real selfie frames — a real idvd reaches review with them, so no test double
/// is needed here) and a real webhook receiver on loopback that is down at first.
final class BankBackendTests: XCTestCase {
    static let password = "correct horse 42"

    /// The backend's own signature check (docs/WEBHOOKS.md "Signature"), written here from the
    /// document, not with the server's code: HMAC-SHA256 keyed with the secret's UTF-8 over
    /// `t + "." + body`, compared in constant time with each `v1`, `t` within `tolerance` of now.
    static func signatureValid(header: String, body: Data, secret: String, now: Int, tolerance: Int = 300) -> Bool {
        var t: Int?
        var sigs: [String] = []
        for part in header.split(separator: ",") {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard kv.count == 2 else { continue }
            if kv[0] == "t" { t = Int(kv[1]) } else if kv[0] == "v1" { sigs.append(kv[1].lowercased()) }
        }
        guard let t, !sigs.isEmpty, abs(now - t) <= tolerance else { return false }
        let mac = HMACSHA256.mac(key: Array(secret.utf8), message: Array("\(t).".utf8) + Array(body), crypto: Sodium())
        let expected = Array(Hex.encode(mac).utf8)
        func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            guard a.count == b.count else { return false }
            var diff: UInt8 = 0
            for i in a.indices { diff |= a[i] ^ b[i] }
            return diff == 0
        }
        var any = false
        for s in sigs where constantTimeEqual(expected, Array(s.utf8)) { any = true }
        return any
    }

    /// An `idvd specimen` TD3 page whose portrait is the person in the `katie_live` frames.
    func specimen(seed: Int, in dir: URL) throws -> Data {
        let r = try IDVDBinary.run(["specimen", "--format", "td3", "--seed", String(seed), "--out", dir.path, "--jpeg", "90",
                                    "--portrait", RealImages.fixtures.appendingPathComponent("katie_portrait.jpg").path])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        return try Data(contentsOf: dir.appendingPathComponent("specimen-\(seed).jpg"))
    }

    /// Redeems a hosted-page link (`…/verify/#link=TOKEN`) as the page does; returns the session.
    func redeem(_ url: String, port: Int) throws -> (api: API, token: String) {
        let token = try XCTUnwrap(url.components(separatedBy: "#link=").last)
        let r = try LoopbackHTTPClient(port: port).request("POST", WireLinks.redeemPath, body: try JSONEncoder().encode(WireLinkRedeem(link: token)))
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let env = try JSONDecoder().decode(WireEnvelope.self, from: r.body)
        let api = API(port: port)
        api.token = env.session?.token
        api.last = env
        return (api, token)
    }

    func eventually(_ timeout: Double, _ body: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try body() { return true }
            usleep(100_000)
        }
        return try body()
    }

    func testABankBackendHearsAndReadsEveryDecision() throws {
        try RealImages.requireModels()
        let katie = try RealImages.frames("katie_live")
        let receiverPort = try WebhookReceiver.freePort()   // the bank's receiver: down at first
        // Review: a match whose descriptor distance is within 1.0 of the threshold goes to a person
        // (wide on purpose: every cosine distance from 0 up to the line lies in it, so the real
        // analyser's match of these frames does); only KYC is routed to review, so the activation
        // below is decided by the machine.
        let server = try ServerProcess(settings: ["webhooks.poll_ms": "100", "webhooks.retry_base_seconds": "1",
                                                  "webhooks.retry_max_seconds": "2", "review.match_band": "1.0"])
        let page = try specimen(seed: 9, in: server.dir)
        try server.start()
        let db = server.dbPath

        // 1. The operator gives the bank an API client and registers its webhook endpoint.
        var bank = try RelyingPartyTests.createClient(db: db, scope: "read,links,review", port: server.port)
        let reporting = try RelyingPartyTests.createClient(db: db, scope: "read", port: server.port, name: "reporting")
        let hook = try server.admin(["webhook", "add", "--url", "http://127.0.0.1:\(receiverPort)/hooks/idv",
                                     "--events", "verification.decided,review.resolved"])
        let endpointID = try XCTUnwrap(hook["endpoint_id"]?.stringValue)
        let secret = try XCTUnwrap(hook["secret"]?.stringValue)
        let activationCode = try XCTUnwrap(try server.admin(["create-user", "bea"])["activation_code"]?.stringValue)

        // 2. The backend starts a verification: a pending user gets an activation link.
        let started = try bank.call("POST", "/v1/rp/verifications", ["user_id": "bea", "reason": "Account opening", "expires_in": 900])
        XCTAssertEqual(started.status, 201, "\(started.body)")
        XCTAssertEqual(started.body["flow"], "idv.activation")
        let activationURL = try XCTUnwrap(started.body["url"]?.stringValue)

        // 3. The user finishes: activation code, real document, real selfie frames, password.
        let (user, activationLinkToken) = try redeem(activationURL, port: server.port)
        XCTAssertEqual(user.last?.challenge?.name, "getActivationCode")
        XCTAssertEqual(try user.answer(["activation_code": .string(activationCode)]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        let read = try XCTUnwrap(try user.scanDocument(page).challenge, server.serverLog().suffix(2000).description)
        XCTAssertEqual(read.name, "getIDVConfirmDocumentDetails")
        let info = try read.payload.decode(DocumentDetails.self).responseData.documentInfo
        XCTAssertEqual(try user.answer(["is_confirm": true]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        try user.answer(["is_confirm": true, "use_back_camera": false])
        let selfie = try XCTUnwrap(try user.uploadFrames(katie).challenge)
        XCTAssertEqual(try selfie.payload.decode(SelfieDetails.self).responseData.biometricResult.displayText, .matched, server.serverLog().suffix(2000).description)
        XCTAssertEqual(try user.answer(["action": "continue-flow"]).challenge?.name, "getIDVBiometricOptInConsent")
        XCTAssertEqual(try user.answer(["is_opt_in": false]).challenge?.challengeMode, 1)
        XCTAssertEqual(try user.answer(["password": .string(Self.password)]).event?.name, "onUserLoggedIn")
        let firstSessionToken = try XCTUnwrap(user.token)

        // 4. The first delivery fails: the receiver is down.
        func deliveries() throws -> [JSONValue] { try XCTUnwrap(server.admin(["webhook", "deliveries", "--limit", "1000"]).arrayValue) }
        XCTAssertTrue(try eventually(20) {
            guard let row = try deliveries().first else { return false }
            return (row["attempts"]?.intValue ?? 0) >= 1 && row["last_error"] == "connection_refused"
        }, "no failed attempt: \(String(describing: try? deliveries()))")
        XCTAssertEqual(try deliveries().first?["state"], "pending")

        // 5. idvd restarts; the receiver comes up (nothing arrives while idvd is down); then it arrives.
        XCTAssertEqual(server.stop(), 0)
        let receiver = try WebhookReceiver(port: receiverPort)
        usleep(1_200_000)
        XCTAssertEqual(receiver.received.count, 0)
        try server.start()
        bank = RelyingPartyTests.Backend(http: LoopbackHTTPClient(port: server.port), credentials: bank.credentials, clientID: bank.clientID)
        let reader = RelyingPartyTests.Backend(http: LoopbackHTTPClient(port: server.port), credentials: reporting.credentials, clientID: reporting.clientID)
        XCTAssertTrue(receiver.wait(timeout: 20) { !$0.isEmpty }, "not delivered after the restart: \(server.serverLog().suffix(1500))")

        /// The i-th delivery received (a failed test, never a crash, when it has not arrived).
        func delivery(_ i: Int) throws -> WebhookReceiver.Request {
            let got = receiver.received
            return try XCTUnwrap(got.indices.contains(i) ? got[i] : nil, "delivery \(i + 1) has not arrived (\(got.count) so far)")
        }
        var eventIDs = Set<String>()
        /// Checks a delivery as the bank must: signature (and that a forgery would fail), unique id.
        func accept(_ r: WebhookReceiver.Request) throws -> WebhookEventEnvelope {
            let now = Int(Date().timeIntervalSince1970)
            let header = try XCTUnwrap(r.headers["idv-signature"])
            XCTAssertTrue(Self.signatureValid(header: header, body: r.body, secret: secret, now: now), header)
            XCTAssertFalse(Self.signatureValid(header: header, body: r.body + Data(" ".utf8), secret: secret, now: now), "a changed body")
            XCTAssertFalse(Self.signatureValid(header: header, body: r.body, secret: secret + "x", now: now), "another secret")
            XCTAssertFalse(Self.signatureValid(header: header, body: r.body, secret: secret, now: now + 301), "a replay after the tolerance")
            let e = try JSONDecoder().decode(WebhookEventEnvelope.self, from: r.body)
            XCTAssertEqual(r.headers["idv-event-id"], e.id)
            XCTAssertTrue(eventIDs.insert(e.id).inserted, "event \(e.id) delivered twice")
            XCTAssertEqual(e.userID, "bea")
            return e
        }
        let first = try accept(try delivery(0))
        XCTAssertEqual(first.type, .verificationDecided)
        XCTAssertGreaterThanOrEqual(Int(try delivery(0).headers["idv-delivery-attempt"] ?? "") ?? 0, 2, "a retry of the failed attempt")
        XCTAssertEqual(first.data["flow"], "idv.activation")
        XCTAssertEqual(first.data["outcome"], "completed")
        let activationRun = try XCTUnwrap(first.data["run_id"]?.stringValue)

        // 6. The same outcome through the read API: the same run id, the same outcome.
        let list = try bank.call("GET", "/v1/rp/users/bea/verifications")
        XCTAssertEqual(list.status, 200, "\(list.body)")
        let item = try XCTUnwrap(list.body["items"]?.arrayValue?.first { $0["verification_id"]?.stringValue == activationRun }, "\(list.body)")
        XCTAssertEqual(item["outcome"], first.data["outcome"])
        XCTAssertEqual(item["flow"], "idv.activation")
        let v = try bank.call("GET", "/v1/rp/verifications/\(activationRun)")
        XCTAssertEqual(v.body["verification"]?["outcome"], first.data["outcome"])
        XCTAssertEqual(v.body["document"]?["result"]?.stringValue, first.data["document_status"]?.stringValue)
        XCTAssertEqual(v.body["selfie"]?["result"]?.stringValue, first.data["verdict"]?.stringValue)

        // 7. A KYC the policy leaves to a person: started by the backend, finished by the user.
        let kycLink = try bank.call("POST", "/v1/rp/verifications", ["user_id": "bea", "reason": "Limit increase"])
        XCTAssertEqual(kycLink.status, 201, "\(kycLink.body)")
        XCTAssertEqual(kycLink.body["flow"], "idv.postlogin.kyc")
        let (kycUser, kycLinkToken) = try redeem(try XCTUnwrap(kycLink.body["url"]?.stringValue), port: server.port)
        XCTAssertEqual(kycUser.last?.challenge?.name, "getPassword")
        XCTAssertEqual(try kycUser.answer(["password": .string(Self.password)]).event?.name, "onUserLoggedIn")
        XCTAssertEqual(try kycUser.startFlow("idv.postlogin.kyc", ["reason": "Limit increase"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(try kycUser.scanDocument(page).challenge?.name, "getIDVConfirmDocumentDetails")
        try kycUser.answer(["is_confirm": true])
        try kycUser.answer(["is_confirm": true, "use_back_camera": false])
        XCTAssertEqual(try kycUser.uploadFrames(katie).challenge?.name, "getIDVSelfieConfirmation")
        let underReview = try XCTUnwrap(try kycUser.answer(["action": "continue-flow"]).event)
        XCTAssertEqual(underReview.error.longErrorCode, 1130, "\(underReview)")
        XCTAssertTrue(receiver.wait(timeout: 20) { $0.count >= 2 }, "no verification.decided for the KYC")
        let pending = try accept(try delivery(1))
        XCTAssertEqual(pending.type, .verificationDecided)
        XCTAssertEqual(pending.data["outcome"], "pending_review")
        XCTAssertEqual(pending.data["long_error_code"], 1130)
        let kycRun = try XCTUnwrap(pending.data["run_id"]?.stringValue)

        // 8. The review queue: the read-only client may neither start verifications nor decide.
        let queue = try bank.call("GET", "/v1/rp/reviews")
        let pendingCase = try XCTUnwrap(queue.body["items"]?.arrayValue?.first { $0["verification_id"]?.stringValue == kycRun }, "\(queue.body)")
        XCTAssertEqual(pendingCase["triggers"], ["match_near_threshold"])
        let caseID = try XCTUnwrap(pendingCase["case_id"]?.stringValue)
        let noLink = try reader.call("POST", "/v1/rp/verifications", ["user_id": "bea", "reason": "Onboarding"])
        XCTAssertEqual(noLink.status, 403)
        XCTAssertEqual(noLink.body["error"]?["long_error_code"], 1132)
        let noDecision = try reader.call("POST", "/v1/rp/reviews/\(caseID)/decision", ["decision": "reject", "reason": "not allowed"])
        XCTAssertEqual(noDecision.status, 403)
        XCTAssertEqual(noDecision.body["error"]?["long_error_code"], 1132)
        XCTAssertEqual(try reader.call("GET", "/v1/rp/verifications/\(kycRun)").body["verification"]?["outcome"], "pending_review", "still undecided")

        // 9. The bank's reviewer approves; the signed review.resolved arrives; the read API agrees.
        let reviewerReason = "Selfie compared with the passport portrait by hand"
        let decided = try bank.call("POST", "/v1/rp/reviews/\(caseID)/decision", ["decision": "approve", "reason": .string(reviewerReason)])
        XCTAssertEqual(decided.status, 200, "\(decided.body)")
        XCTAssertTrue(receiver.wait(timeout: 20) { $0.count >= 3 }, "no review.resolved: \(server.serverLog().suffix(1500))")
        let resolved = try accept(try delivery(2))
        XCTAssertEqual(resolved.type, .reviewResolved)
        XCTAssertEqual(resolved.data["review_id"]?.stringValue, caseID)
        XCTAssertEqual(resolved.data["decision"], "approve")
        XCTAssertEqual(resolved.data["outcome"], "completed")
        XCTAssertEqual(resolved.data["run_id"]?.stringValue, kycRun)
        XCTAssertEqual(resolved.data["flow"], "idv.postlogin.kyc")
        XCTAssertEqual(Set(try XCTUnwrap(resolved.data.objectValue).keys), ["flow", "run_id", "outcome", "review_id", "decision"])
        XCTAssertEqual(try bank.call("GET", "/v1/rp/verifications/\(kycRun)").body["verification"]?["outcome"], resolved.data["outcome"])
        usleep(500_000)
        XCTAssertEqual(receiver.received.count, 3, "each event once")

        // 10. Nothing personal or secret in the delivery log, the bodies or the server's log.
        let log = try deliveries()
        XCTAssertEqual(log.count, 3)
        for row in log { XCTAssertEqual(row["state"], "delivered"); XCTAssertEqual(row["endpoint_id"]?.stringValue, endpointID) }
        XCTAssertEqual(server.stop(), 0)
        let banned = [info.surname, info.givenName, info.documentNumber, try XCTUnwrap(info.dateOfBirth), secret, bank.credentials,
                      reporting.credentials, Self.password, activationCode, firstSessionToken, try XCTUnwrap(kycUser.token),
                      activationLinkToken, kycLinkToken, reviewerReason].filter { $0.count >= 4 }
        XCTAssertGreaterThanOrEqual(banned.count, 13)
        let texts = [("the delivery log", log.description), ("the server log", server.serverLog())]
            + receiver.received.map { ("a delivered body", String(decoding: $0.body, as: UTF8.self)) }
        for (place, text) in texts {
            for b in banned { XCTAssertFalse(text.contains(b), "\(place) contains '\(b)'") }
        }
    }
}
