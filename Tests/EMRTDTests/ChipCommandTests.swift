import EMRTD
import XCTest

/// `idvd specimen --chip` and `idvd chip verify` as a user runs them: real process, real files, exit codes.
final class ChipCommandTests: XCTestCase {
    struct Truth: Decodable {
        let mrz_lines: [String]
        let chip: Chip
        struct Chip: Decodable {
            let directory: String; let trust: String; let variants: [String: Variant]; let csca_country: String; let signer_country_differs: Bool
        }
        struct Variant: Decodable { let directory: String; let expected_failures: [String]; let signer_country_differs: Bool }
    }
    struct Output: Decodable {
        let passive_authentication: PA
        let mrz_cross_check: Cross?
        let issuing_state: State?
        let policy: Policy
        let active_authentication: AA
        struct PA: Decodable { let passed: Bool; let failures: [String]; let signer_countries: Countries }
        struct AA: Decodable { let outcome: String; let failure: String?; let mechanism: String?; let signature_algorithm: String? }
        struct Countries: Decodable, Equatable { let document_signer: [String]; let document_signer_issuer: [String]; let csca: [String]? }
        struct Cross: Decodable { let outcome: String }
        struct State: Decodable { let code: String; let x509_country_names: [String] }
        struct Policy: Decodable { let reason_code: String; let reason: String; let signer_country_mismatch: Mismatch? }
        struct Mismatch: Decodable, Equatable { let certificate: String; let countries: [String]; let issuing_state: String }
    }

    func testSpecimenChipsVerifyWithTheCLIAndEveryVariantFailsAsItsTruthSays() throws {
        let dir = try temporaryDirectory(self)
        let gen = try IDVDCommand.run(["specimen", "--chip", "--count", "2", "--format", "mixed", "--seed", "11", "--out", dir])
        XCTAssertEqual(gen.status, 0, gen.stderr)
        for seed in [11, 12] {
            let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: "\(dir)/specimen-\(seed).json")))
            XCTAssertTrue(FileManager.default.fileExists(atPath: "\(dir)/specimen-\(seed).png"))
            let trust = dir + "/" + truth.chip.trust
            let ok = try IDVDCommand.run(["chip", "verify", "--dir", dir + "/" + truth.chip.directory, "--trust", trust, "--mrz"] + truth.mrz_lines
                                  + ["--portrait-out", "\(dir)/portrait-\(seed).png"])
            XCTAssertEqual(ok.status, 0, ok.stderr)
            let out = try JSONDecoder().decode(Output.self, from: ok.stdout)
            XCTAssertTrue(out.passive_authentication.passed)
            XCTAssertEqual(out.mrz_cross_check?.outcome, "matches")
            // Files alone prove the data authentic, not that a chip answered: a copy is not excluded (exit 0, WARNING).
            XCTAssertEqual(out.policy.reason_code, "active_authentication_not_performed")
            XCTAssertEqual(out.active_authentication.outcome, "not_performed")
            XCTAssertNil(out.policy.signer_country_mismatch)
            // Signed under the test CSCA of the document's own issuing state.
            let state = try XCTUnwrap(out.issuing_state)
            XCTAssertEqual(state.x509_country_names, [truth.chip.csca_country])
            XCTAssertFalse(truth.chip.signer_country_differs)
            let c = truth.chip.csca_country
            XCTAssertEqual(out.passive_authentication.signer_countries, Output.Countries(document_signer: [c], document_signer_issuer: [c], csca: [c]))
            XCTAssertTrue(FileManager.default.fileExists(atPath: "\(dir)/portrait-\(seed).png"))
            XCTAssertEqual(truth.chip.variants.count, 11)
            for (name, v) in truth.chip.variants {
                let r = try IDVDCommand.run(["chip", "verify", "--dir", dir + "/" + v.directory, "--trust", trust])
                // The Active Authentication variants (aa-ecdsa, copy, no-aa) pass passive authentication.
                let passes = v.expected_failures.isEmpty && !v.signer_country_differs
                XCTAssertEqual(passes, ["aa-ecdsa", "copy", "no-aa"].contains(name), name)
                XCTAssertEqual(r.status, passes ? 0 : 1, "\(name): \(r.stderr)")
                let o = try JSONDecoder().decode(Output.self, from: r.stdout)
                XCTAssertEqual(o.passive_authentication.failures, v.expected_failures, name)
                XCTAssertEqual(v.signer_country_differs, name == "foreign-csca", name)
                XCTAssertEqual(o.policy.signer_country_mismatch != nil, v.signer_country_differs, name)
            }
            // Another state's trusted CSCA vouching for this document: passive authentication passes, the
            // server's policy refuses it with its own reason, naming both countries.
            let foreign = try XCTUnwrap(truth.chip.variants["foreign-csca"])
            let f = try JSONDecoder().decode(Output.self, from: try IDVDCommand.run(["chip", "verify", "--dir", dir + "/" + foreign.directory, "--trust", trust,
                                                                               "--mrz"] + truth.mrz_lines).stdout)
            XCTAssertTrue(f.passive_authentication.passed)
            XCTAssertEqual(f.policy.reason_code, "signer_country_mismatch")
            let other = c == "UT" ? "NL" : "UT"
            XCTAssertEqual(f.policy.signer_country_mismatch, Output.Mismatch(certificate: "document_signer", countries: [other], issuing_state: state.code))
            XCTAssertTrue(f.policy.reason.contains(other) && f.policy.reason.contains(state.code), f.policy.reason)
        }
    }

    func testExitCodesAndClearRefusals() throws {
        let dir = try temporaryDirectory(self)
        // Unusable input: exit 2 with one clear line on stderr, nothing on stdout.
        let garbage = dir + "/garbage.bin"
        try Data([0x77, 0x84, 0x40, 0x00, 0x00, 0x00, 0x30, 0x00]).write(to: URL(fileURLWithPath: garbage))
        let g = try IDVDCommand.run(["chip", "verify", "--sod", garbage])
        XCTAssertEqual(g.status, 2)
        XCTAssertTrue(g.stderr.contains("length 1073741824 declared at byte 1 runs past the end"), g.stderr)
        XCTAssertTrue(g.stdout.isEmpty)
        let cms = dir + "/cms.bin"
        try Data(DER.tlv(0x77, Array(repeating: 0x42, count: 40))).write(to: URL(fileURLWithPath: cms))
        let c = try IDVDCommand.run(["chip", "verify", "--sod", cms])
        XCTAssertEqual(c.status, 2)
        XCTAssertTrue(c.stderr.contains("EF.SOD: not a CMS ContentInfo"), c.stderr)
        XCTAssertEqual(try IDVDCommand.run(["chip", "verify"]).status, 2)
        XCTAssertEqual(try IDVDCommand.run(["chip", "verify", "--sod", dir + "/absent"]).status, 2)
        let t = try IDVDCommand.run(["chip", "verify", "--sod", cms, "--trust", garbage])
        XCTAssertEqual(t.status, 2)
        XCTAssertTrue(t.stderr.contains("--trust"), t.stderr)
        // A real sample whose CSCA is not available: passive authentication fails (exit 1), evidence printed.
        let d = try Samples.path("nld-specimen-2006-loes-meulendijk")
        let r = try IDVDCommand.run(["chip", "verify", "--sod", d + "/ef011D.bin", "--dg1", d + "/ef0101.bin", "--dg2", d + "/ef0102.bin", "--at", "2010-01-01"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(try JSONDecoder().decode(Output.self, from: r.stdout).passive_authentication.failures, ["csca_unknown"])
    }

    /// `--page` as a user gives it: the chip of one person with the page of another is `mrz_mismatch`,
    /// INVALID by docs/CHIP.md's verdict rule, and exits 1 although passive authentication passed (on main: 0);
    /// the chip with its own page exits 0; a `--page` that is not an image is unusable input, exit 2 with one
    /// line naming it and nothing on stdout (on main: exit 0, reported `mrz_not_compared`).
    func testPageOfAnotherPersonExits1AndAPageThatIsNotAnImageExits2() throws {
        let dir = try temporaryDirectory(self)
        let chipped = try IDVDCommand.run(["specimen", "--format", "td3", "--seed", "10", "--chip", "--out", dir + "/c1"])
        XCTAssertEqual(chipped.status, 0, chipped.stderr)
        let other = try IDVDCommand.run(["specimen", "--format", "td3", "--seed", "20", "--out", dir + "/c2"])
        XCTAssertEqual(other.status, 0, other.stderr)
        let chip = ["chip", "verify", "--dir", dir + "/c1/specimen-10.chip", "--trust", dir + "/c1/test-pki"]
        let own = try IDVDCommand.run(chip + ["--page", dir + "/c1/specimen-10.png"])
        XCTAssertEqual(own.status, 0, own.stderr)
        XCTAssertEqual(try JSONDecoder().decode(Output.self, from: own.stdout).policy.reason_code, "active_authentication_not_performed")
        let mismatch = try IDVDCommand.run(chip + ["--page", dir + "/c2/specimen-20.png"])
        XCTAssertEqual(mismatch.status, 1, mismatch.stderr)
        let m = try JSONDecoder().decode(Output.self, from: mismatch.stdout)
        XCTAssertTrue(m.passive_authentication.passed)
        XCTAssertEqual(m.mrz_cross_check?.outcome, "differs")
        XCTAssertEqual(m.policy.reason_code, "mrz_mismatch")
        // The same with --mrz instead of a page.
        let lines = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/c1/specimen-10.json"))).mrz_lines
        XCTAssertEqual(try IDVDCommand.run(chip + ["--mrz"] + lines).status, 0)
        var wrong = lines
        wrong[1] = String(wrong[1].prefix(9)) + (wrong[1].dropFirst(9).first == "1" ? "2" : "1") + wrong[1].dropFirst(10)
        XCTAssertEqual(try IDVDCommand.run(chip + ["--mrz"] + wrong).status, 1)

        let notImage = dir + "/page.png"
        try Data("this is not an image".utf8).write(to: URL(fileURLWithPath: notImage))
        let bad = try IDVDCommand.run(chip + ["--page", notImage])
        XCTAssertEqual(bad.status, 2, String(decoding: bad.stdout, as: UTF8.self))
        XCTAssertTrue(bad.stdout.isEmpty)
        XCTAssertTrue(bad.stderr.contains("--page: \(notImage): not a JPEG or PNG image"), bad.stderr)
        XCTAssertEqual(try IDVDCommand.run(chip + ["--page", dir + "/absent.png"]).status, 2)
    }

    /// The real chips' DG2 portraits against the printed portraits of the same specimen passports (SOURCES.md: the
    /// same women as mrz-images/specimens/100_pass-bdr.jpg and 98_pass-nld.jpg): the face recogniser's cosine
    /// distances below its LFW-calibrated image-to-image line at FMR 0.1 % (0.657, FaceKit `FaceMatchCalibration`) for
    /// the same person, above it across persons. The pages are other issues of the same specimens, so the DG1
    /// cross-check reports their differing fields.
    func testChipPortraitAgainstThePrintedPortraitOfTheSameSpecimenPassports() throws {
        struct Page: Decodable {
            let page: P; let mrz_cross_check: C
            struct P: Decodable { let chip_face_found: Bool; let page_face_found: Bool; let portrait_distance: Double?; let printed_mrz: [String]? }
            struct C: Decodable { let outcome: String; let differing_fields: [String] }
        }
        func run(_ chip: String, _ page: String) throws -> Page {
            let r = try IDVDCommand.run(["chip", "verify", "--dir", try Samples.path(chip), "--page", try Samples.testdata("mrz-images/specimens/" + page)])
            XCTAssertEqual(r.status, 1, r.stderr)   // the CSCAs are not available
            return try JSONDecoder().decode(Page.self, from: r.stdout)
        }
        let line = 0.657
        let bdr = try run("bsi2008-erika-mustermann", "100_pass-bdr.jpg")
        XCTAssertTrue(bdr.page.chip_face_found && bdr.page.page_face_found)
        XCTAssertLessThan(try XCTUnwrap(bdr.page.portrait_distance), line)
        XCTAssertEqual(bdr.page.printed_mrz?.first, "P<BDRMUSTERMANN<<ERIKA<<<<<<<<<<<<<<<<<<<<<<")
        XCTAssertEqual(bdr.mrz_cross_check.outcome, "differs")
        XCTAssertTrue(bdr.mrz_cross_check.differing_fields.contains("document_number"))
        let nld = try run("nld-specimen-2006-loes-meulendijk", "98_pass-nld.jpg")
        XCTAssertLessThan(try XCTUnwrap(nld.page.portrait_distance), line)
        XCTAssertFalse(nld.mrz_cross_check.differing_fields.contains("name"))
        let cross = try run("bsi2008-erika-mustermann", "98_pass-nld.jpg")
        XCTAssertGreaterThan(try XCTUnwrap(cross.page.portrait_distance), line)
        XCTAssertTrue(cross.mrz_cross_check.differing_fields.contains("name"))
    }

    /// `--aa-challenge HEX --aa-signature FILE`: an Active Authentication signature checked offline (ICAO 9303-11
    /// §6.1) with the chip folder's DG15 key after passive authentication — genuine (RSA and ECDSA), the copy's key,
    /// another challenge, a chip without DG15 — and unusable input refused with exit 2.
    func testActiveAuthenticationSignatureCheckedOffline() throws {
        let dir = try temporaryDirectory(self)
        let gen = try IDVDCommand.run(["specimen", "--chip", "--format", "td3", "--seed", "21", "--out", dir])
        XCTAssertEqual(gen.status, 0, gen.stderr)
        let chip = dir + "/specimen-21.chip", trust = dir + "/test-pki"
        let challenge: [UInt8] = [0xC0, 0xFF, 0xEE, 0x00, 0x11, 0x22, 0x33, 0x44]
        let hex = "c0ffee0011223344"
        func sign(_ folder: String, _ c: [UInt8] = [0xC0, 0xFF, 0xEE, 0x00, 0x11, 0x22, 0x33, 0x44]) throws -> String {
            let sig = try XCTUnwrap(try SpecimenChipSecurity.activeAuthenticationSignature(challenge: c, chipDirectory: folder), folder)
            let path = dir + "/sig-\(UUID().uuidString).bin"
            try Data(sig).write(to: URL(fileURLWithPath: path))
            return path
        }
        let mrz = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/specimen-21.json"))).mrz_lines
        func verify(_ folder: String, _ extra: [String]) throws -> (Int32, Output?, String) {
            let r = try IDVDCommand.run(["chip", "verify", "--dir", folder, "--trust", trust] + extra + ["--mrz"] + mrz)
            return (r.status, try? JSONDecoder().decode(Output.self, from: r.stdout), r.stderr)
        }
        // The genuine RSA-2048 chip and the ECDSA P-256 variant: verified, the chip is genuine (exit 0).
        for (folder, mechanism) in [(chip, "rsa-iso9796-2-sha256"), (chip + "/variants/aa-ecdsa", "ecdsa-plain-sha256")] {
            let (status, out, err) = try verify(folder, ["--aa-challenge", hex, "--aa-signature", try sign(folder)])
            XCTAssertEqual(status, 0, err)
            XCTAssertEqual(out?.active_authentication.outcome, "verified", folder)
            XCTAssertEqual(out?.active_authentication.mechanism, mechanism)
            XCTAssertEqual(out?.policy.reason_code, "genuine")
        }
        XCTAssertEqual(try verify(chip + "/variants/aa-ecdsa", []).1?.active_authentication.outcome, "not_performed")
        // The copy's key (the genuine files): failed, INVALID (exit 1), with the reader's fault.
        let (cs, copy, _) = try verify(chip + "/variants/copy", ["--aa-challenge", hex, "--aa-signature", try sign(chip + "/variants/copy")])
        XCTAssertEqual(cs, 1)
        XCTAssertEqual(copy?.active_authentication.outcome, "failed")
        // Another key's signature recovers to noise: past the genuine modulus, or no ISO/IEC 9796-2 structure.
        XCTAssertTrue(["signature_out_of_range", "iso9796_2_bad_padding", "iso9796_2_bad_trailer"].contains(copy?.active_authentication.failure ?? "-"),
                      "\(String(describing: copy?.active_authentication))")
        XCTAssertEqual(copy?.policy.reason_code, "active_authentication_failed")
        // A signature over another challenge than the one given: the chip's key signed something else (exit 1).
        let (os, other, _) = try verify(chip, ["--aa-challenge", hex, "--aa-signature", try sign(chip, [1, 2, 3, 4, 5, 6, 7, 8])])
        XCTAssertEqual(os, 1)
        XCTAssertEqual([other?.active_authentication.failure, other?.policy.reason_code], ["digest_mismatch", "active_authentication_replayed"])
        // No DG15: not supported (a copy is not excluded: exit 0).
        let (ns, none, _) = try verify(chip + "/variants/no-aa", ["--aa-challenge", hex, "--aa-signature", try sign(chip)])
        XCTAssertEqual(ns, 0)
        XCTAssertEqual([none?.active_authentication.outcome, none?.policy.reason_code], ["not_supported", "active_authentication_not_supported"])
        // The SOD's signature corrupted: DG15's key is not authenticated, the signature is not looked at.
        let (ks, key, _) = try verify(chip + "/variants/signature-corrupted", ["--aa-challenge", hex, "--aa-signature", try sign(chip)])
        XCTAssertEqual(ks, 1)
        XCTAssertEqual(key?.active_authentication.outcome, "key_not_authenticated")
        // Unusable input: exit 2, one line, nothing on stdout.
        for bad in [["--aa-challenge", "c0ffee"], ["--aa-challenge", hex], ["--aa-signature", dir + "/absent"],
                    ["--aa-challenge", "zz" + hex.dropFirst(2), "--aa-signature", try sign(chip)], ["--aa-challenge", hex, "--aa-signature", dir + "/absent"]] {
            let r = try IDVDCommand.run(["chip", "verify", "--dir", chip, "--trust", trust] + bad)
            XCTAssertEqual(r.status, 2, "\(bad): \(r.stderr)")
            XCTAssertTrue(r.stdout.isEmpty, "\(bad)")
            XCTAssertTrue(r.stderr.contains("--aa-"), "\(bad): \(r.stderr)")
        }
        _ = challenge
    }
}
