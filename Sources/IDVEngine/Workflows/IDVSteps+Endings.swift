import Foundation
import IDVCore

// How an IDV run ends: the component results lifted into the flow, the terminal events.

extension IDVFlowSteps {
    /// A component's result in this flow: asking in `place(local)`, or the run's end.
    ///
    /// Every liveness challenge a selfie ask shows for the first time is drawn here, the one place
    /// all draws pass — active liveness's per capture, presence's head-movement fallback, PAD's
    /// step-up: it spends one of the subject's PAD challenges (``Facts/padChallengesLeft``, counted
    /// across sessions, runs and flows), and with none left the run ends (1010) instead of showing
    /// it. A capture that answers it and MATCHES gives the run's draws back (``selfieUpload``).
    func lift<Local>(_ r: IDVRun, _ result: StepResult<Local>, _ effects: [Effect], facts: Facts, env: FlowEnv,
                     _ place: (Local) -> Step) throws -> Transition<State> {
        switch result {
        case let .ask(local, spec):
            var r = r, effects = effects
            if let drawn = (local as? SelfieStep)?.challenge, drawn.nonce != r.countedChallenge, let left = facts.padChallengesLeft {
                guard left > 0 else {
                    let (audited, ending) = refuseForSpentChallenges(&r)
                    return try endFor(r, ending, facts: facts, env: env).after(effects + [audited])
                }
                effects.append(.spendPADChallenge(userID: r.userID))
                r.countedChallenge = drawn.nonce
                r.challengesCounted = (r.challengesCounted ?? 0) + 1
            }
            return .ask(IDVState(run: r, step: place(local)), spec, effects)
        case let .end(e): return try endFor(r, e, facts: facts, env: env).after(effects)
        case .next: throw IDVError(.internalError, "\(name): a finished step with nowhere to go")
        }
    }

    /// Routes an ending to the flow's terminal shape.
    func endFor(_ r: IDVRun, _ e: Ending, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        kind == .serverBiometric ? try endBiometric(r, e, facts: facts, env: env) : try end(r, e, facts: facts, env: env)
    }

    /// Writes the transaction's audit record, releases kept images, and finishes with the flow's event.
    /// `templateExists` (opt-in/opt-out): whether the user has a template once this run's effects apply.
    func end(_ r: IDVRun, _ e: Ending, facts: Facts, env: FlowEnv, payload: JSONValue? = nil, templateExists: Bool? = nil) throws -> Transition<State> {
        let forfeited = forfeitedRetake(r, e.outcome)
        let effects = closeTransaction(r, e, now: facts.now, env: env, runOutcome: forfeited)
        let info = auditInfo(r, now: facts.now, success: e.success)
        let status = Self.status(e.statusCode, e.statusMessage)
        var event: WireEvent?
        switch kind {
        case .activation:
            event = nil
        case .kyc:
            event = WireEvent(name: WireName.onIDVActivatedCustomerKYCResponse, userID: r.userID, error: e.error, status: status,
                              payload: try JSONValue(encoding: KYCResponse(userID: r.userID, status: status, error: e.error, idvAuditInfo: info)))
        case .documentScan:
            var p = payload ?? .emptyObject
            if var o = p.objectValue { o["idv_audit_info"] = try JSONValue(encoding: info); o["reason"] = .string(r.reason); p = .object(o) }
            event = WireEvent(name: WireName.onIDVAdditionalDocumentScan, userID: r.userID, error: e.error, status: status, payload: p)
        case .templateStatus:
            event = WireEvent(name: WireName.onIDVCheckUserBiometricTemplateStatus, userID: r.userID, error: e.error, status: status,
                              payload: payload ?? .emptyObject)
        case .optIn, .optOut:
            let p = BiometricOptStatus(statusCode: e.statusCode, statusMessage: e.statusMessage, orchestrationUseCase: kind.useCase, userID: r.userID,
                                       templateExists: templateExists ?? (facts.template != nil),
                                       attemptsLeft: r.reauthAttempts > 0 ? reauthLeft(r, env) : nil, idvAuditInfo: info)
            event = WireEvent(name: kind == .optIn ? WireName.onIDVBiometricOptInStatus : WireName.onIDVBiometricOptOutStatus,
                              userID: r.userID, error: e.error, status: status, payload: try JSONValue(encoding: p))
        case .serverBiometric:
            return try endBiometric(r, e, facts: facts, env: env)
        }
        return .finish(FlowResult(outcome: forfeited ?? e.outcome, event: event, errorCode: e.error.longErrorCode), effects)
    }

    /// Server biometric authentication's end: `onIDVServerBiometricAuthenticationResult` (seed 001).
    /// No score oracle: the device gets the verdict (`biometric_result.display_text`, the one field
    /// seed 001 reads) and what it rests on — never the face-match or liveness score, nor the
    /// liveness cues; those stay in the audit (`idv.selfie_verified`, `idv.transaction`).
    /// `capture`: the upload this end answers — `video.workflow_data.frames` is its frame count (0
    /// without one), `video.meta_data` its sanitised `meta_data`. `attempts_left` counts this run: a
    /// MATCHED resets the failures (all `idv.biometric_attempts` left), a failure or a forfeited
    /// retake uses one.
    func endBiometric(_ r: IDVRun, _ e: Ending, facts: Facts, env: FlowEnv, judgement j: SelfieJudgement? = nil,
                      capture: IDVInput? = nil) throws -> Transition<State> {
        let forfeited = forfeitedRetake(r, e.outcome)
        let effects = closeTransaction(r, e, now: facts.now, env: env, runOutcome: forfeited)
        var frames = 0
        var meta: SelfieCaptureMetadata?
        if case let .frames(f, _, m, _)? = capture { frames = f.count; meta = m }
        let result = ServerBiometricAuthenticationResult(
            video: ServerBiometricVideo(workflowData: SelfieWorkflowData(workflow: IDVWorkflow.postLoginSelfieBiometric.rawValue, frames: frames),
                                        metaData: meta, clientVersion: "1.0"),
            idvAuditInfo: auditInfo(r, now: facts.now, success: e.success), purpose: r.reason,
            attempts: r.selfieAttempts, userID: r.userID, attemptsLeft: e.success ? env.policy.biometricAttempts : reportedBiometricAttemptsLeft(facts, env, failingNow: j != nil || forfeited != nil),
            biometricResult: j.map { BiometricResult(displayText: $0.verdict, resultCriteria: $0.resultCriteria) })
        let payload = try JSONValue(encoding: result)
        let event = WireEvent(name: WireName.onIDVServerBiometricAuthenticationResult, userID: r.userID, error: e.error,
                              status: Self.status(e.statusCode, e.statusMessage), payload: payload)
        return .finish(FlowResult(outcome: forfeited ?? e.outcome, event: event, errorCode: e.error.longErrorCode), effects)
    }
}

extension IDVFlowSteps {
    // MARK: Endings

    func auditInfo(_ r: IDVRun, now: Int, success: Bool) -> IDVAuditInfo {
        IDVAuditInfo(reason: r.reason, auditMetrics: AuditMetrics(startTimestamp: r.startedAt, endTimestamp: now),
                     status: success ? .success : .failure, idvAuditTransactionID: r.txn, orchestrationUseCase: kind.useCase)
    }

    /// The transaction's audit record (ids, codes, scores — no images or personal data) and the
    /// release of the run's media.
    /// `runOutcome`: the flow run's own outcome when it differs from the transaction record's (a run
    /// abandoned by reset or log-off is recorded `abandoned` in the IDV transaction, its run `reset` /
    /// `logged_off`): the webhook carries the run's, as the relying-party read API shows it.
    func closeTransaction(_ r: IDVRun, _ e: Ending, now: Int, env: FlowEnv, runOutcome: FlowOutcome? = nil) -> [Effect] {
        let runID = env.runID
        let keep = env.policy.mediaRetentionSeconds > 0 ? now + env.policy.mediaRetentionSeconds : nil
        // A run under review keeps its media held (no expiry) until the reviewer decides.
        let release: [Effect] = e.outcome == .pendingReview ? [] : [.releaseMedia(keepUntil: keep)]
        // The relying party's webhook (docs/WEBHOOKS.md): the run's outcome and reason codes, no
        // scores and no personal data. The template-status check only reads: no event.
        let decided: [Effect] = kind == .templateStatus ? [] : [.publish(.verificationDecided, userID: r.userID, data: WebhookEventData(
            flow: name, idvWorkflow: r.idvWorkflow, runID: runID, idvAuditTransactionID: r.txn, outcome: runOutcome ?? e.outcome, success: e.success,
            longErrorCode: e.error.longErrorCode, statusCode: e.statusCode, documentStatus: r.documentStatus, verdict: r.verdict))]
        return decided + release + [audit(r, "transaction", [
            "orchestration_use_case": .string(kind.useCase.rawValue), "idv_workflow": .integer(r.idvWorkflow), "run_id": .string(runID),
            "start_timestamp": .integer(r.startedAt), "end_timestamp": .integer(now),
            "outcome": .string(e.outcome.rawValue), "status": .string(e.success ? "SUCCESS" : "FAILURE"),
            "long_error_code": .integer(e.error.longErrorCode), "status_code": .integer(e.statusCode),
            "document_status": r.documentStatus.map { .string($0.rawValue) } ?? .null, "verdict": r.verdict.map { .string($0.rawValue) } ?? .null,
            "face_match_score": r.faceMatchScore.map { .number($0) } ?? .null, "liveness_score": r.livenessScore.map { .integer($0) } ?? .null,
            "document_attempts": .integer(r.documentAttempts), "selfie_attempts": .integer(r.selfieAttempts),
            "consent": r.consent.map { .bool($0) } ?? .null, "template_created": .bool(r.templateCreated),
            "scan_id": r.scanID.map { .string($0) } ?? .null,
            "review_triggers": r.reviewTriggers.isEmpty ? .null : .array(r.reviewTriggers.map { .string($0.rawValue) }),
            "presence_assurance": r.presenceAssurance.map { .string($0.rawValue) } ?? .null,
            // The run's own outcome where it differs (a retake forfeited by a cancel counts as the
            // LIVENESS_FAILED it stood in for; a reset or log-off): what the webhook and the
            // relying party's read API say, in the hash-chained record too.
            "run_outcome": runOutcome.map { .string($0.rawValue) } ?? .null,
        ])]
    }

    /// A selfie flow (KYC, opt-in, server biometric authentication) left (cancelled, superseded,
    /// expired, abandoned) while a capture the policy asked again (a faint reflection, 1071; PAD
    /// unsure or stepped up to a challenge, 1066) waited for its retake: the run's outcome is
    /// LIVENESS_FAILED — the capture was not accepted, and the retake it was offered is forfeited —
    /// so it counts toward `idv.biometric_attempts` like a judged failure (``Facts/livenessFailures``).
    /// Without this a retake followed by a cancel would tell an attacker "close" for free, and a new
    /// run would draw a new challenge for free, as often as they like. The device's event is
    /// unchanged (the cancel's 240, the expiry's 1021). nil otherwise, and for activation (its runs
    /// are bounded by the activation code's).
    func forfeitedRetake(_ r: IDVRun, _ outcome: FlowOutcome) -> FlowOutcome? {
        guard kind != .activation, r.presenceRetaken == true || r.padRetake != nil,
              ![.matched, .notMatched, .livenessFailed].contains(outcome) else { return nil }
        return .livenessFailed
    }

    /// The client started flow `next` while this one waited (`POST /v1/flows/{name}`, issue #15;
    /// seed 000 §1.5/§1.6: a Close that only navigates back leaves the flow open): ended with its
    /// terminal event as a cancel ends it (240), audited `idv.superseded`. Activation (pre-login)
    /// is never superseded.
    func supersede(_ state: State, by next: String, facts: Facts, env: FlowEnv) throws -> Transition<State>? {
        guard kind != .activation else { return nil }
        let r = state.run
        return try endFor(r, .superseded, facts: facts, env: env).after([audit(r, "superseded", ["by_flow": .string(next)])])
    }

    /// Reset, log-off or session end: the transaction is recorded (abandoned, or expired/revoked
    /// with the run's media dropped at once, whatever `idv.media_retention_seconds` says).
    func abandon(_ state: State, reason: AbandonReason, facts: Facts, env: FlowEnv) -> [Effect] {
        let forfeited = forfeitedRetake(state.run, reason.outcome)
        let endAs: [Effect] = forfeited.map { [.endRunAs($0)] } ?? []
        switch reason {
        case .expired, .revoked:
            let error = reason == .expired ? IDVError(.sessionExpired) : IDVError.none
            return closeTransaction(state.run, Ending(outcome: reason.outcome, error: error, statusCode: RequestStatus.failed,
                                                      statusMessage: reason == .expired ? error.errorString : "Session revoked", success: false),
                                    now: facts.now, env: env, runOutcome: forfeited) + [.releaseMedia(keepUntil: nil)] + endAs
        case .reset, .loggedOff:
            return closeTransaction(state.run, Ending(outcome: .abandoned, error: .none, statusCode: RequestStatus.failed,
                                                      statusMessage: "Abandoned", success: false), now: facts.now, env: env,
                                    runOutcome: forfeited ?? reason.outcome) + endAs
        }
    }
}
