import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVHTTP
import IDVServerTestSupport
import XCTest

/// The HTTP chain (IDVHTTP/Middleware.swift): request id → log → metrics → error-to-envelope →
/// auth → decode → handler, and the code-to-status table.
final class MiddlewareTests: XCTestCase {
    func testEveryCodeHasAnHTTPStatusAndRefusalsUseIt() {
        for code in IDVErrorCode.allCases {
            let status = HTTPStatus.of(code)
            XCTAssertTrue((200..<600).contains(status), "\(code) → \(status)")
            XCTAssertEqual(status == 200, code == .none, "\(code): only `none` is 200")
            if code != .none {
                XCTAssertEqual(HTTPResponse.refusal(IDVError(code), requestID: "r").status, status, "\(code)")
            }
        }
        XCTAssertEqual(HTTPStatus.of(.unauthenticated), 401)
        XCTAssertEqual(HTTPStatus.of(.replayedAnswer), 409)
        XCTAssertEqual(HTTPStatus.of(.payloadTooLarge), 413)
        XCTAssertEqual(HTTPStatus.of(.linkInvalid), 410)
        XCTAssertEqual(HTTPStatus.of(.workflowUnavailable), 503)
        XCTAssertEqual(HTTPStatus.of(.internalError), 500)
    }

    /// docs/PROTOCOL.md §6 lists every code once, with the status HTTPStatus.of gives it.
    func testProtocolDocumentListsEveryCodeWithItsStatus() throws {
        let doc = try String(contentsOf: IDVDBinary.packageRoot.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        var rows: [Int: (name: String, status: Int)] = [:]
        let section = try XCTUnwrap(doc.range(of: "## 6. Errors and HTTP statuses")).upperBound
        let end = doc.range(of: "## 7.", range: section..<doc.endIndex)?.lowerBound ?? doc.endIndex
        for line in doc[section..<end].split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, let code = Int(cells[0]), let status = Int(cells[2].prefix(3)) else { continue }
            XCTAssertNil(rows[code], "code \(code) listed twice")
            rows[code] = (cells[1], status)
        }
        for code in IDVErrorCode.allCases {
            let row = try XCTUnwrap(rows[code.rawValue], "docs/PROTOCOL.md §6 does not list \(code.rawValue) \(code)")
            XCTAssertEqual(row.name, "\(code)", "\(code.rawValue)")
            XCTAssertEqual(row.status, HTTPStatus.of(code), "\(code.rawValue) \(code)")
        }
        XCTAssertEqual(rows.count, IDVErrorCode.allCases.count, "a row names a code IDVCore does not have")
    }

    struct Body: Codable, Sendable { var n: Int }

    private func session(_ id: String) -> SessionRecord {
        SessionRecord(sessionID: id, tokenHash: "h", createdAt: 0, lastSeenAt: 0, idleTimeout: 60, absoluteExpiresAt: 60)
    }

    /// A chain over an in-memory log and fresh metrics; the token "good" opens session "s-1".
    private func pipeline(_ log: MemoryLogHandler, _ metrics: Metrics, authCalls: LockedCounter) throws -> Pipeline {
        let config = try ServerConfig.load(file: nil, environment: [:], overrides: ["log.requests": "true"])
        let s = session("s-1")
        return .standard(config: config, metrics: metrics, logger: Logger(label: "test", handler: log)) { token in
            authCalls.add()
            guard token == "good" else { throw IDVError(.unauthenticated, "Unknown session token") }
            return s
        }
    }

    private func request(_ route: Route, body: String = "", token: String? = nil) -> HTTPRequest {
        var r = HTTPRequest(method: route.method, path: route.pattern, body: Data(body.utf8), requestID: "rid-1",
                            authorization: token.map { "Bearer \($0)" })
        r.route = route
        return r
    }

    /// Every decoding fault is named for what it is, by field path (never the value): well-formed
    /// JSON with a value the field does not take is not "not valid JSON".
    func testDecodeRefusalsNameTheFault() {
        struct Body: Decodable { let decision: ReviewDecision; let reason: String }
        func message(_ json: String) -> String? {
            let result = Result { try RequestDecoder.decode(Body.self, Data(json.utf8)) }
            guard case let .failure(error) = result else { return nil }
            guard let e = error as? IDVError else { return "\(error)" }
            XCTAssertEqual(e.longErrorCode, IDVErrorCode.malformedRequest.rawValue)
            return e.errorString
        }
        XCTAssertEqual(message(#"{"decision":"maybe","reason":"x"}"#), "Invalid value at decision")
        XCTAssertEqual(message(#"{"decision":"APPROVE","reason":"x"}"#), "Invalid value at decision")
        XCTAssertEqual(message(#"{"reason":"x"}"#), "Missing field decision")
        XCTAssertEqual(message(#"{"decision":1,"reason":"x"}"#), "Wrong type at decision")
        XCTAssertEqual(message(#"{"decision":"approve""#), "The body is not valid JSON")
        XCTAssertNil(message(#"{"decision":"approve","reason":"x"}"#))
    }

    func testChainAuthenticatesOnceDecodesOnceAndLogsIDsNeverTheBody() throws {
        let log = MemoryLogHandler(), metrics = Metrics(), auth = LockedCounter()
        let chain = try pipeline(log, metrics, authCalls: auth)
        XCTAssertEqual(chain.stages.map(\.name), ["request_id", "log", "metrics", "error_to_envelope", "throttle", "auth", "decode"])
        let route = Route("POST", "/t/{x}", operationID: "t", summary: "t", bearer: true, body: Body.self) { req, body in
            XCTAssertEqual(try req.authenticatedSession().sessionID, "s-1")
            XCTAssertEqual(req.logger.metadata["request_id"], .string("rid-1"))
            XCTAssertEqual(req.logger.metadata["session_id"], .string("s-1"))
            var r = HTTPResponse.json(["n": .integer(body.n + 1)] as JSONValue)
            r.outcomeErrorCode = 1014
            return r
        }
        let r = chain.run(request(route, body: #"{"n":41,"secret":"do-not-log"}"#, token: "good"))
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: r.body)["n"], .integer(42))
        XCTAssertEqual(auth.value, 1)
        let lines = log.entries.filter { $0.message == "request" }
        XCTAssertEqual(lines.count, 1)
        let m = try XCTUnwrap(lines.first?.metadata)
        XCTAssertEqual(m["request_id"], .string("rid-1"))
        XCTAssertEqual(m["session_id"], .string("s-1"))
        XCTAssertEqual(m["route"], .string("/t/{x}"))
        XCTAssertEqual(m["status"], .integer(200))
        XCTAssertEqual(m["error_code"], .integer(0))
        XCTAssertEqual(m["outcome_error_code"], .integer(1014))
        XCTAssertNotNil(m["duration_ms"])
        XCTAssertFalse("\(log.entries)".contains("do-not-log"), "a body value reached the log")
        XCTAssertTrue(metrics.render(inFlight: 0, queued: 0).contains(#"idvd_http_requests_total{route="/t/{x}",method="POST",status="200"} 1"#))
    }

    func testErrorsBelowBecomeEnvelopesThatLogAndMetricsSee() throws {
        let log = MemoryLogHandler(), metrics = Metrics(), auth = LockedCounter()
        let chain = try pipeline(log, metrics, authCalls: auth)
        let ran = LockedCounter()
        let bearer = Route("POST", "/b", operationID: "b", summary: "b", bearer: true, body: Body.self) { _, _ in
            ran.add()
            throw StoreError.database("disk full")
        }
        // No token: auth refuses (401), the handler never runs, no session id is logged.
        var r = chain.run(request(bearer, body: #"{"n":1}"#))
        XCTAssertEqual(r.status, 401)
        XCTAssertEqual(r.errorCode, 1004)
        // A body that does not decode: 1001 from the decode stage, after auth.
        r = chain.run(request(bearer, body: #"{"n":"x"}"#, token: "good"))
        XCTAssertEqual(r.status, 400)
        XCTAssertEqual(r.errorCode, 1001)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("Wrong type at n"))
        // A store failure in the handler: 1030, logged by kind only.
        r = chain.run(request(bearer, body: #"{"n":1}"#, token: "good"))
        XCTAssertEqual(r.status, 500)
        XCTAssertEqual(r.errorCode, 1030)
        XCTAssertEqual(ran.value, 1)
        XCTAssertFalse("\(log.entries)".contains("disk full"))
        XCTAssertTrue(log.entries.contains { $0.message == "store error" && $0.metadata["kind"] == .string("database")
            && $0.metadata["request_id"] == .string("rid-1") && $0.metadata["session_id"] == .string("s-1") })
        let statuses = log.entries.filter { $0.message == "request" }.compactMap { $0.metadata["status"]?.intValue }
        XCTAssertEqual(statuses, [401, 400, 500])
        XCTAssertNil(log.entries.first { $0.message == "request" }?.metadata["session_id"])
        let text = metrics.render(inFlight: 0, queued: 0)
        for s in [401, 400, 500] { XCTAssertTrue(text.contains(#"idvd_http_requests_total{route="/b",method="POST",status="\#(s)"} 1"#), "\(s)") }
        // A refusal decided before the chain (413, 405, 404) skips auth and decode.
        var tooLarge = request(bearer, body: "")
        tooLarge.refusal = IDVError(.payloadTooLarge)
        XCTAssertEqual(chain.run(tooLarge).status, 413)
        var unrouted = HTTPRequest(method: "GET", path: "/nope", body: Data(), requestID: "rid-2", authorization: nil)
        unrouted.refusal = IDVError(.notFound)
        XCTAssertEqual(chain.run(unrouted).status, 404)
        XCTAssertEqual(auth.value, 3, "auth ran for the three bearer requests, not for those refused before the chain")
        XCTAssertTrue(metrics.render(inFlight: 0, queued: 0).contains(#"route="unmatched",method="GET",status="404"} 1"#))
    }
}

/// A thread-safe counter for closures the chain calls.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
