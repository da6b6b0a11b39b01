import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVHTTP
import IDVTools
import XCTest
import IDVTestSupport

/// Paths of the package, its fixtures and the `idvd` that `swift test` built.
enum WebPaths {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let assets = packageRoot.appendingPathComponent("Sources/IDVWeb/Assets")
    static let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures")
    static let browserDriver = packageRoot.appendingPathComponent("Tests/IDVWebTests/browser/verify_flows.py")
    /// Screenshots and logs of the browser tests (kept as CI artifacts; not committed).
    static var artifacts: URL {
        if let d = ProcessInfo.processInfo.environment["IDV_WEB_ARTIFACTS"], !d.isEmpty { return URL(fileURLWithPath: d) }
        return packageRoot.appendingPathComponent(".build/web-artifacts")
    }

    static func idvd() throws -> String { try IDVD.binary() }

    /// Runs a program to completion: (status, stdout, stderr). For programs with little on stderr.
    static func run(_ exe: String, _ args: [String], environment: [String: String]? = nil) throws -> (status: Int32, stdout: Data, stderr: Data) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        if let environment { p.environment = environment }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, o, e)
    }
}

/// A real `idvd serve` (IDVTestSupport ``IDVDProcess``) on a free loopback port with its own SQLite
/// file, run as an install runs it: the developer's `IDVD_…` variables left out (the bundled
/// assets, no `web.assets_dir`), its default key directory (`IDVD_KEY_DIR`) in its folder.
final class WebServer {
    let process: IDVDProcess
    var dir: URL { process.dir }
    var db: String { process.dbPath }
    var port: Int { process.port }
    var settings: [String: String] { process.settings }
    var logPath: String { process.logPath }
    static let testSettings = ["shutdown.grace_seconds": "2", "session.sweep_seconds": "0"]

    init(settings: [String: String] = [:]) throws {
        process = try IDVDProcess(settings: Self.testSettings.merging(settings) { _, new in new })
        process.inheritsIDVDVariables = false
        process.environment = ["IDVD_KEY_DIR": process.dir.appendingPathComponent("keys").path]
    }

    var settingArgs: [String] { process.settingArguments }

    /// What this server's `idvd` processes run with (``IDVDProcess/processEnvironment``).
    var environment: [String: String] { process.processEnvironment }

    func start() throws {
        try process.start(timeout: 20)
        XCTAssertGreaterThan(port, 0)
    }

    /// SIGTERM; a server still running 15 s later fails the test (and is killed) rather than hang it.
    func stop() {
        if !process.stop(within: 15) { XCTFail("idvd did not stop within 15 s of SIGTERM") }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dir)
    }

    func log() -> String { process.log() }

    func http() -> LoopbackHTTPClient { LoopbackHTTPClient(port: port) }

    /// `idvd admin ARGS` on this server's store: (exit status, stdout JSON or nil, stderr text).
    func admin(_ args: [String]) throws -> (status: Int32, json: JSONValue?, stderr: String) {
        let r = try process.admin(args)
        return (r.status, try? JSONDecoder().decode(JSONValue.self, from: r.stdout), r.errors)
    }

    func adminJSON(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let r = try admin(args)
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        return try XCTUnwrap(r.json, "idvd admin \(args.first ?? "") printed no JSON: \(r.stderr)", file: file, line: line)
    }

    func auditActions() throws -> [JSONValue] {
        try adminJSON(["audit", "--limit", "1000"])["entries"]?.arrayValue ?? []
    }
}
