import FaceKit
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

/// Template vault (XChaCha20-Poly1305), key file, settings and the verdict/document policy.
final class WorkflowVaultTests: XCTestCase {
    func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-vault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: d) }
        return d
    }

    func testKeyFileCreatedOwnerOnlyAndReloadsTheSameKey() throws {
        let path = try tempDir().appendingPathComponent("k.key").path
        XCTAssertThrowsError(try TemplateVault.load(keyFile: path, createIfMissing: false))
        let v1 = try TemplateVault.load(keyFile: path, createIfMissing: true)
        let perms = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        XCTAssertEqual(perms, 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(text.count, 64)
        let v2 = try TemplateVault.load(keyFile: path, createIfMissing: false)
        XCTAssertEqual(v1.keyID, v2.keyID)
        let t: [Float] = (0..<128).map { Float($0) / 7 - 3 }
        XCTAssertEqual(try v2.openTemplate(v1.sealTemplate(t, userID: "u1"), userID: "u1"), t)
        try "zz".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try TemplateVault.load(keyFile: path, createIfMissing: false)) { e in
            guard case VaultError.badKeyFile = e else { return XCTFail("\(e)") }
        }
    }

    /// The SQLite store files are owner-only: real `idvd admin create-user` creates the database
    /// and its -wal/-shm with mode 0600 (was 0644), and an existing database file that group or
    /// others can read is refused with the path and the remedy (exit status ≠ 0, nothing opened).
    func testStoreFilesAreOwnerOnlyAndALooseDatabaseIsRefused() throws {
        let dir = try tempDir()
        let db = dir.appendingPathComponent("s.sqlite").path
        let created = try IDVDBinary.run(["admin", "create-user", "uma", "--db", db])
        XCTAssertEqual(created.status, 0, String(decoding: created.stderr, as: UTF8.self))
        // A second store on the file keeps the WAL and shared-memory files in place while we look.
        let store = try SQLiteStore(path: db)
        _ = try store.schemaVersion()
        // The key file lives apart from the database (KeyLocation: IDVD_KEY_DIR in these tests).
        let key = try KeyLocation.resolve(dbPath: db, configured: "").path
        XCTAssertFalse(FileManager.default.fileExists(atPath: db + ".key"), "no key beside the database")
        for path in ["", "-wal", "-shm"].map({ db + $0 }) + [key] {
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            XCTAssertEqual(mode, 0o600, "\(path) has mode \(String(mode ?? -1, radix: 8))")
        }
        store.close()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: db)
        XCTAssertThrowsError(try SQLiteStore(path: db)) { e in
            XCTAssertTrue("\(e)".contains(db) && "\(e)".contains("chmod 600"), "\(e)")
        }
        let refused = try IDVDBinary.run(["admin", "list-users", "--db", db])
        XCTAssertNotEqual(refused.status, 0)
        let message = String(decoding: refused.stderr, as: UTF8.self)
        XCTAssertTrue(message.contains(db) && message.contains("group or others"), message)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: db)[.posixPermissions] as? Int, 0o644, "the operator's file is not altered")
    }

    /// Real `idvd admin` on a database path that does not exist: every subcommand but create-user
    /// refuses with the path (exit 2) and creates nothing; create-user creates the database.
    func testAdminRefusesAMissingDatabaseExceptCreateUser() throws {
        let dir = try tempDir()
        let typo = dir.appendingPathComponent("typo.sqlite").path
        for sub in [["list-users"], ["reset-user", "x"], ["audit"], ["purge-expired"]] {
            let r = try IDVDBinary.run(["admin"] + sub + ["--db", typo])
            XCTAssertEqual(r.status, 2, "\(sub)")
            let message = String(decoding: r.stderr, as: UTF8.self)
            XCTAssertTrue(message.contains("no database at \(typo)"), message)
            XCTAssertFalse(FileManager.default.fileExists(atPath: typo), "\(sub) created the database")
            XCTAssertFalse(FileManager.default.fileExists(atPath: typo + ".key"), "\(sub) created a key file")
            XCTAssertFalse(FileManager.default.fileExists(atPath: try KeyLocation.defaultPath(dbPath: typo)), "\(sub) created a key file")
        }
        XCTAssertEqual(try IDVDBinary.run(["admin", "create-user", "ivy", "--db", typo]).status, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: typo))
        let listed = try IDVDBinary.run(["admin", "list-users", "--db", typo])
        XCTAssertEqual(listed.status, 0)
        XCTAssertTrue(String(decoding: listed.stdout, as: UTF8.self).contains("\"ivy\""))
    }

    func testSealedTemplateIsBoundToUserAndKeyAndDetectsTampering() throws {
        let v = try TemplateVault(key: Array(repeating: 7, count: 32))
        let other = try TemplateVault(key: Array(repeating: 8, count: 32))
        let t: [Float] = (0..<128).map { sin(Float($0)) }
        let box = v.sealTemplate(t, userID: "alice")
        XCTAssertEqual(box.nonce.count, 24)
        XCTAssertEqual(box.ciphertext.count, 128 * 4 + 16)
        XCTAssertNotEqual(v.sealTemplate(t, userID: "alice").nonce, box.nonce)
        XCTAssertEqual(try v.openTemplate(box, userID: "alice"), t)
        XCTAssertThrowsError(try v.openTemplate(box, userID: "bob")) { XCTAssertEqual($0 as? VaultError, .authenticationFailed) }
        XCTAssertThrowsError(try other.openTemplate(box, userID: "alice")) { XCTAssertEqual($0 as? VaultError, .wrongKey(v.keyID)) }
        var tampered = box
        tampered.ciphertext[5] ^= 1
        XCTAssertThrowsError(try v.openTemplate(tampered, userID: "alice")) { XCTAssertEqual($0 as? VaultError, .authenticationFailed) }
        var short = box
        short.ciphertext = Array(box.ciphertext.prefix(3))
        XCTAssertThrowsError(try v.open(short, associatedData: "template:alice"))
        XCTAssertThrowsError(try TemplateVault(key: [1, 2, 3]))
    }

    func testWorkflowSettingsLoadValidateAndAppearInHelp() throws {
        let c = try ServerConfig.load(file: nil, environment: ["IDVD_IDV_LIVENESS_THRESHOLD": "70"],
                                      overrides: ["idv.face_match_max_distance": "0.5", "idv.continue_anyway": "yes", "idv.selfie_attempts": "5"])
        XCTAssertEqual(c.engine.workflow.livenessThreshold, 70)
        XCTAssertEqual(c.engine.workflow.faceMatchMaxDistance, 0.5)
        XCTAssertTrue(c.engine.workflow.continueAnywayAfterNotMatched)
        XCTAssertEqual(c.engine.workflow.selfieAttempts, 5)
        // The default key file is not beside the database (KeyLocation); a configured one is used as is.
        XCTAssertFalse(c.keys.resolvedKeyFile(dbPath: "/x/idvd.sqlite").hasPrefix("/x/"), c.keys.resolvedKeyFile(dbPath: "/x/idvd.sqlite"))
        XCTAssertEqual(try KeyLocation.resolve(dbPath: "/x/idvd.sqlite", configured: "", environment: ["HOME": "/home/op"]).path
                        .hasPrefix("/home/op/.local/state/openidv/keys/idvd.sqlite-"), true)
        XCTAssertEqual(try KeyLocation.resolve(dbPath: "/x/idvd.sqlite", configured: "", environment: ["XDG_STATE_HOME": "/st", "HOME": "/h"]).path
                        .hasPrefix("/st/openidv/keys/"), true)
        XCTAssertEqual(try KeyLocation.resolve(dbPath: "/x/idvd.sqlite", configured: "/k/my.key", environment: [:]).path, "/k/my.key")
        XCTAssertThrowsError(try KeyLocation.resolve(dbPath: "/x/idvd.sqlite", configured: "", environment: [:]))
        for (k, v) in [("idv.liveness_threshold", "101"), ("idv.liveness_threshold", "0"), ("idv.face_match_max_distance", "-1"), ("idv.continue_anyway", "maybe"),
                       ("idv.selfie_attempts", "0"), ("idv.consent_text_version", "")] {
            XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: [k: v]), k)
        }
        XCTAssertTrue(ServerConfig.helpTable.contains("IDVD_IDV_FACE_MATCH_MAX_DISTANCE"))
        // Still configurable away from FaceKit's default.
        XCTAssertEqual(try ServerConfig.load(file: nil, environment: [:], overrides: [:]).engine.workflow.faceMatchMaxDistance, 0.55)
        XCTAssertEqual(try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.face_match_max_distance": "0.6"]).engine.workflow.faceMatchMaxDistance, 0.6)
    }

    func testVerdictAndDocumentPolicy() throws {
        var p = WorkflowPolicy()
        p.acceptSpecimenDocuments = true   // the documents below are ICAO specimens (UTO)
        func v(_ d: Double?, _ live: Int) -> SelfieEvidence {
            SelfieEvidence(livenessScore: live, match: d.map { FaceMatchEvidence(distance: $0, score: 0.5) }, frameCount: 2,
                           trackedFrameCount: 2, framesPerSecond: 10, bestFrameJPEG: nil, embedding: [])
        }
        func verdict(_ e: SelfieEvidence, _ r: MatchReference) -> BiometricVerdict { p.judge(e, reference: r, challenge: nil, now: 0).verdict }
        // One source of truth: the server's default is FaceKit's LFW-calibrated threshold (0.55).
        XCTAssertEqual(p.faceMatchMaxDistance, FaceMatchPolicy.lfwCalibratedThreshold)
        XCTAssertEqual(WorkflowPolicy.lfwCalibratedMaxDistance, FaceMatchPolicy.lfwCalibratedThreshold)
        XCTAssertEqual(p.faceMatchMaxDistance, 0.55)
        XCTAssertEqual(verdict(v(0.55, 50), .template(Data())), .matched)
        XCTAssertEqual(verdict(v(0.58, 99), .template(Data())), .notMatched)
        XCTAssertEqual(verdict(v(0.1, 49), .template(Data())), .livenessFailed)
        XCTAssertEqual(verdict(v(nil, 80), .none), .matched)
        XCTAssertEqual(verdict(v(nil, 80), .portrait(Data())), .notMatched)
        XCTAssertEqual(p.judge(v(nil, 80), reference: .portrait(Data()), challenge: nil, now: 0).reason, .noComparison)
        p.faceMatchMaxDistance = 0.5
        XCTAssertEqual(verdict(v(0.55, 90), .template(Data())), .notMatched)
        // An issued challenge the evidence does not name, or one past its deadline: LIVENESS_FAILED, score 0.
        let c = LivenessChallenge(nonce: "ab", actions: ["BLINK"], durationSeconds: 6, deadlineSeconds: 60, expiresAt: 100)
        let unevaluated = p.judge(v(0.3, 90), reference: .template(Data()), challenge: c, now: 50)
        XCTAssertEqual(unevaluated.verdict, .livenessFailed)
        XCTAssertEqual(unevaluated.reason, .challengeNotEvaluated)
        XCTAssertEqual(unevaluated.livenessScore, 0)
        XCTAssertEqual(unevaluated.cues, [.challengeNotEvaluated])
        var named = v(0.3, 90)
        named.challengeNonce = "ab"
        XCTAssertEqual(p.judge(named, reference: .template(Data()), challenge: c, now: 100).verdict, .matched)
        XCTAssertEqual(p.judge(named, reference: .template(Data()), challenge: c, now: 101).reason, .challengeExpired)
        XCTAssertEqual(p.judge(named, reference: .template(Data()), challenge: c, now: 101).resultCriteria, .liveness)

        let doc = DocumentEvidence(fields: DocumentFields(documentType: "P", format: "TD3", issuingState: "UTO", surname: "ERIKSSON",
                                                              givenNames: "ANNA MARIA", documentNumber: "L898902C3", dateOfExpiry: "2026-11-28"),
                                       checks: [], mrzValid: true, mrzCheckDigitsValid: true, portraitJPEG: nil, pageImages: [])
        func sentences(_ r: [DocumentReason]) -> [String] { r.map(DocumentWording.sentence) }
        XCTAssertEqual(p.judge(doc, today: "2026-11-28", needsPortrait: false).status, .valid)
        let expired = p.judge(doc, today: "2026-11-29", needsPortrait: false)
        XCTAssertEqual(expired.status, .invalid)
        XCTAssertEqual(expired.errors, [.expired])
        XCTAssertEqual(sentences(expired.errors), ["Document expired"])
        XCTAssertEqual(sentences(p.judge(doc, today: "2026-11-28", needsPortrait: true).errors), ["No portrait found"])
        var bad = doc
        bad.mrzCheckDigitsValid = false
        XCTAssertEqual(sentences(p.judge(bad, today: "2026-01-01", needsPortrait: false).errors), ["MRZ check digit failed"])
        // A check digit the reader showed failing is not reported twice.
        bad.checks = [CheckOutcome(.mrzCheckDigitDocumentNumber, .failed)]
        bad.findings = [.mrzError(detail: "document_number check digit fails: expected 7, found '3'")]
        XCTAssertEqual(sentences(p.judge(bad, today: "2026-01-01", needsPortrait: false).errors),
                       ["The MRZ did not check out: document_number check digit fails: expected 7, found '3'."])
        bad.checks = []
        bad.findings = []
        p.rejectFailedCheckDigits = false
        p.rejectExpiredDocuments = false
        XCTAssertEqual(p.judge(bad, today: "2030-01-01", needsPortrait: false).status, .valid)
        var warn = doc
        warn.findings = [.blurredMRZ]
        XCTAssertEqual(p.judge(warn, today: "2026-01-01", needsPortrait: false).status, .warning)
        var failedQuality = doc
        failedQuality.checks = [CheckOutcome(.noGlareOnMRZ, .failed, .saturatedFraction(0.2))]
        XCTAssertEqual(p.judge(failedQuality, today: "2026-01-01", needsPortrait: false).status, .warning)
        var failedMRZ = doc
        failedMRZ.checks = [CheckOutcome(.mrzReadable, .failed, .unclearCharacters(2))]
        XCTAssertEqual(p.judge(failedMRZ, today: "2026-01-01", needsPortrait: false).status, .invalid)
        // The reader's twin doubt (a K the check digit cannot tell from '<') is never upgraded to
        // VALID, and the seed 002 shape says WARNING with the wording table's sentence.
        var readerWarned = doc
        readerWarned.findings = [.checkDigitTwin(field: "document number", read: "K", other: "<", line: 2, column: 9)]
        let judged = p.judge(readerWarned, today: "2026-01-01", needsPortrait: false)
        XCTAssertEqual(judged.status, .warning)
        XCTAssertEqual(sentences(judged.warnings), ["The document number holds 'K' (MRZ line 2, position 9), which could also be '<': the check digit cannot tell them apart. Compare it with the printed page."])
        let details = try JSONValue(encoding: IDVReports.documentDetails(readerWarned, judged: judged))
        XCTAssertEqual(details["response_data"]?["overall_status"]?.stringValue, "WARNING", "\(details)")
    }
}
