@testable import DocumentReader
import Foundation
import IDVEngine
import IDVRuntime
import IDVReaders

// The reader gives evidence only; these tests check that evidence through the server's judge
// (`WorkflowPolicy`, no selfie step) and the one wording table, i.e. what `idvd document read`
// prints and what the flows send.

extension DocumentReport {
    /// The policy's judgement of this report, as of the reading's reference date. A report read with
    /// the visual-zone check switched off (the MRZ tests, for speed: "Names match visual zone" measured
    /// nothing) is judged without `idv.doc.require_name_confirmation`, since its names were compared
    /// with no print by the test's choice; NameConfirmationPolicyTests and UncheckedFieldTests judge
    /// that rule.
    var judgement: DocumentJudgement {
        guard check(.namesMatchVisualZone)?.measured == CheckMeasurement.none else { return judged(by: .acceptingSpecimens) }
        var policy = WorkflowPolicy.acceptingSpecimens
        policy.requireNameConfirmation = false
        return judged(by: policy)
    }
    /// VALID / INVALID / WARNING.
    var overallStatus: DocumentStatus { judgement.status }
    /// The `errors` sentences.
    var errors: [String] { judgement.errors.map(DocumentWording.sentence) }
    /// The `warnings` sentences.
    var warnings: [String] { judgement.warnings.map(DocumentWording.sentence) }
    var seed002: Seed002DocumentDetails { seed002(judgement) }
    var seed003: Seed003DocumentScan { seed003(judgement) }
}

extension CheckOutcome {
    /// The wire name (`checks_performed[].check_name`).
    var name: String { DocumentWording.name(id) }
    /// The wire category (`MRZ`, `Data`, `Image`, `Chip`).
    var category: String { DocumentWording.category(id) }
    /// The sentence saying what was measured.
    var detail: String { DocumentWording.detail(self) }
}
