import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// One HTTP request as a route handler sees it (the body is complete and within the route's limit).
public struct HTTPRequest: Sendable {
    public let method: String
    public let path: String
    public let body: Data
    /// Server-generated id (32 hex digits), echoed in `X-Request-Id`, the envelope and the log line.
    public let requestID: String
    /// The `Authorization` header, if any.
    public let authorization: String?
    /// The peer's IP address as text ("127.0.0.1"), nil when unknown: the per-client limits' key.
    public let clientAddress: String?
    /// Values of `{name}` segments of the route pattern.
    public var pathParameters: [String: String] = [:]
    /// The route that takes this request (nil: none does; the chain answers 404/405).
    public internal(set) var route: Route?
    /// The refusal a request gets before any handler runs (405, 413; 1100/1101 from the analysis
    /// pool's admission, an ``AnalysisRefusal``), or nil.
    var refusal: (any Error & Sendable)?
    /// This request's logger: the server's, with `request_id` (and, after auth, `session_id`).
    public internal(set) var logger: Logger = .disabled
    /// The session of a bearer route, opened once by the auth stage (``Middleware/auth(_:)``).
    public internal(set) var session: SessionRecord?
    /// The body decoded by the decode stage, for a route made with a body type.
    var input: (any Sendable)?
    /// The query-string arguments (decoded). A request that repeats a key is refused (1025) before
    /// any route sees it, since no route takes a list.
    public internal(set) var query: [String: String] = [:]
    /// The relying-party API client of a `/v1/rp/…` route, authenticated by ``Middleware/rpAuth(_:)``.
    public internal(set) var rpClient: APIClientRecord?
    /// When the server received the request (`DispatchTime` uptime nanoseconds).
    let receivedAt: UInt64
    /// Values inner stages hand back to outer ones (the log line's session id).
    let scope = RequestScope()

    init(method: String, path: String, body: Data, requestID: String, authorization: String?, clientAddress: String? = nil,
         receivedAt: UInt64 = DispatchTime.now().uptimeNanoseconds) {
        self.method = method
        self.path = path
        self.body = body
        self.requestID = requestID
        self.authorization = authorization
        self.clientAddress = clientAddress
        self.receivedAt = receivedAt
    }

    /// The authenticated session of a bearer route (the auth stage ran); 1004 otherwise.
    public func authenticatedSession() throws -> SessionRecord {
        guard let session else { throw IDVError(.unauthenticated, "Missing bearer token") }
        return session
    }

    /// The bearer token of `Authorization: Bearer <token>`, if present.
    public var bearerToken: String? { Self.bearer(authorization) }

    /// The token of an `Authorization: Bearer <token>` header value, if it is one.
    static func bearer(_ authorization: String?) -> String? {
        guard let a = authorization, a.count > 7, a.prefix(7).lowercased() == "bearer " else { return nil }
        let t = a.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return t.isEmpty ? nil : t
    }
}

/// A handler's answer.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: Data
    /// The `long_error_code` this response carries (0 when none) — for logs and metrics.
    public var errorCode: Int
    /// The `long_error_code` of the challenge or event inside a successful (non-refusal) answer:
    /// the flow's verdict, e.g. 1014 wrong password asked again, 1011 locked, 1008 unreadable upload
    /// (0 when none). Logged as `outcome_error_code`; codes only, never payloads.
    public var outcomeErrorCode = 0
    /// Headers beyond `Content-Type` and `X-Request-Id` (e.g. the web page's Content-Security-Policy).
    /// Every response also gets `X-Content-Type-Options: nosniff`, and a JSON one `Cache-Control: no-store`
    /// unless set here: API answers carry personal data (document fields, portraits, selfies).
    public var headers: [String: String] = [:]

    public init(status: Int, contentType: String = "application/json", body: Data, errorCode: Int = 0, headers: [String: String] = [:]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.errorCode = errorCode
        self.headers = headers
    }

    /// The header block handed to libmicrohttpd: ``headers`` plus the defaults, one `Name: value`
    /// line each (names and values with a line break or NUL are dropped, never sent).
    var headerLines: String {
        var all = headers
        if all["X-Content-Type-Options"] == nil { all["X-Content-Type-Options"] = "nosniff" }
        if contentType == "application/json", all["Cache-Control"] == nil { all["Cache-Control"] = "no-store" }
        // Byte checks (an ASCII byte never occurs inside a multi-byte UTF-8 sequence), not Foundation's
        // `contains`: this runs for every response.
        func clean(_ s: String) -> Bool { !s.utf8.contains { $0 == 0x0A || $0 == 0x0D || $0 == 0 } }
        var lines = ""
        for (key, value) in all.sorted(by: { $0.key < $1.key })
        where clean(key) && clean(value) && !key.utf8.contains(UInt8(ascii: ":")) {
            lines += key; lines += ": "; lines += value; lines += "\n"
        }
        return lines
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    /// A JSON response of a ``JSONValue``: written directly (``JSONText``), the same bytes as the
    /// generic ``json(_:status:errorCode:)`` writes, without `JSONEncoder` where that is certain.
    public static func json(_ value: JSONValue, status: Int = 200, errorCode: Int = 0) -> HTTPResponse {
        if let body = JSONText.encode(value) { return HTTPResponse(status: status, body: body, errorCode: errorCode) }
        return json(JSONValueBox(value), status: status, errorCode: errorCode)
    }

    /// A ``JSONValue`` as a plain `Encodable`, so the generic ``json(_:status:errorCode:)`` takes it.
    private struct JSONValueBox: Encodable {
        let value: JSONValue
        init(_ value: JSONValue) { self.value = value }
        func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    }

    /// A JSON response of any `Encodable` value.
    public static func json<T: Encodable>(_ value: T, status: Int = 200, errorCode: Int = 0) -> HTTPResponse {
        do {
            return HTTPResponse(status: status, body: try encoder.encode(value), errorCode: errorCode)
        } catch {
            return HTTPResponse(status: 500, body: Data(#"{"error":{"long_error_code":1030,"short_error_code":7,"error_string":"Internal server error"}}"#.utf8), errorCode: 1030)
        }
    }

    /// A refusal: an envelope carrying only `error`, with the HTTP status of ``HTTPStatus/of(_:)``.
    public static func refusal(_ error: IDVError, requestID: String) -> HTTPResponse {
        json(WireEnvelope(requestID: requestID, error: error), status: HTTPStatus.of(error.code ?? .internalError), errorCode: error.longErrorCode)
    }

    /// An engine answer as an envelope (`status` 200, or 201 for a start); the challenge's or
    /// event's own code becomes ``outcomeErrorCode``.
    public static func envelope(_ out: EngineOutput, requestID: String, status: Int = 200) -> HTTPResponse {
        var r = json(WireEnvelope(requestID: requestID, session: out.session, challenge: out.challenge, event: out.event, ended: out.ended),
                     status: status)
        r.outcomeErrorCode = out.challenge?.error?.longErrorCode ?? out.event?.error.longErrorCode ?? 0
        return r
    }

    /// The HTTP status of a refusal with this code: ``HTTPStatus/of(_:)``.
    public static func httpStatus(for code: IDVErrorCode) -> Int { HTTPStatus.of(code) }
}
