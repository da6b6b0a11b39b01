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

/// The MFA path end to end over HTTP against a real `idvd` process and SQLite file.
final class MFAFlowTests: XCTestCase {
    let password = "correct horse 42"

    /// Activates `user` on a fresh session of `api` (no device) and returns the login event.
    func activate(_ api: API, user: String, code: String) throws -> WireEvent {
        let s = try api.startSession()
        XCTAssertEqual(s.status, 201)
        XCTAssertEqual(s.challenge?.name, "getUser")
        XCTAssertEqual(try api.answer(["user_id": .string(user)]).challenge?.name, "getActivationCode")
        let setPw = try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(setPw.challenge?.name, "getPassword")
        XCTAssertEqual(setPw.challenge?.challengeMode, ChallengeOpMode.set.rawValue)
        let done = try api.answer(["password": .string(password)])
        return try XCTUnwrap(done.event)
    }

    func testActivationLogoffLoginWrongPasswordLocks() throws {
        let server = try ServerProcess()
        try server.start()
        let code = try server.createUser("alice")
        XCTAssertTrue(code.range(of: #"^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$"#, options: .regularExpression) != nil, code)

        // Activation: getUser → getActivationCode (one wrong code first) → getPassword(SET) → onUserLoggedIn.
        let api = server.client()
        let start = try api.startSession()
        XCTAssertEqual(start.challenge?.name, "getUser")
        XCTAssertEqual(start.challenge?.challenge_id_isHex, true)
        XCTAssertNotNil(start.envelope?.session?.token)
        XCTAssertEqual(start.envelope?.session?.loggedIn, false)
        let ac = try api.answer(["user_id": "alice"])
        XCTAssertEqual(ac.challenge?.name, "getActivationCode")
        XCTAssertEqual(ac.challenge?.attemptsLeft, 5)
        XCTAssertEqual(ac.challenge?.userID, "alice")
        let wrongCode = try api.answer(["activation_code": "AAAAA-AAAAA"])
        XCTAssertEqual(wrongCode.status, 200)
        XCTAssertEqual(wrongCode.challenge?.name, "getActivationCode")
        XCTAssertEqual(wrongCode.challenge?.attemptsLeft, 4)
        XCTAssertEqual(wrongCode.challenge?.error?.longErrorCode, 1012)
        XCTAssertNotEqual(wrongCode.challenge?.challengeID, ac.challenge?.challengeID)
        // Lower case and without the hyphen is the same code.
        let setPw = try api.answer(["activation_code": .string(code.lowercased().replacingOccurrences(of: "-", with: ""))])
        XCTAssertEqual(setPw.challenge?.name, "getPassword")
        XCTAssertEqual(setPw.challenge?.challengeMode, 1)
        // Policy: too short → asked again with 1015, still mode 1.
        let weak = try api.answer(["password": "abc1"])
        XCTAssertEqual(weak.challenge?.name, "getPassword")
        XCTAssertEqual(weak.challenge?.challengeMode, 1)
        XCTAssertEqual(weak.challenge?.error?.longErrorCode, 1015)
        let loggedIn = try api.answer(["password": .string(password)])
        XCTAssertEqual(loggedIn.event?.name, "onUserLoggedIn")
        XCTAssertEqual(loggedIn.event?.userID, "alice")
        XCTAssertEqual(loggedIn.event?.error.longErrorCode, 0)
        XCTAssertEqual(loggedIn.event?.status.statusCode, 100)
        XCTAssertNil(loggedIn.challenge)
        XCTAssertEqual(loggedIn.envelope?.session?.loggedIn, true)
        // The token is rotated at login (sent once, in this answer); the pre-login token stops working.
        let preLogin = try XCTUnwrap(start.envelope?.session?.token)
        let rotated = try XCTUnwrap(loggedIn.envelope?.session?.token, "the login answer carries the new token")
        XCTAssertNotEqual(rotated, preLogin)
        XCTAssertEqual(api.token, rotated)
        XCTAssertEqual(try api.call("GET", "/v1/session", token: preLogin).status, 401)
        XCTAssertNil(try api.current().envelope?.session?.token, "the token is sent only at start and at login")
        XCTAssertEqual(try api.current().envelope?.session?.loggedIn, true)

        // The activation code is one-time: a second activation attempt is refused at getUser.
        let users = try server.admin(["list-users"])
        XCTAssertEqual(users.arrayValue?.first?["state"], "active")

        // Log off: the token stops working.
        let off = try api.call("POST", "/v1/session/logoff")
        XCTAssertEqual(off.status, 200)
        XCTAssertEqual(off.event?.name, "onUserLoggedOff")
        let after = try api.current()
        XCTAssertEqual(after.status, 401)
        XCTAssertEqual(after.error?.longErrorCode, 1004)

        // Log in again with the password: getUser → getPassword(VERIFY, 3 attempts); one wrong first.
        let again = server.client()
        try again.startSession()
        let verify = try again.answer(["user_id": "alice"])
        XCTAssertEqual(verify.challenge?.name, "getPassword")
        XCTAssertEqual(verify.challenge?.challengeMode, 0)
        XCTAssertEqual(verify.challenge?.attemptsLeft, 3)
        let wrong = try again.answer(["password": "wrong password 1"])
        XCTAssertEqual(wrong.challenge?.name, "getPassword")
        XCTAssertEqual(wrong.challenge?.attemptsLeft, 2)
        XCTAssertEqual(wrong.challenge?.error?.longErrorCode, 1014)
        XCTAssertEqual(wrong.challenge?.status?.statusCode, 400)
        let ok = try again.answer(["password": .string(password)])
        XCTAssertEqual(ok.event?.name, "onUserLoggedIn")

        // Success reset the counter: a new login starts at 3, and three wrong passwords from one
        // client make that client back off for the user (1011; docs/LIMITS.md) — the user stays active.
        let locker = server.client()
        try locker.startSession()
        XCTAssertEqual(try locker.answer(["user_id": "alice"]).challenge?.attemptsLeft, 3)
        XCTAssertEqual(try locker.answer(["password": "nope nope 1"]).challenge?.attemptsLeft, 2)
        XCTAssertEqual(try locker.answer(["password": "nope nope 2"]).challenge?.attemptsLeft, 1)
        let locked = try locker.answer(["password": "nope nope 3"])
        XCTAssertEqual(locked.challenge?.name, "getUser")
        XCTAssertEqual(locked.challenge?.error?.longErrorCode, 1011)
        // Refused from this client even with the right password now (it is not asked).
        let retry = try locker.answer(["user_id": "alice"])
        XCTAssertEqual(retry.challenge?.name, "getUser")
        XCTAssertEqual(retry.challenge?.error?.longErrorCode, 1011)
        XCTAssertEqual(try server.admin(["list-users"]).arrayValue?.first?["state"], "active")

        // reset-user: back to activation with a new code; the old code no longer works.
        let newCode = try XCTUnwrap(server.admin(["reset-user", "alice"])["activation_code"]?.stringValue)
        XCTAssertNotEqual(newCode, code)
        XCTAssertEqual(try activate(server.client(), user: "alice", code: newCode).name, "onUserLoggedIn")

        // The audit chain holds the story and verifies.
        let audit = try server.admin(["audit", "--limit", "200"])
        XCTAssertEqual(audit["chain_valid"], true)
        let actions = audit["entries"]?.arrayValue?.compactMap { $0["action"]?.stringValue } ?? []
        for a in ["admin.create_user", "activation.code_wrong", "activation.code_accepted", "user.activated", "session.login",
                  "session.logoff", "password.wrong", "password.client_backoff", "admin.reset_user"] {
            XCTAssertTrue(actions.contains(a), "audit lacks \(a): \(actions)")
        }

        // Metrics count the logins; logs carry no secret.
        let metrics = String(decoding: try api.http.request("GET", "/metrics").body, as: UTF8.self)
        XCTAssertTrue(metrics.contains(#"idvd_flow_outcomes_total{flow="auth",outcome="logged_in"} 3"#), metrics)
        XCTAssertTrue(metrics.contains(#"idvd_flow_outcomes_total{flow="auth",outcome="backed_off"} 1"#), metrics)
        XCTAssertTrue(metrics.contains(#"idvd_http_requests_total{route="/v1/session/answer",method="POST",status="200"}"#))
        server.stop()
        let log = server.serverLog()
        XCTAssertTrue(log.contains(#""route":"/v1/session/answer""#))
        for secret in [password, code, newCode, "alice", start.envelope?.session?.token ?? "-"] {
            XCTAssertFalse(log.contains(secret), "server log contains a secret or personal datum")
        }
        // Every log line is one JSON object.
        for line in log.split(separator: "\n") {
            XCTAssertNoThrow(try JSONDecoder().decode([String: JSONValue].self, from: Data(line.utf8)), String(line))
        }
        // Answered requests (HTTP 200, no refusal) log the code their challenge carries: wrong code
        // 1012, wrong password re-asked 1014, lockout 1011 — codes only.
        let requests = log.split(separator: "\n").compactMap { try? JSONDecoder().decode([String: JSONValue].self, from: Data($0.utf8)) }
            .filter { $0["msg"]?.stringValue == "request" }
        let outcomes = Set(requests.filter { $0["status"]?.intValue == 200 && $0["error_code"]?.intValue == 0 }.compactMap { $0["outcome_error_code"]?.intValue })
        for code in [1012, 1014, 1011] { XCTAssertTrue(outcomes.contains(code), "no 200 request line with outcome_error_code \(code): \(outcomes)") }
        XCTAssertTrue(requests.allSatisfy { $0["outcome_error_code"] != nil })
    }

    /// `activation.code_attempts` wrong codes make the CLIENT back off for the user (1111, docs/LIMITS.md);
    /// the code is not killed (AbuseLimitsTests.testWrongActivationCodesBackOffAndTheCodeSurvives).
    func testActivationCodeAttemptsExhausted() throws {
        let server = try ServerProcess(settings: ["activation.code_attempts": "2"])
        try server.start()
        let code = try server.createUser("bob")
        let api = server.client()
        try api.startSession()
        XCTAssertEqual(try api.answer(["user_id": "bob"]).challenge?.attemptsLeft, 2)
        XCTAssertEqual(try api.answer(["activation_code": "00000-00000"]).challenge?.attemptsLeft, 1)
        let dead = try api.answer(["activation_code": "00000-00001"])
        XCTAssertEqual(dead.challenge?.name, "getUser")
        XCTAssertEqual(dead.challenge?.error?.longErrorCode, 1111)
        // This client is refused the code step while it backs off (the right code is not even asked).
        let backingOff = try api.answer(["user_id": "bob"])
        XCTAssertEqual(backingOff.challenge?.name, "getUser")
        XCTAssertEqual(backingOff.challenge?.error?.longErrorCode, 1111)
        _ = code
    }

    func testUnknownUserAndIDVUserWithoutWorkflow() throws {
        let server = try ServerProcess()
        try server.start()
        _ = try server.admin(["create-user", "carol"])   // activation requires IDV (default)
        let api = server.client()
        try api.startSession()
        let unknown = try api.answer(["user_id": "nobody"])
        XCTAssertEqual(unknown.challenge?.name, "getUser")
        XCTAssertEqual(unknown.challenge?.error?.longErrorCode, 1016)
        // idvd serve registers the IDV workflow engine's activation flow (workflows 0–5); the
        // 1033 path (no IDV flow for the user's workflow) is covered by FlowEngineTests' registry.
        let idv = try api.answer(["user_id": "carol"])
        XCTAssertEqual(idv.challenge?.name, "getActivationCode")
    }

    func testLDAConsentAndDeviceSignatureLogin() throws {
        let server = try ServerProcess()
        try server.start()
        let code = try server.createUser("dave")
        let keys = Crypto.ed25519KeyPair()
        let api = server.client()
        let deviceID = try api.registerDevice(publicKey: keys.publicKey)
        XCTAssertEqual(deviceID.count, 32)
        try api.startSession(deviceID: deviceID)
        try api.answer(["user_id": "dave"])
        try api.answer(["activation_code": .string(code)])
        let consent = try api.answer(["password": .string(password)])
        let ch = try XCTUnwrap(consent.challenge)
        XCTAssertEqual(ch.name, "getUserConsentForLDA")
        let nonce = try XCTUnwrap(ch.payload["nonce"]?.stringValue)
        let sig = Crypto.signEd25519(message: Array(WireLDA.message(challengeID: ch.challengeID, nonce: nonce)), secretKey: keys.secretKey)
        let done = try api.answer(["consent": true, "signature": .string(Data(sig).base64EncodedString())])
        XCTAssertEqual(done.event?.name, "onUserLoggedIn")
        XCTAssertEqual(done.event?.payload["device_id"]?.stringValue, deviceID)

        // Returning on the same device: LDA challenge. A signature over another challenge fails → password.
        let back = server.client()
        try back.startSession(deviceID: deviceID)
        let lda = try back.answer(["user_id": "dave"])
        XCTAssertEqual(lda.challenge?.name, "getDeviceSignature")
        let bad = try back.answer(["signature": .string(Data(sig).base64EncodedString())])
        XCTAssertEqual(bad.challenge?.name, "getPassword")
        XCTAssertEqual(bad.challenge?.error?.longErrorCode, 1023)
        XCTAssertEqual(try back.answer(["password": .string(password)]).event?.name, "onUserLoggedIn")

        let third = server.client()
        try third.startSession(deviceID: deviceID)
        let l = try XCTUnwrap(third.answer(["user_id": "dave"]).challenge)
        let s = Crypto.signEd25519(message: Array(WireLDA.message(challengeID: l.challengeID, nonce: l.payload["nonce"]?.stringValue ?? "")),
                                   secretKey: keys.secretKey)
        XCTAssertEqual(try third.answer(["signature": .string(Data(s).base64EncodedString())]).event?.name, "onUserLoggedIn")

        // A different device key cannot use dave's device id path: a new device goes to the password.
        let other = server.client()
        let otherID = try other.registerDevice(publicKey: Crypto.ed25519KeyPair().publicKey)
        try other.startSession(deviceID: otherID)
        XCTAssertEqual(try other.answer(["user_id": "dave"]).challenge?.name, "getPassword")
    }

    /// Invalid device signatures back the client off for that user (429 1111 on the next
    /// signature, the password fallback still open) and spend its failure budget; a valid one
    /// from another client is unaffected (#21: every failed authentication is limited).
    func testInvalidDeviceSignaturesBackTheClientOff() throws {
        let server = try ServerProcess(settings: ["limits.auth_failures_per_client": "100"])
        try server.start()
        let code = try server.createUser("erin")
        let keys = Crypto.ed25519KeyPair()
        let api = server.client()
        let deviceID = try api.registerDevice(publicKey: keys.publicKey)
        try api.startSession(deviceID: deviceID)
        try api.answer(["user_id": "erin"])
        try api.answer(["activation_code": .string(code)])
        let consent = try XCTUnwrap(try api.answer(["password": .string(password)]).challenge)
        let sig = Crypto.signEd25519(message: Array(WireLDA.message(challengeID: consent.challengeID, nonce: consent.payload["nonce"]?.stringValue ?? "")),
                                     secretKey: keys.secretKey)
        XCTAssertEqual(try api.answer(["consent": true, "signature": .string(Data(sig).base64EncodedString())]).event?.name, "onUserLoggedIn")

        let forged = Data(repeating: 1, count: 64).base64EncodedString()
        let thief = server.client()
        for attempt in 1...3 {
            try thief.startSession(deviceID: deviceID)
            XCTAssertEqual(try thief.answer(["user_id": "erin"]).challenge?.name, "getDeviceSignature", "attempt \(attempt)")
            let bad = try thief.answer(["signature": .string(forged)])
            XCTAssertEqual(bad.challenge?.name, "getPassword", "attempt \(attempt)")
            XCTAssertEqual(bad.challenge?.error?.longErrorCode, 1023, "attempt \(attempt)")
        }
        // Backed off: the fourth signature is refused before it is verified; the fallback stays open.
        try thief.startSession(deviceID: deviceID)
        XCTAssertEqual(try thief.answer(["user_id": "erin"]).challenge?.name, "getDeviceSignature")
        let refused = try thief.answer(["signature": .string(forged)])
        XCTAssertEqual(refused.status, 429, String(decoding: refused.raw, as: UTF8.self))
        XCTAssertEqual(refused.error?.longErrorCode, 1111)
        XCTAssertNotNil(refused.headers["retry-after"])
        let m = try AbuseAnalysisTests.metrics(server.port)
        XCTAssertEqual(m["idvd_limit_refusals_total{limit=\"auth_backoff\"}"], 1)
        XCTAssertEqual(try thief.answer(["fallback": "password"]).challenge?.name, "getPassword")
        // The user is not locked by them: the right password logs in.
        XCTAssertEqual(try thief.answer(["password": .string(password)]).event?.name, "onUserLoggedIn")
    }

    func testResetAuthStateReturnsToGetUser() throws {
        let server = try ServerProcess()
        try server.start()
        let code = try server.createUser("erin")
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": "erin"])
        let before = try XCTUnwrap(api.last?.challenge)
        XCTAssertEqual(before.name, "getActivationCode")
        let reset = try api.call("POST", "/v1/session/reset")
        XCTAssertEqual(reset.status, 200)
        XCTAssertEqual(reset.challenge?.name, "getUser")
        XCTAssertNil(reset.envelope?.session?.userID)
        // The abandoned challenge is now a wrong challenge.
        let stale = try api.answer(["activation_code": .string(code)], to: before)
        XCTAssertEqual(stale.error?.longErrorCode, 1002)
        api.last = reset.envelope
        XCTAssertEqual(try api.answer(["user_id": "erin"]).challenge?.name, "getActivationCode")
        // Logged-in reset keeps the login and reports the event.
        try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(try api.answer(["password": .string(password)]).event?.name, "onUserLoggedIn")
        let r2 = try api.call("POST", "/v1/session/reset")
        XCTAssertEqual(r2.event?.name, "onAuthStateReset")
        XCTAssertEqual(r2.envelope?.session?.loggedIn, true)
    }
}

extension WireChallenge {
    var challenge_id_isHex: Bool { challengeID.count == 32 && challengeID.allSatisfy(\.isHexDigit) }
}
