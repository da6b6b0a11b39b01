import DocumentReader
import FaceKit
import Foundation
import IDVCore
import IDVCrypto
@testable import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVReaders
@testable import IDVStoreSQLite
import IDVTestSupport
import IDVServerTestSupport
import IDVTools
import XCTest

/// The contract between the readers, the one judge and the payloads: the real adapters' evidence
/// through `WorkflowPolicy` and `IDVReports`, and the four server bugs issue #15 found (each test
/// failed on the code before the evidence redesign).
final class EvidenceContractTests: XCTestCase {
    /// A TD3 specimen page (IDVTools), PNG.
    static func specimenPage(expiry: String = "340415") throws -> Data {
        let id = SpecimenIdentity(documentCode: "P<", issuingState: "UTO", surname: "ERIKSSON", givenNames: "ANNA MARIA",
                                  documentNumber: "L898902C3", nationality: "UTO", birthDate: "740812", sex: "F",
                                  expiryDate: expiry, optionalData: "ZE184226B")
        return try Raster.encodePNG(try SpecimenGenerator.render(id, format: .td3).image)
    }

    /// A TD1 card (IDVTools), its two sides as the KYC upload sends them (front, back), JPEG: the front
    /// prints `frontSurname`, the back's MRZ the identity's surname.
    static func cardSides(frontSurname: String = "ERIKSSON") throws -> [Data] {
        let id = SpecimenIdentity(documentCode: "I<", issuingState: "UTO", surname: "ERIKSSON", givenNames: "ANNA MARIA",
                                  documentNumber: "D23145890", nationality: "UTO", birthDate: "740812", sex: "F",
                                  expiryDate: "340415")
        var front = id
        front.surname = frontSurname
        func jpeg(_ s: Specimen) throws -> Data { try DocumentImage(rgb: s.image).jpeg(maxDimension: 10_000, quality: 92) }
        return [try jpeg(try SpecimenGenerator.render(front, format: .td1, side: .front)),
                try jpeg(try SpecimenGenerator.render(id, format: .td1, side: .back))]
    }

    /// #22: the name cross-check runs on TD1 cards too, from the front the upload carries. Through the
    /// production reader and the one policy: a front whose surname differs from the MRZ's is WARNING
    /// with the surname named (a sentence from the wording table); the same card with its own front
    /// passes the check and is VALID.
    func testCardFrontNameCrossCheckThroughThePolicy() throws {
        var options = DocumentReaderOptions()
        options.detectPortrait = false
        let reader = DocumentReaderAdapter(options: options)
        var policy = WorkflowPolicy()
        policy.acceptSpecimenDocuments = true   // the pages are ICAO specimens (UTO)
        let today = WorkflowPolicy.utcDay(Int(Date().timeIntervalSince1970))
        let same = try reader.read(pages: try Self.cardSides())
        XCTAssertEqual(same.checks.first { $0.id == .namesMatchVisualZone }?.result, .passed)
        let ok = IDVReports.documentDetails(same, judged: policy.judge(same, today: today, needsPortrait: false)).responseData
        XCTAssertEqual(ok.overallStatus, .valid, "\(ok.errors) \(ok.warnings)")
        let other = try reader.read(pages: try Self.cardSides(frontSurname: "ERIKSEN"))
        XCTAssertEqual(other.checks.first { $0.id == .namesMatchVisualZone }?.result, .failed)
        let warned = IDVReports.documentDetails(other, judged: policy.judge(other, today: today, needsPortrait: false)).responseData
        XCTAssertEqual(warned.overallStatus, .other("WARNING"), "\(warned.errors)")
        XCTAssertTrue(warned.warnings.contains { $0.contains("surname") && $0.contains("ERIKSSON") && $0.contains("ERIKSEN") }, "\(warned.warnings)")
    }

    /// Bug 1: every real report carried two expiry checks — the reader's "Document not expired" was
    /// not recognised by the report builder, which appended its own `document_not_expired`. Now the
    /// reader's typed check is the only one, in both seed shapes, and follows the policy's verdict.
    func testRealReportCarriesExactlyOneExpiryCheck() throws {
        var options = DocumentReaderOptions()
        options.detectPortrait = false
        let reader = DocumentReaderAdapter(options: options)
        var policy = WorkflowPolicy()
        policy.acceptSpecimenDocuments = true   // the pages are ICAO specimens (UTO)
        for (expiry, result) in [("340415", DocumentCheckResult.passed), ("150415", .failed)] {
            let doc = try reader.read(pages: [try Self.specimenPage(expiry: expiry)])
            let judged = policy.judge(doc, today: WorkflowPolicy.utcDay(Int(Date().timeIntervalSince1970)), needsPortrait: false)
            let details = IDVReports.documentDetails(doc, judged: judged).responseData
            let expiryChecks = details.checksPerformed.filter { $0.checkName.lowercased().contains("expir") && !$0.checkName.contains("check digit") }
            XCTAssertEqual(expiryChecks.map(\.checkName), ["Document not expired"], "\(details.checksPerformed.map(\.checkName))")
            XCTAssertEqual(expiryChecks.first?.result, result)
            XCTAssertEqual(expiryChecks.first?.category, "Data")
            let scan = IDVReports.additionalScan(doc, judged: judged, withImages: false).documentStatus
            XCTAssertEqual(scan.checksPerformed.filter { $0.checkName.lowercased().contains("expir") && !$0.checkName.contains("check digit") }.count, 1)
            // The check names on the wire are the wording table's, one per reader check id.
            XCTAssertEqual(details.checksPerformed.map(\.checkName), doc.checks.map { DocumentWording.name($0.id) })
            if result == .failed {
                XCTAssertEqual(details.overallStatus, .invalid)
                XCTAssertEqual(details.errors, ["The document has expired (2015-04-15)."])
            }
        }
    }

    /// Bug 2: the frame rate the SDK sends (`fps`) was dropped, so every capture was judged as 10 fps.
    /// The engine now hands it to the analyser, refuses a malformed one, and audits the rate judged at.
    func testTheClientsFrameRateReachesTheAnalyser() throws {
        final class Rates: @unchecked Sendable { let lock = NSLock(); var seen: [Double?] = [] }
        struct RateRecorder: SelfieAnalysing {
            let inner: TestDoubleSelfieAnalyser
            let rates: Rates
            func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
                inner.issueChallenge(now: now, durationSeconds: durationSeconds, deadlineSeconds: deadlineSeconds)
            }
            func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                         challenge: LivenessChallenge?) throws -> SelfieEvidence {
                rates.lock.lock(); rates.seen.append(framesPerSecond); rates.lock.unlock()
                return try inner.analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
            }
        }
        let rates = Rates()
        let server = try WorkflowServer(selfies: RateRecorder(inner: try TestDoubleSelfieAnalyser(), rates: rates))
        let api = try server.loggedIn("fay")
        XCTAssertEqual(try api.startFlow("idv.postlogin.optin").challenge?.name, "getPassword")
        XCTAssertEqual(try api.answer(["password": .string(WorkflowServer.password)]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "uploadIDVSelfieFrames")
        let frame = try TestImages.obamaSelfie().base64EncodedString()
        // A frame rate that is not a positive number is refused; nothing is analysed.
        let bad = try api.answer(["frames": [.string(frame), .string(frame)], "fps": -3], route: "/v1/session/upload")
        XCTAssertEqual(bad.envelope?.error?.longErrorCode, 1001)
        let ok = try api.answer(["frames": [.string(frame), .string(frame)], "fps": 30], route: "/v1/session/upload")
        XCTAssertEqual(ok.envelope?.challenge?.name, "onIDVOptInCapturedFrameConfirmation")
        rates.lock.lock(); let seen = rates.seen; rates.lock.unlock()
        XCTAssertEqual(seen, [30], "analysed once, at the client's 30 fps")
        let verified = try server.audit().filter { $0.action == "idv.selfie_verified" }
        XCTAssertEqual(verified.last?.details["frames_per_second"]?.doubleValue, 30)
    }

    /// Bug 2, the real adapter: FaceKit judges the capture at the rate given (its timing of blinks,
    /// face-lost gaps and challenges), and the evidence says which.
    func testFaceKitAdapterJudgesAtTheGivenFrameRate() throws {
        let dir = IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures/selfie/katie_live")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jpg") }.sorted()
        guard names.count >= 10 else { throw TestData.missing("selfie fixture \(dir.path)") }
        let frames = try names.map { try Data(contentsOf: dir.appendingPathComponent($0)) }
        let verifier: FaceKitSelfieAnalyser
        do { verifier = try FaceKitSelfieAnalyser.production(policy: WorkflowPolicy()) } catch {
            throw TestData.missing("dlib models (run scripts/bootstrap): \(error)")
        }
        let at30 = try verifier.analyze(frames: frames, framesPerSecond: 30, against: .none, challenge: nil)
        XCTAssertEqual(at30.framesPerSecond, 30)
        XCTAssertEqual(verifier.analyzer(framesPerSecond: 30).configuration.frameRate, 30)
        XCTAssertEqual(try verifier.analyze(frames: Array(frames.prefix(12)), framesPerSecond: nil, against: .none, challenge: nil).framesPerSecond, 10)
        XCTAssertEqual(at30.frameCount, frames.count)
    }

    /// Bug 3: the selfie analysis was memoised under a fixed key, not under the reference it was
    /// computed against. Here the user's template is replaced while the upload is analysed (a
    /// concurrent re-enrolment): the verdict must be against the template that is current when the
    /// answer commits, not the one `prepare` saw.
    func testSelfieVerdictIsAgainstTheTemplateCurrentAtCommit() throws {
        final class Swap: @unchecked Sendable {
            let lock = NSLock()
            var armed = false
            var store: SQLiteStore?
            var vault: TemplateVault?
            var calls = 0
        }
        struct SwappingVerifier: SelfieAnalysing {
            let inner: TestDoubleSelfieAnalyser
            let swap: Swap
            func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge {
                inner.issueChallenge(now: now, durationSeconds: durationSeconds, deadlineSeconds: deadlineSeconds)
            }
            func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                         challenge: LivenessChallenge?) throws -> SelfieEvidence {
                let e = try inner.analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
                swap.lock.lock(); defer { swap.lock.unlock() }
                swap.calls += 1
                if swap.armed, let store = swap.store, let vault = swap.vault, let t = try store.biometricTemplate(userID: "sam") {
                    // Someone else's face enrolled for the user, while this capture was being analysed.
                    swap.armed = false
                    try store.saveBiometricTemplate(BiometricTemplateRecord(
                        userID: "sam", sealed: vault.sealTemplate(TestDoubleSelfieAnalyser.descriptor(2), userID: "sam"),
                        model: t.model, consentID: t.consentID, createdAt: t.createdAt + 1))
                }
                return e
            }
        }
        let swap = Swap()
        let server = try WorkflowServer(selfies: SwappingVerifier(inner: try TestDoubleSelfieAnalyser(), swap: swap))
        swap.store = server.store
        swap.vault = server.vault
        let api = try server.loggedIn("sam")
        XCTAssertEqual(try api.optIn(frame: try TestImages.obamaSelfie()).status.statusCode, 100)
        swap.lock.lock(); swap.armed = true; swap.calls = 0; swap.lock.unlock()
        XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "memo"]).challenge?.name,
                       "getIDVSelfieProcessStartConfirmation")
        let e = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).event)
        let r = try e.payload.decode(ServerBiometricAuthenticationResult.self)
        XCTAssertEqual(r.biometricResult?.displayText, .notMatched, "judged against the replaced template, not the memo of the old one")
        swap.lock.lock(); XCTAssertEqual(swap.calls, 2, "analysed again against the new reference"); swap.lock.unlock()
    }

    /// Bug 4: server biometric authentication sealed and stored a copy of the selfie's descriptor,
    /// which it then deleted (or kept for the retention period). It never needs one.
    func testServerBiometricStoresNoDescriptorCopy() throws {
        let server = try WorkflowServer(["idv.media_retention_seconds": "3600"])
        let api = try server.loggedIn("ned")
        XCTAssertEqual(try api.optIn(frame: try TestImages.obamaSelfie()).status.statusCode, 100)
        let before = try server.store.query("SELECT count(*) FROM idv_media WHERE kind = 'embedding'").first?[0].int ?? -1
        XCTAssertEqual(try api.startFlow("idv.postlogin.server_biometric", ["reason": "copy"]).challenge?.name,
                       "getIDVSelfieProcessStartConfirmation")
        let e = try XCTUnwrap(try api.captureSelfie(try TestImages.obamaSelfie()).event)
        XCTAssertEqual(try e.payload.decode(ServerBiometricAuthenticationResult.self).biometricResult?.displayText, .matched)
        XCTAssertEqual(try server.store.query("SELECT count(*) FROM idv_media WHERE kind = 'embedding'").first?[0].int, before,
                       "no descriptor copy sealed for server biometric authentication")
        // The seed's spelling of the result criteria (seed 002 §6.2).
        XCTAssertEqual(try e.payload.decode(ServerBiometricAuthenticationResult.self).biometricResult?.resultCriteria, .faceMatch)
    }
}
