/// Why a SecurityInfo, a SubjectPublicKeyInfo or another chip structure could not be read.
public enum SecurityInfoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not BER (the offset is in the error).
    case encoding(BERError)
    /// Well-formed BER with the wrong structure (a missing element, a wrong tag, a value out of range).
    case invalid(String)
    /// A valid structure this code does not implement (a compressed point, an unknown curve OID, an RSA exponent of
    /// 4 KiB).
    case unsupported(String)

    public var description: String {
        switch self {
        case .encoding(let e): return "not BER: \(e)"
        case .invalid(let s): return s
        case .unsupported(let s): return "unsupported: \(s)"
        }
    }

    /// Runs `body`, turning a `BERError` into `.encoding`.
    static func reading<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as BERError { throw SecurityInfoError.encoding(e) }
    }
}

/// An X.509 SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) as the chip's DG14 (Chip Authentication key, BSI TR-03110-3
/// A.1.2.4) and DG15 (Active Authentication key, ICAO 9303-10 §4.7.15) carry it, read into its domain parameters
/// and public value:
///
/// ```
/// SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING }
/// ECParameters ::= SEQUENCE { version INTEGER(1), fieldID FieldID, curve Curve, base ECPoint, order INTEGER,
///                             cofactor INTEGER OPTIONAL }     -- or a named-curve OID (RFC 5480)
/// DomainParameters ::= SEQUENCE { p INTEGER, g INTEGER, q INTEGER, ... }   -- X9.42 (PKCS #3: p, g [, l])
/// ```
public struct SubjectPublicKeyInfo: Sendable, Equatable {
    /// The algorithm OID (`id-PK-ECDH`, `ecPublicKey`, `id-PK-DH`, `dhpublicnumber`, `rsaEncryption`, …), dotted.
    public var algorithm: String
    /// The key as read.
    public var key: PublicKey
    /// The DER (or BER) bytes the key was read from.
    public var encoded: [UInt8]

    /// A public key with its domain.
    public enum PublicKey: Sendable, Equatable {
        /// An EC point (uncompressed, `1 + 2·fieldSize` octets) on `curve`.
        case ec(curve: ECCurveParameters, point: [UInt8])
        /// A DH public value y (left-padded to the modulus size) in `group`.
        case dh(group: DHGroupParameters, y: [UInt8])
        /// An RSA public key (magnitudes, big-endian).
        case rsa(modulus: [UInt8], exponent: [UInt8])
    }

    public init(algorithm: String, key: PublicKey, encoded: [UInt8]) { self.algorithm = algorithm; self.key = key; self.encoded = encoded }

    /// Reads a SubjectPublicKeyInfo from its encoding.
    public init(_ bytes: [UInt8]) throws {
        let e = try SecurityInfoError.reading { try BERReader.single(bytes) }
        try self.init(element: e)
    }

    /// Reads a SubjectPublicKeyInfo element.
    public init(element spki: BERElement) throws {
        encoded = spki.encoded
        let parts = try SecurityInfoError.reading { try spki.expect(.sequence).children() }
        guard parts.count == 2 else { throw SecurityInfoError.invalid("SubjectPublicKeyInfo of \(parts.count) elements, 2 expected") }
        let alg = try SecurityInfoError.reading { try parts[0].expect(.sequence).children() }
        guard let oidElement = alg.first else { throw SecurityInfoError.invalid("AlgorithmIdentifier without an OID") }
        algorithm = try SecurityInfoError.reading { try oidElement.oidValue() }
        let params = alg.count > 1 ? alg[1] : nil
        let bits = try SecurityInfoError.reading { try parts[1].bitStringBytes() }
        switch algorithm {
        case ChipOID.pkECDH, ChipOID.ecPublicKey:
            guard let params else { throw SecurityInfoError.unsupported("an EC key without domain parameters (implicitlyCA)") }
            let curve = try Self.curve(params)
            guard bits.first == 0x04 else {
                throw SecurityInfoError.unsupported(bits.first == 0x02 || bits.first == 0x03 ? "a compressed EC point" : "an EC point that is not uncompressed")
            }
            guard bits.count == curve.pointSize else {
                throw SecurityInfoError.invalid("an EC point of \(bits.count) octets on a curve whose points take \(curve.pointSize)")
            }
            key = .ec(curve: curve, point: bits)
        case ChipOID.pkDH, ChipOID.dhPublicNumber, ChipOID.dhKeyAgreement:
            guard let params else { throw SecurityInfoError.invalid("a DH key without domain parameters") }
            let group = try Self.dhGroup(params)
            let y = try SecurityInfoError.reading { try BERReader.single(bits).unsignedIntegerBytes() }
            guard !y.isEmpty, y.count <= group.size else { throw SecurityInfoError.invalid("a DH public value of \(y.count) octets for a \(group.size)-octet modulus") }
            key = .dh(group: group, y: Bytes.leftPadded(y, to: group.size))
        case ChipOID.rsaEncryption:
            let rsa = try SecurityInfoError.reading { try BERReader.single(bits).expect(.sequence).children() }
            guard rsa.count == 2 else { throw SecurityInfoError.invalid("RSAPublicKey of \(rsa.count) elements, 2 expected") }
            // Some chips write the modulus without its sign octet (a "negative" INTEGER, e.g. the BSI 2008 test
            // passport's DG15): read as the magnitude it is meant to be.
            func magnitude(_ e: BERElement) throws -> [UInt8] {
                guard e.tag == .integer else { throw SecurityInfoError.invalid("RSAPublicKey element is not an INTEGER") }
                return Bytes.trimmed(e.valueBytes)
            }
            let n = try magnitude(rsa[0]), e = try magnitude(rsa[1])
            guard !n.isEmpty, !e.isEmpty else { throw SecurityInfoError.invalid("an RSA key with a zero modulus or exponent") }
            key = .rsa(modulus: n, exponent: e)
        default:
            throw SecurityInfoError.unsupported("public key algorithm \(algorithm)")
        }
    }

    /// The EC domain parameters of an AlgorithmIdentifier's parameters: a named-curve OID, explicit ECParameters,
    /// or a standardizedDomainParameters reference (TR-03110-3 A.2.1.1).
    static func curve(_ params: BERElement) throws -> ECCurveParameters {
        if params.tag == .objectIdentifier {
            let oid = try SecurityInfoError.reading { try params.oidValue() }
            guard let id = StandardizedDomainParameters.id(ofCurveOID: oid), case .ec(let c)? = StandardizedDomainParameters.parameters(id: id) else {
                throw SecurityInfoError.unsupported("named curve \(oid)")
            }
            return c
        }
        let kids = try SecurityInfoError.reading { try params.expect(.sequence).children() }
        if kids.count == 2, kids[0].tag == .objectIdentifier {
            return try standardized(kids, curve: true)
        }
        guard kids.count >= 5 else { throw SecurityInfoError.invalid("ECParameters of \(kids.count) elements, at least 5 expected") }
        return try SecurityInfoError.reading {
            guard try kids[0].expect(.integer).intValue() == 1 else { throw SecurityInfoError.unsupported("ECParameters version other than 1") }
            let field = try kids[1].expect(.sequence).children()
            guard field.count == 2, try field[0].oidValue() == ChipOID.primeField else { throw SecurityInfoError.unsupported("a curve over a field that is not a prime field") }
            let p = try field[1].unsignedIntegerBytes()
            let curve = try kids[2].expect(.sequence).children()
            guard curve.count >= 2 else { throw SecurityInfoError.invalid("Curve of \(curve.count) elements") }
            let a = try curve[0].expect(.octetString).valueBytes, b = try curve[1].expect(.octetString).valueBytes
            let base = try kids[3].expect(.octetString).valueBytes
            let order = try kids[4].unsignedIntegerBytes()
            let cofactor = kids.count > 5 ? try kids[5].intValue() : 1
            guard Bytes.bitLength(p) >= 160, Bytes.bitLength(p) <= 1024, !order.isEmpty, cofactor >= 1 else {
                throw SecurityInfoError.invalid("EC parameters out of range (\(Bytes.bitLength(p))-bit prime, cofactor \(cofactor))")
            }
            guard base.first == 0x04, base.count == 1 + 2 * p.count else {
                throw SecurityInfoError.unsupported("a base point that is not uncompressed on the curve's field")
            }
            var c = ECCurveParameters(p: p, a: a, b: b, generator: base, order: order, cofactor: cofactor)
            // Explicit parameters of a named curve (common on chips): give it its name.
            if let id = StandardizedDomainParameters.id(of: .ec(c)), case .ec(let named)? = StandardizedDomainParameters.parameters(id: id) {
                c.name = named.name; c.oid = named.oid
            }
            return c
        }
    }

    static func dhGroup(_ params: BERElement) throws -> DHGroupParameters {
        let kids = try SecurityInfoError.reading { try params.expect(.sequence).children() }
        if kids.count == 2, kids[0].tag == .objectIdentifier {
            guard case .dh(let g) = try standardizedDomain(kids) else { throw SecurityInfoError.invalid("standardized parameters that are not a DH group") }
            return g
        }
        guard kids.count >= 2 else { throw SecurityInfoError.invalid("DH domain parameters of \(kids.count) elements") }
        return try SecurityInfoError.reading {
            let p = try kids[0].unsignedIntegerBytes(), g = try kids[1].unsignedIntegerBytes()
            guard Bytes.bitLength(p) >= 512, Bytes.bitLength(p) <= 8192, !g.isEmpty else { throw SecurityInfoError.invalid("DH parameters out of range") }
            // X9.42 carries q third; PKCS #3 a small privateValueLength there.
            var q: [UInt8]?
            if kids.count > 2, kids[2].tag == .integer, let v = try? kids[2].unsignedIntegerBytes(), v.count > 8 { q = v }
            var group = DHGroupParameters(p: p, g: g, q: q)
            if let id = StandardizedDomainParameters.id(of: .dh(group)), case .dh(let named)? = StandardizedDomainParameters.parameters(id: id) {
                group = named
            }
            return group
        }
    }

    static func standardizedDomain(_ kids: [BERElement]) throws -> DomainParameters {
        let oid = try SecurityInfoError.reading { try kids[0].oidValue() }
        guard oid == ChipOID.standardizedDomainParameters else { throw SecurityInfoError.unsupported("domain parameters \(oid)") }
        let id = try SecurityInfoError.reading { try kids[1].expect(.integer).intValue() }
        guard let d = StandardizedDomainParameters.parameters(id: id) else { throw SecurityInfoError.unsupported("standardized domain parameters \(id)") }
        return d
    }

    static func standardized(_ kids: [BERElement], curve: Bool) throws -> ECCurveParameters {
        guard case .ec(let c) = try standardizedDomain(kids) else { throw SecurityInfoError.invalid("standardized parameters that are not a curve") }
        return c
    }

    /// DG15's Active Authentication public key (ICAO 9303-10 §4.7.15: tag 6F around a SubjectPublicKeyInfo).
    public init(dg15 bytes: [UInt8]) throws {
        let root = try SecurityInfoError.reading { try SecurityInfos.leadingElement(bytes) }
        guard root.tag.raw == 0x6F, let spki = try SecurityInfoError.reading({ try root.children().first }) else {
            throw SecurityInfoError.invalid("DG15 is not tag 6F around a SubjectPublicKeyInfo")
        }
        try self.init(element: spki)
    }

    // MARK: Encoding

    /// The explicit ECParameters of `curve` (X9.62, as chips write them).
    public static func explicitParameters(_ curve: ECCurveParameters) -> [UInt8] {
        DER.sequence([
            DER.integer(1),
            DER.sequence([DER.oid(ChipOID.primeField), DER.unsignedInteger(curve.p)]),
            DER.sequence([DER.octetString(curve.a), DER.octetString(curve.b)]),
            DER.octetString(curve.generator),
            DER.unsignedInteger(curve.order),
            DER.integer(curve.cofactor),
        ])
    }

    /// Encodes an EC public key: `algorithm` (`ChipOID.pkECDH` for DG14, `ChipOID.ecPublicKey` for DG15) with
    /// explicit parameters, or the named-curve OID when `named` and the curve has one.
    public static func encodeEC(algorithm: String, curve: ECCurveParameters, point: [UInt8], named: Bool = false) -> SubjectPublicKeyInfo {
        let params = named && curve.oid != nil ? DER.oid(curve.oid!) : explicitParameters(curve)
        let der = DER.sequence([DER.sequence([DER.oid(algorithm), params]), DER.bitString(point)])
        return SubjectPublicKeyInfo(algorithm: algorithm, key: .ec(curve: curve, point: point), encoded: der)
    }

    /// Encodes a DH public key with X9.42 domain parameters (p, g, q).
    public static func encodeDH(algorithm: String, group: DHGroupParameters, y: [UInt8]) -> SubjectPublicKeyInfo {
        var params = [DER.unsignedInteger(group.p), DER.unsignedInteger(group.g)]
        if let q = group.q { params.append(DER.unsignedInteger(q)) }
        let der = DER.sequence([DER.sequence([DER.oid(algorithm), DER.sequence(params)]), DER.bitString(DER.unsignedInteger(y))])
        return SubjectPublicKeyInfo(algorithm: algorithm, key: .dh(group: group, y: Bytes.leftPadded(y, to: group.size)), encoded: der)
    }
}
