import Foundation
import IDVCore
import IDVEngine
import Synchronization

// Heavy work kept apart from light work (issue #21 item 1). Document pages and selfie frames are
// analysed on a pool of their own (IDVHTTP `AnalysisPool`, `analysis.threads` threads, at most
// `analysis.queue_limit` waiting); every analysis is costed from its images' headers before a pixel
// is decoded (``UploadCosting``) and admitted against a memory budget, one at a time per flow run and
// per user. What does not fit is refused at once — 1100 `analysisBusy` (503) or 1101
// `analysisInProgress` (429), both with `Retry-After` — or, when it can never fit, 1102
// `uploadTooCostly` (413). docs/PROTOCOL.md §7 "Heavy work".

/// The settings of the analysis pool and its admission (`analysis.*`, ``ServerConfig/analysis``).
public struct AnalysisSettings: Sendable, Equatable {
    /// Threads that run analyses (document reads, selfie analyses); default one less than the cores
    /// (1 on 2 cores), so light requests keep a core.
    public var threads = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
    /// Analyses that may wait for a thread; one more is refused with 1100 at once.
    public var queueLimit = 2 * max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
    /// Most pixels one request's images may hold, summed over every page or frame (megapixels):
    /// the CPU cost of one analysis (150 VGA frames ≈ 46 MP).
    public var maxRequestMegapixels = 64
    /// Memory all analyses in flight may use together, MiB (estimated: ``AnalysisCost/bytes``).
    public var memoryBudgetMiB = 512
    /// Memory one analysis may use, MiB; an upload estimated above it is refused with 1102.
    public var maxAnalysisMiB = 320
    /// The longest `Retry-After` the server suggests, seconds.
    public var maxRetryAfterSeconds = 30

    public init() {}

    public var maxRequestPixels: Int { maxRequestMegapixels * 1_000_000 }
    public var memoryBudgetBytes: Int { memoryBudgetMiB << 20 }
    public var maxAnalysisBytes: Int { maxAnalysisMiB << 20 }
}

/// Limits on slow and numerous clients (`http.*`, ``ServerConfig/clients``), enforced by the
/// libmicrohttpd wrapper (issue #21 item 7).
public struct ClientLimits: Sendable, Equatable {
    /// A connection must have sent a complete request header this long after it opened; otherwise
    /// it is closed. A kept-alive connection gets max(this, 30 s — the inactivity timeout) after its
    /// previous response. 0 = off (only the 30 s inactivity timeout).
    public var headerDeadlineSeconds = 10
    /// After the header, a body must arrive at least this fast (bytes/s, measured after a grace of
    /// `headerDeadlineSeconds`); a slower one is closed. 0 = off.
    public var minBodyBytesPerSecond = 4096
    /// Connections one client address may hold at once (libmicrohttpd `MHD_OPTION_PER_IP_CONNECTION_LIMIT`);
    /// more are refused at accept. 0 = no limit.
    public var perAddressConnections = 64
    /// Connections the server holds at once (`MHD_OPTION_CONNECTION_LIMIT`); `idvd serve` raises its
    /// open-file limit to fit.
    public var connectionLimit = 4096

    public init() {}
}

/// A refusal that carries a `Retry-After` (seconds): 1100 `analysisBusy`, 1101 `analysisInProgress`.
public struct AnalysisRefusal: Error, Sendable, Equatable {
    public var error: IDVError
    public var retryAfterSeconds: Int
    public init(_ code: IDVErrorCode, retryAfterSeconds: Int, _ detail: String) {
        error = IDVError(code, "\(code.message) (\(detail); retry after \(retryAfterSeconds) s)")
        self.retryAfterSeconds = retryAfterSeconds
    }
}

/// Admission and accounting of analyses: the pool's thread/queue slots (``enqueue(key:)``), the
/// per-run/per-user rule and the memory budget (``admit(cost:run:user:)``), and their metrics.
/// Thread-safe: all its state sits in one ``Mutex``.
public final class AnalysisLimiter: AnalysisAdmission, Sendable {
    public let settings: AnalysisSettings

    /// Everything that changes, under ``state``'s lock.
    private struct State {
        var running = 0
        var queued = 0
        var queueKeys: Set<String> = []
        var activeRuns: Set<String> = []
        var activeUsers: Set<String> = []
        var memoryInUse = 0
        /// Exponentially weighted mean of analysis time, seconds (for Retry-After).
        var meanSeconds = 2.0
        var refusals: [String: Int] = [:]
        var waits = DurationHistogram(buckets: AnalysisLimiter.waitBuckets)
        var durations = DurationHistogram(buckets: AnalysisLimiter.durationBuckets)
        var maxWait = 0.0

        /// The `Retry-After` to suggest now, seconds: the mean analysis time times the analyses
        /// ahead per thread, 1 … `maxRetryAfterSeconds`.
        func retryAfter(_ settings: AnalysisSettings) -> Int {
            let ahead = Double(running + queued + 1) / Double(max(1, settings.threads))
            return min(settings.maxRetryAfterSeconds, max(1, Int((meanSeconds * ahead).rounded(.up))))
        }

        /// Counts a refusal for `reason` and makes its error.
        mutating func refuse(_ reason: String, _ code: IDVErrorCode, _ detail: String, _ settings: AnalysisSettings) -> AnalysisRefusal {
            refusals[reason, default: 0] += 1
            return AnalysisRefusal(code, retryAfterSeconds: retryAfter(settings), detail)
        }
    }
    private let state = Mutex(State())

    static let waitBuckets: [Double] = [0.001, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60]
    static let durationBuckets: [Double] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    /// The refusal reasons counted in `idvd_analysis_refusals_total{reason}`.
    public static let reasons = ["queue_full", "in_progress", "memory_budget", "too_costly"]

    public init(settings: AnalysisSettings) { self.settings = settings }

    /// A slot taken in the pool (queued until ``start(_:)``).
    public struct Ticket: Sendable {
        let key: String?
        let enqueuedAt: UInt64
    }

    /// Takes a pool slot for a request from `key` (its bearer token: one analysis queued or running
    /// per session), or refuses at once: 1101 when `key` holds one, 1100 when every thread is busy
    /// and `queueLimit` wait.
    public func enqueue(key: String?) -> Result<Ticket, AnalysisRefusal> {
        state.withLock { s in
            if let key, s.queueKeys.contains(key) {
                return .failure(s.refuse("in_progress", .analysisInProgress, "this session's previous upload is still being analysed", settings))
            }
            if s.running + s.queued >= settings.threads + settings.queueLimit {
                return .failure(s.refuse("queue_full", .analysisBusy, "\(s.running) analyses running, \(s.queued) waiting", settings))
            }
            s.queued += 1
            if let key { s.queueKeys.insert(key) }
            return .success(Ticket(key: key, enqueuedAt: DispatchTime.now().uptimeNanoseconds))
        }
    }

    /// The ticket's request leaves the queue for a thread; its wait is recorded.
    public func start(_ t: Ticket) {
        let wait = Double(DispatchTime.now().uptimeNanoseconds - t.enqueuedAt) / 1e9
        state.withLock { s in
            s.queued -= 1
            s.running += 1
            s.waits.observe(wait)
            s.maxWait = max(s.maxWait, wait)
        }
    }

    /// The ticket's request is answered.
    public func finish(_ t: Ticket) {
        state.withLock { s in
            s.running -= 1
            if let key = t.key { s.queueKeys.remove(key) }
        }
    }

    /// Admits one analysis of `cost` for flow run `run` of user `user`, or refuses at once:
    /// 1102 (plain ``IDVError``) when the request's pixels exceed `maxRequestMegapixels` or its
    /// memory `maxAnalysisMiB` — it can never fit; 1101 when the run or the user has an analysis
    /// in flight; 1100 when the memory budget cannot hold it now.
    public func admit(cost: AnalysisCost, run: String?, user: String?) throws -> AnalysisReservation {
        try state.withLock { s in
            if cost.pixels > settings.maxRequestPixels {
                s.refusals["too_costly", default: 0] += 1
                throw IDVError(.uploadTooCostly, "\(IDVErrorCode.uploadTooCostly.message) (its images hold \(Self.megapixels(cost.pixels)) MP together; "
                               + "one upload may hold \(settings.maxRequestMegapixels) MP)")
            }
            if cost.bytes > settings.maxAnalysisBytes {
                s.refusals["too_costly", default: 0] += 1
                throw IDVError(.uploadTooCostly, "\(IDVErrorCode.uploadTooCostly.message) (analysing it would need about \(cost.bytes >> 20) MiB; "
                               + "one analysis may use \(settings.maxAnalysisMiB) MiB)")
            }
            if let run, s.activeRuns.contains(run) {
                throw s.refuse("in_progress", .analysisInProgress, "this flow's previous upload is still being analysed", settings)
            }
            if let user, s.activeUsers.contains(user) {
                throw s.refuse("in_progress", .analysisInProgress, "another upload of this user is still being analysed", settings)
            }
            if s.memoryInUse + cost.bytes > settings.memoryBudgetBytes {
                throw s.refuse("memory_budget", .analysisBusy, "the analyses in flight hold the memory budget", settings)
            }
            s.memoryInUse += cost.bytes
            if let run { s.activeRuns.insert(run) }
            if let user { s.activeUsers.insert(user) }
            return AnalysisReservation(bytes: cost.bytes, run: run, user: user, startedAt: DispatchTime.now().uptimeNanoseconds)
        }
    }

    /// `pixels` in megapixels with one decimal ("81.0").
    static func megapixels(_ pixels: Int) -> String {
        let tenths = (pixels + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Gives back what ``admit(cost:run:user:)`` reserved; its time joins the mean used for Retry-After.
    public func release(_ r: AnalysisReservation) {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - r.startedAt) / 1e9
        state.withLock { s in
            s.memoryInUse -= r.bytes
            if let run = r.run { s.activeRuns.remove(run) }
            if let user = r.user { s.activeUsers.remove(user) }
            s.durations.observe(seconds)
            s.meanSeconds = 0.7 * s.meanSeconds + 0.3 * seconds
        }
    }

    /// A snapshot for `/healthz` and tests.
    public struct Snapshot: Sendable, Equatable {
        public var running: Int
        public var queued: Int
        public var threads: Int
        public var queueLimit: Int
        public var memoryInUseBytes: Int
        /// True when the next upload would be refused for want of a slot.
        public var saturated: Bool
    }

    public var snapshot: Snapshot {
        state.withLock { s in
            Snapshot(running: s.running, queued: s.queued, threads: settings.threads, queueLimit: settings.queueLimit,
                     memoryInUseBytes: s.memoryInUse, saturated: s.running + s.queued >= settings.threads + settings.queueLimit)
        }
    }

    /// The `/metrics` lines: `idvd_analysis_threads`, `idvd_analysis_in_flight`, `idvd_analysis_queue_depth`,
    /// `idvd_analysis_queue_limit`, `idvd_analysis_memory_reserved_bytes`, `idvd_analysis_refusals_total{reason}`,
    /// `idvd_analysis_wait_seconds` (histogram: time from arrival to an analysis thread),
    /// `idvd_analysis_wait_seconds_max`, `idvd_analysis_duration_seconds` (histogram: admitted analyses).
    public func renderMetrics() -> String {
        let now = state.withLock { $0 }
        let (running, queued, memoryInUse, refusals, waits, durations, maxWait) = (now.running, now.queued, now.memoryInUse, now.refusals,
                                                                                   now.waits, now.durations, now.maxWait)
        var s = "# HELP idvd_analysis_threads Threads that run analyses (analysis.threads).\n# TYPE idvd_analysis_threads gauge\n"
        s += "idvd_analysis_threads \(settings.threads)\n"
        s += "# HELP idvd_analysis_in_flight Uploads on an analysis thread now.\n# TYPE idvd_analysis_in_flight gauge\nidvd_analysis_in_flight \(running)\n"
        s += "# HELP idvd_analysis_queue_depth Uploads waiting for an analysis thread.\n# TYPE idvd_analysis_queue_depth gauge\nidvd_analysis_queue_depth \(queued)\n"
        s += "# HELP idvd_analysis_queue_limit Uploads that may wait (analysis.queue_limit).\n# TYPE idvd_analysis_queue_limit gauge\n"
        s += "idvd_analysis_queue_limit \(settings.queueLimit)\n"
        s += "# HELP idvd_analysis_memory_reserved_bytes Estimated memory reserved by admitted analyses.\n# TYPE idvd_analysis_memory_reserved_bytes gauge\n"
        s += "idvd_analysis_memory_reserved_bytes \(memoryInUse)\n"
        s += "# HELP idvd_analysis_refusals_total Uploads refused at admission, by reason.\n# TYPE idvd_analysis_refusals_total counter\n"
        for r in Self.reasons { s += "idvd_analysis_refusals_total{reason=\"\(r)\"} \(refusals[r] ?? 0)\n" }
        func histogram(_ name: String, _ help: String, _ h: DurationHistogram) {
            s += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
            for (i, b) in h.buckets.enumerated() { s += "\(name)_bucket{le=\"\(b)\"} \(h.counts[i])\n" }
            s += "\(name)_bucket{le=\"+Inf\"} \(h.count)\n\(name)_sum \(h.sum)\n\(name)_count \(h.count)\n"
        }
        histogram("idvd_analysis_wait_seconds", "Time an upload waited for an analysis thread.", waits)
        s += "# HELP idvd_analysis_wait_seconds_max Longest wait for an analysis thread since start.\n# TYPE idvd_analysis_wait_seconds_max gauge\n"
        s += "idvd_analysis_wait_seconds_max \(maxWait)\n"
        histogram("idvd_analysis_duration_seconds", "Time of an admitted analysis (costing to evidence).", durations)
        return s
    }
}
