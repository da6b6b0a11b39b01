import Foundation
import IDVCore
import IDVTools
import IDVTestSupport
import IDVServerTestSupport
import Imaging
import XCTest

/// Issue #21 item 1, "one logged-in user stalls everyone", against a real `idvd serve` (real FaceKit
/// analyser, dlib models) on loopback with bounded loads: maximum-cost selfie uploads of flat
/// 2000×2000 PNG frames (4 MP each, within the per-frame limit; a few kilobytes each on the wire),
/// 16 per upload: 64 MP, the most one upload may hold under the default `analysis.max_request_megapixels`.
///
/// The new limits are given as `IDVD_…` environment variables (a build that does not know them
/// ignores them), so `IDVD_BINARY=<main's idvd> swift test --filter AbuseAnalysisTests` runs the same
/// loads against the old server — where every test fails: light requests wait behind uploads on the
/// shared `http.workers`, nothing is refused, every upload is decoded whatever its pixels.
/// No test asserts a time: each one asserts an order (what had finished when something else was
/// answered) or an answer.
final class AbuseAnalysisTests: XCTestCase {
    /// A flat grey 2000×2000 PNG: the most pixels a selfie frame may have (FaceKit
    /// `maximumFramePixels` 4 000 000), compressed to a few kilobytes.
    static let heavyFrame: Data = {
        (try? Image(gray: [UInt8](repeating: 118, count: 2000 * 2000), width: 2000, height: 2000).pngData()) ?? Data()
    }()

    /// Starts a real server with `settings` (`--set`, known to every build) and `environment`.
    static func server(settings: [String: String] = [:], environment: [String: String]) throws -> ServerProcess {
        try RealImages.requireModels()
        let s = try ServerProcess(settings: ["log.requests": "false"].merging(settings) { $1 })
        s.environment = environment
        try s.start()
        return s
    }

    /// A logged-in session of `user` (created on first use, `code` reused) standing at the opt-in
    /// flow's `uploadIDVSelfieFrames` challenge.
    static func atSelfieUpload(_ server: ServerProcess, user: String, code: inout String?) throws -> API {
        if code == nil { code = try server.createUser(user) }
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        if api.last?.challenge?.name == "getActivationCode" {
            try api.answer(["activation_code": .string(code!)])
        }
        let pw = try api.answer(["password": "correct horse 42"])
        XCTAssertEqual(pw.event?.name, "onUserLoggedIn", "\(String(describing: pw.error))")
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": "correct horse 42"]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        let up = try api.answer(["is_confirm": true, "use_back_camera": false])
        XCTAssertEqual(up.challenge?.name, "uploadIDVSelfieFrames", "\(String(describing: up.error))")
        return api
    }

    /// The raw request uploading `frames` to the session's current challenge (write it with
    /// `writeAll`, read the answer later with `readResponse`).
    static func uploadRequest(_ api: API, frames: [Data]) throws -> [UInt8] {
        let body = try uploadBody(api, frames: frames)
        return Array("POST /v1/session/upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer \(api.token ?? "")\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
            + Array(body)
    }

    /// The JSON body answering the session's current challenge with `frames`.
    static func uploadBody(_ api: API, frames: [Data]) throws -> Data {
        let ch = try XCTUnwrap(api.last?.challenge)
        return try api.encode(WireAnswer(to: ch, payload: ["frames": .array(frames.map { .string($0.base64EncodedString()) })]))
    }

    /// `GET /metrics` as `name{labels} → value` (``MetricsScrape``).
    static func metrics(_ port: Int) throws -> [String: Double] { try MetricsScrape.values(port: port) }

    /// Polls `/metrics` until `ready` holds (every 20 ms, at most `timeout` seconds), so a test
    /// sends its next request only once the server has reached the state the test is about (an
    /// upload admitted or queued) instead of guessing with a sleep. Fails the test on timeout.
    static func waitFor(_ port: Int, _ what: String, timeout: Double = 30,
                        file: StaticString = #filePath, line: UInt = #line,
                        _ ready: ([String: Double]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if ready(try metrics(port)) { return }
            usleep(20_000)
        }
        XCTFail("timed out after \(timeout) s waiting until \(what)", file: file, line: line)
    }

    /// Uploads analysed and answered so far (HTTP 200; refusals do not count), from `idvd_http_requests_total`.
    static func uploadsAnswered(_ port: Int) throws -> Double {
        try metrics(port).filter { $0.key.hasPrefix("idvd_http_requests_total{route=\"/v1/session/upload\"") && $0.key.contains("status=\"200\"") }
            .values.reduce(0, +)
    }

    /// Two maximum-cost uploads take both `http.workers`; a session start sent meanwhile is answered
    /// while both are still being analysed (no upload answered yet). On main it waited for a
    /// worker, i.e. for an upload to finish.
    func testSessionStartIsAnsweredWhileUploadsHoldEveryWorker() throws {
        let server = try Self.server(settings: ["http.workers": "2"],
                                     environment: ["IDVD_ANALYSIS_THREADS": "1", "IDVD_ANALYSIS_QUEUE_LIMIT": "2"])
        var code: String?
        let a = try Self.atSelfieUpload(server, user: "ann", code: &code)
        var code2: String?
        let b = try Self.atSelfieUpload(server, user: "ben", code: &code2)
        let frames = [Data](repeating: Self.heavyFrame, count: 16)
        try a.http.writeAll(Self.uploadRequest(a, frames: frames))
        try b.http.writeAll(Self.uploadRequest(b, frames: frames))
        try Self.waitFor(server.port, "both uploads hold a pool slot") {
            ($0["idvd_analysis_in_flight"] ?? 0) + ($0["idvd_analysis_queue_depth"] ?? 0) == 2
        }
        let light = server.client()
        let started = try light.startSession()
        XCTAssertEqual(started.status, 201)
        XCTAssertEqual(started.challenge?.name, "getUser")
        XCTAssertEqual(try Self.uploadsAnswered(server.port), 0,
                       "the session start was answered only after an upload finished: it waited behind the analyses")
        for api in [a, b] {
            let r = try api.http.readResponse()
            XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        }
    }

    /// One analysis thread and no queue: a second user's upload is refused at once with 1100, HTTP
    /// 503 and `Retry-After` while the first runs; the first user's own second upload gets 1101
    /// (429). `/healthz` says `degraded` meanwhile and `/metrics` counts the refusals; the refused
    /// upload, sent again later, is analysed (nothing was lost). On main the second upload waited.
    func testUploadBeyondThePoolIsRefusedAtOnceWithRetryAfter() throws {
        let server = try Self.server(environment: ["IDVD_ANALYSIS_THREADS": "1", "IDVD_ANALYSIS_QUEUE_LIMIT": "0"])
        var c1: String?, c2: String?
        let a = try Self.atSelfieUpload(server, user: "cat", code: &c1)
        let b = try Self.atSelfieUpload(server, user: "dan", code: &c2)
        let heavy = [Data](repeating: Self.heavyFrame, count: 16)
        try a.http.writeAll(Self.uploadRequest(a, frames: heavy))
        try Self.waitFor(server.port, "the first upload is on the analysis thread") { $0["idvd_analysis_in_flight"] == 1 }
        let busy = try b.http.json("POST", "/v1/session/upload", Self.uploadBody(b, frames: heavy),
                                   bearer: b.token)
        XCTAssertEqual(try Self.uploadsAnswered(server.port), 0, "the second upload was answered only after the first: it waited")
        XCTAssertEqual(busy.status, 503, String(decoding: busy.body, as: UTF8.self))
        let env = try JSONDecoder().decode(WireEnvelope.self, from: busy.body)
        XCTAssertEqual(env.error?.longErrorCode, 1100)
        XCTAssertGreaterThanOrEqual(Int(busy.headers["retry-after"] ?? "") ?? 0, 1, "Retry-After missing: \(busy.headers)")

        // The first user's own second upload, on another connection of the same session.
        let again = try LoopbackHTTPClient(port: server.port).json("POST", "/v1/session/upload",
                                                                   Self.uploadBody(a, frames: [Self.heavyFrame]),
                                                                   bearer: a.token)
        XCTAssertEqual(again.status, 429, String(decoding: again.body, as: UTF8.self))
        XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: again.body).error?.longErrorCode, 1101)
        XCTAssertNotNil(again.headers["retry-after"])
        // A request without a live session never takes a slot: 1004 at once, whatever the pool's state.
        let stranger = try LoopbackHTTPClient(port: server.port).json("POST", "/v1/session/upload", Self.uploadBody(b, frames: heavy),
                                                                      bearer: "not-a-session-token")
        XCTAssertEqual(stranger.status, 401)
        XCTAssertEqual(try JSONDecoder().decode(WireEnvelope.self, from: stranger.body).error?.longErrorCode, 1004)

        let health = try LoopbackHTTPClient(port: server.port).request("GET", "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: health.body)["status"], "degraded")
        let m = try Self.metrics(server.port)
        XCTAssertEqual(m["idvd_analysis_in_flight"], 1)
        XCTAssertEqual(m["idvd_analysis_refusals_total{reason=\"queue_full\"}"], 1)
        XCTAssertEqual(m["idvd_analysis_refusals_total{reason=\"in_progress\"}"], 1)

        XCTAssertEqual(try a.http.readResponse().status, 200)
        // Nothing was lost: the refused upload's challenge is still current and takes the upload now.
        let current = try b.current()
        XCTAssertEqual(current.challenge?.name, "uploadIDVSelfieFrames")
        XCTAssertEqual(current.challenge?.challengeID, b.last?.challenge?.challengeID)
        let retried = try b.uploadFrames([Self.heavyFrame, Self.heavyFrame])
        XCTAssertEqual(retried.status, 200, String(decoding: retried.raw, as: UTF8.self))
        let after = try LoopbackHTTPClient(port: server.port).request("GET", "/healthz")
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: after.body)["status"], "ok")
    }

    /// Two sessions of one user, two analysis threads: while the first session's upload is analysed,
    /// the second session's is refused with 1101 (one analysis per user). On main both ran.
    func testOneUserGetsOneAnalysisAtATime() throws {
        let server = try Self.server(environment: ["IDVD_ANALYSIS_THREADS": "2", "IDVD_ANALYSIS_QUEUE_LIMIT": "2"])
        var code: String?
        let first = try Self.atSelfieUpload(server, user: "eve", code: &code)
        let second = try Self.atSelfieUpload(server, user: "eve", code: &code)
        try first.http.writeAll(Self.uploadRequest(first, frames: [Data](repeating: Self.heavyFrame, count: 16)))
        // Admitted: its memory is reserved and the user holds the one analysis a user may run.
        try Self.waitFor(server.port, "the first upload is admitted") { ($0["idvd_analysis_memory_reserved_bytes"] ?? 0) > 0 }
        let r = try second.uploadFrames([Self.heavyFrame, Self.heavyFrame])
        XCTAssertEqual(r.status, 429, String(decoding: r.raw, as: UTF8.self))
        XCTAssertEqual(r.error?.longErrorCode, 1101)
        XCTAssertEqual(try Self.uploadsAnswered(server.port), 0, "the second session's upload was answered after the first finished")
        XCTAssertEqual(try first.http.readResponse().status, 200)
    }

    /// An upload whose frames hold more pixels together than `analysis.max_request_megapixels` is
    /// refused with 1102 (413) from the image headers, before any frame is decoded — each frame is
    /// within the per-frame limit, so on main it was decoded and analysed. The challenge and its
    /// attempts are unchanged.
    func testUploadOverTheRequestPixelBudgetIsRefusedBeforeDecoding() throws {
        let server = try Self.server(environment: ["IDVD_ANALYSIS_MAX_REQUEST_MEGAPIXELS": "10"])
        var code: String?
        let api = try Self.atSelfieUpload(server, user: "fay", code: &code)
        let before = try XCTUnwrap(api.last?.challenge)
        let r = try api.uploadFrames([Data](repeating: Self.heavyFrame, count: 3))   // 12 MP together
        XCTAssertEqual(r.status, 413, String(decoding: r.raw, as: UTF8.self))
        XCTAssertEqual(r.error?.longErrorCode, 1102)
        let now = try XCTUnwrap(try api.current().challenge)
        XCTAssertEqual(now.challengeID, before.challengeID)
        XCTAssertEqual(now.attemptsLeft, before.attemptsLeft)
        let m = try Self.metrics(server.port)
        XCTAssertEqual(m["idvd_analysis_refusals_total{reason=\"too_costly\"}"], 1)
        XCTAssertEqual(m["idvd_analysis_duration_seconds_count"], 0, "an analysis ran")
    }

    /// A logged-in session of `user` (created and activated on first use) standing at the document-scan
    /// flow's `uploadIDVDocumentPages` challenge.
    static func atDocumentUpload(_ server: ServerProcess, user: String) throws -> API {
        var code: String?
        _ = try atSelfieUpload(server, user: user, code: &code)   // creates and activates the user
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        XCTAssertEqual(try api.answer(["password": "correct horse 42"]).event?.name, "onUserLoggedIn")
        XCTAssertNotNil(try api.startFlow("idv.postlogin.document_scan").challenge)
        let upload = try api.answer(["is_confirm": true])
        XCTAssertEqual(upload.challenge?.name, "uploadIDVDocumentPages", "\(String(describing: upload.error))")
        return api
    }

    /// An `idvd specimen` TD1 card's back (MRZ) and front, each as a phone camera takes it: the card
    /// across 65 % of a 4608 × 3456 frame (16 MP) on grey, JPEG quality 90.
    static func phoneCardPair(in dir: URL) throws -> [Data] {
        let r = try IDVDBinary.run(["specimen", "--format", "td1", "--sides", "--seed", "5", "--out", dir.path, "--png"])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        return try ["back", "front"].map { side in
            let card = try Image(data: Data(contentsOf: dir.appendingPathComponent("specimen-5-\(side).png"))).rgb()
            let w = 4608, h = 3456
            let scaled = try card.resized(width: w * 65 / 100, height: card.height * (w * 65 / 100) / card.width)
            var canvas = [UInt8](repeating: 128, count: w * h * 3)
            let (x0, y0) = ((w - scaled.width) / 2, (h - scaled.height) / 2)
            for y in 0..<scaled.height {
                let row = scaled.width * 3
                canvas.replaceSubrange(((y0 + y) * w + x0) * 3 ..< ((y0 + y) * w + x0) * 3 + row,
                                       with: scaled.pixels[(y * row)..<((y + 1) * row)])
            }
            return try Image(rgb: canvas, width: w, height: h).jpegData(quality: 90)
        }
    }

    /// A TD1 card's back and front photographed at 4608 × 3456 (16 MP each, 33 MP together) are
    /// admitted and read: the pages are decoded at the reader's working size (2400 px), estimated at
    /// about 164 MiB (measured: 146 … 168 MB peak for `idvd document read` of such a pair, models
    /// included), within `analysis.max_analysis_mib` (320). On main the estimate was 12 bytes a
    /// source pixel, 364 MiB, and the pair was refused with 1102.
    func testPhoneSizedCardPairIsAdmittedAndRead() throws {
        let server = try Self.server(environment: [:])
        let pages = try Self.phoneCardPair(in: server.dir)
        XCTAssertEqual(pages.map { ImageHeader.read($0)?.pixels }, [4608 * 3456, 4608 * 3456])
        let api = try Self.atDocumentUpload(server, user: "hal")
        let r = try api.uploadPages(pages)
        XCTAssertEqual(r.status, 200, String(decoding: r.raw.prefix(400), as: UTF8.self))
        let status = try XCTUnwrap(r.event, "\(String(describing: r.error))").payload.decode(AdditionalDocumentScanDetails.self).documentStatus
        XCTAssertEqual(status.checksPerformed.first { $0.checkName == "MRZ present" }?.checkStatus, .ok, "\(status.errorList)")
        XCTAssertEqual(status.checksPerformed.first { $0.checkName == "MRZ readable" }?.checkStatus, .ok, "\(status.errorList)")
        let m = try Self.metrics(server.port)
        XCTAssertEqual(m["idvd_analysis_refusals_total{reason=\"too_costly\"}"], 0)
        XCTAssertEqual(m["idvd_analysis_duration_seconds_count"], 1, "the pair was not analysed")
    }

    /// A page over `analysis.max_request_megapixels` (64) — an 81 MP photo, also over the reader's
    /// per-page limit (`Raster.maxPixels`, 64 MP) — is refused from its header with 1102 (413), as
    /// docs/PROTOCOL.md §7 says: the message says what to do, nothing is decoded and the attempt is not
    /// counted. On main the page cost nothing here, was handed to the reader and refused with 1009,
    /// using up an attempt.
    func testPageOverTheMegapixelLimitIsRefusedWithoutUsingAnAttempt() throws {
        let server = try Self.server(environment: [:])
        let api = try Self.atDocumentUpload(server, user: "ida")
        let page = try Image(gray: [UInt8](repeating: 200, count: 10_392 * 7_794), width: 10_392, height: 7_794).jpegData(quality: 50)
        try Self.assertRefusedAsTooCostly(api, page, "(its images hold 81.0 MP together; one upload may hold 64 MP)")
        let m = try Self.metrics(server.port)
        XCTAssertEqual(m["idvd_analysis_refusals_total{reason=\"too_costly\"}"], 1)
        XCTAssertEqual(m["idvd_analysis_duration_seconds_count"], 0, "the page was read")
    }

    /// A document page of 8000 × 8000 pixels (64 MP: within the reader's per-page limit and the
    /// request's pixel limit) is estimated from its header at its working size (2400 × 2400 × 16 bytes
    /// + 32 MiB ≈ 120 MiB): with `analysis.max_analysis_mib` 100 it is refused with 1102 before it is
    /// decoded, and the message says what to do.
    func testDocumentPageOverTheMemoryEstimateIsRefusedBeforeDecoding() throws {
        let server = try Self.server(environment: ["IDVD_ANALYSIS_MAX_ANALYSIS_MIB": "100"])
        let api = try Self.atDocumentUpload(server, user: "gus")
        let page = try Image(gray: [UInt8](repeating: 200, count: 8000 * 8000), width: 8000, height: 8000).pngData()
        try Self.assertRefusedAsTooCostly(api, page, "(analysing it would need about 119 MiB; one analysis may use 100 MiB)")
        XCTAssertEqual(try Self.metrics(server.port)["idvd_analysis_duration_seconds_count"], 0, "the page was read")
    }

    /// `page` uploaded at the document step is refused with 413 / 1102 and the sentence ending in
    /// `detail`, and the flow stays where it was: the same challenge, no attempt used.
    static func assertRefusedAsTooCostly(_ api: API, _ page: Data, _ detail: String,
                                         file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try XCTUnwrap(api.last?.challenge, file: file, line: line)
        let r = try api.uploadPages([page])
        XCTAssertEqual(r.status, 413, String(decoding: r.raw.prefix(400), as: UTF8.self), file: file, line: line)
        XCTAssertEqual(r.error?.longErrorCode, 1102, file: file, line: line)
        XCTAssertEqual(r.error?.errorString, "The upload's images are too large to analyse: send fewer or smaller images " + detail,
                       file: file, line: line)
        let now = try XCTUnwrap(try api.current().challenge, file: file, line: line)
        XCTAssertEqual(now.challengeID, before.challengeID, file: file, line: line)
        XCTAssertEqual(now.attemptsLeft, before.attemptsLeft, file: file, line: line)
    }
}
