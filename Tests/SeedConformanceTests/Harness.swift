import Foundation
import IDVTestSupport
import RELID
@testable import SeedApp
import XCTest

/// Paths of the package, its fixtures and the binaries `swift test` built.
enum Paths {
    static let packageRoot = IDVD.packageRoot
    static let selfies = packageRoot.appendingPathComponent("Tests/Fixtures/selfie")
    static let katieLive = selfies.appendingPathComponent("katie_live")
    static let aocLive = selfies.appendingPathComponent("aoc_live")
    static let katiePortrait = selfies.appendingPathComponent("katie_portrait.jpg")

    static func binary(_ name: String) throws -> String { try IDVD.binary(name) }

    /// Missing test data: a failure under CI, a visible skip elsewhere (``TestData/missing(_:)``).
    static func missing(_ why: String) -> Error { TestData.missing(why) }
}

/// A real `idvd serve` (IDVTestSupport ``IDVDProcess``) on a free loopback port with a SQLite file
/// and its default key directory (`IDVD_KEY_DIR`) in a temp folder, removed with it.
final class IDVDServer {
    let process: IDVDProcess
    var dir: URL { process.dir }
    var db: String { process.dbPath }
    var port: Int { process.port }
    static let settings = ["shutdown.grace_seconds": "2"]

    init(settings extra: [String: String] = [:]) throws {
        process = try IDVDProcess(settings: Self.settings.merging(extra) { _, n in n })
        process.environment = ["IDVD_KEY_DIR": process.dir.appendingPathComponent("keys").path]
    }

    var host: String { "http://127.0.0.1" }

    func start() throws {
        try process.start(timeout: 30)
        XCTAssertGreaterThan(port, 0)
    }

    /// SIGTERM, then SIGKILL when the server has not exited within 10 s (a test never hangs on it).
    func stop() { _ = process.stop(within: 10) }

    /// `idvd admin create-user <id> [--no-idv]`: returns the one-time activation code.
    func createUser(_ id: String, idv: Bool) throws -> String {
        let r = try process.admin(["create-user", id] + (idv ? [] : ["--no-idv"]))
        XCTAssertEqual(r.status, 0, "idvd admin create-user")
        return try XCTUnwrap(JSONDecoder().decode(JSONValue.self, from: r.stdout)["activation_code"]?.stringValue)
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

    /// The audit trail's actions, oldest first (`idvd admin audit`).
    func auditActions() throws -> [String] {
        let r = try process.admin(["audit", "--limit", "100000"])
        XCTAssertEqual(r.status, 0, "idvd admin audit")
        let v = try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        return v["entries"]?.arrayValue?.compactMap { $0["action"]?.stringValue } ?? []
    }

    @discardableResult
    func run(_ args: [String]) throws -> Data {
        let r = try IDVD.run(args, environment: process.environment)
        XCTAssertEqual(r.status, 0, "idvd \(args.prefix(2).joined(separator: " "))")
        return r.stdout
    }

    deinit {
        _ = process.stop(within: 10)
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

/// The SDK's log lines (``RDNA/setLogHandler(_:)``), collected from any thread.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ l: String) { lock.withLock { lines.append(l) } }
    var all: [String] { lock.withLock { lines } }
    func contains(_ s: String) -> Bool { all.contains { $0.contains(s) } }
}
