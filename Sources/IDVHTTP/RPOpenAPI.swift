import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// The relying-party API's part of the OpenAPI document (RPRoutes.swift): its schemas, the
/// `rpClientAuth` security scheme, query parameters and responses of the `/v1/rp/…` routes.
enum RPOpenAPI {
    typealias O = OpenAPI
    static let num: JSONValue = ["type": "number"]
    static func arr(_ item: JSONValue) -> JSONValue { ["type": "array", "items": item] }
    static func nullable(_ s: JSONValue) -> JSONValue {
        guard var o = s.objectValue else { return s }
        o["nullable"] = true
        return .object(o)
    }
    static func page(_ item: String) -> JSONValue {
        O.obj(["items": arr(O.ref(item)), "next_cursor": nullable(O.str)], required: ["items"])
    }
    static func strEnum(_ values: [String]) -> JSONValue { ["type": "string", "enum": .array(values.map { .string($0) })] }

    static let schemas: [String: JSONValue] = [
        "CompactJWS": ["type": "string", "description": "BASE64URL(header).BASE64URL(payload).BASE64URL(signature), alg EdDSA (RFC 7515, RFC 8037)"],
        "JWKS": O.obj(["keys": arr(O.obj(["kty": O.str, "crv": O.str, "x": O.str, "kid": O.str, "use": O.str, "alg": O.str],
                                         required: ["kty", "crv", "x", "kid"]))], required: ["keys"]),
        "ErasureReceipt": O.obj(["receipt_id": O.str, "user_id": O.str, "erased_at": O.int, "erased_by": O.str,
                                 "erased": ["type": "object", "additionalProperties": O.int], "flow_runs_ended": O.int,
                                 "review_cases_closed": O.int, "audit_subject": O.str, "audit_seq": O.int, "audit_hash": O.str],
                                required: ["receipt_id", "erased_at", "erased_by", "erased", "flow_runs_ended", "review_cases_closed",
                                           "audit_seq", "audit_hash"]),
        "RPTemplateView": O.obj(["exists": O.bool, "status_code": O.int, "model": O.str, "created_at": O.int, "consent_id": O.str],
                                required: ["exists", "status_code"]),
        "RPUserView": O.obj(["user_id": O.str, "state": strEnum(UserState.allCases.map(\.rawValue)), "activated": O.bool, "created_at": O.int,
                             "template": O.ref("RPTemplateView"), "last_kyc": O.ref("RPVerificationSummary")],
                            required: ["user_id", "state", "activated", "created_at", "template"]),
        "RPReviewView": O.obj(["case_id": O.str, "verification_id": O.str, "user_id": O.str,
                               "triggers": arr(strEnum(ReviewTrigger.allCases.map(\.rawValue))), "opened_at": O.int,
                               "state": strEnum(["pending", "approved", "rejected"]), "decided_at": O.int,
                               "decision": strEnum(ReviewDecision.allCases.map(\.rawValue)), "reason": O.str, "reviewer": O.str],
                              required: ["case_id", "verification_id", "user_id", "triggers", "opened_at", "state"]),
        "RPVerificationSummary": O.obj(["verification_id": O.str, "user_id": O.str, "flow": O.str, "idv_workflow": O.int, "started_at": O.int,
                                        "ended_at": O.int, "outcome": strEnum(FlowOutcome.allCases.map(\.rawValue)), "error_code": O.int,
                                        "review": O.ref("RPReviewView")],
                                       required: ["verification_id", "flow", "started_at"]),
        "RPDocumentResult": O.obj(["result": O.str, "attempt": O.int, "format": O.str, "errors": O.int, "warnings": O.int, "chip": O.str],
                                  required: ["result"]),
        "RPSelfieResult": O.obj(["result": O.str, "reason": O.str, "attempt": O.int, "liveness_score": O.int, "face_match_score": num,
                                 "match_threshold": num, "cues": arr(O.str), "reference": O.str,
                                 "presence_assurance": strEnum(PresenceAssurance.allCases.map(\.rawValue)),
                                 "presence": strEnum(["followed", "not_followed", "not_asked"])], required: ["result"]),
        "RPDocumentScanView": O.obj(["scan_id": O.str, "verification_id": O.str, "idv_workflow": O.int, "reason": O.str, "overall_status": O.str,
                                     "created_at": O.int, "report": O.anyObject],
                                    required: ["scan_id", "reason", "overall_status", "created_at"]),
        "RPVerificationView": O.obj(["verification": O.ref("RPVerificationSummary"), "transaction_id": O.str, "reason": O.str,
                                     "document": O.ref("RPDocumentResult"), "selfie": O.ref("RPSelfieResult"), "consent": O.bool,
                                     "template_created": O.bool, "documents": arr(O.ref("RPDocumentScanView"))],
                                    required: ["verification", "documents"]),
        "RPConsentView": O.obj(["consent_id": O.str, "kind": O.str, "granted": O.bool, "event": strEnum(["given", "refused", "withdrawn"]),
                                "flow": O.str, "verification_id": O.str, "text_version": O.str, "recorded_at": O.int],
                               required: ["consent_id", "kind", "granted", "event", "flow", "text_version", "recorded_at"]),
        "RPAuditRecord": O.obj(["seq": O.int, "at": O.int, "action": O.str, "details": O.anyObject, "prev_hash": O.str, "hash": O.str],
                               required: ["seq", "at", "action", "details", "prev_hash", "hash"]),
        "RPAuditList": O.obj(["items": arr(O.ref("RPAuditRecord"))], required: ["items"]),
        "RPVerificationPage": page("RPVerificationSummary"),
        "RPDocumentScanPage": page("RPDocumentScanView"),
        "RPConsentPage": page("RPConsentView"),
        "RPReviewPage": page("RPReviewView"),
        "RPReviewCaseView": O.obj(["review": O.ref("RPReviewView"), "verification": O.ref("RPVerificationView"),
                                   "images": ["type": "object", "additionalProperties": O.str,
                                              "description": "base64 JPEG by kind: portrait (the document's), selfie (the best frame)"]],
                                  required: ["review", "verification", "images"]),
        "RPVerificationRequest": O.obj(["user_id": O.str, "flow": O.str, "reason": ["type": "string", "minLength": 1, "maxLength": 128],
                                        "expires_in": ["type": "integer", "minimum": 1, "maximum": .integer(WebSettings.maxLinkTTLSeconds)]],
                                       required: ["user_id", "reason"]).closed,
        "RPVerificationCreated": O.obj(["link_id": O.str, "user_id": O.str, "flow": O.str, "url": O.str, "expires_at": O.int],
                                       required: ["link_id", "user_id", "flow", "url", "expires_at"]),
        "RPReviewDecisionRequest": O.obj(["decision": strEnum(ReviewDecision.allCases.map(\.rawValue)),
                                          "reason": ["type": "string", "minLength": 1, "maxLength": 256]], required: ["decision", "reason"]).closed,
    ]

    static let securityScheme: JSONValue = ["type": "http", "scheme": "bearer", "bearerFormat": "<client_id>.<secret>",
                                            "description": "A relying-party API client (`idvd admin rp-client create`), not a user session"]

    /// The paged lists: they take `since`, `until` (Unix seconds), `cursor` and `limit`.
    static let pagedOperations: Set<String> = ["rpListVerifications", "rpListDocumentScans", "rpListConsents", "rpListReviews"]

    /// Rewrites the operation of a `/v1/rp/…` route: security, query parameters, responses.
    static func decorate(_ op: inout [String: JSONValue], _ r: Route) {
        op["security"] = [["rpClientAuth": []]]
        var params = op["parameters"]?.arrayValue ?? []
        if pagedOperations.contains(r.operationID) {
            let q: [(String, JSONValue, String)] = [
                ("since", ["type": "integer", "minimum": 0], "only items at or after this time (Unix seconds)"),
                ("until", ["type": "integer", "minimum": 0], "only items before this time (Unix seconds)"),
                ("cursor", O.str, "next_cursor of the previous page"),
                ("limit", ["type": "integer", "minimum": 1, "maximum": 100], "items per page (default 50)"),
            ]
            for (name, schema, description) in q {
                params.append(["name": .string(name), "in": "query", "required": false, "schema": schema, "description": .string(description)])
            }
            if r.operationID == "rpListReviews" {
                params.append(["name": "state", "in": "query", "required": false, "schema": strEnum(["pending", "decided", "all"]),
                               "description": "which cases (default pending)"])
            }
        }
        if !params.isEmpty { op["parameters"] = .array(params) }
        // Refusals: the error object and the request id (WireRefusal), as on every other route.
        let ok = r.method == "POST" && r.pattern == "/v1/rp/verifications" ? "201" : "200"
        var responses: [String: JSONValue] = [
            // A compact JWS is sent as `application/jose` (RFC 7515 §9.2.1), not JSON.
            ok: ["description": "success", "content": [r.responseSchema == "CompactJWS" ? "application/jose" : "application/json": ["schema": O.ref(r.responseSchema)]],
                 "headers": ["X-Request-Id": O.requestIDHeader]],
            "400": O.refusal("a malformed request, an unknown query argument, a bad cursor or time (1001, 1025, 1134)"),
            "401": O.refusal("no, malformed, unknown, wrong or revoked client credentials (1131)",
                             headers: ["WWW-Authenticate": ["description": "Bearer realm=\"idvd-rp\"", "required": true, "schema": O.str]]),
            "403": O.refusal("the client's scopes do not allow this call (1132)"),
            "404": O.refusal("no such user, verification or review case"),
            "429": O.refusal("the client is over rp.rate_limit_per_minute (1133)",
                             headers: ["Retry-After": ["description": "seconds to wait", "required": true, "schema": O.int]]),
            "500": O.refusal("internal error (1030); logged by kind and request id"),
        ]
        if r.requestSchema != nil { responses["413"] = O.refusal("the body exceeds this route's limit (1006)") }
        if r.decoder != nil { responses["415"] = O.refusal("a body sent with a Content-Type other than application/json (1039)") }
        if r.operationID == "rpDecideReview" { responses["409"] = O.refusal("the case was already decided (1135)") }
        op["responses"] = .object(responses)
    }
}
