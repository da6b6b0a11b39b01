@testable import DocumentReader
import Foundation
import IDVEngine
import IDVEvidence
import IDVReaders
import Imaging
import IDVTestSupport
import IDVTools
import MRZ
import XCTest

/// #40: no field a person relies on may be wrong in a VALID report. The fields no check digit covers
/// (names, document code, issuing state, nationality, sex) are VALID only when print or the MRZ's own
/// structure confirms them. A fresh-user trial found three classes that came out VALID with a wrong
/// field — the surname SMITH read EMITH, the document code I< read C<, P< read PK — and these tests
/// rebuild each class on rendered pages (the specimen generator and its augmentations).
final class UncheckedFieldTests: XCTestCase {
    static let options: DocumentReaderOptions = {
        var o = DocumentReaderOptions()
        o.detectPortrait = false
        o.referenceDate = ISO8601DateFormatter().date(from: "2019-06-01T00:00:00Z")!
        return o
    }()

    /// The policy as before #40 for the names: only a part that differs rules out VALID.
    static let oldNameRule: WorkflowPolicy = { var p = WorkflowPolicy.acceptingSpecimens; p.requireNameConfirmation = false; return p }()

    /// `identity` rendered with `mrz` encoded in its MRZ (what the page prints elsewhere is
    /// `identity`'s), photographed with the augmentation drawn for `seed` (none for nil), JPEG.
    func page(_ identity: SpecimenIdentity, mrz: SpecimenIdentity, format: SpecimenFormat, seed: UInt64, augment: Bool) throws -> Data {
        var spec = try SpecimenGenerator.render(identity, format: format, pixelsPerMM: 10, mrzLines: mrz.mrzLines(format), seed: seed)
        if augment {
            var rng = SeededRNG(seed: seed)
            var a = Augmentation.random(using: &rng)
            a.canvasWidth = 1600; a.canvasHeight = 1200
            spec.image = a.apply(to: spec.image, seed: seed)
        }
        return try DocumentImage(rgb: spec.image).jpeg(maxDimension: 10_000, quality: 92)
    }

    // MARK: The structure: code tables and rival readings

    /// `C<` and `PK` are document codes only some issuers print; `P<`, `I<`, `ID`, `V<`, `AC` any.
    func testDocumentCodeTable() {
        for code in ["P<", "I<", "ID", "IR", "V<", "AC", "P"] { XCTAssertTrue(DocumentCodes.isKnown(code, issuingState: "UTO"), code) }
        for code in ["C<", "PK", "A<", "IA", "VC"] { XCTAssertFalse(DocumentCodes.isKnown(code, issuingState: "UTO"), code) }
        XCTAssertTrue(DocumentCodes.isKnown("IA", issuingState: "USA"))
        XCTAssertTrue(DocumentCodes.isKnown("PA", issuingState: "LVA"))
        XCTAssertFalse(DocumentCodes.isKnown("PA", issuingState: "NLD"))
    }

    /// A cell's rival makes the field doubtful only when the reading it makes is one the field allows:
    /// another M/F/< for the sex, another known country code, a document code the issuer uses.
    func testRivalReadingsTheFieldAllows() {
        func post(_ pairs: [Character: Double]) -> [Character: Double] { pairs }
        // TD3 line 2: sex at column 21 (index 20), nationality at 11–13.
        let line2 = Array("L898902C36AUT7408122F1204159ZE184226B<<<<<10")
        var posteriors: [[[Character: Double]]] = [[], Array(repeating: [:], count: 44)]
        posteriors[1][20] = post(["F": 0.7, "M": 0.25, "E": 0.05])
        let sex = DocumentReader.uncheckedRival([(1, 20)], lines: [[], line2], posteriors: posteriors, allows: { ["M", "F", "<"].contains($0) })
        XCTAssertEqual(sex?.rival, "M")
        XCTAssertEqual(sex?.cell.twinConfidence, 0.25)
        posteriors[1][20] = post(["F": 0.7, "E": 0.3])   // E is no sex: the structure confirms F
        XCTAssertNil(DocumentReader.uncheckedRival([(1, 20)], lines: [[], line2], posteriors: posteriors, allows: { ["M", "F", "<"].contains($0) }))
        posteriors[1][20] = post(["F": 0.97, "M": 0.03])   // under uncheckedRivalConfidence
        XCTAssertNil(DocumentReader.uncheckedRival([(1, 20)], lines: [[], line2], posteriors: posteriors, allows: { ["M", "F", "<"].contains($0) }))
        // AUT with S at the last cell makes AUS, a known code; with a Z it makes AUZ, none.
        let known = { (c: String) in CountryCodes.isKnown(c) }
        posteriors[1][12] = post(["T": 0.6, "S": 0.4])
        XCTAssertEqual(DocumentReader.uncheckedRival([(1, 10), (1, 11), (1, 12)], lines: [[], line2], posteriors: posteriors, allows: known)?.rival, "AUS")
        posteriors[1][12] = post(["T": 0.6, "Z": 0.4])
        XCTAssertNil(DocumentReader.uncheckedRival([(1, 10), (1, 11), (1, 12)], lines: [[], line2], posteriors: posteriors, allows: known))
        XCTAssertEqual(DocumentReader.uncheckedCells(lineCount: 2, length: 44).filter { $0.field == .sex }.map(\.column), [20])
        XCTAssertEqual(DocumentReader.uncheckedCells(lineCount: 3, length: 30).filter { $0.field == .sex }.map(\.column), [7])
        XCTAssertEqual(DocumentReader.uncheckedCells(lineCount: 3, length: 30).filter { $0.field == .nationality }.map(\.column), [15, 16, 17])
    }

    // MARK: The trial's three classes on rendered pages

    /// `I<` read `C<` and `P<` read `PK`: a page whose MRZ encodes a code its issuer does not use is
    /// WARNING, naming the document code; the same page with the code the issuer uses has no such
    /// finding. (No check digit covers the code, so the MRZ checks out either way.)
    func testDocumentCodeAnIssuerDoesNotUseIsAWarning() throws {
        for (format, genuine, misread) in [(SpecimenFormat.td1, "I<", "C<"), (.td3, "P<", "PK")] {
            var rng = SeededRNG(seed: 40)
            var id = SpecimenIdentity.random(format, using: &rng)
            id.issuingState = "UTO"; id.nationality = "UTO"; id.documentCode = genuine
            var other = id
            other.documentCode = misread
            for (mrz, expectFinding) in [(id, false), (other, true)] {
                let r = DocumentReader.read(pages: [try page(id, mrz: mrz, format: format, seed: 40, augment: false)], options: Self.options)
                XCTAssertEqual(r.mrz.result?.lines.first?.prefix(2).description, mrz.documentCode, "\(format)")
                XCTAssertEqual(r.mrz.result?.checkDigits.allSatisfy(\.valid), true)
                let finding = DocumentFinding.documentCodeNotKnown(code: mrz.documentCode, issuingState: "UTO")
                XCTAssertEqual(r.findings.contains(finding), expectFinding, "\(format) \(mrz.documentCode): \(r.findings)")
                if expectFinding {
                    let j = r.judged(by: .acceptingSpecimens)
                    XCTAssertEqual(j.status, .warning, "\(format) \(mrz.documentCode)")
                    XCTAssertTrue(j.warnings.map(DocumentWording.sentence).contains { $0.contains("document code \(mrz.documentCode)") })
                }
            }
        }
    }

    /// SMITH read EMITH: pages that print SMITH in the visual zone and encode EMITH in the MRZ, as a
    /// confident misread of the S would give it, photographed with blur, perspective and noise. None
    /// is VALID: the surname is named, as differing or as not confirmed by print. The rule before #40
    /// (a part the reader settled for the MRZ passed) is shown to have let such pages through.
    func testNameMisreadAgainstPrintIsNeverValid() throws {
        var read = 0, oldRuleValid = 0
        for seed in UInt64(4001)...UInt64(4008) {
            var rng = SeededRNG(seed: seed)
            var id = SpecimenIdentity.random(.td3, using: &rng)
            id.surname = "SMITH"; id.expiryDate = "351231"
            var mrz = id
            mrz.surname = "EMITH"
            let r = DocumentReader.read(pages: [try page(id, mrz: mrz, format: .td3, seed: seed, augment: true)], options: Self.options)
            guard r.fields.surname == "EMITH", r.mrz.result?.valid == true else { continue }
            read += 1
            let j = r.judged(by: .acceptingSpecimens)
            XCTAssertNotEqual(j.status, .valid, "seed \(seed): \(r.check(.namesMatchVisualZone).map(DocumentWording.detail) ?? "")")
            let named = j.warnings.contains { w in
                switch w {
                case .finding(.nameDiffersFromVisualZone(.primaryIdentifier, "EMITH", _)), .nameNotConfirmed(.primaryIdentifier, "EMITH", _): return true
                default: return false
                }
            }
            XCTAssertTrue(named || j.status == .invalid, "seed \(seed): the surname is named: \(j.warnings)")
            if r.judged(by: Self.oldNameRule).status == .valid {
                oldRuleValid += 1
                print("seed \(seed) VALID under the rule before #40: \(r.check(.namesMatchVisualZone).map(DocumentWording.detail) ?? "")")
            }
        }
        print("EMITH pages read: \(read), VALID under the rule before #40: \(oldRuleValid)")
        XCTAssertGreaterThanOrEqual(read, 6, "most pages read")
        // Measured: 8 read, 1 of them VALID under the rule before #40 (seed 4007: blurred, no name part
        // found printed, so nothing contradicted EMITH). The part kept against print (settled for the
        // MRZ), the trial's other path, is judged in NameConfirmationPolicyTests.
        XCTAssertGreaterThanOrEqual(oldRuleValid, 1, "these pages hold the trial's class")
    }
}
