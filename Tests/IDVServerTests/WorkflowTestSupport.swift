import Foundation
import IDVCore
@testable import IDVEngine
import IDVCrypto
@testable import IDVHTTP
import IDVReaders
@testable import IDVStoreSQLite
import IDVTools
import XCTest

// Support for the workflow tests: real images from ../shared/testdata, TEST DOUBLES of the two
// analyser protocols (they do not analyse: they recognise the shared test images by SHA-256 and
// return scripted raw scores, so every state-machine transition can be driven deterministically),
// and an in-process `IDVServerApp` on a loopback port (real HTTP, real SQLite, real vault). The
// in-process server keeps the doubles out of the shipped `idvd` binary.

enum TestImages {
    static let testdata = IDVDBinary.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/testdata")

    static func load(_ rel: String) throws -> Data {
        let url = testdata.appendingPathComponent(rel)
        guard let d = FileManager.default.contents(atPath: url.path) else {
            throw XCTSkip("test image \(rel) not found under \(testdata.path) (../shared/testdata absent)")
        }
        return d
    }

    static func obamaPassportPage() throws -> Data { try load("faces/obama.jpg") }
    static func expiredPassportPage() throws -> Data { try load("faces/obama3.jpg") }
    static func badCheckDigitPage() throws -> Data { try load("faces/obama_small.jpg") }
    static func noDocumentPage() throws -> Data { try load("faces/two_people.jpg") }
    static func obamaSelfie() throws -> Data { try load("faces/obama2.jpg") }
    static func obamaSelfie2() throws -> Data { try load("faces/obama-480p.jpg") }
    static func wrongPersonSelfie() throws -> Data { try load("faces/biden.jpg") }
    /// A printed photo held to the camera (ISO/IEC 30107-3 print attack), Silent-Face-Anti-Spoofing.
    static func printAttack() throws -> Data { try load("liveness/attacks/stills/image_F1.jpg") }
}

/// TEST DOUBLE of ``DocumentVerifying``: scripted reports for known shared test images.
struct TestDoubleDocumentVerifier: DocumentVerifying {
    let scripts: [String: DocumentVerification]

    static func key(_ d: Data) -> String { Crypto.hex(Crypto.sha256(Array(d))) }

    init() throws {
        func report(_ page: Data, surname: String, given: String, number: String, expiry: String, mrzValid: Bool) -> DocumentVerification {
            let checks = [
                DocumentCheckOutcome(name: "mrz_check_digit_document_number", category: "mrz", result: mrzValid ? .passed : .failed),
                DocumentCheckOutcome(name: "mrz_composite_check_digit", category: "mrz", result: mrzValid ? .passed : .failed),
                DocumentCheckOutcome(name: "portrait_present", category: "image", result: .passed),
            ]
            return DocumentVerification(
                fields: DocumentFields(documentType: "P", format: "TD3", issuingState: "USA", surname: surname, givenNames: given,
                                       documentNumber: number, nationality: "USA", dateOfBirth: "1961-08-04", sex: "M", dateOfExpiry: expiry),
                checks: checks, overallStatus: mrzValid ? .valid : .invalid, mrzCheckDigitsValid: mrzValid,
                errors: mrzValid ? [] : ["MRZ check digit failed"], portraitJPEG: page, pageImages: [page])
        }
        var s: [String: DocumentVerification] = [:]
        let ok = try TestImages.obamaPassportPage()
        s[Self.key(ok)] = report(ok, surname: "OBAMA", given: "BARACK", number: "P1234567", expiry: "2035-01-01", mrzValid: true)
        let expired = try TestImages.expiredPassportPage()
        s[Self.key(expired)] = report(expired, surname: "OBAMA", given: "BARACK", number: "P7654321", expiry: "2015-01-01", mrzValid: true)
        let bad = try TestImages.badCheckDigitPage()
        s[Self.key(bad)] = report(bad, surname: "OBAMA", given: "BARACK", number: "P1111111", expiry: "2035-01-01", mrzValid: false)
        scripts = s
    }

    func read(pages: [Data]) throws -> DocumentVerification {
        guard let first = pages.first, first.starts(with: [0xFF, 0xD8]) || first.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
            throw IDVError(.invalidImage)
        }
        guard let r = scripts[Self.key(first)] else { throw IDVError(.noDocumentFound) }
        return r
    }
}

/// TEST DOUBLE of ``SelfieVerifying``: knows who is on each shared test image and whether the
/// capture is live; builds a 128-d one-hot "descriptor" per person so templates round-trip.
struct TestDoubleSelfieVerifier: SelfieVerifying {
    /// sha → (person index, live)
    let people: [String: (Int, Bool)]

    init() throws {
        var p: [String: (Int, Bool)] = [:]
        for d in [try TestImages.obamaPassportPage(), try TestImages.obamaSelfie(), try TestImages.obamaSelfie2(),
                  try TestImages.expiredPassportPage(), try TestImages.badCheckDigitPage()] { p[TestDoubleDocumentVerifier.key(d)] = (1, true) }
        p[TestDoubleDocumentVerifier.key(try TestImages.wrongPersonSelfie())] = (2, true)
        p[TestDoubleDocumentVerifier.key(try TestImages.printAttack())] = (3, false)
        people = p
    }

    static func descriptor(_ person: Int) -> [Float] { (0..<128).map { $0 == person ? 1 : 0 } }

    /// A challenge with a fresh random nonce (the double judges no actions).
    func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
        LivenessChallenge(nonce: Crypto.randomID(), actions: ["TURN_LEFT", "BLINK"], durationSeconds: Double(durationSeconds),
                          deadlineSeconds: deadlineSeconds, expiresAt: now + deadlineSeconds)
    }

    func verify(frames: [Data], against reference: SelfieReference) throws -> SelfieVerification {
        guard let f = frames.first, f.starts(with: [0xFF, 0xD8]) || f.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { throw IDVError(.invalidImage) }
        guard let (person, live) = people[TestDoubleDocumentVerifier.key(f)] else { throw IDVError(.noFaceFound) }
        let other: Int?
        switch reference {
        case let .portrait(p): other = people[TestDoubleDocumentVerifier.key(p)]?.0
        case let .template(t): other = t.firstIndex(of: 1)
        case .none: other = nil
        }
        let distance: Double? = reference == .none ? nil : (other == person ? 0.35 : 0.95)
        return SelfieVerification(faceMatchScore: distance.map { 1 - $0 / 1.2 }, distance: distance, livenessScore: live ? 91 : 12,
                                  reasons: live ? [] : ["print_attack"], bestFrameJPEG: f, embedding: Self.descriptor(person), model: "test-double")
    }
}

/// An in-process server with the IDV flows over the test doubles, on a free loopback port.
final class WorkflowServer {
    let dir: URL
    let config: ServerConfig
    let store: SQLiteStore
    let vault: TemplateVault
    let app: IDVServerApp
    let port: Int

    init(_ settings: [String: String] = [:], selfies: (any SelfieVerifying)? = nil, documents: (any DocumentVerifying)? = nil) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-wf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var o = ServerProcess.testSettings.merging(["db.path": dir.appendingPathComponent("idvd.sqlite").path, "listen.port": "0",
                                                   "log.requests": "false"]) { _, n in n }
        o.merge(settings) { _, n in n }
        config = try ServerConfig.load(file: nil, environment: [:], overrides: o)
        store = try config.openStore()
        vault = try TemplateVault.load(keyFile: config.workflow.resolvedKeyFile(dbPath: config.dbPath), createIfMissing: true)
        let services = IDVServices(documents: try documents ?? TestDoubleDocumentVerifier(), selfies: try selfies ?? TestDoubleSelfieVerifier(),
                                   vault: vault, policy: config.workflow)
        app = IDVServerApp(config: config, store: store, registry: .idv(services), crypto: Sodium())
        port = try app.start()
    }

    deinit {
        app.stop()
        try? FileManager.default.removeItem(at: dir)
    }

    func client() -> API { API(port: port) }

    /// Creates a user; returns the activation code.
    func createUser(_ id: String, idv: Bool, workflow: IDVWorkflow = .activation) throws -> String {
        try Admin(store: store, config: config, crypto: Sodium()).createUser(id, activationRequiresIDV: idv, idvWorkflow: workflow).activationCode
    }

    static let password = "correct horse 42"

    /// A logged-in session of a freshly activated user (no IDV at activation).
    func loggedIn(_ user: String) throws -> API {
        let code = try createUser(user, idv: false)
        let api = client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        try api.answer(["activation_code": .string(code)])
        let done = try api.answer(["password": .string(Self.password)])
        XCTAssertEqual(done.event?.name, "onUserLoggedIn")
        return api
    }

    /// Every audit entry (oldest first).
    func audit() throws -> [AuditEntry] { try store.auditEntries(limit: 100_000) }

    func transactions() throws -> [JSONValue] { try audit().filter { $0.action == "idv.transaction" }.map(\.details) }
}

extension API {
    /// Starts a post-login flow by name.
    @discardableResult
    func startFlow(_ name: String, _ payload: JSONValue = .emptyObject) throws -> Reply {
        let r = try call("POST", "/v1/flows/\(name)", encode(WireFlowStart(payload: payload)))
        if r.envelope?.isRefusal == false { last = r.envelope }
        return r
    }

    @discardableResult
    func uploadPages(_ pages: [Data]) throws -> Reply {
        try answer(["pages": .array(pages.enumerated().map { ["page_index": .integer($0.offset), "image": .string($0.element.base64EncodedString())] })],
                   route: "/v1/session/upload")
    }

    @discardableResult
    func uploadFrames(_ frames: [Data]) throws -> Reply {
        try answer(["frames": .array(frames.map { .string($0.base64EncodedString()) })], route: "/v1/session/upload")
    }

    /// Document start → upload → (confirm details); returns the reply to the upload.
    @discardableResult
    func scanDocument(_ page: Data) throws -> Reply {
        let s = try answer(["is_confirm": true])
        XCTAssertEqual(s.challenge?.name, "uploadIDVDocumentPages", "\(String(describing: s.error))")
        return try uploadPages([page])
    }

    /// Selfie start → upload; returns the reply to the upload.
    @discardableResult
    func captureSelfie(_ frame: Data) throws -> Reply {
        let s = try answer(["is_confirm": true, "use_back_camera": false])
        XCTAssertEqual(s.challenge?.name, "uploadIDVSelfieFrames", "\(String(describing: s.error))")
        return try uploadFrames([frame, frame])
    }
}
