import Foundation
import IDVCore
import IDVEngine

// The evidence-signing keys (``SigningKeyStore``; table `signing_keys`, migration 11).

extension SQLDatabase {
    public func signingKeys() throws -> [SigningKeyRecord] {
        try rows("SELECT kid, public_key, secret_ciphertext, secret_nonce, key_id, created_at, retired_at FROM signing_keys ORDER BY created_at, kid").map { r in
            SigningKeyRecord(kid: try r.text(0), publicKey: try r.bytes(1),
                             sealedSecret: SealedBox(ciphertext: try r.bytes(2), nonce: try r.bytes(3), keyID: try r.text(4)),
                             createdAt: try r.int(5), retiredAt: try r.optionalInt(6))
        }
    }

    public func addSigningKey(_ k: SigningKeyRecord) throws {
        try withTransaction {
            try run("UPDATE signing_keys SET retired_at = ? WHERE retired_at IS NULL", [SQLCell(k.createdAt)])
            try run("INSERT INTO signing_keys (kid, public_key, secret_ciphertext, secret_nonce, key_id, created_at, retired_at) VALUES (?,?,?,?,?,?,?)",
                    [.text(k.kid), .bytes(k.publicKey), .bytes(k.sealedSecret.ciphertext), .bytes(k.sealedSecret.nonce), .text(k.sealedSecret.keyID),
                     SQLCell(k.createdAt), SQLCell(k.retiredAt)])
        }
    }
}
