import Foundation
import IDVCore

// MARK: - Additional document scan (seed 003)

/// Document only, repeatable: the scan is stored (report sealed) and returned in seed 003's shape.
struct DocumentScanFlow: IDVFlowSteps {
    typealias Step = DocumentStep
    typealias State = IDVState<DocumentStep>
    typealias Input = IDVInput
    var kind: IDVKind { .documentScan }
    let services: IDVServices
    init(services: IDVServices) { self.services = services }

    func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        let (r, effects) = try newRun(input, facts: facts, env: env)
        return try lift(r, askDocStart(r, env), effects, facts: facts, env: env) { $0 }
    }

    func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> IDVInput {
        switch state.step {
        case .start: return try parseConfirm(a)
        case .upload: return try parsePages(a, settings.workflow)
        case .chip: return try parseDocumentChip(a)
        case .confirm: throw IDVError(.internalError, "document scan in unexpected step")
        }
    }

    func evidence(_ state: State, input: IDVInput, settings: EngineSettings) -> EvidenceRequest {
        switch (state.step, input) {
        case let (.upload(challenge), .pages(pages, chip)):
            return .document(pages: pages, chip: chip, chipChallenge: challenge?.challenge)
        case let (.upload, .pagesThenChip(pages)):
            return .document(pages: pages, chip: nil, chipChallenge: nil)
        case let (.chip(challenge, pages), .chipFiles(chip)):
            return .document(pages: pages, chip: chip, chipChallenge: challenge?.challenge)
        default:
            return .none
        }
    }

    func reduce(_ state: State, input: IDVInput, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        var r = state.run
        if expired(r, facts, env) { return try end(r, .expired, facts: facts, env: env) }
        var effects: [Effect] = []
        switch state.step {
        case .start:
            return try lift(r, documentStart(r, input, env), effects, facts: facts, env: env) { $0 }
        case .upload, .chip:
            if case let .pagesThenChip(pages) = input, case let .success(t)? = evidence.document {
                return try lift(r, askDocChip(r, env, pages: pages, read: t.value), effects, facts: facts, env: env) { $0 }
            }
            let (next, read) = try documentUpload(&r, input, evidence, facts, env, &effects)
            guard let (doc, judged) = read else { return try lift(r, next, effects, facts: facts, env: env) { $0 } }
            let scanID = env.newID()
            let stored = IDVReports.additionalScan(doc, judged: judged, withImages: false, policy: env.policy)
            effects.append(.saveDocumentScan(DocumentScanRecord(scanID: scanID, userID: r.userID, sessionID: facts.session.sessionID, runID: env.runID,
                                                                idvWorkflow: r.idvWorkflow, reason: r.reason, overallStatus: judged.status.rawValue,
                                                                sealedReport: nil, createdAt: facts.now),
                                             report: try stored.toJSONData()))
            r.scanID = scanID
            let payload = try JSONValue(encoding: IDVReports.additionalScan(doc, judged: judged, withImages: true, policy: env.policy))
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
