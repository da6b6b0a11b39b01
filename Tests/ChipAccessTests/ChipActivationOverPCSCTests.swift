import ChipAccess
import Foundation
import IDVCore
import IDVTestSupport
import VirtualEMRTD
import XCTest

/// Seed 002's activation flow with the chip read over PC/SC, end to end: the sample app `idv --chip-reader pcsc`
/// activates a fresh user against a real `idvd serve` (activation code → document page, `"chip_follows": true` →
/// `readIDVDocumentChip` → chip → document details → selfie → consent → password → logged in). The document's chip
/// is the virtual eMRTD loaded from an `idvd specimen --chip` folder, in the vpcd reader of a private pcscd (Debian
/// pcscd + vsmartcard-vpcd); `idv` opens it with PACE keyed by the server's SHA-1(MRZ_information) from the MRZ it
/// read on the photo — nothing typed — runs Chip Authentication and has it sign the server's own `chip_challenge`.
/// A page whose MRZ is not the chip's makes the chip refuse the digest: only then is the holder asked (CAN or MRZ). The server
/// verifies Active Authentication after passive authentication (its audit's `idv.document_read` says so) and the
/// document details show the "Chip verification" check. A copy (another AA key), a clone replaying a recorded
/// signature and a wrong CAN / MRZ each get their own result; the first two make the document INVALID and the
/// activation asks for another document.
final class ChipActivationOverPCSCTests: XCTestCase {
    func testActivationReadsTheChipOverPCSCAndTheServerJudgesIt() throws {
        let lab = try ChipFlowLab()
        defer { lab.stop() }
        let (daemon, server) = (lab.daemon, lab.server)
        let (page, chip, otherPage) = (lab.page, lab.chip, lab.otherPage)
        let (can, wrongCAN, mrz) = (lab.can, lab.wrongCAN, lab.mrz)
        let live = IDVD.packageRoot.appendingPathComponent("Tests/Fixtures/selfie/katie_live").path

        var users = 0
        /// One `idv` run: a fresh user created for activation with IDV (workflow 0), the activation code, the page
        /// with `chipAccess` answered on the chip-access screen, then `rest` (the screens after the document
        /// details). Returns the user and what `idv` printed, and its exit status.
        func activate(_ chipAccess: [String], page: String = page, then rest: [String]) throws -> (user: String, out: String, status: Int32) {
            users += 1
            let user = "chipact\(users)"
            let created = try server.admin(["create-user", user])
            XCTAssertEqual(created.status, 0, created.errors)
            let json = try JSONDecoder().decode(JSONValue.self, from: created.stdout)
            XCTAssertEqual(json["activation_requires_idv"]?.boolValue, true)
            let code = try XCTUnwrap(json["activation_code"]?.stringValue)
            let script = server.dir.appendingPathComponent("script-\(user).txt")
            try (["check-user: \(user)", "activation-code: \(code)", "document-start: scan \(page)"]
                 + chipAccess.map { "chip-access: \($0)" } + ["document-details: confirm"] + rest)
                .joined(separator: "\n").write(to: script, atomically: true, encoding: .utf8)
            let r = try IDVD.run(["--server", "http://127.0.0.1:\(server.port)", "--script", script.path, "--chip-reader", "pcsc",
                                  "--out", server.dir.appendingPathComponent("out-\(user)").path],
                                 executable: "idv", environment: daemon.environment)
            return (user, r.output + r.errors, r.status)
        }
        /// The whole activation after a document the server accepted: selfie, consent, password, logged in.
        let toLoggedIn = ["selfie-start: capture \(live)", "selfie-confirmation: continue-flow", "consent: approve",
                          "set-password: Chip password 33", "dashboard: quit"]
        /// After a document the server refused: the activation asks for another document; the holder cancels (146)
        /// and the app is back on its first screen, where the script ends (exit 3, said so).
        let cancelled = ["document-start: cancel"]
        func endedCancelled(_ r: (user: String, out: String, status: Int32)) {
            XCTAssertEqual(r.status, 3, r.out)
            XCTAssertTrue(r.out.contains("error: 400 The document is not valid; scan a valid document"), r.out)
            XCTAssertTrue(r.out.contains("RESULT flow=activation event=getUser error=146"), r.out)
            XCTAssertTrue(r.out.contains("script ended, but screen check-user waits for an answer"), r.out)
        }
        /// The server's own record of the document read for `user` (the audit's `idv.document_read`).
        func documentRead(_ user: String) throws -> JSONValue {
            let audit = try server.admin(["audit", "--limit", "500"])
            XCTAssertEqual(audit.status, 0, audit.errors)
            let entries = try JSONDecoder().decode(JSONValue.self, from: audit.stdout)
            let list = entries.arrayValue ?? entries["entries"]?.arrayValue ?? []
            let reads = list.filter { $0["action"]?.stringValue == "idv.document_read" && $0["user_id"]?.stringValue == user }
            XCTAssertEqual(reads.count, 1, "\(user): \(reads)")
            return try XCTUnwrap(reads.first?["details"])
        }
        func loggedIn(_ out: String) -> Bool { out.contains("RESULT flow=activation event=onUserLoggedIn error=0 status=100 verdict=MATCHED") }

        // The genuine chip, opened with the server's digest of the MRZ it read on the photo (PACE with the MRZ
        // password; no chip-access answer in the script: asking the holder would leave the script short): CA and AA
        // run; the server verifies AA on its own challenge and the chip is genuine: "Chip verification" PASSED, the
        // document VALID, the activation ends logged in.
        var link = try ChipLab.insert(VirtualChip(folder: try ChipFolder(directory: chip)), self)
        let genuine = try activate([], then: toLoggedIn)
        XCTAssertEqual(genuine.status, 0, genuine.out)
        XCTAssertTrue(genuine.out.contains("challenge_mode: IDV_ACTIVATION (8)"), genuine.out)
        XCTAssertTrue(genuine.out.contains("Its chip opens with the MRZ read from the photo."), genuine.out)
        XCTAssertFalse(genuine.out.contains("give its CAN"), genuine.out)
        XCTAssertTrue(genuine.out.contains("chip protocols: PACE CA AA"), genuine.out)
        XCTAssertTrue(genuine.out.contains("password MRZ"), genuine.out)
        XCTAssertTrue(genuine.out.contains("check: Chip verification: PASSED"), genuine.out)
        XCTAssertTrue(genuine.out.contains("overall_status: VALID"), genuine.out)
        XCTAssertTrue(loggedIn(genuine.out), genuine.out)
        var read = try documentRead(genuine.user)
        XCTAssertEqual(read["flow"]?.stringValue, "idv.activation")
        XCTAssertEqual(read["chip"]?.stringValue, "genuine")
        XCTAssertEqual(read["active_authentication"]?.stringValue, "verified")
        XCTAssertEqual(read["active_authentication_detail"]?.stringValue, "rsa-iso9796-2-sha1")
        XCTAssertEqual(read["chip_authentication_reported"]?.stringValue, "verified")
        XCTAssertEqual(read["result"]?.stringValue, "VALID")

        // Another holder's page on this chip: the chip refuses the server's digest, and only then is the holder asked;
        // a wrong CAN is said and asked again, a wrong MRZ (another birth date) too; the holder then skips the chip:
        // the page goes alone, the chip is not verified ("Chip verification" NOT_PERFORMED) and the activation goes on
        // with the page's portrait.
        var badMRZ = mrz
        let line2 = Array(badMRZ[1])
        badMRZ[1] = String(line2[0..<13]) + (line2[13] == "0" ? "1" : "0") + String(line2[14...])
        let denied = try activate(["can \(wrongCAN)", "mrz \(badMRZ.joined(separator: " "))", "skip"], page: otherPage, then: toLoggedIn)
        XCTAssertEqual(denied.status, 0, denied.out)
        XCTAssertTrue(denied.out.contains("chip: the chip refused the MRZ read from the photo; give its CAN or MRZ"), denied.out)
        XCTAssertEqual(denied.out.components(separatedBy: "chip: access denied — the chip refused the MRZ or CAN").count - 1, 2, denied.out)
        XCTAssertTrue(denied.out.contains("chip: not read (skipped)"), denied.out)
        XCTAssertTrue(denied.out.contains("check: Chip verification: NOT_PERFORMED"), denied.out)
        read = try documentRead(denied.user)
        XCTAssertEqual(read["active_authentication"] ?? .null, .null, "\(read)")
        XCTAssertNotEqual(read["chip"]?.stringValue, "genuine")

        // A clone replaying the genuine chip's answer to an earlier challenge: the server sees a signature over
        // another challenge than its own — replayed, INVALID; the activation asks for another document.
        let recorded = try ChipLab.read(try AccessKey.canNumber(can), options: ChipReadOptions(activeAuthenticationChallenge: Array(repeating: 0x5A, count: 8)))
        guard case .signed(_, let oldSignature) = recorded.activeAuthentication else { return XCTFail("\(recorded.activeAuthentication)") }
        ChipLab.remove(link)
        let clone = VirtualChip(folder: try ChipFolder(directory: chip))
        clone.faults = [.replayActiveAuthentication(signature: oldSignature)]
        link = try ChipLab.insert(clone, self)
        let replayed = try activate([], then: cancelled)
        XCTAssertTrue(replayed.out.contains("check: Chip verification: FAILED"), replayed.out)
        XCTAssertTrue(replayed.out.contains("document_error: The chip's response was made for another verification, not this one: it may have been replayed."), replayed.out)
        XCTAssertTrue(replayed.out.contains("overall_status: INVALID"), replayed.out)
        endedCancelled(replayed)
        XCTAssertFalse(loggedIn(replayed.out), replayed.out)
        read = try documentRead(replayed.user)
        XCTAssertEqual(read["chip"]?.stringValue, "active_authentication_replayed")
        XCTAssertEqual(read["active_authentication"]?.stringValue, "failed")
        XCTAssertEqual(read["active_authentication_detail"]?.stringValue.map { $0.hasPrefix("challenge_replayed") }, true, "\(read)")
        XCTAssertEqual(read["result"]?.stringValue, "INVALID")

        // A copy: the genuine files, another AA key: the signature does not verify with DG15's key — failed, INVALID,
        // with its own sentence on the document details.
        ChipLab.remove(link)
        link = try ChipLab.insert(VirtualChip(folder: try ChipFolder(directory: chip + "/variants/copy")), self)
        let copy = try activate([], then: cancelled)
        XCTAssertTrue(copy.out.contains("chip protocols: ") && copy.out.contains(" AA\n"), copy.out)
        XCTAssertTrue(copy.out.contains("check: Chip verification: FAILED"), copy.out)
        XCTAssertTrue(copy.out.contains("document_error: The chip failed to prove it holds its own key: it may be a copy of a genuine chip."), copy.out)
        XCTAssertTrue(copy.out.contains("overall_status: INVALID"), copy.out)
        endedCancelled(copy)
        XCTAssertFalse(loggedIn(copy.out), copy.out)
        read = try documentRead(copy.user)
        XCTAssertEqual(read["chip"]?.stringValue, "active_authentication_failed")
        XCTAssertEqual(read["active_authentication_detail"]?.stringValue.map { $0.hasPrefix("signature_invalid") }, true, "\(read)")
        // The replay's sentence is its own, not the copy's.
        XCTAssertFalse(replayed.out.contains("it may be a copy of a genuine chip"), replayed.out)
        ChipLab.remove(link)
    }
}
