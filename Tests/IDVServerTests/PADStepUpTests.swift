import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVOperations
import IDVServerTestSupport
import IDVTestSupport
import XCTest

/// Issue 34, the full-frame replay, over HTTP on an in-process server with scripted PAD evidence:
/// in passive mode a capture the evidence would accept, but whose texture is not conclusive (below
/// `idv.pad.challenge_below`: what a screen filling the camera's view shows too), is asked once
/// more under an active challenge — 1066 with a `liveness_challenge`, no attempt used — and decided
/// together with the challenged capture, which must answer it. The tests' common settings turn the
/// step-up off (their clips are recordings); these turn it on at its default.
final class PADStepUpTests: XCTestCase {
    typealias Scripted = PADUnsureOutcomesTests.ScriptedPADAnalyser

    static let settings = ["idv.selfie_attempts": "3", "idv.pad.challenge_below": String(PADPolicy.defaultChallengeBelow)]
    /// Life shown (talking, moving), the texture reaching the line but not the step-up level.
    static let inconclusive = PADUnsureOutcomesTests.pad(texture: 1.0, good: 10)

    /// A server with `settings` and `user` opted in up to the selfie; the first capture (scripted
    /// `first`, then `then`) is uploaded.
    func firstCapture(_ user: String, _ settings: [String: String] = settings, first: PADEvidence = inconclusive,
                      then: [PADEvidence] = []) throws -> (WorkflowServer, API, WireChallenge, WireChallenge, Data) {
        let analyser = try Scripted()
        let server = try WorkflowServer(settings, selfies: analyser)
        let api = try server.loggedIn(user)
        let frame = try TestImages.obamaSelfie()
        analyser.script([first] + then)
        let start = try PADUnsureOutcomesTests.optInUpload(api)
        XCTAssertNil(RDNAChallengeProbe.challenge(start), "passive mode: no challenge at first")
        return (server, api, start, try PADUnsureOutcomesTests.upload(api, frame), frame)
    }

    /// The first capture stepped up: 1066 with a challenge of a head turn and a blink or an open
    /// mouth, no attempt used.
    func assertSteppedUp(_ start: WireChallenge, _ asked: WireChallenge, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(asked.name, WireName.uploadIDVSelfieFrames, file: file, line: line)
        XCTAssertEqual(asked.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue, file: file, line: line)
        XCTAssertEqual(asked.attemptsLeft, start.attemptsLeft, "the step-up uses no attempt", file: file, line: line)
        XCTAssertEqual(asked.error?.errorString, IDVErrorCode.selfieRetakeChallengeMessage, "the ask says a challenge follows", file: file, line: line)
        let issued = try XCTUnwrap(RDNAChallengeProbe.challenge(asked), "the ask carries the challenge: \(asked.payload)", file: file, line: line)
        XCTAssertEqual(issued.actions.count, 2, file: file, line: line)
        XCTAssertTrue(issued.actions.contains { $0 == "TURN_LEFT" || $0 == "TURN_RIGHT" }, "\(issued.actions)", file: file, line: line)
    }

    func selfieAudits(_ server: WorkflowServer) throws -> [JSONValue] {
        try server.audit().filter { $0.action == "idv.selfie_verified" }.map(\.details)
    }

    func testAnInconclusiveCaptureIsSteppedUpAndPassesByAnsweringTheChallenge() throws {
        let answered = PADUnsureOutcomesTests.pad(texture: 1.2, good: 10, motion: 0.9, plane: 0.5, challenge: [1, 1])
        let (server, api, start, asked, frame) = try firstCapture("stella", then: [answered])
        try assertSteppedUp(start, asked)
        let done = try PADUnsureOutcomesTests.upload(api, frame)
        XCTAssertEqual(done.name, "onIDVOptInCapturedFrameConfirmation", "\(String(describing: done.error))")
        let selfies = try selfieAudits(server)
        XCTAssertEqual(selfies.map { $0["result"]?.stringValue ?? "?" }, ["retake", "MATCHED"])
        XCTAssertEqual(selfies[0]["retake"], "challenge")
        XCTAssertEqual(selfies[0]["pad_findings"]?.arrayValue, ["texture_not_conclusive"])
        XCTAssertEqual(selfies[0]["texture_log_odds"]?.doubleValue, 1.0)
        XCTAssertEqual(selfies[1]["pad_outcome"], "bona_fide")
        XCTAssertEqual(selfies[1]["pad_combined"], true)
        XCTAssertEqual(selfies[1]["texture_log_odds"]?.doubleValue, 1.1, "pooled over both captures")
        XCTAssertEqual(selfies[1]["pad_after_challenge"], true, "the decision rested on the answered challenge")
        XCTAssertEqual(selfies[1]["attempt"]?.intValue, 1, "one attempt for the two captures")
    }

    /// A recording's life (a screen filling the view) cannot answer a challenge drawn after it.
    func testACaptureThatDoesNotAnswerTheChallengeIsAnAttack() throws {
        let unanswered = PADUnsureOutcomesTests.pad(texture: 1.0, good: 10, motion: 0.9, plane: 0.3, challenge: [0, 0])
        let (server, api, start, asked, frame) = try firstCapture("sven", then: [unanswered])
        try assertSteppedUp(start, asked)
        let failed = try PADUnsureOutcomesTests.upload(api, frame)
        XCTAssertEqual(failed.status?.statusMessage, "LIVENESS_FAILED")
        XCTAssertEqual(failed.attemptsLeft, start.attemptsLeft - 1, "the two captures used one attempt")
        let decided = try XCTUnwrap(try selfieAudits(server).last)
        XCTAssertEqual(decided["pad_outcome"], "attack")
        XCTAssertEqual(decided["pad_findings"]?.arrayValue?.first, "challenge_failed")
        XCTAssertEqual(decided["pad_combined"], true)
    }

    /// Conclusive texture is accepted on passive evidence, and the step-up can be turned off.
    func testConclusiveTextureOrTheStepUpOffAcceptsWithoutAChallenge() throws {
        let (server, _, _, done, _) = try firstCapture("sasha", first: PADUnsureOutcomesTests.pad(texture: 3.5, good: 10))
        XCTAssertEqual(done.name, "onIDVOptInCapturedFrameConfirmation", "\(String(describing: done.error))")
        XCTAssertEqual(try selfieAudits(server).map { $0["result"]?.stringValue ?? "?" }, ["MATCHED"])
        XCTAssertEqual(try selfieAudits(server).last?["pad_after_challenge"], false)

        let off = ["idv.selfie_attempts": "3", "idv.pad.challenge_below": String(PADPolicy.defaultTextureLine)]
        let (server2, _, _, accepted, _) = try firstCapture("silke", off)
        XCTAssertEqual(accepted.name, "onIDVOptInCapturedFrameConfirmation", "\(String(describing: accepted.error))")
        let audit = try XCTUnwrap(try selfieAudits(server2).last)
        XCTAssertEqual(audit["pad_outcome"], "bona_fide")
        XCTAssertEqual(audit["pad_findings"]?.arrayValue, [])
    }

    /// An unsure capture whose pair would be accepted on pooled texture below the level is stepped
    /// up after its retake; the three captures are decided together.
    func testAnUnsurePairIsSteppedUpAfterItsRetake() throws {
        let answered = PADUnsureOutcomesTests.pad(texture: 1.5, good: 10, motion: 0.9, plane: 0.5, challenge: [1, 1])
        let (server, api, start, retake, frame) = try firstCapture("sanne", first: PADUnsureOutcomesTests.pad(texture: -2.0, good: 10),
                                                                   then: [Self.inconclusive, answered])
        XCTAssertEqual(retake.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        XCTAssertNil(RDNAChallengeProbe.challenge(retake), "the first retake is passive")
        let asked = try PADUnsureOutcomesTests.upload(api, frame)
        try assertSteppedUp(start, asked)
        XCTAssertEqual(try PADUnsureOutcomesTests.upload(api, frame).name, "onIDVOptInCapturedFrameConfirmation")
        let selfies = try selfieAudits(server)
        XCTAssertEqual(selfies.map { $0["result"]?.stringValue ?? "?" }, ["retake", "retake", "MATCHED"])
        XCTAssertEqual(selfies[0]["pad_findings"]?.arrayValue, ["texture_uncertain"])
        XCTAssertEqual(selfies[1]["retake"], "challenge")
        XCTAssertEqual(selfies[1]["pad_findings"]?.arrayValue, ["texture_not_conclusive"])
        XCTAssertEqual(selfies[1]["texture_log_odds"]?.doubleValue, -0.5)
        XCTAssertEqual(selfies[2]["texture_log_odds"]?.doubleValue, 0.17, "pooled over the three captures")
    }

    /// Only the reference's own face is stepped up. Somebody else's inconclusive capture is decided on
    /// its evidence — NOT_MATCHED, no challenge drawn — so an attacker's own live face (following
    /// presence's flashing with a dull texture) cannot buy the victim's recording a challenged
    /// capture, which presence asks without the flashing and decides alone when the first capture
    /// was another face. The victim's own inconclusive capture still is stepped up.
    func testOnlyTheReferencesOwnFaceIsSteppedUp() throws {
        let analyser = try Scripted()
        let server = try WorkflowServer(Self.settings, selfies: analyser)
        let api = try server.loggedIn("vera")
        analyser.script([PADUnsureOutcomesTests.pad(texture: 3.5, good: 10)])
        _ = try PADUnsureOutcomesTests.optInUpload(api)
        XCTAssertEqual(try PADUnsureOutcomesTests.upload(api, try TestImages.obamaSelfie()).name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100, "enrolled on conclusive evidence")
        func authenticate(_ frame: Data) throws -> API.Reply {
            XCTAssertEqual(try api.startFlow(FlowName.serverBiometric, ["reason": "payment"]).challenge?.challengeMode, 25)
            XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, WireName.uploadIDVSelfieFrames)
            analyser.script([Self.inconclusive])
            return try api.uploadCapture(frame)
        }
        let other = try authenticate(try TestImages.wrongPersonSelfie())
        XCTAssertNil(other.challenge, "no challenge for another face")
        let result = try XCTUnwrap(other.event).payload.decode(ServerBiometricAuthenticationResult.self)
        XCTAssertEqual(result.biometricResult?.displayText, .notMatched)
        let decided = try XCTUnwrap(try selfieAudits(server).last)
        XCTAssertEqual(decided["pad_outcome"], "bona_fide", "decided on its evidence: \(decided)")
        XCTAssertEqual(decided["pad_findings"]?.arrayValue, ["texture_not_conclusive"])
        // The enrolled person's own inconclusive capture is stepped up as before.
        let own = try XCTUnwrap(try authenticate(try TestImages.obamaSelfie()).challenge)
        XCTAssertNotNil(RDNAChallengeProbe.challenge(own))
        XCTAssertEqual(own.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
    }

    /// Active mode answers a challenge on every capture: nothing to step up. With presence
    /// required (`idv.presence_fallback = refuse`) no challenge is asked: the capture is decided on
    /// its evidence, and audited as accepted with the finding.
    func testNoStepUpInActiveModeOrWhenNoChallengeCanBeAsked() throws {
        let analyser = try Scripted()
        let server = try WorkflowServer(Self.settings.merging(["idv.liveness_mode": "active"]) { _, n in n }, selfies: analyser)
        let api = try server.loggedIn("sol")
        analyser.script([PADUnsureOutcomesTests.pad(texture: 1.0, good: 10, motion: 0.9, plane: 0.4, challenge: [1, 1])])
        let start = try PADUnsureOutcomesTests.optInUpload(api)
        XCTAssertNotNil(RDNAChallengeProbe.challenge(start))
        XCTAssertEqual(try PADUnsureOutcomesTests.upload(api, try TestImages.obamaSelfie()).name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(try selfieAudits(server).last?["pad_outcome"], "bona_fide")

        let strict = Self.settings.merging(["idv.presence": "illumination", "idv.presence_fallback": "refuse"]) { _, n in n }
        let (server2, _, _, decided, _) = try firstCapture("suvi", strict)
        XCTAssertNil(RDNAChallengeProbe.challenge(decided), "presence required: no challenge")
        XCTAssertNotEqual(decided.error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        let audit = try XCTUnwrap(try selfieAudits(server2).last)
        XCTAssertEqual(audit["pad_outcome"], "bona_fide", "\(audit)")
        XCTAssertEqual(audit["pad_findings"]?.arrayValue, ["texture_not_conclusive"])
        withExtendedLifetime(server) {}
    }

    /// Leaving a stepped-up capture (a cancel) forfeits it: the run ends LIVENESS_FAILED in the
    /// record (the device sees the cancel's 240), and `idv.biometric_attempts` such failures within
    /// `idv.lockout_seconds` close the selfie flows — a new run does not draw a new challenge for free.
    func testLeavingTheChallengeCountsAsALivenessFailureAndTheSelfieFlowsLock() throws {
        let analyser = try Scripted()
        let server = try WorkflowServer(Self.settings.merging(["idv.biometric_attempts": "2"]) { _, n in n }, selfies: analyser)
        let api = try server.loggedIn("sid")
        let frame = try TestImages.obamaSelfie()
        for _ in 0..<2 {
            analyser.script([Self.inconclusive])
            _ = try PADUnsureOutcomesTests.optInUpload(api)
            let asked = try PADUnsureOutcomesTests.upload(api, frame)
            XCTAssertNotNil(RDNAChallengeProbe.challenge(asked), "stepped up")
            let cancelled = try XCTUnwrap(try api.answer(["cancel": true], route: "/v1/session/upload").event)
            XCTAssertEqual(cancelled.error.longErrorCode, 240, "the device sees the cancel")
        }
        XCTAssertEqual(try server.transactions().suffix(2).map { $0["run_outcome"]?.stringValue }, ["liveness_failed", "liveness_failed"])
        // No third draw: opt-in and KYC both end at their start.
        for flow in [FlowName.optIn, FlowName.kyc] {
            let ended = try XCTUnwrap(try api.startFlow(flow).event, flow)
            XCTAssertEqual(ended.error.longErrorCode, IDVErrorCode.attemptsExhausted.rawValue, flow)
            XCTAssertEqual(ended.error.errorString, "No liveness attempts left", flow)
        }
        // The template status a client reads before offering server biometric authentication agrees.
        let status = try XCTUnwrap(try api.startFlow(FlowName.templateStatus).event)
        XCTAssertEqual(status.payload["attempts_left"]?.intValue, 0)
    }

    /// The user's PAD challenges are counted when drawn, across sessions, runs and flows: with
    /// `idv.biometric_attempts` = 2, two challenges drawn in two sessions and left open spend the
    /// budget, and a third session's inconclusive capture ends its run with 1010 — it is neither
    /// challenged again nor accepted on passive evidence — while a conclusive capture still passes.
    func testChallengesAreCountedWhenDrawnAcrossSessions() throws {
        let analyser = try Scripted()
        let server = try WorkflowServer(Self.settings.merging(["idv.biometric_attempts": "2"]) { _, n in n }, selfies: analyser)
        let frame = try TestImages.obamaSelfie()
        var sessions = [try server.loggedIn("sue")]
        for _ in 0..<3 {
            sessions.append(try server.session("sue"))
        }
        for api in sessions.prefix(2) {   // two challenges drawn, never answered (the runs stay open)
            analyser.script([Self.inconclusive])
            _ = try PADUnsureOutcomesTests.optInUpload(api)
            XCTAssertNotNil(RDNAChallengeProbe.challenge(try PADUnsureOutcomesTests.upload(api, frame)), "stepped up")
        }
        analyser.script([Self.inconclusive])
        _ = try PADUnsureOutcomesTests.optInUpload(sessions[2])
        let ended = try XCTUnwrap(try sessions[2].uploadCapture(frame).event)
        XCTAssertEqual(ended.error.longErrorCode, IDVErrorCode.attemptsExhausted.rawValue)
        XCTAssertEqual(ended.error.errorString, "No liveness challenge attempts left")
        let refused = try XCTUnwrap(try selfieAudits(server).last)
        XCTAssertEqual(refused["result"], "refused")
        XCTAssertEqual(refused["reason"], "pad_challenges_spent")
        // A person holding still is not recorded as an attack for it either: the run ends 1010 too.
        analyser.script([PADUnsureOutcomesTests.still, PADUnsureOutcomesTests.still])
        _ = try PADUnsureOutcomesTests.optInUpload(sessions[2])
        XCTAssertEqual(try PADUnsureOutcomesTests.upload(sessions[2], frame).error?.longErrorCode, IDVErrorCode.selfieRetake.rawValue)
        let still = try XCTUnwrap(try sessions[2].uploadCapture(frame).event)
        XCTAssertEqual(still.error.longErrorCode, IDVErrorCode.attemptsExhausted.rawValue)
        XCTAssertEqual(try selfieAudits(server).last?["reason"], "pad_challenges_spent")
        // Conclusive passive evidence needs no challenge: still accepted.
        analyser.script([PADUnsureOutcomesTests.pad(texture: 3.5, good: 10)])
        _ = try PADUnsureOutcomesTests.optInUpload(sessions[3])
        XCTAssertEqual(try PADUnsureOutcomesTests.upload(sessions[3], frame).name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(try sessions[3].answer(["status": 0]).event?.status.statusCode, 100)
        // `idvd admin unlock-user` gives the operator the budget back (it lives under the user's keys,
        // which erasing the user deletes too): the next inconclusive capture is challenged again.
        let unlocked = try Admin(store: server.store, config: server.config, crypto: Sodium()).unlockUser("sue")
        XCTAssertEqual(unlocked.clientBackoffsCleared, 1)
        analyser.script([Self.inconclusive])
        XCTAssertEqual(try sessions[3].startFlow(FlowName.serverBiometric, ["reason": "payment"]).challenge?.challengeMode, 25)
        XCTAssertEqual(try sessions[3].answer(["is_confirm": true]).challenge?.name, WireName.uploadIDVSelfieFrames)
        XCTAssertNotNil(RDNAChallengeProbe.challenge(try PADUnsureOutcomesTests.upload(sessions[3], frame)))
    }

    /// A person who answers the challenges is never locked out by them: a challenge answered and
    /// decided bona fide gives its token back. With `idv.biometric_attempts` = 2, an enrolment and
    /// two server biometric authentications, each stepped up and answered, all pass.
    func testAnsweredChallengesAreGivenBack() throws {
        let analyser = try Scripted()
        let server = try WorkflowServer(Self.settings.merging(["idv.biometric_attempts": "2"]) { _, n in n }, selfies: analyser)
        let api = try server.loggedIn("sam")
        let frame = try TestImages.obamaSelfie()
        let answered = PADUnsureOutcomesTests.pad(texture: 1.2, good: 10, motion: 0.9, plane: 0.5, challenge: [1, 1])
        analyser.script([Self.inconclusive, answered])
        _ = try PADUnsureOutcomesTests.optInUpload(api)
        XCTAssertNotNil(RDNAChallengeProbe.challenge(try PADUnsureOutcomesTests.upload(api, frame)))
        XCTAssertEqual(try PADUnsureOutcomesTests.upload(api, frame).name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100, "enrolled")
        for round in 1...2 {
            analyser.script([Self.inconclusive, answered])
            XCTAssertEqual(try api.startFlow(FlowName.serverBiometric, ["reason": "payment"]).challenge?.challengeMode, 25)
            XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, WireName.uploadIDVSelfieFrames)
            XCTAssertNotNil(RDNAChallengeProbe.challenge(try PADUnsureOutcomesTests.upload(api, frame)), "round \(round) stepped up")
            let done = try XCTUnwrap(try api.uploadCapture(frame).event)
            let result = try done.payload.decode(ServerBiometricAuthenticationResult.self)
            XCTAssertEqual(result.biometricResult?.displayText, .matched, "round \(round)")
        }
        XCTAssertEqual(try selfieAudits(server).filter { $0["retake"] == "challenge" }.count, 3)
    }

    /// Active liveness shows a fresh challenge at every capture's start confirmation: every draw
    /// is counted like the step-up's, so reading the challenge, cancelling and starting again is no
    /// free redraw. With `idv.biometric_attempts` = 3: an enrolment (opt-in has no reference, so
    /// its draw is not given back) and two server biometric authentications that answer their
    /// challenges and match (each token given back) all pass; then two challenges read and
    /// cancelled spend the budget, and the next start ends 1010 before any challenge is shown.
    func testActiveLivenessDrawsAreCountedAndAnsweredOnesGivenBack() throws {
        let analyser = try Scripted()
        let server = try WorkflowServer(Self.settings.merging(["idv.liveness_mode": "active", "idv.biometric_attempts": "3"]) { _, n in n },
                                        selfies: analyser)
        let api = try server.loggedIn("ava")
        let frame = try TestImages.obamaSelfie()
        let answered = PADUnsureOutcomesTests.pad(texture: 3.0, good: 10, motion: 0.9, plane: 0.4, challenge: [1, 1])
        analyser.script([answered])
        XCTAssertNotNil(RDNAChallengeProbe.challenge(try PADUnsureOutcomesTests.optInUpload(api)), "active: a challenge for the capture")
        XCTAssertEqual(try PADUnsureOutcomesTests.upload(api, frame).name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(try api.answer(["status": 0]).event?.status.statusCode, 100, "enrolled")
        for round in 1...2 {
            analyser.script([answered])
            let start = try XCTUnwrap(try api.startFlow(FlowName.serverBiometric, ["reason": "payment"]).challenge)
            XCTAssertNotNil(RDNAChallengeProbe.challenge(start), "round \(round): the challenge at the start confirmation")
            XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, WireName.uploadIDVSelfieFrames)
            let done = try XCTUnwrap(try api.uploadCapture(frame).event)
            XCTAssertEqual(try done.payload.decode(ServerBiometricAuthenticationResult.self).biometricResult?.displayText, .matched, "round \(round)")
        }
        // The template status a client reads before offering server biometric authentication counts
        // the challenges left (every capture needs one in active mode).
        func attemptsLeft() throws -> Int? { try api.startFlow(FlowName.templateStatus).event?.payload["attempts_left"]?.intValue }
        XCTAssertEqual(try attemptsLeft(), 2, "the matched authentications' challenges were given back, the enrolment's not")
        var nonces = Set<String>()
        for left in [1, 0] {   // read and cancelled
            let start = try XCTUnwrap(try api.startFlow(FlowName.serverBiometric, ["reason": "payment"]).challenge)
            nonces.insert(try XCTUnwrap(RDNAChallengeProbe.challenge(start)).nonce)
            XCTAssertEqual(try api.answer(["is_confirm": false]).event?.error.longErrorCode, 240, "the device sees the cancel")
            XCTAssertEqual(try attemptsLeft(), left)
        }
        XCTAssertEqual(nonces.count, 2, "a fresh challenge each start")
        let ended = try api.startFlow(FlowName.serverBiometric, ["reason": "payment"])
        XCTAssertNil(ended.challenge, "no third challenge is shown")
        XCTAssertEqual(ended.event?.error.longErrorCode, IDVErrorCode.attemptsExhausted.rawValue)
        XCTAssertEqual(ended.event?.error.errorString, "No liveness challenge attempts left")
        // Another session of the same user draws from the same budget.
        let other = try server.session("ava")
        XCTAssertEqual(try other.startFlow(FlowName.serverBiometric, ["reason": "payment"]).event?.error.errorString,
                       "No liveness challenge attempts left")
        // Opt-in and KYC end at their start too: no password asked, no document scanned, to be
        // refused at the selfie (opt-in is asked with the template gone).
        _ = try server.store.deleteBiometricTemplate(userID: "ava")
        XCTAssertEqual(try api.startFlow(FlowName.optIn).event?.error.errorString, "No liveness challenge attempts left")
        XCTAssertEqual(try api.startFlow(FlowName.kyc, ["reason": "KYC"]).event?.error.errorString, "No liveness challenge attempts left")
    }
}
