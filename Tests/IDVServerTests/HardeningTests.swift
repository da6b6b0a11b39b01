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
import XCTest
import IDVTestSupport
import IDVServerTestSupport

/// Defects found after the server core and the IDV flows merged: personal data in clear at rest,
/// flow writes outside the session CAS, dangling flow runs, expired sessions never purged.
final class HardeningTests: XCTestCase {

    // MARK: Raw database reading (the sqlite3 C API through a second connection)

    /// Every (table.column) whose stored text or blob contains one of `needles` (raw bytes).
    static func plaintextHits(dbPath: String, keyFile: String, needles: [String: [UInt8]]) throws -> [String] {
        let raw = try SQLiteStore(path: dbPath, keyFile: keyFile)
        defer { raw.close() }
        var hits: [String] = []
        let tables = try raw.query("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0].text }
        XCTAssertTrue(tables.contains("sessions") && tables.contains("idv_media"), "\(tables)")
        for t in tables {
            let cols = try raw.query("SELECT name FROM pragma_table_info(?)", [.text(t)]).compactMap { $0[0].text }
            for row in try raw.query("SELECT * FROM \"\(t)\"") {
                for (i, v) in row.enumerated() {
                    let bytes: [UInt8]
                    switch v {
                    case let .text(s): bytes = Array(s.utf8)
                    case let .bytes(b): bytes = b
                    default: continue
                    }
                    for (name, n) in needles where contains(bytes, n) { hits.append("\(t).\(cols[i]): \(name)") }
                }
            }
        }
        return hits
    }

    static func contains(_ hay: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, hay.count >= needle.count else { return false }
        let first = needle[0]
        var i = 0
        while i <= hay.count - needle.count {
            if hay[i] == first, Array(hay[i..<(i + needle.count)]) == needle { return true }
            i += 1
        }
        return false
    }

    // MARK: 1. Session state sealed at rest

    func testDocumentUploadLeavesNoImageOrPersonalDataInClearAndFlowCompletes() throws {
        let server = try WorkflowServer()
        let page = try TestImages.obamaPassportPage(), selfie = try TestImages.obamaSelfie()
        let keyFile = server.config.keys.resolvedKeyFile(dbPath: server.config.dbPath)
        // The document number and surname the (scripted) reader returns; base64 of a JPEG starts
        // "/9j/". Binary JPEG: the first 10 bytes of the two uploaded files (SOI, APPn marker and
        // its header) — a 3-byte FF D8 FF alone would also turn up by chance in megabytes of
        // ciphertext, 10 bytes do not.
        let needles: [String: [UInt8]] = [
            "document number": Array("P1234567".utf8), "surname": Array("OBAMA".utf8), "given name": Array("BARACK".utf8),
            "base64 JPEG": Array("/9j/".utf8), "JPEG page bytes": Array(page.prefix(10)), "JPEG selfie bytes": Array(selfie.prefix(10)),
        ]
        let api = try server.loggedIn("ann")
        XCTAssertEqual(try api.startFlow("idv.postlogin.kyc", ["reason": "Annual review"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        let details = try XCTUnwrap(try api.scanDocument(page).challenge)
        XCTAssertEqual(details.name, "getIDVConfirmDocumentDetails")
        // The client does see the data (it is the challenge payload) …
        XCTAssertEqual(try details.payload.decode(DocumentDetails.self).responseData.documentInfo.documentNumber, "P1234567")
        // … but nothing stored shows it.
        XCTAssertEqual(try Self.plaintextHits(dbPath: server.config.dbPath, keyFile: keyFile, needles: needles), [])

        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        let sc = try XCTUnwrap(try api.captureSelfie(selfie).challenge)
        XCTAssertEqual(try sc.payload.decode(SelfieDetails.self).responseData.biometricResult.displayText, .matched)
        XCTAssertEqual(try Self.plaintextHits(dbPath: server.config.dbPath, keyFile: keyFile, needles: needles), [])
        // Resume after "reconnect": the sealed state opens and still holds the same challenge.
        XCTAssertEqual(try api.current().challenge?.challengeID, sc.challengeID)
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).challenge?.name, "getIDVBiometricOptInConsent")
        let done = try XCTUnwrap(try api.answer(["is_opt_in": true]).event)
        XCTAssertEqual(done.name, "onIDVActivatedCustomerKYCResponse")
        XCTAssertTrue(try done.payload.decode(KYCResponse.self).isSuccess)
        XCTAssertEqual(try Self.plaintextHits(dbPath: server.config.dbPath, keyFile: keyFile, needles: needles), [])
    }

    func testSealedSessionStateIsBoundToItsSession() throws {
        let server = try WorkflowServer()
        let a = try server.loggedIn("bea")
        try a.startFlow("idv.postlogin.kyc")
        let b = server.client()
        try b.startSession()
        let aID = try XCTUnwrap(a.last?.session?.sessionID), bID = try XCTUnwrap(b.last?.session?.sessionID)
        let raw = try SQLiteStore(path: server.config.dbPath, keyFile: server.config.keys.resolvedKeyFile(dbPath: server.config.dbPath))
        defer { raw.close() }
        let stored = try raw.query("SELECT typeof(state) FROM sessions WHERE session_id = ?", [.text(aID)])
        XCTAssertEqual(stored.first?[0].text, "blob")
        // A's sealed state copied onto B's row does not open: B is refused with 1030, A unaffected.
        try raw.query("UPDATE sessions SET state = (SELECT state FROM sessions WHERE session_id = ?) WHERE session_id = ?", [.text(aID), .text(bID)])
        let rb = try b.current()
        XCTAssertEqual(rb.status, 500)
        XCTAssertEqual(rb.error?.longErrorCode, 1030)
        XCTAssertEqual(try a.current().challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        // Another key cannot open it either.
        let otherKey = server.dir.appendingPathComponent("other.key").path
        let other = try SQLiteStore(path: server.config.dbPath, keyFile: otherKey)
        defer { other.close() }
        XCTAssertThrowsError(try other.session(tokenHash: Crypto.sha256Hex(try XCTUnwrap(a.token))))
    }

    // MARK: 2. One transaction per answer: a lost CAS leaves nothing behind

    final class Race: @unchecked Sendable {
        let lock = NSLock()
        var replies: [Int: API.Reply] = [:]
        var errors: [Error] = []
    }

    func testConcurrentAnswersOnTwoServersOverOneFileExactlyOneWinsAndTheLoserLeavesNoRows() throws {
        let server = try WorkflowServer()
        let keyFile = server.config.keys.resolvedKeyFile(dbPath: server.config.dbPath)
        // A second server on the same SQLite file (as a second idvd process would be): its own
        // connection, engine and in-process locks.
        let storeB = try SQLiteStore(path: server.config.dbPath, keyFile: keyFile)
        let appB = IDVServerApp(config: server.config, store: storeB, registry: .idv(IDVServices(
            documents: try TestDoubleDocumentReader(), selfies: try TestDoubleSelfieAnalyser(), vault: server.vault)), crypto: Sodium())
        let portB = try appB.start()
        defer { appB.stop() }

        let api = try server.loggedIn("ken")
        try api.startFlow("idv.postlogin.kyc")
        try api.scanDocument(try TestImages.obamaPassportPage())
        try api.answer(["is_confirm": true])
        try api.captureSelfie(try TestImages.obamaSelfie())
        let consent = try XCTUnwrap(try api.answer(["action": "continue-flow"]).challenge)
        XCTAssertEqual(consent.name, "getIDVBiometricOptInConsent")
        let apiB = API(port: portB)
        apiB.token = api.token
        apiB.last = api.last

        // A third connection holds the write lock while both answers arrive, so both read the
        // session at the same version before either can commit; then it lets go.
        let holder = try SQLiteStore(path: server.config.dbPath, keyFile: keyFile)
        defer { holder.close() }
        let held = DispatchSemaphore(value: 0)
        let holderDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? holder.withTransaction { held.signal(); Thread.sleep(forTimeInterval: 1.5) }
            holderDone.signal()
        }
        held.wait()
        let race = Race()
        let group = DispatchGroup()
        for (i, client) in [api, apiB].enumerated() {
            let c = UncheckedBox(client)
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let r = try c.value.answer(["is_opt_in": true], to: consent)
                    race.lock.lock(); race.replies[i] = r; race.lock.unlock()
                } catch {
                    race.lock.lock(); race.errors.append(error); race.lock.unlock()
                }
            }
        }
        group.wait()
        holderDone.wait()
        XCTAssertTrue(race.errors.isEmpty, "\(race.errors)")
        let replies = race.replies.values
        let winners = replies.filter { $0.event?.name == "onIDVActivatedCustomerKYCResponse" }
        let losers = replies.filter { $0.error != nil }
        XCTAssertEqual(winners.count, 1, "\(replies.map { String(decoding: $0.raw, as: UTF8.self).prefix(200) })")
        XCTAssertEqual(losers.count, 1)
        XCTAssertEqual(losers.first?.error?.longErrorCode, 1005, "\(String(describing: losers.first?.error))")
        XCTAssertEqual(losers.first?.status, 409)

        // Only the winner's writes exist.
        XCTAssertEqual(try server.store.consents(userID: "ken").count, 1)
        XCTAssertNotNil(try server.store.biometricTemplate(userID: "ken"))
        let actions = try server.audit().map(\.action)
        XCTAssertEqual(actions.filter { $0 == "idv.consent_recorded" }.count, 1, "\(actions)")
        XCTAssertEqual(actions.filter { $0 == "idv.template_created" }.count, 1, "\(actions)")
        XCTAssertEqual(actions.filter { $0 == "idv.transaction" }.count, 1, "\(actions)")
        XCTAssertNil(try server.store.verifyAuditChain())
    }

    // MARK: 3. A refused flow start leaves no flow run

    func testRefusedFlowStartLeavesNoOpenFlowRun() throws {
        let server = try WorkflowServer()
        let api = try server.loggedIn("dan")
        let bad = try api.startFlow("idv.postlogin.document_scan", ["reason": ""])
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.error?.longErrorCode, 1001)
        let open = try server.store.query("SELECT count(*) FROM flow_runs WHERE ended_at IS NULL AND flow LIKE 'idv.%'")
        XCTAssertEqual(open.first?[0].int, 0)
        XCTAssertFalse(try server.audit().contains { $0.action == "idv.flow_started" })
        // Nothing changed: the session can start the flow with a valid reason.
        XCTAssertEqual(try api.startFlow("idv.postlogin.document_scan", ["reason": "Proof of address"]).challenge?.name,
                       "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(try server.store.query("SELECT count(*) FROM flow_runs WHERE ended_at IS NULL AND flow LIKE 'idv.%'").first?[0].int, 1)
    }

    // MARK: 4. Expired sessions purged, their runs closed as expired

    func testAdminPurgeExpiredClosesTheOpenRunAsExpiredAndDropsItsMedia() throws {
        // The CLI sweeps with the wall clock: this server runs on it too.
        // Idle 6 s: max's gaps (one of them spans an `idvd admin` process) stay well inside it.
        let server = try WorkflowServer(["session.idle_seconds": "6", "idv.media_retention_seconds": "3600"], wallClock: true)
        let api = try server.loggedIn("eve")
        try api.startFlow("idv.postlogin.kyc")
        XCTAssertEqual(try api.scanDocument(try TestImages.obamaPassportPage()).challenge?.name, "getIDVConfirmDocumentDetails")
        let sessionID = try XCTUnwrap(api.last?.session?.sessionID)
        let runID = try XCTUnwrap(try server.store.query("SELECT run_id FROM flow_runs WHERE user_id = 'eve' AND flow = 'idv.postlogin.kyc'").first?[0].text)
        XCTAssertGreaterThan(try server.store.mediaCount(runID: runID), 0)
        let txn = try XCTUnwrap(server.audit().first { $0.action == "idv.flow_started" }?.details["idv_audit_transaction_id"]?.stringValue)
        // A live session of another user is left alone.
        let other = try server.loggedIn("max")

        for _ in 0..<14 {   // eve idles past 6 s; max keeps using the session
            Thread.sleep(forTimeInterval: 0.5)
            XCTAssertEqual(try other.current().status, 200)
        }
        XCTAssertEqual(try api.current().error?.longErrorCode, 1003)
        XCTAssertEqual(try other.current().status, 200)
        let r = try IDVDBinary.run(["admin", "purge-expired", "--db", server.config.dbPath])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        let out = try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        XCTAssertEqual(out["flow_runs_closed"]?.intValue, 1)
        XCTAssertGreaterThanOrEqual(out["sessions"]?.intValue ?? 0, 1)

        let run = try XCTUnwrap(try server.store.query("SELECT outcome, ended_at, error_code FROM flow_runs WHERE run_id = ?", [.text(runID)]).first)
        XCTAssertEqual(run[0].text, "expired")
        XCTAssertNotNil(run[1].int)
        let t = try XCTUnwrap(server.transactions().first { $0["run_id"]?.stringValue == runID })
        XCTAssertEqual(t["outcome"]?.stringValue, "expired")
        XCTAssertEqual(t["idv_audit_transaction_id"]?.stringValue, txn)
        XCTAssertEqual(t["long_error_code"]?.intValue, 1003)
        XCTAssertEqual(try server.store.mediaCount(runID: runID), 0, "sealed media of the expired run are dropped despite the retention")
        XCTAssertEqual(try server.store.query("SELECT count(*) FROM sessions WHERE session_id = ?", [.text(sessionID)]).first?[0].int, 0)
        XCTAssertEqual(try api.current().error?.longErrorCode, 1004)
        XCTAssertEqual(try other.current().status, 200, "a live session is not purged")
        XCTAssertNil(try server.store.verifyAuditChain())
        // A second sweep finds nothing more.
        XCTAssertEqual(try server.app.engine.purgeExpired(), FlowEngine.PurgeReport(sessions: 0, flowRunsClosed: 0, mediaPurged: 0))
    }

    func testServeSweepsExpiredSessionsPeriodically() throws {
        let server = try ServerProcess(settings: ["session.idle_seconds": "2", "session.sweep_seconds": "1"])
        try server.start()
        let code = try server.createUser("fay")
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": "fay"])
        try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(try api.answer(["password": "correct horse 42"]).event?.name, "onUserLoggedIn")
        XCTAssertEqual(try api.startFlow("idv.postlogin.document_scan", ["reason": "Proof of address"]).challenge?.name,
                       "getIDVDocumentScanProcessStartConfirmation")
        let store = try SQLiteStore(path: server.dbPath)
        defer { store.close() }
        var outcome: String?
        for _ in 0..<40 {
            Thread.sleep(forTimeInterval: 0.25)
            outcome = try store.query("SELECT outcome FROM flow_runs WHERE flow = 'idv.postlogin.document_scan'").first?[0].text
            if outcome != nil { break }
        }
        XCTAssertEqual(outcome, "expired", server.serverLog())
        XCTAssertEqual(try api.current().error?.longErrorCode, 1004)
        XCTAssertTrue(server.serverLog().contains("\"msg\":\"expiry sweep\""), server.serverLog())
        XCTAssertEqual(server.stop(), 0)
    }
}

/// Hands a non-Sendable test object to another thread (the test joins before using it again).
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Issue 6: active liveness, selected by `idv.liveness_mode`, over a real `idvd` with FaceKit's
/// analyser and real frames. The committed selfie fixture katie_live (a live face that blinks and
/// moves a little, never opening the mouth) is live in passive mode and LIVENESS_FAILED with the
/// reason under a server challenge that asks for OPEN_MOUTH.
final class ActiveLivenessTests: XCTestCase {
    /// Logs in a fresh user on `server` and runs opt-in up to the selfie start; returns its challenge.
    func optInToSelfieStart(_ server: ServerProcess, _ user: String) throws -> (API, WireChallenge) {
        let code = try server.createUser(user)
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(try api.answer(["password": "correct horse 42"]).event?.name, "onUserLoggedIn")
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        let start = try XCTUnwrap(try api.answer(["password": "correct horse 42"]).challenge)
        XCTAssertEqual(start.name, "getIDVSelfieProcessStartConfirmation")
        return (api, start)
    }

    func testActiveModeIssuesAChallengeAndFramesWithoutItsActionsFailWhilePassiveModePasses() throws {
        try RealImages.requireModels()
        let katie = try RealImages.frames("katie_live")

        // Passive (default): no challenge in the payload; the fixture is live.
        let passive = try ServerProcess()
        try passive.start()
        let (p, pStart) = try optInToSelfieStart(passive, "pia")
        XCTAssertNil(pStart.payload["liveness_challenge"])
        XCTAssertEqual(try p.answer(["is_confirm": true, "use_back_camera": false]).challenge?.name, "uploadIDVSelfieFrames")
        let captured = try XCTUnwrap(try p.uploadFrames(katie).challenge)
        XCTAssertEqual(captured.name, "onIDVOptInCapturedFrameConfirmation", passive.serverLog())
        XCTAssertGreaterThanOrEqual(captured.payload["liveness_score"]?.intValue ?? 0, 50)
        XCTAssertEqual(passive.stop(), 0)

        // Active: the selfie start carries the server's challenge; the same frames fail with the reason.
        // (The loop below redraws the challenge until it holds OPEN_MOUTH — the redraw the user's
        // challenge budget bounds — so the budget is made large here.)
        let active = try ServerProcess(settings: ["idv.liveness_mode": "active", "idv.biometric_attempts": "40"])
        try active.start()
        var (a, aStart) = try optInToSelfieStart(active, "ada")
        // The server picks the actions at random (one head turn, and a blink or an open mouth).
        // katie_live blinks and moves her head a little but never opens her mouth, so take a
        // challenge with OPEN_MOUTH: restart the opt-in (resetAuthState) until the server issues one.
        func actionsOf(_ c: WireChallenge) -> [String] { c.payload["liveness_challenge"]?["actions"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        var restarts = 0
        while !actionsOf(aStart).contains("OPEN_MOUTH"), restarts < 30 {
            restarts += 1
            XCTAssertEqual(try a.call("POST", "/v1/session/reset").event?.name, "onAuthStateReset")
            XCTAssertEqual(try a.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
            aStart = try XCTUnwrap(try a.answer(["password": "correct horse 42"]).challenge)
        }
        XCTAssertTrue(actionsOf(aStart).contains("OPEN_MOUTH"), "30 challenges without OPEN_MOUTH (p = 2^-30)")
        let ch = try XCTUnwrap(aStart.payload["liveness_challenge"], "\(aStart.payload)")
        let nonce = try XCTUnwrap(ch["nonce"]?.stringValue)
        XCTAssertEqual(nonce.count, 32)
        let actions = try XCTUnwrap(ch["actions"]?.arrayValue).compactMap(\.stringValue)
        XCTAssertEqual(actions.count, 2)
        XCTAssertTrue(actions.allSatisfy { ["TURN_LEFT", "TURN_RIGHT", "BLINK", "OPEN_MOUTH"].contains($0) }, "\(actions)")
        XCTAssertEqual(ch["deadline_seconds"]?.intValue, 120)
        XCTAssertEqual(ch["duration_seconds"]?.intValue, 6)
        let upload = try XCTUnwrap(try a.answer(["is_confirm": true, "use_back_camera": false]).challenge)
        XCTAssertEqual(upload.payload["liveness_challenge"]?["nonce"]?.stringValue, nonce, "the upload shows the same challenge")
        let failed = try XCTUnwrap(try a.uploadFrames(katie).challenge)
        XCTAssertEqual(failed.name, "uploadIDVSelfieFrames", active.serverLog())
        XCTAssertEqual(failed.status?.statusMessage, "LIVENESS_FAILED")
        let reasons = try XCTUnwrap(failed.payload["liveness_reasons"]?.arrayValue).compactMap(\.stringValue)
        XCTAssertTrue(reasons.contains("CHALLENGE_NOT_MET"), "\(reasons)")
        // The recapture is asked with a new challenge (a challenge is single-use).
        let next = try XCTUnwrap(failed.payload["liveness_challenge"]?["nonce"]?.stringValue)
        XCTAssertNotEqual(next, nonce)
        XCTAssertEqual(failed.attemptsLeft, pStart.attemptsLeft - 1)
        XCTAssertEqual(active.stop(), 0)
        // The verdict is audited with the reason (codes only).
        let audit = try IDVDBinary.run(["admin", "audit", "--limit", "200", "--db", active.dbPath])
        let entries = try JSONDecoder().decode(JSONValue.self, from: audit.stdout)["entries"]?.arrayValue ?? []
        let verified = entries.filter { $0["action"]?.stringValue == "idv.selfie_verified" }
        XCTAssertEqual(verified.last?["details"]?["result"]?.stringValue, "LIVENESS_FAILED")
        XCTAssertTrue(verified.last?["details"]?["reasons"]?.arrayValue?.contains(.string("CHALLENGE_NOT_MET")) == true)
    }

    func testLivenessModeSettingIsValidated() throws {
        XCTAssertEqual(try ServerConfig.load(file: nil, environment: [:], overrides: [:]).engine.workflow.livenessMode, "passive")
        XCTAssertEqual(try ServerConfig.load(file: nil, environment: ["IDVD_IDV_LIVENESS_MODE": "ACTIVE"], overrides: [:]).engine.workflow.livenessMode, "active")
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.liveness_mode": "blink"]))
        XCTAssertTrue(ServerConfig.helpTable.contains("idv.liveness_mode"))
    }
}

/// The expensive work of an answer (image analysis) runs once, before the answer's store
/// transaction takes the write lock.
final class PrepareOutsideTransactionTests: XCTestCase {
    final class Calls: @unchecked Sendable {
        let lock = NSLock()
        var inTransaction: [Bool] = []
        var store: SQLiteStore?
    }

    struct RecordingSelfieVerifier: SelfieAnalysing {
        let inner: TestDoubleSelfieAnalyser
        let calls: Calls
        func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
            inner.issueChallenge(now: now, durationSeconds: durationSeconds, deadlineSeconds: deadlineSeconds)
        }
        func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                     challenge: LivenessChallenge?) throws -> SelfieEvidence {
            calls.lock.lock()
            let t = calls.store?.isInTransaction ?? true
            calls.inTransaction.append(t)
            calls.lock.unlock()
            return try inner.analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
        }
    }

    func testSelfieAnalysisRunsOnceAndOutsideTheStoreTransaction() throws {
        let calls = Calls()
        let server = try WorkflowServer(selfies: RecordingSelfieVerifier(inner: try TestDoubleSelfieAnalyser(), calls: calls))
        calls.store = server.store
        let api = try server.loggedIn("olu")
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        let frame = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).challenge)
        XCTAssertEqual(frame.name, "onIDVOptInCapturedFrameConfirmation")
        XCTAssertEqual(calls.inTransaction, [false], "analysed once, before the transaction")
        // A liveness failure is judged the same way (and asked again).
        XCTAssertEqual(try api.answer(["status": 1]).challenge?.name, "uploadIDVSelfieFrames")
        let again = try XCTUnwrap(try api.uploadFrames([try TestImages.printAttack()]).challenge)
        XCTAssertEqual(again.status?.statusMessage, "LIVENESS_FAILED")
        // Passive PAD cues are not shown to the device (no oracle, docs/LIMITS.md); they stay in the audit.
        XCTAssertNil(again.payload["liveness_reasons"])
        XCTAssertEqual(calls.inTransaction, [false, false])
    }
}

/// Active mode in the document flows (KYC), with an analyser double that reports which challenge
/// it was given: the server hands it the challenge it issued (never one from the client), and a
/// report for another nonce is LIVENESS_FAILED with the reason in the selfie details.
final class ActiveChallengeBindingTests: XCTestCase {
    final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var challenges: [LivenessChallenge?] = []
        var echoWrongNonce = false
    }

    struct ChallengeAwareVerifier: SelfieAnalysing {
        let inner: TestDoubleSelfieAnalyser
        let seen: Seen
        func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
            inner.issueChallenge(now: now, durationSeconds: durationSeconds, deadlineSeconds: deadlineSeconds)
        }
        func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                     challenge: LivenessChallenge?) throws -> SelfieEvidence {
            seen.lock.lock(); seen.challenges.append(challenge); let wrong = seen.echoWrongNonce; seen.lock.unlock()
            var v = try inner.analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: nil)
            v.challengeNonce = wrong ? String(repeating: "0", count: 32) : challenge?.nonce
            return v
        }
    }

    func testKYCSelfieIsJudgedAgainstTheServersChallengeOnly() throws {
        let seen = Seen()
        let server = try WorkflowServer(["idv.liveness_mode": "active"],
                                        selfies: ChallengeAwareVerifier(inner: try TestDoubleSelfieAnalyser(), seen: seen))
        let api = try server.loggedIn("kim")
        try api.startFlow("idv.postlogin.kyc")
        try api.scanDocument(try TestImages.obamaPassportPage())
        let start = try XCTUnwrap(try api.answer(["is_confirm": true]).challenge)
        XCTAssertEqual(start.name, "getIDVSelfieProcessStartConfirmation")
        let issued = try XCTUnwrap(try start.payload["liveness_challenge"]?.decode(LivenessChallenge.self))
        // The client names a challenge of its own choosing: ignored.
        let forged: JSONValue = ["nonce": "00", "actions": ["BLINK"], "duration_seconds": 60, "deadline_seconds": 3600, "expires_at": 4_000_000_000]
        XCTAssertEqual(try api.answer(["is_confirm": true, "liveness_challenge": forged]).challenge?.name, "uploadIDVSelfieFrames")
        let frame = try TestImages.obamaSelfie()
        // An analyser report for another nonce does not count as live.
        seen.lock.lock(); seen.echoWrongNonce = true; seen.lock.unlock()
        let failed = try XCTUnwrap(try api.answer(["frames": [.string(frame.base64EncodedString())], "liveness_challenge": forged],
                                                  route: "/v1/session/upload").challenge)
        XCTAssertEqual(try failed.payload.decode(SelfieDetails.self).responseData.biometricResult.displayText, .livenessFailed)
        XCTAssertEqual(failed.payload["response_data"]?["liveness_reasons"], ["CHALLENGE_NOT_EVALUATED"])
        XCTAssertNil(failed.payload["response_data"]?["analyze_liveness_response"], "no score on an attack verdict")
        XCTAssertEqual(seen.challenges, [issued], "the analyser got exactly the issued challenge")

        // Recapture: a new challenge, judged against that one.
        let restart = try XCTUnwrap(try api.answer(["action": "reinit-idv-selfie"]).challenge)
        let second = try XCTUnwrap(try restart.payload["liveness_challenge"]?.decode(LivenessChallenge.self))
        XCTAssertNotEqual(second.nonce, issued.nonce)
        seen.lock.lock(); seen.echoWrongNonce = false; seen.lock.unlock()
        try api.answer(["is_confirm": true])
        let ok = try XCTUnwrap(try api.uploadFrames([frame]).challenge)
        XCTAssertEqual(try ok.payload.decode(SelfieDetails.self).responseData.biometricResult.displayText, .matched)
        XCTAssertNil(ok.payload["response_data"]?["liveness_reasons"])
        XCTAssertEqual(seen.challenges, [issued, second])
    }
}
