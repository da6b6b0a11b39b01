import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
@testable import IDVHTTP
import IDVReaders
@testable import IDVStoreSQLite
import IDVTools
import IDVServerTestSupport
import XCTest

/// A slow request must not hold up other connections: its handler runs on a worker thread while
/// libmicrohttpd's pool thread goes on serving (HTTPServer, `http.workers`).
///
/// Each test races a probe against production Argon2id hashes (opslimit 3, 64 MiB, ~0.3 s). A try in
/// which the hashing ended before the probe came proves nothing; it is repeated with half the delay.
final class SlowRequestTests: XCTestCase {
    /// One libmicrohttpd pool thread (`http.threads = 1`) with a hash in flight: a `/metrics` probe on
    /// a second connection is answered while the hash runs and sees both requests in flight. Before
    /// handlers moved off the pool thread, that single thread was busy hashing and read the probe
    /// only after the answer (the probe then saw itself alone).
    func testQuickRouteIsAnsweredWhileAPasswordHashRunsOnTheOnlyPoolThread() throws {
        let proven = try Self.provenWithinFiveTries(settings: ["http.threads": "1"], users: ["ivan"]) { gauges in
            gauges["idvd_http_requests_in_flight"] ?? 0 >= 2   // the probe itself and the hashing answer
        }
        XCTAssertTrue(proven, "in 5 tries the probe never ran while the password was being hashed")
    }

    /// One worker thread (`http.workers = 1`) and two hashes sent at once: the second waits for the
    /// worker, and `/metrics` shows it as `idvd_http_requests_queued 1` while the first hashes.
    func testRequestsBeyondTheWorkersWaitAndAreCountedAsQueued() throws {
        let proven = try Self.provenWithinFiveTries(settings: ["http.workers": "1"], users: ["jane", "karl"]) { gauges in
            let queued = gauges["idvd_http_requests_queued"] ?? -1
            XCTAssertTrue((0...1).contains(queued), "only the second hash can wait, got \(queued)")
            return queued == 1
        }
        XCTAssertTrue(proven, "in 5 tries the second hash was never seen waiting for the worker")
    }

    /// Starts a server with production Argon2id and `settings`, sends every user's first password at
    /// once, probes `/metrics` after a delay, checks that every answer then arrives whole and correct,
    /// and asks `proves` about the probe's unlabelled `idvd_http_requests_*` gauges. Up to five tries.
    static func provenWithinFiveTries(settings: [String: String], users: [String],
                                      proves: ([String: Int]) throws -> Bool) throws -> Bool {
        var delayMicroseconds: UInt32 = 60_000
        for _ in 1...5 {
            let server = try ServerProcess(settings: ["argon2.opslimit": "3", "argon2.memlimit_kib": "65536"].merging(settings) { $1 })
            try server.start()
            let logins = try users.map { try server.firstPasswordRequest(user: $0, password: "slow hash of \($0) 1") }
            for (api, request) in logins { try api.http.writeAll(request) }
            usleep(delayMicroseconds)
            let probe = try LoopbackHTTPClient(port: server.port).json("GET", "/metrics", nil, bearer: nil)
            XCTAssertEqual(probe.status, 200)
            var gauges: [String: Int] = [:]
            for line in String(decoding: probe.body, as: UTF8.self).split(separator: "\n")
                where line.hasPrefix("idvd_http_requests_") && !line.contains("{") {
                let f = line.split(separator: " ")
                if f.count == 2, let v = Int(f[1]) { gauges[String(f[0])] = v }
            }
            for (api, _) in logins {
                let resp = try api.http.readResponse()
                XCTAssertEqual(resp.status, 200)
                XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: resp.body).event?.name, "onUserLoggedIn")
            }
            XCTAssertEqual(server.stop(signal: SIGTERM), 0)
            if try proves(gauges) { return true }
            delayMicroseconds /= 2
        }
        return false
    }
}
