// HAND-WRITTEN, not seed code: what seed 004's screens call but elide — the password dialog's
// outlets and set-up ("// Full UI setup and keyboard handling methods in actual implementation...",
// seed 004 L596), the screens' UI helpers, `showAlert`, and `handlePasswordCancel()` ("body not in
// seed", spec 004 §6.4). Declarations only; nothing here touches the SDK.
import UIKit

extension PasswordValidationDialogViewController {
    var attemptsContainerView: UIView { UIView() }
    var attemptsLabel: UILabel { UILabel() }
    var cancelButton: UIButton { UIButton() }
    var errorContainerView: UIView { UIView() }
    var errorLabel: UILabel { UILabel() }
    var submitButton: UIButton { UIButton() }
    var submitLoadingIndicator: UIActivityIndicatorView { UIActivityIndicatorView() }
    var visibilityButton: UIButton { UIButton() }
    func setupUI() {}
    func setupActions() {}
    func setupKeyboardHandling() {}
    func updateSubmitButtonState() {}
}

extension BiometricOptOutViewController {
    var activityIndicator: UIActivityIndicatorView { UIActivityIndicatorView() }
    var disabledMessageLabel: UILabel { UILabel() }
    var startOptOutButton: UIButton { UIButton() }
    func setupUI() {}
    func cleanupEventHandlers() {}
    func updateTemplateStatusUI() {}
    func handlePasswordCancel() {}
    func showAlert(title: String, message: String, completion: (() -> Void)? = nil) {}
}

/// Seed 004 L1360-L1365's struct, which the opt-out screen uses too but the seed shows only as the
/// opt-in file's `private struct` (same members).
struct TemplateStatus {
    var checked: Bool = false
    var exists: Bool = false
    var statusCode: Int32 = 0
    var statusMessage: String = ""
}
