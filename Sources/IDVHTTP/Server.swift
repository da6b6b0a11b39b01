import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations

/// The `idvd` server assembled: store, flow engine, routes, HTTP, metrics.
///
/// Routes (docs/PROTOCOL.md, openapi.json):
/// `GET /healthz`, `GET /readyz`, `GET /metrics`, `GET /openapi.json`, `POST /v1/devices`, `POST /v1/sessions`,
/// `GET /v1/session`, `POST /v1/session/answer`, `POST /v1/session/upload`, `POST /v1/session/reset`,
/// `POST /v1/session/logoff`, `POST /v1/flows/{name}`; the hosted page `GET /verify`, `GET /verify/{asset}`
/// and `POST /v1/links/redeem` (Web/WebRoutes.swift); the relying-party API `/v1/rp/…` (RPRoutes.swift).
public final class IDVServerApp: @unchecked Sendable {
    // @unchecked: `http` is set once in `init` (its routes capture `self`) and only read after.
    public let config: ServerConfig
    public let store: any EngineStore
    public let engine: FlowEngine
    public let metrics = Metrics()
    /// Admission of analyses: the HTTP edge's pool slots and the engine's cost and memory checks share it.
    public let analysis: AnalysisLimiter
    public private(set) var http: HTTPServer!
    /// The composition root's readiness checks, beside the built-in ones (``Readiness``; `GET /readyz`).
    public let readinessChecks: [ReadinessCheck]

    /// Builds the engine over `store` and the routes; does not listen yet.
    public init(config: ServerConfig, store: any EngineStore, registry: FlowRegistry = .standard(), crypto: any EngineCrypto,
                clock: any Clock = SystemClock(), readinessChecks: [ReadinessCheck] = []) {
        self.config = config
        self.store = store
        self.readinessChecks = readinessChecks
        analysis = AnalysisLimiter(settings: config.analysis)
        engine = FlowEngine(store: store, settings: config.engine, registry: registry, metrics: metrics, admission: analysis,
                            crypto: crypto, clock: clock)
        let engine = engine
        let standard = Pipeline.standard(config: config, metrics: metrics, logger: Logger(label: "idvd.http"),
                                         limits: engine.limits, clock: clock) { token in
            try engine.authenticate(token)
        }
        // The relying-party API's own client auth (RPRoutes.swift), before the body is decoded.
        var stages = standard.stages
        let rpAuth = Middleware.rpAuth(RPClientAuthenticator(store: store, crypto: crypto, clock: clock, requestsPerMinute: config.rp.requestsPerMinute))
        stages.insert(rpAuth, at: stages.firstIndex { $0.name == "decode" } ?? stages.endIndex)
        let pipeline = Pipeline(stages)
        http = HTTPServer(router: Router(Self.routes(self)), config: config, metrics: metrics, pipeline: pipeline, analysis: analysis)
        http.preauthenticate = { token in try engine.authenticate(token) }
    }

    /// Starts listening; returns the bound port.
    public func start() throws -> Int { try http.start() }

    /// Graceful stop: no new connections, in-flight requests finish (up to the grace period), store closed.
    public func stop() {
        http.shutdown(grace: Double(config.shutdownGraceSeconds))
        store.close()
    }

    static func routes(_ app: IDVServerApp) -> [Route] {
        let engine = app.engine
        return [
            Route("GET", "/healthz", limit: .bytes(0), operationID: "health", summary: "Liveness and store check", response: "Health",
                  quick: true) { [unowned app] _ in
                do {
                    let v = try app.store.schemaVersion()
                    // Degraded (still 200: light requests are served) while the analysis pool is full.
                    let pool = app.analysis.snapshot
                    return .json(["status": pool.saturated ? "degraded" : "ok", "version": .string(OpenIDV.version), "schema_version": .integer(v),
                                  "analysis": ["in_flight": .integer(pool.running), "queued": .integer(pool.queued),
                                               "threads": .integer(pool.threads), "queue_limit": .integer(pool.queueLimit)]] as JSONValue)
                } catch {
                    return .json(["status": "unavailable", "version": .string(OpenIDV.version)] as JSONValue, status: 503, errorCode: 1030)
                }
            },
            Route("GET", "/readyz", limit: .bytes(0), operationID: "readiness",
                  summary: "Readiness: 200 when this node can serve (database reachable, schema current, models and OCR parameters loaded, analysis pool up), 503 with the reasons otherwise",
                  response: "Readiness") { [unowned app] _ in
                Readiness.response(store: app.store, analysis: app.analysis, metrics: app.metrics, extra: app.readinessChecks)
            },
            Route("GET", "/metrics", limit: .bytes(0), operationID: "metrics", summary: "Prometheus metrics (text format 0.0.4)",
                  response: "text/plain", quick: true) { [unowned app] _ in
                let text = app.metrics.render(inFlight: app.http.requestsInFlight, queued: app.http.requestsQueued,
                                              storeWriteLockWaits: app.store.writeLockWaits())
                    + app.engine.limits.render() + app.analysis.renderMetrics() + app.http.connectionMetrics()
                return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: Data(text.utf8))
            },
            Route("GET", "/openapi.json", limit: .bytes(0), operationID: "openapi", summary: "This API as an OpenAPI 3 document",
                  response: "OpenAPIDocument", quick: true) { [unowned app] _ in
                HTTPResponse(status: 200, body: OpenAPI.document(routes: app.http.router.routes, config: app.config))
            },
            Route("POST", "/v1/devices", operationID: "registerDevice", summary: "Register an SDK install's Ed25519 public key",
                  request: "WireDeviceRegistration", response: "WireDevice", body: WireDeviceRegistration.self) { _, reg in
                .json(try engine.registerDevice(reg), status: 201)
            },
            Route("POST", "/v1/sessions", operationID: "startSession",
                  summary: "Start a session (SDK initialize); returns the bearer token once and the first challenge (getUser)",
                  request: "WireSessionStart", body: WireSessionStart.self, emptyBody: WireSessionStart()) { req, start in
                .envelope(try engine.startSession(start, requestID: req.requestID), requestID: req.requestID, status: 201)
            },
            Route("GET", "/v1/session", limit: .bytes(0), operationID: "getSession", summary: "The session and its current challenge",
                  bearer: true) { req in
                .envelope(try engine.current(session: req.authenticatedSession()), requestID: req.requestID)
            },
            Route("POST", "/v1/session/answer", operationID: "answerChallenge",
                  summary: "Answer the current challenge (JSON answers, kilobytes)", request: "WireAnswer", bearer: true,
                  body: WireAnswer.self) { req, answer in
                .envelope(try engine.answer(session: req.authenticatedSession(), answer, viaUpload: false, requestID: req.requestID,
                                            client: req.clientAddress), requestID: req.requestID)
            },
            Route("POST", "/v1/session/upload", limit: .upload, operationID: "answerChallengeWithUpload",
                  summary: "Answer the current challenge when the answer carries base64 images (megabytes)", request: "WireAnswer",
                  bearer: true, body: WireAnswer.self) { req, answer in
                .envelope(try engine.answer(session: req.authenticatedSession(), answer, viaUpload: true, requestID: req.requestID,
                                            client: req.clientAddress), requestID: req.requestID)
            }.onAnalysisPool(),
            Route("POST", "/v1/session/reset", operationID: "resetAuthState", summary: "resetAuthState: end any flow in progress",
                  bearer: true) { req in
                .envelope(try engine.reset(session: req.authenticatedSession(), requestID: req.requestID), requestID: req.requestID)
            },
            Route("POST", "/v1/session/logoff", operationID: "logOff", summary: "Log off: revoke the session", bearer: true) { req in
                .envelope(try engine.logoff(session: req.authenticatedSession(), requestID: req.requestID), requestID: req.requestID)
            },
            Route("POST", "/v1/flows/{name}", operationID: "startFlow",
                  summary: "Start a post-login flow by registry name on a logged-in session", request: "WireFlowStart", bearer: true,
                  body: WireFlowStart.self, emptyBody: WireFlowStart()) { req, start in
                .envelope(try engine.startFlow(session: req.authenticatedSession(), name: req.pathParameters["name"] ?? "",
                                               input: start.payload, requestID: req.requestID, client: req.clientAddress),
                          requestID: req.requestID)
            },
        ] + WebRoutes.routes(app)   // the hosted page and its links (Web/WebRoutes.swift)
            + RPRoutes.routes(app)  // the relying-party API (RPRoutes.swift)
    }
}

/// Runs the server until SIGTERM or SIGINT, then shuts down gracefully. Prints one ready line on
/// stdout: `{"event":"listening","port":N,"address":"…","tls":false}`.
public enum ServerRunner {
    /// `store` is closed when the server stops.
    /// `background`: started once the server listens (with the app, for its store and metrics);
    /// what it returns is called at shutdown, before the store closes (the webhook deliverer).
    public static func run(config: ServerConfig, store: any EngineStore, registry: FlowRegistry = .standard(), crypto: any EngineCrypto,
                           readinessChecks: [ReadinessCheck] = [],
                           background: ((IDVServerApp) throws -> (() -> Void))? = nil) throws -> Int32 {
        let app = IDVServerApp(config: config, store: store, registry: registry, crypto: crypto, readinessChecks: readinessChecks)
        signal(SIGPIPE, SIG_IGN)
        let stop = try StopSignal.install()
        let port: Int
        do { port = try app.start() } catch { store.close(); throw error }
        let ready: JSONValue = ["event": "listening", "port": .integer(port), "address": .string(config.listenAddress),
                                "tls": .bool(config.tlsCertPath != nil), "schema_version": .integer((try? store.schemaVersion()) ?? 0)]
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        FileHandle.standardOutput.write((try enc.encode(ready)) + Data("\n".utf8))
        Log.event("listening", ["port": .integer(port)])
        let stopBackground: (() -> Void)?
        do { stopBackground = try background?(app) } catch { app.stop(); throw error }
        // The expiry sweep (FlowEngine.purgeExpired): counts only in the log.
        var sweep: DispatchSourceTimer?
        if config.sessionSweepSeconds > 0 {
            let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "idvd.sweep"))
            t.schedule(deadline: .now() + .seconds(config.sessionSweepSeconds), repeating: .seconds(config.sessionSweepSeconds))
            t.setEventHandler { [engine = app.engine] in
                do {
                    let r = try engine.purgeExpired()
                    if r.sessions > 0 || r.mediaPurged > 0 {
                        Log.event("expiry sweep", ["sessions": .integer(r.sessions), "flow_runs_closed": .integer(r.flowRunsClosed),
                                                   "media_purged": .integer(r.mediaPurged)])
                    }
                } catch {
                    Log.event("expiry sweep failed", level: "error", ["kind": .string("\(type(of: error))")])
                }
            }
            t.resume()
            sweep = t
        }
        stop.wait()
        sweep?.cancel()
        Log.event("shutting down", ["in_flight": .integer(app.http.requestsInFlight)])
        stopBackground?()
        app.stop()
        Log.event("stopped")
        return 0
    }
}

/// SIGTERM and SIGINT as a self-pipe: the handler (async-signal-safe: one `write(2)`) wakes the
/// thread in ``wait()``. Installed with `signal(2)` before the ready line is printed, so a signal
/// that arrives at any moment after the ready line stops the server. (A Dispatch signal source was
/// used before; on Linux one SIGTERM sent right after a request was occasionally lost and the
/// server ran on, which hung a test harness waiting for it to exit.)
enum StopSignal {
    /// The pipe's write end, read by the handler; set once, before the handlers are installed.
    nonisolated(unsafe) private static var writeFD: Int32 = -1

    struct Waiter {
        let readFD: Int32
        /// Blocks until SIGTERM or SIGINT arrives (retrying reads a signal interrupted).
        func wait() {
            var byte: UInt8 = 0
            while true {
                let n = read(readFD, &byte, 1)
                if n == 1 || (n < 0 && errno != EINTR) || n == 0 { return }
            }
        }
    }

    static func install() throws -> Waiter {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw IDVError(.internalError, "cannot create the stop-signal pipe (errno \(errno))") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        writeFD = fds[1]
        // A parent may have started us with the signals blocked (a mask inherited through fork/exec,
        // e.g. from a thread of Swift's concurrency pool): unblock them here, so this thread — and
        // every thread started after it — can take them.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGTERM)
        sigaddset(&unblock, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        for sig in [SIGTERM, SIGINT] {
            _ = signal(sig) { _ in
                var byte: UInt8 = 1
                _ = write(StopSignal.writeFD, &byte, 1)
            }
        }
        return Waiter(readFD: fds[0])
    }
}
