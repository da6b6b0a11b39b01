// HAND-WRITTEN, not seed code: the two methods seed 002's document-details screen calls but does
// not show (`populateErrorsAndWarnings(data)`, "whose body is not shown", spec 002 §6.1; `setupUI()`).
import UIKit

extension IDVConfirmDocumentDetailsViewController {
    func setupUI() {}
    func populateErrorsAndWarnings(_ data: [String: Any]) {}
}
