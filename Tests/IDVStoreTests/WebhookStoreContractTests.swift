import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import XCTest

/// The ``WebhookStore`` contract, on both stores (``PostgresStoreContractTests`` inherits it):
/// subscriptions, claims and leases, a lapsed claimant's late result refused, the delivery log,
/// redelivery, the secret's compare-and-set, retention, endpoint removal.
extension StoreContractTests {
    func testWebhookOutboxContract() throws {
        let s = try makeSubject()
        let ws = try XCTUnwrap(s.store as? any WebhookStore, Self.storeName)
        func box(_ b: UInt8) -> SealedBox { SealedBox(ciphertext: [b, b, b], nonce: [UInt8](repeating: b, count: 24), keyID: "k\(b)") }
        try ws.createWebhookEndpoint(WebhookEndpointRecord(endpointID: "wh_all", url: "https://a.example/h", events: WebhookEventType.allCases,
                                                           secret: box(1), createdAt: 100))
        try ws.createWebhookEndpoint(WebhookEndpointRecord(endpointID: "wh_consent", url: "https://b.example/h", events: [.consentChanged],
                                                           secret: box(2), createdAt: 101))
        XCTAssertEqual(try ws.webhookEndpoints().map(\.endpointID), ["wh_all", "wh_consent"], Self.storeName)
        XCTAssertEqual(try ws.webhookEndpoints().first?.secret, box(1))
        func event(_ id: String, _ type: WebhookEventType, at t: Int) -> WebhookEventRecord {
            WebhookEventRecord(eventID: id, type: type, createdAt: t, userID: "u", runID: "r", body: Data("{\"id\":\"\(id)\"}".utf8))
        }
        XCTAssertEqual(try ws.enqueueWebhookEvent(event("e1", .consentChanged, at: 1000)), 2)
        XCTAssertEqual(try ws.enqueueWebhookEvent(event("e2", .verificationDecided, at: 1001)), 1)
        XCTAssertEqual(try ws.webhookEvent("e1")?.body, Data("{\"id\":\"e1\"}".utf8))
        XCTAssertEqual(try ws.webhookOutboxDepth(), 3)
        // An event that rolls back with its transaction leaves nothing.
        struct Abort: Error {}
        XCTAssertThrowsError(try s.store.withTransaction { try ws.enqueueWebhookEvent(event("gone", .templateCreated, at: 1002)); throw Abort() })
        XCTAssertNil(try ws.webhookEvent("gone"))
        XCTAssertEqual(try ws.webhookOutboxDepth(), 3)

        // Claims: due rows only, each held by one claimant until its lease lapses.
        XCTAssertEqual(try ws.claimWebhookDeliveries(now: 999, limit: 10, claimant: "a", leaseSeconds: 30).count, 0)
        let a = try ws.claimWebhookDeliveries(now: 1001, limit: 2, claimant: "a", leaseSeconds: 30)
        XCTAssertEqual(a.count, 2, Self.storeName)
        XCTAssertEqual(a.map(\.delivery.eventID), ["e1", "e1"])
        XCTAssertEqual(Set(a.map(\.url)), ["https://a.example/h", "https://b.example/h"])
        let b = try ws.claimWebhookDeliveries(now: 1001, limit: 10, claimant: "b", leaseSeconds: 30)
        XCTAssertEqual(b.map(\.delivery.eventID), ["e2"], "b gets only what a does not hold")
        XCTAssertEqual(b.first?.secret, box(1))
        XCTAssertEqual(try ws.claimWebhookDeliveries(now: 1010, limit: 10, claimant: "c", leaseSeconds: 30).count, 0)
        // a records one delivered and one retry; b's lease lapses and c takes e2 over.
        XCTAssertTrue(try ws.recordWebhookAttempt(deliveryID: a[0].delivery.deliveryID, claimant: "a", result: .delivered(status: 200, at: 1002)))
        XCTAssertTrue(try ws.recordWebhookAttempt(deliveryID: a[1].delivery.deliveryID, claimant: "a",
                                                  result: .retry(status: 503, failure: .httpStatus, at: 1002, nextAt: 1100)))
        let c = try ws.claimWebhookDeliveries(now: 1031, limit: 10, claimant: "c", leaseSeconds: 30)
        XCTAssertEqual(c.map(\.delivery.eventID), ["e2"])
        XCTAssertFalse(try ws.recordWebhookAttempt(deliveryID: b[0].delivery.deliveryID, claimant: "b", result: .delivered(status: 200, at: 1032)),
                       "a lapsed claimant's late result is not recorded")
        XCTAssertTrue(try ws.recordWebhookAttempt(deliveryID: c[0].delivery.deliveryID, claimant: "c",
                                                  result: .gaveUp(status: nil, failure: .connectionRefused, at: 1032)))
        // The log: newest first, filters, attempts and errors.
        let log = try ws.webhookDeliveries(limit: 10, state: nil, eventID: nil)
        XCTAssertEqual(log.map(\.eventID), ["e2", "e1", "e1"], Self.storeName)
        let failed = try XCTUnwrap(try ws.webhookDeliveries(limit: 10, state: .failed, eventID: nil).first)
        XCTAssertEqual(failed.lastError, .connectionRefused)
        XCTAssertNil(failed.lastStatus)
        XCTAssertEqual(failed.attempts, 1)
        XCTAssertNil(failed.nextAttemptAt)
        let retry = try XCTUnwrap(try ws.webhookDeliveries(limit: 10, state: .pending, eventID: "e1").first)
        XCTAssertEqual(retry.lastStatus, 503)
        XCTAssertEqual(retry.nextAttemptAt, 1100)
        XCTAssertEqual(try ws.webhookDeliveries(limit: 10, state: .delivered, eventID: nil).first?.deliveredAt, 1002)
        XCTAssertEqual(try ws.webhookOutboxDepth(), 1)
        // Not due before its next attempt.
        XCTAssertEqual(try ws.claimWebhookDeliveries(now: 1099, limit: 10, claimant: "a", leaseSeconds: 30).count, 0)

        // Redelivery: every delivery of the event pending again, due then.
        XCTAssertEqual(try ws.redeliverWebhookEvent(eventID: "e2", at: 2000), 1)
        XCTAssertEqual(try ws.webhookDeliveries(limit: 1, state: nil, eventID: "e2").first?.state, .pending)
        XCTAssertEqual(try ws.redeliverWebhookEvent(eventID: "none", at: 2000), 0)
        // The secrets' compare-and-set; a rotation keeps the previous secret for its overlap, and
        // claims carry it only while the overlap lasts.
        XCTAssertTrue(try ws.setWebhookSecrets(endpointID: "wh_all", expected: box(1), secret: box(3), previous: box(1), previousUntil: 3000))
        XCTAssertFalse(try ws.setWebhookSecrets(endpointID: "wh_all", expected: box(1), secret: box(4), previous: nil, previousUntil: nil))
        let rotated = try XCTUnwrap(try ws.webhookEndpoints().first)
        XCTAssertEqual(rotated.secret, box(3))
        XCTAssertEqual(rotated.previousSecret, box(1), Self.storeName)
        XCTAssertEqual(rotated.previousUntil, 3000)
        XCTAssertEqual(try ws.redeliverWebhookEvent(eventID: "e2", at: 2000), 1)
        let during = try XCTUnwrap(try ws.claimWebhookDeliveries(now: 2000, limit: 10, claimant: "r", leaseSeconds: 30).first { $0.delivery.eventID == "e2" })
        XCTAssertEqual(during.secret, box(3))
        XCTAssertEqual(during.previousSecret, box(1), "inside the overlap: both secrets sign")
        XCTAssertTrue(try ws.recordWebhookAttempt(deliveryID: during.delivery.deliveryID, claimant: "r",
                                                  result: .retry(status: 503, failure: .httpStatus, at: 2000, nextAt: 3500)))
        let after = try XCTUnwrap(try ws.claimWebhookDeliveries(now: 3500, limit: 10, claimant: "r", leaseSeconds: 30).first { $0.delivery.eventID == "e2" })
        XCTAssertNil(after.previousSecret, "past the overlap: the new secret alone")
        XCTAssertTrue(try ws.recordWebhookAttempt(deliveryID: after.delivery.deliveryID, claimant: "r",
                                                  result: .retry(status: 503, failure: .httpStatus, at: 3500, nextAt: 4000)))
        XCTAssertTrue(try ws.setWebhookSecrets(endpointID: "wh_all", expected: box(3), secret: box(3), previous: nil, previousUntil: nil))
        XCTAssertNil(try ws.webhookEndpoints().first?.previousSecret)
        // Removal ends the endpoint's pending deliveries.
        XCTAssertTrue(try ws.deleteWebhookEndpoint("wh_consent"))
        XCTAssertFalse(try ws.deleteWebhookEndpoint("wh_consent"))
        XCTAssertEqual(try ws.webhookDeliveries(limit: 10, state: nil, eventID: "e1").first { $0.endpointID == "wh_consent" }?.lastError, .endpointRemoved)
        // Retention: settled events go with their rows; one with a pending delivery stays.
        XCTAssertEqual(try ws.purgeWebhookEvents(before: 5000, limit: 100), 1, Self.storeName)
        XCTAssertNil(try ws.webhookEvent("e1"))
        XCTAssertEqual(try ws.webhookDeliveries(limit: 10, state: nil, eventID: "e1").count, 0)
        XCTAssertNotNil(try ws.webhookEvent("e2"))
        XCTAssertEqual(try ws.webhookOutboxDepth(), 1)
    }
}
