/// A chip's SecurityInfos (ICAO 9303-11 §9.2; BSI TR-03110-3 Appendix A.1): which chip-side protocols it offers
/// and their parameters, typed. EF.CardAccess (file 011C in the master file, readable without access control)
/// holds the PACE infos; DG14 (tag 6E) the Chip Authentication infos and keys and, for an EC Active Authentication
/// key, the ActiveAuthenticationInfo.
///
/// ```
/// SecurityInfos ::= SET OF SecurityInfo
/// SecurityInfo ::= SEQUENCE { protocol OBJECT IDENTIFIER, requiredData ANY, optionalData ANY OPTIONAL }
/// ```
public struct SecurityInfos: Sendable, Equatable {
    public var infos: [SecurityInfo]

    public init(_ infos: [SecurityInfo]) { self.infos = infos }

    /// Reads EF.CardAccess: a bare SecurityInfos SET.
    public init(cardAccess bytes: [UInt8]) throws {
        let set = try SecurityInfoError.reading { try Self.leadingElement(bytes) }
        try self.init(set: set)
    }

    /// Reads DG14: the SecurityInfos SET inside the application tag 6E.
    public init(dg14 bytes: [UInt8]) throws {
        let root = try SecurityInfoError.reading { try Self.leadingElement(bytes) }
        guard root.tag.raw == 0x6E else { throw SecurityInfoError.invalid("DG14 starts with tag \(root.tag), not 6E") }
        guard let set = try SecurityInfoError.reading({ try root.children().first }) else { throw SecurityInfoError.invalid("DG14 holds no SecurityInfos") }
        try self.init(set: set)
    }

    /// Reads a SecurityInfos SET element.
    public init(set: BERElement) throws {
        guard set.tag == .set else { throw SecurityInfoError.invalid("SecurityInfos is tag \(set.tag), not a SET (31)") }
        infos = try SecurityInfoError.reading { try set.children() }.map(SecurityInfo.init(element:))
    }

    /// The first TLV of a file; zero or FF padding after it is allowed (chips pad EFs to their allocated size).
    public static func leadingElement(_ bytes: [UInt8]) throws -> BERElement {
        var r = BERReader(bytes)
        let e = try r.read()
        if e.end < bytes.count, bytes[e.end...].contains(where: { $0 != 0 && $0 != 0xFF }) {
            throw BERError.trailingBytes(offset: e.end, count: bytes.count - e.end)
        }
        return e
    }

    // MARK: What the chip offers

    public var paceInfos: [PACEInfo] { infos.compactMap { if case .pace(let p) = $0 { return p } else { return nil } } }
    public var paceDomainParameterInfos: [PACEDomainParameterInfo] {
        infos.compactMap { if case .paceDomainParameters(let p) = $0 { return p } else { return nil } }
    }
    public var chipAuthenticationInfos: [ChipAuthenticationInfo] {
        infos.compactMap { if case .chipAuthentication(let c) = $0 { return c } else { return nil } }
    }
    public var chipAuthenticationPublicKeyInfos: [ChipAuthenticationPublicKeyInfo] {
        infos.compactMap { if case .chipAuthenticationPublicKey(let c) = $0 { return c } else { return nil } }
    }
    public var activeAuthenticationInfo: ActiveAuthenticationInfo? {
        infos.lazy.compactMap { if case .activeAuthentication(let a) = $0 { return a } else { return nil } }.first
    }

    /// The domain parameters of a PACEInfo: the standardized ID it names, or the PACEDomainParameterInfo whose
    /// parameterId matches (ICAO 9303-11 §9.2.1–9.2.2); nil when neither gives them.
    public func domainParameters(for pace: PACEInfo) -> DomainParameters? {
        guard let id = pace.parameterId else {
            // One set of proprietary parameters may be given without an ID.
            let candidates = paceDomainParameterInfos.filter { $0.keyAgreement == pace.protocol.keyAgreement }
            return candidates.count == 1 ? candidates[0].domainParameters : nil
        }
        if let proprietary = paceDomainParameterInfos.first(where: { $0.parameterId == id && $0.keyAgreement == pace.protocol.keyAgreement }) {
            return proprietary.domainParameters
        }
        return StandardizedDomainParameters.parameters(id: id)
    }

    // MARK: Encoding

    /// The DER SecurityInfos SET (the elements sorted by their encodings, X.690 §11.6): EF.CardAccess's content.
    public var encoded: [UInt8] { DER.set(infos.map(\.encoded).sorted { $0.lexicographicallyPrecedes($1) }) }
    /// DG14: the SET inside tag 6E (ICAO 9303-10 §4.7.14).
    public var dg14Encoded: [UInt8] { DER.tlv(0x6E, encoded) }
}

/// One SecurityInfo, typed by its protocol OID.
public enum SecurityInfo: Sendable, Equatable {
    case pace(PACEInfo)
    case paceDomainParameters(PACEDomainParameterInfo)
    case chipAuthentication(ChipAuthenticationInfo)
    case chipAuthenticationPublicKey(ChipAuthenticationPublicKeyInfo)
    case activeAuthentication(ActiveAuthenticationInfo)
    case terminalAuthentication(version: Int)
    /// Any other protocol (CardInfoLocator, EF.DIR info, Restricted Identification, a PACE-IM domain, …), kept as read.
    case other(protocolOID: String, encoded: [UInt8])

    /// Reads one SecurityInfo SEQUENCE.
    public init(element: BERElement) throws {
        let parts = try SecurityInfoError.reading { try element.expect(.sequence).children() }
        guard let first = parts.first, first.tag == .objectIdentifier else { throw SecurityInfoError.invalid("SecurityInfo without a protocol OID") }
        let oid = try SecurityInfoError.reading { try first.oidValue() }
        func int(_ i: Int, _ what: String) throws -> Int {
            guard i < parts.count else { throw SecurityInfoError.invalid("\(what) missing in the SecurityInfo for \(oid)") }
            let v = try SecurityInfoError.reading { try parts[i].expect(.integer).intValue() }
            guard v >= 0 else { throw SecurityInfoError.invalid("negative \(what) in the SecurityInfo for \(oid)") }
            return v
        }
        func optionalInt(_ i: Int) throws -> Int? {
            guard i < parts.count else { return nil }
            return try int(i, "parameter or key ID")
        }
        if let p = PACEProtocol(oid: oid) {
            self = .pace(PACEInfo(protocol: p, version: try int(1, "version"), parameterId: try optionalInt(2)))
        } else if oid.hasPrefix(ChipOID.pace + "."), let family = Int(oid.dropFirst(ChipOID.pace.count + 1)),
                  let (mapping, agreement) = PACEProtocol.family(arc: family) {
            guard parts.count >= 2 else { throw SecurityInfoError.invalid("PACEDomainParameterInfo without domain parameters") }
            let alg = try SecurityInfoError.reading { try parts[1].expect(.sequence).children() }
            guard alg.count == 2 else { throw SecurityInfoError.invalid("PACE domain parameters of \(alg.count) elements") }
            let algOID = try SecurityInfoError.reading { try alg[0].oidValue() }
            let domain: DomainParameters
            if algOID == ChipOID.standardizedDomainParameters {
                domain = try SubjectPublicKeyInfo.standardizedDomain(alg)
            } else if algOID == ChipOID.ecPublicKey || algOID == ChipOID.pkECDH {
                domain = .ec(try SubjectPublicKeyInfo.curve(alg[1]))
            } else if algOID == ChipOID.dhPublicNumber || algOID == ChipOID.pkDH {
                domain = .dh(try SubjectPublicKeyInfo.dhGroup(alg[1]))
            } else {
                throw SecurityInfoError.unsupported("PACE domain parameters \(algOID)")
            }
            self = .paceDomainParameters(PACEDomainParameterInfo(mapping: mapping, keyAgreement: agreement, domainParameters: domain,
                                                                 parameterId: try optionalInt(2)))
        } else if let c = ChipAuthenticationProtocol(oid: oid) {
            self = .chipAuthentication(ChipAuthenticationInfo(protocol: c, version: try int(1, "version"), keyId: try optionalInt(2)))
        } else if oid == ChipOID.pkDH || oid == ChipOID.pkECDH {
            guard parts.count >= 2 else { throw SecurityInfoError.invalid("ChipAuthenticationPublicKeyInfo without a key") }
            let key = try SubjectPublicKeyInfo(element: parts[1])
            self = .chipAuthenticationPublicKey(ChipAuthenticationPublicKeyInfo(keyAgreement: oid == ChipOID.pkDH ? .dh : .ecdh,
                                                                                publicKey: key, keyId: try optionalInt(2)))
        } else if oid == ChipOID.activeAuthentication {
            let version = try int(1, "version")
            guard parts.count >= 3 else { throw SecurityInfoError.invalid("ActiveAuthenticationInfo without a signature algorithm") }
            let alg = try SecurityInfoError.reading { try parts[2].oidValue() }
            self = .activeAuthentication(ActiveAuthenticationInfo(version: version, signatureAlgorithm: alg))
        } else if oid == ChipOID.ta {
            self = .terminalAuthentication(version: try int(1, "version"))
        } else {
            self = .other(protocolOID: oid, encoded: element.encoded)
        }
    }

    /// The protocol OBJECT IDENTIFIER, dotted (for a PACEDomainParameterInfo, its id-PACE family arc).
    public var protocolOID: String {
        switch self {
        case .pace(let p): return p.protocol.oid
        case .paceDomainParameters(let d): return "\(ChipOID.pace).\(PACEProtocol.familyArc(d.mapping, d.keyAgreement) ?? 0)"
        case .chipAuthentication(let c): return c.protocol.oid
        case .chipAuthenticationPublicKey(let k): return k.keyAgreement == .dh ? ChipOID.pkDH : ChipOID.pkECDH
        case .activeAuthentication: return ChipOID.activeAuthentication
        case .terminalAuthentication: return ChipOID.ta
        case .other(let oid, _): return oid
        }
    }

    /// The info's `version` INTEGER, where its type has one.
    public var version: Int? {
        switch self {
        case .pace(let p): return p.version
        case .chipAuthentication(let c): return c.version
        case .activeAuthentication(let a): return a.version
        case .terminalAuthentication(let v): return v
        case .paceDomainParameters, .chipAuthenticationPublicKey, .other: return nil
        }
    }

    /// The SecurityInfo's DER encoding.
    public var encoded: [UInt8] {
        func opt(_ v: Int?) -> [[UInt8]] { v.map { [DER.integer($0)] } ?? [] }
        switch self {
        case .pace(let p):
            return DER.sequence([DER.oid(p.protocol.oid), DER.integer(p.version)] + opt(p.parameterId))
        case .paceDomainParameters(let d):
            let alg: [UInt8]
            switch d.domainParameters {
            case .ec(let c): alg = DER.sequence([DER.oid(ChipOID.ecPublicKey), SubjectPublicKeyInfo.explicitParameters(c)])
            case .dh(let g):
                var params = [DER.unsignedInteger(g.p), DER.unsignedInteger(g.g)]
                if let q = g.q { params.append(DER.unsignedInteger(q)) }
                alg = DER.sequence([DER.oid(ChipOID.dhPublicNumber), DER.sequence(params)])
            }
            let family = PACEProtocol.familyArc(d.mapping, d.keyAgreement) ?? 0
            return DER.sequence([DER.oid("\(ChipOID.pace).\(family)"), alg] + opt(d.parameterId))
        case .chipAuthentication(let c):
            return DER.sequence([DER.oid(c.protocol.oid), DER.integer(c.version)] + opt(c.keyId))
        case .chipAuthenticationPublicKey(let k):
            return DER.sequence([DER.oid(k.keyAgreement == .dh ? ChipOID.pkDH : ChipOID.pkECDH), k.publicKey.encoded] + opt(k.keyId))
        case .activeAuthentication(let a):
            return DER.sequence([DER.oid(ChipOID.activeAuthentication), DER.integer(a.version), DER.oid(a.signatureAlgorithm)])
        case .terminalAuthentication(let v):
            return DER.sequence([DER.oid(ChipOID.ta), DER.integer(v)])
        case .other(_, let bytes):
            return bytes
        }
    }
}

/// PACEInfo (ICAO 9303-11 §9.2.1): a PACE protocol the chip supports and the standardized domain parameters it
/// uses (`parameterId`, §9.5.1), or proprietary ones a PACEDomainParameterInfo with the same ID gives.
public struct PACEInfo: Sendable, Hashable {
    public var `protocol`: PACEProtocol
    /// 2 for ICAO 9303 PACE.
    public var version: Int
    public var parameterId: Int?

    public init(protocol p: PACEProtocol, version: Int = 2, parameterId: Int?) {
        self.protocol = p; self.version = version; self.parameterId = parameterId
    }
}

/// PACEDomainParameterInfo (ICAO 9303-11 §9.2.2): proprietary domain parameters for a mapping.
public struct PACEDomainParameterInfo: Sendable, Equatable {
    public var mapping: PACEMapping
    public var keyAgreement: KeyAgreementAlgorithm
    public var domainParameters: DomainParameters
    public var parameterId: Int?

    public init(mapping: PACEMapping, keyAgreement: KeyAgreementAlgorithm, domainParameters: DomainParameters, parameterId: Int?) {
        self.mapping = mapping; self.keyAgreement = keyAgreement; self.domainParameters = domainParameters; self.parameterId = parameterId
    }
}

/// ChipAuthenticationInfo (ICAO 9303-11 §9.2.5): a Chip Authentication protocol the chip supports (version 1:
/// ICAO 9303; 2: EAC) and, when the chip holds several keys, the ID of the key it is for.
public struct ChipAuthenticationInfo: Sendable, Hashable {
    public var `protocol`: ChipAuthenticationProtocol
    public var version: Int
    public var keyId: Int?

    public init(protocol p: ChipAuthenticationProtocol, version: Int = 1, keyId: Int? = nil) {
        self.protocol = p; self.version = version; self.keyId = keyId
    }
}

/// ChipAuthenticationPublicKeyInfo (ICAO 9303-11 §9.2.6): the chip's static key-agreement key.
public struct ChipAuthenticationPublicKeyInfo: Sendable, Equatable {
    public var keyAgreement: KeyAgreementAlgorithm
    public var publicKey: SubjectPublicKeyInfo
    public var keyId: Int?

    public init(keyAgreement: KeyAgreementAlgorithm, publicKey: SubjectPublicKeyInfo, keyId: Int? = nil) {
        self.keyAgreement = keyAgreement; self.publicKey = publicKey; self.keyId = keyId
    }
}

/// ActiveAuthenticationInfo (ICAO 9303-11 §9.2.11): the signature algorithm of an EC Active Authentication key
/// (required when DG15 holds an EC key; an RSA key's hash is named by its ISO/IEC 9796-2 trailer instead).
public struct ActiveAuthenticationInfo: Sendable, Hashable {
    /// 1.
    public var version: Int
    /// The signature algorithm OID, dotted (`ecdsa-plain-SHA256` = 0.4.0.127.0.7.1.1.4.1.3).
    public var signatureAlgorithm: String

    public init(version: Int = 1, signatureAlgorithm: String) { self.version = version; self.signatureAlgorithm = signatureAlgorithm }

    /// The ECDSA plain-signature algorithm named, or nil for another OID.
    public var ecdsaPlain: ECDSAPlainSignature? { ECDSAPlainSignature(oid: signatureAlgorithm) }
}
