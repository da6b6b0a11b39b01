import Foundation
import IDVCore

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
