import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVTestSupport
import XCTest

/// `WorkflowPolicy`'s chip rule (docs/CHIP.md "The verdict rule") on typed chip evidence: which
/// failure makes the document INVALID, which only rules out VALID, what `chip.require_trusted_csca`
/// changes, the "Chip verification" check, and when DG2 may be the face reference.
final class ChipPolicyTests: XCTestCase {
    let fields = DocumentFields(documentType: "P", format: "TD3", issuingState: "UTO", surname: "SILVA", givenNames: "OLGA",
                                documentNumber: "MV841085Z", dateOfExpiry: "2032-05-26")

    func doc(_ chip: ChipEvidence?, portrait: Bool = true) -> DocumentEvidence {
        var d = ReaderEvidence.passport(fields, page: Data([0xFF, 0xD8, 0xFF]), portrait: portrait)
        d.chip = chip
        return d
    }

    func chip(_ failures: [ChipFailure], mrz: ChipMRZComparison = .matches, portrait: Bool = true) -> ChipEvidence {
        ChipEvidence(failures: failures, mrz: mrz, dataGroups: [1, 2], hashAlgorithm: "SHA256", portraitJPEG: portrait ? Data([0xFF, 0xD8, 1]) : nil)
    }

    func judged(_ d: DocumentEvidence, strict: Bool = false, needsPortrait: Bool = false) -> DocumentJudgement {
        var p = WorkflowPolicy()
        p.requireTrustedCSCA = strict
        return p.judge(d, today: "2026-12-01", needsPortrait: needsPortrait)
    }

    func testEachFailureHasItsVerdictAndReason() {
        let invalid: [ChipFailure] = [.signatureInvalid, .securityObjectDigestMismatch, .dataGroupHashMismatch, .usedDataGroupNotSigned, .documentSignerRevoked]
        let trustOnly: [ChipFailure] = [.cscaUnknown, .cscaSignatureInvalid, .documentSignerMissing, .unsupportedAlgorithm]
        let warning: [ChipFailure] = [.otherDataGroupNotSigned, .documentSignerExpired, .documentSignerNotYetValid, .cscaExpired, .cscaNotYetValid]
        XCTAssertEqual(Set(invalid + trustOnly + warning), Set(ChipFailure.allCases), "every failure has a rule")
        for f in invalid {
            let j = judged(doc(chip([f])))
            XCTAssertEqual(j.status, .invalid, f.rawValue)
            XCTAssertEqual(j.errors, [.chip(f)], f.rawValue)
        }
        for f in trustOnly {
            XCTAssertEqual(judged(doc(chip([f]))).status, .warning, f.rawValue)
            XCTAssertEqual(judged(doc(chip([f]))).warnings, [.chip(f)], f.rawValue)
            XCTAssertEqual(judged(doc(chip([f])), strict: true).status, .invalid, f.rawValue)
        }
        for f in warning {
            XCTAssertEqual(judged(doc(chip([f])), strict: true).status, .warning, f.rawValue)
        }
        let p = WorkflowPolicy()
        XCTAssertEqual(p.chipReason(chip([.cscaUnknown, .signatureInvalid])), .signatureInvalid, "an INVALID-making failure is the reason first")
        XCTAssertEqual(p.chipReason(chip([.cscaUnknown])), .cscaUnknown)
        XCTAssertEqual(p.chipReason(chip([.documentSignerExpired])), .certificateNotValidNow)
        XCTAssertEqual(p.chipReason(chip([])), .passed)
        XCTAssertNotEqual(p.chipReason(chip([.cscaUnknown])), p.chipReason(chip([.signatureInvalid])), "CSCA unknown is not signature invalid")
    }

    func testDG1MismatchIsInvalidAndTheCheckCarriesTheResult() {
        let mismatch = judged(doc(chip([], mrz: .differs(["document_number"]))))
        XCTAssertEqual(mismatch.status, .invalid)
        XCTAssertEqual(mismatch.errors, [.chipMRZMismatch(["document_number"])])
        XCTAssertEqual(WorkflowPolicy().chipReason(chip([], mrz: .differs(["birth_date"]))), .mrzMismatch)
        XCTAssertEqual(judged(doc(chip([], mrz: .noDataGroup1))).status, .warning)
        XCTAssertEqual(WorkflowPolicy().chipReason(chip([], mrz: .noDataGroup1)), .mrzNotCompared)

        let passed = judged(doc(chip([])))
        XCTAssertEqual(passed.status, .valid)
        XCTAssertEqual(passed.checks.first { $0.id == .chipVerification }?.result, .passed)
        XCTAssertEqual(mismatch.checks.first { $0.id == .chipVerification }?.result, .failed)
        let none = judged(doc(nil))
        XCTAssertEqual(none.status, .valid)
        XCTAssertEqual(none.checks.first { $0.id == .chipVerification }, CheckOutcome(.chipVerification, .notPerformed, .noChipData))
    }

    func testChipPortraitIsTheReferenceOnlyWhenAuthentic() {
        let p = WorkflowPolicy()
        XCTAssertTrue(p.chipPortraitUsable(chip([])))
        XCTAssertFalse(p.chipPortraitUsable(chip([.cscaUnknown])), "an untrusted chip's portrait is no reference")
        XCTAssertFalse(p.chipPortraitUsable(chip([], mrz: .differs(["name"]))))
        XCTAssertFalse(p.chipPortraitUsable(chip([], portrait: false)))
        XCTAssertFalse(p.chipPortraitUsable(nil))
        // No page portrait, but an authentic chip portrait: the selfie flow has its reference.
        XCTAssertFalse(judged(doc(chip([]), portrait: false), needsPortrait: true).errors.contains(.portraitMissing))
        XCTAssertTrue(judged(doc(chip([.cscaUnknown]), portrait: false), needsPortrait: true).errors.contains(.portraitMissing))
    }

    /// ICAO 9303-12 §7.1: the document signer's and the trusted CSCA's country must be DG1's issuing state's.
    /// Another state's trusted signer is INVALID with its own reason and a sentence naming both codes.
    func testSignerCountryOfAnotherStateIsInvalidWithItsOwnReason() {
        func countries(_ dsc: [String], issuer: [String]? = nil, csca: [String]?, state: String = "NLD", expected: [String] = ["NL"]) -> ChipEvidence {
            var c = chip([])
            c.signerCountries = ChipSignerCountries(issuingState: state, expectedCountries: expected, documentSigner: dsc,
                                                    documentSignerIssuer: issuer ?? dsc, csca: csca)
            return c
        }
        let p = WorkflowPolicy()
        // The genuine case (also lower case, as some CSCAs write it) passes.
        for ok in [countries(["NL"], csca: ["NL"]), countries(["nl"], csca: ["nl"]), countries(["DE"], issuer: [], csca: nil, state: "D", expected: ["DE"])] {
            XCTAssertNil(p.signerCountryMismatch(ok))
            XCTAssertTrue(p.chipAuthentic(ok))
            XCTAssertEqual(judged(doc(ok)).status, .valid)
            XCTAssertEqual(p.chipReason(ok), .passed)
        }
        // The repro: an NLD passport signed under Utopia's trusted CSCA.
        let foreign = countries(["UT"], csca: ["UT"])
        let m = ChipSignerCountryMismatch(certificate: .documentSigner, countries: ["UT"], issuingState: "NLD")
        XCTAssertEqual(p.signerCountryMismatch(foreign), m)
        XCTAssertTrue(foreign.authentic, "every passive-authentication step passed")
        XCTAssertFalse(p.chipAuthentic(foreign))
        XCTAssertFalse(p.chipPortraitUsable(foreign), "another state's chip portrait is no reference")
        let j = judged(doc(foreign))
        XCTAssertEqual(j.status, .invalid)
        XCTAssertEqual(j.errors, [.chipSignerCountryMismatch(m)])
        XCTAssertEqual(j.checks.first { $0.id == .chipVerification }?.result, .failed)
        XCTAssertEqual(p.chipReason(foreign), .signerCountryMismatch)
        XCTAssertTrue(p.chipIsError(foreign))
        let sentence = DocumentWording.sentence(.chipSignerCountryMismatch(m))
        XCTAssertTrue(sentence.contains("UT") && sentence.contains("NLD"), sentence)
        XCTAssertEqual(DocumentWording.sentence(.signerCountryMismatch, chip: foreign, policy: p), sentence)
        XCTAssertEqual(ChipVerificationReason(rawValue: "signer_country_mismatch"), .signerCountryMismatch)
        XCTAssertTrue(ChipVerificationReason.knownValues.contains(.signerCountryMismatch))
        // An untrusted chain does not hide it, nor does a DSC naming the right country under another CSCA.
        XCTAssertEqual(p.signerCountryMismatch(countries(["UT"], csca: nil))?.certificate, .documentSigner)
        XCTAssertEqual(p.signerCountryMismatch(countries(["NL"], issuer: ["UT"], csca: nil))?.certificate, .documentSignerIssuer)
        XCTAssertEqual(p.signerCountryMismatch(countries(["NL"], issuer: ["NL"], csca: ["UT"]))?.certificate, .csca)
        XCTAssertEqual(p.signerCountryMismatch(countries(["NL", "UT"], csca: ["NL"]))?.countries, ["NL", "UT"], "every value must correspond")
        // A DSC without a countryName fails (ICAO 9303-12 requires it); so does a trusted CSCA without one.
        let noC = countries([], issuer: ["NL"], csca: ["NL"])
        XCTAssertEqual(p.signerCountryMismatch(noC), ChipSignerCountryMismatch(certificate: .documentSigner, countries: [], issuingState: "NLD"))
        XCTAssertTrue(DocumentWording.sentence(.chipSignerCountryMismatch(p.signerCountryMismatch(noC)!)).contains("names no country"))
        XCTAssertEqual(p.signerCountryMismatch(countries(["NL"], issuer: [], csca: []))?.certificate, .csca)
        // An issuing state with no known X.509 country (a Part D organisation) cannot be tied to any signer.
        XCTAssertEqual(p.signerCountryMismatch(countries(["UT"], csca: ["UT"], state: "XPO", expected: []))?.issuingState, "XPO")
        // Under a CSCA-unknown warning the mismatch still makes it INVALID, and is the reason.
        var both = countries(["UT"], csca: nil)
        both.failures = [.cscaUnknown]
        XCTAssertEqual(judged(doc(both)).status, .invalid)
        XCTAssertEqual(p.chipReason(both), .signerCountryMismatch)
        // Nothing to compare (no DG1 or no DSC): no finding; the other reasons already hold.
        XCTAssertNil(p.signerCountryMismatch(chip([.documentSignerMissing])))
    }
}
