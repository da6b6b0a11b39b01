// OBJECTIVE-C STUB — only the `Selector` type, so `#selector(…)` in the codelabs' screens type-checks
// on Linux (no Objective-C runtime). Not seed code; see Tests/SeedScreens/UIKit/UIKit.swift.
public struct Selector: Sendable {
    public init(_ name: String) {}
}
