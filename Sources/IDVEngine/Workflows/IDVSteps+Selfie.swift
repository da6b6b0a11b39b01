import Foundation
import IDVCore

extension IDVFlowSteps {
    // MARK: Selfie step

    func askSelfieStart(_ r: IDVRun, now: Int, _ env: FlowEnv, status: RequestStatus? = nil) -> StepResult<SelfieStep> {
        // Active liveness: a fresh server-issued challenge for every capture, kept in the (sealed) flow state.
        let challenge = env.policy.activeLiveness ? issueChallenge(now: now, env) : nil
        return .ask(.start(challenge: challenge), spec(WireName.getIDVSelfieProcessStartConfirmation, r, attemptsLeft: selfieLeft(r, env),
                                                       payload: Self.payload(CaptureStartPayload(idvWorkflow: r.idvWorkflow, livenessChallenge: challenge)),
                                                       status: status))
    }

    /// The run's end when the subject's liveness challenges are spent (1010 "No liveness challenge
    /// attempts left"), and its audit (`result: refused`, `reason: pad_challenges_spent`, the
    /// capture's PAD `findings` when one was judged); a waiting retake and the descriptor are
    /// dropped, so the run is not forfeited as a liveness failure for it.
    func refuseForSpentChallenges(_ r: inout IDVRun, findings: [PADFinding]? = nil) -> (Effect, Ending) {
        var fields: [String: JSONValue] = ["result": .string("refused"), "reason": .string("pad_challenges_spent"),
                                           "attempt": .integer(r.selfieAttempts)]
        if let findings { fields["pad_findings"] = .array(findings.map { .string($0.rawValue) }) }
        r.padRetake = nil
        r.embedding = nil
        return (audit(r, "selfie_verified", fields), .exhausted("liveness challenge"))
    }

    /// A fresh active liveness challenge from the analyser (nil without one).
    func issueChallenge(now: Int, _ env: FlowEnv) -> LivenessChallenge? {
        services.selfies?.issueChallenge(now: now, durationSeconds: env.policy.activeChallengeDurationSeconds,
                                         deadlineSeconds: env.policy.activeChallengeDeadlineSeconds)
    }

    /// `uploadIDVSelfieFrames`, with the pending capture's challenge (issued now when there is none:
    /// a challenge is used up by the verification that evaluates it) and its presence: `presence`
    /// (a fallback), else a fresh illumination sequence (``freshPresence(now:_:)``) — every ask of a
    /// sequence has its own, sealed with the pending challenge.
    func askSelfieUpload(_ r: IDVRun, challenge: LivenessChallenge?, now: Int, _ env: FlowEnv, error: IDVError? = nil, status: RequestStatus? = nil,
                         livenessReasons: [String]? = nil, presence: PresenceChallengePayload? = nil) -> StepResult<SelfieStep> {
        // `challenge` is set outside active liveness only as the head-movement fallback of presence.
        let c = env.policy.activeLiveness ? challenge ?? issueChallenge(now: now, env) : challenge
        let request = SelfieUploadRequest(maxFrames: env.policy.maxFrames, livenessChallenge: c, livenessReasons: livenessReasons,
                                          presence: presence ?? freshPresence(now: now, env))
        let payload = Self.payload(request)
        // A 1066 that asks for a challenge says so (IDVErrorCode.selfieRetakeChallengeMessage), as the clients word it.
        return .ask(.upload(challenge: c), spec(WireName.uploadIDVSelfieFrames, r, attemptsLeft: selfieLeft(r, env), payload: payload,
                                               error: error?.worded(forAsk: payload), status: status))
    }

    /// Whether capture `e` matched the flow's `reference` at the policy's line
    /// (``WorkflowPolicy/matchThreshold(_:)``); nil in a flow without a reference.
    static func matchedReference(_ e: SelfieEvidence, _ reference: MatchReference, _ env: FlowEnv) -> Bool? {
        if case .none = reference { return nil }
        guard let m = e.match else { return false }
        return m.distance <= env.policy.matchThreshold(m)
    }

    /// `getIDVSelfieProcessStartConfirmation` answered.
    func selfieStart(_ r: IDVRun, challenge: LivenessChallenge?, _ input: IDVInput, now: Int, _ env: FlowEnv) -> StepResult<SelfieStep> {
        guard case .confirm(true) = input else { return .end(.cancelled(preLogin: kind.preLogin)) }
        if selfieLeft(r, env) <= 0 { return .end(.exhausted("selfie")) }
        return askSelfieUpload(r, challenge: challenge, now: now, env)
    }

    /// `uploadIDVSelfieFrames` answered: the evidence and the policy's judgement, or what to do.
    /// Seals the descriptor of a MATCHED selfie when the flow can enrol it.
    func selfieUpload(_ r: inout IDVRun, challenge: LivenessChallenge?, _ input: IDVInput, _ evidence: Evidence, _ facts: Facts,
                      _ env: FlowEnv, _ effects: inout [Effect]) throws -> (StepResult<SelfieStep>, (SelfieEvidence, SelfieJudgement)?) {
        if case .cancel = input { return (.end(.cancelled(preLogin: kind.preLogin)), nil) }
        // A client that did not flash the issued sequence: the policy's fallback, no attempt used.
        if case let .presenceDeclined(how) = input { return (declinePresence(r, how: how, pending: challenge, now: facts.now, env, &effects), nil) }
        guard let analysed = evidence.selfie, let reference = evidence.reference else { throw IDVError(.internalError, "the selfie was not analysed") }
        var presence = CapturePresence.none
        if case let .frames(_, _, _, p) = input { presence = p }
        // Asked again: a capture under a fallback keeps its fallback (a person who declined the
        // flashing is not asked to flash again); any other gets a fresh sequence.
        var again: PresenceChallengePayload?
        if case let .fallback(f) = presence { again = PresenceChallengePayload(fallback: f) }
        r.selfieAttempts += 1
        // Active liveness: judged against the challenge the server issued and kept (never one from the client).
        if env.policy.activeLiveness, challenge == nil { throw IDVError(.internalError, "no liveness challenge was issued for this capture") }
        switch analysed {
        case let .failure(e):
            effects.append(audit(r, "selfie_verified", ["result": .string("unusable"), "error_code": .integer(e.longErrorCode),
                                                        "attempt": .integer(r.selfieAttempts)]))
            r.presenceRetaken = nil   // an attempt used: the next one has its own retakes
            r.padRetake = nil
            if selfieLeft(r, env) <= 0 { return (.end(.exhausted("selfie")), nil) }
            return (askSelfieUpload(r, challenge: challenge, now: facts.now, env, error: e, presence: again), nil)
        case let .success(t):
            let e = t.value
            // Judged frames are kept as digests: the same bytes uploaded again fail as a replay.
            if env.policy.presence.replaySeconds > 0, !evidence.captureDigests.isEmpty {
                effects.append(.recordCaptureDigests(evidence.captureDigests, expiresAt: facts.now + env.policy.presence.replaySeconds))
            }
            // A capture too dark, bright, blurred or small to decide on is asked again, not judged; one
            // with the face turned away is asked again instead of a match verdict, once it is live.
            func recapture(_ issue: CaptureIssue, pad: PADJudgement? = nil) -> (StepResult<SelfieStep>, (SelfieEvidence, SelfieJudgement)?) {
                let error = IDVError(issue.errorCode)
                var fields: [String: JSONValue] = ["result": .string("recapture"), "capture_issue": .string(issue.rawValue),
                                                   "error_code": .integer(error.longErrorCode), "attempt": .integer(r.selfieAttempts)]
                if let pad {
                    fields["pad_outcome"] = .string(pad.outcome.rawValue)
                    fields["pad_findings"] = .array(pad.findings.map { .string($0.rawValue) })
                    fields["pad_combined"] = .bool(pad.combined)
                }
                effects.append(audit(r, "selfie_verified", fields))
                r.presenceRetaken = nil   // an attempt used: the next one has its own retakes
                r.padRetake = nil
                r.embedding = nil
                if selfieLeft(r, env) <= 0 { return (.end(.exhausted("selfie")), nil) }
                return (askSelfieUpload(r, challenge: challenge, now: facts.now, env, error: error, presence: again), nil)
            }
            if let issue = env.policy.recapture(e) { return recapture(issue) }
            // PAD: confident attack evidence fails; a capture the policy is unsure about is asked again
            // once, without using the attempt, and the retake is decided together with it. A failed
            // presence check (light that did not follow the sequence, a late or replayed capture) never
            // triggers the PAD retake; only a faint reflection has its own (below).
            let (score, cues, failure) = env.policy.livenessCues(e, challenge: challenge, presence: presence,
                                                                 replayedFrames: evidence.replayedFrames, now: facts.now)
            // The earlier captures count only while each was the reference's person (else this
            // capture is decided alone: somebody else's live face never lends its life or texture).
            let matchedNow = Self.matchedReference(e, reference, env)
            let earlier = r.padRetake.flatMap { ($0.matchedReference ?? []).allSatisfy { $0 } ? $0 : nil }
            let pad = env.policy.judgePAD(e, cues: cues, score: score, earlier: earlier, final: r.padRetake != nil)
            // Presence unsure (the reflection measured but faint: a real face in bright light or held
            // far from the screen) is asked again once per attempt under a new sequence, no attempt
            // used — unless PAD found confident attack evidence in the analyser's own reading (the
            // presence failure's zeroed score not counted). Replayed or late captures never are.
            if r.presenceRetaken != true, env.policy.presenceUnsure(e, reason: failure),
               env.policy.judgePAD(e, cues: e.livenessCues, score: e.livenessScore, earlier: r.padRetake).outcome != .attack {
                r.selfieAttempts -= 1
                r.presenceRetaken = true
                r.embedding = nil
                let error = IDVError(.presenceRetake)
                let m = e.presence.measurement
                effects.append(audit(r, "selfie_verified", [
                    "result": .string("retake"), "retake": .string("presence"), "error_code": .integer(error.longErrorCode),
                    "attempt": .integer(r.selfieAttempts + 1),
                    "presence_score": m?.score.map { .number(($0 * 1000).rounded() / 1000) } ?? .null,
                    "presence_p": m?.pValue.map { .number($0) } ?? .null,
                    "presence_steps": m.map { .string("\($0.stepsMeasured)/\($0.steps)") } ?? .null,
                    "reasons": .array(cues.prefix(8).map { .string($0.rawValue) }),
                ]))
                return (askSelfieUpload(r, challenge: nil, now: facts.now, env, error: error, presence: again), nil)
            }
            if pad.outcome == .unsure, failure == nil, let evidence = e.pad {
                r.selfieAttempts -= 1
                r.padRetake = PADRetake(pad: evidence, cues: cues, matchedReference: matchedNow.map { [$0] })
                r.embedding = nil
                let error = IDVError(.selfieRetake)
                effects.append(audit(r, "selfie_verified", [
                    "result": .string("retake"), "error_code": .integer(error.longErrorCode), "attempt": .integer(r.selfieAttempts + 1),
                    "pad_findings": .array(pad.findings.map { .string($0.rawValue) }),
                    "texture_log_odds": pad.textureLogOdds.map { .number(($0 * 100).rounded() / 100) } ?? .null,
                    "liveness_score": .integer(score), "reasons": .array(cues.prefix(8).map { .string($0.rawValue) }),
                ]))
                // A fresh challenge under active liveness (and a fresh illumination sequence, or the
                // same fallback): the retake must answer one it could not know.
                return (askSelfieUpload(r, challenge: nil, now: facts.now, env, error: error, presence: again), nil)
            }
            // Once more under an active challenge — a head turn and a blink or an open mouth — no
            // attempt used, decided together with the earlier captures: no sign of life in the
            // capture or its retake and nothing confident against them (a person holding still),
            // or passive evidence the policy does not accept alone (the step-up: texture below
            // idv.pad.challenge_below, as a screen filling the view shows).
            // Only for the reference's own face (where the flow has a reference): a capture of
            // somebody else is decided on its evidence, never sent on. Under presence the challenge
            // is asked without the flashing, and the challenged capture of a pair that did not
            // match is decided alone — so otherwise an attacker's own live face, following the
            // flashing with a dull texture, would buy the victim's recording a capture with no
            // presence check at all.
            let askable = pad.outcome == .challenge && failure == nil && !(earlier?.challenged ?? false)
                && (env.policy.presence.mode == .off || env.policy.presence.fallback != .refuse)
                && matchedNow != false
            // The user's PAD challenges are spent (drawn across sessions and flows,
            // idv.pad.challenge_window_seconds): a capture the policy decides only after a challenge
            // ends its run (1010) — never accepted on passive evidence, never a free new draw, and a
            // person holding still is not recorded as an attack for it.
            // (Checked here, before the step-up's state and audit are written; `lift` refuses every
            // other draw the same way.)
            if askable, (facts.padChallengesLeft ?? 1) <= 0 {
                let (audited, ending) = refuseForSpentChallenges(&r, findings: pad.findings)
                effects.append(audited)
                return (.end(ending), nil)
            }
            if askable, let evidence = e.pad, let issued = issueChallenge(now: facts.now, env) {
                r.selfieAttempts -= 1
                if let first = earlier {
                    r.padRetake = PADRetake(pad: first.pad, cues: first.cues, retake: evidence, retakeCues: cues,
                                            matchedReference: first.matchedReference.map { $0 + [matchedNow ?? false] })
                } else {
                    r.padRetake = PADRetake(pad: evidence, cues: cues, matchedReference: matchedNow.map { [$0] }, steppedUp: true)
                }
                r.embedding = nil
                let error = IDVError(.selfieRetake)
                effects.append(audit(r, "selfie_verified", [
                    "result": .string("retake"), "retake": .string("challenge"), "error_code": .integer(error.longErrorCode),
                    "attempt": .integer(r.selfieAttempts + 1),
                    // This capture's own presence reading (the challenged one is asked as presence's fallback).
                    "presence": .string(presence.illumination == nil ? "not_asked" : e.presence.name),
                    "pad_findings": .array(pad.findings.map { .string($0.rawValue) }),
                    "texture_log_odds": pad.textureLogOdds.map { .number(($0 * 100).rounded() / 100) } ?? .null,
                    "liveness_score": .integer(score), "reasons": .array(cues.prefix(8).map { .string($0.rawValue) }),
                ]))
                // Under presence, the challenge is asked as presence's head-movement fallback (no
                // flashing during the actions; the capture's assurance is the fallback's).
                let headMovement = env.policy.presence.mode == .illumination ? PresenceChallengePayload(fallback: .active) : nil
                return (askSelfieUpload(r, challenge: issued, now: facts.now, env, error: error, presence: again ?? headMovement), nil)
            }
            // Whether this capture answered the attempt's PAD challenge (recorded with the decision).
            let afterChallenge = r.padRetake?.challenged ?? false
            r.padRetake = nil
            // Decided, but the face was never seen well enough to read its texture (turned away,
            // blurred): a capture-quality recapture, never LIVENESS_FAILED.
            if pad.outcome == .poorCapture, failure == nil { return recapture(e.captureIssues.first ?? .offPose, pad: pad) }
            r.presenceRetaken = nil
            // A challenge that could not be asked (presence required, no challenge to issue): the
            // pair without life is decided an attack, a stepped-up capture bona fide, and audited so.
            let j = env.policy.judge(e, reference: reference, challenge: challenge, presence: presence, replayedFrames: evidence.replayedFrames,
                                     now: facts.now, pad: pad.decidedWithoutChallenge)
            if let issue = env.policy.recapture(e, after: j) { return recapture(issue) }
            // A counted challenge answered by the reference's own live face (MATCHED against the
            // flow's reference) gives back the run's draws, so a person who follows the challenges
            // is never locked out by them. Never a bona fide capture of somebody else (NOT_MATCHED):
            // an attacker answering each challenge his recording cannot answer with his own face
            // would otherwise redraw for free; never a refused replay; and not in a flow without a
            // reference (opt-in), where any live face is MATCHED — an enrolment costs its draws.
            if let c = challenge, c.nonce == r.countedChallenge, j.verdict == .matched, matchedNow == true, facts.padChallengesLeft != nil {
                effects.append(.refundPADChallenges(userID: r.userID, count: r.challengesCounted ?? 1))
                r.countedChallenge = nil
                r.challengesCounted = nil
            }
            r.verdict = j.verdict
            r.faceMatchScore = j.faceMatchScore.map { ($0 * 1000).rounded() / 1000 }
            r.livenessScore = j.livenessScore
            r.presenceAssurance = j.assurance
            let illumination = e.presence.measurement
            effects.append(audit(r, "selfie_verified", [
                "presence": .string(presence.illumination == nil ? "not_asked" : e.presence.name),
                "presence_assurance": .string(j.assurance.rawValue),
                "presence_score": illumination?.score.map { .number(($0 * 1000).rounded() / 1000) } ?? .null,
                "presence_p": illumination?.pValue.map { .number($0) } ?? .null,
                "presence_steps": illumination.map { .string("\($0.stepsMeasured)/\($0.steps)") } ?? .null,
                "replayed_frames": .integer(evidence.replayedFrames),
                "result": .string(j.verdict.rawValue), "attempt": .integer(r.selfieAttempts),
                "face_match_score": r.faceMatchScore.map { .number($0) } ?? .null, "liveness_score": .integer(j.livenessScore),
                "reasons": .array(j.cues.prefix(8).map { .string($0.rawValue) }), "reason": .string(j.reason.rawValue),
                "reference": r.portraitSource.map { .string($0.rawValue) } ?? .null,
                "frames_per_second": .number(e.framesPerSecond), "duration_ms": .integer(t.milliseconds),
                "pad_rule": e.pad.map { .string($0.rule) } ?? .null,
                "pad_outcome": j.pad.map { .string($0.outcome.rawValue) } ?? .null,
                "pad_findings": .array((j.pad?.findings ?? []).map { .string($0.rawValue) }),
                "pad_combined": .bool(j.pad?.combined ?? false), "pad_after_challenge": .bool(afterChallenge),
                "texture_log_odds": j.pad?.textureLogOdds.map { .number(($0 * 100).rounded() / 100) } ?? .null,
                "texture_score": e.pad?.textureScore.map { .number(($0 * 1000).rounded() / 1000) } ?? .null,
                "motion_only_score": e.pad?.motionOnlyScore.map { .integer($0) } ?? .null,
                "match_kind": e.match?.kind.map { .string($0.rawValue) } ?? .null,
                "match_threshold": j.matchThreshold.map { .number($0) } ?? .null, "template_frames": .integer(e.templateFrames),
                "images_judged": .array(evidence.judgedImages.map(\.json)), "policy_version": .string(env.policy.version(crypto: env.crypto)),
            ]))
            // The descriptor (for a template on consent) is sealed, never in the state — only by the
            // flows that can enrol it (server biometric authentication never creates a template).
            if j.verdict == .matched, !e.embedding.isEmpty, kind != .serverBiometric {
                let id = env.newID()
                effects.append(.sealMedia(id: id, kind: .embedding, bytes: e.template.isEmpty ? SelfieEvidence.version1Template(e.embedding) : e.template))
                r.embedding = KeptEmbedding(mediaID: id, model: e.model, dimensions: e.embedding.count)
            } else {
                r.embedding = nil
            }
            // A stored version-1/2 template matched confidently is replaced by this capture's (TemplateUpgrade.swift).
            effects += templateUpgrade(r, e, j, facts: facts, env: env)
            return (.next, (e, j))
        }
    }

    /// `json` with `value` set at `path` (objects along the path must exist).
    static func setting(_ json: JSONValue, _ path: ArraySlice<String>, _ value: JSONValue) -> JSONValue {
        guard let key = path.first, var o = json.objectValue else { return json }
        if path.count == 1 { o[key] = value } else if let inner = o[key] { o[key] = setting(inner, path.dropFirst(), value) }
        return .object(o)
    }

}
