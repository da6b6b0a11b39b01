import Foundation
import IDVKit
import XCTest
import IDVTestSupport

/// Paths of the package and of the binaries `swift test` built (idvd, idv): IDVTestSupport's ``IDVD``.
enum Paths {
    static let packageRoot = IDVD.packageRoot
    static let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures/selfie")

    static func binary(_ name: String) throws -> String { try IDVD.binary(name) }
}

/// A real `idvd serve` (IDVTestSupport ``IDVDProcess``) on a free loopback port with a SQLite file
/// and its default key directory (`IDVD_KEY_DIR`) in a temp folder, removed with it.
final class IDVDServer {
    let process: IDVDProcess
    var dir: URL { process.dir }
    var db: String { process.dbPath }
    var port: Int { process.port }
    static let settings = ["shutdown.grace_seconds": "2"]

    /// Server settings beyond the test defaults (`--set key=value`), e.g. `idv.liveness_mode`.
    init(settings extra: [String: String] = [:]) throws {
        process = try IDVDProcess(settings: Self.settings.merging(extra) { _, n in n })
        process.environment = ["IDVD_KEY_DIR": process.dir.appendingPathComponent("keys").path]
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func start() throws {
        try process.start(timeout: 20)
        XCTAssertGreaterThan(port, 0)
    }

    /// SIGTERM; a server still running 15 s later fails the test (and is killed) rather than hang it.
    func stop() {
        if !process.stop(within: 15) { XCTFail("idvd did not stop within 15 s of SIGTERM") }
    }

    /// `idvd admin create-user <id> --no-idv`: returns the activation code.
    func createUser(_ id: String) throws -> String {
        let r = try process.admin(["create-user", id, "--no-idv"])
        XCTAssertEqual(r.status, 0, r.errors)
        return try XCTUnwrap(JSONDecoder().decode(JSONValue.self, from: r.stdout)["activation_code"]?.stringValue)
    }

    /// `idvd specimen --format td3 --seed 10` with Katie's portrait: the page's PNG (document number
    /// GC3664952, JOHN GARCIA LOPEZ); a build without a working `idvd specimen` is missing test data.
    func specimen() throws -> URL {
        let out = dir.appendingPathComponent("doc")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Paths.binary("idvd"))
        p.arguments = ["specimen", "--format", "td3", "--seed", "10", "--portrait", Paths.fixtures.appendingPathComponent("katie_portrait.jpg").path,
                       "--out", out.path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        let png = out.appendingPathComponent("specimen-10.png")
        guard p.terminationStatus == 0, FileManager.default.fileExists(atPath: png.path) else {
            throw TestData.missing("this build has no working `idvd specimen` (DocumentReader not merged)")
        }
        return png
    }

    /// A "print, held" attack sequence made by `idvd liveness make-attack` from the document portrait.
    func heldPhotoAttack() throws -> URL {
        let out = dir.appendingPathComponent("attack_held_photo")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Paths.binary("idvd"))
        p.arguments = ["liveness", "make-attack", "--from", Paths.fixtures.appendingPathComponent("katie_portrait.jpg").path,
                       "--out", out.path, "--frames", "30", "--seed", "7"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "idvd liveness make-attack")
        return out
    }

    deinit {
        _ = process.stop(within: 15)
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
