import Foundation
import IDVCore

extension FlowEngine {
    // MARK: Effects

    func vault() throws -> any Vault {
        guard let v = services?.vault else { throw IDVError(.internalError, "no vault: the IDV flows are not registered") }
        return v
    }

    /// Applies one effect inside the transaction (media effects on run `runID`).
    package func apply(_ effect: Effect, runID: String?, _ c: Commit) throws {
        switch effect {
        case let .audit(action, userID, details):
            var d = details
            d["request_id"] = .string(c.requestID)
            // The run it belongs to: the relying-party read API lists a verification's audit records by it.
            if let runID, d["run_id"] == nil { d["run_id"] = .string(runID) }
            try store.appendAudit(action: action.rawValue, userID: userID ?? c.session.userID, sessionID: c.session.sessionID,
                                  details: .object(d), at: c.now)
        case let .setSessionUser(uid):
            c.session.userID = uid
        case let .logIn(uid):
            c.session.userID = uid
            c.session.loggedIn = true
            // A new token at login (session fixation, OWASP ASVS 3.2.1): the token the session had
            // before the password was checked stops working; the new one goes out once, in this answer.
            let token = crypto.token()
            c.session.tokenHash = crypto.sha256Hex(token)
            c.issuedToken = token
            if let did = c.session.deviceID, var d = try store.device(did) {
                if d.userID == nil { d.userID = uid }
                d.lastUsedAt = c.now
                try store.saveDevice(d)
            }
            try apply(.audit(AuditAction("session.login"), userID: uid, details: ["device_id": c.session.deviceID.map { .string($0) } ?? .null]),
                      runID: runID, c)
        case let .saveUser(u): try store.saveUser(u)
        case let .saveActivationCode(code): try store.saveActivationCode(code)
        case let .saveDevice(d): try store.saveDevice(d)
        case let .sealMedia(id, kind, bytes):
            guard let runID else { throw IDVError(.internalError, "media outside a flow run") }
            let box = try vault().seal(bytes, associatedData: VaultBinding.media(runID: runID, kind: kind.rawValue))
            try store.saveMedia(MediaRecord(mediaID: id, runID: runID, kind: kind, sealed: box, createdAt: c.now))
        case let .releaseMedia(keepUntil):
            guard let runID else { return }
            try store.releaseMedia(runID: runID, keepUntil: keepUntil)
        case let .endRunAs(outcome):
            guard let runID else { return }
            c.runOutcomes[runID] = outcome
        case let .saveTemplate(uid, mediaID, model, consentID):
            guard let runID, let m = try store.media(mediaID), m.runID == runID else {
                throw IDVError(.internalError, "no face descriptor kept for enrolment")
            }
            // The analyser's template bytes as kept (version 2: fused from the capture's best frames).
            let bytes = try vault().open(m.sealed, associatedData: VaultBinding.media(runID: runID, kind: MediaKind.embedding.rawValue))
            guard !bytes.isEmpty else { throw IDVError(.internalError, "no face descriptor kept for enrolment") }
            try store.saveBiometricTemplate(BiometricTemplateRecord(userID: uid, sealed: try vault().sealTemplate(bytes: bytes, userID: uid),
                                                                              model: model, consentID: consentID, createdAt: c.now))
        case let .deleteTemplate(uid):
            try store.deleteBiometricTemplate(userID: uid)
        case let .recordConsent(consent):
            try store.recordConsent(consent)
        case let .saveDocumentScan(record, report):
            var r = record
            r.sealedReport = try vault().seal(Array(report), associatedData: VaultBinding.scan(scanID: record.scanID))
            try store.saveDocumentScan(r)
        case let .countOutcome(flow, outcome):
            c.outcomes.append((flow, outcome))
        case let .openReview(rc):
            try store.createReviewCase(rc)
        case let .resolveReview(r):
            guard try store.decideReviewCase(r.caseID, decision: r.decision, reason: r.reason, reviewer: r.reviewer, at: r.decidedAt,
                                          runOutcome: r.decision.outcome) else {
                throw IDVError(.reviewAlreadyDecided)
            }
            let keep = settings.workflow.mediaRetentionSeconds > 0 ? r.decidedAt + settings.workflow.mediaRetentionSeconds : nil
            try store.releaseMedia(runID: r.runID, keepUntil: keep)
            c.outcomes.append((r.flow, r.decision.outcome))
            // The relying party hears the decision (docs/WEBHOOKS.md `review.resolved`), in this
            // transaction: ids and codes only, never the reviewer's free-text reason.
            try enqueue(.reviewResolved, userID: r.userID, data: WebhookEventData(
                flow: r.flow, runID: r.runID, outcome: r.decision.outcome, reviewID: r.caseID, decision: r.decision.rawValue),
                runID: r.runID, now: c.now)
        case let .publish(type, userID, data):
            try enqueue(type, userID: userID ?? c.session.userID, data: data, runID: runID, now: c.now)
        case let .credentialFailed(kind, uid):
            c.credentials.append((true, kind, uid))
        case let .credentialSucceeded(kind, uid):
            c.credentials.append((false, kind, uid))
        case let .limitRefused(limit):
            c.refusals.append(limit)
        case let .recordCaptureDigests(digests, expiresAt):
            try recordCaptureDigests(digests, now: c.now, expiresAt: expiresAt)
        case let .spendPADChallenge(uid):
            try limits.adjustPADChallenges(userID: uid, by: -1, capacity: settings.workflow.biometricAttempts,
                                           window: settings.workflow.pad.challengeWindowSeconds, now: c.now)
        case let .refundPADChallenges(uid, count):
            try limits.adjustPADChallenges(userID: uid, by: Double(count), capacity: settings.workflow.biometricAttempts,
                                           window: settings.workflow.pad.challengeWindowSeconds, now: c.now)
        }
    }

}
