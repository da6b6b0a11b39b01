import Foundation
import IDVKit
import XCTest
import IDVTestSupport

/// The five IDV flows through the async API against a real `idvd` whose workflow engine offers
/// them (document reader + FaceKit with the dlib models). Skipped, with the reason, when this
/// build's server does not offer the flows (1007/1033) or has no `idvd specimen`.
final class RealWorkflowTests: XCTestCase {
    let password = "Katie flows 2026"

    func specimen(_ server: IDVDServer) throws -> URL { try server.specimen() }

    /// A "print, held" attack sequence made by `idvd liveness make-attack` from the document portrait.
    func heldPhotoAttack(_ server: IDVDServer) throws -> URL { try server.heldPhotoAttack() }

    func testAllPostLoginFlowsThroughTheAsyncAPI() async throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("katie")
        let doc = try specimen(server)
        let sdk = RDNA()
        let api = sdk.asyncAPI
        _ = try await api.initialize(RDNAConfiguration(serverURL: server.url, requestTimeout: 120))
        _ = try await api.setUser("katie")
        _ = try await api.setActivationCode(code)
        var ev = try await api.setPassword(password, challengeMode: .set)
        XCTAssertEqual(ev.last?.name, "onUserLoggedIn")
        sdk.setDocumentCaptureProvider(ImageFileDocumentCapture(pageFiles: [doc]))
        let katie = FrameFolderSelfieCapture(folder: Paths.fixtures.appendingPathComponent("katie_live"))
        sdk.setSelfieCaptureProvider(katie)

        // Seed 000 KYC: document → details → selfie → MATCHED → consent → event 0/100.
        ev = try await api.initiateActivatedCustomerKYC(reason: "annual review")
        if case let .onRequestFailed(_, e)? = ev.last, e.longErrorCode == 1007 {
            throw TestData.missing("this idvd does not offer the IDV workflows yet (1007: \(e.errorString ?? ""))")
        }
        XCTAssertEqual(ev.last, .getIDVDocumentScanProcessStartConfirmation(idvWorkflow: .postLoginKYC))
        ev = try await api.setIDVDocumentScanProcessStartConfirmation(true, idvWorkflow: .postLoginKYC)
        guard case let .getIDVConfirmDocumentDetails(dj, .idvPostLoginKYC)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        // The specimen's document number (GC3664952) holds a G, which its check digit cannot tell
        // from 6; the reader's documented rule warns only when the classifier gave the 6 real weight
        // (DocumentReader.twinDoubtConfidence). Read with certainty, it is not in doubt: no warning
        // about it, and the document is VALID unless another warning stands.
        let details = try DocumentDetails(jsonString: dj).responseData
        XCTAssertEqual(details.documentInfo.documentNumber, "GC3664952")
        XCTAssertFalse(details.warnings.contains { $0.contains("holds 'G'") }, "\(details.warnings)")
        XCTAssertEqual(details.overallStatus, details.warnings.isEmpty ? .valid : .other("WARNING"), "\(details.warnings)")
        XCTAssertTrue(details.errors.isEmpty, "\(details.errors)")
        ev = try await api.setIDVConfirmDocumentDetails(true, challenge: .idvPostLoginKYC)
        XCTAssertEqual(ev.last, .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginKYC))
        ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginKYC)
        guard case let .getIDVSelfieConfirmation(sj, _)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        let selfie = try SelfieDetails(jsonString: sj)
        XCTAssertEqual(selfie.responseData.biometricResult.displayText.rawValue, "MATCHED")
        XCTAssertGreaterThanOrEqual(selfie.responseData.analyzeLivenessResponse?.video.livenessResult.score ?? 0, 50)
        ev = try await api.setIDVSelfieConfirmation("continue-flow", challenge: .idvPostLoginKYC)
        guard case .getIDVBiometricOptInConsent? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        ev = try await api.setIDVBiometricOptInConsent(true, challenge: .idvPostLoginKYC)
        guard case let .onIDVActivatedCustomerKYCResponse(_, s, e)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual([e.longErrorCode, s.code], [0, 100])

        // Template status: consent stored a template → 100.
        ev = try await api.checkIDVUserBiometricTemplateStatus()
        guard case let .onIDVCheckUserBiometricTemplateStatus(_, _, ts, _)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(ts.statusCode, 100)

        // Seed 003 additional document scan.
        ev = try await api.initiateIDVAdditionalDocumentScan(reason: "address change")
        XCTAssertEqual(ev.last, .getIDVDocumentScanProcessStartConfirmation(idvWorkflow: .postLoginDocScanOnly))
        ev = try await api.setIDVDocumentScanProcessStartConfirmation(true, idvWorkflow: .postLoginDocScanOnly)
        guard case let .onIDVAdditionalDocumentScan(_, json, ds, _, de)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual([de.longErrorCode, ds.code], [0, 100])
        XCTAssertNoThrow(try AdditionalDocumentScanDetails(jsonString: json))

        // Seed 001: same person MATCHED, second person NOT_MATCHED, held photo LIVENESS_FAILED.
        let attack = try heldPhotoAttack(server)
        for (folder, verdict) in [(Paths.fixtures.appendingPathComponent("katie_live"), "MATCHED"),
                                  (Paths.fixtures.appendingPathComponent("aoc_live"), "NOT_MATCHED"),
                                  (attack, "LIVENESS_FAILED")] {
            sdk.setSelfieCaptureProvider(FrameFolderSelfieCapture(folder: folder))
            ev = try await api.initiateIDVServerBiometricAuthentication(reason: "payment")
            XCTAssertEqual(ev.last, .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginSelfieBiometric))
            ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginSelfieBiometric)
            // The held print moves as a plane under the hand with neither facial action nor landmark
            // motion, but with a camera photo's texture: the policy is unsure, asks again (1066), then
            // once more under an active challenge (1066, the challenge pending for the capture
            // provider), which the print cannot answer: LIVENESS_FAILED on the third capture.
            if verdict == "LIVENESS_FAILED" {
                for k in 0..<2 {
                    XCTAssertEqual(ev.last, .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginSelfieBiometric), "capture \(k + 1)")
                    XCTAssertEqual(sdk.pendingLivenessChallenge != nil, k == 1, "only the second retake carries a challenge")
                    ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginSelfieBiometric)
                }
            }
            guard case let .onIDVServerBiometricAuthenticationResult(_, json, _, _)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
            let v = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
            XCTAssertEqual(v["biometric_result"]?["display_text"]?.stringValue, verdict, folder.lastPathComponent)
        }

        // Seed 004: opt-out (password mode 7) → 100; opt-in (password mode 6, selfie, frame approve) → 100.
        sdk.setSelfieCaptureProvider(katie)
        ev = try await api.initiateIDVBiometricOptOut()
        guard case .getPassword(_, .biometricOptOut, _, _, _)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        ev = try await api.setPassword(password, challengeMode: .biometricOptOut)
        guard case let .onIDVBiometricOptOutStatus(_, _, os, _, _)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual(os.statusCode, 100)
        ev = try await api.initiateIDVBiometricOptIn()
        guard case .getPassword(_, .biometricOptIn, _, _, _)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        ev = try await api.setPassword(password, challengeMode: .biometricOptIn)
        XCTAssertEqual(ev.last, .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginOptIn))
        ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginOptIn)
        guard case let .onIDVOptInCapturedFrameConfirmation(img)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertTrue(ImageFiles.isImage(Data(base64Encoded: img) ?? Data()))
        ev = try await api.setIDVBiometricOptInConfirmation(.approved)
        guard case let .onIDVBiometricOptInStatus(_, _, ins, _, ine)? = ev.last else { return XCTFail("\(ev.map(\.name))") }
        XCTAssertEqual([ine.longErrorCode, ins.code], [0, 100])
    }
}
