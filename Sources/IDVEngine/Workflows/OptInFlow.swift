import Foundation
import IDVCore

// MARK: - Biometric opt-in and opt-out (seed 004)

/// Re-authentication (LDA, else the password), a live selfie, the user's approval of the frame,
/// then the template under a recorded consent.
struct OptInFlow: IDVFlowSteps {
    enum Step: Codable, Sendable, Equatable {
        case reauth(ReauthStep)
        case selfie(SelfieStep)
        /// `onIDVOptInCapturedFrameConfirmation`.
        case frameConfirm
    }
    typealias State = IDVState<Step>
    typealias Input = IDVInput
    var kind: IDVKind { .optIn }
    let services: IDVServices
    init(services: IDVServices) { self.services = services }

    /// Opt-in reads the user's recent liveness failures (``Facts/livenessFailures``).
    var usesBiometricHistory: Bool { true }

    func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        guard env.policy.optInEnrolment else {
            throw IDVError(.workflowUnavailable, "Biometric opt-in is off on this server (idv.optin_enrolment): a template is enrolled with consent after identity verification (KYC)")
        }
        var (r, effects) = try newRun(input, facts: facts, env: env)
        if let refusal = selfieRefusal(facts, env) {
            return try end(r, .exhausted(refusal), facts: facts, env: env).after(effects)
        }
        if facts.template != nil {
            return try end(r, Ending(outcome: .templateExists, error: IDVError(.templateExists), statusCode: RequestStatus.unableToProcess,
                                     statusMessage: IDVErrorCode.templateExists.message, success: false), facts: facts, env: env).after(effects)
        }
        let ask = askReauth(&r, facts: facts, env: env)
        return try lift(r, ask, effects, facts: facts, env: env) { .reauth($0) }
    }

    func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> IDVInput {
        switch state.step {
        case let .reauth(step): return try parseReauth(step, a, challenge)
        case .selfie(.start): return try parseSelfieStart(a)
        case .selfie(.upload): return try parseFrames(a, settings.workflow, challenge)
        case .selfie(.confirm): throw IDVError(.internalError, "opt-in in unexpected step")
        case .frameConfirm:
            guard let st = IDVStatus(rawValue: try answer(a, as: FrameConfirmationAnswer.self).status) else {
                throw IDVError(.malformedRequest, "payload.status must be 0 (APPROVED), 1 (RECAPTURE) or 2 (CANCEL)")
            }
            return .frameStatus(st)
        }
    }

    func credential(_ state: State, input: IDVInput) -> (kind: CredentialKind, userID: String)? {
        if case .reauth(.password) = state.step, case .password = input { return (.password, state.run.userID) }
        return nil
    }

    func evidence(_ state: State, input: IDVInput, settings: EngineSettings) -> EvidenceRequest {
        switch (state.step, input) {
        case let (.reauth(.password), .password(pw)): return .passwordCheck(pw)
        case let (.selfie(.upload(challenge)), .frames(frames, fps, _, presence)):
            return .selfie(frames: frames, framesPerSecond: fps, reference: .none, challenge: challenge, nameMedia: nil, presence: presence)
        default: return .none
        }
    }

    func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts, env) { return try end(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        switch state.step {
        case .reauth:
            let result = reauth(&r, input, evidence, facts, env, &effects)
            guard case .next = result else { return try lift(r, result, effects, facts: facts, env: env) { .reauth($0) } }
            return try lift(r, askSelfieStart(r, now: facts.now, env), effects, facts: facts, env: env) { .selfie($0) }
        case let .selfie(.start(challenge)):
            return try lift(r, selfieStart(r, challenge: challenge, input, now: facts.now, env), effects, facts: facts, env: env) { .selfie($0) }
        case let .selfie(.upload(challenge)):
            let (next, analysed) = try selfieUpload(&r, challenge: challenge, input, evidence, facts, env, &effects)
            guard let (e, j) = analysed else { return try lift(r, next, effects, facts: facts, env: env) { .selfie($0) } }
            if j.verdict != .matched {
                if selfieLeft(r, env) <= 0 { return try end(r, .exhausted("selfie"), facts: facts, env: env).after(effects) }
                return try lift(r, askSelfieUpload(r, challenge: nil, now: facts.now, env,
                                                   status: Self.status(RequestStatus.unableToProcess, BiometricVerdict.livenessFailed.rawValue),
                                                   livenessReasons: j.verdict == .livenessFailed ? WorkflowPolicy.retryHints(j).nilIfEmpty : nil),
                                effects, facts: facts, env: env) { .selfie($0) }
            }
            return .ask(IDVState(run: r, step: .frameConfirm), spec(WireName.onIDVOptInCapturedFrameConfirmation, r, attemptsLeft: selfieLeft(r, env), payload: [
                "captured_frame": e.bestFrameJPEG.map { .string($0.base64EncodedString()) } ?? .null,
                "liveness_score": .integer(WorkflowPolicy.shownScores(j)?.liveness ?? 0),
            ]), effects)
        case .selfie(.confirm):
            throw IDVError(.internalError, "opt-in in unexpected step")
        case .frameConfirm:
            guard case let .frameStatus(st) = input else { throw IDVError(.internalError, "frame confirmation without a status") }
            effects.append(audit(r, "frame_confirmation", ["status": .string(st.name)]))
            switch st {
            case .approved:
                if facts.template != nil {
                    return try end(r, Ending(outcome: .templateExists, error: IDVError(.templateExists), statusCode: RequestStatus.unableToProcess,
                                             statusMessage: IDVErrorCode.templateExists.message, success: false), facts: facts, env: env).after(effects)
                }
                let consentID = recordConsent(r, granted: true, facts: facts, env: env, &effects)
                try enrol(&r, consentID: consentID, &effects)
                return try end(r, Ending(outcome: .templateCreated, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true),
                               facts: facts, env: env, templateExists: true).after(effects)
            case .recapture:
                if selfieLeft(r, env) <= 0 { return try end(r, .exhausted("selfie"), facts: facts, env: env).after(effects) }
                return try lift(r, askSelfieUpload(r, challenge: nil, now: facts.now, env), effects, facts: facts, env: env) { .selfie($0) }
            case .cancel:
                return try end(r, .cancelled(preLogin: false), facts: facts, env: env).after(effects)
            }
        }
    }
}

extension Array {
    /// nil for an empty array (a payload field left out rather than sent empty).
    fileprivate var nilIfEmpty: [Element]? { isEmpty ? nil : self }
}
