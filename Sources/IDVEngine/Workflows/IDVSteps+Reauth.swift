import Foundation
import IDVCore

extension IDVFlowSteps {
    // MARK: Re-authentication (seed 004: LDA, else the password)

    func askReauth(_ r: inout IDVRun, facts: Facts, env: FlowEnv, error: IDVError? = nil) -> StepResult<ReauthStep> {
        if !r.ldaTried, let d = facts.device, d.userID == r.userID, d.ldaEnabled {
            r.ldaTried = true
            return .ask(.lda, spec(WireName.getDeviceSignature, r, attemptsLeft: 1, payload: env.ldaChallenge()))
        }
        let left = min(reauthLeft(r, env), facts.user.map { AuthFlow.passwordsLeft($0, clientFailures: facts.client.passwordFailures, facts: facts, env: env) } ?? reauthLeft(r, env))
        return .ask(.password, spec(WireName.getPassword, r, attemptsLeft: left, error: error,
                                    status: error.map { Self.status(RequestStatus.unableToProcess, $0.errorString) }
                                        ?? Self.status(RequestStatus.success, "Success")))
    }

    /// A re-authentication answer: `.next` when the user proved it (audited), else what to do.
    func reauth(_ r: inout IDVRun, _ input: IDVInput, _ evidence: Evidence, _ facts: Facts, _ env: FlowEnv,
                _ effects: inout [Effect]) -> StepResult<ReauthStep> {
        switch input {
        case .cancel:
            return .end(.cancelled(preLogin: false))
        case .ldaFallback:
            return askReauth(&r, facts: facts, env: env)
        case let .ldaSignature(sig, cid, nonce):
            guard AuthFlow.signatureValid(sig, challengeID: cid, nonce: nonce, facts: facts, env: env) else {
                effects.append(audit(r, "reauth_failed", ["method": "lda"]))
                return askReauth(&r, facts: facts, env: env, error: IDVError(.deviceSignatureInvalid, "LDA failed; enter the password instead"))
            }
            effects.append(audit(r, "reauthenticated", ["method": "lda"]))
            return .next
        case .password:
            // The same count, lock and back-off as the login's password (AuthFlow.wrongPassword).
            func unavailable(_ e: IDVError) -> StepResult<ReauthStep> {
                .end(Ending(outcome: .userUnavailable, error: e, statusCode: RequestStatus.failed, statusMessage: e.errorString, success: false))
            }
            guard let user = facts.user, user.state != .pendingActivation else { return unavailable(IDVError(.userLocked)) }
            if let refusal = AuthFlow.lockRefusal(user, facts: facts, env: env) {
                effects += refusal.effects
                return unavailable(refusal.error)
            }
            guard evidence.passwordMatches == true else {
                r.reauthAttempts += 1
                let wrong = AuthFlow.wrongPassword(user, facts: facts, env: env)
                effects += wrong.effects
                effects.append(audit(r, "reauth_failed", ["method": "password", "attempts_left": .integer(reauthLeft(r, env))]))
                if let refusal = wrong.refusal { return unavailable(refusal) }
                if reauthLeft(r, env) <= 0 { return .end(.exhausted("password")) }
                return askReauth(&r, facts: facts, env: env, error: IDVError(.invalidPassword))
            }
            effects += AuthFlow.rightPassword(user, facts: facts)
            effects.append(audit(r, "reauthenticated", ["method": "password"]))
            return .next
        default:
            return .end(.cancelled(preLogin: false))
        }
    }

    /// A consent decision recorded (and audited); returns its id.
    func recordConsent(_ r: IDVRun, granted: Bool, facts: Facts, env: FlowEnv, _ effects: inout [Effect]) -> String {
        let id = env.newID()
        effects.append(.recordConsent(ConsentRecord(consentID: id, userID: r.userID, kind: ConsentRecord.biometricTemplate, granted: granted,
                                                    sessionID: facts.session.sessionID, runID: env.runID, flow: name, idvWorkflow: r.idvWorkflow,
                                                    textVersion: env.policy.consentTextVersion, recordedAt: facts.now)))
        effects.append(audit(r, "consent_recorded", ["consent_id": .string(id), "granted": .bool(granted), "text_version": .string(env.policy.consentTextVersion)]))
        effects.append(.publish(.consentChanged, userID: r.userID, data: WebhookEventData(
            flow: name, idvWorkflow: r.idvWorkflow, idvAuditTransactionID: r.txn, consentID: id, consentKind: ConsentRecord.biometricTemplate,
            granted: granted, consentTextVersion: env.policy.consentTextVersion)))
        return id
    }

    /// Creates (or replaces) the user's template from the sealed descriptor of this run — only
    /// with a recorded consent.
    func enrol(_ r: inout IDVRun, consentID: String, _ effects: inout [Effect]) throws {
        guard let e = r.embedding else { throw IDVError(.internalError, "no face descriptor kept for enrolment") }
        effects.append(.saveTemplate(userID: r.userID, fromMedia: e.mediaID, model: e.model, consentID: consentID))
        r.templateCreated = true
        effects.append(audit(r, "template_created", ["consent_id": .string(consentID), "dimensions": .integer(e.dimensions)]))
        effects.append(.publish(.templateCreated, userID: r.userID, data: WebhookEventData(
            flow: name, idvWorkflow: r.idvWorkflow, idvAuditTransactionID: r.txn, consentID: consentID, templateModel: e.model)))
    }

}
