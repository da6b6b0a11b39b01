import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVHTTP
import IDVTools
import IDVWeb
import XCTest

/// `idvd serve` serving the page: types, headers, refusals, switches; and the API's own headers.
final class WebServingTests: XCTestCase {
    func testPageAndAssetsAreServedWithTheirTypesAndHeaders() throws {
        let server = try WebServer()
        try server.start()
        let http = server.http()
        let source = try WebAssets(directory: WebPaths.assets)
        for path in ["/verify", "/verify/"] {
            let r = try http.request("GET", path)
            XCTAssertEqual(r.status, 200, path)
            XCTAssertEqual(r.headers["content-type"], "text/html; charset=utf-8", path)
            XCTAssertEqual(r.headers["cache-control"], "no-store", "the page shows personal data: \(path)")
            XCTAssertEqual(r.headers["content-security-policy"], WebAssets.contentSecurityPolicy)
            XCTAssertEqual(r.headers["x-content-type-options"], "nosniff")
            XCTAssertEqual(r.headers["referrer-policy"], "no-referrer")
            XCTAssertEqual(r.headers["x-frame-options"], "DENY")
            XCTAssertEqual(r.headers["cross-origin-opener-policy"], "same-origin")
            XCTAssertEqual(r.headers["x-request-id"]?.count, 32)
            XCTAssertEqual(r.body, source.asset(named: "index.html")?.bytes)
        }
        for name in source.names {
            let r = try http.request("GET", "/verify/\(name)")
            XCTAssertEqual(r.status, 200, name)
            XCTAssertEqual(r.headers["content-type"], source.asset(named: name)?.contentType, name)
            XCTAssertEqual(r.headers["content-security-policy"], WebAssets.contentSecurityPolicy, name)
            XCTAssertEqual(r.headers["cache-control"], name == "index.html" ? "no-store" : "no-cache", name)
            XCTAssertEqual(r.body, source.asset(named: name)?.bytes, name)
        }
        // Unknown names, other folders and traversal attempts are plain 404s (never a file).
        for path in ["/verify/nope.js", "/verify/App.js", "/verify/..%2FPackage.swift", "/verify/%2e%2e/openapi.json", "/verify/a/b.js",
                     "/verify/index.html.bak", "/verify/.hidden.js"] {
            let r = try http.request("GET", path)
            XCTAssertEqual(r.status, 404, path)
            XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: r.body).error?.longErrorCode, 1007, path)
        }
        XCTAssertEqual(try http.request("POST", "/verify/app.js", body: Data("{}".utf8)).status, 405)
        XCTAssertEqual(try http.request("GET", "/verify/app.js", body: Data("x".utf8)).status, 413, "GET routes take no body")
        // API answers carry personal data: never cached, never sniffed.
        let s = try http.request("POST", "/v1/sessions", body: Data("{}".utf8))
        XCTAssertEqual(s.status, 201)
        XCTAssertEqual(s.headers["cache-control"], "no-store")
        XCTAssertEqual(s.headers["x-content-type-options"], "nosniff")
        XCTAssertNil(s.headers["content-security-policy"], "the API is not a document")
        // The metrics keep the route pattern, never the asset name a client chose.
        let m = String(decoding: try http.request("GET", "/metrics").body, as: UTF8.self)
        XCTAssertTrue(m.contains(#"route="/verify/{asset}""#), m)
        XCTAssertFalse(m.contains("nope.js"))
    }

    func testPageCanBeSwitchedOffOrServedFromAnotherFolder() throws {
        let off = try WebServer(settings: ["web.enabled": "false"])
        try off.start()
        XCTAssertEqual(try off.http().request("GET", "/verify/").status, 404)
        XCTAssertEqual(try off.http().request("GET", "/verify/app.js").status, 404)
        XCTAssertEqual(try off.http().request("GET", "/healthz").status, 200)
        off.stop()

        // An operator's own copy (e.g. their logo): served instead of the bundled one.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvweb-assets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for n in try WebAssets(directory: WebPaths.assets).names {
            try FileManager.default.copyItem(at: WebPaths.assets.appendingPathComponent(n), to: dir.appendingPathComponent(n))
        }
        try Data("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8).write(to: dir.appendingPathComponent("icon.svg"))
        let own = try WebServer(settings: ["web.assets_dir": dir.path])
        try own.start()
        XCTAssertEqual(try own.http().request("GET", "/verify/icon.svg").body, Data("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8))
        own.stop()

        // A folder that is not a page: the server still serves the API, answers 503 for the page, and says why at start.
        let broken = try WebServer(settings: ["web.assets_dir": dir.appendingPathComponent("missing").path])
        try broken.start()
        let r = try broken.http().request("GET", "/verify/")
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(try broken.http().request("GET", "/healthz").status, 200)
        XCTAssertTrue(broken.log().contains("web page unavailable"), broken.log())
    }

    func testServeHelpListsTheWebSettings() throws {
        let r = try WebPaths.run(try WebPaths.idvd(), ["serve", "--help"])
        let help = String(decoding: r.stdout, as: UTF8.self)
        for key in ["web.enabled", "web.assets_dir", "web.public_url", "links.ttl_seconds"] { XCTAssertTrue(help.contains(key), key) }
        let bad = try WebPaths.run(try WebPaths.idvd(), ["serve", "--set", "web.public_url=ftp://x"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(String(decoding: bad.stderr, as: UTF8.self).contains("web.public_url must start with https://"))
    }
}
