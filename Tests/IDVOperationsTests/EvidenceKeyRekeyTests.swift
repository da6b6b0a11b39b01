import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
import IDVTools
import IDVTestSupport
import IDVServerTestSupport
import XCTest

/// Issue #37: `idvd admin rekey` re-seals the evidence-signing keys with the rest of the store's
/// sealed boxes, so that after the old key file is retired evidence is still signed, with the
/// same keys (the published JWKS does not change), and verifies.
final class EvidenceKeyRekeyTests: XCTestCase {
    func testRekeyResealsTheEvidenceSigningKeys() throws {
        let server = try WorkflowServer([:], wallClock: true)
        let db = server.config.dbPath
        let oldKey = server.config.keys.resolvedKeyFile(dbPath: db)
        let now = Int(Date().timeIntervalSince1970)
        let payload = Data(#"{"verification":"v1"}"#.utf8)
        let oldSigner = EvidenceSigner(store: server.store, vault: server.vault, crypto: Sodium())
        let first = try oldSigner.sign(payload, now: now)   // the first key, sealed under the old key
        try oldSigner.rotate(now: now + 1)                  // and a second: one retired, one current
        let jwks = try oldSigner.jwks()
        XCTAssertEqual(jwks.keys.count, 2)

        let newKey = server.dir.appendingPathComponent("new.key").path
        let made = try IDVDBinary.run(["admin", "new-key", newKey])
        XCTAssertEqual(made.status, 0, String(decoding: made.stderr, as: UTF8.self))
        let r = try IDVDBinary.run(["admin", "rekey", "--db", db, "--set", "templates.key_file=\(newKey)", "--set", "templates.previous_key_files=\(oldKey)"])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        let report = try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        XCTAssertEqual(report["resealed"]?["signing_keys"], .integer(2), "\(report)")
        XCTAssertNil(report["after"]?["previous"]?["signing_keys"], "none left under the old key: \(report)")

        // The old key file retired: a vault of the new key alone signs, with the same published keys.
        let newVault = try TemplateVault.load(keyFile: newKey, createIfMissing: false)
        let signer = EvidenceSigner(store: server.store, vault: newVault, crypto: Sodium())
        XCTAssertEqual(try signer.jwks(), jwks, "rekey changes no public key")
        let signed = try signer.sign(payload, now: now + 2)
        XCTAssertEqual(try CompactJWS.verify(signed, jwks: jwks, crypto: Sodium()).payload, payload)
        XCTAssertEqual(try CompactJWS.verify(first, jwks: jwks, crypto: Sodium()).payload, payload, "the record signed before still verifies")
        // And the old key alone no longer opens them.
        XCTAssertThrowsError(try oldSigner.sign(payload, now: now + 3))
        // The CLI with the new key only: the keys are listed (and a rotation seals under the new key).
        let list = try IDVDBinary.run(["admin", "evidence-key", "list", "--db", db, "--set", "templates.key_file=\(newKey)"])
        XCTAssertEqual(list.status, 0, String(decoding: list.stderr, as: UTF8.self))
        XCTAssertEqual(try JSONDecoder().decode(EvidenceJWKS.self, from: list.stdout), jwks)
    }
}
