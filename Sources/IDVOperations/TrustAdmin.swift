import Foundation
import IDVCore
import IDVEngine

// `idvd admin trust import|list|remove`: the operator's chip trust material in the store, every
// change audited (`admin.trust_import`, `admin.trust_remove`). The bytes are checked by the caller
// (idvd, EMRTD `TrustMaterial`) before they reach here; the store keeps each file once.

extension Admin {
    /// One row of `trust list` (no bytes).
    public struct TrustRow: Codable, Sendable, Equatable {
        public let id: String
        public let kind: String
        public let sha256: String
        public let bytes: Int
        public let cscas: Int
        public let crls: Int
        public let documentSigners: Int
        public let sourceName: String
        public let importedAt: Int
        /// Whether this import added it (false: the same file was kept already).
        public let added: Bool?
        enum CodingKeys: String, CodingKey {
            case id, kind, sha256, bytes, cscas, crls, documentSigners = "document_signers", sourceName = "source_name", importedAt = "imported_at", added
        }
        init(_ r: TrustMaterialRecord, added: Bool? = nil) {
            id = r.id; kind = r.kind; sha256 = r.sha256; bytes = r.bytes.count; cscas = r.cscas; crls = r.crls
            documentSigners = r.documentSigners; sourceName = r.sourceName; importedAt = r.importedAt; self.added = added
        }
    }

    /// The trust material kept, with its bytes (for checking new material against it).
    public func trustStoreRecords() throws -> [TrustMaterialRecord] { try store.trustMaterials() }

    /// The trust material kept, oldest first.
    public func listTrust() throws -> [TrustRow] { try store.trustMaterials().map { TrustRow($0) } }

    /// Keeps checked trust material (`record.id` is derived from its SHA-256); audited as
    /// `admin.trust_import` with kind, counts and digest. Importing the same file again changes nothing.
    public func importTrust(_ record: TrustMaterialRecord) throws -> TrustRow {
        let t = store
        return try store.withTransaction {
            let added = try t.addTrustMaterial(record)
            if added {
                try store.appendAudit(action: "admin.trust_import", userID: nil, sessionID: nil, details: [
                    "trust_id": .string(record.id), "kind": .string(record.kind), "sha256": .string(record.sha256),
                    "cscas": .integer(record.cscas), "crls": .integer(record.crls), "document_signers": .integer(record.documentSigners),
                ], at: record.importedAt)
            }
            let kept = try t.trustMaterials().first { $0.sha256 == record.sha256 } ?? record
            return TrustRow(kept, added: added)
        }
    }

    /// Removes trust material `id`; audited as `admin.trust_remove`. Throws 1007 when there is none.
    public func removeTrust(_ id: String, now: Int = Int(Date().timeIntervalSince1970)) throws -> TrustRow {
        let t = store
        return try store.withTransaction {
            guard let r = try t.trustMaterials().first(where: { $0.id == id }) else { throw IDVError(.notFound, "no trust material \(id.prefix(40))") }
            guard try t.removeTrustMaterial(id: id) else { throw IDVError(.notFound, "no trust material \(id.prefix(40))") }
            try store.appendAudit(action: "admin.trust_remove", userID: nil, sessionID: nil,
                                  details: ["trust_id": .string(id), "kind": .string(r.kind), "sha256": .string(r.sha256)], at: now)
            return TrustRow(r)
        }
    }
}
