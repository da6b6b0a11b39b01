import Foundation
import IDVCore
import IDVEngine

/// The `idvd` server assembled: store, flow engine, routes, HTTP, metrics.
///
/// Routes (docs/PROTOCOL.md, openapi.json):
/// `GET /healthz`, `GET /metrics`, `GET /openapi.json`, `POST /v1/devices`, `POST /v1/sessions`,
/// `GET /v1/session`, `POST /v1/session/answer`, `POST /v1/session/upload`, `POST /v1/session/reset`,
/// `POST /v1/session/logoff`, `POST /v1/flows/{name}`; the hosted page `GET /verify`, `GET /verify/{asset}`
/// and `POST /v1/links/redeem` (Web/WebRoutes.swift).
public final class IDVServerApp: @unchecked Sendable {
    public let config: ServerConfig
    public let store: Store
    public let engine: FlowEngine
    public let metrics = Metrics()
    public private(set) var http: HTTPServer!

    /// Builds the engine over `store` and the routes; does not listen yet.
    public init(config: ServerConfig, store: Store, registry: FlowRegistry = .standard(), crypto: any EngineCrypto,
                clock: any Clock = SystemClock()) {
        self.config = config
        self.store = store
        engine = FlowEngine(store: store, config: config, registry: registry, metrics: metrics, crypto: crypto, clock: clock)
        http = HTTPServer(router: Router(Self.routes(self)), config: config, metrics: metrics)
    }

    /// Starts listening; returns the bound port.
    public func start() throws -> Int { try http.start() }

    /// Graceful stop: no new connections, in-flight requests finish (up to the grace period), store closed.
    public func stop() {
        http.shutdown(grace: Double(config.shutdownGraceSeconds))
        store.close()
    }

    static let decoder = JSONDecoder()

    static func decode<T: Decodable>(_ type: T.Type, _ body: Data, emptyAs empty: T? = nil) throws -> T {
        if body.isEmpty || body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            if let empty { return empty }
            throw IDVError(.malformedRequest, "A JSON body is required")
        }
        do {
            return try decoder.decode(T.self, from: body)
        } catch let DecodingError.keyNotFound(key, ctx) {
            throw IDVError(.malformedRequest, "Missing field \((ctx.codingPath.map(\.stringValue) + [key.stringValue]).joined(separator: "."))")
        } catch let DecodingError.typeMismatch(_, ctx) {
            if ctx.codingPath.isEmpty { throw IDVError(.malformedRequest, "The body must be a JSON object") }
            throw IDVError(.malformedRequest, "Wrong type at \(ctx.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch let DecodingError.valueNotFound(_, ctx) {
            if ctx.codingPath.isEmpty { throw IDVError(.malformedRequest, "The body must be a JSON object, not null") }
            throw IDVError(.malformedRequest, "Null at \(ctx.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch {
            throw IDVError(.malformedRequest, "The body is not valid JSON")
        }
    }

    /// Runs `body`, turning thrown errors into refusals (internal errors are logged by id only).
    static func envelope(_ req: HTTPRequest, status: Int = 200, _ body: () throws -> EngineOutput) -> HTTPResponse {
        do {
            let out = try body()
            var r = HTTPResponse.json(WireEnvelope(requestID: req.requestID, session: out.session, challenge: out.challenge, event: out.event), status: status)
            r.outcomeErrorCode = out.challenge?.error?.longErrorCode ?? out.event?.error.longErrorCode ?? 0
            return r
        } catch let e as IDVError {
            return .refusal(e, requestID: req.requestID)
        } catch let e as StoreError {
            Log.event("store error", level: "error", ["request_id": .string(req.requestID), "kind": .string(storeKind(e))])
            return .refusal(IDVError(.internalError), requestID: req.requestID)
        } catch {
            Log.event("internal error", level: "error", ["request_id": .string(req.requestID)])
            return .refusal(IDVError(.internalError), requestID: req.requestID)
        }
    }

    static func storeKind(_ e: StoreError) -> String {
        switch e { case .conflict: return "conflict"; case .closed: return "closed"; case .database: return "database" }
    }

    static func routes(_ app: IDVServerApp) -> [Route] {
        let engine = app.engine
        return [
            Route("GET", "/healthz", limit: .bytes(0), operationID: "health", summary: "Liveness and store check", response: "Health",
                  quick: true) { [unowned app] _ in
                do {
                    let v = try app.store.schemaVersion()
                    return .json(["status": "ok", "version": .string(OpenIDV.version), "schema_version": .integer(v)] as JSONValue)
                } catch {
                    return .json(["status": "unavailable", "version": .string(OpenIDV.version)] as JSONValue, status: 503, errorCode: 1030)
                }
            },
            Route("GET", "/metrics", limit: .bytes(0), operationID: "metrics", summary: "Prometheus metrics (text format 0.0.4)",
                  response: "text/plain", quick: true) { [unowned app] _ in
                HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: Data(app.metrics.render(inFlight: app.http.requestsInFlight, queued: app.http.requestsQueued).utf8))
            },
            Route("GET", "/openapi.json", limit: .bytes(0), operationID: "openapi", summary: "This API as an OpenAPI 3 document",
                  response: "OpenAPIDocument", quick: true) { [unowned app] _ in
                HTTPResponse(status: 200, body: OpenAPI.document(routes: app.http.router.routes))
            },
            Route("POST", "/v1/devices", operationID: "registerDevice", summary: "Register an SDK install's Ed25519 public key",
                  request: "WireDeviceRegistration", response: "WireDevice") { req in
                do {
                    let reg = try decode(WireDeviceRegistration.self, req.body)
                    return .json(try engine.registerDevice(reg), status: 201)
                } catch let e as IDVError {
                    return .refusal(e, requestID: req.requestID)
                } catch {
                    return .refusal(IDVError(.internalError), requestID: req.requestID)
                }
            },
            Route("POST", "/v1/sessions", operationID: "startSession",
                  summary: "Start a session (SDK initialize); returns the bearer token once and the first challenge (getUser)",
                  request: "WireSessionStart") { req in
                envelope(req, status: 201) {
                    try engine.startSession(decode(WireSessionStart.self, req.body, emptyAs: WireSessionStart()), requestID: req.requestID)
                }
            },
            Route("GET", "/v1/session", limit: .bytes(0), operationID: "getSession", summary: "The session and its current challenge",
                  bearer: true) { req in
                envelope(req) { try engine.current(token: req.bearerToken) }
            },
            Route("POST", "/v1/session/answer", operationID: "answerChallenge",
                  summary: "Answer the current challenge (JSON answers, kilobytes)", request: "WireAnswer", bearer: true) { req in
                envelope(req) {
                    let token = req.bearerToken
                    _ = try engine.authenticate(token)
                    return try engine.answer(token: token, decode(WireAnswer.self, req.body), viaUpload: false, requestID: req.requestID)
                }
            },
            Route("POST", "/v1/session/upload", limit: .upload, operationID: "answerChallengeWithUpload",
                  summary: "Answer the current challenge when the answer carries base64 images (megabytes)", request: "WireAnswer",
                  bearer: true) { req in
                envelope(req) {
                    let token = req.bearerToken
                    _ = try engine.authenticate(token)
                    return try engine.answer(token: token, decode(WireAnswer.self, req.body), viaUpload: true, requestID: req.requestID)
                }
            },
            Route("POST", "/v1/session/reset", operationID: "resetAuthState", summary: "resetAuthState: end any flow in progress",
                  bearer: true) { req in
                envelope(req) { try engine.reset(token: req.bearerToken, requestID: req.requestID) }
            },
            Route("POST", "/v1/session/logoff", operationID: "logOff", summary: "Log off: revoke the session", bearer: true) { req in
                envelope(req) { try engine.logoff(token: req.bearerToken, requestID: req.requestID) }
            },
            Route("POST", "/v1/flows/{name}", operationID: "startFlow",
                  summary: "Start a post-login flow by registry name on a logged-in session", request: "WireFlowStart", bearer: true) { req in
                envelope(req) {
                    let token = req.bearerToken
                    _ = try engine.authenticate(token)
                    let start = try decode(WireFlowStart.self, req.body, emptyAs: WireFlowStart())
                    return try engine.startFlow(token: token, name: req.pathParameters["name"] ?? "", input: start.payload, requestID: req.requestID)
                }
            },
        ] + WebRoutes.routes(app)   // the hosted page and its links (Web/WebRoutes.swift)
    }
}

/// Runs the server until SIGTERM or SIGINT, then shuts down gracefully. Prints one ready line on
/// stdout: `{"event":"listening","port":N,"address":"…","tls":false}`.
public enum ServerRunner {
    /// `store` is closed when the server stops.
    public static func run(config: ServerConfig, store: Store, registry: FlowRegistry = .standard(), crypto: any EngineCrypto) throws -> Int32 {
        let app = IDVServerApp(config: config, store: store, registry: registry, crypto: crypto)
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        let stopSem = DispatchSemaphore(value: 0)
        let sources = [SIGTERM, SIGINT].map { sig -> DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { stopSem.signal() }
            s.resume()
            return s
        }
        let port: Int
        do { port = try app.start() } catch { store.close(); throw error }
        let ready: JSONValue = ["event": "listening", "port": .integer(port), "address": .string(config.listenAddress),
                                "tls": .bool(config.tlsCertPath != nil), "schema_version": .integer((try? store.schemaVersion()) ?? 0)]
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        FileHandle.standardOutput.write((try enc.encode(ready)) + Data("\n".utf8))
        Log.event("listening", ["port": .integer(port)])
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
        stopSem.wait()
        sweep?.cancel()
        Log.event("shutting down", ["in_flight": .integer(app.http.requestsInFlight)])
        app.stop()
        sources.forEach { $0.cancel() }
        Log.event("stopped")
        return 0
    }
}
