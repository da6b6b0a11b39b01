import Foundation
import XCTest
import IDVTestSupport

/// The sample app `idv` against a real `idvd`: scripted mode for the MFA path, script errors, and
/// one interactive activation under tmux (send-keys / capture-pane).
final class SampleAppTests: XCTestCase {
    static func runIDV(_ args: [String], env: [String: String] = [:], timeout: TimeInterval = 60) throws -> (status: Int32, out: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Paths.binary("idv"))
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(env) { _, n in n }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let killer = DispatchWorkItem { if p.isRunning { p.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        killer.cancel()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func writeScript(_ text: String, in dir: URL) throws -> String {
        let url = dir.appendingPathComponent("script-\(UUID().uuidString).txt")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func results(_ out: String) -> [String] {
        out.split(separator: "\n").filter { $0.hasPrefix("RESULT ") }.map { String($0.dropFirst(7)) }
    }

    func testScriptedMFAPath() throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("frank")
        let script = try writeScript("""
        # activation, a post-login initiation the core server does not offer yet, log off, login with one wrong password
        check-user: frank
        activation-code: ${IDV_TEST_CODE}
        set-password: short
        set-password: Frank password 9
        dashboard: template-status
        dashboard: logoff
        check-user: frank
        verify-password: not the one 1
        verify-password: Frank password 9
        dashboard: quit
        """, in: server.dir)
        let r = try Self.runIDV(["--server", server.url.absoluteString, "--script", script, "--out", server.dir.appendingPathComponent("out").path],
                           env: ["IDV_TEST_CODE": code])
        XCTAssertEqual(r.status, 0, r.out)
        let res = results(r.out)
        XCTAssertEqual(res.count, 4, r.out)
        guard res.count == 4 else { return }
        XCTAssertEqual(res[0], "flow=activation event=onUserLoggedIn error=0 status=100 verdict=-")
        // Template status: the server either does not offer the flow yet (1007) or answers 600 (no template).
        XCTAssertTrue(["flow=template-status event=onRequestFailed:checkIDVUserBiometricTemplateStatus error=1007 status=- verdict=-",
                       "flow=template-status event=onIDVCheckUserBiometricTemplateStatus error=0 status=600 verdict=NO_TEMPLATE"].contains(res[1]), res[1])
        XCTAssertEqual(res[2], "flow=logoff event=onUserLoggedOff error=0 status=100 verdict=-")
        XCTAssertEqual(res[3], "flow=login event=onUserLoggedIn error=0 status=100 verdict=-")
        XCTAssertTrue(r.out.contains("error: 1015 The password must have at least 8 characters"), r.out)
        XCTAssertTrue(r.out.contains("attempts_left: 2"), r.out)
        XCTAssertTrue(r.out.contains("error: 1014 The password is not correct"), r.out)
        XCTAssertFalse(r.out.contains("Frank password 9"), "passwords are never printed")
    }

    func testScriptedLDAEnrolmentAndLoginByDeviceKey() throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("lars")
        let key = server.dir.appendingPathComponent("idv-keys/device.key")
        let script = try writeScript("""
        # activation with LDA enrolment, log off, login by device key (no password), log off,
        # login with the presence prompt declined (password fallback)
        check-user: lars
        activation-code: ${IDV_TEST_CODE}
        set-password: Lars password 5
        lda-consent: yes
        lda-presence: y
        dashboard: logoff
        check-user: lars
        lda-presence: y
        dashboard: logoff
        check-user: lars
        lda-presence: n
        verify-password: Lars password 5
        dashboard: quit
        """, in: server.dir)
        let r = try Self.runIDV(["--server", server.url.absoluteString, "--script", script, "--lda-key", key.path,
                                 "--out", server.dir.appendingPathComponent("out").path], env: ["IDV_TEST_CODE": code])
        XCTAssertEqual(r.status, 0, r.out)
        XCTAssertEqual(results(r.out), ["flow=activation event=onUserLoggedIn error=0 status=100 verdict=-",
                                        "flow=logoff event=onUserLoggedOff error=0 status=100 verdict=-",
                                        "flow=login event=onUserLoggedIn error=0 status=100 verdict=-",
                                        "flow=logoff event=onUserLoggedOff error=0 status=100 verdict=-",
                                        "flow=login event=onUserLoggedIn error=0 status=100 verdict=-"], r.out)
        XCTAssertEqual(r.out.components(separatedBy: "── lda-presence ── Approve with device key? [y/n]").count - 1, 3, r.out)
        XCTAssertEqual(r.out.components(separatedBy: "purpose: login").count - 1, 2, r.out)
        XCTAssertEqual(r.out.components(separatedBy: "── verify-password").count - 1, 1, r.out)
        let mode = (try FileManager.default.attributesOfItem(atPath: key.path)[.posixPermissions] as? NSNumber)?.intValue
        XCTAssertEqual(mode, 0o600)
    }

    /// The additional-document-scan result screen lists why the document is not valid (seed 003's
    /// `error_list`), not just "Scanned; the document has errors": an expired real specimen page.
    func testDocumentScanResultListsTheDocumentsErrors() throws {
        let page = Paths.packageRoot.appendingPathComponent("../shared/testdata/mrz-images/specimens/100_pass-bdr.jpg").standardized
        guard FileManager.default.fileExists(atPath: page.path) else { throw TestData.missing("shared test data not found at \(page.path)") }
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("hana")
        let script = try writeScript("""
        check-user: hana
        activation-code: ${IDV_TEST_CODE}
        set-password: Hana password 7
        dashboard: docscan address change
        docscan: start
        document-start: scan \(page.path)
        docscan: back
        dashboard: quit
        """, in: server.dir)
        let r = try Self.runIDV(["--server", server.url.absoluteString, "--script", script, "--out", server.dir.appendingPathComponent("out").path],
                                env: ["IDV_TEST_CODE": code])
        XCTAssertEqual(r.status, 0, r.out)
        XCTAssertTrue(results(r.out).contains { $0.hasPrefix("flow=docscan event=onIDVAdditionalDocumentScan error=0 status=100") }, r.out)
        XCTAssertTrue(r.out.contains("document_error: The document has expired (2018-02-21)."), r.out)
        // Seed 003's result screen: the overall status and its hint (L1128–L1129).
        XCTAssertTrue(r.out.contains("Document Status: ERROR\n  Document validation failed. Please review details below."), r.out)
    }

    /// `? screen: answer` lines answer their screen only when the app shows it then (a retake the
    /// server may or may not ask), and are passed over otherwise.
    func testOptionalScriptLinesAnswerOnlyTheScreenShown() throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("hana")
        let script = try writeScript("""
        check-user: hana
        ? set-password: skipped, the app shows the activation code
        activation-code: ${IDV_TEST_CODE}
        set-password: short
        ? set-password: Hana password 9
        ? set-password: skipped too, the app shows the dashboard
        dashboard: quit
        """, in: server.dir)
        let r = try Self.runIDV(["--server", server.url.absoluteString, "--script", script], env: ["IDV_TEST_CODE": code])
        XCTAssertEqual(r.status, 0, r.out)
        XCTAssertEqual(results(r.out), ["flow=activation event=onUserLoggedIn error=0 status=100 verdict=-"], r.out)
        XCTAssertTrue(r.out.contains("error: 1015 The password must have at least 8 characters"), r.out)
        XCTAssertEqual(r.out.components(separatedBy: "set-password> ").count - 1, 2, r.out)
    }

    func testScriptForTheWrongScreenStopsWithExit3() throws {
        let server = try IDVDServer()
        try server.start()
        _ = try server.createUser("gina")
        let script = try writeScript("check-user: gina\nverify-password: whatever1\n", in: server.dir)
        let r = try Self.runIDV(["--server", server.url.absoluteString, "--script", script])
        XCTAssertEqual(r.status, 3, r.out)
        XCTAssertTrue(r.out.contains("answers screen 'verify-password', but the app shows 'activation-code'"), r.out)
        let missing = try writeScript("check-user: ${IDV_NOT_SET_ANYWHERE}\n", in: server.dir)
        let r2 = try Self.runIDV(["--server", server.url.absoluteString, "--script", missing])
        XCTAssertEqual(r2.status, 2)
        XCTAssertTrue(r2.out.contains("environment variable IDV_NOT_SET_ANYWHERE is not set"), r2.out)
        let r3 = try Self.runIDV(["--server", "http://127.0.0.1:1", "--script", script, "--timeout", "5"])
        XCTAssertEqual(r3.status, 1)
        XCTAssertTrue(r3.out.contains("error: 1028"), r3.out)
    }

    // MARK: tmux

    /// A private tmux server socket, so the test never touches anyone else's sessions.
    let socket = "idvkit-test-\(getpid())"

    /// Runs tmux through `/bin/sh` (system(3)): the tmux server it may start inherits the client's
    /// descriptors, so output goes through a file and the exit is reaped by system(3).
    func tmux(_ args: [String]) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-out-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let quoted = (["/usr/bin/tmux", "-L", socket] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let rc = system(quoted.joined(separator: " ") + " > '\(file.path)' 2>/dev/null < /dev/null")
        if rc != 0 && args.first != "kill-server" { XCTFail("tmux \(args.first ?? "") exited with \(rc)") }
        return (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    }

    /// Waits until the pane shows `text` (after `after` occurrences), or fails.
    func waitForPane(_ session: String, _ text: String, count: Int = 1, timeout: TimeInterval = 20) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var pane = ""
        while Date() < deadline {
            pane = try tmux(["capture-pane", "-p", "-S", "-400", "-t", session])
            if pane.components(separatedBy: text).count - 1 >= count { return pane }
            usleep(100_000)
        }
        XCTFail("pane never showed '\(text)' ×\(count):\n\(pane)")
        return pane
    }

    func testInteractiveActivationUnderTmux() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else { throw TestData.missing("tmux is not installed") }
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("hana")
        let idv = try Paths.binary("idv")
        let session = "idvkit-\(UUID().uuidString.prefix(8))"
        _ = try tmux(["new-session", "-d", "-s", session, "-x", "200", "-y", "50",
                      "\(idv) --server \(server.url.absoluteString) --out \(server.dir.path)/out; echo IDV-EXIT=$?; sleep 30"])
        defer {
            _ = try? tmux(["kill-server"])
            let tmpdir = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
            try? FileManager.default.removeItem(atPath: "\(tmpdir)/tmux-\(getuid())/\(socket)")
        }
        _ = try waitForPane(session, "check-user>")
        _ = try tmux(["send-keys", "-t", session, "hana", "Enter"])
        var pane = try waitForPane(session, "activation-code>")
        XCTAssertTrue(pane.contains("attempts_left: 5"), pane)
        _ = try tmux(["send-keys", "-t", session, "WRONG-CODE1", "Enter"])
        pane = try waitForPane(session, "activation-code>", count: 2)
        XCTAssertTrue(pane.contains("error: 1012"), pane)
        XCTAssertTrue(pane.contains("attempts_left: 4"), pane)
        _ = try tmux(["send-keys", "-t", session, code, "Enter"])
        pane = try waitForPane(session, "set-password>")
        XCTAssertTrue(pane.contains("challenge_mode: CHALLENGE_OP_SET (1)"), pane)
        _ = try tmux(["send-keys", "-t", session, "Hana password 3", "Enter"])
        pane = try waitForPane(session, "dashboard>")
        XCTAssertTrue(pane.contains("RESULT flow=activation event=onUserLoggedIn error=0 status=100"), pane)
        _ = try tmux(["send-keys", "-t", session, "quit", "Enter"])
        pane = try waitForPane(session, "IDV-EXIT=")
        XCTAssertTrue(pane.contains("IDV-EXIT=0"), pane)
    }
}
