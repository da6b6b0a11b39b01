// UIKIT STUB — NOT UIKit, NOT seed code, NOT IDVKit.
//
// Just enough of UIKit's *declarations* (no behaviour) for the Swift type checker to check the
// codelabs' screens (Tests/SeedScreens/<seed>/) on Linux, where UIKit does not exist. The classes
// are `@objc` because the screens' `@IBOutlet`/`@IBAction` require Objective-C classes; the check
// runs `swiftc -typecheck` with `-enable-objc-interop` (SeedScreensTypecheckTests). Every member
// here is a UIKit/Core Graphics name with UIKit's shape; nothing in it stands in for the SDK.
@_exported import Foundation
@_exported import ObjectiveC

// MARK: Core Graphics / Core Animation

@objc open class CGColor {}

@objc open class CALayer {
    public init() {}
    open var cornerRadius: CGFloat = 0
    open var borderWidth: CGFloat = 0
    open var borderColor: CGColor?
    open var shadowColor: CGColor?
    open var shadowOffset: CGSize = .zero
    open var shadowOpacity: Float = 0
    open var shadowRadius: CGFloat = 0
    open var masksToBounds = false
}

// MARK: Colours, fonts, images

@objc open class UIColor {
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {}
    public init(white: CGFloat, alpha: CGFloat) {}
    open var cgColor: CGColor { CGColor() }
    open func withAlphaComponent(_ alpha: CGFloat) -> UIColor { self }
    public static var black: UIColor { UIColor(white: 0, alpha: 1) }
    public static var white: UIColor { UIColor(white: 1, alpha: 1) }
    public static var clear: UIColor { UIColor(white: 0, alpha: 0) }
    public static var gray: UIColor { UIColor(white: 0.5, alpha: 1) }
    public static var lightGray: UIColor { UIColor(white: 0.67, alpha: 1) }
    public static var darkGray: UIColor { UIColor(white: 0.33, alpha: 1) }
    public static var red: UIColor { UIColor(red: 1, green: 0, blue: 0, alpha: 1) }
    public static var green: UIColor { UIColor(red: 0, green: 1, blue: 0, alpha: 1) }
    public static var blue: UIColor { UIColor(red: 0, green: 0, blue: 1, alpha: 1) }
    public static var orange: UIColor { UIColor(red: 1, green: 0.5, blue: 0, alpha: 1) }
    public static var systemGray: UIColor { gray }
    public static var systemGray5: UIColor { lightGray }
    public static var systemGray6: UIColor { lightGray }
    public static var systemBlue: UIColor { UIColor(red: 0, green: 0.48, blue: 1, alpha: 1) }
    public static var systemGreen: UIColor { UIColor(red: 0.2, green: 0.78, blue: 0.35, alpha: 1) }
    public static var systemRed: UIColor { UIColor(red: 1, green: 0.23, blue: 0.19, alpha: 1) }
    public static var systemOrange: UIColor { UIColor(red: 1, green: 0.58, blue: 0, alpha: 1) }
    public static var systemBackground: UIColor { white }
    public static var label: UIColor { black }
    public static var secondaryLabel: UIColor { gray }
}

public struct UIFontWeight: Sendable {
    public static let regular = UIFontWeight(), medium = UIFontWeight(), semibold = UIFontWeight(), bold = UIFontWeight()
}

@objc open class UIFont {
    public init() {}
    public static func systemFont(ofSize size: CGFloat) -> UIFont { UIFont() }
    public static func systemFont(ofSize size: CGFloat, weight: UIFont.Weight) -> UIFont { UIFont() }
    public static func boldSystemFont(ofSize size: CGFloat) -> UIFont { UIFont() }
    public typealias Weight = UIFontWeight
}

@objc open class UIImage {
    public init?(data: Data) {}
    public init?(named name: String) {}
}

// MARK: Views

public enum NSTextAlignment: Int, Sendable { case left, center, right, justified, natural }

@objc open class NSLayoutConstraint {
    open var isActive = false
    open var constant: CGFloat = 0
    public static func activate(_ constraints: [NSLayoutConstraint]) {}
    public static func deactivate(_ constraints: [NSLayoutConstraint]) {}
}

open class NSLayoutAnchor<T> {
    public init() {}
    open func constraint(equalTo anchor: NSLayoutAnchor<T>) -> NSLayoutConstraint { NSLayoutConstraint() }
    open func constraint(equalTo anchor: NSLayoutAnchor<T>, constant c: CGFloat) -> NSLayoutConstraint { NSLayoutConstraint() }
    open func constraint(greaterThanOrEqualTo anchor: NSLayoutAnchor<T>, constant c: CGFloat) -> NSLayoutConstraint { NSLayoutConstraint() }
    open func constraint(lessThanOrEqualTo anchor: NSLayoutAnchor<T>, constant c: CGFloat) -> NSLayoutConstraint { NSLayoutConstraint() }
}
public final class NSLayoutXAxisAnchor {}
public final class NSLayoutYAxisAnchor {}
public final class NSLayoutDimension: NSLayoutAnchor<NSLayoutDimension> {
    public func constraint(equalToConstant c: CGFloat) -> NSLayoutConstraint { NSLayoutConstraint() }
    public func constraint(greaterThanOrEqualToConstant c: CGFloat) -> NSLayoutConstraint { NSLayoutConstraint() }
    public func constraint(lessThanOrEqualToConstant c: CGFloat) -> NSLayoutConstraint { NSLayoutConstraint() }
}

@objc open class UIResponder: Hashable {
    public init() {}
    /// Identity, as `NSObject.isEqual(_:)` is for UIKit's classes.
    public static func == (lhs: UIResponder, rhs: UIResponder) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    @discardableResult open func becomeFirstResponder() -> Bool { true }
    @discardableResult open func resignFirstResponder() -> Bool { true }
}

public enum UIViewContentMode: Int, Sendable { case scaleToFill, scaleAspectFit, scaleAspectFill, center }

@objc open class UIView: UIResponder {
    public override init() {}
    public init(frame: CGRect) {}
    open var layer = CALayer()
    open var backgroundColor: UIColor?
    open var isHidden = false
    open var alpha: CGFloat = 1
    open var tintColor: UIColor?
    open var frame: CGRect = .zero
    open var bounds: CGRect = .zero
    open var clipsToBounds = false
    open var isUserInteractionEnabled = true
    open var contentMode: UIView.ContentMode = .scaleToFill
    open var translatesAutoresizingMaskIntoConstraints = true
    open var accessibilityIdentifier: String?
    open var accessibilityLabel: String?
    open var subviews: [UIView] { [] }
    open var superview: UIView? { nil }
    open func addSubview(_ view: UIView) {}
    open func removeFromSuperview() {}
    open func layoutIfNeeded() {}
    open func setNeedsLayout() {}
    open var topAnchor: NSLayoutAnchor<NSLayoutYAxisAnchor> { NSLayoutAnchor() }
    open var bottomAnchor: NSLayoutAnchor<NSLayoutYAxisAnchor> { NSLayoutAnchor() }
    open var centerYAnchor: NSLayoutAnchor<NSLayoutYAxisAnchor> { NSLayoutAnchor() }
    open var leadingAnchor: NSLayoutAnchor<NSLayoutXAxisAnchor> { NSLayoutAnchor() }
    open var trailingAnchor: NSLayoutAnchor<NSLayoutXAxisAnchor> { NSLayoutAnchor() }
    open var centerXAnchor: NSLayoutAnchor<NSLayoutXAxisAnchor> { NSLayoutAnchor() }
    open var heightAnchor: NSLayoutDimension { NSLayoutDimension() }
    open var widthAnchor: NSLayoutDimension { NSLayoutDimension() }
    public typealias ContentMode = UIViewContentMode
    public static func animate(withDuration duration: TimeInterval, animations: @escaping () -> Void) {}
    public static func animate(withDuration duration: TimeInterval, animations: @escaping () -> Void, completion: ((Bool) -> Void)?) {}
}

@objc open class UILabel: UIView {
    open var text: String?
    open var textColor: UIColor?
    open var font: UIFont?
    open var numberOfLines = 1
    open var textAlignment: NSTextAlignment = .natural
    open var attributedText: NSAttributedString?
}

public struct UIControlState: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let normal = UIControlState([]), highlighted = UIControlState(rawValue: 1), disabled = UIControlState(rawValue: 2),
                      selected = UIControlState(rawValue: 4)
}
public struct UIControlEvent: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let touchUpInside = UIControlEvent(rawValue: 64), valueChanged = UIControlEvent(rawValue: 4096),
                      editingChanged = UIControlEvent(rawValue: 131072)
}

@objc open class UIControl: UIView {
    open var isEnabled = true
    open var isSelected = false
    public typealias State = UIControlState
    public typealias Event = UIControlEvent
    open func addTarget(_ target: Any?, action: Selector, for controlEvents: UIControl.Event) {}
}

public enum UIButtonType: Int, Sendable { case custom, system, close }
@objc open class UIButton: UIControl {
    public init(type buttonType: UIButton.ButtonType) { super.init() }
    public override init() { super.init() }
    public typealias ButtonType = UIButtonType
    open var titleLabel: UILabel? { UILabel() }
    open func setTitle(_ title: String?, for state: UIControl.State) {}
    open func setTitleColor(_ color: UIColor?, for state: UIControl.State) {}
    open func setImage(_ image: UIImage?, for state: UIControl.State) {}
    open func title(for state: UIControl.State) -> String? { nil }
}

@objc open class UISwitch: UIControl {
    open var isOn = false
    open var onTintColor: UIColor?
    open var thumbTintColor: UIColor?
    open func setOn(_ on: Bool, animated: Bool) {}
}

public enum UIReturnKeyType: Int, Sendable { case `default`, go, done, next, send }
public enum UITextAutocapitalizationType: Int, Sendable { case none, words, sentences, allCharacters }
public enum UITextAutocorrectionType: Int, Sendable { case `default`, no, yes }
public enum UIKeyboardType: Int, Sendable { case `default`, numberPad, emailAddress }

@objc open class UITextField: UIControl {
    open var text: String?
    open var placeholder: String?
    open var font: UIFont?
    open var textColor: UIColor?
    open var isSecureTextEntry = false
    open var returnKeyType: UIReturnKeyType = .default
    open var autocapitalizationType: UITextAutocapitalizationType = .sentences
    open var autocorrectionType: UITextAutocorrectionType = .default
    open var keyboardType: UIKeyboardType = .default
    open weak var delegate: (any UITextFieldDelegate)?
}
public protocol UITextFieldDelegate: AnyObject {}

public enum UIActivityIndicatorViewStyle: Int, Sendable { case medium, large, white, whiteLarge, gray }
@objc open class UIActivityIndicatorView: UIView {
    public init(style: UIActivityIndicatorView.Style) { super.init() }
    public override init() { super.init() }
    open var hidesWhenStopped = true
    open var color: UIColor?
    open var isAnimating: Bool { false }
    open func startAnimating() {}
    open func stopAnimating() {}
    public typealias Style = UIActivityIndicatorViewStyle
}

@objc open class UIImageView: UIView {
    public init(image: UIImage?) { super.init() }
    public override init() { super.init() }
    open var image: UIImage?
}

@objc open class UIScrollView: UIView {
    open var contentInset: UIEdgeInsets = .zero
    open var contentOffset: CGPoint = .zero
    open func scrollRectToVisible(_ rect: CGRect, animated: Bool) {}
    open func setContentOffset(_ offset: CGPoint, animated: Bool) {}
}
public struct UIEdgeInsets: Sendable {
    public var top: CGFloat, left: CGFloat, bottom: CGFloat, right: CGFloat
    public init(top: CGFloat, left: CGFloat, bottom: CGFloat, right: CGFloat) { self.top = top; self.left = left; self.bottom = bottom; self.right = right }
    public static let zero = UIEdgeInsets(top: 0, left: 0, bottom: 0, right: 0)
}

public enum NSLayoutConstraintAxis: Int, Sendable { case horizontal, vertical }
public enum UIStackViewDistribution: Int, Sendable { case fill, fillEqually, fillProportionally, equalSpacing, equalCentering }
public enum UIStackViewAlignment: Int, Sendable { case fill, leading, top, center, trailing, bottom }
@objc open class UIStackView: UIView {
    public init(arrangedSubviews views: [UIView]) { super.init() }
    public override init() { super.init() }
    open var axis: NSLayoutConstraint.Axis = .horizontal
    open var spacing: CGFloat = 0
    open var distribution: UIStackView.Distribution = .fill
    open var alignment: UIStackView.Alignment = .fill
    open var arrangedSubviews: [UIView] { [] }
    open func addArrangedSubview(_ view: UIView) {}
    open func removeArrangedSubview(_ view: UIView) {}
    public typealias Distribution = UIStackViewDistribution
    public typealias Alignment = UIStackViewAlignment
}
extension NSLayoutConstraint { public typealias Axis = NSLayoutConstraintAxis }

// MARK: View controllers

public enum UIModalPresentationStyle: Int, Sendable { case fullScreen, pageSheet, formSheet, overFullScreen, overCurrentContext, custom, automatic }
public enum UIModalTransitionStyle: Int, Sendable { case coverVertical, flipHorizontal, crossDissolve }

@objc open class UIViewController: UIResponder {
    public override init() {}
    open var view: UIView! = UIView()
    open var title: String?
    open var navigationController: UINavigationController? { nil }
    open var presentingViewController: UIViewController? { nil }
    open var presentedViewController: UIViewController? { nil }
    open var isMovingFromParent: Bool { false }
    open var isBeingDismissed: Bool { false }
    open var isBeingPresented: Bool { false }
    open var modalPresentationStyle: UIModalPresentationStyle = .automatic
    open var modalTransitionStyle: UIModalTransitionStyle = .coverVertical
    open func viewDidLoad() {}
    open func viewWillAppear(_ animated: Bool) {}
    open func viewDidAppear(_ animated: Bool) {}
    open func viewWillDisappear(_ animated: Bool) {}
    open func viewDidDisappear(_ animated: Bool) {}
    open func present(_ viewControllerToPresent: UIViewController, animated flag: Bool, completion: (() -> Void)? = nil) {}
    open func dismiss(animated flag: Bool, completion: (() -> Void)? = nil) {}
}

@objc open class UINavigationController: UIViewController {
    public init(rootViewController: UIViewController) { super.init() }
    public override init() { super.init() }
    open var viewControllers: [UIViewController] = []
    open var topViewController: UIViewController? { viewControllers.last }
    open func pushViewController(_ viewController: UIViewController, animated: Bool) {}
    @discardableResult open func popViewController(animated: Bool) -> UIViewController? { nil }
    @discardableResult open func popToViewController(_ viewController: UIViewController, animated: Bool) -> [UIViewController]? { nil }
    @discardableResult open func popToRootViewController(animated: Bool) -> [UIViewController]? { nil }
    open func setViewControllers(_ viewControllers: [UIViewController], animated: Bool) {}
}

@objc open class UIStoryboard {
    public init(name: String, bundle storyboardBundleOrNil: Bundle?) {}
    open func instantiateViewController(withIdentifier identifier: String) -> UIViewController { UIViewController() }
}

public enum UIAlertControllerStyle: Int, Sendable { case actionSheet, alert }
public enum UIAlertActionStyle: Int, Sendable { case `default`, cancel, destructive }
@objc open class UIAlertAction {
    public init(title: String?, style: UIAlertAction.Style, handler: ((UIAlertAction) -> Void)? = nil) {}
    public typealias Style = UIAlertActionStyle
}
@objc open class UIAlertController: UIViewController {
    public init(title: String?, message: String?, preferredStyle: UIAlertController.Style) { super.init() }
    open func addAction(_ action: UIAlertAction) {}
    public typealias Style = UIAlertControllerStyle
}
