import Foundation
import RELID
@testable import SeedApp
import XCTest

/// The five codelabs' flows, run by the codelabs' own (unchanged) service layer and delegate
/// manager against a real `idvd`, to the callbacks and codes the seeds expect.
final class SeedFlowTests: SeedTestCase {
    /// Seed 002: activation code → document → selfie → consent → password → logged in. The
    /// consent arrives through the seeds' spelling `getIDVBiometricOpt(inConsent:…)` (it used to hang here).
    func testSeed002ActivationWithIDV() throws {
        let code = try server.createUser("katie", idv: true)
        setCaptures(document: try server.specimen())
        boot()
        XCTAssertEqual(RDNAService.shared.setUser("katie").longErrorCode, 0)
        guard case .getActivationCode? = app.expect("getActivationCode") else { return }
        XCTAssertEqual(RDNAService.shared.setActivationCode(code).longErrorCode, 0)
        guard let (details, selfie) = documentAndSelfie(workflow: .IDV_ACTIVATION, mode: 8) else { return }
        XCTAssertEqual(SeedJSON.value(details, "response_data", "overall_status") as? String, "VALID")
        XCTAssertEqual(SeedJSON.verdict(selfie), "MATCHED")
        // Seed 002 L3233-L3243: the tapped button's server-provided key, passed exactly.
        let keys = SeedJSON.actionKeys(selfie, "success_button")
        XCTAssertEqual(keys, ["continue-flow"])
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieConfirmation(action: keys.first ?? "", challengeMode: RDNAChallengeOpMode(rawValue: 8)!).longErrorCode, 0)
        guard case let .consent(user, _, 8, _, 0)? = app.expect("onGetIDVBiometricOptInConsent") else { return }
        XCTAssertEqual(user, "katie")
        XCTAssertEqual(RDNAIDVService.shared.setIDVBiometricOptInConsent(isOptIn: true, challengeMode: RDNAChallengeOpMode(rawValue: 8)!).longErrorCode, 0)
        guard case .getPassword(1, _, 0)? = app.expect("getPassword") else { return }
        XCTAssertEqual(RDNAService.shared.setPassword(password, challengeMode: .CHALLENGE_OP_SET).longErrorCode, 0)
        guard case .loggedIn("katie")? = app.expect("onUserLoggedIn") else { return }
        XCTAssertTrue(app.noFailures, "\(app.failures)")
    }

    /// Seed 000: post-login KYC (workflow 6, mode 9) → `onIDVActivatedCustomerKYCResponse` 0 / 100.
    func testSeed000PostLoginKYC() throws {
        try activate("katie")
        setCaptures(document: try server.specimen())
        // ActivatedCustomerKYCViewController.startKYCButtonTapped (seed 000 L1021).
        XCTAssertEqual(RDNAIDVService.shared.initiateActivatedCustomerKYC(reason: "Post Login KYC").longErrorCode, 0)
        guard let (details, selfie) = documentAndSelfie(workflow: .IDV_POSTLOGIN_KYC, mode: 9) else { return }
        XCTAssertEqual(SeedJSON.verdict(selfie), "MATCHED")
        // Every field seed 002's screens read (L1973-L2075, L2840-L2990); `signature_image` only
        // when the document has a signature crop (this reader makes none; the screen skips it).
        XCTAssertEqual(SeedJSON.missing(details, ["response_data.document_info.surname", "response_data.document_info.given_name",
                                                  "response_data.document_info.date_of_birth", "response_data.document_info.document_number",
                                                  "response_data.document_info.expiry_date", "response_data.document_info.issuing_country",
                                                  "response_data.document_info.document_type", "response_data.document_info.portrait_image",
                                                  "response_data.document_pages[0].page_index", "response_data.document_pages[0].image",
                                                  "response_data.checks_performed[0].check_name", "response_data.checks_performed[0].result",
                                                  "response_data.errors", "response_data.warnings", "response_data.overall_status"]), [])
        XCTAssertEqual(SeedJSON.missing(selfie, ["response_data.biometric_result.display_text", "response_data.biometric_result.result_criteria",
                                                 "response_data.face_matcher_response.score",
                                                 "response_data.analyze_liveness_response.video.liveness_result.score",
                                                 "response_data.analyze_liveness_response.video.autocapture_result.selfie_image",
                                                 "response_data.document_detail.document_info.portrait_image",
                                                 "response_data.document_detail.document_info.name",
                                                 "action_buttons.success_button[0].key", "action_buttons.success_button[0].button_text",
                                                 "action_buttons.failure_button", "user_id"]), [])
        // Seed 000 L1413: "String value, not Bool!"
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieConfirmation(action: "true", challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .consent("katie", _, 9, _, 0)? = app.expect("onGetIDVBiometricOptInConsent") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVBiometricOptInConsent(isOptIn: true, challengeMode: RDNAChallengeOpMode(rawValue: 9)!).longErrorCode, 0)
        guard case .kycResponse("katie", 100, 0)? = app.expect("onIDVActivatedCustomerKYCResponse") else { return }
        // The consent stored a template (seed 001's precondition).
        XCTAssertEqual(RDNAIDVService.shared.checkIDVUserBiometricTemplateStatus().longErrorCode, 0)
        guard case let .templateStatus(json, 100, 0)? = app.expect("onIDVCheckUserBiometricTemplateStatus") else { return }
        XCTAssertEqual(SeedJSON.value(json, "result") as? Bool, true)
        XCTAssertEqual(SeedJSON.value(json, "orchestration_use_case") as? String, "RDNA_IDV_CHECK_TEMPLATE")
        // Seed 001 §6.1 (L522-L530).
        XCTAssertEqual(SeedJSON.missing(json, ["status_code", "status_message", "orchestration_use_case", "result", "attempts_left", "user_id"]), [])
        XCTAssertTrue(app.noFailures, "\(app.failures)")
    }

    /// Seed 003: additional document scan (workflow 7, mode 10) → `onIDVAdditionalDocumentScan`
    /// 0 / 100 with seed 003's JSON (identity_data, document_info.document_images, document_status).
    func testSeed003AdditionalDocumentScan() throws {
        try activate("katie")
        setCaptures(document: try server.specimen())
        // AdditionalDocumentScanViewController (seed 003 L742).
        XCTAssertEqual(RDNAIDVService.shared.initiateIDVAdditionalDocumentScan(reason: "Additional Document Verification").longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_DOC_SCAN_ONLY)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVDocumentScanProcessStartConfirmation(isConfirm: true, idvWorkflow: .IDV_POSTLOGIN_DOC_SCAN_ONLY).longErrorCode, 0)
        guard case let .documentScanResult(json, 100, 10, 0)? = app.expect("onIDVAdditionalDocumentScanResponse") else { return }
        // The fields seed 003's result screen reads (L474-L498, L1073-L1289).
        XCTAssertNotNil(SeedJSON.value(json, "identity_data", "Surname and given names") as? String)
        XCTAssertNotNil(SeedJSON.value(json, "document_info", "document_number") as? String)
        XCTAssertNotNil(SeedJSON.value(json, "document_info", "document_images", "front_page") as? String)
        XCTAssertNotNil(SeedJSON.value(json, "document_info", "document_images", "portrait_image") as? String)
        XCTAssertEqual(SeedJSON.value(json, "document_status", "overall_document_status") as? String, "OK")
        XCTAssertEqual((SeedJSON.value(json, "document_status", "error_list") as? [Any])?.count, 0)
        // Every field seed 003's result screen reads that a one-page, chip-less document has
        // (`back_page`, `signature_image`, `issue_date` and the NFC status only when the document has them).
        XCTAssertEqual(SeedJSON.missing(json, ["identity_data.Surname and given names", "identity_data.Date of birth", "identity_data.Sex",
                                               "identity_data.Nationality", "identity_data.Surname", "identity_data.Given name",
                                               "document_info.document_number", "document_info.expiry_date", "document_info.issuing_authority",
                                               "document_info.document_images.front_page", "document_info.document_images.portrait_image",
                                               "document_status.overall_document_status", "document_status.error_list", "document_status.warning_list",
                                               "document_status.checks_performed[0].check_name", "document_status.checks_performed[0].check_status",
                                               "document_status.checks_performed[0].check_category", "document_status.is_nfc_document"]), [])
        // Repeatable (seed 003 §0): a second scan runs the same way.
        XCTAssertEqual(RDNAIDVService.shared.initiateIDVAdditionalDocumentScan(reason: "Additional Document Verification").longErrorCode, 0)
        guard case .documentStart(.IDV_POSTLOGIN_DOC_SCAN_ONLY)? = app.expect("onGetIDVDocumentScanProcessStartConfirmation") else { return }
        XCTAssertTrue(app.noFailures, "\(app.failures)")
    }

    /// Seeds 004 and 001: template status 600 → opt-in (password mode 6, selfie, captured frame,
    /// recapture, approve) → 100 → server biometric authentication MATCHED (same person) and
    /// NOT_MATCHED (another person) → opt-out (password mode 7) → 100 → status 600.
    func testSeed004OptInOptOutAndSeed001ServerBiometricAuthentication() throws {
        try activate("katie")
        setCaptures(document: nil)
        XCTAssertEqual(RDNAIDVService.shared.checkIDVUserBiometricTemplateStatus().longErrorCode, 0)
        guard case .templateStatus(_, 600, 0)? = app.expect("onIDVCheckUserBiometricTemplateStatus") else { return }

        // Opt-in (BiometricOptInViewController, seed 004 L1134-L1312).
        XCTAssertEqual(RDNAIDVService.shared.initiateIDVBiometricOptIn().longErrorCode, 0)
        guard case .getPassword(6, _, 0)? = app.expect("getPassword") else { return }
        XCTAssertEqual(RDNAService.shared.setPassword(password, challengeMode: RDNAChallengeOpMode(rawValue: 6)!).longErrorCode, 0)
        guard case .selfieStart(.IDV_POSTLOGIN_OPTIN)? = app.expect("onGetIDVSelfieProcessStartConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieProcessStartConfirmation(isConfirm: true, useDeviceBackCamera: false, idvWorkflow: .IDV_POSTLOGIN_OPTIN).longErrorCode, 0)
        guard case let .capturedFrame(first)? = app.expect("onIDVOptInCapturedFrameConfirmation") else { return }
        XCTAssertNotNil(Data(base64Encoded: first))
        XCTAssertEqual(RDNAIDVService.shared.setIDVBiometricOptInConfirmation(status: RDNAIDVStatus.RDNA_IDV_RECAPTURE).longErrorCode, 0)
        guard case .capturedFrame? = app.expect("onIDVOptInCapturedFrameConfirmation") else { return }
        XCTAssertEqual(RDNAIDVService.shared.setIDVBiometricOptInConfirmation(status: .RDNA_IDV_APPROVED).longErrorCode, 0)
        guard case .optInStatus(_, 100, 0)? = app.expect("onIDVBiometricOptInStatus") else { return }
        XCTAssertEqual(RDNAIDVService.shared.checkIDVUserBiometricTemplateStatus().longErrorCode, 0)
        guard case .templateStatus(_, 100, 0)? = app.expect("onIDVCheckUserBiometricTemplateStatus") else { return }

        // Server biometric authentication (ServerBiometricAuthenticationViewController, seed 001 L857).
        for (frames, verdict) in [(Paths.katieLive, "MATCHED"), (Paths.aocLive, "NOT_MATCHED")] {
            setCaptures(document: nil, selfie: frames)
            XCTAssertEqual(RDNAIDVService.shared.initiateIDVServerBiometricAuthentication(reason: "Server Biometric Authentication").longErrorCode, 0)
            guard case .selfieStart(.IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC)? = app.expect("onGetIDVSelfieProcessStartConfirmation") else { return }
            XCTAssertEqual(RDNAIDVService.shared.setIDVSelfieProcessStartConfirmation(isConfirm: true, useDeviceBackCamera: false,
                                                                                     idvWorkflow: .IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC).longErrorCode, 0)
            guard case let .serverBiometric(json, 100, 0)? = app.expect("onIDVServerBiometricAuthenticationResult") else { return }
            XCTAssertEqual(SeedJSON.value(json, "biometric_result", "display_text") as? String, verdict)
            XCTAssertEqual(SeedJSON.value(json, "idv_audit_info", "orchestration_use_case") as? String, "RDNA_IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC")
            XCTAssertEqual(SeedJSON.value(json, "idv_audit_info", "reason") as? String, "Server Biometric Authentication")
            // Seed 001 §6.2 (L565-L587) and the fields its screen reads (L955-L968); `video.meta_data`
            // and the real frame count: SeedServerPartTests.testSeedPayloadValues.
            XCTAssertEqual(SeedJSON.missing(json, ["video.workflow_data", "video.client_version", "idv_audit_info.audit_metrics.start_timestamp",
                                                   "idv_audit_info.audit_metrics.end_timestamp", "idv_audit_info.status",
                                                   "idv_audit_info.idv_audit_transaction_id", "purpose", "attempts", "user_id", "attempts_left",
                                                   "biometric_result.display_text"]), [])
        }

        // Opt-out (BiometricOptOutViewController, seed 004 L1516-L1650).
        XCTAssertEqual(RDNAIDVService.shared.initiateIDVBiometricOptOut().longErrorCode, 0)
        guard case .getPassword(7, _, 0)? = app.expect("getPassword") else { return }
        XCTAssertEqual(RDNAService.shared.setPassword(password, challengeMode: RDNAChallengeOpMode(rawValue: 7)!).longErrorCode, 0)
        guard case .optOutStatus(_, 100, 0)? = app.expect("onIDVBiometricOptOutStatus") else { return }
        XCTAssertEqual(RDNAIDVService.shared.checkIDVUserBiometricTemplateStatus().longErrorCode, 0)
        guard case .templateStatus(_, 600, 0)? = app.expect("onIDVCheckUserBiometricTemplateStatus") else { return }
        XCTAssertTrue(app.noFailures, "\(app.failures)")
    }
}
