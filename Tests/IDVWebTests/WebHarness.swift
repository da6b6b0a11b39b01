import Foundation
import IDVCore
import IDVEngine
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

    static func idvd() throws -> String {
        let beside = Bundle(for: WebServer.self).bundleURL.deletingLastPathComponent().appendingPathComponent("idvd").path
        for p in [beside, packageRoot.appendingPathComponent(".build/debug/idvd").path] where FileManager.default.isExecutableFile(atPath: p) {
            return p
        }
        throw TestData.missing("idvd binary not found beside the test bundle or under .build/debug (run `swift build` first)")
    }

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

/// A real `idvd serve` on a free loopback port with its own SQLite file.
final class WebServer {
    let dir: URL
    let db: String
    private(set) var process: Process?
    private(set) var port = 0
    let settings: [String: String]
    /// Presence and the replay check are off here (the browser scenario `presence_illumination` has them on).
    static let testSettings = ["argon2.opslimit": "1", "argon2.memlimit_kib": "8", "http.threads": "4", "shutdown.grace_seconds": "2",
                               "documents.warm_up": "false", "session.sweep_seconds": "0", "idv.presence": "off", "idv.capture_replay_seconds": "0"]

    init(settings: [String: String] = [:]) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvweb-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        db = dir.appendingPathComponent("idvd.sqlite").path
        self.settings = Self.testSettings.merging(settings) { _, new in new }
    }

    var settingArgs: [String] { settings.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.value)"] } }
    var logPath: String { dir.appendingPathComponent("server.log").path }

    /// What this server's `idvd` processes run with: the developer's environment without IDVD_*
    /// (the bundled assets, as an install has them; no web.assets_dir), and the default key
    /// directory (`IDVD_KEY_DIR`, KeyLocation) inside ``dir``, removed with it, so no key file is
    /// left in ~/.local/state.
    var environment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IDVD_") }
            .merging(["IDVD_KEY_DIR": dir.appendingPathComponent("keys").path]) { _, n in n }
    }

    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try WebPaths.idvd())
        p.arguments = ["serve", "--db", db, "--port", "0"] + settingArgs
        p.environment = environment
        let out = Pipe()
        p.standardOutput = out
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: logPath)
        try p.run()
        process = p
        var line = Data()
        let deadline = Date().addingTimeInterval(20)
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty {
                guard p.isRunning, Date() < deadline else {
                    throw NSError(domain: "idvd", code: 1, userInfo: [NSLocalizedDescriptionKey: "idvd did not start: \(log())"])
                }
                usleep(20_000)
            }
            line += chunk
        }
        let ready = try JSONDecoder().decode(JSONValue.self, from: line.prefix(while: { $0 != 0x0A }))
        port = ready["port"]?.intValue ?? 0
        XCTAssertGreaterThan(port, 0)
    }

    /// SIGTERM; a server still running 15 s later fails the test (and is killed) rather than hang it.
    func stop() {
        guard let p = process else { return }
        kill(p.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(15)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        if p.isRunning {
            XCTFail("idvd did not stop within 15 s of SIGTERM")
            kill(p.processIdentifier, SIGKILL)
        }
        p.waitUntilExit()
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dir)
    }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func http() -> LoopbackHTTPClient { LoopbackHTTPClient(port: port) }

    /// `idvd admin ARGS` on this server's store: (exit status, stdout JSON or nil, stderr text).
    func admin(_ args: [String]) throws -> (status: Int32, json: JSONValue?, stderr: String) {
        let r = try WebPaths.run(try WebPaths.idvd(), ["admin"] + args + ["--db", db] + settingArgs,
                                 environment: environment)
        return (r.status, try? JSONDecoder().decode(JSONValue.self, from: r.stdout), String(decoding: r.stderr, as: UTF8.self))
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
