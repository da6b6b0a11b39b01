import Foundation
import IDVCore
import IDVServer
import XCTest

/// A slow request must not hold up other connections: its handler runs on a worker thread while
/// libmicrohttpd's pool thread goes on serving (HTTPServer, `http.workers`).
final class SlowRequestTests: XCTestCase {
    /// One libmicrohttpd pool thread (`http.threads = 1`) and a production Argon2id hash
    /// (opslimit 3, 64 MiB, ~0.3 s) in flight: a `/metrics` probe on a second connection is answered
    /// while the hash runs, and sees both requests in flight. Before handlers were moved off the pool
    /// thread, that single thread was busy hashing and the probe was only read after the answer
    /// (it then saw itself alone). A try in which the hash ended before the probe came proves nothing
    /// and is repeated with a shorter delay.
    func testQuickRouteIsAnsweredWhileAPasswordHashRunsOnTheOnlyPoolThread() throws {
        var proven = false
        var delayMicroseconds: UInt32 = 60_000
        for _ in 1...5 where !proven {
            let server = try ServerProcess(settings: ["argon2.opslimit": "3", "argon2.memlimit_kib": "65536", "http.threads": "1"])
            try server.start()
            let api = try server.sendFirstPasswordUnread(user: "ivan", password: "worker threads 7")
            usleep(delayMicroseconds)
            let probe = try LoopbackHTTPClient(port: server.port).json("GET", "/metrics", nil, bearer: nil)
            XCTAssertEqual(probe.status, 200)
            let text = String(decoding: probe.body, as: UTF8.self)
            let gauge = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("idvd_http_requests_in_flight ") })
            let inFlight = try XCTUnwrap(Int(gauge.split(separator: " ")[1]))
            // The slow answer still arrives whole and correct.
            let resp = try api.http.readResponse()
            XCTAssertEqual(resp.status, 200)
            XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: resp.body).event?.name, "onUserLoggedIn")
            proven = inFlight >= 2   // the probe itself and the hashing answer
            delayMicroseconds /= 2
            XCTAssertEqual(server.stop(signal: SIGTERM), 0)
        }
        XCTAssertTrue(proven, "in 5 tries the probe never ran while the password was being hashed")
    }
}
