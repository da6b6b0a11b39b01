import Foundation
import IDVCore

// MARK: - Template status (`checkIDVUserBiometricTemplateStatus`)

/// 100 when a template exists, 600 when none; ends at once.
struct TemplateStatusFlow: IDVFlowSteps {
    /// The flow never waits.
    enum Step: Codable, Sendable, Equatable { case ended }
    typealias State = IDVState<Step>
    typealias Input = IDVInput
    var kind: IDVKind { .templateStatus }
    var usesBiometricHistory: Bool { true }
    let services: IDVServices
    init(services: IDVServices) { self.services = services }

    func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        let (r, effects) = try newRun(input, facts: facts, env: env)
        let exists = facts.template != nil
        let code = exists ? RequestStatus.success : RequestStatus.noTemplate
        let msg = exists ? "Success" : "No biometric template exists for the user"
        let payload = BiometricTemplateStatus(statusCode: code, statusMessage: msg, result: exists,
                                              attemptsLeft: reportedBiometricAttemptsLeft(facts, env), userID: r.userID)
        return try end(r, Ending(outcome: exists ? .templateExists : .noTemplate, error: .none, statusCode: code, statusMessage: msg, success: true),
                       facts: facts, env: env, payload: try JSONValue(encoding: payload)).after(effects)
    }

    func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> IDVInput {
        throw IDVError(.internalError, "the template-status check asks nothing")
    }

    func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        throw IDVError(.internalError, "the template-status check asks nothing")
    }
}
