import Foundation
import IDVRuntime

/// The one way tests find the `idvd` (and `idv`) binaries `swift build` made and run them: a
/// command to completion (``IDVD/run(_:environment:stdin:)``) or a server (``IDVDProcess``).
public enum IDVD {
    /// The package's root folder (Sources/IDVTestSupport/IDVDProcess.swift is three folders below it).
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What a finished command gave: its exit status and what it wrote.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: Data
        public let stderr: Data
        /// `stdout` as UTF-8 text.
        public var output: String { String(decoding: stdout, as: UTF8.self) }
        /// `stderr` as UTF-8 text.
        public var errors: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// The path of the built executable `name` (`idvd`, `idv`): `IDVD_BINARY` for `idvd` (an A/B
    /// run against another build), else the one beside the test bundle, else under `.build`
    /// (debug, then release). Throws ``TestData/missing(_:)`` — a failure under CI — when none is built.
    public static func binary(_ name: String = "idvd") throws -> String {
        if name == "idvd", let p = ProcessInfo.processInfo.environment["IDVD_BINARY"], !p.isEmpty { return p }
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        let candidates = [bundleDir.appendingPathComponent(name).path,
                          packageRoot.appendingPathComponent(".build/debug/\(name)").path,
                          packageRoot.appendingPathComponent(".build/release/\(name)").path]
        for p in candidates where FileManager.default.isExecutableFile(atPath: p) { return p }
        throw TestData.missing("\(name) binary not found (looked in \(candidates.joined(separator: ", "))); run `swift build` first")
    }

    /// The default key directory of every `idvd` the tests run (`IDVD_KEY_DIR`, KeyLocation): one
    /// temp folder per test process, removed when it exits, so the tests' default key files
    /// neither pile up in ~/.local/state nor stay behind.
    public static let keyDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-test-keys-\(getpid())")

    /// What every `idvd` these tests run gets on top of the test's own environment: the key
    /// directory, and ICAO specimen documents (UTO) accepted — the tests' pages are specimens, and
    /// the default refuses them (`idv.doc.accept_specimen_documents`); a test of the default passes
    /// `IDVD_IDV_DOC_ACCEPT_SPECIMEN_DOCUMENTS=false` or `replacing:`. Set in this test process too
    /// (first use), so in-process stores resolve the same default.
    public static let testEnvironment: [String: String] = {
        let env = ["IDVD_KEY_DIR": keyDirectory.path, "IDVD_IDV_DOC_ACCEPT_SPECIMEN_DOCUMENTS": "true"]
        for (k, v) in env { setenv(k, v, 1) }
        atexit { try? FileManager.default.removeItem(at: IDVD.keyDirectory) }
        return env
    }()

    /// Runs `executable <args>` to completion with ``testEnvironment`` and `environment` on top of
    /// this process's environment (or exactly `replacing`, when given); `stdin` is written to its
    /// standard input (nil: none); run in `directory` (nil: this process's working directory).
    public static func run(_ args: [String], executable: String = "idvd", environment: [String: String] = [:],
                           replacing: [String: String]? = nil, stdin: Data? = nil, in directory: URL? = nil) throws -> Result {
        let env = replacing ?? ProcessInfo.processInfo.environment.merging(testEnvironment) { _, n in n }.merging(environment) { _, n in n }
        let r = try Subprocess.run(URL(fileURLWithPath: try binary(executable)), args, environment: env, in: directory, stdin: stdin)
        return Result(status: r.status, stdout: r.stdout, stderr: r.stderr)
    }
}

/// A real `idvd serve` process on a free loopback port with a SQLite file in a temp folder (or the
/// database `settings["db.path"]` names), its log in that folder. ``start()`` waits for the ready
/// line; ``stop(signal:)`` sends the signal and waits for the exit.
public final class IDVDProcess {
    /// The test's folder: the database, the log, whatever the test keeps beside them.
    public let dir: URL
    public let dbPath: String
    public let logPath: String
    /// Every setting passed as `--set key=value` (serve and admin), ``testSettings`` underneath.
    public var settings: [String: String]
    /// Variables set for `idvd serve` and `idvd admin` on top of ``IDVD/testEnvironment``.
    public var environment: [String: String] = [:]
    /// Whether the test process's own `IDVD_…` variables reach the server (default true); false
    /// runs it as an install would run, with only ``IDVD/testEnvironment`` and ``environment``.
    public var inheritsIDVDVariables = true

    /// The environment of this server's `idvd` processes.
    public var processEnvironment: [String: String] {
        var base = ProcessInfo.processInfo.environment
        if !inheritsIDVDVariables { base = base.filter { !$0.key.hasPrefix("IDVD_") } }
        return base.merging(IDVD.testEnvironment) { _, n in n }.merging(environment) { _, n in n }
    }
    public private(set) var process: Process?
    /// The bound port, once started.
    public private(set) var port = 0
    /// The ready line (`{"event":"listening","port":…}`), once started.
    public private(set) var readyLine = Data()

    /// The minimum Argon2id cost keeps the suite fast (production defaults are documented); no
    /// OCR-B warm-up; a short shutdown grace; ICAO specimen documents (UTO, the tests' pages)
    /// accepted, which the default refuses. Presence (the illumination challenge) and the replay
    /// check are off: most tests send the same committed frames, which no screen lit, again and
    /// again; the presence tests (IDVReadersTests `PresenceTests` and
    /// the browser scenario `presence_illumination`) turn them on. The PAD step-up
    /// (`idv.pad.challenge_below`) is off for the same reason: the committed clips are recordings,
    /// which cannot follow the active challenge the server draws for a capture whose texture is not
    /// conclusive; the step-up's tests (IDVServerTests `PADUnsureOutcomesTests`, IDVReadersTests
    /// `WorkflowPADTests`) turn it on.
    public static let testSettings = ["argon2.opslimit": "1", "argon2.memlimit_kib": "8", "http.threads": "4", "shutdown.grace_seconds": "5",
                                      "documents.warm_up": "false", "idv.doc.accept_specimen_documents": "true",
                                      "idv.presence": "off", "idv.capture_replay_seconds": "0", "idv.pad.challenge_below": "-20"]

    /// Whether `--db` is passed (false: the database comes from the environment, `IDVD_DB`).
    public var passesDatabase = true

    /// `dir` nil: a new temp folder. `database`: a `db.path` other than the folder's `idvd.sqlite`
    /// (a PostgreSQL URL for several nodes). `logName`: the log's file name in `dir` (several
    /// servers sharing a folder each need their own).
    public init(settings: [String: String] = [:], dir: URL? = nil, database: String? = nil, logName: String = "server.log") throws {
        let d = dir ?? FileManager.default.temporaryDirectory.appendingPathComponent("idvd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        self.dir = d
        dbPath = database ?? d.appendingPathComponent("idvd.sqlite").path
        logPath = d.appendingPathComponent(logName).path
        self.settings = Self.testSettings.merging(settings) { _, new in new }
        _ = IDVD.testEnvironment
    }

    /// The `--set` arguments of ``settings``, sorted.
    public var settingArguments: [String] {
        settings.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.value)"] }
    }

    /// Starts `idvd serve` and waits up to `timeout` seconds for its ready line; throws with the
    /// server's log when it exits or does not get ready.
    public func start(timeout: Double = 30) throws {
        try launch()
        try waitReady(timeout: timeout)
    }

    private var output: Pipe?

    /// Starts `idvd serve` without waiting (several servers start together, then ``waitReady(timeout:)``).
    public func launch() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try IDVD.binary())
        p.arguments = ["serve"] + (passesDatabase ? ["--db", dbPath] : []) + ["--port", "0"] + settingArguments
        p.environment = processEnvironment
        let out = Pipe()
        p.standardOutput = out
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        p.standardError = log
        try p.run()
        process = p
        output = out
    }

    /// Waits up to `timeout` seconds for the ready line of a launched server.
    public func waitReady(timeout: Double = 30) throws {
        guard let p = process, let out = output else { throw NSError(domain: "IDVDProcess", code: 3, userInfo: [NSLocalizedDescriptionKey: "not launched"]) }
        var line = Data()
        let deadline = Date().addingTimeInterval(timeout)
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty {
                guard p.isRunning, Date() < deadline else {
                    throw NSError(domain: "IDVDProcess", code: 1, userInfo: [NSLocalizedDescriptionKey: "idvd did not start: \(self.log())"])
                }
                usleep(20_000)
            }
            line += chunk
        }
        readyLine = Data(line.prefix(while: { $0 != 0x0A }))
        let ready = try JSONSerialization.jsonObject(with: readyLine) as? [String: Any]
        guard ready?["event"] as? String == "listening", let bound = ready?["port"] as? Int else {
            throw NSError(domain: "IDVDProcess", code: 2, userInfo: [NSLocalizedDescriptionKey: "not a ready line: \(String(decoding: readyLine, as: UTF8.self))"])
        }
        port = bound
    }

    /// Sends `sig` and waits for the process to exit; returns its exit status (-1 when not running).
    @discardableResult
    public func stop(signal sig: Int32 = SIGTERM) -> Int32 {
        guard let p = process else { return -1 }
        Foundation.kill(p.processIdentifier, sig)
        p.waitUntilExit()
        process = nil
        return p.terminationStatus
    }

    /// Sends SIGTERM and waits up to `seconds` for the exit; a server still running then is killed
    /// (SIGKILL) and false is returned, so a test can fail instead of hanging.
    public func stop(within seconds: Double) -> Bool {
        guard let p = process else { return true }
        Foundation.kill(p.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(seconds)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        let stopped = !p.isRunning
        if !stopped { Foundation.kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        process = nil
        return stopped
    }

    /// What the server wrote on its standard error (the JSON log lines).
    public func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// `idvd admin <args> --db <db> --set …` to completion, with this server's environment.
    public func admin(_ args: [String]) throws -> IDVD.Result {
        try IDVD.run(["admin"] + args + (passesDatabase ? ["--db", dbPath] : []) + settingArguments, replacing: processEnvironment)
    }

    /// SIGKILL and wait: the server dies mid-whatever, as on a power cut or an OOM kill.
    public func kill() {
        guard let p = process, p.isRunning else { return }
        Foundation.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    deinit { stop() }
}
