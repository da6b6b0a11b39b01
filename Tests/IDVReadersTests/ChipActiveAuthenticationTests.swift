import Foundation
import IDVCore
import IDVEngine
import IDVServerTestSupport
import IDVTestSupport
import XCTest

/// Active Authentication (ICAO 9303-11 §6.1) over the session's own challenge, on a real `idvd serve` with the chips
/// `idvd specimen --chip` writes: the chip signs the `chip_challenge` of the upload challenge with its folder's
/// `private/aa-key.pem` (IDVTestSupport `SimulatedChip`, OpenSSL), the server verifies it with DG15's key after
/// passive authentication. Genuine (RSA-2048 and ECDSA P-256), a copy, replayed signatures, a chip without AA, AA
/// not run, a replayed answer, a fresh challenge per upload, and `chip.require_genuine`.
final class ChipActiveAuthenticationTests: XCTestCase {
    typealias Scan = DocumentScanStatusReport

    func nfc(_ s: Scan) -> [String] { [s.nfcScanStatus ?? "-", s.nfcScanStatusReasonCode ?? "-", s.overallDocumentStatus.rawValue] }
    func chipCheck(_ s: Scan) -> DocumentScanStatus? { s.checksPerformed.first { $0.checkName == "Chip verification" }?.checkStatus }

    func testActiveAuthenticationOverTheSessionsChallenge() throws {
        try RealImages.requireModels()
        let server = try ServerProcess()
        let (page, chip, pki) = try ChipFlowTests.specimen(in: server.dir)
        func variant(_ name: String) -> URL { chip.appendingPathComponent("variants/\(name)") }
        try server.start()
        _ = try server.admin(["trust", "import", pki.appendingPathComponent("csca.cer").path, pki.appendingPathComponent("csca.crl").path])
        let api = try ChipFlowTests.loggedIn(server, "aaron")

        // The upload challenge carries a fresh 8-byte challenge, expiring with the flow.
        try api.startFlow("idv.postlogin.document_scan", ["reason": "AA"])
        let upload1 = try XCTUnwrap(try api.answer(["is_confirm": true]).challenge)
        let c1 = try XCTUnwrap(SimulatedChip.challenge(in: upload1.payload))
        XCTAssertEqual(c1.activeAuthenticationChallenge.count, 16)
        XCTAssertEqual(c1.challenge?.count, 8)
        XCTAssertGreaterThan(c1.expiresAt, Int(Date().timeIntervalSince1970))
        XCTAssertLessThanOrEqual(c1.expiresAt, Int(Date().timeIntervalSince1970) + 900)
        // A genuine chip answering it: passive authentication + Active Authentication = genuine, VALID.
        let first = try ChipFlowTests.chipAnswer(chip, to: upload1)
        let genuine = try XCTUnwrap(try api.uploadChip(page, first).event).payload.decode(AdditionalDocumentScanDetails.self).documentStatus
        XCTAssertEqual(nfc(genuine), ["OK", "genuine", "OK"], "\(genuine.errorList) \(genuine.warningList)")
        XCTAssertEqual(genuine.nfcScanStatusReason, ChipVerificationReason.genuine.sentence)
        XCTAssertEqual(chipCheck(genuine), .ok)
        // The same answer again (the same challenge id): refused as replayed, nothing recorded.
        let again = try api.answer(["pages": [["page_index": 0, "image": .string(page.base64EncodedString())]], "chip": first],
                                   to: upload1, route: "/v1/session/upload")
        XCTAssertEqual(again.error?.longErrorCode, IDVErrorCode.replayedAnswer.rawValue, "\(String(describing: again.error))")

        // The ECDSA P-256 variant (ecdsa-plain-SHA256 named in DG14): genuine too.
        XCTAssertEqual(nfc(try ChipFlowTests.scan(api, page, chipDir: variant("aa-ecdsa"))), ["OK", "genuine", "OK"])

        // A copy: the genuine files, another chip's key answers. INVALID with its own reason and sentence.
        let copy = try ChipFlowTests.scan(api, page, chipDir: variant("copy"))
        XCTAssertEqual(nfc(copy), ["ERROR", "active_authentication_failed", "ERROR"])
        XCTAssertEqual(copy.errorList, [ChipVerificationReason.activeAuthenticationFailed.sentence])
        XCTAssertEqual(chipCheck(copy), .error)

        // Replayed: the first session's answer (its challenge echoed) in another session's step …
        let api2 = try ChipFlowTests.loggedIn(server, "mallory")
        let echoed = try ChipFlowTests.scan(api2, page) { _ in first }
        XCTAssertEqual(nfc(echoed), ["ERROR", "active_authentication_replayed", "ERROR"])
        XCTAssertEqual(echoed.errorList, [ChipVerificationReason.activeAuthenticationReplayed.sentence])
        // … and the old signature under this step's challenge: the chip's own key signed another challenge.
        let oldSignature = try XCTUnwrap(first["active_authentication"]?["signature"])
        let relabelled = try ChipFlowTests.scan(api2, page) { upload in
            var c = try ChipFlowTests.chipAnswer(chip, to: upload)
            let now = try XCTUnwrap(SimulatedChip.challenge(in: upload.payload)?.activeAuthenticationChallenge)
            XCTAssertNotEqual(now, c1.activeAuthenticationChallenge, "every upload gets its own challenge")
            c = JSONValue.object((c.objectValue ?? [:]).merging(["active_authentication": ["challenge": .string(now), "signature": oldSignature]]) { $1 })
            return c
        }
        XCTAssertEqual(nfc(relabelled), ["ERROR", "active_authentication_replayed", "ERROR"])

        // No DG15: the chip cannot prove it is not a copy. WARNING.
        let noAA = try ChipFlowTests.scan(api, page, chipDir: variant("no-aa"))
        XCTAssertEqual(nfc(noAA), ["WARNING", "active_authentication_not_supported", "WARNING"])
        XCTAssertEqual(noAA.warningList, [ChipVerificationReason.activeAuthenticationNotSupported.sentence])
        XCTAssertEqual(chipCheck(noAA), .warning)
        // DG15 there, no signature sent (the files alone, as `idv --chip-dir` sends them): not performed. WARNING.
        let notRun = try ChipFlowTests.scan(api, page, chipDir: chip, aa: false)
        XCTAssertEqual(nfc(notRun), ["WARNING", "active_authentication_not_performed", "WARNING"])
        XCTAssertEqual(notRun.warningList, [ChipVerificationReason.activeAuthenticationNotPerformed.sentence])
        XCTAssertEqual(chipCheck(notRun), .warning)

        // An upload asked again (an unreadable page) brings a new challenge; a signature over the first is replayed.
        try api.startFlow("idv.postlogin.document_scan", ["reason": "AA retry"])
        let u1 = try XCTUnwrap(try api.answer(["is_confirm": true]).challenge)
        let bad = try api.uploadChip(Data("not an image".utf8), try ChipFlowTests.chipAnswer(chip, to: u1))
        let u2 = try XCTUnwrap(bad.challenge, "\(String(describing: bad.error))")
        XCTAssertEqual(u2.name, "uploadIDVDocumentPages")
        XCTAssertNotEqual(SimulatedChip.challenge(in: u2.payload), SimulatedChip.challenge(in: u1.payload))
        let stale = try XCTUnwrap(try api.uploadChip(page, try ChipFlowTests.chipAnswer(chip, to: u1)).event)
            .payload.decode(AdditionalDocumentScanDetails.self).documentStatus
        XCTAssertEqual(nfc(stale), ["ERROR", "active_authentication_replayed", "ERROR"])

        // Chip Authentication as the client reports it is recorded, not judged.
        let reported = try ChipFlowTests.scan(api, page) { upload in
            let challenge = try XCTUnwrap(SimulatedChip.challenge(in: upload.payload)?.challenge)
            return try JSONValue(encoding: try SimulatedChip.payload(chip, challenge: challenge, chipAuthentication: .failed))
        }
        XCTAssertEqual(nfc(reported), ["OK", "genuine", "OK"])
        XCTAssertEqual(server.stop(), 0)

        // The audit names each outcome, with the reader's fault code (no signature, challenge or key bytes).
        let reads = try XCTUnwrap(try server.admin(["audit", "--limit", "100000"])["entries"]?.arrayValue)
            .filter { $0["action"] == "idv.document_read" && $0["details"]?["result"] != "unreadable" }.compactMap { $0["details"] }
        XCTAssertEqual(reads.map { $0["chip"]?.stringValue ?? "-" },
                       ["genuine", "genuine", "active_authentication_failed", "active_authentication_replayed", "active_authentication_replayed",
                        "active_authentication_not_supported", "active_authentication_not_performed", "active_authentication_replayed", "genuine"])
        XCTAssertEqual(reads.map { $0["active_authentication"]?.stringValue ?? "-" },
                       ["verified", "verified", "failed", "failed", "failed", "not_supported", "not_performed", "failed", "verified"])
        XCTAssertEqual(reads[1]["active_authentication_detail"], "ecdsa-plain-sha256")
        XCTAssertTrue(["signature_invalid/iso9796_2_bad_padding", "signature_invalid/iso9796_2_bad_trailer", "signature_invalid/signature_out_of_range"]
                        .contains(reads[2]["active_authentication_detail"]?.stringValue ?? "-"), "\(reads[2])")
        XCTAssertEqual(reads[3]["active_authentication_detail"], "challenge_replayed/challenge_not_this_steps")
        XCTAssertEqual(reads[4]["active_authentication_detail"], "challenge_replayed/digest_mismatch")
        XCTAssertEqual(reads[8]["chip_authentication_reported"], "failed")
        XCTAssertEqual(reads[0]["chip_authentication_reported"], .null)
    }

    /// `chip.require_genuine`: a chip that did not prove itself genuine is INVALID, not WARNING; a genuine one passes.
    func testRequireGenuineMakesACopyNotExcludedInvalid() throws {
        try RealImages.requireModels()
        let server = try ServerProcess(settings: ["chip.require_genuine": "true"])
        let (page, chip, pki) = try ChipFlowTests.specimen(in: server.dir)
        try server.start()
        _ = try server.admin(["trust", "import", pki.appendingPathComponent("csca.cer").path])
        let api = try ChipFlowTests.loggedIn(server, "greta")
        XCTAssertEqual(nfc(try ChipFlowTests.scan(api, page, chipDir: chip)), ["OK", "genuine", "OK"])
        let noAA = try ChipFlowTests.scan(api, page, chipDir: chip.appendingPathComponent("variants/no-aa"))
        XCTAssertEqual(nfc(noAA), ["ERROR", "active_authentication_not_supported", "ERROR"])
        XCTAssertEqual(noAA.errorList, [ChipVerificationReason.activeAuthenticationNotSupported.sentence])
        XCTAssertEqual(chipCheck(noAA), .error)
        XCTAssertEqual(nfc(try ChipFlowTests.scan(api, page, chipDir: chip, aa: false)), ["ERROR", "active_authentication_not_performed", "ERROR"])
        XCTAssertEqual(server.stop(), 0)
    }
}
