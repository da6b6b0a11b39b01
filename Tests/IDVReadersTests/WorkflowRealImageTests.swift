import FaceKit
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

/// Real images through the real analysers: a real `idvd serve` process (FaceKit SelfieAnalyzer,
/// dlib models) on loopback for the selfie flows (opt-in, server biometric authentication, opt-out,
/// audit verification), and an in-process server with the real selfie analyser for KYC (the
/// document reader is still a test double there: its adapter comes with DocumentReader's report API).
final class WorkflowRealImageTests: XCTestCase {
    func testSelfieFlowsEndToEndOnRealIdvdWithRealFramesAndAuditChain() throws {
        try RealImages.requireModels()
        let katie = try RealImages.frames("katie_live"), aoc = try RealImages.frames("aoc_live")
        let still = [Data](repeating: try RealImages.portrait(), count: 20)
        let server = try ServerProcess()
        try server.start()
        let code = try server.createUser("kate")
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": "kate"])
        try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(try api.answer(["password": "correct horse 42"]).event?.name, "onUserLoggedIn")

        XCTAssertEqual(try api.startFlow("idv.template_status").event?.status.statusCode, 600)
        // Opt-in (seed 004): password → selfie → captured frame → APPROVED.
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": "correct horse 42"]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        let fc = try XCTUnwrap(try api.captureSelfie(katie[0]).challenge)   // one frame: not live → asked again
        XCTAssertEqual(fc.name, "uploadIDVSelfieFrames")
        XCTAssertEqual(fc.status?.statusMessage, "LIVENESS_FAILED")
        let frame = try XCTUnwrap(try api.uploadFrames(katie).challenge)
        XCTAssertEqual(frame.name, "onIDVOptInCapturedFrameConfirmation", server.serverLog())
        let jpeg = try XCTUnwrap(Data(base64Encoded: frame.payload["captured_frame"]?.stringValue ?? ""))
        XCTAssertTrue(jpeg.starts(with: [0xFF, 0xD8]))
        XCTAssertGreaterThanOrEqual(frame.payload["liveness_score"]?.intValue ?? 0, 50)
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100)
        XCTAssertEqual(try api.startFlow("idv.template_status").event?.status.statusCode, 100)

        // Server biometric authentication (seed 001) against the stored template.
        func authenticate(_ frames: [Data]) throws -> ServerBiometricAuthenticationResult {
            XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"]).challenge?.challengeMode, 25)
            XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "uploadIDVSelfieFrames")
            let e = try XCTUnwrap(try api.uploadFrames(frames).event, server.serverLog())
            XCTAssertEqual(e.name, "onIDVServerBiometricAuthenticationResult")
            return try e.payload.decode(ServerBiometricAuthenticationResult.self)
        }
        let same = try authenticate(katie)
        XCTAssertEqual(same.biometricResult?.displayText, .matched)
        XCTAssertNil(same.faceMatcherResponse, "no score to the device (docs/LIMITS.md); it is in the audit")
        XCTAssertEqual(same.idvAuditInfo.status, .success)
        let other = try authenticate(aoc)
        XCTAssertEqual(other.biometricResult?.displayText, .notMatched)
        XCTAssertNil(other.faceMatcherResponse)
        // A still (one photo repeated): no motion and no facial action, but the texture of a real
        // camera photo (+2.4 log-odds) — the PAD policy is unsure (cues_disagree), so it is asked
        // again with 1066 and no attempt used; the same still again shows no life either, with nothing
        // confident against it: once more under an active challenge (1066 with a liveness_challenge,
        // no attempt used), which a still cannot answer — decided on the three: LIVENESS_FAILED.
        XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"]).challenge?.challengeMode, 25)
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "uploadIDVSelfieFrames")
        let again = try XCTUnwrap(try api.uploadFrames(still).challenge, server.serverLog())
        XCTAssertEqual(again.name, "uploadIDVSelfieFrames")
        XCTAssertEqual(again.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        XCTAssertEqual(again.attemptsLeft, 3, "a retake the policy asks for uses no attempt")
        XCTAssertNil(try again.payload.decode(SelfieUploadRequest.self).livenessChallenge, "passive: the retake has no challenge")
        let challenged = try XCTUnwrap(try api.uploadFrames(still).challenge, server.serverLog())
        XCTAssertEqual(challenged.name, "uploadIDVSelfieFrames")
        XCTAssertEqual(challenged.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        XCTAssertEqual(challenged.attemptsLeft, 3)
        let issued = try XCTUnwrap(try challenged.payload.decode(SelfieUploadRequest.self).livenessChallenge)
        XCTAssertEqual(issued.actions.count, 2)
        let decided = try XCTUnwrap(try api.uploadFrames(still).event, server.serverLog())
        XCTAssertEqual(decided.name, "onIDVServerBiometricAuthenticationResult")
        let photo = try decided.payload.decode(ServerBiometricAuthenticationResult.self)
        XCTAssertEqual(photo.biometricResult?.displayText, .livenessFailed)
        XCTAssertNil(photo.analyzeLivenessResponse)
        XCTAssertEqual(photo.attemptsLeft, 3)

        // Opt-out, then opt-out with no template.
        try api.startFlow("idv.postlogin.optout")
        XCTAssertEqual(try api.answer(["password": "correct horse 42"]).event?.status.statusCode, 100)
        XCTAssertEqual(try api.startFlow("idv.postlogin.optout").event?.status.statusCode, 600)
        XCTAssertEqual(server.stop(), 0)

        // The audit chain verifies (idvd admin audit --verify), and breaks when a record is altered.
        let ok = try IDVDBinary.run(["admin", "audit", "--verify", "--db", server.dbPath])
        XCTAssertEqual(ok.status, 0)
        let verdict = try JSONDecoder().decode(JSONValue.self, from: ok.stdout)
        XCTAssertEqual(verdict["chain_valid"], true)
        XCTAssertGreaterThan(verdict["entries_checked"]?.intValue ?? 0, 20)
        let listing = try IDVDBinary.run(["admin", "audit", "--limit", "1000", "--db", server.dbPath])
        let entries = try XCTUnwrap(try JSONDecoder().decode(JSONValue.self, from: listing.stdout)["entries"]?.arrayValue)
        let tx = entries.filter { $0["action"] == "idv.transaction" }
        XCTAssertEqual(tx.compactMap { $0["details"]?["verdict"]?.stringValue }, ["MATCHED", "MATCHED", "NOT_MATCHED", "LIVENESS_FAILED"])
        let victim = try XCTUnwrap(tx.first { $0["details"]?["verdict"] == "MATCHED" }?["seq"]?.intValue)
        let sql = Process()
        sql.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sql.arguments = [server.dbPath, "UPDATE audit_log SET details = replace(details, 'MATCHED', 'NOT_MATCHED') WHERE seq = \(victim)"]
        try sql.run()
        sql.waitUntilExit()
        XCTAssertEqual(sql.terminationStatus, 0)
        let broken = try IDVDBinary.run(["admin", "audit", "--verify", "--db", server.dbPath])
        XCTAssertEqual(broken.status, 1)
        let bv = try JSONDecoder().decode(JSONValue.self, from: broken.stdout)
        XCTAssertEqual(bv["chain_valid"], false)
        XCTAssertEqual(bv["first_invalid_seq"]?.intValue, victim)
    }

    func testKYCWithRealSelfieAnalyserAgainstDocumentPortrait() throws {
        try RealImages.requireModels()
        let katie = try RealImages.frames("katie_live"), aoc = try RealImages.frames("aoc_live")
        let portrait = try RealImages.portrait()
        let server = try WorkflowServer(selfies: try FaceKitSelfieAnalyser.production(policy: WorkflowPolicy()),
                                        documents: PortraitDocumentDouble(portrait: portrait))
        let api = try server.loggedIn("kat")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        XCTAssertEqual(try api.scanDocument(portrait).challenge?.name, "getIDVConfirmDocumentDetails")
        try api.answer(["is_confirm": true])
        let bad = try XCTUnwrap(try api.captureSelfie(aoc[0]).challenge)
        XCTAssertEqual(try bad.payload.decode(SelfieDetails.self).responseData.biometricResult.displayText, .livenessFailed)
        try api.answer(["action": "reinit-idv-selfie"])
        try api.answer(["is_confirm": true])
        let wrong = try XCTUnwrap(try api.uploadFrames(aoc).challenge).payload.decode(SelfieDetails.self)
        XCTAssertEqual(wrong.responseData.biometricResult.displayText, .notMatched)
        try api.answer(["action": "reinit-idv-selfie"])
        try api.answer(["is_confirm": true])
        let ok = try XCTUnwrap(try api.uploadFrames(katie).challenge).payload.decode(SelfieDetails.self)
        XCTAssertEqual(ok.responseData.biometricResult.displayText, .matched)
        XCTAssertNotNil(ok.responseData.analyzeLivenessResponse?.video.autocaptureResult)
        try api.answer(["action": "continue-flow"])
        let e = try XCTUnwrap(try api.answer(["is_opt_in": true]).event)
        XCTAssertTrue(try e.payload.decode(KYCResponse.self).isSuccess)
        let t = try XCTUnwrap(try server.store.biometricTemplate(userID: "kat"))
        let stored = try FaceTemplate(decoding: try server.vault.openTemplateBytes(t.sealed, userID: "kat"))
        XCTAssertEqual(stored.descriptor.count, 256)
        XCTAssertEqual(stored.version, 3)
        XCTAssertEqual(stored.model, .faceReidentification0095)
        XCTAssertEqual(t.model, "face-reidentification-retail-0095")
    }
}

/// TEST DOUBLE of ``DocumentReading`` for the real-selfie KYC test: any JPEG is a valid
/// passport whose portrait is the given image.
struct PortraitDocumentDouble: DocumentReading {
    let portrait: Data
    func read(pages: [Data]) throws -> DocumentEvidence {
        guard let p = pages.first, p.starts(with: [0xFF, 0xD8]) else { throw IDVError(.invalidImage) }
        var v = ReaderEvidence.passport(DocumentFields(documentType: "P", format: "TD3", issuingState: "UTO", surname: "HILL", givenNames: "KATIE",
                                                       documentNumber: "L898902C3", dateOfExpiry: "2035-01-01"), page: p)
        v.portraitJPEG = portrait
        return v
    }
}

/// Activation with IDV, KYC and the additional document scan with the real DocumentReader and the
/// real selfie analyser, on a real `idvd serve`: generated ICAO TD3 specimens (`idvd specimen`,
/// portrait = the SadTalker still of the person in the selfie frames).
final class WorkflowRealDocumentTests: XCTestCase {
    /// Writes `idvd specimen` seed `seed` with the katie portrait; returns the JPEG.
    func specimen(seed: Int, in dir: URL) throws -> Data {
        let r = try IDVDBinary.run(["specimen", "--format", "td3", "--seed", String(seed), "--out", dir.path, "--jpeg", "90",
                                    "--portrait", RealImages.fixtures.appendingPathComponent("katie_portrait.jpg").path])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        return try Data(contentsOf: dir.appendingPathComponent("specimen-\(seed).jpg"))
    }

    /// A valid 10000×10000 PNG (100 megapixels) as a document page. Under the default
    /// `analysis.max_request_megapixels` (64, the reader's per-page limit too) real idvd refuses it
    /// from its header with 1102 (413) naming the pixels and the limit, before decoding: the challenge
    /// and its attempts are unchanged (docs/PROTOCOL.md §7). With that limit raised above the reader's,
    /// the reader's own limit answers: 1009 (image too large) with the limit in the message, not 1008
    /// "No page could be decoded"; the flow goes on (one attempt used).
    func testTooLargeDocumentPageIs1102BeforeDecodingOr1009WithTheLimit() throws {
        let big = try Data(contentsOf: IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures/documents/black-10000x10000.png"))
        func atUpload(_ server: ServerProcess) throws -> API {
            let code = try XCTUnwrap(try server.admin(["create-user", "pia"])["activation_code"]?.stringValue)
            let api = server.client()
            try api.startSession()
            try api.answer(["user_id": "pia"])
            XCTAssertEqual(try api.answer(["activation_code": .string(code)]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
            XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "uploadIDVDocumentPages")
            return api
        }
        let server = try ServerProcess()
        try server.start()
        let api = try atUpload(server)
        let before = try XCTUnwrap(api.last?.challenge)
        let refused = try api.uploadPages([big])
        XCTAssertEqual(refused.status, 413, server.serverLog())
        XCTAssertEqual(refused.error?.longErrorCode, 1102)
        XCTAssertEqual(refused.error?.errorString, "The upload's images are too large to analyse: send fewer or smaller images "
                       + "(its images hold 100.0 MP together; one upload may hold 64 MP)")
        let now = try XCTUnwrap(try api.current().challenge)
        XCTAssertEqual(now.challengeID, before.challengeID)
        XCTAssertEqual(now.attemptsLeft, 3, "no document attempt used")

        let raised = try ServerProcess(settings: ["analysis.max_request_megapixels": "200"])
        try raised.start()
        let reply = try XCTUnwrap(try atUpload(raised).uploadPages([big]).challenge, raised.serverLog())
        XCTAssertEqual(reply.name, "uploadIDVDocumentPages")
        let error = try XCTUnwrap(reply.error)
        XCTAssertEqual(error.longErrorCode, 1009, error.errorString)
        XCTAssertTrue(error.errorString.contains("10000×10000") && error.errorString.contains("64000000"), error.errorString)
        XCTAssertEqual(reply.attemptsLeft, 2, "one of the three document attempts used")
    }

    func testActivationKYCAndDocumentScanWithRealDocumentsAndSelfies() throws {
        try RealImages.requireModels()
        let katie = try RealImages.frames("katie_live"), aoc = try RealImages.frames("aoc_live")
        let server = try ServerProcess()
        let valid = try specimen(seed: 9, in: server.dir)      // TD3, expires 2032-05-26
        let expired = try specimen(seed: 7, in: server.dir)    // TD3, expired 2024-08-10
        try server.start()
        let code = try XCTUnwrap(try server.admin(["create-user", "olga"])["activation_code"]?.stringValue)
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": "olga"])
        XCTAssertEqual(try api.answer(["activation_code": .string(code)]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")

        // Not a document → 1031; expired → INVALID; the valid specimen → VALID with its MRZ data.
        XCTAssertEqual(try api.scanDocument(try RealImages.portrait()).challenge?.error?.longErrorCode, 1031, server.serverLog())
        let exp = try XCTUnwrap(try api.uploadPages([expired]).challenge)
        let expDoc = try exp.payload.decode(DocumentDetails.self)
        XCTAssertEqual(expDoc.responseData.overallStatus, .invalid)
        XCTAssertTrue(expDoc.responseData.errors.contains { $0.lowercased().contains("expired") }, "\(expDoc.responseData.errors)")
        XCTAssertEqual(try api.answer(["is_confirm": false]).challenge?.attemptsLeft, 1)
        let ok = try XCTUnwrap(try api.scanDocument(valid).challenge)
        XCTAssertEqual(ok.name, "getIDVConfirmDocumentDetails")
        let doc = try ok.payload.decode(DocumentDetails.self)
        XCTAssertEqual(doc.responseData.overallStatus, .valid, "\(doc.responseData.errors)")
        XCTAssertEqual(doc.responseData.documentInfo.surname, "SILVA")
        XCTAssertEqual(doc.responseData.documentInfo.documentNumber, "MV841085Z")
        XCTAssertEqual(doc.responseData.documentInfo.expiryDate, "2032-05-26")
        XCTAssertNotNil(doc.responseData.documentInfo.portraitImage)
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        // Another person, then the person on the document.
        let wrong = try XCTUnwrap(try api.captureSelfie(aoc[0]).challenge)
        XCTAssertEqual(try wrong.payload.decode(SelfieDetails.self).responseData.biometricResult.displayText, .livenessFailed)
        try api.answer(["action": "reinit-idv-selfie"])
        try api.answer(["is_confirm": true])
        let nm = try XCTUnwrap(try api.uploadFrames(aoc).challenge).payload.decode(SelfieDetails.self)
        XCTAssertEqual(nm.responseData.biometricResult.displayText, .notMatched)
        try api.answer(["action": "reinit-idv-selfie"])
        try api.answer(["is_confirm": true])
        let m = try XCTUnwrap(try api.uploadFrames(katie).challenge)
        let md = try m.payload.decode(SelfieDetails.self)
        XCTAssertEqual(md.responseData.biometricResult.displayText, .matched, server.serverLog())
        XCTAssertEqual(md.responseData.documentDetail?.documentInfo.name, "OLGA SILVA")
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).challenge?.name, "getIDVBiometricOptInConsent")
        XCTAssertEqual(try api.answer(["is_opt_in": true]).challenge?.challengeMode, 1)
        XCTAssertEqual(try api.answer(["password": "correct horse 42"]).event?.name, "onUserLoggedIn")
        XCTAssertEqual(try api.startFlow("idv.template_status").event?.status.statusCode, 100)

        // KYC (consent refused still completes) and two additional document scans.
        try api.startFlow("idv.postlogin.kyc", ["reason": "Annual review"])
        try api.scanDocument(valid)
        try api.answer(["is_confirm": true])
        XCTAssertEqual(try XCTUnwrap(try api.captureSelfie(katie[0]).challenge).name, "getIDVSelfieConfirmation")
        try api.answer(["action": "reinit-idv-selfie"])
        try api.answer(["is_confirm": true])
        try api.uploadFrames(katie)
        try api.answer(["action": "continue-flow"])
        let kyc = try XCTUnwrap(try api.answer(["is_opt_in": false]).event)
        XCTAssertTrue(try kyc.payload.decode(KYCResponse.self).isSuccess)
        try api.startFlow("idv.postlogin.document_scan", ["reason": "Proof of identity"])
        let scan = try XCTUnwrap(try api.scanDocument(valid).event)
        let sd = try scan.payload.decode(AdditionalDocumentScanDetails.self)
        XCTAssertEqual(sd.documentStatus.overallDocumentStatus, .ok)
        XCTAssertEqual(sd.identityData["Surname and given names"], "SILVA OLGA")
        try api.startFlow("idv.postlogin.document_scan", ["reason": "Old passport"])
        XCTAssertEqual(try XCTUnwrap(try api.scanDocument(expired).event).payload.decode(AdditionalDocumentScanDetails.self).documentStatus.overallDocumentStatus, .error)
        XCTAssertEqual(server.stop(), 0)
        let audit = try IDVDBinary.run(["admin", "audit", "--verify", "--db", server.dbPath])
        XCTAssertEqual(audit.status, 0)
    }
}
