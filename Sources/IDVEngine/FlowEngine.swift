import Foundation
import IDVCore

/// The result of an engine call: what goes into the envelope.
public struct EngineOutput: Sendable {
    public var session: WireSession
    public var challenge: WireChallenge?
    public var event: WireEvent?
    /// The terminal event of a flow this request ended before the challenge or event above: a
    /// post-login flow superseded by ``FlowEngine/startFlow(token:name:input:requestID:)``.
    public var ended: WireEvent? = nil
}

/// Drives sessions through flows (Flow.swift): measures what an answer needs outside any
/// transaction, then reduces and applies the effects in one short write transaction that ends with
/// a compare-and-set on the session version, so of concurrent answers to one challenge exactly one
/// wins — across processes too; the others are refused with 1005 `replayedAnswer`. Answers to one
/// session are also serialised in-process (striped locks), so a loser does no needless work.
public final class FlowEngine: Sendable {
    public let store: any Store
    public let config: ServerConfig
    public let registry: FlowRegistry
    public let metrics: Metrics
    /// Randomness, hashing and signature checks (libsodium in `idvd`: IDVCrypto `Sodium`).
    public let crypto: any EngineCrypto
    /// The engine's time (tests pass a ``ManualClock`` and advance it).
    public let clock: any Clock
    /// The in-memory abuse limits (sessions per client and device, failed authentications, back-off).
    public let limits: AbuseLimits
    /// Admission of analyses (cost, memory budget, one per run and per user) and the analysis pool's
    /// slots, from ``ServerConfig/analysis`` (Analysis.swift); IDVHTTP's pool shares it.
    public let analysis: AnalysisLimiter
    private let stripes: [NSLock]

    public init(store: any Store, config: ServerConfig, registry: FlowRegistry, metrics: Metrics, crypto: any EngineCrypto,
                clock: any Clock = SystemClock()) {
        self.store = store
        self.config = config
        self.registry = registry
        self.metrics = metrics
        self.crypto = crypto
        self.clock = clock
        limits = AbuseLimits(config: config, store: store, crypto: crypto)
        analysis = AnalysisLimiter(settings: config.analysis)
        stripes = (0..<64).map { _ in NSLock() }
    }

    /// The analysers, vault and policy of the IDV flows, when registered (``FlowRegistry/idv(_:)``).
    var services: IDVServices? { registry.services }

    private func withSessionLock<T>(_ sessionID: String, _ body: () throws -> T) rethrows -> T {
        var h: UInt32 = 2166136261
        for b in sessionID.utf8 { h = (h ^ UInt32(b)) &* 16777619 }
        let l = stripes[Int(h % UInt32(stripes.count))]
        l.lock(); defer { l.unlock() }
        return try body()
    }

    func wire(_ s: SessionRecord, token: String? = nil) -> WireSession {
        WireSession(token: token, sessionID: s.sessionID, userID: s.userID, deviceID: s.deviceID, loggedIn: s.loggedIn,
                    idleExpiresAt: s.idleExpiresAt, absoluteExpiresAt: s.absoluteExpiresAt)
    }

    // MARK: Devices

    /// Registers a device key. Throws 1001 when the key is not a base64 32-byte Ed25519 key.
    public func registerDevice(_ reg: WireDeviceRegistration) throws -> WireDevice {
        guard let raw = Data(base64Encoded: reg.publicKey), raw.count == 32 else {
            throw IDVError(.malformedRequest, "public_key must be a base64 raw 32-byte Ed25519 public key")
        }
        if let l = reg.label, l.count > 64 { throw IDVError(.malformedRequest, "label is longer than 64 characters") }
        let d = DeviceRecord(deviceID: crypto.randomID(), publicKey: raw.base64EncodedString(), label: reg.label, createdAt: clock.now())
        try store.createDevice(d)
        return WireDevice(deviceID: d.deviceID)
    }

    // MARK: Sessions

    /// Starts a session (optionally bound to a registered device) and the authentication flow;
    /// returns the token (only here) and the first challenge, `getUser`. New sessions per device are
    /// limited (`limits.sessions_per_device`: ``ThrottledError`` 1110); per client address, the HTTP
    /// chain's throttle stage limits them (``AbuseLimits/admitSession(address:now:)``).
    public func startSession(_ start: WireSessionStart, requestID: String) throws -> EngineOutput {
        let now = clock.now()
        if let did = start.deviceID {
            guard try store.device(did) != nil else { throw IDVError(.deviceNotFound, "unknown device_id; register it with POST /v1/devices") }
            try limits.admitSession(deviceID: did, now: now)
        }
        let token = crypto.token()
        let s = SessionRecord(sessionID: crypto.randomID(), tokenHash: crypto.sha256Hex(token), deviceID: start.deviceID,
                              createdAt: now, lastSeenAt: now, idleTimeout: config.sessionIdleSeconds,
                              absoluteExpiresAt: now + config.sessionAbsoluteSeconds)
        return try committed(Commit(session: s, now: now, requestID: requestID)) { c in
            let event = try call(FlowName.auth, input: .emptyObject, c)
            try store.createSession(c.session)
            return EngineOutput(session: wire(c.session, token: token), challenge: c.session.state.challenge?.wire, event: event)
        }
    }

    /// Looks a token up: 1004 when unknown or revoked, 1003 when expired.
    /// The session is read (and its sealed state opened) here once per request: the HTTP auth
    /// stage calls this, and the engine's calls below take the record it returned.
    public func authenticate(_ token: String?) throws -> SessionRecord {
        guard let token, token.count <= 128 else { throw IDVError(.unauthenticated, "Missing bearer token") }
        return try usable(store.session(tokenHash: crypto.sha256Hex(token)))
    }

    private func usable(_ found: SessionRecord?) throws -> SessionRecord {
        guard let s = found else { throw IDVError(.unauthenticated, "Unknown session token") }
        if s.revokedAt != nil { throw IDVError(.unauthenticated, "The session was logged off") }
        if s.isExpired(at: clock.now()) { throw IDVError(.sessionExpired) }
        return s
    }

    /// The session as it stands once its lock is held: `probe` itself while the stored version is
    /// still `probe`'s (one cheap version read, no second decryption — the common case), else read
    /// and opened again (another request committed meanwhile) and checked as ``authenticate(_:)`` does.
    func fresh(_ probe: SessionRecord) throws -> SessionRecord {
        if try store.liveSessionVersion(sessionID: probe.sessionID) == probe.version { return try usable(probe) }
        return try usable(store.session(tokenHash: probe.tokenHash))
    }

    /// The session's current state (challenge, if any) — resumes after a reconnect or restart.
    public func current(token: String?) throws -> EngineOutput { try current(session: authenticate(token)) }

    /// ``current(token:)`` for a session already authenticated (``authenticate(_:)``).
    public func current(session: SessionRecord) throws -> EngineOutput {
        var s = session
        let now = clock.now()
        try store.touchSession(sessionID: s.sessionID, at: now)
        s.lastSeenAt = max(s.lastSeenAt, now)
        return EngineOutput(session: wire(s), challenge: s.state.challenge?.wire, event: nil)
    }

    /// Answers the current challenge. Refusals (thrown ``IDVError``) change nothing:
    /// 1002 wrong challenge (name, id or mode not current), 1005 replayed (id already consumed),
    /// 1001 malformed payload, 1003/1004 session. `viaUpload` says which route carried it: the
    /// upload challenges (``WireName/uploadChallenges``) go to `POST /v1/session/upload`, the rest
    /// to `POST /v1/session/answer`.
    public func answer(token: String?, _ answer: WireAnswer, viaUpload: Bool, requestID: String, client: String? = nil) throws -> EngineOutput {
        try self.answer(session: authenticate(token), answer, viaUpload: viaUpload, requestID: requestID, client: client)
    }

    /// ``answer(token:_:viaUpload:requestID:client:)`` for a session already authenticated (``authenticate(_:)``).
    /// `client`: the peer address (the abuse limits key on it with the session's device). An answer
    /// presenting a password or activation code is refused with ``ThrottledError`` 1111 — before
    /// anything is hashed or compared — while the client backs off for its user or has spent its
    /// failure budget (``AbuseLimits/checkCredential(_:userID:client:now:)``).
    public func answer(session probe: SessionRecord, _ answer: WireAnswer, viaUpload: Bool, requestID: String,
                       client: String? = nil) throws -> EngineOutput {
        try withSessionLock(probe.sessionID) {
            let s = try fresh(probe)
            guard let ch = s.state.challenge else {
                if try store.consumedChallengeSession(answer.challengeID) != nil { throw IDVError(.replayedAnswer) }
                throw IDVError(.wrongChallenge, "No challenge is pending on this session")
            }
            if answer.challengeID != ch.challengeID {
                if try store.consumedChallengeSession(answer.challengeID) != nil { throw IDVError(.replayedAnswer) }
                throw IDVError(.wrongChallenge, "The answer names challenge_id that is not the current challenge (\(ch.name))")
            }
            guard answer.challenge == ch.name else {
                throw IDVError(.wrongChallenge, "The current challenge is \(ch.name), not \(answer.challenge)")
            }
            if let m = answer.challengeMode, m != ch.mode {
                throw IDVError(.wrongChallenge, "The current challenge has challenge_mode \(ch.mode), not \(m)")
            }
            let isUpload = WireName.uploadChallenges.contains(ch.name)
            if isUpload != viaUpload {
                throw IDVError(.malformedRequest, isUpload ? "Answers to \(ch.name) go to POST /v1/session/upload"
                                                           : "Answers to \(ch.name) go to POST /v1/session/answer")
            }
            guard let frame = s.state.stack.last, let flow = registry.flow(frame.flow) else {
                throw IDVError(.internalError, "The session's flow is not registered on this server")
            }
            // The answer parsed once (uploads decoded once); a malformed one is refused here.
            let prepared = try flow.prepare(frame.state, answer, ch, config)
            let identity = ClientIdentity(address: client, deviceID: s.deviceID)
            if let (kind, uid) = prepared.credential { try limits.checkCredential(kind, userID: uid, client: identity, now: clock.now()) }
            // Measure outside any transaction; measure again if what it rested on changed before
            // the write transaction read the facts (a template replaced, a password changed).
            for _ in 0..<3 {
                let evidence = try gather(prepared.request, subject: prepared.subject, runID: frame.runID)
                do {
                    return try committed(Commit(session: s, now: clock.now(), requestID: requestID, client: identity)) { c in
                        // Another process may have committed an answer since the session was read.
                        try ensureUnchanged(s, else: IDVError(.replayedAnswer, "Another answer to this challenge was accepted first"))
                        c.session.lastSeenAt = c.now
                        let facts = try loadFacts(subject: prepared.subject, biometric: prepared.usesBiometricHistory, c)
                        guard evidence.basis.holds(in: facts), try captureReplayHolds(evidence, now: c.now) else { throw StaleEvidence() }
                        let t = try prepared.reduce(evidence, facts, env(frame.runID, c))
                        let event = try settle(t, c)
                        guard try store.updateSession(c.session, expectedVersion: s.version, consuming: ch.challengeID) else {
                            throw IDVError(.replayedAnswer, "Another answer to this challenge was accepted first")
                        }
                        c.session.version = s.version + 1
                        return EngineOutput(session: wire(c.session, token: c.issuedToken), challenge: c.session.state.challenge?.wire, event: event)
                    }
                } catch is StaleEvidence {
                    continue
                }
            }
            throw IDVError(.replayedAnswer, "The session's data kept changing while the answer was judged; send it again")
        }
    }

    /// `resetAuthState`: abandons every flow in progress. A session that is not logged in starts
    /// over at `getUser` (user cleared); a logged-in session stays logged in with no challenge and
    /// gets the `onAuthStateReset` event.
    public func reset(token: String?, requestID: String) throws -> EngineOutput {
        try reset(session: authenticate(token), requestID: requestID)
    }

    /// ``reset(token:requestID:)`` for a session already authenticated (``authenticate(_:)``).
    public func reset(session probe: SessionRecord, requestID: String) throws -> EngineOutput {
        try withSessionLock(probe.sessionID) {
            let s = try fresh(probe)
            return try committed(Commit(session: s, now: clock.now(), requestID: requestID)) { c in
                try ensureUnchanged(s, else: IDVError(.wrongChallenge, "The session changed concurrently; retry"))
                c.session.lastSeenAt = c.now
                try abandonAll(.reset, c)
                var event: WireEvent?
                if !s.loggedIn {
                    c.session.userID = nil
                    event = try call(FlowName.auth, input: .emptyObject, c)
                } else {
                    event = WireEvent(name: WireName.onAuthStateReset, userID: s.userID)
                }
                // A session that never identified a user leaves no audit row of its own (docs/LIMITS.md).
                if s.userID != nil || s.loggedIn {
                    try apply(.audit(AuditAction("session.reset"), userID: nil, details: [:]), runID: nil, c)
                }
                guard try store.updateSession(c.session, expectedVersion: s.version, consuming: nil) else {
                    throw IDVError(.wrongChallenge, "The session changed concurrently; retry")
                }
                c.session.version = s.version + 1
                let challenge = c.session.state.challenge?.wire
                return EngineOutput(session: wire(c.session), challenge: challenge, event: challenge == nil ? event : nil)
            }
        }
    }

    /// Log-off: revokes the session (the token stops working) and abandons any flow.
    public func logoff(token: String?, requestID: String) throws -> EngineOutput {
        try logoff(session: authenticate(token), requestID: requestID)
    }

    /// ``logoff(token:requestID:)`` for a session already authenticated (``authenticate(_:)``).
    public func logoff(session probe: SessionRecord, requestID: String) throws -> EngineOutput {
        try withSessionLock(probe.sessionID) {
            let s = try fresh(probe)
            return try committed(Commit(session: s, now: clock.now(), requestID: requestID)) { c in
                try ensureUnchanged(s, else: IDVError(.wrongChallenge, "The session changed concurrently; retry"))
                try abandonAll(.loggedOff, c)
                c.session.revokedAt = c.now
                c.session.lastSeenAt = c.now
                if s.userID != nil || s.loggedIn {
                    try apply(.audit(AuditAction("session.logoff"), userID: nil, details: [:]), runID: nil, c)
                }
                guard try store.updateSession(c.session, expectedVersion: s.version, consuming: nil) else {
                    throw IDVError(.wrongChallenge, "The session changed concurrently; retry")
                }
                return EngineOutput(session: wire(c.session), challenge: nil, event: WireEvent(name: WireName.onUserLoggedOff, userID: s.userID))
            }
        }
    }

    /// Starts a post-login flow (`POST /v1/flows/{name}`): 1004 when not logged in, 1007 for an
    /// unknown or non-startable flow. A post-login flow still waiting (the app left it, seed 000
    /// §1.5/§1.6) is ended first, with its terminal event in ``EngineOutput/ended`` (240, audited;
    /// its pending challenge consumed), in the same transaction as the new start; a flow that
    /// cannot be superseded (``Flow/supersede(_:by:facts:env:)`` nil) is refused with 1022.
    public func startFlow(token: String?, name: String, input: JSONValue, requestID: String, client: String? = nil) throws -> EngineOutput {
        try startFlow(session: authenticate(token), name: name, input: input, requestID: requestID, client: client)
    }

    /// ``startFlow(token:name:input:requestID:client:)`` for a session already authenticated (``authenticate(_:)``).
    public func startFlow(session probe: SessionRecord, name: String, input: JSONValue, requestID: String,
                          client: String? = nil) throws -> EngineOutput {
        try withSessionLock(probe.sessionID) {
            let s = try fresh(probe)
            guard s.loggedIn else { throw IDVError(.unauthenticated, "Log in before starting a flow") }
            guard let flow = registry.flow(name), flow.startableByClient else {
                if registry.unavailable.contains(name) {
                    throw IDVError(.workflowUnavailable, "This server cannot run that flow now (an analyser is missing; see its log)")
                }
                throw IDVError(.notFound, "No startable flow of that name")
            }
            if let open = s.state.stack.last {
                guard s.state.stack.count == 1, let f = registry.flow(open.flow), f.startableByClient else { throw IDVError(.flowInProgress) }
            }
            // The run record, the flow's first effects and the session CAS commit together: a start
            // the flow refuses (e.g. a bad `reason`) leaves no flow run behind — and a superseded
            // flow open.
            return try committed(Commit(session: s, now: clock.now(), requestID: requestID,
                                        client: ClientIdentity(address: client, deviceID: s.deviceID))) { c in
                try ensureUnchanged(s, else: IDVError(.flowInProgress, "The session changed concurrently; retry"))
                c.session.lastSeenAt = c.now
                let ended = try supersedeOpenFlow(by: flow.name, c)
                let event = try call(flow.name, input: input, c)
                guard try store.updateSession(c.session, expectedVersion: s.version, consuming: ended == nil ? nil : s.state.challenge?.challengeID) else {
                    throw IDVError(.flowInProgress, "The session changed concurrently; retry")
                }
                c.session.version = s.version + 1
                return EngineOutput(session: wire(c.session), challenge: c.session.state.challenge?.wire, event: event, ended: ended)
            }
        }
    }

    // MARK: The transaction

    /// One request's write transaction: the session being changed, its time and id, and the flow
    /// outcomes to count once it commits.
    final class Commit {
        var session: SessionRecord
        let now: Int
        let requestID: String
        var outcomes: [(flow: String, outcome: FlowOutcome)] = []
        /// Who sent the request (the abuse limits' key).
        let client: ClientIdentity
        /// Credentials judged in this transaction (failed: true), counted by the limits once it commits.
        var credentials: [(failed: Bool, kind: CredentialKind, userID: String)] = []
        /// Refusals the flows answered themselves, counted by the limits once the transaction commits.
        var refusals: [AbuseLimit] = []
        /// The session's new bearer token when this commit rotated it (at login), sent once in the answer.
        var issuedToken: String?
        init(session: SessionRecord, now: Int, requestID: String, client: ClientIdentity? = nil) {
            self.session = session
            self.now = now
            self.requestID = requestID
            self.client = client ?? ClientIdentity(address: nil, deviceID: session.deviceID)
        }
    }

    /// Evidence measured against facts that changed before the transaction read them.
    private struct StaleEvidence: Error {}

    /// Runs `body` as one store transaction; after it committed, counts the flow outcomes it
    /// produced (a rollback counts nothing).
    private func committed<T>(_ c: Commit, _ body: (Commit) throws -> T) throws -> T {
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
    private func ensureUnchanged(_ s: SessionRecord, else error: IDVError) throws {
        guard try store.liveSessionVersion(sessionID: s.sessionID) == s.version else { throw error }
    }

    func env(_ runID: String, _ c: Commit) -> FlowEnv {
        FlowEnv(config: config, activationIDV: registry.activationIDV, crypto: crypto, runID: runID, requestID: c.requestID)
    }

    func sessionFacts(_ s: SessionRecord) -> SessionFacts {
        SessionFacts(sessionID: s.sessionID, userID: s.userID, deviceID: s.deviceID, loggedIn: s.loggedIn, absoluteExpiresAt: s.absoluteExpiresAt)
    }

    /// The facts of `subject` and the session, read inside the transaction.
    func loadFacts(subject: String?, biometric: Bool, _ c: Commit) throws -> Facts {
        var f = Facts(now: c.now, session: sessionFacts(c.session))
        f.limits = config.limits
        if let did = c.session.deviceID { f.device = try store.device(did) }
        guard let uid = subject else { return f }
        f.client = try limits.facts(userID: uid, client: c.client, now: c.now)
        f.user = try store.user(uid)
        if f.user?.state == .pendingActivation { f.activationCode = try store.activationCode(userID: uid) }
        if let ws = store as? any WorkflowStore {
            f.template = try ws.biometricTemplate(userID: uid).map(templateFacts)
            if biometric, let policy = services?.policy {
                var failures = 0
                for o in try ws.flowOutcomes(userID: uid, flow: FlowName.serverBiometric, since: c.now - policy.biometricLockoutSeconds) {
                    if o == .matched { break }
                    if o == .notMatched || o == .livenessFailed { failures += 1 }
                }
                f.biometricFailures = failures
            }
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
    private func push(_ name: String, input: JSONValue, _ c: Commit) throws -> (AnyFlow, String)? {
        guard let flow = registry.flow(name) else { return nil }
        let runID = crypto.randomID()
        try store.startFlowRun(FlowRunRecord(runID: runID, sessionID: c.session.sessionID, userID: c.session.userID,
                                             flow: name, idvWorkflow: flow.workflow?.rawValue, startedAt: c.now))
        c.session.state.stack.append(FlowFrame(flow: name, runID: runID, state: .null))
        return (flow, runID)
    }

    /// Starts flow `name` on an empty stack (a session's auth flow, a post-login flow).
    private func call(_ name: String, input: JSONValue, _ c: Commit) throws -> WireEvent? {
        guard let (flow, runID) = try push(name, input: input, c) else { throw IDVError(.internalError, "flow \(name) is not registered") }
        let facts = try loadFacts(subject: flow.startSubject(input, sessionFacts(c.session)), biometric: flow.usesBiometricHistory, c)
        return try settle(try flow.start(input, facts, env(runID, c)), c)
    }

    /// Ends the session's open post-login flow (one frame) because the client starts `next`: its
    /// supersede transition settled (effects applied, run ended), returning its terminal event.
    /// Nil when no flow is open; 1022 when the open flow cannot be superseded.
    private func supersedeOpenFlow(by next: String, _ c: Commit) throws -> WireEvent? {
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
    func abandonAll(_ reason: AbandonReason, _ c: Commit) throws {
        while let frame = c.session.state.stack.last {
            if let flow = registry.flow(frame.flow) {
                let facts = try loadFacts(subject: try? flow.subject(frame.state), biometric: false, c)
                for e in flow.abandon(frame.state, reason, facts, env(frame.runID, c)) { try apply(e, runID: frame.runID, c) }
            }
            c.session.state.stack.removeLast()
            try store.endFlowRun(runID: frame.runID, at: c.now, outcome: reason.outcome, errorCode: 0)
            c.outcomes.append((frame.flow, reason.outcome))
        }
        c.session.state.challenge = nil
    }

    // MARK: Effects

    private func workflowStore() throws -> any WorkflowStore {
        guard let ws = store as? any WorkflowStore else { throw IDVError(.internalError, "the store does not support IDV workflows") }
        return ws
    }

    private func vault() throws -> any Vault {
        guard let v = services?.vault else { throw IDVError(.internalError, "no vault: the IDV flows are not registered") }
        return v
    }

    /// Applies one effect inside the transaction (media effects on run `runID`).
    func apply(_ effect: Effect, runID: String?, _ c: Commit) throws {
        switch effect {
        case let .audit(action, userID, details):
            var d = details
            d["request_id"] = .string(c.requestID)
            // The run it belongs to: the relying-party read API lists a verification's audit records by it.
            if let runID, d["run_id"] == nil { d["run_id"] = .string(runID) }
            try store.appendAudit(action: action.rawValue, userID: userID ?? c.session.userID, sessionID: c.session.sessionID,
                                  details: .object(d), at: c.now)
        case let .setSessionUser(uid):
            c.session.userID = uid
        case let .logIn(uid):
            c.session.userID = uid
            c.session.loggedIn = true
            // A new token at login (session fixation, OWASP ASVS 3.2.1): the token the session had
            // before the password was checked stops working; the new one goes out once, in this answer.
            let token = crypto.token()
            c.session.tokenHash = crypto.sha256Hex(token)
            c.issuedToken = token
            if let did = c.session.deviceID, var d = try store.device(did) {
                if d.userID == nil { d.userID = uid }
                d.lastUsedAt = c.now
                try store.saveDevice(d)
            }
            try apply(.audit(AuditAction("session.login"), userID: uid, details: ["device_id": c.session.deviceID.map { .string($0) } ?? .null]),
                      runID: runID, c)
        case let .saveUser(u): try store.saveUser(u)
        case let .saveActivationCode(code): try store.saveActivationCode(code)
        case let .saveDevice(d): try store.saveDevice(d)
        case let .sealMedia(id, kind, bytes):
            guard let runID else { throw IDVError(.internalError, "media outside a flow run") }
            let box = try vault().seal(bytes, associatedData: VaultBinding.media(runID: runID, kind: kind.rawValue))
            try workflowStore().saveMedia(MediaRecord(mediaID: id, runID: runID, kind: kind.rawValue, sealed: box, createdAt: c.now))
        case let .releaseMedia(keepUntil):
            guard let runID else { return }
            try workflowStore().releaseMedia(runID: runID, keepUntil: keepUntil)
        case let .saveTemplate(uid, mediaID, model, consentID):
            guard let runID, let m = try workflowStore().media(mediaID), m.runID == runID else {
                throw IDVError(.internalError, "no face descriptor kept for enrolment")
            }
            // The analyser's template bytes as kept (version 2: fused from the capture's best frames).
            let bytes = try vault().open(m.sealed, associatedData: VaultBinding.media(runID: runID, kind: MediaKind.embedding.rawValue))
            guard !bytes.isEmpty else { throw IDVError(.internalError, "no face descriptor kept for enrolment") }
            try workflowStore().saveBiometricTemplate(BiometricTemplateRecord(userID: uid, sealed: try vault().sealTemplate(bytes: bytes, userID: uid),
                                                                              model: model, consentID: consentID, createdAt: c.now))
        case let .deleteTemplate(uid):
            try workflowStore().deleteBiometricTemplate(userID: uid)
        case let .recordConsent(consent):
            try workflowStore().recordConsent(consent)
        case let .saveDocumentScan(record, report):
            var r = record
            r.sealedReport = try vault().seal(Array(report), associatedData: VaultBinding.scan(scanID: record.scanID))
            try workflowStore().saveDocumentScan(r)
        case let .countOutcome(flow, outcome):
            c.outcomes.append((flow, outcome))
        case let .openReview(rc):
            guard let rp = store as? any RelyingPartyStore else { throw IDVError(.internalError, "the store keeps no review cases") }
            try rp.createReviewCase(rc)
        case let .resolveReview(r):
            guard let rp = store as? any RelyingPartyStore else { throw IDVError(.internalError, "the store keeps no review cases") }
            guard try rp.decideReviewCase(r.caseID, decision: r.decision, reason: r.reason, reviewer: r.reviewer, at: r.decidedAt,
                                          runOutcome: r.decision.outcome) else {
                throw IDVError(.reviewAlreadyDecided)
            }
            let keep = config.workflow.mediaRetentionSeconds > 0 ? r.decidedAt + config.workflow.mediaRetentionSeconds : nil
            try workflowStore().releaseMedia(runID: r.runID, keepUntil: keep)
            c.outcomes.append((r.flow, r.decision.outcome))
            // The relying party hears the decision (docs/WEBHOOKS.md `review.resolved`), in this
            // transaction: ids and codes only, never the reviewer's free-text reason.
            try enqueue(.reviewResolved, userID: r.userID, data: WebhookEventData(
                flow: r.flow, runID: r.runID, outcome: r.decision.outcome, reviewID: r.caseID, decision: r.decision.rawValue),
                runID: r.runID, now: c.now)
        case let .publish(type, userID, data):
            try enqueue(type, userID: userID ?? c.session.userID, data: data, runID: runID, now: c.now)
        case let .credentialFailed(kind, uid):
            c.credentials.append((true, kind, uid))
        case let .credentialSucceeded(kind, uid):
            c.credentials.append((false, kind, uid))
        case let .limitRefused(limit):
            c.refusals.append(limit)
        case let .recordCaptureDigests(digests, expiresAt):
            try recordCaptureDigests(digests, now: c.now, expiresAt: expiresAt)
        }
    }

    // MARK: Evidence (outside any transaction)

    static let retryableUploadErrors: Set<IDVErrorCode> = [.invalidImage, .imageTooLarge, .noDocumentFound, .documentGlare, .noFaceFound]

    /// Measures what `request` asks for: reads, decrypts and analyses without the write lock.
    func gather(_ request: EvidenceRequest, subject: String?, runID: String) throws -> Evidence {
        var e = Evidence()
        switch request {
        case .none:
            break
        case let .document(pages, chip):
            guard let reader = services?.documents else { throw IDVError(.workflowUnavailable, "this server has no document reader") }
            var verifier: (any ChipVerifying)?
            if chip != nil {
                guard let v = services?.chips else { throw IDVError(.workflowUnavailable, "this server does not verify chip data") }
                verifier = v
            }
            // Costed from the pages' headers and admitted before any pixel is decoded (1100/1101/1102).
            let admitted = try analysis.admit(cost: services?.costing?.cost(pages: pages) ?? .zero, run: runID, user: subject)
            defer { analysis.release(admitted) }
            do {
                let (doc, ms) = try Self.timed { () throws -> DocumentVerification in
                    var doc = try reader.read(pages: pages)
                    // The chip is verified only with a readable page (its MRZ is DG1's comparison); a
                    // chip whose EF.SOD is unusable refuses the answer (1050, nothing stored).
                    if let chip, let verifier {
                        let trust = try (store as? any TrustMaterialStore)?.trustMaterials() ?? []
                        doc.chip = try verifier.verify(chip, printedMRZ: doc.mrzLines, trust: trust, now: clock.now())
                        // An authentic chip's face against the page's printed one (a substituted photo).
                        if let comparer = services?.portraits, let c = doc.chip, services?.policy.chipAuthentic(c) ?? c.authentic,
                           let printed = doc.portraitJPEG, let face = doc.chip?.portraitJPEG {
                            doc.chipPortraitComparison = try? comparer.compare(printed: printed, chip: face)
                        }
                    }
                    return doc
                }
                e.document = .success(Timed(doc, milliseconds: ms))
            } catch let err as IDVError where IDVErrorCode(rawValue: err.longErrorCode).map(Self.retryableUploadErrors.contains) ?? false {
                e.document = .failure(err)
            }
        case let .selfie(frames, fps, referenceRequest, challenge, nameMedia, presence):
            guard let analyser = services?.selfies else { throw IDVError(.workflowUnavailable, "this server has no selfie analyser") }
            if let id = nameMedia, let m = try workflowStore().media(id), m.runID == runID {
                e.displayName = String(decoding: try vault().open(m.sealed, associatedData: VaultBinding.media(runID: runID, kind: MediaKind.name.rawValue)),
                                       as: UTF8.self)
            }
            guard let reference = try resolve(referenceRequest, subject: subject, runID: runID, into: &e) else {
                e.referenceMissing = true
                return e
            }
            e.reference = reference
            // Costed from the frames' headers and admitted before any pixel is decoded (1100/1101/1102).
            let admitted = try analysis.admit(cost: services?.costing?.cost(frames: frames) ?? .zero, run: runID, user: subject)
            defer { analysis.release(admitted) }
            do {
                let (v, ms) = try Self.timed {
                    try analyser.analyze(frames: frames, framesPerSecond: fps, against: reference, challenge: challenge,
                                         illumination: presence.illumination)
                }
                e.selfie = .success(Timed(v, milliseconds: ms))
                (e.captureDigests, e.replayedFrames) = try captureReplay(frames)
            } catch let err as IDVError where IDVErrorCode(rawValue: err.longErrorCode).map(Self.retryableUploadErrors.contains) ?? false {
                e.selfie = .failure(err)
            }
        case let .passwordCheck(password):
            let hash = try subject.flatMap { try store.user($0) }?.passwordHash
            e.basis.dependsOnPassword = true
            e.basis.passwordHash = hash
            e.passwordMatches = hash.map { crypto.verifyPassword(password, hash: $0) } ?? false
        case let .passwordHash(password):
            e.passwordHash = try crypto.hashPassword(password, parameters: config.argon2)
        }
        return e
    }

    /// The reference a selfie is compared with; nil when a template-only reference has no template.
    private func resolve(_ r: ReferenceRequest, subject: String?, runID: String, into e: inout Evidence) throws -> MatchReference? {
        func portrait(_ mediaID: String) throws -> MatchReference {
            guard let m = try workflowStore().media(mediaID), m.runID == runID else {
                throw IDVError(.internalError, "no confirmed document portrait to match")
            }
            return .portrait(Data(try vault().open(m.sealed, associatedData: VaultBinding.media(runID: runID, kind: MediaKind.portrait.rawValue))))
        }
        switch r {
        case .none:
            return MatchReference.none
        case let .portrait(mediaID):
            return try portrait(mediaID)
        case let .template(orPortrait):
            e.basis.dependsOnTemplate = true
            if let uid = subject, let t = try workflowStore().biometricTemplate(userID: uid) {
                e.basis.templateDigest = templateFacts(t).digest
                return .template(Data(try vault().openTemplateBytes(t.sealed, userID: uid)))
            }
            return try orPortrait.map(portrait)
        }
    }

    /// `body`'s value and its wall time in milliseconds.
    static func timed<T>(_ body: () throws -> T) throws -> (T, Int) {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let v = try body()
        return (v, Int((DispatchTime.now().uptimeNanoseconds - t0) / 1_000_000))
    }

    // MARK: Expiry sweep

    private struct SweepConflict: Error {}

    /// What one expiry sweep did.
    public struct PurgeReport: Codable, Sendable, Equatable {
        /// Session rows deleted (expired or revoked).
        public var sessions: Int
        /// Open flow runs closed (outcome `expired` or `revoked`).
        public var flowRunsClosed: Int
        /// Kept media rows past `idv.media_retention_seconds` deleted.
        public var mediaPurged: Int
        /// Of ``sessions``, those that never identified a user: deleted with their flow runs, no
        /// audit record each — one `session.anonymous_expired` record counts them per sweep.
        public var anonymousSessions: Int = 0
        /// Registered devices never bound to a user and unused for `limits.unbound_device_ttl_seconds`, deleted.
        public var unboundDevices: Int = 0
        /// Credential-limit counters (``LimitCounterRecord``) idle long enough to be forgotten, deleted.
        public var limitCounters: Int = 0
        /// Digests of selfie frames past `idv.capture_replay_seconds`, deleted.
        public var captureDigests: Int = 0
        enum CodingKeys: String, CodingKey {
            case sessions, flowRunsClosed = "flow_runs_closed", mediaPurged = "media_purged", anonymousSessions = "anonymous_sessions"
            case unboundDevices = "unbound_devices", limitCounters = "limit_counters", captureDigests = "capture_digests"
        }
    }

    /// The expiry sweep (`idvd serve` every `session.sweep_seconds`, `idvd admin purge-expired`):
    /// every session that is revoked or past idle/absolute expiry has its open flow runs closed —
    /// outcome `expired` (or `revoked`), audited with the run's `idv_audit_transaction_id`, its
    /// sealed media dropped — and its row deleted, one transaction per session guarded by the
    /// session's version (a session answered meanwhile is left for the next sweep). A session that
    /// never identified a user (no user, not logged in) leaves nothing behind: its row and its
    /// flow runs are deleted with no audit record of its own; one `session.anonymous_expired`
    /// record per sweep counts them (`count`), so anonymous traffic adds at most one audit row per
    /// sweep and the hash chain stays whole. Then registered devices never bound to a user and
    /// unused for `limits.unbound_device_ttl_seconds` are deleted (counted, not audited: such a
    /// device never belonged to anyone), and kept media past their retention. Logs counts only.
    public func purgeExpired(batch: Int = 500) throws -> PurgeReport {
        let now = clock.now()
        var report = PurgeReport(sessions: 0, flowRunsClosed: 0, mediaPurged: 0)
        var seen = Set<String>()
        while true {
            let candidates = try store.purgeableSessions(now: now, limit: batch).filter { !seen.contains($0.sessionID) }
            if candidates.isEmpty { break }
            for s in candidates {
                seen.insert(s.sessionID)
                try withSessionLock(s.sessionID) {
                    let reason: AbandonReason = s.revokedAt != nil ? .revoked : .expired
                    let closed = s.state.stack.count
                    let anonymous = s.userID == nil && !s.loggedIn
                    do {
                        try committed(Commit(session: s, now: now, requestID: "sweep-" + crypto.randomID(bytes: 8))) { c in
                            try abandonAll(reason, c)
                            if anonymous {
                                try store.deleteAnonymousFlowRuns(sessionID: s.sessionID)
                            } else if closed > 0 || s.revokedAt == nil {
                                try apply(.audit(AuditAction("session.\(reason.rawValue)"), userID: nil, details: ["flow_runs_closed": .integer(closed)]),
                                          runID: nil, c)
                            }
                            guard try store.deleteSession(sessionID: s.sessionID, expectedVersion: s.version) else { throw SweepConflict() }
                        }
                        report.sessions += 1
                        if anonymous { report.anonymousSessions += 1 } else { report.flowRunsClosed += closed }
                    } catch is SweepConflict {
                        // Answered or revoked meanwhile: left for the next sweep.
                    }
                }
            }
        }
        if report.anonymousSessions > 0 {
            try store.appendAudit(action: "session.anonymous_expired", userID: nil, sessionID: nil,
                                  details: ["count": .integer(report.anonymousSessions)], at: now)
            metrics.flowOutcome(flow: "session", outcome: "anonymous_expired", count: report.anonymousSessions)
        }
        if config.limits.unboundDeviceTTLSeconds > 0 {
            // After the sessions: a device's last session row is gone once that session expired.
            let cutoff = now - config.limits.unboundDeviceTTLSeconds
            while true {
                let n = try store.deleteUnboundDevices(unusedSince: cutoff, limit: batch)
                report.unboundDevices += n
                if n < batch { break }
            }
        }
        // Credential-limit counters idle past the budget's window and a pair's memory (docs/LIMITS.md).
        let idleCutoff = now - limits.counterIdleSeconds
        while true {
            let n = try store.deleteIdleLimitCounters(updatedBefore: idleCutoff, now: now, limit: batch)
            report.limitCounters += n
            if n < batch { break }
        }
        if let ws = store as? any WorkflowStore { report.mediaPurged = try ws.purgeExpiredMedia(now: now) }
        report.captureDigests = try purgeCaptureDigests(now: now)
        return report
    }
}
