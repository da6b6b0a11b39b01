import Foundation
import IDVCore

// The review queue (issue #23): the policy may send a decision to a person instead of deciding.
// Which evidence does is configuration (`review.*`, all off by default); the KYC flow then ends
// "under review" (1130 on the device), a review case is opened with the run's images held sealed,
// and a reviewer (an API client with the `review` scope, or `idvd admin review decide`) approves or
// rejects it with a reason. The decision is audited, becomes the run's outcome, and releases the
// held images under `idv.media_retention_seconds` like any ended run.

/// Why the policy sent a verification to review (audited and shown to the reviewer).
public enum ReviewTrigger: String, Codable, Sendable, CaseIterable {
    /// `review.document_warning`: the document verdict is WARNING.
    case documentWarning = "document_warning"
    /// `review.match_band`: the descriptor distance is within the band around the match threshold.
    case matchNearThreshold = "match_near_threshold"
    /// `review.liveness_band`: the liveness score is within the band around `idv.liveness_threshold`.
    case livenessNearThreshold = "liveness_near_threshold"
    /// `review.chip_unknown_csca`: the chip's document signer chains to no trusted CSCA.
    case chipUnknownCSCA = "chip_unknown_csca"
}

/// A reviewer's decision.
public enum ReviewDecision: String, Codable, Sendable, CaseIterable {
    case approve, reject

    /// The run's outcome after the decision.
    public var outcome: FlowOutcome { self == .approve ? .completed : .reviewRejected }
}

/// The review settings (`review.*`), part of ``WorkflowPolicy`` (the policy alone routes to review).
public struct ReviewPolicy: Sendable, Equatable {
    /// A WARNING document goes to review (default off).
    public var documentWarning = false
    /// Half-width of the band around the face-match distance threshold (0 = off): a MATCHED or
    /// NOT_MATCHED selfie whose distance is within it goes to review. In the comparison's own
    /// units (``FaceMatchEvidence/metric``): cosine distance (0–2) for the recogniser's portraits and
    /// version-3 templates, Euclidean distance for a version-1/2 template's dlib comparison.
    public var matchBand = 0.0
    /// Half-width of the band around `idv.liveness_threshold` (score points 0–100; 0 = off).
    public var livenessBand = 0
    /// A chip whose CSCA is unknown (not in the trust store) goes to review (default off).
    public var chipUnknownCSCA = false

    public init() {}

    public var enabled: Bool { documentWarning || matchBand > 0 || livenessBand > 0 || chipUnknownCSCA }
}

extension WorkflowPolicy {
    /// The review triggers of a judged document (``ReviewPolicy``): a WARNING verdict, a chip with
    /// an unknown CSCA. Empty when none applies (or review is off).
    public func reviewTriggers(document doc: DocumentEvidence, judged: DocumentJudgement) -> [ReviewTrigger] {
        var t: [ReviewTrigger] = []
        if review.documentWarning, judged.status == .warning { t.append(.documentWarning) }
        if review.chipUnknownCSCA, let chip = doc.chip, chip.failures.contains(.cscaUnknown), judged.status != .invalid { t.append(.chipUnknownCSCA) }
        return t
    }

    /// The review triggers of a judged selfie: a liveness score within ``ReviewPolicy/livenessBand``
    /// of the threshold (not for an issued challenge that was not met: score 0), a descriptor distance
    /// within ``ReviewPolicy/matchBand`` of ``matchThreshold(_:)``.
    public func reviewTriggers(selfie e: SelfieEvidence, judged j: SelfieJudgement) -> [ReviewTrigger] {
        var t: [ReviewTrigger] = []
        if review.livenessBand > 0, j.livenessScore > 0, abs(j.livenessScore - livenessThreshold) <= review.livenessBand { t.append(.livenessNearThreshold) }
        if review.matchBand > 0, j.verdict != .livenessFailed, let m = e.match, abs(m.distance - matchThreshold(m)) <= review.matchBand {
            t.append(.matchNearThreshold)
        }
        return t
    }
}

/// One review case: a verification (flow run) the policy left to a person.
public struct ReviewCaseRecord: Sendable, Equatable {
    public var caseID: String
    public var runID: String
    public var userID: String
    public var flow: String
    public var triggers: [ReviewTrigger]
    public var openedAt: Int
    public var decidedAt: Int?
    public var decision: ReviewDecision?
    /// The reviewer's reason (1–256 characters; an operator's words, not personal data of the user).
    public var decisionReason: String?
    /// `client:<client_id>` or `admin`.
    public var reviewer: String?

    public init(caseID: String, runID: String, userID: String, flow: String, triggers: [ReviewTrigger], openedAt: Int,
                decidedAt: Int? = nil, decision: ReviewDecision? = nil, decisionReason: String? = nil, reviewer: String? = nil) {
        self.caseID = caseID
        self.runID = runID
        self.userID = userID
        self.flow = flow
        self.triggers = triggers
        self.openedAt = openedAt
        self.decidedAt = decidedAt
        self.decision = decision
        self.decisionReason = decisionReason
        self.reviewer = reviewer
    }

    public var pending: Bool { decision == nil }
}

/// A review decision as the engine applies it (``Effect/resolveReview(_:)``): THE hook point of
/// "review resolved" — the webhook outbox enqueues its event where this effect is applied, in the
/// same transaction.
public struct ReviewResolution: Sendable, Equatable {
    public var caseID: String
    public var runID: String
    public var userID: String
    public var flow: String
    public var decision: ReviewDecision
    public var reason: String
    public var reviewer: String
    public var decidedAt: Int
    public init(caseID: String, runID: String, userID: String, flow: String, decision: ReviewDecision, reason: String, reviewer: String, decidedAt: Int) {
        self.caseID = caseID
        self.runID = runID
        self.userID = userID
        self.flow = flow
        self.decision = decision
        self.reason = reason
        self.reviewer = reviewer
        self.decidedAt = decidedAt
    }
}
