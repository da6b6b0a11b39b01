import Foundation
import IDVCore

// The challenge machinery: a registry of flow handlers over persisted flow state.
//
// A session holds a stack of ``FlowFrame``s and the one challenge currently asked. Answering it
// runs the top flow's ``Flow/answer(_:frame:challenge:answer:)``, which returns a ``FlowStep``:
// ask the next challenge, call a sub-flow (pushed on the stack; its result goes to the caller's
// ``Flow/resume(_:frame:child:result:)``), or finish. The engine (``FlowEngine``) assigns
// challenge ids, refuses answers to anything but the current challenge, persists the state with a
// compare-and-set, and records flow runs, outcomes and audit entries. docs/PROTOCOL.md §Flows.

/// A challenge to ask, before the engine gives it its `challenge_id`.
public struct ChallengeSpec: Sendable, Equatable {
    public var name: String
    public var mode: Int
    public var workflow: Int?
    /// Attempts left; -1 for a challenge without a limit.
    public var attemptsLeft: Int
    public var userID: String?
    public var payload: JSONValue
    /// Verdict on the previous answer when asking again (not a refusal).
    public var error: IDVError?
    public var status: RequestStatus?

    public init(name: String, mode: Int = 0, workflow: Int? = nil, attemptsLeft: Int = -1, userID: String? = nil,
                payload: JSONValue = .emptyObject, error: IDVError? = nil, status: RequestStatus? = nil) {
        self.name = name
        self.mode = mode
        self.workflow = workflow
        self.attemptsLeft = attemptsLeft
        self.userID = userID
        self.payload = payload
        self.error = error
        self.status = status
    }
}

/// How a flow ended.
public struct FlowResult: Sendable, Equatable {
    /// Outcome label for metrics and the flow-run record (`completed`, `cancelled`, `logged_in`,
    /// `attempts_exhausted`, …).
    public var outcome: String
    /// The terminal event sent to the client when this flow was the bottom of the stack.
    public var event: WireEvent?
    /// The `long_error_code` the outcome carries (0 on success; 146/240 on cancel).
    public var errorCode: Int
    /// Data for the calling flow (e.g. the IDV sub-flow's verdict).
    public var data: JSONValue

    public init(outcome: String, event: WireEvent? = nil, errorCode: Int = 0, data: JSONValue = .emptyObject) {
        self.outcome = outcome
        self.event = event
        self.errorCode = errorCode
        self.data = data
    }
}

/// What a flow does next.
public enum FlowStep: Sendable {
    /// Ask this challenge (the engine assigns a fresh `challenge_id`).
    case ask(ChallengeSpec)
    /// Push the named sub-flow with this input; its result comes back to the caller's `resume`.
    case call(flow: String, input: JSONValue)
    /// End this flow. With a caller below, the caller resumes; at the bottom, `result.event` goes
    /// to the client and the session keeps no challenge.
    case finish(FlowResult)
}

/// A flow handler: one server-side state machine (the core authentication flow here; the IDV
/// workflows — activation with IDV, KYC, document scan, biometric authentication, opt-in/out — are
/// more conforming types registered in the same ``FlowRegistry``).
///
/// Rules for implementations:
/// - Keep ALL state in `frame` (`step` and `data`); the handler itself is stateless and shared.
/// - Validate an answer completely before the first write through the context; throw an
///   ``IDVError`` (e.g. `malformedRequest`) to refuse it — the engine then commits nothing.
/// - Never log answer payloads; audit details carry ids and codes only.
public protocol Flow: Sendable {
    /// Registry name, e.g. `auth`, `idv.activation`, `idv.postlogin.kyc`. Post-login flows are
    /// started with `POST /v1/flows/{name}`.
    var name: String { get }
    /// True for post-login flows a logged-in client may start with `POST /v1/flows/{name}`.
    var startableByClient: Bool { get }
    /// The IDV workflow it implements, if any (recorded with the flow run).
    var workflow: IDVWorkflow? { get }
    /// Names of this flow's challenges whose answers carry images and therefore arrive on the
    /// upload route `POST /v1/session/upload` (megabyte limit) instead of `/v1/session/answer`.
    var uploadChallenges: Set<String> { get }

    /// Starts the flow with `input` (the caller's `.call` input or the client's start payload).
    func start(_ ctx: FlowContext, frame: inout FlowFrame, input: JSONValue) throws -> FlowStep
    /// Runs BEFORE the engine opens the answer's store transaction (which holds the store's write
    /// lock): do the expensive pure work the answer needs — Argon2id, image analysis — through
    /// ``FlowContext/precomputed(_:_:)`` so `answer` finds it done instead of computing it under
    /// the lock. Reads only; never write here. Default: nothing.
    func prepare(_ ctx: FlowContext, frame: FlowFrame, challenge: WireChallenge, answer: WireAnswer)
    /// Handles an answer to `challenge` (already checked to be the current one).
    func answer(_ ctx: FlowContext, frame: inout FlowFrame, challenge: WireChallenge, answer: WireAnswer) throws -> FlowStep
    /// Continues after the sub-flow `child` finished with `result`.
    func resume(_ ctx: FlowContext, frame: inout FlowFrame, child: String, result: FlowResult) throws -> FlowStep
    /// Called when `resetAuthState`, log-off or expiry abandons the flow (cleanup, audit). Default: nothing.
    func abandon(_ ctx: FlowContext, frame: FlowFrame)
    /// Called by the engine when the flow is abandoned with `outcome` (`reset`, `logged_off`,
    /// `expired` — the session expired and is purged —, `revoked`). Runs inside the engine's
    /// transaction; a throw rolls the whole abandonment back. Default: ``abandon(_:frame:)``.
    func abandon(_ ctx: FlowContext, frame: FlowFrame, outcome: String) throws
}

extension Flow {
    public var startableByClient: Bool { false }
    public var workflow: IDVWorkflow? { nil }
    public var uploadChallenges: Set<String> { [] }
    public func resume(_ ctx: FlowContext, frame: inout FlowFrame, child: String, result: FlowResult) throws -> FlowStep {
        throw IDVError(.internalError, "flow \(name) does not call sub-flows")
    }
    public func abandon(_ ctx: FlowContext, frame: FlowFrame) {}
    public func prepare(_ ctx: FlowContext, frame: FlowFrame, challenge: WireChallenge, answer: WireAnswer) {}
    public func abandon(_ ctx: FlowContext, frame: FlowFrame, outcome: String) throws { abandon(ctx, frame: frame) }
}

/// Every flow the server runs, by name, plus the activation hook: which flow runs the IDV steps of
/// an activation for a given workflow (`activation requires IDV` users).
public struct FlowRegistry: Sendable {
    public private(set) var flows: [String: any Flow] = [:]
    /// ``IDVWorkflow`` raw value → name of the flow that runs the activation IDV steps (seed 002).
    public private(set) var activationIDV: [Int: String] = [:]

    public init() {}

    /// The registry of the core: the authentication flow only.
    public static func standard() -> FlowRegistry {
        var r = FlowRegistry()
        r.register(AuthFlow())
        return r
    }

    /// Adds (or replaces) a flow.
    public mutating func register(_ flow: any Flow) { flows[flow.name] = flow }

    /// Adds a flow and makes it the activation IDV step for `workflows` (the hook between
    /// `getActivationCode` and `getPassword` mode 1). The flow's result outcome `completed`
    /// continues to the password; any other outcome returns to `getUser` with its error code.
    public mutating func register(_ flow: any Flow, activationFor workflows: [IDVWorkflow]) {
        register(flow)
        for w in workflows { activationIDV[w.rawValue] = flow.name }
    }

    public func flow(_ name: String) -> (any Flow)? { flows[name] }
}

/// What a flow may use while it runs: the store, configuration, clock, the session being driven,
/// and audit/metrics helpers. Lives for one request on one thread.
public final class FlowContext {
    public let store: Store
    public let config: ServerConfig
    public let registry: FlowRegistry
    public let metrics: Metrics
    /// Randomness, hashing and signature checks (libsodium in `idvd`).
    public let crypto: any EngineCrypto
    /// Unix seconds of this request.
    public let now: Int
    public let requestID: String
    /// The session; flows change it only through ``login(user:)`` and ``setUser(_:)``.
    public private(set) var session: SessionRecord

    init(store: Store, config: ServerConfig, registry: FlowRegistry, metrics: Metrics, crypto: any EngineCrypto, now: Int,
         requestID: String, session: SessionRecord) {
        self.store = store
        self.crypto = crypto
        self.config = config
        self.registry = registry
        self.metrics = metrics
        self.now = now
        self.requestID = requestID
        self.session = session
    }

    private var memo: [String: Result<Any, Error>] = [:]
    /// Flow outcomes of this request, counted in ``Metrics`` only once its transaction committed.
    private(set) var pendingOutcomes: [(flow: String, outcome: String)] = []

    /// Counts a flow outcome (`idvd_flow_outcomes_total`) when this request's transaction commits
    /// — a rolled-back answer (refused, or a lost compare-and-set) counts nothing.
    public func countOutcome(flow: String, outcome: String) { pendingOutcomes.append((flow, outcome)) }

    /// Moves the pending outcomes into the metrics (the engine calls it after the commit).
    func flushOutcomes() {
        for o in pendingOutcomes { metrics.flowOutcome(flow: o.flow, outcome: o.outcome) }
        pendingOutcomes.removeAll()
    }

    /// The value of an expensive pure computation, computed once per request: in
    /// ``Flow/prepare(_:frame:challenge:answer:)`` (outside the store transaction) and found again
    /// by the same `key` in `answer`. `key` must name every input not fixed by the request (e.g.
    /// the stored password hash). A thrown error is remembered and rethrown the same way.
    public func precomputed<T>(_ key: String, _ compute: () throws -> T) throws -> T {
        if let r = memo[key], let v = try r.get() as? T { return v }
        let r: Result<Any, Error> = Result { try compute() }
        memo[key] = r
        guard let v = try r.get() as? T else { throw IDVError(.internalError, "precomputed value of another type") }
        return v
    }

    /// Associates the session with a user (known, not yet authenticated).
    public func setUser(_ userID: String?) { session.userID = userID }

    /// Marks the session logged in for `user`, binds the session's device to the user if unbound,
    /// audits, and returns the `onUserLoggedIn` event.
    public func login(user: UserRecord) throws -> WireEvent {
        session.userID = user.userID
        session.loggedIn = true
        if let did = session.deviceID, var d = try store.device(did) {
            if d.userID == nil { d.userID = user.userID }
            d.lastUsedAt = now
            try store.saveDevice(d)
        }
        try audit("session.login", userID: user.userID, ["device_id": session.deviceID.map { .string($0) } ?? .null])
        return WireEvent(name: WireName.onUserLoggedIn, userID: user.userID,
                         payload: ["user_id": .string(user.userID), "session_id": .string(session.sessionID),
                                   "device_id": session.deviceID.map { .string($0) } ?? .null])
    }

    /// Appends an audit entry for this session (details: ids and codes only).
    public func audit(_ action: String, userID: String? = nil, _ details: [String: JSONValue] = [:]) throws {
        var d = details
        d["request_id"] = .string(requestID)
        try store.appendAudit(action: action, userID: userID ?? session.userID, sessionID: session.sessionID, details: .object(d), at: now)
    }
}
