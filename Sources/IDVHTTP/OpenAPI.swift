import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// The OpenAPI 3 document of the HTTP API, generated from the route table (so it cannot drift
/// from the routes) plus the wire schemas of IDVCore/Wire.swift. Served at `/openapi.json`;
/// `idvd openapi` prints it and the repository keeps a copy at `openapi.json` (a test checks both).
///
/// Exact enough for a generated client and a schema-driven fuzzer (schemathesis, `scripts/schemathesis`):
/// request bodies say what the server accepts and refuses (lengths, formats, no `null` where the
/// server refuses one), an answer is one schema per challenge (`oneOf` with a discriminator on
/// `challenge`), every status a route answers is listed with its body and headers, and the session
/// operations are connected by OpenAPI links (the token and the current challenge flow from a
/// session start into the session routes) for stateful testing.
public enum OpenAPI {
    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }
    static func obj(_ props: [String: JSONValue], required: [String] = [], description: String? = nil) -> JSONValue {
        var o: [String: JSONValue] = ["type": "object", "properties": .object(props)]
        if !required.isEmpty { o["required"] = .array(required.map { .string($0) }) }
        if let description { o["description"] = .string(description) }
        return .object(o)
    }
    static let str: JSONValue = ["type": "string"]
    static let int: JSONValue = ["type": "integer"]
    static let bool: JSONValue = ["type": "boolean"]
    static func str(min: Int = 0, max: Int? = nil, pattern: String? = nil, description: String? = nil) -> JSONValue {
        var o: [String: JSONValue] = ["type": "string"]
        if min > 0 { o["minLength"] = .integer(min) }
        if let max { o["maxLength"] = .integer(max) }
        if let pattern { o["pattern"] = .string(pattern) }
        if let description { o["description"] = .string(description) }
        return .object(o)
    }
    static func constant(_ s: String) -> JSONValue { ["type": "string", "enum": [.string(s)]] }
    static let anyObject: JSONValue = ["type": "object", "description": "a JSON object (flow-specific payload; docs/PROTOCOL.md, docs/WORKFLOWS.md)"]

    /// Standard base64 with padding (RFC 4648 §4), at least one byte.
    static let base64 = #"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)$"#
    /// Exactly 32 bytes as standard base64: 43 characters, the last carrying 2 bits and a zero
    /// remainder (one of `AEIMQUYcgkosw048`), then `=`.
    static let base64Key32 = #"^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$"#
    /// A server id: 16 random bytes as 32 lowercase hex digits.
    static let hexID = "^[0-9a-f]{32}$"

    // MARK: Answers: one schema per challenge

    /// The answer payload each challenge takes (the flows' parsers: `AuthFlow.parse`, `IDVFlow` / `IDVFlows` parse).
    static func answerPayloads(_ policy: WorkflowPolicy) -> [(challenge: String, upload: Bool, payload: JSONValue)] {
        let cancel: JSONValue = ["type": "boolean", "description": "true ends the flow (the post-login flows' cancel)"]
        let isConfirm = obj(["is_confirm": bool], required: ["is_confirm"])
        let password = str(min: 1, max: 1024, description: "the password (1–1,024 characters)")
        return [
            (WireName.getUser, false, obj(["user_id": str(min: 1, max: 128)], required: ["user_id"])),
            (WireName.getActivationCode, false, obj(["activation_code": str(min: 1, max: 64, description: "case, spaces and '-' ignored")],
                                                    required: ["activation_code"])),
            (WireName.getPassword, false, obj(["password": password, "cancel": cancel], required: ["password"])),
            (WireName.getUserConsentForLDA, false, [
                "description": "consent false, or consent true with the device's Ed25519 signature of the challenge nonce",
                "oneOf": [obj(["consent": ["type": "boolean", "enum": [false]], "signature": str(pattern: base64)], required: ["consent"]),
                          obj(["consent": ["type": "boolean", "enum": [true]], "signature": str(pattern: base64)], required: ["consent", "signature"])],
            ]),
            (WireName.getDeviceSignature, false, [
                "description": "the device's Ed25519 signature of the challenge nonce (base64), or fallback \"password\"",
                "anyOf": [obj(["signature": str(pattern: base64)], required: ["signature"]),
                          obj(["fallback": constant("password")], required: ["fallback"])],
            ]),
            (WireName.getIDVDocumentScanProcessStartConfirmation, false, isConfirm),
            (WireName.getIDVConfirmDocumentDetails, false, isConfirm),
            (WireName.getIDVSelfieProcessStartConfirmation, false, obj(["is_confirm": bool, "use_back_camera": bool], required: ["is_confirm"])),
            (WireName.getIDVSelfieConfirmation, false, obj(["action": str(min: 1, description: "an action key the challenge offered (continue-flow, reinit-idv-document-scan, reinit-idv-selfie), or \"true\" / \"false\"")],
                                                           required: ["action"])),
            (WireName.getIDVBiometricOptInConsent, false, obj(["is_opt_in": bool], required: ["is_opt_in"])),
            (WireName.onIDVOptInCapturedFrameConfirmation, false, obj(["status": ["type": "integer", "enum": [0, 1, 2],
                                                                                  "description": "0 APPROVED, 1 RECAPTURE, 2 CANCEL"]],
                                                                      required: ["status"])),
            (WireName.uploadIDVDocumentPages, true, [
                "description": "the document pages (base64 JPEG/PNG, page_index unique in 0..<count), optionally the eMRTD chip files; or cancel",
                "anyOf": [
                    obj(["pages": ["type": "array", "minItems": 1, "maxItems": .integer(policy.maxPages),
                                   "items": obj(["page_index": ["type": "integer", "minimum": 0, "maximum": .integer(policy.maxPages - 1)],
                                                 "image": str(pattern: base64)], required: ["image"])],
                         "chip": ref("ChipFiles"),
                         "chip_follows": ["type": "boolean",
                                          "description": "true (not with chip): the chip is read after the pages; the server answers readIDVDocumentChip with SHA-1(MRZ_information) of the MRZ it read"],
                         "cancel": ["type": "boolean", "enum": [false]]], required: ["pages"]),
                    obj(["cancel": ["type": "boolean", "enum": [true]]], required: ["cancel"]),
                ],
            ]),
            (WireName.readIDVDocumentChip, true, [
                "description": "the eMRTD chip files with Active Authentication over this challenge's chip_challenge (docs/CHIP.md); or skip (the pages are judged alone); or cancel",
                "anyOf": [
                    obj(["chip": ref("ChipFiles")], required: ["chip"]),
                    obj(["skip": ["type": "boolean", "enum": [true]]], required: ["skip"]),
                    obj(["cancel": ["type": "boolean", "enum": [true]]], required: ["cancel"]),
                ],
            ]),
            (WireName.uploadIDVSelfieFrames, true, [
                "description": "the selfie frames (base64 JPEG/PNG), their rate, capture metadata and — under the challenge's presence.illumination — each frame's capture time in ms from the start of the sequence; or a decline of the illumination (the device cannot flash, or the person chose the head movements); or cancel",
                "anyOf": [
                    obj(["frames": ["type": "array", "minItems": 1, "maxItems": .integer(policy.maxFrames), "items": str(pattern: base64)],
                         "fps": ["type": "number", "exclusiveMinimum": true, "minimum": 0, "maximum": 240, "description": "frames per second"],
                         PresenceAnswer.frameTimesKey: ["type": "array", "minItems": 1, "maxItems": .integer(policy.maxFrames),
                                                        "items": ["type": "number", "minimum": .number(PresenceAnswer.frameTimeRange.lowerBound),
                                                                  "maximum": .number(PresenceAnswer.frameTimeRange.upperBound)],
                                                        "description": "one per frame, never decreasing: each frame's capture time, milliseconds from the first colour of presence.illumination"],
                         "meta_data": anyObject, "cancel": ["type": "boolean", "enum": [false]]], required: ["frames"]),
                    obj([PresenceChallengePayload.key: obj(["illumination": ["type": "string", "enum": .array(IlluminationDecline.knownValues.map { .string($0.rawValue) })]],
                                                           required: ["illumination"])], required: [PresenceChallengePayload.key]),
                    obj(["cancel": ["type": "boolean", "enum": [true]]], required: ["cancel"]),
                ],
            ]),
        ]
    }

    static func answerSchemaName(_ challenge: String) -> String {
        "Answer" + challenge.prefix(1).uppercased() + challenge.dropFirst()
    }

    static func answerSchemas(_ policy: WorkflowPolicy) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for a in answerPayloads(policy) {
            out[answerSchemaName(a.challenge)] = obj(["challenge_id": str(min: 1, description: "the current challenge's challenge_id"),
                                                      "challenge": constant(a.challenge),
                                                      "challenge_mode": ["type": "integer", "minimum": 0, "maximum": 2147483647,
                                                                         "description": "echo of the challenge's mode (optional)"],
                                                      "payload": a.payload],
                                                     required: ["challenge_id", "challenge", "payload"],
                                                     description: "An answer to \(a.challenge)" + (a.upload ? " (POST /v1/session/upload)" : " (POST /v1/session/answer)"))
        }
        for upload in [false, true] {
            let names = answerPayloads(policy).filter { $0.upload == upload }.map(\.challenge)
            out[upload ? "WireUploadAnswer" : "WireAnswer"] = [
                "oneOf": .array(names.map { ref(answerSchemaName($0)) }),
                "discriminator": ["propertyName": "challenge",
                                  "mapping": .object(Dictionary(uniqueKeysWithValues: names.map { ($0, .string("#/components/schemas/\(answerSchemaName($0))")) }))],
            ]
        }
        return out
    }

    static func schemas(_ policy: WorkflowPolicy) -> [String: JSONValue] {
        var s: [String: JSONValue] = [
            "IDVError": obj(["long_error_code": int, "short_error_code": int, "error_string": str],
                            required: ["long_error_code", "short_error_code", "error_string"]),
            "RequestStatus": obj(["status_code": int, "status_message": str], required: ["status_code", "status_message"]),
            "WireChallenge": obj(["name": str, "challenge_id": str, "challenge_mode": int, "idv_workflow": int, "attempts_left": int,
                                  "user_id": str, "payload": anyObject, "error": ref("IDVError"), "status": ref("RequestStatus")],
                                 required: ["name", "challenge_id", "challenge_mode", "attempts_left", "payload"]),
            "WireEvent": obj(["name": str, "user_id": str, "error": ref("IDVError"), "status": ref("RequestStatus"), "payload": anyObject],
                             required: ["name", "error", "status", "payload"]),
            "WireSession": obj(["token": str(description: "the bearer token: only in the answer that started the session and in the one that logged it in (rotated)"),
                                "session_id": str(pattern: hexID), "user_id": str, "device_id": str(pattern: hexID), "logged_in": bool,
                                "idle_expires_at": int, "absolute_expires_at": int],
                               required: ["session_id", "logged_in", "idle_expires_at", "absolute_expires_at"]),
            "WireEnvelope": obj(["request_id": str(pattern: hexID), "session": ref("WireSession"), "challenge": ref("WireChallenge"),
                                 "event": ref("WireEvent"), "ended": ref("WireEvent")], required: ["request_id", "session"],
                                description: "an answered request: the session and the next challenge or an event"),
            "WireRefusal": obj(["request_id": str(pattern: hexID), "error": ref("IDVError")], required: ["request_id", "error"],
                               description: "a refused request; nothing changed (docs/PROTOCOL.md §6)"),
            "WireDeviceRegistration": obj(["public_key": str(min: 44, max: 44, pattern: base64Key32,
                                                             description: "the raw 32-byte Ed25519 public key, standard base64 (44 characters)"),
                                           "label": str(max: 64)], required: ["public_key"]),
            "WireDevice": obj(["device_id": str(pattern: hexID)], required: ["device_id"]),
            "WireSessionStart": obj(["device_id": str(min: 1, max: 128, description: "a device_id from POST /v1/devices (404, 1120 when unknown)"),
                                     "sdk_version": str]),
            // payload optional: `{}` (or no body) starts the flow with an empty one.
            "WireFlowStart": obj(["payload": obj(["reason": str(min: 1, max: 128, description: "why the flow runs (recorded with the run)")])]),
            "ChipFiles": obj(["sod": str(pattern: base64), "com": str(pattern: base64),
                              "data_groups": ["type": "object", "additionalProperties": str(pattern: base64),
                                              "description": "data group number \"1\"…\"16\" → the EF, base64"],
                              ActiveAuthenticationAnswer.payloadKey: ref("ActiveAuthenticationAnswer"),
                              ChipAuthenticationReport.payloadKey: ["type": "string", "enum": .array(ChipAuthenticationReport.allCases.map { .string($0.rawValue) }),
                                                                    "description": "Chip Authentication (ICAO 9303-11 §6.2) as the client ran it; recorded, not judged"]],
                             required: ["sod", "data_groups"],
                             description: "eMRTD chip files (docs/CHIP.md); 4 MiB a file, 8 MiB together; the chip's answer to the upload challenge's chip_challenge"),
            "ActiveAuthenticationAnswer": obj(["challenge": str(min: 16, max: 16, pattern: "^[0-9A-Fa-f]{16}$",
                                                                description: "the 8-byte challenge the chip signed: this step's chip_challenge.active_authentication_challenge"),
                                               "signature": str(pattern: base64, description: "the chip's INTERNAL AUTHENTICATE response (RSA ISO/IEC 9796-2, or ECDSA r‖s), 1–1024 bytes")],
                                              required: ["challenge", "signature"],
                                              description: "Active Authentication (ICAO 9303-11 §6.1): the server verifies the signature over its own challenge with DG15's key"),
            "Health": obj(["status": str, "version": str, "schema_version": int,
                           "analysis": obj(["in_flight": int, "queued": int, "threads": int, "queue_limit": int])], required: ["status", "version"]),
            "Readiness": obj(["status": str(description: "ready or not_ready"), "version": str,
                              "reasons": ["type": "array", "items": str, "description": "each failed check as `name: reason` (not_ready only)"],
                              "checks": ["type": "object", "additionalProperties": str,
                                         "description": "every check (database, schema, analysis_pool, face_models, document_reader) → ok or its reason"]],
                             required: ["status", "version", "checks"]),
            "OpenAPIDocument": ["type": "object", "description": "this document"],
            "WireLinkRedeem": obj(["link": str(description: "the link's token (after #link= in its URL); any other string is answered 410 1040, like an expired or used link")],
                                  required: ["link"]),
            "WireLinkInfo": obj(["user_id": str, "flow": str, "expires_at": int], required: ["user_id", "flow", "expires_at"]),
            "WireLinkRedemption": obj(["request_id": str(pattern: hexID), "session": ref("WireSession"), "challenge": ref("WireChallenge"),
                                       "event": ref("WireEvent"), "link": ref("WireLinkInfo")], required: ["request_id", "session", "link"]),
        ]
        s.merge(answerSchemas(policy)) { a, _ in a }
        return s
    }

    // MARK: Responses

    static let requestIDHeader: JSONValue = ["description": "the request's id (32 hex digits), also in the envelope and the server log",
                                             "required": true, "schema": str(pattern: hexID)]

    static func refusal(_ description: String, headers: [String: JSONValue] = [:]) -> JSONValue {
        ["description": .string(description), "content": ["application/json": ["schema": ref("WireRefusal")]],
         "headers": .object(["X-Request-Id": requestIDHeader].merging(headers) { a, _ in a })]
    }

    /// The refusals a route answers besides its success (docs/PROTOCOL.md §6).
    static func refusals(_ r: Route) -> [String: JSONValue] {
        var out: [String: JSONValue] = ["500": refusal("internal error (1030); logged by kind and request id")]
        // Every route that reads or writes the database: it cannot serve for now (1038, with Retry-After).
        let storeUnavailable = "the database cannot serve for now — unreachable, shutting down, out of connections, a writers' conflict (1038, with Retry-After)"
        if !["health", "readiness", "metrics", "openapi", "verifyPage", "verifyPageAsset"].contains(r.operationID) {
            out["503"] = refusal(storeUnavailable, headers: ["Retry-After": ["description": "seconds to wait before sending the same request again",
                                                                             "required": true, "schema": int]])
        }
        if r.requestSchema != nil || r.method == "POST" {
            out["400"] = refusal("malformed or invalid request (1001 and the other request codes)")
            out["413"] = refusal("the body exceeds this route's limit (1006)")
        }
        if r.decoder != nil {
            out["415"] = refusal("a body sent with a Content-Type other than application/json (1039)")
        }
        if r.requiresBearer {
            out["401"] = refusal("no, unknown, logged-off, rotated or expired token (1004, 1003)",
                                 headers: ["WWW-Authenticate": ["description": "Bearer realm=\"idvd\" (RFC 6750)", "required": true, "schema": str]])
            out["409"] = refusal("not the current challenge, replayed, or a flow in progress (1002, 1005, 1022)")
        }
        let retryAfter: JSONValue = ["description": "seconds to wait before sending it again", "required": true, "schema": int]
        switch r.operationID {
        case "registerDevice", "startSession", "redeemLink":
            out["429"] = refusal("too many new sessions or device registrations from this client address or device (1110; docs/LIMITS.md)",
                                 headers: ["Retry-After": retryAfter])
        default: break
        }
        switch r.operationID {
        case "readiness": out["503"] = ["description": "not ready: the reasons say which check failed (Retry-After: 5)",
                                        "content": ["application/json": ["schema": ref("Readiness")]],
                                        "headers": ["X-Request-Id": requestIDHeader,
                                                    "Retry-After": ["description": "seconds before asking again", "required": true, "schema": int]]]
        case "health": out["503"] = ["description": "the store is unavailable", "content": ["application/json": ["schema": ref("Health")]],
                                     "headers": ["X-Request-Id": requestIDHeader]]
        case "startSession": out["404"] = refusal("unknown device_id (1120)")
        case "startFlow":
            out["404"] = refusal("no startable flow of that name (1007)")
            out["503"] = refusal("this server cannot run that flow now, e.g. the model files are missing (1033); or \(storeUnavailable)",
                                 headers: ["Retry-After": ["description": "seconds to wait (1038)", "required": false, "schema": int]])
        case "answerChallenge":
            out["403"] = refusal("the user is locked (1011)")
            out["429"] = refusal("this client backs off for the user, or spent its failed-attempt budget (1111; docs/LIMITS.md)",
                                 headers: ["Retry-After": retryAfter])
            out["503"] = refusal("this server has no reader for the step (1033); or \(storeUnavailable)",
                                 headers: ["Retry-After": ["description": "seconds to wait (1038)", "required": false, "schema": int]])
        case "answerChallengeWithUpload":
            out["403"] = refusal("the user is locked (1011)")
            out["413"] = refusal("the body exceeds this route's limit (1006), or the upload costs more pixels or memory than one analysis may (1102)")
            out["429"] = refusal("this session already has an analysis queued or running (1101), or this client backs off (1111)",
                                 headers: ["Retry-After": retryAfter])
            out["503"] = refusal("every analysis thread is busy and the queue is full (1100, with Retry-After), no reader for the step (1033), or \(storeUnavailable)",
                                 headers: ["Retry-After": ["description": "seconds to wait (1100, 1038)", "required": false, "schema": int]])
        case "redeemLink": out["410"] = refusal("unknown, expired or used link (1040)")
        case "verifyPage", "verifyPageAsset":
            out["404"] = refusal("the page is switched off (web.enabled) or no such asset")
            out["503"] = ["description": "the page is not installed", "content": ["text/plain": ["schema": str]],
                          "headers": ["X-Request-Id": requestIDHeader]]
        default: break
        }
        return out
    }

    /// OpenAPI links from a response that carries a new session (its token once) to the session operations.
    static let sessionLinks: JSONValue = {
        let auth: JSONValue = .string("Bearer {$response.body#/session/token}")
        return [
            "GetSession": ["operationId": "getSession", "parameters": ["header.Authorization": auth],
                           "description": "the session's current challenge, with the token this answer carries"],
            "AnswerCurrentChallenge": ["operationId": "answerChallenge", "parameters": ["header.Authorization": auth],
                                       "requestBody": ["challenge_id": "$response.body#/challenge/challenge_id",
                                                       "challenge": "$response.body#/challenge/name",
                                                       "payload": ["user_id": "nobody-by-that-name"]],
                                       "description": "answers the first challenge (getUser)"],
            "ResetSession": ["operationId": "resetAuthState", "parameters": ["header.Authorization": auth]],
            "LogOff": ["operationId": "logOff", "parameters": ["header.Authorization": auth]],
            "StartFlow": ["operationId": "startFlow", "parameters": ["header.Authorization": auth, "path.name": .string(FlowName.templateStatus)],
                          "description": "refused before login (401)"],
        ]
    }()

    /// The document as JSON bytes (sorted keys, stable). `config`: the server whose limits the
    /// request schemas state (pages and frames per upload); the default is the default configuration.
    public static func document(routes: [Route], config: ServerConfig = ServerConfig()) -> Data {
        var paths: [String: [String: JSONValue]] = [:]
        let bearerOperations = Set(routes.filter(\.requiresBearer).map(\.operationID))
        for r in routes {
            var op: [String: JSONValue] = ["operationId": .string(r.operationID), "summary": .string(r.summary)]
            var params: [JSONValue] = []
            for seg in r.segments where seg.hasPrefix("{") {
                let name = String(seg.dropFirst().dropLast())
                params.append(["name": .string(name), "in": "path", "required": true,
                               "schema": name == "asset" ? str(min: 1, max: 64, pattern: #"^[A-Za-z0-9][A-Za-z0-9._-]*$"#) : str(min: 1, max: 128)])
            }
            if r.requiresBearer {
                op["security"] = [["bearerAuth": []]]
                // Declared as a header too, so OpenAPI links can carry a session's token into the operation.
                params.append(["name": "Authorization", "in": "header", "required": false,
                               "description": "Bearer <token> (the bearerAuth scheme)", "schema": str(pattern: "^Bearer [A-Za-z0-9_-]{1,128}$")])
            }
            if !params.isEmpty { op["parameters"] = .array(params) }
            if let rs = r.requestSchema {
                let schema = r.operationID == "answerChallengeWithUpload" ? "WireUploadAnswer" : rs
                op["requestBody"] = ["required": .bool(!["WireSessionStart", "WireFlowStart"].contains(rs)),
                                     "content": ["application/json": ["schema": ref(schema)]]]
            }
            let okContent: JSONValue = r.responseSchema.contains("/")
                ? [r.responseSchema: ["schema": str]]
                : ["application/json": ["schema": ref(r.responseSchema)]]
            let ok = r.method == "POST" && ["/v1/sessions", "/v1/devices", WireLinks.redeemPath].contains(r.pattern) ? "201" : "200"
            var success: [String: JSONValue] = ["description": "success", "content": okContent, "headers": ["X-Request-Id": requestIDHeader]]
            if ["startSession", "redeemLink"].contains(r.operationID) {
                success["links"] = .object((sessionLinks.objectValue ?? [:]).filter { key, value in
                    value["operationId"]?.stringValue.map(bearerOperations.contains) ?? false })
            }
            if r.operationID == "registerDevice", routes.contains(where: { $0.operationID == "startSession" }) {
                success["links"] = ["StartSessionOnThisDevice": ["operationId": "startSession",
                                                                 "requestBody": ["device_id": "$response.body#/device_id"],
                                                                 "description": "a session bound to the device just registered"]]
            }
            var responses = refusals(r)
            responses[ok] = .object(success)
            op["responses"] = .object(responses)
            if r.pattern.hasPrefix(Middleware.rpPrefix) { RPOpenAPI.decorate(&op, r) }
            paths[r.pattern, default: [:]][r.method.lowercased()] = .object(op)
        }
        let doc: JSONValue = [
            "openapi": "3.0.3",
            "info": ["title": "OpenIDV idvd API", "version": .string(OpenIDV.version),
                     "description": "The wire protocol between IDVKit and idvd. Every session route answers a WireEnvelope: the next challenge or an event, or a refusal (WireRefusal) that changed nothing. Every GET route also answers HEAD; every 405 carries Allow. See docs/PROTOCOL.md."],
            "paths": .object(paths.mapValues { .object($0) }),
            "components": ["schemas": .object(schemas(config.engine.workflow).merging(RPOpenAPI.schemas) { a, _ in a }),
                           "securitySchemes": ["bearerAuth": ["type": "http", "scheme": "bearer"], "rpClientAuth": RPOpenAPI.securityScheme]],
        ]
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? enc.encode(doc)) ?? Data("{}".utf8)
    }
}

extension JSONValue {
    /// This object schema with `additionalProperties: false`: for request bodies whose decoder
    /// refuses unknown keys (``UnknownFieldError``).
    var closed: JSONValue {
        guard var o = objectValue else { return self }
        o["additionalProperties"] = false
        return .object(o)
    }
}
