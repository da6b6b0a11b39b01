import Foundation
import IDVCore

/// One piece of operator-loaded chip trust material as the store keeps it (CSCA certificate,
/// CSCA master list, CRL, document signer certificate, ICAO PKD LDIF; docs/CHIP.md "Trust management").
public struct TrustMaterialRecord: Sendable, Equatable {
    /// `tm_` + the first 16 hex digits of `sha256`.
    public var id: String
    /// `csca_certificate`, `master_list`, `crl`, `document_signer_certificate`, `ldif` (EMRTD `TrustMaterialKind`).
    public var kind: String
    /// SHA-256 of `bytes`, hex (a file is kept once).
    public var sha256: String
    /// The file as imported.
    public var bytes: Data
    /// What it contributes: CSCA certificates, CRLs, document signer certificates.
    public var cscas: Int
    public var crls: Int
    public var documentSigners: Int
    /// The file name it was imported from (no directory), for the operator's listing.
    public var sourceName: String
    /// Unix seconds.
    public var importedAt: Int
    public init(id: String, kind: String, sha256: String, bytes: Data, cscas: Int, crls: Int, documentSigners: Int, sourceName: String, importedAt: Int) {
        self.id = id
        self.kind = kind
        self.sha256 = sha256
        self.bytes = bytes
        self.cscas = cscas
        self.crls = crls
        self.documentSigners = documentSigners
        self.sourceName = sourceName
        self.importedAt = importedAt
    }
}

/// Where the operator's chip trust material is kept (SQLite migration 5 `trust_material`). A store
/// without it serves chips with no trust (every chip is `csca_unknown`).
public protocol TrustMaterialStore: Sendable {
    /// Every record, oldest first.
    func trustMaterials() throws -> [TrustMaterialRecord]
    /// Adds `record`; false (nothing changed) when a record with the same `sha256` is kept already.
    func addTrustMaterial(_ record: TrustMaterialRecord) throws -> Bool
    /// Removes the record `id`; false when there is none.
    func removeTrustMaterial(id: String) throws -> Bool
}
