import ChipAccess
import ChipAccessOpenSSL
import EMRTD
import Foundation

/// Chip folders for tests and benchmarks, following the chip folder contract (`ChipFolder`): EF.COM, DG1 (the MRZ),
/// DG2 (a JPEG 2000 portrait of about `portraitBytes`), DG14 (Chip Authentication and, for an EC AA key, the
/// ActiveAuthenticationInfo; the PACE infos too), DG15 (the AA public key), EF.CardAccess (the PACE infos), and
/// EF.SOD over every data group, signed by the good document signer of EMRTD's `TestPKI` (Utopia); the secrets in
/// `private/`. Encoded by this project (ICAO 9303-10 §4.7.14–15, 9303-11 §9.2) and OpenSSL for keys — the
/// specimen generator's own chips (`idvd specimen --chip`) follow the same contract.
public struct TestChip {
    public enum ActiveAuthenticationKey: Sendable, Equatable {
        case none
        case rsa(bits: Int)
        /// An EC key on an OpenSSL curve, signing with `signature`'s hash (DG14's ActiveAuthenticationInfo).
        case ec(curve: String, signature: ECDSAPlainSignature)
    }

    /// ICAO 9303-3's specimen (Anna Maria Eriksson, Utopia): document L898902C3, born 1974-08-12, expiring 2012-04-15.
    public static let specimenMRZ = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]

    public var mrzLines = TestChip.specimenMRZ
    /// DG2's approximate size in octets.
    public var portraitBytes = 20_000
    public var activeAuthentication = ActiveAuthenticationKey.rsa(bits: 2048)
    /// A Chip Authentication key: EC on an OpenSSL curve, or DH in a standardized group (ICAO 9303-11 §9.5.1 ID).
    public enum ChipAuthenticationKey: Sendable, Equatable {
        case ec(curve: String)
        case dh(group: Int)
    }

    /// The Chip Authentication protocol and its key; nil: no CA (no DG14 CA infos, no `ca-key.pem`).
    public var chipAuthentication: (ChipAuthenticationProtocol, ChipAuthenticationKey)? = (ChipAuthenticationProtocol(keyAgreement: .ecdh, cipher: .aes128), .ec(curve: "prime256v1"))
    /// The PACE protocols offered (EF.CardAccess); empty: no EF.CardAccess, so BAC only.
    public var pace = [PACEInfo(protocol: PACEProtocol(mapping: .generic, keyAgreement: .ecdh, cipher: .aes128), parameterId: 12)]
    public var can: String? = "123456"

    public init() {}

    /// What was written.
    public struct Written: Sendable {
        public var directory: String
        /// Every file as written (the reader must bring back the same octets).
        public var files: [ChipFile: [UInt8]]
        public var mrzLines: [String]
        public var can: String?
    }

    /// Writes the chip folder into `directory`.
    @discardableResult
    public func write(to directory: String) throws -> Written {
        let fm = FileManager.default
        try fm.createDirectory(atPath: directory + "/private", withIntermediateDirectories: true)
        func put(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + path)) }

        var groups: [Int: [UInt8]] = [1: DG1.encode(lines: mrzLines), 2: try Self.portrait(bytes: portraitBytes)]
        var dg14: [SecurityInfo] = pace.map { .pace($0) }
        switch activeAuthentication {
        case .none: break
        case .rsa(let bits):
            let key = try SigningKey.rsa(bits: bits)
            groups[15] = DER.tlv(0x6F, try key.subjectPublicKeyInfo())
            try put(Array(try key.pkcs8PEM().utf8), "private/aa-key.pem")
        case let .ec(curve, signature):
            let key = try SigningKey.ec(curve: curve)
            groups[15] = DER.tlv(0x6F, try key.subjectPublicKeyInfo())
            try put(Array(try key.pkcs8PEM().utf8), "private/aa-key.pem")
            dg14.append(.activeAuthentication(ActiveAuthenticationInfo(signatureAlgorithm: signature.oid)))
        }
        if let (caProtocol, keyKind) = chipAuthentication {
            let caKey: SubjectPublicKeyInfo
            switch keyKind {
            case .ec(let curveName):
                let key = try SigningKey.ec(curve: curveName)
                let spki = try SubjectPublicKeyInfo(key.subjectPublicKeyInfo())
                guard case let .ec(curve, point) = spki.key else { throw ChipAccessError.invalidInput("not an EC key") }
                caKey = SubjectPublicKeyInfo.encodeEC(algorithm: ChipOID.pkECDH, curve: curve, point: point)
                try put(Array(try key.pkcs8PEM().utf8), "private/ca-key.pem")
            case .dh(let id):
                guard case .dh(let group)? = StandardizedDomainParameters.parameters(id: id) else { throw ChipAccessError.invalidInput("no DH group \(id)") }
                let crypto = OpenSSLChipCryptography()
                let x = try KeyAgreementDomain(.dh(group)).randomPrivateKey(crypto)
                let y = try KeyAgreementDomain(.dh(group)).publicKey(x, crypto)
                caKey = SubjectPublicKeyInfo.encodeDH(algorithm: ChipOID.pkDH, group: group, y: y)
                try put(Self.pkcs8DHPrivateKeyPEM(group: group, x: x), "private/ca-key.pem")
            }
            dg14 += [.chipAuthentication(ChipAuthenticationInfo(protocol: caProtocol, version: 1, keyId: nil)),
                     .chipAuthenticationPublicKey(ChipAuthenticationPublicKeyInfo(keyAgreement: caProtocol.keyAgreement, publicKey: caKey))]
        }
        if !dg14.isEmpty { groups[14] = SecurityInfos(dg14).dg14Encoded }
        if !pace.isEmpty { try put(SecurityInfos(pace.map { .pace($0) }).encoded, "EF_CardAccess.bin") }
        if let can { try put(Array(can.utf8), "private/can.txt") }

        let pki = try TestPKI(seed: 1)
        let content = SecurityObject.encodeContent(dataGroups: groups, algorithm: .sha256)
        let cms = try SignedData.sign(content, contentType: SecurityObject.contentType, signer: pki.documentSigner, key: pki.documentSignerKey,
                                      digest: .sha256, signingTime: TestPKI.day("2025-03-01"))
        let chip = ChipFiles(sod: DER.tlv(0x77, cms), com: EFCOM.encode(dataGroups: groups.keys.sorted()), dataGroups: groups)
        try SpecimenChip.write(chip, to: directory)
        let folder = try ChipFolder(directory: directory)
        return Written(directory: directory, files: folder.files, mrzLines: mrzLines, can: can)
    }

    /// A copy of the chip in `original`: the same files, and another Active Authentication key of the same kind in
    /// `private/aa-key.pem` (a clone made from a chip's files cannot sign with its key: AA must fail).
    public static func writeCopy(of original: String, to directory: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: directory + "/private", withIntermediateDirectories: true)
        for name in try fm.contentsOfDirectory(atPath: original) where name.hasSuffix(".bin") {
            try fm.copyItem(atPath: original + "/" + name, toPath: directory + "/" + name)
        }
        for name in ["ca-key.pem", "can.txt"] where fm.fileExists(atPath: original + "/private/" + name) {
            try fm.copyItem(atPath: original + "/private/" + name, toPath: directory + "/private/" + name)
        }
        let old = try SigningKey(pem: [UInt8](Data(contentsOf: URL(fileURLWithPath: original + "/private/aa-key.pem"))))
        let spki = try SubjectPublicKeyInfo(old.subjectPublicKeyInfo())
        let key: SigningKey
        switch spki.key {
        case .rsa(let n, _): key = try SigningKey.rsa(bits: n.count * 8)
        case .ec(let curve, _): key = try SigningKey.ec(curve: curve.name == "secp256r1" ? "prime256v1" : curve.name ?? "prime256v1")
        case .dh: throw ChipAccessError.invalidInput("a DH Active Authentication key")
        }
        try Data(Array(try key.pkcs8PEM().utf8)).write(to: URL(fileURLWithPath: directory + "/private/aa-key.pem"))
    }

    /// An X9.42 DH private key as PKCS #8 PEM (RFC 5958 PrivateKeyInfo with `dhpublicnumber` and p, g, q; the
    /// private value an INTEGER in the OCTET STRING), which OpenSSL reads as a DHX key.
    static func pkcs8DHPrivateKeyPEM(group: DHGroupParameters, x: [UInt8]) -> [UInt8] {
        var params = [DER.unsignedInteger(group.p), DER.unsignedInteger(group.g)]
        if let q = group.q { params.append(DER.unsignedInteger(q)) }
        let der = DER.sequence([DER.integer(0), DER.sequence([DER.oid(ChipOID.dhPublicNumber), DER.sequence(params)]),
                                DER.octetString(DER.unsignedInteger(x))])
        let b64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return Array("-----BEGIN PRIVATE KEY-----\n\(b64)\n-----END PRIVATE KEY-----\n".utf8)
    }

    /// DG2 with one JPEG 2000 portrait (a 300 × 400 gradient with noise, encoded at the ratio that lands near
    /// `bytes` octets).
    public static func portrait(bytes: Int) throws -> [UInt8] {
        let width = 300, height = 400
        var state: UInt32 = 0x1234_5678
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 1_664_525 &+ 1_013_904_223
                let noise = Int(state >> 27)
                let i = (y * width + x) * 3
                pixels[i] = UInt8((x * 255 / width + noise) & 0xFF)
                pixels[i + 1] = UInt8((y * 255 / height + noise) & 0xFF)
                pixels[i + 2] = UInt8(((x + y) * 255 / (width + height) + noise) & 0xFF)
            }
        }
        let image = PortraitPixels(width: width, height: height, channels: 3, pixels: pixels)
        var ratio = Float(pixels.count) / Float(max(1_000, bytes))
        var j2k = try JPEG2000.encode(image, ratio: ratio)
        // One correction step: OpenJPEG's rate control lands within a few percent after it.
        ratio *= Float(j2k.count) / Float(max(1_000, bytes))
        j2k = try JPEG2000.encode(image, ratio: max(1.5, ratio))
        return DG2.encode(image: j2k, type: .jpeg2000, width: width, height: height)
    }
}
