import Foundation
import IDVCore
import FaceKit
import IDVEngine
import IDVRuntime
import IDVOperations
import EMRTD
import IDVReaders
import IDVTestSupport
import IDVServerTestSupport
import XCTest

/// The eMRTD chip in the document step, on a real `idvd serve` (real DocumentReader, real EMRTD
/// passive authentication with OpenSSL, real FaceKit), with the chips `idvd specimen --chip` writes:
/// the genuine chip of the printed specimen, its eight tampered variants, and the test PKI's CSCAs
/// and CRL imported with `idvd admin trust import`.
final class ChipFlowTests: XCTestCase {
    /// `idvd specimen` seed 9 (TD3, valid until 2032, portrait = the person of the selfie frames) with its chip.
    static func specimen(in dir: URL) throws -> (page: Data, chip: URL, pki: URL) {
        let r = try IDVDBinary.run(["specimen", "--format", "td3", "--seed", "9", "--out", dir.path, "--jpeg", "90", "--chip",
                                    "--portrait", RealImages.fixtures.appendingPathComponent("katie_portrait.jpg").path])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        return (try Data(contentsOf: dir.appendingPathComponent("specimen-9.jpg")), dir.appendingPathComponent("specimen-9.chip"),
                dir.appendingPathComponent("test-pki"))
    }

    /// The chip files of `dir` as the document answer's `payload.chip` (IDVCore `ChipFilesPayload`).
    static func chipPayload(_ dir: URL) throws -> JSONValue {
        func b64(_ name: String) throws -> String { try Data(contentsOf: dir.appendingPathComponent(name)).base64EncodedString() }
        var groups: [String: JSONValue] = [:]
        for n in 1...16 where FileManager.default.fileExists(atPath: dir.appendingPathComponent("DG\(n).bin").path) {
            groups[String(n)] = .string(try b64("DG\(n).bin"))
        }
        return ["sod": .string(try b64("EF_SOD.bin")), "com": .string(try b64("EF_COM.bin")), "data_groups": .object(groups)]
    }

    /// The upload answer's `payload.chip` for the chip folder `dir` answering `upload`'s chip challenge as the chip
    /// would (IDVTestSupport `SimulatedChip`: `private/aa-key.pem` signs the session's challenge); `aa` false sends the
    /// files alone (Active Authentication not run).
    static func chipAnswer(_ dir: URL, to upload: WireChallenge, aa: Bool = true) throws -> JSONValue {
        let challenge = aa ? try XCTUnwrap(SimulatedChip.challenge(in: upload.payload)?.challenge, "no chip_challenge in \(upload.name)") : nil
        return try JSONValue(encoding: try SimulatedChip.payload(dir, challenge: challenge))
    }

    static func loggedIn(_ server: ServerProcess, _ user: String) throws -> API {
        let code = try server.createUser(user)
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": .string(user)])
        try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(try api.answer(["password": "correct horse 42"]).event?.name, "onUserLoggedIn")
        return api
    }

    /// One additional document scan (seed 003) of `page` with `chip`; its `document_status`.
    static func scan(_ api: API, _ page: Data, chip: JSONValue, file: StaticString = #filePath, line: UInt = #line) throws -> DocumentScanStatusReport {
        try scan(api, page, file: file, line: line) { _ in chip }
    }

    /// One additional document scan (seed 003) of `page` with the chip answer `chip` makes for the upload challenge
    /// (its `chip_challenge`); its `document_status`.
    static func scan(_ api: API, _ page: Data, file: StaticString = #filePath, line: UInt = #line,
                     chip: (WireChallenge) throws -> JSONValue) throws -> DocumentScanStatusReport {
        try api.startFlow("idv.postlogin.document_scan", ["reason": "Chip check"])
        let upload = try XCTUnwrap(try api.answer(["is_confirm": true]).challenge, file: file, line: line)
        XCTAssertEqual(upload.name, "uploadIDVDocumentPages", file: file, line: line)
        let reply = try api.uploadChip(page, try chip(upload))
        let event = try XCTUnwrap(reply.event, "\(String(describing: reply.error))", file: file, line: line)
        return try event.payload.decode(AdditionalDocumentScanDetails.self).documentStatus
    }

    /// A scan with the chip folder `dir` answering the session's own chip challenge (Active Authentication run).
    static func scan(_ api: API, _ page: Data, chipDir dir: URL, aa: Bool = true, file: StaticString = #filePath, line: UInt = #line) throws -> DocumentScanStatusReport {
        try scan(api, page, file: file, line: line) { try chipAnswer(dir, to: $0, aa: aa) }
    }

    func testSpecimenChipsOnRealIdvdGenuineTamperedUntrustedAndRequired() throws {
        try RealImages.requireModels()
        let server = try ServerProcess()
        let (page, chipDir, pki) = try Self.specimen(in: server.dir)
        try server.start()
        // Trust from the store, imported into the running server's database: the test CSCA and its
        // CRL (which revokes the "revoked-dsc" signer).
        let imported = try XCTUnwrap(try server.admin(["trust", "import", pki.appendingPathComponent("csca.cer").path,
                                                       pki.appendingPathComponent("csca.crl").path]).arrayValue)
        XCTAssertEqual(imported.compactMap { $0["kind"]?.stringValue }, ["csca_certificate", "crl"])
        let api = try Self.loggedIn(server, "nora")

        // The genuine chip: passive authentication passes, DG1 equals the printed MRZ, and the chip signs the
        // session's own challenge (Active Authentication): genuine.
        let genuine = try Self.scan(api, page, chipDir: chipDir)
        XCTAssertEqual(genuine.isNFCDocument, true)
        XCTAssertEqual(genuine.nfcScanStatus, "OK")
        XCTAssertEqual(genuine.nfcScanStatusReasonCode, "genuine")
        XCTAssertEqual(genuine.nfcScanStatusReason, ChipVerificationReason.genuine.sentence)
        XCTAssertEqual(genuine.overallDocumentStatus, .ok, "\(genuine.errorList) \(genuine.warningList)")
        XCTAssertEqual(genuine.checksPerformed.first { $0.checkName == "Chip verification" }?.checkStatus, .ok)

        // Without chip data: the page alone, NOT DONE.
        try api.startFlow("idv.postlogin.document_scan", ["reason": "Page only"])
        try api.answer(["is_confirm": true])
        let pageOnly = try XCTUnwrap(try api.uploadPages([page]).event).payload.decode(AdditionalDocumentScanDetails.self).documentStatus
        XCTAssertEqual(pageOnly.isNFCDocument, false)
        XCTAssertEqual(pageOnly.nfcScanStatus, "NOT DONE")
        XCTAssertEqual(pageOnly.nfcScanStatusReasonCode, "no_chip_data")
        XCTAssertEqual(pageOnly.checksPerformed.first { $0.checkName == "Chip verification" }?.checkStatus, .notDone)

        // Every tampered variant fails with its own reason; forged or altered chips make the document INVALID.
        let expected: [(String, DocumentScanStatus, String)] = [
            ("dg1-byte-changed", .error, "data_group_hash_mismatch"),
            ("dg2-swapped", .error, "data_group_hash_mismatch"),
            ("security-object-changed", .error, "security_object_digest_mismatch"),
            ("signature-corrupted", .error, "signature_invalid"),
            ("revoked-dsc", .error, "document_signer_revoked"),
            ("expired-dsc", .warning, "certificate_not_valid_now"),
            ("wrong-csca-key", .warning, "csca_signature_invalid"),
            // Signed under another state's CSCA (the Netherlands', trusted too): every passive-authentication step
            // passes, but the signer's country is not the Utopian document's (ICAO 9303-12 §7.1).
            ("foreign-csca", .error, "signer_country_mismatch"),
        ]
        for (variant, status, code) in expected {
            let s = try Self.scan(api, page, chipDir: chipDir.appendingPathComponent("variants/\(variant)"))
            XCTAssertEqual(s.isNFCDocument, true, variant)
            XCTAssertEqual(s.nfcScanStatusReasonCode, code, variant)
            XCTAssertEqual(s.nfcScanStatus, status == .error ? "ERROR" : "WARNING", variant)
            XCTAssertEqual(s.overallDocumentStatus, status, "\(variant): \(s.errorList) \(s.warningList)")
            XCTAssertEqual(s.checksPerformed.first { $0.checkName == "Chip verification" }?.checkStatus, .error, variant)
            if variant == "foreign-csca" {
                XCTAssertEqual(s.nfcScanStatusReason, "The chip was signed by a certificate of country NL, not of UTO, the state that issued the document; another state cannot vouch for it.")
                XCTAssertTrue(s.errorList.contains(s.nfcScanStatusReason ?? "-"), "\(s.errorList)")
            }
        }

        // The CSCA removed (a running server uses the change at once): unknown CSCA is a WARNING.
        let csca = try XCTUnwrap(imported.first { $0["kind"] == "csca_certificate" }?["id"]?.stringValue)
        XCTAssertEqual(try server.admin(["trust", "remove", csca])["id"]?.stringValue, csca)
        let untrusted = try Self.scan(api, page, chipDir: chipDir)
        XCTAssertEqual(untrusted.nfcScanStatusReasonCode, "csca_unknown")
        XCTAssertEqual(untrusted.overallDocumentStatus, .warning)
        XCTAssertEqual(server.stop(), 0)

        // With chip.require_trusted_csca the same chip makes the document INVALID.
        let strict = try ServerProcess(settings: ["chip.require_trusted_csca": "true"], dir: server.dir)
        try strict.start()
        let api2 = try Self.loggedIn(strict, "otto")
        let required = try Self.scan(api2, page, chipDir: chipDir)
        XCTAssertEqual(required.nfcScanStatusReasonCode, "csca_unknown")
        XCTAssertEqual(required.nfcScanStatus, "ERROR")
        XCTAssertEqual(required.overallDocumentStatus, .error)
        XCTAssertEqual(strict.stop(), 0)
        let audit = try strict.admin(["audit", "--limit", "100000"])
        let entries = try XCTUnwrap(audit["entries"]?.arrayValue)
        XCTAssertEqual(entries.filter { $0["action"] == "admin.trust_import" }.count, 2)
        XCTAssertEqual(entries.filter { $0["action"] == "admin.trust_remove" }.count, 1)
        XCTAssertEqual(audit["chain_valid"], true)
    }

    /// KYC with the chip: the document confirmation carries the real "Chip verification" result, the
    /// selfie is matched against DG2 (the confirmation shows exactly the portrait `idvd chip verify
    /// --portrait-out` decodes from DG2) and the audit names the reference.
    func testKYCWithChipMatchesTheSelfieAgainstTheChipPortrait() throws {
        try RealImages.requireModels()
        let katie = try RealImages.frames("katie_live")
        let server = try ServerProcess()
        let (page, chipDir, pki) = try Self.specimen(in: server.dir)
        let dg2 = server.dir.appendingPathComponent("dg2.jpg")
        let cli = try IDVDBinary.run(["chip", "verify", "--dir", chipDir.path, "--trust", pki.path, "--portrait-out", dg2.path])
        XCTAssertEqual(cli.status, 0, String(decoding: cli.stderr, as: UTF8.self))
        try server.start()
        _ = try server.admin(["trust", "import", pki.appendingPathComponent("csca.cer").path])
        let api = try Self.loggedIn(server, "kira")
        try api.startFlow("idv.postlogin.kyc", ["reason": "KYC"])
        let upload = try XCTUnwrap(try api.answer(["is_confirm": true]).challenge)
        let confirm = try XCTUnwrap(try api.uploadChip(page, try Self.chipAnswer(chipDir, to: upload)).challenge, server.serverLog())
        XCTAssertEqual(confirm.name, "getIDVConfirmDocumentDetails")
        let details = try confirm.payload.decode(DocumentDetails.self).responseData
        // Seed 002's "Chip verification" says which: PASSED for a genuine chip (Active Authentication verified).
        XCTAssertEqual(details.checksPerformed.first { $0.checkName == "Chip verification" }?.result, .passed)
        XCTAssertEqual(details.overallStatus, .valid, "\(details.errors) \(details.warnings)")
        XCTAssertEqual(try api.answer(["is_confirm": true]).challenge?.name, "getIDVSelfieProcessStartConfirmation")
        try api.answer(["is_confirm": true])
        let selfie = try XCTUnwrap(try api.uploadFrames(katie).challenge).payload.decode(SelfieDetails.self).responseData
        XCTAssertEqual(selfie.biometricResult.displayText, .matched, server.serverLog())
        let shown = try XCTUnwrap(selfie.documentDetail?.documentInfo.portraitImage)
        XCTAssertEqual(Data(base64Encoded: shown), try Data(contentsOf: dg2), "the reference is DG2's portrait")
        try api.answer(["action": "continue-flow"])
        XCTAssertTrue(try XCTUnwrap(try api.answer(["is_opt_in": false]).event).payload.decode(KYCResponse.self).isSuccess)
        XCTAssertEqual(server.stop(), 0)
        let entries = try XCTUnwrap(try server.admin(["audit", "--limit", "100000"])["entries"]?.arrayValue)
        XCTAssertEqual(entries.first { $0["action"] == "idv.selfie_verified" }?["details"]?["reference"], "chip")
        let read = entries.first { $0["action"] == "idv.document_read" }?["details"]
        XCTAssertEqual(read?["chip"], "genuine")
        XCTAssertEqual(read?["active_authentication"], "verified")
        XCTAssertEqual(read?["active_authentication_detail"], "rsa-iso9796-2-sha256")
        // What was judged, by SHA-256 of the bytes uploaded (issue #37): the page and the chip's EF.SOD, then the frames.
        func sha(_ d: Data) -> JSONValue { .string(TestImages.key(d)) }
        XCTAssertEqual(read?["images_judged"], [["kind": "document_front", "sha256": sha(page)],
                                                ["kind": "chip_sod", "sha256": sha(try Data(contentsOf: chipDir.appendingPathComponent("EF_SOD.bin")))]])
        let frames = entries.last { $0["action"] == "idv.selfie_verified" }?["details"]?["images_judged"]?.arrayValue ?? []
        XCTAssertEqual(Set(frames.compactMap { $0["sha256"] }), Set(katie.map(sha)))
        XCTAssertEqual(frames.map { $0["count"]?.intValue ?? 1 }.reduce(0, +), katie.count)
        XCTAssertNotNil(read?["policy_version"]?.stringValue)
        XCTAssertEqual(read?["policy_version"], entries.last { $0["action"] == "idv.selfie_verified" }?["details"]?["policy_version"])
    }

    /// The chip after the pages (`"chip_follows": true`, docs/PROTOCOL.md): the server reads the page, then asks
    /// `readIDVDocumentChip` with a fresh chip challenge and SHA-1(MRZ_information) of the MRZ it read (ICAO 9303-11
    /// §9.7.2, spelled here from the MRZ's fields); the chip files answering it give the same verdict as the one-part
    /// upload; a skip is the page alone; `chip_follows` with `chip`, or an empty chip answer, is refused (1001).
    func testTheChipAfterThePagesIsKeyedByTheMRZTheServerRead() throws {
        try RealImages.requireModels()
        let server = try ServerProcess()
        let (page, chipDir, pki) = try Self.specimen(in: server.dir)
        try server.start()
        _ = try server.admin(["trust", "import", pki.appendingPathComponent("csca.cer").path, pki.appendingPathComponent("csca.crl").path])
        let api = try Self.loggedIn(server, "olga")
        let pages: JSONValue = [["page_index": 0, "image": .string(page.base64EncodedString())]]
        // MRZ_information of the TD3 line 2: document number + check digit, birth date + check digit, expiry + check digit.
        let line2 = Array(try DG1([UInt8](try Data(contentsOf: chipDir.appendingPathComponent("DG1.bin")))).lines[1])
        let information = String(line2[0..<10]) + String(line2[13..<20]) + String(line2[21..<28])
        let expected = DigestAlgorithm.sha1.digest(Array(information.utf8))

        func askChip(_ reason: String) throws -> WireChallenge {
            try api.startFlow("idv.postlogin.document_scan", ["reason": .string(reason)])
            let upload = try XCTUnwrap(try api.answer(["is_confirm": true]).challenge)
            let both = try api.answer(["pages": pages, "chip_follows": true, "chip": try Self.chipPayload(chipDir)], to: upload, route: "/v1/session/upload")
            XCTAssertEqual(both.error?.longErrorCode, 1001, "\(String(describing: both.error))")
            let ask = try XCTUnwrap(try api.answer(["pages": pages, "chip_follows": true], to: upload, route: "/v1/session/upload").challenge)
            XCTAssertEqual(ask.name, WireName.readIDVDocumentChip)
            return ask
        }

        let ask = try askChip("Chip after the page")
        let request = try ask.payload.decode(DocumentChipReadRequest.self)
        XCTAssertEqual(request.digest, expected)
        XCTAssertEqual(request.mrzInformationDigest?.count, 40)
        XCTAssertFalse(request.canRequired)
        let challenge = try XCTUnwrap(request.chipChallenge?.challenge)
        let empty = try api.answer([:], to: ask, route: "/v1/session/upload")
        XCTAssertEqual(empty.error?.longErrorCode, 1001, "\(String(describing: empty.error))")
        let answered = try api.answer(["chip": try JSONValue(encoding: try SimulatedChip.payload(chipDir, challenge: challenge))],
                                      to: ask, route: "/v1/session/upload")
        let twoPart = try XCTUnwrap(answered.event, "\(String(describing: answered.error))").payload.decode(AdditionalDocumentScanDetails.self).documentStatus
        XCTAssertEqual(twoPart.nfcScanStatus, "OK")
        XCTAssertEqual(twoPart.nfcScanStatusReasonCode, "genuine")
        XCTAssertEqual(twoPart.overallDocumentStatus, .ok, "\(twoPart.errorList) \(twoPart.warningList)")
        // The same page and chip in one upload: the same verdict and checks.
        let onePart = try Self.scan(api, page, chipDir: chipDir)
        XCTAssertEqual(twoPart.checksPerformed.map(\.checkName), onePart.checksPerformed.map(\.checkName))
        XCTAssertEqual(twoPart.checksPerformed.map(\.checkStatus), onePart.checksPerformed.map(\.checkStatus))
        XCTAssertEqual(twoPart.nfcScanStatusReasonCode, onePart.nfcScanStatusReasonCode)

        // A skip: the page alone.
        let skipAsk = try askChip("Skip the chip")
        let skipped = try api.answer(["skip": true], to: skipAsk, route: "/v1/session/upload")
        let pageOnly = try XCTUnwrap(skipped.event, "\(String(describing: skipped.error))").payload.decode(AdditionalDocumentScanDetails.self).documentStatus
        XCTAssertEqual(pageOnly.nfcScanStatus, "NOT DONE")
        XCTAssertEqual(pageOnly.nfcScanStatusReasonCode, "no_chip_data")
        // The digest is never written to the server's log.
        XCTAssertFalse(((try? String(contentsOfFile: server.logPath, encoding: .utf8)) ?? "").contains(ChipHex.encode(expected)), "the digest in the log")
        XCTAssertEqual(server.stop(), 0)
    }

    /// Bad chip input is refused clearly and changes nothing stored: not base64, an unknown data
    /// group, a wrong shape (1001), an EF.SOD that is garbage CMS, truncated, or declares 1 GB (1050).
    func testMalformedChipPayloadsAreRefusedWithNothingStored() throws {
        let server = try ServerProcess()
        let (page, chipDir, _) = try Self.specimen(in: server.dir)
        try server.start()
        let api = try Self.loggedIn(server, "ivan")
        try api.startFlow("idv.postlogin.document_scan", ["reason": "Bad chips"])
        let upload = try XCTUnwrap(try api.answer(["is_confirm": true]).challenge)
        XCTAssertEqual(upload.name, "uploadIDVDocumentPages")
        func auditCount() throws -> Int { try XCTUnwrap(try server.admin(["audit", "--limit", "100000"])["entries"]?.arrayValue).count }
        let before = try auditCount()
        let good = try Self.chipPayload(chipDir)
        let sod = try Data(contentsOf: chipDir.appendingPathComponent("EF_SOD.bin"))
        func with(sod bytes: Data) -> JSONValue { ["sod": .string(bytes.base64EncodedString()), "data_groups": good["data_groups"] ?? .emptyObject] }
        func with(extra: [String: JSONValue]) -> JSONValue { .object((good.objectValue ?? [:]).merging(extra) { $1 }) }
        func with(aa: JSONValue) -> JSONValue { with(extra: ["active_authentication": aa]) }
        let refusals: [(String, JSONValue, Int)] = [
            ("not base64", ["sod": "%%% not base64 %%%"], 1001),
            ("data group 17", ["sod": good["sod"] ?? .null, "data_groups": ["17": good["sod"] ?? .null]], 1001),
            ("an array", .array([]), 1001),
            ("garbage CMS", with(sod: Data((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })), 1050),
            ("truncated", with(sod: sod.prefix(sod.count / 2)), 1050),
            ("1 GB length", with(sod: Data([0x77, 0x84, 0x40, 0x00, 0x00, 0x00, 0x30, 0x00])), 1050),
            // The chip's answer to the challenge: a challenge that is not 8 bytes of hex, a signature that is not
            // base64 or is too long, an unknown Chip Authentication outcome, the wrong shape.
            ("AA challenge not hex", with(aa: ["challenge": "not hex at all!!", "signature": "AAAA"]), 1001),
            ("AA challenge 4 bytes", with(aa: ["challenge": "01020304", "signature": "AAAA"]), 1001),
            ("AA signature not base64", with(aa: ["challenge": "0102030405060708", "signature": "%%%"]), 1001),
            ("AA signature 2 KiB", with(aa: ["challenge": "0102030405060708", "signature": .string(Data(count: 2048).base64EncodedString())]), 1001),
            ("AA a string", with(aa: "signature"), 1001),
            ("CA outcome unknown", with(extra: ["chip_authentication": "maybe"]), 1001),
        ]
        for (what, chip, code) in refusals {
            let r = try api.answer(["pages": [["page_index": 0, "image": .string(page.base64EncodedString())]], "chip": chip],
                                   to: upload, route: "/v1/session/upload")
            XCTAssertEqual(r.error?.longErrorCode, code, "\(what): \(String(describing: r.error))")
            XCTAssertNil(r.challenge, what)
            XCTAssertFalse((r.error?.errorString ?? "").isEmpty, what)
        }
        XCTAssertEqual(try auditCount(), before, "nothing audited, nothing stored")
        // The same challenge still takes a good answer, with all its attempts.
        XCTAssertEqual(try XCTUnwrap(try api.current().challenge).attemptsLeft, upload.attemptsLeft)
        let ok = try api.answer(["pages": [["page_index": 0, "image": .string(page.base64EncodedString())]], "chip": good],
                                to: upload, route: "/v1/session/upload")
        XCTAssertEqual(try XCTUnwrap(ok.event).payload.decode(AdditionalDocumentScanDetails.self).documentStatus.isNFCDocument, true)
        XCTAssertEqual(server.stop(), 0)
    }

    /// `idvd admin trust import|list|remove`: checked before kept, kept once, listed, removed, audited;
    /// a file that is not trust material (or a master list whose signer is not trusted) is refused with nothing kept.
    /// A substituted printed photo: the page printed with another face (same identity, so the same
    /// MRZ) beside the genuine chip. Passive authentication passes and DG1 matches, but the printed
    /// portrait is not DG2's face: the document is WARNING with the reason; the genuine page stays OK.
    func testAPrintedPortraitThatIsNotTheChipsFaceMakesTheDocumentAWarning() throws {
        try RealImages.requireModels()
        let server = try ServerProcess()
        let (page, chipDir, pki) = try Self.specimen(in: server.dir)
        let swapped = server.dir.appendingPathComponent("swapped")
        let r = try IDVDBinary.run(["specimen", "--format", "td3", "--seed", "9", "--out", swapped.path, "--jpeg", "90",
                                    "--portrait", IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures/faces/obama-480p.jpg").path])
        XCTAssertEqual(r.status, 0, String(decoding: r.stderr, as: UTF8.self))
        let forged = try Data(contentsOf: swapped.appendingPathComponent("specimen-9.jpg"))
        try server.start()
        _ = try server.admin(["trust", "import", pki.appendingPathComponent("csca.cer").path])
        let api = try Self.loggedIn(server, "pia")
        let genuine = try Self.scan(api, page, chipDir: chipDir)
        XCTAssertEqual(genuine.overallDocumentStatus, .ok, "\(genuine.warningList)")
        let sentence = DocumentWording.sentence(DocumentReason.chipPortraitDiffers(distance: 0, threshold: 0))
        let s = try Self.scan(api, forged, chipDir: chipDir)
        XCTAssertEqual(s.nfcScanStatusReasonCode, "genuine", "the chip itself is genuine")
        XCTAssertEqual(s.overallDocumentStatus, .warning, "\(s.errorList) \(s.warningList)")
        XCTAssertEqual(s.warningList, [sentence])
    }

    /// The production comparer on the real specimen chips and their printed pages (testdata/emrtd:
    /// the same women): the holder's own pages within the image-to-image line at FMR 0.1 %, the
    /// other woman's beyond it.
    func testTheComparerTellsTheHolderFromAnotherPersonOnRealChipsAndPages() throws {
        try RealImages.requireModels()
        let data = TestData.shared
        let bdrChip = data.appendingPathComponent("emrtd/bsi2008-erika-mustermann")
        let nldChip = data.appendingPathComponent("emrtd/nld-specimen-2006-loes-meulendijk")
        let bdrPage = data.appendingPathComponent("mrz-images/specimens/100_pass-bdr.jpg")
        let nldPage = data.appendingPathComponent("mrz-images/specimens/98_pass-nld.jpg")
        for f in [bdrChip, nldChip, bdrPage, nldPage] where !FileManager.default.fileExists(atPath: f.path) {
            throw TestData.missing("\(f.path) (shared test data)")
        }
        let comparer = FaceKitPortraitComparer(engine: try FaceEngine.shared())
        func printed(_ page: URL) throws -> Data {
            try XCTUnwrap(try DocumentReaderAdapter().read(pages: [Data(contentsOf: page)]).portraitJPEG, page.lastPathComponent)
        }
        // DG2's face as the server's chip reader decodes it (JPEG 2000 through OpenJPEG, re-encoded as JPEG).
        func chipFace(_ dir: URL) throws -> Data {
            let bsi = FileManager.default.fileExists(atPath: dir.appendingPathComponent("EF_SOD.bin").path)
            let chip = ChipData(sod: try Data(contentsOf: dir.appendingPathComponent(bsi ? "EF_SOD.bin" : "ef011D.bin")),
                                dataGroups: [2: try Data(contentsOf: dir.appendingPathComponent(bsi ? "Datagroup2.bin" : "ef0102.bin"))])
            let evidence = try EMRTDChipVerifier().verify(chip, challenge: nil, printedMRZ: [], trust: [], now: 1_700_000_000)
            return try XCTUnwrap(evidence.portraitJPEG, dir.lastPathComponent)
        }
        let line = FaceMatchCalibration.threshold(.fmr1in1000, for: .imageToImage, model: .faceReidentification0095).distance
        let same = [try comparer.compare(printed: printed(bdrPage), chip: chipFace(bdrChip)),
                    try comparer.compare(printed: printed(nldPage), chip: chipFace(nldChip))].map { $0?.distance ?? 9 }
        let crossed = [try comparer.compare(printed: printed(bdrPage), chip: chipFace(nldChip)),
                       try comparer.compare(printed: printed(nldPage), chip: chipFace(bdrChip))].map { $0?.distance ?? 0 }
        for d in same { XCTAssertLessThan(d, line, "the holder's own printed portrait: \(same)") }
        for d in crossed { XCTAssertGreaterThan(d, line, "another person's: \(crossed)") }
        let e = try XCTUnwrap(try comparer.compare(printed: printed(bdrPage), chip: chipFace(bdrChip)))
        XCTAssertEqual(e.kind, .imageToImage)
        XCTAssertEqual(e.metric, .cosine)
        XCTAssertEqual(e.model, FaceDescriptorModel.faceReidentification0095.name)
        XCTAssertEqual(e.calibrated(.fmr1in1000)?.maxDistance, line)
    }

    func testTrustAdminCommands() throws {
        let server = try ServerProcess()
        let (_, chipDir, pki) = try Self.specimen(in: server.dir)
        _ = try server.admin(["create-user", "root", "--no-idv"])
        let csca = pki.appendingPathComponent("csca.cer").path, crl = pki.appendingPathComponent("csca.crl").path
        // Not trust material: refused, nothing kept (the CSCA given with it is not kept either).
        let bad = try IDVDBinary.run(["admin", "trust", "import", csca, chipDir.appendingPathComponent("DG1.bin").path, "--db", server.dbPath])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(String(decoding: bad.stderr, as: UTF8.self).contains("DG1.bin"), String(decoding: bad.stderr, as: UTF8.self))
        XCTAssertEqual(try server.admin(["trust", "list"]).arrayValue?.count, 0)
        let first = try XCTUnwrap(try server.admin(["trust", "import", csca, crl]).arrayValue)
        XCTAssertEqual(first.map { $0["added"] }, [true, true])
        // PEM bundles: Utopia's test CSCA (the specimen's issuing state) and the Netherlands' (the foreign-csca variant's).
        XCTAssertEqual(first[0]["cscas"], 2)
        XCTAssertEqual(first[1]["crls"], 2)
        XCTAssertEqual(try XCTUnwrap(try server.admin(["trust", "import", csca]).arrayValue).first?["added"], false, "kept once")
        let listed = try XCTUnwrap(try server.admin(["trust", "list"]).arrayValue)
        XCTAssertEqual(listed.compactMap { $0["source_name"]?.stringValue }.sorted(), ["csca.cer", "csca.crl"])
        let id = try XCTUnwrap(listed.first { $0["kind"] == "crl" }?["id"]?.stringValue)
        XCTAssertEqual(try server.admin(["trust", "remove", id])["kind"], "crl")
        XCTAssertEqual(try IDVDBinary.run(["admin", "trust", "remove", id, "--db", server.dbPath]).status, 2, "gone")
        XCTAssertEqual(try server.admin(["trust", "list"]).arrayValue?.count, 1)
        // A real master list (NL, ../shared/testdata/emrtd): its own CMS signature verifies, its signer is in the list.
        let ml = try TestData.sharedFolder("emrtd/pki/nl-csca").appendingPathComponent("NL_MASTERLIST_20211207.mls")
        let rows = try XCTUnwrap(try server.admin(["trust", "import", ml.path]).arrayValue)
        XCTAssertEqual(rows.first?["kind"], "master_list")
        XCTAssertEqual(rows.first?["cscas"], 306)
        let entries = try XCTUnwrap(try server.admin(["audit", "--limit", "1000"])["entries"]?.arrayValue)
        XCTAssertEqual(entries.filter { $0["action"] == "admin.trust_import" }.count, 3)
        XCTAssertEqual(entries.filter { $0["action"] == "admin.trust_remove" }.first?["details"]?["trust_id"]?.stringValue, id)
    }

    /// The real chips (../shared/testdata/emrtd) through the server's evidence and policy: each signer's country is
    /// its document's issuing state (BSI 2008 and HJP: DG1 `D`, DSC C=DE; NL 2006: NLD, C=NL), so no
    /// signer-country mismatch; their other findings (CSCA unknown, expired DSC) are unchanged.
    func testRealChipsSignersCountryIsTheirIssuingStates() throws {
        let root = try TestData.sharedFolder("emrtd")
        let trust = try CSCATrust.load(paths: [root.appendingPathComponent("pki/nl-csca").path])
        let policy = WorkflowPolicy()
        for (dir, state, dsc) in [("bsi2008-erika-mustermann", "D", ["DE"]), ("bsi-tr03105-5-hjp-erika-mustermann", "D", ["DE"]),
                                  ("nld-specimen-2006-loes-meulendijk", "NLD", ["NL"])] {
            let files = try ChipFiles.read(directory: root.appendingPathComponent(dir).path)
            let report = try ChipReader(trust: trust).read(files, at: Date(timeIntervalSince1970: 1_200_000_000))
            let aa = EMRTDChipVerifier.activeAuthentication(report, files: files, issued: nil, answer: nil)
            XCTAssertEqual(aa, files.dataGroups[15] == nil ? .notSupported : .notPerformed, dir)
            let e = EMRTDChipVerifier.evidence(of: report, printedMRZ: [], dataGroups: files.dataGroups.keys.sorted(), activeAuthentication: aa)
            let c = try XCTUnwrap(e.signerCountries, dir)
            XCTAssertEqual(c.issuingState, state, dir)
            XCTAssertEqual(c.documentSigner, dsc, dir)
            XCTAssertEqual(c.expectedCountries, dsc, dir)
            XCTAssertNil(c.csca, "\(dir): no trusted CSCA")
            XCTAssertNil(policy.signerCountryMismatch(e), dir)
            XCTAssertNotEqual(policy.chipReason(e), .signerCountryMismatch, dir)
        }
    }
}

extension API {
    /// `uploadIDVDocumentPages` with one page and the chip files beside it.
    @discardableResult
    func uploadChip(_ page: Data, _ chip: JSONValue) throws -> Reply {
        try answer(["pages": [["page_index": 0, "image": .string(page.base64EncodedString())]], "chip": chip], route: "/v1/session/upload")
    }
}
