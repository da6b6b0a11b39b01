import Foundation
import RELID
@testable import SeedApp
import XCTest

/// Every close path the codelabs' screens take, answered exactly as those screens answer
/// (the seed lines are on each step), against a real `idvd`, to the callbacks and codes the
/// codelabs expect.
final class SeedClosePathTests: SeedTestCase {
    /// Activation with IDV: the user and code, up to the document start.
    func toDocumentStart(_ user: String, _ code: String, file: StaticString = #filePath, line: UInt = #line) -> RDNAIDVWorkflow? {
        XCTAssertEqual(RDNAService.shared.setUser(user).longErrorCode, 0, file: file, line: line)
        guard case .getActivationCode? = app.expect("getActivationCode", file: file, line: line) else { return nil }
        XCTAssertEqual(RDNAService.shared.setActivationCode(code).longErrorCode, 0, file: file, line: line)
        guard case let .documentStart(wf)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation", file: file, line: line) else { return nil }
        XCTAssertEqual(wf, .IDV_ACTIVATION, file: file, line: line)
        return wf
    }

    /// Seed 002 (pre-login, mode 8): every close ends the IDV flow and returns to `getUser` — the
    /// start screens' close with `false` (146, §3.1 A1/A3), the selfie confirmation's and consent's
    /// close with `RDNAService.shared.resetAuthState()` (L3262, L3584); the document details'
    /// "Recapture" (`false`, L2147) rescans.
    func testSeed002ActivationClosePaths() throws {
        setCaptures(document: try server.specimen())
        var codes: [String: String] = [:]
        for u in ["amy", "ben", "cal", "dan", "eve"] { codes[u] = try server.createUser(u, idv: true) }
        boot()

        // IDVDocumentProcessStartConfirmationViewController.handleClose (L1772): false → getUser 146.
        guard let wf1 = toDocumentStart("amy", codes["amy"]!) else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: false, idvWorkflow: wf1).longErrorCode, 0)
        guard case .getUser(146)? = app.expect("getUser") else { return }

        // IDVConfirmDocumentDetailsViewController.handleRecapture (L2147): false → the document start again;
        // then the IDVSelfieProcessStartConfirmationViewController close (L2512): false → getUser 146.
        guard let wf2 = toDocumentStart("ben", codes["ben"]!) else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: wf2).longErrorCode, 0)
        guard case .documentDetails(8, _)? = app.expect("onGetIDVConfirmDocumentDetails") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVConfirmDocumentDetails(isConfirm: false, challengeMode: RDNAChallengeOpMode(rawValue: 8)!).longErrorCode, 0)
        guard case .documentStart(.IDV_ACTIVATION)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: wf2).longErrorCode, 0)
        guard case .documentDetails(8, _)? = app.expect("onGetIDVConfirmDocumentDetails") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVConfirmDocumentDetails(isConfirm: true, challengeMode: RDNAChallengeOpMode(rawValue: 8)!).longErrorCode, 0)
        guard case let .selfieStart(swf)? = app.expect("onGetIDVSelfieProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieProcessStartConfirmation(isConfirm: false, useDeviceBackCamera: false, idvWorkflow: swf).longErrorCode, 0)
        guard case .getUser(146)? = app.expect("getUser") else { return }

        // IDVSelfieConfirmationViewController.handleClose (L3262): resetAuthState → getUser.
        guard toDocumentStart("cal", codes["cal"]!) != nil else { return }
        app.pushBack(.documentStart(.IDV_ACTIVATION))
        guard documentAndSelfie(workflow: .IDV_ACTIVATION, mode: 8) != nil else { return }
        XCTAssertEqual(RDNAService.shared.resetAuthState().longErrorCode, 0)
        guard case .getUser(0)? = app.expect("getUser") else { return }

        // IDVBiometricOptInConsentViewController.handleClose (L3584): resetAuthState → getUser.
        guard toDocumentStart("dan", codes["dan"]!) != nil else { return }
        app.pushBack(.documentStart(.IDV_ACTIVATION))
        guard documentAndSelfie(workflow: .IDV_ACTIVATION, mode: 8) != nil else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieConfirmation(action: "continue-flow", challengeMode: RDNAChallengeOpMode(rawValue: 8)!).longErrorCode, 0)
        guard case .consent(_, _, 8, _, 0)? = app.expect("onGetIDVBiometricOptInConsent") else { return }
        XCTAssertEqual(RDNAService.shared.resetAuthState().longErrorCode, 0)
        guard case .getUser(0)? = app.expect("getUser") else { return }

        // After all that, a user still activates in the same session.
        guard toDocumentStart("eve", codes["eve"]!) != nil else { return }
        app.pushBack(.documentStart(.IDV_ACTIVATION))
        guard documentAndSelfie(workflow: .IDV_ACTIVATION, mode: 8) != nil else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieConfirmation(action: "continue-flow", challengeMode: RDNAChallengeOpMode(rawValue: 8)!).longErrorCode, 0)
        guard case .consent? = app.expect("onGetIDVBiometricOptInConsent") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVBiometricOptInConsent(isOptIn: false, challengeMode: RDNAChallengeOpMode(rawValue: 8)!).longErrorCode, 0)
        guard case .getPassword(1, _, 0)? = app.expect("getPassword") else { return }
        XCTAssertEqual(RDNAService.shared.setPassword(password, challengeMode: .CHALLENGE_OP_SET).longErrorCode, 0)
        guard case .loggedIn("eve")? = app.expect("onUserLoggedIn") else { return }
    }

    /// Seed 000 (post-login KYC, mode 9): the start screens' close calls the cancel API, which
    /// "triggers onIDVActivatedCustomerKYCResponse event with error 240" (L1186-L1193, L1366-L1373).
    func testSeed000KYCStartScreensClose() throws {
        try activate("katie")
        setCaptures(document: try server.specimen())
        // IDVDocumentProcessStartConfirmationViewController.closeTapped, workflow 6 (L1186).
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard case let .documentStart(wf)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(wf, .IDV_POSTLOGIN_KYC)
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: false, idvWorkflow: wf).longErrorCode, 0)
        guard case .kycResponse("katie", _, 240)? = app.expect("onIDVActivatedCustomerKYCResponse") else { return }

        // IDVSelfieProcessStartConfirmationViewController close, workflow 6 (L1366).
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard case .documentStart? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_KYC).longErrorCode, 0)
        guard case .documentDetails(9, _)? = app.expect("onGetIDVConfirmDocumentDetails") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVConfirmDocumentDetails(isConfirm: true, challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case let .selfieStart(swf)? = app.expect("onGetIDVSelfieProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieProcessStartConfirmation(isConfirm: false, useDeviceBackCamera: false, idvWorkflow: swf).longErrorCode, 0)
        guard case .kycResponse("katie", _, 240)? = app.expect("onIDVActivatedCustomerKYCResponse") else { return }
        XCTAssertTrue(app.noFailures, "\(app.failures)")
    }

    /// Seed 003: Close (X) on the start confirmation → `onIDVAdditionalDocumentScan` with 240 (L100-L101).
    func testSeed003StartClose() throws {
        try activate("katie")
        setCaptures(document: try server.specimen())
        XCTAssertEqual(RDNAIDVService.shared.initiateIDVAdditionalDocumentScan(reason: "Additional Document Verification").longErrorCode, 0)
        guard case let .documentStart(wf)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: false, idvWorkflow: wf).longErrorCode, 0)
        guard case .documentScanResult(_, _, 10, 240)? = app.expect("onIDVAdditionalDocumentScanResponse") else { return }
    }

    /// Seed 004: the captured frame's Cancel → `onIDVBiometricOptInStatus` with 240; seed 001: the
    /// selfie start's Close (X) → `onIDVServerBiometricAuthenticationResult` with 240, "immediately" (L1157).
    func testSeed004FrameCancelAndSeed001SelfieStartClose() throws {
        try activate("katie")
        setCaptures(document: nil)
        func toFrame() -> Bool {
            XCTAssertEqual(RDNAIDVService.shared.initiateIDVBiometricOptIn().longErrorCode, 0)
            guard case .getPassword(6, _, _)? = app.expect("getPassword") else { return false }
            XCTAssertEqual(RDNAService.shared.setPassword(password, challengeMode: RDNAChallengeOpMode(rawValue: 6)!).longErrorCode, 0)
            guard case .selfieStart(.IDV_POSTLOGIN_OPTIN)? = app.expect("onGetIDVSelfieProcessStartConfirmation") else { return false }
            XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieProcessStartConfirmation(isConfirm: true, useDeviceBackCamera: false, idvWorkflow: .IDV_POSTLOGIN_OPTIN).longErrorCode, 0)
            guard case .capturedFrame? = app.expect("onIDVOptInCapturedFrameConfirmation") else { return false }
            return true
        }
        guard toFrame() else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVBiometricOptInConfirmation(status: .RDNA_IDV_CANCEL).longErrorCode, 0)
        guard case .optInStatus(_, _, 240)? = app.expect("onIDVBiometricOptInStatus") else { return }
        guard toFrame() else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVBiometricOptInConfirmation(status: .RDNA_IDV_APPROVED).longErrorCode, 0)
        guard case .optInStatus(_, 100, 0)? = app.expect("onIDVBiometricOptInStatus") else { return }

        XCTAssertEqual(RDNAIDVService.shared.initiateIDVServerBiometricAuthentication(reason: "Server Biometric Authentication").longErrorCode, 0)
        guard case let .selfieStart(wf)? = app.expect("onGetIDVSelfieProcessStartConfirmation") else { return }
        XCTAssertEqual(wf.rawValue, 8)
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieProcessStartConfirmation(isConfirm: false, useDeviceBackCamera: false, idvWorkflow: wf).longErrorCode, 0)
        guard case .serverBiometric(_, _, 240)? = app.expect("onIDVServerBiometricAuthenticationResult") else { return }
        XCTAssertTrue(app.noFailures, "\(app.failures)")
    }

    /// The user closes the native camera or scanner itself (seed 002 Q8: the codelabs leave the
    /// start screen "processing"): the capture provider says so and the step is cancelled as by the
    /// start screen's Close — 240 and the flow's terminal event after login, 146 and `getUser` before.
    func testLeavingTheNativeCaptureCancelsLikeClose() throws {
        struct LeftTheScanner: DocumentCaptureProvider, SelfieCaptureProvider {
            func captureDocumentPages(workflow: RDNAIDVWorkflow) throws(CaptureError) -> [CapturedPage] { throw .cancelledByUser }
            func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedSelfie { throw .cancelledByUser }
        }
        let code = try server.createUser("amy", idv: true)
        RDNA.sharedInstance().setDocumentCaptureProvider(LeftTheScanner())
        boot()
        guard let wf = toDocumentStart("amy", code) else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: wf).longErrorCode, 0)
        guard case .getUser(146)? = app.expect("getUser") else { return }

        try activate("katie")
        setCaptures(document: try server.specimen())
        RDNA.sharedInstance().setSelfieCaptureProvider(LeftTheScanner())
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard case .documentStart? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_KYC).longErrorCode, 0)
        guard case .documentDetails(9, _)? = app.expect("onGetIDVConfirmDocumentDetails") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVConfirmDocumentDetails(isConfirm: true, challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .selfieStart(.IDV_POSTLOGIN_KYC)? = app.expect("onGetIDVSelfieProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieProcessStartConfirmation(isConfirm: true, useDeviceBackCamera: false, idvWorkflow: .IDV_POSTLOGIN_KYC).longErrorCode, 0)
        guard case .kycResponse("katie", _, 240)? = app.expect("onIDVActivatedCustomerKYCResponse") else { return }
        XCTAssertTrue(app.noFailures, "\(app.failures)")
    }
}
