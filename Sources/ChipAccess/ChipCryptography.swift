import EMRTDCore

/// The cryptographic primitives chip access needs, and nothing more, so that each platform can supply its own:
/// `ChipAccessOpenSSL.OpenSSLChipCryptography` on Linux (libcrypto through a C shim), a CommonCrypto / CryptoKit /
/// BigInt implementation on iOS. Every protocol step (ICAO 9303-11 BAC §4.3, PACE §4.4, secure messaging §9.8,
/// Chip Authentication §6.2, Active Authentication §6.1) is written in Swift over these primitives.
///
/// Conventions: integers and field elements are big-endian octet strings; EC points are uncompressed
/// (`04 ‖ x ‖ y`, SEC 1 §2.3.3); curves are given by explicit parameters (`ECCurveParameters`, the name only a hint).
/// Implementations must be safe to call from several threads.
public protocol ChipCryptography: Sendable {
    /// `count` cryptographically strong random octets.
    func randomBytes(_ count: Int) throws -> [UInt8]
    /// The digest of `data`.
    func digest(_ algorithm: HashAlgorithm, _ data: [UInt8]) -> [UInt8]
    /// CBC encryption without padding (`data` a whole number of blocks). 3DES keys are 16 octets (two-key EDE) or
    /// 24; AES keys 16, 24 or 32. `iv` is one block.
    func cbcEncrypt(_ cipher: BlockCipher, key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8]
    /// CBC decryption without padding.
    func cbcDecrypt(_ cipher: BlockCipher, key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8]
    /// AES-CMAC (NIST SP 800-38B), 16 octets.
    func cmac(key: [UInt8], _ data: [UInt8]) throws -> [UInt8]
    /// `scalar`·`point` on `curve` (`point` nil: the curve's generator). Throws `ChipCryptoError.invalidInput` when
    /// `point` is not on the curve or the product is the point at infinity.
    func ecMultiply(_ curve: ECCurveParameters, scalar: [UInt8], point: [UInt8]?) throws -> [UInt8]
    /// `a` + `b` on `curve`; throws for a point off the curve or a sum at infinity.
    func ecAdd(_ curve: ECCurveParameters, _ a: [UInt8], _ b: [UInt8]) throws -> [UInt8]
    /// Whether `point` is an uncompressed point of `curve` other than the point at infinity.
    func ecIsOnCurve(_ curve: ECCurveParameters, _ point: [UInt8]) -> Bool
    /// `base`^`exponent` mod `modulus`, left-padded to the modulus's length.
    func modExp(base: [UInt8], exponent: [UInt8], modulus: [UInt8]) throws -> [UInt8]
    /// `a`·`b` mod `modulus`, left-padded to the modulus's length.
    func modMultiply(_ a: [UInt8], _ b: [UInt8], modulus: [UInt8]) throws -> [UInt8]
}

/// The block ciphers of secure messaging.
public enum BlockCipher: String, Sendable, Hashable {
    /// Two-key (or three-key) triple DES, EDE (ISO/IEC 18033-3), 8-octet blocks.
    case tripleDES = "3DES"
    /// AES (FIPS 197), 16-octet blocks.
    case aes = "AES"

    public var blockSize: Int { self == .tripleDES ? 8 : 16 }
}

/// Why a cryptographic primitive failed.
public struct ChipCryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable { case invalidInput, unsupported, `internal` }
    public var kind: Kind
    public var detail: String
    public init(_ kind: Kind, _ detail: String) { self.kind = kind; self.detail = detail }
    public var description: String { detail }
}

extension SessionCipher {
    /// The block cipher secure messaging uses.
    public var blockCipher: BlockCipher { self == .tripleDES ? .tripleDES : .aes }
}

/// ISO/IEC 9797-1 padding method 2 (ICAO 9303-11 §9.8.6): `80`, then zeros to a whole number of blocks.
public enum ISO9797Padding {
    public static func pad(_ data: [UInt8], blockSize: Int) -> [UInt8] {
        var out = data
        out.append(0x80)
        while out.count % blockSize != 0 { out.append(0) }
        return out
    }

    /// The data without its padding, or nil when the padding is malformed.
    public static func unpad(_ data: [UInt8]) -> [UInt8]? {
        guard let i = data.lastIndex(where: { $0 != 0 }), data[i] == 0x80 else { return nil }
        return Array(data[..<i])
    }
}

extension ChipCryptography {
    /// ISO/IEC 9797-1 MAC algorithm 3 with DES ("retail MAC", ICAO 9303-11 §9.8.6.1) over `data` padded with
    /// method 2: DES-CBC with K_a over all blocks, then DES⁻¹ with K_b and DES with K_a on the last. `key` is
    /// K_a ‖ K_b (16 octets). Single DES is computed as 3DES with K_a ‖ K_a, which every OpenSSL provider has.
    public func retailMAC(key: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        guard key.count == 16 else { throw ChipCryptoError(.invalidInput, "a retail MAC key is 16 octets, not \(key.count)") }
        let padded = ISO9797Padding.pad(data, blockSize: 8)
        let ka = Array(key[0..<8])
        var chain = [UInt8](repeating: 0, count: 8)
        if padded.count > 8 {
            let head = try cbcEncrypt(.tripleDES, key: ka + ka, iv: chain, Array(padded[..<(padded.count - 8)]))
            chain = Array(head.suffix(8))
        }
        // The last block with K_a ‖ K_b: E_Ka(D_Kb(E_Ka(H ⊕ B))) is one 3DES-EDE encryption.
        return try cbcEncrypt(.tripleDES, key: key, iv: chain, Array(padded.suffix(8)))
    }

    /// The MAC of `cipher` (ICAO 9303-11 §9.8.6): the retail MAC for 3DES (padding included), AES-CMAC truncated
    /// to 8 octets for AES (over `data` as given: the caller pads secure-messaging data, not PACE tokens).
    public func mac(_ cipher: SessionCipher, key: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        switch cipher {
        case .tripleDES: return try retailMAC(key: key, data)
        case .aes128, .aes192, .aes256: return Array(try cmac(key: key, data).prefix(8))
        }
    }

    /// ICAO 9303-11 §9.7.1 key derivation: H(K ‖ c) with c a 32-bit counter (1 encryption, 2 MAC, 3 the PACE
    /// password key). 3DES: SHA-1, the first 16 octets with DES parity bits set; AES-128: SHA-1, 16 octets;
    /// AES-192 / AES-256: SHA-256, 24 / 32 octets.
    public func deriveKey(_ secret: [UInt8], counter: UInt32, cipher: SessionCipher) -> [UInt8] {
        let input = secret + Bytes.uint32(counter)
        switch cipher {
        case .tripleDES: return DESParity.adjusted(Array(digest(.sha1, input).prefix(16)))
        case .aes128: return Array(digest(.sha1, input).prefix(16))
        case .aes192: return Array(digest(.sha256, input).prefix(24))
        case .aes256: return digest(.sha256, input)
        }
    }

    /// A uniformly random integer in [1, n − 1] (rejection sampling), as many octets as `n`.
    public func randomScalar(below n: [UInt8]) throws -> [UInt8] {
        let order = Bytes.trimmed(n)
        guard let top = order.first else { throw ChipCryptoError(.invalidInput, "zero order") }
        let mask = UInt8(truncatingIfNeeded: (1 << (8 - top.leadingZeroBitCount)) - 1)
        for _ in 0..<1000 {
            var k = try randomBytes(order.count)
            k[0] &= mask
            if Bytes.compare(k, order) < 0, k.contains(where: { $0 != 0 }) { return k }
        }
        throw ChipCryptoError(.internal, "no random scalar below the order after 1000 draws")
    }
}

/// DES keys carry odd parity in each octet's lowest bit (FIPS 46-3); ICAO 9303-11 §9.7.1 sets it on derived keys.
public enum DESParity {
    public static func adjusted(_ key: [UInt8]) -> [UInt8] {
        key.map { b in
            let high = b & 0xFE
            return high | (high.nonzeroBitCount % 2 == 0 ? 1 : 0)
        }
    }
}
