import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// The operator's chip trust material (PostgreSQL migration 5, the twin of SQLite's; IDVEngine
/// `TrustMaterialStore`, `idvd admin trust import|list|remove`). Public certificates, master lists
/// and CRLs: not sealed. Shared by every node: material imported through one node is used by all.
extension PostgresStore: TrustMaterialStore {
    public func trustMaterials() throws -> [TrustMaterialRecord] {
        try query("SELECT trust_id, kind, sha256, content, cscas, crls, document_signers, source_name, imported_at FROM trust_material ORDER BY imported_at, trust_id")
            .rows.map { r in
                TrustMaterialRecord(id: try r.text(0), kind: try r.text(1), sha256: try r.text(2), bytes: Data(try r.bytes(3)), cscas: try r.int(4),
                                    crls: try r.int(5), documentSigners: try r.int(6), sourceName: try r.text(7), importedAt: try r.int(8))
            }
    }

    /// One statement: of two nodes importing the same file at once, one inserts and the other's
    /// `ON CONFLICT DO NOTHING` waits for it and changes nothing (false).
    public func addTrustMaterial(_ t: TrustMaterialRecord) throws -> Bool {
        try query("INSERT INTO trust_material (trust_id, kind, sha256, content, cscas, crls, document_signers, source_name, imported_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9) ON CONFLICT DO NOTHING",
                  [.text(t.id), .text(t.kind), .text(t.sha256), .bytes(Array(t.bytes)), PGValue(t.cscas), PGValue(t.crls), PGValue(t.documentSigners),
                   .text(t.sourceName), PGValue(t.importedAt)]).affected == 1
    }

    public func removeTrustMaterial(id: String) throws -> Bool {
        try query("DELETE FROM trust_material WHERE trust_id = $1", [.text(id)]).affected == 1
    }
}
