import Foundation

/// One Ed25519 key that signs evidence records (docs/DATA-PROTECTION.md "Evidence records"): the
/// public half in clear, the secret half sealed by the server's vault key (associated data
/// ``VaultBinding/evidenceSigningKey(kid:)``), so every node of one database signs with the same
/// keys and a copy of the database alone cannot sign.
public struct SigningKeyRecord: Sendable, Equatable {
    /// The key's id: its RFC 7638 JWK thumbprint (base64url SHA-256), the JWS header's `kid`.
    public var kid: String
    /// 32 bytes.
    public var publicKey: [UInt8]
    public var sealedSecret: SealedBox
    public var createdAt: Int
    /// When a newer key took over signing (nil: the current key). A retired key stays listed in
    /// the JWKS, so the records it signed still verify.
    public var retiredAt: Int?
    public init(kid: String, publicKey: [UInt8], sealedSecret: SealedBox, createdAt: Int, retiredAt: Int?) {
        self.kid = kid
        self.publicKey = publicKey
        self.sealedSecret = sealedSecret
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// The evidence-signing keys of the server (table `signing_keys`, migration 11).
public protocol SigningKeyStore: Sendable {
    /// Every key, oldest first.
    func signingKeys() throws -> [SigningKeyRecord]
    /// Adds `key` as the current key and retires every other key at `key.createdAt`, in one transaction.
    func addSigningKey(_ key: SigningKeyRecord) throws
}

extension VaultBinding {
    /// An evidence-signing key's secret half.
    public static func evidenceSigningKey(kid: String) -> String { "evidence-signing-key:" + kid }
}
