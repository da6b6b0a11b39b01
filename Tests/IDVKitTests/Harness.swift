import Foundation
import IDVKit
import XCTest
import IDVTestSupport

/// Paths of the package and of the binaries `swift test` built (idvd, idv).
enum Paths {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures/selfie")

    static func binary(_ name: String) throws -> String {
        let beside = Bundle(for: IDVDServer.self).bundleURL.deletingLastPathComponent().appendingPathComponent(name).path
        for p in [beside, packageRoot.appendingPathComponent(".build/debug/\(name)").path] where FileManager.default.isExecutableFile(atPath: p) {
            return p
        }
        throw TestData.missing("\(name) binary not found beside the test bundle or under .build/debug (run `swift build` first)")
    }
}

/// A real `idvd serve` on a free loopback port with a SQLite file in a temp folder.
final class IDVDServer {
    let dir: URL
    let db: String
    private(set) var process: Process?
    private(set) var port = 0
    /// Presence and the replay check are off (PresenceSDKTests turns them on): the frame folders cannot
    /// flash, and the same committed frames are sent many times.
    static let settings = ["argon2.opslimit": "1", "argon2.memlimit_kib": "8", "http.threads": "4", "shutdown.grace_seconds": "2",
                            "documents.warm_up": "false", "idv.presence": "off", "idv.capture_replay_seconds": "0"]

    /// Server settings beyond the test defaults (`--set key=value`), e.g. `idv.liveness_mode`.
    let extraSettings: [String: String]

    init(settings extra: [String: String] = [:]) throws {
        extraSettings = extra
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvkit-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        db = dir.appendingPathComponent("idvd.sqlite").path
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// What this server's `idvd` processes run with: the default key directory (`IDVD_KEY_DIR`,
    /// KeyLocation) inside ``dir``, removed with it, so no key file is left in ~/.local/state.
    var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["IDVD_KEY_DIR": dir.appendingPathComponent("keys").path]) { _, n in n }
    }

    static func settingArgs() -> [String] { settings.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.value)"] } }

    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Paths.binary("idvd"))
        p.arguments = ["serve", "--db", db, "--port", "0"] + Self.settingArgs()
            + extraSettings.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.value)"] }
        p.environment = environment
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        process = p
        var line = Data()
        let deadline = Date().addingTimeInterval(20)
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty {
                guard p.isRunning, Date() < deadline else { throw NSError(domain: "idvd", code: 1, userInfo: [NSLocalizedDescriptionKey: "idvd did not start"]) }
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

    /// `idvd admin create-user <id> --no-idv`: returns the activation code.
    func createUser(_ id: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Paths.binary("idvd"))
        p.arguments = ["admin", "create-user", id, "--no-idv", "--db", db] + Self.settingArgs()
        p.environment = environment
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        return try XCTUnwrap(JSONDecoder().decode(JSONValue.self, from: data)["activation_code"]?.stringValue)
    }

    deinit {
        if let p = process, p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        try? FileManager.default.removeItem(at: dir)
    }
}

/// Records every delegate callback (all five protocols) as an ``RDNAEvent``, in delivery order.
final class Recorder: RDNACallbacks, RDNAIDVDocumentProcessingCallbacks, RDNAIDVSelfieProcessingCallbacks,
    RDNAIDVBiometricManagementCallbacks, RDNAIDVKYCManagementCallbacks, @unchecked Sendable {
    private let lock = NSLock()
    private var queue: [RDNAEvent] = []
    private let sem = DispatchSemaphore(value: 0)
    /// The callback queue the recorder expects; every callback checks it runs there.
    let callbackQueue = DispatchQueue(label: "idvkit.test.callbacks")
    private let key = DispatchSpecificKey<Int>()
    private(set) var offQueueCallbacks = 0

    init() { callbackQueue.setSpecific(key: key, value: 1) }

    private func record(_ e: RDNAEvent) {
        let onQueue = DispatchQueue.getSpecific(key: key) == 1
        lock.withLock { queue.append(e); if !onQueue { offQueueCallbacks += 1 } }
        sem.signal()
    }

    /// The next callback, or a test failure after `timeout` seconds.
    func next(timeout: TimeInterval = 15, file: StaticString = #filePath, line: UInt = #line) -> RDNAEvent? {
        guard sem.wait(timeout: .now() + timeout) == .success else {
            XCTFail("no callback within \(timeout) s", file: file, line: line)
            return nil
        }
        return lock.withLock { queue.removeFirst() }
    }

    func onInitialized(_ sessionID: String) { record(.onInitialized(sessionID: sessionID)) }
    func onInitializeError(_ error: RDNAError) { record(.onInitializeError(error)) }
    func getUser(_ response: RDNAChallengeResponse, error: RDNAError) { record(.getUser(response: response, error: error)) }
    func getActivationCode(_ userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) {
        record(.getActivationCode(userID: userID, attemptsLeft: attemptsLeft, response: response, error: error))
    }
    func getPassword(_ userID: String, challengeMode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) {
        record(.getPassword(userID: userID, challengeMode: challengeMode, attemptsLeft: attemptsLeft, response: response, error: error))
    }
    func onUserLoggedIn(_ userID: String, sessionID: String, deviceID: String?) { record(.onUserLoggedIn(userID: userID, sessionID: sessionID, deviceID: deviceID)) }
    func onUserLoggedOff(_ userID: String?) { record(.onUserLoggedOff(userID: userID)) }
    func onAuthStateReset() { record(.onAuthStateReset) }
    func onRequestFailed(_ api: String, error: RDNAError) { record(.onRequestFailed(api: api, error: error)) }
    func onUnknownEvent(_ name: String, payloadJSON: String) { record(.unknown(name: name, payloadJSON: payloadJSON)) }
    func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow) { record(.getIDVDocumentScanProcessStartConfirmation(idvWorkflow: idvWorkflow)) }
    func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode) {
        record(.getIDVConfirmDocumentDetails(documentDetails: documentDetails, challengeMode: mode))
    }
    func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow) { record(.getIDVSelfieProcessStartConfirmation(idvWorkflow: idvWorkflow)) }
    func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode) {
        record(.getIDVSelfieConfirmation(selfieDetails: selfieDetails, challengeMode: mode))
    }
    func onIDVActivatedCustomerKYCResponse(_ userID: String, status: RDNARequestStatus, error: RDNAError) {
        record(.onIDVActivatedCustomerKYCResponse(userID: userID, status: status, error: error))
    }
}
