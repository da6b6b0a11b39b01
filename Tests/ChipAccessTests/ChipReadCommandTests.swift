import ChipAccess
import ChipAccessOpenSSL
import EMRTD
import Foundation
import IDVTestSupport
import MRZ
import VirtualEMRTD
import XCTest

/// `idv chip read` against virtual chips in a real pcscd's vpcd reader: the files come back byte for byte, the
/// protocols that ran are printed, the AA signature verifies over the caller's challenge, and every failure has
/// its exit status and sentence.
final class ChipReadCommandTests: XCTestCase {
    let crypto = OpenSSLChipCryptography()
    let challenge = "0011223344556677"

    /// Reads `folder`'s chip with `idv chip read` and checks each file the chip holds came back byte for byte.
    func readAndCompare(_ folder: ChipFolder, _ args: [String], expectProtocols: String, file: StaticString = #filePath, line: UInt = #line) throws -> (ChipLab.Run, String) {
        let out = try ChipLab.temporaryDirectory(self) + "/read"
        let r = try ChipLab.run("idv", ["chip", "read"] + args + ["--out", out, "--wait", "10"])
        XCTAssertEqual(r.status, 0, r.stderr + r.stdout, file: file, line: line)
        XCTAssertTrue(r.stdout.contains("protocols: \(expectProtocols)\n"), r.stdout, file: file, line: line)
        for (f, bytes) in folder.files where f.fileNameRead(in: folder) {
            let got = FileManager.default.contents(atPath: out + "/" + f.fileName).map { [UInt8]($0) }
            XCTAssertEqual(got, bytes, "\(f) differs from the chip's", file: file, line: line)
        }
        return (r, out)
    }

    func testSpecimenChipWithPACEAndTheMRZThenCAAndAA() throws {
        let dir = try ChipLab.chips.specimen()
        let folder = try ChipFolder(directory: dir)
        try ChipLab.insert(VirtualChip(folder: folder), self)
        let mrz = try ChipLab.mrzLines(dir)
        let (r, out) = try readAndCompare(folder, ["--mrz"] + mrz + ["--aa-challenge", challenge], expectProtocols: "PACE CA AA")
        XCTAssertTrue(r.stdout.contains("access control: PACE (id-PACE-ECDH-GM-AES-CBC-CMAC-128, secp256r1, password MRZ)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("chip authentication: succeeded (id-CA-ECDH-AES-CBC-CMAC-128)"), r.stdout)
        XCTAssertFalse(r.stdout.contains(mrz[1].prefix(9)), "the document number is never printed")
        // DG2 of 40 KB: read past offset 32 767 with READ BINARY B1.
        XCTAssertGreaterThan(folder.files[.dataGroup(2)]!.count, 32_767)
        // The signature verifies over the challenge with DG15's key (ISO/IEC 9796-2 scheme 1, SHA-1).
        let signature = try XCTUnwrap(FileManager.default.contents(atPath: out + "/AA_signature.bin"))
        let dg15 = try SubjectPublicKeyInfo(dg15: folder.files[.dataGroup(15)]!)
        XCTAssertEqual(ActiveAuthentication.verify(signature: [UInt8](signature), challenge: Bytes.hex(challenge), publicKey: dg15, info: nil, crypto: crypto),
                       .verified(algorithm: "ISO/IEC 9796-2 scheme 1, SHA-1"))
        XCTAssertFalse(ActiveAuthentication.verify(signature: [UInt8](signature), challenge: Bytes.hex("0011223344556678"), publicKey: dg15, info: nil, crypto: crypto).isVerified)
        // The folder is what idvd chip verify --dir reads: passive authentication passes under the test CSCA.
        let trust = try ChipLab.temporaryDirectory(self) + "/csca.cer"
        try Data(try TestPKI(seed: 1).csca.der).write(to: URL(fileURLWithPath: trust))
        let verify = try ChipLab.run("idvd", ["chip", "verify", "--dir", out, "--trust", trust, "--at", "2026-01-15"])
        XCTAssertTrue(verify.stdout.contains("\"passed\" : true"), verify.stdout + verify.stderr)
    }

    func testPACEWithTheCAN() throws {
        let dir = try ChipLab.chips.specimen()
        let folder = try ChipFolder(directory: dir)
        try ChipLab.insert(VirtualChip(folder: folder), self)
        let (r, _) = try readAndCompare(folder, ["--can", "123456", "--no-ca"], expectProtocols: "PACE")
        XCTAssertTrue(r.stdout.contains("password CAN"), r.stdout)
        XCTAssertTrue(r.stdout.contains("chip authentication: not run"), r.stdout)
        XCTAssertTrue(r.stdout.contains("active authentication: not requested"), r.stdout)
    }

    func testBACWhenTheChipOffersNoPACE() throws {
        let dir = try ChipLab.chips.bacOnly()
        let folder = try ChipFolder(directory: dir)
        XCTAssertNil(folder.cardAccess)
        try ChipLab.insert(VirtualChip(folder: folder), self)
        let (r, _) = try readAndCompare(folder, ["--mrz"] + ChipLab.mrzLines(dir) + ["--aa-challenge", challenge], expectProtocols: "BAC CA AA")
        XCTAssertTrue(r.stdout.contains("access control: BAC\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("id-CA-ECDH-AES-CBC-CMAC-256"), r.stdout)
        // A CAN cannot open a chip without PACE: unusable input for this chip, exit 3 (unsupported protocol).
        let can = try ChipLab.run("idv", ["chip", "read", "--can", "123456", "--out", try ChipLab.temporaryDirectory(self), "--wait", "5"])
        XCTAssertEqual(can.status, 3, can.stderr)
        XCTAssertTrue(can.stderr.contains("a CAN opens a chip only with PACE"), can.stderr)
    }

    func testWrongMRZAndWrongCANAreAccessDenied() throws {
        let dir = try ChipLab.chips.specimen()
        try ChipLab.insert(VirtualChip(folder: try ChipFolder(directory: dir)), self)
        var mrz = try ChipLab.mrzLines(dir)
        // Another expiry date (and its check digit) than the chip's.
        let key = try MRZKey(mrzLines: mrz)
        mrz[1] = String(mrz[1].prefix(21)) + "121231" + String(MRZ.checkDigit("121231")!) + String(mrz[1].dropFirst(28))
        XCTAssertNotEqual(try MRZKey(mrzLines: mrz), key)
        let wrong = try ChipLab.run("idv", ["chip", "read", "--mrz"] + mrz + ["--out", try ChipLab.temporaryDirectory(self), "--wait", "5"])
        XCTAssertEqual(wrong.status, 1, wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("access denied: the chip refused the password (MRZ or CAN) with PACE (status 6300"), wrong.stderr)
        let can = try ChipLab.run("idv", ["chip", "read", "--can", "654321", "--out", try ChipLab.temporaryDirectory(self), "--wait", "5"])
        XCTAssertEqual(can.status, 1, can.stderr)
        XCTAssertTrue(can.stderr.contains("access denied"), can.stderr)
        // BAC refuses a wrong MRZ too.
        let bac = try ChipLab.run("idv", ["chip", "read", "--bac", "--mrz"] + mrz + ["--out", try ChipLab.temporaryDirectory(self), "--wait", "5"])
        XCTAssertEqual(bac.status, 1, bac.stderr)
        XCTAssertTrue(bac.stderr.contains("refused the MRZ with BAC (status 6300"), bac.stderr)
    }

    func testNoCardNoReaderAndUnusableInput() throws {
        _ = try ChipLab.daemon()
        let mrz = TestChip.specimenMRZ
        let noCard = try ChipLab.run("idv", ["chip", "read", "--mrz"] + mrz + ["--out", try ChipLab.temporaryDirectory(self), "--wait", "0.5"])
        XCTAssertEqual(noCard.status, 2, noCard.stderr)
        XCTAssertTrue(noCard.stderr.contains("no card: no document on any reader within 0.5 s"), noCard.stderr)
        let noService = try ChipLab.run("idv", ["chip", "read", "--mrz"] + mrz + ["--out", try ChipLab.temporaryDirectory(self)],
                                        environment: ["PCSCLITE_CSOCK_NAME": try ChipLab.temporaryDirectory(self) + "/no-pcscd.comm"])
        XCTAssertEqual(noService.status, 2, noService.stderr)
        XCTAssertTrue(noService.stderr.contains("no reader: no PC/SC service"), noService.stderr)
        let noSuchReader = try ChipLab.run("idv", ["chip", "read", "--mrz"] + mrz + ["--reader", "Nonexistent", "--out", try ChipLab.temporaryDirectory(self)])
        XCTAssertEqual(noSuchReader.status, 2, noSuchReader.stderr)
        XCTAssertTrue(noSuchReader.stderr.contains("no reader named 'Nonexistent'"), noSuchReader.stderr)
        for (args, sentence) in [(["--mrz", "NOT AN MRZ", "LINE"], "the lines are not an MRZ"), (["--can", "12ab"], "a CAN is the 6 digits"),
                                 (["--mrz"] + mrz + ["--aa-challenge", "00112233"], "16 hex digits"), ([String](), "give either --mrz")] {
            let r = try ChipLab.run("idv", ["chip", "read"] + args + ["--out", try ChipLab.temporaryDirectory(self)])
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(sentence), "\(args): \(r.stderr)")
        }
    }

    func testCardRemovedMidRead() throws {
        let dir = try ChipLab.chips.specimen()
        let chip = VirtualChip(folder: try ChipFolder(directory: dir))
        chip.faults = [.removeCard(whenReading: .dataGroup(2), atOffset: 8_000)]
        try ChipLab.insert(chip, self)
        let r = try ChipLab.run("idv", ["chip", "read", "--mrz"] + ChipLab.mrzLines(dir) + ["--out", try ChipLab.temporaryDirectory(self), "--wait", "5", "--progress"])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("the card was removed during READ BINARY; hold the document still on the reader and read it again"), r.stderr)
        XCTAssertTrue(r.stderr.contains("progress: DG2 4096/"), "DG2 was being read: \(r.stderr)")
    }

    func testAChipThatStopsAnsweringTimesOut() throws {
        let dir = try ChipLab.chips.specimen()
        let chip = VirtualChip(folder: try ChipFolder(directory: dir))
        chip.faults = [.stopAnswering(whenReading: .dataGroup(2))]
        let link = try ChipLab.insert(chip, self)
        let started = Date()
        let r = try ChipLab.run("idv", ["chip", "read", "--mrz"] + ChipLab.mrzLines(dir) + ["--out", try ChipLab.temporaryDirectory(self), "--timeout", "2"])
        XCTAssertEqual(r.status, 3, r.stderr)
        XCTAssertTrue(r.stderr.contains("the chip did not answer READ BINARY within 2.0 s"), r.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "the read ends instead of hanging")
        XCTAssertTrue(link.stalled)
    }

    func testSecureMessagingFailuresAreReported() throws {
        let dir = try ChipLab.chips.specimen()
        for fault in [VirtualChip.Fault.corruptResponseMAC(protectedResponse: 3), .skipSendSequenceCounter(protectedResponse: 3)] {
            let chip = VirtualChip(folder: try ChipFolder(directory: dir))
            chip.faults = [fault]
            let link = try ChipLab.insert(chip, self)
            let r = try ChipLab.run("idv", ["chip", "read", "--mrz"] + ChipLab.mrzLines(dir) + ["--out", try ChipLab.temporaryDirectory(self), "--wait", "5"])
            XCTAssertEqual(r.status, 3, "\(fault): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("secure messaging failed: the response's MAC does not verify (wrong session keys or send sequence counter)"), "\(fault): \(r.stderr)")
            ChipLab.remove(link)
        }
    }

    func testACopiedChipCannotSignTheChallenge() throws {
        let dir = try ChipLab.chips.copy()
        let folder = try ChipFolder(directory: dir)
        try ChipLab.insert(VirtualChip(folder: folder), self)
        let (_, out) = try readAndCompare(folder, ["--mrz"] + ChipLab.mrzLines(dir) + ["--aa-challenge", challenge], expectProtocols: "PACE CA AA")
        // The copy holds the genuine chip's files byte for byte…
        let genuine = try ChipFolder(directory: try ChipLab.chips.specimen())
        XCTAssertEqual(folder.files, genuine.files)
        // …but its signature does not verify with DG15's key.
        let signature = try XCTUnwrap(FileManager.default.contents(atPath: out + "/AA_signature.bin"))
        let check = ActiveAuthentication.verify(signature: [UInt8](signature), challenge: Bytes.hex(challenge),
                                                publicKey: try SubjectPublicKeyInfo(dg15: folder.files[.dataGroup(15)]!), info: nil, crypto: crypto)
        XCTAssertFalse(check.isVerified, "\(check)")
    }

    func testChipWithoutActiveAuthenticationAndWithAnECKey() throws {
        let plain = try ChipFolder(directory: try ChipLab.chips.withoutActiveAuthentication())
        let link = try ChipLab.insert(VirtualChip(folder: plain), self)
        let (r, _) = try readAndCompare(plain, ["--mrz"] + ChipLab.mrzLines(plain.directory) + ["--aa-challenge", challenge], expectProtocols: "PACE CA")
        XCTAssertTrue(r.stdout.contains("active authentication: not offered (no DG15)"), r.stdout)
        ChipLab.remove(link)

        let ec = try ChipFolder(directory: try ChipLab.chips.ecActiveAuthentication())
        try ChipLab.insert(VirtualChip(folder: ec), self)
        let (s, out) = try readAndCompare(ec, ["--mrz"] + ChipLab.mrzLines(ec.directory) + ["--aa-challenge", challenge], expectProtocols: "PACE CA AA")
        XCTAssertTrue(s.stdout.contains("id-CA-ECDH-3DES-CBC-CBC"), s.stdout)
        let signature = try XCTUnwrap(FileManager.default.contents(atPath: out + "/AA_signature.bin"))
        XCTAssertEqual(signature.count, 64, "r ‖ s on P-256")
        XCTAssertEqual(ActiveAuthentication.verify(signature: [UInt8](signature), challenge: Bytes.hex(challenge),
                                                   publicKey: try SubjectPublicKeyInfo(dg15: ec.files[.dataGroup(15)]!),
                                                   info: ec.dg14?.activeAuthenticationInfo, crypto: crypto),
                       .verified(algorithm: "ecdsa-plain-SHA256"))
    }

    func testIdvdChipEmulateServesAFolderToAPrivatePcscd() throws {
        // The emulator as a user runs it: its own pcscd, the socket printed for the client.
        let dir = try ChipLab.chips.specimen()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try ChipLab.binary("idvd"))
        p.arguments = ["chip", "emulate", "--dir", dir, "--pcscd", "--pace", "ECDH-GM-AES-256:17"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.interrupt(); p.waitUntilExit() } }
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains("interrupt to stop"), Date() < deadline, p.isRunning {
            text += String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        }
        let socket = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("PCSCLITE_CSOCK_NAME=") }?.dropFirst(20), text)
        XCTAssertTrue(text.contains("PACE (id-PACE-ECDH-GM-AES-CBC-CMAC-256 parameters 17) and BAC, CA, AA"), text)
        let read = try ChipLab.run("idv", ["chip", "read", "--mrz"] + ChipLab.mrzLines(dir) + ["--out", try ChipLab.temporaryDirectory(self), "--wait", "10"],
                                   environment: ["PCSCLITE_CSOCK_NAME": String(socket)])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertTrue(read.stdout.contains("PACE (id-PACE-ECDH-GM-AES-CBC-CMAC-256, brainpoolP512r1, password MRZ)"), read.stdout)
        p.interrupt()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: String(socket)), "the private pcscd's folder is removed")
    }
}

extension ChipFile {
    /// Whether `idv chip read` reads this file by default (every file except DG3 and DG4, which need EAC).
    func fileNameRead(in folder: ChipFolder) -> Bool {
        if case .dataGroup(let n) = self { return n != 3 && n != 4 }
        return true
    }
}
