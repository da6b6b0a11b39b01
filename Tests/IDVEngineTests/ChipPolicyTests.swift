import Foundation
import IDVCore
import IDVEngine
import IDVTestSupport
import XCTest

/// `WorkflowPolicy`'s chip rule (docs/CHIP.md "The verdict rule") on typed chip evidence: which
/// failure makes the document INVALID, which only rules out VALID, what `chip.require_trusted_csca`
/// changes, the "Chip verification" check, and when DG2 may be the face reference.
final class ChipPolicyTests: XCTestCase {
    let fields = DocumentFields(documentType: "P", format: "TD3", issuingState: "UTO", surname: "SILVA", givenNames: "OLGA",
                                documentNumber: "MV841085Z", dateOfExpiry: "2032-05-26")

    func doc(_ chip: ChipEvidence?, portrait: Bool = true) -> DocumentVerification {
        var d = ReaderEvidence.passport(fields, page: Data([0xFF, 0xD8, 0xFF]), portrait: portrait)
        d.chip = chip
        return d
    }

    func chip(_ failures: [ChipFailure], mrz: ChipMRZComparison = .matches, portrait: Bool = true) -> ChipEvidence {
        ChipEvidence(failures: failures, mrz: mrz, dataGroups: [1, 2], hashAlgorithm: "SHA256", portraitJPEG: portrait ? Data([0xFF, 0xD8, 1]) : nil)
    }

    func judged(_ d: DocumentVerification, strict: Bool = false, needsPortrait: Bool = false) -> DocumentJudgement {
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
}
