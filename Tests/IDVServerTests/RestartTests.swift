import Foundation
import IDVCore
import IDVServer
import XCTest

/// Stop the server in the middle of a flow (SIGTERM, SIGKILL), start it again on the same file:
/// nothing committed is lost; the session continues or expires cleanly.
final class RestartTests: XCTestCase {
    func testSIGTERMMidFlowThenContinue() throws {
        let server = try ServerProcess()
        try server.start()
        let code = try server.createUser("gina")
        let api = server.client()
        try api.startSession()
        let ac = try XCTUnwrap(api.answer(["user_id": "gina"]).challenge)
        let wrong = try XCTUnwrap(api.answer(["activation_code": "QQQQQ-QQQQQ"]).challenge)
        XCTAssertEqual(wrong.attemptsLeft, 4)
        XCTAssertEqual(server.stop(signal: SIGTERM), 0, "graceful exit status")
        XCTAssertTrue(server.serverLog().contains(#""msg":"stopped""#))

        try server.start()
        let resumed = API(port: server.port)
        resumed.token = api.token
        let cur = try resumed.current()
        XCTAssertEqual(cur.status, 200)
        XCTAssertEqual(cur.challenge, wrong, "the same challenge (id, attempts) survives the restart")
        resumed.last = cur.envelope
        // The consumed challenge stays consumed across the restart.
        XCTAssertEqual(try resumed.answer(["activation_code": .string(code)], to: ac).error?.longErrorCode, 1005)
        XCTAssertEqual(try resumed.answer(["activation_code": .string(code)]).challenge?.name, "getPassword")
        XCTAssertEqual(try resumed.answer(["password": "after restart 7"]).event?.name, "onUserLoggedIn")
    }

    func testSIGKILLKeepsCommittedStateAndExpiresCleanly() throws {
        let server = try ServerProcess(settings: ["session.absolute_seconds": "3"])
        try server.start()
        let code = try server.createUser("hank")
        let done = server.client()
        try done.startSession()
        try done.answer(["user_id": "hank"])
        try done.answer(["activation_code": .string(code)])
        XCTAssertEqual(try done.answer(["password": "killed later 9"]).event?.name, "onUserLoggedIn")
        let pending = server.client()
        try pending.startSession()
        let verify = try XCTUnwrap(pending.answer(["user_id": "hank"]).challenge)
        XCTAssertEqual(verify.name, "getPassword")
        let wrong = try XCTUnwrap(pending.answer(["password": "not it at all 1"]).challenge)
        XCTAssertEqual(wrong.attemptsLeft, 2)

        XCTAssertEqual(server.stop(signal: SIGKILL), SIGKILL)
        try server.start()
        // Committed: the activation (user active), the failed attempt, the pending challenge.
        let users = try server.admin(["list-users"])
        XCTAssertEqual(users.arrayValue?.first?["state"], "active")
        XCTAssertEqual(users.arrayValue?.first?["failed_password_attempts"], 1)
        let again = API(port: server.port)
        again.token = pending.token
        XCTAssertEqual(try again.current().challenge, wrong)
        XCTAssertEqual(try server.admin(["audit"])["chain_valid"], true)
        // Past the absolute expiry the session is refused cleanly (1003), and a new one works.
        sleep(3)
        XCTAssertEqual(try again.current().error?.longErrorCode, 1003)
        let fresh = server.client()
        try fresh.startSession()
        XCTAssertEqual(try fresh.answer(["user_id": "hank"]).challenge?.attemptsLeft, 2)
        XCTAssertEqual(try fresh.answer(["password": "killed later 9"]).event?.name, "onUserLoggedIn")
    }
}
