import Foundation
import IDVCore

extension FlowEngine {
    // MARK: The transaction

    /// One request's write transaction: the session being changed, its time and id, and the flow
    /// outcomes to count once it commits.
    package final class Commit {
        package var session: SessionRecord
        package let now: Int
        let requestID: String
        var outcomes: [(flow: String, outcome: FlowOutcome)] = []
        /// Outcomes a flow chose for its run when abandoned (``Effect/endRunAs(_:)``), by run id.
        var runOutcomes: [String: FlowOutcome] = [:]
        /// Who sent the request (the abuse limits' key).
        let client: ClientIdentity
        /// Credentials judged in this transaction (failed: true), counted by the limits once it commits.
        var credentials: [(failed: Bool, kind: CredentialKind, userID: String)] = []
        /// Refusals the flows answered themselves, counted by the limits once the transaction commits.
        var refusals: [AbuseLimit] = []
        /// The session's new bearer token when this commit rotated it (at login), sent once in the answer.
        var issuedToken: String?
        package init(session: SessionRecord, now: Int, requestID: String, client: ClientIdentity? = nil) {
            self.session = session
            self.now = now
            self.requestID = requestID
            self.client = client ?? ClientIdentity(address: nil, deviceID: session.deviceID)
        }
    }

    /// Evidence measured against facts that changed before the transaction read them.
    struct StaleEvidence: Error {}

    /// Runs `body` as one store transaction; after it committed, counts the flow outcomes it
    /// produced (a rollback counts nothing).
    package func committed<T>(_ c: Commit, _ body: (Commit) throws -> T) throws -> T {
        let result = try store.withTransaction {
            let r = try body(c)
            // The credential limits count in the same transaction: once, and only if it commits.
            for e in c.credentials {
                if e.failed { try limits.recordFailure(e.kind, userID: e.userID, client: c.client, now: c.now) }
                else { try limits.recordSuccess(e.kind, userID: e.userID, client: c.client) }
            }
            return r
        }
        for o in c.outcomes { metrics.flowOutcome(flow: o.flow, outcome: o.outcome.rawValue) }
        for l in c.refusals { limits.countRefusal(l) }
        return result
    }

    /// Inside a store transaction: throws `error` when the stored session moved past the version
    /// `s` was read at (an answer committed by another process meanwhile).
    func ensureUnchanged(_ s: SessionRecord, else error: IDVError) throws {
        guard try store.liveSessionVersion(sessionID: s.sessionID) == s.version else { throw error }
    }

    func env(_ runID: String, _ c: Commit) -> FlowEnv {
        FlowEnv(settings: settings, activationIDV: registry.activationIDV, crypto: crypto, runID: runID, requestID: c.requestID)
    }

    func sessionFacts(_ s: SessionRecord) -> SessionFacts {
        SessionFacts(sessionID: s.sessionID, userID: s.userID, deviceID: s.deviceID, loggedIn: s.loggedIn, absoluteExpiresAt: s.absoluteExpiresAt)
    }

    /// The facts of `subject` and the session, read inside the transaction.
    func loadFacts(subject: String?, biometric: Bool, _ c: Commit) throws -> Facts {
        var f = Facts(now: c.now, session: sessionFacts(c.session))
        if let did = c.session.deviceID { f.device = try store.device(did) }
        guard let uid = subject else { return f }
        f.client = try limits.facts(userID: uid, client: c.client, now: c.now)
        f.user = try store.user(uid)
        if f.user?.state == .pendingActivation { f.activationCode = try store.activationCode(userID: uid) }
        f.template = try store.biometricTemplate(userID: uid).map(templateFacts)
        if biometric {
            // The selfie flows' outcomes within the lockout window, each read once (newest first).
            let since = c.now - settings.workflow.biometricLockoutSeconds
            let outcomes = try [FlowName.serverBiometric, FlowName.kyc, FlowName.optIn].map { try store.flowOutcomes(userID: uid, flow: $0, since: since) }
            f.biometricFailures = outcomes[0].prefix { $0 != .matched }.filter { $0 == .notMatched || $0 == .livenessFailed }.count
            f.livenessFailures = outcomes.joined().filter { $0 == .livenessFailed }.count
            f.padChallengesLeft = try limits.padChallengesLeft(userID: uid, capacity: settings.workflow.biometricAttempts,
                                                               window: settings.workflow.pad.challengeWindowSeconds, now: c.now)
        }
        return f
    }

    func templateFacts(_ t: BiometricTemplateRecord) -> TemplateFacts {
        TemplateFacts(model: t.model, consentID: t.consentID, createdAt: t.createdAt,
                      digest: Hex.encode(crypto.sha256(t.sealed.nonce + t.sealed.ciphertext)))
    }

    /// Applies `t`'s effects, then its step; further steps (sub-flow starts, a caller's resume)
    /// until a challenge is asked or the bottom flow finishes. Returns the event of a bottom-level finish.
    func settle(_ first: ErasedTransition, _ c: Commit) throws -> WireEvent? {
        var t = first
        for _ in 0..<64 {
            guard let top = c.session.state.stack.indices.last else { throw IDVError(.internalError, "a step with no flow") }
            let frame = c.session.state.stack[top]
            for e in t.effects { try apply(e, runID: frame.runID, c) }
            switch t.step {
            case let .ask(state, spec):
                c.session.state.stack[top].state = state
                c.session.state.challenge = PendingChallenge(challengeID: crypto.randomID(), spec: spec, userID: c.session.userID)
                return nil
            case let .call(state, name, input):
                c.session.state.stack[top].state = state
                guard let (child, runID) = try push(name, input: input, c) else { throw IDVError(.internalError, "flow \(name) is not registered") }
                let facts = try loadFacts(subject: child.startSubject(input, sessionFacts(c.session)), biometric: child.usesBiometricHistory, c)
                t = try child.start(input, facts, env(runID, c))
            case let .finish(result):
                c.session.state.stack.removeLast()
                try store.endFlowRun(runID: frame.runID, at: c.now, outcome: result.outcome, errorCode: result.errorCode)
                c.outcomes.append((frame.flow, result.outcome))
                guard let parent = c.session.state.stack.last, let pflow = registry.flow(parent.flow) else {
                    c.session.state.challenge = nil
                    return result.event
                }
                let facts = try loadFacts(subject: try pflow.subject(parent.state), biometric: pflow.usesBiometricHistory, c)
                t = try pflow.resume(parent.state, frame.flow, result, facts, env(parent.runID, c))
            }
        }
        throw IDVError(.internalError, "flow steps did not settle")
    }

    /// Pushes a fresh frame of flow `name` (its run recorded) and returns the flow and run id.
    func push(_ name: String, input: JSONValue, _ c: Commit) throws -> (AnyFlow, String)? {
        guard let flow = registry.flow(name) else { return nil }
        let runID = crypto.randomID()
        try store.startFlowRun(FlowRunRecord(runID: runID, sessionID: c.session.sessionID, userID: c.session.userID,
                                             flow: name, idvWorkflow: flow.workflow?.rawValue, startedAt: c.now))
        c.session.state.stack.append(FlowFrame(flow: name, runID: runID, state: .null))
        return (flow, runID)
    }

    /// Starts flow `name` on an empty stack (a session's auth flow, a post-login flow).
    func call(_ name: String, input: JSONValue, _ c: Commit) throws -> WireEvent? {
        guard let (flow, runID) = try push(name, input: input, c) else { throw IDVError(.internalError, "flow \(name) is not registered") }
        let facts = try loadFacts(subject: flow.startSubject(input, sessionFacts(c.session)), biometric: flow.usesBiometricHistory, c)
        return try settle(try flow.start(input, facts, env(runID, c)), c)
    }

    /// Ends the session's open post-login flow (one frame) because the client starts `next`: its
    /// supersede transition settled (effects applied, run ended), returning its terminal event.
    /// Nil when no flow is open; 1022 when the open flow cannot be superseded.
    func supersedeOpenFlow(by next: String, _ c: Commit) throws -> WireEvent? {
        guard let frame = c.session.state.stack.last else { return nil }
        guard c.session.state.stack.count == 1, let open = registry.flow(frame.flow), open.startableByClient else {
            throw IDVError(.flowInProgress)
        }
        let facts = try loadFacts(subject: try open.subject(frame.state), biometric: open.usesBiometricHistory, c)
        guard let t = try open.supersede(frame.state, next, facts, env(frame.runID, c)) else { throw IDVError(.flowInProgress) }
        guard case .finish = t.step else { throw IDVError(.internalError, "flow \(frame.flow) did not end when superseded") }
        let event = try settle(t, c)
        guard c.session.state.stack.isEmpty else { throw IDVError(.internalError, "flow \(frame.flow) left frames when superseded") }
        return event
    }

    /// Abandons every frame, top first: each flow's abandon effects, the run ended with the reason.
    package func abandonAll(_ reason: AbandonReason, _ c: Commit) throws {
        while let frame = c.session.state.stack.last {
            if let flow = registry.flow(frame.flow) {
                let facts = try loadFacts(subject: try? flow.subject(frame.state), biometric: false, c)
                for e in flow.abandon(frame.state, reason, facts, env(frame.runID, c)) { try apply(e, runID: frame.runID, c) }
            }
            c.session.state.stack.removeLast()
            let outcome = c.runOutcomes[frame.runID] ?? reason.outcome
            try store.endFlowRun(runID: frame.runID, at: c.now, outcome: outcome, errorCode: 0)
            c.outcomes.append((frame.flow, outcome))
        }
        c.session.state.challenge = nil
    }

}
