@testable import EMRTD
import Foundation
import XCTest

/// Specimen chips with their chip-side security: DG14 (Chip Authentication, PACE, ActiveAuthenticationInfo), DG15,
/// EF.CardAccess, the secrets folder, and Active Authentication evaluated after passive authentication for every
/// variant.
final class SpecimenChipSecurityTests: XCTestCase {
    static let pki = Result { try TestPKI(seed: 7) }
    static let keys = Result { try SpecimenChip.Keys(seed: "SpecimenChipSecurityTests") }
    let mrz = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
    let challenge: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF]

    func folders() throws -> [(SpecimenChip.Variant, SpecimenChip.Folder)] {
        let pki = try Self.pki.get()
        let foreign = try TestPKI(seed: 7, country: SpecimenChip.foreignCountry(for: pki.country))
        return try SpecimenChip.makeFolders(mrzLines: mrz, face: try SpecimenChipTests.face(tint: 0), swappedFace: try SpecimenChipTests.face(tint: 1),
                                            pki: pki, foreign: foreign, keys: try Self.keys.get())
    }

    func folder(_ v: SpecimenChip.Variant) throws -> SpecimenChip.Folder {
        let pki = try Self.pki.get()
        return try SpecimenChip.makeFolder(mrzLines: mrz, face: try SpecimenChipTests.face(tint: 0), swappedFace: try SpecimenChipTests.face(tint: 1),
                                           pki: pki, keys: try Self.keys.get(), variant: v)
    }

    func testSecurityInfosAreWhatTheChipOffers() throws {
        let keys = try Self.keys.get()
        XCTAssertEqual(keys.rsa.cardAccessNumber.count, 6)
        XCTAssertTrue(keys.rsa.cardAccessNumber.allSatisfy(\.isNumber))
        XCTAssertEqual(try SpecimenChip.Keys(seed: "SpecimenChipSecurityTests").rsa.cardAccessNumber, keys.rsa.cardAccessNumber, "the same every run")
        XCTAssertNotEqual(try SpecimenChipSecurity.make(seed: "another chip", activeAuthentication: nil).cardAccessNumber, keys.rsa.cardAccessNumber)

        // EF.CardAccess: one PACEInfo (id-PACE-ECDH-GM-AES-CBC-CMAC-128, version 2, NIST P-256 = 12), DER.
        let ca = keys.rsa.cardAccess()
        XCTAssertEqual(ca, [0x31, 0x14, 0x30, 0x12, 0x06, 0x0A, 0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x04, 0x02, 0x02,
                            0x02, 0x01, 0x02, 0x02, 0x01, 0x0C])

        // DG14 of the RSA chip: CA public key (EC P-256), CA info, PACE; no ActiveAuthenticationInfo (RSA needs none).
        let rsa14 = try DG14(try keys.rsa.dataGroup14())
        XCTAssertEqual(Set(rsa14.securityInfos.map(\.protocolOID)),
                       ["0.4.0.127.0.7.2.2.1.2", "0.4.0.127.0.7.2.2.3.2.2", "0.4.0.127.0.7.2.2.4.2.2"])
        XCTAssertEqual(rsa14.securityInfos.first { $0.protocolOID == "0.4.0.127.0.7.2.2.3.2.2" }?.version, 1)
        XCTAssertEqual(rsa14.securityInfos.first { $0.protocolOID == "0.4.0.127.0.7.2.2.4.2.2" }?.version, 2)
        XCTAssertNil(try ActiveAuthentication.signatureAlgorithm(dataGroup14: try keys.rsa.dataGroup14()))
        // The EC chip's DG14 adds ActiveAuthenticationInfo: version 1, ecdsa-plain-SHA256.
        let ec14 = try keys.ecdsa.dataGroup14()
        XCTAssertEqual(try DG14(ec14).securityInfos.filter { $0.protocolOID == "2.23.136.1.1.5" }.map(\.version), [1])
        XCTAssertEqual(try ActiveAuthentication.signatureAlgorithm(dataGroup14: ec14), "0.4.0.127.0.7.1.1.4.1.3")
        // The SET OF is DER: its elements in ascending order of their encodings.
        let set = try BERReader.single(Array(ec14)).children()[0].children().map(\.encoded)
        XCTAssertEqual(set, set.sorted { $0.lexicographicallyPrecedes($1) })
        // The CA public key in DG14 is the CA private key's public half.
        let caInfo = try BERReader.single(Array(ec14)).children()[0].children().first {
            try $0.children()[0].oidValue() == "0.4.0.127.0.7.2.2.1.2"
        }
        XCTAssertEqual(try XCTUnwrap(caInfo).children()[1].encoded, try keys.ecdsa.chipAuthenticationKey.subjectPublicKeyInfo())
        // DG15 of each kind, and none without AA.
        XCTAssertEqual(try DG15(try XCTUnwrap(try keys.rsa.dataGroup15())).bits, 2048)
        let ec15 = try DG15(try XCTUnwrap(try keys.ecdsa.dataGroup15()))
        XCTAssertEqual([ec15.algorithm, ec15.curve ?? "-"], ["EC", "prime256v1"])
        XCTAssertNil(try keys.withoutActiveAuthentication.dataGroup15())
        XCTAssertThrowsError(try keys.withoutActiveAuthentication.activeAuthenticationSignature(challenge: challenge))
    }

    /// Every variant: passive authentication as before, and Active Authentication of a signature made with the
    /// folder's own `private/aa-key.pem` over the verifier's challenge as `expectedActiveAuthentication` says.
    func testActiveAuthenticationOfEveryVariant() throws {
        let pki = try Self.pki.get()
        var trust = pki.trust
        trust.add(try TrustMaterial(try TestPKI(seed: 7, country: "NL").csca.der))
        var outcomes: [String: String] = [:]
        let all = try folders()
        XCTAssertEqual(all.map(\.0), SpecimenChip.Variant.allCases)
        for (v, folder) in all {
            let report = try ChipReader(trust: trust).read(folder.files, at: Samples.day("2026-01-01"), printedMRZ: mrz)
            XCTAssertEqual(report.passiveAuthentication.failures, v.expectedFailures, "\(v)")
            XCTAssertEqual(report.com?.dataGroups, v == .noActiveAuthentication ? [1, 2, 14] : [1, 2, 14, 15], "\(v)")
            let key = folder.activeAuthenticationKeyOverride ?? folder.security?.activeAuthenticationKey
            let signature = try key.map { try ActiveAuthentication.sign(challenge: challenge, with: $0, digest: .sha256) }
            let aa = ActiveAuthentication.evaluate(report, files: folder.files, challenge: challenge, signature: signature)
            XCTAssertEqual(aa.outcome, v.expectedActiveAuthentication, "\(v): \(aa)")
            outcomes[v.rawValue] = aa.outcome.rawValue + (aa.failure.map { "/" + $0.rawValue } ?? "")
            switch v {
            case .genuine:
                XCTAssertEqual(aa.mechanism, .rsaISO9796_2(.sha256, implicitTrailer: false))
                XCTAssertEqual(aa.key?.bits, 2048)
                // No signature sent: not performed; the signature over another challenge: the hash differs.
                XCTAssertEqual(ActiveAuthentication.evaluate(report, files: folder.files, challenge: challenge, signature: nil).outcome, .notPerformed)
                let replayed = ActiveAuthentication.evaluate(report, files: folder.files, challenge: [9, 9, 9, 9, 9, 9, 9, 9], signature: signature)
                XCTAssertEqual([replayed.outcome.rawValue, replayed.failure?.rawValue], ["failed", "digest_mismatch"])
            case .activeAuthenticationECDSA:
                XCTAssertEqual(aa.mechanism, .ecdsaPlain(.sha256))
                XCTAssertEqual(aa.signatureAlgorithm, "0.4.0.127.0.7.1.1.4.1.3")
                XCTAssertEqual(aa.key?.curve, "prime256v1")
            case .copy:
                XCTAssertNotEqual(try folder.activeAuthenticationKeyOverride?.subjectPublicKeyInfo(), folder.files.dataGroups[15].map { Array($0.dropFirst(4)) })
                XCTAssertEqual(folder.files, all[0].1.files, "a copy holds the genuine chip's files, byte for byte")
                XCTAssertNotEqual(aa.failure, .digestMismatch, "another key does not get as far as the hash")
            default: break
            }
        }
        // Another key's signature recovers to noise: past the genuine modulus, or no ISO/IEC 9796-2 structure.
        XCTAssertTrue(["failed/iso9796_2_bad_padding", "failed/iso9796_2_bad_trailer", "failed/signature_out_of_range"].contains(outcomes["copy"] ?? "-"),
                      "\(outcomes)")
        XCTAssertEqual(outcomes["no-aa"], "not_supported")
        XCTAssertEqual(outcomes["signature-corrupted"], "key_not_authenticated")
    }

    /// A DG15 the SOD does not sign (added to a genuine chip's files with the adder's own key): the signature by that
    /// key is never checked — the key is not the issuer's.
    func testUnsignedDG15ProvesNothing() throws {
        let pki = try Self.pki.get()
        var files = try SpecimenChip.make(mrzLines: mrz, face: try SpecimenChipTests.face(tint: 0), swappedFace: try SpecimenChipTests.face(tint: 1),
                                          pki: pki, variant: .genuine)
        let forger = try SigningKey.ec(curve: "prime256v1", seed: "forger")
        files.dataGroups[15] = DG15.encode(subjectPublicKeyInfo: try forger.subjectPublicKeyInfo())
        let report = try ChipReader(trust: pki.trust).read(files, at: Samples.day("2026-01-01"), printedMRZ: mrz)
        XCTAssertEqual(report.passiveAuthentication.failures, [.dataGroupNotInSecurityObject])
        let sig = try ActiveAuthentication.sign(challenge: challenge, with: forger, digest: .sha256)
        XCTAssertEqual(ActiveAuthentication.evaluate(report, files: files, challenge: challenge, signature: sig).outcome, .keyNotAuthenticated)
        // DG15 altered after signing (a forger's key in place of the genuine one): the same.
        let genuine = try folder(.genuine)
        var swapped = genuine.files
        swapped.dataGroups[15] = DG15.encode(subjectPublicKeyInfo: try forger.subjectPublicKeyInfo())
        let r2 = try ChipReader(trust: pki.trust).read(swapped, at: Samples.day("2026-01-01"), printedMRZ: mrz)
        XCTAssertEqual(r2.passiveAuthentication.failures, [.dataGroupHashMismatch])
        XCTAssertEqual(ActiveAuthentication.evaluate(r2, files: swapped, challenge: challenge, signature: sig).outcome, .keyNotAuthenticated)
    }

    /// The chip folder contract: files, EF_CardAccess.bin, private/ (0700; keys 0600); `ChipFiles.read` takes only the
    /// LDS files; the folder's key signs as the chip.
    func testChipFolderOnDisk() throws {
        let dir = try temporaryDirectory(self)
        for v in [SpecimenChip.Variant.genuine, .activeAuthenticationECDSA, .copy, .noActiveAuthentication] {
            let folder = try folder(v)
            let path = dir + "/" + v.rawValue
            try SpecimenChip.write(folder, to: path)
            let names = Set(try FileManager.default.contentsOfDirectory(atPath: path))
            var expected: Set<String> = ["EF_COM.bin", "EF_SOD.bin", "DG1.bin", "DG2.bin", "DG14.bin", "EF_CardAccess.bin", "private"]
            if v != .noActiveAuthentication { expected.insert("DG15.bin") }
            XCTAssertEqual(names, expected, "\(v)")
            let secrets = Set(try FileManager.default.contentsOfDirectory(atPath: path + "/private"))
            XCTAssertEqual(secrets, v == .noActiveAuthentication ? ["ca-key.pem", "can.txt"] : ["aa-key.pem", "ca-key.pem", "can.txt"], "\(v)")
            let mode = { (p: String) in (try FileManager.default.attributesOfItem(atPath: p)[.posixPermissions] as? NSNumber)?.intValue }
            XCTAssertEqual(try mode(path + "/private"), 0o700)
            XCTAssertEqual(try mode(path + "/private/ca-key.pem"), 0o600)
            let can = try String(contentsOfFile: path + "/private/can.txt", encoding: .utf8)
            XCTAssertEqual(can, folder.security!.cardAccessNumber + "\n")
            XCTAssertEqual(try Array(Data(contentsOf: URL(fileURLWithPath: path + "/EF_CardAccess.bin"))), folder.cardAccess)
            // What `idvd chip verify --dir` reads: exactly the LDS files, nothing of private/ or EF.CardAccess.
            XCTAssertEqual(try ChipFiles.read(directory: path), folder.files)
            let ca = try SigningKey(pem: try ChipFiles.readFile(path + "/private/ca-key.pem"))
            XCTAssertEqual(try ca.subjectPublicKeyInfo(), try folder.security!.chipAuthenticationKey.subjectPublicKeyInfo())
            // Signing as the folder's chip: RSA with SHA-256, EC with DG14's named hash.
            let sig = try SpecimenChipSecurity.activeAuthenticationSignature(challenge: challenge, chipDirectory: path)
            if v == .noActiveAuthentication { XCTAssertNil(sig); continue }
            let report = try ChipReader(trust: try Self.pki.get().trust).read(folder.files, at: Samples.day("2026-01-01"))
            XCTAssertEqual(ActiveAuthentication.evaluate(report, files: folder.files, challenge: challenge, signature: sig).outcome,
                           v == .copy ? .failed : .verified, "\(v)")
        }
    }
}
