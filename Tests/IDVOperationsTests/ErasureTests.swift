import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
@testable import IDVStoreSQLite
import IDVTools
import IDVTestSupport
import IDVServerTestSupport
import XCTest

/// Issue #37 item 1: erasing a person, through the relying-party API and `idvd admin erase-user`,
/// against a real SQLite file whose raw bytes (and its `-wal`) are searched afterwards.
final class ErasureTests: XCTestCase {
    /// Every byte of the database file and its WAL.
    static func rawBytes(_ db: String) throws -> Data {
        var d = try Data(contentsOf: URL(fileURLWithPath: db))
        if let wal = try? Data(contentsOf: URL(fileURLWithPath: db + "-wal")) { d += wal }
        return d
    }

    /// The forms a value is stored or could be stored in: as given, upper and lower case (ASCII/UTF-8).
    static func forms(_ s: String) -> [Data] {
        Set([s, s.uppercased(), s.lowercased()]).map { Data($0.utf8) }
    }

    /// A birth date in the forms it is stored or shown: YYMMDD (MRZ), YYYY-MM-DD, DD.MM.YYYY, YYYYMMDD.
    static func dateForms(_ iso: String) -> [Data] {
        let p = iso.split(separator: "-").map(String.init)
        guard p.count == 3 else { return forms(iso) }
        return [iso, p[0].suffix(2) + p[1] + p[2], "\(p[2]).\(p[1]).\(p[0])", p[0] + p[1] + p[2]].map { Data($0.utf8) }
    }

    /// The user goes through a KYC that the policy sends to review (images kept, a case open), and
    /// leaves a second KYC running in another session. Returns the document's fields the backend read.
    func personWithHistory(_ server: WorkflowServer, _ user: String, bank: RelyingPartyTests.Backend) throws -> [String: String] {
        let api = try server.loggedIn(user)
        XCTAssertEqual(try api.startFlow("idv.postlogin.kyc", ["reason": "Account opening"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(try api.scanDocument(try TestImages.obamaPassportPage()).challenge?.name, "getIDVConfirmDocumentDetails")
        try api.answer(["is_confirm": true])
        _ = try api.captureSelfie(try TestImages.obamaSelfie())
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).event?.error.longErrorCode, 1130, "under review")
        let list = try bank.call("GET", "/v1/rp/users/\(user)/verifications")
        let vid = try XCTUnwrap(list.body["items"]?.arrayValue?.first?["verification_id"]?.stringValue)
        let v = try bank.call("GET", "/v1/rp/verifications/\(vid)")
        let info = try XCTUnwrap(v.body["documents"]?.arrayValue?.first?["report"]?["document_info"])
        var fields: [String: String] = [:]
        for (k, value) in info.objectValue ?? [:] { if let s = value.stringValue, s.count >= 4 { fields[k] = s } }
        XCTAssertNotNil(fields["document_number"], "\(info)")
        // A second session with a KYC still running.
        let running = try server.loggedIn2(user)
        XCTAssertEqual(try running.startFlow("idv.postlogin.kyc", ["reason": "Limit increase"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        return fields
    }

    func testEraseThroughTheAPILeavesNoByteOfThePersonAndTheAuditVerifies() throws {
        let server = try WorkflowServer(["review.match_band": "0.25", "idv.media_retention_seconds": "86400"])
        let db = server.config.dbPath
        let bank = try RelyingPartyTests.createClient(db: db, scope: "read,links,erase", port: server.port)
        let reader = try RelyingPartyTests.createClient(db: db, scope: "read", port: server.port, name: "reader")
        let user = "erasable.person-7f3a91"
        let fields = try personWithHistory(server, user, bank: bank)
        let keeper = "kept.person-5521c0"
        _ = try server.loggedIn(keeper)
        XCTAssertEqual(try server.store.openReviewCaseCount(userID: user), 1)
        let before = try Self.rawBytes(db)
        XCTAssertNotNil(before.range(of: Data(user.utf8)), "the id is in the file before (the search is meaningful)")

        // Scope, unknown user.
        XCTAssertEqual(try reader.call("DELETE", "/v1/rp/users/\(user)").status, 403)
        let unknown = try bank.call("DELETE", "/v1/rp/users/nobody-here")
        XCTAssertEqual(unknown.status, 404)
        XCTAssertEqual(unknown.body["error"]?["long_error_code"], 1016)

        let erased = try bank.call("DELETE", "/v1/rp/users/\(user)")
        XCTAssertEqual(erased.status, 200, "\(erased.body)")
        let r = erased.body
        XCTAssertEqual(r["user_id"]?.stringValue, user)
        XCTAssertEqual(r["erased_by"]?.stringValue, "client:\(bank.clientID)")
        XCTAssertEqual(r["flow_runs_ended"], 1, "the running KYC ended first")
        XCTAssertEqual(r["review_cases_closed"], 1)
        XCTAssertEqual(r["erased"]?["user"], 1)
        XCTAssertEqual(r["erased"]?["review_cases"], 1)
        XCTAssertEqual(r["erased"]?["sessions"], 2)
        XCTAssertEqual(r["erased"]?["flow_runs"], 2)
        XCTAssertGreaterThan(r["erased"]?["kept_media"]?.intValue ?? 0, 0, "the images held for review")
        XCTAssertTrue(r["receipt_id"]?.stringValue?.hasPrefix("era_") ?? false)
        let subject = try XCTUnwrap(r["audit_subject"]?.stringValue)
        XCTAssertTrue(subject.hasPrefix("sub_"))

        // The same receipt the second time.
        let again = try bank.call("DELETE", "/v1/rp/users/\(user)")
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.body, r)
        XCTAssertEqual(try bank.call("GET", "/v1/rp/users/\(user)").status, 404)

        // The audit: still a valid chain, a tombstone naming only the pseudonym.
        XCTAssertNil(try server.store.verifyAuditChain())
        let audit = try server.audit()
        let tomb = try XCTUnwrap(audit.last { $0.action == "user.erased" })
        XCTAssertNil(tomb.userID)
        XCTAssertEqual(tomb.details["subject"]?.stringValue, subject)
        XCTAssertEqual(tomb.seq, r["audit_seq"]?.intValue)
        XCTAssertEqual(tomb.hash, r["audit_hash"]?.stringValue)
        XCTAssertFalse(audit.contains { $0.userID == user }, "no entry names the user")
        XCTAssertTrue(audit.contains { $0.userID == subject && $0.action == "idv.review_opened" }, "the history stays, pseudonymous")
        XCTAssertTrue(audit.contains { $0.userID == keeper }, "other users are named as before")

        // Not a byte of the person in the database file or its WAL.
        let raw = try Self.rawBytes(db)
        var needles: [(String, Data)] = Self.forms(user).map { ("user id", $0) }
        for (k, v) in fields {
            let forms = k.contains("birth") || k.contains("date") ? Self.dateForms(v) : Self.forms(v)
            needles += forms.map { (k, $0) }
        }
        XCTAssertGreaterThanOrEqual(needles.count, 4)
        for (what, n) in needles { XCTAssertNil(raw.range(of: n), "\(what) '\(String(decoding: n, as: UTF8.self))' still in the file") }
        XCTAssertNotNil(raw.range(of: Data(keeper.utf8)), "the other user is untouched")
        XCTAssertEqual((try? FileManager.default.attributesOfItem(atPath: db + "-wal")[.size] as? Int) ?? 0, 0, "the WAL was truncated")
    }

    func testEraseUserFromTheCLIAndAKillMidwayLeavesNothingHalfErased() throws {
        let server = try WorkflowServer(["review.match_band": "0.25", "idv.media_retention_seconds": "86400"], wallClock: true)
        let db = server.config.dbPath
        let bank = try RelyingPartyTests.createClient(db: db, scope: "read,links", port: server.port)
        let user = "cli.erasable-0b77d2"
        let fields = try personWithHistory(server, user, bank: bank)
        func rowsAbout() throws -> Int {
            try server.store.query("SELECT (SELECT count(*) FROM users WHERE user_id = '\(user)') + (SELECT count(*) FROM flow_runs WHERE user_id = '\(user)') "
                                   + "+ (SELECT count(*) FROM sessions WHERE user_id = '\(user)') + (SELECT count(*) FROM review_cases WHERE user_id = '\(user)')")[0][0].int ?? -1
        }
        let whole = try rowsAbout()
        XCTAssertGreaterThanOrEqual(whole, 6)
        // SIGKILL at growing delays: each time the person is either whole or wholly gone.
        var killedWhole = 0
        for delayMs in stride(from: 0, through: 400, by: 40) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: try IDVD.binary())
            p.arguments = ["admin", "erase-user", user, "--db", db]
            p.environment = ProcessInfo.processInfo.environment.merging(IDVD.testEnvironment) { _, n in n }
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(delayMs) * 1000)
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let n = try rowsAbout()
            XCTAssertTrue(n == 0 || n == whole, "half-erased after a kill at \(delayMs) ms: \(n) of \(whole) rows")
            if n == 0 { break }
            killedWhole += 1
            XCTAssertNil(try server.store.verifyAuditChain())
        }
        let r = try IDVDBinary.run(["admin", "erase-user", user, "--db", db])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        let receipt = try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        XCTAssertEqual(receipt["erased_by"], "admin")
        XCTAssertEqual(receipt["user_id"]?.stringValue, user)
        XCTAssertEqual(try rowsAbout(), 0)
        let second = try IDVDBinary.run(["admin", "erase-user", user, "--db", db])
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: second.stdout), receipt, "the same receipt")
        let unknown = try IDVDBinary.run(["admin", "erase-user", "never-was", "--db", db])
        XCTAssertNotEqual(unknown.status, 0)
        let verify = try IDVDBinary.run(["admin", "audit", "--verify", "--db", db])
        XCTAssertEqual(verify.status, 0, String(decoding: verify.stdout, as: UTF8.self))
        // The CLI scrubbed the file: the server process still holds it open, with secure_delete.
        let raw = try Self.rawBytes(db)
        XCTAssertNil(raw.range(of: Data(user.utf8)), "user id still in the file")
        for (k, v) in fields where k.contains("number") || k.contains("name") {
            XCTAssertNil(raw.range(of: Data(v.utf8)), "\(k) still in the file")
        }
        // The relying party reuses the id for a new person: that person is erasable too, with a receipt of their own.
        XCTAssertEqual(try IDVDBinary.run(["admin", "create-user", user, "--db", db]).status, 0)
        let again = try IDVDBinary.run(["admin", "erase-user", user, "--db", db])
        XCTAssertEqual(again.status, 0, String(decoding: again.stderr, as: UTF8.self))
        let newer = try JSONDecoder().decode(JSONValue.self, from: again.stdout)
        XCTAssertNotEqual(newer["receipt_id"], receipt["receipt_id"])
        XCTAssertEqual(newer["erased"]?["user"], 1)
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: try IDVDBinary.run(["admin", "erase-user", user, "--db", db]).stdout), newer,
                       "asking again answers the newest erasure's receipt")
        XCTAssertEqual(try rowsAbout(), 0)
        print("erase-user killed \(killedWhole) time(s) before it committed")
    }

    /// Several DELETEs of one user at once (each on its own connection): every one answers 200
    /// with the one receipt of the erasure that committed; the user is erased once (one
    /// tombstone), the running flow ended once, and the chain verifies.
    func testConcurrentErasuresOfOneUserAllAnswerTheOneReceipt() throws {
        let server = try WorkflowServer()
        let bank = try RelyingPartyTests.createClient(db: server.config.dbPath, scope: "read,erase", port: server.port)
        let user = "erased.twice-88c2d4"
        let running = try server.loggedIn(user)
        XCTAssertEqual(try running.startFlow("idv.postlogin.kyc", ["reason": "Account opening"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        let n = 12
        // Written under its lock by the concurrent callers, read after they all returned.
        final class Answers: @unchecked Sendable {
            let lock = NSLock()
            var items: [(Int, JSONValue)] = []
        }
        let box = Answers()
        let (port, credentials, clientID) = (server.port, bank.credentials, bank.clientID)
        // n threads (not concurrentPerform, which runs as many as there are cores) released together.
        let start = DispatchSemaphore(value: 0), group = DispatchGroup()
        for _ in 0..<n {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let own = RelyingPartyTests.Backend(http: LoopbackHTTPClient(port: port), credentials: credentials, clientID: clientID)
                start.wait()
                let r = (try? own.call("DELETE", "/v1/rp/users/\(user)")).map { ($0.status, $0.body) } ?? (-1, .null)
                box.lock.lock()
                box.items.append(r)
                box.lock.unlock()
            }
        }
        // And `idvd admin erase-user` in another process at the same time.
        final class CLIAnswer: @unchecked Sendable { var result: (status: Int32, stdout: Data, stderr: Data)? }
        let cli = CLIAnswer(), db = server.config.dbPath
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            start.wait()
            cli.result = try? IDVDBinary.run(["admin", "erase-user", user, "--db", db])
        }
        // Another connection holds the database's write lock while the requests arrive: each
        // finds the user there, then waits — in this process one erasure at a time, the CLI's on
        // the lock; the first to commit erases, the other finds the user gone inside its own
        // transaction (and the running flow already ended) and answers the stored receipt.
        let holder = try SQLiteStore(path: server.config.dbPath, keyFile: server.config.storeKeyFile(),
                                     previousKeyFiles: server.config.keys.resolvedPreviousKeyFiles)
        let locked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? holder.withTransaction {
                locked.signal()
                _ = release.wait(timeout: .now() + 30)
            }
            released.signal()
        }
        XCTAssertEqual(locked.wait(timeout: .now() + 10), .success)
        for _ in 0...n { start.signal() }
        Thread.sleep(forTimeInterval: 2)
        release.signal()
        XCTAssertEqual(released.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        let answers = box.items
        XCTAssertEqual(answers.map(\.0), Array(repeating: 200, count: n), "\(answers.map(\.1))")
        let receipt = try XCTUnwrap(answers.first?.1)
        XCTAssertEqual(receipt["user_id"]?.stringValue, user)
        for (_, body) in answers { XCTAssertEqual(body, receipt, "the same receipt") }
        let fromCLI = try XCTUnwrap(cli.result)
        XCTAssertEqual(fromCLI.status, 0, String(decoding: fromCLI.stderr, as: UTF8.self))
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: fromCLI.stdout), receipt, "the CLI's answer too")
        // The erasure that committed counts the flows it ended itself: 1, or 0 when the other
        // process's erasure ended the flow first (its ending is audited either way, once).
        XCTAssertTrue([0, 1].contains(receipt["flow_runs_ended"]?.intValue), "\(receipt)")
        let audit = try server.audit()
        XCTAssertEqual(audit.filter { $0.action == "user.erased" }.count, 1, "erased once")
        XCTAssertEqual(audit.filter { $0.action == "session.revoked" && $0.details["cause"] == "erasure" }.count, 1, "the running flow ended once")
        XCTAssertNil(try server.store.verifyAuditChain())
    }
}

extension WorkflowServer {
    /// A second logged-in session of an existing, active user (user id then password).
    func loggedIn2(_ user: String) throws -> API {
        let api = client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        let done = try api.answer(["password": .string(Self.password)])
        XCTAssertEqual(done.event?.name, "onUserLoggedIn", "\(String(describing: api.last))")
        return api
    }
}
