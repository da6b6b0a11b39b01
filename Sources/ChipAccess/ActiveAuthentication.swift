import EMRTDCore

/// Active Authentication (ICAO 9303-11 §6.1): the chip signs a challenge with the private key of DG15's public
/// key, which cannot be read out, so a signature over a fresh challenge shows the chip itself answered. The
/// server verifies it over its own challenge; `verify` lets a client check it too.
///
/// - RSA: ISO/IEC 9796-2 digital signature scheme 1 with partial message recovery: the chip picks M1, the
///   challenge is M2, and the signature is (6A ‖ M1 ‖ H(M1 ‖ M2) ‖ trailer)^d mod n with trailer `BC` (SHA-1) or
///   `hh CC` (`hh` the ISO/IEC 10118-3 hash identifier: 34 SHA-256, 36 SHA-384, 35 SHA-512, 38 SHA-224).
/// - ECDSA: the plain signature r ‖ s (BSI TR-03111 §5.2.1) over the challenge with the hash DG14's
///   ActiveAuthenticationInfo names.
public enum ActiveAuthentication {
    /// The challenge length ICAO 9303-11 §6.1.2 gives INTERNAL AUTHENTICATE.
    public static let challengeLength = 8

    /// INTERNAL AUTHENTICATE (`00 88 00 00 08 challenge 00`) on `channel`: the chip's signature octets. Throws
    /// `ChipAccessError.invalidInput` for a challenge that is not 8 octets, `.unexpectedStatus` when the chip refuses.
    public static func run(on channel: APDUChannel, challenge: [UInt8]) throws -> [UInt8] {
        guard challenge.count == challengeLength else {
            throw ChipAccessError.invalidInput("an Active Authentication challenge is \(challengeLength) octets, not \(challenge.count)")
        }
        let ne = channel.extendedLength ? 65_536 : 256
        let r = try channel.send(CommandAPDU(ins: 0x88, p1: 0, p2: 0, data: challenge, ne: ne))
        guard r.status.isSuccess else { throw ChipAccessError.unexpectedStatus(command: "INTERNAL AUTHENTICATE", status: r.status) }
        guard !r.data.isEmpty else { throw ChipAccessError.malformedResponse("INTERNAL AUTHENTICATE returned no signature") }
        return r.data
    }

    /// The outcome of checking a signature.
    public enum Verification: Sendable, Equatable {
        /// The signature verifies; `algorithm` names the scheme and hash (`ISO/IEC 9796-2 scheme 1, SHA-256`).
        case verified(algorithm: String)
        /// It does not, and why (`the recovered hash differs`, `r ≥ n`, …).
        case failed(String)

        public var isVerified: Bool { if case .verified = self { return true } else { return false } }
    }

    /// Checks `signature` over `challenge` with DG15's `publicKey` (`info`: DG14's ActiveAuthenticationInfo,
    /// required for EC keys). Uses only the `ChipCryptography` primitives (modular exponentiation and EC point
    /// arithmetic), so it runs wherever chip access does.
    public static func verify(signature: [UInt8], challenge: [UInt8], publicKey: SubjectPublicKeyInfo, info: ActiveAuthenticationInfo?,
                              crypto: ChipCryptography) -> Verification {
        switch publicKey.key {
        case let .rsa(modulus, exponent):
            return verifyRSA(signature: signature, challenge: challenge, modulus: modulus, exponent: exponent, crypto: crypto)
        case let .ec(curve, point):
            guard let algorithm = info?.ecdsaPlain else {
                return .failed(info == nil ? "an EC Active Authentication key needs DG14's ActiveAuthenticationInfo to name the hash"
                                           : "signature algorithm \(info!.signatureAlgorithm) is not an ECDSA plain signature")
            }
            return verifyECDSA(signature: signature, digest: crypto.digest(algorithm.hash, challenge), curve: curve, publicKey: point,
                               crypto: crypto).map(algorithm.rawValue)
        case .dh:
            return .failed("a DH key cannot sign")
        }
    }

    static func verifyRSA(signature: [UInt8], challenge: [UInt8], modulus n: [UInt8], exponent e: [UInt8], crypto: ChipCryptography) -> Verification {
        let k = n.count
        guard signature.count == k, Bytes.compare(signature, n) < 0 else { return .failed("a signature of \(signature.count) octets for a \(k)-octet modulus") }
        guard let m = try? crypto.modExp(base: signature, exponent: e, modulus: n) else { return .failed("the RSA public-key operation failed") }
        guard let last = m.last, m.count == k, m[0] & 0xC0 == 0x40 else { return .failed("the recovered message does not start with ISO/IEC 9796-2 header bits 01") }
        let hash: HashAlgorithm
        let trailer: Int
        if last == 0xBC {
            hash = .sha1; trailer = 1
        } else if last == 0xCC, let h = HashAlgorithm(iso10118Identifier: m[k - 2]) {
            hash = h; trailer = 2
        } else {
            return .failed(String(format: "unknown ISO/IEC 9796-2 trailer %02X %02X", m[k - 2], last))
        }
        guard m[0] & 0x20 != 0 else { return .failed("the message is totally recoverable; Active Authentication uses partial recovery") }
        // Padding: the header nibble 6, nibbles B, then a nibble A before M1.
        var start = 0
        if m[0] & 0x0F == 0x0A {
            start = 1
        } else if m[0] & 0x0F == 0x0B {
            var i = 1
            while i < k, m[i] == 0xBB { i += 1 }
            guard i < k, m[i] == 0xBA else { return .failed("malformed ISO/IEC 9796-2 padding") }
            start = i + 1
        } else {
            return .failed("malformed ISO/IEC 9796-2 header")
        }
        let hEnd = k - trailer, hStart = hEnd - hash.length
        guard hStart >= start else { return .failed("the modulus is too short for \(hash.rawValue)") }
        let m1 = Array(m[start..<hStart])
        let expected = crypto.digest(hash, m1 + challenge)
        guard Bytes.constantTimeEqual(expected, Array(m[hStart..<hEnd])) else { return .failed("the recovered hash differs from H(M1 ‖ challenge)") }
        return .verified(algorithm: "ISO/IEC 9796-2 scheme 1, \(hash.rawValue)")
    }

    enum ECDSAResult { case ok, bad(String)
        func map(_ name: String) -> Verification { if case .bad(let s) = self { return .failed(s) } else { return .verified(algorithm: name) } }
    }

    /// ECDSA verification (BSI TR-03111 §4.2.1.2) of a plain r ‖ s over a digest, on the primitives.
    static func verifyECDSA(signature: [UInt8], digest: [UInt8], curve: ECCurveParameters, publicKey q: [UInt8], crypto: ChipCryptography) -> ECDSAResult {
        let n = curve.order
        let l = n.count
        guard signature.count == 2 * l else { return .bad("a plain ECDSA signature of \(signature.count) octets, \(2 * l) expected") }
        let r = Array(signature[0..<l]), s = Array(signature[l...])
        for v in [r, s] where Bytes.compare(v, [0]) == 0 || Bytes.compare(v, n) >= 0 { return .bad("r or s outside [1, n−1]") }
        guard crypto.ecIsOnCurve(curve, q) else { return .bad("the public key is not on the curve") }
        // e: the leftmost bits of the digest, as many as n has.
        let e = Bytes.leftmostBits(digest, count: Bytes.bitLength(n))
        do {
            let w = try crypto.modExp(base: s, exponent: Bytes.minus(n, 2), modulus: n)   // n is prime
            let u1 = try crypto.modMultiply(e, w, modulus: n), u2 = try crypto.modMultiply(r, w, modulus: n)
            let qPart = try crypto.ecMultiply(curve, scalar: u2, point: q)
            let point = Bytes.compare(u1, [0]) == 0 ? qPart : try crypto.ecAdd(curve, try crypto.ecMultiply(curve, scalar: u1, point: nil), qPart)
            guard let x = curve.xCoordinate(of: point) else { return .bad("a point of the wrong size") }
            let v = try crypto.modMultiply(x, [1], modulus: n)
            return Bytes.compare(v, r) == 0 ? .ok : .bad("the signature does not verify")
        } catch {
            return .bad("the signature does not verify (\(error))")
        }
    }

    /// The ISO/IEC 9796-2 scheme 1 message representative a chip signs (`6A ‖ M1 ‖ H(M1 ‖ challenge) ‖ trailer`,
    /// `k` octets): `m1` must be `k − 1 − hash length − trailer length` octets.
    public static func iso9796Representative(m1: [UInt8], challenge: [UInt8], hash: HashAlgorithm, modulusLength k: Int,
                                             crypto: ChipCryptography) -> [UInt8] {
        let trailer: [UInt8] = hash == .sha1 ? [0xBC] : [hash.iso10118Identifier, 0xCC]
        precondition(m1.count == k - 1 - hash.length - trailer.count, "M1 of the wrong length")
        return [0x6A] + m1 + crypto.digest(hash, m1 + challenge) + trailer
    }
}

extension Bytes {
    /// The leftmost `count` bits of `bytes` as an integer (right-aligned octets): ECDSA's e (BSI TR-03111 §4.2.1).
    static func leftmostBits(_ bytes: [UInt8], count: Int) -> [UInt8] {
        let total = bytes.count * 8
        guard total > count else { return bytes }
        let shift = total - count
        var out = [UInt8](repeating: 0, count: bytes.count)
        let byteShift = shift / 8, bitShift = shift % 8
        for i in stride(from: bytes.count - 1, through: byteShift, by: -1) {
            let src = i - byteShift
            var v = UInt16(bytes[src]) >> bitShift
            if bitShift > 0, src > 0 { v |= UInt16(bytes[src - 1]) << (8 - bitShift) }
            out[i] = UInt8(v & 0xFF)
        }
        return out
    }

    /// `a` − `small` for a big-endian `a` ≥ `small`.
    static func minus(_ a: [UInt8], _ small: UInt8) -> [UInt8] {
        var out = a
        var borrow = Int(small)
        var i = out.count - 1
        while borrow > 0, i >= 0 {
            let v = Int(out[i]) - borrow
            out[i] = UInt8((v + 256) % 256)
            borrow = v < 0 ? 1 : 0
            i -= 1
        }
        return out
    }
}
