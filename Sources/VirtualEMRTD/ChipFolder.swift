import ChipAccess
import ChipAccessOpenSSL
import EMRTD
import Foundation

/// One chip's files and secrets, as a virtual chip serves them.
///
/// The chip folder contract (shared with `idvd specimen --chip`): `EF_COM.bin`, `EF_SOD.bin`, `DG1.bin`, `DG2.bin`
/// and, when the chip has them, `DG14.bin`, `DG15.bin`, `EF_CardAccess.bin`; the secrets in `private/`:
/// `aa-key.pem` (the Active Authentication private key, PKCS #8 PEM, RSA or EC), `ca-key.pem` (the Chip
/// Authentication private key, PKCS #8 PEM, EC or DH), `can.txt` (the CAN, ASCII digits). Real chip dumps load too:
/// `ChipFiles.read(directory:)`'s names (`Datagroup1.bin`, `ef0101.bin`, `ef011D.bin` …) and `ef011C.bin` for
/// EF.CardAccess; they have no `private/`, so no AA or CA key.
public struct ChipFolder: @unchecked Sendable {
    /// Every file the chip holds (EF.CardAccess in the master file; the others in the eMRTD application).
    public private(set) var files: [ChipFile: [UInt8]]
    /// The MRZ key from DG1 (BAC, PACE with the MRZ); nil without a readable DG1.
    public let mrzKey: MRZKey?
    /// The CAN (PACE with the CAN).
    public let can: String?
    /// EF.CardAccess's SecurityInfos: the PACE protocols offered.
    public private(set) var securityInfos: SecurityInfos?
    /// DG14's SecurityInfos.
    public let dg14: SecurityInfos?
    /// The Active Authentication private key (`private/aa-key.pem`: EMRTD's `SigningKey`, RSA or EC), nil without AA.
    public let activeAuthenticationKey: SigningKey?
    /// DG15's public key.
    public let activeAuthenticationPublicKey: SubjectPublicKeyInfo?
    /// The hash AA signs with: DG14's ActiveAuthenticationInfo for an EC key (SHA-256 without one), else
    /// `rsaHash` (SHA-1 by default, ICAO 9303-11 §6.1's implicit trailer BC).
    public let activeAuthenticationHash: HashAlgorithm
    /// The static Chip Authentication key: its domain (DG14's public key's) and private value.
    public let chipAuthenticationKey: (KeyAgreementDomain, [UInt8])?
    /// The CA protocols DG14 announces (3DES when it has a key but no ChipAuthenticationInfo).
    public let chipAuthenticationProtocols: [ChipAuthenticationProtocol]
    public let directory: String

    /// Loads `directory`. `pace`: PACE protocols to offer in an EF.CardAccess made here (replacing the folder's;
    /// each with its standardized domain parameter ID); `can` overrides `private/can.txt`; `rsaHash` is the hash
    /// of RSA Active Authentication. Throws `ChipInputError` for a folder without EF.SOD, and
    /// `ChipAccessError.invalidInput` for unreadable keys.
    public init(directory: String, pace: [PACEInfo]? = nil, can: String? = nil, rsaHash: HashAlgorithm = .sha1) throws {
        self.directory = directory
        let chip = try ChipFiles.read(directory: directory)
        var files: [ChipFile: [UInt8]] = [.sod: chip.sod]
        if let com = chip.com { files[.com] = com }
        for (n, b) in chip.dataGroups { files[.dataGroup(n)] = b }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        if let name = names.first(where: { ["ef_cardaccess.bin", "ef011c.bin", "cardaccess.bin"].contains($0.lowercased()) }) {
            files[.cardAccess] = try ChipFiles.readFile(directory + "/" + name)
        }
        if let pace {
            files[.cardAccess] = SecurityInfos(pace.map { .pace($0) }).encoded
        }
        securityInfos = files[.cardAccess].flatMap { try? SecurityInfos(cardAccess: $0) }
        mrzKey = chip.dataGroups[1].flatMap { try? DG1($0) }.flatMap { try? MRZKey(mrzLines: $0.lines) }

        let privateDir = directory + "/private"
        func secret(_ name: String) -> [UInt8]? { FileManager.default.contents(atPath: privateDir + "/" + name).map { [UInt8]($0) } }
        self.can = can ?? secret("can.txt").map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
        if let c = self.can, c.isEmpty || !c.allSatisfy({ ("0"..."9").contains($0) }) {
            throw ChipAccessError.invalidInput("\(privateDir)/can.txt does not hold a CAN (digits)")
        }

        dg14 = chip.dataGroups[14].flatMap { try? SecurityInfos(dg14: $0) }
        activeAuthenticationPublicKey = chip.dataGroups[15].flatMap { try? SubjectPublicKeyInfo(dg15: $0) }
        do {
            activeAuthenticationKey = try secret("aa-key.pem").map { try SigningKey(pem: $0) }
        } catch {
            throw ChipAccessError.invalidInput("\(privateDir)/aa-key.pem: \(error)")
        }
        if activeAuthenticationKey?.kind == .ec {
            activeAuthenticationHash = dg14?.activeAuthenticationInfo?.ecdsaPlain?.hash ?? .sha256
        } else {
            activeAuthenticationHash = rsaHash
        }

        var protocols = dg14?.chipAuthenticationInfos.map(\.protocol) ?? []
        if protocols.isEmpty, let k = dg14?.chipAuthenticationPublicKeyInfos.first {
            protocols = [ChipAuthenticationProtocol(keyAgreement: k.keyAgreement, cipher: .tripleDES)]
        }
        chipAuthenticationProtocols = protocols
        if let pem = secret("ca-key.pem"), let publicInfo = dg14?.chipAuthenticationPublicKeyInfos.first {
            let key: SigningKey
            do { key = try SigningKey(pem: pem) } catch { throw ChipAccessError.invalidInput("\(privateDir)/ca-key.pem: \(error)") }
            switch (publicInfo.publicKey.key, key.kind) {
            case (.ec(let curve, _), .ec?):
                chipAuthenticationKey = (KeyAgreementDomain(.ec(curve)), try key.ecPrivateScalar())
            case (.dh(let group, _), .dh?):
                chipAuthenticationKey = (KeyAgreementDomain(.dh(group)), try key.dhPrivateValue())
            default:
                throw ChipAccessError.invalidInput("\(privateDir)/ca-key.pem is not a key of DG14's Chip Authentication domain")
            }
        } else {
            chipAuthenticationKey = nil
        }
        self.files = files
    }

    /// The file with identifier `fid` in the eMRTD application.
    public func file(withIdentifier fid: [UInt8]) -> ChipFile? {
        files.keys.first { $0 != .cardAccess && $0.fileIdentifier == fid }
    }

    /// The file with short EF identifier `sfi` (ICAO 9303-10 Table 33: 1C EF.CardAccess in the master file, 1E
    /// EF.COM, 1D EF.SOD, 01–10 the data groups).
    public func file(withShortIdentifier sfi: UInt8, inMaster: Bool) -> ChipFile? {
        if inMaster { return sfi == 0x1C && files[.cardAccess] != nil ? .cardAccess : nil }
        return files.keys.first { $0 != .cardAccess && $0.fileIdentifier.last == sfi }
    }

    public func bytes(of file: ChipFile) -> [UInt8]? { files[file] }

    /// EF.CardAccess, when the chip offers PACE.
    public var cardAccess: [UInt8]? { files[.cardAccess] }
}
