import Foundation
import IDVCore

// The five seed flows (plus the template-status check), each its own `Flow` over a typed state
// built from shared step components: the document step, the selfie step, re-authentication,
// consent. docs/WORKFLOWS.md gives every challenge, answer and event.
//
// ```
// activation/kyc: document(start → upload → confirm) → selfie(start → upload → confirm) → consent → end
// document_scan:  document(start → upload) → end (onIDVAdditionalDocumentScan)
// server_biometric: [template?] → selfie(start → upload) → end (onIDVServerBiometricAuthenticationResult)
// opt-in:  [no template?] → reauth(LDA | password) → selfie(start → upload) → frame_confirm → end
// opt-out: [template?] → reauth(LDA | password) → erase → end
// ```
//
// State holds ids, counters and verdicts — never images, names or descriptors: those are sealed in
// `idv_media` by ``Effect/sealMedia(id:kind:bytes:)`` and named here by media id.

/// Which IDV flow: the constants each one has (registry name, workflow, challenge mode, use case).
enum IDVKind: String, Codable, Sendable, CaseIterable {
    case activation, kyc, documentScan = "document_scan", serverBiometric = "server_biometric"
    case optIn = "optin", optOut = "optout", templateStatus = "template_status"

    var name: String {
        switch self {
        case .activation: return FlowName.activation
        case .kyc: return FlowName.kyc
        case .documentScan: return FlowName.documentScan
        case .serverBiometric: return FlowName.serverBiometric
        case .optIn: return FlowName.optIn
        case .optOut: return FlowName.optOut
        case .templateStatus: return FlowName.templateStatus
        }
    }

    var workflow: IDVWorkflow? {
        switch self {
        case .activation: return .activation
        case .kyc: return .postLoginKYC
        case .documentScan: return .postLoginDocScanOnly
        case .serverBiometric: return .postLoginSelfieBiometric
        case .optIn: return .postLoginOptIn
        case .optOut: return .postLoginOptOut
        case .templateStatus: return nil
        }
    }

    var mode: Int {
        switch self {
        case .activation: return ChallengeOpMode.idvActivation.rawValue
        case .kyc: return ChallengeOpMode.idvPostLoginKYC.rawValue
        case .documentScan: return ChallengeOpMode.idvAdditionalDocumentScan.rawValue
        case .serverBiometric: return ChallengeOpMode.idvServerBiometricAuthentication.rawValue
        case .optIn: return ChallengeOpMode.biometricOptIn.rawValue
        case .optOut: return ChallengeOpMode.biometricOptOut.rawValue
        case .templateStatus: return ChallengeOpMode.verify.rawValue
        }
    }

    var useCase: OrchestrationUseCase {
        switch self {
        case .activation: return .other("RDNA_IDV_ACTIVATION")
        case .kyc: return .postLoginKYC
        case .documentScan: return .postLoginDocScanOnly
        case .serverBiometric: return .postLoginSelfieBiometric
        case .optIn: return .postLoginOptIn
        case .optOut: return .postLoginOptOut
        case .templateStatus: return .checkTemplate
        }
    }

    var defaultReason: String {
        switch self {
        case .activation: return "Activation"
        case .kyc: return "KYC"
        case .documentScan: return "Additional Document Scan"
        case .serverBiometric: return "Server Biometric Authentication"
        case .optIn: return "Biometric Opt-In"
        case .optOut: return "Biometric Opt-Out"
        case .templateStatus: return "Template Status"
        }
    }

    /// Activation runs before login: cancel is 146, not 240.
    var preLogin: Bool { self == .activation }
}

/// What every IDV run carries, typed: who, why, the audit transaction, the attempts used, the
/// verdicts so far and the media kept (by id).
struct IDVRun: Codable, Sendable, Equatable {
    var userID: String
    var reason: String
    /// `idv_audit_transaction_id`.
    var txn: String
    var startedAt: Int
    /// The ``IDVWorkflow`` raw value (activation: the user's variant 0–5).
    var idvWorkflow: Int
    var documentAttempts = 0
    var selfieAttempts = 0
    var reauthAttempts = 0
    var documentStatus: DocumentStatus?
    var verdict: BiometricVerdict?
    /// Rounded to 0.001.
    var faceMatchScore: Double?
    var livenessScore: Int?
    var consent: Bool?
    var templateCreated = false
    var scanID: String?
    /// Activation variants 1, 2, 4 with a template: the selfie is matched against it, no document step.
    var againstTemplate = false
    var portraitMedia: String?
    /// Where `portraitMedia` came from (nil: no portrait kept).
    var portraitSource: PortraitSource?
    var nameMedia: String?
    /// The sealed descriptor of a MATCHED selfie (the template on consent).
    var embedding: KeptEmbedding?
    /// Re-authentication offered LDA already (a fallback goes to the password).
    var ldaTried = false
    /// The review triggers of the last judged document and selfie (``WorkflowPolicy/reviewTriggers(document:judged:)``);
    /// nil before judging. A KYC with any ends under review (RelyingParty/Review.swift).
    var reviewDocument: [ReviewTrigger]?
    var reviewSelfie: [ReviewTrigger]?
    /// The sealed best frame of the last selfie, kept for the reviewer when a trigger applies.
    var selfieMedia: String?
    /// The PAD evidence of a selfie capture the policy was unsure about, kept until its retake is
    /// judged with it (``WorkflowPolicy/judgePAD(_:cues:score:earlier:final:)``); nil otherwise.
    var padRetake: PADRetake?
    /// The presence assurance of the last judged selfie (Workflows/Presence.swift): illumination
    /// followed, a fallback, or not checked.
    var presenceAssurance: PresenceAssurance?
    /// True once a capture of this attempt was asked again because its presence was unsure
    /// (``WorkflowPolicy/presenceUnsure(_:reason:)``, 1071): one such retake per attempt; nil otherwise
    /// (optional so that states sealed before it decode).
    var presenceRetaken: Bool?
    /// The nonce of the last liveness challenge shown to the client and counted against the
    /// subject's PAD challenges (``IDVFlowSteps/lift(_:_:_:facts:env:_:)``); nil before any, or
    /// once its token was given back (optional so that states sealed before it decode).
    var countedChallenge: String?
    /// How many challenges this run drew since its last refund (all given back together when a
    /// capture answering the last one MATCHES); nil for none.
    var challengesCounted: Int?

    /// Every review trigger that holds for the run now.
    var reviewTriggers: [ReviewTrigger] { (reviewDocument ?? []) + (reviewSelfie ?? []) }
}

/// Where the selfie's face reference came from (audited as `reference`).
enum PortraitSource: String, Codable, Sendable, Equatable {
    /// The eMRTD chip's DG2 (passive authentication passed, DG1 equal to the printed MRZ).
    case chip
    /// The portrait cropped from the data page.
    case page
}

/// A descriptor sealed in `idv_media` for enrolment.
struct KeptEmbedding: Codable, Sendable, Equatable {
    var mediaID: String
    var model: String
    var dimensions: Int
}

/// An IDV flow's state: the run and where it waits.
struct IDVState<Step: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    var run: IDVRun
    var step: Step
}

/// The document step's places. The upload carries the chip challenge it issued (ICAO 9303-11 §6.1 Active
/// Authentication; nil when this server verifies no chips): sealed with the flow state, fresh for every upload asked,
/// gone when the step moves on.
///
/// `chip` is the second part of a two-part upload (`"chip_follows": true`, IDVCore ``DocumentChipReadRequest``): the
/// pages were read, and are kept here (sealed with the flow state) until the chip's answer, when they are read again
/// with the chip files exactly as a one-part upload is — the same evidence and the same judgement.
enum DocumentStep: Codable, Sendable, Equatable {
    case start, upload(chipChallenge: ChipChallengePayload?), confirm
    case chip(chipChallenge: ChipChallengePayload?, pages: [Data])
}

/// The selfie step's places; the active liveness challenge (server-issued) rides with them.
enum SelfieStep: Codable, Sendable, Equatable {
    case start(challenge: LivenessChallenge?)
    case upload(challenge: LivenessChallenge?)
    /// `getIDVSelfieConfirmation` with the action keys offered.
    case confirm(offered: [IDVActionKey])

    /// The liveness challenge this place shows the client (nil: none).
    var challenge: LivenessChallenge? {
        switch self {
        case let .start(c), let .upload(c): c
        case .confirm: nil
        }
    }
}

/// Re-authentication's places (opt-in / opt-out, seed 004).
enum ReauthStep: Codable, Sendable, Equatable { case lda, password }

/// The typed answers of the IDV flows.
enum IDVInput: Sendable {
    case confirm(Bool)
    case cancel
    /// Document pages, and the chip files sent beside them (nil: none).
    case pages([Data], chip: ChipData?)
    /// Document pages sent with `"chip_follows": true`: the chip is read after them (`readIDVDocumentChip`).
    case pagesThenChip([Data])
    /// The `readIDVDocumentChip` answer: the chip files (nil: the client skipped the chip).
    case chipFiles(ChipData?)
    /// The frames (oldest first), their rate, the capture's sanitised `meta_data`, and what presence
    /// the server asked of them (with the frames' times under an illumination sequence).
    case frames([Data], framesPerSecond: Double?, metaData: SelfieCaptureMetadata?, presence: CapturePresence)
    /// The client did not flash the issued illumination sequence: `unavailable`, `declined`, or
    /// `no_frame_times` (frames sent without `frame_times_ms`, left unjudged).
    case presenceDeclined(how: String)
    case action(IDVActionKey)
    case optIn(Bool)
    case password(String)
    case ldaSignature(String, challengeID: String, nonce: String?)
    case ldaFallback
    case frameStatus(IDVStatus)
}

/// How a run ended (the flow-run outcome, the audit outcome, the terminal codes).
struct Ending {
    var outcome: FlowOutcome
    var error: IDVError
    var statusCode: Int
    var statusMessage: String
    var success: Bool

    static func cancelled(preLogin: Bool) -> Ending {
        let e = IDVError(preLogin ? .idvCancelledByUser : .userCancelled)
        return Ending(outcome: .cancelled, error: e, statusCode: RequestStatus.unableToProcess, statusMessage: e.errorString, success: false)
    }
    static func exhausted(_ what: String) -> Ending {
        Ending(outcome: .attemptsExhausted, error: IDVError(.attemptsExhausted, "No \(what) attempts left"),
               statusCode: RequestStatus.failed, statusMessage: "No \(what) attempts left", success: false)
    }
    static let expired = Ending(outcome: .expired, error: IDVError(.flowExpired), statusCode: RequestStatus.failed,
                                statusMessage: IDVErrorCode.flowExpired.message, success: false)
    static let success = Ending(outcome: .completed, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true)
    /// The client started another flow while this one waited (issue #15): ended as the seeds' Close
    /// ends it, 240 (user cancelled), status 400.
    /// The policy sent the run to human review (a KYC with a ``ReviewTrigger``): the device hears
    /// 1130 with status 400 (not decided); the relying party hears the decision server to server.
    static let underReview = Ending(outcome: .pendingReview, error: IDVError(.verificationUnderReview), statusCode: RequestStatus.unableToProcess,
                                    statusMessage: IDVErrorCode.verificationUnderReview.message, success: false)
    static let superseded = Ending(outcome: .superseded, error: IDVError(.userCancelled), statusCode: RequestStatus.unableToProcess,
                                   statusMessage: "Ended: another flow was started", success: false)
}

/// What a step component does next: stay in it asking, end the run, or hand over to the flow.
enum StepResult<Local> {
    case ask(Local, ChallengeSpec)
    case end(Ending)
    case next
}

/// The machinery every IDV flow shares: parsing the answers, the step components, the endings.
/// Each flow is a struct with its `kind`, the services (readers and vault), and its own `Step`
/// enum; its settings come with every call (``FlowEnv/settings``, the policy as ``FlowEnv/policy``).
protocol IDVFlowSteps: Flow where State == IDVState<Step>, Input == IDVInput {
    associatedtype Step: Codable & Sendable & Equatable
    var kind: IDVKind { get }
    var services: IDVServices { get }
}

extension IDVFlowSteps {
    var name: String { kind.name }
    var startableByClient: Bool { kind != .activation }
    var workflow: IDVWorkflow? { kind.workflow }

    func startSubject(_ input: JSONValue, session: SessionFacts) -> String? {
        kind == .activation ? (try? Self.startPayload(input))?.userID : session.userID
    }

    func subject(_ state: State, input: Input?) -> String? { state.run.userID }

    // MARK: Start

    /// The start input (``IDVFlowStartPayload``): a client's `POST /v1/flows/{name}` payload, or
    /// the auth flow's call for activation; a payload that is not an object starts with none.
    static func startPayload(_ input: JSONValue) throws -> IDVFlowStartPayload {
        guard input.objectValue != nil else { return IDVFlowStartPayload() }
        do { return try input.decode(IDVFlowStartPayload.self) } catch {
            throw IDVError(.malformedRequest, "payload.reason must be a string of 1–128 characters")
        }
    }

    /// The run of a start: the user (activation: from the caller; else the logged-in session), the
    /// reason (1–128 characters), the audit transaction id. Throws 1004 / 1001.
    func newRun(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> (IDVRun, [Effect]) {
        let start = try Self.startPayload(input)
        let uid: String
        var workflowRaw = kind.workflow?.rawValue ?? 0
        if kind == .activation {
            guard let u = start.userID else { throw IDVError(.internalError, "activation IDV needs the user id") }
            uid = u
            workflowRaw = start.idvWorkflow ?? 0
        } else {
            guard let u = facts.session.userID, facts.session.loggedIn else { throw IDVError(.unauthenticated, "Log in before starting \(name)") }
            uid = u
        }
        var reason = kind.defaultReason
        if let r = start.reason {
            guard !r.isEmpty, r.count <= 128 else { throw IDVError(.malformedRequest, "payload.reason must be a string of 1–128 characters") }
            reason = r
        }
        let run = IDVRun(userID: uid, reason: reason, txn: "txn_" + env.newID(), startedAt: facts.now, idvWorkflow: workflowRaw)
        return (run, [audit(run, "flow_started", ["orchestration_use_case": .string(kind.useCase.rawValue), "idv_workflow": .integer(workflowRaw)])])
    }

    // MARK: Helpers

    func docLeft(_ r: IDVRun, _ env: FlowEnv) -> Int { max(0, env.policy.documentAttempts - r.documentAttempts) }
    func selfieLeft(_ r: IDVRun, _ env: FlowEnv) -> Int { max(0, env.policy.selfieAttempts - r.selfieAttempts) }
    func reauthLeft(_ r: IDVRun, _ env: FlowEnv) -> Int { max(0, env.policy.reauthAttempts - r.reauthAttempts) }
    /// `attempts_left` of server biometric authentication: the limit minus the user's consecutive
    /// failures within the lockout window — or fewer, when the user's liveness failures across the
    /// selfie flows (``livenessAttemptsLeft(_:_:)``) leave fewer.
    func biometricAttemptsLeft(_ facts: Facts, _ env: FlowEnv) -> Int {
        min(max(0, env.policy.biometricAttempts - facts.biometricFailures), livenessAttemptsLeft(facts, env))
    }
    /// Liveness failures left to the user before the selfie flows (KYC, opt-in, server biometric
    /// authentication) refuse to start: `idv.biometric_attempts` minus ``Facts/livenessFailures``.
    /// Each forfeited PAD retake or challenge counts, so a new run cannot redraw the challenge freely.
    func livenessAttemptsLeft(_ facts: Facts, _ env: FlowEnv) -> Int { max(0, env.policy.biometricAttempts - facts.livenessFailures) }
    /// What the selfie flows (KYC, opt-in, server biometric authentication) are refused at their
    /// start for, or nil: the subject's liveness failures used up ("liveness"), or — under active
    /// liveness, where every capture shows a challenge — its liveness challenges spent ("liveness
    /// challenge"), so nobody scans a document or re-authenticates only to be refused at the selfie.
    func selfieRefusal(_ facts: Facts, _ env: FlowEnv) -> String? {
        if livenessAttemptsLeft(facts, env) <= 0 { return "liveness" }
        if env.policy.activeLiveness, let left = facts.padChallengesLeft, left <= 0 { return "liveness challenge" }
        return nil
    }
    /// The `attempts_left` a client is told for server biometric authentication:
    /// ``biometricAttemptsLeft(_:_:)`` (less one when this run's failure is still to be counted,
    /// `failingNow`), and under active liveness — a challenge shown at every capture — no more than
    /// the user's PAD challenges left (``Facts/padChallengesLeft``).
    func reportedBiometricAttemptsLeft(_ facts: Facts, _ env: FlowEnv, failingNow: Bool = false) -> Int {
        let left = max(0, biometricAttemptsLeft(facts, env) - (failingNow ? 1 : 0))
        guard env.policy.activeLiveness, let challenges = facts.padChallengesLeft else { return left }
        return min(left, max(0, challenges))
    }

    static func status(_ code: Int, _ msg: String) -> RequestStatus { RequestStatus(statusCode: code, statusMessage: msg) }

    func spec(_ name: String, _ r: IDVRun, attemptsLeft: Int, payload: JSONValue = .emptyObject, mode: Int? = nil,
              error: IDVError? = nil, status: RequestStatus? = nil) -> ChallengeSpec {
        ChallengeSpec(name: name, mode: mode ?? kind.mode, workflow: r.idvWorkflow, attemptsLeft: attemptsLeft, userID: r.userID,
                      payload: payload, error: error, status: status)
    }

    /// A challenge payload (IDVCore ChallengePayloads.swift) as the challenge carries it.
    static func payload<P: Encodable>(_ p: P) -> JSONValue {
        // The payload types hold strings, integers and finite numbers only: encoding cannot fail.
        (try? JSONValue(encoding: p)) ?? .emptyObject
    }

    /// An `idv.<action>` audit entry of the run (ids, codes, scores).
    func audit(_ r: IDVRun, _ action: String, _ details: [String: JSONValue] = [:]) -> Effect {
        var d = details
        d["idv_audit_transaction_id"] = .string(r.txn)
        d["flow"] = .string(name)
        return .audit(AuditAction("idv.\(action)"), userID: r.userID, details: d)
    }

    /// The flow expired (`idv.flow_timeout_seconds` since its start)?
    func expired(_ r: IDVRun, _ facts: Facts, _ env: FlowEnv) -> Bool { facts.now >= r.startedAt + env.policy.flowTimeoutSeconds }
}

extension FlowEnv {
    /// The IDV workflow policy of ``settings`` (thresholds, attempts, retention: the only judge).
    var policy: WorkflowPolicy { settings.workflow }
}
