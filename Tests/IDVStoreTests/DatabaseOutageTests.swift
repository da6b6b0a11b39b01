import Foundation
import IDVCore
import IDVTestSupport
import IDVTools
import XCTest

/// A PostgreSQL outage under load (#38): two real `idvd` nodes on a throw-away cluster of their own
/// (`scripts/pg-scratch`), clients creating sessions and polling them on both nodes, the database
/// server stopped for 5 s and started again. During the outage every refused request is 503 with
/// code 1038 and Retry-After — never 500 — and `/readyz` turns 503 within seconds; after it, `/readyz`
/// is 200 again within seconds, requests succeed, every session a client was given (a 201 with its
/// token) still answers, and the audit chain verifies: nothing acknowledged was lost, nothing half written.
final class DatabaseOutageTests: XCTestCase {
    /// A cluster of this test's own (the others share one that must not go down).
    struct OwnCluster {
        let dir: String
        let url: String
        let password: String
        let script = ScratchPostgres.packageRoot.appendingPathComponent("scripts/pg-scratch").path

        static func start() throws -> OwnCluster {
            let out = try run(ScratchPostgres.packageRoot.appendingPathComponent("scripts/pg-scratch").path, ["start", "--owner", String(getpid())])
            var values: [String: String] = [:]
            for line in out.split(separator: "\n") {
                if let eq = line.firstIndex(of: "=") { values[String(line[..<eq])] = String(line[line.index(after: eq)...]) }
            }
            guard let dir = values["PG_SCRATCH_DIR"], let url = values["PG_SCRATCH_URL"], let pwFile = values["PG_SCRATCH_PASSWORD_FILE"],
                  let pw = try? String(contentsOfFile: pwFile, encoding: .utf8) else {
                throw ScratchPostgres.Unavailable(description: "scripts/pg-scratch start printed: \(out)")
            }
            return OwnCluster(dir: dir, url: url, password: pw.trimmingCharacters(in: .whitespacesAndNewlines))
        }

        func down() throws { _ = try Self.run(script, ["down", dir, "fast"]) }
        func up() throws { _ = try Self.run(script, ["up", dir]) }
        func stop() { _ = try? Self.run(script, ["stop", dir]) }

        @discardableResult
        static func run(_ tool: String, _ args: [String]) throws -> String {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: tool)
            p.arguments = args
            let out = Pipe(), err = Pipe()
            p.standardOutput = out
            p.standardError = err
            try p.run()
            let o = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw ScratchPostgres.Unavailable(description: "\(tool) \(args.first ?? ""): \(e.suffix(600))") }
            return o
        }
    }

    /// What the load clients saw, shared between their threads.
    final class Tally: @unchecked Sendable {
        // @unchecked: every field is read and written under `lock`.
        private let lock = NSLock()
        private(set) var statuses: [Int: Int] = [:]
        private(set) var codes: [Int: Int] = [:]
        private(set) var acknowledged: [(port: Int, token: String)] = []
        private(set) var missingRetryAfter = 0
        private(set) var transportErrors = 0

        func record(_ r: LoopbackHTTPClient.Response) {
            let env = try? JSONDecoder().decode(WireEnvelope.self, from: r.body)
            lock.withLock {
                statuses[r.status, default: 0] += 1
                if let c = env?.error?.longErrorCode, c != 0 { codes[c, default: 0] += 1 }
                if r.status == 503 && r.headers["retry-after"] == nil { missingRetryAfter += 1 }
            }
        }
        func acknowledge(port: Int, token: String) { lock.withLock { acknowledged.append((port, token)) } }
        func transportError() { lock.withLock { transportErrors += 1 } }
    }

    func testOutageIs503AndNothingAcknowledgedIsLost() throws {
        let pg: OwnCluster
        do { pg = try OwnCluster.start() } catch {
            if TestData.underCI { XCTFail("PostgreSQL is required under CI: \(error)") }
            throw TestData.missing("no PostgreSQL for the outage test: \(error)")
        }
        defer { pg.stop() }
        let cluster = try Cluster(url: pg.url, password: pg.password, settings: ["db.pool_size": "4", "limits.sessions_per_client": "0"])
        defer { cluster.stopAll() }
        let nodes = try cluster.start(2)
        for n in nodes { XCTAssertEqual(try readyStatus(n.port), 200, n.log().suffix(800).description) }

        let tally = Tally()
        let stop = ManagedFlag()
        let group = DispatchGroup()
        for i in 0..<4 {
            let port = nodes[i % 2].port
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let http = LoopbackHTTPClient(port: port)
                var mine: [String] = []
                while !stop.isSet {
                    do {
                        let r = try http.json("POST", "/v1/sessions", Data(#"{"sdk_version":"outage-test"}"#.utf8))
                        tally.record(r)
                        if r.status == 201, let env = try? JSONDecoder().decode(WireEnvelope.self, from: r.body), let t = env.session?.token {
                            tally.acknowledge(port: port, token: t)
                            mine.append(t)
                        }
                        for t in mine.suffix(2) { tally.record(try http.json("GET", "/v1/session", nil, bearer: t)) }
                    } catch {
                        tally.transportError()
                        http.disconnect()
                    }
                    usleep(50_000)
                }
            }
        }

        sleep(2)
        let before = tally.acknowledged.count
        XCTAssertGreaterThan(before, 0, "sessions were created before the outage")
        let downAt = Date()
        try pg.down()
        // /readyz turns 503 within seconds on both nodes.
        for n in nodes {
            let t = try waitForReady(n.port, status: 503, timeout: 10)
            XCTAssertLessThan(t - downAt.timeIntervalSince1970, 5, "node \(n.port) reported not ready within 5 s of the outage")
            print(String(format: "outage: node %d /readyz 503 after %.2f s", n.port, t - downAt.timeIntervalSince1970))
        }
        let notReady = try readyBody(nodes[0].port)
        XCTAssertEqual(notReady?["status"]?.stringValue, "not_ready")
        XCTAssertEqual(notReady?["checks"]?["database"]?.stringValue, "unreachable")
        sleep(3)                                     // ~5 s down in all
        let upAt = Date()
        try pg.up()
        for n in nodes {
            let t = try waitForReady(n.port, status: 200, timeout: 20)
            XCTAssertLessThan(t - upAt.timeIntervalSince1970, 10, "node \(n.port) ready again within 10 s of the database's return")
            print(String(format: "outage: node %d /readyz 200 again %.2f s after the database's return", n.port, t - upAt.timeIntervalSince1970))
        }
        let afterRecovery = tally.acknowledged.count
        sleep(2)
        stop.set()
        group.wait()

        print("outage: statuses \(tally.statuses.sorted { $0.key < $1.key }), acknowledged sessions \(tally.acknowledged.count)")
        XCTAssertEqual(tally.statuses[500, default: 0], 0, "no 500 during the outage: \(tally.statuses)")
        XCTAssertGreaterThan(tally.statuses[503, default: 0], 0, "the outage was seen: \(tally.statuses)")
        XCTAssertEqual(Set(tally.statuses.keys).subtracting([200, 201, 503]), [], "only 200/201/503: \(tally.statuses)")
        XCTAssertEqual(Set(tally.codes.keys), [IDVErrorCode.storeUnavailable.rawValue], "every refusal is 1038: \(tally.codes)")
        XCTAssertEqual(tally.missingRetryAfter, 0, "every 503 carries Retry-After")
        XCTAssertEqual(tally.transportErrors, 0, "no connection was dropped")
        XCTAssertGreaterThan(tally.acknowledged.count, afterRecovery, "sessions are created again after the outage")

        // Every acknowledged session answers, on the node that created it and on the other.
        var lost = 0
        for (i, a) in tally.acknowledged.enumerated() {
            let other = nodes.first { $0.port != a.port }!.port
            let r = try LoopbackHTTPClient(port: i % 2 == 0 ? a.port : other).json("GET", "/v1/session", nil, bearer: a.token)
            if r.status != 200 { lost += 1 }
        }
        XCTAssertEqual(lost, 0, "of \(tally.acknowledged.count) acknowledged sessions, \(lost) do not answer")
        let audit = try cluster.verifyAudit()
        XCTAssertTrue(audit.valid, "the audit chain verifies after the outage (\(audit.entries) entries)")
        // The refusals were counted by reason.
        let metrics = try LoopbackHTTPClient(port: nodes[0].port).request("GET", "/metrics")
        let text = String(decoding: metrics.body, as: UTF8.self)
        let unreachable = text.split(separator: "\n").first { $0.hasPrefix("idvd_store_unavailable_total{reason=\"unreachable\"}") }
        XCTAssertNotNil(unreachable)
        XCTAssertNotEqual(unreachable.map { String($0.split(separator: " ").last ?? "0") }, "0", text)
    }

    // MARK: Helpers

    final class ManagedFlag: @unchecked Sendable {
        // @unchecked: `value` is read and written under `lock`.
        private let lock = NSLock()
        private var value = false
        var isSet: Bool { lock.withLock { value } }
        func set() { lock.withLock { value = true } }
    }

    func readyStatus(_ port: Int) throws -> Int { try LoopbackHTTPClient(port: port).request("GET", "/readyz").status }

    func readyBody(_ port: Int) throws -> JSONValue? {
        try JSONDecoder().decode(JSONValue.self, from: LoopbackHTTPClient(port: port).request("GET", "/readyz").body)
    }

    /// Polls `/readyz` every 100 ms until it answers `status`; returns when (Unix seconds).
    func waitForReady(_ port: Int, status: Int, timeout: TimeInterval) throws -> TimeInterval {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? readyStatus(port)) == status { return Date().timeIntervalSince1970 }
            usleep(100_000)
        }
        XCTFail("/readyz on \(port) did not answer \(status) within \(timeout) s")
        return Date().timeIntervalSince1970
    }
}
