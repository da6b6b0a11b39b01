import Foundation
import RELID
@testable import SeedApp
import XCTest

/// Asynchronous failures reach the codelabs' app where it looks for them — the flow's own
/// callbacks (the same challenge again, or the terminal event's error/status) — as well as
/// `onRequestFailed` (which no codelab implements), and a callback the app lacks is reported at
/// once instead of hanging.
final class SeedErrorDeliveryTests: SeedTestCase {
    /// Up to the KYC selfie confirmation.
    func kycToSelfieConfirmation() throws -> String? {
        try activate("katie")
        setCaptures(document: try server.specimen())
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        return documentAndSelfie(workflow: .IDV_POSTLOGIN_KYC, mode: 9)?.selfie
    }

    /// A refused answer (an action key the server did not offer, 1020): the same challenge comes
    /// again, so the codelab's screen shows again, and the flow goes on.
    func testRefusedAnswerComesBackAsTheSameChallenge() throws {
        guard let selfie = try kycToSelfieConfirmation() else { return }
        XCTAssertEqual(SeedJSON.actionKeys(selfie, "success_button"), ["continue-flow"])
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieConfirmation(action: "reinit-idv-document-scan", challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .selfieConfirmation(_, 9, selfie)? = app.expect("onGetIDVSelfieConfirmation") else { return }
        XCTAssertTrue(app.reported("setIDVSelfieConfirmation", 1020), "\(app.failures)")
        // The seed's callback has no error argument: the screen reads why it is shown again here (issue #35).
        XCTAssertEqual(RDNA.sharedInstance().challengeError.longErrorCode, 1020)
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieConfirmation(action: "true", challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .consent? = app.expect("onGetIDVBiometricOptInConsent") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVBiometricOptInConsent(isOptIn: false, challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .kycResponse(_, 100, 0)? = app.expect("onIDVActivatedCustomerKYCResponse") else { return }
    }

    /// A capture that fails (a page that is not an image, 1008): the document start comes again;
    /// with a good page the flow goes on.
    func testFailedCaptureComesBackAsTheStartChallenge() throws {
        try activate("katie")
        let bad = server.dir.appendingPathComponent("page.jpg")
        try Data("not an image".utf8).write(to: bad)
        setCaptures(document: bad)
        XCTAssertEqual(RDNAIDVService.shared.initiateIDVAdditionalDocumentScan(reason: "Additional Document Verification").longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_DOC_SCAN_ONLY)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_DOC_SCAN_ONLY).longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_DOC_SCAN_ONLY)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertTrue(app.reported("documentCapture", 1008), "\(app.failures)")
        XCTAssertEqual(RDNA.sharedInstance().challengeError.longErrorCode, 1008)
        setCaptures(document: try server.specimen())
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_DOC_SCAN_ONLY).longErrorCode, 0)
        guard case .documentScanResult(_, 100, 10, 0)? = app.expect("onIDVAdditionalDocumentScanResponse") else { return }
    }

    /// The server goes away mid-flow (1028): the SDK cannot learn where the session stands, so the
    /// same challenge comes again (nothing hangs, the user can retry).
    func testNetworkFailureComesBackAsTheSameChallenge() throws {
        try activate("katie")
        setCaptures(document: try server.specimen())
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_KYC)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        server.stop()
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_KYC).longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_KYC)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation", timeout: 60) else { return }
        XCTAssertTrue(app.reported("setIDVDocumentScanProcessStartConfirmation", 1028), "\(app.failures)")
        XCTAssertEqual(RDNA.sharedInstance().challengeError.longErrorCode, 1028)
    }

    /// A post-login initiation the server refuses (the session expired, 1003): the flow's terminal
    /// event carries the error — seed 000's persistent handler and seed 001/003's screens look there.
    func testRefusedInitiationArrivesAsTheFlowsTerminalEvent() throws {
        server.stop()
        server = try IDVDServer(settings: ["session.idle_seconds": "2"])
        try server.start()
        try activate("katie")
        Thread.sleep(forTimeInterval: 3)
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard case let .kycResponse(_, status, 1003)? = app.expect("onIDVActivatedCustomerKYCResponse") else { return }
        XCTAssertNotEqual(status, 100)
        XCTAssertTrue(app.reported("initiateActivatedCustomerKYC", 1003), "\(app.failures)")
    }

    /// An app that registered no selfie delegate runs KYC: at the selfie start the SDK logs it,
    /// reports 1034, ends the flow on the server and delivers the KYC response with 1034 — the
    /// codelab's persistent KYC handler hears it at once (no server timeout). The next KYC starts
    /// normally (nothing is left open).
    func testMissingCallbackIsReportedAndEndsTheFlowWhereTheAppLooks() throws {
        try activate("katie")
        setCaptures(document: try server.specimen())
        let lines = LogLines()
        RDNA.sharedInstance().setLogHandler { lines.append($0) }
        RDNAIDVService.shared.setIDVSelfieProcessingDelegate(nil)
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard case .documentStart? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_KYC).longErrorCode, 0)
        guard case .documentDetails(9, _)? = app.expect("onGetIDVConfirmDocumentDetails") else { return }
        let started = Date()
        XCTAssertEqual(RDNAIDVService.shared.setIDVConfirmDocumentDetails(isConfirm: true, challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .kycResponse("katie", 400, 1034)? = app.expect("onIDVActivatedCustomerKYCResponse", timeout: 20) else { return }
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "reported at once, not after a server timeout")
        XCTAssertTrue(app.reported("getIDVSelfieProcessStartConfirmation", 1034), "\(app.failures)")
        XCTAssertTrue(lines.contains("getIDVSelfieProcessStartConfirmation arrived but the app implements none of RDNAIDVSelfieProcessingCallbacks.getIDVSelfieProcessStartConfirmation(_:)"),
                      "\(lines.all)")
        XCTAssertTrue(lines.contains("ended the initiateActivatedCustomerKYC flow"), "\(lines.all)")
        // Nothing is left open: a new KYC starts at once.
        RDNAIDVService.shared.setIDVSelfieProcessingDelegate(RDNAIDVDelegateManager.shared)
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_KYC)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
    }

    /// An unreadable page (no machine-readable zone, 1031) is judged by the server, which asks for
    /// the pages again: the codelab's document start comes back and ``RDNA/challengeError`` says why.
    func testAnUnreadablePageComesBackWithItsReason() throws {
        try activate("katie")
        setCaptures(document: Paths.katiePortrait)
        XCTAssertEqual(RDNAIDVService.shared.initiateIDVAdditionalDocumentScan(reason: "Additional Document Verification").longErrorCode, 0)
        guard case .documentStart? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNA.sharedInstance().challengeError.longErrorCode, 0, "a first ask has no error")
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_DOC_SCAN_ONLY).longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_DOC_SCAN_ONLY)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        let e = RDNA.sharedInstance().challengeError
        XCTAssertEqual(e.longErrorCode, 1031)
        XCTAssertTrue(e.errorString.contains("machine-readable zone"), e.errorString)
    }
}

/// The codelabs' buttons whose effect IDVKit adds (issue #35): Recapture on the KYC details,
/// seed 000's Continue after a failed match, and the opt-in password dialog's Cancel.
final class SeedButtonTests: SeedTestCase {
    /// Seed 000 L1821 "Recapture to rescan": `rescanIDVDocument(challenge: 9)` asks the document
    /// start again, KYC goes on; the Close button's `setIDVConfirmDocumentDetails(false, 9)` stays
    /// the cancel API (240).
    func testRecaptureOnTheKYCDetailsRescans() throws {
        try activate("katie")
        setCaptures(document: try server.specimen())
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard case .documentStart? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_KYC).longErrorCode, 0)
        guard case .documentDetails(9, _)? = app.expect("onGetIDVConfirmDocumentDetails") else { return }
        XCTAssertEqual(RDNA.sharedInstance().rescanIDVDocument(challenge: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_KYC)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_KYC).longErrorCode, 0)
        guard case .documentDetails(9, _)? = app.expect("onGetIDVConfirmDocumentDetails") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVConfirmDocumentDetails(isConfirm: false, challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .kycResponse("katie", 400, 240)? = app.expect("onIDVActivatedCustomerKYCResponse") else { return }
        XCTAssertTrue(app.noFailures, "\(app.failures)")
        // Not the details screen: refused at once, nothing sent.
        XCTAssertEqual(RDNA.sharedInstance().rescanIDVDocument(challenge: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 1002)
    }

    /// Seed 000's KYC selfie screen sends "true" whatever the verdict (L1413). After a failed match
    /// (a second person) the KYC ends unverified, the persistent handler's error alert
    /// ("KYC verification failed: Identity not verified: NOT_MATCHED", L977) — not the same
    /// screen again and again.
    func testSeed000ContinueAfterAFailedMatchEndsTheKYC() throws {
        try activate("katie")
        setCaptures(document: try server.specimen(), selfie: Paths.aocLive)
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard let (_, selfie) = documentAndSelfie(workflow: .IDV_POSTLOGIN_KYC, mode: 9) else { return }
        XCTAssertEqual(SeedJSON.verdict(selfie), "NOT_MATCHED")
        XCTAssertFalse(SeedJSON.actionKeys(selfie, "failure_button").contains("continue-flow"))
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieConfirmation(action: "true", challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .kycResponse("katie", 400, 0)? = app.expect("onIDVActivatedCustomerKYCResponse") else { return }
        XCTAssertTrue(app.noFailures, "\(app.failures)")
    }

    /// Seed 004's password dialog Cancel (`handlePasswordCancel`, body not in the seed):
    /// `cancelPassword(challengeMode: 6)` ends the opt-in with 240; mode 0 is refused (1025).
    func testThePasswordDialogsCancelEndsTheOptIn() throws {
        try activate("katie")
        XCTAssertEqual(RDNA.sharedInstance().cancelPassword(challengeMode: .CHALLENGE_OP_VERIFY).longErrorCode, 1025)
        XCTAssertEqual(RDNAIDVService.shared.initiateIDVBiometricOptIn().longErrorCode, 0)
        guard case .getPassword(6, _, 0)? = app.expect("getPassword") else { return }
        XCTAssertEqual(RDNA.sharedInstance().cancelPassword(challengeMode: RDNAChallengeOpMode(rawValue: 6)!).longErrorCode, 0)
        guard case .optInStatus(_, 400, 240)? = app.expect("onIDVBiometricOptInStatus") else { return }
        XCTAssertTrue(app.noFailures, "\(app.failures)")
    }
}
