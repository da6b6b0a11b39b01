import Foundation
import IDVCore
import XCTest

/// The wire types' JSON shape, which the SDK codes against (docs/PROTOCOL.md §2–§3).
final class WireTests: XCTestCase {
    func keys(_ data: Data) throws -> Set<String> {
        Set(try XCTUnwrap(JSONDecoder().decode(JSONValue.self, from: data).objectValue).keys)
    }

    func testEnvelopeKeysAreSnakeCase() throws {
        let ch = WireChallenge(name: "getPassword", challengeID: "ab", challengeMode: 1, idvWorkflow: 0, attemptsLeft: 3, userID: "u",
                               payload: ["k": 1], error: IDVError(.invalidPassword), status: RequestStatus(statusCode: 400, statusMessage: "x"))
        let ev = WireEvent(name: "onUserLoggedIn", userID: "u")
        let s = WireSession(token: "t", sessionID: "s", userID: "u", deviceID: "d", loggedIn: true, idleExpiresAt: 1, absoluteExpiresAt: 2)
        let env = WireEnvelope(requestID: "r", session: s, challenge: ch, event: ev, error: IDVError(.wrongChallenge))
        let data = try JSONEncoder().encode(env)
        XCTAssertEqual(try keys(data), ["request_id", "session", "challenge", "event", "error"])
        let v = try JSONDecoder().decode(JSONValue.self, from: data)
        XCTAssertEqual(Set(v["challenge"]?.objectValue?.keys ?? [:].keys),
                       ["name", "challenge_id", "challenge_mode", "idv_workflow", "attempts_left", "user_id", "payload", "error", "status"])
        XCTAssertEqual(Set(v["session"]?.objectValue?.keys ?? [:].keys),
                       ["token", "session_id", "user_id", "device_id", "logged_in", "idle_expires_at", "absolute_expires_at"])
        XCTAssertEqual(v["challenge"]?["error"]?["long_error_code"], 1014)
        XCTAssertEqual(v["challenge"]?["status"]?["status_code"], 400)
        XCTAssertEqual(v["event"]?["status"]?["status_code"], 100)
        XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: data), env)
        XCTAssertTrue(env.isRefusal)
        XCTAssertFalse(WireEnvelope(requestID: "r", error: IDVError.none).isRefusal)

        let ans = WireAnswer(to: ch, payload: ["password": "p"])
        XCTAssertEqual(try keys(JSONEncoder().encode(ans)), ["challenge_id", "challenge", "challenge_mode", "payload"])
        XCTAssertEqual(ans.challengeMode, 1)
        XCTAssertEqual(try keys(JSONEncoder().encode(WireDeviceRegistration(publicKey: "k", label: "l"))), ["public_key", "label"])
        XCTAssertEqual(try keys(JSONEncoder().encode(WireSessionStart(deviceID: "d", sdkVersion: "1"))), ["device_id", "sdk_version"])
    }

    func testJSONValueDecodesEveryKind() throws {
        let v = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"i":3,"d":2.5,"b":true,"n":null,"s":"x","a":[1,"y"],"o":{"k":false}}"#.utf8))
        XCTAssertEqual(v["i"], .integer(3))
        XCTAssertEqual(v["d"], .number(2.5))
        XCTAssertEqual(v["b"], .bool(true))
        XCTAssertEqual(v["n"], .null)
        XCTAssertEqual(v["s"]?.stringValue, "x")
        XCTAssertEqual(v["a"], [1, "y"])
        XCTAssertEqual(v["o"]?["k"]?.boolValue, false)
        XCTAssertEqual(v["d"]?.intValue, nil)
        XCTAssertEqual(v["i"]?.doubleValue, 3)
        XCTAssertNil(v["missing"])
        XCTAssertNil(JSONValue.string("x")["k"])
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(v)), v)
        struct P: Codable, Equatable { let user_id: String; let n: Int }
        let p = P(user_id: "u", n: 4)
        XCTAssertEqual(try JSONValue(encoding: p).decode(P.self), p)
    }

    func testLDAMessageBindsChallengeAndNonce() {
        XCTAssertEqual(String(decoding: WireLDA.message(challengeID: "c1", nonce: "bm9uY2U="), as: UTF8.self), "OpenIDV-LDA-v1:c1:bm9uY2U=")
        XCTAssertNotEqual(WireLDA.message(challengeID: "c1", nonce: "n"), WireLDA.message(challengeID: "c2", nonce: "n"))
    }
}
