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
            let (api, request) = try server.firstPasswordRequest(user: "ivan", password: "worker threads 7")
            try api.http.writeAll(request)
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

    /// One worker thread (`http.workers = 1`) and two production Argon2id hashes sent at once: the
    /// second waits for the worker, and `/metrics` shows it as `idvd_http_requests_queued 1` while
    /// the first hashes; both answers then arrive whole. A try in which the first hash ended before
    /// the probe proves nothing and is repeated with a shorter delay.
    func testRequestsBeyondTheWorkersWaitAndAreCountedAsQueued() throws {
        var proven = false
        var delayMicroseconds: UInt32 = 60_000
        for _ in 1...5 where !proven {
            let server = try ServerProcess(settings: ["argon2.opslimit": "3", "argon2.memlimit_kib": "65536", "http.workers": "1"])
            try server.start()
            let (first, firstRequest) = try server.firstPasswordRequest(user: "jane", password: "first in line 1")
            let (second, secondRequest) = try server.firstPasswordRequest(user: "karl", password: "second in line 2")
            try first.http.writeAll(firstRequest)
            try second.http.writeAll(secondRequest)
            usleep(delayMicroseconds)
            let probe = try LoopbackHTTPClient(port: server.port).json("GET", "/metrics", nil, bearer: nil)
            let gauges = Dictionary(String(decoding: probe.body, as: UTF8.self).split(separator: "\n")
                .filter { $0.hasPrefix("idvd_http_requests_") && !$0.contains("{") }
                .compactMap { line -> (String, Int)? in
                    let f = line.split(separator: " ")
                    return f.count == 2 ? (String(f[0]), Int(f[1]) ?? -1) : nil
                }, uniquingKeysWith: { a, _ in a })
            for api in [first, second] {
                let resp = try api.http.readResponse()
                XCTAssertEqual(resp.status, 200)
                XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: resp.body).event?.name, "onUserLoggedIn")
            }
            let queued = try XCTUnwrap(gauges["idvd_http_requests_queued"])
            XCTAssertLessThanOrEqual(queued, 1, "only the second hash can wait")
            proven = queued == 1
            delayMicroseconds /= 2
            XCTAssertEqual(server.stop(signal: SIGTERM), 0)
        }
        XCTAssertTrue(proven, "in 5 tries the second hash was never seen waiting for the worker")
    }
}
