// HAND-WRITTEN, not seed code: what seed 001's screen calls but does not show — `setupUI()`,
// `styleCard`, `navigateToDashboard()`, and the `showAlert(title:message:actions:)` helper whose
// default action is "OK" (spec 001 §8.2, Q13). Declarations only; nothing here touches the SDK.
import UIKit

extension ServerBiometricAuthenticationViewController {
    func setupUI() {}
    func styleCard(_ card: UIView, borderColor: UIColor?) {}
    func navigateToDashboard() {}
    func showAlert(title: String, message: String, actions: [UIAlertAction] = []) {}
}
