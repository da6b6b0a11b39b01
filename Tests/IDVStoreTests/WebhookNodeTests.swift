import Foundation
import IDVCore
import IDVTestSupport
import IDVWebhooks
import XCTest

/// The webhook outbox on PostgreSQL with several `idvd` nodes delivering at once: every event is
/// delivered exactly once in all (claims `FOR UPDATE SKIP LOCKED` with a lease), by both nodes
/// sharing the work, each signed with the endpoint's secret.
final class WebhookNodeTests: XCTestCase {
    private var databases: [String] = []
    private var clusters: [Cluster] = []
    let password = "correct horse 1"

    override func tearDown() {
        clusters.forEach { $0.nodes.forEach { $0.kill() } }
        clusters.removeAll()
        databases.forEach(ScratchPostgres.drop)
        databases.removeAll()
    }

    func testTwoNodesDeliverEachOfThirtyEventsExactlyOnce() throws {
        let server = try ScratchPostgres.require()
        let url = try ScratchPostgres.freshDatabase()
        databases.append(url)
        let c = try Cluster(url: url, password: server.password, settings: ["webhooks.poll_ms": "50", "webhooks.batch": "1"])
        clusters.append(c)
        // A slow receiver (0.1 s an answer) keeps a node busy, so the other claims the next ones.
        let receiver = try WebhookReceiver(delay: 0.1)
        // The events are made on a node that does not deliver; they wait in the outbox.
        let producer = try XCTUnwrap(c.start(1, settings: ["webhooks.deliver": "false"]).first)
        let added = try c.admin(["webhook", "add", "--url", receiver.url])
        XCTAssertEqual(added.status, 0, added.stderr)
        let secret = try XCTUnwrap(added.json?["secret"]?.stringValue)
        let code = try c.createUser("nina")
        let client = producer.client()
        try client.startSession()
        for _ in 0..<8 {
            guard let ch = client.last?.challenge else { break }
            let r = try client.answer(try XCTUnwrap(ch.answer(user: "nina", code: code, password: password), "unexpected \(ch.name)"))
            if r.event?.name == WireName.onUserLoggedIn { break }
        }
        XCTAssertEqual(client.last?.event?.name, WireName.onUserLoggedIn)
        // Thirty opt-outs without a template: each ends at once with one verification.decided event.
        for _ in 0..<30 {
            let r = try client.call("POST", "/v1/flows/idv.postlogin.optout", JSONEncoder().encode(WireFlowStart(payload: .emptyObject)))
            XCTAssertEqual(r.event?.status.statusCode, 600, "status \(r.status) code \(r.code)")
        }
        usleep(300_000)
        XCTAssertEqual(receiver.received.count, 0, "the producer node does not deliver")
        let before = try XCTUnwrap(c.admin(["webhook", "deliveries", "--state", "pending", "--limit", "100"]).json?.arrayValue)
        XCTAssertEqual(before.count, 30)

        // Two delivering nodes start together and drain the outbox.
        let deliverers = try c.start(2)
        XCTAssertTrue(receiver.wait(timeout: 60) { Set($0.compactMap { $0.headers["idv-event-id"] }).count >= 30 },
                      "got \(receiver.received.count); \(deliverers.map { $0.log().suffix(800) })")
        usleep(1_500_000)   // any duplicate would arrive by now
        let got = receiver.received
        let ids = got.compactMap { $0.headers["idv-event-id"] }
        XCTAssertEqual(ids.count, 30, "an event was delivered more than once")
        XCTAssertEqual(Set(ids).count, 30)
        for r in got {
            XCTAssertNoThrow(try WebhookSigner.verify(header: r.headers["idv-signature"] ?? "", body: r.body, secret: secret,
                                                      now: Int(Date().timeIntervalSince1970)))
        }
        // Both nodes did part of the work (and their outbox statements, the retention purge included, all ran).
        for (i, n) in deliverers.enumerated() {
            XCTAssertFalse(n.log().contains("webhook outbox purge failed") || n.log().contains("webhook delivery failed"), n.log().suffix(1500).description)
            let delivered = n.log().components(separatedBy: "\"result\":\"delivered\"").count - 1
            XCTAssertGreaterThan(delivered, 0, "node \(i) delivered nothing")
        }
        let log = try XCTUnwrap(c.admin(["webhook", "deliveries", "--limit", "100"]).json?.arrayValue)
        XCTAssertEqual(log.count, 30)
        XCTAssertTrue(log.allSatisfy { $0["state"] == "delivered" && $0["attempts"]?.intValue == 1 }, "\(log.prefix(3))")
    }
}
