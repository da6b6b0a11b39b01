/// The chip-side security protocols and their OBJECT IDENTIFIERs (ICAO 9303-11 §9.2 and §9.5, BSI TR-03110-3
/// Appendix A.1, BSI TR-03111 §5.2): PACE, Chip Authentication, Active Authentication and their algorithms.

/// The OBJECT IDENTIFIER arcs the SecurityInfos use, dotted.
public enum ChipOID {
    /// bsi-de: 0.4.0.127.0.7.
    public static let bsi = "0.4.0.127.0.7"
    /// id-PK (TR-03110-3 A.1.1): Chip Authentication public keys; `.1` DH, `.2` ECDH.
    public static let pk = bsi + ".2.2.1"
    public static let pkDH = pk + ".1"
    public static let pkECDH = pk + ".2"
    /// id-TA: Terminal Authentication (EAC, not used by ICAO inspection).
    public static let ta = bsi + ".2.2.2"
    /// id-CA: Chip Authentication; `.1` DH, `.2` ECDH, then the cipher arc.
    public static let ca = bsi + ".2.2.3"
    /// id-PACE: `.1` DH-GM, `.2` ECDH-GM, `.3` DH-IM, `.4` ECDH-IM, `.6` ECDH-CAM, then the cipher arc.
    public static let pace = bsi + ".2.2.4"
    /// standardizedDomainParameters (TR-03110-3 A.2.1.1): an AlgorithmIdentifier whose parameter is an ID of
    /// `StandardizedDomainParameters`.
    public static let standardizedDomainParameters = bsi + ".1.2"
    /// ecdsa-plain-signatures (TR-03111 §5.2.1): `.1` SHA-1, `.2` SHA-224, `.3` SHA-256, `.4` SHA-384, `.5` SHA-512.
    public static let ecdsaPlainSignatures = bsi + ".1.1.4.1"
    /// id-icao-mrtd-security-aaProtocolObject (ICAO 9303-11 §9.2.11).
    public static let activeAuthentication = "2.23.136.1.1.5"
    /// ecPublicKey (RFC 5480), dhpublicnumber (X9.42, RFC 3279), rsaEncryption (RFC 8017).
    public static let ecPublicKey = "1.2.840.10045.2.1"
    public static let dhPublicNumber = "1.2.840.10046.2.1"
    /// dhKeyAgreement (PKCS #3), which older chips' DG14 use for DH Chip Authentication keys (ICAO 9303-11's sample).
    public static let dhKeyAgreement = "1.2.840.113549.1.3.1"
    public static let rsaEncryption = "1.2.840.113549.1.1.1"
    /// prime-field (X9.62).
    public static let primeField = "1.2.840.10045.1.1"
}

/// The key agreement of PACE or Chip Authentication: classic Diffie-Hellman or ECDH (ICAO 9303-11 §9.5).
public enum KeyAgreementAlgorithm: String, Sendable, Hashable, Codable, CaseIterable {
    case dh = "DH"
    case ecdh = "ECDH"
}

/// The symmetric algorithms of a PACE or Chip Authentication protocol OID's last arc (ICAO 9303-11 §9.2.1): the
/// block cipher of secure messaging and its MAC (ISO/IEC 9797-1 MAC algorithm 3 "retail MAC" for 3DES, CMAC
/// for AES), and the session-key length.
public enum SessionCipher: String, Sendable, Hashable, Codable, CaseIterable {
    case tripleDES = "3DES-CBC-CBC"
    case aes128 = "AES-CBC-CMAC-128"
    case aes192 = "AES-CBC-CMAC-192"
    case aes256 = "AES-CBC-CMAC-256"

    /// The last OID arc (1…4).
    public var arc: Int {
        switch self {
        case .tripleDES: return 1
        case .aes128: return 2
        case .aes192: return 3
        case .aes256: return 4
        }
    }

    public init?(arc: Int) {
        guard let c = Self.allCases.first(where: { $0.arc == arc }) else { return nil }
        self = c
    }

    /// Session key length in octets (two-key 3DES: 16).
    public var keyLength: Int {
        switch self {
        case .tripleDES: return 16
        case .aes128: return 16
        case .aes192: return 24
        case .aes256: return 32
        }
    }

    /// Cipher block length in octets, which is also the send sequence counter's length (ICAO 9303-11 §9.8.2).
    public var blockSize: Int { self == .tripleDES ? 8 : 16 }
}

/// The PACE mapping (ICAO 9303-11 §4.4.3.3).
public enum PACEMapping: String, Sendable, Hashable, Codable {
    /// Generic Mapping: the new generator is s·G + H (ECDH) or g^s·h (DH).
    case generic = "GM"
    /// Integrated Mapping (a pseudo-random function of the nonce).
    case integrated = "IM"
    /// Chip Authentication Mapping (generic mapping plus the chip's static key).
    case chipAuthentication = "CAM"
}

/// One PACE protocol: mapping, key agreement and cipher, as its OBJECT IDENTIFIER names them
/// (`id-PACE-ECDH-GM-AES-CBC-CMAC-128` = 0.4.0.127.0.7.2.2.4.2.2; ICAO 9303-11 §9.2.1 Table 5).
public struct PACEProtocol: Sendable, Hashable, Codable, CustomStringConvertible {
    public var mapping: PACEMapping
    public var keyAgreement: KeyAgreementAlgorithm
    public var cipher: SessionCipher

    public init(mapping: PACEMapping, keyAgreement: KeyAgreementAlgorithm, cipher: SessionCipher) {
        self.mapping = mapping; self.keyAgreement = keyAgreement; self.cipher = cipher
    }

    /// The arc after id-PACE for a mapping and agreement (nil for a combination the standard does not define).
    static func familyArc(_ m: PACEMapping, _ k: KeyAgreementAlgorithm) -> Int? {
        switch (m, k) {
        case (.generic, .dh): return 1
        case (.generic, .ecdh): return 2
        case (.integrated, .dh): return 3
        case (.integrated, .ecdh): return 4
        case (.chipAuthentication, .ecdh): return 6
        case (.chipAuthentication, .dh): return nil
        }
    }

    static func family(arc: Int) -> (PACEMapping, KeyAgreementAlgorithm)? {
        switch arc {
        case 1: return (.generic, .dh)
        case 2: return (.generic, .ecdh)
        case 3: return (.integrated, .dh)
        case 4: return (.integrated, .ecdh)
        case 6: return (.chipAuthentication, .ecdh)
        default: return nil
        }
    }

    /// The protocol's OID, dotted.
    public var oid: String { "\(ChipOID.pace).\(Self.familyArc(mapping, keyAgreement) ?? 0).\(cipher.arc)" }

    /// The protocol named by `oid`, or nil when it is not a PACE protocol OID.
    public init?(oid: String) {
        guard oid.hasPrefix(ChipOID.pace + ".") else { return nil }
        let arcs = oid.dropFirst(ChipOID.pace.count + 1).split(separator: ".").compactMap { Int($0) }
        guard arcs.count == 2, let (m, k) = Self.family(arc: arcs[0]), let c = SessionCipher(arc: arcs[1]) else { return nil }
        self.init(mapping: m, keyAgreement: k, cipher: c)
    }

    /// `id-PACE-ECDH-GM-AES-CBC-CMAC-128`.
    public var description: String { "id-PACE-\(keyAgreement.rawValue)-\(mapping.rawValue)-\(cipher.rawValue)" }
}

/// One Chip Authentication protocol (ICAO 9303-11 §9.2.5): key agreement and cipher
/// (`id-CA-ECDH-AES-CBC-CMAC-128` = 0.4.0.127.0.7.2.2.3.2.2).
public struct ChipAuthenticationProtocol: Sendable, Hashable, Codable, CustomStringConvertible {
    public var keyAgreement: KeyAgreementAlgorithm
    public var cipher: SessionCipher

    public init(keyAgreement: KeyAgreementAlgorithm, cipher: SessionCipher) { self.keyAgreement = keyAgreement; self.cipher = cipher }

    public var oid: String { "\(ChipOID.ca).\(keyAgreement == .dh ? 1 : 2).\(cipher.arc)" }

    public init?(oid: String) {
        guard oid.hasPrefix(ChipOID.ca + ".") else { return nil }
        let arcs = oid.dropFirst(ChipOID.ca.count + 1).split(separator: ".").compactMap { Int($0) }
        guard arcs.count == 2, arcs[0] == 1 || arcs[0] == 2, let c = SessionCipher(arc: arcs[1]) else { return nil }
        self.init(keyAgreement: arcs[0] == 1 ? .dh : .ecdh, cipher: c)
    }

    public var description: String { "id-CA-\(keyAgreement.rawValue)-\(cipher.rawValue)" }
}

/// The hash functions of the chip protocols (FIPS 180-4).
public enum HashAlgorithm: String, Sendable, Hashable, Codable, CaseIterable {
    case sha1 = "SHA-1", sha224 = "SHA-224", sha256 = "SHA-256", sha384 = "SHA-384", sha512 = "SHA-512"

    /// Digest length in octets.
    public var length: Int {
        switch self {
        case .sha1: return 20
        case .sha224: return 28
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        }
    }

    /// The ISO/IEC 10118-3 hash identifier an ISO/IEC 9796-2 trailer `hh CC` names (0x33 SHA-1, 0x34 SHA-256,
    /// 0x35 SHA-512, 0x36 SHA-384, 0x38 SHA-224).
    public var iso10118Identifier: UInt8 {
        switch self {
        case .sha1: return 0x33
        case .sha256: return 0x34
        case .sha512: return 0x35
        case .sha384: return 0x36
        case .sha224: return 0x38
        }
    }

    public init?(iso10118Identifier id: UInt8) {
        guard let h = Self.allCases.first(where: { $0.iso10118Identifier == id }) else { return nil }
        self = h
    }
}

/// The ECDSA plain-signature algorithms of BSI TR-03111 §5.2.1 that an ActiveAuthenticationInfo names: the
/// signature is r ‖ s, each the length of the order, over the hash of the challenge.
public enum ECDSAPlainSignature: String, Sendable, Hashable, Codable, CaseIterable {
    case sha1 = "ecdsa-plain-SHA1", sha224 = "ecdsa-plain-SHA224", sha256 = "ecdsa-plain-SHA256"
    case sha384 = "ecdsa-plain-SHA384", sha512 = "ecdsa-plain-SHA512"

    public var hash: HashAlgorithm {
        switch self {
        case .sha1: return .sha1
        case .sha224: return .sha224
        case .sha256: return .sha256
        case .sha384: return .sha384
        case .sha512: return .sha512
        }
    }

    public var oid: String {
        switch self {
        case .sha1: return ChipOID.ecdsaPlainSignatures + ".1"
        case .sha224: return ChipOID.ecdsaPlainSignatures + ".2"
        case .sha256: return ChipOID.ecdsaPlainSignatures + ".3"
        case .sha384: return ChipOID.ecdsaPlainSignatures + ".4"
        case .sha512: return ChipOID.ecdsaPlainSignatures + ".5"
        }
    }

    public init?(oid: String) {
        guard let s = Self.allCases.first(where: { $0.oid == oid }) else { return nil }
        self = s
    }
}
