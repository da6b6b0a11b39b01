import Foundation
import IDVCore

/// A ``WireEnvelope`` as JSON text without `JSONEncoder`: the envelope's fixed shape written as a
/// ``JSONValue`` by hand, then ``JSONText``. The same bytes `JSONEncoder` (`.sortedKeys`,
/// `.withoutEscapingSlashes`) writes for the envelope's synthesized `Codable` — keys sorted, a nil
/// optional left out — or nil where ``JSONText`` declines (a fractional number or a control
/// character in a payload), and the caller uses `JSONEncoder`. Every session route answers an
/// envelope; through `JSONEncoder` it was about a tenth of `POST /v1/sessions`' CPU time.
///
/// The keys are the `CodingKeys` of ``WireEnvelope``, ``WireSession``, ``WireChallenge``,
/// ``WireEvent``, ``IDVError`` and ``RequestStatus`` (IDVCore/Wire.swift, Codes.swift);
/// `EnvelopeTextTests` holds this to `JSONEncoder`'s bytes for every field set and unset.
enum EnvelopeText {
    /// The JSON text of `envelope`, or nil where the caller must use `JSONEncoder`.
    static func encode(_ envelope: WireEnvelope) -> Data? {
        JSONText.encode(value(envelope))
    }

    static func value(_ e: WireEnvelope) -> JSONValue {
        var o: [String: JSONValue] = ["request_id": .string(e.requestID)]
        if let s = e.session { o["session"] = value(s) }
        if let c = e.challenge { o["challenge"] = value(c) }
        if let v = e.event { o["event"] = value(v) }
        if let x = e.error { o["error"] = value(x) }
        if let v = e.ended { o["ended"] = value(v) }
        return .object(o)
    }

    static func value(_ s: WireSession) -> JSONValue {
        var o: [String: JSONValue] = [
            "session_id": .string(s.sessionID), "logged_in": .bool(s.loggedIn),
            "idle_expires_at": .integer(s.idleExpiresAt), "absolute_expires_at": .integer(s.absoluteExpiresAt),
        ]
        if let t = s.token { o["token"] = .string(t) }
        if let u = s.userID { o["user_id"] = .string(u) }
        if let d = s.deviceID { o["device_id"] = .string(d) }
        return .object(o)
    }

    static func value(_ c: WireChallenge) -> JSONValue {
        var o: [String: JSONValue] = [
            "name": .string(c.name), "challenge_id": .string(c.challengeID), "challenge_mode": .integer(c.challengeMode),
            "attempts_left": .integer(c.attemptsLeft), "payload": c.payload,
        ]
        if let w = c.idvWorkflow { o["idv_workflow"] = .integer(w) }
        if let u = c.userID { o["user_id"] = .string(u) }
        if let x = c.error { o["error"] = value(x) }
        if let s = c.status { o["status"] = value(s) }
        return .object(o)
    }

    static func value(_ v: WireEvent) -> JSONValue {
        var o: [String: JSONValue] = ["name": .string(v.name), "error": value(v.error), "status": value(v.status), "payload": v.payload]
        if let u = v.userID { o["user_id"] = .string(u) }
        return .object(o)
    }

    static func value(_ x: IDVError) -> JSONValue {
        ["long_error_code": .integer(x.longErrorCode), "short_error_code": .integer(x.shortErrorCode), "error_string": .string(x.errorString)]
    }

    static func value(_ s: RequestStatus) -> JSONValue {
        ["status_code": .integer(s.statusCode), "status_message": .string(s.statusMessage)]
    }
}
