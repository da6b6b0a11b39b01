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

/// Seed 002: activation with IDV (workflow 0, challenge mode 8) over HTTP on loopback.
final class WorkflowActivationTests: XCTestCase {
    /// getUser → getActivationCode → the IDV sub-flow's first challenge.
    func beginActivation(_ server: WorkflowServer, user: String, workflow: IDVWorkflow = .activation) throws -> API {
        let code = try server.createUser(user, idv: true, workflow: workflow)
        let api = server.client()
        try api.startSession()
        XCTAssertEqual(try api.answer(["user_id": .string(user)]).challenge?.name, "getActivationCode")
        let first = try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(first.challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(first.challenge?.challengeMode, 8)
        XCTAssertEqual(first.challenge?.idvWorkflow, workflow.rawValue)
        XCTAssertEqual(first.challenge?.attemptsLeft, server.config.engine.workflow.documentAttempts)
        return api
    }

    func testHappyPathDocumentSelfieConsentPasswordLogsInAndEnrolsTemplateWithConsent() throws {
        let server = try WorkflowServer()
        let api = try beginActivation(server, user: "ada")

        let details = try api.scanDocument(try TestImages.obamaPassportPage())
        let ch = try XCTUnwrap(details.challenge)
        XCTAssertEqual(ch.name, "getIDVConfirmDocumentDetails")
        XCTAssertEqual(ch.challengeMode, 8)
        XCTAssertEqual(ch.attemptsLeft, 2)
        let doc = try ch.payload.decode(DocumentDetails.self)
        XCTAssertEqual(doc.responseData.overallStatus, .valid)
        XCTAssertEqual(doc.responseData.documentInfo.surname, "OBAMA")
        XCTAssertEqual(doc.responseData.documentInfo.documentType, .passport)
        XCTAssertEqual(doc.responseData.documentPages.count, 1)
        XCTAssertEqual(Data(base64Encoded: try XCTUnwrap(doc.responseData.documentInfo.portraitImage)), try TestImages.obamaPassportPage())
        XCTAssertEqual(doc.responseData.checksPerformed.filter { $0.checkName == "Document not expired" }.map(\.result), [.passed])

        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        let selfie = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).challenge)
        XCTAssertEqual(selfie.name, "getIDVSelfieConfirmation")
        let sd = try selfie.payload.decode(SelfieDetails.self)
        XCTAssertEqual(sd.responseData.biometricResult.displayText, .matched)
        // Shown rounded (liveness to a multiple of 5, face match to 0.01): the audit keeps 91 and 0.708.
        XCTAssertEqual(sd.responseData.analyzeLivenessResponse?.video.livenessResult.score, 90)
        XCTAssertEqual(try XCTUnwrap(sd.responseData.faceMatcherResponse?.score), 0.71, accuracy: 1e-9)
        XCTAssertEqual(sd.actionButtons.successButton.map(\.key), [.continueFlow])
        XCTAssertEqual(sd.responseData.documentDetail?.documentInfo.name, "BARACK OBAMA")

        let consent = try XCTUnwrap(try api.answer(["action": "continue-flow"]).challenge)
        XCTAssertEqual(consent.name, "getIDVBiometricOptInConsent")
        XCTAssertEqual(consent.payload["consent_text_version"]?.stringValue, server.config.engine.workflow.consentTextVersion)
        let pw = try XCTUnwrap(try api.answer(["is_opt_in": true]).challenge)
        XCTAssertEqual(pw.name, "getPassword")
        XCTAssertEqual(pw.challengeMode, 1)
        let done = try api.answer(["password": .string(WorkflowServer.password)])
        XCTAssertEqual(done.event?.name, "onUserLoggedIn")
        XCTAssertEqual(done.envelope?.session?.loggedIn, true)

        // Template: one, sealed, the 128-d descriptor, bound to the user id; consent recorded.
        let t = try XCTUnwrap(try server.store.biometricTemplate(userID: "ada"))
        XCTAssertEqual(try server.vault.openTemplate(t.sealed, userID: "ada"), TestDoubleSelfieAnalyser.descriptor(1))
        XCTAssertThrowsError(try server.vault.openTemplate(t.sealed, userID: "eve"))
        let consents = try server.store.consents(userID: "ada")
        XCTAssertEqual(consents.count, 1)
        XCTAssertEqual(consents[0].granted, true)
        XCTAssertEqual(consents[0].flow, "idv.activation")
        XCTAssertEqual(consents[0].idvWorkflow, 0)
        XCTAssertEqual(consents[0].textVersion, server.config.engine.workflow.consentTextVersion)
        XCTAssertEqual(t.consentID, consents[0].consentID)
        // Images released at flow end; the transaction audited without personal data.
        XCTAssertEqual(try server.store.query("SELECT count(*) FROM idv_media").first?[0].int, 0)
        let tx = try XCTUnwrap(try server.transactions().last)
        XCTAssertEqual(tx["status"], "SUCCESS")
        XCTAssertEqual(tx["orchestration_use_case"], "RDNA_IDV_ACTIVATION")
        XCTAssertEqual(tx["verdict"], "MATCHED")
        XCTAssertEqual(tx["template_created"], true)
        let auditText = String(decoding: try JSONEncoder().encode(try server.audit()), as: UTF8.self)
        XCTAssertFalse(auditText.contains("OBAMA"))
        XCTAssertFalse(auditText.contains("P1234567"))
        XCTAssertFalse(auditText.contains(String(try TestImages.obamaSelfie().base64EncodedString().prefix(40))))
        XCTAssertNil(try server.store.verifyAuditChain())
        // The session row holds no image after the flow ended.
        XCTAssertFalse(try server.store.query("SELECT state FROM sessions").map { $0[0].text ?? "" }.joined().contains("/9j/"))
    }

    func testConsentRefusedStillActivatesWithoutTemplate() throws {
        let server = try WorkflowServer()
        let api = try beginActivation(server, user: "bo")
        XCTAssertEqual(try api.scanDocument(try TestImages.obamaPassportPage()).challenge?.name, "getIDVConfirmDocumentDetails")
        try api.answer(["is_confirm": true])
        try api.captureSelfie(try TestImages.obamaSelfie())
        try api.answer(["action": "true"])   // "true" is accepted as continue-flow (ARCHITECTURE §5)
        XCTAssertEqual(try api.answer(["is_opt_in": false]).challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).event?.name, "onUserLoggedIn")
        XCTAssertNil(try server.store.biometricTemplate(userID: "bo"))
        XCTAssertEqual(try server.store.consents(userID: "bo").map(\.granted), [false])
    }

    func testCancelOnDocumentStartReturnsToGetUserWith146() throws {
        let server = try WorkflowServer()
        let api = try beginActivation(server, user: "cy")
        let r = try api.answer(["is_confirm": false])
        XCTAssertEqual(r.challenge?.name, "getUser")
        XCTAssertEqual(r.challenge?.error?.longErrorCode, 146)
        XCTAssertEqual(try server.transactions().last?["outcome"], "cancelled")
        XCTAssertEqual(try server.transactions().last?["long_error_code"], 146)
    }

    /// The activation code is bound to the session that entered it and consumed only when
    /// activation completes: after the IDV sub-flow is cancelled (146) or runs out of document
    /// attempts (1010) the same code works again; while one session holds it, another session
    /// with the right code is refused; once activation completes the code is spent.
    func testActivationCodeSurvivesFailedIDVButIsNeverHeldByTwoSessions() throws {
        // Three IDV runs start on this code and a fourth session reaches the code step: 4 runs
        // allowed (the default 3 would answer that session 1112 — AbuseLimitsTests).
        let server = try WorkflowServer(["activation.idv_runs": "4"])
        let code = try server.createUser("eve", idv: true)
        func enter(_ api: API) throws -> API.Reply {
            try api.startSession()
            XCTAssertEqual(try api.answer(["user_id": "eve"]).challenge?.name, "getActivationCode")
            return try api.answer(["activation_code": .string(code)])
        }
        let a = server.client()
        XCTAssertEqual(try enter(a).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        // Cancelled IDV: back to getUser with 146, and the code still works.
        XCTAssertEqual(try a.answer(["is_confirm": false]).challenge?.error?.longErrorCode, 146)
        XCTAssertEqual(try a.answer(["user_id": "eve"]).challenge?.name, "getActivationCode")
        XCTAssertEqual(try a.answer(["activation_code": .string(code)]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        // Held by session a: session b with the right code is refused, and its wrong code still counts.
        let b = server.client()
        let refused = try enter(b)
        XCTAssertEqual(refused.challenge?.name, "getUser")
        XCTAssertEqual(refused.challenge?.error?.longErrorCode, IDVErrorCode.activationCodeExpired.rawValue)
        XCTAssertTrue(refused.challenge?.error?.errorString.contains("in use in another session") ?? false)
        // Attempts exhausted in a's IDV: released again.
        var r = try a.scanDocument(try TestImages.noDocumentPage())
        for _ in 1..<server.config.engine.workflow.documentAttempts where r.challenge?.name == "uploadIDVDocumentPages" {
            r = try a.uploadPages([try TestImages.noDocumentPage()])
        }
        XCTAssertEqual(r.challenge?.error?.longErrorCode, 1010)
        XCTAssertEqual(a.last?.challenge?.name, "getUser")
        XCTAssertNil(try server.store.activationCode(userID: "eve")?.boundSessionID)
        // Now b may take it and complete activation; then the code is spent for everyone.
        XCTAssertEqual(try b.answer(["user_id": "eve"]).challenge?.name, "getActivationCode")
        XCTAssertEqual(try b.answer(["activation_code": .string(code)]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(try enter(server.client()).challenge?.error?.errorString.contains("in use in another session"), true)
        try b.scanDocument(try TestImages.obamaPassportPage())
        try b.answer(["is_confirm": true])
        try b.captureSelfie(try TestImages.obamaSelfie())
        try b.answer(["action": "continue-flow"])
        XCTAssertEqual(try b.answer(["is_opt_in": false]).challenge?.name, "getPassword")
        XCTAssertEqual(try b.answer(["password": .string(WorkflowServer.password)]).event?.name, "onUserLoggedIn")
        let spent = try XCTUnwrap(try server.store.activationCode(userID: "eve"))
        XCTAssertNotNil(spent.usedAt)
        XCTAssertNil(spent.boundSessionID)
        let audit = try server.store.query("SELECT action FROM audit_log").compactMap { $0[0].text }
        XCTAssertEqual(audit.filter { $0 == "activation.code_released" }.count, 2, "\(audit)")
        XCTAssertEqual(audit.filter { $0 == "activation.code_in_use" }.count, 2, "\(audit)")
    }

    func testCancelOnSelfieStartReturnsToGetUserWith146() throws {
        let server = try WorkflowServer()
        let api = try beginActivation(server, user: "di")
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        let r = try api.answer(["is_confirm": false])
        XCTAssertEqual(r.challenge?.name, "getUser")
        XCTAssertEqual(r.challenge?.error?.longErrorCode, 146)
        XCTAssertEqual(try server.store.query("SELECT count(*) FROM idv_media").first?[0].int, 0)
    }

    func testExpiredDocumentIsInvalidAndCannotBeConfirmedRejectRescans() throws {
        let server = try WorkflowServer()
        let api = try beginActivation(server, user: "ed")
        let r = try XCTUnwrap(try api.scanDocument(try TestImages.expiredPassportPage()).challenge)
        let doc = try r.payload.decode(DocumentDetails.self)
        XCTAssertEqual(doc.responseData.overallStatus, .invalid)
        XCTAssertEqual(doc.responseData.errors, ["The document has expired (2015-01-01)."])
        XCTAssertEqual(r.status?.statusCode, 400)
        // "Confirming" an invalid document does not get past it: the server asks for a rescan.
        let again = try XCTUnwrap(try api.answer(["is_confirm": true]).challenge)
        XCTAssertEqual(again.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(again.attemptsLeft, 2)
        XCTAssertEqual(again.status?.statusCode, 400)
        // Failed check digit → INVALID too; the user rejects it (recapture).
        let bad = try XCTUnwrap(try api.scanDocument(try TestImages.badCheckDigitPage()).challenge).payload.decode(DocumentDetails.self)
        XCTAssertEqual(bad.responseData.overallStatus, .invalid)
        XCTAssertTrue(bad.responseData.errors.contains("The MRZ did not check out: document_number check digit fails: expected 7, found '3'."),
                      "\(bad.responseData.errors)")
        let rescan = try XCTUnwrap(try api.answer(["is_confirm": false]).challenge)
        XCTAssertEqual(rescan.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(rescan.attemptsLeft, 1)
        XCTAssertEqual(try api.scanDocument(try TestImages.obamaPassportPage()).challenge?.name, "getIDVConfirmDocumentDetails")
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
    }

    func testDocumentAttemptsExhaustedReturnsToGetUserWith1010() throws {
        let server = try WorkflowServer(["idv.document_attempts": "2"])
        let api = try beginActivation(server, user: "fi")
        let first = try XCTUnwrap(try api.scanDocument(try TestImages.noDocumentPage()).challenge)
        XCTAssertEqual(first.name, "uploadIDVDocumentPages")
        XCTAssertEqual(first.error?.longErrorCode, 1031)
        XCTAssertEqual(first.attemptsLeft, 1)
        let notImage = try XCTUnwrap(try api.uploadPages([Data("not an image at all".utf8)]).challenge)
        XCTAssertEqual(notImage.name, "getUser")
        XCTAssertEqual(notImage.error?.longErrorCode, 1010)
        XCTAssertEqual(try server.transactions().last?["outcome"], "attempts_exhausted")
    }

    func testWrongPersonNotMatchedOffersRecaptureAndRescanButNeverContinueByDefault() throws {
        let server = try WorkflowServer()
        let api = try beginActivation(server, user: "gu")
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        let c = try XCTUnwrap(try api.captureSelfie(try TestImages.wrongPersonSelfie()).challenge)
        let sd = try c.payload.decode(SelfieDetails.self)
        XCTAssertEqual(sd.responseData.biometricResult.displayText, .notMatched)
        XCTAssertEqual(sd.actionButtons.failureButton.map(\.key), [.reinitSelfie, .reinitDocumentScan])
        XCTAssertEqual(c.attemptsLeft, 2)
        // A client cannot turn the failure into success.
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).error?.longErrorCode, 1020)
        XCTAssertEqual(try api.answer(["action": "true"]).error?.longErrorCode, 1020)
        XCTAssertEqual(try api.answer(["action": "reinit-idv-selfie"]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        // Static photo: LIVENESS_FAILED.
        let l = try XCTUnwrap(try api.captureSelfie(try TestImages.printAttack()).challenge).payload.decode(SelfieDetails.self)
        XCTAssertEqual(l.responseData.biometricResult.displayText, .livenessFailed)
        XCTAssertNil(l.responseData.analyzeLivenessResponse, "no score on an attack verdict")
        // Rescan the document, then the right person.
        XCTAssertEqual(try api.answer(["action": "reinit-idv-document-scan"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        let ok = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).challenge).payload.decode(SelfieDetails.self)
        XCTAssertEqual(ok.responseData.biometricResult.displayText, .matched)
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).challenge?.name, "getIDVBiometricOptInConsent")
    }

    func testSelfieAttemptsExhaustedEndsWith1010() throws {
        let server = try WorkflowServer(["idv.selfie_attempts": "1", "idv.document_attempts": "1"])
        let api = try beginActivation(server, user: "ha")
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        let r = try api.captureSelfie(try TestImages.wrongPersonSelfie())
        XCTAssertEqual(r.challenge?.name, "getUser")
        XCTAssertEqual(r.challenge?.error?.longErrorCode, 1010)
        let tx = try XCTUnwrap(try server.transactions().last)
        XCTAssertEqual(tx["verdict"], "NOT_MATCHED")
        XCTAssertEqual(tx["status"], "FAILURE")
    }

    func testTemplateVariantMatchesAgainstStoredTemplateWithoutDocument() throws {
        let server = try WorkflowServer()
        // Enrol a template for "iv" directly (as an earlier opt-in would), then activate with workflow 1.
        let code = try server.createUser("iv", idv: true, workflow: .activationWithTemplate)
        try server.store.saveBiometricTemplate(BiometricTemplateRecord(userID: "iv", sealed: server.vault.sealTemplate(TestDoubleSelfieAnalyser.descriptor(1), userID: "iv"),
                                                                      model: "test-double", consentID: "c1", createdAt: 1))
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": "iv"])
        let s = try XCTUnwrap(try api.answer(["activation_code": .string(code)]).challenge)
        XCTAssertEqual(s.name, "getIDVSelfieProcessStartConfirmation")
        XCTAssertEqual(s.idvWorkflow, 1)
        let sd = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie2()).challenge).payload.decode(SelfieDetails.self)
        XCTAssertEqual(sd.responseData.biometricResult.displayText, .matched)
        XCTAssertNil(sd.responseData.documentDetail)
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).challenge?.name, "getPassword")
    }

    /// The activation variant "with template" is a biometric authentication against the stored
    /// template: when the stored one is of an older descriptor model than the analyser's and the
    /// capture matches it, the run's own sealed template replaces it under the same consent
    /// (TemplateUpgrade.swift), audited; the double's evidence carries no calibration, so the line
    /// is the fixed one of its metric.
    func testTemplateVariantReplacesAnOlderModelsTemplate() throws {
        let server = try WorkflowServer()
        let code = try server.createUser("ow", idv: true, workflow: .activationWithTemplate)
        try server.store.saveBiometricTemplate(BiometricTemplateRecord(userID: "ow", sealed: server.vault.sealTemplate(TestDoubleSelfieAnalyser.descriptor(1), userID: "ow"),
                                                                      model: FaceDescriptorModelName.dlibResNetV1, consentID: "c-old", createdAt: 1))
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": "ow"])
        try api.answer(["activation_code": .string(code)])
        let sd = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie2()).challenge).payload.decode(SelfieDetails.self)
        XCTAssertEqual(sd.responseData.biometricResult.displayText, .matched)
        let record = try XCTUnwrap(try server.store.biometricTemplate(userID: "ow"))
        XCTAssertEqual(record.model, "test-double", "the capture's model replaced dlib's")
        XCTAssertEqual(record.consentID, "c-old")
        XCTAssertEqual(try server.vault.openTemplateBytes(record.sealed, userID: "ow"), SelfieEvidence.version1Template(TestDoubleSelfieAnalyser.descriptor(1)))
        let upgraded = try XCTUnwrap(try server.audit().last { $0.action.hasSuffix("template_upgraded") }?.details)
        XCTAssertEqual(upgraded["from_model"], .string(FaceDescriptorModelName.dlibResNetV1))
        XCTAssertEqual(upgraded["to_model"], "test-double")
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).challenge?.name, "getPassword")
    }
}
