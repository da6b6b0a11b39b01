import Foundation
import IDVCore

// Flows as typed reducers (docs/PROTOCOL.md §Flows, docs/WORKFLOWS.md).
//
// A session holds a stack of flow frames — each a flow name, a run id and the flow's own `Codable`
// state — and the one challenge currently asked. Answering it is two passes over a pure function:
//
// 1. `parse` turns the answer into the flow's typed input (a malformed answer is refused here,
//    1001, and nothing happens); `evidence` says what must be measured for it — a document read, a
//    selfie analysis, an Argon2id check — which the engine does BEFORE any write transaction.
// 2. Inside one short write transaction the engine loads the ``Facts`` the flow reads (the user,
//    the activation code, the device, the template, the biometric history) and calls `reduce`
//    (state, input, evidence, facts) → (state′, [Effect]): ask a challenge, call a sub-flow, or
//    finish. The engine applies the effects and commits them together with the compare-and-set on
//    the session version — a refusal or a lost CAS commits nothing.
//
// Flows never touch the store: every read is a fact, every write an ``Effect``.

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

/// How a flow run ended (the `flow_runs.outcome` column, `idvd_flow_outcomes_total`, the audit).
public enum FlowOutcome: String, Codable, Sendable, CaseIterable {
    case completed
    /// KYC continued after NOT_MATCHED ("Continue Anyway"): completed, identity not verified.
    case completedUnverified = "completed_unverified"
    case cancelled
    case loggedIn = "logged_in"
    case attemptsExhausted = "attempts_exhausted"
    /// The flow timed out (1019), or the session expired and was purged.
    case expired
    /// The session was revoked (admin reset) and purged.
    case revoked
    /// `resetAuthState` abandoned the flow.
    case reset
    /// Log-off abandoned the flow.
    case loggedOff = "logged_off"
    /// The client started another flow while this one waited; ended with its terminal event (240).
    case superseded
    /// The IDV transaction's record of a run abandoned by reset or log-off.
    case abandoned
    case matched
    case notMatched = "not_matched"
    case livenessFailed = "liveness_failed"
    case noTemplate = "no_template"
    case templateExists = "template_exists"
    case templateCreated = "template_created"
    case templateErased = "template_erased"
    case documentInvalid = "document_invalid"
    case userUnavailable = "user_unavailable"
    /// Counted, not a run's end: the user was locked after too many wrong passwords.
    case locked
    /// Counted, not a run's end: a client sent `activation.code_attempts` wrong codes for a user and backs off.
    case activationAttemptsExhausted = "activation_attempts_exhausted"
    /// The policy sent the verification to human review (RelyingParty/Review.swift); a reviewer's
    /// approval makes it `completed`, a rejection `review_rejected`.
    case pendingReview = "pending_review"
    case reviewRejected = "review_rejected"
    /// Counted, not a run's end: a client sent `password.attempts` wrong passwords for a user and backs off.
    case backedOff = "backed_off"
}

/// How a flow ended, for its caller (a `resume`) or, at the bottom of the stack, for the client.
public struct FlowResult: Sendable, Equatable {
    public var outcome: FlowOutcome
    /// The terminal event sent to the client when this flow was the bottom of the stack.
    public var event: WireEvent?
    /// The `long_error_code` the outcome carries (0 on success; 146/240 on cancel).
    public var errorCode: Int

    public init(outcome: FlowOutcome, event: WireEvent? = nil, errorCode: Int = 0) {
        self.outcome = outcome
        self.event = event
        self.errorCode = errorCode
    }
}

/// What a flow does next, with its new state.
public enum FlowStep<State: Sendable>: Sendable {
    /// Ask this challenge (the engine assigns a fresh `challenge_id`); the flow waits in `State`.
    case ask(State, ChallengeSpec)
    /// Push the named sub-flow with this start input; its result comes back to `resume` in `State`.
    case call(State, flow: String, input: JSONValue)
    /// End this flow. With a caller below, the caller resumes; at the bottom, `result.event` goes
    /// to the client and the session keeps no challenge.
    case finish(FlowResult)
}

/// A reducer's result: the next step and the effects to apply, in order, in the same transaction.
public struct Transition<State: Sendable>: Sendable {
    public var step: FlowStep<State>
    public var effects: [Effect]

    public init(_ step: FlowStep<State>, _ effects: [Effect] = []) {
        self.step = step
        self.effects = effects
    }

    public static func ask(_ state: State, _ spec: ChallengeSpec, _ effects: [Effect] = []) -> Transition {
        Transition(.ask(state, spec), effects)
    }

    public static func finish(_ result: FlowResult, _ effects: [Effect] = []) -> Transition {
        Transition(.finish(result), effects)
    }

    /// This transition with `effects` applied first.
    public func after(_ first: [Effect]) -> Transition { Transition(step, first + effects) }

    func map<T: Sendable>(_ f: (State) throws -> T) rethrows -> Transition<T> {
        switch step {
        case let .ask(s, spec): return Transition<T>(.ask(try f(s), spec), effects)
        case let .call(s, flow, input): return Transition<T>(.call(try f(s), flow: flow, input: input), effects)
        case let .finish(r): return Transition<T>(.finish(r), effects)
        }
    }
}

/// What a flow reads while it reduces: loaded by the engine inside the write transaction (the
/// compare-and-set makes them current), for the flow's subject user.
public struct Facts: Sendable {
    /// Now, Unix seconds (the engine's ``Clock``).
    public var now: Int
    public var session: SessionFacts
    /// The subject user (the flow's user, or the one a `getUser` answer names); nil when unknown.
    public var user: UserRecord?
    /// The subject's activation code, if any.
    public var activationCode: ActivationCodeRecord?
    /// The session's device, if it has one.
    public var device: DeviceRecord?
    /// The subject's biometric template, if any (metadata and a digest, never the descriptor).
    public var template: TemplateFacts?
    /// Consecutive failed server biometric authentications of the subject within
    /// `idv.lockout_seconds` (loaded for flows with ``Flow/usesBiometricHistory``; else 0).
    public var biometricFailures: Int
    /// Selfie runs of the subject that ended `LIVENESS_FAILED` — a retake or challenge of PAD
    /// forfeited by leaving the run included — in KYC, opt-in and server biometric authentication
    /// within `idv.lockout_seconds` (loaded with ``biometricFailures``; else 0). A new draw of the
    /// PAD challenge costs one of `idv.biometric_attempts`, in every flow that can ask it.
    public var livenessFailures = 0
    /// PAD challenges the subject may still be asked (``PADPolicy/challengeWindowSeconds``), read
    /// from the abuse limits with ``livenessFailures``; nil where not counted (activation: its runs
    /// are bounded by the activation code's).
    public var padChallengesLeft: Int?
    /// What the abuse limits hold for the request's client and the subject (wrong passwords and
    /// codes it sent for the subject, its back-off): loaded from ``AbuseLimits``.
    public var client = ClientCredentialFacts()

    public init(now: Int, session: SessionFacts, user: UserRecord? = nil, activationCode: ActivationCodeRecord? = nil,
                device: DeviceRecord? = nil, template: TemplateFacts? = nil, biometricFailures: Int = 0) {
        self.now = now
        self.session = session
        self.user = user
        self.activationCode = activationCode
        self.device = device
        self.template = template
        self.biometricFailures = biometricFailures
    }
}

/// The session as flows see it.
public struct SessionFacts: Sendable, Equatable {
    public var sessionID: String
    public var userID: String?
    public var deviceID: String?
    public var loggedIn: Bool
    public var absoluteExpiresAt: Int
    public init(sessionID: String, userID: String?, deviceID: String?, loggedIn: Bool, absoluteExpiresAt: Int) {
        self.sessionID = sessionID
        self.userID = userID
        self.deviceID = deviceID
        self.loggedIn = loggedIn
        self.absoluteExpiresAt = absoluteExpiresAt
    }
}

/// A stored template as a fact: what it is and which one (the digest changes when it is replaced).
public struct TemplateFacts: Sendable, Equatable {
    public var model: String
    public var consentID: String
    public var createdAt: Int
    /// SHA-256 hex of the sealed box: names this template without opening it.
    public var digest: String
    public init(model: String, consentID: String, createdAt: Int, digest: String) {
        self.model = model
        self.consentID = consentID
        self.createdAt = createdAt
        self.digest = digest
    }
}

/// What must be measured for an answer, before the write transaction.
public enum EvidenceRequest: Sendable {
    case none
    /// Read the document pages (decoded once from the upload) and verify the chip files sent beside them, the
    /// chip's Active Authentication over `chipChallenge` (the step's own, 8 bytes; nil: none issued).
    case document(pages: [Data], chip: ChipData?, chipChallenge: [UInt8]?)
    /// Analyse the selfie frames (decoded once from the upload) played at `framesPerSecond`
    /// against `reference`, judging the issued `challenge` when set and the issued illumination
    /// of `presence` (Workflows/Presence.swift); open the document holder's name kept as media
    /// `nameMedia` for the confirmation screen. The frames' digests are looked up for a replay.
    case selfie(frames: [Data], framesPerSecond: Double?, reference: ReferenceRequest, challenge: LivenessChallenge?, nameMedia: String?,
                presence: CapturePresence)
    /// Verify `password` against the subject's current Argon2id hash.
    case passwordCheck(String)
    /// Hash a new password with Argon2id (activation).
    case passwordHash(String)
}

/// What a selfie is compared with, by reference (the engine resolves it before analysing).
public enum ReferenceRequest: Sendable, Equatable {
    /// No comparison: liveness and one face (enrolment capture).
    case none
    /// The subject's stored template; when there is none, the portrait of media `orPortrait`, else
    /// no reference (``Evidence/referenceMissing``).
    case template(orPortrait: String?)
    /// The document portrait sealed as media `mediaID` in this run.
    case portrait(String)
}

/// `value` and its wall time in milliseconds (audited as `duration_ms`).
public struct Timed<Value: Sendable>: Sendable {
    public var value: Value
    public var milliseconds: Int
    public init(_ value: Value, milliseconds: Int) {
        self.value = value
        self.milliseconds = milliseconds
    }
}

/// What was measured for an answer. A reader's retryable refusal of an upload (1008, 1009, 1031,
/// 1032) is evidence too: the flow counts the attempt and asks again.
public struct Evidence: Sendable {
    public var document: Result<Timed<DocumentEvidence>, IDVError>?
    public var selfie: Result<Timed<SelfieEvidence>, IDVError>?
    /// The reference the selfie was compared with (resolved from the ``ReferenceRequest``).
    public var reference: MatchReference?
    /// A template-only reference was asked for and the subject has no template.
    public var referenceMissing = false
    /// The document holder's display name (from the run's sealed media), for the selfie confirmation.
    public var displayName: String?
    public var passwordMatches: Bool?
    public var passwordHash: String?
    /// The digests of the selfie's frames (``CaptureDigests/of(_:crypto:)``; empty when the
    /// replay check is off) and how many of them the store already kept from earlier uploads.
    public var captureDigests: [String] = []
    public var replayedFrames = 0
    /// The SHA-256 of every image (and the chip's EF.SOD) this evidence was measured on
    /// (``JudgedImage``): recorded in the judgement's audit entry, never the bytes.
    public var judgedImages: [JudgedImage] = []
    /// What the evidence was computed against; the engine re-checks it inside the transaction
    /// (``Facts``) and measures again when it changed meanwhile.
    public var basis = EvidenceBasis()

    public init() {}
    public static let none = Evidence()
}

/// The facts an evidence value rests on.
public struct EvidenceBasis: Sendable, Equatable {
    /// The template's digest the selfie was compared with (nil when none was).
    public var templateDigest: String?
    /// The password hash the password was checked against.
    public var passwordHash: String?
    /// Whether the template's presence matters (template references).
    public var dependsOnTemplate = false
    /// Whether the password hash matters (password checks).
    public var dependsOnPassword = false
    public init() {}

    /// Whether `facts` still hold what this evidence was computed against.
    public func holds(in facts: Facts) -> Bool {
        if dependsOnTemplate && facts.template?.digest != templateDigest { return false }
        if dependsOnPassword && facts.user?.passwordHash != passwordHash { return false }
        return true
    }
}

/// What a flow may use besides the facts: the engine's settings (never the process's
/// configuration), the registry's activation hook, randomness and signature checks (side-effect
/// free), the run and request ids.
public struct FlowEnv: Sendable {
    /// The settings the engine runs with (``FlowEngine/settings``).
    public let settings: EngineSettings
    /// ``IDVWorkflow`` raw value → the flow that runs the activation IDV steps.
    public let activationIDV: [Int: String]
    public let crypto: any EngineCrypto
    /// The run of the frame being reduced.
    public let runID: String
    public let requestID: String

    public init(settings: EngineSettings, activationIDV: [Int: String], crypto: any EngineCrypto, runID: String, requestID: String) {
        self.settings = settings
        self.activationIDV = activationIDV
        self.crypto = crypto
        self.runID = runID
        self.requestID = requestID
    }

    /// A fresh random id (32 hex digits).
    public func newID() -> String { crypto.randomID() }
    /// A fresh 32-byte nonce, standard base64 (LDA challenges).
    public func nonce() -> String { Data(crypto.randomBytes(32)).base64EncodedString() }
}

/// Why the engine abandons a flow.
public enum AbandonReason: String, Sendable {
    case reset, loggedOff = "logged_off", expired, revoked

    /// The outcome recorded for the run.
    public var outcome: FlowOutcome {
        switch self {
        case .reset: return .reset
        case .loggedOff: return .loggedOff
        case .expired: return .expired
        case .revoked: return .revoked
        }
    }
}

/// One server-side state machine: a `Codable` state and pure functions over it.
///
/// Rules: keep ALL state in `State`; read only ``Facts``; write only through ``Effect``s; refuse a
/// malformed answer in `parse` (throw ``IDVError`` `.malformedRequest`), never after.
public protocol Flow: Sendable {
    associatedtype State: Codable & Sendable
    associatedtype Input: Sendable

    /// Registry name (``FlowName``), e.g. `auth`, `idv.postlogin.kyc`.
    var name: String { get }
    /// True for post-login flows a logged-in client may start with `POST /v1/flows/{name}`.
    var startableByClient: Bool { get }
    /// The IDV workflow it implements, if any (recorded with the flow run).
    var workflow: IDVWorkflow? { get }
    /// Whether the flow reads ``Facts/biometricFailures``.
    var usesBiometricHistory: Bool { get }

    /// The user whose facts `start` reads: from the start input or the session.
    func startSubject(_ input: JSONValue, session: SessionFacts) -> String?
    /// Starts the flow with `input` (the caller's `.call` input or the client's start payload).
    func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State>
    /// The user whose facts the flow reads in `state` (with `input` when answering).
    func subject(_ state: State, input: Input?) -> String?
    /// The answer as the typed input of the step `state` waits in, under `settings` (page and
    /// frame limits, password length); throws 1001 when malformed.
    func parse(_ state: State, answer: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> Input
    /// What to measure for `input` before the transaction, under `settings`. Default: nothing.
    func evidence(_ state: State, input: Input, settings: EngineSettings) -> EvidenceRequest
    /// The credential `input` presents for a user (a password, an activation code), checked by the
    /// engine's abuse limits BEFORE anything is hashed or compared (1111 when the client backs
    /// off). Default: none.
    func credential(_ state: State, input: Input) -> (kind: CredentialKind, userID: String)?
    /// The next step: pure in (state, input, evidence, facts).
    func reduce(_ state: State, input: Input, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State>
    /// Continues after the sub-flow `child` finished with `result`.
    func resume(_ state: State, child: String, result: FlowResult, facts: Facts, env: FlowEnv) throws -> Transition<State>
    /// The effects of abandoning the flow (reset, log-off, expiry, revocation). Default: none.
    func abandon(_ state: State, reason: AbandonReason, facts: Facts, env: FlowEnv) -> [Effect]
    /// Ends the flow, waiting in `state`, because the client started flow `next` (`POST
    /// /v1/flows/{name}`): a `.finish` whose event is the flow's terminal event, sent to the client
    /// as the envelope's `ended`. Nil (the default): the flow cannot be superseded and the start
    /// is refused with 1022.
    func supersede(_ state: State, by next: String, facts: Facts, env: FlowEnv) throws -> Transition<State>?
}

extension Flow {
    public var startableByClient: Bool { false }
    public var workflow: IDVWorkflow? { nil }
    public var usesBiometricHistory: Bool { false }
    public func startSubject(_ input: JSONValue, session: SessionFacts) -> String? { session.userID }
    public func evidence(_ state: State, input: Input, settings: EngineSettings) -> EvidenceRequest { .none }
    public func credential(_ state: State, input: Input) -> (kind: CredentialKind, userID: String)? { nil }
    public func resume(_ state: State, child: String, result: FlowResult, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        throw IDVError(.internalError, "flow \(name) does not call sub-flows")
    }
    public func abandon(_ state: State, reason: AbandonReason, facts: Facts, env: FlowEnv) -> [Effect] { [] }
    public func supersede(_ state: State, by next: String, facts: Facts, env: FlowEnv) throws -> Transition<State>? { nil }
}

// MARK: - Type erasure (the registry and the session stack hold flows of any state type)

/// A transition whose state is encoded (the form a session frame stores).
struct ErasedTransition {
    var step: FlowStep<JSONValue>
    var effects: [Effect]
}

/// An answer parsed by its flow: who its facts are about, what to measure, and the reducer to run
/// inside the transaction.
struct PreparedAnswer {
    let subject: String?
    let usesBiometricHistory: Bool
    let request: EvidenceRequest
    let credential: (kind: CredentialKind, userID: String)?
    let reduce: (Evidence, Facts, FlowEnv) throws -> ErasedTransition
}

/// A flow of any state type.
public struct AnyFlow: Sendable {
    static func encode<S: Codable & Sendable>(_ t: Transition<S>) throws -> ErasedTransition {
        let m = try t.map { try JSONValue(encoding: $0) }
        return ErasedTransition(step: m.step, effects: m.effects)
    }

    static func decode<S: Decodable>(_ v: JSONValue, as: S.Type, flow: String) throws -> S {
        do { return try v.decode(S.self) } catch {
            throw IDVError(.internalError, "the session's \(flow) state does not decode")
        }
    }

    public let name: String
    public let startableByClient: Bool
    public let workflow: IDVWorkflow?
    public let usesBiometricHistory: Bool
    let startSubject: @Sendable (JSONValue, SessionFacts) -> String?
    let start: @Sendable (JSONValue, Facts, FlowEnv) throws -> ErasedTransition
    let subject: @Sendable (JSONValue) throws -> String?
    let prepare: @Sendable (JSONValue, WireAnswer, PendingChallenge, EngineSettings) throws -> PreparedAnswer
    let resume: @Sendable (JSONValue, String, FlowResult, Facts, FlowEnv) throws -> ErasedTransition
    let abandon: @Sendable (JSONValue, AbandonReason, Facts, FlowEnv) -> [Effect]
    let supersede: @Sendable (JSONValue, String, Facts, FlowEnv) throws -> ErasedTransition?

    public init<F: Flow>(_ flow: F) {
        name = flow.name
        startableByClient = flow.startableByClient
        workflow = flow.workflow
        usesBiometricHistory = flow.usesBiometricHistory
        @Sendable func encode(_ t: Transition<F.State>) throws -> ErasedTransition { try AnyFlow.encode(t) }
        @Sendable func decode(_ v: JSONValue) throws -> F.State { try AnyFlow.decode(v, as: F.State.self, flow: flow.name) }
        startSubject = { flow.startSubject($0, session: $1) }
        start = { try encode(try flow.start($0, facts: $1, env: $2)) }
        subject = { flow.subject(try decode($0), input: nil) }
        prepare = { stateJSON, answer, challenge, settings in
            let state = try decode(stateJSON)
            let input = try flow.parse(state, answer: answer, challenge: challenge, settings: settings)
            return PreparedAnswer(subject: flow.subject(state, input: input), usesBiometricHistory: flow.usesBiometricHistory,
                                  request: flow.evidence(state, input: input, settings: settings),
                                  credential: flow.credential(state, input: input)) { evidence, facts, env in
                try encode(try flow.reduce(state, input: input, evidence: evidence, facts: facts, env: env))
            }
        }
        resume = { try encode(try flow.resume(try decode($0), child: $1, result: $2, facts: $3, env: $4)) }
        abandon = { stateJSON, reason, facts, env in
            guard let state = try? decode(stateJSON) else { return [] }
            return flow.abandon(state, reason: reason, facts: facts, env: env)
        }
        supersede = { stateJSON, next, facts, env in
            try flow.supersede(try decode(stateJSON), by: next, facts: facts, env: env).map(encode)
        }
    }
}

/// Every flow the server runs, by name, plus the activation hook: which flow runs the IDV steps of
/// an activation for a given workflow (`activation requires IDV` users).
public struct FlowRegistry: Sendable {
    public private(set) var flows: [String: AnyFlow] = [:]
    /// The analysers, vault and policy the IDV flows measure with (``registerIDV(_:includeUnavailable:)``).
    public internal(set) var services: IDVServices?
    /// ``IDVWorkflow`` raw value → name of the flow that runs the activation IDV steps (seed 002).
    public private(set) var activationIDV: [Int: String] = [:]
    /// Names of flows this server knows but cannot offer (an analyser is missing, e.g. the dlib
    /// model files): starting one answers 1033 `workflowUnavailable`, not 1007.
    public internal(set) var unavailable: Set<String> = []

    public init() {}

    /// The registry of the core: the authentication flow only.
    public static func standard() -> FlowRegistry {
        var r = FlowRegistry()
        r.register(AuthFlow())
        return r
    }

    /// Adds (or replaces) a flow.
    public mutating func register<F: Flow>(_ flow: F) { flows[flow.name] = AnyFlow(flow) }

    /// Adds a flow and makes it the activation IDV step for `workflows` (the hook between
    /// `getActivationCode` and `getPassword` mode 1). The flow's result outcome `completed`
    /// continues to the password; any other outcome returns to `getUser` with its error code.
    public mutating func register<F: Flow>(_ flow: F, activationFor workflows: [IDVWorkflow]) {
        register(flow)
        for w in workflows { activationIDV[w.rawValue] = flow.name }
    }

    public func flow(_ name: String) -> AnyFlow? { flows[name] }

    /// The names a client may start here with `POST /v1/flows/{name}`: IDVCore's
    /// ``FlowName/clientStartable`` (the one list of them) in its order, those this server registered
    /// (a flow whose analyser is missing is not, see ``unavailable``); then any other client-startable
    /// flow registered (an extension's, a test's), by name.
    public var clientStartableNames: [String] {
        let names = Set(flows.values.filter(\.startableByClient).map(\.name))
        return FlowName.clientStartable.filter(names.contains) + names.subtracting(FlowName.clientStartable).sorted()
    }
}
