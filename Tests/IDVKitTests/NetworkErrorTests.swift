import Foundation
import IDVKit
import XCTest
import IDVTestSupport

/// Network errors, timeouts and server refusals arrive as callbacks with clear codes, never hangs.
final class NetworkErrorTests: XCTestCase {
    /// A port nothing listens on (bound, then closed).
    func closedPort() throws -> Int {
        let server = try IDVDServer()
        try server.start()
        let p = server.port
        server.stop()
        return p
    }

    func testInitializeAgainstClosedPortFailsWith1028() throws {
        let port = try closedPort()
        let sdk = RDNA()
        let rec = Recorder()
        sdk.setCallbacks(rec)
        XCTAssertEqual(sdk.initialize(RDNAConfiguration(serverURL: URL(string: "http://127.0.0.1:\(port)")!, requestTimeout: 5),
                                      callbackQueue: rec.callbackQueue).longErrorCode, 0)
        guard case let .onInitializeError(e)? = rec.next() else { return XCTFail("expected onInitializeError") }
        XCTAssertEqual(e.longErrorCode, 1028)
    }

    func testBadConfigurationRefusedSynchronously() {
        let sdk = RDNA()
        XCTAssertEqual(sdk.initialize(RDNAConfiguration(serverURL: URL(string: "ftp://example.com")!)).longErrorCode, 1025)
        XCTAssertEqual(sdk.initialize(RDNAConfiguration(serverURL: URL(string: "http://127.0.0.1:1")!, requestTimeout: 0)).longErrorCode, 1025)
        XCTAssertEqual(sdk.logOff().longErrorCode, 1027)
        XCTAssertEqual(sdk.initiateIDVBiometricOptIn().longErrorCode, 1027)
    }

    func testServerGoneMidSessionGives1028() async throws {
        let server = try IDVDServer()
        try server.start()
        _ = try server.createUser("dave")
        let sdk = RDNA()
        _ = try await sdk.asyncAPI.initialize(RDNAConfiguration(serverURL: server.url, requestTimeout: 5))
        // Before login, post-login initiations are refused locally with 1004.
        do { _ = try await sdk.asyncAPI.checkIDVUserBiometricTemplateStatus(); XCTFail("expected 1004") } catch { XCTAssertEqual(error.longErrorCode, 1004) }
        server.stop()
        let ev = try await sdk.asyncAPI.setUser("dave")
        guard case let .onRequestFailed("setUser", e)? = ev.first else { return XCTFail("\(ev)") }
        XCTAssertEqual(e.longErrorCode, 1028)
        // The server cannot say where the session stands, so the same challenge comes again with the
        // error (where the codelabs' getUser handler looks); the call can be retried (no hang).
        guard case let .getUser(_, again)? = ev.last, ev.count == 2 else { return XCTFail("\(ev)") }
        XCTAssertEqual(again.longErrorCode, 1028)
        XCTAssertEqual(sdk.currentChallenge?.name, "getUser")
    }

    func testSilentServerTimesOutWith1029() throws {
        // A TCP listener that accepts and never answers.
        let py = Process()
        py.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        py.arguments = ["-c", "import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8)\nprint(s.getsockname()[1], flush=True)\nconns = []\nwhile True:\n    c, _ = s.accept(); conns.append(c)\n"]
        let out = Pipe()
        py.standardOutput = out
        py.standardError = FileHandle.nullDevice
        do { try py.run() } catch { throw TestData.missing("python3 is needed for the silent listener") }
        defer { py.terminate(); py.waitUntilExit() }
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { XCTFail("listener did not start"); return }
            line += chunk
        }
        let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        XCTAssertGreaterThan(port, 0)
        let sdk = RDNA()
        let rec = Recorder()
        sdk.setCallbacks(rec)
        let started = Date()
        XCTAssertEqual(sdk.initialize(RDNAConfiguration(serverURL: URL(string: "http://127.0.0.1:\(port)")!, requestTimeout: 1),
                                      callbackQueue: rec.callbackQueue).longErrorCode, 0)
        guard case let .onInitializeError(e)? = rec.next(timeout: 20) else { return XCTFail("expected onInitializeError") }
        XCTAssertEqual(e.longErrorCode, 1029)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "a timeout must not hang")
    }
}
