import Foundation
import IDVCore

// The webhook outbox (docs/WEBHOOKS.md): endpoints, events and their deliveries as store records.
//
// A flow reports a terminal event with ``Effect/publish(_:userID:data:)``; the engine applies it
// inside the answer's write transaction (``WebhookStore/enqueueWebhookEvent(_:)``): the event row
// and one delivery row per subscribed endpoint commit with the change they report, or not at all.
// The delivery worker (IDVWebhooks `WebhookDeliverer`, in every `idvd serve`) claims due deliveries
// under a lease, POSTs them signed, and records each attempt.

/// What an event says, besides its type, time and user: ids and codes only. Never names, document
/// numbers, birth dates, images, templates, scores or the free-text `reason` an app sends.
public struct WebhookEventData: Codable, Sendable, Equatable {
    /// Registry name of the flow (``FlowName``).
    public var flow: String?
    /// The ``IDVWorkflow`` raw value.
    public var idvWorkflow: Int?
    /// The flow run (the engine fills it in from the run that publishes the event).
    public var runID: String?
    /// The IDV transaction id the device also got (`idv_audit_info.idv_audit_transaction_id`).
    public var idvAuditTransactionID: String?
    public var outcome: FlowOutcome?
    /// SUCCESS/FAILURE as the device's `idv_audit_info.status`.
    public var success: Bool?
    public var longErrorCode: Int?
    public var statusCode: Int?
    /// The document's overall status (VALID/WARNING/INVALID) when one was read.
    public var documentStatus: DocumentStatus?
    /// The selfie verdict (MATCHED/NOT_MATCHED/LIVENESS_FAILED) when a selfie was judged.
    public var verdict: BiometricVerdict?
    public var consentID: String?
    /// The consent's kind (``ConsentRecord/biometricTemplate``).
    public var consentKind: String?
    public var granted: Bool?
    public var consentTextVersion: String?
    /// The template's model (e.g. `dlib_resnet_v1`), never its bytes.
    public var templateModel: String?
    /// Review cases (issue #23's review queue): the case and the decision code.
    public var reviewID: String?
    public var decision: String?

    enum CodingKeys: String, CodingKey {
        case flow, idvWorkflow = "idv_workflow", runID = "run_id", idvAuditTransactionID = "idv_audit_transaction_id", outcome, success
        case longErrorCode = "long_error_code", statusCode = "status_code", documentStatus = "document_status", verdict
        case consentID = "consent_id", consentKind = "consent_kind", granted, consentTextVersion = "consent_text_version"
        case templateModel = "template_model", reviewID = "review_id", decision
    }

    public init(flow: String? = nil, idvWorkflow: Int? = nil, runID: String? = nil, idvAuditTransactionID: String? = nil,
                outcome: FlowOutcome? = nil, success: Bool? = nil, longErrorCode: Int? = nil, statusCode: Int? = nil,
                documentStatus: DocumentStatus? = nil, verdict: BiometricVerdict? = nil, consentID: String? = nil,
                consentKind: String? = nil, granted: Bool? = nil, consentTextVersion: String? = nil, templateModel: String? = nil,
                reviewID: String? = nil, decision: String? = nil) {
        self.flow = flow
        self.idvWorkflow = idvWorkflow
        self.runID = runID
        self.idvAuditTransactionID = idvAuditTransactionID
        self.outcome = outcome
        self.success = success
        self.longErrorCode = longErrorCode
        self.statusCode = statusCode
        self.documentStatus = documentStatus
        self.verdict = verdict
        self.consentID = consentID
        self.consentKind = consentKind
        self.granted = granted
        self.consentTextVersion = consentTextVersion
        self.templateModel = templateModel
        self.reviewID = reviewID
        self.decision = decision
    }
}

/// A registered receiver (`idvd admin webhook add`). The signing secret is kept sealed with the
/// server's key (``VaultBinding/webhookSecret(endpointID:)``): the server must sign with it, so it
/// cannot be stored as a one-way hash the way client secrets are.
public struct WebhookEndpointRecord: Sendable, Equatable {
    public var endpointID: String
    public var url: String
    /// The event types delivered to it.
    public var events: [WebhookEventType]
    public var secret: SealedBox
    public var createdAt: Int
    /// The secret before the last rotation (`idvd admin webhook rotate-secret`), sealed like
    /// ``secret``; deliveries are signed with both until ``previousUntil`` (Unix seconds).
    public var previousSecret: SealedBox?
    public var previousUntil: Int?

    public init(endpointID: String, url: String, events: [WebhookEventType], secret: SealedBox, createdAt: Int,
                previousSecret: SealedBox? = nil, previousUntil: Int? = nil) {
        self.endpointID = endpointID
        self.url = url
        self.events = events
        self.secret = secret
        self.createdAt = createdAt
        self.previousSecret = previousSecret
        self.previousUntil = previousUntil
    }
}

/// One event in the outbox: its id and the exact body every delivery POSTs.
public struct WebhookEventRecord: Sendable, Equatable {
    public var eventID: String
    public var type: WebhookEventType
    public var createdAt: Int
    public var userID: String?
    public var runID: String?
    /// The JSON body (``WebhookEventEnvelope``, keys sorted): signed and sent byte for byte.
    public var body: Data

    public init(eventID: String, type: WebhookEventType, createdAt: Int, userID: String?, runID: String?, body: Data) {
        self.eventID = eventID
        self.type = type
        self.createdAt = createdAt
        self.userID = userID
        self.runID = runID
        self.body = body
    }
}

/// Where a delivery stands.
public enum WebhookDeliveryState: String, Codable, Sendable, CaseIterable {
    /// Not delivered yet: due at `next_attempt_at`.
    case pending
    /// The receiver answered 2xx.
    case delivered
    /// Given up: older than `webhooks.max_age_seconds`, or its endpoint was removed.
    case failed
}

/// Why an attempt failed, as the delivery log shows it: a category, never a response body.
public enum WebhookFailure: String, Codable, Sendable {
    /// The receiver answered a status other than 2xx (the status is logged beside it).
    case httpStatus = "http_status"
    /// The receiver answered with a redirect (never followed).
    case redirect
    case connectionRefused = "connection_refused"
    case timeout
    /// Name resolution, TLS or another transport error.
    case transport
    /// The URL is no longer allowed (plain http to a non-loopback host without `webhooks.allow_http`).
    case urlRefused = "url_refused"
    /// The endpoint's secret does not open under this server's key.
    case secretUnreadable = "secret_unreadable"
    /// The endpoint was removed before the event was delivered.
    case endpointRemoved = "endpoint_removed"
}

/// One row of the delivery log (`idvd admin webhook deliveries`): one event to one endpoint.
public struct WebhookDeliveryRecord: Codable, Sendable, Equatable {
    public var deliveryID: String
    public var eventID: String
    public var eventType: WebhookEventType
    public var endpointID: String
    public var state: WebhookDeliveryState
    public var attempts: Int
    public var createdAt: Int
    public var nextAttemptAt: Int?
    public var lastAttemptAt: Int?
    /// The last HTTP status received (nil: no answer).
    public var lastStatus: Int?
    public var lastError: WebhookFailure?
    public var deliveredAt: Int?

    enum CodingKeys: String, CodingKey {
        case deliveryID = "delivery_id", eventID = "event_id", eventType = "event_type", endpointID = "endpoint_id", state, attempts
        case createdAt = "created_at", nextAttemptAt = "next_attempt_at", lastAttemptAt = "last_attempt_at", lastStatus = "last_status"
        case lastError = "last_error", deliveredAt = "delivered_at"
    }

    public init(deliveryID: String, eventID: String, eventType: WebhookEventType, endpointID: String, state: WebhookDeliveryState,
                attempts: Int, createdAt: Int, nextAttemptAt: Int?, lastAttemptAt: Int? = nil, lastStatus: Int? = nil,
                lastError: WebhookFailure? = nil, deliveredAt: Int? = nil) {
        self.deliveryID = deliveryID
        self.eventID = eventID
        self.eventType = eventType
        self.endpointID = endpointID
        self.state = state
        self.attempts = attempts
        self.createdAt = createdAt
        self.nextAttemptAt = nextAttemptAt
        self.lastAttemptAt = lastAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.deliveredAt = deliveredAt
    }
}

/// A delivery claimed by one worker for one attempt: what it needs to send it.
public struct WebhookClaim: Sendable, Equatable {
    public var delivery: WebhookDeliveryRecord
    public var url: String
    public var secret: SealedBox
    /// The endpoint's previous secret while its rotation overlap lasts (at the claim's `now`): the
    /// delivery is signed with both, so a receiver still holding it keeps verifying.
    public var previousSecret: SealedBox?
    public var body: Data
    public init(delivery: WebhookDeliveryRecord, url: String, secret: SealedBox, previousSecret: SealedBox? = nil, body: Data) {
        self.delivery = delivery
        self.url = url
        self.secret = secret
        self.previousSecret = previousSecret
        self.body = body
    }
}

/// The outcome of one attempt, as recorded.
public enum WebhookAttemptResult: Sendable, Equatable {
    case delivered(status: Int, at: Int)
    /// Try again at `nextAt`.
    case retry(status: Int?, failure: WebhookFailure, at: Int, nextAt: Int)
    /// No more attempts (max age reached).
    case gaveUp(status: Int?, failure: WebhookFailure, at: Int)
}

/// The store calls of the webhook outbox (both stores implement them).
///
/// Contract: ``enqueueWebhookEvent(_:)`` joins the caller's transaction (the engine calls it inside
/// the answer's); ``claimWebhookDeliveries(now:limit:claimant:leaseSeconds:)`` is atomic across
/// processes — a delivery is held by one claimant until its lease lapses or its attempt is recorded,
/// so several nodes never claim the same delivery at once (PostgreSQL: `FOR UPDATE SKIP LOCKED`).
public protocol WebhookStore: Store {
    func createWebhookEndpoint(_ endpoint: WebhookEndpointRecord) throws
    func webhookEndpoints() throws -> [WebhookEndpointRecord]
    /// Sets an endpoint's sealed secrets — `secret`, and `previous` valid until `previousUntil` (nil,
    /// nil: none) — if its current secret is still `expected` (compare-and-set on the nonce); false
    /// when it changed or the endpoint is gone. Secret rotation (the current one becomes previous)
    /// and server-key rotation (`rekey`: both re-sealed) are both this call.
    func setWebhookSecrets(endpointID: String, expected: SealedBox, secret: SealedBox, previous: SealedBox?, previousUntil: Int?) throws -> Bool
    /// Removes an endpoint; its pending deliveries become `failed` (`endpoint_removed`). False when unknown.
    func deleteWebhookEndpoint(_ endpointID: String) throws -> Bool
    /// Stores the event and one pending delivery (due now) per endpoint subscribed to its type;
    /// returns the number of deliveries.
    @discardableResult func enqueueWebhookEvent(_ event: WebhookEventRecord) throws -> Int
    func webhookEvent(_ eventID: String) throws -> WebhookEventRecord?
    /// Claims up to `limit` pending deliveries due at `now` whose lease is free, for `leaseSeconds`.
    func claimWebhookDeliveries(now: Int, limit: Int, claimant: String, leaseSeconds: Int) throws -> [WebhookClaim]
    /// Records an attempt of a delivery `claimant` holds and releases the claim; false when the
    /// claim was lost (lease lapsed and another claimant took it) — nothing written then.
    @discardableResult func recordWebhookAttempt(deliveryID: String, claimant: String, result: WebhookAttemptResult) throws -> Bool
    /// The delivery log, newest first; `state` filters; `eventID` selects one event's deliveries.
    func webhookDeliveries(limit: Int, state: WebhookDeliveryState?, eventID: String?) throws -> [WebhookDeliveryRecord]
    /// Pending deliveries (the outbox depth in `/metrics`).
    func webhookOutboxDepth() throws -> Int
    /// Deletes events created before `before` that have no pending delivery, with their delivery
    /// rows (the log's retention, `webhooks.retention_seconds`); returns the events deleted.
    func purgeWebhookEvents(before: Int, limit: Int) throws -> Int
    /// Makes every delivery of the event pending again, due at `at` (`idvd admin webhook redeliver`);
    /// returns how many (0: no such event, or no endpoint was subscribed).
    func redeliverWebhookEvent(eventID: String, at: Int) throws -> Int
}


extension VaultBinding {
    /// A webhook endpoint's signing secret.
    public static func webhookSecret(endpointID: String) -> String { "webhook-secret:" + endpointID }
}

extension FlowEngine {
    /// Builds and enqueues a published event inside the current transaction (``Effect/publish(_:userID:data:)``).
    func enqueue(_ type: WebhookEventType, userID: String?, data: WebhookEventData, runID: String?, now: Int) throws {
        var d = data
        if d.runID == nil { d.runID = runID }
        let id = Self.uuid(crypto.randomBytes(16))
        let envelope = WebhookEventEnvelope(id: id, type: type, createdAt: now, userID: userID, data: try JSONValue(encoding: d))
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try store.enqueueWebhookEvent(WebhookEventRecord(eventID: id, type: type, createdAt: now, userID: userID, runID: d.runID,
                                                      body: try enc.encode(envelope)))
    }

    /// A random (version 4, RFC 9562 §5.4) UUID, lowercase, from 16 random bytes.
    static func uuid(_ random: [UInt8]) -> String {
        var b = random
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let h = Hex.encode(b)
        let c = Array(h)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }
}
