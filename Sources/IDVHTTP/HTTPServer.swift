internal import CMicroHTTPD
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import Synchronization


/// The HTTP server over libmicrohttpd: internal polling thread, thread pool, epoll; per-route body
/// limits are enforced as bytes arrive (413, code 1006). Quick routes (``Route/quick``) are handled on
/// the pool thread that read them; every other request's connection is suspended while its handler
/// runs on one of ``ServerConfig/workers`` worker threads, so a slow request (an Argon2id hash,
/// ~0.3 s; a face match) never delays another connection served by the same pool thread. Logs one
/// JSON line per request and feeds ``Metrics``.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `daemon`, `tlsStrings` and `addressCString` are written by `start()` and
    // `shutdown(grace:)` only, before libmicrohttpd's threads run and after they stopped; the
    // counters are atomics; everything else is immutable.
    public let router: Router
    public let config: ServerConfig
    public let metrics: Metrics
    private var daemon: UnsafeMutableRawPointer?
    private let inFlight = Atomic<Int>(0)
    private let queued = Atomic<Int>(0)
    private var tlsStrings: [UnsafeMutablePointer<CChar>] = []
    private var addressCString: UnsafeMutablePointer<CChar>?
    /// Runs the handlers of the routes that are not ``Route/quick`` nor ``Route/analysis``.
    private let workers: OperationQueue
    /// Runs the handlers of the ``Route/analysis`` routes (uploads): `analysis.threads` threads of
    /// their own, admitted by ``analysis`` — light requests never wait behind them.
    private let analysisThreads: OperationQueue
    /// Admission of the analysis routes (shared with the engine's cost and memory checks).
    public let analysis: AnalysisLimiter

    /// The stages every request goes through before its handler (``Pipeline/standard(config:metrics:logger:limits:clock:authenticate:)``).
    public let pipeline: Pipeline
    /// The chain of each route and of refused requests, built once here from ``pipeline``.
    let chains: Pipeline.Chains

    /// `pipeline` nil: the standard chain whose auth stage refuses every bearer route (1004).
    public init(router: Router, config: ServerConfig, metrics: Metrics, pipeline: Pipeline? = nil, analysis: AnalysisLimiter? = nil) {
        self.router = router
        self.analysis = analysis ?? AnalysisLimiter(settings: config.analysis)
        analysisThreads = OperationQueue()
        analysisThreads.name = "idvd.http.analysis"
        analysisThreads.maxConcurrentOperationCount = max(1, self.analysis.settings.threads)
        self.config = config
        self.metrics = metrics
        let pipeline = pipeline ?? .standard(config: config, metrics: metrics, logger: Logger(label: "idvd.http")) { _ in
            throw IDVError(.unauthenticated, "This server has no sessions")
        }
        self.pipeline = pipeline
        chains = pipeline.compile(router.routes)
        workers = OperationQueue()
        workers.name = "idvd.http.workers"
        workers.maxConcurrentOperationCount = max(1, config.workers)
    }

    /// An offloaded request on its way to a worker thread (the wrapper keeps its connection suspended).
    // @unchecked: the pointer is libmicrohttpd's job, used by one thread at a time (the one it is handed to).
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
    var routeLookups: Int { lookups.load(ordering: .relaxed) }
    private let lookups = Atomic<Int>(0)

    deinit {
        tlsStrings.forEach { free($0) }
        free(addressCString)
    }

    /// Requests being handled right now.
    public var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }
    /// Requests handed to the worker threads and not yet started (all ``ServerConfig/workers`` busy).
    public var requestsQueued: Int { queued.load(ordering: .relaxed) }

    /// The body limit of a request, decided as its headers arrive; stores in `route` the index of the
    /// route that takes it (``Router/index(method:path:)``: -1 none, -2 the path exists for other methods).
    func limit(method: String, path: String, route: inout Int) -> Int64 {
        lookups.add(1, ordering: .relaxed)
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
            server.queued.add(1, ordering: .relaxed)
            server.workers.addOperation {
                server.queued.subtract(1, ordering: .relaxed)
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
        let digits = Array("0123456789abcdef".utf8)
        // Two 64-bit draws (two getrandom calls), not sixteen one-byte ones.
        let words = (rng.next(), rng.next())
        return String(unsafeUninitializedCapacity: 32) { out in
            for i in 0..<16 {
                let w = i < 8 ? words.0 : words.1
                let byte = UInt8(truncatingIfNeeded: w >> UInt64(8 * (7 - i % 8)))
                out[2 * i] = digits[Int(byte >> 4)]
                out[2 * i + 1] = digits[Int(byte & 0x0F)]
            }
            return 32
        }
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
                // A known refusal (1004/1003) or a database that cannot serve (503 1038) as itself.
                let refusal: any Error & Sendable
                if let e = error as? IDVError { refusal = e } else if let e = error as? StoreError { refusal = e } else { refusal = IDVError(.internalError) }
                self.handle(request, &resp, refusal: refusal)
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
        inFlight.add(1, ordering: .relaxed)
        defer { inFlight.subtract(1, ordering: .relaxed) }
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
        let response = protocolHeaders(chains.run(hr, route: index), method: method, path: path, bearer: hr.bearerToken != nil)
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
