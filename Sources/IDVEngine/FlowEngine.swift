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
    /// Everything the engine reads and writes, in one typed store (``EngineStore``).
    public let store: any EngineStore
    /// What the engine and its flows read of the configuration (``FlowEnv/settings``).
    public let settings: EngineSettings
    public let registry: FlowRegistry
    /// Where committed flow outcomes are counted (IDVRuntime `Metrics`: `idvd_flow_outcomes_total`).
    public let metrics: any FlowOutcomeCounter
    /// Randomness, hashing and signature checks (libsodium in `idvd`: IDVCrypto `Sodium`).
    public let crypto: any EngineCrypto
    /// The engine's time (tests pass a ``ManualClock`` and advance it).
    public let clock: any Clock
    /// The abuse limits (sessions per client and device, failed authentications, back-off).
    public let limits: AbuseLimits
    /// Admission of analyses (cost, memory budget, one per run and per user) before a reader runs
    /// (IDVRuntime `AnalysisLimiter`, shared with the HTTP edge's analysis pool).
    public let admission: any AnalysisAdmission
    private let stripes: [NSLock]

    public init(store: any EngineStore, settings: EngineSettings, registry: FlowRegistry, metrics: any FlowOutcomeCounter,
                admission: any AnalysisAdmission, crypto: any EngineCrypto, clock: any Clock = SystemClock()) {
        self.store = store
        self.settings = settings
        self.registry = registry
        self.metrics = metrics
        self.admission = admission
        self.crypto = crypto
        self.clock = clock
        limits = AbuseLimits(settings: settings, store: store, crypto: crypto)
        stripes = (0..<64).map { _ in NSLock() }
    }

    /// The analysers and vault of the IDV flows, when registered (``FlowRegistry/idv(_:)``).
    var services: IDVServices? { registry.services }

    package func withSessionLock<T>(_ sessionID: String, _ body: () throws -> T) rethrows -> T {
        var h: UInt32 = 2166136261
        for b in sessionID.utf8 { h = (h ^ UInt32(b)) &* 16777619 }
        let l = stripes[Int(h % UInt32(stripes.count))]
        return try l.withLock(body)
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
                              createdAt: now, lastSeenAt: now, idleTimeout: settings.sessionIdleSeconds,
                              absoluteExpiresAt: now + settings.sessionAbsoluteSeconds)
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

    func usable(_ found: SessionRecord?) throws -> SessionRecord {
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
    ///
    /// Polling reads; it writes only when `last_seen_at` is older than ``touchInterval(idleTimeout:)``
    /// (a tenth of the session's idle timeout), so a client polling every second costs one write
    /// per interval, not one per poll (on PostgreSQL every write goes through the one cluster-wide
    /// writer). The session may therefore expire up to that interval before idle_timeout after the
    /// last poll; answers, uploads and flow starts move `last_seen_at` in their own write as before.
    public func current(session: SessionRecord) throws -> EngineOutput {
        var s = session
        let now = clock.now()
        if now - s.lastSeenAt >= Self.touchInterval(idleTimeout: s.idleTimeout) {
            try store.touchSession(sessionID: s.sessionID, at: now)
            s.lastSeenAt = max(s.lastSeenAt, now)
        }
        return EngineOutput(session: wire(s), challenge: s.state.challenge?.wire, event: nil)
    }

    /// Seconds between two `last_seen_at` writes of a polled session: a tenth of its idle timeout,
    /// at least 1.
    public static func touchInterval(idleTimeout: Int) -> Int { max(1, idleTimeout / 10) }

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
            let prepared = try flow.prepare(frame.state, answer, ch, settings)
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
                throw IDVError(.notFound, "No startable flow of that name; this server's: " + registry.clientStartableNames.joined(separator: ", "))
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
}
