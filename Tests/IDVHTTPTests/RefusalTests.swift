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

/// Every refusal has its documented code and HTTP status and changes nothing stored.
final class RefusalTests: XCTestCase {
    var server: ServerProcess!
    var api: API!
    var code = ""

    override func setUpWithError() throws {
        server = try ServerProcess(settings: ["limits.body_bytes": "4096"])
        try server.start()
        code = try server.createUser("frank")
        api = server.client()
        try api.startSession()
        XCTAssertEqual(try api.answer(["user_id": "frank"]).challenge?.name, "getActivationCode")
    }

    override func tearDown() {
        server = nil
        api = nil
    }

    /// The current challenge must be exactly `expected` (same id, same attempts left).
    func assertUnchanged(_ expected: WireChallenge, file: StaticString = #filePath, line: UInt = #line) throws {
        let now = try XCTUnwrap(api.current().challenge, file: file, line: line)
        XCTAssertEqual(now, expected, "state changed after a refusal", file: file, line: line)
    }

    func assertRefused(_ r: API.Reply, status: Int, code: IDVErrorCode, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, status, String(decoding: r.raw, as: UTF8.self), file: file, line: line)
        XCTAssertEqual(r.error?.longErrorCode, code.rawValue, file: file, line: line)
        XCTAssertEqual(r.error?.shortErrorCode, code.category.rawValue, file: file, line: line)
        XCTAssertNil(r.challenge, file: file, line: line)
        XCTAssertNil(r.event, file: file, line: line)
        XCTAssertEqual(r.envelope?.requestID.count, 32, file: file, line: line)
    }

    func testWrongChallengeNameIdAndMode() throws {
        let ch = try XCTUnwrap(api.last?.challenge)
        // Right id, wrong name.
        let byName = try api.call("POST", "/v1/session/answer", api.encode(WireAnswer(challengeID: ch.challengeID, challenge: "getPassword", payload: ["password": "x"])))
        assertRefused(byName, status: 409, code: .wrongChallenge)
        // Right name, unknown id.
        let byID = try api.call("POST", "/v1/session/answer", api.encode(WireAnswer(challengeID: Crypto.randomID(), challenge: ch.name, payload: ["activation_code": .string(code)])))
        assertRefused(byID, status: 409, code: .wrongChallenge)
        // Wrong mode echo.
        let byMode = try api.call("POST", "/v1/session/answer", api.encode(WireAnswer(challengeID: ch.challengeID, challenge: ch.name, challengeMode: 1, payload: ["activation_code": .string(code)])))
        assertRefused(byMode, status: 409, code: .wrongChallenge)
        // The upload route refuses a JSON-only challenge.
        let upload = try api.answer(["activation_code": .string(code)], route: "/v1/session/upload")
        assertRefused(upload, status: 400, code: .malformedRequest)
        try assertUnchanged(ch)
        // And the right answer still works: nothing was consumed, no attempt counted.
        let next = try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(next.challenge?.name, "getPassword")
    }

    func testReplayedAnswer() throws {
        let ch = try XCTUnwrap(api.last?.challenge)
        let wrong = try api.answer(["activation_code": "ZZZZZ-ZZZZZ"], to: ch)
        XCTAssertEqual(wrong.challenge?.attemptsLeft, 4)
        let current = try XCTUnwrap(wrong.challenge)
        // Replaying the consumed challenge (even with the right code) is refused and counts nothing.
        let replay = try api.answer(["activation_code": .string(code)], to: ch)
        assertRefused(replay, status: 409, code: .replayedAnswer)
        try assertUnchanged(current)
    }

    func testMalformedJSONAndMissingFields() throws {
        let ch = try XCTUnwrap(api.last?.challenge)
        assertRefused(try api.call("POST", "/v1/session/answer", Data("{not json".utf8)), status: 400, code: .malformedRequest)
        assertRefused(try api.call("POST", "/v1/session/answer", Data()), status: 400, code: .malformedRequest)
        let noID = try api.call("POST", "/v1/session/answer", Data(#"{"challenge":"getActivationCode","payload":{}}"#.utf8))
        assertRefused(noID, status: 400, code: .malformedRequest)
        XCTAssertTrue(noID.error?.errorString.contains("challenge_id") ?? false, noID.error?.errorString ?? "")
        // Right challenge, payload without the field: refused, not counted as a wrong code.
        let noCode = try api.answer(["activation_cod": "x"])
        assertRefused(noCode, status: 400, code: .malformedRequest)
        let wrongType = try api.answer(["activation_code": 12345])
        assertRefused(wrongType, status: 400, code: .malformedRequest)
        assertRefused(try api.call("POST", "/v1/devices", Data(#"{"public_key":"AAAA"}"#.utf8)), status: 400, code: .malformedRequest)
        // A body that is JSON but not an object names the problem, not an empty field path.
        for (body, words) in [("null", "The body must be a JSON object, not null"), ("[1,2,3]", "The body must be a JSON object"),
                              ("42", "The body must be a JSON object"), (#""text""#, "The body must be a JSON object")] {
            let r = try api.call("POST", "/v1/session/answer", Data(body.utf8))
            assertRefused(r, status: 400, code: .malformedRequest)
            XCTAssertEqual(r.error?.errorString, words, body)
        }
        try assertUnchanged(ch)
    }

    func testOversizedBodyWithLengthAndChunked() throws {
        let ch = try XCTUnwrap(api.last?.challenge)
        let big = Data(repeating: 0x61, count: 10_000)
        let r = try api.call("POST", "/v1/session/answer", big)
        assertRefused(r, status: 413, code: .payloadTooLarge)
        // Chunked body without Content-Length: refused as the bytes cross the limit.
        let raw = LoopbackHTTPClient(port: server.port)
        var req = "POST /v1/session/answer HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(api.token ?? "")\r\nTransfer-Encoding: chunked\r\n\r\n"
        for _ in 0..<5 { req += String(2000, radix: 16) + "\r\n" + String(repeating: "b", count: 2000) + "\r\n" }
        req += "0\r\n\r\n"
        try raw.writeAll(Array(req.utf8))
        let resp = try raw.readResponse()
        XCTAssertEqual(resp.status, 413)
        XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: resp.body).error?.longErrorCode, 1006)
        // An upload-route body may be much larger than the JSON limit (and then fails on content).
        let upload = try api.call("POST", "/v1/session/upload", Data(repeating: 0x20, count: 10_000) + Data("{}".utf8))
        assertRefused(upload, status: 400, code: .malformedRequest)
        try assertUnchanged(ch)
    }

    func testUnknownRouteMethodAndAuth() throws {
        let ch = try XCTUnwrap(api.last?.challenge)
        assertRefused(try api.call("GET", "/v1/nothing-here"), status: 404, code: .notFound)
        assertRefused(try api.call("DELETE", "/v1/session"), status: 405, code: .methodNotAllowed)
        assertRefused(try api.call("POST", "/v1/flows/no-such-flow", nil), status: 401, code: .unauthenticated)
        assertRefused(try api.call("GET", "/v1/session", token: "not-a-token"), status: 401, code: .unauthenticated)
        let anon = API(port: server.port)
        assertRefused(try anon.call("GET", "/v1/session"), status: 401, code: .unauthenticated)
        assertRefused(try api.call("POST", "/v1/sessions", api.encode(WireSessionStart(deviceID: "ffff"))), status: 404, code: .deviceNotFound)
        assertRefused(try api.call("POST", "/v1/sessions", Data(#"{"device_id":null}"#.utf8)), status: 400, code: .malformedRequest)
        assertRefused(try api.call("POST", "/v1/sessions", Data(#"{"sdk_version":null}"#.utf8)), status: 400, code: .malformedRequest)
        try assertUnchanged(ch)
    }

    func testConcurrentAnswersExactlyOneWins() throws {
        let ch = try XCTUnwrap(api.last?.challenge)
        let token = try XCTUnwrap(api.token)
        let body = try api.encode(WireAnswer(to: ch, payload: ["activation_code": .string(code)]))
        let n = 8
        let results = ResultBox(count: n)
        let port = server.port
        DispatchQueue.concurrentPerform(iterations: n) { i in
            let c = LoopbackHTTPClient(port: port)
            if let r = try? c.json("POST", "/v1/session/answer", body, bearer: token) {
                results.set(i, (r.status, (try? JSONDecoder().decode(WireEnvelope.self, from: r.body))?.error?.longErrorCode ?? 0))
            }
        }
        let all = results.values
        XCTAssertEqual(all.filter { $0.0 == 200 }.count, 1, "\(all)")
        XCTAssertEqual(all.filter { $0.0 == 409 && $0.1 == 1005 }.count, n - 1, "\(all)")
        XCTAssertEqual(try api.current().challenge?.name, "getPassword")
    }

    func testExpiredSession() throws {
        server = nil
        // Idle 2 s: at least 1 s between the start and the first look (times are whole seconds), surely past after 3 s.
        let s = try ServerProcess(settings: ["session.idle_seconds": "2"])
        try s.start()
        let c = s.client()
        try c.startSession()
        XCTAssertEqual(try c.current().status, 200)
        sleep(3)
        let r = try c.answer(["user_id": "x"])
        assertRefused(r, status: 401, code: .sessionExpired)
        assertRefused(try c.current(), status: 401, code: .sessionExpired)
    }
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(Int, Int)?]
    init(count: Int) { items = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ v: (Int, Int)) { lock.lock(); items[i] = v; lock.unlock() }
    var values: [(Int, Int)] { lock.lock(); defer { lock.unlock() }; return items.compactMap { $0 } }
}
