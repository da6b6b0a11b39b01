import Foundation
import IDVCore

// Activation with IDV (seed 002) and post-login KYC (seed 000): one flow type, two kinds.

/// Document, then selfie against its portrait (or, in activation variants 1, 2, 4, against the
/// stored template), then consent to a template; activation returns to `auth` (password next),
/// KYC ends with `onIDVActivatedCustomerKYCResponse`.
struct IdentityFlow: IDVFlowSteps {
    enum Step: Codable, Sendable, Equatable {
        case document(DocumentStep)
        case selfie(SelfieStep)
        case consent
    }
    typealias State = IDVState<Step>
    typealias Input = IDVInput

    let kind: IDVKind
    let services: IDVServices

    /// `kind` is `.activation` or `.kyc`.
    init(_ kind: IDVKind, services: IDVServices) {
        precondition(kind == .activation || kind == .kyc, "IdentityFlow runs activation or KYC")
        self.kind = kind
        self.services = services
    }

    /// KYC reads the user's recent liveness failures (``Facts/livenessFailures``).
    var usesBiometricHistory: Bool { kind == .kyc }

    func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var (r, effects) = try newRun(input, facts: facts, env: env)
        if kind == .kyc, let refusal = selfieRefusal(facts, env) {
            return try end(r, .exhausted(refusal), facts: facts, env: env).after(effects)
        }
        // Variants "with template" (1, 2, 4) re-prove identity against the stored template.
        if kind == .activation, [1, 2, 4].contains(r.idvWorkflow), facts.template != nil {
            r.againstTemplate = true
            return try lift(r, askSelfieStart(r, now: facts.now, env), effects, facts: facts, env: env) { .selfie($0) }
        }
        return try lift(r, askDocStart(r, env), effects, facts: facts, env: env) { .document($0) }
    }

    func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> IDVInput {
        switch state.step {
        case .document(.start): return try parseConfirm(a)
        case .document(.upload): return try parsePages(a, settings.workflow)
        case .document(.chip): return try parseDocumentChip(a)
        case .document(.confirm): return try parseDocumentDetails(a)
        case .selfie(.start): return try parseSelfieStart(a)
        case .selfie(.upload): return try parseFrames(a, settings.workflow, challenge)
        case let .selfie(.confirm(offered)):
            let raw = try answer(a, as: SelfieConfirmationActionAnswer.self).action
            // "false" rejects the selfie (seed 002 A4), whatever buttons were offered.
            guard case let .action(key) = SelfieConfirmationAnswer(raw) else { return .confirm(false) }
            // Seed 000's KYC selfie screen has one button, "Continue", and sends "true" whatever the
            // verdict (L1413). After a failed match (no continue-flow offered) it ends the KYC
            // unverified — status 400, never a success — instead of being refused (1020) and shown
            // again for ever; the explicit key "continue-flow" stays refused.
            if raw == SelfieConfirmationAnswer.continueString, kind == .kyc, !offered.contains(.continueFlow) { return .action(.continueFlow) }
            guard offered.contains(key) else {
                throw IDVError(.actionNotOffered, "The action '\(raw.prefix(40))' was not offered (offered: \(offered.map(\.rawValue).joined(separator: ", ")))")
            }
            return .action(key)
        case .consent: return .optIn(try answer(a, as: OptInConsentAnswer.self).isOptIn)
        }
    }

    func evidence(_ state: State, input: IDVInput, settings: EngineSettings) -> EvidenceRequest {
        switch (state.step, input) {
        case let (.document(.upload(challenge)), .pages(pages, chip)):
            return .document(pages: pages, chip: chip, chipChallenge: challenge?.challenge)
        case let (.document(.upload), .pagesThenChip(pages)):
            return .document(pages: pages, chip: nil, chipChallenge: nil)
        case let (.document(.chip(challenge, pages)), .chipFiles(chip)):
            return .document(pages: pages, chip: chip, chipChallenge: challenge?.challenge)
        case let (.selfie(.upload(challenge)), .frames(frames, fps, _, presence)):
            let reference: ReferenceRequest = state.run.againstTemplate ? .template(orPortrait: state.run.portraitMedia)
                : state.run.portraitMedia.map { .portrait($0) } ?? .template(orPortrait: nil)
            return .selfie(frames: frames, framesPerSecond: fps, reference: reference, challenge: challenge, nameMedia: state.run.nameMedia,
                           presence: presence)
        default: return .none
        }
    }

    func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts, env) { return try endFor(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        switch state.step {
        case .document(.start):
            return try lift(r, documentStart(r, input, env), effects, facts: facts, env: env) { .document($0) }
        case .document(.upload), .document(.chip):
            if case let .pagesThenChip(pages) = input, case let .success(t)? = evidence.document {
                return try lift(r, askDocChip(r, env, pages: pages, read: t.value), effects, facts: facts, env: env) { .document($0) }
            }
            let (next, read) = try documentUpload(&r, input, evidence, facts, env, &effects)
            guard let (doc, judged) = read else { return try lift(r, next, effects, facts: facts, env: env) { .document($0) } }
            // Keep (sealed) what the next steps need: the portrait for the match — the chip's DG2 when
            // the chip is authentic (docs/CHIP.md), else the page's — and the name for the selfie screen.
            r.portraitMedia = nil
            r.portraitSource = nil
            let chipPortrait = env.policy.chipPortraitUsable(doc.chip) ? doc.chip?.portraitJPEG : nil
            if let p = chipPortrait ?? doc.portraitJPEG {
                let id = env.newID()
                effects.append(.sealMedia(id: id, kind: .portrait, bytes: Array(p)))
                r.portraitMedia = id
                r.portraitSource = chipPortrait != nil ? .chip : .page
            }
            // The judged report (seed 003 shape, no images) is kept sealed for the relying party's read
            // API (the verification's document fields and checks); the review triggers noted.
            r.reviewDocument = env.policy.reviewTriggers(document: doc, judged: judged)
            effects.append(.saveDocumentScan(DocumentScanRecord(scanID: env.newID(), userID: r.userID, sessionID: facts.session.sessionID, runID: env.runID,
                                                                idvWorkflow: r.idvWorkflow, reason: r.reason, overallStatus: judged.status.rawValue,
                                                                sealedReport: nil, createdAt: facts.now),
                                             report: try IDVReports.additionalScan(doc, judged: judged, withImages: false, policy: env.policy).toJSONData()))
            let display = [doc.fields.givenNames, doc.fields.surname].filter { !$0.isEmpty }.joined(separator: " ")
            let nameID = env.newID()
            effects.append(.sealMedia(id: nameID, kind: .name, bytes: Array(display.utf8)))
            r.nameMedia = nameID
            return .ask(IDVState(run: r, step: .document(.confirm)),
                        spec(WireName.getIDVConfirmDocumentDetails, r, attemptsLeft: docLeft(r, env),
                             payload: try JSONValue(encoding: IDVReports.documentDetails(doc, judged: judged)),
                             status: judged.status == .invalid ? Self.status(RequestStatus.unableToProcess, "Document validation failed")
                                                               : Self.status(RequestStatus.success, "Success")), effects)
        case .document(.confirm):
            let ok: Bool
            if case let .confirm(c) = input { ok = c } else { ok = false }
            let rescan: Bool
            if case .action(.reinitDocumentScan) = input { rescan = true } else { rescan = false }
            if ok && r.documentStatus != .invalid {
                effects.append(audit(r, "document_confirmed", ["result": .string(r.documentStatus?.rawValue ?? "")]))
                return try lift(r, askSelfieStart(r, now: facts.now, env), effects, facts: facts, env: env) { .selfie($0) }
            }
            // Post-login KYC (mode 9): the details screen's Close is the cancel API and ends KYC
            // with 240 (seed 000 §1.3, L1265–L1300); its Recapture (`rescan`) and activation's
            // `false` (mode 8) rescan.
            if !ok, !rescan, kind == .kyc { return try endFor(r, .cancelled(preLogin: false), facts: facts, env: env).after(effects) }
            // Rejected by the user, or an INVALID document "confirmed": the server does not accept it.
            if docLeft(r, env) <= 0 { return try endFor(r, .exhausted("document"), facts: facts, env: env) }
            effects.append(audit(r, "document_rescan", ["user_rejected": .bool(!ok)]))
            return try lift(r, askDocStart(r, env, status: ok ? Self.status(RequestStatus.unableToProcess, "The document is not valid; scan a valid document") : nil),
                            effects, facts: facts, env: env) { .document($0) }
        case let .selfie(.start(challenge)):
            return try lift(r, selfieStart(r, challenge: challenge, input, now: facts.now, env), effects, facts: facts, env: env) { .selfie($0) }
        case let .selfie(.upload(challenge)):
            if case .cancel = input { return try endFor(r, .cancelled(preLogin: kind.preLogin), facts: facts, env: env) }
            if evidence.referenceMissing { throw IDVError(.internalError, "no confirmed document portrait to match") }
            let (next, analysed) = try selfieUpload(&r, challenge: challenge, input, evidence, facts, env, &effects)
            guard let (e, j) = analysed else { return try lift(r, next, effects, facts: facts, env: env) { .selfie($0) } }
            r.reviewSelfie = env.policy.reviewTriggers(selfie: e, judged: j)
            r.selfieMedia = nil
            if kind == .kyc, !r.reviewTriggers.isEmpty, let frame = e.bestFrameJPEG {
                // Evidence for the reviewer: the best frame, sealed to this run, held until the decision.
                let id = env.newID()
                effects.append(.sealMedia(id: id, kind: .selfie, bytes: Array(frame)))
                r.selfieMedia = id
            }
            let documentStep = !r.againstTemplate
            let buttons = IDVReports.actionButtons(verdict: j.verdict, policy: env.policy, selfieLeft: selfieLeft(r, env), documentLeft: docLeft(r, env),
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
                        spec(WireName.getIDVSelfieConfirmation, r, attemptsLeft: selfieLeft(r, env), payload: payload,
                             status: Self.status(RequestStatus.success, "Success")), effects)
        case .selfie(.confirm):
            if case .confirm(false) = input {
                // The user rejected the selfie: capture it again while attempts remain (seed 002 A4).
                effects.append(audit(r, "selfie_rejected", ["verdict": r.verdict.map { .string($0.rawValue) } ?? .null,
                                                            "selfie_attempts_left": .integer(selfieLeft(r, env))]))
                r.embedding = nil
                if selfieLeft(r, env) <= 0 { return try endFor(r, .exhausted("selfie"), facts: facts, env: env).after(effects) }
                return try lift(r, askSelfieStart(r, now: facts.now, env), effects, facts: facts, env: env) { .selfie($0) }
            }
            guard case let .action(key) = input else { throw IDVError(.internalError, "selfie confirmation without an action") }
            effects.append(audit(r, "selfie_action", ["action": .string(key.rawValue), "verdict": r.verdict.map { .string($0.rawValue) } ?? .null]))
            switch key {
            case .reinitSelfie:
                return try lift(r, askSelfieStart(r, now: facts.now, env), effects, facts: facts, env: env) { .selfie($0) }
            case .reinitDocumentScan:
                effects.append(.releaseMedia(keepUntil: nil))
                r.portraitMedia = nil
                r.portraitSource = nil
                r.nameMedia = nil
                r.embedding = nil
                return try lift(r, askDocStart(r, env), effects, facts: facts, env: env) { .document($0) }
            default:
                // Consent is asked only when a template could be created from this run (a MATCHED
                // selfie against the document; not in the template variants, which matched the template).
                if r.verdict == .matched, r.embedding != nil, !r.againstTemplate, !underReview(r) {
                    return .ask(IDVState(run: r, step: .consent), spec(WireName.getIDVBiometricOptInConsent, r, attemptsLeft: -1, payload: [
                        "consent_text_version": .string(env.policy.consentTextVersion),
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
