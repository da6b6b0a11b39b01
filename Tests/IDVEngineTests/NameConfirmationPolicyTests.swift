import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVTestSupport
import XCTest

/// `idv.doc.require_name_confirmation` (#40): the MRZ's names have no check digit, so a document is
/// VALID only when print confirms every name part — printed the same in the visual zone or on a TD1
/// card's front, or settled in the print's favour. The policy judges from the reader's "Names match
/// visual zone" evidence; the reader decides nothing.
final class NameConfirmationPolicyTests: XCTestCase {
    func doc(names: CheckOutcome?) -> DocumentEvidence {
        var d = ReaderEvidence.passport(DocumentFields(documentType: "P", format: "TD3", issuingState: "NLD", surname: "SMITH", givenNames: "ANNA MARIA",
                                                       documentNumber: "L898902C3", nationality: "NLD", dateOfExpiry: "2032-05-26"),
                                        page: Data([0xFF, 0xD8, 0xFF]), portrait: true)
        if let names { d.checks.insert(names, at: d.checks.count - 1) }
        return d
    }

    func part(_ f: MRZNameField, _ mrz: String, _ printed: String?, _ o: VisualZoneNamePart.Outcome, _ w: NameSource? = nil) -> VisualZoneNamePart {
        VisualZoneNamePart(field: f, mrz: mrz, visualZone: printed, outcome: o, winner: w)
    }

    func judge(_ search: VisualZoneSearch?, result: CheckResult = .passed, policy: WorkflowPolicy = .acceptingSpecimens) -> DocumentJudgement {
        let names = search.map { CheckOutcome(.namesMatchVisualZone, result, .visualZone($0)) }
        return policy.judge(doc(names: names), today: "2026-12-01", needsPortrait: true)
    }

    func testEveryPartPrintedTheSameIsValid() {
        let agree = [part(.primaryIdentifier, "SMITH", "SMITH", .agrees), part(.secondaryIdentifier, "ANNA", "ANNA", .agrees),
                     part(.secondaryIdentifier, "MARIA", "MARIA", .agrees)]
        XCTAssertEqual(judge(.compared(agree)).status, .valid)
        XCTAssertEqual(judge(.comparedOnCard(pages: [1], parts: agree)).status, .valid)
        // Settled in the print's favour: the report carries the printed letters (the classifier gave them weight).
        var settled = agree
        settled[0] = part(.primaryIdentifier, "SMlTH", "SMITH", .settled, .visualZone)
        XCTAssertEqual(judge(.compared(settled)).status, .valid)
    }

    /// The trial's EMITH: the reader kept the MRZ's reading against the printed SMITH (Tesseract unsure,
    /// the classifier sure). Nothing but the classifier's certainty chose it: WARNING naming the part.
    func testPartSettledForTheMRZAgainstPrintIsAWarning() {
        let parts = [part(.primaryIdentifier, "EMITH", "SMITH", .settled, .mrz), part(.secondaryIdentifier, "ANNA", "ANNA", .agrees)]
        let j = judge(.compared(parts))
        XCTAssertEqual(j.status, .warning)
        XCTAssertEqual(j.warnings, [.nameNotConfirmed(field: .primaryIdentifier, mrz: "EMITH", printed: "SMITH")])
        XCTAssertEqual(DocumentWording.sentence(j.warnings[0]),
                       "The surname EMITH in the MRZ reads SMITH on the printed page; the MRZ's reading is the likelier, but no check digit covers names, so compare it with the document itself.")
        // The rule before #40 let it through.
        var old = WorkflowPolicy.acceptingSpecimens
        old.requireNameConfirmation = false
        XCTAssertEqual(judge(.compared(parts), policy: old).status, .valid)
    }

    func testPartNotFoundPrintedIsAWarningNamingIt() {
        let j = judge(.comparedOnCard(pages: [1], parts: [part(.primaryIdentifier, "SMITH", "SMITH", .agrees),
                                                          part(.secondaryIdentifier, "INGRID", nil, .notFound)]))
        XCTAssertEqual(j.status, .warning)
        XCTAssertEqual(j.warnings, [.nameNotConfirmed(field: .secondaryIdentifier, mrz: "INGRID", printed: nil)])
        XCTAssertTrue(DocumentWording.sentence(j.warnings[0]).hasPrefix("The given name INGRID in the MRZ was not found printed on the document"))
    }

    /// Names compared with no print at all: one warning saying why; a card front that prints none of
    /// them keeps its own warning only; a part that differs keeps the reader's finding only.
    func testNamesComparedWithNoPrint() {
        XCTAssertEqual(judge(.cardFrontNotGiven, result: .notPerformed).warnings, [.namesNotCompared(.cardFrontNotGiven)])
        XCTAssertEqual(judge(.noVisualZone, result: .notPerformed).warnings, [.namesNotCompared(.noVisualZone)])
        XCTAssertEqual(judge(.recogniserUnavailable(reason: "no eng.traineddata"), result: .notPerformed).warnings,
                       [.namesNotCompared(.recogniserUnavailable("no eng.traineddata"))])
        let off = WorkflowPolicy.acceptingSpecimens.judge(doc(names: CheckOutcome(.namesMatchVisualZone, .notPerformed, .none)), today: "2026-12-01", needsPortrait: true)
        XCTAssertEqual(off.warnings, [.namesNotCompared(.checkOff)])
        XCTAssertEqual(off.status, .warning)
        XCTAssertEqual(judge(.noNamesOnCardFront(page: 1), result: .notPerformed).warnings, [.cardFrontShowsNoName(page: 1)])
        for why in [NamesNotCompared.checkOff, .noVisualZone, .cardFrontNotGiven, .recogniserUnavailable("x")] {
            XCTAssertTrue(DocumentWording.sentence(.namesNotCompared(why)).contains("check digit"), "\(why)")
        }
        // Evidence without the names check (a reader that does not compare names) adds nothing.
        XCTAssertEqual(judge(nil).status, .valid)
    }

    /// The setting parses like every `idv.doc.*` key and defaults to on.
    func testSettingIsAServerSetting() throws {
        XCTAssertTrue(try ServerConfig.load(file: nil, environment: [:]).engine.workflow.requireNameConfirmation)
        XCTAssertFalse(try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.doc.require_name_confirmation": "false"]).engine.workflow.requireNameConfirmation)
        XCTAssertFalse(try ServerConfig.load(file: nil, environment: ["IDVD_IDV_DOC_REQUIRE_NAME_CONFIRMATION": "off"]).engine.workflow.requireNameConfirmation)
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.doc.require_name_confirmation": "sometimes"]))
    }
}
