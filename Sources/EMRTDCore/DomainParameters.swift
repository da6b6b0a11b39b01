/// Domain parameters for the key agreements of PACE and Chip Authentication (ICAO 9303-11 §9.5, BSI TR-03111):
/// elliptic curves over prime fields and Diffie-Hellman groups, as big-endian octet strings.

/// An elliptic curve y² = x³ + ax + b over the prime field GF(p), with a base point of prime order (BSI TR-03111
/// §2.3). Every field element is `fieldSize` octets, big-endian, left-padded with zeros; points are uncompressed
/// (`04 ‖ x ‖ y`, SEC 1 §2.3.3).
public struct ECCurveParameters: Sendable, Hashable, CustomStringConvertible {
    /// The curve's usual name when it is a named curve (`brainpoolP256r1`, `secp256r1`), else nil.
    public var name: String?
    /// The named-curve OBJECT IDENTIFIER (RFC 5480, RFC 5639), dotted; nil for an unnamed curve.
    public var oid: String?
    /// The field prime, without leading zero octets.
    public var p: [UInt8]
    public var a: [UInt8]
    public var b: [UInt8]
    /// The base point G, uncompressed.
    public var generator: [UInt8]
    /// The order n of G, without leading zero octets.
    public var order: [UInt8]
    public var cofactor: Int

    public init(name: String? = nil, oid: String? = nil, p: [UInt8], a: [UInt8], b: [UInt8], generator: [UInt8], order: [UInt8], cofactor: Int) {
        let p = Bytes.trimmed(p)
        self.name = name; self.oid = oid; self.p = p
        self.a = Bytes.leftPadded(Bytes.trimmed(a), to: p.count)
        self.b = Bytes.leftPadded(Bytes.trimmed(b), to: p.count)
        self.generator = generator; self.order = Bytes.trimmed(order); self.cofactor = cofactor
    }

    init(name: String, oid: String, p: String, a: String, b: String, generator: String, order: String, cofactor: Int) {
        self.init(name: name, oid: oid, p: Bytes.hex(p), a: Bytes.hex(a), b: Bytes.hex(b), generator: Bytes.hex(generator),
                  order: Bytes.hex(order), cofactor: cofactor)
    }

    /// Octets of one field element (32 for a 256-bit curve, 66 for secp521r1).
    public var fieldSize: Int { p.count }
    /// Bits of the field prime.
    public var bits: Int { Bytes.bitLength(p) }
    /// Octets of an uncompressed point.
    public var pointSize: Int { 1 + 2 * fieldSize }

    /// Whether the two curves are the same group with the same base point (names are not compared).
    public func sameDomain(as other: ECCurveParameters) -> Bool {
        p == other.p && a == other.a && b == other.b && generator == other.generator && order == other.order && cofactor == other.cofactor
    }

    /// The x-coordinate of an uncompressed point (the ECDH shared secret's octet string, BSI TR-03111 §4.3.1), or nil
    /// when `point` is not an uncompressed point of this curve's size.
    public func xCoordinate(of point: [UInt8]) -> [UInt8]? {
        guard point.count == pointSize, point.first == 0x04 else { return nil }
        return Array(point[1...fieldSize])
    }

    public var description: String { name ?? "an unnamed \(bits)-bit curve" }
}

/// A Diffie-Hellman group: a prime modulus p, a generator g of a subgroup of prime order q (RFC 5114; ICAO 9303-11
/// §9.5.1). Public values and shared secrets are `size` octets, big-endian, left-padded.
public struct DHGroupParameters: Sendable, Hashable, CustomStringConvertible {
    public var name: String?
    public var p: [UInt8]
    public var g: [UInt8]
    /// The subgroup order, when known (X9.42 domain parameters carry it; PKCS #3 ones do not).
    public var q: [UInt8]?

    public init(name: String? = nil, p: [UInt8], g: [UInt8], q: [UInt8]?) {
        self.name = name; self.p = Bytes.trimmed(p); self.g = Bytes.trimmed(g); self.q = q.map(Bytes.trimmed)
    }

    init(name: String, p: String, g: String, q: String) {
        self.init(name: name, p: Bytes.hex(p), g: Bytes.hex(g), q: Bytes.hex(q))
    }

    /// Octets of the modulus (128 for 1024-bit groups).
    public var size: Int { p.count }
    public var bits: Int { Bytes.bitLength(p) }
    public var description: String { name ?? "a \(bits)-bit DH group" }
}

/// The domain of one key agreement.
public enum DomainParameters: Sendable, Hashable, CustomStringConvertible {
    case ec(ECCurveParameters)
    case dh(DHGroupParameters)

    public var description: String {
        switch self {
        case .ec(let c): return c.description
        case .dh(let g): return "DH \(g.description)"
        }
    }
}

/// ICAO 9303-11 §9.5.1, Table 6 (BSI TR-03110-3 Table 4): the standardized domain parameters a PACEInfo's
/// `parameterId` names. IDs 0–2 are the RFC 5114 MODP groups, 8–18 NIST and Brainpool (RFC 5639) curves; 3–7 and
/// 19–31 are reserved. The values were taken from OpenSSL 3.0 (`openssl ecparam -param_enc explicit`,
/// `openssl genpkey -genparam -algorithm DHX -pkeyopt dh_rfc5114:N`); `ChipAccessTests` checks them against it.
public enum StandardizedDomainParameters {
    /// Every ID this table holds, ascending.
    public static let ids: [Int] = [0, 1, 2, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]

    /// The parameters of standardized ID `id`; nil for a reserved or unknown ID.
    public static func parameters(id: Int) -> DomainParameters? {
        switch id {
        case 8: return .ec(ECCurveParameters(
            name: "secp192r1", oid: "1.2.840.10045.3.1.1",
            p: "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFFFFFFFFFF",
            a: "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFFFFFFFFFC",
            b: "64210519E59C80E70FA7E9AB72243049FEB8DEECC146B9B1",
            generator:
            "04188DA80EB03090F67CBF20EB43A18800F4FF0AFD82FF101207192B95FFC8DA78631011ED6B24CDD573F977A11E7948" +
            "11",
            order: "FFFFFFFFFFFFFFFFFFFFFFFF99DEF836146BC9B1B4D22831", cofactor: 1))
        case 9: return .ec(ECCurveParameters(
            name: "brainpoolP192r1", oid: "1.3.36.3.3.2.8.1.1.3",
            p: "C302F41D932A36CDA7A3463093D18DB78FCE476DE1A86297",
            a: "6A91174076B1E0E19C39C031FE8685C1CAE040E5C69A28EF",
            b: "469A28EF7C28CCA3DC721D044F4496BCCA7EF4146FBF25C9",
            generator:
            "04C0A0647EAAB6A48753B033C56CB0F0900A2F5C4853375FD614B690866ABD5BB88B5F4828C1490002E6773FA2FA299B" +
            "8F",
            order: "C302F41D932A36CDA7A3462F9E9E916B5BE8F1029AC4ACC1", cofactor: 1))
        case 10: return .ec(ECCurveParameters(
            name: "secp224r1", oid: "1.3.132.0.33",
            p: "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF000000000000000000000001",
            a: "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFE",
            b: "B4050A850C04B3ABF54132565044B0B7D7BFD8BA270B39432355FFB4",
            generator:
            "04B70E0CBD6BB4BF7F321390B94A03C1D356C21122343280D6115C1D21BD376388B5F723FB4C22DFE6CD4375A05A0747" +
            "6444D5819985007E34",
            order: "FFFFFFFFFFFFFFFFFFFFFFFFFFFF16A2E0B8F03E13DD29455C5C2A3D", cofactor: 1))
        case 11: return .ec(ECCurveParameters(
            name: "brainpoolP224r1", oid: "1.3.36.3.3.2.8.1.1.5",
            p: "D7C134AA264366862A18302575D1D787B09F075797DA89F57EC8C0FF",
            a: "68A5E62CA9CE6C1C299803A6C1530B514E182AD8B0042A59CAD29F43",
            b: "2580F63CCFE44138870713B1A92369E33E2135D266DBB372386C400B",
            generator:
            "040D9029AD2C7E5CF4340823B2A87DC68C9E4CE3174C1E6EFDEE12C07D58AA56F772C0726F24C6B89E4ECDAC24354B9E" +
            "99CAA3F6D3761402CD",
            order: "D7C134AA264366862A18302575D0FB98D116BC4B6DDEBCA3A5A7939F", cofactor: 1))
        case 12: return .ec(ECCurveParameters(
            name: "secp256r1", oid: "1.2.840.10045.3.1.7",
            p: "FFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF",
            a: "FFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFC",
            b: "5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B",
            generator:
            "046B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C2964FE342E2FE1A7F9B8EE7EB4A7C0F9E" +
            "162BCE33576B315ECECBB6406837BF51F5",
            order: "FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551", cofactor: 1))
        case 13: return .ec(ECCurveParameters(
            name: "brainpoolP256r1", oid: "1.3.36.3.3.2.8.1.1.7",
            p: "A9FB57DBA1EEA9BC3E660A909D838D726E3BF623D52620282013481D1F6E5377",
            a: "7D5A0975FC2C3057EEF67530417AFFE7FB8055C126DC5C6CE94A4B44F330B5D9",
            b: "26DC5C6CE94A4B44F330B5D9BBD77CBF958416295CF7E1CE6BCCDC18FF8C07B6",
            generator:
            "048BD2AEB9CB7E57CB2C4B482FFC81B7AFB9DE27E1E3BD23C23A4453BD9ACE3262547EF835C3DAC4FD97F8461A14611D" +
            "C9C27745132DED8E545C1D54C72F046997",
            order: "A9FB57DBA1EEA9BC3E660A909D838D718C397AA3B561A6F7901E0E82974856A7", cofactor: 1))
        case 14: return .ec(ECCurveParameters(
            name: "brainpoolP320r1", oid: "1.3.36.3.3.2.8.1.1.9",
            p: "D35E472036BC4FB7E13C785ED201E065F98FCFA6F6F40DEF4F92B9EC7893EC28FCD412B1F1B32E27",
            a: "3EE30B568FBAB0F883CCEBD46D3F3BB8A2A73513F5EB79DA66190EB085FFA9F492F375A97D860EB4",
            b: "520883949DFDBC42D3AD198640688A6FE13F41349554B49ACC31DCCD884539816F5EB4AC8FB1F1A6",
            generator:
            "0443BD7E9AFB53D8B85289BCC48EE5BFE6F20137D10A087EB6E7871E2A10A599C710AF8D0D39E2061114FDD05545EC1C" +
            "C8AB4093247F77275E0743FFED117182EAA9C77877AAAC6AC7D35245D1692E8EE1",
            order: "D35E472036BC4FB7E13C785ED201E065F98FCFA5B68F12A32D482EC7EE8658E98691555B44C59311", cofactor: 1))
        case 15: return .ec(ECCurveParameters(
            name: "secp384r1", oid: "1.3.132.0.34",
            p: "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFF0000000000000000FFFFFFFF",
            a: "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFF0000000000000000FFFFFFFC",
            b: "B3312FA7E23EE7E4988E056BE3F82D19181D9C6EFE8141120314088F5013875AC656398D8A2ED19D2A85C8EDD3EC2AEF",
            generator:
            "04AA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A385502F25DBF55296C3A545E3872760A" +
            "B73617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C00A60B1CE1D7E819D7A431D7C90EA0E" +
            "5F",
            order: "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973", cofactor: 1))
        case 16: return .ec(ECCurveParameters(
            name: "brainpoolP384r1", oid: "1.3.36.3.3.2.8.1.1.11",
            p: "8CB91E82A3386D280F5D6F7E50E641DF152F7109ED5456B412B1DA197FB71123ACD3A729901D1A71874700133107EC53",
            a: "7BC382C63D8C150C3C72080ACE05AFA0C2BEA28E4FB22787139165EFBA91F90F8AA5814A503AD4EB04A8C7DD22CE2826",
            b: "04A8C7DD22CE28268B39B55416F0447C2FB77DE107DCD2A62E880EA53EEB62D57CB4390295DBC9943AB78696FA504C11",
            generator:
            "041D1C64F068CF45FFA2A63A81B7C13F6B8847A3E77EF14FE3DB7FCAFE0CBD10E8E826E03436D646AAEF87B2E247D4AF" +
            "1E8ABE1D7520F9C2A45CB1EB8E95CFD55262B70B29FEEC5864E19C054FF99129280E4646217791811142820341263C53" +
            "15",
            order: "8CB91E82A3386D280F5D6F7E50E641DF152F7109ED5456B31F166E6CAC0425A7CF3AB6AF6B7FC3103B883202E9046565", cofactor: 1))
        case 17: return .ec(ECCurveParameters(
            name: "brainpoolP512r1", oid: "1.3.36.3.3.2.8.1.1.13",
            p:
            "AADD9DB8DBE9C48B3FD4E6AE33C9FC07CB308DB3B3C9D20ED6639CCA703308717D4D9B009BC66842AECDA12AE6A380E6" +
            "2881FF2F2D82C68528AA6056583A48F3",
            a:
            "7830A3318B603B89E2327145AC234CC594CBDD8D3DF91610A83441CAEA9863BC2DED5D5AA8253AA10A2EF1C98B9AC8B5" +
            "7F1117A72BF2C7B9E7C1AC4D77FC94CA",
            b:
            "3DF91610A83441CAEA9863BC2DED5D5AA8253AA10A2EF1C98B9AC8B57F1117A72BF2C7B9E7C1AC4D77FC94CADC083E67" +
            "984050B75EBAE5DD2809BD638016F723",
            generator:
            "0481AEE4BDD82ED9645A21322E9C4C6A9385ED9F70B5D916C1B43B62EEF4D0098EFF3B1F78E2D0D48D50D1687B93B97D" +
            "5F7C6D5047406A5E688B352209BCB9F8227DDE385D566332ECC0EABFA9CF7822FDF209F70024A57B1AA000C55B881F81" +
            "11B2DCDE494A5F485E5BCA4BD88A2763AED1CA2B2FA8F0540678CD1E0F3AD80892",
            order:
            "AADD9DB8DBE9C48B3FD4E6AE33C9FC07CB308DB3B3C9D20ED6639CCA70330870553E5C414CA92619418661197FAC1047" +
            "1DB1D381085DDADDB58796829CA90069", cofactor: 1))
        case 18: return .ec(ECCurveParameters(
            name: "secp521r1", oid: "1.3.132.0.35",
            p:
            "01FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF" +
            "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
            a:
            "01FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF" +
            "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC",
            b:
            "0051953EB9618E1C9A1F929A21A0B68540EEA2DA725B99B315F3B8B489918EF109E156193951EC7E937B1652C0BD3BB1" +
            "BF073573DF883D2C34F1EF451FD46B503F00",
            generator:
            "0400C6858E06B70404E9CD9E3ECB662395B4429C648139053FB521F828AF606B4D3DBAA14B5E77EFE75928FE1DC127A2" +
            "FFA8DE3348B3C1856A429BF97E7E31C2E5BD66011839296A789A3BC0045C8A5FB42C7D1BD998F54449579B446817AFBD" +
            "17273E662C97EE72995EF42640C550B9013FAD0761353C7086A272C24088BE94769FD16650",
            order:
            "01FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFA51868783BF2F966B7FCC0148F709" +
            "A5D03BB5C9B8899C47AEBB6FB71E91386409", cofactor: 1))
        case 0: return .dh(DHGroupParameters(
            name: "1024-bit MODP, 160-bit subgroup",
            p:
            "B10B8F96A080E01DDE92DE5EAE5D54EC52C99FBCFB06A3C69A6A9DCA52D23B616073E28675A23D189838EF1E2EE652C0" +
            "13ECB4AEA906112324975C3CD49B83BFACCBDD7D90C4BD7098488E9C219A73724EFFD6FAE5644738FAA31A4FF55BCCC0" +
            "A151AF5F0DC8B4BD45BF37DF365C1A65E68CFDA76D4DA708DF1FB2BC2E4A4371",
            g:
            "A4D1CBD5C3FD34126765A442EFB99905F8104DD258AC507FD6406CFF14266D31266FEA1E5C41564B777E690F5504F213" +
            "160217B4B01B886A5E91547F9E2749F4D7FBD7D3B9A92EE1909D0D2263F80A76A6A24C087A091F531DBF0A0169B6A28A" +
            "D662A4D18E73AFA32D779D5918D08BC8858F4DCEF97C2A24855E6EEB22B3B2E5",
            q: "F518AA8781A8DF278ABA4E7D64B7CB9D49462353"))
        case 1: return .dh(DHGroupParameters(
            name: "2048-bit MODP, 224-bit subgroup",
            p:
            "AD107E1E9123A9D0D660FAA79559C51FA20D64E5683B9FD1B54B1597B61D0A75E6FA141DF95A56DBAF9A3C407BA1DF15" +
            "EB3D688A309C180E1DE6B85A1274A0A66D3F8152AD6AC2129037C9EDEFDA4DF8D91E8FEF55B7394B7AD5B7D0B6C12207" +
            "C9F98D11ED34DBF6C6BA0B2C8BBC27BE6A00E0A0B9C49708B3BF8A317091883681286130BC8985DB1602E714415D9330" +
            "278273C7DE31EFDC7310F7121FD5A07415987D9ADC0A486DCDF93ACC44328387315D75E198C641A480CD86A1B9E587E8" +
            "BE60E69CC928B2B9C52172E413042E9B23F10B0E16E79763C9B53DCF4BA80A29E3FB73C16B8E75B97EF363E2FFA31F71" +
            "CF9DE5384E71B81C0AC4DFFE0C10E64F",
            g:
            "AC4032EF4F2D9AE39DF30B5C8FFDAC506CDEBE7B89998CAF74866A08CFE4FFE3A6824A4E10B9A6F0DD921F01A70C4AFA" +
            "AB739D7700C29F52C57DB17C620A8652BE5E9001A8D66AD7C17669101999024AF4D027275AC1348BB8A762D0521BC98A" +
            "E247150422EA1ED409939D54DA7460CDB5F6C6B250717CBEF180EB34118E98D119529A45D6F834566E3025E316A330EF" +
            "BB77A86F0C1AB15B051AE3D428C8F8ACB70A8137150B8EEB10E183EDD19963DDD9E263E4770589EF6AA21E7F5F2FF381" +
            "B539CCE3409D13CD566AFBB48D6C019181E1BCFE94B30269EDFE72FE9B6AA4BD7B5A0F1C71CFFF4C19C418E1F6EC0179" +
            "81BC087F2A7065B384B890D3191F2BFA",
            q: "801C0D34C58D93FE997177101F80535A4738CEBCBF389A99B36371EB"))
        case 2: return .dh(DHGroupParameters(
            name: "2048-bit MODP, 256-bit subgroup",
            p:
            "87A8E61DB4B6663CFFBBD19C651959998CEEF608660DD0F25D2CEED4435E3B00E00DF8F1D61957D4FAF7DF4561B2AA30" +
            "16C3D91134096FAA3BF4296D830E9A7C209E0C6497517ABD5A8A9D306BCF67ED91F9E6725B4758C022E0B1EF4275BF7B" +
            "6C5BFC11D45F9088B941F54EB1E59BB8BC39A0BF12307F5C4FDB70C581B23F76B63ACAE1CAA6B7902D52526735488A0E" +
            "F13C6D9A51BFA4AB3AD8347796524D8EF6A167B5A41825D967E144E5140564251CCACB83E6B486F6B3CA3F7971506026" +
            "C0B857F689962856DED4010ABD0BE621C3A3960A54E710C375F26375D7014103A4B54330C198AF126116D2276E11715F" +
            "693877FAD7EF09CADB094AE91E1A1597",
            g:
            "3FB32C9B73134D0B2E77506660EDBD484CA7B18F21EF205407F4793A1A0BA12510DBC15077BE463FFF4FED4AAC0BB555" +
            "BE3A6C1B0C6B47B1BC3773BF7E8C6F62901228F8C28CBB18A55AE31341000A650196F931C77A57F2DDF463E5E9EC144B" +
            "777DE62AAAB8A8628AC376D282D6ED3864E67982428EBC831D14348F6F2F9193B5045AF2767164E1DFC967C1FB3F2E55" +
            "A4BD1BFFE83B9C80D052B985D182EA0ADB2A3B7313D3FE14C8484B1E052588B9B7D2BBD2DF016199ECD06E1557CD0915" +
            "B3353BBB64E0EC377FD028370DF92B52C7891428CDC67EB6184B523D1DB246C32F63078490F00EF8D647D148D4795451" +
            "5E2327CFEF98C582664B4C0F6CC41659",
            q: "8CF83642A709A097B447997640129DA299B1A47D1EB3750BA308B0FE64F5FBD3"))
        default: return nil
        }
    }

    /// The standardized ID of a named curve given by its OBJECT IDENTIFIER, or nil.
    public static func id(ofCurveOID oid: String) -> Int? {
        ids.first { if case .ec(let c)? = parameters(id: $0) { return c.oid == oid } else { return false } }
    }

    /// The standardized ID whose parameters equal `domain` (a curve given with explicit parameters, a DH group), or nil.
    public static func id(of domain: DomainParameters) -> Int? {
        ids.first { id in
            switch (parameters(id: id), domain) {
            case let (.ec(a)?, .ec(b)): return a.sameDomain(as: b)
            case let (.dh(a)?, .dh(b)): return a.p == b.p && a.g == b.g
            default: return false
            }
        }
    }

    /// The curve called `name` (`brainpoolP256r1`, `secp256r1`; OpenSSL's `prime256v1` and `prime192v1` too), or nil.
    public static func curve(named name: String) -> ECCurveParameters? {
        let aliases = ["prime256v1": "secp256r1", "prime192v1": "secp192r1", "P-256": "secp256r1", "P-384": "secp384r1", "P-521": "secp521r1"]
        let wanted = aliases[name] ?? name
        for id in ids { if case .ec(let c)? = parameters(id: id), c.name?.lowercased() == wanted.lowercased() { return c } }
        return nil
    }
}

/// Big-endian octet-string helpers shared by the chip code.
public enum Bytes {
    /// Bytes from hex digits (whitespace ignored); traps on a malformed literal (constants only).
    public static func hex(_ s: String) -> [UInt8] {
        guard let b = parseHex(s) else { preconditionFailure("malformed hex literal") }
        return b
    }

    /// Bytes from hex digits (whitespace and colons ignored), or nil when `s` is not an even number of hex digits.
    public static func parseHex(_ s: String) -> [UInt8]? {
        let digits = Array(s.utf8.filter { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0x3A) })
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        func v(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x41 + 10
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        var i = 0
        while i < digits.count {
            guard let h = v(digits[i]), let l = v(digits[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }

    /// Upper-case hex digits.
    public static func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789ABCDEF")
        var s = ""
        s.reserveCapacity(bytes.count * 2)
        for b in bytes { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 0xF)]) }
        return s
    }

    /// `bytes` without leading zero octets (an empty array for zero).
    public static func trimmed(_ bytes: [UInt8]) -> [UInt8] { Array(bytes.drop { $0 == 0 }) }

    /// `bytes` left-padded with zeros to `count` octets (unchanged when already as long or longer).
    public static func leftPadded(_ bytes: [UInt8], to count: Int) -> [UInt8] {
        bytes.count >= count ? bytes : [UInt8](repeating: 0, count: count - bytes.count) + bytes
    }

    /// Bits of a big-endian unsigned integer.
    public static func bitLength(_ bytes: [UInt8]) -> Int {
        let t = trimmed(bytes)
        guard let first = t.first else { return 0 }
        return (t.count - 1) * 8 + (8 - first.leadingZeroBitCount)
    }

    /// Compares two big-endian unsigned integers: -1, 0 or 1.
    public static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let x = trimmed(a), y = trimmed(b)
        if x.count != y.count { return x.count < y.count ? -1 : 1 }
        for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
        return 0
    }

    /// A big-endian unsigned integer as 4 octets (file offsets, counters).
    public static func uint32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// Constant-time equality of two byte strings of the same length (MACs, tokens); false when lengths differ.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var d: UInt8 = 0
        for i in 0..<a.count { d |= a[i] ^ b[i] }
        return d == 0
    }
}
