import Foundation
import IDVCore
import IDVEngine

// Signed evidence records (issue #37 item 3; docs/DATA-PROTECTION.md "Evidence records"): compact
// JWS (RFC 7515) with `alg` EdDSA over Ed25519 (RFC 8037), keys published as a JWK Set (RFC 7517)
// of OKP keys at `/.well-known/jwks.json`.

/// One public key of the JWK Set: an OKP / Ed25519 key (RFC 8037 §2).
public struct EvidenceJWK: Codable, Sendable, Equatable {
    public var kty = "OKP"
    public var crv = "Ed25519"
    /// The 32-byte public key, base64url without padding.
    public var x: String
    public var kid: String
    public var use = "sig"
    public var alg = "EdDSA"

    public init(publicKey: [UInt8], kid: String) {
        x = Hex.base64url(publicKey)
        self.kid = kid
    }

    /// The RFC 7638 thumbprint of an Ed25519 key (SHA-256 of `{"crv","kty","x"}` in that order),
    /// base64url: the key's `kid`.
    public static func thumbprint(publicKey: [UInt8], crypto: any EngineCrypto) -> String {
        Hex.base64url(crypto.sha256(Array(#"{"crv":"Ed25519","kty":"OKP","x":"\#(Hex.base64url(publicKey))"}"#.utf8)))
    }
}

/// `{"keys":[…]}`, oldest key first.
public struct EvidenceJWKS: Codable, Sendable, Equatable {
    public var keys: [EvidenceJWK]
    public init(keys: [EvidenceJWK]) { self.keys = keys }
}

/// Why a compact JWS does not verify (``CompactJWS/verify(_:jwks:crypto:)``).
public struct EvidenceVerificationError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ d: String) { description = d }
}

/// Compact JWS with EdDSA (Ed25519) only: `BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(signature)`.
public enum CompactJWS {
    /// The JWS header of every evidence record: `{"alg":"EdDSA","kid":…,"typ":"JWT"}` (sorted keys).
    public static func sign(payload: Data, kid: String, secretKey: [UInt8], crypto: any EngineCrypto) -> String {
        let header = #"{"alg":"EdDSA","kid":"\#(kid)","typ":"JWT"}"#
        let input = Hex.base64url(Array(header.utf8)) + "." + Hex.base64url(Array(payload))
        return input + "." + Hex.base64url(crypto.signEd25519(message: Array(input.utf8), secretKey: secretKey))
    }

    /// Checks `compact` against the key of `jwks` its header's `kid` names: three parts, header
    /// `alg` EdDSA, a known `kid`, a valid Ed25519 signature over the first two parts. Returns the
    /// header and the payload bytes; throws ``EvidenceVerificationError`` saying which check failed.
    public static func verify(_ compact: String, jwks: EvidenceJWKS, crypto: any EngineCrypto) throws -> (header: JSONValue, payload: Data) {
        let parts = compact.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { throw EvidenceVerificationError("not a compact JWS (\(parts.count) parts, 3 expected)") }
        guard let h = Hex.base64urlDecode(parts[0]), let header = try? JSONDecoder().decode(JSONValue.self, from: Data(h)) else {
            throw EvidenceVerificationError("the JWS header is not base64url JSON")
        }
        guard header["alg"]?.stringValue == "EdDSA" else { throw EvidenceVerificationError("alg must be EdDSA") }
        guard let kid = header["kid"]?.stringValue, let jwk = jwks.keys.first(where: { $0.kid == kid }) else {
            throw EvidenceVerificationError("no key in the JWKS with the record's kid")
        }
        guard jwk.kty == "OKP", jwk.crv == "Ed25519", let pub = Hex.base64urlDecode(jwk.x), pub.count == 32 else {
            throw EvidenceVerificationError("key \(kid) is not an Ed25519 OKP key")
        }
        guard let sig = Hex.base64urlDecode(parts[2]), let payload = Hex.base64urlDecode(parts[1]),
              crypto.verifyEd25519(signature: sig, message: Array((parts[0] + "." + parts[1]).utf8), publicKey: pub) else {
            throw EvidenceVerificationError("the signature does not verify with key \(kid)")
        }
        return (header, Data(payload))
    }
}

/// The server's evidence-signing keys: the current one signs, all are published. Keys live in the
/// database (``SigningKeyStore``), the secret half sealed by the vault key — one set for every
/// node of the database; the first signature creates the first key.
public struct EvidenceSigner: Sendable {
    public let store: any EngineStore
    public let vault: any Vault
    public let crypto: any EngineCrypto
    public init(store: any EngineStore, vault: any Vault, crypto: any EngineCrypto) {
        self.store = store
        self.vault = vault
        self.crypto = crypto
    }

    /// Makes a new key the current one; the previous keys stay listed (retired) so their records
    /// still verify. Audited `evidence.key_rotated`. Returns the new key's public JWK.
    @discardableResult
    public func rotate(now: Int) throws -> EvidenceJWK {
        let pair = crypto.ed25519KeyPair()
        let kid = EvidenceJWK.thumbprint(publicKey: pair.publicKey, crypto: crypto)
        let sealed = vault.seal(pair.secretKey, associatedData: VaultBinding.evidenceSigningKey(kid: kid))
        try store.withTransaction {
            try store.addSigningKey(SigningKeyRecord(kid: kid, publicKey: pair.publicKey, sealedSecret: sealed, createdAt: now, retiredAt: nil))
            try store.appendAudit(action: "evidence.key_rotated", userID: nil, sessionID: nil, details: ["kid": .string(kid)], at: now)
        }
        return EvidenceJWK(publicKey: pair.publicKey, kid: kid)
    }

    /// Every key, oldest first, as the JWKS publishes them.
    public func jwks() throws -> EvidenceJWKS {
        EvidenceJWKS(keys: try store.signingKeys().map { EvidenceJWK(publicKey: $0.publicKey, kid: $0.kid) })
    }

    /// Signs `payload` (JSON bytes) with the current key, creating the first key when there is none.
    /// Throws ``VaultError`` when the key's secret does not open under the vault's keys.
    public func sign(_ payload: Data, now: Int) throws -> String {
        if try store.signingKeys().last(where: { $0.retiredAt == nil }) == nil { try rotate(now: now) }
        guard let key = try store.signingKeys().last(where: { $0.retiredAt == nil }) else {
            throw IDVError(.internalError, "no evidence-signing key")
        }
        let secret = try vault.open(key.sealedSecret, associatedData: VaultBinding.evidenceSigningKey(kid: key.kid))
        return CompactJWS.sign(payload: payload, kid: key.kid, secretKey: secret, crypto: crypto)
    }
}
