// HAND-WRITTEN, not seed code: what seed 000's screens call but do not show ("Common screen
// behaviour: updateButtonStates() and showError(_:) helpers (bodies not shown)", spec 000 §6), and
// the earlier codelabs' menu and dashboard. Declarations only; nothing here touches the SDK.
import UIKit

extension IDVDocumentProcessStartConfirmationViewController {
    func updateButtonStates() {}
    func showError(_ message: String) {}
}
extension IDVConfirmDocumentDetailsViewController {
    func updateButtonStates() {}
    func showError(_ message: String) {}
}
extension IDVSelfieProcessStartConfirmationViewController {
    func updateButtonStates() {}
    func showError(_ message: String) {}
}
extension IDVSelfieConfirmationViewController {
    func updateButtonStates() {}
    func showError(_ message: String) {}
}
extension IDVBiometricOptInConsentViewController {
    func updateButtonStates() {}
    func showError(_ message: String) {}
}

/// The side menu of the earlier codelabs (SideMenu pod), seed 000 L1006.
final class MenuViewController: UIViewController {
    static func presentMenu(from viewController: UIViewController) {}
}

/// The MFA codelab's dashboard, seed 000's "Go to Dashboard" target.
final class DashboardViewController: UIViewController {}
