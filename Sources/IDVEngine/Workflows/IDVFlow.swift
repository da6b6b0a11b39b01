import Foundation
import IDVCore

/// The five seed flows (plus the template-status check) as one server-side state machine,
/// parameterised by ``Kind``. All state lives in the ``FlowFrame`` (ids, counters, verdicts —
/// never images, names or descriptors: those are sealed in `idv_media`). docs/WORKFLOWS.md gives
/// every challenge, answer and event.
///
/// ```
/// activation/kyc: doc_start → doc_upload → doc_confirm → selfie_start → selfie_upload → selfie_confirm → consent → end
/// document_scan:  doc_start → doc_upload → end (onIDVAdditionalDocumentScan)
/// server_biometric: [template?] → selfie_start → selfie_upload → end (onIDVServerBiometricAuthenticationResult)
/// opt-in:  [no template?] → reauth (LDA | password) → selfie_start → selfie_upload → frame_confirm → end
/// opt-out: [template?] → reauth (LDA | password) → erase → end
/// ```
public struct IDVFlow: Flow {
    public enum Kind: String, Sendable, CaseIterable {
        case activation, kyc, documentScan = "document_scan", serverBiometric = "server_biometric"
        case optIn = "optin", optOut = "optout", templateStatus = "template_status"
    }

    public let kind: Kind
    public let services: IDVServices

    public init(_ kind: Kind, services: IDVServices) {
        self.kind = kind
        self.services = services
    }

    /// Registry names.
    public static func name(_ kind: Kind) -> String {
        switch kind {
        case .activation: return "idv.activation"
        case .kyc: return "idv.postlogin.kyc"
        case .documentScan: return "idv.postlogin.document_scan"
        case .serverBiometric: return "idv.postlogin.server_biometric"
        case .optIn: return "idv.postlogin.optin"
        case .optOut: return "idv.postlogin.optout"
        case .templateStatus: return "idv.template_status"
        }
    }

    public var name: String { Self.name(kind) }
    public var startableByClient: Bool { kind != .activation }
    public var workflow: IDVWorkflow? {
        switch kind {
        case .activation: return .activation
        case .kyc: return .postLoginKYC
        case .documentScan: return .postLoginDocScanOnly
        case .serverBiometric: return .postLoginSelfieBiometric
        case .optIn: return .postLoginOptIn
        case .optOut: return .postLoginOptOut
        case .templateStatus: return nil
        }
    }
    public var uploadChallenges: Set<String> { WireName.uploadChallenges }

    /// Which analysers the kind needs.
    public var needsDocuments: Bool { [.activation, .kyc, .documentScan].contains(kind) }
    public var needsSelfies: Bool { [.activation, .kyc, .serverBiometric, .optIn].contains(kind) }

    var mode: Int {
        switch kind {
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
        switch kind {
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
        switch kind {
        case .activation: return "Activation"
        case .kyc: return "KYC"
        case .documentScan: return "Additional Document Scan"
        case .serverBiometric: return "Server Biometric Authentication"
        case .optIn: return "Biometric Opt-In"
        case .optOut: return "Biometric Opt-Out"
        case .templateStatus: return "Template Status"
        }
    }

    enum Step: String {
        case docStart = "doc_start", docUpload = "doc_upload", docConfirm = "doc_confirm"
        case selfieStart = "selfie_start", selfieUpload = "selfie_upload", selfieConfirm = "selfie_confirm"
        case consent, reauthPassword = "reauth_password", reauthLDA = "reauth_lda", frameConfirm = "frame_confirm"
    }

    /// How a run ended (the flow-run outcome, the audit outcome, the terminal codes).
    struct Ending {
        var outcome: String
        var error: IDVError
        var statusCode: Int
        var statusMessage: String
        var success: Bool
        static func cancelled(preLogin: Bool) -> Ending {
            let e = IDVError(preLogin ? .idvCancelledByUser : .userCancelled)
            return Ending(outcome: "cancelled", error: e, statusCode: RequestStatus.unableToProcess, statusMessage: e.errorString, success: false)
        }
        static func exhausted(_ what: String) -> Ending {
            Ending(outcome: "attempts_exhausted", error: IDVError(.attemptsExhausted, "No \(what) attempts left"),
                   statusCode: RequestStatus.failed, statusMessage: "No \(what) attempts left", success: false)
        }
        static let expired = Ending(outcome: "expired", error: IDVError(.flowExpired), statusCode: RequestStatus.failed,
                                    statusMessage: IDVErrorCode.flowExpired.message, success: false)
    }

    // MARK: Frame data helpers

    func int(_ f: FlowFrame, _ k: String) -> Int { f.data[k]?.intValue ?? 0 }
    func str(_ f: FlowFrame, _ k: String) -> String? { f.data[k]?.stringValue }
    func userID(_ f: FlowFrame) throws -> String {
        guard let u = str(f, "user_id") else { throw IDVError(.internalError, "IDV flow lost its user") }
        return u
    }
    func idvWorkflow(_ f: FlowFrame) -> Int { f.data["idv_workflow"]?.intValue ?? workflow?.rawValue ?? 0 }
    var preLogin: Bool { kind == .activation }
    var policy: WorkflowPolicy { services.policy }

    func store(_ ctx: FlowContext) throws -> any WorkflowStore {
        guard let s = ctx.store as? any WorkflowStore else { throw IDVError(.internalError, "the store does not support IDV workflows") }
        return s
    }

    func docLeft(_ f: FlowFrame) -> Int { max(0, policy.documentAttempts - int(f, "doc_attempts")) }
    func selfieLeft(_ f: FlowFrame) -> Int { max(0, policy.selfieAttempts - int(f, "selfie_attempts")) }
    func reauthLeft(_ f: FlowFrame) -> Int { max(0, policy.reauthAttempts - int(f, "reauth_attempts")) }

    static func status(_ code: Int, _ msg: String) -> RequestStatus { RequestStatus(statusCode: code, statusMessage: msg) }

    func spec(_ name: String, _ f: FlowFrame, attemptsLeft: Int, payload: JSONValue = .emptyObject, mode: Int? = nil,
              error: IDVError? = nil, status: RequestStatus? = nil) -> ChallengeSpec {
        ChallengeSpec(name: name, mode: mode ?? self.mode, workflow: idvWorkflow(f), attemptsLeft: attemptsLeft, userID: str(f, "user_id"),
                      payload: payload, error: error, status: status)
    }

    func auditStep(_ ctx: FlowContext, _ f: FlowFrame, _ action: String, _ details: [String: JSONValue] = [:]) throws {
        var d = details
        d["idv_audit_transaction_id"] = f.data["txn"] ?? .null
        d["flow"] = .string(name)
        try ctx.audit("idv.\(action)", userID: str(f, "user_id"), d)
    }

    // MARK: Start

    public func start(_ ctx: FlowContext, frame: inout FlowFrame, input: JSONValue) throws -> FlowStep {
        let uid: String
        if kind == .activation {
            guard let u = input["user_id"]?.stringValue else { throw IDVError(.internalError, "activation IDV needs the user id") }
            uid = u
            frame.data["idv_workflow"] = .integer(input["idv_workflow"]?.intValue ?? 0)
        } else {
            guard let u = ctx.session.userID, ctx.session.loggedIn else { throw IDVError(.unauthenticated, "Log in before starting \(name)") }
            uid = u
        }
        var reason = defaultReason
        if let r = input["reason"] {
            guard let s = r.stringValue, !s.isEmpty, s.count <= 128 else {
                throw IDVError(.malformedRequest, "payload.reason must be a string of 1–128 characters")
            }
            reason = s
        }
        frame.data["user_id"] = .string(uid)
        frame.data["reason"] = .string(reason)
        frame.data["txn"] = .string("txn_" + ctx.crypto.randomID())
        frame.data["started_at"] = .integer(ctx.now)
        _ = try? store(ctx).purgeExpiredMedia(now: ctx.now)
        try auditStep(ctx, frame, "flow_started", ["orchestration_use_case": .string(useCase.rawValue), "idv_workflow": .integer(idvWorkflow(frame))])

        let ws = try store(ctx)
        switch kind {
        case .activation:
            let wf = idvWorkflow(frame)
            // Variants "with template" (1, 2, 4) re-prove identity against the stored template.
            if [1, 2, 4].contains(wf), try ws.biometricTemplate(userID: uid) != nil {
                frame.data["against_template"] = .bool(true)
                return askSelfieStart(ctx, &frame)
            }
            return askDocStart(ctx, &frame)
        case .kyc, .documentScan:
            return askDocStart(ctx, &frame)
        case .templateStatus:
            let exists = try ws.biometricTemplate(userID: uid) != nil
            let code = exists ? RequestStatus.success : RequestStatus.noTemplate
            let msg = exists ? "Success" : "No biometric template exists for the user"
            let payload = BiometricTemplateStatus(statusCode: code, statusMessage: msg, result: exists,
                                                  attemptsLeft: try biometricAttemptsLeft(ctx, uid), userID: uid)
            frame.data["status_code"] = .integer(code)
            return try end(ctx, &frame, Ending(outcome: exists ? "template_exists" : "no_template", error: .none, statusCode: code,
                                               statusMessage: msg, success: true), payload: try JSONValue(encoding: payload))
        case .serverBiometric:
            guard try ws.biometricTemplate(userID: uid) != nil else {
                frame.data["status_code"] = .integer(RequestStatus.noTemplate)
                return try endBiometric(ctx, &frame, Ending(outcome: "no_template", error: IDVError(.templateNotFound), statusCode: RequestStatus.noTemplate,
                                                           statusMessage: IDVErrorCode.templateNotFound.message, success: false))
            }
            if try biometricAttemptsLeft(ctx, uid) <= 0 {
                return try endBiometric(ctx, &frame, .exhausted("biometric authentication"))
            }
            return askSelfieStart(ctx, &frame)
        case .optIn:
            if try ws.biometricTemplate(userID: uid) != nil {
                return try end(ctx, &frame, Ending(outcome: "template_exists", error: IDVError(.templateExists), statusCode: RequestStatus.unableToProcess,
                                                   statusMessage: IDVErrorCode.templateExists.message, success: false))
            }
            return try askReauth(ctx, &frame)
        case .optOut:
            if try ws.biometricTemplate(userID: uid) == nil {
                return try end(ctx, &frame, Ending(outcome: "no_template", error: .none, statusCode: RequestStatus.noTemplate,
                                                   statusMessage: IDVErrorCode.templateNotFound.message, success: false))
            }
            return try askReauth(ctx, &frame)
        }
    }

    /// `attempts_left` of server biometric authentication: the limit minus the user's consecutive
    /// failures within the lockout window.
    func biometricAttemptsLeft(_ ctx: FlowContext, _ uid: String) throws -> Int {
        let outcomes = try store(ctx).flowOutcomes(userID: uid, flow: Self.name(.serverBiometric), since: ctx.now - policy.biometricLockoutSeconds)
        var failures = 0
        for o in outcomes {
            if o == "matched" { break }
            if o == "not_matched" || o == "liveness_failed" { failures += 1 }
        }
        return max(0, policy.biometricAttempts - failures)
    }

    // MARK: Asks

    func askDocStart(_ ctx: FlowContext, _ f: inout FlowFrame, status: RequestStatus? = nil) -> FlowStep {
        f.step = Step.docStart.rawValue
        return .ask(spec(WireName.getIDVDocumentScanProcessStartConfirmation, f, attemptsLeft: docLeft(f),
                         payload: ["idv_workflow": .integer(idvWorkflow(f))], status: status))
    }

    func askDocUpload(_ f: inout FlowFrame, error: IDVError? = nil) -> FlowStep {
        f.step = Step.docUpload.rawValue
        return .ask(spec(WireName.uploadIDVDocumentPages, f, attemptsLeft: docLeft(f),
                         payload: ["max_pages": .integer(policy.maxPages), "media_types": ["image/jpeg", "image/png"]], error: error))
    }

    func askSelfieStart(_ ctx: FlowContext, _ f: inout FlowFrame, status: RequestStatus? = nil) -> FlowStep {
        f.step = Step.selfieStart.rawValue
        var payload: [String: JSONValue] = ["idv_workflow": .integer(idvWorkflow(f))]
        if policy.activeLiveness {
            // A fresh server-issued challenge for every capture; kept in the (sealed) flow state.
            f.data["liveness_challenge"] = nil
            payload["liveness_challenge"] = livenessChallenge(ctx, &f)
        }
        return .ask(spec(WireName.getIDVSelfieProcessStartConfirmation, f, attemptsLeft: selfieLeft(f), payload: .object(payload), status: status))
    }

    func askSelfieUpload(_ ctx: FlowContext, _ f: inout FlowFrame, error: IDVError? = nil, status: RequestStatus? = nil,
                         livenessReasons: [String]? = nil) -> FlowStep {
        f.step = Step.selfieUpload.rawValue
        var payload: [String: JSONValue] = ["max_frames": .integer(policy.maxFrames), "media_types": ["image/jpeg", "image/png"]]
        if policy.activeLiveness { payload["liveness_challenge"] = livenessChallenge(ctx, &f) }
        if let livenessReasons { payload["liveness_reasons"] = .array(livenessReasons.map { .string($0) }) }
        return .ask(spec(WireName.uploadIDVSelfieFrames, f, attemptsLeft: selfieLeft(f), payload: .object(payload), error: error, status: status))
    }

    /// Active liveness: the challenge of the pending capture, issued now when there is none (a
    /// challenge is used up by the verification that evaluates it). Its JSON is the payload's
    /// `liveness_challenge`.
    func livenessChallenge(_ ctx: FlowContext, _ f: inout FlowFrame) -> JSONValue {
        if let c = f.data["liveness_challenge"] { return c }
        guard let c = services.selfies?.issueChallenge(now: ctx.now, durationSeconds: policy.activeChallengeDurationSeconds,
                                                       deadlineSeconds: policy.activeChallengeDeadlineSeconds) else { return .null }
        let json = (try? JSONValue(encoding: c)) ?? .null
        f.data["liveness_challenge"] = json
        return json
    }

    /// `json` with `reasons` set at `path` (objects along the path must exist).
    static func setting(_ json: JSONValue, _ path: ArraySlice<String>, _ value: JSONValue) -> JSONValue {
        guard let key = path.first, var o = json.objectValue else { return json }
        if path.count == 1 { o[key] = value } else if let inner = o[key] { o[key] = setting(inner, path.dropFirst(), value) }
        return .object(o)
    }

    func askReauth(_ ctx: FlowContext, _ f: inout FlowFrame, error: IDVError? = nil) throws -> FlowStep {
        let uid = try userID(f)
        if f.data["lda_tried"] == nil, let did = ctx.session.deviceID, let d = try ctx.store.device(did), d.userID == uid, d.ldaEnabled {
            f.data["lda_tried"] = .bool(true)
            f.step = Step.reauthLDA.rawValue
            return .ask(spec(WireName.getDeviceSignature, f, attemptsLeft: 1,
                             payload: ["nonce": .string(Data(ctx.crypto.randomBytes(32)).base64EncodedString())]))
        }
        f.step = Step.reauthPassword.rawValue
        return .ask(spec(WireName.getPassword, f, attemptsLeft: reauthLeft(f), error: error,
                         status: error.map { Self.status(RequestStatus.unableToProcess, $0.errorString) } ?? Self.status(RequestStatus.success, "Success")))
    }

    func askConsent(_ f: inout FlowFrame) -> FlowStep {
        f.step = Step.consent.rawValue
        return .ask(spec(WireName.getIDVBiometricOptInConsent, f, attemptsLeft: -1, payload: [
            "consent_text_version": .string(policy.consentTextVersion),
            "consent_text": .string("Store a biometric template (a numeric face descriptor, not your photo), encrypted, to verify you later. You can withdraw this at any time (opt-out)."),
        ], status: Self.status(RequestStatus.success, "Success")))
    }

    // MARK: Answers

    public func answer(_ ctx: FlowContext, frame: inout FlowFrame, challenge: WireChallenge, answer: WireAnswer) throws -> FlowStep {
        if ctx.now >= int(frame, "started_at") + policy.flowTimeoutSeconds {
            return try endFor(ctx, &frame, .expired)
        }
        switch Step(rawValue: frame.step) {
        case .docStart:
            guard try confirm(answer, "is_confirm") else { return try endFor(ctx, &frame, .cancelled(preLogin: preLogin)) }
            if docLeft(frame) <= 0 { return try endFor(ctx, &frame, .exhausted("document")) }
            return askDocUpload(&frame)
        case .docUpload: return try answerDocUpload(ctx, &frame, answer)
        case .docConfirm: return try answerDocConfirm(ctx, &frame, answer)
        case .selfieStart:
            guard try confirm(answer, "is_confirm") else { return try endFor(ctx, &frame, .cancelled(preLogin: preLogin)) }
            if let b = answer.payload["use_back_camera"], b.boolValue == nil { throw IDVError(.malformedRequest, "payload.use_back_camera must be a boolean") }
            if selfieLeft(frame) <= 0 { return try endFor(ctx, &frame, .exhausted("selfie")) }
            return askSelfieUpload(ctx, &frame)
        case .selfieUpload: return try answerSelfieUpload(ctx, &frame, answer)
        case .selfieConfirm: return try answerSelfieConfirm(ctx, &frame, answer)
        case .consent: return try answerConsent(ctx, &frame, answer)
        case .reauthPassword: return try answerPassword(ctx, &frame, answer)
        case .reauthLDA: return try answerLDA(ctx, &frame, challenge, answer)
        case .frameConfirm: return try answerFrameConfirm(ctx, &frame, answer)
        case .none: throw IDVError(.internalError, "IDV flow in unknown step \(frame.step)")
        }
    }

    func confirm(_ a: WireAnswer, _ key: String) throws -> Bool {
        guard let b = a.payload[key]?.boolValue else { throw IDVError(.malformedRequest, "payload.\(key) (boolean) is required") }
        return b
    }

    func isCancel(_ a: WireAnswer) throws -> Bool {
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

    func seal(_ ctx: FlowContext, _ f: FlowFrame, kind: String, _ bytes: [UInt8]) throws -> String {
        let id = ctx.crypto.randomID()
        let box = services.vault.seal(bytes, associatedData: VaultBinding.media(runID: f.runID, kind: kind))
        try store(ctx).saveMedia(MediaRecord(mediaID: id, runID: f.runID, kind: kind, sealed: box, createdAt: ctx.now))
        return id
    }

    func unseal(_ ctx: FlowContext, _ f: FlowFrame, key: String, kind: String) throws -> [UInt8]? {
        guard let id = str(f, key), let m = try store(ctx).media(id) else { return nil }
        return try services.vault.open(m.sealed, associatedData: VaultBinding.media(runID: f.runID, kind: kind))
    }

    static func today(_ now: Int) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        return f.string(from: Date(timeIntervalSince1970: TimeInterval(now)))
    }

    func answerDocUpload(_ ctx: FlowContext, _ f: inout FlowFrame, _ a: WireAnswer) throws -> FlowStep {
        if try isCancel(a) { return try endFor(ctx, &f, .cancelled(preLogin: preLogin)) }
        guard let pagesJSON = a.payload["pages"]?.arrayValue, !pagesJSON.isEmpty else {
            throw IDVError(.malformedRequest, "payload.pages (non-empty array) is required")
        }
        let pages = try pageImages(pagesJSON)
        guard let reader = services.documents else { throw IDVError(.workflowUnavailable, "this server has no document reader") }
        f.data["doc_attempts"] = .integer(int(f, "doc_attempts") + 1)
        let doc: DocumentVerification
        let ms: Int
        do {
            (doc, ms) = try ctx.precomputed("document-read") { try Self.timed { try reader.read(pages: pages) } }
        } catch let e as IDVError where [.invalidImage, .imageTooLarge, .noDocumentFound].contains(IDVErrorCode(rawValue: e.longErrorCode)) {
            try auditStep(ctx, f, "document_read", ["result": .string("unreadable"), "error_code": .integer(e.longErrorCode), "attempt": .integer(int(f, "doc_attempts"))])
            if docLeft(f) <= 0 { return try endFor(ctx, &f, .exhausted("document")) }
            return askDocUpload(&f, error: e)
        }
        let needsPortrait = kind != .documentScan
        let judged = policy.judge(doc, today: Self.today(ctx.now), needsPortrait: needsPortrait)
        f.data["doc_status"] = .string(judged.status.rawValue)
        try auditStep(ctx, f, "document_read", ["result": .string(judged.status.rawValue), "attempt": .integer(int(f, "doc_attempts")),
                                                "errors": .integer(judged.errors.count), "warnings": .integer(judged.warnings.count),
                                                "format": .string(doc.fields.format), "duration_ms": .integer(ms)])
        if kind == .documentScan {
            let ws = try store(ctx)
            let scanID = ctx.crypto.randomID()
            let stored = IDVReports.additionalScan(doc, judged: judged, withImages: false)
            let sealed = services.vault.seal(Array(try stored.toJSONData()), associatedData: VaultBinding.scan(scanID: scanID))
            try ws.saveDocumentScan(DocumentScanRecord(scanID: scanID, userID: str(f, "user_id"), sessionID: ctx.session.sessionID, runID: f.runID,
                                                       idvWorkflow: idvWorkflow(f), reason: str(f, "reason") ?? defaultReason,
                                                       overallStatus: judged.status.rawValue, sealedReport: sealed, createdAt: ctx.now))
            f.data["scan_id"] = .string(scanID)
            let payload = try JSONValue(encoding: IDVReports.additionalScan(doc, judged: judged, withImages: true))
            let ok = judged.status != .invalid
            return try end(ctx, &f, Ending(outcome: ok ? "completed" : "document_invalid", error: .none,
                                           statusCode: ok ? RequestStatus.success : RequestStatus.unableToProcess,
                                           statusMessage: ok ? "Success" : "Document validation failed", success: ok), payload: payload)
        }
        // Keep (sealed) what the next steps need: the portrait for the match, the name for the selfie screen.
        if let p = doc.portraitJPEG { f.data["portrait_media"] = .string(try seal(ctx, f, kind: "portrait", Array(p))) }
        let display = [doc.fields.givenNames, doc.fields.surname].filter { !$0.isEmpty }.joined(separator: " ")
        f.data["name_media"] = .string(try seal(ctx, f, kind: "name", Array(display.utf8)))
        f.step = Step.docConfirm.rawValue
        return .ask(spec(WireName.getIDVConfirmDocumentDetails, f, attemptsLeft: docLeft(f),
                         payload: try JSONValue(encoding: IDVReports.documentDetails(doc, judged: judged)),
                         status: judged.status == .invalid ? Self.status(RequestStatus.unableToProcess, "Document validation failed")
                                                           : Self.status(RequestStatus.success, "Success")))
    }

    func answerDocConfirm(_ ctx: FlowContext, _ f: inout FlowFrame, _ a: WireAnswer) throws -> FlowStep {
        let ok = try confirm(a, "is_confirm")
        if ok && str(f, "doc_status") != DocumentVerification.Status.invalid.rawValue {
            try auditStep(ctx, f, "document_confirmed", ["result": .string(str(f, "doc_status") ?? "")])
            return askSelfieStart(ctx, &f)
        }
        // Rejected by the user, or an INVALID document "confirmed": the server does not accept it.
        if docLeft(f) <= 0 { return try endFor(ctx, &f, .exhausted("document")) }
        try auditStep(ctx, f, "document_rescan", ["user_rejected": .bool(!ok)])
        return askDocStart(ctx, &f, status: ok ? Self.status(RequestStatus.unableToProcess, "The document is not valid; scan a valid document") : nil)
    }

    /// `body`'s value and its wall time in milliseconds (audited as `duration_ms`).
    static func timed<T>(_ body: () throws -> T) throws -> (T, Int) {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let v = try body()
        return (v, Int((DispatchTime.now().uptimeNanoseconds - t0) / 1_000_000))
    }

    /// The document pages of an upload answer, by `page_index`; 1001 when malformed.
    func pageImages(_ pagesJSON: [JSONValue]) throws -> [Data] {
        guard pagesJSON.count <= policy.maxPages else { throw IDVError(.malformedRequest, "at most \(policy.maxPages) pages per upload") }
        var pages = [Data](repeating: Data(), count: pagesJSON.count)
        for (i, p) in pagesJSON.enumerated() {
            let idx = p["page_index"]?.intValue ?? i
            guard idx >= 0, idx < pagesJSON.count, pages[idx].isEmpty else {
                throw IDVError(.malformedRequest, "payload.pages[\(i)].page_index must be unique and in 0..<\(pagesJSON.count)")
            }
            pages[idx] = try Self.image(p["image"], "payload.pages[\(i)].image")
        }
        return pages
    }

    /// What the selfie is matched against; nil for server biometric authentication without a template.
    func selfieReference(_ ctx: FlowContext, _ f: FlowFrame) throws -> SelfieReference? {
        let uid = try userID(f)
        switch kind {
        case .serverBiometric:
            guard let t = try store(ctx).biometricTemplate(userID: uid) else { return nil }
            return .template(try services.vault.openTemplate(t.sealed, userID: uid))
        case .optIn:
            return SelfieReference.none
        default:
            if f.data["against_template"]?.boolValue == true, let t = try store(ctx).biometricTemplate(userID: uid) {
                return .template(try services.vault.openTemplate(t.sealed, userID: uid))
            } else if let p = try unseal(ctx, f, key: "portrait_media", kind: "portrait") {
                return .portrait(Data(p))
            }
            throw IDVError(.internalError, "no confirmed document portrait to match")
        }
    }

    /// Document reading, selfie analysis and Argon2id outside the engine's store transaction (the
    /// answer then finds the results through ``FlowContext/precomputed(_:_:)``). Malformed answers
    /// are left to `answer`, which refuses them.
    public func prepare(_ ctx: FlowContext, frame f: FlowFrame, challenge: WireChallenge, answer a: WireAnswer) {
        switch Step(rawValue: f.step) {
        case .docUpload:
            guard let reader = services.documents, let pj = a.payload["pages"]?.arrayValue, !pj.isEmpty,
                  let pages = try? pageImages(pj) else { return }
            _ = try? ctx.precomputed("document-read") { try Self.timed { try reader.read(pages: pages) } }
        case .selfieUpload:
            guard let analyser = services.selfies, let fj = a.payload["frames"]?.arrayValue, !fj.isEmpty, fj.count <= policy.maxFrames,
                  let frames = try? fj.enumerated().map({ try Self.image($0.element, "payload.frames[\($0.offset)]") }),
                  let reference = try? selfieReference(ctx, f) else { return }
            var challenge: LivenessChallenge?
            if policy.activeLiveness {
                guard let c = try? f.data["liveness_challenge"]?.decode(LivenessChallenge.self) else { return }
                challenge = c
            }
            _ = try? ctx.precomputed("selfie-verify") { try Self.timed { try analyser.verify(frames: frames, against: reference, challenge: challenge) } }
        case .reauthPassword:
            guard let pw = a.payload["password"]?.stringValue, !pw.isEmpty, pw.count <= 1024, let uid = str(f, "user_id"),
                  let h = (try? ctx.store.user(uid))?.passwordHash else { return }
            _ = try? ctx.precomputed("argon2-verify:" + h) { ctx.crypto.verifyPassword(pw, hash: h) }
        default:
            return
        }
    }

    func answerSelfieUpload(_ ctx: FlowContext, _ f: inout FlowFrame, _ a: WireAnswer) throws -> FlowStep {
        if try isCancel(a) { return try endFor(ctx, &f, .cancelled(preLogin: preLogin)) }
        guard let framesJSON = a.payload["frames"]?.arrayValue, !framesJSON.isEmpty else {
            throw IDVError(.malformedRequest, "payload.frames (non-empty array of base64 images) is required")
        }
        guard framesJSON.count <= policy.maxFrames else { throw IDVError(.malformedRequest, "at most \(policy.maxFrames) frames per upload") }
        let frames = try framesJSON.enumerated().map { try Self.image($0.element, "payload.frames[\($0.offset)]") }
        guard let analyser = services.selfies else { throw IDVError(.workflowUnavailable, "this server has no selfie analyser") }
        guard let reference = try selfieReference(ctx, f) else {
            return try endBiometric(ctx, &f, Ending(outcome: "no_template", error: IDVError(.templateNotFound), statusCode: RequestStatus.noTemplate,
                                                   statusMessage: IDVErrorCode.templateNotFound.message, success: false))
        }
        let uid = try userID(f)
        f.data["selfie_attempts"] = .integer(int(f, "selfie_attempts") + 1)
        // Active liveness: judged against the challenge the server issued and kept (never one
        // from the client).
        var challenge: LivenessChallenge?
        if policy.activeLiveness {
            guard let c = try f.data["liveness_challenge"]?.decode(LivenessChallenge.self) else {
                throw IDVError(.internalError, "no liveness challenge was issued for this capture")
            }
            challenge = c
        }
        var v: SelfieVerification
        let ms: Int
        do {
            (v, ms) = try ctx.precomputed("selfie-verify") { try Self.timed { try analyser.verify(frames: frames, against: reference, challenge: challenge) } }
        } catch let e as IDVError where [.invalidImage, .imageTooLarge, .noFaceFound].contains(IDVErrorCode(rawValue: e.longErrorCode)) {
            try auditStep(ctx, f, "selfie_verified", ["result": .string("unusable"), "error_code": .integer(e.longErrorCode), "attempt": .integer(int(f, "selfie_attempts"))])
            if selfieLeft(f) <= 0 { return try endFor(ctx, &f, .exhausted("selfie")) }
            return askSelfieUpload(ctx, &f, error: e)
        }
        if let challenge {
            f.data["liveness_challenge"] = nil   // used up: a recapture gets a new one
            if v.challengeNonce != challenge.nonce {
                v.livenessScore = 0
                v.reasons.append("CHALLENGE_NOT_EVALUATED")
            } else if ctx.now > challenge.expiresAt, !v.reasons.contains("CHALLENGE_EXPIRED") {
                v.livenessScore = 0
                v.reasons.append("CHALLENGE_EXPIRED")
            }
        }
        let verdict = policy.verdict(v, reference: reference)
        f.data["verdict"] = .string(verdict.rawValue)
        f.data["face_match_score"] = v.faceMatchScore.map { .number(($0 * 1000).rounded() / 1000) } ?? .null
        f.data["liveness_score"] = .integer(v.livenessScore)
        try auditStep(ctx, f, "selfie_verified", ["result": .string(verdict.rawValue), "attempt": .integer(int(f, "selfie_attempts")),
                                                  "face_match_score": f.data["face_match_score"] ?? .null, "liveness_score": .integer(v.livenessScore),
                                                  "reasons": .array(v.reasons.prefix(8).map { .string($0) }), "duration_ms": .integer(ms)])
        // The descriptor (for a template on consent) and the best frame are sealed, never in the frame.
        if verdict == .matched, !v.embedding.isEmpty {
            let bytes = v.embedding.flatMap { f in withUnsafeBytes(of: f.bitPattern.littleEndian) { Array($0) } }
            f.data["embedding_media"] = .string(try seal(ctx, f, kind: "embedding", bytes))
            f.data["model"] = .string(v.model)
        } else {
            f.data["embedding_media"] = nil
        }
        switch kind {
        case .serverBiometric:
            let ending: Ending
            switch verdict {
            case .matched: ending = Ending(outcome: "matched", error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true)
            case .livenessFailed: ending = Ending(outcome: "liveness_failed", error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: false)
            default: ending = Ending(outcome: "not_matched", error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: false)
            }
            return try endBiometric(ctx, &f, ending, verification: v, verdict: verdict)
        case .optIn:
            if verdict != .matched {
                if selfieLeft(f) <= 0 { return try endFor(ctx, &f, .exhausted("selfie")) }
                return askSelfieUpload(ctx, &f, status: Self.status(RequestStatus.unableToProcess, BiometricVerdict.livenessFailed.rawValue),
                                       livenessReasons: verdict == .livenessFailed ? v.reasons : nil)
            }
            f.step = Step.frameConfirm.rawValue
            return .ask(spec(WireName.onIDVOptInCapturedFrameConfirmation, f, attemptsLeft: selfieLeft(f), payload: [
                "captured_frame": v.bestFrameJPEG.map { .string($0.base64EncodedString()) } ?? .null,
                "liveness_score": .integer(v.livenessScore),
            ]))
        default:
            let name = try unseal(ctx, f, key: "name_media", kind: "name").map { String(decoding: $0, as: UTF8.self) }
            let portrait = try unseal(ctx, f, key: "portrait_media", kind: "portrait").map { Data($0).base64EncodedString() }
            let documentStep = f.data["against_template"]?.boolValue != true
            let buttons = IDVReports.actionButtons(verdict: verdict, policy: policy, selfieLeft: selfieLeft(f), documentLeft: docLeft(f), documentStep: documentStep)
            let offered = (verdict == .matched ? buttons.successButton : buttons.failureButton).map { JSONValue.string($0.key.rawValue) }
            if offered.isEmpty { return try endFor(ctx, &f, .exhausted("selfie")) }
            f.data["offered_actions"] = .array(offered)
            let details = SelfieDetails(
                responseData: SelfieAnalysis(
                    biometricResult: BiometricResult(displayText: verdict, resultCriteria: verdict == .livenessFailed ? "liveness" : "face_match"),
                    faceMatcherResponse: v.faceMatchScore.map { FaceMatcherResponse(score: $0) },
                    analyzeLivenessResponse: AnalyzeLivenessResponse(video: LivenessVideo(
                        livenessResult: LivenessResult(score: v.livenessScore),
                        autocaptureResult: v.bestFrameJPEG.map { AutocaptureResult(selfieImage: $0.base64EncodedString()) })),
                    documentDetail: documentStep ? SelfieDocumentDetail(documentInfo: SelfieDocumentInfo(portraitImage: portrait, name: name)) : nil),
                actionButtons: buttons, userID: uid)
            f.step = Step.selfieConfirm.rawValue
            var payload = try JSONValue(encoding: details)
            if verdict == .livenessFailed {
                payload = Self.setting(payload, ["response_data", "analyze_liveness_response", "video", "liveness_result", "reasons"],
                                       .array(v.reasons.map { .string($0) }))
            }
            return .ask(spec(WireName.getIDVSelfieConfirmation, f, attemptsLeft: selfieLeft(f), payload: payload,
                             status: Self.status(RequestStatus.success, "Success")))
        }
    }

    func answerSelfieConfirm(_ ctx: FlowContext, _ f: inout FlowFrame, _ a: WireAnswer) throws -> FlowStep {
        guard let raw = a.payload["action"]?.stringValue else { throw IDVError(.malformedRequest, "payload.action (string) is required") }
        let key = IDVActionKey(selfieConfirmationAction: raw)
        let offered = (f.data["offered_actions"]?.arrayValue ?? []).compactMap(\.stringValue)
        guard offered.contains(key.rawValue) else {
            throw IDVError(.actionNotOffered, "The action '\(raw.prefix(40))' was not offered (offered: \(offered.joined(separator: ", ")))")
        }
        try auditStep(ctx, f, "selfie_action", ["action": .string(key.rawValue), "verdict": f.data["verdict"] ?? .null])
        switch key {
        case .reinitSelfie: return askSelfieStart(ctx, &f)
        case .reinitDocumentScan:
            try store(ctx).releaseMedia(runID: f.runID, keepUntil: nil)
            f.data["portrait_media"] = nil
            f.data["name_media"] = nil
            f.data["embedding_media"] = nil
            return askDocStart(ctx, &f)
        default:
            let matched = str(f, "verdict") == BiometricVerdict.matched.rawValue
            // Consent is asked only when a template could be created from this run (a MATCHED
            // selfie against the document; not in the template variants, which matched the template).
            if matched, f.data["embedding_media"] != nil, !(f.data["against_template"]?.boolValue == true) {
                return askConsent(&f)
            }
            return try complete(ctx, &f)
        }
    }

    func answerConsent(_ ctx: FlowContext, _ f: inout FlowFrame, _ a: WireAnswer) throws -> FlowStep {
        let granted = try confirm(a, "is_opt_in")
        let uid = try userID(f)
        let consentID = try recordConsent(ctx, f, granted: granted)
        f.data["consent"] = .bool(granted)
        if granted { try enroll(ctx, &f, userID: uid, consentID: consentID) }
        return try complete(ctx, &f)
    }

    func recordConsent(_ ctx: FlowContext, _ f: FlowFrame, granted: Bool) throws -> String {
        let uid = try userID(f)
        let id = ctx.crypto.randomID()
        try store(ctx).recordConsent(ConsentRecord(consentID: id, userID: uid, kind: "biometric_template", granted: granted,
                                                   sessionID: ctx.session.sessionID, runID: f.runID, flow: name, idvWorkflow: idvWorkflow(f),
                                                   textVersion: policy.consentTextVersion, recordedAt: ctx.now))
        try auditStep(ctx, f, "consent_recorded", ["consent_id": .string(id), "granted": .bool(granted), "text_version": .string(policy.consentTextVersion)])
        return id
    }

    /// Creates (or replaces) the user's template from the sealed descriptor of this run — only with a recorded consent.
    func enroll(_ ctx: FlowContext, _ f: inout FlowFrame, userID uid: String, consentID: String) throws {
        guard let bytes = try unseal(ctx, f, key: "embedding_media", kind: "embedding"), bytes.count % 4 == 0, !bytes.isEmpty else {
            throw IDVError(.internalError, "no face descriptor kept for enrolment")
        }
        let floats = stride(from: 0, to: bytes.count, by: 4).map { i in
            Float(bitPattern: UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)
        }
        try store(ctx).saveBiometricTemplate(BiometricTemplateRecord(userID: uid, sealed: services.vault.sealTemplate(floats, userID: uid),
                                                                    model: str(f, "model") ?? "unknown", consentID: consentID, createdAt: ctx.now))
        f.data["template_created"] = .bool(true)
        try auditStep(ctx, f, "template_created", ["consent_id": .string(consentID), "dimensions": .integer(floats.count)])
    }

    /// The positive end of activation / KYC (status 400 when continued without a match).
    func complete(_ ctx: FlowContext, _ f: inout FlowFrame) throws -> FlowStep {
        let matched = str(f, "verdict") == BiometricVerdict.matched.rawValue
        let e = matched ? Ending(outcome: "completed", error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true)
                        : Ending(outcome: kind == .activation ? "completed" : "completed_unverified", error: .none, statusCode: RequestStatus.unableToProcess,
                                 statusMessage: "Identity not verified: \(str(f, "verdict") ?? "")", success: false)
        return try end(ctx, &f, e)
    }

    func answerPassword(_ ctx: FlowContext, _ f: inout FlowFrame, _ a: WireAnswer) throws -> FlowStep {
        if try isCancel(a) { return try endFor(ctx, &f, .cancelled(preLogin: false)) }
        guard let pw = a.payload["password"]?.stringValue, !pw.isEmpty, pw.count <= 1024 else {
            throw IDVError(.malformedRequest, "payload.password (string) or payload.cancel = true is required")
        }
        let uid = try userID(f)
        guard let user = try ctx.store.user(uid), user.state == .active else { return try endFor(ctx, &f, Ending(outcome: "user_unavailable", error: IDVError(.userLocked), statusCode: RequestStatus.failed, statusMessage: IDVErrorCode.userLocked.message, success: false)) }
        guard let h = user.passwordHash, try ctx.precomputed("argon2-verify:" + h, { ctx.crypto.verifyPassword(pw, hash: h) }) else {
            f.data["reauth_attempts"] = .integer(int(f, "reauth_attempts") + 1)
            try auditStep(ctx, f, "reauth_failed", ["method": "password", "attempts_left": .integer(reauthLeft(f))])
            if reauthLeft(f) <= 0 { return try endFor(ctx, &f, .exhausted("password")) }
            return try askReauth(ctx, &f, error: IDVError(.invalidPassword))
        }
        return try reauthenticated(ctx, &f, method: "password")
    }

    func answerLDA(_ ctx: FlowContext, _ f: inout FlowFrame, _ ch: WireChallenge, _ a: WireAnswer) throws -> FlowStep {
        if try isCancel(a) { return try endFor(ctx, &f, .cancelled(preLogin: false)) }
        if a.payload["fallback"]?.stringValue == "password" { return try askReauth(ctx, &f) }
        guard let sig = a.payload["signature"]?.stringValue else {
            throw IDVError(.malformedRequest, "payload.signature (base64), payload.fallback = \"password\" or payload.cancel = true is required")
        }
        guard try AuthFlow.signatureValid(ctx, challenge: ch, signatureB64: sig) else {
            try auditStep(ctx, f, "reauth_failed", ["method": "lda"])
            return try askReauth(ctx, &f, error: IDVError(.deviceSignatureInvalid, "LDA failed; enter the password instead"))
        }
        return try reauthenticated(ctx, &f, method: "lda")
    }

    func reauthenticated(_ ctx: FlowContext, _ f: inout FlowFrame, method: String) throws -> FlowStep {
        try auditStep(ctx, f, "reauthenticated", ["method": .string(method)])
        let uid = try userID(f)
        if kind == .optOut {
            let erased = try store(ctx).deleteBiometricTemplate(userID: uid)
            try auditStep(ctx, f, "template_erased", ["erased": .bool(erased)])
            if erased {
                _ = try recordConsent(ctx, f, granted: false)
                return try end(ctx, &f, Ending(outcome: "template_erased", error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true))
            }
            return try end(ctx, &f, Ending(outcome: "no_template", error: .none, statusCode: RequestStatus.noTemplate,
                                           statusMessage: IDVErrorCode.templateNotFound.message, success: false))
        }
        return askSelfieStart(ctx, &f)
    }

    func answerFrameConfirm(_ ctx: FlowContext, _ f: inout FlowFrame, _ a: WireAnswer) throws -> FlowStep {
        guard let raw = a.payload["status"]?.intValue, let st = IDVStatus(rawValue: raw) else {
            throw IDVError(.malformedRequest, "payload.status must be 0 (APPROVED), 1 (RECAPTURE) or 2 (CANCEL)")
        }
        try auditStep(ctx, f, "frame_confirmation", ["status": .string(st.name)])
        switch st {
        case .approved:
            let uid = try userID(f)
            if try store(ctx).biometricTemplate(userID: uid) != nil {
                return try end(ctx, &f, Ending(outcome: "template_exists", error: IDVError(.templateExists), statusCode: RequestStatus.unableToProcess,
                                               statusMessage: IDVErrorCode.templateExists.message, success: false))
            }
            let consentID = try recordConsent(ctx, f, granted: true)
            try enroll(ctx, &f, userID: uid, consentID: consentID)
            return try end(ctx, &f, Ending(outcome: "template_created", error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true))
        case .recapture:
            if selfieLeft(f) <= 0 { return try endFor(ctx, &f, .exhausted("selfie")) }
            return askSelfieUpload(ctx, &f)
        case .cancel:
            return try endFor(ctx, &f, .cancelled(preLogin: false))
        }
    }

    // MARK: Ends

    /// Routes an ending to the kind's terminal shape.
    func endFor(_ ctx: FlowContext, _ f: inout FlowFrame, _ e: Ending) throws -> FlowStep {
        kind == .serverBiometric ? try endBiometric(ctx, &f, e) : try end(ctx, &f, e)
    }

    func auditInfo(_ ctx: FlowContext, _ f: FlowFrame, success: Bool) -> IDVAuditInfo {
        IDVAuditInfo(reason: str(f, "reason") ?? defaultReason,
                     auditMetrics: AuditMetrics(startTimestamp: int(f, "started_at"), endTimestamp: ctx.now),
                     status: success ? .success : .failure, idvAuditTransactionID: str(f, "txn") ?? "", orchestrationUseCase: useCase)
    }

    /// Writes the transaction's audit record, releases kept images, and finishes with the kind's event.
    func end(_ ctx: FlowContext, _ f: inout FlowFrame, _ e: Ending, payload: JSONValue? = nil) throws -> FlowStep {
        try closeTransaction(ctx, f, e)
        let uid = str(f, "user_id") ?? ""
        let info = auditInfo(ctx, f, success: e.success)
        let status = Self.status(e.statusCode, e.statusMessage)
        var event: WireEvent?
        switch kind {
        case .activation:
            event = nil
        case .kyc:
            event = WireEvent(name: WireName.onIDVActivatedCustomerKYCResponse, userID: uid, error: e.error, status: status,
                              payload: try JSONValue(encoding: KYCResponse(userID: uid, status: status, error: e.error, idvAuditInfo: info)))
        case .documentScan:
            var p = payload ?? .emptyObject
            if var o = p.objectValue { o["idv_audit_info"] = try JSONValue(encoding: info); o["reason"] = f.data["reason"]; p = .object(o) }
            event = WireEvent(name: WireName.onIDVAdditionalDocumentScan, userID: uid, error: e.error, status: status, payload: p)
        case .templateStatus:
            event = WireEvent(name: WireName.onIDVCheckUserBiometricTemplateStatus, userID: uid, error: e.error, status: status, payload: payload ?? .emptyObject)
        case .optIn, .optOut:
            let exists = (try? store(ctx).biometricTemplate(userID: uid)) != nil
            let p = BiometricOptStatus(statusCode: e.statusCode, statusMessage: e.statusMessage, orchestrationUseCase: useCase, userID: uid,
                                       templateExists: exists, attemptsLeft: int(f, "reauth_attempts") > 0 ? reauthLeft(f) : nil, idvAuditInfo: info)
            event = WireEvent(name: kind == .optIn ? WireName.onIDVBiometricOptInStatus : WireName.onIDVBiometricOptOutStatus,
                              userID: uid, error: e.error, status: status, payload: try JSONValue(encoding: p))
        case .serverBiometric:
            return try endBiometric(ctx, &f, e)
        }
        return .finish(FlowResult(outcome: e.outcome, event: event, errorCode: e.error.longErrorCode,
                                  data: ["idv_audit_transaction_id": f.data["txn"] ?? .null, "verdict": f.data["verdict"] ?? .null]))
    }

    func endBiometric(_ ctx: FlowContext, _ f: inout FlowFrame, _ e: Ending, verification v: SelfieVerification? = nil, verdict: BiometricVerdict? = nil) throws -> FlowStep {
        try closeTransaction(ctx, f, e)
        let uid = str(f, "user_id") ?? ""
        let left = (try? biometricAttemptsLeft(ctx, uid)).map { v != nil && !e.success ? max(0, $0 - 1) : $0 } ?? 0
        let result = ServerBiometricAuthenticationResult(
            video: ServerBiometricVideo(workflowData: ["workflow": .integer(IDVWorkflow.postLoginSelfieBiometric.rawValue),
                                                       "frames": .integer(0)], clientVersion: "1.0"),
            idvAuditInfo: auditInfo(ctx, f, success: e.success), purpose: str(f, "reason") ?? defaultReason,
            attempts: int(f, "selfie_attempts"), userID: uid, attemptsLeft: left,
            biometricResult: verdict.map { BiometricResult(displayText: $0, resultCriteria: $0 == .livenessFailed ? "liveness" : "face_match") },
            faceMatcherResponse: v?.faceMatchScore.map { FaceMatcherResponse(score: $0) },
            analyzeLivenessResponse: v.map { AnalyzeLivenessResponse(video: LivenessVideo(livenessResult: LivenessResult(score: $0.livenessScore))) })
        var payload = try JSONValue(encoding: result)
        if verdict == .livenessFailed, let v {
            payload = Self.setting(payload, ["analyze_liveness_response", "video", "liveness_result", "reasons"], .array(v.reasons.map { .string($0) }))
        }
        let event = WireEvent(name: WireName.onIDVServerBiometricAuthenticationResult, userID: uid, error: e.error,
                              status: Self.status(e.statusCode, e.statusMessage), payload: payload)
        return .finish(FlowResult(outcome: e.outcome, event: event, errorCode: e.error.longErrorCode))
    }

    /// The transaction's audit record (ids, codes, scores — no images or personal data) and image release.
    func closeTransaction(_ ctx: FlowContext, _ f: FlowFrame, _ e: Ending) throws {
        let ws = try store(ctx)
        let keep = policy.mediaRetentionSeconds > 0 ? ctx.now + policy.mediaRetentionSeconds : nil
        try ws.releaseMedia(runID: f.runID, keepUntil: keep)
        try auditStep(ctx, f, "transaction", [
            "orchestration_use_case": .string(useCase.rawValue), "idv_workflow": .integer(idvWorkflow(f)), "run_id": .string(f.runID),
            "start_timestamp": .integer(int(f, "started_at")), "end_timestamp": .integer(ctx.now),
            "outcome": .string(e.outcome), "status": .string(e.success ? "SUCCESS" : "FAILURE"),
            "long_error_code": .integer(e.error.longErrorCode), "status_code": .integer(e.statusCode),
            "document_status": f.data["doc_status"] ?? .null, "verdict": f.data["verdict"] ?? .null,
            "face_match_score": f.data["face_match_score"] ?? .null, "liveness_score": f.data["liveness_score"] ?? .null,
            "document_attempts": .integer(int(f, "doc_attempts")), "selfie_attempts": .integer(int(f, "selfie_attempts")),
            "consent": f.data["consent"] ?? .null, "template_created": f.data["template_created"] ?? .bool(false),
            "scan_id": f.data["scan_id"] ?? .null,
        ])
    }

    /// Reset, log-off or session end: the transaction is recorded as abandoned and images released.
    public func abandon(_ ctx: FlowContext, frame: FlowFrame) {
        try? abandon(ctx, frame: frame, outcome: "abandoned")
    }

    /// Abandonment with the engine's reason. `expired` (the session expired and is purged) and
    /// `revoked` record that outcome in the run's `idv.transaction` (error 1003 for `expired`) and
    /// drop the run's sealed media at once, whatever `idv.media_retention_seconds` says; reset and
    /// log-off are recorded as `abandoned`.
    public func abandon(_ ctx: FlowContext, frame: FlowFrame, outcome: String) throws {
        switch outcome {
        case "expired", "revoked":
            let error = outcome == "expired" ? IDVError(.sessionExpired) : IDVError.none
            try closeTransaction(ctx, frame, Ending(outcome: outcome, error: error, statusCode: RequestStatus.failed,
                                                   statusMessage: outcome == "expired" ? error.errorString : "Session revoked", success: false))
            try store(ctx).releaseMedia(runID: frame.runID, keepUntil: nil)
        default:
            try closeTransaction(ctx, frame, Ending(outcome: "abandoned", error: .none, statusCode: RequestStatus.failed,
                                                   statusMessage: "Abandoned", success: false))
        }
    }
}

extension FlowRegistry {
    /// The core registry plus the IDV flows this build can run: the template-status check and
    /// opt-out always; the document flows when `services.documents` is set; the selfie flows when
    /// `services.selfies` is set; activation with IDV (workflows 0–5) when both are.
    public static func idv(_ services: IDVServices) -> FlowRegistry {
        var r = FlowRegistry.standard()
        r.registerIDV(services)
        return r
    }

    /// Every IDV flow, whether or not its analysers are present — for maintenance that only
    /// closes runs (`idvd admin purge-expired`), never for serving.
    public static func idvMaintenance(vault: any Vault, policy: WorkflowPolicy) -> FlowRegistry {
        var r = FlowRegistry.standard()
        r.registerIDV(IDVServices(documents: nil, selfies: nil, vault: vault, policy: policy), includeUnavailable: true)
        return r
    }

    public mutating func registerIDV(_ services: IDVServices, includeUnavailable: Bool = false) {
        for kind in IDVFlow.Kind.allCases {
            let flow = IDVFlow(kind, services: services)
            if flow.needsDocuments, services.documents == nil, !includeUnavailable { continue }
            if flow.needsSelfies, services.selfies == nil, !includeUnavailable { continue }
            if kind == .activation {
                register(flow, activationFor: IDVWorkflow.allCases.filter(\.isPreLogin))
            } else {
                register(flow)
            }
        }
    }
}
