import Foundation
import IDVCore

/// The result of an engine call: what goes into the envelope.
public struct EngineOutput: Sendable {
    public var session: WireSession
    public var challenge: WireChallenge?
    public var event: WireEvent?
}

/// Drives sessions through flows (see Flow.swift). Answers to one session are serialised in-process
/// (striped locks) and committed with a compare-and-set on the session version, so of concurrent
/// answers to one challenge exactly one wins; the others are refused with 1005 `replayedAnswer`.
public final class FlowEngine: Sendable {
    public let store: Store
    public let config: ServerConfig
    public let registry: FlowRegistry
    public let metrics: Metrics
    /// Randomness, hashing and signature checks (libsodium in `idvd`: IDVCrypto `Sodium`).
    public let crypto: any EngineCrypto
    private let stripes: [NSLock]
    /// The clock (Unix seconds); tests may not change it — expiry is tested with short config values.
    let clock: @Sendable () -> Int

    public init(store: Store, config: ServerConfig, registry: FlowRegistry, metrics: Metrics, crypto: any EngineCrypto) {
        self.store = store
        self.crypto = crypto
        self.config = config
        self.registry = registry
        self.metrics = metrics
        stripes = (0..<64).map { _ in NSLock() }
        clock = { Int(Date().timeIntervalSince1970) }
    }

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
        let d = DeviceRecord(deviceID: crypto.randomID(), publicKey: raw.base64EncodedString(), label: reg.label, createdAt: clock())
        try store.createDevice(d)
        return WireDevice(deviceID: d.deviceID)
    }

    // MARK: Sessions

    /// Starts a session (optionally bound to a registered device) and the authentication flow;
    /// returns the token (only here) and the first challenge, `getUser`.
    public func startSession(_ start: WireSessionStart, requestID: String) throws -> EngineOutput {
        let now = clock()
        if let did = start.deviceID {
            guard try store.device(did) != nil else { throw IDVError(.invalidArgument, "unknown device_id; register it with POST /v1/devices") }
        }
        let token = crypto.token()
        var s = SessionRecord(sessionID: crypto.randomID(), tokenHash: crypto.sha256Hex(token), deviceID: start.deviceID,
                              createdAt: now, lastSeenAt: now, idleTimeout: config.sessionIdleSeconds,
                              absoluteExpiresAt: now + config.sessionAbsoluteSeconds)
        let ctx = FlowContext(store: store, config: config, registry: registry, metrics: metrics, crypto: crypto, now: now, requestID: requestID, session: s)
        return try committed(ctx) {
            var state = SessionFlowState()
            let event = try run(.call(flow: AuthFlow.name, input: .emptyObject), ctx: ctx, state: &state)
            s = ctx.session
            s.state = state
            try store.createSession(s)
            return EngineOutput(session: wire(s, token: token), challenge: state.challenge, event: event)
        }
    }

    /// Looks a token up: 1004 when unknown or revoked, 1003 when expired.
    public func authenticate(_ token: String?) throws -> SessionRecord {
        guard let token, token.count <= 128 else { throw IDVError(.unauthenticated, "Missing bearer token") }
        guard let s = try store.session(tokenHash: crypto.sha256Hex(token)) else { throw IDVError(.unauthenticated, "Unknown session token") }
        if s.revokedAt != nil { throw IDVError(.unauthenticated, "The session was logged off") }
        if s.isExpired(at: clock()) { throw IDVError(.sessionExpired) }
        return s
    }

    /// The session's current state (challenge, if any) — resumes after a reconnect or restart.
    public func current(token: String?) throws -> EngineOutput {
        var s = try authenticate(token)
        let now = clock()
        try store.touchSession(sessionID: s.sessionID, at: now)
        s.lastSeenAt = max(s.lastSeenAt, now)
        return EngineOutput(session: wire(s), challenge: s.state.challenge, event: nil)
    }

    /// Answers the current challenge. Refusals (thrown ``IDVError``) change nothing:
    /// 1002 wrong challenge (name, id or mode not current), 1005 replayed (id already consumed),
    /// 1001 malformed payload, 1003/1004 session. `viaUpload` says which route carried it.
    public func answer(token: String?, _ answer: WireAnswer, viaUpload: Bool, requestID: String) throws -> EngineOutput {
        let probe = try authenticate(token)
        return try withSessionLock(probe.sessionID) {
            var s = try authenticate(token)   // fresh after the lock
            let now = clock()
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
            if let m = answer.challengeMode, m != ch.challengeMode {
                throw IDVError(.wrongChallenge, "The current challenge has challenge_mode \(ch.challengeMode), not \(m)")
            }
            guard var frame = s.state.stack.last, let flow = registry.flow(frame.flow) else {
                throw IDVError(.internalError, "The session's flow is not registered on this server")
            }
            let isUpload = flow.uploadChallenges.contains(ch.name)
            if isUpload != viaUpload {
                throw IDVError(.malformedRequest, isUpload ? "Answers to \(ch.name) go to POST /v1/session/upload"
                                                           : "Answers to \(ch.name) go to POST /v1/session/answer")
            }
            s.lastSeenAt = now
            let ctx = FlowContext(store: store, config: config, registry: registry, metrics: metrics, crypto: crypto, now: now, requestID: requestID, session: s)
            // Argon2id and image analysis outside the transaction (it holds the store's write lock).
            flow.prepare(ctx, frame: frame, challenge: ch, answer: answer)
            // The flow's writes (templates, consents, sealed media, audit, flow runs) and the
            // session CAS commit together: a refusal or a lost CAS rolls every one of them back.
            return try committed(ctx) {
                // Another process may have committed an answer since the session was read: with the
                // write lock held now, re-check before any flow code runs on a stale state.
                try ensureUnchanged(s, else: IDVError(.replayedAnswer, "Another answer to this challenge was accepted first"))
                let step = try flow.answer(ctx, frame: &frame, challenge: ch, answer: answer)
                var state = s.state
                state.stack[state.stack.count - 1] = frame
                let event = try run(step, ctx: ctx, state: &state)
                var updated = ctx.session
                updated.state = state
                guard try store.updateSession(updated, expectedVersion: s.version, consuming: ch.challengeID) else {
                    throw IDVError(.replayedAnswer, "Another answer to this challenge was accepted first")
                }
                updated.version = s.version + 1
                return EngineOutput(session: wire(updated), challenge: state.challenge, event: event)
            }
        }
    }

    /// `resetAuthState`: abandons every flow in progress. A session that is not logged in starts
    /// over at `getUser` (user cleared); a logged-in session stays logged in with no challenge and
    /// gets the `onAuthStateReset` event.
    public func reset(token: String?, requestID: String) throws -> EngineOutput {
        let probe = try authenticate(token)
        return try withSessionLock(probe.sessionID) {
            var s = try authenticate(token)
            let now = clock()
            s.lastSeenAt = now
            let ctx = FlowContext(store: store, config: config, registry: registry, metrics: metrics, crypto: crypto, now: now, requestID: requestID, session: s)
            return try committed(ctx) {
                try ensureUnchanged(s, else: IDVError(.wrongChallenge, "The session changed concurrently; retry"))
                var state = s.state
                try abandonAll(&state, ctx: ctx, outcome: "reset")
                var event: WireEvent?
                if !s.loggedIn {
                    ctx.setUser(nil)
                    event = try run(.call(flow: AuthFlow.name, input: .emptyObject), ctx: ctx, state: &state)
                } else {
                    event = WireEvent(name: WireName.onAuthStateReset, userID: s.userID)
                }
                var updated = ctx.session
                updated.state = state
                try ctx.audit("session.reset")
                guard try store.updateSession(updated, expectedVersion: s.version, consuming: nil) else {
                    throw IDVError(.wrongChallenge, "The session changed concurrently; retry")
                }
                updated.version = s.version + 1
                return EngineOutput(session: wire(updated), challenge: state.challenge, event: state.challenge == nil ? event : nil)
            }
        }
    }

    /// Log-off: revokes the session (the token stops working) and abandons any flow.
    public func logoff(token: String?, requestID: String) throws -> EngineOutput {
        let probe = try authenticate(token)
        return try withSessionLock(probe.sessionID) {
            var s = try authenticate(token)
            let now = clock()
            let ctx = FlowContext(store: store, config: config, registry: registry, metrics: metrics, crypto: crypto, now: now, requestID: requestID, session: s)
            return try committed(ctx) {
                try ensureUnchanged(s, else: IDVError(.wrongChallenge, "The session changed concurrently; retry"))
                var state = s.state
                try abandonAll(&state, ctx: ctx, outcome: "logged_off")
                s.state = state
                s.revokedAt = now
                s.lastSeenAt = now
                try ctx.audit("session.logoff")
                guard try store.updateSession(s, expectedVersion: s.version, consuming: nil) else {
                    throw IDVError(.wrongChallenge, "The session changed concurrently; retry")
                }
                return EngineOutput(session: wire(s), challenge: nil, event: WireEvent(name: WireName.onUserLoggedOff, userID: s.userID))
            }
        }
    }

    /// Starts a post-login flow (`POST /v1/flows/{name}`): 1004 when not logged in, 1007 for an
    /// unknown or non-startable flow, 1022 when a flow is already in progress.
    public func startFlow(token: String?, name: String, input: JSONValue, requestID: String) throws -> EngineOutput {
        let probe = try authenticate(token)
        return try withSessionLock(probe.sessionID) {
            var s = try authenticate(token)
            guard s.loggedIn else { throw IDVError(.unauthenticated, "Log in before starting a flow") }
            guard let flow = registry.flow(name), flow.startableByClient else { throw IDVError(.notFound, "No startable flow of that name") }
            guard s.state.stack.isEmpty else { throw IDVError(.flowInProgress) }
            let now = clock()
            s.lastSeenAt = now
            let ctx = FlowContext(store: store, config: config, registry: registry, metrics: metrics, crypto: crypto, now: now, requestID: requestID, session: s)
            // The run record, the flow's first writes and the session CAS commit together: a start
            // the flow refuses (e.g. a bad `reason`) leaves no flow run behind.
            return try committed(ctx) {
                try ensureUnchanged(s, else: IDVError(.flowInProgress, "The session changed concurrently; retry"))
                var state = s.state
                let event = try run(.call(flow: flow.name, input: input), ctx: ctx, state: &state)
                var updated = ctx.session
                updated.state = state
                guard try store.updateSession(updated, expectedVersion: s.version, consuming: nil) else {
                    throw IDVError(.flowInProgress, "The session changed concurrently; retry")
                }
                updated.version = s.version + 1
                return EngineOutput(session: wire(updated), challenge: state.challenge, event: event)
            }
        }
    }

    /// Runs `body` as one store transaction; after it committed, counts the flow outcomes it
    /// produced (a rollback counts nothing).
    private func committed<T>(_ ctx: FlowContext, _ body: () throws -> T) throws -> T {
        let result = try store.withTransaction(body)
        ctx.flushOutcomes()
        return result
    }

    /// Inside a store transaction: throws `error` when the stored session moved past the version
    /// `s` was read at (an answer committed by another process meanwhile).
    private func ensureUnchanged(_ s: SessionRecord, else error: IDVError) throws {
        guard try store.liveSessionVersion(sessionID: s.sessionID) == s.version else { throw error }
    }

    private struct SweepConflict: Error {}

    /// What one expiry sweep did.
    public struct PurgeReport: Codable, Sendable, Equatable {
        /// Session rows deleted (expired or revoked).
        public var sessions: Int
        /// Open flow runs closed (outcome `expired` or `revoked`).
        public var flowRunsClosed: Int
        /// Kept media rows past `idv.media_retention_seconds` deleted.
        public var mediaPurged: Int
        enum CodingKeys: String, CodingKey { case sessions, flowRunsClosed = "flow_runs_closed", mediaPurged = "media_purged" }
    }

    /// The expiry sweep (`idvd serve` every `session.sweep_seconds`, `idvd admin purge-expired`):
    /// every session that is revoked or past idle/absolute expiry has its open flow runs closed —
    /// outcome `expired` (or `revoked`), audited with the run's `idv_audit_transaction_id`, its
    /// sealed media dropped — and its row deleted, one transaction per session guarded by the
    /// session's version (a session answered meanwhile is left for the next sweep). Then kept media
    /// past their retention are deleted. Logs counts only.
    public func purgeExpired(batch: Int = 500) throws -> PurgeReport {
        let now = clock()
        var report = PurgeReport(sessions: 0, flowRunsClosed: 0, mediaPurged: 0)
        var seen = Set<String>()
        while true {
            let candidates = try store.purgeableSessions(now: now, limit: batch).filter { !seen.contains($0.sessionID) }
            if candidates.isEmpty { break }
            for s in candidates {
                seen.insert(s.sessionID)
                try withSessionLock(s.sessionID) {
                    let outcome = s.revokedAt != nil ? "revoked" : "expired"
                    let ctx = FlowContext(store: store, config: config, registry: registry, metrics: metrics, crypto: crypto, now: now,
                                          requestID: "sweep-" + crypto.randomID(bytes: 8), session: s)
                    let closed = s.state.stack.count
                    do {
                        try committed(ctx) {
                            var state = s.state
                            try abandonAll(&state, ctx: ctx, outcome: outcome)
                            if closed > 0 || s.revokedAt == nil { try ctx.audit("session.\(outcome)", ["flow_runs_closed": .integer(closed)]) }
                            guard try store.deleteSession(sessionID: s.sessionID, expectedVersion: s.version) else {
                                throw SweepConflict()
                            }
                        }
                        report.sessions += 1
                        report.flowRunsClosed += closed
                    } catch is SweepConflict {
                        // Answered or revoked meanwhile: left for the next sweep.
                    }
                }
            }
        }
        if let ws = store as? any WorkflowStore { report.mediaPurged = try ws.purgeExpiredMedia(now: now) }
        return report
    }

    func abandonAll(_ state: inout SessionFlowState, ctx: FlowContext, outcome: String) throws {
        while let frame = state.stack.popLast() {
            try registry.flow(frame.flow)?.abandon(ctx, frame: frame, outcome: outcome)
            try store.endFlowRun(runID: frame.runID, at: ctx.now, outcome: outcome, errorCode: 0)
            ctx.countOutcome(flow: frame.flow, outcome: outcome)
        }
        state.challenge = nil
    }

    /// Applies steps until a challenge is asked or the bottom flow finishes. Returns the event of a
    /// bottom-level finish.
    func run(_ first: FlowStep, ctx: FlowContext, state: inout SessionFlowState) throws -> WireEvent? {
        var step = first
        for _ in 0..<64 {
            switch step {
            case let .ask(spec):
                state.challenge = WireChallenge(name: spec.name, challengeID: crypto.randomID(), challengeMode: spec.mode,
                                                idvWorkflow: spec.workflow, attemptsLeft: spec.attemptsLeft,
                                                userID: spec.userID ?? ctx.session.userID, payload: spec.payload,
                                                error: spec.error, status: spec.status)
                return nil
            case let .call(name, input):
                guard let flow = registry.flow(name) else { throw IDVError(.internalError, "flow \(name) is not registered") }
                var frame = FlowFrame(flow: name, step: "start", runID: crypto.randomID())
                try store.startFlowRun(FlowRunRecord(runID: frame.runID, sessionID: ctx.session.sessionID, userID: ctx.session.userID,
                                                     flow: name, idvWorkflow: flow.workflow?.rawValue, startedAt: ctx.now))
                state.stack.append(frame)
                step = try flow.start(ctx, frame: &frame, input: input)
                state.stack[state.stack.count - 1] = frame
            case let .finish(result):
                guard let done = state.stack.popLast() else { throw IDVError(.internalError, "finish with no flow") }
                try store.endFlowRun(runID: done.runID, at: ctx.now, outcome: result.outcome, errorCode: result.errorCode)
                ctx.countOutcome(flow: done.flow, outcome: result.outcome)
                guard var parent = state.stack.last, let pflow = registry.flow(parent.flow) else {
                    state.challenge = nil
                    return result.event
                }
                step = try pflow.resume(ctx, frame: &parent, child: done.flow, result: result)
                state.stack[state.stack.count - 1] = parent
            }
        }
        throw IDVError(.internalError, "flow steps did not settle")
    }
}
