import CSQLite
import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVHTTP
import IDVTools
import XCTest

/// `idvd admin create-link` and `POST /v1/links/redeem` against a real server: single use,
/// expiring, audited, never stored in clear; the page's entry point for a relying party.
final class VerificationLinkTests: XCTestCase {
    func redeem(_ http: LoopbackHTTPClient, _ token: String) throws -> (status: Int, body: JSONValue) {
        let r = try http.request("POST", WireLinks.redeemPath, body: try JSONEncoder().encode(WireLinkRedeem(link: token)))
        return (r.status, try JSONDecoder().decode(JSONValue.self, from: r.body))
    }

    func testCreateLinkDefaultsAndRefusals() throws {
        let server = try WebServer(settings: ["web.public_url": "https://idv.example.com/"])
        _ = try server.adminJSON(["create-user", "pending"])
        let link = try server.adminJSON(["create-link", "pending"])
        XCTAssertEqual(link["flow"], "idv.activation", "a pending user's link activates")
        let token = try XCTUnwrap(link["token"]?.stringValue)
        XCTAssertEqual(token.count, 43)
        XCTAssertEqual(link["path"]?.stringValue, "/verify/#link=\(token)")
        XCTAssertEqual(link["url"]?.stringValue, "https://idv.example.com/verify/#link=\(token)")
        let now = Int(Date().timeIntervalSince1970)
        XCTAssertEqual(Double(link["expires_at"]?.intValue ?? 0), Double(now + 24 * 3600), accuracy: 5, "default lifetime: links.ttl_seconds")
        let short = try server.adminJSON(["create-link", "pending", "--flow", "idv.activation", "--ttl", "90"])
        XCTAssertEqual(short["flow"], "idv.activation")
        XCTAssertEqual(Double(short["expires_at"]?.intValue ?? 0), Double(now + 90), accuracy: 5)

        for (args, message) in [(["create-link", "nobody"], "(1016)"),
                                (["create-link", "pending", "--flow", "idv.bogus"], "(--flow, flow) must be one of"),
                                (["create-link", "pending", "--ttl", "0"], "--ttl must be a positive"),
                                (["create-link", "pending", "--ttl", "99999999"], "(--ttl, expires_in) must be 1…2592000"),
                                (["create-link"], "exactly one user id")] {
            let r = try server.admin(args)
            XCTAssertEqual(r.status, 2, "\(args)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
        }
        // The token is shown once and stored only as its SHA-256.
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open_v2(server.db, &db, SQLITE_OPEN_READONLY, nil), SQLITE_OK)
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(db, "SELECT token_hash, flow, used_at FROM verification_links", -1, &stmt, nil), SQLITE_OK)
        var hashes: [String] = []
        while sqlite3_step(stmt) == SQLITE_ROW { hashes.append(String(cString: sqlite3_column_text(stmt, 0))) }
        sqlite3_finalize(stmt)
        XCTAssertEqual(hashes.count, 2)
        XCTAssertTrue(hashes.contains(Crypto.sha256Hex(token)))
        XCTAssertFalse(hashes.contains(token))
        let audit = try server.auditActions()
        XCTAssertEqual(audit.filter { $0["action"] == "admin.create_link" }.count, 2)
        XCTAssertFalse(String(decoding: try JSONEncoder().encode(audit), as: UTF8.self).contains(token), "the audit never holds a token")
    }

    func testLinkFlowMustSuitTheUsersState() throws {
        let server = try WebServer()
        try server.start()
        let code = try XCTUnwrap(try server.adminJSON(["create-user", "amy", "--no-idv"])["activation_code"]?.stringValue)
        // Pending activation: a KYC link would only ask for the activation code when redeemed.
        let early = try server.admin(["create-link", "amy", "--flow", "idv.postlogin.kyc"])
        XCTAssertEqual(early.status, 2)
        XCTAssertTrue(early.stderr.contains("pending activation"), early.stderr)
        try activate(server, "amy", code: code)
        let r = try server.admin(["create-link", "amy", "--flow", "idv.activation"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("already active"), r.stderr)
        XCTAssertEqual(try server.adminJSON(["create-link", "amy"])["flow"], "idv.postlogin.kyc", "an active user's link runs KYC by default")
    }

    /// An SDK-style activation (code → password) over HTTP.
    func activate(_ server: WebServer, _ user: String, code: String) throws {
        let http = server.http()
        var env = try JSONDecoder().decode(WireEnvelope.self, from: http.request("POST", "/v1/sessions", body: Data("{}".utf8)).body)
        var token = try XCTUnwrap(env.session?.token)
        for payload: JSONValue in [["user_id": .string(user)], ["activation_code": .string(code)], ["password": "Amy passes 2026"]] {
            let ch = try XCTUnwrap(env.challenge)
            let r = try http.json("POST", "/v1/session/answer", try JSONEncoder().encode(WireAnswer(to: ch, payload: payload)), bearer: token)
            env = try JSONDecoder().decode(WireEnvelope.self, from: r.body)
            if let t = env.session?.token { token = t }   // rotated at login
        }
        XCTAssertEqual(env.event?.name, WireName.onUserLoggedIn)
    }

    func testRedeemStartsASessionForTheLinkUserOnceAndIsAudited() throws {
        let server = try WebServer()
        try server.start()
        _ = try server.adminJSON(["create-user", "pat"])
        let link = try server.adminJSON(["create-link", "pat"])
        let token = try XCTUnwrap(link["token"]?.stringValue)
        let http = server.http()

        let first = try redeem(http, token)
        XCTAssertEqual(first.status, 201)
        XCTAssertEqual(first.body["challenge"]?["name"], "getActivationCode", "getUser was answered with the link's user")
        XCTAssertEqual(first.body["challenge"]?["user_id"], "pat")
        XCTAssertEqual(first.body["link"]?["user_id"], "pat")
        XCTAssertEqual(first.body["link"]?["flow"], "idv.activation")
        XCTAssertEqual(first.body["session"]?["logged_in"], false, "a link names the user; it does not log them in")
        let sessionToken = try XCTUnwrap(first.body["session"]?["token"]?.stringValue)
        // The new session is an ordinary one: resumable with its own token.
        let resumed = try http.json("GET", "/v1/session", nil, bearer: sessionToken)
        XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: resumed.body).challenge?.name, "getActivationCode")

        // Single use: every later redemption is refused, changing nothing.
        let again = try redeem(http, token)
        XCTAssertEqual(again.status, 410)
        XCTAssertEqual(again.body["error"]?["long_error_code"], 1040)
        XCTAssertEqual(again.body["error"]?["error_string"], "This verification link was already used")
        XCTAssertNil(again.body["session"] ?? nil)

        let audit = try server.auditActions()
        let redeemed = try XCTUnwrap(audit.first { $0["action"] == "link.redeemed" })
        XCTAssertEqual(redeemed["user_id"], "pat")
        XCTAssertEqual(redeemed["details"]?["link_id"], link["link_id"])
        XCTAssertEqual(redeemed["details"]?["flow"], "idv.activation")
        XCTAssertEqual(redeemed["session_id"], first.body["session"]?["session_id"])
        let refused = try XCTUnwrap(audit.first { $0["action"] == "link.refused" })
        XCTAssertEqual(refused["details"]?["reason"], "used")
        XCTAssertEqual(try server.adminJSON(["audit", "--verify"])["chain_valid"], true)
    }

    func testExpiredUnknownAndMalformedLinksAreRefused() throws {
        let server = try WebServer()
        try server.start()
        _ = try server.adminJSON(["create-user", "eve"])
        let token = try XCTUnwrap(try server.adminJSON(["create-link", "eve", "--ttl", "1"])["token"]?.stringValue)
        Thread.sleep(forTimeInterval: 2.1)
        let http = server.http()
        let expired = try redeem(http, token)
        XCTAssertEqual(expired.status, 410)
        XCTAssertEqual(expired.body["error"]?["long_error_code"], 1040)
        XCTAssertEqual(expired.body["error"]?["error_string"], "This verification link has expired")
        XCTAssertTrue(try server.auditActions().contains { $0["action"] == "link.refused" && $0["details"]?["reason"] == "expired" })

        let unknown = try redeem(http, String(repeating: "A", count: 43))
        XCTAssertEqual(unknown.status, 410)
        XCTAssertEqual(unknown.body["error"]?["error_string"], "This verification link is not valid")
        for bad in ["", "short", String(repeating: "x", count: 200), "has space in it xxxxxxxxxxxxxxxxxxxxxx", "ünïcödé-ünïcödé-ünïcödé"] {
            XCTAssertEqual(try redeem(http, bad).body["error"]?["long_error_code"], 1040, bad)
        }
        for body in ["", "[]", "{}", "{\"link\": 5}", "not json"] {
            let r = try http.request("POST", WireLinks.redeemPath, body: Data(body.utf8))
            XCTAssertEqual(r.status, 400, body)
            XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: r.body).error?.longErrorCode, 1001, body)
        }
        XCTAssertEqual(try http.request("GET", WireLinks.redeemPath).status, 405)
    }

    /// Concurrent redemptions of one link: exactly one session.
    func testConcurrentRedemptionsExactlyOneWins() throws {
        let server = try WebServer()
        try server.start()
        _ = try server.adminJSON(["create-user", "ray"])
        let token = try XCTUnwrap(try server.adminJSON(["create-link", "ray"])["token"]?.stringValue)
        let port = server.port
        let statuses = Statuses()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let http = LoopbackHTTPClient(port: port)
            let body = Data("{\"link\":\"\(token)\"}".utf8)
            statuses.add((try? http.request("POST", WireLinks.redeemPath, body: body).status) ?? -1)
        }
        XCTAssertEqual(statuses.all.filter { $0 == 201 }.count, 1, "\(statuses.all)")
        XCTAssertEqual(statuses.all.filter { $0 == 410 }.count, 7, "\(statuses.all)")
        XCTAssertEqual(try server.auditActions().filter { $0["action"] == "link.redeemed" }.count, 1)
    }

    /// An active user's link leads to the password (the page then runs the link's flow).
    func testLinkForActiveUserAsksThePassword() throws {
        let server = try WebServer()
        try server.start()
        let code = try XCTUnwrap(try server.adminJSON(["create-user", "amy", "--no-idv"])["activation_code"]?.stringValue)
        try activate(server, "amy", code: code)
        let token = try XCTUnwrap(try server.adminJSON(["create-link", "amy", "--flow", "idv.postlogin.server_biometric"])["token"]?.stringValue)
        let r = try redeem(server.http(), token)
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(r.body["challenge"]?["name"], "getPassword")
        XCTAssertEqual(r.body["challenge"]?["challenge_mode"], 0)
        XCTAssertEqual(r.body["link"]?["flow"], "idv.postlogin.server_biometric")
    }
}

final class Statuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int] = []
    func add(_ v: Int) { lock.lock(); values.append(v); lock.unlock() }
    var all: [Int] { lock.lock(); defer { lock.unlock() }; return values }
}
