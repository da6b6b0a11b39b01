// HAND-WRITTEN, not seed code. The signature of seed 003 L829-L845's `UIColor(hex:)`, which the
// codelabs' screens call: the helper itself is type-checked on its own, without Objective-C interop
// (Tests/SeedScreens/003-helpers), because Swift on Linux cannot type-check its
// `Scanner.scanHexInt64(&rgb)` pointer conversion with interop on.
import UIKit

extension UIColor {
    convenience init?(hex: String) { self.init(white: 0, alpha: 1) }
}
