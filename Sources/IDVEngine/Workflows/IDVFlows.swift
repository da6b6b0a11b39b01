import Foundation
import IDVCore

// The IDV flows, one type each, over the step components of IDVFlow.swift.

extension IDVFlowSteps {
    /// A component's result in this flow: asking in `place(local)`, or the run's end.
    func lift<Local>(_ r: IDVRun, _ result: StepResult<Local>, _ effects: [Effect], facts: Facts, env: FlowEnv,
                     _ place: (Local) -> Step) throws -> Transition<State> {
        switch result {
        case let .ask(local, spec): return .ask(IDVState(run: r, step: place(local)), spec, effects)
        case let .end(e): return try endFor(r, e, facts: facts, env: env).after(effects)
        case .next: throw IDVError(.internalError, "\(name): a finished step with nowhere to go")
        }
    }

    /// Routes an ending to the flow's terminal shape.
    func endFor(_ r: IDVRun, _ e: Ending, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        kind == .serverBiometric ? try endBiometric(r, e, facts: facts, env: env) : try end(r, e, facts: facts, env: env)
    }

    /// Writes the transaction's audit record, releases kept images, and finishes with the flow's event.
    /// `templateExists` (opt-in/opt-out): whether the user has a template once this run's effects apply.
    func end(_ r: IDVRun, _ e: Ending, facts: Facts, env: FlowEnv, payload: JSONValue? = nil, templateExists: Bool? = nil) throws -> Transition<State> {
        let effects = closeTransaction(r, e, now: facts.now, runID: env.runID)
        let info = auditInfo(r, now: facts.now, success: e.success)
        let status = Self.status(e.statusCode, e.statusMessage)
        var event: WireEvent?
        switch kind {
        case .activation:
            event = nil
        case .kyc:
            event = WireEvent(name: WireName.onIDVActivatedCustomerKYCResponse, userID: r.userID, error: e.error, status: status,
                              payload: try JSONValue(encoding: KYCResponse(userID: r.userID, status: status, error: e.error, idvAuditInfo: info)))
        case .documentScan:
            var p = payload ?? .emptyObject
            if var o = p.objectValue { o["idv_audit_info"] = try JSONValue(encoding: info); o["reason"] = .string(r.reason); p = .object(o) }
            event = WireEvent(name: WireName.onIDVAdditionalDocumentScan, userID: r.userID, error: e.error, status: status, payload: p)
        case .templateStatus:
            event = WireEvent(name: WireName.onIDVCheckUserBiometricTemplateStatus, userID: r.userID, error: e.error, status: status,
                              payload: payload ?? .emptyObject)
        case .optIn, .optOut:
            let p = BiometricOptStatus(statusCode: e.statusCode, statusMessage: e.statusMessage, orchestrationUseCase: kind.useCase, userID: r.userID,
                                       templateExists: templateExists ?? (facts.template != nil),
                                       attemptsLeft: r.reauthAttempts > 0 ? reauthLeft(r) : nil, idvAuditInfo: info)
            event = WireEvent(name: kind == .optIn ? WireName.onIDVBiometricOptInStatus : WireName.onIDVBiometricOptOutStatus,
                              userID: r.userID, error: e.error, status: status, payload: try JSONValue(encoding: p))
        case .serverBiometric:
            return try endBiometric(r, e, facts: facts, env: env)
        }
        return .finish(FlowResult(outcome: e.outcome, event: event, errorCode: e.error.longErrorCode), effects)
    }

    /// Server biometric authentication's end: `onIDVServerBiometricAuthenticationResult` (seed 001).
    /// No score oracle: the device gets the verdict (`biometric_result.display_text`, the one field
    /// seed 001 reads) and what it rests on — never the face-match or liveness score, nor the
    /// liveness cues; those stay in the audit (`idv.selfie_verified`, `idv.transaction`).
    /// `capture`: the upload this end answers — `video.workflow_data.frames` is its frame count (0
    /// without one), `video.meta_data` its sanitised `meta_data`.
    func endBiometric(_ r: IDVRun, _ e: Ending, facts: Facts, env: FlowEnv, judgement j: SelfieJudgement? = nil,
                      capture: IDVInput? = nil) throws -> Transition<State> {
        let effects = closeTransaction(r, e, now: facts.now, runID: env.runID)
        let left = biometricAttemptsLeft(facts)
        var frames = 0
        var meta: SelfieCaptureMetadata?
        if case let .frames(f, _, m, _)? = capture { frames = f.count; meta = m }
        let result = ServerBiometricAuthenticationResult(
            video: ServerBiometricVideo(workflowData: SelfieWorkflowData(workflow: IDVWorkflow.postLoginSelfieBiometric.rawValue, frames: frames),
                                        metaData: meta, clientVersion: "1.0"),
            idvAuditInfo: auditInfo(r, now: facts.now, success: e.success), purpose: r.reason,
            attempts: r.selfieAttempts, userID: r.userID, attemptsLeft: j != nil && !e.success ? max(0, left - 1) : left,
            biometricResult: j.map { BiometricResult(displayText: $0.verdict, resultCriteria: $0.resultCriteria) })
        let payload = try JSONValue(encoding: result)
        let event = WireEvent(name: WireName.onIDVServerBiometricAuthenticationResult, userID: r.userID, error: e.error,
                              status: Self.status(e.statusCode, e.statusMessage), payload: payload)
        return .finish(FlowResult(outcome: e.outcome, event: event, errorCode: e.error.longErrorCode), effects)
    }
}

// MARK: - Activation with IDV (seed 002) and post-login KYC (seed 000)

/// Document, then selfie against its portrait (or, in activation variants 1, 2, 4, against the
/// stored template), then consent to a template; activation returns to `auth` (password next),
/// KYC ends with `onIDVActivatedCustomerKYCResponse`.
public struct IdentityFlow: IDVFlowSteps {
    public enum Step: Codable, Sendable, Equatable {
        case document(DocumentStep)
        case selfie(SelfieStep)
        case consent
    }
    public typealias State = IDVState<Step>
    public typealias Input = IDVInput

    public let kind: IDVKind
    public let services: IDVServices

    /// `kind` is `.activation` or `.kyc`.
    public init(_ kind: IDVKind, services: IDVServices) {
        precondition(kind == .activation || kind == .kyc, "IdentityFlow runs activation or KYC")
        self.kind = kind
        self.services = services
    }

    public func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var (r, effects) = try newRun(input, facts: facts, env: env)
        // Variants "with template" (1, 2, 4) re-prove identity against the stored template.
        if kind == .activation, [1, 2, 4].contains(r.idvWorkflow), facts.template != nil {
            r.againstTemplate = true
            return try lift(r, askSelfieStart(r, now: facts.now), effects, facts: facts, env: env) { .selfie($0) }
        }
        return try lift(r, askDocStart(r), effects, facts: facts, env: env) { .document($0) }
    }

    public func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge) throws -> IDVInput {
        switch state.step {
        case .document(.start): return try parseDocumentStart(a)
        case .document(.upload): return try parsePages(a)
        case .document(.confirm): return .confirm(try Self.confirm(a, "is_confirm"))
        case .selfie(.start): return try parseSelfieStart(a)
        case .selfie(.upload): return try parseFrames(a, challenge)
        case let .selfie(.confirm(offered)):
            guard let raw = a.payload["action"]?.stringValue else { throw IDVError(.malformedRequest, "payload.action (string) is required") }
            // "false" rejects the selfie (seed 002 A4), whatever buttons were offered.
            guard case let .action(key) = SelfieConfirmationAnswer(raw) else { return .confirm(false) }
            guard offered.contains(key) else {
                throw IDVError(.actionNotOffered, "The action '\(raw.prefix(40))' was not offered (offered: \(offered.map(\.rawValue).joined(separator: ", ")))")
            }
            return .action(key)
        case .consent: return .optIn(try Self.confirm(a, "is_opt_in"))
        }
    }

    public func evidence(_ state: State, input: IDVInput, config: ServerConfig) -> EvidenceRequest {
        switch (state.step, input) {
        case let (.document(.upload), .pages(pages, chip)): return .document(pages: pages, chip: chip)
        case let (.selfie(.upload(challenge)), .frames(frames, fps, _, presence)):
            let reference: ReferenceRequest = state.run.againstTemplate ? .template(orPortrait: state.run.portraitMedia)
                : state.run.portraitMedia.map { .portrait($0) } ?? .template(orPortrait: nil)
            return .selfie(frames: frames, framesPerSecond: fps, reference: reference, challenge: challenge, nameMedia: state.run.nameMedia,
                           presence: presence)
        default: return .none
        }
    }

    public func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts) { return try endFor(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        switch state.step {
        case .document(.start):
            return try lift(r, documentStart(r, input), effects, facts: facts, env: env) { .document($0) }
        case .document(.upload):
            let (next, read) = try documentUpload(&r, input, evidence, facts, &effects)
            guard let (doc, judged) = read else { return try lift(r, next, effects, facts: facts, env: env) { .document($0) } }
            // Keep (sealed) what the next steps need: the portrait for the match — the chip's DG2 when
            // the chip is authentic (docs/CHIP.md), else the page's — and the name for the selfie screen.
            r.portraitMedia = nil
            r.portraitSource = nil
            let chipPortrait = policy.chipPortraitUsable(doc.chip) ? doc.chip?.portraitJPEG : nil
            if let p = chipPortrait ?? doc.portraitJPEG {
                let id = env.newID()
                effects.append(.sealMedia(id: id, kind: .portrait, bytes: Array(p)))
                r.portraitMedia = id
                r.portraitSource = chipPortrait != nil ? .chip : .page
            }
            // The judged report (seed 003 shape, no images) is kept sealed for the relying party's read
            // API (the verification's document fields and checks); the review triggers noted.
            r.reviewDocument = policy.reviewTriggers(document: doc, judged: judged)
            effects.append(.saveDocumentScan(DocumentScanRecord(scanID: env.newID(), userID: r.userID, sessionID: facts.session.sessionID, runID: env.runID,
                                                                idvWorkflow: r.idvWorkflow, reason: r.reason, overallStatus: judged.status.rawValue,
                                                                sealedReport: nil, createdAt: facts.now),
                                             report: try IDVReports.additionalScan(doc, judged: judged, withImages: false, policy: policy).toJSONData()))
            let display = [doc.fields.givenNames, doc.fields.surname].filter { !$0.isEmpty }.joined(separator: " ")
            let nameID = env.newID()
            effects.append(.sealMedia(id: nameID, kind: .name, bytes: Array(display.utf8)))
            r.nameMedia = nameID
            return .ask(IDVState(run: r, step: .document(.confirm)),
                        spec(WireName.getIDVConfirmDocumentDetails, r, attemptsLeft: docLeft(r),
                             payload: try JSONValue(encoding: IDVReports.documentDetails(doc, judged: judged)),
                             status: judged.status == .invalid ? Self.status(RequestStatus.unableToProcess, "Document validation failed")
                                                               : Self.status(RequestStatus.success, "Success")), effects)
        case .document(.confirm):
            let ok: Bool
            if case let .confirm(c) = input { ok = c } else { ok = false }
            if ok && r.documentStatus != .invalid {
                effects.append(audit(r, "document_confirmed", ["result": .string(r.documentStatus?.rawValue ?? "")]))
                return try lift(r, askSelfieStart(r, now: facts.now), effects, facts: facts, env: env) { .selfie($0) }
            }
            // Post-login KYC (mode 9): the details screen's Close is the cancel API and ends KYC
            // with 240 (seed 000 §1.3, L1265–L1300); activation (mode 8) rescans.
            if !ok, kind == .kyc { return try endFor(r, .cancelled(preLogin: false), facts: facts, env: env).after(effects) }
            // Rejected by the user, or an INVALID document "confirmed": the server does not accept it.
            if docLeft(r) <= 0 { return try endFor(r, .exhausted("document"), facts: facts, env: env) }
            effects.append(audit(r, "document_rescan", ["user_rejected": .bool(!ok)]))
            return try lift(r, askDocStart(r, status: ok ? Self.status(RequestStatus.unableToProcess, "The document is not valid; scan a valid document") : nil),
                            effects, facts: facts, env: env) { .document($0) }
        case let .selfie(.start(challenge)):
            return try lift(r, selfieStart(r, challenge: challenge, input, now: facts.now), effects, facts: facts, env: env) { .selfie($0) }
        case let .selfie(.upload(challenge)):
            if case .cancel = input { return try endFor(r, .cancelled(preLogin: kind.preLogin), facts: facts, env: env) }
            if evidence.referenceMissing { throw IDVError(.internalError, "no confirmed document portrait to match") }
            let (next, analysed) = try selfieUpload(&r, challenge: challenge, input, evidence, facts, env, &effects)
            guard let (e, j) = analysed else { return try lift(r, next, effects, facts: facts, env: env) { .selfie($0) } }
            r.reviewSelfie = policy.reviewTriggers(selfie: e, judged: j)
            r.selfieMedia = nil
            if kind == .kyc, !r.reviewTriggers.isEmpty, let frame = e.bestFrameJPEG {
                // Evidence for the reviewer: the best frame, sealed to this run, held until the decision.
                let id = env.newID()
                effects.append(.sealMedia(id: id, kind: .selfie, bytes: Array(frame)))
                r.selfieMedia = id
            }
            let documentStep = !r.againstTemplate
            let buttons = IDVReports.actionButtons(verdict: j.verdict, policy: policy, selfieLeft: selfieLeft(r), documentLeft: docLeft(r),
                                                   documentStep: documentStep)
            let offered = (j.verdict == .matched ? buttons.successButton : buttons.failureButton).map(\.key)
            if offered.isEmpty { return try endFor(r, .exhausted("selfie"), facts: facts, env: env).after(effects) }
            var portrait: String?
            if case let .portrait(p)? = evidence.reference { portrait = p.base64EncodedString() }
            // Seed 002's confirmation screen shows the scores: only for MATCHED, rounded
            // (WorkflowPolicy.shownScores) — never for an attack verdict (no oracle to tune against).
            let shown = WorkflowPolicy.shownScores(j)
            let details = SelfieDetails(
                responseData: SelfieAnalysis(
                    biometricResult: BiometricResult(displayText: j.verdict, resultCriteria: j.resultCriteria),
                    faceMatcherResponse: shown?.faceMatch.map { FaceMatcherResponse(score: $0) },
                    analyzeLivenessResponse: shown.map { AnalyzeLivenessResponse(video: LivenessVideo(
                        livenessResult: LivenessResult(score: $0.liveness),
                        autocaptureResult: e.bestFrameJPEG.map { AutocaptureResult(selfieImage: $0.base64EncodedString()) })) },
                    documentDetail: documentStep ? SelfieDocumentDetail(documentInfo: SelfieDocumentInfo(portraitImage: portrait, name: evidence.displayName)) : nil),
                actionButtons: buttons, userID: r.userID)
            var payload = try JSONValue(encoding: details)
            let hints = WorkflowPolicy.retryHints(j)
            if j.verdict == .livenessFailed, !hints.isEmpty {
                payload = Self.setting(payload, ["response_data", "liveness_reasons"], .array(hints.map { .string($0) }))
            }
            return .ask(IDVState(run: r, step: .selfie(.confirm(offered: offered))),
                        spec(WireName.getIDVSelfieConfirmation, r, attemptsLeft: selfieLeft(r), payload: payload,
                             status: Self.status(RequestStatus.success, "Success")), effects)
        case .selfie(.confirm):
            if case .confirm(false) = input {
                // The user rejected the selfie: capture it again while attempts remain (seed 002 A4).
                effects.append(audit(r, "selfie_rejected", ["verdict": r.verdict.map { .string($0.rawValue) } ?? .null,
                                                            "selfie_attempts_left": .integer(selfieLeft(r))]))
                r.embedding = nil
                if selfieLeft(r) <= 0 { return try endFor(r, .exhausted("selfie"), facts: facts, env: env).after(effects) }
                return try lift(r, askSelfieStart(r, now: facts.now), effects, facts: facts, env: env) { .selfie($0) }
            }
            guard case let .action(key) = input else { throw IDVError(.internalError, "selfie confirmation without an action") }
            effects.append(audit(r, "selfie_action", ["action": .string(key.rawValue), "verdict": r.verdict.map { .string($0.rawValue) } ?? .null]))
            switch key {
            case .reinitSelfie:
                return try lift(r, askSelfieStart(r, now: facts.now), effects, facts: facts, env: env) { .selfie($0) }
            case .reinitDocumentScan:
                effects.append(.releaseMedia(keepUntil: nil))
                r.portraitMedia = nil
                r.portraitSource = nil
                r.nameMedia = nil
                r.embedding = nil
                return try lift(r, askDocStart(r), effects, facts: facts, env: env) { .document($0) }
            default:
                // Consent is asked only when a template could be created from this run (a MATCHED
                // selfie against the document; not in the template variants, which matched the template).
                if r.verdict == .matched, r.embedding != nil, !r.againstTemplate, !underReview(r) {
                    return .ask(IDVState(run: r, step: .consent), spec(WireName.getIDVBiometricOptInConsent, r, attemptsLeft: -1, payload: [
                        "consent_text_version": .string(policy.consentTextVersion),
                        "consent_text": .string("Store a biometric template (a numeric face descriptor, not your photo), encrypted, to verify you later. You can withdraw this at any time (opt-out)."),
                    ], status: Self.status(RequestStatus.success, "Success")), effects)
                }
                return try complete(r, facts: facts, env: env).after(effects)
            }
        case .consent:
            guard case let .optIn(granted) = input else { throw IDVError(.internalError, "consent without a decision") }
            let consentID = recordConsent(r, granted: granted, facts: facts, env: env, &effects)
            r.consent = granted
            if granted { try enrol(&r, consentID: consentID, &effects) }
            return try complete(r, facts: facts, env: env).after(effects)
        }
    }

    /// Whether this run ends under review instead of a decision: a KYC with a review trigger. (A run
    /// under review asks no consent: a template is made only from a decided verification.)
    func underReview(_ r: IDVRun) -> Bool { kind == .kyc && !r.reviewTriggers.isEmpty }

    /// The positive end of activation / KYC (status 400 when continued without a match), or the
    /// review case the policy asks for (``underReview(_:)``).
    func complete(_ r: IDVRun, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        if underReview(r) {
            let rc = ReviewCaseRecord(caseID: "rev_" + env.newID(), runID: env.runID, userID: r.userID, flow: name, triggers: r.reviewTriggers,
                                      openedAt: facts.now)
            return try end(r, .underReview, facts: facts, env: env)
                .after([.openReview(rc), audit(r, "review_opened", ["case_id": .string(rc.caseID),
                                                                    "triggers": .array(rc.triggers.map { .string($0.rawValue) })])])
        }
        let e = r.verdict == .matched ? Ending.success
            : Ending(outcome: kind == .activation ? .completed : .completedUnverified, error: .none, statusCode: RequestStatus.unableToProcess,
                     statusMessage: "Identity not verified: \(r.verdict?.rawValue ?? "")", success: false)
        return try end(r, e, facts: facts, env: env)
    }
}

// MARK: - Additional document scan (seed 003)

/// Document only, repeatable: the scan is stored (report sealed) and returned in seed 003's shape.
public struct DocumentScanFlow: IDVFlowSteps {
    public typealias Step = DocumentStep
    public typealias State = IDVState<DocumentStep>
    public typealias Input = IDVInput
    public var kind: IDVKind { .documentScan }
    public let services: IDVServices
    public init(services: IDVServices) { self.services = services }

    public func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        let (r, effects) = try newRun(input, facts: facts, env: env)
        return try lift(r, askDocStart(r), effects, facts: facts, env: env) { $0 }
    }

    public func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge) throws -> IDVInput {
        switch state.step {
        case .start: return try parseDocumentStart(a)
        case .upload: return try parsePages(a)
        case .confirm: throw IDVError(.internalError, "document scan in unexpected step")
        }
    }

    public func evidence(_ state: State, input: IDVInput, config: ServerConfig) -> EvidenceRequest {
        if case .upload = state.step, case let .pages(pages, chip) = input { return .document(pages: pages, chip: chip) }
        return .none
    }

    public func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts) { return try end(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        switch state.step {
        case .start:
            return try lift(r, documentStart(r, input), effects, facts: facts, env: env) { $0 }
        case .upload:
            let (next, read) = try documentUpload(&r, input, evidence, facts, &effects)
            guard let (doc, judged) = read else { return try lift(r, next, effects, facts: facts, env: env) { $0 } }
            let scanID = env.newID()
            let stored = IDVReports.additionalScan(doc, judged: judged, withImages: false, policy: policy)
            effects.append(.saveDocumentScan(DocumentScanRecord(scanID: scanID, userID: r.userID, sessionID: facts.session.sessionID, runID: env.runID,
                                                                idvWorkflow: r.idvWorkflow, reason: r.reason, overallStatus: judged.status.rawValue,
                                                                sealedReport: nil, createdAt: facts.now),
                                             report: try stored.toJSONData()))
            r.scanID = scanID
            let payload = try JSONValue(encoding: IDVReports.additionalScan(doc, judged: judged, withImages: true, policy: policy))
            // A read document is a processed scan — status 100 — whatever its checks found: seed 003's
            // result screen shows `document_status` (ERROR with its error list); 400 would send the
            // codelab to its "scan failed" alert (L461–L464, L1128–L1133). The run's outcome and
            // audit still say whether the document was valid.
            let ok = judged.status != .invalid
            return try end(r, Ending(outcome: ok ? .completed : .documentInvalid, error: .none, statusCode: RequestStatus.success,
                                     statusMessage: ok ? "Success" : "Scanned; the document has errors", success: ok),
                           facts: facts, env: env, payload: payload).after(effects)
        case .confirm:
            throw IDVError(.internalError, "document scan in unexpected step")
        }
    }
}

// MARK: - Server biometric authentication (seed 001)

/// A selfie against the stored template; locked out after `idv.biometric_attempts` consecutive failures.
public struct ServerBiometricFlow: IDVFlowSteps {
    public typealias Step = SelfieStep
    public typealias State = IDVState<SelfieStep>
    public typealias Input = IDVInput
    public var kind: IDVKind { .serverBiometric }
    public var usesBiometricHistory: Bool { true }
    public let services: IDVServices
    public init(services: IDVServices) { self.services = services }

    public func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        let (r, effects) = try newRun(input, facts: facts, env: env)
        guard facts.template != nil else {
            return try endBiometric(r, Ending(outcome: .noTemplate, error: IDVError(.templateNotFound), statusCode: RequestStatus.noTemplate,
                                              statusMessage: IDVErrorCode.templateNotFound.message, success: false), facts: facts, env: env).after(effects)
        }
        if biometricAttemptsLeft(facts) <= 0 {
            return try endBiometric(r, .exhausted("biometric authentication"), facts: facts, env: env).after(effects)
        }
        return try lift(r, askSelfieStart(r, now: facts.now), effects, facts: facts, env: env) { $0 }
    }

    public func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge) throws -> IDVInput {
        switch state.step {
        case .start: return try parseSelfieStart(a)
        case .upload: return try parseFrames(a, challenge)
        case .confirm: throw IDVError(.internalError, "server biometric authentication in unexpected step")
        }
    }

    public func evidence(_ state: State, input: IDVInput, config: ServerConfig) -> EvidenceRequest {
        if case let .upload(challenge) = state.step, case let .frames(frames, fps, _, presence) = input {
            return .selfie(frames: frames, framesPerSecond: fps, reference: .template(orPortrait: nil), challenge: challenge, nameMedia: nil,
                           presence: presence)
        }
        return .none
    }

    public func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts) { return try endBiometric(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        switch state.step {
        case let .start(challenge):
            return try lift(r, selfieStart(r, challenge: challenge, input, now: facts.now), effects, facts: facts, env: env) { $0 }
        case let .upload(challenge):
            if case .cancel = input { return try endBiometric(r, .cancelled(preLogin: false), facts: facts, env: env) }
            if evidence.referenceMissing {
                return try endBiometric(r, Ending(outcome: .noTemplate, error: IDVError(.templateNotFound), statusCode: RequestStatus.noTemplate,
                                                  statusMessage: IDVErrorCode.templateNotFound.message, success: false), facts: facts, env: env)
            }
            let (next, analysed) = try selfieUpload(&r, challenge: challenge, input, evidence, facts, env, &effects)
            guard let (_, j) = analysed else { return try lift(r, next, effects, facts: facts, env: env) { $0 } }
            let ending: Ending
            switch j.verdict {
            case .matched: ending = Ending(outcome: .matched, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true)
            case .livenessFailed: ending = Ending(outcome: .livenessFailed, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: false)
            default: ending = Ending(outcome: .notMatched, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: false)
            }
            return try endBiometric(r, ending, facts: facts, env: env, judgement: j, capture: input).after(effects)
        case .confirm:
            throw IDVError(.internalError, "server biometric authentication in unexpected step")
        }
    }
}

// MARK: - Biometric opt-in and opt-out (seed 004)

/// Re-authentication (LDA, else the password), a live selfie, the user's approval of the frame,
/// then the template under a recorded consent.
public struct OptInFlow: IDVFlowSteps {
    public enum Step: Codable, Sendable, Equatable {
        case reauth(ReauthStep)
        case selfie(SelfieStep)
        /// `onIDVOptInCapturedFrameConfirmation`.
        case frameConfirm
    }
    public typealias State = IDVState<Step>
    public typealias Input = IDVInput
    public var kind: IDVKind { .optIn }
    public let services: IDVServices
    public init(services: IDVServices) { self.services = services }

    public func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var (r, effects) = try newRun(input, facts: facts, env: env)
        if facts.template != nil {
            return try end(r, Ending(outcome: .templateExists, error: IDVError(.templateExists), statusCode: RequestStatus.unableToProcess,
                                     statusMessage: IDVErrorCode.templateExists.message, success: false), facts: facts, env: env).after(effects)
        }
        let ask = askReauth(&r, facts: facts, env: env)
        return try lift(r, ask, effects, facts: facts, env: env) { .reauth($0) }
    }

    public func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge) throws -> IDVInput {
        switch state.step {
        case let .reauth(step): return try parseReauth(step, a, challenge)
        case .selfie(.start): return try parseSelfieStart(a)
        case .selfie(.upload): return try parseFrames(a, challenge)
        case .selfie(.confirm): throw IDVError(.internalError, "opt-in in unexpected step")
        case .frameConfirm:
            guard let raw = a.payload["status"]?.intValue, let st = IDVStatus(rawValue: raw) else {
                throw IDVError(.malformedRequest, "payload.status must be 0 (APPROVED), 1 (RECAPTURE) or 2 (CANCEL)")
            }
            return .frameStatus(st)
        }
    }

    public func credential(_ state: State, input: IDVInput) -> (kind: CredentialKind, userID: String)? {
        if case .reauth(.password) = state.step, case .password = input { return (.password, state.run.userID) }
        return nil
    }

    public func evidence(_ state: State, input: IDVInput, config: ServerConfig) -> EvidenceRequest {
        switch (state.step, input) {
        case let (.reauth(.password), .password(pw)): return .passwordCheck(pw)
        case let (.selfie(.upload(challenge)), .frames(frames, fps, _, presence)):
            return .selfie(frames: frames, framesPerSecond: fps, reference: .none, challenge: challenge, nameMedia: nil, presence: presence)
        default: return .none
        }
    }

    public func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts) { return try end(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        switch state.step {
        case .reauth:
            let result = reauth(&r, input, evidence, facts, env, &effects)
            guard case .next = result else { return try lift(r, result, effects, facts: facts, env: env) { .reauth($0) } }
            return try lift(r, askSelfieStart(r, now: facts.now), effects, facts: facts, env: env) { .selfie($0) }
        case let .selfie(.start(challenge)):
            return try lift(r, selfieStart(r, challenge: challenge, input, now: facts.now), effects, facts: facts, env: env) { .selfie($0) }
        case let .selfie(.upload(challenge)):
            let (next, analysed) = try selfieUpload(&r, challenge: challenge, input, evidence, facts, env, &effects)
            guard let (e, j) = analysed else { return try lift(r, next, effects, facts: facts, env: env) { .selfie($0) } }
            if j.verdict != .matched {
                if selfieLeft(r) <= 0 { return try end(r, .exhausted("selfie"), facts: facts, env: env).after(effects) }
                return try lift(r, askSelfieUpload(r, challenge: nil, now: facts.now,
                                                   status: Self.status(RequestStatus.unableToProcess, BiometricVerdict.livenessFailed.rawValue),
                                                   livenessReasons: j.verdict == .livenessFailed ? WorkflowPolicy.retryHints(j).nilIfEmpty : nil),
                                effects, facts: facts, env: env) { .selfie($0) }
            }
            return .ask(IDVState(run: r, step: .frameConfirm), spec(WireName.onIDVOptInCapturedFrameConfirmation, r, attemptsLeft: selfieLeft(r), payload: [
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
                if selfieLeft(r) <= 0 { return try end(r, .exhausted("selfie"), facts: facts, env: env).after(effects) }
                return try lift(r, askSelfieUpload(r, challenge: nil, now: facts.now), effects, facts: facts, env: env) { .selfie($0) }
            case .cancel:
                return try end(r, .cancelled(preLogin: false), facts: facts, env: env).after(effects)
            }
        }
    }
}

/// Re-authentication, then the template erased and the withdrawal recorded.
public struct OptOutFlow: IDVFlowSteps {
    public typealias Step = ReauthStep
    public typealias State = IDVState<ReauthStep>
    public typealias Input = IDVInput
    public var kind: IDVKind { .optOut }
    public let services: IDVServices
    public init(services: IDVServices) { self.services = services }

    public func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var (r, effects) = try newRun(input, facts: facts, env: env)
        if facts.template == nil {
            return try end(r, Ending(outcome: .noTemplate, error: .none, statusCode: RequestStatus.noTemplate,
                                     statusMessage: IDVErrorCode.templateNotFound.message, success: false), facts: facts, env: env).after(effects)
        }
        let ask = askReauth(&r, facts: facts, env: env)
        return try lift(r, ask, effects, facts: facts, env: env) { $0 }
    }

    public func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge) throws -> IDVInput {
        try parseReauth(state.step, a, challenge)
    }

    public func credential(_ state: State, input: IDVInput) -> (kind: CredentialKind, userID: String)? {
        if case .password = state.step, case .password = input { return (.password, state.run.userID) }
        return nil
    }

    public func evidence(_ state: State, input: IDVInput, config: ServerConfig) -> EvidenceRequest {
        if case .password = state.step, case let .password(pw) = input { return .passwordCheck(pw) }
        return .none
    }

    public func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts) { return try end(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        let result = reauth(&r, input, evidence, facts, env, &effects)
        guard case .next = result else { return try lift(r, result, effects, facts: facts, env: env) { $0 } }
        let erased = facts.template != nil
        effects.append(.deleteTemplate(userID: r.userID))
        effects.append(audit(r, "template_erased", ["erased": .bool(erased)]))
        if erased {
            effects.append(.publish(.templateDeleted, userID: r.userID, data: WebhookEventData(
                flow: name, idvWorkflow: r.idvWorkflow, idvAuditTransactionID: r.txn, consentID: facts.template?.consentID)))
            _ = recordConsent(r, granted: false, facts: facts, env: env, &effects)
            return try end(r, Ending(outcome: .templateErased, error: .none, statusCode: RequestStatus.success, statusMessage: "Success", success: true),
                           facts: facts, env: env, templateExists: false).after(effects)
        }
        return try end(r, Ending(outcome: .noTemplate, error: .none, statusCode: RequestStatus.noTemplate,
                                 statusMessage: IDVErrorCode.templateNotFound.message, success: false),
                       facts: facts, env: env, templateExists: false).after(effects)
    }
}

// MARK: - Template status (`checkIDVUserBiometricTemplateStatus`)

/// 100 when a template exists, 600 when none; ends at once.
public struct TemplateStatusFlow: IDVFlowSteps {
    /// The flow never waits.
    public enum Step: Codable, Sendable, Equatable { case ended }
    public typealias State = IDVState<Step>
    public typealias Input = IDVInput
    public var kind: IDVKind { .templateStatus }
    public var usesBiometricHistory: Bool { true }
    public let services: IDVServices
    public init(services: IDVServices) { self.services = services }

    public func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        let (r, effects) = try newRun(input, facts: facts, env: env)
        let exists = facts.template != nil
        let code = exists ? RequestStatus.success : RequestStatus.noTemplate
        let msg = exists ? "Success" : "No biometric template exists for the user"
        let payload = BiometricTemplateStatus(statusCode: code, statusMessage: msg, result: exists,
                                              attemptsLeft: biometricAttemptsLeft(facts), userID: r.userID)
        return try end(r, Ending(outcome: exists ? .templateExists : .noTemplate, error: .none, statusCode: code, statusMessage: msg, success: true),
                       facts: facts, env: env, payload: try JSONValue(encoding: payload)).after(effects)
    }

    public func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge) throws -> IDVInput {
        throw IDVError(.internalError, "the template-status check asks nothing")
    }

    public func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        throw IDVError(.internalError, "the template-status check asks nothing")
    }
}

// MARK: - Registry

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
        self.services = services
        let documents = services.documents != nil || includeUnavailable
        let selfies = services.selfies != nil || includeUnavailable
        if documents && selfies {
            register(IdentityFlow(.activation, services: services), activationFor: IDVWorkflow.allCases.filter(\.isPreLogin))
            register(IdentityFlow(.kyc, services: services))
        } else {
            unavailable.formUnion([IdentityFlow(.activation, services: services).name, IdentityFlow(.kyc, services: services).name])
        }
        if documents { register(DocumentScanFlow(services: services)) } else { unavailable.insert(DocumentScanFlow(services: services).name) }
        if selfies {
            register(ServerBiometricFlow(services: services))
            register(OptInFlow(services: services))
        } else {
            unavailable.formUnion([ServerBiometricFlow(services: services).name, OptInFlow(services: services).name])
        }
        register(OptOutFlow(services: services))
        register(TemplateStatusFlow(services: services))
    }
}
