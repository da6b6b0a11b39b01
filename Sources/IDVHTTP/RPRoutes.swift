import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations

// The relying-party API (`/v1/rp/…`, docs/PROTOCOL.md §"Relying-party API"): server to server, for
// the bank's backend. Authenticated by API client (`Authorization: Bearer <client_id>.<secret>`,
// never a user session), scoped (read / links / review), rate-limited per client.

extension Middleware {
    /// The path prefix of the relying-party API.
    public static let rpPrefix = "/v1/rp/"

    /// `/v1/rp/…` routes: the client of `Authorization: Bearer <client_id>.<secret>` is looked up,
    /// checked and rate-limited (``RPClientAuthenticator``) and handed down as
    /// ``HTTPRequest/rpClient``; its id joins the log metadata and the request line (`client_id`:
    /// every read is one such line — reads are not audited). 1131 (401, with
    /// `WWW-Authenticate: Bearer realm="idvd-rp"`, with `error="invalid_token"` when credentials were
    /// sent, RFC 6750 §3.1), 1133 (429, with `Retry-After`). In the chains of `/v1/rp/` routes only.
    public static func rpAuth(_ authenticator: RPClientAuthenticator) -> Middleware {
        Middleware("rp_auth", group: .routes { $0.pattern.hasPrefix(rpPrefix) }) { req, next in
            var r = req
            do {
                let client = try authenticator.authenticate(req.bearerToken)
                r.rpClient = client
                r.scope.clientID = client.clientID
                r.logger = r.logger.with("client_id", .string(client.clientID))
            } catch let e as IDVError where e.code == .clientUnauthenticated {
                var resp = HTTPResponse.refusal(e, requestID: req.requestID)
                resp.headers["WWW-Authenticate"] = req.bearerToken == nil
                    ? #"Bearer realm="idvd-rp""# : #"Bearer realm="idvd-rp", error="invalid_token""#
                return resp
            } catch let e as ClientRateLimited {
                return .refusal(e.error, requestID: req.requestID, retryAfter: e.retryAfterSeconds)
            }
            return try next(r)
        }
    }
}

extension HTTPRequest {
    /// The authenticated API client when it holds `scope`; 1131 when none, 1132 when it lacks the scope.
    public func rpClient(_ scope: RPScope) throws -> APIClientRecord {
        guard let c = rpClient else { throw IDVError(.clientUnauthenticated) }
        guard c.allows(scope) else { throw IDVError(.scopeForbidden, "This call needs the '\(scope.rawValue)' scope; the client has \(c.scopes.map(\.rawValue).joined(separator: ", "))") }
        return c
    }
}

/// `{"items": […]}` for lists that are not paged.
struct RPItems<Item: Codable & Sendable>: Codable, Sendable { var items: [Item] }

enum RPRoutes {
    static func routes(_ app: IDVServerApp) -> [Route] {
        let api = RelyingPartyAPI(engine: app.engine, config: app.config)
        let engine = app.engine
        return [
            Route("GET", "/v1/rp/users/{user_id}", limit: .bytes(0), operationID: "rpGetUser",
                  summary: "A user's current state: activated, template status, last KYC outcome (scope read)", response: "RPUserView") { req in
                _ = try req.rpClient(.read)
                try RPListQuery.noArguments(req.query)
                return .json(try api.userState(req.pathParameters["user_id"] ?? ""))
            },
            Route("GET", "/v1/rp/users/{user_id}/verifications", limit: .bytes(0), operationID: "rpListVerifications",
                  summary: "The user's verifications, newest first; paged by cursor, filtered by start time (scope read)",
                  response: "RPVerificationPage") { req in
                _ = try req.rpClient(.read)
                return .json(try api.verifications(userID: req.pathParameters["user_id"] ?? "", RPListQuery(query: req.query)))
            },
            Route("GET", "/v1/rp/users/{user_id}/document-scans", limit: .bytes(0), operationID: "rpListDocumentScans",
                  summary: "The user's additional document scans with their stored reports, newest first (scope read)",
                  response: "RPDocumentScanPage") { req in
                _ = try req.rpClient(.read)
                return .json(try api.documentScans(userID: req.pathParameters["user_id"] ?? "", RPListQuery(query: req.query)))
            },
            Route("GET", "/v1/rp/users/{user_id}/consents", limit: .bytes(0), operationID: "rpListConsents",
                  summary: "The user's consent decisions (given, refused, withdrawn), newest first (scope read)",
                  response: "RPConsentPage") { req in
                _ = try req.rpClient(.read)
                return .json(try api.consents(userID: req.pathParameters["user_id"] ?? "", RPListQuery(query: req.query)))
            },
            Route("GET", "/v1/rp/verifications/{verification_id}", limit: .bytes(0), operationID: "rpGetVerification",
                  summary: "One verification: flow, times, outcome, document result and reports, selfie scores (scope read)",
                  response: "RPVerificationView") { req in
                _ = try req.rpClient(.read)
                try RPListQuery.noArguments(req.query)
                return .json(try api.verification(req.pathParameters["verification_id"] ?? ""))
            },
            Route("GET", "/v1/rp/verifications/{verification_id}/audit", limit: .bytes(0), operationID: "rpGetVerificationAudit",
                  summary: "The audit records of one verification with their hash-chain positions (scope read)", response: "RPAuditList") { req in
                _ = try req.rpClient(.read)
                try RPListQuery.noArguments(req.query)
                return .json(RPItems(items: try api.auditRecords(req.pathParameters["verification_id"] ?? "")))
            },
            Route("POST", "/v1/rp/verifications", operationID: "rpCreateVerification",
                  summary: "Start a verification for a user: a single-use hosted-page link with a reason and an expiry (scope links)",
                  request: "RPVerificationRequest", response: "RPVerificationCreated", body: RPVerificationRequest.self) { req, body in
                let client = try req.rpClient(.links)
                return .json(try api.createVerification(body, client: client, now: engine.clock.now()), status: 201)
            },
            Route("GET", "/v1/rp/reviews", limit: .bytes(0), operationID: "rpListReviews",
                  summary: "Review cases, oldest first; state=pending (default), decided or all (scope review)",
                  response: "RPReviewPage") { req in
                _ = try req.rpClient(.review)
                var q = req.query
                let state = q.removeValue(forKey: "state") ?? "pending"
                let pending: Bool?
                switch state {
                case "pending": pending = true
                case "decided": pending = false
                case "all": pending = nil
                default: throw IDVError(.invalidArgument, "state must be pending, decided or all")
                }
                return .json(try api.reviewCases(pending: pending, RPListQuery(query: q)))
            },
            Route("GET", "/v1/rp/reviews/{case_id}", limit: .bytes(0), operationID: "rpGetReview",
                  summary: "One review case: its triggers, the verification's evidence and the images held for it (scope review)",
                  response: "RPReviewCaseView") { req in
                _ = try req.rpClient(.review)
                try RPListQuery.noArguments(req.query)
                return .json(try api.reviewCaseView(req.pathParameters["case_id"] ?? ""))
            },
            Route("POST", "/v1/rp/reviews/{case_id}/decision", operationID: "rpDecideReview",
                  summary: "Decide a review case: approve or reject with a reason; audited, becomes the verification's outcome (scope review)",
                  request: "RPReviewDecisionRequest", response: "RPReviewView", body: RPReviewDecisionRequest.self) { req, body in
                let client = try req.rpClient(.review)
                return .json(try api.decide(req.pathParameters["case_id"] ?? "", body, reviewer: "client:\(client.clientID)", requestID: req.requestID))
            },
        ]
    }
}

extension RPListQuery {
    /// Routes that take no query arguments refuse any (1025), so a typo is not silently ignored.
    static func noArguments(_ query: [String: String]) throws {
        if let k = query.keys.sorted().first { throw IDVError(.invalidArgument, "unknown query argument '\(k.prefix(32))'; this route takes none") }
    }
}
