import Foundation
import Synchronization

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

/// A clock that moves only when told: tests set and advance it. Thread-safe (one atomic integer).
public final class ManualClock: Clock, Sendable {
    private let seconds: Atomic<Int>

    /// Starts at `start` (Unix seconds; default: the wall clock now).
    public init(_ start: Int = Int(Date().timeIntervalSince1970)) { seconds = Atomic(start) }

    public func now() -> Int { seconds.load(ordering: .sequentiallyConsistent) }

    /// Moves the clock forward by `delta` seconds.
    public func advance(by delta: Int) { seconds.add(delta, ordering: .sequentiallyConsistent) }

    /// Sets the clock to `time` (Unix seconds).
    public func set(_ time: Int) { seconds.store(time, ordering: .sequentiallyConsistent) }
}
