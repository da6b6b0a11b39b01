import CEMRTD
import Foundation
import MRZ

/// A private key held by OpenSSL, for the test PKI and specimen chips only.
public final class SigningKey: @unchecked Sendable {
    // @unchecked: the OpenSSL key is never modified after creation; signing only reads it.
    let handle: OpaquePointer
    init(_ h: OpaquePointer) { handle = h }
    deinit { em_key_free(handle) }

    /// A deterministic EC key on `curve` ("prime256v1", "brainpoolP256r1", "brainpoolP384r1", …) from `seed`.
    public static func ec(curve: String, seed: String) throws -> SigningKey {
        var h: OpaquePointer?
        let s = Array(seed.utf8)
        try shim { em_key_ec_from_seed(curve, s, s.count, &h, $0, $1) }
        return SigningKey(h!)
    }

    /// A fresh RSA key (not deterministic).
    public static func rsa(bits: Int) throws -> SigningKey {
        var h: OpaquePointer?
        try shim { em_key_rsa_generate(Int32(bits), &h, $0, $1) }
        return SigningKey(h!)
    }
}

extension Certificate {
    /// Issues a certificate for `key` under `issuer` (nil: self-signed with `key`). `subject` is
    /// "/C=UT/O=Utopia/CN=…". Key usage names are RFC 5280's ("keyCertSign", "digitalSignature", …).
    public static func issue(subject: String, serial: [UInt8], notBefore: Date, notAfter: Date, isCA: Bool, keyUsage: [String],
                             key: SigningKey, issuer: (Certificate, SigningKey)?, digest: DigestAlgorithm = .sha256) throws -> Certificate {
        let bits: [String: Int32] = ["digitalSignature": 0x80, "nonRepudiation": 0x40, "keyEncipherment": 0x20, "dataEncipherment": 0x10,
                                     "keyAgreement": 0x08, "keyCertSign": 0x04, "cRLSign": 0x02]
        let ku = keyUsage.reduce(Int32(0)) { $0 | (bits[$1] ?? 0) }
        var h: OpaquePointer?
        try subject.withCString { subj in
            try digest.rawValue.withCString { dig in
                try serial.withUnsafeBufferPointer { sp in
                    var spec = em_cert_spec(subject: subj, serial: sp.baseAddress, serial_count: sp.count,
                                            not_before: Int64(notBefore.timeIntervalSince1970), not_after: Int64(notAfter.timeIntervalSince1970),
                                            is_ca: isCA ? 1 : 0, key_usage: ku, digest: dig)
                    try shim { em_cert_create(&spec, key.handle, issuer?.0.handle, (issuer?.1 ?? key).handle, &h, $0, $1) }
                }
            }
        }
        return try Certificate(taking: h!)
    }
}

extension RevocationList {
    /// Issues a CRL under `issuer` listing `revoked` (all revoked at `revocationDate`).
    public static func issue(issuer: Certificate, key: SigningKey, revoked: [Certificate], revocationDate: Date, thisUpdate: Date,
                             nextUpdate: Date, digest: DigestAlgorithm = .sha256) throws -> RevocationList {
        var h: OpaquePointer?
        let serials = revoked.map(\.serialNumber)
        let counts = serials.map(\.count)
        let pointers = serials.map { s -> UnsafeMutablePointer<UInt8> in
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, s.count))
            p.initialize(from: s, count: s.count)
            return p
        }
        defer { pointers.forEach { $0.deallocate() } }
        var constPointers: [UnsafePointer<UInt8>?] = pointers.map { UnsafePointer($0) }
        try shim { m, n in
            constPointers.withUnsafeMutableBufferPointer { pp in
                em_crl_create(issuer.handle, key.handle, pp.baseAddress, counts, Int32(serials.count),
                              Int64(revocationDate.timeIntervalSince1970), Int64(thisUpdate.timeIntervalSince1970),
                              Int64(nextUpdate.timeIntervalSince1970), digest.rawValue, &h, m, n)
            }
        }
        var b = em_bytes()
        guard em_crl_der(h!, &b) == EM_OK else { em_crl_free(h); throw CryptoError(EM_ERR_INTERNAL, []) }
        em_crl_free(h)
        return try RevocationList(takeBytes(b))
    }
}

extension SignedData {
    /// Signs `content` as CMS SignedData (DER) with one signer, signed attributes and the signer's certificate embedded.
    public static func sign(_ content: [UInt8], contentType: String, signer: Certificate, key: SigningKey,
                            digest: DigestAlgorithm = .sha256, signingTime: Date) throws -> [UInt8] {
        var out = em_bytes()
        try shim { em_cms_sign(content, content.count, contentType, signer.handle, key.handle, digest.rawValue,
                               Int64(signingTime.timeIntervalSince1970), &out, $0, $1) }
        return takeBytes(out)
    }
}

/// A test PKI for one issuing state — by default the fictional state Utopia (UTO, X.509 `C=UT`): a CSCA
/// (brainpoolP384r1) and its document signers (prime256v1) — one good, one revoked by the CSCA's CRL, one
/// expired — plus an impostor CSCA with the same name and another key, and a document signer it issued. Every
/// certificate carries the state's country in its subject's countryName and the DSCs' issuer is the CSCA's
/// subject, as ICAO 9303-12 §7.1 requires, so a chip it signs passes the signer-country check only for
/// documents of that state. Keys derive from `seed` and the country (certificates differ in their ECDSA
/// signatures only). Dates are fixed, so tests can check them at any time up to 2039.
public struct TestPKI: Sendable {
    public let csca: Certificate
    public let cscaKey: SigningKey
    public let documentSigner: Certificate
    public let documentSignerKey: SigningKey
    public let revokedDocumentSigner: Certificate
    public let revokedDocumentSignerKey: SigningKey
    public let expiredDocumentSigner: Certificate
    public let expiredDocumentSignerKey: SigningKey
    public let impostorCSCA: Certificate
    public let impostorDocumentSigner: Certificate
    public let impostorDocumentSignerKey: SigningKey
    /// The CSCA's CRL: lists the revoked document signer.
    public let crl: RevocationList
    /// The X.509 countryName (ISO 3166-1 alpha-2, or `UT` for Utopia) of every certificate here.
    public let country: String
    /// The CSCA name every certificate here uses (`cscaName(country:)`).
    public let cscaName: String
    /// Utopia's CSCA name.
    public static let cscaName = cscaName(country: "UT")

    /// The CSCA's name for `country`: Utopia's as it has always been, another state's
    /// `/C=NL/O=OpenIDV specimen/OU=OpenIDV test PKI/CN=CSCA NLD TEST (OpenIDV specimen)`.
    public static func cscaName(country: String) -> String {
        country == "UT" ? "/C=UT/O=Republic of Utopia/OU=OpenIDV test PKI/CN=CSCA Utopia TEST"
            : "/C=\(country)/O=OpenIDV specimen/OU=OpenIDV test PKI/CN=CSCA \(CountryCodes.alpha3(ofAlpha2: country) ?? country) TEST (OpenIDV specimen)"
    }

    /// The X.509 country a test PKI for documents of ICAO 9303-3 §5 issuing state `code` (fillers removed) uses:
    /// the first of `CountryCodes.x509CountryNames` (`NLD` → `NL`, `D` → `DE`, `UTO` → `UT`); nil when the code
    /// has none (a Part D organisation, `XXA`, an unknown code).
    public static func country(ofIssuingState code: String) -> String? { CountryCodes.x509CountryNames(ofIssuingState: code).first }

    /// Midnight UTC of `s` ("YYYY-MM-DD").
    public static func day(_ s: String) -> Date {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX"); f.timeZone = TimeZone(identifier: "UTC"); f.dateFormat = "yyyy-MM-dd"
        return f.date(from: s)!
    }

    /// `country`: the X.509 countryName of the state (`UT`, `NL`, …; see `country(ofIssuingState:)`).
    public init(seed: UInt64 = 1, country: String = "UT") throws {
        self.country = country
        let cscaName = Self.cscaName(country: country)
        self.cscaName = cscaName
        // Utopia's keys keep the labels they always had; another state's name its country.
        let label = country == "UT" ? "OpenIDV test PKI \(seed)" : "OpenIDV test PKI \(seed) \(country)"
        func key(_ role: String, _ curve: String) throws -> SigningKey { try SigningKey.ec(curve: curve, seed: "\(label) \(role)") }
        cscaKey = try key("csca", "brainpoolP384r1")
        csca = try .issue(subject: cscaName, serial: [0x01], notBefore: Self.day("2010-01-01"), notAfter: Self.day("2045-12-31"),
                          isCA: true, keyUsage: ["keyCertSign", "cRLSign"], key: cscaKey, issuer: nil, digest: .sha384)
        func dsc(_ role: String, _ serial: UInt8, _ from: String, _ to: String, _ issuer: (Certificate, SigningKey)) throws -> (Certificate, SigningKey) {
            let k = try key(role, "prime256v1")
            let subject = country == "UT" ? "/C=UT/O=Republic of Utopia/OU=OpenIDV test PKI/CN=Document Signer Utopia TEST \(role)"
                : "/C=\(country)/O=OpenIDV specimen/OU=OpenIDV test PKI/CN=Document Signer \(country) TEST \(role)"
            let c = try Certificate.issue(subject: subject,
                                          serial: [0x10, serial], notBefore: Self.day(from), notAfter: Self.day(to), isCA: false,
                                          keyUsage: ["digitalSignature"], key: k, issuer: issuer, digest: .sha384)
            return (c, k)
        }
        (documentSigner, documentSignerKey) = try dsc("good", 1, "2024-01-01", "2039-12-31", (csca, cscaKey))
        (revokedDocumentSigner, revokedDocumentSignerKey) = try dsc("revoked", 2, "2024-01-01", "2039-12-31", (csca, cscaKey))
        (expiredDocumentSigner, expiredDocumentSignerKey) = try dsc("expired", 3, "2012-01-01", "2014-12-31", (csca, cscaKey))
        let impostorKey = try key("impostor csca", "brainpoolP384r1")
        impostorCSCA = try .issue(subject: cscaName, serial: [0x01], notBefore: Self.day("2010-01-01"), notAfter: Self.day("2045-12-31"),
                                  isCA: true, keyUsage: ["keyCertSign", "cRLSign"], key: impostorKey, issuer: nil, digest: .sha384)
        (impostorDocumentSigner, impostorDocumentSignerKey) = try dsc("impostor", 4, "2024-01-01", "2039-12-31", (impostorCSCA, impostorKey))
        crl = try .issue(issuer: csca, key: cscaKey, revoked: [revokedDocumentSigner], revocationDate: Self.day("2025-01-01"),
                         thisUpdate: Self.day("2025-06-01"), nextUpdate: Self.day("2045-12-31"), digest: .sha384)
    }

    /// The operator's trust for these specimens: the CSCA and its CRL.
    public var trust: CSCATrust {
        var t = CSCATrust()
        t.add(try! TrustMaterial(csca.der))
        t.add(try! TrustMaterial(crl.der))
        return t
    }
}

/// Chip files for a specimen document: EF.COM, DG1 (the printed MRZ), DG2 (the portrait), with a chip security
/// (`SpecimenChipSecurity`) DG14 (Chip Authentication, PACE, ActiveAuthenticationInfo for EC), DG15 (the Active
/// Authentication key) and EF.CardAccess, and an EF.SOD signed by a test document signer; plus variants that each
/// fail passive authentication or Active Authentication in their own way.
public enum SpecimenChip {
    /// The variants written beside each genuine chip, and the failures passive authentication must report.
    public enum Variant: String, CaseIterable, Codable, Sendable {
        case genuine
        /// One byte of DG1's MRZ changed after signing.
        case dg1ByteChanged = "dg1-byte-changed"
        /// DG2 replaced by another person's face.
        case dg2Swapped = "dg2-swapped"
        /// One byte of a hash inside the signed LDS security object changed.
        case securityObjectChanged = "security-object-changed"
        /// The last byte of the SOD's signature changed.
        case signatureCorrupted = "signature-corrupted"
        /// Signed by the document signer the CSCA's CRL revokes.
        case revokedDocumentSigner = "revoked-dsc"
        /// Signed by a document signer whose certificate expired in 2014.
        case expiredDocumentSigner = "expired-dsc"
        /// Signed by a document signer issued by a key that claims the CSCA's name.
        case wrongCSCAKey = "wrong-csca-key"
        /// Signed by the good document signer of another state's CSCA, which the trust also holds (Utopia's; the
        /// Netherlands' for a Utopian document): every passive-authentication step passes, but the signer's
        /// country is not DG1's issuing state (ICAO 9303-12 §7.1), which the server's policy rejects.
        case foreignCSCA = "foreign-csca"
        /// The genuine chip with an ECDSA P-256 Active Authentication key (ActiveAuthenticationInfo
        /// `ecdsa-plain-SHA256` in DG14) instead of RSA-2048.
        case activeAuthenticationECDSA = "aa-ecdsa"
        /// A copy of the genuine chip: the same files, but the private key in `private/aa-key.pem` is another RSA-2048
        /// key (what a clone made from the files would hold). Passive authentication passes; Active Authentication fails.
        case copy
        /// A chip without Active Authentication: no DG15 (DG14 still offers Chip Authentication and PACE).
        case noActiveAuthentication = "no-aa"

        /// What passive authentication reports for this variant against `TestPKI.trust` (any time 2025–2039).
        public var expectedFailures: [PassiveAuthenticationFailure] {
            switch self {
            case .genuine, .activeAuthenticationECDSA, .copy, .noActiveAuthentication: return []
            case .dg1ByteChanged, .dg2Swapped: return [.dataGroupHashMismatch]
            // The changed hash is the last data group's (DG15's; DG2's on a chip without DG14/DG15), so that data
            // group no longer matches what the (altered) object says either.
            case .securityObjectChanged: return [.securityObjectDigestMismatch, .dataGroupHashMismatch]
            case .signatureCorrupted: return [.signatureInvalid]
            case .revokedDocumentSigner: return [.documentSignerRevoked]
            case .expiredDocumentSigner: return [.documentSignerExpired]
            case .wrongCSCAKey: return [.cscaSignatureInvalid]
            case .foreignCSCA: return []
            }
        }
        /// Whether the variant's signer country differs from DG1's issuing state (the policy's `signer_country_mismatch`).
        public var signerCountryDiffers: Bool { self == .foreignCSCA }
        /// The data group whose hash mismatches, for the two data-group variants.
        public var mismatchedDataGroup: Int? { self == .dg1ByteChanged ? 1 : self == .dg2Swapped ? 2 : nil }

        /// The kind of Active Authentication key the variant's chip has (nil: none, no DG15).
        public var activeAuthenticationKind: SpecimenChipSecurity.ActiveAuthenticationKind? {
            switch self {
            case .activeAuthenticationECDSA: return .ecdsaP256
            case .noActiveAuthentication: return nil
            default: return .rsa2048
            }
        }

        /// What `ActiveAuthentication.evaluate` reports for a signature the folder's `private/aa-key.pem` makes over
        /// the verifier's challenge: `verified` (the chip's own key, DG15 authenticated), `failed` (the copy's other
        /// key), `notSupported` (no DG15), `keyNotAuthenticated` (the SOD's signature does not verify, so DG15 is not
        /// the issuer's — whatever signed).
        public var expectedActiveAuthentication: ActiveAuthenticationEvidence.Outcome {
            switch self {
            case .copy: return .failed
            case .noActiveAuthentication: return .notSupported
            case .securityObjectChanged, .signatureCorrupted: return .keyNotAuthenticated
            default: return .verified
            }
        }
    }

    /// A specimen chip as its folder holds it: the LDS files, EF.CardAccess, and the chip's secrets.
    public struct Folder: Sendable {
        public var files: ChipFiles
        /// EF.CardAccess (PACEInfo); nil for a chip made without a security.
        public var cardAccess: [UInt8]?
        /// The chip's keys and CAN; nil for a chip made without one (DG1 and DG2 only).
        public var security: SpecimenChipSecurity?
        /// The AA private key `private/aa-key.pem` holds when it is not the chip's own (the copy variant).
        public var activeAuthenticationKeyOverride: SigningKey?
    }

    /// The keys of one specimen chip and of its variants, made once from `seed` (an RSA-2048 key takes ~0.1–1 s):
    /// the chip's security with an RSA-2048 AA key, with an ECDSA P-256 one, without AA (the same CA key and CAN in
    /// all three), and the copy's other RSA-2048 AA private key.
    public struct Keys: Sendable {
        public let rsa: SpecimenChipSecurity
        public let ecdsa: SpecimenChipSecurity
        public let withoutActiveAuthentication: SpecimenChipSecurity
        public let copyActiveAuthenticationKey: SigningKey

        public init(seed: String) throws {
            rsa = try SpecimenChipSecurity.make(seed: seed, activeAuthentication: .rsa2048)
            ecdsa = try SpecimenChipSecurity.make(seed: seed, activeAuthentication: .ecdsaP256)
            withoutActiveAuthentication = try SpecimenChipSecurity.make(seed: seed, activeAuthentication: nil)
            copyActiveAuthenticationKey = try SigningKey.rsa(bits: 2048, seed: "\(seed) AA copy")
        }

        /// The security `variant`'s chip has.
        public func security(for variant: Variant) -> SpecimenChipSecurity {
            switch variant.activeAuthenticationKind {
            case .rsa2048: return rsa
            case .ecdsaP256: return ecdsa
            case nil: return withoutActiveAuthentication
            }
        }
    }

    /// The chip folder of `variant`: `make`'s files with the variant's security from `keys` (RSA-2048 AA; ECDSA
    /// P-256 for `aa-ecdsa`; none for `no-aa`) and EF.CardAccess. For `copy`: a genuine chip's folder with another AA
    /// private key than DG15's — pass `genuine` (the genuine folder already made) so the copy holds its files byte
    /// for byte; without it a genuine chip is made first (its SOD's ECDSA signature then differs from any other's).
    public static func makeFolder(mrzLines: [String], face: Face, swappedFace: Face, pki: TestPKI, foreign: TestPKI? = nil, keys: Keys,
                                  variant: Variant, genuine: Folder? = nil, signingTime: Date = TestPKI.day("2025-03-01")) throws -> Folder {
        if variant == .copy {
            var copy = try genuine ?? makeFolder(mrzLines: mrzLines, face: face, swappedFace: swappedFace, pki: pki, foreign: foreign, keys: keys,
                                                 variant: .genuine, signingTime: signingTime)
            copy.activeAuthenticationKeyOverride = keys.copyActiveAuthenticationKey
            return copy
        }
        let security = keys.security(for: variant)
        let files = try make(mrzLines: mrzLines, face: face, swappedFace: swappedFace, pki: pki, foreign: foreign, security: security,
                             variant: variant, signingTime: signingTime)
        return Folder(files: files, cardAccess: security.cardAccess(), security: security, activeAuthenticationKeyOverride: nil)
    }

    /// Every variant's folder, in `Variant.allCases` order, the copy holding the genuine chip's files byte for byte.
    public static func makeFolders(mrzLines: [String], face: Face, swappedFace: Face, pki: TestPKI, foreign: TestPKI? = nil, keys: Keys,
                                   signingTime: Date = TestPKI.day("2025-03-01")) throws -> [(Variant, Folder)] {
        var out: [(Variant, Folder)] = []
        var genuine: Folder?
        for v in Variant.allCases {
            let f = try makeFolder(mrzLines: mrzLines, face: face, swappedFace: swappedFace, pki: pki, foreign: foreign, keys: keys, variant: v,
                                   genuine: genuine, signingTime: signingTime)
            if v == .genuine { genuine = f }
            out.append((v, f))
        }
        return out
    }

    /// The portrait as DG2 carries it: encoded image bytes, their type and size.
    public struct Face: Sendable {
        public var image: [UInt8]
        public var type: DG2.Face.ImageDataType
        public var width: Int
        public var height: Int
        public init(image: [UInt8], type: DG2.Face.ImageDataType, width: Int, height: Int) {
            self.image = image; self.type = type; self.width = width; self.height = height
        }
    }

    /// The state whose test PKI signs `.foreignCSCA` for a document of a state with X.509 country `country`:
    /// Utopia (`UT`), or the Netherlands (`NL`) for Utopia's own documents.
    public static func foreignCountry(for country: String) -> String { country == "UT" ? "NL" : "UT" }

    /// The chip files of `variant`, signed under `pki` (the test PKI of the document's issuing state). `swappedFace`
    /// is the other person's face for `.dg2Swapped`; `foreign` the other state's test PKI for `.foreignCSCA`.
    /// `security` adds DG14 and (with an AA key) DG15, listed in EF.COM and signed in the SOD like DG1 and DG2; nil
    /// makes a chip of DG1 and DG2 only (the variant's AA kind is then not used).
    public static func make(mrzLines: [String], face: Face, swappedFace: Face, pki: TestPKI, foreign: TestPKI? = nil,
                            security: SpecimenChipSecurity? = nil, variant: Variant,
                            signingTime: Date = TestPKI.day("2025-03-01")) throws -> ChipFiles {
        let dg1 = DG1.encode(lines: mrzLines)
        let dg2 = DG2.encode(image: face.image, type: face.type, width: face.width, height: face.height)
        var groups = [1: dg1, 2: dg2]
        if let security {
            groups[14] = try security.dataGroup14()
            if let dg15 = try security.dataGroup15() { groups[15] = dg15 }
        }
        let (signer, key): (Certificate, SigningKey)
        switch variant {
        case .revokedDocumentSigner: (signer, key) = (pki.revokedDocumentSigner, pki.revokedDocumentSignerKey)
        case .expiredDocumentSigner: (signer, key) = (pki.expiredDocumentSigner, pki.expiredDocumentSignerKey)
        case .wrongCSCAKey: (signer, key) = (pki.impostorDocumentSigner, pki.impostorDocumentSignerKey)
        case .foreignCSCA:
            guard let foreign else { throw LDSError.invalid(.sod, "the foreign-csca variant needs another state's test PKI") }
            (signer, key) = (foreign.documentSigner, foreign.documentSignerKey)
        default: (signer, key) = (pki.documentSigner, pki.documentSignerKey)
        }
        let time = variant == .expiredDocumentSigner ? TestPKI.day("2013-06-01") : signingTime
        let content = SecurityObject.encodeContent(dataGroups: groups, algorithm: .sha256)
        let cms = try SignedData.sign(content, contentType: SecurityObject.contentType, signer: signer, key: key, digest: .sha256, signingTime: time)
        var sod = DER.tlv(0x77, cms)
        var files = ChipFiles(sod: sod, com: EFCOM.encode(dataGroups: groups.keys.sorted()), dataGroups: groups)
        switch variant {
        case .dg1ByteChanged:
            // The document number's first character (TD3 line 2 column 1; TD1 line 1 column 6).
            var b = dg1
            let at = b.count - mrzLines.joined().count + (mrzLines.count == 3 ? 5 : 44)
            b[at] = b[at] == UInt8(ascii: "X") ? UInt8(ascii: "Y") : UInt8(ascii: "X")
            files.dataGroups[1] = b
        case .dg2Swapped:
            files.dataGroups[2] = DG2.encode(image: swappedFace.image, type: swappedFace.type, width: swappedFace.width, height: swappedFace.height)
        case .securityObjectChanged:
            // The last byte of the last data-group hash inside the encapsulated LDS security object.
            guard let at = lastIndex(of: content, in: sod) else { throw LDSError.invalid(.sod, "security object not found in the SOD") }
            sod[at + content.count - 1] ^= 0x01
            files.sod = sod
        case .signatureCorrupted:
            sod[sod.count - 1] ^= 0x01
            files.sod = sod
        default: break
        }
        return files
    }

    static func lastIndex(of needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard needle.count <= hay.count else { return nil }
        var i = hay.count - needle.count
        while i >= 0 {
            if hay[i] == needle[0] && Array(hay[i..<i + needle.count]) == needle { return i }
            i -= 1
        }
        return nil
    }

    /// The name EF.CardAccess is written with in a chip folder.
    public static let cardAccessFileName = "EF_CardAccess.bin"

    /// Writes `files` into `directory` as EF_COM.bin, EF_SOD.bin, DG<n>.bin.
    public static func write(_ files: ChipFiles, to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func put(_ b: [UInt8], _ name: String) throws { try Data(b).write(to: URL(fileURLWithPath: directory + "/" + name)) }
        try put(files.sod, "EF_SOD.bin")
        if let c = files.com { try put(c, "EF_COM.bin") }
        for (n, b) in files.dataGroups { try put(b, "DG\(n).bin") }
    }

    /// Writes a chip folder (the contract in `SpecimenChipSecurity`): the files as `write` does, `EF_CardAccess.bin`,
    /// and the secrets under `private/`.
    public static func write(_ folder: Folder, to directory: String) throws {
        try write(folder.files, to: directory)
        if let ca = folder.cardAccess { try Data(ca).write(to: URL(fileURLWithPath: directory + "/" + cardAccessFileName)) }
        try folder.security?.writeSecrets(chipDirectory: directory, activeAuthenticationKeyOverride: folder.activeAuthenticationKeyOverride)
    }

    /// Reads a chip directory written by `write` (see `ChipFiles.read(directory:)` for the names accepted).
    public static func read(directory: String) throws -> ChipFiles { try ChipFiles.read(directory: directory) }
}
