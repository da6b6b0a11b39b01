import Foundation
import IDVEngine
import Synchronization

/// Prometheus metrics (text exposition format 0.0.4), served at `GET /metrics`:
/// - `idvd_http_requests_total{route,method,status}` counter
/// - `idvd_http_request_duration_seconds{route}` histogram
/// - `idvd_flow_outcomes_total{flow,outcome}` counter (outcomes: `logged_in`, `cancelled`,
///   `attempts_exhausted`, `locked`, `reset`, … — whatever a flow reports)
/// - `idvd_http_requests_in_flight` gauge (handlers running), `idvd_http_requests_queued` gauge
///   (requests waiting for one of the `http.workers` threads), `idvd_up` gauge.
/// - `idvd_webhook_outbox_depth` gauge and `idvd_webhook_deliveries_total{result}` counter (while
///   the webhook delivery worker runs; docs/WEBHOOKS.md).
/// - `idvd_store_write_lock_wait_seconds` histogram: time each store transaction (and each write
///   outside one) waited for the store's write lock (``Store/writeLockWaits()``; absent when the
///   store does not measure it).
/// - `idvd_store_unavailable_total{reason}` counter: requests refused with 503 1038 because the
///   database could not serve (``StoreUnavailability``: `unreachable`, `shutting_down`,
///   `too_many_connections`, `pool_exhausted`, `write_conflict`, `busy`); also the readiness
///   checks that found it so (`GET /readyz`).
public final class Metrics: FlowOutcomeCounter, Sendable {
    /// What the counters hold; every read and write goes through ``state``'s lock.
    private struct State {
        var requests: [String: Int] = [:]                  // "route\u{0}method\u{0}status"
        var durations: [String: DurationHistogram] = [:]   // route
        var flows: [String: Int] = [:]                     // "flow\u{0}outcome"
        var webhookAttempts: [String: Int] = [:]           // result
        var webhookOutboxDepth: Int?
        var storeUnavailable: [String: Int] = [:]          // reason
    }
    private let state = Mutex(State())
    /// Upper bounds of the latency buckets, seconds.
    public static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    public init() {}

    /// The methods HTTP defines (RFC 9110 §9.3, RFC 5789): the `method` label is one of these or
    /// `other`, so a client's made-up method can neither break the exposition text nor add series.
    public static let methodLabels: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]

    public func observeRequest(route: String, method: String, status: Int, seconds: Double) {
        let methodLabel = Self.methodLabels.contains(method) ? method : "other"
        let key = "\(route)\u{0}\(methodLabel)\u{0}\(status)"
        state.withLock {
            $0.requests[key, default: 0] += 1
            $0.durations[route, default: DurationHistogram(buckets: Self.buckets)].observe(seconds)
        }
    }

    public func flowOutcome(flow: String, outcome: String, count: Int = 1) {
        let key = "\(flow)\u{0}\(outcome)"
        state.withLock { $0.flows[key, default: 0] += count }
    }

    /// One webhook delivery attempt ended: `delivered`, `retry` or `gave_up` (IDVWebhooks `WebhookDeliverer`).
    public func webhookAttempt(result: String) {
        state.withLock { $0.webhookAttempts[result, default: 0] += 1 }
    }

    /// Pending webhook deliveries in the store's outbox, as the delivery worker last counted them.
    public func setWebhookOutboxDepth(_ n: Int) {
        state.withLock { $0.webhookOutboxDepth = n }
    }

    /// A request (or a readiness check) met the database unable to serve, for `reason`
    /// (a ``StoreUnavailability`` raw value).
    public func storeUnavailable(reason: String) {
        state.withLock { $0.storeUnavailable[reason, default: 0] += 1 }
    }

    private static func esc(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// The exposition text; `storeWriteLockWaits` from ``Store/writeLockWaits()``.
    public func render(inFlight: Int, queued: Int, storeWriteLockWaits: DurationHistogram? = nil) -> String {
        let (requests, durations, flows, webhookAttempts, webhookOutboxDepth, storeUnavailable) = state.withLock {
            ($0.requests, $0.durations, $0.flows, $0.webhookAttempts, $0.webhookOutboxDepth, $0.storeUnavailable)
        }
        var s = "# HELP idvd_up 1 while the server runs.\n# TYPE idvd_up gauge\nidvd_up 1\n"
        s += "# HELP idvd_http_requests_in_flight Requests being handled.\n# TYPE idvd_http_requests_in_flight gauge\n"
        s += "idvd_http_requests_in_flight \(inFlight)\n"
        s += "# HELP idvd_http_requests_queued Requests waiting for a handler thread (http.workers).\n# TYPE idvd_http_requests_queued gauge\n"
        s += "idvd_http_requests_queued \(queued)\n"
        s += "# HELP idvd_http_requests_total HTTP requests by route pattern, method and status.\n# TYPE idvd_http_requests_total counter\n"
        for (k, v) in requests.sorted(by: { $0.key < $1.key }) {
            let p = k.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            s += "idvd_http_requests_total{route=\"\(Self.esc(p[0]))\",method=\"\(Self.esc(p[1]))\",status=\"\(p[2])\"} \(v)\n"
        }
        s += "# HELP idvd_http_request_duration_seconds Request handling time by route pattern.\n# TYPE idvd_http_request_duration_seconds histogram\n"
        for (route, h) in durations.sorted(by: { $0.key < $1.key }) {
            let r = Self.esc(route)
            for (i, b) in Self.buckets.enumerated() {
                s += "idvd_http_request_duration_seconds_bucket{route=\"\(r)\",le=\"\(b)\"} \(h.counts[i])\n"
            }
            s += "idvd_http_request_duration_seconds_bucket{route=\"\(r)\",le=\"+Inf\"} \(h.count)\n"
            s += "idvd_http_request_duration_seconds_sum{route=\"\(r)\"} \(h.sum)\n"
            s += "idvd_http_request_duration_seconds_count{route=\"\(r)\"} \(h.count)\n"
        }
        s += "# HELP idvd_flow_outcomes_total Flow endings by flow and outcome.\n# TYPE idvd_flow_outcomes_total counter\n"
        for (k, v) in flows.sorted(by: { $0.key < $1.key }) {
            let p = k.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            s += "idvd_flow_outcomes_total{flow=\"\(Self.esc(p[0]))\",outcome=\"\(Self.esc(p[1]))\"} \(v)\n"
        }
        if let depth = webhookOutboxDepth {
            s += "# HELP idvd_webhook_outbox_depth Webhook deliveries pending in the outbox (as the delivery worker last counted).\n"
            s += "# TYPE idvd_webhook_outbox_depth gauge\nidvd_webhook_outbox_depth \(depth)\n"
            s += "# HELP idvd_webhook_deliveries_total Webhook delivery attempts by result (delivered, retry, gave_up).\n"
            s += "# TYPE idvd_webhook_deliveries_total counter\n"
            for r in ["delivered", "retry", "gave_up"] { s += "idvd_webhook_deliveries_total{result=\"\(r)\"} \(webhookAttempts[r] ?? 0)\n" }
        }
        s += "# HELP idvd_store_unavailable_total Requests and readiness checks that met the database unable to serve, by reason.\n"
        s += "# TYPE idvd_store_unavailable_total counter\n"
        for r in StoreUnavailability.allCases { s += "idvd_store_unavailable_total{reason=\"\(r.rawValue)\"} \(storeUnavailable[r.rawValue] ?? 0)\n" }
        if let h = storeWriteLockWaits {
            s += "# HELP idvd_store_write_lock_wait_seconds Time a store transaction or write waited for the write lock.\n"
            s += "# TYPE idvd_store_write_lock_wait_seconds histogram\n"
            for (i, b) in h.buckets.enumerated() { s += "idvd_store_write_lock_wait_seconds_bucket{le=\"\(b)\"} \(h.counts[i])\n" }
            s += "idvd_store_write_lock_wait_seconds_bucket{le=\"+Inf\"} \(h.count)\n"
            s += "idvd_store_write_lock_wait_seconds_sum \(h.sum)\nidvd_store_write_lock_wait_seconds_count \(h.count)\n"
        }
        return s
    }
}
