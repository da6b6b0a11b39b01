import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVHTTP
@testable import IDVStoreSQLite
import IDVTestSupport
import IDVServerTestSupport
import XCTest

/// One pass per request (#16): a selfie upload matches its route once, reads and opens its session
/// once, has its frames analysed once and outside the write transaction, and reads the template
/// once for the analysis (the transaction reads the row again only to check it did not change).
final class OnePassTests: XCTestCase {
    /// The real test double, recording what the store was doing while the frames were analysed.
    final class ProbingSelfies: SelfieAnalysing, @unchecked Sendable {
        let inner: TestDoubleSelfieAnalyser
        var store: SQLiteStore?
        private let lock = NSLock()
        private(set) var analyses: [(frames: Int, inTransaction: Bool)] = []
        init() throws { inner = try TestDoubleSelfieAnalyser() }

        func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                     challenge: LivenessChallenge?) throws -> SelfieEvidence {
            lock.lock(); analyses.append((frames.count, store?.isInTransaction ?? true)); lock.unlock()
            return try inner.analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
        }

        func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
            inner.issueChallenge(now: now, durationSeconds: durationSeconds, deadlineSeconds: deadlineSeconds)
        }
    }

    func testSelfieUploadIsOnePass() throws {
        let selfies = try ProbingSelfies()
        let server = try WorkflowServer(selfies: selfies)
        selfies.store = server.store
        let api = try server.loggedIn("una")
        XCTAssertEqual(try api.optIn(frame: try TestImages.obamaSelfie()).status.statusCode, 100)
        let start = try XCTUnwrap(try api.startFlow("idv.postlogin.server_biometric", ["reason": "one pass"]).challenge)
        XCTAssertEqual(start.name, "getIDVSelfieProcessStartConfirmation")
        XCTAssertEqual(try api.answer(["is_confirm": true, "use_back_camera": false]).challenge?.name, "uploadIDVSelfieFrames")

        let frame = try TestImages.obamaSelfie2()
        let lookupsBefore = server.app.http.routeLookups
        let analysesBefore = selfies.analyses.count
        server.store.resetStatementCounts()
        let event = try XCTUnwrap(try api.uploadFrames([frame, frame, frame]).event)
        let counts = server.store.statementCounts()

        XCTAssertEqual(event.name, "onIDVServerBiometricAuthenticationResult")
        XCTAssertEqual(try event.payload.decode(ServerBiometricAuthenticationResult.self).biometricResult?.displayText, .matched)
        XCTAssertEqual(server.app.http.routeLookups - lookupsBefore, 1, "the route is looked up once per request")
        let sessionReads = counts.statements.filter { $0.key.contains("FROM sessions WHERE token_hash") }.values.reduce(0, +)
        XCTAssertEqual(sessionReads, 1, "the session row is read once: \(counts.statements)")
        XCTAssertEqual(counts.sessionStatesOpened, 1, "the sealed session state is opened once")
        let templateReads = counts.statements.filter { $0.key.contains("FROM biometric_templates") }.values.reduce(0, +)
        XCTAssertEqual(templateReads, 2, "one template read for the analysis, one in the transaction to see it unchanged: \(counts.statements)")
        let analyses = selfies.analyses.dropFirst(analysesBefore)
        XCTAssertEqual(analyses.count, 1, "the frames are analysed once")
        XCTAssertEqual(analyses.first?.frames, 3, "all frames, decoded from base64 once, reach the analyser")
        XCTAssertEqual(analyses.first?.inTransaction, false, "analysis runs before the write transaction")
    }
}
