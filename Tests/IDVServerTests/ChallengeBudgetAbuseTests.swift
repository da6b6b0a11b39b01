import Foundation
import IDVCore
import IDVEngine
import IDVServerTestSupport
import IDVTestSupport
import XCTest

/// The user's liveness-challenge budget under active liveness against the attack a fresh-user
/// trial (37) found: an attacker holding a recording of the victim that answers only some
/// challenges answers every other challenge with his own live face. PAD decides those captures
/// bona fide, but they are NOT_MATCHED — and only a MATCHED capture gives its run's draws back. So
/// he sees `idv.biometric_attempts` (5) challenges, then 1010, in KYC and in server biometric
/// authentication alike (before the fix: 40 distinct challenges in one KYC session, about 480 a day
/// in server biometric authentication). The victim's own matched captures still get theirs back.
final class ChallengeBudgetAbuseTests: XCTestCase {
    typealias Scripted = PADUnsureOutcomesTests.ScriptedPADAnalyser
    /// The challenge answered, texture and motion of a live face: PAD bona fide.
    static let answered = PADUnsureOutcomesTests.pad(texture: 3.0, good: 10, motion: 0.9, plane: 0.4, challenge: [1, 1])
    static let settings = ["idv.selfie_attempts": "3", "idv.liveness_mode": "active"]

    /// Server biometric authentication against the victim's template: the attacker's own live face
    /// answers each challenge (NOT_MATCHED). Five challenges, then every start ends 1010 — the
    /// NOT_MATCHED lock-out's window passing does not reopen it; the budget refills over a day.
    func testAnotherPersonsLiveFaceDoesNotGiveServerBiometricDrawsBack() throws {
        let analyser = try Scripted()
        let server = try WorkflowServer(Self.settings, selfies: analyser)
        var api = try server.loggedIn("vic")
        analyser.script([Self.answered])
        _ = try PADUnsureOutcomesTests.optInUpload(api)
        XCTAssertEqual(try api.uploadCapture(try TestImages.obamaSelfie()).challenge?.name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100, "the victim's template (the enrolment's draw spent)")
        var nonces = Set<String>(), verdicts: [BiometricVerdict] = [], refusals: [String] = []
        let attacker = try TestImages.wrongPersonSelfie()
        for _ in 0..<12 {
            let start = try api.startFlow(FlowName.serverBiometric, ["reason": "payment"])
            guard let c = start.challenge, let lc = RDNAChallengeProbe.challenge(c) else {
                refusals.append(start.event?.error.errorString ?? "?")
                XCTAssertEqual(start.event?.error.longErrorCode, IDVErrorCode.attemptsExhausted.rawValue)
                server.clock.advance(by: 901)   // past the NOT_MATCHED lock-out; the idle session expires with it
                api = try server.session("vic")
                continue
            }
            nonces.insert(lc.nonce)
            XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, WireName.uploadIDVSelfieFrames)
            analyser.script([Self.answered])
            let end = try XCTUnwrap(try api.uploadCapture(attacker).event)
            verdicts.append(try XCTUnwrap(try end.payload.decode(ServerBiometricAuthenticationResult.self).biometricResult?.displayText))
        }
        XCTAssertEqual(nonces.count, 4, "the budget: idv.biometric_attempts challenges, less the enrolment's")
        XCTAssertEqual(verdicts, Array(repeating: .notMatched, count: 4), "bona fide, but somebody else")
        XCTAssertEqual(refusals.count, 8)
        XCTAssertEqual(refusals.last, "No liveness challenge attempts left", "the lock-out's window passed; the budget did not refill")
        XCTAssertEqual(try api.startFlow(FlowName.templateStatus).event?.payload["attempts_left"]?.intValue, 0)
        // A day later the bucket is full again: the victim's own face matches and keeps it full.
        server.clock.advance(by: 86_400)
        api = try server.session("vic")
        for _ in 0..<6 {
            XCTAssertNotNil(try api.startFlow(FlowName.serverBiometric, ["reason": "payment"]).challenge)
            XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, WireName.uploadIDVSelfieFrames)
            analyser.script([Self.answered])
            let end = try XCTUnwrap(try api.uploadCapture(try TestImages.obamaSelfie()).event)
            XCTAssertEqual(try end.payload.decode(ServerBiometricAuthenticationResult.self).biometricResult?.displayText, .matched)
        }
        XCTAssertEqual(try api.startFlow(FlowName.templateStatus).event?.payload["attempts_left"]?.intValue, 5)
    }

    /// KYC: the document's portrait is the reference; a NOT_MATCHED KYC counts toward no lock-out,
    /// so before the fix the attacker's own face gave every draw back with no bound at all.
    func testAnotherPersonsLiveFaceDoesNotGiveKYCDrawsBack() throws {
        let analyser = try Scripted()
        let server = try WorkflowServer(Self.settings, selfies: analyser)
        let api = try server.loggedIn("kay")
        var nonces = Set<String>(), results: [String] = []
        let attacker = try TestImages.wrongPersonSelfie()
        for _ in 0..<7 {
            let kyc = try api.startFlow(FlowName.kyc, ["reason": "KYC"])
            guard kyc.challenge?.name == "getIDVDocumentScanProcessStartConfirmation" else {
                results.append(kyc.event?.error.errorString ?? "?")   // refused at its start, before the document
                continue
            }
            try api.scanDocument(try TestImages.obamaPassportPage())
            let reply = try api.answer(["is_confirm": true])
            guard let start = reply.challenge, let lc = RDNAChallengeProbe.challenge(start) else {
                results.append(reply.event?.error.errorString ?? "?")
                continue
            }
            nonces.insert(lc.nonce)
            XCTAssertEqual(try api.answer(["is_confirm": true, "use_back_camera": false]).challenge?.name, WireName.uploadIDVSelfieFrames)
            analyser.script([Self.answered])
            let shown = try XCTUnwrap(try api.uploadCapture(attacker).challenge?.payload.decode(SelfieDetails.self))
            results.append(shown.responseData.biometricResult.displayText.rawValue)
            _ = try api.call("POST", "/v1/session/reset")   // leave the run (no retake pending: not a liveness failure)
        }
        XCTAssertEqual(nonces.count, 5)
        XCTAssertEqual(results, Array(repeating: "NOT_MATCHED", count: 5) + Array(repeating: "No liveness challenge attempts left", count: 2))
    }

    /// Opt-in has no reference: any live face answering its challenge is MATCHED, so its draws are
    /// never given back — answering every challenge and cancelling at the frame confirmation (the
    /// fourth fresh-user trial's loop: 11 challenges with a budget of 5) is not a free redraw.
    func testOptInDrawsAreNotGivenBack() throws {
        let analyser = try Scripted()
        let server = try WorkflowServer(Self.settings, selfies: analyser)
        let api = try server.loggedIn("olly")
        var nonces = Set<String>(), ends: [String] = []
        for _ in 0..<7 {
            let optIn = try api.startFlow("idv.postlogin.optin")
            guard optIn.challenge?.name == "getPassword" else {
                ends.append(optIn.event?.error.errorString ?? "?")   // refused at its start, before the password
                continue
            }
            let start = try XCTUnwrap(try api.answer(["password": .string(WorkflowServer.password)]).challenge)
            let lc = try XCTUnwrap(RDNAChallengeProbe.challenge(start))
            nonces.insert(lc.nonce)
            XCTAssertEqual(try api.answer(["is_confirm": true, "use_back_camera": false]).challenge?.name, WireName.uploadIDVSelfieFrames)
            analyser.script([Self.answered])
            XCTAssertEqual(try api.uploadCapture(try TestImages.obamaSelfie()).challenge?.name, "onIDVOptInCapturedFrameConfirmation")
            XCTAssertNotNil(try api.answer(["status": 2]).event, "cancelled at the frame confirmation")
        }
        XCTAssertEqual(nonces.count, 5)
        XCTAssertEqual(ends, ["No liveness challenge attempts left", "No liveness challenge attempts left"])
    }
}
