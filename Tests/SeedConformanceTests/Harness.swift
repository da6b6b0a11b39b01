import Foundation
import IDVTestSupport
import RELID
@testable import SeedApp
import XCTest

/// Paths of the package, its fixtures and the binaries `swift test` built.
enum Paths {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let selfies = packageRoot.appendingPathComponent("Tests/Fixtures/selfie")
    static let katieLive = selfies.appendingPathComponent("katie_live")
    static let aocLive = selfies.appendingPathComponent("aoc_live")
    static let katiePortrait = selfies.appendingPathComponent("katie_portrait.jpg")

    static func binary(_ name: String) throws -> String {
        let beside = Bundle(for: IDVDServer.self).bundleURL.deletingLastPathComponent().appendingPathComponent(name).path
        for p in [beside, packageRoot.appendingPathComponent(".build/debug/\(name)").path] where FileManager.default.isExecutableFile(atPath: p) {
            return p
        }
        throw missing("\(name) binary not found beside the test bundle or under .build/debug (run `swift build` first)")
    }

    /// Missing test data: a failure under CI, a visible skip elsewhere (``TestData/missing(_:)``).
    static func missing(_ why: String) -> Error { TestData.missing(why) }
}

/// A real `idvd serve` on a free loopback port with a SQLite file in a temp folder.
final class IDVDServer {
    let dir: URL
    let db: String
    private(set) var process: Process?
    private(set) var port = 0
    /// Presence and the replay check are off: the codelabs' flows send the same committed frames (a
    /// folder, which cannot flash) in every test.
    static let settings = ["argon2.opslimit": "1", "argon2.memlimit_kib": "8", "http.threads": "4", "shutdown.grace_seconds": "2",
                           "documents.warm_up": "false", "idv.presence": "off", "idv.capture_replay_seconds": "0"]
    let extraSettings: [String: String]

    init(settings extra: [String: String] = [:]) throws {
        extraSettings = extra
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("seed-conformance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        db = dir.appendingPathComponent("idvd.sqlite").path
    }

    var host: String { "http://127.0.0.1" }

    /// What this server's `idvd` processes run with: the default key directory (`IDVD_KEY_DIR`,
    /// KeyLocation) inside ``dir``, removed with it, so no key file is left in ~/.local/state.
    var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["IDVD_KEY_DIR": dir.appendingPathComponent("keys").path]) { _, n in n }
    }

    func settingArgs() -> [String] {
        Self.settings.merging(extraSettings) { $1 }.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.value)"] }
    }

    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Paths.binary("idvd"))
        p.arguments = ["serve", "--db", db, "--port", "0"] + settingArgs()
        p.environment = environment
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        process = p
        // The ready line (JSON with the port), read off the main thread so a server that never
        // prints it fails the test after 30 s instead of blocking it.
        let box = LineBox()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var line = Data()
            while !line.contains(0x0A) {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line += chunk
            }
            box.data = line
            done.signal()
        }
        guard done.wait(timeout: .now() + 30) == .success, let line = box.data, line.contains(0x0A) else {
            stop()
            throw NSError(domain: "idvd", code: 1, userInfo: [NSLocalizedDescriptionKey: "idvd did not start within 30 s"])
        }
        let ready = try JSONDecoder().decode(JSONValue.self, from: line.prefix(while: { $0 != 0x0A }))
        port = ready["port"]?.intValue ?? 0
        XCTAssertGreaterThan(port, 0)
    }

    /// SIGTERM, then SIGKILL when the server has not exited within 10 s (a test never hangs on it).
    func stop() {
        guard let p = process else { return }
        kill(p.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        process = nil
    }

    /// `idvd admin create-user <id> [--no-idv]`: returns the one-time activation code.
    func createUser(_ id: String, idv: Bool) throws -> String {
        let out = try run(["admin", "create-user", id] + (idv ? [] : ["--no-idv"]) + ["--db", db] + settingArgs())
        return try XCTUnwrap(JSONDecoder().decode(JSONValue.self, from: out)["activation_code"]?.stringValue)
    }

    /// A TD3 passport page rendered by `idvd specimen` with Katie's portrait (seed 10, valid MRZ),
    /// or with `mrz` printed instead (e.g. a wrong check digit).
    func specimen(seed: Int = 10, mrz: String? = nil) throws -> URL {
        let out = dir.appendingPathComponent("doc-\(seed)-\(mrz == nil ? "ok" : "mrz")")
        _ = try run(["specimen", "--format", "td3", "--seed", String(seed), "--portrait", Paths.katiePortrait.path, "--out", out.path]
            + (mrz.map { ["--mrz", $0] } ?? []))
        let png = out.appendingPathComponent("specimen-\(seed).png")
        guard FileManager.default.fileExists(atPath: png.path) else { throw Paths.missing("idvd specimen wrote no \(png.lastPathComponent)") }
        return png
    }

    @discardableResult
    func run(_ args: [String]) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Paths.binary("idvd"))
        p.arguments = args
        p.environment = environment
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "idvd \(args.prefix(2).joined(separator: " "))")
        return data
    }

    deinit {
        if let p = process, p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        try? FileManager.default.removeItem(at: dir)
    }
}

/// Pumps the main run loop (where the seeds' delegate managers dispatch every callback) until
/// `done()` or `timeout` seconds.
@discardableResult
func pumpMain(timeout: TimeInterval, until done: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !done() {
        if Date() > deadline { return false }
        _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.02))
    }
    return true
}

final class LineBox: @unchecked Sendable { var data: Data? }

/// The SDK's log lines (``RDNA/setLogHandler(_:)``), collected from any thread.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ l: String) { lock.withLock { lines.append(l) } }
    var all: [String] { lock.withLock { lines } }
    func contains(_ s: String) -> Bool { all.contains { $0.contains(s) } }
}
