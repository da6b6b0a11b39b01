import CEMRTD
import Foundation

/// The chip-side security of a specimen chip (what a real chip keeps in its secure element and advertises in its
/// files): an Active Authentication key pair (ICAO 9303-11 §6.1; public half in DG15), a Chip Authentication key
/// pair (§6.2, EC P-256; public half in DG14's ChipAuthenticationPublicKeyInfo), PACE (§4.4: PACEInfo in
/// EF.CardAccess and in DG14 — generic mapping, ECDH on NIST P-256, AES-128) and the card access number.
///
/// Keys derive from `seed` (EC: SHA-512 of a label mod n; RSA: `SigningKey.rsa(bits:seed:)`), so one specimen's
/// chip has the same keys every run.
///
/// The specimen chip folder (shared with the chip-access library's virtual chip, which loads these folders):
/// `EF_COM.bin`, `EF_SOD.bin`, `DG1.bin`, `DG2.bin`, `DG14.bin`, `DG15.bin` (when the chip has AA),
/// `EF_CardAccess.bin`, and the chip's secrets under `private/`: `aa-key.pem` (PKCS#8 PEM, RSA-2048 or EC P-256;
/// absent without AA), `ca-key.pem` (PKCS#8 PEM, EC P-256), `can.txt` (6 ASCII digits). `idvd chip verify --dir`
/// and `ChipFiles.read(directory:)` read only the top-level `.bin` files.
public struct SpecimenChipSecurity: Sendable {
    /// The kind of Active Authentication key a specimen chip gets.
    public enum ActiveAuthenticationKind: String, Sendable, Codable, CaseIterable {
        /// RSA-2048 (e = 65537), ISO/IEC 9796-2 scheme 1 signatures; the most common kind on issued passports.
        case rsa2048 = "rsa-2048"
        /// ECDSA on NIST P-256 with SHA-256 (ActiveAuthenticationInfo `ecdsa-plain-SHA256` in DG14).
        case ecdsaP256 = "ecdsa-p256"
    }

    /// The Active Authentication private key; nil: the chip has no DG15.
    public var activeAuthenticationKey: SigningKey?
    /// What kind it is (nil without AA).
    public var activeAuthenticationKind: ActiveAuthenticationKind?
    /// The hash the chip signs AA challenges with: for ECDSA the one DG14's ActiveAuthenticationInfo names (SHA-256);
    /// for RSA the chip's own choice, announced by the ISO/IEC 9796-2 trailer (SHA-256, `34 CC`, here).
    public var activeAuthenticationDigest: DigestAlgorithm
    /// The Chip Authentication private key (EC P-256).
    public var chipAuthenticationKey: SigningKey
    /// The card access number printed on the document (PACE with the CAN): 6 ASCII digits.
    public var cardAccessNumber: String

    public init(activeAuthenticationKey: SigningKey?, activeAuthenticationKind: ActiveAuthenticationKind?, activeAuthenticationDigest: DigestAlgorithm = .sha256,
                chipAuthenticationKey: SigningKey, cardAccessNumber: String) {
        self.activeAuthenticationKey = activeAuthenticationKey
        self.activeAuthenticationKind = activeAuthenticationKind
        self.activeAuthenticationDigest = activeAuthenticationDigest
        self.chipAuthenticationKey = chipAuthenticationKey
        self.cardAccessNumber = cardAccessNumber
    }

    /// The security of the specimen chip labelled `seed` (e.g. the test-PKI seed and the document's MRZ), with an AA
    /// key of `activeAuthentication` (nil: none). `activeAuthenticationSeed` overrides the AA key's own label (the
    /// "copy" variant: the same files, another private key).
    public static func make(seed: String, activeAuthentication: ActiveAuthenticationKind?, activeAuthenticationSeed: String? = nil) throws -> SpecimenChipSecurity {
        let aaLabel = activeAuthenticationSeed ?? "\(seed) AA"
        let aaKey: SigningKey?
        switch activeAuthentication {
        case .rsa2048: aaKey = try SigningKey.rsa(bits: 2048, seed: aaLabel)
        case .ecdsaP256: aaKey = try SigningKey.ec(curve: "prime256v1", seed: aaLabel)
        case nil: aaKey = nil
        }
        let caKey = try SigningKey.ec(curve: "prime256v1", seed: "\(seed) CA")
        let h = DigestAlgorithm.sha256.digest(Array("\(seed) CAN".utf8))
        let n = h.prefix(4).reduce(UInt32(0)) { ($0 << 8) | UInt32($1) } % 1_000_000
        let can = String(format: "%06u", n)
        return SpecimenChipSecurity(activeAuthenticationKey: aaKey, activeAuthenticationKind: activeAuthentication,
                                    chipAuthenticationKey: caKey, cardAccessNumber: can)
    }

    /// PACEInfo: generic mapping, ECDH on NIST P-256 (standardized domain parameters 12, ICAO 9303-11 §9.5.1),
    /// AES-128 secure messaging, version 2 (id-PACE-ECDH-GM-AES-CBC-CMAC-128).
    public static let paceInfo = PACEInfo(protocol: PACEProtocol(mapping: .generic, keyAgreement: .ecdh, cipher: .aes128), version: 2, parameterId: 12)

    /// EF.CardAccess: the SecurityInfos a terminal reads before PACE (PACEInfo), DER (ICAO 9303-10 §3.11.3: a bare SET).
    public func cardAccess() -> [UInt8] { SecurityInfos([.pace(Self.paceInfo)]).encoded }

    /// DG14's SecurityInfos: ChipAuthenticationPublicKeyInfo (id-PK-ECDH, the CA key's SubjectPublicKeyInfo, named
    /// curve), ChipAuthenticationInfo (id-CA-ECDH-AES-CBC-CMAC-128, version 1), PACEInfo (the signed copy of
    /// EF.CardAccess's), and for an EC AA key ActiveAuthenticationInfo naming `ecdsa-plain-<digest>` (ICAO 9303-11
    /// §6.1 requires it). Typed with EMRTDCore's SecurityInfos, the same values the chip-access library reads.
    public func securityInfos() throws -> SecurityInfos {
        let caKey = try SubjectPublicKeyInfo(try chipAuthenticationKey.subjectPublicKeyInfo())
        var infos: [SecurityInfo] = [
            .chipAuthenticationPublicKey(ChipAuthenticationPublicKeyInfo(keyAgreement: .ecdh, publicKey: caKey)),
            .chipAuthentication(ChipAuthenticationInfo(protocol: ChipAuthenticationProtocol(keyAgreement: .ecdh, cipher: .aes128), version: 1)),
            .pace(Self.paceInfo),
        ]
        if activeAuthenticationKind == .ecdsaP256, let oid = ActiveAuthentication.ecdsaPlainOIDs[activeAuthenticationDigest] {
            infos.append(.activeAuthentication(ActiveAuthenticationInfo(version: 1, signatureAlgorithm: oid)))
        }
        return SecurityInfos(infos)
    }

    /// DG14 (ICAO 9303-10 §4.7.14): tag `6E` around ``securityInfos()``, DER (SET OF sorted, X.690 §11.6).
    public func dataGroup14() throws -> [UInt8] { try securityInfos().dg14Encoded }

    /// DG15: the AA public key (SubjectPublicKeyInfo); nil without AA.
    public func dataGroup15() throws -> [UInt8]? {
        try activeAuthenticationKey.map { DG15.encode(subjectPublicKeyInfo: try $0.subjectPublicKeyInfo()) }
    }

    /// Signs `challenge` as this chip's INTERNAL AUTHENTICATE would (ICAO 9303-11 §6.1). Throws `CryptoError`
    /// when the chip has no AA key.
    public func activeAuthenticationSignature(challenge: [UInt8]) throws -> [UInt8] {
        guard let key = activeAuthenticationKey else {
            throw CryptoError(EM_ERR_NOT_FOUND, Array("this chip has no Active Authentication key".utf8CString))
        }
        return try ActiveAuthentication.sign(challenge: challenge, with: key, digest: activeAuthenticationDigest)
    }

    // MARK: The secrets folder

    /// File names under `<chip>/private/`.
    public static let privateDirectory = "private"
    public static let activeAuthenticationKeyFile = "aa-key.pem"
    public static let chipAuthenticationKeyFile = "ca-key.pem"
    public static let cardAccessNumberFile = "can.txt"

    /// Writes the secrets into `<chip>/private/` (mode 0700, files 0600): `aa-key.pem` (when the chip has AA),
    /// `ca-key.pem`, `can.txt`. `activeAuthenticationKeyOverride` writes another AA key than the chip's (the "copy"
    /// variant: the files say one key, the private half is another).
    public func writeSecrets(chipDirectory: String, activeAuthenticationKeyOverride: SigningKey? = nil) throws {
        let dir = chipDirectory + "/" + Self.privateDirectory
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        func put(_ text: String, _ name: String) throws {
            let path = dir + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        if let key = activeAuthenticationKeyOverride ?? activeAuthenticationKey { try put(try key.pkcs8PEM(), Self.activeAuthenticationKeyFile) }
        try put(try chipAuthenticationKey.pkcs8PEM(), Self.chipAuthenticationKeyFile)
        try put(cardAccessNumber + "\n", Self.cardAccessNumberFile)
    }

    /// The AA private key of a chip folder (`<chip>/private/aa-key.pem`), or nil when the folder has none.
    /// Throws `ChipInputError` for an unreadable file, `CryptoError` for one that is not a PEM private key.
    public static func activeAuthenticationKey(chipDirectory: String) throws -> SigningKey? {
        let path = chipDirectory + "/" + privateDirectory + "/" + activeAuthenticationKeyFile
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try SigningKey(pem: try ChipFiles.readFile(path, limit: 1 << 20))
    }

    /// Signs `challenge` the way the chip in folder `chipDirectory` would: with `private/aa-key.pem`, for an EC key the
    /// hash its DG14's ActiveAuthenticationInfo names, for an RSA key SHA-256 (trailer `34 CC`) unless `rsaDigest`
    /// says otherwise. nil when the folder has no AA key. Throws `ChipInputError` / `CryptoError` / `LDSError` for
    /// unreadable files, and `CryptoError` when an EC chip's DG14 names no supported algorithm.
    public static func activeAuthenticationSignature(challenge: [UInt8], chipDirectory: String, rsaDigest: DigestAlgorithm = .sha256) throws -> [UInt8]? {
        guard let key = try activeAuthenticationKey(chipDirectory: chipDirectory) else { return nil }
        var digest = rsaDigest
        if try key.publicKeyDescription().kind == .ec {
            let dg14 = chipDirectory + "/DG14.bin"
            let oid = FileManager.default.fileExists(atPath: dg14) ? try ActiveAuthentication.signatureAlgorithm(dataGroup14: try ChipFiles.readFile(dg14)) : nil
            guard let oid, let d = ActiveAuthentication.digest(ofECDSAPlainOID: oid) else {
                throw CryptoError(EM_ERR_UNSUPPORTED, Array("the chip's DG14 names no supported ECDSA Active Authentication algorithm".utf8CString))
            }
            digest = d
        }
        return try ActiveAuthentication.sign(challenge: challenge, with: key, digest: digest)
    }
}
