import Foundation
import IDVCore

// Template versions: a stored template made with an older descriptor model (FaceKit versions 1
// and 2, dlib's ResNet) keeps verifying in that model's units, and is replaced by the capture's
// template of the current model (version 3) the next time its owner matches it confidently in a
// biometric authentication against it — under the consent already on record, which covers "a
// biometric template … to verify you later", not one model. docs/LIVENESS.md, "Template versions".

extension WorkflowPolicy {
    /// Whether a capture replaces the user's stored template of model `storedModel`: the upgrade
    /// is on (``upgradeLegacyTemplates``), the verdict is MATCHED (so liveness passed), the
    /// comparison was made in the stored template's model while the capture's own template
    /// (``SelfieEvidence/template``) is of another model, and the distance is at or under the
    /// stricter of the configured line and the analyser's `fmr_0.01` line — a match that only just
    /// passes at `fmr_0.1` authenticates the user but does not replace the template.
    public func replacesStoredTemplate(_ e: SelfieEvidence, judgement j: SelfieJudgement, storedModel: String) -> Bool {
        guard upgradeLegacyTemplates, j.verdict == .matched, let m = e.match, !e.template.isEmpty, !e.embedding.isEmpty,
              m.model == storedModel, e.model != storedModel else { return false }
        let strict = m.calibrated(.fmr1in10000)?.maxDistance ?? matchThreshold(m)
        return m.distance <= min(strict, matchThreshold(m))
    }
}

extension IDVFlowSteps {
    /// In a biometric authentication against the stored template (server biometric authentication,
    /// the activation variants "with template"): when the policy says the capture replaces the
    /// stored template (``WorkflowPolicy/replacesStoredTemplate(_:judgement:storedModel:)``), the
    /// effects that seal the capture's template (or reuse the one this run sealed already), save
    /// it in place of the stored one under the same consent, and audit `template_upgraded` (models,
    /// consent id; no descriptor). Empty otherwise.
    func templateUpgrade(_ r: IDVRun, _ e: SelfieEvidence, _ j: SelfieJudgement, facts: Facts, env: FlowEnv) -> [Effect] {
        guard kind == .serverBiometric || r.againstTemplate, let stored = facts.template,
              env.policy.replacesStoredTemplate(e, judgement: j, storedModel: stored.model) else { return [] }
        var effects: [Effect] = []
        let mediaID: String
        if let kept = r.embedding, kept.model == e.model {
            mediaID = kept.mediaID
        } else {
            mediaID = env.newID()
            effects.append(.sealMedia(id: mediaID, kind: .embedding, bytes: e.template))
        }
        effects.append(.saveTemplate(userID: r.userID, fromMedia: mediaID, model: e.model, consentID: stored.consentID))
        effects.append(audit(r, "template_upgraded", [
            "consent_id": .string(stored.consentID), "from_model": .string(stored.model), "to_model": .string(e.model),
            "dimensions": .integer(e.embedding.count), "template_frames": .integer(e.templateFrames),
            "match_distance": e.match.map { .number(($0.distance * 10000).rounded() / 10000) } ?? .null,
        ]))
        return effects
    }
}
