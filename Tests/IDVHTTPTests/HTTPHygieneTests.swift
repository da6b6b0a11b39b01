import Foundation
import IDVCore
import IDVTools
import IDVServerTestSupport
import XCTest

/// HTTP hygiene of a real `idvd serve` on loopback (issue #21 item 9): `Allow` on every 405,
/// `WWW-Authenticate: Bearer` on every 401, `HEAD` on the GET routes, `Cache-Control: no-store` on
/// every answer that carries a token or personal data.
final class HTTPHygieneTests: XCTestCase {
    var server: ServerProcess!
    var http: LoopbackHTTPClient!

    override func setUpWithError() throws {
        server = try ServerProcess()
        try server.start()
        http = LoopbackHTTPClient(port: server.port)
    }

    override func tearDown() { server.stop() }

    func testEvery405NamesTheAllowedMethods() throws {
        for (method, path, allow) in [("DELETE", "/v1/session", "GET, HEAD"), ("POST", "/healthz", "GET, HEAD"),
                                      ("GET", "/v1/sessions", "POST"), ("PUT", "/v1/session/answer", "POST"),
                                      ("GET", "/v1/flows/idv.postlogin.kyc", "POST"), ("POST", "/verify/app.js", "GET, HEAD"),
                                      ("PATCH", "/openapi.json", "GET, HEAD")] {
            let r = try http.request(method, path, body: method == "GET" ? nil : Data("{}".utf8))
            XCTAssertEqual(r.status, 405, "\(method) \(path)")
            XCTAssertEqual(r.headers["allow"], allow, "\(method) \(path)")
            let env = try JSONDecoder().decode(WireEnvelope.self, from: r.body)
            XCTAssertEqual(env.error?.longErrorCode, IDVErrorCode.methodNotAllowed.rawValue)
        }
        XCTAssertNil(try http.request("GET", "/nowhere").headers["allow"], "a 404 names no methods")
    }

    func testEvery401ChallengesWithBearer() throws {
        let none = try http.request("GET", "/v1/session")
        XCTAssertEqual(none.status, 401)
        XCTAssertEqual(none.headers["www-authenticate"], #"Bearer realm="idvd""#)
        for path in ["/v1/session/answer", "/v1/session/reset", "/v1/session/logoff", "/v1/flows/idv.postlogin.kyc"] {
            let r = try http.json("POST", path, Data("{}".utf8), bearer: "not-a-token")
            XCTAssertEqual(r.status, 401, path)
            XCTAssertEqual(r.headers["www-authenticate"], #"Bearer realm="idvd", error="invalid_token""#, path)
        }
        // A logged-off session's token: 401 with the challenge too.
        let api = server.client()
        try api.startSession()
        XCTAssertEqual(try api.call("POST", "/v1/session/logoff", Data("{}".utf8)).status, 200)
        let gone = try http.json("GET", "/v1/session", nil, bearer: api.token)
        XCTAssertEqual(gone.status, 401)
        XCTAssertEqual(gone.headers["www-authenticate"], #"Bearer realm="idvd", error="invalid_token""#)
        XCTAssertNil(try http.request("GET", "/healthz").headers["www-authenticate"])
    }

    func testHeadAnswersEveryGetRouteWithoutABody() throws {
        for path in ["/healthz", "/openapi.json", "/metrics", "/verify", "/verify/app.js"] {
            let get = try http.request("GET", path)
            let head = try http.request("HEAD", path)
            XCTAssertEqual(head.status, get.status, path)
            XCTAssertEqual(head.status, 200, path)
            XCTAssertEqual(head.headers["content-type"], get.headers["content-type"], path)
            XCTAssertTrue(head.body.isEmpty, path)
        }
        // The connection is still in step after a HEAD (no stray body bytes).
        XCTAssertEqual(try http.request("GET", "/healthz").status, 200)
        let unauth = try http.request("HEAD", "/v1/session")
        XCTAssertEqual(unauth.status, 401)
    }

    /// Every answer of every route that can carry a token or personal data says `no-store`.
    func testNoStoreOnEveryAnswerCarryingATokenOrPersonalData() throws {
        let code = try server.createUser("nora")
        let api = server.client()
        var answers: [(String, LoopbackHTTPClient.Response)] = []
        let start = try http.json("POST", "/v1/sessions", Data("{}".utf8))
        answers.append(("POST /v1/sessions", start))
        let env = try JSONDecoder().decode(WireEnvelope.self, from: start.body)
        api.token = env.session?.token
        api.last = env
        answers.append(("GET /v1/session", try http.json("GET", "/v1/session", nil, bearer: api.token)))
        _ = try api.answer(["user_id": "nora"])
        _ = try api.answer(["activation_code": .string(code)])
        let ch = try XCTUnwrap(api.last?.challenge)
        let login = try http.json("POST", "/v1/session/answer", try api.encode(WireAnswer(to: ch, payload: ["password": "Nora's pass 2026"])),
                                  bearer: api.token)
        answers.append(("POST /v1/session/answer (login, rotated token)", login))
        let rotated = try XCTUnwrap(JSONDecoder().decode(WireEnvelope.self, from: login.body).session?.token)
        answers.append(("POST /v1/flows/{name}", try http.json("POST", "/v1/flows/\(FlowName.documentScan)", Data("{}".utf8), bearer: rotated)))
        answers.append(("POST /v1/session/upload", try http.json("POST", "/v1/session/upload", Data("{}".utf8), bearer: rotated)))
        answers.append(("POST /v1/session/reset", try http.json("POST", "/v1/session/reset", Data("{}".utf8), bearer: rotated)))
        answers.append(("POST /v1/links/redeem", try http.json("POST", "/v1/links/redeem", Data(#"{"link":"x"}"#.utf8))))
        answers.append(("POST /v1/devices", try http.json("POST", "/v1/devices", Data(#"{"public_key":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}"#.utf8))))
        answers.append(("GET /verify", try http.request("GET", "/verify")))
        answers.append(("POST /v1/session/logoff", try http.json("POST", "/v1/session/logoff", Data("{}".utf8), bearer: rotated)))
        for (what, r) in answers {
            XCTAssertEqual(r.headers["cache-control"], "no-store", "\(what) (\(r.status))")
        }
    }
}
