import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// Schema of the operator's chip trust material (SQLite migration 5; IDVEngine `TrustMaterialStore`,
/// `idvd admin trust import|list|remove`). Public certificates, master lists and CRLs: not sealed.
enum TrustMaterialMigrations {
    static let v5 = """
    CREATE TABLE trust_material (
        trust_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        sha256 TEXT NOT NULL UNIQUE,
        content BLOB NOT NULL,
        cscas INTEGER NOT NULL,
        crls INTEGER NOT NULL,
        document_signers INTEGER NOT NULL,
        source_name TEXT NOT NULL,
        imported_at INTEGER NOT NULL
    );
    """
}

extension SQLiteStore: TrustMaterialStore {
    public func trustMaterials() throws -> [TrustMaterialRecord] {
        try query("SELECT trust_id, kind, sha256, content, cscas, crls, document_signers, source_name, imported_at FROM trust_material ORDER BY imported_at, trust_id",
                  []).map { r in
            var bytes = Data()
            if case let .blob(b) = r[3] { bytes = Data(b) }
            return TrustMaterialRecord(id: r[0].text ?? "", kind: r[1].text ?? "", sha256: r[2].text ?? "", bytes: bytes, cscas: r[4].int ?? 0,
                                       crls: r[5].int ?? 0, documentSigners: r[6].int ?? 0, sourceName: r[7].text ?? "", importedAt: r[8].int ?? 0)
        }
    }

    // In a transaction, so `changes` is this statement's count, not another thread's (the connection is shared).
    public func addTrustMaterial(_ t: TrustMaterialRecord) throws -> Bool {
        try withTransaction {
            try query("INSERT OR IGNORE INTO trust_material (trust_id, kind, sha256, content, cscas, crls, document_signers, source_name, imported_at) VALUES (?,?,?,?,?,?,?,?,?)",
                      [.text(t.id), .text(t.kind), .text(t.sha256), .blob(Array(t.bytes)), SQLValue(t.cscas), SQLValue(t.crls), SQLValue(t.documentSigners),
                       .text(t.sourceName), SQLValue(t.importedAt)])
            return changes == 1
        }
    }

    public func removeTrustMaterial(id: String) throws -> Bool {
        try withTransaction {
            try query("DELETE FROM trust_material WHERE trust_id = ?", [.text(id)])
            return changes == 1
        }
    }
}
