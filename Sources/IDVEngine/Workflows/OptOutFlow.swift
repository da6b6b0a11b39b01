import Foundation
import IDVCore

// MARK: - Biometric opt-out (seed 004)

/// Re-authentication, then the template erased and the withdrawal recorded.
struct OptOutFlow: IDVFlowSteps {
    typealias Step = ReauthStep
    typealias State = IDVState<ReauthStep>
    typealias Input = IDVInput
    var kind: IDVKind { .optOut }
    let services: IDVServices
    init(services: IDVServices) { self.services = services }

    func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var (r, effects) = try newRun(input, facts: facts, env: env)
        if facts.template == nil {
            return try end(r, Ending(outcome: .noTemplate, error: .none, statusCode: RequestStatus.noTemplate,
                                     statusMessage: IDVErrorCode.templateNotFound.message, success: false), facts: facts, env: env).after(effects)
        }
        let ask = askReauth(&r, facts: facts, env: env)
        return try lift(r, ask, effects, facts: facts, env: env) { $0 }
    }

    func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> IDVInput {
        try parseReauth(state.step, a, challenge)
    }

    func credential(_ state: State, input: IDVInput) -> (kind: CredentialKind, userID: String)? {
        if case .password = state.step, case .password = input { return (.password, state.run.userID) }
        return nil
    }

    func evidence(_ state: State, input: IDVInput, settings: EngineSettings) -> EvidenceRequest {
        if case .password = state.step, case let .password(pw) = input { return .passwordCheck(pw) }
        return .none
    }

    func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts, env) { return try end(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        let result = reauth(&r, input, evidence, facts, env, &effects)
        guard case .next = result else { return try lift(r, result, effects, facts: facts, env: env) { $0 } }
        let erased = facts.template != nil
        effects.append(.deleteTemplate(userID: r.userID))
        effects.append(audit(r, "template_erased", ["erased": .bool(erased)]))
        if erased {
            effects.append(.publish(.templateDeleted, userID: r.userID, data: WebhookEventData(
                flow: name, idvWorkflow: r.idvWorkflow, idvAuditTransactionID: r.txn, consentID: facts.template?.consentID)))
            _ = recordConsent(r, granted: false, facts: facts, env: env, &effects)
            return try end(r, Ending(outcome: .templateErased, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true),
                           facts: facts, env: env, templateExists: false).after(effects)
        }
        return try end(r, Ending(outcome: .noTemplate, error: .none, statusCode: RequestStatus.noTemplate,
                                 statusMessage: IDVErrorCode.templateNotFound.message, success: false),
                       facts: facts, env: env, templateExists: false).after(effects)
    }
}
