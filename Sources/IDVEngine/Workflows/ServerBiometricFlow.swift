import Foundation
import IDVCore

// MARK: - Server biometric authentication (seed 001)

/// A selfie against the stored template; locked out after `idv.biometric_attempts` consecutive failures.
struct ServerBiometricFlow: IDVFlowSteps {
    typealias Step = SelfieStep
    typealias State = IDVState<SelfieStep>
    typealias Input = IDVInput
    var kind: IDVKind { .serverBiometric }
    var usesBiometricHistory: Bool { true }
    let services: IDVServices
    init(services: IDVServices) { self.services = services }

    func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        let (r, effects) = try newRun(input, facts: facts, env: env)
        guard facts.template != nil else {
            return try endBiometric(r, Ending(outcome: .noTemplate, error: IDVError(.templateNotFound), statusCode: RequestStatus.noTemplate,
                                              statusMessage: IDVErrorCode.templateNotFound.message, success: false), facts: facts, env: env).after(effects)
        }
        if let refusal = selfieRefusal(facts, env) {
            return try endBiometric(r, .exhausted(refusal), facts: facts, env: env).after(effects)
        }
        if biometricAttemptsLeft(facts, env) <= 0 {
            return try endBiometric(r, .exhausted("biometric authentication"), facts: facts, env: env).after(effects)
        }
        return try lift(r, askSelfieStart(r, now: facts.now, env), effects, facts: facts, env: env) { $0 }
    }

    func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> IDVInput {
        switch state.step {
        case .start: return try parseSelfieStart(a)
        case .upload: return try parseFrames(a, settings.workflow, challenge)
        case .confirm: throw IDVError(.internalError, "server biometric authentication in unexpected step")
        }
    }

    func evidence(_ state: State, input: IDVInput, settings: EngineSettings) -> EvidenceRequest {
        if case let .upload(challenge) = state.step, case let .frames(frames, fps, _, presence) = input {
            return .selfie(frames: frames, framesPerSecond: fps, reference: .template(orPortrait: nil), challenge: challenge, nameMedia: nil,
                           presence: presence)
        }
        return .none
    }

    func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts, env) { return try endBiometric(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        switch state.step {
        case let .start(challenge):
            return try lift(r, selfieStart(r, challenge: challenge, input, now: facts.now, env), effects, facts: facts, env: env) { $0 }
        case let .upload(challenge):
            if case .cancel = input { return try endBiometric(r, .cancelled(preLogin: false), facts: facts, env: env) }
            if evidence.referenceMissing {
                return try endBiometric(r, Ending(outcome: .noTemplate, error: IDVError(.templateNotFound), statusCode: RequestStatus.noTemplate,
                                                  statusMessage: IDVErrorCode.templateNotFound.message, success: false), facts: facts, env: env)
            }
            let (next, analysed) = try selfieUpload(&r, challenge: challenge, input, evidence, facts, env, &effects)
            guard let (_, j) = analysed else { return try lift(r, next, effects, facts: facts, env: env) { $0 } }
            let ending: Ending
            switch j.verdict {
            case .matched: ending = Ending(outcome: .matched, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true)
            case .livenessFailed: ending = Ending(outcome: .livenessFailed, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: false)
            default: ending = Ending(outcome: .notMatched, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: false)
            }
            return try endBiometric(r, ending, facts: facts, env: env, judgement: j, capture: input).after(effects)
        case .confirm:
            throw IDVError(.internalError, "server biometric authentication in unexpected step")
        }
    }
}
