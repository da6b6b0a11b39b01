import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
@testable import IDVHTTP
@testable import IDVStoreSQLite
import IDVTools
import XCTest
import IDVTestSupport
import IDVServerTestSupport

/// Issue #15's server part on the typed flows, over HTTP on loopback (test doubles): the close
/// paths and payload values the codelabs expect (seeds 000 §1.3/§1.5/§1.6, 001 §6.2, 002 §3.1 A4
/// and §6, 003). The same behaviours driven by the seeds' own code against a real `idvd`:
/// Tests/SeedConformanceTests/SeedServerPartTests.swift.
final class SeedClosePathServerTests: XCTestCase {
    /// Seed 000 §1.3 (L1265–L1300): in KYC (mode 9) the document details' Close is the cancel API —
    /// `setIDVConfirmDocumentDetails(false)` ends KYC with 240, audited; activation (mode 8) rescans
    /// (WorkflowActivationTests).
    func testKYCDocumentDetailsCloseEndsKYCWith240() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("kyc-close")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        let details = try XCTUnwrap(try api.scanDocument(try TestImages.obamaPassportPage()).challenge)
        XCTAssertEqual(details.name, "getIDVConfirmDocumentDetails")
        XCTAssertEqual(details.challengeMode, 9)
        let end = try api.answer(["is_confirm": false])
        let e = try XCTUnwrap(end.event, "\(String(describing: end.challenge?.name))")
        XCTAssertNil(end.challenge)
        XCTAssertEqual(e.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertEqual(e.error.longErrorCode, 240)
        XCTAssertEqual(e.status.statusCode, 400)
        XCTAssertEqual(try server.transactions().last?["outcome"], "cancelled")
        XCTAssertNil(try api.current().challenge, "the session is free")
    }

    /// Seed 000 L1821 "Recapture to rescan" (issue #35): in KYC the details' Recapture answers
    /// `{"is_confirm": false, "rescan": true}` and the document start comes again (an attempt
    /// used; audited `idv.document_rescan`), where a plain `false` (Close) ends KYC with 240.
    /// With no document attempt left, Recapture ends the flow (1010). `rescan` must be a boolean.
    func testKYCDocumentDetailsRecaptureRescans() throws {
        let server = try WorkflowServer(["idv.document_attempts": "2"])
        let api = try server.loggedIn("kyc-rescan")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        XCTAssertEqual(try api.scanDocument(try TestImages.obamaPassportPage()).challenge?.name, "getIDVConfirmDocumentDetails")
        XCTAssertEqual(try api.answer(["is_confirm": false, "rescan": "yes"]).error?.longErrorCode, 1001)
        let again = try api.answer(["is_confirm": false, "rescan": true])
        XCTAssertNil(again.error)
        XCTAssertEqual(again.challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(again.challenge?.attemptsLeft, 1)
        XCTAssertEqual(try server.audit().filter { $0.action == "idv.document_rescan" }.count, 1)
        let details = try XCTUnwrap(try api.scanDocument(try TestImages.obamaPassportPage()).challenge)
        XCTAssertEqual(details.name, "getIDVConfirmDocumentDetails")
        let end = try XCTUnwrap(try api.answer(["is_confirm": false, "rescan": true]).event)
        XCTAssertEqual(end.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertEqual(end.error.longErrorCode, 1010)
    }

    /// Seed 000's KYC selfie screen sends "true" whatever the verdict (L1413), and has no other
    /// button: after a failed match (no continue-flow offered) "true" ends the KYC unverified —
    /// status 400 "Identity not verified: NOT_MATCHED", outcome completed_unverified, no template,
    /// never a success — instead of 1020 and the same screen for ever. The explicit key is still
    /// refused, and activation (whose screen shows the server's buttons) still refuses "true".
    func testKYCContinueAfterAFailedMatchEndsUnverified() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("kyc-continue")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        let c = try XCTUnwrap(try api.captureSelfie(try TestImages.wrongPersonSelfie()).challenge)
        let sd = try c.payload.decode(SelfieDetails.self)
        XCTAssertEqual(sd.responseData.biometricResult.displayText, .notMatched)
        XCTAssertFalse(sd.actionButtons.failureButton.map(\.key).contains(.continueFlow))
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).error?.longErrorCode, 1020)
        let end = try XCTUnwrap(try api.answer(["action": "true"]).event)
        XCTAssertEqual(end.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertEqual(end.error.longErrorCode, 0)
        XCTAssertEqual(end.status.statusCode, 400)
        XCTAssertEqual(end.status.statusMessage, "Identity not verified: NOT_MATCHED")
        XCTAssertEqual(try server.transactions().last?["outcome"], "completed_unverified")
        XCTAssertNil(try server.store.biometricTemplate(userID: "kyc-continue"))
    }

    /// Seed 000 §1.5/§1.6 (L1443–L1460, L1570–L1587): the selfie confirmation's and the consent's
    /// Close only navigate back, leaving KYC open. Starting another flow ends it with its terminal
    /// event (240) in the envelope's `ended`, audited, its pending challenge consumed (1005), and
    /// the new flow starts in the same reply.
    func testStartingAnotherFlowEndsTheOpenOneWithItsTerminalEvent240() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("supersede")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        let confirm = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).challenge)
        XCTAssertEqual(confirm.name, "getIDVSelfieConfirmation")
        // The app pops to its KYC screen (no SDK call) and starts a document scan.
        let next = try api.startFlow("idv.postlogin.document_scan", ["reason": "Proof of address"])
        XCTAssertNil(next.error)
        let ended = try XCTUnwrap(next.envelope?.ended)
        XCTAssertEqual(ended.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertEqual(ended.error.longErrorCode, 240)
        XCTAssertEqual(ended.status.statusCode, 400)
        XCTAssertFalse(try ended.payload.decode(KYCResponse.self).isSuccess)
        XCTAssertEqual(next.challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(next.challenge?.challengeMode, 10)
        XCTAssertNil(next.event)
        // The old challenge is spent; the new flow runs on.
        XCTAssertEqual(try api.answer(["action": "continue-flow"], to: confirm).error?.longErrorCode, 1005)
        XCTAssertEqual(try api.current().challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        let audit = try server.audit()
        let superseded = try XCTUnwrap(audit.first { $0.action == "idv.superseded" })
        XCTAssertEqual(superseded.details["by_flow"], "idv.postlogin.document_scan")
        XCTAssertEqual(superseded.details["flow"], "idv.postlogin.kyc")
        XCTAssertEqual(try server.transactions().last?["outcome"], "superseded")
        XCTAssertEqual(try server.store.query("SELECT outcome, error_code FROM flow_runs WHERE flow = 'idv.postlogin.kyc'").first?[0].text, "superseded")
        // Without a flow open nothing is "ended".
        XCTAssertEqual(try api.answer(["is_confirm": false]).event?.error.longErrorCode, 240)
        XCTAssertNil(try api.startFlow("idv.template_status").envelope?.ended)
    }

    /// Seed 002 §3.1 A4 (L1074–L1079): `setIDVSelfieConfirmation("false")` rejects the selfie: the
    /// selfie start comes again while selfie attempts remain, then the flow ends (1010).
    func testSelfieConfirmationFalseRecapturesWhileAttemptsRemain() throws {
        let server = try WorkflowServer(["idv.selfie_attempts": "2"])
        let api = try server.loggedIn("reject")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        XCTAssertEqual(try api.captureSelfie(try TestImages.obamaSelfie()).challenge?.name, "getIDVSelfieConfirmation")
        let again = try api.answer(["action": "false"])
        XCTAssertNil(again.error)
        XCTAssertEqual(again.challenge?.name, "getIDVSelfieProcessStartConfirmation")
        XCTAssertEqual(again.challenge?.attemptsLeft, 1)
        XCTAssertEqual(try api.captureSelfie(try TestImages.obamaSelfie()).challenge?.name, "getIDVSelfieConfirmation")
        let end = try XCTUnwrap(try api.answer(["action": "false"]).event)
        XCTAssertEqual(end.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertEqual(end.error.longErrorCode, 1010)
        XCTAssertEqual(try server.audit().filter { $0.action == "idv.selfie_rejected" }.count, 2)
        XCTAssertNil(try server.store.biometricTemplate(userID: "reject"))
        // A key that was not offered is still refused (1020), "FALSE" is not "false".
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        try api.captureSelfie(try TestImages.obamaSelfie())
        XCTAssertEqual(try api.answer(["action": "FALSE"]).error?.longErrorCode, 1020)
    }

    /// Seed 003 (L461–L464, L1128–L1133): a scan whose document has errors is a processed scan —
    /// status 100 — with `document_status` ERROR and its error list (seed 003's result screen).
    func testAdditionalScanOfADocumentWithErrorsIsStatus100WithTheErrorList() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("scan-errors")
        try api.startFlow("idv.postlogin.document_scan", ["reason": "Old passport"])
        let e = try XCTUnwrap(try api.scanDocument(try TestImages.expiredPassportPage()).event)
        XCTAssertEqual(e.name, "onIDVAdditionalDocumentScan")
        XCTAssertEqual(e.error.longErrorCode, 0)
        XCTAssertEqual(e.status.statusCode, 100)
        let d = try e.payload.decode(AdditionalDocumentScanDetails.self)
        XCTAssertEqual(d.documentStatus.overallDocumentStatus, .error)
        XCTAssertTrue(d.documentStatus.errorList.contains("The document has expired (2015-01-01)."), "\(d.documentStatus.errorList)")
        // The audit still says the document was not valid.
        XCTAssertEqual(try server.transactions().last?["outcome"], "document_invalid")
        XCTAssertEqual(try server.transactions().last?["status"], "FAILURE")
    }

    /// Seed 002 §6.1/§6.2, seed 001 §6.2: `document_type` PASSPORT (not the MRZ code), `result_criteria`
    /// FACE_MATCH; server biometric `video.workflow_data.frames` = the frames received and
    /// `video.meta_data` = the capture's meta_data, sanitised.
    func testPayloadValuesAsTheSeedsShowThem() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("values")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        let details = try XCTUnwrap(try api.scanDocument(try TestImages.obamaPassportPage()).challenge)
        XCTAssertEqual(details.payload["response_data"]?["document_info"]?["document_type"], "PASSPORT")
        XCTAssertEqual(try details.payload.decode(DocumentDetails.self).responseData.documentInfo.documentType, .passport)
        try api.answer(["is_confirm": true])
        let confirm = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).challenge)
        XCTAssertEqual(confirm.payload["response_data"]?["biometric_result"]?["result_criteria"], "FACE_MATCH")
        try api.answer(["action": "continue-flow"])
        XCTAssertEqual(try api.answer(["is_opt_in": true]).event?.status.statusCode, 100)

        let frame = try TestImages.obamaSelfie2()
        try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"])
        try api.answer(["is_confirm": true, "use_back_camera": false])
        let meta: JSONValue = ["sdk": "IDVKit", "sdk_version": "0.9.0", "platform": "ios", "camera": "front", "frame_count": 3, "fps": 12.5,
                               "device_name": "Katie's iPhone", "sdk_version_long": "x", "camera_extra": ["a": 1]]
        let done = try api.answer(["frames": [.string(frame.base64EncodedString()), .string(frame.base64EncodedString()),
                                              .string(frame.base64EncodedString())], "fps": 12.5, "meta_data": meta], route: "/v1/session/upload")
        let e = try XCTUnwrap(done.event, "\(String(describing: done.error))")
        let r = try e.payload.decode(ServerBiometricAuthenticationResult.self)
        XCTAssertEqual(r.biometricResult?.displayText, .matched)
        XCTAssertEqual(r.biometricResult?.resultCriteria, .faceMatch)
        XCTAssertEqual(r.video?.workflowData, SelfieWorkflowData(workflow: 8, frames: 3))
        XCTAssertEqual(r.video?.metaData, SelfieCaptureMetadata(sdk: "IDVKit", sdkVersion: "0.9.0", platform: "ios", camera: "front",
                                                                frameCount: 3, framesPerSecond: 12.5))
        XCTAssertNil(e.payload["video"]?["meta_data"]?["device_name"], "unknown keys are dropped")

        // Bad values are dropped; a meta_data that is not an object is refused (1001), nothing used.
        try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"])
        try api.answer(["is_confirm": true, "use_back_camera": false])
        let b64 = JSONValue.string(frame.base64EncodedString())
        XCTAssertEqual(try api.answer(["frames": [b64], "meta_data": "iPhone"], route: "/v1/session/upload").error?.longErrorCode, 1001)
        XCTAssertEqual(try api.current().challenge?.attemptsLeft, 3)
        let odd = try api.answer(["frames": [b64], "meta_data": ["sdk": "<script>", "camera": "side", "frame_count": -1, "fps": 1000,
                                                                 "platform": "linux"]], route: "/v1/session/upload")
        let oddVideo = try XCTUnwrap(try XCTUnwrap(odd.event).payload.decode(ServerBiometricAuthenticationResult.self).video)
        XCTAssertEqual(oddVideo.metaData, SelfieCaptureMetadata(platform: "linux"))
        XCTAssertEqual(oddVideo.workflowData?.frames, 1)
    }
}
