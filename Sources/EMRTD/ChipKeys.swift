import CEMRTD
import Foundation

/// What a public key is, as Active Authentication needs it (from a SubjectPublicKeyInfo: DG15, or a key's public half).
public struct PublicKeyDescription: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable { case rsa = "RSA", ec = "EC", other }
    public var kind: Kind
    /// RSA: the modulus size; EC: the group order's size (both in bits).
    public var bits: Int
    /// EC only: the group order's length in bytes (a plain ECDSA signature r || s is twice that).
    public var orderBytes: Int?
    /// EC only: the curve's short name as OpenSSL knows it (`prime256v1`, `brainpoolP256r1`); nil when unknown.
    public var curve: String?

    /// Describes the DER SubjectPublicKeyInfo `spki` (RFC 5280 §4.1.2.7). Throws `CryptoError` (`.parse`) when
    /// it is not one.
    public init(subjectPublicKeyInfo spki: [UInt8]) throws {
        var info = em_aa_key_info()
        try shim { em_aa_key_info_of(spki, spki.count, &info, $0, $1) }
        kind = info.kind == 1 ? .rsa : info.kind == 2 ? .ec : .other
        bits = Int(info.bits)
        orderBytes = kind == .ec ? Int(info.order_bytes) : nil
        let c = fixedString(info.curve)
        curve = c.isEmpty ? nil : c
    }
}

extension SigningKey {
    /// A deterministic RSA key of `bits` bits (even, 1024…4096; e = 65537) from `seed`: each prime is the first
    /// probable prime at or above a SHA-512-derived candidate (`em_key_rsa_from_seed`). Same seed, same key; a
    /// 2048-bit key takes ~0.1–1 s. For specimen chips and tests only.
    public static func rsa(bits: Int, seed: String) throws -> SigningKey {
        var h: OpaquePointer?
        let s = Array(seed.utf8)
        try shim { em_key_rsa_from_seed(Int32(bits), s, s.count, &h, $0, $1) }
        return SigningKey(h!)
    }

    /// Reads a PEM private key: PKCS#8 (`-----BEGIN PRIVATE KEY-----`, as `pkcs8PEM` writes it) or the traditional
    /// RSA / EC forms. Throws `CryptoError` (`.parse`) for anything else, `.invalidArgument` above 1 MiB.
    public convenience init(pem: [UInt8]) throws {
        var h: OpaquePointer?
        try shim { em_key_from_pem(pem, pem.count, &h, $0, $1) }
        self.init(h!)
    }

    /// The private key as unencrypted PKCS#8 PEM text (RFC 5208 / RFC 7468 `PRIVATE KEY`).
    public func pkcs8PEM() throws -> String {
        var out = em_bytes()
        try shim { em_key_pkcs8_pem(handle, &out, $0, $1) }
        return String(decoding: takeBytes(out), as: UTF8.self)
    }

    /// The public half as a DER SubjectPublicKeyInfo (what DG15 and DG14's ChipAuthenticationPublicKeyInfo hold).
    public func subjectPublicKeyInfo() throws -> [UInt8] {
        var out = em_bytes()
        try shim { em_key_public_spki(handle, &out, $0, $1) }
        return takeBytes(out)
    }

    /// What the key is (RSA modulus bits, EC curve and order length).
    public func publicKeyDescription() throws -> PublicKeyDescription {
        try PublicKeyDescription(subjectPublicKeyInfo: subjectPublicKeyInfo())
    }

    /// What a private key is (`em_key_kind`).
    public enum Kind: Sendable { case rsa, ec, dh }

    /// RSA, EC or DH; nil for another kind of key.
    public var kind: Kind? {
        switch em_key_kind(handle) {
        case 1: return .rsa
        case 2: return .ec
        case 3: return .dh
        default: return nil
        }
    }

    /// A fresh EC key (not deterministic) on the OpenSSL curve `curve` (`prime256v1`, `brainpoolP256r1`, …): test
    /// chips' keys and the copy variant's other AA key. Throws `CryptoError` (`.unsupported`) for an unknown curve.
    public static func ec(curve: String) throws -> SigningKey {
        var h: OpaquePointer?
        try shim { em_key_ec_generate(curve, &h, $0, $1) }
        return SigningKey(h!)
    }

    /// An EC key's private scalar d, big-endian, left-padded to the group order's length (a virtual chip's Chip
    /// Authentication, ICAO 9303-11 §6.2). Throws `CryptoError` (`.invalidArgument`) for a key that is not EC.
    public func ecPrivateScalar() throws -> [UInt8] {
        var out = em_bytes()
        try shim { em_key_ec_private_scalar(handle, &out, $0, $1) }
        return takeBytes(out)
    }

    /// A DH key's private value x, big-endian (Chip Authentication with a DH key). Throws `CryptoError`
    /// (`.invalidArgument`) for a key that is not DH.
    public func dhPrivateValue() throws -> [UInt8] {
        var out = em_bytes()
        try shim { em_key_dh_private_value(handle, &out, $0, $1) }
        return takeBytes(out)
    }

    /// The raw RSA private operation m^d mod n on `block` (exactly the modulus length, below the modulus): the chip's
    /// side of ISO/IEC 9796-2 scheme 1 (ICAO 9303-11 §6.1). Returns the modulus length in bytes, left-padded.
    public func rsaPrivateRaw(_ block: [UInt8]) throws -> [UInt8] {
        var out = em_bytes()
        try shim { em_key_rsa_private_raw(handle, block, block.count, &out, $0, $1) }
        return takeBytes(out)
    }

    /// An ECDSA signature of `digest` (a fresh random k) in the plain format r || s, each the group order's length
    /// (BSI TR-03111 §5.2.1): the chip's side of Active Authentication with an EC key.
    public func ecdsaSignPlain(digest: [UInt8]) throws -> [UInt8] {
        var out = em_bytes()
        try shim { em_key_ecdsa_sign_plain(handle, digest, digest.count, &out, $0, $1) }
        return takeBytes(out)
    }
}

/// Bytes from OpenSSL's CSPRNG (RAND_bytes).
public enum SecureRandom {
    /// `count` random bytes. Traps only if the system generator fails (OpenSSL cannot seed itself), which no
    /// caller could recover from.
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var message = [CChar](repeating: 0, count: 128)
        let st = out.withUnsafeMutableBufferPointer { em_random_bytes($0.baseAddress, count, &message, message.count) }
        precondition(st == EM_OK, "OpenSSL's random generator failed: \(CryptoError.text(message))")
        return out
    }
}
