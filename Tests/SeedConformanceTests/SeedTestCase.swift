import Foundation
import RELID
@testable import SeedApp
import XCTest

/// Common set-up of the tests that run the codelabs' own code: a real `idvd`, the seeds'
/// singletons reset, the seed 002 registration installed, and the SDK initialised through the
/// seed API (`rdna.initialize(relid, host:, port:)`, seed 003 L291).
class SeedTestCase: XCTestCase {
    let password = "Katie seeds 2026"
    var server: IDVDServer!
    var app: CodelabApp!

    override func setUpWithError() throws {
        CodelabApp.reset()
        server = try IDVDServer()
        try server.start()
    }

    override func tearDown() {
        CodelabApp.reset()
        server?.stop()
        server = nil
        app = nil
    }

    /// The codelab app starts: the coordinator's handlers, seed 002's onInitialized registration
    /// (L1528-L1541), then `RDNAService.shared.initialize` → `getUser`.
    func boot() {
        app = CodelabApp()
        Seed002AppCoordinator().setupGlobalCallbackNavigation()
        XCTAssertEqual(RDNAService.shared.initialize(relid: "openidv-seed-tests", host: server.host, port: server.port).longErrorCode, 0)
        guard case .getUser(0)? = app.expect("getUser") else { return }
    }

    /// The integrator's one SDK-specific step (README "Coming from the codelabs"): capture
    /// providers instead of the codelabs' native camera screens.
    func setCaptures(document: URL?, selfie: URL? = Paths.katieLive) {
        RDNA.sharedInstance().setDocumentCaptureProvider(document.map { ImageFileDocumentCapture(pageFiles: [$0]) })
        RDNA.sharedInstance().setSelfieCaptureProvider(selfie.map { FrameFolderSelfieCapture(folder: $0) })
    }

    /// Activation without IDV (the Activation & Login codelab): user → code → password → logged in.
    func activate(_ user: String) throws {
        let code = try server.createUser(user, idv: false)
        boot()
        XCTAssertEqual(RDNAService.shared.setUser(user).longErrorCode, 0)
        guard case .getActivationCode? = app.expect("getActivationCode") else { return }
        XCTAssertEqual(RDNAService.shared.setActivationCode(code).longErrorCode, 0)
        guard case .getPassword(1, _, 0)? = app.expect("getPassword") else { return }
        XCTAssertEqual(RDNAService.shared.setPassword(password, challengeMode: .CHALLENGE_OP_SET).longErrorCode, 0)
        guard case .loggedIn(user)? = app.expect("onUserLoggedIn") else { return }
    }

    /// Document start → details → selfie start → confirmation, answered as the seeds' screens do
    /// (seed 000 L1155, L1236, L1335, L1413). Returns the selfie confirmation's JSON.
    func documentAndSelfie(workflow: RDNAIDVWorkflow, mode: Int, file: StaticString = #filePath, line: UInt = #line) -> (details: String, selfie: String)? {
        guard case let .documentStart(wf)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation", file: file, line: line) else { return nil }
        XCTAssertEqual(wf, workflow, file: file, line: line)
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: wf).longErrorCode, 0, file: file, line: line)
        guard case let .documentDetails(m, details)? = app.expect("onGetIDVConfirmDocumentDetails", file: file, line: line) else { return nil }
        XCTAssertEqual(m, mode, file: file, line: line)
        XCTAssertEqual(RDNAIDVService.shared.setIDVConfirmDocumentDetails(isConfirm: true, challengeMode: RDNAChallengeOpMode(rawValue: m)!).longErrorCode, 0,
                       file: file, line: line)
        guard case let .selfieStart(swf)? = app.expect("onGetIDVSelfieProcessStartConfirmation", file: file, line: line) else { return nil }
        XCTAssertEqual(swf, workflow, file: file, line: line)
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieProcessStartConfirmation(isConfirm: true, useDeviceBackCamera: false, idvWorkflow: swf).longErrorCode, 0,
                       file: file, line: line)
        guard case let .selfieConfirmation(_, sm, selfie)? = app.expect("onGetIDVSelfieConfirmation", file: file, line: line) else { return nil }
        XCTAssertEqual(sm, mode, file: file, line: line)
        return (details, selfie)
    }
}
