import Foundation
import IDVCore

// What the engine needs of the process around it, as ports: the cost of an upload before its
// pixels are decoded, admission of an analysis against the server's budget, and a counter of flow
// outcomes. IDVRuntime implements the last two (`AnalysisLimiter`, `Metrics`); IDVReaders the first.

/// What one analysis costs, from its images' headers (no pixel decoded).
public struct AnalysisCost: Sendable, Equatable {
    /// Pixels of every image of the request, summed.
    public var pixels: Int
    /// Estimated peak memory of the analysis, bytes (``UploadCosting`` documents its model).
    public var bytes: Int
    public init(pixels: Int, bytes: Int) {
        self.pixels = pixels
        self.bytes = bytes
    }
    public static let zero = AnalysisCost(pixels: 0, bytes: 0)
}

/// Costs an upload from its images' headers before anything is decoded (production: IDVReaders
/// `ImageHeaderCosting`, over Imaging's header reader).
public protocol UploadCosting: Sendable {
    /// Document pages (JPEG/PNG each).
    func cost(pages: [Data]) -> AnalysisCost
    /// Selfie frames (JPEG/PNG each), analysed one after another.
    func cost(frames: [Data]) -> AnalysisCost
}

/// An analysis admitted by ``AnalysisAdmission/admit(cost:run:user:)``: what was reserved, handed
/// back to ``AnalysisAdmission/release(_:)`` when the analysis ends.
public struct AnalysisReservation: Sendable, Equatable {
    /// Estimated memory held, bytes.
    public let bytes: Int
    /// The flow run and user the analysis belongs to (one analysis at a time for each).
    public let run: String?
    public let user: String?
    /// When it was admitted (`DispatchTime` uptime, nanoseconds), for the analysis-time figures.
    public let startedAt: UInt64
    public init(bytes: Int, run: String?, user: String?, startedAt: UInt64) {
        self.bytes = bytes
        self.run = run
        self.user = user
        self.startedAt = startedAt
    }
}

/// Admits analyses against the server's budget before the engine runs a reader (docs/PROTOCOL.md
/// §7 "Heavy work"; production: IDVRuntime `AnalysisLimiter`). Thread-safe.
public protocol AnalysisAdmission: Sendable {
    /// Admits one analysis of `cost` for flow run `run` of user `user`, or throws at once:
    /// ``IDVError`` 1102 `uploadTooCostly` when it can never fit, an `AnalysisRefusal` (1100
    /// `analysisBusy`, 1101 `analysisInProgress`, with a `Retry-After`) when it cannot fit now.
    func admit(cost: AnalysisCost, run: String?, user: String?) throws -> AnalysisReservation
    /// Gives back what ``admit(cost:run:user:)`` reserved.
    func release(_ reservation: AnalysisReservation)
}

/// Counts how flows ended (`idvd_flow_outcomes_total{flow,outcome}`; production: IDVRuntime
/// `Metrics`). Called after a transaction committed, never inside one. Thread-safe.
public protocol FlowOutcomeCounter: Sendable {
    /// `count` more endings of `flow` (a ``FlowName``, or `session` for the sweep) with `outcome`
    /// (a ``FlowOutcome`` raw value, or a sweep count such as `anonymous_expired`).
    func flowOutcome(flow: String, outcome: String, count: Int)
}

extension FlowOutcomeCounter {
    /// One more ending of `flow` with `outcome`.
    public func flowOutcome(flow: String, outcome: String) { flowOutcome(flow: flow, outcome: outcome, count: 1) }
}

/// A cumulative histogram of durations (seconds), in the Prometheus shape: `counts[i]` observations
/// ≤ `buckets[i]`, plus their `sum` and `count`.
public struct DurationHistogram: Sendable, Equatable {
    /// Upper bounds, seconds, ascending.
    public let buckets: [Double]
    public private(set) var counts: [Int]
    public private(set) var sum = 0.0
    public private(set) var count = 0

    /// Bounds for lock waits: 10 µs … 5 s (an uncontended wait is microseconds).
    public static let lockWaitBuckets: [Double] = [0.00001, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5]

    public init(buckets: [Double]) {
        self.buckets = buckets
        counts = [Int](repeating: 0, count: buckets.count)
    }

    public mutating func observe(_ seconds: Double) {
        for (i, b) in buckets.enumerated() where seconds <= b { counts[i] += 1 }
        sum += seconds
        count += 1
    }
}
