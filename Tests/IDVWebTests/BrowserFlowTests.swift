import Foundation
import IDVTestSupport
import XCTest

/// The hosted page in a real browser: Debian's headless `chromium` driven through `chromedriver`
/// by Selenium (Tests/IDVWebTests/browser/verify_flows.py), its camera Chromium's fake device fed
/// from Y4M videos made at test time (a specimen document, the talking-face selfie fixture, a held
/// photo, a dark scene), against a real `idvd serve` per scenario. Each test is one scenario; it
/// asserts the page AND the server's outcome, that the page made no request outside idvd, and that
/// the console shows no error or CSP violation. Screenshots of every screen:
/// `.build/web-artifacts/<scenario>/` (or `$IDV_WEB_ARTIFACTS`).
///
/// Needs python3 with selenium (scripts/bootstrap installs selenium==4.51.0 into
/// ~/.cache/openidv/python when the system's python3 lacks it), chromium, chromium-driver and
/// ffmpeg. Missing, the tests FAIL under CI (`CI=true`) and are skipped elsewhere.
final class BrowserFlowTests: XCTestCase {
    nonisolated(unsafe) static var media: URL?

    override class func tearDown() {
        if let m = media { try? FileManager.default.removeItem(at: m) }
        media = nil
        super.tearDown()
    }

    static var pythonPath: String {
        let env = ProcessInfo.processInfo.environment
        let own = env["IDV_PYTHON_DIR"] ?? (NSHomeDirectory() + "/.cache/openidv/python")
        return [own, env["PYTHONPATH"]].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ":")
    }

    static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }

    /// The environment the browser tests need, or why it is unusable.
    func requireEnvironment() throws -> String {
        var missing: [String] = []
        let python = Self.which("python3")
        if python == nil { missing.append("python3") }
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) { missing.append(tool) }
        if Self.which("ffmpeg") == nil { missing.append("ffmpeg") }
        if let python {
            var env = ProcessInfo.processInfo.environment
            env["PYTHONPATH"] = Self.pythonPath
            let r = try WebPaths.run(python, ["-c", "import selenium"], environment: env)
            if r.status != 0 { missing.append("selenium for python3 (scripts/bootstrap installs it)") }
        }
        guard missing.isEmpty else {
            throw TestData.missing("browser tests need: \(missing.joined(separator: ", "))")
        }
        return python!
    }

    func scenario(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let python = try requireEnvironment()
        let idvd = try WebPaths.idvd()
        if Self.media == nil {
            Self.media = FileManager.default.temporaryDirectory.appendingPathComponent("idvweb-media-\(UUID().uuidString)")
        }
        let out = WebPaths.artifacts
        try FileManager.default.createDirectory(at: out.appendingPathComponent(name), withIntermediateDirectories: true)
        let stderrPath = out.appendingPathComponent(name).appendingPathComponent("driver.stderr.txt")
        _ = FileManager.default.createFile(atPath: stderrPath.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [WebPaths.browserDriver.path, "--idvd", idvd, "--fixtures", WebPaths.fixtures.path, "--out", out.path,
                       "--media", Self.media!.path, "--scenario", name]
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IDVD_") }   // the bundled page, as installed
        env["PYTHONPATH"] = Self.pythonPath
        env["SE_OFFLINE"] = "true"
        p.environment = env
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle(forWritingAtPath: stderrPath.path)
        try p.run()
        // A scenario takes well under a minute on an idle machine; five is the limit on a loaded 2-core one.
        let timer = DispatchWorkItem { if p.isRunning { p.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 300, execute: timer)
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        timer.cancel()
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let stderrText = (try? String(contentsOf: stderrPath, encoding: .utf8)) ?? ""
        if let env = lines.first(where: { $0["environment"] != nil }) {
            XCTFail("browser environment: \(env["environment"] ?? "")", file: file, line: line)
            return
        }
        guard let result = lines.first(where: { $0["scenario"] as? String == name }) else {
            XCTFail("scenario \(name) reported nothing (exit \(p.terminationStatus)); driver stderr:\n\(stderrText.suffix(4000))", file: file, line: line)
            return
        }
        let failures = result["failures"] as? [String] ?? []
        XCTAssertEqual(result["passed"] as? Bool, true, "\(name): \(failures.joined(separator: "\n"))\nscreenshots: \(out.appendingPathComponent(name).path)",
                       file: file, line: line)
        XCTAssertEqual(p.terminationStatus, failures.isEmpty ? 0 : 1, "driver exit status", file: file, line: line)
        print("browser scenario \(name): \(result["seconds"] ?? "?") s, screens \(result["screens"] ?? []), notes \(result["notes"] ?? [:])")
    }

    /// Seed 002 through a link: activation code → document (camera) → confirm → selfie → MATCHED →
    /// consent → password → logged in; the server has the user active with a template; the link is spent.
    func testActivationWithIDVThroughALink() throws { try scenario("activation_link") }

    /// After a password login: KYC, additional document scan, template status, server biometric
    /// authentication, opt-out and opt-in — each ends with the server's event and audit record.
    func testPostLoginFlows() throws { try scenario("postlogin") }

    /// The codelabs' entry screens with their texts, the template-status gating and busy titles,
    /// Recapture that rescans, an unreadable page and a refused answer told on their screen, KYC's
    /// Close that only navigates back, and the opt-in password dialog's Cancel (issue #35).
    func testCodelabScreensGatingRecaptureAndVisibleErrors() throws { try scenario("codelab_screens") }

    /// A printed photo held to the camera ends LIVENESS_FAILED, told plainly.
    func testHeldPhotoAttackIsRefused() throws { try scenario("held_photo_attack") }

    /// Issue 34: a capture the server is unsure about (the face leaves the view) comes back as the
    /// selfie screen with the retake guidance (1066), no attempt used, and the next capture decides.
    func testUnsureSelfieIsRetakenWithGuidance() throws { try scenario("pad_retake") }

    /// A reload mid-flow resumes the same step of the same session.
    func testReloadResumesTheSession() throws { try scenario("reload_resume") }

    /// Offline while answering: the screen stays, says so, and goes on when the connection is back.
    func testNetworkLossIsToldAndRecovered() throws { try scenario("network_lost") }

    /// A scene too dark, camera permission denied, no camera: plain words, and the flow ends cleanly.
    func testCameraDeniedNoCameraAndTooDark() throws { try scenario("camera_problems") }

    /// Expired and unknown links end on a plain explanation; the refusal is audited.
    func testExpiredLink() throws { try scenario("expired_link") }

    /// Active liveness: the server's challenge shown before and, action by action, during the capture.
    func testActiveLivenessInstructionsAreShownLive() throws { try scenario("active_liveness") }

    /// Presence by illumination: the warning and the way out, the server's colours flashed full screen
    /// in order and in time while recording, the frames' times uploaded; the fake camera (a recording)
    /// is not followed (LIVENESS_FAILED, audited with the measured steps); declining gets the
    /// head-movement fallback at the lower assurance.
    func testPresenceIlluminationFlashesAndCaptures() throws { try scenario("presence_illumination") }
}
