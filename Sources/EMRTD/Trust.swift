import Foundation

/// A CSCA master list (ICAO 9303-12 §9): a CMS SignedData, content type id-icao-cscaMasterList, whose content
/// is `CscaMasterList ::= SEQUENCE { version INTEGER, certList SET OF Certificate }`, signed by a master-list
/// signer whose certificate a CSCA of the publishing state issued.
public struct MasterList: Sendable {
    /// id-icao-cscaMasterList (ICAO 9303-12 §9).
    public static let contentType = "2.23.136.1.1.2"

    public let signedData: SignedData
    /// The CSCA certificates the list carries (self-signed roots and link certificates).
    public let certificates: [Certificate]
    /// Certificates in the list OpenSSL could not parse (reported, skipped).
    public let unreadableCertificates: Int
    /// The master-list signer's certificate, embedded in the SignedData.
    public let signer: Certificate?
    /// The list's own CMS signature, verified with the signer's key.
    public let signature: SignedData.SignatureCheck
    /// The CSCA in the list that issued the signer's certificate (by name and key), if any.
    public let signerIssuer: Certificate?

    public init(_ bytes: [UInt8]) throws {
        let cms: SignedData
        do { cms = try SignedData(bytes) } catch let e as CryptoError { throw TrustError.unreadable("master list: \(e)") }
        guard cms.contentType == Self.contentType else {
            throw TrustError.unreadable("CMS content type \(cms.contentType) is not a CSCA master list (\(Self.contentType))")
        }
        signedData = cms
        var certs: [Certificate] = []
        var bad = 0
        do {
            let root = try BERReader.single(cms.content).expect(.sequence)
            let parts = try root.children()
            guard parts.count == 2, parts[0].tag == .integer, parts[1].tag == .set else {
                throw TrustError.unreadable("master list content is not SEQUENCE { version, SET OF Certificate }")
            }
            for c in try parts[1].children() {
                if let cert = try? Certificate(c.encoded) { certs.append(cert) } else { bad += 1 }
            }
        } catch let e as BERError { throw TrustError.unreadable("master list content: \(e)") }
        certificates = certs
        unreadableCertificates = bad
        let signer = cms.signerCount == 1 ? cms.certificates.first { cms.signer(0, is: $0) } : nil
        self.signer = signer
        signature = signer.map { cms.verifySigner(0, with: $0) } ?? .invalid("no master-list signer certificate embedded")
        signerIssuer = signer.flatMap { s in certs.first { s.isIssuedByName($0) && s.isSigned(by: $0) } }
    }
}

/// Why trust material was refused. Nothing is added to a trust store when any of these is thrown.
public enum TrustError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a certificate, CRL, master list or LDIF file this reader understands.
    case unreadable(String)
    /// The master list's own signature does not verify.
    case masterListSignatureInvalid(String)
    /// The master-list signer was issued by no CSCA in the list and no trusted CSCA.
    case masterListSignerUntrusted(String)
    /// A certificate offered as a CSCA is not a CA certificate (no cA flag, no keyCertSign).
    case notACSCA(String)
    /// Nothing usable in the file (e.g. an LDIF without certificates).
    case empty

    public var description: String {
        switch self {
        case .unreadable(let s): return "unreadable trust material: \(s)"
        case .masterListSignatureInvalid(let s): return "the master list's signature does not verify: \(s)"
        case .masterListSignerUntrusted(let s): return "the master-list signer \(s) was issued by no CSCA in the list and no trusted CSCA"
        case .notACSCA(let s): return "\(s) is not a CA certificate"
        case .empty: return "no certificates or CRLs found"
        }
    }
}

/// The kinds of trust material an operator loads (ICAO 9303-12 §7, §9; ICAO PKD LDIF).
public enum TrustMaterialKind: String, Codable, Sendable, CaseIterable {
    case cscaCertificate = "csca_certificate"
    case masterList = "master_list"
    case crl
    /// A document signer certificate, for SODs that do not embed theirs.
    case documentSignerCertificate = "document_signer_certificate"
    /// An ICAO PKD LDIF export (master lists, DSCs, CRLs).
    case ldif
}

/// One trust file, read and checked: what it contributes to a `CSCATrust`.
public struct TrustMaterial: Sendable {
    public let kind: TrustMaterialKind
    public let cscas: [Certificate]
    public let crls: [RevocationList]
    public let documentSigners: [Certificate]
    /// Master lists found (one for a .mls file; any number in an LDIF), with their checks.
    public let masterLists: [MasterList]

    /// Reads trust material of any supported kind (DER or PEM certificate or CRL, CMS master list, LDIF).
    /// Master lists are accepted only when their signature verifies and their signer was issued by a CSCA
    /// in the list itself or in `trusted`.
    public init(_ bytes: [UInt8], trusted: CSCATrust = CSCATrust()) throws {
        guard !bytes.isEmpty else { throw TrustError.empty }
        if Self.isLDIF(bytes) {
            var cscas: [Certificate] = [], crls: [RevocationList] = [], dscs: [Certificate] = [], lists: [MasterList] = []
            for (attribute, value) in try LDIF.values(bytes) {
                switch attribute {
                case "pkdmasterlistcontent":
                    let ml = try Self.checked(MasterList(value), trusted: trusted)
                    lists.append(ml); cscas += ml.certificates
                case "cacertificate;binary": cscas.append(try Self.csca(value))
                case "usercertificate;binary": dscs.append(try Self.certificate(value))
                case "certificaterevocationlist;binary": crls.append(try Self.crl(value))
                default: break
                }
            }
            guard !(cscas.isEmpty && crls.isEmpty && dscs.isEmpty) else { throw TrustError.empty }
            self.init(kind: .ldif, cscas: cscas, crls: crls, documentSigners: dscs, masterLists: lists)
            return
        }
        let hasCerts = Self.pemLabel(bytes, "CERTIFICATE"), hasCRLs = Self.pemLabel(bytes, "X509 CRL")
        if hasCerts || hasCRLs {
            // A PEM bundle: every certificate and CRL block in it.
            let certs = hasCerts ? try Self.pemBlocks(bytes, "CERTIFICATE").map(Self.certificate) : []
            let crls = hasCRLs ? try Self.pemBlocks(bytes, "X509 CRL").map(Self.crl) : []
            let cas = certs.filter(Self.isCA), others = certs.filter { !Self.isCA($0) }
            let kind: TrustMaterialKind = !cas.isEmpty ? .cscaCertificate : !others.isEmpty ? .documentSignerCertificate : .crl
            self.init(kind: kind, cscas: cas, crls: crls, documentSigners: others, masterLists: [])
            return
        }
        if let cms = try? SignedData(bytes) {
            let ml: MasterList
            if cms.contentType == MasterList.contentType { ml = try Self.checked(MasterList(bytes), trusted: trusted) }
            else { throw TrustError.unreadable("CMS content type \(cms.contentType) is not a CSCA master list") }
            self.init(kind: .masterList, cscas: ml.certificates, crls: [], documentSigners: [], masterLists: [ml])
            return
        }
        if let cert = try? Certificate(bytes) { self.init(certificates: [cert]); return }
        if let crl = try? RevocationList(bytes) {
            self.init(kind: .crl, cscas: [], crls: [crl], documentSigners: [], masterLists: [])
            return
        }
        throw TrustError.unreadable("not a certificate, CRL, CSCA master list or LDIF file")
    }

    private init(kind: TrustMaterialKind, cscas: [Certificate], crls: [RevocationList], documentSigners: [Certificate], masterLists: [MasterList]) {
        self.kind = kind; self.cscas = cscas; self.crls = crls; self.documentSigners = documentSigners; self.masterLists = masterLists
    }

    /// Certificates sort themselves: CA certificates are CSCAs, the rest document signers.
    private init(certificates: [Certificate]) {
        let cas = certificates.filter(Self.isCA), others = certificates.filter { !Self.isCA($0) }
        self.init(kind: cas.isEmpty ? .documentSignerCertificate : .cscaCertificate, cscas: cas, crls: [],
                  documentSigners: others, masterLists: [])
    }

    static func isCA(_ c: Certificate) -> Bool { c.info.isCA == true || (c.info.keyUsage?.contains("keyCertSign") ?? false) }

    static func checked(_ ml: MasterList, trusted: CSCATrust) throws -> MasterList {
        guard ml.signature == .valid else {
            if case .invalid(let d) = ml.signature { throw TrustError.masterListSignatureInvalid(d) }
            if case .contentDigestMismatch(let d) = ml.signature { throw TrustError.masterListSignatureInvalid(d) }
            if case .unsupported(let d) = ml.signature { throw TrustError.masterListSignatureInvalid(d) }
            throw TrustError.masterListSignatureInvalid("")
        }
        if ml.signerIssuer == nil, let s = ml.signer, !trusted.cscas.contains(where: { s.isIssuedByName($0) && s.isSigned(by: $0) }) {
            throw TrustError.masterListSignerUntrusted(s.info.subject)
        }
        return ml
    }

    static func certificate(_ b: [UInt8]) throws -> Certificate {
        do { return try Certificate(b) } catch { throw TrustError.unreadable("certificate: \(error)") }
    }
    static func csca(_ b: [UInt8]) throws -> Certificate {
        let c = try certificate(b)
        guard isCA(c) else { throw TrustError.notACSCA(c.info.subject) }
        return c
    }
    static func crl(_ b: [UInt8]) throws -> RevocationList {
        do { return try RevocationList(b) } catch { throw TrustError.unreadable("CRL: \(error)") }
    }

    static func isLDIF(_ b: [UInt8]) -> Bool {
        let head = String(decoding: b.prefix(4096), as: UTF8.self)
        return head.hasPrefix("dn:") || head.hasPrefix("version:") || head.contains("\ndn:")
    }
    static func pemLabel(_ b: [UInt8], _ label: String) -> Bool {
        guard b.first == UInt8(ascii: "-") || b.prefix(64).allSatisfy({ $0 < 0x80 }) else { return false }
        return String(decoding: b, as: UTF8.self).contains("-----BEGIN \(label)-----")
    }
    /// Each PEM block with `label`, re-encoded as its own PEM text.
    static func pemBlocks(_ b: [UInt8], _ label: String) throws -> [[UInt8]] {
        let text = String(decoding: b, as: UTF8.self)
        let begin = "-----BEGIN \(label)-----", end = "-----END \(label)-----"
        var out: [[UInt8]] = []
        var rest = Substring(text)
        while let s = rest.range(of: begin), let e = rest.range(of: end, range: s.upperBound..<rest.endIndex) {
            out.append(Array(rest[s.lowerBound..<e.upperBound].utf8))
            rest = rest[e.upperBound...]
        }
        guard !out.isEmpty else { throw TrustError.unreadable("no complete PEM \(label) block") }
        return out
    }
}

/// LDIF (RFC 2849), as far as the ICAO PKD exports use it: attribute values, base64 (`::`) or plain, with
/// folded continuation lines.
enum LDIF {
    /// (lower-cased attribute description, value bytes) for every attribute line.
    static func values(_ bytes: [UInt8]) throws -> [(String, [UInt8])] {
        var lines: [String] = []
        for raw in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            var line = String(raw)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.hasPrefix(" "), !lines.isEmpty { lines[lines.count - 1] += line.dropFirst() } else { lines.append(line) }
        }
        var out: [(String, [UInt8])] = []
        for line in lines where !line.isEmpty && !line.hasPrefix("#") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            var rest = line[line.index(after: colon)...]
            if rest.hasPrefix(":") {
                rest = rest.dropFirst()
                let b64 = rest.trimmingCharacters(in: .whitespaces)
                guard let data = Data(base64Encoded: b64) else { throw TrustError.unreadable("LDIF attribute \(name) is not valid base64") }
                out.append((name, [UInt8](data)))
            } else {
                out.append((name, Array(rest.trimmingCharacters(in: .whitespaces).utf8)))
            }
        }
        return out
    }
}

/// The CSCAs, CRLs and extra document signers passive authentication checks against: the operator's trust.
/// Immutable value; build it from `TrustMaterial`s.
public struct CSCATrust: Sendable {
    public private(set) var cscas: [Certificate] = []
    public private(set) var crls: [RevocationList] = []
    public private(set) var documentSigners: [Certificate] = []

    public init() {}

    public init(_ materials: [TrustMaterial]) {
        for m in materials { add(m) }
    }

    /// Adds a material's certificates and CRLs (duplicates, by fingerprint, are kept once).
    public mutating func add(_ m: TrustMaterial) {
        func merge(_ a: inout [Certificate], _ b: [Certificate]) {
            var seen = Set(a.map(\.fingerprint))
            for c in b where seen.insert(c.fingerprint).inserted { a.append(c) }
        }
        merge(&cscas, m.cscas)
        merge(&documentSigners, m.documentSigners)
        var seen = Set(crls.map(\.fingerprint))
        for c in m.crls where seen.insert(c.fingerprint).inserted { crls.append(c) }
    }

    /// Reads every file at `paths` (files, or directories read one level deep) as trust material.
    public static func load(paths: [String]) throws -> CSCATrust {
        var files: [String] = []
        for p in paths {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: p, isDirectory: &isDir) else { throw TrustError.unreadable("\(p): no such file") }
            if isDir.boolValue {
                let names = try FileManager.default.contentsOfDirectory(atPath: p).sorted().filter { !$0.hasPrefix(".") }
                files += names.map { p + "/" + $0 }.filter { var d: ObjCBool = false; return FileManager.default.fileExists(atPath: $0, isDirectory: &d) && !d.boolValue }
            } else {
                files.append(p)
            }
        }
        // Single certificates first, so a master list signed under an operator-loaded CSCA checks against it.
        var trust = CSCATrust()
        var later: [(String, [UInt8])] = []
        for f in files {
            let bytes = try ChipFiles.readFile(f, limit: ChipFiles.trustFileLimit)
            if let m = try? TrustMaterial(bytes), m.kind == .cscaCertificate || m.kind == .crl || m.kind == .documentSignerCertificate {
                trust.add(m)
            } else {
                later.append((f, bytes))
            }
        }
        for (f, bytes) in later {
            do { trust.add(try TrustMaterial(bytes, trusted: trust)) } catch let e as TrustError {
                throw TrustError.unreadable("\((f as NSString).lastPathComponent): \(e)")
            }
        }
        return trust
    }
}
