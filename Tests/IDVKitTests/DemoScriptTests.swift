import Foundation
import XCTest
import IDVTestSupport

/// `scripts/demo` — the sample app `idv` in scripted mode (the seeds' delegate API) through all five
/// flows against a real `idvd` on loopback, on the committed selfie fixtures, a specimen passport from
/// `idvd specimen` and a held-photo attack from `idvd liveness make-attack` — run on the binaries
/// `swift test` built.
final class DemoScriptTests: XCTestCase {
    func testScriptedSampleAppRunsAllFiveFlowsAsExpected() throws {
        let idvd = try Paths.binary("idvd")
        let bin = URL(fileURLWithPath: idvd).deletingLastPathComponent()
        guard FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("idv").path) else {
            throw TestData.missing("idv binary not built beside idvd")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [Paths.packageRoot.appendingPathComponent("scripts/demo").path]
        var env = ProcessInfo.processInfo.environment
        env["IDV_BIN"] = bin.path
        env["DEMO_STRICT"] = "1"
        // The demo keeps its key file in its own folder: with the default key directory pointed at a
        // fresh state folder (KeyLocation: XDG_STATE_HOME when IDVD_KEY_DIR is unset), nothing lands there.
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("demo-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: state) }
        env["XDG_STATE_HOME"] = state.path
        env["IDVD_KEY_DIR"] = nil
        p.environment = env
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("demo-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else { return XCTFail("cannot create \(log.path)") }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close(); try? FileManager.default.removeItem(at: log) }
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        // Bounded: the demo takes well under a minute in a debug build; never hang the suite.
        let deadline = Date().addingTimeInterval(900)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.5) }
        if p.isRunning { p.terminate(); p.waitUntilExit(); XCTFail("scripts/demo did not finish within 900 s") }
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        XCTAssertEqual(p.terminationStatus, 0, String(out.suffix(3000)))

        // Every row of the summary table, by seed and flow, with its expected verdict.
        let summary = out.components(separatedBy: "\nSummary\n").last ?? ""
        let expected: [(String, String, String)] = [
            ("002", "activation", "verdict=MATCHED"),
            ("core", "login", "event=onUserLoggedIn"),
            ("004", "template-status", "event=onIDVCheckUserBiometricTemplateStatus error=0 status=100"),
            ("000", "kyc", "event=onIDVActivatedCustomerKYCResponse error=0 status=100"),
            ("003", "docscan", "event=onIDVAdditionalDocumentScan error=0 status=100"),
            // Files from a folder cannot answer the server's Active Authentication challenge: a copy is not excluded.
            ("003", "docscan (chip)", "nfc_scan_status=WARNING reason=active_authentication_not_performed"),
            ("004", "optout", "event=onIDVBiometricOptOutStatus error=0 status=100"),
            ("004", "optin", "event=onIDVBiometricOptInStatus error=0 status=100"),
            ("001", "biometric-auth (same person)", "verdict=MATCHED"),
            ("001", "biometric-auth (second person)", "verdict=NOT_MATCHED"),
            ("001", "biometric-auth (held photo)", "verdict=LIVENESS_FAILED"),
        ]
        let rows = summary.split(separator: "\n").map(String.init)
        for (seed, flow, fact) in expected {
            let row = rows.first { $0.hasPrefix("  \(seed)") && $0.contains(" \(flow) ") }
            XCTAssertNotNil(row, "no summary row for \(seed) \(flow)")
            XCTAssertTrue(row?.contains("PASS") ?? false, row ?? "")
            XCTAssertTrue(row?.contains(fact) ?? false, "\(flow): expected \(fact) in \(row ?? "")")
        }
        XCTAssertFalse(summary.contains("NOT AVAILABLE"), summary)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: state.path), [], "scripts/demo left files in the default key directory")
    }
}
