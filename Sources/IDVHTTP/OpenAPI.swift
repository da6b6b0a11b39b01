import Foundation
import IDVCore
import IDVEngine

/// The OpenAPI 3 document of the HTTP API, generated from the route table (so it cannot drift
/// from the routes) plus the wire schemas of IDVCore/Wire.swift. Served at `/openapi.json`;
/// `idvd openapi` prints it and the repository keeps a copy at `openapi.json` (a test checks both).
public enum OpenAPI {
    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }
    static func obj(_ props: [String: JSONValue], required: [String] = []) -> JSONValue {
        var o: [String: JSONValue] = ["type": "object", "properties": .object(props)]
        if !required.isEmpty { o["required"] = .array(required.map { .string($0) }) }
        return .object(o)
    }
    static let str: JSONValue = ["type": "string"]
    static let int: JSONValue = ["type": "integer"]
    static let bool: JSONValue = ["type": "boolean"]
    static let any: JSONValue = ["description": "any JSON value (flow-specific payload)"]

    static let schemas: [String: JSONValue] = [
        "IDVError": obj(["long_error_code": int, "short_error_code": int, "error_string": str],
                        required: ["long_error_code", "short_error_code", "error_string"]),
        "RequestStatus": obj(["status_code": int, "status_message": str], required: ["status_code", "status_message"]),
        "WireChallenge": obj(["name": str, "challenge_id": str, "challenge_mode": int, "idv_workflow": int, "attempts_left": int,
                              "user_id": str, "payload": any, "error": ref("IDVError"), "status": ref("RequestStatus")],
                             required: ["name", "challenge_id", "challenge_mode", "attempts_left", "payload"]),
        "WireEvent": obj(["name": str, "user_id": str, "error": ref("IDVError"), "status": ref("RequestStatus"), "payload": any],
                         required: ["name", "error", "status", "payload"]),
        "WireSession": obj(["token": str, "session_id": str, "user_id": str, "device_id": str, "logged_in": bool,
                            "idle_expires_at": int, "absolute_expires_at": int],
                           required: ["session_id", "logged_in", "idle_expires_at", "absolute_expires_at"]),
        "WireEnvelope": obj(["request_id": str, "session": ref("WireSession"), "challenge": ref("WireChallenge"),
                             "event": ref("WireEvent"), "error": ref("IDVError"), "ended": ref("WireEvent")], required: ["request_id"]),
        "WireAnswer": obj(["challenge_id": str, "challenge": str, "challenge_mode": int, "payload": any],
                          required: ["challenge_id", "challenge", "payload"]),
        "WireDeviceRegistration": obj(["public_key": str, "label": str], required: ["public_key"]),
        "WireDevice": obj(["device_id": str], required: ["device_id"]),
        "WireSessionStart": obj(["device_id": str, "sdk_version": str]),
        "WireFlowStart": obj(["payload": any], required: ["payload"]),
        "Health": obj(["status": str, "version": str, "schema_version": int], required: ["status", "version"]),
        "OpenAPIDocument": ["type": "object", "description": "this document"],
        "WireLinkRedeem": obj(["link": str], required: ["link"]),
        "WireLinkInfo": obj(["user_id": str, "flow": str, "expires_at": int], required: ["user_id", "flow", "expires_at"]),
        "WireLinkRedemption": obj(["request_id": str, "session": ref("WireSession"), "challenge": ref("WireChallenge"),
                                   "event": ref("WireEvent"), "error": ref("IDVError"), "link": ref("WireLinkInfo")], required: ["request_id"]),
    ]

    /// The document as JSON bytes (sorted keys, stable).
    public static func document(routes: [Route]) -> Data {
        var paths: [String: [String: JSONValue]] = [:]
        for r in routes {
            var op: [String: JSONValue] = ["operationId": .string(r.operationID), "summary": .string(r.summary)]
            var params: [JSONValue] = []
            for seg in r.segments where seg.hasPrefix("{") {
                params.append(["name": .string(String(seg.dropFirst().dropLast())), "in": "path", "required": true, "schema": str])
            }
            if !params.isEmpty { op["parameters"] = .array(params) }
            if r.requiresBearer { op["security"] = [["bearerAuth": []]] }
            if let rs = r.requestSchema {
                op["requestBody"] = ["required": .bool(!["WireSessionStart", "WireFlowStart"].contains(rs)),
                                     "content": ["application/json": ["schema": ref(rs)]]]
            }
            let okContent: JSONValue = r.responseSchema.contains("/")
                ? [r.responseSchema: ["schema": str]]
                : ["application/json": ["schema": ref(r.responseSchema)]]
            let ok = r.method == "POST" && ["/v1/sessions", "/v1/devices", WireLinks.redeemPath].contains(r.pattern) ? "201" : "200"
            var responses: [String: JSONValue] = [ok: ["description": "success", "content": okContent]]
            let refusal: JSONValue = ["description": "refused; nothing changed (WireEnvelope.error carries the code, see docs/PROTOCOL.md)",
                                      "content": ["application/json": ["schema": ref("WireEnvelope")]]]
            if r.requestSchema != nil { responses["400"] = refusal; responses["413"] = refusal }
            if r.requiresBearer { responses["401"] = refusal; responses["409"] = refusal }
            if r.pattern == "/v1/flows/{name}" { responses["404"] = refusal }
            if r.pattern == WireLinks.redeemPath { responses["410"] = refusal }
            op["responses"] = .object(responses)
            paths[r.pattern, default: [:]][r.method.lowercased()] = .object(op)
        }
        let doc: JSONValue = [
            "openapi": "3.0.3",
            "info": ["title": "OpenIDV idvd API", "version": .string(OpenIDV.version),
                     "description": "The wire protocol between IDVKit and idvd. Every session route answers a WireEnvelope: the next challenge or an event, or a refusal (error) that changed nothing. See docs/PROTOCOL.md."],
            "paths": .object(paths.mapValues { .object($0) }),
            "components": ["schemas": .object(schemas),
                           "securitySchemes": ["bearerAuth": ["type": "http", "scheme": "bearer"]]],
        ]
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? enc.encode(doc)) ?? Data("{}".utf8)
    }
}
