import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVStoreSQLite
import IDVTestSupport
import IDVServerTestSupport
import XCTest

/// Issue #21 items 2–6 as an attacker tries them, against a real `idvd` on loopback (ServerProcess)
/// or the in-process server over real HTTP where the IDV flows' test doubles are needed
/// (WorkflowServer, whose ManualClock replaces sleeping). Limits are set low through the config;
/// each test failed on main 3b633f3 (the reason is in its comment).
final class AbuseLimitsTests: XCTestCase {
    static let password = "right horse 42"

    /// Creates `user` (no IDV) on a real server and activates it with ``password``.
    func activate(_ server: ServerProcess, _ user: String) throws {
        let code = try server.createUser(user)
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(try api.answer(["password": .string(Self.password)]).event?.name, "onUserLoggedIn")
    }

    func metrics(_ server: ServerProcess) throws -> String {
        String(decoding: try server.client().http.request("GET", "/metrics").body, as: UTF8.self)
    }

    // MARK: Item 2 — anonymous sessions

    /// main: ~3,000 sessions/s from one client, no limit — the 6th session was 201.
    func testSessionCreationIsLimitedPerClientAddressAndPerDevice() throws {
        let server = try ServerProcess(settings: ["limits.sessions_per_client": "5", "limits.sessions_per_device": "2"])
        try server.start()
        for _ in 0..<5 { XCTAssertEqual(try server.client().startSession().status, 201) }
        let refused = try server.client().startSession()
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(refused.error?.longErrorCode, 1110)
        let retry = try XCTUnwrap(Int(refused.headers["retry-after"] ?? ""), "429 without Retry-After: \(refused.headers)")
        XCTAssertTrue((1...60).contains(retry), "\(retry)")
        XCTAssertNil(refused.envelope?.session, "no session, no token")
        let m = try metrics(server)
        XCTAssertTrue(m.contains(#"idvd_limit_refusals_total{limit="session_client"} 1"#), m)
        XCTAssertTrue(m.contains(#"idvd_limit_setting{name="limits.sessions_per_client"} 5"#), m)
        XCTAssertTrue(m.contains(#"idvd_http_requests_total{route="/v1/sessions",method="POST",status="429"} 1"#), m)

        // Per device: a registered device's sessions are limited on their own.
        let other = try ServerProcess(settings: ["limits.sessions_per_client": "100", "limits.sessions_per_device": "2",
                                                 "limits.devices_per_client": "1"])
        try other.start()
        let api = other.client()
        let device = try api.registerDevice(publicKey: Array(repeating: 7, count: 32))
        // Device registrations (a permanent row each) are limited per address too.
        let second = try api.call("POST", "/v1/devices", api.encode(WireDeviceRegistration(publicKey: Data(repeating: 8, count: 32).base64EncodedString())))
        XCTAssertEqual(second.status, 429)
        XCTAssertEqual(second.error?.longErrorCode, 1110)
        XCTAssertEqual(try other.client().startSession(deviceID: device).status, 201)
        XCTAssertEqual(try other.client().startSession(deviceID: device).status, 201)
        let d = try other.client().startSession(deviceID: device)
        XCTAssertEqual(d.status, 429)
        XCTAssertEqual(d.error?.longErrorCode, 1110)
        XCTAssertNotNil(d.headers["retry-after"])
        XCTAssertEqual(try other.client().startSession().status, 201, "a session without that device is still admitted")
    }

    /// main: each expired anonymous session left a `session.expired` audit record and a closed flow
    /// run forever (~450 bytes each).
    func testSessionsThatNeverIdentifiedAUserExpireWithoutPermanentRows() throws {
        // Idle 3 s (times are whole seconds, so a session may expire after 2 s and a bit): every gap
        // between this test's requests stays well inside it on a loaded machine; 3.5 s later all expired.
        let server = try ServerProcess(settings: ["session.idle_seconds": "3", "session.sweep_seconds": "0",
                                                  "limits.unbound_device_ttl_seconds": "1"])
        try server.start()
        try activate(server, "una")
        // Device registrations that never lead to a login are swept too.
        let registrar = server.client()
        for k in 0..<3 { _ = try registrar.registerDevice(publicKey: Array(repeating: UInt8(20 + k), count: 32)) }
        let anonymous = 12
        for i in 0..<anonymous {
            let api = server.client()
            try api.startSession()
            if i % 3 == 0 { try api.answer(["user_id": .string("nobody-\(i)")]) }   // 1016: still no user
            if i % 4 == 1 { XCTAssertEqual(try api.call("POST", "/v1/session/reset").status, 200) }
        }
        let named = server.client()
        try named.startSession()
        try named.answer(["user_id": "una"])   // identified: its rows are kept, as before
        let auditBefore = try XCTUnwrap(server.admin(["audit", "--verify"])["entries_checked"]?.intValue)
        Thread.sleep(forTimeInterval: 3.5)
        let report = try server.admin(["purge-expired"])
        XCTAssertEqual(report["anonymous_sessions"]?.intValue, anonymous, "\(report)")
        XCTAssertEqual(report["sessions"]?.intValue, anonymous + 2, "the activation session and the identified one too: \(report)")
        XCTAssertEqual(report["unbound_devices"]?.intValue, 3, "\(report)")
        let audit = try server.admin(["audit", "--limit", "1000"])
        XCTAssertEqual(audit["chain_valid"], true)
        let entries = audit["entries"]?.arrayValue ?? []
        let after = entries.filter { ($0["seq"]?.intValue ?? 0) > auditBefore }
        XCTAssertEqual(after.filter { $0["action"] == "session.anonymous_expired" }.map { $0["details"]?["count"] }, [.integer(anonymous)])
        XCTAssertEqual(after.filter { $0["action"] == "session.expired" }.count, 2, "\(after.map { $0["action"] ?? .null })")
        XCTAssertFalse(entries.contains { $0["action"] == "session.reset" }, "an anonymous reset leaves no audit row")
        server.stop()
        let store = try SQLiteStore(path: server.dbPath, keyFile: server.dbPath + ".key")
        defer { store.close() }
        XCTAssertEqual(try store.query("SELECT count(*) FROM sessions").first?[0].int, 0)
        XCTAssertEqual(try store.query("SELECT count(*) FROM devices").first?[0].int, 0)
        XCTAssertEqual(try store.query("SELECT count(*) FROM flow_runs").first?[0].int, 2, "only the two sessions that named a user keep runs")
    }

    // MARK: Item 3 — no score oracle, runs per activation code

    /// main: the server-biometric result carried `face_matcher_response.score`,
    /// `liveness_result.score` and the PAD cues (`NO_BLINK`, `RIGID_MOTION`) even on LIVENESS_FAILED.
    func testTheDeviceGetsTheVerdictNotTheScores() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("vic")
        XCTAssertEqual(try api.optIn(frame: try TestImages.obamaSelfie()).status.statusCode, 100)
        func authenticate(_ frame: Data) throws -> WireEvent {
            try api.startFlow("idv.postlogin.server_biometric", ["reason": "Server Biometric Authentication"])
            return try XCTUnwrap(try api.captureSelfie(frame).event)
        }
        for (frame, verdict) in [(try TestImages.printAttack(), "LIVENESS_FAILED"), (try TestImages.wrongPersonSelfie(), "NOT_MATCHED"),
                                 (try TestImages.obamaSelfie2(), "MATCHED")] {
            let e = try authenticate(frame)
            XCTAssertEqual(e.payload["biometric_result"]?["display_text"]?.stringValue, verdict)
            let text = String(decoding: try JSONEncoder().encode(e.payload), as: UTF8.self)
            for leak in ["score", "face_matcher_response", "analyze_liveness_response", "NO_BLINK", "RIGID_MOTION", "reasons"] {
                XCTAssertFalse(text.contains(leak), "\(verdict): the device got \(leak): \(text)")
            }
        }
        // The scores stay in the audit.
        let verified = try server.audit().filter { $0.action == "idv.selfie_verified" && $0.details["flow"] == "idv.postlogin.server_biometric" }
        XCTAssertEqual(verified.count, 3)
        XCTAssertTrue(verified.allSatisfy { $0.details["liveness_score"]?.intValue != nil }, "\(verified)")

        // Seed 002's selfie confirmation (KYC): scores only on MATCHED, rounded; none on LIVENESS_FAILED.
        try api.startFlow("idv.postlogin.kyc")
        try api.scanDocument(try TestImages.obamaPassportPage())
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        let failed = try XCTUnwrap(try api.captureSelfie(try TestImages.printAttack()).challenge)
        let f = try failed.payload.decode(SelfieDetails.self).responseData
        XCTAssertEqual(f.biometricResult.displayText, .livenessFailed)
        XCTAssertNil(f.faceMatcherResponse)
        XCTAssertNil(f.analyzeLivenessResponse)
        XCTAssertNil(failed.payload["response_data"]?["liveness_reasons"], "passive PAD cues are not retry hints")
        XCTAssertEqual(try api.answer(["action": "reinit-idv-selfie"]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        let ok = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).challenge).payload.decode(SelfieDetails.self).responseData
        XCTAssertEqual(ok.biometricResult.displayText, .matched)
        let face = try XCTUnwrap(ok.faceMatcherResponse?.score)
        XCTAssertEqual(face * 100, (face * 100).rounded(), accuracy: 1e-9, "rounded to 0.01")
        XCTAssertEqual(try XCTUnwrap(ok.analyzeLivenessResponse?.video.livenessResult.score) % 5, 0, "rounded to a multiple of 5")
    }

    /// main: after a run ended with 1010 the same code started new runs without end, `attempts_left` unchanged.
    func testAnActivationCodeCannotStartUnlimitedIDVRuns() throws {
        let server = try WorkflowServer(["activation.idv_runs": "2", "idv.document_attempts": "1"])
        let code = try server.createUser("wes", idv: true)
        var lefts: [Int] = []
        for _ in 0..<2 {
            let api = server.client()
            try api.startSession()
            lefts.append(try XCTUnwrap(try api.answer(["user_id": "wes"]).challenge?.attemptsLeft))
            XCTAssertEqual(try api.answer(["activation_code": .string(code)]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
            try api.scanDocument(try TestImages.obamaPassportPage())
            let ended = try XCTUnwrap(try api.answer(["is_confirm": false]).challenge)   // rejected, no document attempts left
            XCTAssertEqual(ended.name, "getUser")
            XCTAssertEqual(ended.error?.longErrorCode, 1010)
        }
        XCTAssertEqual(lefts, [2, 1], "attempts_left moves with each run")
        let api = server.client()
        try api.startSession()
        let refused = try XCTUnwrap(try api.answer(["user_id": "wes"]).challenge)
        XCTAssertEqual(refused.name, "getUser")
        XCTAssertEqual(refused.error?.longErrorCode, 1112)
    }

    // MARK: Item 4 — every path that checks a password

    /// main: with a stolen token, opt-in re-authentication took unlimited guesses (5 runs × 3) and
    /// never locked anything.
    func testReauthenticationGuessesCountWithTheLoginAndLockTheUser() throws {
        let server = try WorkflowServer(["password.attempts": "3", "password.lock_threshold": "4", "limits.backoff_seconds": "30",
                                         "idv.reauth_attempts": "3"])
        let api = try server.loggedIn("xia")
        let pw = try XCTUnwrap(try api.startFlow("idv.postlogin.optin").challenge)
        XCTAssertEqual(pw.attemptsLeft, 3)
        XCTAssertEqual(try api.answer(["password": "guess 1"]).challenge?.attemptsLeft, 2)
        XCTAssertEqual(try api.answer(["password": "guess 2"]).challenge?.attemptsLeft, 1)
        let third = try XCTUnwrap(try api.answer(["password": "guess 3"]).event)   // this client backs off for xia
        XCTAssertEqual(third.error.longErrorCode, 1011)
        // A new run asks again, but the guess is refused before any hashing while the client backs off.
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        let refused = try api.answer(["password": "guess 4"])
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(refused.error?.longErrorCode, 1111)
        XCTAssertNotNil(refused.headers["retry-after"])
        server.clock.advance(by: 31)
        // The 4th wrong password (login or re-authentication alike) locks the user.
        let locked = try XCTUnwrap(try api.answer(["password": "guess 4"]).event)
        XCTAssertEqual(locked.error.longErrorCode, 1011)
        let user = try XCTUnwrap(try server.store.user("xia"))
        XCTAssertEqual(user.state, .locked)
        XCTAssertEqual(user.failedPasswordAttempts, 4)
        // Locked at login too, even with the right password (from any client).
        let login = server.client()
        try login.startSession()
        let l = try XCTUnwrap(try login.answer(["user_id": "xia"]).challenge)
        XCTAssertEqual(l.name, "getUser")
        XCTAssertEqual(l.error?.longErrorCode, 1011)
        XCTAssertTrue(try server.audit().contains { $0.action == "user.locked" && $0.userID == "xia" })
    }

    // MARK: Item 5 — recoverable lock-outs, throttles

    /// main: three wrong passwords from anyone who knew the user id locked the user until an
    /// operator reset them (which also forced a new activation code).
    func testAStrangerCannotLockAUserAndALockIsRecoverableByTheOperator() throws {
        let server = try ServerProcess(settings: ["password.attempts": "3", "password.lock_threshold": "6", "limits.backoff_seconds": "60"])
        try server.start()
        try activate(server, "yan")
        let stranger = server.client()
        try stranger.startSession()
        try stranger.answer(["user_id": "yan"])
        for i in 1...2 { XCTAssertEqual(try stranger.answer(["password": .string("guess \(i)")]).challenge?.error?.longErrorCode, 1014) }
        XCTAssertEqual(try stranger.answer(["password": "guess 3"]).challenge?.error?.longErrorCode, 1011)
        XCTAssertEqual(try server.admin(["list-users"]).arrayValue?.first?["state"], "active", "three requests do not lock the user")
        // The stranger's next guess is refused at once, with Retry-After.
        let other = server.client()
        try other.startSession()
        let asked = try other.answer(["user_id": "yan"])
        XCTAssertEqual(asked.challenge?.error?.longErrorCode, 1011, "this client backs off for yan")

        // A user locked at the threshold (here by writing the count, as many clients would) is
        // unlocked by the operator without a new activation code.
        server.stop()
        do {
            let store = try SQLiteStore(path: server.dbPath, keyFile: server.dbPath + ".key")
            var u = try XCTUnwrap(try store.user("yan"))
            u.state = .locked
            u.failedPasswordAttempts = 6
            u.lockedAt = Int(Date().timeIntervalSince1970)
            try store.saveUser(u)
            store.close()
        }
        let listed = try XCTUnwrap(try server.admin(["list-users"]).arrayValue?.first)
        XCTAssertEqual(listed["state"], "locked")
        XCTAssertNotNil(listed["locked_until"]?.intValue, "\(listed)")
        let unlocked = try server.admin(["unlock-user", "yan"])
        XCTAssertEqual(unlocked["was_locked"], true)
        XCTAssertEqual(unlocked["failed_password_attempts_cleared"], 6, "the count before the unlock")
        XCTAssertEqual(unlocked["client_backoffs_cleared"], 1, "the stranger's back-off for yan (this test's one client address)")
        XCTAssertEqual(try server.admin(["list-users"]).arrayValue?.first?["state"], "active")
        try server.start()
        let back = server.client()
        try back.startSession()
        XCTAssertEqual(try back.answer(["user_id": "yan"]).challenge?.name, "getPassword", "no new activation code needed")
        let audit = try server.admin(["audit", "--limit", "200"])
        XCTAssertTrue(audit["entries"]?.arrayValue?.contains { $0["action"] == "admin.unlock_user" } == true)
        XCTAssertTrue(audit["entries"]?.arrayValue?.contains { $0["action"] == "password.client_backoff" } == true)
    }

    /// main: one client sprayed passwords at 9.5 guesses/s across users with no per-client limit.
    func testPasswordSprayingAcrossUsersIsLimitedPerClient() throws {
        let server = try ServerProcess(settings: ["limits.auth_failures_per_client": "4", "limits.auth_failure_window_seconds": "3600"])
        try server.start()
        let users = ["sa", "sb", "sc", "sd", "se"]
        for u in users { try activate(server, u) }
        var outcomes: [Int] = []
        for u in users {
            let api = server.client()
            try api.startSession()
            try api.answer(["user_id": .string(u)])
            let r = try api.answer(["password": "Spring2026!"])
            outcomes.append(r.status == 429 ? r.error?.longErrorCode ?? 0 : r.challenge?.error?.longErrorCode ?? 0)
            if r.status == 429 { XCTAssertNotNil(r.headers["retry-after"]) }
        }
        XCTAssertEqual(outcomes, [1014, 1014, 1014, 1014, 1111])
        XCTAssertTrue(try metrics(server).contains(#"idvd_limit_refusals_total{limit="auth_client"} 1"#))
    }

    /// main: 5 wrong codes by a stranger killed a pending user's activation code for good (1010).
    func testWrongActivationCodesBackOffAndTheCodeSurvives() throws {
        // A 2 s back-off holds at least 1 s (whole seconds) — the next request is inside it — and is over after 2.2 s.
        let server = try ServerProcess(settings: ["activation.code_attempts": "3", "limits.backoff_seconds": "2"])
        try server.start()
        let code = try server.createUser("zoe")
        let stranger = server.client()
        try stranger.startSession()
        XCTAssertEqual(try stranger.answer(["user_id": "zoe"]).challenge?.attemptsLeft, 3)
        XCTAssertEqual(try stranger.answer(["activation_code": "00000-00001"]).challenge?.attemptsLeft, 2)
        XCTAssertEqual(try stranger.answer(["activation_code": "00000-00002"]).challenge?.attemptsLeft, 1)
        let backoff = try XCTUnwrap(try stranger.answer(["activation_code": "00000-00003"]).challenge)
        XCTAssertEqual(backoff.name, "getUser")
        XCTAssertEqual(backoff.error?.longErrorCode, 1111)
        XCTAssertEqual(try stranger.answer(["user_id": "zoe"]).challenge?.error?.longErrorCode, 1111, "backing off")
        Thread.sleep(forTimeInterval: 2.2)
        let owner = server.client()
        try owner.startSession()
        try owner.answer(["user_id": "zoe"])
        XCTAssertEqual(try owner.answer(["activation_code": .string(code)]).challenge?.name, "getPassword", "the code still works")
    }

    // MARK: Item 6 — password length in bytes

    /// main: passwords were limited in characters only (1,024), so 1,024 multi-byte characters were
    /// hashed (and a new password of 128 characters could be any number of bytes).
    func testPasswordsAreLimitedInBytes() throws {
        let server = try ServerProcess()
        try server.start()
        let code = try server.createUser("amy")
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": "amy"])
        try api.answer(["activation_code": .string(code)])
        let family = "a1" + String(repeating: "👨‍👩‍👧‍👦", count: 30)   // 32 characters, 752 bytes
        XCTAssertEqual(try api.answer(["password": .string(family)]).challenge?.error?.longErrorCode, 1015)
        let long = String(repeating: "é", count: 600)   // 600 characters, 1,200 bytes
        let r = try api.answer(["password": .string(long)])
        XCTAssertEqual(r.status, 400)
        XCTAssertEqual(r.error?.longErrorCode, 1001)
        XCTAssertEqual(try api.answer(["password": .string(Self.password)]).event?.name, "onUserLoggedIn")
        let login = server.client()
        try login.startSession()
        try login.answer(["user_id": "amy"])
        XCTAssertEqual(try login.answer(["password": .string(long)]).error?.longErrorCode, 1001)
        XCTAssertEqual(try login.answer(["password": .string(Self.password)]).event?.name, "onUserLoggedIn")
    }
}
