import Foundation
import IDVTestSupport
import IDVKit
import XCTest

/// `FileChipReader` reads a chip's EF files from a folder under every naming the samples use.
final class ChipReaderProviderTests: XCTestCase {
    static let emrtd = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/testdata/emrtd").standardized

    func sample(_ name: String) throws -> URL {
        let u = Self.emrtd.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: u.path) else {
            throw TestData.missing("shared eMRTD sample missing: \(u.path)")
        }
        return u
    }

    func testReadsJMRTDFileIdentifierAndDatagroupNames() throws {
        let nl = try FileChipReader(folder: try sample("nld-specimen-2006-loes-meulendijk")).readChip(workflow: .postLoginDocScanOnly)
        XCTAssertEqual(nl?.dataGroups.keys.sorted(), [1, 2, 15])
        XCTAssertEqual(nl?.sod.count, 1782)
        XCTAssertEqual(nl?.com?.count, 23)
        let bsi = try FileChipReader(folder: try sample("bsi2008-erika-mustermann")).readChip(workflow: .postLoginDocScanOnly)
        XCTAssertEqual(bsi?.dataGroups.keys.sorted(), [1, 2, 3, 4, 14, 15])
        XCTAssertEqual(bsi?.dataGroups[1]?.count, 93)
    }

    func testSpecimenNamesAndRefusals() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("chip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data([0x61, 0x00]).write(to: dir.appendingPathComponent("DG1.bin"))
        XCTAssertThrowsError(try FileChipReader(folder: dir).readChip(workflow: .postLoginDocScanOnly)) { e in
            XCTAssertTrue("\(e)".contains("no EF_SOD.bin"), "\(e)")
        }
        try Data([0x77, 0x00]).write(to: dir.appendingPathComponent("EF_SOD.bin"))
        try Data().write(to: dir.appendingPathComponent("DG2.bin"))
        XCTAssertThrowsError(try FileChipReader(folder: dir).readChip(workflow: .postLoginDocScanOnly)) { e in
            XCTAssertTrue("\(e)".contains("DG2.bin is empty"), "\(e)")
        }
        try FileManager.default.removeItem(at: dir.appendingPathComponent("DG2.bin"))
        let chip = try FileChipReader(folder: dir).readChip(workflow: .postLoginDocScanOnly)
        XCTAssertEqual(chip, CapturedChip(sod: Data([0x77, 0x00]), dataGroups: [1: Data([0x61, 0x00])]))
        XCTAssertThrowsError(try FileChipReader(folder: dir.appendingPathComponent("absent")).readChip(workflow: .postLoginDocScanOnly))
    }
}

/// A chip reader as the chip-access library will be one, for tests: the folder's files, and Active Authentication on
/// the challenge the SDK hands over, signed with the folder's `private/aa-key.pem` (IDVTestSupport `SimulatedChip`).
/// Records the challenges it was given.
final class SpecimenChipReader: ChipReaderProvider, @unchecked Sendable {
    let folder: URL
    private let lock = NSLock()
    private var seen: [RDNAChipChallenge?] = []
    init(folder: URL) { self.folder = folder }
    var challenges: [RDNAChipChallenge?] { lock.withLock { seen } }

    func readChip(workflow: RDNAIDVWorkflow, challenge: RDNAChipChallenge?) throws(CaptureError) -> CapturedChip? {
        lock.withLock { seen.append(challenge) }
        guard var chip = try FileChipReader(folder: folder).readChip(workflow: workflow, challenge: challenge) else { return nil }
        if let c = challenge {
            do {
                if let sig = try SimulatedChip.signature(folder, challenge: c.activeAuthenticationChallenge) {
                    chip.activeAuthentication = ChipActiveAuthentication(challenge: c.activeAuthenticationChallenge, signature: sig)
                }
            } catch { throw CaptureError("the chip did not answer: \(error)") }
        }
        chip.chipAuthentication = .notPerformed
        return chip
    }
}

/// The SDK hands the server's chip challenge to the chip reader and carries the chip's answer: a genuine chip
/// (Active Authentication on the session's challenge) is `OK genuine`; files alone (`FileChipReader`) are
/// `WARNING active_authentication_not_performed`.
final class ChipChallengeSDKTests: XCTestCase {
    /// `idvd <args>` to completion with the server's environment (its key folder); exit 0 expected.
    func idvd(_ server: IDVDServer, _ args: [String]) throws {
        let r = try IDVD.run(args, replacing: server.process.processEnvironment)
        XCTAssertEqual(r.status, 0, args.joined(separator: " ") + ": " + r.errors)
    }

    func testTheChipReaderSignsTheServersChallenge() async throws {
        let server = try IDVDServer()
        let out = server.dir.appendingPathComponent("doc")
        try idvd(server, ["specimen", "--format", "td3", "--seed", "10", "--chip", "--portrait",
                          Paths.fixtures.appendingPathComponent("katie_portrait.jpg").path, "--out", out.path])
        try server.start()
        try idvd(server, ["admin", "trust", "import", out.appendingPathComponent("test-pki/csca.cer").path, "--db", server.db])
        let code = try server.createUser("nina")
        let sdk = RDNA()
        let api = sdk.asyncAPI
        _ = try await api.initialize(RDNAConfiguration(serverURL: server.url, requestTimeout: 120))
        _ = try await api.setUser("nina")
        _ = try await api.setActivationCode(code)
        let loggedIn = try await api.setPassword("Nina chips 2026", challengeMode: .set)
        XCTAssertEqual(loggedIn.last?.name, "onUserLoggedIn")
        sdk.setDocumentCaptureProvider(ImageFileDocumentCapture(pageFiles: [out.appendingPathComponent("specimen-10.png")]))

        func scan(_ reader: any ChipReaderProvider) async throws -> DocumentScanStatusReport {
            sdk.setChipReaderProvider(reader)
            _ = try await api.initiateIDVAdditionalDocumentScan(reason: "chip")
            let ev = try await api.setIDVDocumentScanProcessStartConfirmation(true, idvWorkflow: .postLoginDocScanOnly)
            guard case let .onIDVAdditionalDocumentScan(_, json, _, _, _)? = ev.last else {
                XCTFail("\(ev.map(\.name))")
                throw TestData.missing("no scan result")
            }
            return try AdditionalDocumentScanDetails(jsonString: json).documentStatus
        }
        let reader = SpecimenChipReader(folder: out.appendingPathComponent("specimen-10.chip"))
        let genuine = try await scan(reader)
        XCTAssertEqual([genuine.nfcScanStatus, genuine.nfcScanStatusReasonCode], ["OK", "genuine"], "\(genuine.warningList) \(genuine.errorList)")
        let given = try XCTUnwrap(reader.challenges.first ?? nil, "the SDK handed the reader the server's challenge")
        XCTAssertEqual(given.activeAuthenticationChallenge.count, 8)
        XCTAssertGreaterThan(given.expiresAt, Date())
        XCTAssertNil(sdk.pendingChipChallenge, "no upload waits now")
        let files = try await scan(FileChipReader(folder: out.appendingPathComponent("specimen-10.chip")))
        XCTAssertEqual([files.nfcScanStatus, files.nfcScanStatusReasonCode], ["WARNING", "active_authentication_not_performed"])
        // The copy variant through the same reader: its key is not DG15's.
        let copy = try await scan(SpecimenChipReader(folder: out.appendingPathComponent("specimen-10.chip/variants/copy")))
        XCTAssertEqual([copy.nfcScanStatus, copy.nfcScanStatusReasonCode], ["ERROR", "active_authentication_failed"])
        XCTAssertNotEqual(reader.challenges.count, 0)
        server.stop()
    }
}
