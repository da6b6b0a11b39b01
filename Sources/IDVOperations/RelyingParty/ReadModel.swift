import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

// The relying-party read model (`GET /v1/rp/…`): what the store keeps — users, flow runs, the
// hash-chained audit, sealed document reports, consents, templates, review cases — as typed views
// for the bank's backend. Scores belong here (server to server), never on the device.

/// A page of a list and the cursor of the next one (nil: this was the last page).
public struct RPPage<Item: Codable & Sendable>: Codable, Sendable {
    public var items: [Item]
    public var nextCursor: String?
    enum CodingKeys: String, CodingKey { case items, nextCursor = "next_cursor" }
}

/// A list request: time window (Unix seconds, `since` inclusive, `until` exclusive), cursor, size.
public struct RPListQuery: Sendable, Equatable {
    public var since: Int?
    public var until: Int?
    public var cursor: RunCursor?
    /// 1…100 (default 50).
    public var limit: Int

    public init(since: Int? = nil, until: Int? = nil, cursor: RunCursor? = nil, limit: Int = 50) {
        self.since = since
        self.until = until
        self.cursor = cursor
        self.limit = limit
    }

    /// Parses the query-string arguments `since`, `until`, `cursor`, `limit`; 1134 for a bad
    /// cursor or time, 1025 for a limit outside 1…100. Unknown arguments are refused (1025).
    public init(query: [String: String]) throws {
        for k in query.keys where !["since", "until", "cursor", "limit"].contains(k) {
            throw IDVError(.invalidArgument, "unknown query argument '\(k.prefix(32))'; this list takes since, until, cursor, limit")
        }
        func time(_ k: String) throws -> Int? {
            guard let v = query[k] else { return nil }
            guard let n = Int(v), n >= 0 else { throw IDVError(.invalidCursor, "\(k) must be Unix seconds (a non-negative integer)") }
            return n
        }
        since = try time("since")
        until = try time("until")
        if let s = since, let u = until, u <= s { throw IDVError(.invalidCursor, "until must be after since") }
        cursor = try query["cursor"].map { try RunCursor(token: $0) }
        if let l = query["limit"] {
            guard let n = Int(l), (1...100).contains(n) else { throw IDVError(.invalidArgument, "limit must be an integer in 1…100") }
            limit = n
        } else {
            limit = 50
        }
    }
}

/// The user's biometric template, as the read API shows it (never the descriptor).
public struct RPTemplateView: Codable, Sendable, Equatable {
    public var exists: Bool
    /// `checkIDVUserBiometricTemplateStatus`'s code: 100 exists, 600 none.
    public var statusCode: Int
    public var model: String?
    public var createdAt: Int?
    public var consentID: String?
    enum CodingKeys: String, CodingKey { case exists, statusCode = "status_code", model, createdAt = "created_at", consentID = "consent_id" }
}

/// A user's current state.
public struct RPUserView: Codable, Sendable {
    public var userID: String
    public var state: UserState
    public var activated: Bool
    public var createdAt: Int
    public var template: RPTemplateView
    /// The newest ended post-login KYC (nil: none yet).
    public var lastKYC: RPVerificationSummary?
    enum CodingKeys: String, CodingKey { case userID = "user_id", state, activated, createdAt = "created_at", template, lastKYC = "last_kyc" }
}

/// A review case as the read API shows it.
public struct RPReviewView: Codable, Sendable, Equatable {
    public var caseID: String
    public var verificationID: String
    public var userID: String
    public var triggers: [ReviewTrigger]
    public var openedAt: Int
    /// `pending`, `approved` or `rejected`.
    public var state: String
    public var decidedAt: Int?
    public var decision: ReviewDecision?
    public var reason: String?
    public var reviewer: String?
    enum CodingKeys: String, CodingKey {
        case caseID = "case_id", verificationID = "verification_id", userID = "user_id", triggers, openedAt = "opened_at", state
        case decidedAt = "decided_at", decision, reason, reviewer
    }

    init(_ c: ReviewCaseRecord) {
        caseID = c.caseID
        verificationID = c.runID
        userID = c.userID
        triggers = c.triggers
        openedAt = c.openedAt
        state = c.decision.map { $0 == .approve ? "approved" : "rejected" } ?? "pending"
        decidedAt = c.decidedAt
        decision = c.decision
        reason = c.decisionReason
        reviewer = c.reviewer
    }
}

/// One verification (a flow run) in a list.
public struct RPVerificationSummary: Codable, Sendable, Equatable {
    /// The flow run id.
    public var verificationID: String
    public var userID: String?
    /// Registry name, e.g. `idv.postlogin.kyc`.
    public var flow: String
    public var idvWorkflow: Int?
    public var startedAt: Int
    /// nil while the flow runs.
    public var endedAt: Int?
    /// ``FlowOutcome`` (nil while running); `pending_review` until a reviewer decides.
    public var outcome: FlowOutcome?
    /// The terminal `long_error_code` (0 success, 240 cancelled, 1130 under review, …).
    public var errorCode: Int?
    public var review: RPReviewView?
    enum CodingKeys: String, CodingKey {
        case verificationID = "verification_id", userID = "user_id", flow, idvWorkflow = "idv_workflow", startedAt = "started_at"
        case endedAt = "ended_at", outcome, errorCode = "error_code", review
    }
}

/// The document step of a verification as judged (the last judged upload).
public struct RPDocumentResult: Codable, Sendable, Equatable {
    /// `VALID` / `INVALID` / `WARNING`, or `unreadable`.
    public var result: String
    public var attempt: Int?
    public var format: String?
    public var errors: Int?
    public var warnings: Int?
    /// The chip's verification reason (`genuine`, `active_authentication_not_performed`, `csca_unknown`, …) when chip data was sent.
    public var chip: String?
}

/// The selfie step of a verification as judged (the last judged capture): scores included.
public struct RPSelfieResult: Codable, Sendable, Equatable {
    /// `MATCHED` / `NOT_MATCHED` / `LIVENESS_FAILED`, or `unusable` / `recapture` / `retake` (the
    /// last capture was asked again: PAD unsure, 1066, or a faint reflection, 1071, and the run
    /// ended before its retake).
    public var result: String
    public var reason: String?
    public var attempt: Int?
    /// 0–100 (ISO/IEC 30107-3 PAD score of the analyser, fused texture + motion).
    public var livenessScore: Int?
    /// 0–1 (1 − distance / 1.2).
    public var faceMatchScore: Double?
    /// The descriptor-distance line the match was judged with.
    public var matchThreshold: Double?
    /// Liveness cues (e.g. `NO_BLINK`).
    public var cues: [String]?
    /// `chip` or `page`: where the face reference came from.
    public var reference: String?
    /// What presence the capture was judged under (docs/LIVENESS.md "Presence"): `illumination`
    /// (it followed the server's colour sequence), `fallback_active` / `fallback_passive` (the client
    /// could not or would not flash), `not_checked` (`idv.presence = off`); nil for a capture not
    /// judged.
    public var presenceAssurance: String?
    /// `followed`, `not_followed` or `not_asked`: whether the reflected light followed the sequence.
    public var presence: String?
    enum CodingKeys: String, CodingKey {
        case result, reason, attempt, livenessScore = "liveness_score", faceMatchScore = "face_match_score"
        case matchThreshold = "match_threshold", cues, reference
        case presenceAssurance = "presence_assurance", presence
    }
}

/// A stored document report: the seed 003 JSON (identity data, document info, checks), no images.
public struct RPDocumentScanView: Codable, Sendable {
    public var scanID: String
    public var verificationID: String?
    public var idvWorkflow: Int?
    public var reason: String
    public var overallStatus: String
    public var createdAt: Int
    /// `identity_data`, `document_info`, `document_status` (seed 003), opened from the vault.
    public var report: JSONValue?
    enum CodingKeys: String, CodingKey {
        case scanID = "scan_id", verificationID = "verification_id", idvWorkflow = "idv_workflow", reason
        case overallStatus = "overall_status", createdAt = "created_at", report
    }
}

/// One verification in full.
public struct RPVerificationView: Codable, Sendable {
    public var verification: RPVerificationSummary
    /// `idv_audit_transaction_id`.
    public var transactionID: String?
    public var reason: String?
    public var document: RPDocumentResult?
    public var selfie: RPSelfieResult?
    public var consent: Bool?
    public var templateCreated: Bool?
    /// The judged document reports of this run (every judged upload, oldest first).
    public var documents: [RPDocumentScanView]
    enum CodingKeys: String, CodingKey {
        case verification, transactionID = "transaction_id", reason, document, selfie, consent, templateCreated = "template_created", documents
    }
}

/// A consent decision.
public struct RPConsentView: Codable, Sendable, Equatable {
    public var consentID: String
    public var kind: String
    /// true: given; false: refused or withdrawn (opt-out).
    public var granted: Bool
    /// `given` or `withdrawn` (a refusal at enrolment is `refused`).
    public var event: String
    public var flow: String
    public var verificationID: String?
    public var textVersion: String
    public var recordedAt: Int
    enum CodingKeys: String, CodingKey {
        case consentID = "consent_id", kind, granted, event, flow, verificationID = "verification_id", textVersion = "text_version"
        case recordedAt = "recorded_at"
    }
}

/// An audit record of a verification with its place in the chain.
public struct RPAuditRecord: Codable, Sendable, Equatable {
    /// The chain position (1-based sequence number).
    public var seq: Int
    public var at: Int
    public var action: String
    public var details: JSONValue
    public var prevHash: String
    public var hash: String
    enum CodingKeys: String, CodingKey { case seq, at, action, details, prevHash = "prev_hash", hash }
}

/// What a reviewer sees: the verification, its triggers, and the images held for it.
public struct RPReviewCaseView: Codable, Sendable {
    public var review: RPReviewView
    public var verification: RPVerificationView
    /// The held images of this run only, base64 JPEG by kind (`portrait`: the document's, `selfie`:
    /// the best frame); empty once the decision released them.
    public var images: [String: String]
}

/// `POST /v1/rp/verifications`.
public struct RPVerificationRequest: Codable, Sendable {
    public var userID: String
    /// `idv.postlogin.kyc` (default for an active user) or an activation link for a user pending activation.
    public var flow: String?
    /// Why (1–128 characters), audited.
    public var reason: String
    /// Lifetime of the link, seconds (default `links.ttl_seconds`, at most 30 days).
    public var expiresIn: Int?
    enum CodingKeys: String, CodingKey, CaseIterable { case userID = "user_id", flow, reason, expiresIn = "expires_in" }
    /// Decodes the four fields; any other key is refused (``UnknownFieldError``).
    public init(from decoder: any Decoder) throws {
        try UnknownFieldError.refuseOthers(than: CodingKeys.self, in: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        userID = try c.decode(String.self, forKey: .userID)
        flow = try c.decodeIfPresent(String.self, forKey: .flow)
        reason = try c.decode(String.self, forKey: .reason)
        expiresIn = try c.decodeIfPresent(Int.self, forKey: .expiresIn)
    }
    public init(userID: String, flow: String? = nil, reason: String, expiresIn: Int? = nil) {
        self.userID = userID
        self.flow = flow
        self.reason = reason
        self.expiresIn = expiresIn
    }
}

/// `POST /v1/rp/verifications`'s answer: the hosted-page link (token shown once).
public struct RPVerificationCreated: Codable, Sendable {
    public var linkID: String
    public var userID: String
    public var flow: String
    public var url: String
    public var expiresAt: Int
    enum CodingKeys: String, CodingKey { case linkID = "link_id", userID = "user_id", flow, url, expiresAt = "expires_at" }
}

/// `POST /v1/rp/reviews/{case_id}/decision`.
public struct RPReviewDecisionRequest: Codable, Sendable {
    public var decision: ReviewDecision
    /// 1–256 characters.
    public var reason: String
    enum CodingKeys: String, CodingKey, CaseIterable { case decision, reason }
    /// Decodes the two fields; any other key is refused (``UnknownFieldError``).
    public init(from decoder: any Decoder) throws {
        try UnknownFieldError.refuseOthers(than: CodingKeys.self, in: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        decision = try c.decode(ReviewDecision.self, forKey: .decision)
        reason = try c.decode(String.self, forKey: .reason)
    }
    public init(decision: ReviewDecision, reason: String) { self.decision = decision; self.reason = reason }
}

/// A request body's JSON object held a key its type does not define. The relying-party API refuses
/// such bodies (1001 naming the key) so that a misspelt optional field (`expires_at` for
/// `expires_in`) is not silently ignored; the OpenAPI document says `additionalProperties: false`.
public struct UnknownFieldError: Error, Sendable {
    /// The unknown key's path, e.g. `expires_at`.
    public let path: String

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Throws for the first key (in sorted order) of `decoder`'s object that `keys` lacks; returns
    /// when the value is not an object (the keyed decode after it reports the type mismatch).
    public static func refuseOthers<K: CodingKey & CaseIterable>(than keys: K.Type, in decoder: any Decoder) throws {
        guard let c = try? decoder.container(keyedBy: AnyKey.self) else { return }
        let known = Set(K.allCases.map(\.stringValue))
        if let k = c.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            throw UnknownFieldError(path: (decoder.codingPath.map(\.stringValue) + [k]).joined(separator: "."))
        }
    }
}

/// The read API, the verification start and the review queue over the engine's store.
public struct RelyingPartyAPI: Sendable {
    public let engine: FlowEngine
    /// The server's configuration: a verification start issues its link as `idvd admin create-link`
    /// does (`links.ttl_seconds`, `web.public_url`).
    public let config: ServerConfig
    public init(engine: FlowEngine, config: ServerConfig) {
        self.engine = engine
        self.config = config
    }

    var store: any EngineStore { engine.store }

    /// The flows the read API lists as verifications (the IDV flows with a verdict).
    public static let verificationFlows = [FlowName.activation, FlowName.kyc, FlowName.documentScan, FlowName.serverBiometric,
                                           FlowName.optIn, FlowName.optOut]

    func user(_ id: String) throws -> UserRecord {
        guard Admin.validUserID(id), let u = try store.user(id) else { throw IDVError(.userNotFound) }
        return u
    }

    // MARK: Reads

    public func userState(_ userID: String) throws -> RPUserView {
        let u = try user(userID)
        let s = store
        let t = try s.biometricTemplate(userID: userID)
        let last = try s.flowRuns(userID: userID, flows: [FlowName.kyc], since: nil, until: nil, after: nil, limit: 20).first { $0.endedAt != nil }
        return RPUserView(userID: u.userID, state: u.state, activated: u.passwordHash != nil && u.state != .pendingActivation, createdAt: u.createdAt,
                          template: RPTemplateView(exists: t != nil, statusCode: t != nil ? RequestStatus.success : RequestStatus.noTemplate,
                                                   model: t?.model, createdAt: t?.createdAt, consentID: t?.consentID),
                          lastKYC: try last.map(summary))
    }

    func summary(_ r: FlowRunView) throws -> RPVerificationSummary {
        RPVerificationSummary(verificationID: r.runID, userID: r.userID, flow: r.flow, idvWorkflow: r.idvWorkflow, startedAt: r.startedAt,
                              endedAt: r.endedAt, outcome: r.outcome, errorCode: r.errorCode, review: try store.reviewCase(runID: r.runID).map(RPReviewView.init))
    }

    /// The user's verifications, newest first.
    public func verifications(userID: String, _ q: RPListQuery) throws -> RPPage<RPVerificationSummary> {
        _ = try user(userID)
        let rows = try store.flowRuns(userID: userID, flows: Self.verificationFlows, since: q.since, until: q.until, after: q.cursor, limit: q.limit + 1)
        let page = Array(rows.prefix(q.limit))
        return RPPage(items: try page.map(summary),
                      nextCursor: rows.count > q.limit ? page.last.map { RunCursor(time: $0.startedAt, id: $0.runID).token } : nil)
    }

    func run(_ id: String) throws -> FlowRunView {
        guard id.count <= 64, let r = try store.flowRun(id), Self.verificationFlows.contains(r.flow) else {
            throw IDVError(.notFound, "No verification with that id")
        }
        return r
    }

    /// The audit entries of run `r` (its session's entries that name it), oldest first.
    func auditOf(_ r: FlowRunView) throws -> [AuditEntry] {
        try store.auditEntries(sessionID: r.sessionID).filter { $0.details["run_id"]?.stringValue == r.runID }
    }

    func scanView(_ s: DocumentScanRecord) -> RPDocumentScanView {
        var report: JSONValue?
        if let box = s.sealedReport, let vault = engine.registry.services?.vault,
           let bytes = try? vault.open(box, associatedData: VaultBinding.scan(scanID: s.scanID)) {
            report = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        }
        return RPDocumentScanView(scanID: s.scanID, verificationID: s.runID, idvWorkflow: s.idvWorkflow, reason: s.reason,
                                  overallStatus: s.overallStatus, createdAt: s.createdAt, report: report)
    }

    /// One verification with its judged evidence (from its audit records) and document reports.
    public func verification(_ id: String) throws -> RPVerificationView {
        let r = try run(id)
        let entries = try auditOf(r)
        var v = RPVerificationView(verification: try summary(r), documents: [])
        for e in entries {
            let d = e.details
            if v.transactionID == nil { v.transactionID = d["idv_audit_transaction_id"]?.stringValue }
            switch e.action {
            case "idv.document_read":
                v.document = RPDocumentResult(result: d["result"]?.stringValue ?? "", attempt: d["attempt"]?.intValue, format: d["format"]?.stringValue,
                                              errors: d["errors"]?.intValue, warnings: d["warnings"]?.intValue, chip: d["chip"]?.stringValue)
            case "idv.selfie_verified":
                v.selfie = RPSelfieResult(result: d["result"]?.stringValue ?? "", reason: d["reason"]?.stringValue, attempt: d["attempt"]?.intValue,
                                          livenessScore: d["liveness_score"]?.intValue, faceMatchScore: d["face_match_score"]?.doubleValue,
                                          matchThreshold: d["match_threshold"]?.doubleValue,
                                          cues: d["reasons"]?.arrayValue?.compactMap(\.stringValue), reference: d["reference"]?.stringValue,
                                          presenceAssurance: d["presence_assurance"]?.stringValue, presence: d["presence"]?.stringValue)
            case "idv.transaction":
                v.consent = d["consent"]?.boolValue
                v.templateCreated = d["template_created"]?.boolValue
            default:
                break
            }
        }
        if let uid = r.userID {
            v.documents = try store.documentScans(userID: uid).filter { $0.runID == r.runID }.map(scanView)
            v.reason = v.documents.first?.reason
        }
        return v
    }

    /// The audit records of a verification with their chain positions.
    public func auditRecords(_ id: String) throws -> [RPAuditRecord] {
        try auditOf(try run(id)).map { RPAuditRecord(seq: $0.seq, at: $0.at, action: $0.action, details: $0.details, prevHash: $0.prevHash, hash: $0.hash) }
    }

    /// The user's additional document scans (seed 003 flow), newest first.
    public func documentScans(userID: String, _ q: RPListQuery) throws -> RPPage<RPDocumentScanView> {
        _ = try user(userID)
        let all = try store.documentScans(userID: userID).filter { $0.idvWorkflow == IDVWorkflow.postLoginDocScanOnly.rawValue }
        return Self.page(all.map { ($0.createdAt, $0.scanID, $0) }, q) { scanView($0) }
    }

    /// The user's consent decisions, newest first.
    public func consents(userID: String, _ q: RPListQuery) throws -> RPPage<RPConsentView> {
        _ = try user(userID)
        let all = try store.consents(userID: userID)
        return Self.page(all.map { ($0.recordedAt, $0.consentID, $0) }, q) { c in
            RPConsentView(consentID: c.consentID, kind: c.kind, granted: c.granted,
                          event: c.granted ? "given" : (c.flow == FlowName.optOut ? "withdrawn" : "refused"), flow: c.flow, verificationID: c.runID,
                          textVersion: c.textVersion, recordedAt: c.recordedAt)
        }
    }

    /// Pages an in-memory list by (time, id) descending, as the flow-run lists are paged.
    static func page<T, V: Codable & Sendable>(_ rows: [(Int, String, T)], _ q: RPListQuery, _ view: (T) -> V) -> RPPage<V> {
        let sorted = rows.sorted { ($0.0, $0.1) > ($1.0, $1.1) }.filter { r in
            (q.since.map { r.0 >= $0 } ?? true) && (q.until.map { r.0 < $0 } ?? true)
                && (q.cursor.map { (r.0, r.1) < ($0.time, $0.id) } ?? true)
        }
        let page = Array(sorted.prefix(q.limit))
        return RPPage(items: page.map { view($0.2) },
                      nextCursor: sorted.count > q.limit ? page.last.map { RunCursor(time: $0.0, id: $0.1).token } : nil)
    }

    // MARK: Create

    /// Starts a verification for a user from the backend: a single-use hosted-page link (the
    /// activation link for a user pending activation, else `flow`, default KYC) with the reason
    /// audited (`rp.verification_requested`: client, link id, flow and the reason — the relying party's purpose text, e.g. "account opening").
    public func createVerification(_ req: RPVerificationRequest, client: APIClientRecord, now: Int) throws -> RPVerificationCreated {
        guard !req.reason.isEmpty, req.reason.count <= 128 else { throw IDVError(.malformedRequest, "reason must be a string of 1–128 characters") }
        _ = try user(req.userID)
        let admin = Admin(store: store, config: config, crypto: engine.crypto)
        return try store.withTransaction {
            let link = try admin.createLink(req.userID, flow: req.flow, ttlSeconds: req.expiresIn, now: now)
            try store.appendAudit(action: "rp.verification_requested", userID: req.userID, sessionID: nil,
                                  details: ["client_id": .string(client.clientID), "link_id": .string(link.linkID), "flow": .string(link.flow),
                                            "reason": .string(req.reason)], at: now)
            return RPVerificationCreated(linkID: link.linkID, userID: link.userID, flow: link.flow, url: link.url, expiresAt: link.expiresAt)
        }
    }

    // MARK: Review queue

    /// Review cases, oldest first (`pending` nil: all).
    public func reviewCases(pending: Bool?, _ q: RPListQuery) throws -> RPPage<RPReviewView> {
        let rows = try store.reviewCases(pending: pending, after: q.cursor, limit: q.limit + 1)
        let page = Array(rows.prefix(q.limit))
        return RPPage(items: page.map(RPReviewView.init),
                      nextCursor: rows.count > q.limit ? page.last.map { RunCursor(time: $0.openedAt, id: $0.caseID).token } : nil)
    }

    func reviewCase(_ caseID: String) throws -> ReviewCaseRecord {
        guard caseID.count <= 64, let c = try store.reviewCase(caseID) else { throw IDVError(.notFound, "No review case with that id") }
        return c
    }

    /// A case with its verification and the images held for that run only (opened from the vault).
    public func reviewCaseView(_ caseID: String) throws -> RPReviewCaseView {
        let c = try reviewCase(caseID)
        var images: [String: String] = [:]
        if let vault = engine.registry.services?.vault {
            for m in try store.mediaRecords(runID: c.runID) where m.kind == .portrait || m.kind == .selfie {
                if let bytes = try? vault.open(m.sealed, associatedData: VaultBinding.media(runID: c.runID, kind: m.kind.rawValue)) {
                    images[m.kind.rawValue] = Data(bytes).base64EncodedString()
                }
            }
        }
        return RPReviewCaseView(review: RPReviewView(c), verification: try verification(c.runID), images: images)
    }

    /// Decides a pending case: `approve` makes the run `completed`, `reject` `review_rejected`;
    /// audited `review.decided` (case, decision, reviewer, the reason's SHA-256) in the run's session with its
    /// run id; the held images released under `idv.media_retention_seconds`. 1135 when decided already.
    public func decide(_ caseID: String, _ d: RPReviewDecisionRequest, reviewer: String, requestID: String) throws -> RPReviewView {
        guard !d.reason.isEmpty, d.reason.count <= 256 else { throw IDVError(.malformedRequest, "reason must be a string of 1–256 characters") }
        let c = try reviewCase(caseID)
        guard c.pending else { throw IDVError(.reviewAlreadyDecided) }
        let r = try run(c.runID)
        let now = engine.clock.now()
        try engine.resolveReview(ReviewResolution(caseID: c.caseID, runID: c.runID, userID: c.userID, flow: c.flow, decision: d.decision,
                                                  reason: d.reason, reviewer: reviewer, decidedAt: now),
                                 sessionID: r.sessionID, requestID: requestID)
        return RPReviewView(try reviewCase(caseID))
    }
}
