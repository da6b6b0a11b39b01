import Foundation
import IDVCore

extension IDVFlowSteps {
    // MARK: Document step

    func askDocStart(_ r: IDVRun, _ env: FlowEnv, status: RequestStatus? = nil) -> StepResult<DocumentStep> {
        .ask(.start, spec(WireName.getIDVDocumentScanProcessStartConfirmation, r, attemptsLeft: docLeft(r, env),
                          payload: Self.payload(CaptureStartPayload(idvWorkflow: r.idvWorkflow)), status: status))
    }

    /// `uploadIDVDocumentPages`, with a fresh chip challenge (`chip_challenge`, IDVCore ``ChipChallengePayload``:
    /// 8 bytes from the CSPRNG, expiring with the flow) when this server verifies chips.
    func askDocUpload(_ r: IDVRun, _ env: FlowEnv, error: IDVError? = nil) -> StepResult<DocumentStep> {
        let challenge = services.chips == nil ? nil
            : ChipChallengePayload(challenge: env.crypto.randomBytes(ChipChallengePayload.challengeBytes),
                                   expiresAt: r.startedAt + env.policy.flowTimeoutSeconds)
        return .ask(.upload(chipChallenge: challenge), spec(WireName.uploadIDVDocumentPages, r, attemptsLeft: docLeft(r, env),
                                                            payload: Self.payload(DocumentUploadRequest(maxPages: env.policy.maxPages, chipChallenge: challenge)),
                                                            error: error))
    }

    /// `readIDVDocumentChip` after pages sent with `"chip_follows": true` and read: a fresh chip challenge and
    /// SHA-1(MRZ_information) of the MRZ read from the pages (IDVCore ``DocumentChipReadRequest``; absent when no MRZ
    /// was read). The pages wait in the step (sealed with the flow state); the digest is never logged or audited.
    func askDocChip(_ r: IDVRun, _ env: FlowEnv, pages: [Data], read: DocumentEvidence) -> StepResult<DocumentStep> {
        let challenge = ChipChallengePayload(challenge: env.crypto.randomBytes(ChipChallengePayload.challengeBytes),
                                             expiresAt: r.startedAt + env.policy.flowTimeoutSeconds)
        let digest = read.mrzLines.isEmpty ? nil : services.chips?.mrzInformationDigest(printedMRZ: read.mrzLines)
        return .ask(.chip(chipChallenge: challenge, pages: pages),
                    spec(WireName.readIDVDocumentChip, r, attemptsLeft: docLeft(r, env),
                         payload: Self.payload(DocumentChipReadRequest(chipChallenge: challenge, mrzInformationDigest: digest))))
    }

    /// `getIDVDocumentScanProcessStartConfirmation` answered.
    func documentStart(_ r: IDVRun, _ input: IDVInput, _ env: FlowEnv) -> StepResult<DocumentStep> {
        guard case .confirm(true) = input else { return .end(.cancelled(preLogin: kind.preLogin)) }
        if docLeft(r, env) <= 0 { return .end(.exhausted("document")) }
        return askDocUpload(r, env)
    }

    /// `uploadIDVDocumentPages` answered: the read document and its judgement, or what to do.
    func documentUpload(_ r: inout IDVRun, _ input: IDVInput, _ evidence: Evidence, _ facts: Facts, _ env: FlowEnv,
                        _ effects: inout [Effect])
        throws -> (StepResult<DocumentStep>, (DocumentEvidence, DocumentJudgement)?) {
        if case .cancel = input { return (.end(.cancelled(preLogin: kind.preLogin)), nil) }
        guard let read = evidence.document else { throw IDVError(.internalError, "the document was not read") }
        r.documentAttempts += 1
        switch read {
        case let .failure(e):
            effects.append(audit(r, "document_read", ["result": .string("unreadable"), "error_code": .integer(e.longErrorCode),
                                                      "attempt": .integer(r.documentAttempts)]))
            if docLeft(r, env) <= 0 { return (.end(.exhausted("document")), nil) }
            return (askDocUpload(r, env, error: e), nil)
        case let .success(t):
            let doc = t.value
            let judged = env.policy.judge(doc, today: WorkflowPolicy.utcDay(facts.now), needsPortrait: kind != .documentScan)
            r.documentStatus = judged.status
            effects.append(audit(r, "document_read", ["result": .string(judged.status.rawValue), "attempt": .integer(r.documentAttempts),
                                                      "errors": .integer(judged.errors.count), "warnings": .integer(judged.warnings.count),
                                                      "format": .string(doc.fields.format), "duration_ms": .integer(t.milliseconds),
                                                      "chip": doc.chip.map { .string(env.policy.chipReason($0).rawValue) } ?? .null,
                                                      "active_authentication": doc.chip.map { .string($0.activeAuthentication.code) } ?? .null,
                                                      "active_authentication_detail": doc.chip.flatMap { c -> JSONValue? in
                                                          switch c.activeAuthentication {
                                                          case let .verified(m): return .string(m)
                                                          case let .failed(f, d): return .string(f.rawValue + "/" + d)
                                                          default: return nil
                                                          }
                                                      } ?? .null,
                                                      "chip_authentication_reported": doc.chip?.reportedChipAuthentication.map { .string($0.rawValue) } ?? .null,
                                                      "images_judged": .array(evidence.judgedImages.map(\.json)),
                                                      "policy_version": .string(env.policy.version(crypto: env.crypto))]))
            return (.next, (doc, judged))
        }
    }

}
