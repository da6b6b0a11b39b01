import Foundation
import IDVCore
import IDVCrypto
@testable import IDVEngine
import IDVRuntime
@testable import IDVStoreSQLite
import XCTest

/// Reads don't write (#38): polling `GET /v1/session` (``FlowEngine/current(session:)``) moves
/// `last_seen_at` at most once per ``FlowEngine/touchInterval(idleTimeout:)`` — a tenth of the idle
/// timeout — so a polling client is read-only on the database between those writes.
final class SessionPollingTests: XCTestCase {
    var dir: URL!
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-polling-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    static let touch = "UPDATE sessions SET last_seen_at = max(last_seen_at, ?) WHERE session_id = ?"

    func testPollingWritesLastSeenAtOncePerTenthOfTheIdleTimeout() throws {
        var settings = EngineSettings()
        settings.sessionIdleSeconds = 900
        settings.argon2OpsLimit = 1
        settings.argon2MemLimitKiB = 8
        let clock = ManualClock(1_800_000_000)
        let store = try SQLiteStore(path: dir.appendingPathComponent("p.sqlite").path, keyFile: dir.appendingPathComponent("p.key").path)
        defer { store.close() }
        let engine = FlowEngine(store: store, settings: settings, registry: .standard(), metrics: Metrics(),
                                admission: AnalysisLimiter(settings: AnalysisSettings()), crypto: Sodium(), clock: clock)
        XCTAssertEqual(FlowEngine.touchInterval(idleTimeout: 900), 90)
        let token = try XCTUnwrap(engine.startSession(WireSessionStart(), requestID: "r").session.token)
        let created = clock.now()

        store.resetStatementCounts()
        for _ in 0..<30 {          // a poll every 3 s for 87 s: inside the interval
            _ = try engine.current(token: token)
            clock.advance(by: 3)
        }
        XCTAssertEqual(clock.now() - created, 90)
        let reads = store.statementCounts().statements
        XCTAssertNil(reads[Self.touch], "no write while last_seen_at is younger than the interval: \(reads.keys.sorted())")
        XCTAssertEqual(try engine.authenticate(token).lastSeenAt, created)

        // The interval has passed: the next poll writes once, the following ones again read only.
        _ = try engine.current(token: token)
        _ = try engine.current(token: token)
        clock.advance(by: 89)
        _ = try engine.current(token: token)
        XCTAssertEqual(store.statementCounts().statements[Self.touch], 1)
        XCTAssertEqual(try engine.authenticate(token).lastSeenAt, created + 90)

        // Idle expiry still counts from the last write: a session polled at most every interval
        // stays alive; left alone for the idle timeout after that write, it expires.
        clock.set(created + 90 + 900)
        XCTAssertThrowsError(try engine.current(token: token)) { e in
            XCTAssertEqual((e as? IDVError)?.code, .sessionExpired)
        }
    }

    func testShortIdleTimeoutsTouchEverySecond() {
        XCTAssertEqual(FlowEngine.touchInterval(idleTimeout: 3), 1)
        XCTAssertEqual(FlowEngine.touchInterval(idleTimeout: 1), 1)
        XCTAssertEqual(FlowEngine.touchInterval(idleTimeout: 600), 60)
    }
}
