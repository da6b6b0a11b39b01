import Foundation
import MRZ

/// The elementary files of the LDS1 eMRTD application (ICAO 9303-10 §4.6, Table 34?: file identifiers and tags).
public enum LDSFile: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// EF.COM: LDS version and the list of present data groups (file 011E, tag 60).
    case com
    /// EF.SOD: the document security object (file 011D, tag 77).
    case sod
    /// Data group 1…16 (files 0101…0110).
    case dataGroup(Int)

    /// The data groups' application tags (ICAO 9303-10 §4.7, Table 35).
    static let dataGroupTags: [Int: UInt32] = LDSTags.dataGroups.mapValues(UInt32.init)

    /// The file's outer tag.
    public var tag: BERTag {
        switch self {
        case .com: return BERTag(0x60)
        case .sod: return BERTag(0x77)
        case .dataGroup(let n): return BERTag(Self.dataGroupTags[n] ?? 0)
        }
    }

    /// The short elementary-file identifier, e.g. "0101" for DG1.
    public var fileIdentifier: String {
        switch self {
        case .com: return "011E"
        case .sod: return "011D"
        case .dataGroup(let n): return String(format: "01%02X", n)
        }
    }

    /// The data group whose tag is `tag` (EF.COM's tag list), or nil.
    public static func dataGroup(forTag tag: UInt8) -> Int? {
        dataGroupTags.first { $0.value == UInt32(tag) }?.key
    }

    public var description: String {
        switch self {
        case .com: return "EF.COM"
        case .sod: return "EF.SOD"
        case .dataGroup(let n): return "DG\(n)"
        }
    }

    private var order: Int { switch self { case .com: return 0; case .dataGroup(let n): return n; case .sod: return 100 } }
    public static func < (a: LDSFile, b: LDSFile) -> Bool { a.order < b.order }

    public init(from decoder: Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        if s == "EF.COM" { self = .com } else if s == "EF.SOD" { self = .sod }
        else if s.hasPrefix("DG"), let n = Int(s.dropFirst(2)), (1...16).contains(n) { self = .dataGroup(n) }
        else { throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an LDS file name: \(s)")) }
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// Why an LDS file could not be read. `file` names the EF; the BER case carries the byte offset.
public enum LDSError: Error, Equatable, Sendable, CustomStringConvertible {
    case encoding(LDSFile, BERError)
    /// The file's outer tag is not the tag of that file (e.g. a DG2 given where DG1 was expected).
    case wrongFile(LDSFile, found: BERTag)
    /// A mandatory element is missing.
    case missing(LDSFile, String)
    /// An element has a value outside the standard.
    case invalid(LDSFile, String)
    /// A well-formed element this reader does not implement (e.g. an ISO/IEC 39794-5 face record).
    case unsupported(LDSFile, String)
    /// OpenSSL refused the file's CMS, certificate or key.
    case crypto(LDSFile, CryptoError)

    public var description: String {
        switch self {
        case let .encoding(f, e): return "\(f): \(e)"
        case let .wrongFile(f, t): return "\(f): outer tag \(t) is not the tag of \(f) (\(f.tag))"
        case let .missing(f, what): return "\(f): \(what) is missing"
        case let .invalid(f, what): return "\(f): \(what)"
        case let .unsupported(f, what): return "\(f): unsupported \(what)"
        case let .crypto(f, e): return "\(f): \(e)"
        }
    }

    /// The file the error is about.
    public var file: LDSFile {
        switch self {
        case .encoding(let f, _), .wrongFile(let f, _), .missing(let f, _), .invalid(let f, _), .unsupported(let f, _), .crypto(let f, _): return f
        }
    }
}

/// Reads `bytes` as the single TLV of `file`, mapping encoding errors to `LDSError`.
func readFile(_ bytes: [UInt8], as file: LDSFile) throws -> BERElement {
    let e: BERElement
    do {
        // Some chips pad an EF to its allocated size after the TLV: trailing zero bytes are accepted.
        var r = BERReader(bytes)
        e = try r.read()
        if e.end < bytes.count, bytes[e.end...].contains(where: { $0 != 0 && $0 != 0xFF }) {
            throw BERError.trailingBytes(offset: e.end, count: bytes.count - e.end)
        }
    } catch let b as BERError { throw LDSError.encoding(file, b) }
    guard e.tag == file.tag else { throw LDSError.wrongFile(file, found: e.tag) }
    return e
}

func wrap<T>(_ file: LDSFile, _ body: () throws -> T) throws -> T {
    do { return try body() } catch let b as BERError { throw LDSError.encoding(file, b) }
}

func text(_ e: BERElement) -> String { String(decoding: e.value, as: UTF8.self) }

/// ICAO 9303-10 §4.6.1 EF.COM: LDS and Unicode versions and the tags of the data groups present.
/// EF.COM is not covered by the SOD's signature, so its list is reported, never relied on.
public struct EFCOM: Codable, Sendable, Equatable {
    /// "1.7" from the 4-digit "0107".
    public var ldsVersion: String
    /// "4.0.0" from the 6-digit "040000".
    public var unicodeVersion: String
    /// The data groups EF.COM says are present, ascending.
    public var dataGroups: [Int]

    public init(_ bytes: [UInt8]) throws {
        let f = LDSFile.com
        let root = try readFile(bytes, as: f)
        let kids = try wrap(f) { try root.children() }
        func field(_ t: UInt32) -> String? { kids.first { $0.tag.raw == t }.map(text) }
        guard let lds = field(0x5F01) else { throw LDSError.missing(f, "LDS version (5F01)") }
        guard let uni = field(0x5F36) else { throw LDSError.missing(f, "Unicode version (5F36)") }
        guard let list = kids.first(where: { $0.tag.raw == 0x5C }) else { throw LDSError.missing(f, "tag list (5C)") }
        func dotted(_ s: String, _ parts: Int) -> String {
            let a = Array(s)
            guard a.count == parts * 2, a.allSatisfy(\.isNumber) else { return s }
            return (0..<parts).map { String(Int(String(a[$0 * 2...$0 * 2 + 1]))!) }.joined(separator: ".")
        }
        ldsVersion = dotted(lds, 2)
        unicodeVersion = dotted(uni, 3)
        var groups: [Int] = []
        for t in list.value {
            guard let n = LDSFile.dataGroup(forTag: t) else { throw LDSError.invalid(f, "tag list names unknown tag \(String(t, radix: 16))") }
            groups.append(n)
        }
        dataGroups = groups.sorted()
    }

    /// Encodes an EF.COM (for specimen chips).
    public static func encode(ldsVersion: String = "0107", unicodeVersion: String = "040000", dataGroups: [Int]) -> [UInt8] {
        let tags = dataGroups.compactMap { LDSFile.dataGroupTags[$0].map { UInt8($0) } }
        return DER.tlv(0x60, DER.tlv(0x5F01, Array(ldsVersion.utf8)) + DER.tlv(0x5F36, Array(unicodeVersion.utf8)) + DER.tlv(0x5C, tags))
    }
}

/// ICAO 9303-10 §4.7.1 DG1: the MRZ as written on the chip, parsed with the MRZ module (no OCR correction:
/// chip data is exact).
public struct DG1: Codable, Sendable, Equatable {
    /// The MRZ lines (2 × 44 TD3, 2 × 36 TD2, 3 × 30 TD1).
    public var lines: [String]
    /// The MRZ parse: format, fields, check digits.
    public var mrz: MRZResult

    public init(_ bytes: [UInt8]) throws {
        let f = LDSFile.dataGroup(1)
        let root = try readFile(bytes, as: f)
        guard let data = try wrap(f, { try root.child(BERTag(0x5F1F)) }) else { throw LDSError.missing(f, "MRZ data element (5F1F)") }
        let s = text(data)
        guard s.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "<" }) else {
            throw LDSError.invalid(f, "MRZ data holds characters outside A–Z, 0–9 and <")
        }
        let chars = Array(s)
        let width: Int
        switch chars.count {
        case 90: width = 30
        case 72: width = 36
        case 88: width = 44
        default: throw LDSError.invalid(f, "MRZ data of \(chars.count) characters (90 TD1, 72 TD2 or 88 TD3 expected)")
        }
        lines = stride(from: 0, to: chars.count, by: width).map { String(chars[$0..<$0 + width]) }
        mrz = MRZParser(options: .init(correctionEnabled: false)).parse(lines)
    }

    /// Encodes a DG1 from MRZ lines (for specimen chips).
    public static func encode(lines: [String]) -> [UInt8] {
        DER.tlv(0x61, DER.tlv(0x5F1F, Array(lines.joined().utf8)))
    }
}

/// ICAO 9303-10 §4.7.2 DG2: the encoded face, in a biometric information template (ISO/IEC 7816-11) holding an
/// ISO/IEC 19794-5:2005 facial record.
public struct DG2: Sendable, Equatable {
    /// One face image as the chip holds it: the 19794-5 descriptors and the still-encoded image.
    public struct Face: Sendable, Equatable {
        public enum ImageDataType: String, Codable, Sendable { case jpeg, jpeg2000 }
        /// ISO/IEC 19794-5 §5.5.1: 0 unspecified, 1 male, 2 female, 0xFF unknown.
        public var gender: Int
        public var eyeColour: Int
        public var hairColour: Int
        public var expression: Int
        /// Yaw, pitch, roll as encoded (ISO/IEC 19794-5 §5.5.7: 0 unspecified, else 1 + (angle + 180) / 2).
        public var poseAngles: [Int]
        public var featurePointCount: Int
        /// 0 basic, 1 full frontal, 2 token frontal (§5.7.1).
        public var faceImageType: Int
        public var imageDataType: ImageDataType
        /// Width and height in pixels, as declared in the record.
        public var width: Int
        public var height: Int
        /// §5.7.4: 0 unspecified, 1 RGB24, 2 YUV422, 3 8-bit grey, 4 other.
        public var colourSpace: Int
        public var sourceType: Int
        public var quality: Int
        /// The JPEG (ISO/IEC 10918) or JPEG 2000 (ISO/IEC 15444) bytes.
        public var imageData: [UInt8]
    }

    /// The biometric header template's format owner/type (CBEFF; 0x0101 / 0x0008 for 19794-5).
    public var formatOwner: Int?
    public var formatType: Int?
    public var faces: [Face]

    public init(_ bytes: [UInt8]) throws {
        let f = LDSFile.dataGroup(2)
        let root = try readFile(bytes, as: f)
        guard let group = try wrap(f, { try root.child(BERTag(0x7F61)) }) else { throw LDSError.missing(f, "biometric information group template (7F61)") }
        let instances = try wrap(f) { try group.children().filter { $0.tag.raw == 0x7F60 } }
        guard !instances.isEmpty else { throw LDSError.missing(f, "biometric information template (7F60)") }
        var faces: [Face] = []
        var owner: Int?, type: Int?
        for bit in instances {
            let kids = try wrap(f) { try bit.children() }
            if let bht = kids.first(where: { $0.tag.raw == 0xA1 }) {
                for h in try wrap(f, { try bht.children() }) {
                    let v = h.value.reduce(0) { ($0 << 8) | Int($1) }
                    if h.tag.raw == 0x87, h.value.count <= 4 { owner = v }
                    if h.tag.raw == 0x88, h.value.count <= 4 { type = v }
                }
            }
            guard let bdb = kids.first(where: { $0.tag.raw == 0x5F2E || $0.tag.raw == 0x7F2E }) else {
                throw LDSError.missing(f, "biometric data block (5F2E)")
            }
            guard bdb.tag.raw == 0x5F2E else { throw LDSError.unsupported(f, "constructed biometric data block (7F2E, ISO/IEC 39794-5)") }
            faces += try Self.facialRecord(bdb.valueBytes)
        }
        formatOwner = owner
        formatType = type
        self.faces = faces
    }

    /// ISO/IEC 19794-5:2005 §5.4–5.7: facial record header, then per face a data block.
    static func facialRecord(_ r: [UInt8]) throws -> [Face] {
        let f = LDSFile.dataGroup(2)
        func u(_ at: Int, _ n: Int) throws -> Int {
            guard at >= 0, at + n <= r.count else { throw LDSError.invalid(f, "facial record truncated at byte \(at)") }
            return r[at..<at + n].reduce(0) { ($0 << 8) | Int($1) }
        }
        guard r.count >= 14 else { throw LDSError.invalid(f, "facial record of \(r.count) bytes is shorter than its header") }
        guard r[0..<4] == [0x46, 0x41, 0x43, 0x00] else { throw LDSError.invalid(f, "facial record does not start with 'FAC'") }
        let version = String(decoding: r[4..<7], as: UTF8.self)
        guard version == "010" else { throw LDSError.unsupported(f, "facial record version \(version) (ISO/IEC 19794-5:2005 '010' is read)") }
        let recordLength = try u(8, 4)
        guard recordLength <= r.count else { throw LDSError.invalid(f, "facial record declares \(recordLength) bytes, \(r.count) present") }
        let count = try u(12, 2)
        guard count >= 1 else { throw LDSError.invalid(f, "facial record holds no face") }
        var faces: [Face] = []
        var p = 14
        for _ in 0..<count {
            let blockLength = try u(p, 4)
            let points = try u(p + 4, 2)
            let fixed = 20 + 8 * points + 12
            guard blockLength >= fixed, p + blockLength <= recordLength else {
                throw LDSError.invalid(f, "facial data block of \(blockLength) bytes at byte \(p) does not fit its record")
            }
            let info = p + 20 + 8 * points
            let dataType = try u(info + 1, 1)
            guard dataType == 0 || dataType == 1 else { throw LDSError.unsupported(f, "image data type \(dataType) (0 JPEG, 1 JPEG 2000)") }
            faces.append(Face(
                gender: try u(p + 6, 1), eyeColour: try u(p + 7, 1), hairColour: try u(p + 8, 1),
                expression: try u(p + 12, 2), poseAngles: [try u(p + 14, 1), try u(p + 15, 1), try u(p + 16, 1)],
                featurePointCount: points, faceImageType: try u(info, 1), imageDataType: dataType == 0 ? .jpeg : .jpeg2000,
                width: try u(info + 2, 2), height: try u(info + 4, 2), colourSpace: try u(info + 6, 1),
                sourceType: try u(info + 7, 1), quality: try u(info + 10, 2),
                imageData: Array(r[(info + 12)..<(p + blockLength)])))
            p += blockLength
        }
        return faces
    }

    /// Encodes a DG2 holding one full-frontal face (for specimen chips).
    public static func encode(image: [UInt8], type: Face.ImageDataType, width: Int, height: Int, gender: Int = 0) -> [UInt8] {
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).reversed().map { UInt8((v >> ($0 * 8)) & 0xFF) } }
        let block = 20 + 12 + image.count
        var rec: [UInt8] = Array("FAC".utf8) + [0] + Array("010".utf8) + [0] + be(14 + block, 4) + be(1, 2)
        rec += be(block, 4) + be(0, 2) + [UInt8(gender), 0, 0] + [0, 0, 0] + be(0, 2) + [0, 0, 0] + [0, 0, 0]
        rec += [1, type == .jpeg ? 0 : 1] + be(width, 2) + be(height, 2) + [1, 2] + be(0, 2) + be(0, 2)
        rec += image
        let bht = DER.tlv(0xA1, DER.tlv(0x80, [0x01, 0x01]) + DER.tlv(0x87, [0x01, 0x01]) + DER.tlv(0x88, [0x00, 0x08]))
        let bit = DER.tlv(0x7F60, bht + DER.tlv(0x5F2E, rec))
        return DER.tlv(0x75, DER.tlv(0x7F61, DER.tlv(0x02, [0x01]) + bit))
    }
}

/// ICAO 9303-10 §4.7.11 DG11, additional personal details. Every element is optional; dates are `YYYYMMDD`.
public struct DG11: Codable, Sendable, Equatable {
    public var fullName: String?
    public var otherNames: [String]
    public var personalNumber: String?
    public var dateOfBirth: String?
    public var placeOfBirth: String?
    public var address: String?
    public var telephone: String?
    public var profession: String?
    public var title: String?
    public var personalSummary: String?
    public var otherTravelDocumentNumbers: String?
    public var custodyInformation: String?
    /// 5F16: proof of citizenship image present (its bytes are not reported).
    public var hasProofOfCitizenshipImage: Bool

    public init(_ bytes: [UInt8]) throws {
        let f = LDSFile.dataGroup(11)
        let root = try readFile(bytes, as: f)
        let kids = try wrap(f) { try root.children() }
        func field(_ t: UInt32) -> String? { kids.first { $0.tag.raw == t }.map(text) }
        fullName = field(0x5F0E); personalNumber = field(0x5F10); dateOfBirth = field(0x5F2B)
        placeOfBirth = field(0x5F11); address = field(0x5F42); telephone = field(0x5F12); profession = field(0x5F13)
        title = field(0x5F14); personalSummary = field(0x5F15); otherTravelDocumentNumbers = field(0x5F17)
        custodyInformation = field(0x5F18)
        hasProofOfCitizenshipImage = kids.contains { $0.tag.raw == 0x5F16 }
        var others = kids.filter { $0.tag.raw == 0x5F0F }.map(text)
        for a0 in kids where a0.tag.raw == 0xA0 { others += try wrap(f) { try a0.children() }.filter { $0.tag.raw == 0x5F0F }.map(text) }
        otherNames = others
    }
}

/// ICAO 9303-10 §4.7.12 DG12, additional document details. Dates are `YYYYMMDD`; personalisation time `YYYYMMDDhhmmss`.
public struct DG12: Codable, Sendable, Equatable {
    public var issuingAuthority: String?
    public var dateOfIssue: String?
    public var otherPersons: [String]
    public var endorsements: String?
    public var taxOrExitRequirements: String?
    public var personalisationTime: String?
    public var personalisationSystemSerialNumber: String?
    /// 5F1D / 5F1E: images of the front and rear of the document present (their bytes are not reported).
    public var hasFrontImage: Bool
    public var hasRearImage: Bool

    public init(_ bytes: [UInt8]) throws {
        let f = LDSFile.dataGroup(12)
        let root = try readFile(bytes, as: f)
        let kids = try wrap(f) { try root.children() }
        func field(_ t: UInt32) -> String? { kids.first { $0.tag.raw == t }.map(text) }
        issuingAuthority = field(0x5F19); dateOfIssue = field(0x5F26); endorsements = field(0x5F1B)
        taxOrExitRequirements = field(0x5F1C); personalisationTime = field(0x5F55)
        personalisationSystemSerialNumber = field(0x5F56)
        hasFrontImage = kids.contains { $0.tag.raw == 0x5F1D }
        hasRearImage = kids.contains { $0.tag.raw == 0x5F1E }
        var others = kids.filter { $0.tag.raw == 0x5F1A }.map(text)
        for a0 in kids where a0.tag.raw == 0xA0 { others += try wrap(f) { try a0.children() }.filter { $0.tag.raw == 0x5F1A }.map(text) }
        otherPersons = others
    }
}

/// ICAO 9303-10 §4.7.14 DG14: the chip's SecurityInfos (BSI TR-03110 / ICAO 9303-11 §9.2) — which chip-side
/// protocols it offers — read with EMRTDCore's typed ``SecurityInfos`` (``typed``, the values the chip-access library
/// runs Chip Authentication with) and reported by protocol OID, family and version.
public struct DG14: Codable, Sendable, Equatable {
    public struct SecurityInfo: Codable, Sendable, Equatable {
        /// The protocol OBJECT IDENTIFIER, dotted.
        public var protocolOID: String
        /// The protocol family it belongs to.
        public var protocolName: String
        /// The `version` INTEGER where the info has one.
        public var version: Int?
    }
    public var securityInfos: [SecurityInfo]
    /// The SecurityInfos typed (PACEInfo, ChipAuthenticationInfo, ChipAuthenticationPublicKeyInfo,
    /// ActiveAuthenticationInfo, …); not in the JSON report (nil when decoded from one).
    public var typed: SecurityInfos?

    enum CodingKeys: String, CodingKey { case securityInfos }

    public init(from decoder: Decoder) throws {
        securityInfos = try decoder.container(keyedBy: CodingKeys.self).decode([SecurityInfo].self, forKey: .securityInfos)
        typed = nil
    }

    public init(_ bytes: [UInt8]) throws {
        let f = LDSFile.dataGroup(14)
        _ = try readFile(bytes, as: f)
        let infos: SecurityInfos
        do { infos = try SecurityInfos(dg14: bytes) } catch { throw LDSError.invalid(f, "SecurityInfos: \(error)") }
        typed = infos
        securityInfos = infos.infos.map { SecurityInfo(protocolOID: $0.protocolOID, protocolName: Self.protocolName($0.protocolOID), version: $0.version) }
    }

    /// Protocol families by OID prefix (BSI TR-03110-3 §A.1, ICAO 9303-11 §9.2).
    static func protocolName(_ oid: String) -> String {
        let families: [(String, String)] = [
            ("0.4.0.127.0.7.2.2.1", "Chip Authentication public key"), ("0.4.0.127.0.7.2.2.2", "Terminal Authentication"),
            ("0.4.0.127.0.7.2.2.3", "Chip Authentication"), ("0.4.0.127.0.7.2.2.4", "PACE"),
            ("0.4.0.127.0.7.2.2.5", "Restricted Identification"), ("0.4.0.127.0.7.2.2.6", "CardInfoLocator"),
            ("0.4.0.127.0.7.2.2.7", "eID security"), ("0.4.0.127.0.7.2.2.8", "Privileged Terminal"),
            ("2.23.136.1.1.5", "Active Authentication"), ("2.23.136.1.1.8", "EF.DIR"),
        ]
        return families.first { oid == $0.0 || oid.hasPrefix($0.0 + ".") }?.1 ?? "other"
    }
}

/// ICAO 9303-10 §4.7.15 DG15: the Active Authentication public key (ICAO 9303-11 §6.1), verified with
/// `ActiveAuthentication` when the chip signed the verifier's challenge.
public struct DG15: Codable, Sendable, Equatable {
    public var algorithm: String
    public var curve: String?
    public var bits: Int
    /// The ActiveAuthenticationPublicKeyInfo as DER (an X.509 SubjectPublicKeyInfo); not in the JSON report.
    public var subjectPublicKeyInfo: [UInt8]

    enum CodingKeys: String, CodingKey { case algorithm, curve, bits }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        algorithm = try c.decode(String.self, forKey: .algorithm)
        curve = try c.decodeIfPresent(String.self, forKey: .curve)
        bits = try c.decode(Int.self, forKey: .bits)
        subjectPublicKeyInfo = []
    }

    /// Encodes a DG15 holding `subjectPublicKeyInfo` (for specimen chips).
    public static func encode(subjectPublicKeyInfo: [UInt8]) -> [UInt8] { DER.tlv(0x6F, subjectPublicKeyInfo) }

    public init(_ bytes: [UInt8]) throws {
        let f = LDSFile.dataGroup(15)
        let root = try readFile(bytes, as: f)
        guard let spki = try wrap(f, { try root.children().first }) else { throw LDSError.missing(f, "SubjectPublicKeyInfo") }
        let der = spki.encoded
        var alg = [CChar](repeating: 0, count: 32), curve = [CChar](repeating: 0, count: 64)
        var bits: Int32 = 0
        do { try shim { em_public_key_info_(der, &alg, &curve, &bits, $0, $1) } } catch let e as CryptoError { throw LDSError.crypto(f, e) }
        algorithm = CryptoError.text(alg)
        let c = CryptoError.text(curve)
        self.curve = c.isEmpty ? nil : c
        self.bits = Int(bits)
        subjectPublicKeyInfo = der
    }
}
