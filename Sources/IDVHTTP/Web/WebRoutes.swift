import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVWeb

/// The hosted verification page and its link redemption, as routes of ``IDVServerApp``:
///
/// - `GET /verify` (and `/verify/`): the page, `Cache-Control: no-store`;
/// - `GET /verify/{asset}`: its scripts, styles and images, `no-cache`;
/// - `POST /v1/links/redeem`: a verification link → a session for its user (IDVOperations `LinkRedemption`).
///
/// Every asset goes out with ``WebAssets/headers(for:)`` (Content-Security-Policy without inline
/// script, `nosniff`, no referrer, camera for this origin only). With `web.enabled = false` the
/// page routes answer 404; when the assets cannot be found they answer 503 and the reason is logged
/// once at start.
enum WebRoutes {
    /// Loads the assets for `config` (nil when the page is switched off or cannot be loaded; logged).
    static func loadAssets(_ config: ServerConfig) -> WebAssets? {
        guard config.web.enabled else { return nil }
        do {
            return try WebAssets.load(directory: config.web.assetsDirectory.isEmpty ? nil : config.web.assetsDirectory)
        } catch {
            Log.event("web page unavailable", level: "error", ["reason": .string("\(error)")])
            return nil
        }
    }

    static func assetResponse(_ assets: WebAssets?, enabled: Bool, name: String, requestID: String) -> HTTPResponse {
        guard enabled else { return .refusal(IDVError(.notFound, "The web page is switched off on this server (web.enabled)"), requestID: requestID) }
        guard let assets else {
            return HTTPResponse(status: 503, contentType: "text/plain; charset=utf-8",
                                body: Data("The verification page is not installed on this server.\n".utf8), errorCode: IDVErrorCode.internalError.rawValue)
        }
        guard WebAssets.isServableName(name), let a = assets.asset(named: name) else {
            return .refusal(IDVError(.notFound, "No such page asset"), requestID: requestID)
        }
        return HTTPResponse(status: 200, contentType: a.contentType, body: a.bytes, headers: WebAssets.headers(for: a))
    }

    static func routes(_ app: IDVServerApp) -> [Route] {
        let assets = loadAssets(app.config)
        let enabled = app.config.web.enabled
        let engine = app.engine
        return [
            Route("GET", IDVWeb.pathPrefix, limit: .bytes(0), operationID: "verifyPage",
                  summary: "The hosted verification page (HTML; also at /verify/)", response: "text/html", quick: true) { req in
                assetResponse(assets, enabled: enabled, name: IDVWeb.indexName, requestID: req.requestID)
            },
            Route("GET", IDVWeb.pathPrefix + "/{asset}", limit: .bytes(0), operationID: "verifyPageAsset",
                  summary: "A script, style sheet or image of the verification page", response: "*/*", quick: true) { req in
                assetResponse(assets, enabled: enabled, name: req.pathParameters["asset"] ?? "", requestID: req.requestID)
            },
            Route("POST", WireLinks.redeemPath, operationID: "redeemLink",
                  summary: "Redeem a verification link: starts a session for the link's user (token only here) and answers getUser; 1040 when unknown, expired or used",
                  request: "WireLinkRedeem", response: "WireLinkRedemption", body: WireLinkRedeem.self) { req, body in
                .json(try LinkRedemption(engine: engine).redeem(body.link, requestID: req.requestID), status: 201)
            },
        ]
    }
}
