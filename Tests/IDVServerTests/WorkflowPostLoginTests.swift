import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
@testable import IDVHTTP
import IDVReaders
@testable import IDVStoreSQLite
import IDVTools
import XCTest
import IDVTestSupport
import IDVServerTestSupport

/// Seeds 000 (KYC), 003 (additional document scan), 001 (server biometric authentication) and
/// 004 (template opt-in / opt-out) over HTTP on loopback.
final class WorkflowPostLoginTests: XCTestCase {
    // MARK: Seed 000 — KYC

    func testKYCHappyPathConsentRefusedStillCompletesWithDualValidation() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("kim")
        let s = try XCTUnwrap(try api.startFlow("idv.postlogin.kyc", ["reason": "Account upgrade"]).challenge)
        XCTAssertEqual(s.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(s.challengeMode, 9)
        XCTAssertEqual(s.idvWorkflow, 6)
        try api.scanDocument(try TestImages.obamaPassportPage())
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.challengeMode, 9)
        let c = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).challenge)
        XCTAssertEqual(try c.payload.decode(SelfieDetails.self).responseData.biometricResult.displayText, .matched)
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).challenge?.name, "getIDVBiometricOptInConsent")
        let done = try api.answer(["is_opt_in": false])
        let e = try XCTUnwrap(done.event)
        XCTAssertNil(done.challenge)
        XCTAssertEqual(e.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertEqual(e.error.longErrorCode, 0)
        XCTAssertEqual(e.status.statusCode, 100)
        let k = try e.payload.decode(KYCResponse.self)
        XCTAssertTrue(k.isSuccess)
        XCTAssertEqual(k.idvAuditInfo?.orchestrationUseCase, .postLoginKYC)
        XCTAssertEqual(k.idvAuditInfo?.reason, "Account upgrade")
        XCTAssertEqual(k.idvAuditInfo?.status, .success)
        XCTAssertTrue(k.idvAuditInfo?.idvAuditTransactionID.hasPrefix("txn_") ?? false)
        XCTAssertNil(try server.store.biometricTemplate(userID: "kim"))
        XCTAssertEqual(try server.store.consents(userID: "kim").map(\.granted), [false])
        // The session is free for another flow.
        XCTAssertNil(try api.current().challenge)
    }

    func testKYCCancelAtEachStartScreenGives240() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("kai")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        let e1 = try XCTUnwrap(try api.answer(["is_confirm": false]).event)
        XCTAssertEqual(e1.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertEqual(e1.error.longErrorCode, 240)
        XCTAssertFalse(try e1.payload.decode(KYCResponse.self).isSuccess)
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        let e2 = try XCTUnwrap(try api.answer(["is_confirm": false]).event)
        XCTAssertEqual(e2.error.longErrorCode, 240)
        // Cancel inside the native capture (upload answer {"cancel": true}).
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.answer(["is_confirm": true])
        let e3 = try XCTUnwrap(try api.answer(["cancel": true], route: "/v1/session/upload").event)
        XCTAssertEqual(e3.error.longErrorCode, 240)
        XCTAssertEqual(try server.transactions().filter { $0["outcome"] == "cancelled" }.count, 3)
    }

    func testKYCContinueAnywayPolicyCompletesUnverifiedWithStatus400AndNoTemplate() throws {
        let server = try WorkflowServer(["idv.continue_anyway": "true"])
        let api = try server.loggedIn("lee")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        let sd = try XCTUnwrap(try api.captureSelfie(try TestImages.wrongPersonSelfie()).challenge).payload.decode(SelfieDetails.self)
        XCTAssertEqual(sd.responseData.biometricResult.displayText, .notMatched)
        XCTAssertEqual(sd.actionButtons.failureButton.map(\.key), [.reinitSelfie, .reinitDocumentScan, .continueFlow])
        XCTAssertEqual(sd.actionButtons.failureButton.last?.buttonText, "Continue Anyway")
        try api.answer(["action": "reinit-idv-selfie"])
        // Never after LIVENESS_FAILED.
        let l = try XCTUnwrap(try api.captureSelfie(try TestImages.printAttack()).challenge).payload.decode(SelfieDetails.self)
        XCTAssertEqual(l.responseData.biometricResult.displayText, .livenessFailed)
        XCTAssertFalse(l.actionButtons.failureButton.contains { $0.key == .continueFlow })
        try api.answer(["action": "reinit-idv-selfie"])
        try api.captureSelfie(try TestImages.wrongPersonSelfie())
        let e = try XCTUnwrap(try api.answer(["action": "continue-flow"]).event)
        XCTAssertEqual(e.error.longErrorCode, 0)
        XCTAssertEqual(e.status.statusCode, 400)
        XCTAssertFalse(try e.payload.decode(KYCResponse.self).isSuccess)
        XCTAssertNil(try server.store.biometricTemplate(userID: "lee"))
        XCTAssertEqual(try server.store.consents(userID: "lee").count, 0)
    }

    func testOutOfOrderWrongRouteAndReplayedAnswersAreRefusedAndChangeNothing() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("max")
        let start = try XCTUnwrap(try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"]).challenge)
        // An answer to a challenge that is not the current one.
        let wrong = WireChallenge(name: "getIDVSelfieConfirmation", challengeID: start.challengeID, challengeMode: 9, attemptsLeft: 3)
        XCTAssertEqual(try api.answer(["action": "continue-flow"], to: wrong).error?.longErrorCode, 1002)
        // Images to the JSON route, and JSON answers to the upload route.
        XCTAssertEqual(try api.answer(["is_confirm": true], route: "/v1/session/upload").error?.longErrorCode, 1001)
        let up = try XCTUnwrap(try api.answer(["is_confirm": true]).challenge)
        XCTAssertEqual(try api.answer(["pages": []], to: up).error?.longErrorCode, 1001)
        XCTAssertEqual(try api.answer(["pages": [["page_index": 0, "image": "%%%"]]], to: up, route: "/v1/session/upload").error?.longErrorCode, 1001)
        // Replay of the consumed start challenge.
        XCTAssertEqual(try api.answer(["is_confirm": true], to: start).error?.longErrorCode, 1005)
        // (Another flow started while this one runs supersedes it: SeedClosePathServerTests.)
        // Still at the upload with all attempts left.
        let cur = try XCTUnwrap(try api.current().challenge)
        XCTAssertEqual(cur.name, "uploadIDVDocumentPages")
        XCTAssertEqual(cur.attemptsLeft, 3)
        XCTAssertEqual(try api.uploadPages([try TestImages.obamaPassportPage()]).challenge?.name, "getIDVConfirmDocumentDetails")
        // A bad reason is refused before anything starts.
        let other = try server.loggedIn("mo")
        XCTAssertEqual(try other.startFlow("idv.postlogin.kyc", ["reason": .integer(5)]).error?.longErrorCode, 1001)
        XCTAssertNil(try other.current().challenge)
    }

    func testAbandonedFlowExpiresAndResetReleasesImages() throws {
        let server = try WorkflowServer(["idv.flow_timeout_seconds": "1"])
        let api = try server.loggedIn("ned")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        XCTAssertGreaterThan(try server.store.query("SELECT count(*) FROM idv_media").first?[0].int ?? 0, 0)
        server.clock.advance(by: 2)
        let e = try XCTUnwrap(try api.answer(["is_confirm": true]).event)
        XCTAssertEqual(e.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertEqual(e.error.longErrorCode, 1019)
        XCTAssertEqual(try server.transactions().last?["outcome"], "expired")
        XCTAssertEqual(try server.store.query("SELECT count(*) FROM idv_media").first?[0].int, 0)
        // Abandoned by resetAuthState: recorded, images released.
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        let r = try api.call("POST", "/v1/session/reset")
        XCTAssertEqual(r.event?.name, "onAuthStateReset")
        XCTAssertEqual(try server.transactions().last?["outcome"], "abandoned")
        XCTAssertEqual(try server.store.query("SELECT count(*) FROM idv_media").first?[0].int, 0)
    }

    func testMediaRetentionKeepsSealedImagesUntilExpiry() throws {
        let server = try WorkflowServer(["idv.media_retention_seconds": "1"])
        let api = try server.loggedIn("oz")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        try api.scanDocument(try TestImages.obamaPassportPage())
        // The details' Close ends KYC (mode 9, seed 000 §1.3): 240.
        XCTAssertEqual(try api.answer(["is_confirm": false]).event?.error.longErrorCode, 240)
        let rows = try server.store.query("SELECT kind, ciphertext, expires_at FROM idv_media")
        XCTAssertEqual(Set(rows.compactMap { $0[0].text }), ["portrait", "name"])
        XCTAssertTrue(rows.allSatisfy { $0[2].int != nil })
        // Sealed: the JPEG magic of the portrait is not in the stored bytes.
        if case let .bytes(b) = rows.first(where: { $0[0].text == "portrait" })![1] { XCTAssertFalse(b.starts(with: [0xFF, 0xD8])) } else { XCTFail("no blob") }
        XCTAssertEqual(try server.store.purgeExpiredMedia(now: server.clock.now()), 0, "kept for the retention")
        server.clock.advance(by: 2)
        XCTAssertEqual(try server.store.purgeExpiredMedia(now: server.clock.now()), 2)
    }

    // MARK: Seed 003 — additional document scan

    func testAdditionalDocumentScanRepeatableEachStoredWithReason() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("pia")
        let s = try XCTUnwrap(try api.startFlow("idv.postlogin.document_scan", ["reason": "Address proof"]).challenge)
        XCTAssertEqual(s.challengeMode, 10)
        XCTAssertEqual(s.idvWorkflow, 7)
        let e = try XCTUnwrap(try api.scanDocument(try TestImages.obamaPassportPage()).event)
        XCTAssertEqual(e.name, "onIDVAdditionalDocumentScan")
        XCTAssertEqual(e.error.longErrorCode, 0)
        let d = try e.payload.decode(AdditionalDocumentScanDetails.self)
        XCTAssertEqual(d.identityData["Surname and given names"], "OBAMA BARACK")
        XCTAssertEqual(d.documentInfo.documentNumber, "P1234567")
        XCTAssertEqual(d.documentStatus.overallDocumentStatus, .ok)
        XCTAssertNotNil(d.documentInfo.documentImages.frontPage)
        XCTAssertEqual(e.payload["idv_audit_info"]?["orchestration_use_case"], "RDNA_IDV_POSTLOGIN_DOC_SCAN_ONLY")
        // Again, with an expired document: ERROR, still stored.
        try api.startFlow("idv.postlogin.document_scan", ["reason": "Second ID"])
        let e2 = try XCTUnwrap(try api.scanDocument(try TestImages.expiredPassportPage()).event)
        let d2 = try e2.payload.decode(AdditionalDocumentScanDetails.self)
        XCTAssertEqual(d2.documentStatus.overallDocumentStatus, .error)
        XCTAssertTrue(d2.documentStatus.errorList.contains("The document has expired (2015-01-01)."), "\(d2.documentStatus.errorList)")
        XCTAssertEqual(e2.status.statusCode, 100, "a processed scan: seed 003's result screen shows ERROR with its list")
        let scans = try server.store.documentScans(userID: "pia")
        XCTAssertEqual(scans.map(\.reason), ["Address proof", "Second ID"])
        XCTAssertEqual(scans.map(\.overallStatus), ["VALID", "INVALID"])
        // The stored report is sealed to its scan id and has no images.
        let report = try server.vault.open(try XCTUnwrap(scans[0].sealedReport), associatedData: "scan:\(scans[0].scanID)")
        let stored = try JSONDecoder().decode(AdditionalDocumentScanDetails.self, from: Data(report))
        XCTAssertEqual(stored.documentInfo.documentNumber, "P1234567")
        XCTAssertNil(stored.documentInfo.documentImages.frontPage)
        XCTAssertThrowsError(try server.vault.open(scans[0].sealedReport!, associatedData: "scan:\(scans[1].scanID)"))
        // Cancel → 240; unreadable uploads use attempts and end with 1010.
        try api.startFlow("idv.postlogin.document_scan", ["reason": "x"])
        XCTAssertEqual(try api.answer(["is_confirm": false]).event?.error.longErrorCode, 240)
        try api.startFlow("idv.postlogin.document_scan", ["reason": "y"])
        XCTAssertEqual(try api.scanDocument(try TestImages.noDocumentPage()).challenge?.error?.longErrorCode, 1031)
        XCTAssertEqual(try api.uploadPages([try TestImages.noDocumentPage()]).challenge?.attemptsLeft, 1)
        let ex = try XCTUnwrap(try api.uploadPages([try TestImages.noDocumentPage()]).event)
        XCTAssertEqual(ex.error.longErrorCode, 1010)
        XCTAssertEqual(try server.store.documentScans(userID: "pia").count, 2)
    }

    // MARK: Seed 001 — server biometric authentication

    func testServerBiometricNoTemplateGivesClearStatusWithoutCapture() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("quin")
        let st = try XCTUnwrap(try api.startFlow("idv.template_status").event)
        XCTAssertEqual(st.name, "onIDVCheckUserBiometricTemplateStatus")
        XCTAssertEqual(st.status.statusCode, 600)
        let ts = try st.payload.decode(BiometricTemplateStatus.self)
        XCTAssertFalse(ts.result)
        XCTAssertEqual(ts.orchestrationUseCase, .checkTemplate)
        let r = try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"])
        XCTAssertNil(r.challenge)
        let e = try XCTUnwrap(r.event)
        XCTAssertEqual(e.name, "onIDVServerBiometricAuthenticationResult")
        XCTAssertEqual(e.error.longErrorCode, 1017)
        XCTAssertEqual(e.status.statusCode, 600)
    }

    /// Enrols a template for `api`'s user through the opt-in flow (password re-auth).
    func optIn(_ api: API, frame: Data) throws -> WireEvent { try api.optIn(frame: frame) }

    func testServerBiometricMatchedNotMatchedLivenessFailedCancelAndLockout() throws {
        let server = try WorkflowServer(["idv.biometric_attempts": "3"])
        let api = try server.loggedIn("rae")
        XCTAssertEqual(try optIn(api, frame: try TestImages.obamaSelfie()).status.statusCode, 100)
        let st = try XCTUnwrap(try api.startFlow("idv.template_status").event)
        XCTAssertEqual(st.status.statusCode, 100)
        XCTAssertEqual(try st.payload.decode(BiometricTemplateStatus.self).attemptsLeft, 3)

        func authenticate(_ frame: Data) throws -> WireEvent {
            let s = try XCTUnwrap(try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"]).challenge)
            XCTAssertEqual(s.name, "getIDVSelfieProcessStartConfirmation")
            XCTAssertEqual(s.challengeMode, 25)
            XCTAssertEqual(s.idvWorkflow, 8)
            return try XCTUnwrap(try api.captureSelfie(frame).event)
        }
        let ok = try authenticate(try TestImages.obamaSelfie2())
        XCTAssertEqual(ok.name, "onIDVServerBiometricAuthenticationResult")
        let okr = try ok.payload.decode(ServerBiometricAuthenticationResult.self)
        XCTAssertEqual(okr.biometricResult?.displayText, .matched)
        XCTAssertEqual(okr.idvAuditInfo.status, .success)
        XCTAssertEqual(okr.idvAuditInfo.orchestrationUseCase, .postLoginSelfieBiometric)
        XCTAssertEqual(okr.purpose, "Server Biometric Authentication")
        XCTAssertEqual(okr.attempts, 1)
        XCTAssertEqual(okr.attemptsLeft, 3)
        XCTAssertGreaterThanOrEqual(okr.idvAuditInfo.auditMetrics.endTimestamp, okr.idvAuditInfo.auditMetrics.startTimestamp)

        let wrong = try authenticate(try TestImages.wrongPersonSelfie()).payload.decode(ServerBiometricAuthenticationResult.self)
        XCTAssertEqual(wrong.biometricResult?.displayText, .notMatched)
        XCTAssertEqual(wrong.idvAuditInfo.status, .failure)
        XCTAssertEqual(wrong.attemptsLeft, 2)
        let spoof = try authenticate(try TestImages.printAttack()).payload.decode(ServerBiometricAuthenticationResult.self)
        XCTAssertEqual(spoof.biometricResult?.displayText, .livenessFailed)
        XCTAssertEqual(spoof.attemptsLeft, 1)
        XCTAssertNotEqual(spoof.idvAuditInfo.idvAuditTransactionID, wrong.idvAuditInfo.idvAuditTransactionID)

        // Cancel at the selfie start: 240 at once.
        try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"])
        let c = try XCTUnwrap(try api.answer(["is_confirm": false]).event)
        XCTAssertEqual(c.error.longErrorCode, 240)
        XCTAssertNil(try c.payload.decode(ServerBiometricAuthenticationResult.self).biometricResult)

        // Third failure → locked out: the next initiation ends at once with 1010.
        XCTAssertEqual(try authenticate(try TestImages.wrongPersonSelfie()).payload.decode(ServerBiometricAuthenticationResult.self).attemptsLeft, 0)
        let locked = try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"])
        XCTAssertNil(locked.challenge)
        XCTAssertEqual(locked.event?.error.longErrorCode, 1010)
    }

    // MARK: Seed 004 — opt-in / opt-out

    func testOptInPasswordRetriesRecaptureApproveThenOptInTwiceAndOptOutTwice() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("sam")
        let pw = try XCTUnwrap(try api.startFlow("idv.postlogin.optin").challenge)
        XCTAssertEqual(pw.attemptsLeft, 3)
        let retry = try XCTUnwrap(try api.answer(["password": "wrong password 1"]).challenge)
        XCTAssertEqual(retry.name, "getPassword")
        XCTAssertEqual(retry.challengeMode, 6)
        XCTAssertEqual(retry.attemptsLeft, 2)
        XCTAssertEqual(retry.error?.longErrorCode, 1014)
        let s = try XCTUnwrap(try api.answer(["password": .string(WorkflowServer.password)]).challenge)
        XCTAssertEqual(s.name, "getIDVSelfieProcessStartConfirmation")
        XCTAssertEqual(s.idvWorkflow, 10)
        // A static photo is not accepted as a capture.
        let again = try XCTUnwrap(try api.captureSelfie(try TestImages.printAttack()).challenge)
        XCTAssertEqual(again.name, "uploadIDVSelfieFrames")
        XCTAssertEqual(again.status?.statusMessage, "LIVENESS_FAILED")
        let fc = try XCTUnwrap(try api.uploadFrames([try TestImages.obamaSelfie()]).challenge)
        XCTAssertEqual(fc.name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(Data(base64Encoded: fc.payload["captured_frame"]?.stringValue ?? ""), try TestImages.obamaSelfie())
        XCTAssertEqual(try api.answer(["status": 7]).error?.longErrorCode, 1001)
        XCTAssertEqual(try api.answer(["status": 1]).challenge?.name, "uploadIDVSelfieFrames")
        XCTAssertEqual(try api.uploadFrames([try TestImages.obamaSelfie2()]).challenge?.name, "onIDVOptInCapturedFrameConfirmation")
        let e = try XCTUnwrap(try api.answer(["status": 0]).event)
        XCTAssertEqual(e.name, "onIDVBiometricOptInStatus")
        XCTAssertEqual(e.status.statusCode, 100)
        let os = try e.payload.decode(BiometricOptStatus.self)
        XCTAssertTrue(os.templateExists)
        XCTAssertEqual(os.orchestrationUseCase, .postLoginOptIn)
        let consent = try XCTUnwrap(try server.store.consents(userID: "sam").last)
        XCTAssertEqual(consent.flow, "idv.postlogin.optin")
        XCTAssertEqual(consent.idvWorkflow, 10)
        XCTAssertEqual(try server.store.biometricTemplate(userID: "sam")?.consentID, consent.consentID)

        // Opt-in twice: a clear status, nothing asked.
        let twice = try api.startFlow("idv.postlogin.optin")
        XCTAssertNil(twice.challenge)
        XCTAssertEqual(twice.event?.error.longErrorCode, 1018)
        XCTAssertEqual(twice.event?.status.statusCode, 400)

        // Opt-out: password → erased (100); the template is gone; withdrawal recorded.
        let po = try XCTUnwrap(try api.startFlow("idv.postlogin.optout").challenge)
        XCTAssertEqual(po.name, "getPassword")
        XCTAssertEqual(po.challengeMode, 7)
        XCTAssertEqual(po.idvWorkflow, 11)
        let out = try XCTUnwrap(try api.answer(["password": .string(WorkflowServer.password)]).event)
        XCTAssertEqual(out.name, "onIDVBiometricOptOutStatus")
        XCTAssertEqual(out.status.statusCode, 100)
        XCTAssertFalse(try out.payload.decode(BiometricOptStatus.self).templateExists)
        XCTAssertNil(try server.store.biometricTemplate(userID: "sam"))
        XCTAssertEqual(try server.store.consents(userID: "sam").last?.granted, false)
        // Opt-out with no template: 600 at once.
        let none = try api.startFlow("idv.postlogin.optout")
        XCTAssertNil(none.challenge)
        XCTAssertEqual(none.event?.status.statusCode, 600)
        XCTAssertEqual(none.event?.error.longErrorCode, 0)
    }

    func testOptInCancelAndPasswordExhaustionAndOptOutCancel() throws {
        let server = try WorkflowServer(["idv.reauth_attempts": "2"])
        let api = try server.loggedIn("tia")
        try api.startFlow("idv.postlogin.optin")
        try api.answer(["password": .string(WorkflowServer.password)])
        try api.captureSelfie(try TestImages.obamaSelfie())
        let c = try XCTUnwrap(try api.answer(["status": 2]).event)
        XCTAssertEqual(c.name, "onIDVBiometricOptInStatus")
        XCTAssertEqual(c.error.longErrorCode, 240)
        XCTAssertNil(try server.store.biometricTemplate(userID: "tia"))
        XCTAssertEqual(try server.store.consents(userID: "tia").count, 0)

        try api.startFlow("idv.postlogin.optin")
        try api.answer(["password": "nope nope 1"])
        let ex = try XCTUnwrap(try api.answer(["password": "nope nope 2"]).event)
        XCTAssertEqual(ex.error.longErrorCode, 1010)
        XCTAssertEqual(ex.status.statusCode, 500)
        XCTAssertEqual(try ex.payload.decode(BiometricOptStatus.self).attemptsLeft, 0)
        // Re-auth failures in these flows do not lock the account.
        XCTAssertEqual(try server.store.user("tia")?.state, .active)

        try api.startFlow("idv.postlogin.optin")
        XCTAssertEqual(try api.answer(["cancel": true]).event?.error.longErrorCode, 240)
    }

    func testOptOutWithLDASignatureReauthentication() throws {
        let server = try WorkflowServer()
        let keys = Crypto.ed25519KeyPair()
        let code = try server.createUser("uma", idv: false)
        let api = server.client()
        let did = try api.registerDevice(publicKey: keys.publicKey)
        try api.startSession(deviceID: did)
        try api.answer(["user_id": "uma"])
        try api.answer(["activation_code": .string(code)])
        let consent = try XCTUnwrap(try api.answer(["password": .string(WorkflowServer.password)]).challenge)
        XCTAssertEqual(consent.name, "getUserConsentForLDA")
        func sign(_ ch: WireChallenge) -> String {
            let msg = WireLDA.message(challengeID: ch.challengeID, nonce: ch.payload["nonce"]?.stringValue ?? "")
            return Data(Crypto.signEd25519(message: Array(msg), secretKey: keys.secretKey)).base64EncodedString()
        }
        XCTAssertEqual(try api.answer(["consent": true, "signature": .string(sign(consent))]).event?.name, "onUserLoggedIn")
        try server.store.saveBiometricTemplate(BiometricTemplateRecord(userID: "uma", sealed: server.vault.sealTemplate(TestDoubleSelfieAnalyser.descriptor(1), userID: "uma"),
                                                                      model: "test-double", consentID: "c0", createdAt: 1))
        // A bad signature falls back to the password; a good one on the next run erases.
        let lda = try XCTUnwrap(try api.startFlow("idv.postlogin.optout").challenge)
        XCTAssertEqual(lda.name, "getDeviceSignature")
        XCTAssertEqual(lda.challengeMode, 7)
        let fb = try XCTUnwrap(try api.answer(["signature": .string(Data(repeating: 1, count: 64).base64EncodedString())]).challenge)
        XCTAssertEqual(fb.name, "getPassword")
        XCTAssertEqual(fb.error?.longErrorCode, 1023)
        XCTAssertEqual(try api.answer(["cancel": true]).event?.error.longErrorCode, 240)
        XCTAssertNotNil(try server.store.biometricTemplate(userID: "uma"))
        let lda2 = try XCTUnwrap(try api.startFlow("idv.postlogin.optout").challenge)
        let e = try XCTUnwrap(try api.answer(["signature": .string(sign(lda2))]).event)
        XCTAssertEqual(e.status.statusCode, 100)
        XCTAssertNil(try server.store.biometricTemplate(userID: "uma"))
    }
}
