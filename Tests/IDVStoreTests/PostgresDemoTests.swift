import Foundation
import IDVTestSupport
import XCTest

/// `IDVD_DB=postgresql://… scripts/demo`: the sample app through all five flows against an `idvd`
/// on PostgreSQL (a database the demo creates on the scratch server for the run and drops after) —
/// the same summary rows as the SQLite demo (IDVKitTests.DemoScriptTests), on the binaries
/// `swift test` built.
final class PostgresDemoTests: XCTestCase {
    func testTheDemoRunsTheFiveFlowsOnPostgreSQL() throws {
        let server = try ScratchPostgres.require()
        let bin = URL(fileURLWithPath: try IDVD.binary()).deletingLastPathComponent()
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("idv").path), "idv is not built beside idvd")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [ScratchPostgres.packageRoot.appendingPathComponent("scripts/demo").path]
        var env = ProcessInfo.processInfo.environment
        env["IDV_BIN"] = bin.path
        env["DEMO_STRICT"] = "1"
        env["IDVD_DB"] = server.url
        env.removeValue(forKey: "IDVD_DB_PATH")
        env.removeValue(forKey: "IDVD_TEMPLATES_KEY_FILE")
        if let pw = server.password { env["IDVD_DB_PASSWORD"] = pw }
        p.environment = env
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("demo-pg-\(UUID().uuidString).log")
        XCTAssertTrue(FileManager.default.createFile(atPath: log.path, contents: nil))
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close(); try? FileManager.default.removeItem(at: log) }
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        let deadline = Date().addingTimeInterval(900)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.5) }
        if p.isRunning { p.terminate(); p.waitUntilExit(); XCTFail("scripts/demo did not finish within 900 s") }
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        XCTAssertEqual(p.terminationStatus, 0, String(out.suffix(3000)))
        XCTAssertTrue(out.contains("idvd on PostgreSQL"), String(out.prefix(600)))
        if let pw = server.password { XCTAssertFalse(out.contains(pw), "the database password reached the demo's output") }
        let summary = out.components(separatedBy: "\nSummary\n").last ?? ""
        let expected: [(String, String, String)] = [
            ("002", "activation", "verdict=MATCHED"),
            ("core", "login", "event=onUserLoggedIn"),
            ("004", "template-status", "event=onIDVCheckUserBiometricTemplateStatus error=0 status=100"),
            ("000", "kyc", "event=onIDVActivatedCustomerKYCResponse error=0 status=100"),
            ("003", "docscan", "event=onIDVAdditionalDocumentScan error=0 status=100"),
            ("004", "optout", "event=onIDVBiometricOptOutStatus error=0 status=100"),
            ("004", "optin", "event=onIDVBiometricOptInStatus error=0 status=100"),
            ("001", "biometric-auth (same person)", "verdict=MATCHED"),
            ("001", "biometric-auth (second person)", "verdict=NOT_MATCHED"),
            ("001", "biometric-auth (held photo)", "verdict=LIVENESS_FAILED"),
        ]
        let rows = summary.split(separator: "\n").map(String.init)
        for (seed, flow, fact) in expected {
            let row = rows.first { $0.hasPrefix("  \(seed)") && $0.contains(" \(flow) ") }
            XCTAssertTrue(row?.contains("PASS") ?? false, "\(seed) \(flow): \(row ?? "no row")")
            XCTAssertTrue(row?.contains(fact) ?? false, "\(flow): expected \(fact) in \(row ?? "no row")")
        }
    }
}
