import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations

/// What answers a request: a route's handler, or a handler behind the stages in front of it.
public typealias Responder = @Sendable (HTTPRequest) throws -> HTTPResponse

/// Which requests a ``Middleware`` stage runs for (its route group), decided once per route when
/// the chain is built — never per request.
public enum RouteGroup: Sendable {
    /// Every request: routed or not, refused before the chain (404, 405, 413, an analysis refusal)
    /// or not. Request id, log, metrics and error-to-envelope are here.
    case every
    /// The requests of the routes `member` admits, when no refusal came before the chain (auth:
    /// the bearer routes; decode: the routes with a body type; throttle: the routes that start a
    /// session or register a device; the relying party's client auth: `/v1/rp/`).
    case routes(@Sendable (Route) -> Bool)
}

/// One stage of the request chain: it gets the request and the rest of the chain (`next`) and
/// answers, usually by calling `next` and looking at or changing what comes back. A stage is
/// built into each chain it belongs to once, when the server starts (``Pipeline/compile(_:)``),
/// and may specialise itself for the route it is built for (`make` sees the route).
///
/// The chain ``Pipeline/standard(config:metrics:logger:limits:clock:authenticate:)`` builds, outermost first:
///
/// 1. ``requestID(logger:)`` — the request's logger, carrying `request_id`;
/// 2. ``log(enabled:)`` — one `"msg":"request"` line per request (ids, codes, route pattern, time);
/// 3. ``metrics(_:)`` — `idvd_http_requests_total` and `idvd_http_request_duration_seconds`;
/// 4. ``errorToEnvelope`` — a thrown error becomes a refusal envelope, its HTTP status from
///    ``HTTPStatus/of(_:)`` (so the stages above always see the final status);
/// 5. ``throttle(_:clock:)`` — session-starting and device-registering routes: the per-client-address
///    limits (1110 + `Retry-After`);
/// 6. ``auth(_:)`` — bearer routes: the session is looked up and opened here, once, and handed down
///    as ``HTTPRequest/session``; its id joins the log metadata;
/// 7. ``decode`` — routes with a body type: the JSON body decoded once into its typed value
///    (``Route/init(_:_:limit:operationID:summary:request:response:bearer:quick:body:emptyBody:handler:)``);
/// 8. the route's handler (or, for a request refused before the chain, its refusal: 404, 405, 413).
public struct Middleware: Sendable {
    public typealias Next = Responder
    /// For logs and tests (`"request_id"`, `"log"`, …).
    public let name: String
    /// The requests this stage runs for.
    public let group: RouteGroup
    /// Builds this stage in front of `next` for `route` (nil: the chain of refused requests).
    let make: @Sendable (Route?, @escaping Responder) -> Responder

    /// A stage that builds itself per route.
    public init(_ name: String, group: RouteGroup = .every, make: @escaping @Sendable (Route?, @escaping Responder) -> Responder) {
        self.name = name
        self.group = group
        self.make = make
    }

    /// A stage that does the same for every route it belongs to.
    public init(_ name: String, group: RouteGroup = .every, _ run: @escaping @Sendable (HTTPRequest, Next) throws -> HTTPResponse) {
        self.init(name, group: group) { _, next in { req in try run(req, next) } }
    }

    /// Whether the stage is in the chain of `route` (nil: the chain of refused requests).
    func belongs(to route: Route?) -> Bool {
        switch group {
        case .every: return true
        case let .routes(member): return route.map(member) ?? false
        }
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
    /// `session_id` appears once the auth stage has opened the session. Nothing from a body. Not in
    /// the chain at all when `enabled` is false (`log.requests`).
    public static func log(enabled: Bool) -> Middleware {
        Middleware("log", group: enabled ? .every : .routes { _ in false }) { route, next in
            let pattern = JSONValue.string(route?.pattern ?? "unmatched")
            return { req in
                let response = try next(req)
                let ms = (Double(DispatchTime.now().uptimeNanoseconds - req.receivedAt) / 1e4).rounded() / 100
                let fields: Logger.Metadata = [
                    "method": .string(req.method), "route": pattern,
                    "status": .integer(response.status), "error_code": .integer(response.errorCode),
                    "outcome_error_code": .integer(response.outcomeErrorCode), "duration_ms": .number(ms),
                ]
                req.scopedLogger.info("request", fields)
                return response
            }
        }
    }

    /// Counts the request and its time under its route pattern (`unmatched` when no route took it).
    public static func metrics(_ metrics: Metrics) -> Middleware {
        Middleware("metrics") { route, next in
            let pattern = route?.pattern ?? "unmatched"
            return { req in
                let response = try next(req)
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - req.receivedAt) / 1e9
                metrics.observeRequest(route: pattern, method: req.method, status: response.status, seconds: seconds)
                return response
            }
        }
    }

    /// Every error thrown below becomes a refusal envelope: an ``IDVError`` as it is (status from
    /// ``HTTPStatus/of(_:)``), a ``ThrottledError`` or ``AnalysisRefusal`` with its `Retry-After`;
    /// a ``StoreError/unavailable(_:_:)`` (the database cannot serve for now) as 503 1038
    /// `storeUnavailable` with `Retry-After`, counted in `metrics` (`idvd_store_unavailable_total{reason}`);
    /// any other ``StoreError`` or error as 1030 `internalError`, logged by kind and request id only.
    public static let errorToEnvelope = errorToEnvelope(metrics: nil)

    /// ``errorToEnvelope`` counting the database's unavailability in `metrics`.
    public static func errorToEnvelope(metrics: Metrics?) -> Middleware {
        Middleware("error_to_envelope") { req, next in
            do {
                return try next(req)
            } catch let StoreError.unavailable(reason, detail) {
                req.scopedLogger.warning("database unavailable", ["reason": .string(reason.rawValue)])
                metrics?.storeUnavailable(reason: reason.rawValue)
                return .refusal(StoreError.unavailable(reason, detail), requestID: req.requestID)
            } catch let e as StoreError {
                req.scopedLogger.error("store error", ["kind": .string(storeKind(e))])
                return .refusal(IDVError(.internalError), requestID: req.requestID)
            } catch {
                if !HTTPResponse.isRefusal(error) { req.scopedLogger.error("internal error", ["kind": .string("\(type(of: error))")]) }
                return .refusal(error, requestID: req.requestID)
            }
        }
    }

    /// The ``StoreError`` case name, for logs.
    static func storeKind(_ e: StoreError) -> String {
        switch e {
        case .conflict: return "conflict"
        case .closed: return "closed"
        case .database: return "database"
        case .unavailable: return "unavailable"
        }
    }

    /// The routes each ``throttle(_:clock:)`` limit guards (`POST` only): each starts a session, or
    /// registers a device (a permanent row).
    static let sessionStarting: Set<String> = ["/v1/sessions", "/v1/links/redeem"]
    static let deviceRegistering: Set<String> = ["/v1/devices"]

    /// The per-client-address limits of the HTTP edge (``AbuseLimits``, docs/LIMITS.md): `POST /v1/sessions`
    /// and `POST /v1/links/redeem` (each starts a session) count against `limits.sessions_per_client`,
    /// `POST /v1/devices` (a permanent row each) against `limits.devices_per_client`; beyond it the request is refused with 1110,
    /// HTTP 429 and `Retry-After` before its body is decoded. In the chain of those routes only (the
    /// other routes' limits are the engine's: per device, per user and client); none without `limits`.
    public static func throttle(_ limits: AbuseLimits?, clock: any Clock) -> Middleware {
        Middleware("throttle", group: .routes { r in
            limits != nil && r.method == "POST" && (sessionStarting.contains(r.pattern) || deviceRegistering.contains(r.pattern))
        }) { route, next in
            guard let limits, let route else { return next }
            if deviceRegistering.contains(route.pattern) {
                return { req in
                    try limits.admitDeviceRegistration(address: req.clientAddress, now: clock.now())
                    return try next(req)
                }
            }
            return { req in
                try limits.admitSession(address: req.clientAddress, now: clock.now())
                return try next(req)
            }
        }
    }

    /// Bearer routes (``Route/requiresBearer``): `authenticate` (``FlowEngine/authenticate(_:)``) turns
    /// the token into the session — looked up and opened once per request — which the handler
    /// gets as ``HTTPRequest/session``. Throws 1004/1003 from `authenticate`.
    public static func auth(_ authenticate: @escaping @Sendable (String?) throws -> SessionRecord) -> Middleware {
        Middleware("auth", group: .routes { $0.requiresBearer }) { req, next in
            var r = req
            // An upload's session was opened before it was admitted to the analysis pool (HTTPServer.preauthenticate).
            let session = try req.session ?? authenticate(req.bearerToken)
            r.session = session
            r.scope.sessionID = session.sessionID
            r.logger = r.logger.with("session_id", .string(session.sessionID))
            return try next(r)
        }
    }

    /// Routes made with a body type: the body decoded, once, into ``HTTPRequest/input``
    /// (1001 `malformedRequest` naming the field or the fault). A non-empty body sent with a
    /// `Content-Type` that is not JSON (``isJSON(contentType:)``) is refused first with 415 1039
    /// `unsupportedMediaType`, never decoded; a body without `Content-Type` is read as JSON.
    public static let decode = Middleware("decode", group: .routes { $0.decoder != nil }) { route, next in
        guard let decoder = route?.decoder else { return next }
        return { req in
            if !req.body.isEmpty, let type = req.contentType, !isJSON(contentType: type) {
                throw IDVError(.unsupportedMediaType, "This route takes a JSON body: send Content-Type: application/json")
            }
            var r = req
            r.input = try decoder(req.body)
            return try next(r)
        }
    }

    /// Whether a `Content-Type` value names JSON: the media type `application/json` or a
    /// `+json` structured syntax (RFC 6839 §3.1), compared without case, parameters (`; charset=utf-8`)
    /// ignored (RFC 9110 §8.3.1).
    static func isJSON(contentType: String) -> Bool {
        if contentType == "application/json" { return true }   // what IDVKit, the page and most clients send
        let mediaType = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }
        let type = String(decoding: mediaType, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased()
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }
}

/// A chain of ``Middleware`` ending in a route's handler, built once per route (``compile(_:)``).
public struct Pipeline: Sendable {
    public let stages: [Middleware]

    public init(_ stages: [Middleware]) { self.stages = stages }

    /// request id → log → metrics → error-to-envelope → throttle → auth → decode (see ``Middleware``).
    /// `limits` nil: no throttle stage limits anything (a server without sessions).
    public static func standard(config: ServerConfig, metrics: Metrics, logger: Logger, limits: AbuseLimits? = nil,
                                clock: any Clock = SystemClock(),
                                authenticate: @escaping @Sendable (String?) throws -> SessionRecord) -> Pipeline {
        Pipeline([.requestID(logger: logger), .log(enabled: config.logRequests), .metrics(metrics), .errorToEnvelope(metrics: metrics),
                  .throttle(limits, clock: clock), .auth(authenticate), .decode])
    }

    /// The chain of `route` (nil: of the requests refused before the chain — no route takes them,
    /// or their route must not run): its stages folded around its handler, or around the refusal.
    func chain(for route: Route?) -> Responder {
        var next: Responder
        if let route {
            next = route.handler
        } else {
            next = { req in throw req.refusal ?? IDVError(.notFound, "No route for \(req.method) on this path") }
        }
        for stage in stages.reversed() where stage.belongs(to: route) {
            next = stage.make(route, next)
        }
        return next
    }

    /// The chains of `routes` (index for index) and of refused requests, built now, once.
    public func compile(_ routes: [Route]) -> Chains {
        Chains(routed: routes.map { chain(for: $0) }, refused: chain(for: nil))
    }

    /// The built chains of a server's routes.
    public struct Chains: Sendable {
        let routed: [Responder]
        let refused: Responder

        /// Answers `request`, whose route is `routes[route]` (as compiled; any other index, or a
        /// request refused before the chain, goes through the refused requests' chain). Never
        /// throws: the error-to-envelope stage answers every error; were it left out, an error
        /// still becomes a refusal envelope here.
        public func run(_ request: HTTPRequest, route: Int) -> HTTPResponse {
            let responder = request.refusal == nil && route >= 0 && route < routed.count ? routed[route] : refused
            do { return try responder(request) } catch { return .refusal(error, requestID: request.requestID) }
        }
    }

    /// Runs one request through a chain built for its route now (in-process tests, one-off
    /// requests); a server builds its chains once with ``compile(_:)``.
    public func run(_ request: HTTPRequest) -> HTTPResponse {
        let responder = chain(for: request.refusal == nil ? request.route : nil)
        do { return try responder(request) } catch { return .refusal(error, requestID: request.requestID) }
    }
}

/// Per-request values a stage deep in the chain hands back up to the stages around it (the log
/// line's `session_id`). One per request, used by the thread handling that request only.
public final class RequestScope: @unchecked Sendable {
    // @unchecked: one per request, written and read by the one thread that handles the request.
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
        case .unsupportedMediaType: return 415
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
        // The database cannot serve for now (unreachable, shutting down, out of connections, a
        // writers' conflict): 503 with Retry-After (``HTTPResponse/refusal(_:requestID:)``).
        case .storeUnavailable: return 503
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
             .selfieFaceNotFrontal, .selfieRetake, .presenceRequired, .presenceRetake: return 400
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
