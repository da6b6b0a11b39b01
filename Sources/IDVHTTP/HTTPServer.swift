internal import CMicroHTTPD
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
        func clean(_ s: String) -> Bool { !s.unicodeScalars.contains { $0 == "\n" || $0 == "\r" || $0 == "\0" } }
        return all.sorted { $0.key < $1.key }.filter { clean($0.key) && clean($0.value) && !$0.key.contains(":") }
            .map { "\($0.key): \($0.value)\n" }.joined()
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

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

/// Which body limit a route has (values from ``ServerConfig``).
public enum BodyLimit: Sendable, Equatable {
    /// ``ServerConfig/bodyLimit`` (kilobytes: JSON answers).
    case json
    /// ``ServerConfig/uploadLimit`` (megabytes: answers carrying base64 images).
    case upload
    /// No body accepted beyond this many bytes (GET routes).
    case bytes(Int)
}

/// One route: method, path pattern (`/v1/flows/{name}`), body limit, OpenAPI description, handler.
public struct Route: Sendable {
    public let method: String
    public let pattern: String
    public let bodyLimit: BodyLimit
    public let operationID: String
    public let summary: String
    /// Name of the request body schema in the OpenAPI components, or nil.
    public let requestSchema: String?
    /// Response content: schema name (JSON) or a media type for text routes.
    public let responseSchema: String
    public let requiresBearer: Bool
    /// True for a route that answers at once (health, metrics): it runs on the libmicrohttpd pool
    /// thread that read it. Every other route runs on the server's worker threads (``ServerConfig/workers``).
    public let quick: Bool
    /// True for a route that carries heavy work (document pages, selfie frames): it runs on the
    /// analysis threads (`analysis.threads`), admitted at once or refused with 1100/1101 and
    /// `Retry-After` (``onAnalysisPool()``); never on the `http.workers` that light requests use.
    public private(set) var analysis = false
    /// Runs after the chain's stages (``Middleware``); what it throws becomes a refusal envelope.
    public let handler: @Sendable (HTTPRequest) throws -> HTTPResponse
    /// The body decoder of a route made with a body type (run by ``Middleware/decode``), or nil.
    let decoder: (@Sendable (Data) throws -> any Sendable)?

    /// A route whose JSON body is decoded once, by the chain's decode stage, into `body`'s type
    /// and handed to `handler` (an empty body is `emptyBody`, or 1001 when nil).
    public init<Body: Decodable & Sendable>(_ method: String, _ pattern: String, limit: BodyLimit = .json, operationID: String,
                                            summary: String, request: String? = nil, response: String = "WireEnvelope",
                                            bearer: Bool = false, quick: Bool = false, body: Body.Type, emptyBody: Body? = nil,
                                            handler: @escaping @Sendable (HTTPRequest, Body) throws -> HTTPResponse) {
        self.init(method, pattern, limit: limit, operationID: operationID, summary: summary, request: request, response: response,
                  bearer: bearer, quick: quick, decoder: { try RequestDecoder.decode(Body.self, $0, emptyAs: emptyBody) }) { req in
            guard let value = req.input as? Body else { throw IDVError(.internalError, "the body was not decoded") }
            return try handler(req, value)
        }
    }

    public init(_ method: String, _ pattern: String, limit: BodyLimit = .json, operationID: String, summary: String,
                request: String? = nil, response: String = "WireEnvelope", bearer: Bool = false, quick: Bool = false,
                handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        self.init(method, pattern, limit: limit, operationID: operationID, summary: summary, request: request, response: response,
                  bearer: bearer, quick: quick, decoder: nil, handler: handler)
    }

    private init(_ method: String, _ pattern: String, limit: BodyLimit, operationID: String, summary: String,
                 request: String?, response: String, bearer: Bool, quick: Bool,
                 decoder: (@Sendable (Data) throws -> any Sendable)?, handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        self.decoder = decoder
        self.method = method
        self.pattern = pattern
        self.bodyLimit = limit
        self.operationID = operationID
        self.summary = summary
        self.requestSchema = request
        self.responseSchema = response
        self.requiresBearer = bearer
        self.quick = quick
        self.handler = handler
        segments = pattern.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    let segments: [String]

    /// This route on the analysis threads (``analysis``).
    public func onAnalysisPool() -> Route {
        var r = self
        r.analysis = true
        return r
    }

    func match(_ pathSegments: [Substring]) -> [String: String]? {
        guard pathSegments.count == segments.count else { return nil }
        var params: [String: String] = [:]
        for (p, s) in zip(segments, pathSegments) {
            if p.hasPrefix("{") && p.hasSuffix("}") {
                guard !s.isEmpty else { return nil }
                params[String(p.dropFirst().dropLast())] = String(s)
            } else if p != s {
                return nil
            }
        }
        return params
    }
}

/// A small typed router: exact segments and `{name}` parameters.
public struct Router: Sendable {
    public private(set) var routes: [Route] = []
    public init(_ routes: [Route] = []) { self.routes = routes }
    public mutating func add(_ r: Route) { routes.append(r) }

    public enum Match { case found(Route, [String: String]), methodNotAllowed([String]), notFound }

    public func match(method: String, path: String) -> Match {
        let segs = path.split(separator: "/", omittingEmptySubsequences: true)
        for r in routes {
            guard let params = r.match(segs) else { continue }
            if Self.takes(r, method) { return .found(r, params) }
        }
        let methods = allowedMethods(path: path)
        return methods.isEmpty ? .notFound : .methodNotAllowed(methods)
    }

    /// Whether `route` takes `method`: its own method, and `HEAD` for a `GET` route (RFC 9110 §9.3.2:
    /// the same answer without its body, which libmicrohttpd leaves out).
    static func takes(_ route: Route, _ method: String) -> Bool {
        route.method == method || (method == "HEAD" && route.method == "GET")
    }

    /// The methods the routes of `path` take, for a 405's `Allow` header (RFC 9110 §15.5.6): each
    /// route's method, plus `HEAD` beside `GET`; sorted, no duplicates. Empty when no route fits.
    public func allowedMethods(path: String) -> [String] {
        let segs = path.split(separator: "/", omittingEmptySubsequences: true)
        var methods = Set<String>()
        for r in routes where r.match(segs) != nil {
            methods.insert(r.method)
            if r.method == "GET" { methods.insert("HEAD") }
        }
        return methods.sorted()
    }

    /// ``index(method:path:)`` when the path has routes for other methods only.
    public static let otherMethods = -2

    /// The index in ``routes`` of the route that takes `method path`; -1 when no route's pattern
    /// fits the path, ``otherMethods`` when only other methods' do.
    public func index(method: String, path: String) -> Int {
        let segs = path.split(separator: "/", omittingEmptySubsequences: true)
        var other = false
        for (i, r) in routes.enumerated() where r.match(segs) != nil {
            if Self.takes(r, method) { return i }
            other = true
        }
        return other ? Self.otherMethods : -1
    }
}

/// The HTTP server over libmicrohttpd: internal polling thread, thread pool, epoll; per-route body
/// limits are enforced as bytes arrive (413, code 1006). Quick routes (``Route/quick``) are handled on
/// the pool thread that read them; every other request's connection is suspended while its handler
/// runs on one of ``ServerConfig/workers`` worker threads, so a slow request (an Argon2id hash,
/// ~0.3 s; a face match) never delays another connection served by the same pool thread. Logs one
/// JSON line per request and feeds ``Metrics``.
public final class HTTPServer: @unchecked Sendable {
    public let router: Router
    public let config: ServerConfig
    public let metrics: Metrics
    private var daemon: UnsafeMutableRawPointer?
    private let lock = NSLock()
    private var inFlight = 0
    private var queued = 0
    private var tlsStrings: [UnsafeMutablePointer<CChar>] = []
    private var addressCString: UnsafeMutablePointer<CChar>?
    /// Runs the handlers of the routes that are not ``Route/quick`` nor ``Route/analysis``.
    private let workers: OperationQueue
    /// Runs the handlers of the ``Route/analysis`` routes (uploads): `analysis.threads` threads of
    /// their own, admitted by ``analysis`` — light requests never wait behind them.
    private let analysisThreads: OperationQueue
    /// Admission of the analysis routes (shared with the engine's cost and memory checks).
    public let analysis: AnalysisLimiter

    /// The stages every request goes through before its handler (``Pipeline/standard(config:metrics:logger:authenticate:)``).
    public let pipeline: Pipeline

    /// `pipeline` nil: the standard chain whose auth stage refuses every bearer route (1004).
    public init(router: Router, config: ServerConfig, metrics: Metrics, pipeline: Pipeline? = nil, analysis: AnalysisLimiter? = nil) {
        self.router = router
        self.analysis = analysis ?? AnalysisLimiter(settings: config.analysis)
        analysisThreads = OperationQueue()
        analysisThreads.name = "idvd.http.analysis"
        analysisThreads.maxConcurrentOperationCount = max(1, self.analysis.settings.threads)
        self.config = config
        self.metrics = metrics
        self.pipeline = pipeline ?? .standard(config: config, metrics: metrics, logger: Logger(label: "idvd.http")) { _ in
            throw IDVError(.unauthenticated, "This server has no sessions")
        }
        workers = OperationQueue()
        workers.name = "idvd.http.workers"
        workers.maxConcurrentOperationCount = max(1, config.workers)
    }

    /// An offloaded request on its way to a worker thread (the wrapper keeps its connection suspended).
    private struct Job: @unchecked Sendable { let pointer: OpaquePointer }

    /// Whether a complete request goes to the worker threads: every routed request but the quick
    /// routes (unrouted ones are refused at once). `route` is what ``limit(method:path:route:)`` stored.
    func offloads(route: Int) -> Bool {
        route >= 0 && route < router.routes.count && !router.routes[route].quick
    }

    /// Whether an offloaded request goes to the analysis threads (``Route/analysis``).
    func analyses(route: Int) -> Bool {
        route >= 0 && route < router.routes.count && router.routes[route].analysis
    }

    /// How many times a request's route was looked up: once per request (``limit(method:path:route:)``,
    /// as its headers arrive); the offload decision and the handler reuse what it found.
    var routeLookups: Int { lock.lock(); defer { lock.unlock() }; return lookups }
    private var lookups = 0

    deinit {
        tlsStrings.forEach { free($0) }
        free(addressCString)
    }

    /// Requests being handled right now.
    public var requestsInFlight: Int { lock.lock(); defer { lock.unlock() }; return inFlight }
    /// Requests handed to the worker threads and not yet started (all ``ServerConfig/workers`` busy).
    public var requestsQueued: Int { lock.lock(); defer { lock.unlock() }; return queued }

    /// The body limit of a request, decided as its headers arrive; stores in `route` the index of the
    /// route that takes it (``Router/index(method:path:)``: -1 none, -2 the path exists for other methods).
    func limit(method: String, path: String, route: inout Int) -> Int64 {
        lock.lock(); lookups += 1; lock.unlock()
        route = router.index(method: method, path: path)
        return limit(route: route)
    }

    func limit(route: Int) -> Int64 {
        guard route >= 0 && route < router.routes.count else { return Int64(config.bodyLimit) }
        switch router.routes[route].bodyLimit {
        case .json: return Int64(config.bodyLimit)
        case .upload: return Int64(config.uploadLimit)
        case let .bytes(n): return Int64(n)
        }
    }

    /// Starts listening; returns the bound port. Throws ``IDVServerError/configuration(_:)``.
    public func start() throws -> Int {
        var cfg = cmhd_config()
        addressCString = strdup(config.listenAddress)
        cfg.address = UnsafePointer(addressCString)
        cfg.port = UInt16(clamping: config.port)
        cfg.threads = UInt32(config.threads)
        cfg.connection_timeout_seconds = 30
        cfg.header_deadline_seconds = UInt32(clamping: config.clients.headerDeadlineSeconds)
        cfg.min_body_bytes_per_second = UInt32(clamping: config.clients.minBodyBytesPerSecond)
        cfg.per_ip_connection_limit = UInt32(clamping: config.clients.perAddressConnections)
        cfg.connection_limit = UInt32(clamping: config.clients.connectionLimit)
        Self.raiseOpenFileLimit(toFit: config.clients.connectionLimit)
        if config.tlsCertPath != nil || config.tlsKeyPath != nil {
            guard let cp = config.tlsCertPath, let kp = config.tlsKeyPath else {
                throw IDVServerError.configuration("TLS needs both tls.cert and tls.key")
            }
            guard let cert = try? String(contentsOfFile: cp, encoding: .utf8), let key = try? String(contentsOfFile: kp, encoding: .utf8) else {
                throw IDVServerError.configuration("cannot read TLS certificate or key file")
            }
            let c = strdup(cert)!, k = strdup(key)!
            tlsStrings = [c, k]
            cfg.tls_cert_pem = UnsafePointer(c)
            cfg.tls_key_pem = UnsafePointer(k)
        }
        cfg.ctx = Unmanaged.passUnretained(self).toOpaque()
        cfg.limit = { ctx, method, url, route in
            let server = Unmanaged<HTTPServer>.fromOpaque(ctx!).takeUnretainedValue()
            var index = -1
            let n = server.limit(method: String(cString: method!), path: String(cString: url!), route: &index)
            route?.pointee = index
            return n
        }
        cfg.handler = { ctx, req, resp in
            let server = Unmanaged<HTTPServer>.fromOpaque(ctx!).takeUnretainedValue()
            server.handle(req!.pointee, resp!)
        }
        cfg.offload = { ctx, route in
            let server = Unmanaged<HTTPServer>.fromOpaque(ctx!).takeUnretainedValue()
            return server.offloads(route: route) ? 1 : 0
        }
        cfg.dispatch = { ctx, job in
            let server = Unmanaged<HTTPServer>.fromOpaque(ctx!).takeUnretainedValue()
            let handle = Job(pointer: job!)
            let request = cmhd_job_request(handle.pointer).pointee
            if server.analyses(route: request.route) {
                server.dispatchAnalysis(handle, request)
                return
            }
            server.lock.lock(); server.queued += 1; server.lock.unlock()
            server.workers.addOperation {
                server.lock.lock(); server.queued -= 1; server.lock.unlock()
                var resp = cmhd_response()
                server.handle(cmhd_job_request(handle.pointer).pointee, &resp)
                cmhd_job_finish(handle.pointer, &resp)
            }
        }
        var err = [CChar](repeating: 0, count: 256)
        guard let d = cmhd_start(&cfg, &err, err.count) else {
            throw IDVServerError.configuration(cStringArray(err))
        }
        daemon = d
        return Int(cmhd_bound_port(d))
    }

    /// Raises this process's soft open-file limit (RLIMIT_NOFILE) to fit `connections` sockets and
    /// some room for the store and logs, up to the hard limit; never lowers it.
    static func raiseOpenFileLimit(toFit connections: Int) {
        var rl = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &rl) == 0 else { return }
        let want = rlim_t(connections + 256)
        guard rl.rlim_cur < want else { return }
        rl.rlim_cur = min(want, rl.rlim_max)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &rl)
    }

    /// The `/metrics` lines of the connections: `idvd_http_connections_open`,
    /// `idvd_http_slow_clients_closed_total{reason="header_deadline"|"body_rate"}` and
    /// `idvd_http_connections_refused_total{reason="per_address"}`.
    public func connectionMetrics() -> String {
        guard let d = daemon else { return "" }
        var s = "# HELP idvd_http_connections_open Client connections open now.\n# TYPE idvd_http_connections_open gauge\n"
        s += "idvd_http_connections_open \(cmhd_connections_open(d))\n"
        s += "# HELP idvd_http_slow_clients_closed_total Connections closed for a header past http.header_deadline_seconds or a body below http.min_body_bytes_per_second.\n"
        s += "# TYPE idvd_http_slow_clients_closed_total counter\n"
        s += "idvd_http_slow_clients_closed_total{reason=\"header_deadline\"} \(cmhd_slow_closed(d, 0))\n"
        s += "idvd_http_slow_clients_closed_total{reason=\"body_rate\"} \(cmhd_slow_closed(d, 1))\n"
        s += "# HELP idvd_http_connections_refused_total Connections refused at accept: their client address held http.per_address_connections already.\n"
        s += "# TYPE idvd_http_connections_refused_total counter\n"
        s += "idvd_http_connections_refused_total{reason=\"per_address\"} \(cmhd_refused_per_address(d))\n"
        return s
    }

    /// Graceful stop: stop accepting, wait up to `grace` seconds for requests in flight, then stop.
    public func shutdown(grace: Double) {
        guard let d = daemon else { return }
        cmhd_quiesce(d)
        let deadline = Date().addingTimeInterval(grace)
        // Wait until every received request has had its response sent (libmicrohttpd's completion callback).
        while cmhd_active_requests(d) > 0 && Date() < deadline { usleep(10_000) }
        cmhd_stop(d)   // also waits for handlers still running on the worker threads
        workers.waitUntilAllOperationsAreFinished()
        analysisThreads.waitUntilAllOperationsAreFinished()
        daemon = nil
    }

    /// A fresh request id: 16 random bytes (the system generator) as 32 lowercase hex digits.
    static func requestID() -> String {
        var rng = SystemRandomNumberGenerator()
        return Hex.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    /// The wrapper's query lines (`key=value\n`, with `%`, `=` and line breaks escaped) as a dictionary.
    /// `repeated`: the first key given more than once (its last value is in the dictionary).
    static func queryArguments(_ lines: String) -> (arguments: [String: String], repeated: String?) {
        var out: [String: String] = [:]
        var repeated: String?
        for line in lines.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let k = parts.first.flatMap({ String($0).removingPercentEncoding }), !k.isEmpty else { continue }
            if repeated == nil, out[k] != nil { repeated = k }
            out[k] = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? "" : ""
        }
        return (out, repeated)
    }

    /// The libmicrohttpd version linked, e.g. "0.9.75".
    public static var libraryVersion: String { String(cString: cmhd_version()) }

    /// The headers HTTP asks of some statuses, added to what the chain answered: `Allow` on every
    /// 405 (RFC 9110 §15.5.6: the methods the path's routes take) and `WWW-Authenticate` on every 401
    /// (RFC 6750 §3: `Bearer realm="idvd"`, with `error="invalid_token"` when a token was sent — unknown,
    /// logged off or expired — and without when none was).
    func protocolHeaders(_ response: HTTPResponse, method: String, path: String, bearer: Bool) -> HTTPResponse {
        var r = response
        if r.status == 405, r.headers["Allow"] == nil {
            r.headers["Allow"] = router.allowedMethods(path: path).joined(separator: ", ")
        }
        if r.status == 401, r.headers["WWW-Authenticate"] == nil {
            r.headers["WWW-Authenticate"] = bearer ? #"Bearer realm="idvd", error="invalid_token""# : #"Bearer realm="idvd""#
        }
        return r
    }

    /// Opens the session of an analysis route's bearer token before the upload may take a pool slot
    /// (IDVServerApp: `FlowEngine.authenticate`), so a request without a live session is refused at
    /// once and never waits in the analysis queue; the session is handed to the auth stage (opened
    /// once per request). Nil: no check before admission (slots keyed by the Authorization header).
    public var preauthenticate: (@Sendable (String?) throws -> SessionRecord)?

    /// An upload: its session opened (``preauthenticate``), then admitted to the analysis threads
    /// (one per session queued or running), or refused at once on this pool thread — 1004/1003,
    /// 1101/1100 with `Retry-After` — its body never decoded.
    private func dispatchAnalysis(_ handle: Job, _ request: cmhd_request) {
        let authorization = request.authorization.map { String(cString: $0) }
        var session: SessionRecord?
        if let preauthenticate {
            do {
                session = try preauthenticate(HTTPRequest.bearer(authorization))
            } catch {
                var resp = cmhd_response()
                self.handle(request, &resp, refusal: error as? IDVError ?? IDVError(.internalError))
                cmhd_job_finish(handle.pointer, &resp)
                return
            }
        }
        let opened = session
        switch analysis.enqueue(key: opened?.sessionID ?? authorization) {
        case let .failure(refusal):
            var resp = cmhd_response()
            self.handle(request, &resp, refusal: refusal)
            cmhd_job_finish(handle.pointer, &resp)
        case let .success(ticket):
            analysisThreads.addOperation { [self] in
                analysis.start(ticket)
                var resp = cmhd_response()
                self.handle(cmhd_job_request(handle.pointer).pointee, &resp, session: opened)
                analysis.finish(ticket)
                cmhd_job_finish(handle.pointer, &resp)
            }
        }
    }

    private func handle(_ req: cmhd_request, _ out: UnsafeMutablePointer<cmhd_response>, refusal early: (any Error & Sendable)? = nil,
                        session: SessionRecord? = nil) {
        let start = DispatchTime.now().uptimeNanoseconds
        lock.lock(); inFlight += 1; lock.unlock()
        defer { lock.lock(); inFlight -= 1; lock.unlock() }
        let method = String(cString: req.method)
        let path = String(cString: req.url)
        let body = early == nil && req.too_large == 0 && req.body_len > 0 ? Data(bytes: req.body, count: req.body_len) : Data()
        var hr = HTTPRequest(method: method, path: path, body: body, requestID: Self.requestID(),
                             authorization: req.authorization.map { String(cString: $0) },
                             clientAddress: req.client_address.flatMap { p in let a = String(cString: p); return a.isEmpty ? nil : a },
                             receivedAt: start)
        var repeatedArgument: String?
        if let q = req.query { (hr.query, repeatedArgument) = Self.queryArguments(String(cString: q)) }
        // The route found as the headers arrived (limit callback), not looked up again.
        let index = req.route
        if index >= 0 && index < router.routes.count {
            let r = router.routes[index]
            hr.route = r
            hr.pathParameters = r.match(path.split(separator: "/", omittingEmptySubsequences: true)) ?? [:]
        } else if index == Router.otherMethods {
            hr.refusal = IDVError(.methodNotAllowed, "Method \(method) not allowed; allowed: \(router.allowedMethods(path: path).joined(separator: ", "))")
        } else {
            hr.refusal = IDVError(.notFound, "No route for \(method) on this path")
        }
        if req.too_large != 0 {
            hr.refusal = IDVError(.payloadTooLarge, "The request body exceeds the limit of \(limit(route: index)) bytes for this route")
        }
        if hr.refusal == nil, let k = repeatedArgument {
            hr.refusal = IDVError(.invalidArgument, "query argument '\(k.prefix(32))' is given more than once")
        }
        if let early { hr.refusal = early }
        hr.session = session   // opened before admission (``preauthenticate``); the auth stage uses it
        let requestID = hr.requestID
        let response = protocolHeaders(pipeline.run(hr), method: method, path: path, bearer: hr.bearerToken != nil)
        let n = response.body.count
        let buf = malloc(max(n, 1))!
        response.body.withUnsafeBytes { if n > 0 { memcpy(buf, $0.baseAddress!, n) } }
        out.pointee.status = Int32(response.status)
        out.pointee.body = buf.assumingMemoryBound(to: CChar.self)
        out.pointee.body_len = n
        out.pointee.content_kind = response.contentType.hasPrefix("text/plain; version=0.0.4") ? 1 : 0
        if response.contentType != "application/json" && out.pointee.content_kind == 0 {
            out.pointee.content_type = strdup(response.contentType)
        }
        out.pointee.headers = strdup(response.headerLines)
        out.pointee.request_id = strdup(requestID)
    }
}

/// The NUL-terminated text in a C char buffer.
func cStringArray(_ a: [CChar]) -> String {
    String(decoding: a.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
