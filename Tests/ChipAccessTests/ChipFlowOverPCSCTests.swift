import ChipAccess
import Foundation
import IDVCore
import IDVTestSupport
import VirtualEMRTD
import XCTest

/// The whole chip path, end to end: the sample app `idv --chip-reader pcsc` runs seed 003's additional document scan
/// against a real `idvd serve`; the document's chip is the virtual eMRTD loaded from an `idvd specimen --chip`
/// folder, in the vpcd reader of a private pcscd. The pages go first (`"chip_follows": true`); `idv` reads the chip
/// with the server's SHA-1(MRZ_information) from the MRZ it read on the photo (PACE with the MRZ password, nothing
/// typed; the holder is asked only when the chip refuses it), runs Chip Authentication, and the chip signs the
/// server's own `chip_challenge` (`readIDVDocumentChip`); the server verifies Active Authentication
/// after passive authentication and reports the chip genuine. A copy (another AA key), a clone replaying a
/// recorded signature and a wrong CAN/MRZ each get their own result.
final class ChipFlowOverPCSCTests: XCTestCase {
    func testDocumentScanReadsTheChipOverPCSCAndTheServerJudgesIt() throws {
        let lab = try ChipFlowLab()
        defer { lab.stop() }
        let (daemon, server) = (lab.daemon, lab.server)
        let (page, chip, otherPage) = (lab.page, lab.chip, lab.otherPage)
        let (can, wrongCAN, mrz) = (lab.can, lab.wrongCAN, lab.mrz)

        var users = 0
        /// One `idv` run: activation of a fresh user, one additional document scan answering `chipAccess` on the
        /// chip-access screen, quit. Returns what it printed.
        func scan(_ chipAccess: [String], page: String = page) throws -> String {
            users += 1
            let user = "chip\(users)"
            let created = try server.admin(["create-user", user, "--no-idv"])
            XCTAssertEqual(created.status, 0, created.errors)
            let code = try XCTUnwrap(JSONDecoder().decode(JSONValue.self, from: created.stdout)["activation_code"]?.stringValue)
            let script = server.dir.appendingPathComponent("script-\(user).txt")
            try (["check-user: \(user)", "activation-code: \(code)", "set-password: Chip password 33", "dashboard: docscan chip check",
                  "docscan: start", "document-start: scan \(page)"] + chipAccess.map { "chip-access: \($0)" } + ["docscan: back", "dashboard: quit"])
                .joined(separator: "\n").write(to: script, atomically: true, encoding: .utf8)
            let r = try IDVD.run(["--server", "http://127.0.0.1:\(server.port)", "--script", script.path, "--chip-reader", "pcsc",
                                  "--out", server.dir.appendingPathComponent("out-\(user)").path],
                                 executable: "idv", environment: daemon.environment)
            XCTAssertEqual(r.status, 0, r.output + r.errors)
            XCTAssertTrue(r.output.contains("flow=docscan event=onIDVAdditionalDocumentScan error=0 status=100"), r.output + r.errors)
            return r.output
        }
        func nfc(_ out: String) -> String? { out.split(separator: "\n").first { $0.hasPrefix("  nfc: ") }.map { String($0.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces) } }

        // The genuine chip, opened with the server's digest (PACE with the MRZ password; the script types no key):
        // CA and AA run, the server reports it genuine.
        var link = try ChipLab.insert(VirtualChip(folder: try ChipFolder(directory: chip)), self)
        let genuine = try scan([])
        XCTAssertTrue(genuine.contains("Its chip opens with the MRZ read from the photo."), genuine)
        XCTAssertTrue(genuine.contains("chip protocols: PACE CA AA"), genuine)
        XCTAssertTrue(genuine.contains("password MRZ"), genuine)
        XCTAssertEqual(nfc(genuine), "is_nfc_document=true nfc_scan_status=OK reason=genuine", genuine)

        // Another holder's page on this chip: the chip refuses the digest and only then is the holder asked; a wrong
        // CAN and a wrong MRZ (another birth date) are each said and asked again; the holder gives up: the pages go
        // alone.
        var badMRZ = mrz
        let line2 = Array(badMRZ[1])
        badMRZ[1] = String(line2[0..<13]) + (line2[13] == "0" ? "1" : "0") + String(line2[14...])
        let denied = try scan(["can \(wrongCAN)", "mrz \(badMRZ.joined(separator: " "))", "skip"], page: otherPage)
        XCTAssertTrue(denied.contains("chip: the chip refused the MRZ read from the photo; give its CAN or MRZ"), denied)
        XCTAssertEqual(denied.components(separatedBy: "chip: access denied — the chip refused the MRZ or CAN").count - 1, 2, denied)
        XCTAssertTrue(denied.contains("chip: not read (skipped)"), denied)
        XCTAssertFalse(denied.contains("reason=genuine"), denied)

        // A clone replaying the genuine chip's answer to an earlier challenge: replayed.
        let recorded = try ChipLab.read(try AccessKey.canNumber(can), options: ChipReadOptions(activeAuthenticationChallenge: Array(repeating: 0x5A, count: 8)))
        guard case .signed(_, let oldSignature) = recorded.activeAuthentication else { return XCTFail("\(recorded.activeAuthentication)") }
        ChipLab.remove(link)
        let clone = VirtualChip(folder: try ChipFolder(directory: chip))
        clone.faults = [.replayActiveAuthentication(signature: oldSignature)]
        link = try ChipLab.insert(clone, self)
        let replayed = try scan([])
        XCTAssertEqual(nfc(replayed), "is_nfc_document=true nfc_scan_status=ERROR reason=active_authentication_replayed", replayed)

        // A copy: the genuine files, another AA key: AA fails.
        ChipLab.remove(link)
        link = try ChipLab.insert(VirtualChip(folder: try ChipFolder(directory: chip + "/variants/copy")), self)
        let copy = try scan([])
        XCTAssertTrue(copy.contains("chip protocols: ") && copy.contains(" AA\n"), copy)
        XCTAssertEqual(nfc(copy), "is_nfc_document=true nfc_scan_status=ERROR reason=active_authentication_failed", copy)
        ChipLab.remove(link)
    }
}
