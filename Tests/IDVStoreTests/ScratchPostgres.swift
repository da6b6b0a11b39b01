import Foundation
import IDVTestSupport
import IDVStorePostgres
import XCTest

/// The PostgreSQL server the tests use: the one named by `IDVD_TEST_PG_URL` (its password in
/// `IDVD_TEST_PG_PASSWORD`, or libpq's own `PGPASSWORD` / `~/.pgpass`), else a throw-away cluster
/// that this test process starts on first use with `scripts/pg-scratch start` (initdb in a temp
/// directory, a loopback port, as the unprivileged `postgres` user when the tests run as root) and
/// stops when the test bundle finishes (`scripts/pg-scratch stop`; a cluster left by a killed run
/// is stopped by the next start). Each test gets its own database (``freshDatabase()``).
///
/// Without a PostgreSQL (no server binaries, the cluster does not start): under CI (`CI=true`) the
/// tests fail; elsewhere they are skipped with the reason.
enum ScratchPostgres {
    struct Server: Sendable {
        /// `postgresql://user@host:port/db` without a password.
        let url: String
        let password: String?
        /// The scratch cluster's directory (nil for an external server).
        let dir: String?
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private final class State: @unchecked Sendable {
        let lock = NSLock()
        var server: Result<Server, Error>?
    }
    private static let state = State()

    struct Unavailable: Error, CustomStringConvertible { let description: String }

    /// The server, started once per test process.
    static func server() throws -> Server {
        state.lock.lock(); defer { state.lock.unlock() }
        if let s = state.server { return try s.get() }
        let r = Result { try start() }
        state.server = r
        return try r.get()
    }

    /// The server, or the test's failure (under CI) / skip (elsewhere) when there is none.
    static func require(file: StaticString = #filePath, line: UInt = #line) throws -> Server {
        do { return try server() } catch {
            if TestData.underCI { XCTFail("PostgreSQL is required under CI: \(error)", file: file, line: line) }
            throw TestData.missing("no PostgreSQL for the PostgreSQL tests: \(error)")
        }
    }

    private static func start() throws -> Server {
        let env = ProcessInfo.processInfo.environment
        if let url = env["IDVD_TEST_PG_URL"], !url.isEmpty {
            return Server(url: url, password: env["IDVD_TEST_PG_PASSWORD"], dir: nil)
        }
        let script = packageRoot.appendingPathComponent("scripts/pg-scratch").path
        guard FileManager.default.isExecutableFile(atPath: script) else { throw Unavailable(description: "\(script) is missing") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: script)
        p.arguments = ["start", "--owner", String(getpid())]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw Unavailable(description: "scripts/pg-scratch start failed: \(e.suffix(800))") }
        var values: [String: String] = [:]
        for line in o.split(separator: "\n") {
            if let eq = line.firstIndex(of: "=") { values[String(line[..<eq])] = String(line[line.index(after: eq)...]) }
        }
        guard let url = values["PG_SCRATCH_URL"], let dir = values["PG_SCRATCH_DIR"], let pwFile = values["PG_SCRATCH_PASSWORD_FILE"],
              let pw = try? String(contentsOfFile: pwFile, encoding: .utf8) else {
            throw Unavailable(description: "scripts/pg-scratch printed no URL: \(o)")
        }
        let server = Server(url: url, password: pw.trimmingCharacters(in: .whitespacesAndNewlines), dir: dir)
        XCTestObservationCenter.shared.addTestObserver(Stopper(dir: dir, script: script))
        return server
    }

    /// Stops the scratch cluster when the bundle ends.
    private final class Stopper: NSObject, XCTestObservation {
        let dir: String, script: String
        init(dir: String, script: String) { self.dir = dir; self.script = script }
        func testBundleDidFinish(_ testBundle: Bundle) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: script)
            p.arguments = ["stop", dir]
            try? p.run()
            p.waitUntilExit()
        }
    }

    private static func settings(_ s: Server) -> PostgresConnectionSettings { PostgresConnectionSettings(url: s.url, password: s.password) }

    /// A new, empty database on the server; returns its URL (no password in it). Dropped by ``drop(_:)``.
    static func freshDatabase() throws -> String {
        let s = try require()
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        return try PostgresServer.createDatabase(named: String(name), settings: settings(s))
    }

    /// Drops a database made by ``freshDatabase()`` (ends its remaining connections first).
    static func drop(_ url: String) {
        guard let s = try? server(), let name = url.split(separator: "/").last?.split(separator: "?").first else { return }
        try? PostgresServer.dropDatabase(named: String(name), settings: settings(s))
    }

    /// `url` with its database name replaced.
    static func url(_ url: String, database: String) -> String { PostgresServer.url(url, database: database) }
}
