import Foundation
import IDVCore
import IDVEngine

/// One stage of the request chain: it gets the request and the rest of the chain (`next`) and
/// answers, usually by calling `next` and looking at or changing what comes back.
///
/// The chain ``Pipeline/standard(config:metrics:logger:authenticate:)`` builds, outermost first:
///
/// 1. ``requestID(logger:)`` — the request's logger, carrying `request_id`;
/// 2. ``log(enabled:)`` — one `"msg":"request"` line per request (ids, codes, route pattern, time);
/// 3. ``metrics(_:)`` — `idvd_http_requests_total` and `idvd_http_request_duration_seconds`;
/// 4. ``errorToEnvelope`` — a thrown error becomes a refusal envelope, its HTTP status from
///    ``HTTPStatus/of(_:)`` (so the stages above always see the final status);
/// 5. ``throttle(_:clock:)`` — the per-client-address limits (new sessions: 1110 + `Retry-After`);
/// 6. ``auth(_:)`` — bearer routes: the session is looked up and opened here, once, and handed down
///    as ``HTTPRequest/session``; its id joins the log metadata;
/// 7. ``decode`` — the route's JSON body decoded once into its typed value (``Route/init(_:_:limit:operationID:summary:request:response:bearer:quick:body:emptyBody:handler:)``);
/// 8. the route's handler (or, for a request no route takes, its refusal: 404, 405, 413).
public struct Middleware: Sendable {
    public typealias Next = (HTTPRequest) throws -> HTTPResponse
    /// For logs and tests (`"request_id"`, `"log"`, …).
    public let name: String
    let run: @Sendable (HTTPRequest, Next) throws -> HTTPResponse

    public init(_ name: String, _ run: @escaping @Sendable (HTTPRequest, Next) throws -> HTTPResponse) {
        self.name = name
        self.run = run
    }

    /// Gives the request its logger: `logger` with the request's `request_id` in its metadata.
    public static func requestID(logger: Logger) -> Middleware {
        Middleware("request_id") { req, next in
            var r = req
            r.logger = logger.with("request_id", .string(req.requestID))
            return try next(r)
        }
    }

    /// The per-request line: `{"ts","level","msg":"request","request_id","session_id"?,"method","route",
    /// "status","error_code","outcome_error_code","duration_ms"}`. `error_code` is the refusal's code
    /// (0 for an answered request); `outcome_error_code` the code the answered challenge or event
    /// carries (e.g. 1014, 1011, 1008; 0 when none). `route` is the route PATTERN, never the raw path;
    /// `session_id` appears once the auth stage has opened the session. Nothing from a body.
    public static func log(enabled: Bool) -> Middleware {
        Middleware("log") { req, next in
            let response = try next(req)
            guard enabled else { return response }
            let ms = (Double(DispatchTime.now().uptimeNanoseconds - req.receivedAt) / 1e4).rounded() / 100
            let fields: Logger.Metadata = [
                "method": .string(req.method), "route": .string(req.route?.pattern ?? "unmatched"),
                "status": .integer(response.status), "error_code": .integer(response.errorCode),
                "outcome_error_code": .integer(response.outcomeErrorCode), "duration_ms": .number(ms),
            ]
            req.scopedLogger.info("request", fields)
            return response
        }
    }

    /// Counts the request and its time under its route pattern (`unmatched` when no route took it).
    public static func metrics(_ metrics: Metrics) -> Middleware {
        Middleware("metrics") { req, next in
            let response = try next(req)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - req.receivedAt) / 1e9
            metrics.observeRequest(route: req.route?.pattern ?? "unmatched", method: req.method, status: response.status, seconds: seconds)
            return response
        }
    }

    /// Every error thrown below becomes a refusal envelope: an ``IDVError`` as it is (status from
    /// ``HTTPStatus/of(_:)``); a ``StoreError`` or anything else as 1030 `internalError`, logged by
    /// kind and request id only.
    public static let errorToEnvelope = Middleware("error_to_envelope") { req, next in
        do {
            return try next(req)
        } catch let e as IDVError {
            return .refusal(e, requestID: req.requestID)
        } catch let t as ThrottledError {
            var r = HTTPResponse.refusal(t.error, requestID: req.requestID)
            r.headers["Retry-After"] = String(t.retryAfterSeconds)
            return r
        } catch let e as AnalysisRefusal {
            return .refusal(e, requestID: req.requestID)
        } catch let e as StoreError {
            req.scopedLogger.error("store error", ["kind": .string(storeKind(e))])
            return .refusal(IDVError(.internalError), requestID: req.requestID)
        } catch {
            req.scopedLogger.error("internal error", ["kind": .string("\(type(of: error))")])
            return .refusal(IDVError(.internalError), requestID: req.requestID)
        }
    }

    /// The ``StoreError`` case name, for logs.
    static func storeKind(_ e: StoreError) -> String {
        switch e { case .conflict: return "conflict"; case .closed: return "closed"; case .database: return "database" }
    }

    /// The per-client-address limits of the HTTP edge (``AbuseLimits``, docs/LIMITS.md): `POST /v1/sessions`
    /// and `POST /v1/links/redeem` (each starts a session) count against `limits.sessions_per_client`,
    /// `POST /v1/devices` (a permanent row each) against `limits.devices_per_client`; beyond it the request is refused with 1110,
    /// HTTP 429 and `Retry-After` before its body is decoded. Other routes pass (their limits are
    /// the engine's: per device, per user and client).
    public static func throttle(_ limits: AbuseLimits?, clock: any Clock) -> Middleware {
        Middleware("throttle") { req, next in
            guard let limits, req.refusal == nil, req.method == "POST", let pattern = req.route?.pattern else { return try next(req) }
            switch pattern {
            case "/v1/sessions", "/v1/links/redeem": try limits.admitSession(address: req.clientAddress, now: clock.now())
            case "/v1/devices": try limits.admitDeviceRegistration(address: req.clientAddress, now: clock.now())
            default: break
            }
            return try next(req)
        }
    }

    /// Bearer routes (``Route/requiresBearer``): `authenticate` (``FlowEngine/authenticate(_:)``) turns
    /// the token into the session — looked up and opened once per request — which the handler
    /// gets as ``HTTPRequest/session``. Throws 1004/1003 from `authenticate`. Other routes pass.
    public static func auth(_ authenticate: @escaping @Sendable (String?) throws -> SessionRecord) -> Middleware {
        Middleware("auth") { req, next in
            guard req.refusal == nil, req.route?.requiresBearer == true else { return try next(req) }
            var r = req
            // An upload's session was opened before it was admitted to the analysis pool (HTTPServer.preauthenticate).
            let session = try req.session ?? authenticate(req.bearerToken)
            r.session = session
            r.scope.sessionID = session.sessionID
            r.logger = r.logger.with("session_id", .string(session.sessionID))
            return try next(r)
        }
    }

    /// Decodes the body of a route made with a body type, once, into ``HTTPRequest/input``
    /// (1001 `malformedRequest` naming the field or the fault).
    public static let decode = Middleware("decode") { req, next in
        guard req.refusal == nil, let decoder = req.route?.decoder else { return try next(req) }
        var r = req
        r.input = try decoder(req.body)
        return try next(r)
    }
}

/// A chain of ``Middleware`` ending in the matched route's handler.
public struct Pipeline: Sendable {
    public let stages: [Middleware]

    public init(_ stages: [Middleware]) { self.stages = stages }

    /// request id → log → metrics → error-to-envelope → throttle → auth → decode (see ``Middleware``).
    /// `limits` nil: no throttle stage limits anything (a server without sessions).
    public static func standard(config: ServerConfig, metrics: Metrics, logger: Logger, limits: AbuseLimits? = nil,
                                clock: any Clock = SystemClock(),
                                authenticate: @escaping @Sendable (String?) throws -> SessionRecord) -> Pipeline {
        Pipeline([.requestID(logger: logger), .log(enabled: config.logRequests), .metrics(metrics), .errorToEnvelope,
                  .throttle(limits, clock: clock), .auth(authenticate), .decode])
    }

    /// Runs `request` through the stages and then its route's handler (or its refusal when no
    /// route takes it). Never throws: the error-to-envelope stage answers every error; were it
    /// left out, an error still becomes a 1030 envelope here.
    public func run(_ request: HTTPRequest) -> HTTPResponse {
        var next: Middleware.Next = { req in
            if let refusal = req.refusal { throw refusal }
            guard let route = req.route else { throw IDVError(.notFound, "No route for \(req.method) on this path") }
            return try route.handler(req)
        }
        for stage in stages.reversed() {
            let inner = next
            next = { req in try stage.run(req, inner) }
        }
        do { return try next(request) } catch let t as ThrottledError {
            var r = HTTPResponse.refusal(t.error, requestID: request.requestID)
            r.headers["Retry-After"] = String(t.retryAfterSeconds)
            return r
        } catch let e as AnalysisRefusal {
            return .refusal(e, requestID: request.requestID)
        } catch {
            return .refusal(error as? IDVError ?? IDVError(.internalError), requestID: request.requestID)
        }
    }
}

/// Per-request values a stage deep in the chain hands back up to the stages around it (the log
/// line's `session_id`). One per request, used by the thread handling that request only.
public final class RequestScope: @unchecked Sendable {
    public internal(set) var sessionID: String?
    /// The relying-party API client (``Middleware/rpAuth(_:)``), for the log line's `client_id`.
    public internal(set) var clientID: String?
    init() {}
}

/// The HTTP status of every ``IDVErrorCode`` (docs/PROTOCOL.md §Errors). One switch over every
/// code, no `default:` — a code added to IDVCore does not compile until it is given a status here.
public enum HTTPStatus {
    public static func of(_ code: IDVErrorCode) -> Int {
        switch code {
        case .none: return 200
        // Refusals of a request as sent.
        case .malformedRequest, .invalidArgument, .passwordPolicy, .invalidImage, .imageTooLarge: return 400
        case .unauthenticated, .sessionExpired: return 401
        case .userLocked, .deviceSignatureInvalid: return 403
        case .notFound, .userNotFound, .templateNotFound, .deviceNotFound: return 404
        case .methodNotAllowed: return 405
        case .wrongChallenge, .replayedAnswer, .userExists, .flowInProgress, .noActiveFlow, .templateExists, .actionNotOffered: return 409
        case .payloadTooLarge: return 413
        case .attemptsExhausted, .activationCodeExpired, .flowExpired, .linkInvalid, .activationRunsExhausted: return 410
        // Throttled (docs/LIMITS.md): the answer carries `Retry-After`.
        case .sessionRateLimited, .authThrottled: return 429
        case .internalError: return 500
        case .workflowUnavailable: return 503
        // Heavy-work admission (IDVEngine/Analysis): the pool or memory budget is full — 503 with
        // Retry-After; this session/user already has one running — 429 with Retry-After; an upload
        // whose images can never fit one analysis — 413.
        case .analysisBusy: return 503
        case .analysisInProgress: return 429
        case .uploadTooCostly: return 413
        // Codes a flow answers inside a 200 challenge or event (a wrong password asked again, an
        // unreadable page, a cancelled flow); as a refusal they are the request's fault: 400.
        case .idvCancelledByUser, .userCancelled, .invalidActivationCode, .invalidPassword, .noDocumentFound, .noFaceFound, .documentGlare: return 400
        // Upload verdicts: the chip data or the selfie capture is unusable — the step is asked again.
        case .chipDataUnreadable, .selfieTooDark, .selfieTooBright, .selfieBlurred, .selfieFaceTooSmall, .selfieLowContrast,
             .selfieFaceNotFrontal, .presenceRequired: return 400
        // The relying-party API (IDVEngine/RelyingParty): client auth, scopes, rate, cursors, reviews;
        // 1130 is the device's pending outcome inside a 200 event (as a refusal: 409, not decided yet).
        case .clientUnauthenticated: return 401
        case .scopeForbidden: return 403
        case .clientRateLimited: return 429
        case .invalidCursor: return 400
        case .reviewAlreadyDecided, .verificationUnderReview: return 409
        // The SDK's own codes (no server sends them); 400 should one ever be refused with them.
        case .notInitialized, .networkError, .timeout, .callbackNotImplemented: return 400
        // Webhook administration (`idvd admin webhook`; docs/WEBHOOKS.md).
        case .webhookURLRefused: return 400
        case .webhookEndpointNotFound, .webhookEventNotFound: return 404
        }
    }
}

/// JSON request bodies to typed values, with 1001 refusals that name the field (never its value).
public enum RequestDecoder {
    static let decoder = JSONDecoder()

    /// `body` as a `T`; an empty (or all-whitespace) body is `empty`, or 1001 when `empty` is nil.
    public static func decode<T: Decodable>(_ type: T.Type, _ body: Data, emptyAs empty: T? = nil) throws -> T {
        if body.isEmpty || body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            if let empty { return empty }
            throw IDVError(.malformedRequest, "A JSON body is required")
        }
        do {
            return try decoder.decode(T.self, from: body)
        } catch let e as UnknownFieldError {
            throw IDVError(.malformedRequest, "Unknown field \(e.path.prefix(64))")
        } catch let DecodingError.keyNotFound(key, ctx) {
            throw IDVError(.malformedRequest, "Missing field \((ctx.codingPath.map(\.stringValue) + [key.stringValue]).joined(separator: "."))")
        } catch let DecodingError.typeMismatch(_, ctx) {
            if ctx.codingPath.isEmpty { throw IDVError(.malformedRequest, "The body must be a JSON object") }
            throw IDVError(.malformedRequest, "Wrong type at \(ctx.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch let DecodingError.valueNotFound(_, ctx) {
            if ctx.codingPath.isEmpty { throw IDVError(.malformedRequest, "The body must be a JSON object, not null") }
            throw IDVError(.malformedRequest, "Null at \(ctx.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch let DecodingError.dataCorrupted(ctx) where !ctx.codingPath.isEmpty {
            // Well-formed JSON whose value a field does not take (e.g. an enum's unknown case).
            throw IDVError(.malformedRequest, "Invalid value at \(ctx.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch {
            throw IDVError(.malformedRequest, "The body is not valid JSON")
        }
    }
}

extension HTTPRequest {
    /// ``logger`` with what inner stages found (the session id, once auth opened the session).
    var scopedLogger: Logger {
        let l = scope.sessionID.map { logger.with("session_id", .string($0)) } ?? logger
        return scope.clientID.map { l.with("client_id", .string($0)) } ?? l
    }
}
