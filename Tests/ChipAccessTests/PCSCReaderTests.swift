import ChipAccess
import ChipAccessOpenSSL
import ChipAccessPCSC
import EMRTD
import Foundation
import IDVTestSupport
import VirtualEMRTD
import XCTest

/// The library through PC/SC in this process: every PACE protocol and domain it supports against a chip offering
/// exactly that one, a chip without extended lengths (61xx chaining, B1 reads in short APDUs), progress, and the
/// real chip dumps of ../shared/testdata/emrtd loaded into the virtual chip.
final class PCSCReaderTests: XCTestCase {
    let crypto = OpenSSLChipCryptography()

    /// ICAO 9303-11 §9.5.1 domains: P-256, brainpoolP256r1/P384r1/P512r1 for ECDH; the 1024-bit and a 2048-bit
    /// MODP group for DH.
    static let ecdhDomains = [12, 13, 16, 17]
    static let dhDomains = [0, 2]

    func testEveryPACEProtocolAndDomain() throws {
        let dir = try ChipLab.chips.bacOnly()
        let chip = VirtualChip(folder: try ChipFolder(directory: dir))
        try ChipLab.insert(chip, self)
        let mrz = AccessKey.mrz(try MRZKey(mrzLines: ChipLab.mrzLines(dir)))
        var combinations: [PACEInfo] = []
        for cipher in SessionCipher.allCases {
            for id in Self.ecdhDomains { combinations.append(PACEInfo(protocol: PACEProtocol(mapping: .generic, keyAgreement: .ecdh, cipher: cipher), parameterId: id)) }
            for id in Self.dhDomains { combinations.append(PACEInfo(protocol: PACEProtocol(mapping: .generic, keyAgreement: .dh, cipher: cipher), parameterId: id)) }
        }
        XCTAssertEqual(combinations.count, 24)
        let expectedDG1 = try ChipFolder(directory: dir).files[.dataGroup(1)]
        for info in combinations {
            chip.folder = try ChipFolder(directory: dir, pace: [info])
            let domain = StandardizedDomainParameters.parameters(id: info.parameterId!)!.description
            // With the MRZ, and (one domain per agreement) with the CAN.
            var keys: [(AccessKey, String)] = [(mrz, "MRZ")]
            if info.parameterId == 12 || info.parameterId == 0 { keys.append((.can("123456"), "CAN")) }
            for (key, password) in keys {
                let result = try ChipLab.read(key, options: ChipReadOptions(dataGroups: [1], chipAuthentication: false))
                XCTAssertEqual(result.accessControl, .pace(protocol: info.protocol, domain: domain, password: password), "\(info.protocol) \(domain)")
                XCTAssertEqual(result.dataGroups[1], expectedDG1, "\(info.protocol) \(domain)")
                XCTAssertEqual(result.cardAccess, chip.folder.cardAccess)
            }
        }
        // A wrong CAN on one of them is refused by the chip's token check.
        XCTAssertThrowsError(try ChipLab.read(.can("000000"), options: ChipReadOptions(dataGroups: [1]))) {
            XCTAssertTrue(($0 as? ChipAccessError)?.isAccessDenied == true, "\($0)")
        }
    }

    func testChipWithoutExtendedLengthsChainsResponsesAndReportsProgress() throws {
        let dir = try ChipLab.chips.specimen()
        let folder = try ChipFolder(directory: dir)
        let chip = VirtualChip(folder: folder, extendedLength: false)
        try ChipLab.insert(chip, self)
        let progress = ProgressLog()
        let challenge = Bytes.hex("A1B2C3D4E5F60718")
        let result = try ChipLab.read(.mrz(try MRZKey(mrzLines: ChipLab.mrzLines(dir))),
                                      options: ChipReadOptions(activeAuthenticationChallenge: challenge, progress: { progress.add($0) }))
        for (n, bytes) in result.dataGroups { XCTAssertEqual(bytes, folder.files[.dataGroup(n)], "DG\(n)") }
        XCTAssertEqual(result.sod, folder.files[.sod])
        XCTAssertEqual(result.com, folder.files[.com])
        // DG2 in 223-octet chunks, past 32 767 with B1: strictly increasing to the total.
        let dg2 = progress.entries.filter { $0.file == .dataGroup(2) }
        XCTAssertEqual(dg2.first?.bytesRead, 223)
        XCTAssertEqual(dg2.last?.bytesRead, folder.files[.dataGroup(2)]!.count)
        XCTAssertEqual(dg2.map(\.bytesRead), dg2.map(\.bytesRead).sorted())
        XCTAssertTrue(dg2.allSatisfy { $0.totalBytes == folder.files[.dataGroup(2)]!.count })
        XCTAssertGreaterThan(dg2.count, 150)
        // The 256-octet RSA signature arrived through GET RESPONSE (61xx): the protected response exceeds 256 octets.
        guard case .signed(_, let signature) = result.activeAuthentication else { return XCTFail("\(result.activeAuthentication)") }
        XCTAssertEqual(signature.count, 256)
        XCTAssertTrue(ActiveAuthentication.verify(signature: signature, challenge: challenge, publicKey: try SubjectPublicKeyInfo(dg15: folder.files[.dataGroup(15)]!),
                                                  info: nil, crypto: crypto).isVerified)
        XCTAssertEqual(result.chipAuthentication, .succeeded(protocol: ChipAuthenticationProtocol(keyAgreement: .ecdh, cipher: .aes128), keyId: nil))
        XCTAssertGreaterThan(result.commandCount, 180)
    }

    /// DH Chip Authentication, with 3DES (MSE:Set KAT) and AES (MSE:Set AT + GENERAL AUTHENTICATE).
    func testChipAuthenticationWithADHKey() throws {
        let dir = try ChipLab.chips.dhChipAuthentication()
        let folder = try ChipFolder(directory: dir)
        guard case .dh(let group, _)? = folder.dg14?.chipAuthenticationPublicKeyInfos.first?.publicKey.key else { return XCTFail("no DH key in DG14") }
        XCTAssertEqual(group.bits, 2048)
        let chip = VirtualChip(folder: folder)
        try ChipLab.insert(chip, self)
        let result = try ChipLab.read(.can("123456"))
        XCTAssertEqual(result.chipAuthentication, .succeeded(protocol: ChipAuthenticationProtocol(keyAgreement: .dh, cipher: .aes128), keyId: nil))
        XCTAssertEqual(result.sod, folder.files[.sod], "read on after CA with the new keys")
        // The same key offered for 3DES.
        var dg14 = folder.dg14!
        dg14.infos = dg14.infos.map { info in
            if case .chipAuthentication(var c) = info { c.protocol.cipher = .tripleDES; return .chipAuthentication(c) }
            return info
        }
        let copy = try ChipLab.temporaryDirectory(self)
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) { try FileManager.default.copyItem(atPath: dir + "/" + name, toPath: copy + "/" + name) }
        try Data(dg14.dg14Encoded).write(to: URL(fileURLWithPath: copy + "/DG14.bin"))
        chip.folder = try ChipFolder(directory: copy)
        let tripleDES = try ChipLab.read(.can("123456"), options: ChipReadOptions(dataGroups: [1, 14]))
        XCTAssertEqual(tripleDES.chipAuthentication, .succeeded(protocol: ChipAuthenticationProtocol(keyAgreement: .dh, cipher: .tripleDES), keyId: nil))
        XCTAssertEqual(tripleDES.dataGroups[1], folder.files[.dataGroup(1)])
    }

    func testRSAActiveAuthenticationWithSHA256() throws {
        let dir = try ChipLab.chips.specimen()
        let folder = try ChipFolder(directory: dir, rsaHash: .sha256)
        try ChipLab.insert(VirtualChip(folder: folder), self)
        let challenge = Bytes.hex("0102030405060708")
        let result = try ChipLab.read(.can("123456"), options: ChipReadOptions(dataGroups: [1, 15], activeAuthenticationChallenge: challenge))
        guard case .signed(_, let signature) = result.activeAuthentication else { return XCTFail("\(result.activeAuthentication)") }
        XCTAssertEqual(ActiveAuthentication.verify(signature: signature, challenge: challenge, publicKey: try SubjectPublicKeyInfo(dg15: folder.files[.dataGroup(15)]!),
                                                   info: nil, crypto: crypto), .verified(algorithm: "ISO/IEC 9796-2 scheme 1, SHA-256"))
    }

    /// The MRZ given as SHA-1(MRZ_information) (what a server that read the MRZ can send instead of its fields)
    /// opens the chip with PACE and, on a chip offering no PACE, with BAC — the same files as with the MRZ's fields;
    /// another document's digest is refused as a wrong MRZ is (access denied).
    func testMRZInformationDigestOpensTheChipWithPACEAndBAC() throws {
        let dir = try ChipLab.chips.specimen()
        let folder = try ChipFolder(directory: dir)
        let mrz = try XCTUnwrap(folder.mrzKey)
        let digest = MRZInformationDigest(mrz, crypto)
        XCTAssertEqual(digest.octets, crypto.digest(.sha1, Array(mrz.information.utf8)))
        XCTAssertThrowsError(try MRZInformationDigest(octets: Array(digest.octets.prefix(16))))
        let link = try ChipLab.insert(VirtualChip(folder: folder), self)
        for pace in [true, false] {
            if !pace { link.chip.folder = try ChipFolder(directory: dir, pace: []) }
            let result = try ChipLab.read(.mrzDigest(digest), options: ChipReadOptions(dataGroups: [1, 2]))
            XCTAssertEqual(result.accessControl.accessProtocol, pace ? .pace : .bac)
            XCTAssertEqual(result.sod, folder.files[.sod])
            XCTAssertEqual(result.dataGroups[1], folder.files[.dataGroup(1)])
            XCTAssertEqual(result.dataGroups[2], folder.files[.dataGroup(2)])
            var other = digest.octets
            other[0] ^= 0x01
            XCTAssertThrowsError(try ChipLab.read(.mrzDigest(try MRZInformationDigest(octets: other)))) { error in
                guard case ChipAccessError.accessDenied = error else { return XCTFail("\(error)") }
            }
        }
        ChipLab.remove(link)
    }

    /// The real chip dumps: each read with BAC (their DG1's MRZ) and with PACE offered by a generated EF.CardAccess,
    /// every file read equal to the dump's. They have no private keys, so CA and AA fail as a chip's refusal.
    func testRealChipFilesLoadedIntoTheVirtualChip() throws {
        let samples = ["bsi2008-erika-mustermann", "nld-specimen-2006-loes-meulendijk", "bsi-tr03105-5-hjp-erika-mustermann"]
        for sample in samples {
            let dir = try TestData.sharedFolder("emrtd/" + sample).path
            let folder = try ChipFolder(directory: dir)
            let key = try XCTUnwrap(folder.mrzKey, sample)
            let link = try ChipLab.insert(VirtualChip(folder: folder), self)
            for pace in [nil, PACEInfo(spec: "ECDH-GM-AES-128:13")!] {
                if let pace { link.chip.folder = try ChipFolder(directory: dir, pace: [pace]) }
                let result = try ChipLab.read(.mrz(key), options: ChipReadOptions(activeAuthenticationChallenge: Bytes.hex("0011223344556677")))
                XCTAssertEqual(result.accessControl.accessProtocol, pace == nil ? .bac : .pace, sample)
                XCTAssertEqual(result.com, folder.files[.com], sample)
                XCTAssertEqual(result.sod, folder.files[.sod], sample)
                let expected = folder.files.compactMap { f, _ -> Int? in if case .dataGroup(let n) = f, n != 3, n != 4 { return n } else { return nil } }
                XCTAssertEqual(Set(result.dataGroups.keys), Set(expected), sample)
                for (n, bytes) in result.dataGroups { XCTAssertEqual(bytes, folder.files[.dataGroup(n)], "\(sample) DG\(n)") }
                // CA: DG14 names a key the dump has no private part of; the chip refuses (6A88) and the session goes on.
                if folder.dg14?.chipAuthenticationPublicKeyInfos.isEmpty == false {
                    guard case .failed(let why) = result.chipAuthentication else { return XCTFail("\(sample): \(result.chipAuthentication)") }
                    XCTAssertTrue(why.contains("6A88"), why)
                }
                if folder.files[.dataGroup(15)] != nil {
                    XCTAssertEqual(result.activeAuthentication, .failed("the chip answered INTERNAL AUTHENTICATE with status 6D00 (instruction not supported)"), sample)
                }
            }
            ChipLab.remove(link)
        }
    }
}

final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [ReadProgress] = []
    func add(_ p: ReadProgress) { lock.lock(); list.append(p); lock.unlock() }
    var entries: [ReadProgress] { lock.lock(); defer { lock.unlock() }; return list }
}
