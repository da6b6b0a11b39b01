// HAND-WRITTEN, not seed code: the earlier codelabs' side menu, which seed 003's scan screen opens.
import UIKit

final class MenuViewController: UIViewController {
    static func presentMenu(from viewController: UIViewController) {}
}
