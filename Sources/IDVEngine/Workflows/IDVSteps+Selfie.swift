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

    /// A fresh active liveness challenge from the analyser (nil without one).
    func issueChallenge(now: Int, _ env: FlowEnv) -> LivenessChallenge? {
        services.selfies?.issueChallenge(now: now, durationSeconds: env.policy.activeChallengeDurationSeconds,
                                         deadlineSeconds: env.policy.activeChallengeDeadlineSeconds)
    }

    /// `uploadIDVSelfieFrames`, with the pending capture's challenge (issued now when there is none:
    /// a challenge is used up by the verification that evaluates it).
    func askSelfieUpload(_ r: IDVRun, challenge: LivenessChallenge?, now: Int, _ env: FlowEnv, error: IDVError? = nil, status: RequestStatus? = nil,
                         livenessReasons: [String]? = nil) -> StepResult<SelfieStep> {
        let c = env.policy.activeLiveness ? challenge ?? issueChallenge(now: now, env) : challenge
        let request = SelfieUploadRequest(maxFrames: env.policy.maxFrames, livenessChallenge: env.policy.activeLiveness ? c : nil,
                                          livenessReasons: livenessReasons)
        return .ask(.upload(challenge: c), spec(WireName.uploadIDVSelfieFrames, r, attemptsLeft: selfieLeft(r, env), payload: Self.payload(request),
                                               error: error, status: status))
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
        guard let analysed = evidence.selfie, let reference = evidence.reference else { throw IDVError(.internalError, "the selfie was not analysed") }
        r.selfieAttempts += 1
        // Active liveness: judged against the challenge the server issued and kept (never one from the client).
        if env.policy.activeLiveness, challenge == nil { throw IDVError(.internalError, "no liveness challenge was issued for this capture") }
        switch analysed {
        case let .failure(e):
            effects.append(audit(r, "selfie_verified", ["result": .string("unusable"), "error_code": .integer(e.longErrorCode),
                                                        "attempt": .integer(r.selfieAttempts)]))
            if selfieLeft(r, env) <= 0 { return (.end(.exhausted("selfie")), nil) }
            return (askSelfieUpload(r, challenge: challenge, now: facts.now, env, error: e), nil)
        case let .success(t):
            let e = t.value
            // A capture too dark, bright, blurred or small to decide on is asked again, not judged; one
            // with the face turned away is asked again instead of a match verdict, once it is live.
            func recapture(_ issue: CaptureIssue) -> (StepResult<SelfieStep>, (SelfieEvidence, SelfieJudgement)?) {
                let error = IDVError(issue.errorCode)
                effects.append(audit(r, "selfie_verified", ["result": .string("recapture"), "capture_issue": .string(issue.rawValue),
                                                            "error_code": .integer(error.longErrorCode), "attempt": .integer(r.selfieAttempts)]))
                r.embedding = nil
                if selfieLeft(r, env) <= 0 { return (.end(.exhausted("selfie")), nil) }
                return (askSelfieUpload(r, challenge: challenge, now: facts.now, env, error: error), nil)
            }
            if let issue = env.policy.recapture(e) { return recapture(issue) }
            let j = env.policy.judge(e, reference: reference, challenge: challenge, now: facts.now)
            if let issue = env.policy.recapture(e, after: j) { return recapture(issue) }
            r.verdict = j.verdict
            r.faceMatchScore = j.faceMatchScore.map { ($0 * 1000).rounded() / 1000 }
            r.livenessScore = j.livenessScore
            effects.append(audit(r, "selfie_verified", [
                "result": .string(j.verdict.rawValue), "attempt": .integer(r.selfieAttempts),
                "face_match_score": r.faceMatchScore.map { .number($0) } ?? .null, "liveness_score": .integer(j.livenessScore),
                "reasons": .array(j.cues.prefix(8).map { .string($0.rawValue) }), "reason": .string(j.reason.rawValue),
                "reference": r.portraitSource.map { .string($0.rawValue) } ?? .null,
                "frames_per_second": .number(e.framesPerSecond), "duration_ms": .integer(t.milliseconds),
                "pad_rule": e.pad.map { .string($0.rule) } ?? .null,
                "texture_score": e.pad?.textureScore.map { .number(($0 * 1000).rounded() / 1000) } ?? .null,
                "motion_only_score": e.pad?.motionOnlyScore.map { .integer($0) } ?? .null,
                "match_kind": e.match?.kind.map { .string($0.rawValue) } ?? .null,
                "match_threshold": j.matchThreshold.map { .number($0) } ?? .null, "template_frames": .integer(e.templateFrames),
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
