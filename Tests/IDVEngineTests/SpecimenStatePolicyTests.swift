import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVTestSupport
import XCTest

/// `idv.doc.accept_specimen_documents` (#22): ICAO's fictional state Utopia (`UTO`) is accepted like
/// a real one only in test deployments — on in the code's default (demo, tests), off in the shipped
/// production configuration, where a UTO document is INVALID with its own reason.
final class SpecimenStatePolicyTests: XCTestCase {
    func doc(state: String, nationality: String) -> DocumentEvidence {
        ReaderEvidence.passport(DocumentFields(documentType: "P", format: "TD3", issuingState: state, surname: "ERIKSSON", givenNames: "ANNA MARIA",
                                               documentNumber: "L898902C3", nationality: nationality, dateOfExpiry: "2032-05-26"),
                                page: Data([0xFF, 0xD8, 0xFF]), portrait: true)
    }

    func testUtopiaIsAcceptedOnlyWhereTheSettingIsOn() throws {
        var policy = WorkflowPolicy()
        XCTAssertFalse(policy.acceptSpecimenDocuments, "the code's default is production's: specimens refused")
        policy.acceptSpecimenDocuments = true
        XCTAssertEqual(policy.judge(doc(state: "UTO", nationality: "UTO"), today: "2026-12-01", needsPortrait: true).status, .valid)
        policy.acceptSpecimenDocuments = false
        for (s, n) in [("UTO", "UTO"), ("NLD", "UTO"), ("UTO", "NLD")] {
            let j = policy.judge(doc(state: s, nationality: n), today: "2026-12-01", needsPortrait: true)
            XCTAssertEqual(j.status, .invalid, "\(s)/\(n)")
            XCTAssertEqual(j.errors, [.specimenDocument])
            XCTAssertTrue(DocumentWording.sentence(.specimenDocument).contains("UTO"))
        }
        XCTAssertEqual(policy.judge(doc(state: "NLD", nationality: "NLD"), today: "2026-12-01", needsPortrait: true).status, .valid)
    }

    /// The production configuration shipped in docs/ turns it off; the key parses like every setting.
    func testProductionConfigurationTurnsItOff() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = root.appendingPathComponent("docs/idvd.production.json").path
        let production = try ServerConfig.load(file: file, environment: [:])
        XCTAssertFalse(production.engine.workflow.acceptSpecimenDocuments)
        XCTAssertFalse(try ServerConfig.load(file: nil, environment: [:]).engine.workflow.acceptSpecimenDocuments)
        XCTAssertFalse(ServerConfig().engine.workflow.acceptSpecimenDocuments)
        XCTAssertTrue(try ServerConfig.load(file: nil, environment: ["IDVD_IDV_DOC_ACCEPT_SPECIMEN_DOCUMENTS": "true"]).engine.workflow.acceptSpecimenDocuments)
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.doc.accept_specimen_documents": "maybe"]))
    }

    /// A country code the reader found unknown is named in the sentence; an empty one is said to be
    /// missing (a fresh-user trial read "The nationality code  is not a known country code.").
    func testUnknownCountryCodeSentences() {
        XCTAssertEqual(DocumentWording.sentence(.finding(.unknownNationality("XYZ"))), "The nationality code XYZ is not a known country code.")
        XCTAssertEqual(DocumentWording.sentence(.finding(.unknownNationality(""))), "The MRZ gives no nationality code.")
        XCTAssertEqual(DocumentWording.sentence(.finding(.unknownIssuingState(""))), "The MRZ gives no issuing state code.")
    }
}
