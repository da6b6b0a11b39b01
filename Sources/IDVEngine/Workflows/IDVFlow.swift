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
public enum IDVKind: String, Codable, Sendable, CaseIterable {
    case activation, kyc, documentScan = "document_scan", serverBiometric = "server_biometric"
    case optIn = "optin", optOut = "optout", templateStatus = "template_status"

    public var name: String {
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

    public var workflow: IDVWorkflow? {
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
public struct IDVRun: Codable, Sendable, Equatable {
    public var userID: String
    public var reason: String
    /// `idv_audit_transaction_id`.
    public var txn: String
    public var startedAt: Int
    /// The ``IDVWorkflow`` raw value (activation: the user's variant 0–5).
    public var idvWorkflow: Int
    public var documentAttempts = 0
    public var selfieAttempts = 0
    public var reauthAttempts = 0
    public var documentStatus: DocumentStatus?
    public var verdict: BiometricVerdict?
    /// Rounded to 0.001.
    public var faceMatchScore: Double?
    public var livenessScore: Int?
    public var consent: Bool?
    public var templateCreated = false
    public var scanID: String?
    /// Activation variants 1, 2, 4 with a template: the selfie is matched against it, no document step.
    public var againstTemplate = false
    public var portraitMedia: String?
    /// Where `portraitMedia` came from (nil: no portrait kept).
    public var portraitSource: PortraitSource?
    public var nameMedia: String?
    /// The sealed descriptor of a MATCHED selfie (the template on consent).
    public var embedding: KeptEmbedding?
    /// Re-authentication offered LDA already (a fallback goes to the password).
    public var ldaTried = false
    /// The review triggers of the last judged document and selfie (``WorkflowPolicy/reviewTriggers(document:judged:)``);
    /// nil before judging. A KYC with any ends under review (RelyingParty/Review.swift).
    public var reviewDocument: [ReviewTrigger]?
    public var reviewSelfie: [ReviewTrigger]?
    /// The sealed best frame of the last selfie, kept for the reviewer when a trigger applies.
    public var selfieMedia: String?
    /// The presence assurance of the last judged selfie (Workflows/Presence.swift): illumination
    /// followed, a fallback, or not checked.
    public var presenceAssurance: PresenceAssurance?

    /// Every review trigger that holds for the run now.
    public var reviewTriggers: [ReviewTrigger] { (reviewDocument ?? []) + (reviewSelfie ?? []) }
}

/// Where the selfie's face reference came from (audited as `reference`).
public enum PortraitSource: String, Codable, Sendable, Equatable {
    /// The eMRTD chip's DG2 (passive authentication passed, DG1 equal to the printed MRZ).
    case chip
    /// The portrait cropped from the data page.
    case page
}

/// A descriptor sealed in `idv_media` for enrolment.
public struct KeptEmbedding: Codable, Sendable, Equatable {
    public var mediaID: String
    public var model: String
    public var dimensions: Int
}

/// An IDV flow's state: the run and where it waits.
public struct IDVState<Step: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public var run: IDVRun
    public var step: Step
}

/// The document step's places.
public enum DocumentStep: Codable, Sendable, Equatable { case start, upload, confirm }

/// The selfie step's places; the active liveness challenge (server-issued) rides with them.
public enum SelfieStep: Codable, Sendable, Equatable {
    case start(challenge: LivenessChallenge?)
    case upload(challenge: LivenessChallenge?)
    /// `getIDVSelfieConfirmation` with the action keys offered.
    case confirm(offered: [IDVActionKey])
}

/// Re-authentication's places (opt-in / opt-out, seed 004).
public enum ReauthStep: Codable, Sendable, Equatable { case lda, password }

/// The typed answers of the IDV flows.
public enum IDVInput: Sendable {
    case confirm(Bool)
    case cancel
    /// Document pages, and the chip files sent beside them (nil: none).
    case pages([Data], chip: ChipData?)
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
/// Each flow is a struct with its `kind`, the services, and its own `Step` enum.
protocol IDVFlowSteps: Flow where State == IDVState<Step>, Input == IDVInput {
    associatedtype Step: Codable & Sendable & Equatable
    var kind: IDVKind { get }
    var services: IDVServices { get }
}

extension IDVFlowSteps {
    public var name: String { kind.name }
    public var startableByClient: Bool { kind != .activation }
    public var workflow: IDVWorkflow? { kind.workflow }
    var policy: WorkflowPolicy { services.policy }

    public func startSubject(_ input: JSONValue, session: SessionFacts) -> String? {
        kind == .activation ? input["user_id"]?.stringValue : session.userID
    }

    public func subject(_ state: State, input: Input?) -> String? { state.run.userID }

    // MARK: Start

    /// The run of a start: the user (activation: from the caller; else the logged-in session), the
    /// reason (1–128 characters), the audit transaction id. Throws 1004 / 1001.
    func newRun(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> (IDVRun, [Effect]) {
        let uid: String
        var workflowRaw = kind.workflow?.rawValue ?? 0
        if kind == .activation {
            guard let u = input["user_id"]?.stringValue else { throw IDVError(.internalError, "activation IDV needs the user id") }
            uid = u
            workflowRaw = input["idv_workflow"]?.intValue ?? 0
        } else {
            guard let u = facts.session.userID, facts.session.loggedIn else { throw IDVError(.unauthenticated, "Log in before starting \(name)") }
            uid = u
        }
        var reason = kind.defaultReason
        if let r = input["reason"] {
            guard let s = r.stringValue, !s.isEmpty, s.count <= 128 else {
                throw IDVError(.malformedRequest, "payload.reason must be a string of 1–128 characters")
            }
            reason = s
        }
        let run = IDVRun(userID: uid, reason: reason, txn: "txn_" + env.newID(), startedAt: facts.now, idvWorkflow: workflowRaw)
        return (run, [audit(run, "flow_started", ["orchestration_use_case": .string(kind.useCase.rawValue), "idv_workflow": .integer(workflowRaw)])])
    }

    // MARK: Helpers

    func docLeft(_ r: IDVRun) -> Int { max(0, policy.documentAttempts - r.documentAttempts) }
    func selfieLeft(_ r: IDVRun) -> Int { max(0, policy.selfieAttempts - r.selfieAttempts) }
    func reauthLeft(_ r: IDVRun) -> Int { max(0, policy.reauthAttempts - r.reauthAttempts) }
    /// `attempts_left` of server biometric authentication: the limit minus the user's consecutive
    /// failures within the lockout window.
    func biometricAttemptsLeft(_ facts: Facts) -> Int { max(0, policy.biometricAttempts - facts.biometricFailures) }

    static func status(_ code: Int, _ msg: String) -> RequestStatus { RequestStatus(statusCode: code, statusMessage: msg) }

    func spec(_ name: String, _ r: IDVRun, attemptsLeft: Int, payload: JSONValue = .emptyObject, mode: Int? = nil,
              error: IDVError? = nil, status: RequestStatus? = nil) -> ChallengeSpec {
        ChallengeSpec(name: name, mode: mode ?? kind.mode, workflow: r.idvWorkflow, attemptsLeft: attemptsLeft, userID: r.userID,
                      payload: payload, error: error, status: status)
    }

    /// An `idv.<action>` audit entry of the run (ids, codes, scores).
    func audit(_ r: IDVRun, _ action: String, _ details: [String: JSONValue] = [:]) -> Effect {
        var d = details
        d["idv_audit_transaction_id"] = .string(r.txn)
        d["flow"] = .string(name)
        return .audit(AuditAction("idv.\(action)"), userID: r.userID, details: d)
    }

    /// The flow expired (`idv.flow_timeout_seconds` since its start)?
    func expired(_ r: IDVRun, _ facts: Facts) -> Bool { facts.now >= r.startedAt + policy.flowTimeoutSeconds }

    // MARK: Parsing (malformed answers are refused here, before anything is measured)

    static func confirm(_ a: WireAnswer, _ key: String) throws -> Bool {
        guard let b = a.payload[key]?.boolValue else { throw IDVError(.malformedRequest, "payload.\(key) (boolean) is required") }
        return b
    }

    static func isCancel(_ a: WireAnswer) throws -> Bool {
        guard let c = a.payload["cancel"] else { return false }
        guard let b = c.boolValue else { throw IDVError(.malformedRequest, "payload.cancel must be a boolean") }
        return b
    }

    /// Decodes one base64 image; refuses (nothing committed) what is not base64.
    static func image(_ v: JSONValue?, _ path: String) throws -> Data {
        guard let s = v?.stringValue else { throw IDVError(.malformedRequest, "\(path) (base64 string) is required") }
        guard let d = Data(base64Encoded: s, options: .ignoreUnknownCharacters), !d.isEmpty else {
            throw IDVError(.malformedRequest, "\(path) is not base64 image data")
        }
        return d
    }

    func parseDocumentStart(_ a: WireAnswer) throws -> IDVInput { .confirm(try Self.confirm(a, "is_confirm")) }

    /// The document pages of an upload answer, by `page_index`; 1001 when malformed.
    func parsePages(_ a: WireAnswer) throws -> IDVInput {
        if try Self.isCancel(a) { return .cancel }
        guard let pagesJSON = a.payload["pages"]?.arrayValue, !pagesJSON.isEmpty else {
            throw IDVError(.malformedRequest, "payload.pages (non-empty array) is required")
        }
        guard pagesJSON.count <= policy.maxPages else { throw IDVError(.malformedRequest, "at most \(policy.maxPages) pages per upload") }
        var pages = [Data](repeating: Data(), count: pagesJSON.count)
        for (i, p) in pagesJSON.enumerated() {
            let idx = p["page_index"]?.intValue ?? i
            guard idx >= 0, idx < pagesJSON.count, pages[idx].isEmpty else {
                throw IDVError(.malformedRequest, "payload.pages[\(i)].page_index must be unique and in 0..<\(pagesJSON.count)")
            }
            pages[idx] = try Self.image(p["image"], "payload.pages[\(i)].image")
        }
        return .pages(pages, chip: try Self.chip(a.payload["chip"]))
    }

    /// The optional `payload.chip` of a document upload (IDVCore ``ChipFilesPayload``: base64 EF.SOD,
    /// EF.COM, data groups 1…16; 4 MiB a file, 8 MiB together); 1001 when malformed — nothing stored.
    static func chip(_ v: JSONValue?) throws -> ChipData? {
        guard let v, !v.isNull else { return nil }
        guard v.objectValue != nil else { throw IDVError(.malformedRequest, "payload.chip must be an object {sod, com, data_groups}") }
        let p: ChipFilesPayload
        do { p = try v.decode(ChipFilesPayload.self) } catch {
            throw IDVError(.malformedRequest, "payload.chip must be {\"sod\": base64, \"com\": base64, \"data_groups\": {\"1\": base64, …}}")
        }
        do {
            let d = try p.decoded()
            return ChipData(sod: d.sod, com: d.com, dataGroups: d.dataGroups)
        } catch {
            throw IDVError(.malformedRequest, "payload.chip: \(error.description)")
        }
    }

    func parseSelfieStart(_ a: WireAnswer) throws -> IDVInput {
        let ok = try Self.confirm(a, "is_confirm")
        if let b = a.payload["use_back_camera"], b.boolValue == nil { throw IDVError(.malformedRequest, "payload.use_back_camera must be a boolean") }
        return .confirm(ok)
    }

    /// The selfie frames of an upload answer, its frame rate (`fps`: frames per second, a number
    /// in (0, 240]; absent: the analyser's default), its `meta_data` (an object, sanitised:
    /// ``SelfieCaptureMetadata/init(sanitising:)``) and its presence against the pending challenge
    /// `ch` (`frame_times_ms`, or a decline: Workflows/Presence.swift); 1001 when malformed.
    func parseFrames(_ a: WireAnswer, _ ch: PendingChallenge) throws -> IDVInput {
        if try Self.isCancel(a) { return .cancel }
        if let decline = try Self.presenceDecline(a, ch) {
            guard a.payload["frames"] == nil else { throw IDVError(.malformedRequest, "payload.presence declines the sequence: send no frames with it") }
            return .presenceDeclined(how: decline.rawValue)
        }
        guard let framesJSON = a.payload["frames"]?.arrayValue, !framesJSON.isEmpty else {
            throw IDVError(.malformedRequest, "payload.frames (non-empty array of base64 images) is required")
        }
        guard framesJSON.count <= policy.maxFrames else { throw IDVError(.malformedRequest, "at most \(policy.maxFrames) frames per upload") }
        let frames = try framesJSON.enumerated().map { try Self.image($0.element, "payload.frames[\($0.offset)]") }
        var fps: Double?
        if let v = a.payload["fps"], !v.isNull {
            guard let x = v.doubleValue, x > 0, x <= 240 else {
                throw IDVError(.malformedRequest, "payload.fps must be a number of frames per second in (0, 240]")
            }
            fps = x
        }
        var meta: SelfieCaptureMetadata?
        if let v = a.payload["meta_data"], !v.isNull {
            guard let m = SelfieCaptureMetadata(sanitising: v) else { throw IDVError(.malformedRequest, "payload.meta_data must be an object") }
            meta = m
        }
        let (presence, declined) = try Self.capturePresence(a, ch, frameCount: frames.count)
        guard let presence else { return .presenceDeclined(how: declined == nil ? "declined" : "no_frame_times") }
        return .frames(frames, framesPerSecond: fps, metaData: meta, presence: presence)
    }

    func parseReauth(_ step: ReauthStep, _ a: WireAnswer, _ ch: PendingChallenge) throws -> IDVInput {
        if try Self.isCancel(a) { return .cancel }
        switch step {
        case .password:
            guard let pw = a.payload["password"]?.stringValue, !pw.isEmpty, pw.count <= PasswordPolicy.maxAnswerBytes,
                  pw.utf8.count <= PasswordPolicy.maxAnswerBytes else {
                throw IDVError(.malformedRequest, "payload.password (string) or payload.cancel = true is required")
            }
            return .password(pw)
        case .lda:
            if a.payload["fallback"]?.stringValue == "password" { return .ldaFallback }
            guard let sig = a.payload["signature"]?.stringValue else {
                throw IDVError(.malformedRequest, "payload.signature (base64), payload.fallback = \"password\" or payload.cancel = true is required")
            }
            return .ldaSignature(sig, challengeID: ch.challengeID, nonce: ch.payload["nonce"]?.stringValue)
        }
    }

    // MARK: Document step

    func askDocStart(_ r: IDVRun, status: RequestStatus? = nil) -> StepResult<DocumentStep> {
        .ask(.start, spec(WireName.getIDVDocumentScanProcessStartConfirmation, r, attemptsLeft: docLeft(r),
                          payload: ["idv_workflow": .integer(r.idvWorkflow)], status: status))
    }

    func askDocUpload(_ r: IDVRun, error: IDVError? = nil) -> StepResult<DocumentStep> {
        .ask(.upload, spec(WireName.uploadIDVDocumentPages, r, attemptsLeft: docLeft(r),
                           payload: ["max_pages": .integer(policy.maxPages), "media_types": ["image/jpeg", "image/png"]], error: error))
    }

    /// `getIDVDocumentScanProcessStartConfirmation` answered.
    func documentStart(_ r: IDVRun, _ input: IDVInput) -> StepResult<DocumentStep> {
        guard case .confirm(true) = input else { return .end(.cancelled(preLogin: kind.preLogin)) }
        if docLeft(r) <= 0 { return .end(.exhausted("document")) }
        return askDocUpload(r)
    }

    /// `uploadIDVDocumentPages` answered: the read document and its judgement, or what to do.
    func documentUpload(_ r: inout IDVRun, _ input: IDVInput, _ evidence: Evidence, _ facts: Facts, _ effects: inout [Effect])
        throws -> (StepResult<DocumentStep>, (DocumentVerification, DocumentJudgement)?) {
        if case .cancel = input { return (.end(.cancelled(preLogin: kind.preLogin)), nil) }
        guard let read = evidence.document else { throw IDVError(.internalError, "the document was not read") }
        r.documentAttempts += 1
        switch read {
        case let .failure(e):
            effects.append(audit(r, "document_read", ["result": .string("unreadable"), "error_code": .integer(e.longErrorCode),
                                                      "attempt": .integer(r.documentAttempts)]))
            if docLeft(r) <= 0 { return (.end(.exhausted("document")), nil) }
            return (askDocUpload(r, error: e), nil)
        case let .success(t):
            let doc = t.value
            let judged = policy.judge(doc, today: WorkflowPolicy.utcDay(facts.now), needsPortrait: kind != .documentScan)
            r.documentStatus = judged.status
            effects.append(audit(r, "document_read", ["result": .string(judged.status.rawValue), "attempt": .integer(r.documentAttempts),
                                                      "errors": .integer(judged.errors.count), "warnings": .integer(judged.warnings.count),
                                                      "format": .string(doc.fields.format), "duration_ms": .integer(t.milliseconds),
                                                      "chip": doc.chip.map { .string(policy.chipReason($0).rawValue) } ?? .null]))
            return (.next, (doc, judged))
        }
    }

    // MARK: Selfie step

    func askSelfieStart(_ r: IDVRun, now: Int, status: RequestStatus? = nil) -> StepResult<SelfieStep> {
        var payload: [String: JSONValue] = ["idv_workflow": .integer(r.idvWorkflow)]
        var challenge: LivenessChallenge?
        if policy.activeLiveness {
            // A fresh server-issued challenge for every capture; kept in the (sealed) flow state.
            challenge = issueChallenge(now: now)
            payload["liveness_challenge"] = challenge.flatMap { try? JSONValue(encoding: $0) } ?? .null
        }
        return .ask(.start(challenge: challenge), spec(WireName.getIDVSelfieProcessStartConfirmation, r, attemptsLeft: selfieLeft(r),
                                                       payload: .object(payload), status: status))
    }

    /// A fresh active liveness challenge from the analyser (nil without one).
    func issueChallenge(now: Int) -> LivenessChallenge? {
        services.selfies?.issueChallenge(now: now, durationSeconds: policy.activeChallengeDurationSeconds,
                                         deadlineSeconds: policy.activeChallengeDeadlineSeconds)
    }

    /// `uploadIDVSelfieFrames`, with the pending capture's challenge (issued now when there is none:
    /// a challenge is used up by the verification that evaluates it) and its presence: `presence`
    /// (a fallback), else a fresh illumination sequence (``freshPresence(now:)``) — every ask has its own.
    func askSelfieUpload(_ r: IDVRun, challenge: LivenessChallenge?, now: Int, error: IDVError? = nil, status: RequestStatus? = nil,
                         livenessReasons: [String]? = nil, presence: PresenceChallengePayload? = nil) -> StepResult<SelfieStep> {
        var payload: [String: JSONValue] = ["max_frames": .integer(policy.maxFrames), "media_types": ["image/jpeg", "image/png"]]
        var c = challenge
        if policy.activeLiveness, c == nil { c = issueChallenge(now: now) }
        if policy.activeLiveness || c != nil {
            payload["liveness_challenge"] = c.flatMap { try? JSONValue(encoding: $0) } ?? .null
        }
        if let p = presence ?? freshPresence(now: now), let v = try? JSONValue(encoding: p) {
            payload[PresenceChallengePayload.key] = v
        }
        if let livenessReasons { payload["liveness_reasons"] = .array(livenessReasons.map { .string($0) }) }
        return .ask(.upload(challenge: c), spec(WireName.uploadIDVSelfieFrames, r, attemptsLeft: selfieLeft(r), payload: .object(payload),
                                               error: error, status: status))
    }

    /// `getIDVSelfieProcessStartConfirmation` answered.
    func selfieStart(_ r: IDVRun, challenge: LivenessChallenge?, _ input: IDVInput, now: Int) -> StepResult<SelfieStep> {
        guard case .confirm(true) = input else { return .end(.cancelled(preLogin: kind.preLogin)) }
        if selfieLeft(r) <= 0 { return .end(.exhausted("selfie")) }
        return askSelfieUpload(r, challenge: challenge, now: now)
    }

    /// `uploadIDVSelfieFrames` answered: the evidence and the policy's judgement, or what to do.
    /// Seals the descriptor of a MATCHED selfie when the flow can enrol it.
    func selfieUpload(_ r: inout IDVRun, challenge: LivenessChallenge?, _ input: IDVInput, _ evidence: Evidence, _ facts: Facts,
                      _ env: FlowEnv, _ effects: inout [Effect]) throws -> (StepResult<SelfieStep>, (SelfieEvidence, SelfieJudgement)?) {
        if case .cancel = input { return (.end(.cancelled(preLogin: kind.preLogin)), nil) }
        // A client that did not flash the issued sequence: the policy's fallback, no attempt used.
        if case let .presenceDeclined(how) = input { return (declinePresence(r, how: how, now: facts.now, &effects), nil) }
        guard let analysed = evidence.selfie, let reference = evidence.reference else { throw IDVError(.internalError, "the selfie was not analysed") }
        var presence = CapturePresence.none
        if case let .frames(_, _, _, p) = input { presence = p }
        // A fallback head-movement challenge is not carried over to a new ask (it gets fresh illumination).
        let keep = policy.activeLiveness ? challenge : nil
        r.selfieAttempts += 1
        // Active liveness: judged against the challenge the server issued and kept (never one from the client).
        if policy.activeLiveness, challenge == nil { throw IDVError(.internalError, "no liveness challenge was issued for this capture") }
        switch analysed {
        case let .failure(e):
            effects.append(audit(r, "selfie_verified", ["result": .string("unusable"), "error_code": .integer(e.longErrorCode),
                                                        "attempt": .integer(r.selfieAttempts)]))
            if selfieLeft(r) <= 0 { return (.end(.exhausted("selfie")), nil) }
            return (askSelfieUpload(r, challenge: keep, now: facts.now, error: e), nil)
        case let .success(t):
            let e = t.value
            // Judged frames are kept as digests: the same bytes uploaded again fail as a replay.
            if policy.presence.replaySeconds > 0, !evidence.captureDigests.isEmpty {
                effects.append(.recordCaptureDigests(evidence.captureDigests, expiresAt: facts.now + policy.presence.replaySeconds))
            }
            // A capture too dark, bright, blurred or small to decide on is asked again, not judged; one
            // with the face turned away is asked again instead of a match verdict, once it is live.
            func recapture(_ issue: CaptureIssue) -> (StepResult<SelfieStep>, (SelfieEvidence, SelfieJudgement)?) {
                let error = IDVError(issue.errorCode)
                effects.append(audit(r, "selfie_verified", ["result": .string("recapture"), "capture_issue": .string(issue.rawValue),
                                                            "error_code": .integer(error.longErrorCode), "attempt": .integer(r.selfieAttempts)]))
                r.embedding = nil
                if selfieLeft(r) <= 0 { return (.end(.exhausted("selfie")), nil) }
                return (askSelfieUpload(r, challenge: keep, now: facts.now, error: error), nil)
            }
            if let issue = policy.recapture(e) { return recapture(issue) }
            let j = policy.judge(e, reference: reference, challenge: challenge, presence: presence, replayedFrames: evidence.replayedFrames,
                                 now: facts.now)
            if let issue = policy.recapture(e, after: j) { return recapture(issue) }
            r.verdict = j.verdict
            r.faceMatchScore = j.faceMatchScore.map { ($0 * 1000).rounded() / 1000 }
            r.livenessScore = j.livenessScore
            r.presenceAssurance = j.assurance
            let illumination = e.presence.measurement
            effects.append(audit(r, "selfie_verified", [
                "presence": .string(presence.illumination == nil ? "not_asked" : e.presence.name),   // with a fallback: not asked
                "presence_assurance": .string(j.assurance.rawValue),
                "presence_score": illumination?.score.map { .number(($0 * 1000).rounded() / 1000) } ?? .null,
                "presence_p": illumination?.pValue.map { .number($0) } ?? .null,
                "presence_steps": illumination.map { .string("\($0.stepsMeasured)/\($0.steps)") } ?? .null,
                "replayed_frames": .integer(evidence.replayedFrames),
                "result": .string(j.verdict.rawValue), "attempt": .integer(r.selfieAttempts),
                "face_match_score": r.faceMatchScore.map { .number($0) } ?? .null, "liveness_score": .integer(j.livenessScore),
                "reasons": .array(j.cues.prefix(8).map { .string($0.rawValue) }), "reason": .string(j.reason.rawValue),
                "reference": r.portraitSource.map { .string($0.rawValue) } ?? .null,
                "frames_per_second": .number(e.framesPerSecond), "duration_ms": .integer(t.milliseconds),
                "pad_rule": e.pad.map { .string($0.rule) } ?? .null,
                "texture_score": e.pad?.textureScore.map { .number(($0 * 1000).rounded() / 1000) } ?? .null,
                "motion_only_score": e.pad?.motionOnlyScore.map { .integer($0) } ?? .null,
                "match_kind": e.match?.kind.map { .string($0.rawValue) } ?? .null,
                "match_threshold": j.matchThreshold.map { .number($0) } ?? .null, "template_frames": .integer(e.templateFrames),
            ]))
            // The descriptor (for a template on consent) is sealed, never in the state — only by the
            // flows that can enrol it (server biometric authentication never creates a template).
            if j.verdict == .matched, !e.embedding.isEmpty, kind != .serverBiometric {
                let id = env.newID()
                effects.append(.sealMedia(id: id, kind: .embedding, bytes: e.template.isEmpty ? SelfieEvidence.version1Template(e.embedding) : e.template))
                r.embedding = KeptEmbedding(mediaID: id, model: e.model, dimensions: e.embedding.count)
            } else {
                r.embedding = nil
            }
            return (.next, (e, j))
        }
    }

    /// `json` with `value` set at `path` (objects along the path must exist).
    static func setting(_ json: JSONValue, _ path: ArraySlice<String>, _ value: JSONValue) -> JSONValue {
        guard let key = path.first, var o = json.objectValue else { return json }
        if path.count == 1 { o[key] = value } else if let inner = o[key] { o[key] = setting(inner, path.dropFirst(), value) }
        return .object(o)
    }

    // MARK: Re-authentication (seed 004: LDA, else the password)

    func askReauth(_ r: inout IDVRun, facts: Facts, env: FlowEnv, error: IDVError? = nil) -> StepResult<ReauthStep> {
        if !r.ldaTried, let d = facts.device, d.userID == r.userID, d.ldaEnabled {
            r.ldaTried = true
            return .ask(.lda, spec(WireName.getDeviceSignature, r, attemptsLeft: 1, payload: ["nonce": .string(env.nonce())]))
        }
        let left = min(reauthLeft(r), facts.user.map { AuthFlow.passwordsLeft($0, clientFailures: facts.client.passwordFailures, facts: facts, env: env) } ?? reauthLeft(r))
        return .ask(.password, spec(WireName.getPassword, r, attemptsLeft: left, error: error,
                                    status: error.map { Self.status(RequestStatus.unableToProcess, $0.errorString) }
                                        ?? Self.status(RequestStatus.success, "Success")))
    }

    /// A re-authentication answer: `.next` when the user proved it (audited), else what to do.
    func reauth(_ r: inout IDVRun, _ input: IDVInput, _ evidence: Evidence, _ facts: Facts, _ env: FlowEnv,
                _ effects: inout [Effect]) -> StepResult<ReauthStep> {
        switch input {
        case .cancel:
            return .end(.cancelled(preLogin: false))
        case .ldaFallback:
            return askReauth(&r, facts: facts, env: env)
        case let .ldaSignature(sig, cid, nonce):
            guard AuthFlow.signatureValid(sig, challengeID: cid, nonce: nonce, facts: facts, env: env) else {
                effects.append(audit(r, "reauth_failed", ["method": "lda"]))
                return askReauth(&r, facts: facts, env: env, error: IDVError(.deviceSignatureInvalid, "LDA failed; enter the password instead"))
            }
            effects.append(audit(r, "reauthenticated", ["method": "lda"]))
            return .next
        case .password:
            // The same count, lock and back-off as the login's password (AuthFlow.wrongPassword).
            func unavailable(_ e: IDVError) -> StepResult<ReauthStep> {
                .end(Ending(outcome: .userUnavailable, error: e, statusCode: RequestStatus.failed, statusMessage: e.errorString, success: false))
            }
            guard let user = facts.user, user.state != .pendingActivation else { return unavailable(IDVError(.userLocked)) }
            if let refusal = AuthFlow.lockRefusal(user, facts: facts) {
                effects += refusal.effects
                return unavailable(refusal.error)
            }
            guard evidence.passwordMatches == true else {
                r.reauthAttempts += 1
                let wrong = AuthFlow.wrongPassword(user, facts: facts, env: env)
                effects += wrong.effects
                effects.append(audit(r, "reauth_failed", ["method": "password", "attempts_left": .integer(reauthLeft(r))]))
                if let refusal = wrong.refusal { return unavailable(refusal) }
                if reauthLeft(r) <= 0 { return .end(.exhausted("password")) }
                return askReauth(&r, facts: facts, env: env, error: IDVError(.invalidPassword))
            }
            effects += AuthFlow.rightPassword(user, facts: facts)
            effects.append(audit(r, "reauthenticated", ["method": "password"]))
            return .next
        default:
            return .end(.cancelled(preLogin: false))
        }
    }

    /// A consent decision recorded (and audited); returns its id.
    func recordConsent(_ r: IDVRun, granted: Bool, facts: Facts, env: FlowEnv, _ effects: inout [Effect]) -> String {
        let id = env.newID()
        effects.append(.recordConsent(ConsentRecord(consentID: id, userID: r.userID, kind: ConsentRecord.biometricTemplate, granted: granted,
                                                    sessionID: facts.session.sessionID, runID: env.runID, flow: name, idvWorkflow: r.idvWorkflow,
                                                    textVersion: policy.consentTextVersion, recordedAt: facts.now)))
        effects.append(audit(r, "consent_recorded", ["consent_id": .string(id), "granted": .bool(granted), "text_version": .string(policy.consentTextVersion)]))
        effects.append(.publish(.consentChanged, userID: r.userID, data: WebhookEventData(
            flow: name, idvWorkflow: r.idvWorkflow, idvAuditTransactionID: r.txn, consentID: id, consentKind: ConsentRecord.biometricTemplate,
            granted: granted, consentTextVersion: policy.consentTextVersion)))
        return id
    }

    /// Creates (or replaces) the user's template from the sealed descriptor of this run — only
    /// with a recorded consent.
    func enrol(_ r: inout IDVRun, consentID: String, _ effects: inout [Effect]) throws {
        guard let e = r.embedding else { throw IDVError(.internalError, "no face descriptor kept for enrolment") }
        effects.append(.saveTemplate(userID: r.userID, fromMedia: e.mediaID, model: e.model, consentID: consentID))
        r.templateCreated = true
        effects.append(audit(r, "template_created", ["consent_id": .string(consentID), "dimensions": .integer(e.dimensions)]))
        effects.append(.publish(.templateCreated, userID: r.userID, data: WebhookEventData(
            flow: name, idvWorkflow: r.idvWorkflow, idvAuditTransactionID: r.txn, consentID: consentID, templateModel: e.model)))
    }

    // MARK: Endings

    func auditInfo(_ r: IDVRun, now: Int, success: Bool) -> IDVAuditInfo {
        IDVAuditInfo(reason: r.reason, auditMetrics: AuditMetrics(startTimestamp: r.startedAt, endTimestamp: now),
                     status: success ? .success : .failure, idvAuditTransactionID: r.txn, orchestrationUseCase: kind.useCase)
    }

    /// The transaction's audit record (ids, codes, scores — no images or personal data) and the
    /// release of the run's media.
    /// `runOutcome`: the flow run's own outcome when it differs from the transaction record's (a run
    /// abandoned by reset or log-off is recorded `abandoned` in the IDV transaction, its run `reset` /
    /// `logged_off`): the webhook carries the run's, as the relying-party read API shows it.
    func closeTransaction(_ r: IDVRun, _ e: Ending, now: Int, runID: String, runOutcome: FlowOutcome? = nil) -> [Effect] {
        let keep = policy.mediaRetentionSeconds > 0 ? now + policy.mediaRetentionSeconds : nil
        // A run under review keeps its media held (no expiry) until the reviewer decides.
        let release: [Effect] = e.outcome == .pendingReview ? [] : [.releaseMedia(keepUntil: keep)]
        // The relying party's webhook (docs/WEBHOOKS.md): the run's outcome and reason codes, no
        // scores and no personal data. The template-status check only reads: no event.
        let decided: [Effect] = kind == .templateStatus ? [] : [.publish(.verificationDecided, userID: r.userID, data: WebhookEventData(
            flow: name, idvWorkflow: r.idvWorkflow, runID: runID, idvAuditTransactionID: r.txn, outcome: runOutcome ?? e.outcome, success: e.success,
            longErrorCode: e.error.longErrorCode, statusCode: e.statusCode, documentStatus: r.documentStatus, verdict: r.verdict))]
        return decided + release + [audit(r, "transaction", [
            "orchestration_use_case": .string(kind.useCase.rawValue), "idv_workflow": .integer(r.idvWorkflow), "run_id": .string(runID),
            "start_timestamp": .integer(r.startedAt), "end_timestamp": .integer(now),
            "outcome": .string(e.outcome.rawValue), "status": .string(e.success ? "SUCCESS" : "FAILURE"),
            "long_error_code": .integer(e.error.longErrorCode), "status_code": .integer(e.statusCode),
            "document_status": r.documentStatus.map { .string($0.rawValue) } ?? .null, "verdict": r.verdict.map { .string($0.rawValue) } ?? .null,
            "face_match_score": r.faceMatchScore.map { .number($0) } ?? .null, "liveness_score": r.livenessScore.map { .integer($0) } ?? .null,
            "document_attempts": .integer(r.documentAttempts), "selfie_attempts": .integer(r.selfieAttempts),
            "consent": r.consent.map { .bool($0) } ?? .null, "template_created": .bool(r.templateCreated),
            "scan_id": r.scanID.map { .string($0) } ?? .null,
            "review_triggers": r.reviewTriggers.isEmpty ? .null : .array(r.reviewTriggers.map { .string($0.rawValue) }),
            "presence_assurance": r.presenceAssurance.map { .string($0.rawValue) } ?? .null,
        ])]
    }

    /// The client started flow `next` while this one waited (`POST /v1/flows/{name}`, issue #15;
    /// seed 000 §1.5/§1.6: a Close that only navigates back leaves the flow open): ended with its
    /// terminal event as a cancel ends it (240), audited `idv.superseded`. Activation (pre-login)
    /// is never superseded.
    public func supersede(_ state: State, by next: String, facts: Facts, env: FlowEnv) throws -> Transition<State>? {
        guard kind != .activation else { return nil }
        let r = state.run
        return try endFor(r, .superseded, facts: facts, env: env).after([audit(r, "superseded", ["by_flow": .string(next)])])
    }

    /// Reset, log-off or session end: the transaction is recorded (abandoned, or expired/revoked
    /// with the run's media dropped at once, whatever `idv.media_retention_seconds` says).
    public func abandon(_ state: State, reason: AbandonReason, facts: Facts, env: FlowEnv) -> [Effect] {
        switch reason {
        case .expired, .revoked:
            let error = reason == .expired ? IDVError(.sessionExpired) : IDVError.none
            return closeTransaction(state.run, Ending(outcome: reason.outcome, error: error, statusCode: RequestStatus.failed,
                                                      statusMessage: reason == .expired ? error.errorString : "Session revoked", success: false),
                                    now: facts.now, runID: env.runID) + [.releaseMedia(keepUntil: nil)]
        case .reset, .loggedOff:
            return closeTransaction(state.run, Ending(outcome: .abandoned, error: .none, statusCode: RequestStatus.failed,
                                                      statusMessage: "Abandoned", success: false), now: facts.now, runID: env.runID,
                                    runOutcome: reason.outcome)
        }
    }
}
