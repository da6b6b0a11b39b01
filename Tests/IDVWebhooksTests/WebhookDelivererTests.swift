import Foundation
import IDVCore
import IDVCrypto
@testable import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVStoreSQLite
import IDVWebhooks
import IDVTestSupport
import IDVServerTestSupport
import IDVHTTP
import XCTest

/// The delivery worker over a real SQLite outbox with a scripted HTTP client and a manual clock:
/// back-off with jitter inside its bounds, giving up at the max age, claims held by one worker
/// until their lease lapses, signatures a receiver can check, the URL policy.
final class WebhookDelivererTests: XCTestCase {
    /// Answers from a script (then 200), recording every POST.
    final class ScriptedClient: WebhookHTTPClient, @unchecked Sendable {
        let lock = NSLock()
        var script: [WebhookPostResult]
        var posts: [(url: URL, headers: [String: String], body: Data)] = []
        init(_ script: [WebhookPostResult]) { self.script = script }
        func post(url: URL, headers: [String: String], body: Data, timeout: Int) -> WebhookPostResult {
            lock.lock(); defer { lock.unlock() }
            posts.append((url, headers, body))
            return script.isEmpty ? .status(200) : script.removeFirst()
        }
    }

    var dir: URL!
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func fixture(_ settings: WebhookSettings = WebhookSettings()) throws -> (SQLiteStore, TemplateVault, ManualClock, Admin, String) {
        let store = try SQLiteStore(path: dir.appendingPathComponent("idvd.sqlite").path, keyFile: dir.appendingPathComponent("idvd.key").path)
        let vault = try TemplateVault(key: Crypto.randomBytes(32))
        let clock = ManualClock(1_800_000_000)
        var config = ServerConfig()
        config.webhooks = settings
        let admin = Admin(store: store, config: config, crypto: Sodium())
        let added = try admin.addWebhook(url: "https://bank.example/hooks", events: [], vault: vault, now: clock.now())
        return (store, vault, clock, admin, added.secret)
    }

    func event(_ store: SQLiteStore, at t: Int) throws -> String {
        let id = FlowEngine.uuid(Crypto.randomBytes(16))
        let body = Data(#"{"id":"\#(id)","type":"verification.decided"}"#.utf8)
        XCTAssertEqual(try store.enqueueWebhookEvent(WebhookEventRecord(eventID: id, type: .verificationDecided, createdAt: t, userID: "u1",
                                                                        runID: "r1", body: body)), 1)
        return id
    }

    func testBackOffDoublesWithEqualJitterWithinItsBoundsAndIsCapped() {
        var s = WebhookSettings()
        s.retryBaseSeconds = 10
        s.retryMaxSeconds = 100
        XCTAssertEqual(s.backoff(afterAttempts: 1, unit: 0), 5)
        XCTAssertEqual(s.backoff(afterAttempts: 1, unit: 0.999_999), 10)
        XCTAssertEqual(s.backoff(afterAttempts: 2, unit: 0), 10)
        XCTAssertEqual(s.backoff(afterAttempts: 3, unit: 0.5), 30)
        XCTAssertEqual(s.backoff(afterAttempts: 30, unit: 1), 100)
        XCTAssertEqual(s.backoff(afterAttempts: 30, unit: 0), 50)
        for n in 1...8 {
            let d = s.backoff(afterAttempts: n, unit: Double.random(in: 0..<1))
            let full = min(100, 10 << (n - 1))
            XCTAssertTrue((full / 2)...full ~= d, "attempt \(n): \(d)")
        }
    }

    func testRetriesBackOffThenDeliverSignedAndGiveUpAtMaxAge() throws {
        var settings = WebhookSettings()
        settings.retryBaseSeconds = 10
        settings.maxAgeSeconds = 60
        let (store, vault, clock, _, secret) = try fixture(settings)
        let client = ScriptedClient([.status(503), .failure(.connectionRefused), .status(200)])
        let deliverer = WebhookDeliverer(store: store, vault: vault, settings: settings, client: client, clock: clock, claimant: "a")
        let id = try event(store, at: clock.now())
        XCTAssertEqual(try store.webhookOutboxDepth(), 1)
        XCTAssertEqual(try deliverer.deliverDue(), 1)
        var row = try XCTUnwrap(try store.webhookDeliveries(limit: 10, state: nil, eventID: id).first)
        XCTAssertEqual(row.state, .pending)
        XCTAssertEqual(row.lastStatus, 503)
        XCTAssertEqual(row.lastError, .httpStatus)
        let first = try XCTUnwrap(row.nextAttemptAt) - clock.now()
        XCTAssertTrue((5...10) ~= first, "first retry after \(first) s")
        // Not due yet: nothing is attempted.
        clock.advance(by: first - 1)
        XCTAssertEqual(try deliverer.deliverDue(), 0)
        clock.advance(by: 1)
        XCTAssertEqual(try deliverer.deliverDue(), 1)
        row = try XCTUnwrap(try store.webhookDeliveries(limit: 10, state: nil, eventID: id).first)
        XCTAssertEqual(row.lastError, .connectionRefused)
        XCTAssertNil(row.lastStatus)
        let second = try XCTUnwrap(row.nextAttemptAt) - clock.now()
        XCTAssertTrue((10...20) ~= second, "second retry after \(second) s")
        clock.advance(by: second)
        XCTAssertEqual(try deliverer.deliverDue(), 1)
        row = try XCTUnwrap(try store.webhookDeliveries(limit: 10, state: nil, eventID: id).first)
        XCTAssertEqual(row.state, .delivered)
        XCTAssertEqual(row.attempts, 3)
        XCTAssertEqual(row.deliveredAt, clock.now())
        XCTAssertEqual(try store.webhookOutboxDepth(), 0)
        // Each POST is signed over its own timestamp; the same body every time.
        XCTAssertEqual(client.posts.count, 3)
        for p in client.posts {
            XCTAssertEqual(p.headers["IDV-Event-Id"], id)
            XCTAssertNoThrow(try WebhookSigner.verify(header: p.headers["IDV-Signature"] ?? "", body: p.body, secret: secret, now: clock.now(), tolerance: 60))
        }
        XCTAssertEqual(client.posts.map { $0.headers["IDV-Delivery-Attempt"] }, ["1", "2", "3"])
        // A stale signature is refused by the receiver's check (replay).
        XCTAssertThrowsError(try WebhookSigner.verify(header: client.posts[0].headers["IDV-Signature"] ?? "", body: client.posts[0].body,
                                                      secret: secret, now: clock.now() + 1000))

        // A receiver that never accepts: given up once the next try would pass the max age.
        client.script = Array(repeating: .status(500), count: 20)
        let doomed = try event(store, at: clock.now())
        var attempts = 0
        while try store.webhookDeliveries(limit: 1, state: nil, eventID: doomed).first?.state == .pending, attempts < 20 {
            if let next = try store.webhookDeliveries(limit: 1, state: nil, eventID: doomed).first?.nextAttemptAt, next > clock.now() { clock.set(next) }
            attempts += try deliverer.deliverDue()
        }
        let gaveUp = try XCTUnwrap(try store.webhookDeliveries(limit: 1, state: nil, eventID: doomed).first)
        XCTAssertEqual(gaveUp.state, .failed)
        XCTAssertEqual(gaveUp.lastStatus, 500)
        XCTAssertLessThanOrEqual(try XCTUnwrap(gaveUp.lastAttemptAt) - gaveUp.createdAt, 60)
        XCTAssertGreaterThanOrEqual(gaveUp.attempts, 2)
        XCTAssertEqual(try store.webhookOutboxDepth(), 0)
        // Redelivery makes it pending again, due now.
        let admin = Admin(store: store, config: ServerConfig(), crypto: Sodium())
        XCTAssertEqual(try admin.redeliverWebhookEvent(doomed, now: clock.now())["deliveries"], 1)
        XCTAssertEqual(try store.webhookOutboxDepth(), 1)
        XCTAssertThrowsError(try admin.redeliverWebhookEvent("no-such-event")) { XCTAssertEqual(($0 as? IDVError)?.longErrorCode, 1142) }
    }

    func testRetentionPurgesOldSettledEventsAndKeepsPendingOnes() throws {
        var settings = WebhookSettings()
        settings.retentionSeconds = 3600
        let (store, vault, clock, _, _) = try fixture(settings)
        let client = ScriptedClient([])
        let deliverer = WebhookDeliverer(store: store, vault: vault, settings: settings, client: client, clock: clock, claimant: "a")
        let delivered = try event(store, at: clock.now())
        XCTAssertEqual(try deliverer.deliverDue(), 1)
        clock.advance(by: 100)
        let pending = try event(store, at: clock.now() - 50)
        clock.advance(by: 3600)
        XCTAssertEqual(try deliverer.purgeExpired(), 1)
        XCTAssertNil(try store.webhookEvent(delivered))
        XCTAssertEqual(try store.webhookDeliveries(limit: 10, state: nil, eventID: delivered).count, 0)
        XCTAssertNotNil(try store.webhookEvent(pending), "a pending delivery keeps its event")
        XCTAssertEqual(try store.webhookOutboxDepth(), 1)
    }

    func testAClaimIsHeldByOneWorkerUntilItsLeaseLapses() throws {
        let (store, _, clock, _, _) = try fixture()
        _ = try event(store, at: clock.now())
        let a = try store.claimWebhookDeliveries(now: clock.now(), limit: 10, claimant: "a", leaseSeconds: 30)
        XCTAssertEqual(a.count, 1)
        XCTAssertEqual(try store.claimWebhookDeliveries(now: clock.now(), limit: 10, claimant: "b", leaseSeconds: 30).count, 0)
        clock.advance(by: 30)
        let b = try store.claimWebhookDeliveries(now: clock.now(), limit: 10, claimant: "b", leaseSeconds: 30)
        XCTAssertEqual(b.count, 1)
        // The lapsed claimant's late result is not recorded over the new claim.
        XCTAssertFalse(try store.recordWebhookAttempt(deliveryID: a[0].delivery.deliveryID, claimant: "a", result: .delivered(status: 200, at: clock.now())))
        XCTAssertTrue(try store.recordWebhookAttempt(deliveryID: b[0].delivery.deliveryID, claimant: "b", result: .delivered(status: 204, at: clock.now())))
        XCTAssertEqual(try store.webhookDeliveries(limit: 10, state: .delivered, eventID: nil).count, 1)
    }

    func testEndpointsSubscribeByTypeAndRemovalEndsPendingDeliveries() throws {
        let (store, vault, clock, admin, _) = try fixture()
        let consentOnly = try admin.addWebhook(url: "http://127.0.0.1:9/x", events: [.consentChanged], vault: vault, now: clock.now())
        XCTAssertEqual(try store.enqueueWebhookEvent(WebhookEventRecord(eventID: "e1", type: .consentChanged, createdAt: clock.now(), userID: nil,
                                                                        runID: nil, body: Data("{}".utf8))), 2)
        XCTAssertEqual(try store.enqueueWebhookEvent(WebhookEventRecord(eventID: "e2", type: .templateCreated, createdAt: clock.now(), userID: nil,
                                                                        runID: nil, body: Data("{}".utf8))), 1)
        XCTAssertEqual(try admin.listWebhooks().count, 2)
        _ = try admin.removeWebhook(consentOnly.endpointID)
        let ended = try store.webhookDeliveries(limit: 10, state: .failed, eventID: nil)
        XCTAssertEqual(ended.map(\.lastError), [.endpointRemoved])
        XCTAssertThrowsError(try admin.removeWebhook(consentOnly.endpointID)) { XCTAssertEqual(($0 as? IDVError)?.longErrorCode, 1141) }
        // The secret is sealed under the server's key, bound to its endpoint.
        let ep = try XCTUnwrap(try store.webhookEndpoints().first)
        XCTAssertNoThrow(try vault.open(ep.secret, associatedData: VaultBinding.webhookSecret(endpointID: ep.endpointID)))
        XCTAssertThrowsError(try vault.open(ep.secret, associatedData: VaultBinding.webhookSecret(endpointID: "wh_other")))
    }

    func testRekeyReSealsEndpointSecretsUnderTheNewKey() throws {
        let (store, oldVault, _, admin, secret) = try fixture()
        let newVault = try TemplateVault(key: Crypto.randomBytes(32), previous: [oldVault])
        let report = try admin.rekey(vault: newVault)
        XCTAssertEqual(report.resealed["webhook_endpoints"], 1)
        XCTAssertEqual(report.before.previous["webhook_endpoints"], 1)
        XCTAssertEqual(report.after.current["webhook_endpoints"], 1)
        let ep = try XCTUnwrap(try store.webhookEndpoints().first)
        XCTAssertEqual(ep.secret.keyID, newVault.keyID)
        // The new key alone (the old key file retired) opens the same secret.
        let alone = try TemplateVault(key: Crypto.randomBytes(32))
        XCTAssertThrowsError(try alone.open(ep.secret, associatedData: VaultBinding.webhookSecret(endpointID: ep.endpointID)))
        let opened = try newVault.open(ep.secret, associatedData: VaultBinding.webhookSecret(endpointID: ep.endpointID))
        XCTAssertEqual(String(decoding: opened, as: UTF8.self), secret)
        // A secret under a key the vault does not hold stops the rekey.
        XCTAssertThrowsError(try admin.rekey(vault: alone))
    }

    /// A rekey during a secret rotation's overlap re-seals both secrets and keeps the overlap.
    func testRekeyDuringARotationReSealsBothSecrets() throws {
        let (store, oldVault, clock, admin, secret) = try fixture()
        let id = try XCTUnwrap(try store.webhookEndpoints().first?.endpointID)
        let rotated = try admin.rotateWebhookSecret(id, overlapSeconds: 600, vault: oldVault, now: clock.now())
        XCTAssertEqual(rotated.previousSecretUntil, clock.now() + 600)
        let newVault = try TemplateVault(key: Crypto.randomBytes(32), previous: [oldVault])
        let report = try admin.rekey(vault: newVault)
        XCTAssertEqual(report.before.previous["webhook_endpoints"], 2, "both sealed secrets counted")
        XCTAssertEqual(report.resealed["webhook_endpoints"], 2)
        let ep = try XCTUnwrap(try store.webhookEndpoints().first)
        let binding = VaultBinding.webhookSecret(endpointID: id)
        XCTAssertEqual(String(decoding: try newVault.open(ep.secret, associatedData: binding), as: UTF8.self), rotated.secret)
        let previous = try XCTUnwrap(ep.previousSecret)
        XCTAssertEqual(previous.keyID, newVault.keyID)
        XCTAssertEqual(String(decoding: try newVault.open(previous, associatedData: binding), as: UTF8.self), secret)
        XCTAssertEqual(ep.previousUntil, clock.now() + 600)
        XCTAssertThrowsError(try admin.rotateWebhookSecret("wh_unknown", overlapSeconds: 0, vault: newVault)) { e in
            XCTAssertEqual((e as? IDVError)?.code, .webhookEndpointNotFound)
        }
    }

    /// Events commit with the change they report, and only then: a refused or non-terminal answer
    /// leaves the outbox as it was (the in-process server runs no deliverer: the rows stay pending).
    func testEventsAreWrittenInTheAnswersTransactionAndOnlyForCommittedTerminalChanges() throws {
        let server = try WorkflowServer()
        _ = try Admin(store: server.store, config: server.config, crypto: Sodium())
            .addWebhook(url: "http://127.0.0.1:9/hooks", events: [], vault: server.vault)
        let api = try server.loggedIn("ivy")
        XCTAssertEqual(try server.store.webhookOutboxDepth(), 0, "logging in is no webhook event")
        // Opt-in: the start and a wrong password (asked again) are not terminal: no event.
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": "wrong password 1"]).challenge?.name, "getPassword")
        // A refused answer (a challenge id that is not current) commits nothing.
        let stale = try XCTUnwrap(api.last?.challenge)
        var forged = stale
        forged.challengeID = "not-the-current-one"
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)], to: forged).error?.longErrorCode, 1002)
        XCTAssertEqual(try server.store.webhookOutboxDepth(), 0)
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        let frame = try TestImages.obamaSelfie()
        XCTAssertEqual(try api.captureSelfie(frame).challenge?.name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(try server.store.webhookOutboxDepth(), 0)
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100)
        // The approval committed consent, template and the run's end: three events, one transaction.
        let rows = try server.store.webhookDeliveries(limit: 10, state: .pending, eventID: nil)
        XCTAssertEqual(Set(rows.map(\.eventType)), [.consentChanged, .templateCreated, .verificationDecided])
        XCTAssertEqual(Set(rows.map(\.createdAt)).count, 1)
        let events = try rows.map { try XCTUnwrap(try server.store.webhookEvent($0.eventID)) }
        XCTAssertEqual(Set(events.compactMap(\.runID)).count, 1, "all three name the opt-in run")
        let decided = try JSONDecoder().decode(WebhookEventEnvelope.self, from: try XCTUnwrap(events.first { $0.type == .verificationDecided }).body)
        XCTAssertEqual(decided.data["outcome"], "template_created")
        XCTAssertEqual(decided.data["flow"]?.stringValue, FlowName.optIn)
        XCTAssertEqual(decided.data["success"], true)
        XCTAssertEqual(decided.userID, "ivy")
        // The template-status check only reads: no event.
        XCTAssertEqual(try api.startFlow("idv.template_status").event?.status.statusCode, 100)
        XCTAssertEqual(try server.store.webhookOutboxDepth(), 3)
    }

    /// A run that reset abandons is `reset` in its webhook as in the relying-party API (the IDV
    /// transaction record in the audit says `abandoned`): one outcome vocabulary for the backend.
    func testAResetRunHasOneOutcomeInItsWebhookAndTheReadAPI() throws {
        let server = try WorkflowServer()
        _ = try Admin(store: server.store, config: server.config, crypto: Sodium())
            .addWebhook(url: "http://127.0.0.1:9/hooks", events: [], vault: server.vault)
        let api = try server.loggedIn("ivy")
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.call("POST", "/v1/session/reset").status, 200)
        let rows = try server.store.webhookDeliveries(limit: 10, state: .pending, eventID: nil)
        XCTAssertEqual(rows.map(\.eventType), [.verificationDecided])
        let event = try XCTUnwrap(try server.store.webhookEvent(try XCTUnwrap(rows.first).eventID))
        let decided = try JSONDecoder().decode(WebhookEventEnvelope.self, from: event.body)
        XCTAssertEqual(decided.data["outcome"], "reset")
        let run = try XCTUnwrap(try (server.store as any RelyingPartyStore).flowRun(try XCTUnwrap(event.runID)))
        XCTAssertEqual(run.outcome, .reset)
        XCTAssertEqual(try server.transactions().last?["outcome"], "abandoned")
    }

    func testURLPolicyAllowsHTTPSAndLoopbackHTTPOnly() throws {
        for ok in ["https://bank.example/hooks", "http://127.0.0.1:8080/h", "http://localhost/h", "http://[::1]:9/h", "https://10.0.0.1/h"] {
            XCTAssertNoThrow(try WebhookURLPolicy.check(ok, allowHTTP: false), ok)
        }
        for bad in ["http://bank.example/hooks", "ftp://bank.example/x", "https://user:pw@bank.example/h", "https://bank.example/h#f", "/relative", "http://127.0.0.1.evil.example/"] {
            XCTAssertThrowsError(try WebhookURLPolicy.check(bad, allowHTTP: false), bad) { XCTAssertEqual(($0 as? IDVError)?.longErrorCode, 1140) }
        }
        XCTAssertNoThrow(try WebhookURLPolicy.check("http://bank.example/hooks", allowHTTP: true))
        XCTAssertEqual(HTTPStatus.of(.webhookURLRefused), 400)
    }
}
