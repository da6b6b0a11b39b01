import Foundation
import IDVCore
import IDVCrypto
@testable import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVStoreSQLite
import IDVTestSupport
import IDVServerTestSupport
import IDVTools
import IDVWebhooks
import XCTest

/// Webhooks end to end (docs/WEBHOOKS.md): real `idvd serve` processes and a real HTTP receiver on
/// loopback — events from real flows arrive signed, once each, with unique ids; a delivery that
/// fails while the receiver is down is delivered after an `idvd` restart; failed attempts back off
/// exponentially; nothing personal reaches the delivery log or the server log.
final class WebhookTests: XCTestCase {
    static let password = "correct horse 42"

    /// `idvd admin webhook add --url URL`: the endpoint id and its secret (printed once).
    func addEndpoint(_ server: ServerProcess, url: String, events: String? = nil) throws -> (id: String, secret: String) {
        var args = ["webhook", "add", "--url", url]
        if let events { args += ["--events", events] }
        let out = try server.admin(args)
        return (try XCTUnwrap(out["endpoint_id"]?.stringValue), try XCTUnwrap(out["secret"]?.stringValue))
    }

    func deliveries(_ server: ServerProcess) throws -> [JSONValue] {
        try XCTUnwrap(server.admin(["webhook", "deliveries", "--limit", "1000"]).arrayValue)
    }

    func logIn(_ server: ServerProcess, _ user: String) throws -> API {
        let code = try server.createUser(user)
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(try api.answer(["password": .string(Self.password)]).event?.name, "onUserLoggedIn")
        return api
    }

    /// Polls `body` until it returns true or `timeout` passes.
    func eventually(_ timeout: Double, _ body: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try body() { return true }
            usleep(100_000)
        }
        return try body()
    }

    /// Every key a delivered event may carry: ids, codes, types — nothing personal.
    static let allowedDataKeys: Set<String> = [
        "flow", "idv_workflow", "run_id", "idv_audit_transaction_id", "outcome", "success", "long_error_code", "status_code",
        "document_status", "verdict", "consent_id", "consent_kind", "granted", "consent_text_version", "template_model",
        "review_id", "decision",
    ]

    func testRealOptInAndOptOutDeliverSignedEventsOnceEachWithUniqueIDsAndNothingPersonal() throws {
        try RealImages.requireModels()
        let katie = try RealImages.frames("katie_live")
        let receiver = try WebhookReceiver()
        let server = try ServerProcess(settings: ["webhooks.poll_ms": "100"])
        try server.start()
        let (endpoint, secret) = try addEndpoint(server, url: receiver.url)
        XCTAssertTrue(secret.hasPrefix("whsec_"))
        XCTAssertFalse(try server.admin(["webhook", "list"]).description.contains(secret), "webhook list must not show the secret")

        let api = try logIn(server, "kate")
        // Opt-in (seed 004) with real frames: consent given, template created, the run decided.
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": .string(Self.password)]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        try api.answer(["is_confirm": true, "use_back_camera": false])
        XCTAssertEqual(try api.uploadFrames(katie).challenge?.name, "onIDVOptInCapturedFrameConfirmation", server.serverLog())
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100)
        // Opt-out: template deleted, consent withdrawn, the run decided.
        try api.startFlow("idv.postlogin.optout")
        XCTAssertEqual(try api.answer(["password": .string(Self.password)]).event?.status.statusCode, 100)

        XCTAssertTrue(receiver.wait(timeout: 30) { $0.count >= 6 }, "got \(receiver.received.count) deliveries; log: \(server.serverLog().suffix(2000))")
        usleep(500_000)   // nothing more (no duplicate) arrives
        let got = receiver.received
        XCTAssertEqual(got.count, 6)
        var ids = Set<String>()
        var types: [String: Int] = [:]
        var decided: [JSONValue] = []
        for r in got {
            XCTAssertEqual(r.method, "POST")
            XCTAssertEqual(r.path, "/hooks/idv")
            XCTAssertEqual(r.headers["content-type"], "application/json")
            let sig = try XCTUnwrap(r.headers["idv-signature"])
            XCTAssertNoThrow(try WebhookSigner.verify(header: sig, body: r.body, secret: secret, now: Int(Date().timeIntervalSince1970)))
            XCTAssertThrowsError(try WebhookSigner.verify(header: sig, body: r.body + Data(" ".utf8), secret: secret, now: Int(Date().timeIntervalSince1970)))
            XCTAssertThrowsError(try WebhookSigner.verify(header: sig, body: r.body, secret: secret + "x", now: Int(Date().timeIntervalSince1970)))
            let e = try JSONDecoder().decode(WebhookEventEnvelope.self, from: r.body)
            XCTAssertEqual(r.headers["idv-event-id"], e.id)
            XCTAssertEqual(r.headers["idv-event-type"], e.type.rawValue)
            XCTAssertNotNil(UUID(uuidString: e.id), "event id \(e.id) is a UUID")
            XCTAssertTrue(ids.insert(e.id).inserted, "event id \(e.id) delivered twice")
            XCTAssertEqual(e.userID, "kate")
            types[e.type.rawValue, default: 0] += 1
            let keys = Set(try XCTUnwrap(e.data.objectValue).keys)
            XCTAssertTrue(keys.isSubset(of: Self.allowedDataKeys), "unexpected keys \(keys.subtracting(Self.allowedDataKeys))")
            let text = String(decoding: r.body, as: UTF8.self)
            for banned in [Self.password, "score", "portrait", "image", "frame", "embedding", "name\""] {
                XCTAssertFalse(text.contains(banned), "a delivered body contains '\(banned)': \(text)")
            }
            XCTAssertLessThan(r.body.count, 1024)
            if e.type == .verificationDecided { decided.append(e.data) }
        }
        XCTAssertEqual(types, ["consent.changed": 2, "template.created": 1, "template.deleted": 1, "verification.decided": 2])
        XCTAssertEqual(Set(decided.compactMap { $0["outcome"]?.stringValue }), ["template_created", "template_erased"])
        XCTAssertEqual(Set(decided.compactMap { $0["flow"]?.stringValue }), [FlowName.optIn, FlowName.optOut])

        // A receiver's own check, as docs/WEBHOOKS.md shows it: `idvd webhook verify` on the raw body.
        let first = got[0]
        func verifyCLI(_ body: Data, secret: String) throws -> Int32 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: try IDVDBinary.path())
            p.arguments = ["webhook", "verify", "--header", first.headers["idv-signature"] ?? ""]
            p.environment = ["IDVD_WEBHOOK_SECRET": secret]
            let input = Pipe()
            p.standardInput = input
            p.standardOutput = Pipe()
            try p.run()
            input.fileHandleForWriting.write(body)
            try input.fileHandleForWriting.close()
            p.waitUntilExit()
            return p.terminationStatus
        }
        XCTAssertEqual(try verifyCLI(first.body, secret: secret), 0)
        XCTAssertEqual(try verifyCLI(first.body, secret: "whsec_wrong"), 1)

        // The delivery log: one delivered row per event, attempt 1, status 200; no bodies, no secret.
        let log = try deliveries(server)
        XCTAssertEqual(log.count, 6)
        XCTAssertEqual(Set(log.compactMap { $0["event_id"]?.stringValue }), ids)
        for row in log {
            XCTAssertEqual(row["state"], "delivered")
            XCTAssertEqual(row["attempts"]?.intValue, 1)
            XCTAssertEqual(row["last_status"]?.intValue, 200)
            XCTAssertEqual(row["endpoint_id"]?.stringValue, endpoint)
        }
        let logText = log.description
        XCTAssertFalse(logText.contains(secret))
        XCTAssertFalse(logText.contains("\"data\""))
        // /metrics: outbox drained, six delivered attempts.
        let metrics = String(decoding: try LoopbackHTTPClientShim.get(port: server.port, "/metrics"), as: UTF8.self)
        XCTAssertTrue(metrics.contains("idvd_webhook_outbox_depth 0"), metrics)
        XCTAssertTrue(metrics.contains("idvd_webhook_deliveries_total{result=\"delivered\"} 6"), metrics)
        XCTAssertEqual(server.stop(), 0)
        // The server log names deliveries by id; never the secret, a body or the receiver's URL.
        let serverLog = server.serverLog()
        XCTAssertTrue(serverLog.contains("webhook delivery"))
        for banned in [secret, "whsec_", receiver.url, "\"data\":{", Self.password] {
            XCTAssertFalse(serverLog.contains(banned), "the server log contains '\(banned)'")
        }
    }

    func testAnEventUndeliveredWhileTheReceiverIsDownIsDeliveredAfterAnIdvdRestart() throws {
        let port = try WebhookReceiver.freePort()
        let server = try ServerProcess(settings: ["webhooks.poll_ms": "100", "webhooks.retry_base_seconds": "1", "webhooks.retry_max_seconds": "2"])
        try server.start()
        let (_, secret) = try addEndpoint(server, url: "http://127.0.0.1:\(port)/hooks/idv", events: "verification.decided")
        let api = try logIn(server, "dora")
        // Opt-out with no template ends at once (600): one verification.decided event.
        XCTAssertEqual(try api.startFlow("idv.postlogin.optout").event?.status.statusCode, 600)
        XCTAssertTrue(try eventually(20) {
            guard let row = try deliveries(server).first else { return false }
            return (row["attempts"]?.intValue ?? 0) >= 1 && row["last_error"] == "connection_refused"
        }, "no failed attempt recorded: \(String(describing: try? deliveries(server)))")
        let pending = try XCTUnwrap(try deliveries(server).first)
        XCTAssertEqual(pending["state"], "pending")
        let eventID = try XCTUnwrap(pending["event_id"]?.stringValue)
        XCTAssertEqual(server.stop(), 0)

        // The receiver comes up while idvd is down: nothing arrives until idvd is back.
        let receiver = try WebhookReceiver(port: port)
        usleep(1_500_000)
        XCTAssertEqual(receiver.received.count, 0)
        try server.start()
        XCTAssertTrue(receiver.wait(timeout: 20) { !$0.isEmpty }, "not delivered after the restart: \(server.serverLog().suffix(1500))")
        let r = receiver.received[0]
        let e = try JSONDecoder().decode(WebhookEventEnvelope.self, from: r.body)
        XCTAssertEqual(e.id, eventID)
        XCTAssertEqual(e.type, .verificationDecided)
        XCTAssertEqual(e.data["outcome"], "no_template")
        XCTAssertGreaterThanOrEqual(Int(r.headers["idv-delivery-attempt"] ?? "") ?? 0, 2)
        XCTAssertNoThrow(try WebhookSigner.verify(header: r.headers["idv-signature"] ?? "", body: r.body, secret: secret, now: Int(Date().timeIntervalSince1970)))
        XCTAssertTrue(try eventually(10) { try deliveries(server).first?["state"] == "delivered" })
        let row = try XCTUnwrap(try deliveries(server).first)
        XCTAssertGreaterThanOrEqual(row["attempts"]?.intValue ?? 0, 2)
        XCTAssertEqual(row["last_status"]?.intValue, 200)
        usleep(500_000)
        XCTAssertEqual(receiver.received.count, 1, "delivered more than once")
    }

    /// `webhook rotate-secret`: during the overlap a delivery carries a signature under each secret
    /// (the receiver verifies with either); after a rotation without overlap only the newest
    /// verifies; `list` shows the overlap's end; the rotation is audited with no secret in it.
    func testARotatedSecretSignsBesideTheOldOneForTheOverlap() throws {
        let receiver = try WebhookReceiver()
        let server = try ServerProcess(settings: ["webhooks.poll_ms": "100"])
        try server.start()
        let (id, old) = try addEndpoint(server, url: "http://127.0.0.1:\(receiver.port)/hooks", events: "verification.decided")
        let rotated = try server.admin(["webhook", "rotate-secret", id, "--overlap", "3600"])
        let new = try XCTUnwrap(rotated["secret"]?.stringValue)
        XCTAssertNotEqual(new, old)
        XCTAssertTrue(new.hasPrefix("whsec_"))
        let until = try XCTUnwrap(rotated["previous_secret_until"]?.intValue)
        XCTAssertEqual(Double(until), Date().timeIntervalSince1970 + 3600, accuracy: 10)
        XCTAssertEqual(try server.admin(["webhook", "list"]).arrayValue?.first?["previous_secret_until"]?.intValue, until)

        let api = try logIn(server, "rory")
        XCTAssertEqual(try api.startFlow("idv.postlogin.optout").event?.status.statusCode, 600)
        XCTAssertTrue(receiver.wait(timeout: 20) { $0.count == 1 }, "not delivered: \(server.serverLog().suffix(1500))")
        let first = receiver.received[0]
        let header = first.headers["idv-signature"] ?? ""
        XCTAssertEqual(header.components(separatedBy: "v1=").count - 1, 2, header)
        let now = Int(Date().timeIntervalSince1970)
        XCTAssertNoThrow(try WebhookSigner.verify(header: header, body: first.body, secret: new, now: now))
        XCTAssertNoThrow(try WebhookSigner.verify(header: header, body: first.body, secret: old, now: now))

        // Rotated again with no overlap: the newest secret alone signs.
        let newest = try XCTUnwrap(try server.admin(["webhook", "rotate-secret", id, "--overlap", "0"])["secret"]?.stringValue)
        XCTAssertNil(try server.admin(["webhook", "list"]).arrayValue?.first?["previous_secret_until"], "no overlap after a rotation without one")
        XCTAssertEqual(try api.startFlow("idv.postlogin.optout").event?.status.statusCode, 600)
        XCTAssertTrue(receiver.wait(timeout: 20) { $0.count == 2 }, "not delivered: \(server.serverLog().suffix(1500))")
        let second = receiver.received[1]
        let h2 = second.headers["idv-signature"] ?? ""
        XCTAssertEqual(h2.components(separatedBy: "v1=").count - 1, 1, h2)
        XCTAssertNoThrow(try WebhookSigner.verify(header: h2, body: second.body, secret: newest, now: Int(Date().timeIntervalSince1970)))
        XCTAssertThrowsError(try WebhookSigner.verify(header: h2, body: second.body, secret: new, now: Int(Date().timeIntervalSince1970)))

        let audit = try server.admin(["audit", "--limit", "200"])
        let rotations = (audit["entries"]?.arrayValue ?? []).filter { $0["action"] == "admin.webhook_rotate_secret" }
        XCTAssertEqual(rotations.count, 2)
        let text = String(decoding: try JSONEncoder().encode(audit), as: UTF8.self)
        XCTAssertFalse(text.contains(new) || text.contains(old) || text.contains(newest), "a secret in the audit")
        XCTAssertThrowsError(try server.admin(["webhook", "rotate-secret", id, "--overlap", "99999999"])) { e in
            XCTAssertTrue("\(e.localizedDescription)".contains("0…2592000"), "\(e.localizedDescription)")
        }
    }

    func testFailedAttemptsAreRetriedWithExponentialBackOffUntilTheReceiverAccepts() throws {
        // 503 three times, then 200: four attempts of one event, the gaps growing (base 2 s, doubling, equal jitter).
        let receiver = try WebhookReceiver { _, i in i < 3 ? 503 : 200 }
        let server = try ServerProcess(settings: ["webhooks.poll_ms": "50", "webhooks.retry_base_seconds": "2", "webhooks.retry_max_seconds": "60"])
        try server.start()
        _ = try addEndpoint(server, url: receiver.url)
        // The delivery log's --limit is 1…1000: out of range is refused (exit 2), not clamped.
        for bad in ["0", "100000", "x"] {
            XCTAssertThrowsError(try server.admin(["webhook", "deliveries", "--limit", bad]), bad) { e in
                XCTAssertEqual((e as NSError).code, 2, "\(e)")
            }
        }
        let api = try logIn(server, "rita")
        XCTAssertEqual(try api.startFlow("idv.postlogin.optout").event?.status.statusCode, 600)
        XCTAssertTrue(receiver.wait(timeout: 40) { $0.count >= 4 }, "got \(receiver.received.count) attempts")
        let got = receiver.received
        XCTAssertEqual(got.map { $0.headers["idv-delivery-attempt"] }, ["1", "2", "3", "4"])
        XCTAssertEqual(Set(got.map(\.body)).count, 1, "every attempt carries the same body")
        XCTAssertEqual(Set(got.compactMap { $0.headers["idv-event-id"] }).count, 1)
        let gaps = zip(got.dropFirst(), got).map { $0.receivedAt - $1.receivedAt }
        // Back-off b1 ∈ [1, 2] s, b2 ∈ [2, 4], b3 ∈ [4, 8]; times are whole seconds, so each gap is within 1 s of its back-off.
        XCTAssertGreaterThanOrEqual(gaps[1], 1.0, "gaps \(gaps)")
        XCTAssertGreaterThanOrEqual(gaps[2], 3.0, "gaps \(gaps)")
        XCTAssertGreaterThan(gaps[2], gaps[0], "gaps \(gaps)")
        XCTAssertLessThan(gaps[2], 10.0, "gaps \(gaps)")
        XCTAssertTrue(try eventually(10) { try deliveries(server).first?["state"] == "delivered" })
        let row = try XCTUnwrap(try deliveries(server).first)
        XCTAssertEqual(row["attempts"]?.intValue, 4)
        XCTAssertEqual(row["last_status"]?.intValue, 200)
        // The server log recorded the failed attempts by status, never the receiver's answer.
        let log = server.serverLog()
        XCTAssertEqual(log.components(separatedBy: "\"result\":\"retry\"").count - 1, 3, log.suffix(2000).description)
    }
}

/// One GET over a fresh loopback connection (the harness's ``API`` speaks JSON envelopes only).
enum LoopbackHTTPClientShim {
    static func get(port: Int, _ path: String) throws -> Data {
        try IDVTools.LoopbackHTTPClient(port: port).json("GET", path, nil, bearer: nil).body
    }
}
