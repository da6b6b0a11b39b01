import Foundation
import IDVCore

/// An audit action name (the `audit_log.action` column): namespaced, e.g. `session.login`,
/// `idv.selfie_verified`.
public struct AuditAction: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// What kind of media a run keeps sealed in `idv_media` (associated data `media:<run_id>:<kind>`).
public enum MediaKind: String, Codable, Sendable {
    /// The document portrait cropped by the reader (JPEG): the reference of the selfie match.
    case portrait
    /// The document holder's display name (UTF-8): shown on the selfie confirmation.
    case name
    /// The best selfie frame's face descriptor (little-endian float32): the template on consent.
    case embedding
    /// The best selfie frame (JPEG), kept only for a run the policy sends to review.
    case selfie
}

/// A change a flow asks for. The engine applies a transition's effects in order, inside the
/// answer's write transaction, together with the session compare-and-set: all or nothing.
public enum Effect: Sendable, Equatable {
    /// Appends an audit entry for the session (details: ids and codes only, never personal data).
    /// `userID` nil: the session's user.
    case audit(AuditAction, userID: String?, details: [String: JSONValue])
    /// Associates the session with a user (known, not yet authenticated); nil clears it.
    case setSessionUser(String?)
    /// Marks the session logged in for the user, binds the session's device to the user if
    /// unbound (and records its use), audits `session.login`.
    case logIn(userID: String)
    case saveUser(UserRecord)
    case saveActivationCode(ActivationCodeRecord)
    case saveDevice(DeviceRecord)
    /// Seals `bytes` as media `id` of the current run.
    case sealMedia(id: String, kind: MediaKind, bytes: [UInt8])
    /// At the run's end: deletes its media now (`keepUntil` nil) or marks it to expire then.
    case releaseMedia(keepUntil: Int?)
    /// At an abandoned run's end (reset, log-off, session expiry or revocation): the run is recorded
    /// with this outcome instead of the abandon reason's (a server biometric run whose retake was
    /// forfeited counts as LIVENESS_FAILED, IDVSteps+Endings.swift `forfeitedRetake`).
    case endRunAs(FlowOutcome)
    /// Stores the user's template from the sealed descriptor media `fromMedia` of this run
    /// (replacing any previous template), under consent `consentID`.
    case saveTemplate(userID: String, fromMedia: String, model: String, consentID: String)
    /// Erases the user's template.
    case deleteTemplate(userID: String)
    case recordConsent(ConsentRecord)
    /// Stores a document scan; `report` (the seed 003 JSON without images) is sealed to it.
    case saveDocumentScan(DocumentScanRecord, report: Data)
    /// Counts an outcome of `flow` that does not end its run (e.g. `locked`).
    case countOutcome(flow: String, outcome: FlowOutcome)
    /// Opens a review case for the current run (RelyingParty/Review.swift); its media stay held
    /// (no expiry) until the decision.
    case openReview(ReviewCaseRecord)
    /// A reviewer's decision: recorded on the case (compare-and-set: 1135 when already decided),
    /// the run's outcome set, the run's held media released under the retention rules. The hook
    /// point of the "review resolved" event.
    case resolveReview(ReviewResolution)
    /// Writes a webhook event to the outbox (Webhooks/Outbox.swift; docs/WEBHOOKS.md) in this
    /// transaction: it exists iff the change it reports commits. `data.runID` nil: the current run.
    /// `data` holds ids and codes only (``WebhookEventData``).
    case publish(WebhookEventType, userID: String?, data: WebhookEventData)
    /// A wrong password or activation code for `userID` from the request's client: counted by the
    /// engine's ``AbuseLimits`` once the transaction commits (back-off, the client's budget).
    case credentialFailed(CredentialKind, userID: String)
    /// A right password or code for `userID`: the client's back-off history for the user is forgotten.
    case credentialSucceeded(CredentialKind, userID: String)
    /// A request a flow refused because `limit` holds for its client (a back-off seen at `getUser`):
    /// counted in `idvd_limit_refusals_total` once the transaction commits.
    case limitRefused(AbuseLimit)
    /// Keeps the digests of a judged selfie capture's frames until `expiresAt` (Unix seconds), so the
    /// same bytes uploaded again fail as a replay (``CaptureDigestStore``, Workflows/Presence.swift).
    case recordCaptureDigests([String], expiresAt: Int)
    /// A PAD challenge drawn for `userID`: one of the user's ``PADPolicy/challengeWindowSeconds`` budget spent.
    case spendPADChallenge(userID: String)
    /// A PAD challenge answered by the reference's own live face (the capture MATCHED): the `count` tokens the run drew
    /// since its last refund are given back (a person who follows the challenges is never locked
    /// out by them; only failed, abandoned or unanswered draws stay counted).
    case refundPADChallenges(userID: String, count: Int)
}
