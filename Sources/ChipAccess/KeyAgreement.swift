import EMRTDCore

/// One Diffie-Hellman or ECDH domain with the operations PACE's generic mapping and Chip Authentication need
/// (ICAO 9303-11 §4.4.3.3.1, §4.4.3.4, §6.2; BSI TR-03111 §4.3.1). Keys: a private key is an integer (octets);
/// a public key is an uncompressed point (ECDH) or a group element left-padded to the modulus's size (DH).
public struct KeyAgreementDomain: Sendable, Equatable {
    public let parameters: DomainParameters
    /// The generator key pairs are made with: the domain's own, or the mapped one after PACE's mapping.
    public let generator: [UInt8]

    public init(_ parameters: DomainParameters) {
        self.parameters = parameters
        switch parameters {
        case .ec(let c): generator = c.generator
        case .dh(let g): generator = Bytes.leftPadded(g.g, to: g.size)
        }
    }

    init(_ parameters: DomainParameters, generator: [UInt8]) { self.parameters = parameters; self.generator = generator }

    public var algorithm: KeyAgreementAlgorithm { if case .ec = parameters { return .ecdh } else { return .dh } }

    /// A random private key: in [1, n−1] for a curve of order n; in [1, q−1] for a DH group with a known subgroup
    /// order q, else an exponent of the modulus's size minus one octet.
    public func randomPrivateKey(_ crypto: ChipCryptography) throws -> [UInt8] {
        switch parameters {
        case .ec(let c): return try chipCrypto { try crypto.randomScalar(below: c.order) }
        case .dh(let g):
            if let q = g.q { return try chipCrypto { try crypto.randomScalar(below: q) } }
            return try chipCrypto { try crypto.randomScalar(below: Array(g.p.dropFirst())) }
        }
    }

    /// The public key of `privateKey` on this domain's generator.
    public func publicKey(_ privateKey: [UInt8], _ crypto: ChipCryptography) throws -> [UInt8] {
        switch parameters {
        case .ec(let c): return try chipCrypto { try crypto.ecMultiply(c, scalar: privateKey, point: generator) }
        case .dh(let g): return try chipCrypto { try crypto.modExp(base: generator, exponent: privateKey, modulus: g.p) }
        }
    }

    /// Whether `key` is a valid public key of this domain: a point on the curve (not at infinity); a DH value with
    /// 1 < y < p − 1 and, when q is known, y^q = 1 (BSI TR-03111 §4.3.2.2, ICAO 9303-11 §4.4.3.4 note).
    public func isValidPublicKey(_ key: [UInt8], _ crypto: ChipCryptography) -> Bool {
        switch parameters {
        case .ec(let c): return key.count == c.pointSize && crypto.ecIsOnCurve(c, key)
        case .dh(let g):
            guard key.count <= g.size, Bytes.compare(key, [1]) > 0 else { return false }
            var pMinusOne = g.p
            pMinusOne[pMinusOne.count - 1] &-= 1   // p is odd, so no borrow
            guard Bytes.compare(key, pMinusOne) < 0 else { return false }
            guard let q = g.q else { return true }
            guard let r = try? crypto.modExp(base: key, exponent: q, modulus: g.p) else { return false }
            return Bytes.compare(r, [1]) == 0
        }
    }

    /// The shared group element: `privateKey`·`peer` (ECDH) or `peer`^`privateKey` mod p (DH). Throws
    /// `ChipAccessError.authenticationFailed` for an invalid peer key.
    public func sharedElement(_ privateKey: [UInt8], peer: [UInt8], _ crypto: ChipCryptography) throws -> [UInt8] {
        guard isValidPublicKey(peer, crypto) else { throw ChipAccessError.authenticationFailed("the other party's public key is not a valid \(algorithm.rawValue) key of \(parameters)") }
        switch parameters {
        case .ec(let c): return try chipCrypto { try crypto.ecMultiply(c, scalar: privateKey, point: peer) }
        case .dh(let g): return try chipCrypto { try crypto.modExp(base: peer, exponent: privateKey, modulus: g.p) }
        }
    }

    /// The shared secret's octet string, the KDF's input (BSI TR-03111 §4.3.1): the x-coordinate (ECDH) or the
    /// element (DH), as long as a field element.
    public func sharedSecret(_ privateKey: [UInt8], peer: [UInt8], _ crypto: ChipCryptography) throws -> [UInt8] {
        let z = try sharedElement(privateKey, peer: peer, crypto)
        switch parameters {
        case .ec(let c):
            guard let x = c.xCoordinate(of: z) else { throw ChipAccessError.crypto("a shared point of the wrong size") }
            return x
        case .dh(let g): return Bytes.leftPadded(z, to: g.size)
        }
    }

    /// PACE generic mapping (ICAO 9303-11 §4.4.3.3.1): the domain with generator s·G + H (ECDH) or g^s·h mod p
    /// (DH), from the decrypted nonce s and the mapping's shared element H. Throws when H is the identity.
    public func mapped(nonce s: [UInt8], shared h: [UInt8], _ crypto: ChipCryptography) throws -> KeyAgreementDomain {
        switch parameters {
        case .ec(let c):
            let sG = try chipCrypto { try crypto.ecMultiply(c, scalar: s, point: generator) }
            let g = try chipCrypto { try crypto.ecAdd(c, sG, h) }
            return KeyAgreementDomain(parameters, generator: g)
        case .dh(let grp):
            guard Bytes.compare(h, [1]) != 0 else { throw ChipAccessError.authenticationFailed("the mapping's shared element is 1") }
            let gs = try chipCrypto { try crypto.modExp(base: generator, exponent: s, modulus: grp.p) }
            let g = try chipCrypto { try crypto.modMultiply(gs, h, modulus: grp.p) }
            return KeyAgreementDomain(parameters, generator: g)
        }
    }

    /// A public key as PACE's authentication token input encodes it inside the public-key data object 7F49
    /// (ICAO 9303-11 §4.4.3.4, BSI TR-03110-3 D.3.4/D.3.5): DO'86' with the point (ECDH), DO'84' with y (DH).
    public func publicKeyObject(_ key: [UInt8]) -> [UInt8] {
        switch parameters {
        case .ec: return DER.tlv(0x86, key)
        case .dh(let g): return DER.tlv(0x84, Bytes.leftPadded(key, to: g.size))
        }
    }
}
