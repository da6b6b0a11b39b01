import CEMRTD
import Foundation

/// Active Authentication (ICAO 9303-11 §6.1): the chip proves it holds the private key whose public half is in
/// DG15 — signed by the issuer through the SOD — by signing a challenge the verifier chose. A copy of the chip's
/// files cannot do it: the private key never leaves the chip.
///
/// Two signature schemes (§6.1):
/// - **RSA**, ISO/IEC 9796-2 digital signature scheme 1 with partial message recovery: the chip picks a nonce M1,
///   and signs the representative `6A ‖ M1 ‖ H(M1 ‖ challenge) ‖ trailer` with its private key; the trailer is
///   `BC` (SHA-1, implicit) or `hh CC` where `hh` names the hash (ISO/IEC 10118-3: 33 SHA-1, 34 SHA-256, 35 SHA-512,
///   36 SHA-384, 38 SHA-224). The verifier recovers the representative with the public key (raw RSA), checks its
///   structure and the hash over the recovered M1 and its own challenge.
/// - **ECDSA** with the hash DG14's `ActiveAuthenticationInfo` names (`ecdsa-plain-SHA256` …, BSI TR-03111 §5.2.1),
///   over the challenge itself, the signature in the plain format r ‖ s.
///
/// This type verifies (the server) and signs as a chip does (specimen chips, tests, a virtual chip). Evidence, not a
/// verdict: what a failure means for a document is the server policy's.
public enum ActiveAuthentication {
    /// The challenge's length: 8 bytes (ICAO 9303-11 §6.1, the INTERNAL AUTHENTICATE command's RND.IFD).
    public static let challengeLength = 8

    /// `id-icao-mrtd-security-aaProtocolObject` (ICAO 9303-10 Appendix, 9303-11 §9.2: the protocol of ActiveAuthenticationInfo).
    public static let protocolOID = ChipOID.activeAuthentication

    /// How the chip signed: RSA with ISO/IEC 9796-2 scheme 1 and the hash its trailer names (`implicitTrailer`: the
    /// one-byte trailer `BC`, SHA-1), or ECDSA with a plain signature and the hash ActiveAuthenticationInfo names.
    public enum Mechanism: Sendable, Equatable, Codable, CustomStringConvertible {
        case rsaISO9796_2(DigestAlgorithm, implicitTrailer: Bool)
        case ecdsaPlain(DigestAlgorithm)

        public var digest: DigestAlgorithm {
            switch self { case let .rsaISO9796_2(d, _): return d; case let .ecdsaPlain(d): return d }
        }
        /// `rsa-iso9796-2-sha1`, `ecdsa-plain-sha256`, …
        public var description: String {
            switch self {
            case let .rsaISO9796_2(d, _): return "rsa-iso9796-2-" + d.rawValue.lowercased()
            case let .ecdsaPlain(d): return "ecdsa-plain-" + d.rawValue.lowercased()
            }
        }
        public init(from decoder: Decoder) throws {
            let s = try decoder.singleValueContainer().decode(String.self)
            for d in DigestAlgorithm.allCases {
                if s == "rsa-iso9796-2-" + d.rawValue.lowercased() { self = .rsaISO9796_2(d, implicitTrailer: d == .sha1); return }
                if s == "ecdsa-plain-" + d.rawValue.lowercased() { self = .ecdsaPlain(d); return }
            }
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an Active Authentication mechanism: \(s)"))
        }
        public func encode(to encoder: Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(description)
        }
    }

    /// Why a signature was not accepted, one case per fault. The raw values are the evidence's `failure` codes.
    public enum Failure: String, Error, Sendable, Codable, CaseIterable, CustomStringConvertible {
        /// DG15 does not hold a SubjectPublicKeyInfo OpenSSL can read.
        case malformedPublicKey = "public_key_malformed"
        /// DG15's key is neither RSA nor EC.
        case unsupportedKey = "unsupported_key"
        /// An EC key, but no (authenticated) ActiveAuthenticationInfo in DG14 names the signature's hash (§6.1: it
        /// is REQUIRED for ECDSA).
        case signatureAlgorithmNotNamed = "signature_algorithm_not_named"
        /// ActiveAuthenticationInfo names a signature algorithm this verifier does not support (e.g. ecdsa-plain-RIPEMD160).
        case unsupportedSignatureAlgorithm = "unsupported_signature_algorithm"
        /// The signature is not as long as the key requires (RSA: the modulus; ECDSA: twice the group order): truncated or padded.
        case signatureLength = "signature_length"
        /// RSA: the signature, read as an integer, is not below the modulus.
        case signatureOutOfRange = "signature_out_of_range"
        /// RSA: the recovered representative does not begin with the ISO/IEC 9796-2 scheme 1 header of a partial
        /// recovery (`01 1 …` then padding ending in nibble `A`), or leaves no room for M1 — what a signature made
        /// with another key (or altered bytes) recovers to.
        case badPadding = "iso9796_2_bad_padding"
        /// RSA: the representative ends neither in `BC` nor in `hh CC`.
        case badTrailer = "iso9796_2_bad_trailer"
        /// RSA: the trailer names a hash this verifier does not support (RIPEMD-128/160, Whirlpool, …).
        case unsupportedHash = "iso9796_2_unsupported_hash"
        /// RSA: the representative is well-formed, but its hash is not H(M1 ‖ challenge): the chip's key signed
        /// another challenge (a signature replayed from another session) or the M1 bytes were altered.
        case digestMismatch = "digest_mismatch"
        /// ECDSA: the signature does not verify over the challenge with DG15's key (another key, another challenge,
        /// altered bytes: ECDSA cannot tell them apart).
        case signatureInvalid = "signature_invalid"

        public var description: String {
            switch self {
            case .malformedPublicKey: return "DG15 does not hold a readable SubjectPublicKeyInfo"
            case .unsupportedKey: return "DG15's key is neither RSA nor EC"
            case .signatureAlgorithmNotNamed: return "the key is EC but no authenticated ActiveAuthenticationInfo in DG14 names the signature algorithm"
            case .unsupportedSignatureAlgorithm: return "ActiveAuthenticationInfo names an unsupported signature algorithm"
            case .signatureLength: return "the signature is not the length the key requires"
            case .signatureOutOfRange: return "the signature is not below the RSA modulus"
            case .badPadding: return "the recovered message does not have ISO/IEC 9796-2 scheme 1 partial-recovery format"
            case .badTrailer: return "the recovered message's trailer is neither BC nor hh CC"
            case .unsupportedHash: return "the ISO/IEC 9796-2 trailer names an unsupported hash"
            case .digestMismatch: return "the recovered hash is not the hash of M1 and this challenge"
            case .signatureInvalid: return "the ECDSA signature does not verify over this challenge"
            }
        }
    }

    // MARK: Algorithm names

    /// `ecdsa-plain-signatures` (BSI TR-03111 §5.2.1): `0.4.0.127.0.7.1.1.4.1.n`, n = 1 SHA-1, 2 SHA-224, 3 SHA-256,
    /// 4 SHA-384, 5 SHA-512 (6 RIPEMD-160 is not supported).
    public static let ecdsaPlainOIDs: [DigestAlgorithm: String] = [
        .sha1: "0.4.0.127.0.7.1.1.4.1.1", .sha224: "0.4.0.127.0.7.1.1.4.1.2", .sha256: "0.4.0.127.0.7.1.1.4.1.3",
        .sha384: "0.4.0.127.0.7.1.1.4.1.4", .sha512: "0.4.0.127.0.7.1.1.4.1.5",
    ]

    /// The hash of an `ecdsa-plain-*` OID, or nil.
    public static func digest(ofECDSAPlainOID oid: String) -> DigestAlgorithm? { ecdsaPlainOIDs.first { $0.value == oid }?.key }

    /// ISO/IEC 10118-3 hash-function identifiers as ISO/IEC 9796-2 writes them before `CC`.
    public static let hashIdentifiers: [DigestAlgorithm: UInt8] = [.sha1: 0x33, .sha256: 0x34, .sha512: 0x35, .sha384: 0x36, .sha224: 0x38]

    /// The digest's length in bytes.
    static func length(_ d: DigestAlgorithm) -> Int { d.byteCount }

    // MARK: Verifying (the server)

    /// Verifies `signature` over `challenge` with the public key `publicKey` (DER SubjectPublicKeyInfo, DG15's
    /// content). `signatureAlgorithm` is the OID ActiveAuthenticationInfo names (required for EC keys, ignored for
    /// RSA, whose trailer names the hash). Returns the mechanism that verified, or the first fault found.
    public static func verify(challenge: [UInt8], signature: [UInt8], publicKey: [UInt8], signatureAlgorithm: String?) -> Result<Mechanism, Failure> {
        let key: PublicKeyDescription
        do { key = try PublicKeyDescription(subjectPublicKeyInfo: publicKey) } catch { return .failure(.malformedPublicKey) }
        switch key.kind {
        case .rsa: return verifyRSA(challenge: challenge, signature: signature, publicKey: publicKey)
        case .ec:
            guard let oid = signatureAlgorithm else { return .failure(.signatureAlgorithmNotNamed) }
            guard let digest = digest(ofECDSAPlainOID: oid) else { return .failure(.unsupportedSignatureAlgorithm) }
            return verifyECDSA(challenge: challenge, signature: signature, publicKey: publicKey, digest: digest, orderBytes: key.orderBytes ?? 0)
        case .other: return .failure(.unsupportedKey)
        }
    }

    static func verifyRSA(challenge: [UInt8], signature: [UInt8], publicKey: [UInt8]) -> Result<Mechanism, Failure> {
        var out = em_bytes()
        var message = [CChar](repeating: 0, count: 256)
        let st = em_aa_rsa_public_raw(publicKey, publicKey.count, signature, signature.count, &out, &message, message.count)
        guard st == EM_OK else {
            if st == EM_ERR_INVALID_ARGUMENT {
                return .failure(CryptoError.text(message).hasPrefix("signature of") ? .signatureLength : .signatureOutOfRange)
            }
            return .failure(st == EM_ERR_PARSE ? .malformedPublicKey : .unsupportedKey)
        }
        return decodeISO9796_2(takeBytes(out), challenge: challenge)
    }

    /// Checks an ISO/IEC 9796-2 scheme 1 representative recovered from a signature (partial recovery; ICAO 9303-11
    /// §6.1): header `01` and the partial-recovery bit, padding (`B…B` ending in the nibble `A`; none in the
    /// usual `6A` start), M1, the hash, the trailer; then the hash against H(M1 ‖ challenge).
    public static func decodeISO9796_2(_ block: [UInt8], challenge: [UInt8]) -> Result<Mechanism, Failure> {
        guard block.count >= 3 else { return .failure(.badPadding) }
        // Header: the two leftmost bits are 01; the third (partial recovery: M2, the challenge, is not recovered) is 1.
        guard block[0] & 0xC0 == 0x40, block[0] & 0x20 == 0x20 else { return .failure(.badPadding) }
        // The trailer first: it says which hash to expect.
        let digest: DigestAlgorithm, trailerLength: Int
        let last = block[block.count - 1]
        if last == 0xBC {
            digest = .sha1; trailerLength = 1
        } else if last == 0xCC {
            let id = block[block.count - 2]
            guard let d = hashIdentifiers.first(where: { $0.value == id })?.key else {
                // A known ISO/IEC 10118-3 identifier we do not support, or garbage: both end here.
                return .failure((0x31...0x3F).contains(id) ? .unsupportedHash : .badTrailer)
            }
            digest = d; trailerLength = 2
        } else {
            return .failure(.badTrailer)
        }
        // Padding: the message starts after the first byte whose low nibble is A (the header byte itself in `6A`);
        // the nibbles before it are B (ISO/IEC 9796-2 §8.1: padding field of '…BBBA').
        var start = 0
        if block[0] & 0x0F != 0x0A {
            guard block[0] & 0x0F == 0x0B else { return .failure(.badPadding) }
            start = 1
            while start < block.count, block[start] == 0xBB { start += 1 }
            guard start < block.count, block[start] == 0xBA else { return .failure(.badPadding) }
        }
        let m1Start = start + 1
        let hashEnd = block.count - trailerLength
        let hashStart = hashEnd - length(digest)
        guard hashStart > m1Start else { return .failure(.badPadding) }
        let m1 = Array(block[m1Start..<hashStart])
        let recovered = Array(block[hashStart..<hashEnd])
        guard constantTimeEqual(digest.digest(m1 + challenge), recovered) else { return .failure(.digestMismatch) }
        return .success(.rsaISO9796_2(digest, implicitTrailer: trailerLength == 1))
    }

    static func verifyECDSA(challenge: [UInt8], signature: [UInt8], publicKey: [UInt8], digest: DigestAlgorithm, orderBytes: Int) -> Result<Mechanism, Failure> {
        guard orderBytes > 0, signature.count == 2 * orderBytes else { return .failure(.signatureLength) }
        let h = digest.digest(challenge)
        var message = [CChar](repeating: 0, count: 256)
        let r = em_aa_ecdsa_verify_plain(publicKey, publicKey.count, h, h.count, signature, signature.count, &message, message.count)
        switch r {
        case 1: return .success(.ecdsaPlain(digest))
        case 0: return .failure(.signatureInvalid)
        default: return .failure(.malformedPublicKey)
        }
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var d: UInt8 = 0
        for i in 0..<a.count { d |= a[i] ^ b[i] }
        return d == 0
    }

    // MARK: Signing (what a chip does)

    /// Signs `challenge` as an eMRTD chip's INTERNAL AUTHENTICATE does (ICAO 9303-11 §6.1), with `key`:
    /// - RSA: ISO/IEC 9796-2 scheme 1, partial recovery, `digest` (SHA-1 with the implicit trailer `BC` unless
    ///   `explicitTrailer`; any other hash with `hh CC`), M1 = `m1` or fresh random bytes filling the representative;
    /// - EC: ECDSA over H(challenge) with `digest` (the one the chip's ActiveAuthenticationInfo names), plain r ‖ s.
    /// For specimen chips, tests and a virtual chip. Throws `CryptoError` for a key of another kind, or an `m1` of
    /// the wrong length (it must be modulus bytes − hash length − trailer length − 1).
    public static func sign(challenge: [UInt8], with key: SigningKey, digest: DigestAlgorithm, explicitTrailer: Bool = false,
                            m1: [UInt8]? = nil) throws -> [UInt8] {
        let description = try key.publicKeyDescription()
        switch description.kind {
        case .rsa:
            let k = (description.bits + 7) / 8
            let trailer: [UInt8] = digest == .sha1 && !explicitTrailer ? [0xBC] : [hashIdentifiers[digest]!, 0xCC]
            let m1Length = k - length(digest) - trailer.count - 1
            guard m1Length > 0 else { throw CryptoError(EM_ERR_INVALID_ARGUMENT, Array("the RSA key is too short for this hash".utf8CString)) }
            let nonce = m1 ?? SecureRandom.bytes(m1Length)
            guard nonce.count == m1Length else {
                throw CryptoError(EM_ERR_INVALID_ARGUMENT, Array("M1 must be \(m1Length) bytes for this key and hash".utf8CString))
            }
            let block = [0x6A] + nonce + digest.digest(nonce + challenge) + trailer
            return try key.rsaPrivateRaw(block)
        case .ec:
            return try key.ecdsaSignPlain(digest: digest.digest(challenge))
        case .other:
            throw CryptoError(EM_ERR_UNSUPPORTED, Array("Active Authentication needs an RSA or EC key".utf8CString))
        }
    }

    /// The raw RSA public operation on `signature` with `publicKey` (SPKI): the ISO/IEC 9796-2 representative a
    /// verifier recovers. For tests that build malformed signatures.
    public static func recoverRSA(signature: [UInt8], publicKey: [UInt8]) throws -> [UInt8] {
        var out = em_bytes()
        try shim { em_aa_rsa_public_raw(publicKey, publicKey.count, signature, signature.count, &out, $0, $1) }
        return takeBytes(out)
    }

    /// The raw RSA private operation on `block` with `key`: a "signature" of any representative. For tests that
    /// build malformed signatures (bad padding, bad trailer) the way a faulty or forged chip would.
    public static func rsaPrivateOperation(_ block: [UInt8], with key: SigningKey) throws -> [UInt8] { try key.rsaPrivateRaw(block) }
}

extension ActiveAuthentication {
    /// The `signatureAlgorithm` OID of the ActiveAuthenticationInfo in DG14's SecurityInfos (ICAO 9303-11 §9.2), or
    /// nil when DG14 holds none; read with EMRTDCore's typed ``SecurityInfos``. Throws `LDSError` when DG14 is not
    /// tag 6E around a SecurityInfos SET or a SecurityInfo in it is malformed.
    public static func signatureAlgorithm(dataGroup14 bytes: [UInt8]) throws -> String? {
        do { return try SecurityInfos(dg14: bytes).activeAuthenticationInfo?.signatureAlgorithm } catch {
            throw LDSError.invalid(LDSFile.dataGroup(14), "SecurityInfos: \(error)")
        }
    }

    /// Verifies a chip's Active Authentication from its files after passive authentication (ICAO 9303-11 §6.1 on
    /// §5.1): the key is DG15's only when the SOD's signature verified and DG15's hash matched it; for an EC key the
    /// hash is the one an authenticated DG14's ActiveAuthenticationInfo names. `challenge` is the verifier's own
    /// (8 bytes); `signature` the chip's response; both nil when the client did not run AA.
    ///
    /// Outcomes, in this order: no DG15 → `notSupported`; no signature → `notPerformed`; DG15 not authenticated by
    /// passive authentication → `keyNotAuthenticated` (the signature is not looked at); otherwise `verified` or
    /// `failed` with the fault.
    public static func evaluate(_ report: ChipReport, files: ChipFiles, challenge: [UInt8]?, signature: [UInt8]?) -> ActiveAuthenticationEvidence {
        guard let dg15Bytes = files.dataGroups[15] else { return ActiveAuthenticationEvidence(outcome: .notSupported) }
        let pa = report.passiveAuthentication
        func authenticated(_ n: Int) -> Bool {
            pa.signature.outcome == .valid && pa.dataGroups.contains { $0.dataGroup == n && $0.outcome == .matches }
        }
        let key = report.dg15.flatMap { try? PublicKeyDescription(subjectPublicKeyInfo: $0.subjectPublicKeyInfo) }
        // ActiveAuthenticationInfo is read only from a DG14 whose hash the SOD vouches for.
        let named = authenticated(14) ? files.dataGroups[14].flatMap { try? signatureAlgorithm(dataGroup14: $0) } : nil
        var evidence = ActiveAuthenticationEvidence(outcome: .notPerformed, key: key, signatureAlgorithm: named)
        guard let challenge, let signature else { return evidence }
        guard authenticated(15) else { evidence.outcome = .keyNotAuthenticated; return evidence }
        guard let dg15 = report.dg15 ?? (try? DG15(dg15Bytes)) else {
            evidence.outcome = .failed
            evidence.failure = .malformedPublicKey
            return evidence
        }
        switch verify(challenge: challenge, signature: signature, publicKey: dg15.subjectPublicKeyInfo, signatureAlgorithm: named) {
        case let .success(m): evidence.outcome = .verified; evidence.mechanism = m
        case let .failure(f): evidence.outcome = .failed; evidence.failure = f
        }
        return evidence
    }
}

/// What Active Authentication (ICAO 9303-11 §6.1) showed for one chip and one challenge. Evidence, no verdict.
public struct ActiveAuthenticationEvidence: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        /// The signature verifies with DG15's (authenticated) key over the verifier's challenge: a chip holding the
        /// private key answered.
        case verified
        /// A signature was given and did not verify (`failure` says why).
        case failed
        /// The chip has no DG15: it does not support Active Authentication.
        case notSupported = "not_supported"
        /// DG15 is there but no signature was given (the client did not run AA).
        case notPerformed = "not_performed"
        /// A signature was given, but DG15 is not authenticated (the SOD's signature did not verify, or DG15's hash
        /// is not the one it signs, or the SOD does not list DG15): its key proves nothing.
        case keyNotAuthenticated = "key_not_authenticated"
    }
    public var outcome: Outcome
    /// Why it failed (`outcome` failed).
    public var failure: ActiveAuthentication.Failure?
    /// How the chip signed (`outcome` verified).
    public var mechanism: ActiveAuthentication.Mechanism?
    /// DG15's key, when it could be read.
    public var key: PublicKeyDescription?
    /// The signature algorithm OID an authenticated DG14's ActiveAuthenticationInfo names, if any.
    public var signatureAlgorithm: String?

    public init(outcome: Outcome, failure: ActiveAuthentication.Failure? = nil, mechanism: ActiveAuthentication.Mechanism? = nil,
                key: PublicKeyDescription? = nil, signatureAlgorithm: String? = nil) {
        self.outcome = outcome
        self.failure = failure
        self.mechanism = mechanism
        self.key = key
        self.signatureAlgorithm = signatureAlgorithm
    }
}

extension DigestAlgorithm {
    /// The digest's length in bytes (SHA-1 20, SHA-224 28, SHA-256 32, SHA-384 48, SHA-512 64).
    public var byteCount: Int {
        switch self { case .sha1: return 20; case .sha224: return 28; case .sha256: return 32; case .sha384: return 48; case .sha512: return 64 }
    }
}
