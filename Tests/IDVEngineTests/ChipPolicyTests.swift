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

    static let verified = ActiveAuthenticationResult.verified(mechanism: "rsa-iso9796-2-sha256")

    /// Chip evidence; Active Authentication verified unless `aa` says otherwise (the passive-authentication tests
    /// below judge a genuine chip's other findings).
    func chip(_ failures: [ChipFailure], mrz: ChipMRZComparison = .matches, portrait: Bool = true,
              aa: ActiveAuthenticationResult = ChipPolicyTests.verified) -> ChipEvidence {
        ChipEvidence(failures: failures, mrz: mrz, dataGroups: [1, 2, 14, 15], hashAlgorithm: "SHA256", portraitJPEG: portrait ? Data([0xFF, 0xD8, 1]) : nil,
                     activeAuthentication: aa)
    }

    func judged(_ d: DocumentEvidence, strict: Bool = false, genuine: Bool = false, needsPortrait: Bool = false) -> DocumentJudgement {
        var p = WorkflowPolicy.acceptingSpecimens
        p.requireTrustedCSCA = strict
        p.requireGenuineChip = genuine
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
        let p = WorkflowPolicy.acceptingSpecimens
        XCTAssertEqual(p.chipReason(chip([.cscaUnknown, .signatureInvalid])), .signatureInvalid, "an INVALID-making failure is the reason first")
        XCTAssertEqual(p.chipReason(chip([.cscaUnknown])), .cscaUnknown)
        XCTAssertEqual(p.chipReason(chip([.documentSignerExpired])), .certificateNotValidNow)
        XCTAssertEqual(p.chipReason(chip([])), .genuine)
        XCTAssertNotEqual(p.chipReason(chip([.cscaUnknown])), p.chipReason(chip([.signatureInvalid])), "CSCA unknown is not signature invalid")
    }

    func testDG1MismatchIsInvalidAndTheCheckCarriesTheResult() {
        let mismatch = judged(doc(chip([], mrz: .differs(["document_number"]))))
        XCTAssertEqual(mismatch.status, .invalid)
        XCTAssertEqual(mismatch.errors, [.chipMRZMismatch(["document_number"])])
        XCTAssertEqual(WorkflowPolicy.acceptingSpecimens.chipReason(chip([], mrz: .differs(["birth_date"]))), .mrzMismatch)
        XCTAssertEqual(judged(doc(chip([], mrz: .noDataGroup1))).status, .warning)
        XCTAssertEqual(WorkflowPolicy.acceptingSpecimens.chipReason(chip([], mrz: .noDataGroup1)), .mrzNotCompared)

        let passed = judged(doc(chip([])))
        XCTAssertEqual(passed.status, .valid)
        XCTAssertEqual(passed.checks.first { $0.id == .chipVerification }?.result, .passed)
        XCTAssertEqual(mismatch.checks.first { $0.id == .chipVerification }?.result, .failed)
        let none = judged(doc(nil))
        XCTAssertEqual(none.status, .valid)
        XCTAssertEqual(none.checks.first { $0.id == .chipVerification }, CheckOutcome(.chipVerification, .notPerformed, .noChipData))
    }

    func testChipPortraitIsTheReferenceOnlyWhenAuthentic() {
        let p = WorkflowPolicy.acceptingSpecimens
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
        let p = WorkflowPolicy.acceptingSpecimens
        // The genuine case (also lower case, as some CSCAs write it) passes.
        for ok in [countries(["NL"], csca: ["NL"]), countries(["nl"], csca: ["nl"]), countries(["DE"], issuer: [], csca: nil, state: "D", expected: ["DE"])] {
            XCTAssertNil(p.signerCountryMismatch(ok))
            XCTAssertTrue(p.chipAuthentic(ok))
            XCTAssertEqual(judged(doc(ok)).status, .valid)
            XCTAssertEqual(p.chipReason(ok), .genuine)
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

    /// Active Authentication (ICAO 9303-11 §6.1) in the verdict: verified on top of passive authentication is the
    /// genuine chip (VALID, nfc OK); not run or no DG15 is "a copy is not excluded" (WARNING, INVALID under
    /// chip.require_genuine); a copy's signature, a replayed answer or an unsigned key is INVALID with its own reason;
    /// an algorithm that cannot be checked is a WARNING (INVALID under chip.require_genuine).
    func testActiveAuthenticationOutcomesHaveTheirVerdictsAndReasons() {
        let p = WorkflowPolicy.acceptingSpecimens
        var strict = WorkflowPolicy.acceptingSpecimens
        strict.requireGenuineChip = true
        typealias Case = (ActiveAuthenticationResult, DocumentStatus, DocumentStatus, ChipVerificationReason)
        let cases: [Case] = [
            (Self.verified, .valid, .valid, .genuine),
            (.notPerformed, .warning, .invalid, .activeAuthenticationNotPerformed),
            (.notSupported, .warning, .invalid, .activeAuthenticationNotSupported),
            (.failed(.unsupportedAlgorithm, detail: "signature_algorithm_not_named"), .warning, .invalid, .activeAuthenticationUnsupported),
            (.failed(.signatureInvalid, detail: "iso9796_2_bad_padding"), .invalid, .invalid, .activeAuthenticationFailed),
            (.failed(.challengeReplayed, detail: "challenge_not_this_steps"), .invalid, .invalid, .activeAuthenticationReplayed),
            (.failed(.keyNotAuthenticated, detail: "key_not_authenticated"), .invalid, .invalid, .activeAuthenticationKeyNotSigned),
        ]
        XCTAssertEqual(Set(cases.compactMap { if case let .failed(f, _) = $0.0 { return f }; return nil }), Set(ActiveAuthenticationFailure.allCases))
        var sentences: Set<String> = []
        for (aa, status, strictStatus, reason) in cases {
            let c = chip([], aa: aa)
            let j = judged(doc(c)), js = judged(doc(c), genuine: true)
            XCTAssertEqual(j.status, status, "\(aa)")
            XCTAssertEqual(js.status, strictStatus, "\(aa) under chip.require_genuine")
            XCTAssertEqual(p.chipReason(c), reason, "\(aa)")
            XCTAssertEqual(strict.chipReason(c), reason, "\(aa)")
            XCTAssertEqual(p.chipGenuine(c), aa.verified, "\(aa)")
            XCTAssertEqual(p.chipIsError(c), status == .invalid, "\(aa)")
            XCTAssertTrue(p.chipAuthentic(c), "passive authentication passed in every case")
            XCTAssertTrue(p.chipPortraitUsable(c), "DG2 is authentic data in every case (a copy's face is the holder's)")
            if aa.verified {
                XCTAssertEqual(j.errors + j.warnings, [])
            } else {
                XCTAssertEqual(status == .invalid ? j.errors : j.warnings, [.chipActiveAuthentication(aa)], "\(aa)")
                XCTAssertEqual(js.errors, [.chipActiveAuthentication(aa)], "\(aa)")
            }
            // The "Chip verification" check says which: PASSED genuine, WARNING a copy not excluded, FAILED INVALID.
            let check = j.checks.first { $0.id == .chipVerification }
            func expected(_ s: DocumentStatus) -> CheckResult { s == .invalid ? .failed : s == .warning ? .warning : .passed }
            XCTAssertEqual(check?.result, expected(status), "\(aa)")
            XCTAssertEqual(js.checks.first { $0.id == .chipVerification }?.result, expected(strictStatus), "\(aa)")
            let detail = check.map(DocumentWording.detail) ?? ""
            if aa.verified { XCTAssertTrue(detail.contains("the chip is genuine"), detail) }
            else if status == .warning { XCTAssertTrue(detail.contains("a copy of the chip is not excluded"), detail) }
            else { XCTAssertTrue(detail.contains("Active Authentication"), detail) }
            let sentence = DocumentWording.sentence(.chipActiveAuthentication(aa))
            XCTAssertEqual(sentence, reason.sentence)
            sentences.insert(sentence)
        }
        XCTAssertEqual(sentences.count, cases.count, "every outcome has its own sentence")
        // Active Authentication ranks after an INVALID passive-authentication failure and before the warnings.
        XCTAssertEqual(p.chipReason(chip([.signatureInvalid], aa: .failed(.keyNotAuthenticated, detail: "key_not_authenticated"))), .signatureInvalid)
        XCTAssertEqual(p.chipReason(chip([.cscaUnknown], aa: .failed(.signatureInvalid, detail: "signature_invalid"))), .activeAuthenticationFailed)
        XCTAssertEqual(p.chipReason(chip([.cscaUnknown], aa: .notPerformed)), .cscaUnknown)
        XCTAssertEqual(strict.chipReason(chip([.cscaUnknown], aa: .notPerformed)), .activeAuthenticationNotPerformed, "the error before the warning")
        XCTAssertEqual(p.chipReason(chip([], mrz: .noDataGroup1, aa: .notPerformed)), .mrzNotCompared)
        // A verified Active Authentication does not make an untrusted chain genuine.
        let untrusted = chip([.cscaUnknown])
        XCTAssertFalse(p.chipGenuine(untrusted))
        XCTAssertEqual(judged(doc(untrusted)).status, .warning)
        // chip.require_genuine is a setting, off by default.
        XCTAssertFalse(WorkflowPolicy().requireGenuineChip)
        var config = ServerConfig()
        XCTAssertNoThrow(try config.set("chip.require_genuine", "true"))
        XCTAssertTrue(config.engine.workflow.requireGenuineChip)
    }
}
