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

/// Key rotation of the vault (`templates.previous_key_files`, `idvd admin rekey`) on a real SQLite
/// file: every sealed box — template, document-scan report, kept image, session state — moves from
/// the old key to the new one, keeps its content, and then opens without the old key.
final class KeyRotationTests: XCTestCase {
    var dir: URL!
    var db: String { dir.appendingPathComponent("r.sqlite").path }
    var oldKey: String { dir.appendingPathComponent("old.key").path }
    var newKey: String { dir.appendingPathComponent("new.key").path }
    let embedding: [Float] = (0..<128).map { Float($0) / 11 - 5 }
    let page: [UInt8] = Array("a document page's JPEG bytes".utf8)
    let report: [UInt8] = Array(#"{"overall_status":"VALID"}"#.utf8)
    let now = 1_800_000_000

    override func setUp() {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-rekey-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    /// Fills the store with one box of each kind under the key file `keyFile`.
    func populate(keyFile: String) throws {
        let store = try SQLiteStore(path: db, keyFile: keyFile)
        defer { store.close() }
        let vault = try TemplateVault.load(keyFile: keyFile, createIfMissing: true)
        try store.createUser(UserRecord(userID: "olga", state: .active, createdAt: now, updatedAt: now))
        try store.saveBiometricTemplate(BiometricTemplateRecord(userID: "olga", sealed: vault.sealTemplate(embedding, userID: "olga"),
                                                                model: "dlib", consentID: "c1", createdAt: now))
        try store.saveMedia(MediaRecord(mediaID: "m1", runID: "run1", kind: .portrait,
                                        sealed: vault.seal(page, associatedData: TemplateVault.Binding.media(runID: "run1", kind: "portrait")), createdAt: now))
        try store.saveDocumentScan(DocumentScanRecord(scanID: "s1", userID: "olga", sessionID: nil, runID: "run1", idvWorkflow: 4, reason: "kyc",
                                                      overallStatus: "VALID",
                                                      sealedReport: vault.seal(report, associatedData: TemplateVault.Binding.scan(scanID: "s1")), createdAt: now))
        let state = SessionFlowState(stack: [FlowFrame(flow: "auth", runID: "run1", state: try JSONValue(encoding: AuthFlow.State.verifyPassword(userID: "olga")))])
        try store.createSession(SessionRecord(sessionID: "sess1", tokenHash: "th1", userID: "olga", createdAt: now, lastSeenAt: now,
                                              idleTimeout: 900, absoluteExpiresAt: now + 3600, state: state))
    }

    /// Reads every box back through `keyFile` alone (no previous keys) and checks its content.
    func assertEverythingOpens(keyFile: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let store = try SQLiteStore(path: db, keyFile: keyFile)
        defer { store.close() }
        let vault = try TemplateVault.load(keyFile: keyFile, createIfMissing: false)
        let t = try XCTUnwrap(store.biometricTemplate(userID: "olga"), file: file, line: line)
        XCTAssertEqual(try vault.openTemplate(t.sealed, userID: "olga"), embedding, file: file, line: line)
        let m = try XCTUnwrap(store.media("m1"), file: file, line: line)
        XCTAssertEqual(try vault.open(m.sealed, associatedData: TemplateVault.Binding.media(runID: "run1", kind: "portrait")), page, file: file, line: line)
        let s = try XCTUnwrap(store.documentScans(userID: "olga").first?.sealedReport, file: file, line: line)
        XCTAssertEqual(try vault.open(s, associatedData: TemplateVault.Binding.scan(scanID: "s1")), report, file: file, line: line)
        let frame = try XCTUnwrap(store.session(tokenHash: "th1")?.state.stack.first, file: file, line: line)
        XCTAssertEqual(try frame.state.decode(AuthFlow.State.self), .verifyPassword(userID: "olga"), file: file, line: line)
    }

    func testRekeyMovesEveryBoxToTheNewKeyThroughTheCLI() throws {
        try populate(keyFile: oldKey)
        try assertEverythingOpens(keyFile: oldKey)
        _ = try TemplateVault.load(keyFile: newKey, createIfMissing: true)
        let oldID = try TemplateVault.load(keyFile: oldKey, createIfMissing: false).keyID
        let newID = try TemplateVault.load(keyFile: newKey, createIfMissing: false).keyID

        // Before the rekey, the new key alone opens nothing that was sealed: the template is refused by key id.
        do {
            let store = try SQLiteStore(path: db, keyFile: newKey)
            defer { store.close() }
            let t = try XCTUnwrap(store.biometricTemplate(userID: "olga"))
            XCTAssertThrowsError(try TemplateVault.load(keyFile: newKey, createIfMissing: false).openTemplate(t.sealed, userID: "olga")) { e in
                XCTAssertEqual(e as? VaultError, .wrongKey(oldID))
            }
            XCTAssertThrowsError(try store.session(tokenHash: "th1"))
        }

        let r = try IDVDBinary.run(["admin", "rekey", "--db", db, "--set", "templates.key_file=\(newKey)",
                                    "--set", "templates.previous_key_files=\(oldKey)"])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        let out = try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        XCTAssertEqual(out["key_id"]?.stringValue, newID)
        XCTAssertEqual(out["previous_key_ids"], .array([.string(oldID)]))
        for table in ["biometric_templates", "document_scans", "idv_media", "sessions"] {
            XCTAssertEqual(out["before"]?["previous"]?[table]?.intValue, 1, table)
            XCTAssertEqual(out["resealed"]?[table]?.intValue, 1, table)
            XCTAssertEqual(out["after"]?["current"]?[table]?.intValue, 1, table)
        }
        XCTAssertEqual(out["after"]?["previous"], .object([:]))

        // The old key file can go: everything opens under the new key alone, with its content intact.
        try FileManager.default.removeItem(atPath: oldKey)
        try assertEverythingOpens(keyFile: newKey)

        // Audited with counts and the key id only.
        let audit = try IDVDBinary.run(["admin", "audit", "--db", db, "--set", "templates.key_file=\(newKey)"])
        let entries = try JSONDecoder().decode(JSONValue.self, from: audit.stdout)["entries"]?.arrayValue ?? []
        let rekey = try XCTUnwrap(entries.first { $0["action"]?.stringValue == "admin.rekey" })
        XCTAssertEqual(rekey["details"]?["key_id"]?.stringValue, newID)
        XCTAssertEqual(rekey["details"]?["resealed_biometric_templates"]?.intValue, 1)

        // A second rekey has nothing left to do.
        let again = try IDVDBinary.run(["admin", "rekey", "--db", db, "--set", "templates.key_file=\(newKey)"])
        XCTAssertEqual(again.status, 0)
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: again.stdout)["resealed"]?["sessions"]?.intValue, 0)
    }

    /// A box under a key the vault does not hold stops the rekey before anything is written, with a
    /// message naming the tables and the remedy; the data stays readable with the right key.
    func testRekeyWithoutTheOldKeyChangesNothing() throws {
        try populate(keyFile: oldKey)
        _ = try TemplateVault.load(keyFile: newKey, createIfMissing: true)
        let r = try IDVDBinary.run(["admin", "rekey", "--db", db, "--set", "templates.key_file=\(newKey)"])
        XCTAssertNotEqual(r.status, 0)
        let message = String(decoding: r.stderr, as: UTF8.self)
        XCTAssertTrue(message.contains("1 in biometric_templates") && message.contains("templates.previous_key_files")
                      && message.contains("nothing was changed"), message)
        try assertEverythingOpens(keyFile: oldKey)
    }

    /// While both keys are configured, the server's vault opens old and new boxes and seals new ones
    /// under the new key only; a previous key's derived session-state key opens old session states.
    func testAVaultWithAPreviousKeyOpensBothAndSealsUnderTheNewOne() throws {
        try populate(keyFile: oldKey)
        _ = try TemplateVault.load(keyFile: newKey, createIfMissing: true)
        let both = try TemplateVault.load(keyFile: newKey, previousKeyFiles: [oldKey], createIfMissing: false)
        let store = try SQLiteStore(path: db, keyFile: newKey, previousKeyFiles: [oldKey])
        defer { store.close() }
        let old = try XCTUnwrap(store.biometricTemplate(userID: "olga")).sealed
        XCTAssertFalse(both.isCurrent(old))
        XCTAssertEqual(try both.openTemplate(old, userID: "olga"), embedding)
        let fresh = both.sealTemplate(embedding, userID: "olga")
        XCTAssertTrue(both.isCurrent(fresh))
        XCTAssertEqual(fresh.keyID, both.keyID)
        // Bound to its owner across keys: another user's id does not open the old box.
        XCTAssertThrowsError(try both.openTemplate(old, userID: "petr"))
        var session = try XCTUnwrap(store.session(tokenHash: "th1"))
        XCTAssertEqual(try session.state.stack.first?.state.decode(AuthFlow.State.self), .verifyPassword(userID: "olga"))
        session.lastSeenAt += 1
        XCTAssertTrue(try store.updateSession(session, expectedVersion: session.version, consuming: nil))
        XCTAssertEqual(try store.sealedInventory(vault: both).current["sessions"], 1, "a write re-seals the state under the new key")
    }
}
