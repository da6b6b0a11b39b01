import Foundation

/// The engine's time: Unix seconds. Injected into ``FlowEngine`` and handed to every flow through
/// ``Facts/now``, so tests advance time instead of sleeping (``ManualClock``).
public protocol Clock: Sendable {
    /// Now, Unix seconds.
    func now() -> Int
}

/// The wall clock (`Date()`).
public struct SystemClock: Clock {
    public init() {}
    public func now() -> Int { Int(Date().timeIntervalSince1970) }
}

/// A clock that moves only when told: tests set and advance it. Thread-safe.
public final class ManualClock: Clock, @unchecked Sendable {
    // @unchecked: `seconds` is only read and written under `lock`.
    private let lock = NSLock()
    private var seconds: Int

    /// Starts at `start` (Unix seconds; default: the wall clock now).
    public init(_ start: Int = Int(Date().timeIntervalSince1970)) { seconds = start }

    public func now() -> Int { lock.lock(); defer { lock.unlock() }; return seconds }

    /// Moves the clock forward by `delta` seconds.
    public func advance(by delta: Int) { lock.lock(); seconds += delta; lock.unlock() }

    /// Sets the clock to `time` (Unix seconds).
    public func set(_ time: Int) { lock.lock(); seconds = time; lock.unlock() }
}
