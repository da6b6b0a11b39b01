import CEMRTD
import Foundation

/// Why OpenSSL refused an object. `detail` is OpenSSL's own one-line reason (no input bytes are echoed).
public struct CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Codable { case parse, unsupported, invalidArgument, notFound, tooLarge, `internal` }
    public let kind: Kind
    public let detail: String
    public var description: String { detail }

    init(_ status: em_status, _ message: [CChar]) {
        switch status {
        case EM_ERR_PARSE: kind = .parse
        case EM_ERR_UNSUPPORTED: kind = .unsupported
        case EM_ERR_INVALID_ARGUMENT: kind = .invalidArgument
        case EM_ERR_NOT_FOUND: kind = .notFound
        case EM_ERR_TOO_LARGE: kind = .tooLarge
        default: kind = .internal
        }
        detail = Self.text(message)
    }

    static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Runs a shim call with a message buffer, throwing `CryptoError` unless it returns `EM_OK`.
func shim(_ body: (UnsafeMutablePointer<CChar>, Int) -> em_status) throws {
    var message = [CChar](repeating: 0, count: 512)
    let st = message.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
    guard st == EM_OK else { throw CryptoError(st, message) }
}

func takeBytes(_ b: em_bytes) -> [UInt8] {
    defer { em_free(b.data) }
    guard let d = b.data else { return [] }
    return Array(UnsafeBufferPointer(start: d, count: b.count))
}

func fixedString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
}

func date(_ unix: Int64) -> Date? { unix == Int64.min ? nil : Date(timeIntervalSince1970: TimeInterval(unix)) }

/// Message digests used by the LDS security object (ICAO 9303-12 §6.1: SHA-1, SHA-224, SHA-256, SHA-384, SHA-512).
public enum DigestAlgorithm: String, Codable, Sendable, CaseIterable {
    case sha1 = "SHA1", sha224 = "SHA224", sha256 = "SHA256", sha384 = "SHA384", sha512 = "SHA512"

    /// The algorithm's OBJECT IDENTIFIER (NIST CSOR / OIW).
    public var oid: String {
        switch self {
        case .sha1: return "1.3.14.3.2.26"
        case .sha224: return "2.16.840.1.101.3.4.2.4"
        case .sha256: return "2.16.840.1.101.3.4.2.1"
        case .sha384: return "2.16.840.1.101.3.4.2.2"
        case .sha512: return "2.16.840.1.101.3.4.2.3"
        }
    }

    public init?(oid: String) {
        guard let a = Self.allCases.first(where: { $0.oid == oid }) else { return nil }
        self = a
    }

    /// The digest of `bytes`.
    public func digest<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: 64)
        var n = 0
        let data = Array(bytes)
        var message = [CChar](repeating: 0, count: 128)
        let st = data.withUnsafeBufferPointer { d in
            out.withUnsafeMutableBufferPointer { o in
                em_digest(rawValue, d.baseAddress, d.count, o.baseAddress, o.count, &n, &message, message.count)
            }
        }
        precondition(st == EM_OK, "OpenSSL lacks \(rawValue): \(CryptoError.text(message))")
        return Array(out.prefix(n))
    }
}

/// An X.509 certificate (a CSCA, a document signer, a master-list signer), held by OpenSSL.
public final class Certificate: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: the OpenSSL object is never modified after parsing; OpenSSL allows concurrent reads.
    let handle: OpaquePointer
    /// What the certificate says about itself.
    public let info: Info
    /// The DER encoding.
    public let der: [UInt8]
    /// The serial number, big-endian magnitude.
    public let serialNumber: [UInt8]
    public let subjectKeyIdentifier: [UInt8]?
    public let authorityKeyIdentifier: [UInt8]?
    /// The countryName attribute values (X.520 id-at-countryName; ISO 3166-1 alpha-2 in ICAO 9303-12 §7.1)
    /// of the subject and of the issuer name, as written (normally one; empty: the name has none).
    public let subjectCountries: [String]
    public let issuerCountries: [String]

    /// The parts of a certificate the evidence reports. Dates are UTC.
    public struct Info: Codable, Sendable, Equatable {
        public var subject: String
        public var issuer: String
        public var notBefore: Date?
        public var notAfter: Date?
        /// basicConstraints cA; nil when the extension is absent.
        public var isCA: Bool?
        /// keyUsage bits (RFC 5280 §4.2.1.3) by name; nil when the extension is absent.
        public var keyUsage: [String]?
        public var publicKeyAlgorithm: String
        public var publicKeyBits: Int
        /// The EC curve's name; for explicit parameters, the named curve they equal.
        public var curve: String?
        /// Whether the EC key carries explicit domain parameters (common in older German and Dutch chips).
        public var explicitCurveParameters: Bool
        public var signatureAlgorithm: String
        public var version: Int
    }

    /// Parses a DER or PEM certificate.
    public convenience init(_ bytes: [UInt8]) throws {
        var h: OpaquePointer?
        try shim { em_cert_parse(bytes, bytes.count, &h, $0, $1) }
        try self.init(taking: h!)
    }

    init(taking h: OpaquePointer) throws {
        handle = h
        var i = em_cert_info()
        var message = [CChar](repeating: 0, count: 256)
        _ = em_cert_get_info(h, &i, &message, message.count)
        var usage: [String]?
        if i.key_usage >= 0 {
            let names: [(Int32, String)] = [(0x80, "digitalSignature"), (0x40, "nonRepudiation"), (0x20, "keyEncipherment"),
                                            (0x10, "dataEncipherment"), (0x08, "keyAgreement"), (0x04, "keyCertSign"), (0x02, "cRLSign")]
            usage = names.filter { i.key_usage & $0.0 != 0 }.map(\.1)
        }
        let curve = fixedString(i.curve)
        info = Info(subject: fixedString(i.subject), issuer: fixedString(i.issuer),
                    notBefore: date(i.not_before), notAfter: date(i.not_after),
                    isCA: i.basic_constraints_ca < 0 ? nil : i.basic_constraints_ca == 1, keyUsage: usage,
                    publicKeyAlgorithm: fixedString(i.public_key_algorithm), publicKeyBits: Int(i.public_key_bits),
                    curve: curve.isEmpty ? nil : curve, explicitCurveParameters: i.explicit_curve == 1,
                    signatureAlgorithm: fixedString(i.signature_algorithm), version: Int(i.version))
        var b = em_bytes()
        der = em_cert_der(h, &b) == EM_OK ? takeBytes(b) : []
        b = em_bytes()
        serialNumber = em_cert_serial(h, &b) == EM_OK ? takeBytes(b) : []
        b = em_bytes()
        subjectKeyIdentifier = em_cert_subject_key_id(h, &b) == EM_OK ? takeBytes(b) : nil
        b = em_bytes()
        authorityKeyIdentifier = em_cert_authority_key_id(h, &b) == EM_OK ? takeBytes(b) : nil
        func countries(ofIssuer: Int32) -> [String] {
            var values: [String] = []
            var buffer = [CChar](repeating: 0, count: 64)
            // A name holds a handful of attributes; 16 bounds a pathological one.
            while values.count < 16, em_cert_country(h, ofIssuer, Int32(values.count), &buffer, buffer.count) == 1 {
                values.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            return values
        }
        subjectCountries = countries(ofIssuer: 0)
        issuerCountries = countries(ofIssuer: 1)
    }

    deinit { em_cert_free(handle) }

    /// SHA-256 of the DER encoding, hex: the certificate's identity in evidence, the store and the audit.
    public var fingerprint: String { Hex.string(DigestAlgorithm.sha256.digest(der)) }
    /// The serial number in hex.
    public var serialHex: String { Hex.string(serialNumber) }
    public var description: String { "\(info.subject) [\(serialHex)]" }

    /// Whether this certificate's issuer name equals `issuer`'s subject name (RFC 5280 name comparison).
    public func isIssuedByName(_ issuer: Certificate) -> Bool { em_cert_issued_by_name(handle, issuer.handle) == 1 }
    public func hasSameSubject(_ other: Certificate) -> Bool { em_cert_same_subject(handle, other.handle) == 1 }
    /// Whether `issuer`'s public key verifies this certificate's signature.
    public func isSigned(by issuer: Certificate) -> Bool {
        var message = [CChar](repeating: 0, count: 256)
        return em_cert_verify_signature(handle, issuer.handle, &message, message.count) == 1
    }
    /// Whether the certificate names itself as issuer and its own key verifies it.
    public var isSelfSigned: Bool { isIssuedByName(self) && isSigned(by: self) }
    /// Whether `date` lies within notBefore…notAfter.
    public func isValid(at date: Date) -> Bool {
        guard let nb = info.notBefore, let na = info.notAfter else { return false }
        return date >= nb && date <= na
    }
}

/// An X.509 CRL issued by a CSCA (ICAO 9303-12 §7.1.4), held by OpenSSL.
public final class RevocationList: @unchecked Sendable {
    // @unchecked: the OpenSSL object is never modified after parsing; OpenSSL allows concurrent reads.
    let handle: OpaquePointer
    public let der: [UInt8]
    public let issuer: String
    public let thisUpdate: Date?
    public let nextUpdate: Date?
    public let revokedCount: Int
    public let signatureAlgorithm: String

    /// Parses a DER or PEM CRL.
    public init(_ bytes: [UInt8]) throws {
        var h: OpaquePointer?
        try shim { em_crl_parse(bytes, bytes.count, &h, $0, $1) }
        handle = h!
        var i = em_crl_info()
        var message = [CChar](repeating: 0, count: 256)
        _ = em_crl_get_info(handle, &i, &message, message.count)
        issuer = fixedString(i.issuer)
        thisUpdate = date(i.this_update)
        nextUpdate = date(i.next_update)
        revokedCount = Int(i.revoked_count)
        signatureAlgorithm = fixedString(i.signature_algorithm)
        var b = em_bytes()
        der = em_crl_der(handle, &b) == EM_OK ? takeBytes(b) : []
    }

    deinit { em_crl_free(handle) }

    public var fingerprint: String { Hex.string(DigestAlgorithm.sha256.digest(der)) }
    public func isIssuedByName(_ issuer: Certificate) -> Bool { em_crl_issued_by_name(handle, issuer.handle) == 1 }
    public func isSigned(by issuer: Certificate) -> Bool {
        var message = [CChar](repeating: 0, count: 256)
        return em_crl_verify_signature(handle, issuer.handle, &message, message.count) == 1
    }
    /// The revocation date when the CRL lists `cert`'s serial number, else nil.
    public func revocationDate(of cert: Certificate) -> Date?? {
        var t: Int64 = Int64.min
        guard em_crl_lists(handle, cert.handle, &t) == 1 else { return nil }
        return .some(date(t))
    }
}

/// A CMS SignedData (RFC 5652) — the body of EF.SOD (ICAO 9303-10 §4.6.2) and of a CSCA master list
/// (9303-12 §9) — held by OpenSSL.
public final class SignedData: @unchecked Sendable {
    // @unchecked: the OpenSSL object is never modified after parsing; OpenSSL allows concurrent reads.
    let handle: OpaquePointer
    /// The encapsulated content type, dotted OID.
    public let contentType: String
    /// The encapsulated content octets.
    public let content: [UInt8]
    /// The certificates embedded in the SignedData.
    public let certificates: [Certificate]
    public let signerCount: Int

    /// What one signer info says.
    public struct SignerInfo: Codable, Sendable, Equatable {
        public var digestAlgorithm: String
        public var signatureAlgorithm: String
        public var hasSignedAttributes: Bool
        /// true: the signer is named by subjectKeyIdentifier; false: by issuer and serial number.
        public var identifiedByKeyIdentifier: Bool
        public var signingTime: Date?
    }

    /// Outcome of verifying one signer's signature with a given certificate's key.
    public enum SignatureCheck: Equatable, Sendable {
        case valid
        /// The signature over the signed attributes does not verify with the key.
        case invalid(String)
        /// The messageDigest attribute is not the digest of the content (the content was changed after signing).
        case contentDigestMismatch(String)
        case unsupported(String)
    }

    /// Parses a CMS ContentInfo holding SignedData (DER or BER).
    public init(_ bytes: [UInt8]) throws {
        var h: OpaquePointer?
        try shim { em_cms_parse(bytes, bytes.count, &h, $0, $1) }
        handle = h!
        var oid = [CChar](repeating: 0, count: 128)
        contentType = em_cms_content_type(handle, &oid, oid.count) == EM_OK ? CryptoError.text(oid) : ""
        var b = em_bytes()
        content = em_cms_content(handle, &b) == EM_OK ? takeBytes(b) : []
        var certs: [Certificate] = []
        for i in 0..<Int(em_cms_certificate_count(handle)) {
            if let c = em_cms_certificate(handle, Int32(i)), let cert = try? Certificate(taking: c) { certs.append(cert) }
        }
        certificates = certs
        signerCount = Int(em_cms_signer_count(handle))
    }

    deinit { em_cms_free(handle) }

    public func signerInfo(_ index: Int) throws -> SignerInfo {
        var i = em_signer_info()
        try shim { em_cms_signer_get_info(handle, Int32(index), &i, $0, $1) }
        return SignerInfo(digestAlgorithm: fixedString(i.digest_algorithm), signatureAlgorithm: fixedString(i.signature_algorithm),
                          hasSignedAttributes: i.has_signed_attributes != 0, identifiedByKeyIdentifier: i.identified_by_key_id != 0,
                          signingTime: date(i.signing_time))
    }

    /// Whether `cert` is the certificate signer `index` names.
    public func signer(_ index: Int, is cert: Certificate) -> Bool { em_cms_signer_is(handle, Int32(index), cert.handle) == 1 }

    /// Verifies signer `index` with `cert`'s key (RFC 5652 §5.6).
    public func verifySigner(_ index: Int, with cert: Certificate) -> SignatureCheck {
        var message = [CChar](repeating: 0, count: 512)
        let r = em_cms_signer_verify(handle, Int32(index), cert.handle, &message, message.count)
        let text = CryptoError.text(message)
        switch r {
        case EM_SIGNATURE_VALID: return .valid
        case EM_SIGNATURE_DIGEST_MISMATCH: return .contentDigestMismatch(text)
        case EM_SIGNATURE_UNSUPPORTED: return .unsupported(text)
        default: return .invalid(text)
        }
    }
}

/// Hex strings for fingerprints, serials and key identifiers.
public enum Hex {
    public static func string<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789abcdef")
        var s = ""
        s.reserveCapacity(bytes.count * 2)
        for b in bytes { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 0xF)]) }
        return s
    }
}

func em_public_key_info_(_ der: [UInt8], _ alg: inout [CChar], _ curve: inout [CChar], _ bits: inout Int32,
                         _ message: UnsafeMutablePointer<CChar>, _ size: Int) -> em_status {
    em_public_key_info(der, der.count, &alg, alg.count, &curve, curve.count, &bits, message, size)
}
