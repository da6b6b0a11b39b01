import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
@testable import IDVHTTP
import IDVReaders
@testable import IDVStoreSQLite
import IDVTools
import IDVServerTestSupport
import XCTest

final class OpenAPITests: XCTestCase {
    /// The served document equals the committed `openapi.json`, and every documented operation is a
    /// route the server answers (neither 404 nor 405).
    func testOpenAPIDocumentMatchesRoutesAndRepository() throws {
        let server = try ServerProcess()
        try server.start()
        let http = LoopbackHTTPClient(port: server.port)
        let served = try http.request("GET", "/openapi.json")
        XCTAssertEqual(served.status, 200)
        let doc = try JSONDecoder().decode(JSONValue.self, from: served.body)
        XCTAssertEqual(doc["openapi"], "3.0.3")

        let repoFile = IDVDBinary.packageRoot.appendingPathComponent("openapi.json")
        let committed = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: repoFile))
        XCTAssertEqual(committed, doc, "openapi.json in the repository is stale: regenerate with `idvd openapi > openapi.json`")

        let paths = try XCTUnwrap(doc["paths"]?.objectValue)
        var operations = 0
        for (path, item) in paths {
            for (method, _) in item.objectValue ?? [:] {
                operations += 1
                let concrete = path.replacingOccurrences(of: "{name}", with: "probe").replacingOccurrences(of: "{asset}", with: "app.js")
                let r = try http.request(method.uppercased(), concrete, body: method == "post" ? Data("{}".utf8) : nil)
                XCTAssertNotEqual(r.status, 404, "\(method) \(path) documented but not routed")
                XCTAssertNotEqual(r.status, 405, "\(method) \(path) documented but not routed")
            }
        }
        XCTAssertEqual(operations, 29)
        // Every route is documented: the table and the document list the same operations.
        for p in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/v1/devices", "/v1/sessions", "/v1/session", "/v1/session/answer",
                  "/v1/session/upload", "/v1/session/reset", "/v1/session/logoff", "/v1/flows/{name}",
                  "/verify", "/verify/{asset}", "/v1/links/redeem",
                  "/v1/rp/users/{user_id}", "/v1/rp/users/{user_id}/verifications", "/v1/rp/users/{user_id}/document-scans",
                  "/v1/rp/users/{user_id}/consents", "/v1/rp/verifications", "/v1/rp/verifications/{verification_id}",
                  "/v1/rp/verifications/{verification_id}/audit", "/v1/rp/reviews", "/v1/rp/reviews/{case_id}",
                  "/v1/rp/reviews/{case_id}/decision"] {
            XCTAssertNotNil(paths[p], p)
        }
        // Undocumented paths are unknown routes.
        XCTAssertEqual(try http.request("GET", "/v2/session").status, 404)
    }

    /// `POST /v1/flows/{name}` with `{}` starts the flow as an empty body does (it was 1001 while
    /// `payload` was required), and the document says `payload` is optional.
    func testFlowStartWithAnEmptyObjectBodyStartsTheFlow() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("flo")
        for body in [Data("{}".utf8), Data(), Data(#"{"payload":{}}"#.utf8)] {
            let r = try api.call("POST", "/v1/flows/\(FlowName.templateStatus)", body.isEmpty ? nil : body)
            XCTAssertEqual(r.status, 200, String(decoding: r.raw, as: UTF8.self))
            XCTAssertNil(r.error, String(decoding: r.raw, as: UTF8.self))
            XCTAssertEqual(r.event?.status.statusCode, 600, "no template yet")
        }
        let bad = try api.call("POST", "/v1/flows/\(FlowName.templateStatus)", Data("[]".utf8))
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.error?.longErrorCode, 1001)
        let doc = try JSONDecoder().decode(JSONValue.self, from: try LoopbackHTTPClient(port: server.port).request("GET", "/openapi.json").body)
        let schema = try XCTUnwrap(doc["components"]?["schemas"]?["WireFlowStart"])
        XCTAssertNotNil(schema["properties"]?["payload"])
        XCTAssertNil(schema["required"], "payload is optional")
    }

    func testHealthAndMetricsFormat() throws {
        let server = try ServerProcess()
        try server.start()
        let http = LoopbackHTTPClient(port: server.port)
        let h = try http.request("GET", "/healthz")
        XCTAssertEqual(h.status, 200)
        let health = try JSONDecoder().decode(JSONValue.self, from: h.body)
        XCTAssertEqual(health["status"], "ok")
        XCTAssertEqual(health["schema_version"], 12)   // 2: the workflow engine's migration; 3: activation-code binding; 4: verification links; 5: chip trust material; 6: relying-party API; 7: webhook outbox; 8: SQLite audit head; 9: webhook secret rotation; 10: shared credential-limit counters; 11: data protection (audit pseudonyms, erasure receipts, signing keys); 12: selfie frame digests (replay check)
        XCTAssertEqual(h.headers["x-request-id"]?.count, 32)
        _ = try http.request("GET", "/nope")
        let m = try http.request("GET", "/metrics")
        XCTAssertEqual(m.status, 200)
        XCTAssertTrue(m.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") ?? false)
        let text = String(decoding: m.body, as: UTF8.self)
        XCTAssertTrue(text.contains(#"idvd_http_requests_total{route="/healthz",method="GET",status="200"} 1"#), text)
        XCTAssertTrue(text.contains(#"idvd_http_requests_total{route="unmatched",method="GET",status="404"} 1"#), text)
        XCTAssertTrue(text.contains(#"idvd_http_request_duration_seconds_count{route="/healthz"} 1"#), text)
        XCTAssertTrue(text.contains("# TYPE idvd_http_request_duration_seconds histogram"))
        // Every sample line is `name{labels} value` or `name value`.
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            XCTAssertNotNil(line.range(of: #"^[a-z_]+(\{[^}]*\})? [0-9.e+-]+$"#, options: .regularExpression), String(line))
        }
    }

    func testServeHelpListsEverySetting() throws {
        let r = try IDVDBinary.run(["serve", "--help"])
        XCTAssertEqual(r.status, 0)
        let text = String(decoding: r.stdout, as: UTF8.self)
        for s in ServerConfig.settings {
            XCTAssertTrue(text.contains(s.key) && text.contains(s.env), s.key)
        }
        let bad = try IDVDBinary.run(["serve", "--set", "listen.port=abc"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(String(decoding: bad.stderr, as: UTF8.self).contains("listen.port must be an integer"))
    }
}
