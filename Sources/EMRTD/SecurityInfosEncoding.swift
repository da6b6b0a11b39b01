import Foundation

/// Encoding of SecurityInfos (ICAO 9303-11 §9.2; BSI TR-03110-3 §A.1) for specimen chips: EF.CardAccess (PACE)
/// and DG14 (PACE, Chip Authentication, Active Authentication). DER throughout — SET OF elements in ascending order
/// of their encodings (X.690 §11.6). Reading them back is the SecurityInfos parser's job; this side only writes.
public enum SecurityInfoEncoding {
    /// Protocol object identifiers used by specimen chips (BSI TR-03110-3 §A.1.1 under bsi-de 0.4.0.127.0.7, and
    /// ICAO's id-icao-mrtd-security 2.23.136.1.1).
    public enum OID {
        /// id-PACE-ECDH-GM-AES-CBC-CMAC-128: PACE, generic mapping over ECDH, AES-128 secure messaging.
        public static let paceECDHGenericMappingAES128 = "0.4.0.127.0.7.2.2.4.2.2"
        /// id-PK-ECDH: a Chip Authentication public key for ECDH.
        public static let chipAuthenticationPublicKeyECDH = "0.4.0.127.0.7.2.2.1.2"
        /// id-CA-ECDH-AES-CBC-CMAC-128: Chip Authentication over ECDH, AES-128 secure messaging.
        public static let chipAuthenticationECDHAES128 = "0.4.0.127.0.7.2.2.3.2.2"
        /// id-icao-mrtd-security-aaProtocolObject (ActiveAuthenticationInfo).
        public static let activeAuthentication = ActiveAuthentication.protocolOID
    }

    /// PACE standardized domain parameter identifiers (ICAO 9303-11 §9.5.1, standardized domain parameters): 12 = NIST P-256 (secp256r1),
    /// 13 = brainpoolP256r1, 16 = brainpoolP384r1, 17 = brainpoolP512r1.
    public enum PACEParameterID {
        public static let nistP256 = 12
        public static let brainpoolP256r1 = 13
        public static let brainpoolP384r1 = 16
        public static let brainpoolP512r1 = 17
    }

    /// `PACEInfo ::= SEQUENCE { protocol OBJECT IDENTIFIER, version INTEGER -- 2, parameterId INTEGER OPTIONAL }`
    /// (ICAO 9303-11 §9.2, SecurityInfos for PACE).
    public static func paceInfo(protocol oid: String = OID.paceECDHGenericMappingAES128, version: Int = 2,
                                parameterID: Int? = PACEParameterID.nistP256) -> [UInt8] {
        DER.sequence([DER.oid(oid), DER.integer(version)] + (parameterID.map { [DER.integer($0)] } ?? []))
    }

    /// `ChipAuthenticationInfo ::= SEQUENCE { protocol OBJECT IDENTIFIER, version INTEGER -- 1 or 2, keyId INTEGER
    /// OPTIONAL }` (ICAO 9303-11 §9.2, SecurityInfos for Chip Authentication).
    public static func chipAuthenticationInfo(protocol oid: String = OID.chipAuthenticationECDHAES128, version: Int = 1, keyID: Int? = nil) -> [UInt8] {
        DER.sequence([DER.oid(oid), DER.integer(version)] + (keyID.map { [DER.integer($0)] } ?? []))
    }

    /// `ChipAuthenticationPublicKeyInfo ::= SEQUENCE { protocol OBJECT IDENTIFIER (id-PK-DH | id-PK-ECDH),
    /// chipAuthenticationPublicKey SubjectPublicKeyInfo, keyId INTEGER OPTIONAL }` (ICAO 9303-11 §9.2).
    public static func chipAuthenticationPublicKeyInfo(protocol oid: String = OID.chipAuthenticationPublicKeyECDH,
                                                       subjectPublicKeyInfo: [UInt8], keyID: Int? = nil) -> [UInt8] {
        DER.sequence([DER.oid(oid), subjectPublicKeyInfo] + (keyID.map { [DER.integer($0)] } ?? []))
    }

    /// `ActiveAuthenticationInfo ::= SEQUENCE { protocol id-icao-mrtd-security-aaProtocolObject, version INTEGER
    /// -- 1, signatureAlgorithm OBJECT IDENTIFIER }` (ICAO 9303-11 §9.2; REQUIRED in DG14 when the AA key is EC).
    public static func activeAuthenticationInfo(signatureAlgorithm: String, version: Int = 1) -> [UInt8] {
        DER.sequence([DER.oid(OID.activeAuthentication), DER.integer(version), DER.oid(signatureAlgorithm)])
    }

    /// `SecurityInfos ::= SET OF SecurityInfo`, DER (elements sorted by encoding). This is EF.CardAccess's whole
    /// content (ICAO 9303-10 §3.11.3: no outer tag).
    public static func securityInfos(_ infos: [[UInt8]]) -> [UInt8] {
        DER.set(infos.sorted { $0.lexicographicallyPrecedes($1) })
    }

    /// DG14 (ICAO 9303-10 §4.7.14): tag `6E` around the SecurityInfos.
    public static func dataGroup14(_ infos: [[UInt8]]) -> [UInt8] { DER.tlv(0x6E, securityInfos(infos)) }
}
