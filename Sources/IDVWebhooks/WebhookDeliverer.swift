import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime

/// One POST's result as the deliverer sees it: an HTTP status, or a transport failure.
public enum WebhookPostResult: Sendable, Equatable {
    case status(Int)
    case failure(WebhookFailure)
}

/// Sends one webhook POST (``URLSessionWebhookClient`` in `idvd`; tests may pass another).
public protocol WebhookHTTPClient: Sendable {
    /// POSTs `body` with `headers` to `url`, giving up after `timeout` seconds. Never follows a redirect.
    func post(url: URL, headers: [String: String], body: Data, timeout: Int) -> WebhookPostResult
}

/// The webhook client of `idvd`: Foundation's `URLSession` (FoundationNetworking on Linux, over
/// libcurl): TLS with the system's trust store for `https://`, an ephemeral session (no cookies,
/// no cache, no stored credentials), redirects refused (a 3xx is a failed attempt: a signed body is
/// never replayed to a URL the operator did not register).
public final class URLSessionWebhookClient: NSObject, WebhookHTTPClient, URLSessionTaskDelegate, @unchecked Sendable {
    // @unchecked: `session` is set once in `init` (it needs `self` as its delegate) and only read after.
    private var session: URLSession!

    public override init() {
        super.init()
        let cfg = URLSessionConfiguration.ephemeral
        cfg.httpCookieAcceptPolicy = .never
        cfg.httpShouldSetCookies = false
        cfg.urlCache = nil
        cfg.httpMaximumConnectionsPerHost = 4
        session = URLSession(configuration: cfg, delegate: self, delegateQueue: nil)
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    private final class Box: @unchecked Sendable { var result: WebhookPostResult = .failure(.transport) }
    // Box: written by the URLSession completion handler before it signals the semaphore `post` waits on, read after.

    public func post(url: URL, headers: [String: String], body: Data, timeout: Int) -> WebhookPostResult {
        var req = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: TimeInterval(timeout))
        req.httpMethod = "POST"
        req.httpBody = body
        for (k, v) in headers { req.setValue(v, forHTTPHeaderField: k) }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: req) { _, response, error in
            if let http = response as? HTTPURLResponse {
                box.result = .status(http.statusCode)
            } else if let e = error as? URLError {
                switch e.code {
                case .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet: box.result = .failure(.connectionRefused)
                case .timedOut: box.result = .failure(.timeout)
                default: box.result = .failure(.transport)
                }
            } else {
                box.result = .failure(.transport)
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + .seconds(timeout + 5)) == .timedOut {
            task.cancel()
            return .failure(.timeout)
        }
        return box.result
    }
}

/// Signs and checks deliveries (IDVCore ``WebhookSignature``; docs/WEBHOOKS.md "Signature").
public enum WebhookSigner {
    /// The hex HMAC-SHA256 of `"<timestamp>." + body` under `secret` (its UTF-8 bytes).
    public static func signature(secret: String, timestamp: Int, body: Data) -> String {
        Crypto.hex(Crypto.hmacSHA256(key: Array(secret.utf8), message: Array(WebhookSignature.signedPayload(timestamp: timestamp, body: body))))
    }

    /// Why a received delivery does not verify.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case malformedHeader, stale(seconds: Int), mismatch
        public var description: String {
            switch self {
            case .malformedHeader: return "the IDV-Signature header is not t=<unix seconds>,v1=<hex>"
            case let .stale(s): return "the signature's timestamp is \(s) s from now (outside the tolerance): refused as a possible replay"
            case .mismatch: return "no v1 signature matches the body under this secret"
            }
        }
    }

    /// What a receiver does: parses the header, refuses a timestamp more than `tolerance` seconds
    /// from `now`, recomputes the HMAC over the raw `body` and compares it in constant time with
    /// every `v1` value. Throws ``Refusal``.
    public static func verify(header: String, body: Data, secret: String, now: Int, tolerance: Int = WebhookSignature.defaultTolerance) throws {
        guard let (t, sigs) = WebhookSignature.parse(header) else { throw Refusal.malformedHeader }
        guard abs(now - t) <= tolerance else { throw Refusal.stale(seconds: now - t) }
        let expected = Array(signature(secret: secret, timestamp: t, body: body).utf8)
        guard sigs.contains(where: { Crypto.constantTimeEqual(Array($0.utf8), expected) }) else { throw Refusal.mismatch }
    }

}

/// The delivery worker of one `idvd serve` (docs/WEBHOOKS.md "Delivery"): every `webhooks.poll_ms`
/// it claims due deliveries (a lease of ``WebhookSettings/leaseSeconds`` under this process's
/// claimant id, so other nodes skip them), POSTs each signed with its endpoint's secret, and records
/// the attempt: delivered on 2xx; otherwise retried after the exponential back-off with jitter, or
/// given up once the event is older than `webhooks.max_age_seconds`. Logs ids, types, statuses and
/// failure categories — never a body, URL or secret.
public final class WebhookDeliverer: @unchecked Sendable {
    // @unchecked: `stopping`, `thread` and `running` are read and written under `lock` (a condition:
    // `stop()` waits on it for the worker thread to finish).
    public let store: any WebhookStore
    let vault: any Vault
    let settings: WebhookSettings
    let metrics: Metrics?
    let client: any WebhookHTTPClient
    let clock: any Clock
    /// Names this worker in its claims (one per process).
    public let claimant: String
    private let lock = NSCondition()
    private var stopping = false
    private var thread: Thread?
    private var running = false

    public init(store: any WebhookStore, vault: any Vault, settings: WebhookSettings, metrics: Metrics? = nil,
                client: any WebhookHTTPClient = URLSessionWebhookClient(), clock: any Clock = SystemClock(),
                claimant: String = "node-" + Crypto.randomID(bytes: 8)) {
        self.store = store
        self.vault = vault
        self.settings = settings
        self.metrics = metrics
        self.client = client
        self.clock = clock
        self.claimant = claimant
    }

    /// Starts the worker thread.
    public func start() {
        lock.withLock {
            guard thread == nil else { return }
            running = true
            let t = Thread { [self] in loop() }
            t.name = "idvd.webhooks"
            thread = t
            t.start()
        }
    }

    /// Stops the worker: the attempt in progress finishes (at most `webhooks.timeout_seconds`);
    /// deliveries not yet attempted stay pending for the next start or another node.
    public func stop() {
        lock.withLock {
            stopping = true
            lock.broadcast()
            while running && thread != nil { lock.wait() }
        }
    }

    /// When the retention purge last ran (monotonic seconds).
    private var lastPurge = 0.0

    /// Deletes events past `webhooks.retention_seconds` that wait for no delivery; returns how many.
    @discardableResult
    public func purgeExpired() throws -> Int {
        var total = 0
        while true {
            let n = try store.purgeWebhookEvents(before: clock.now() - settings.retentionSeconds, limit: 500)
            total += n
            if n < 500 { break }
        }
        if total > 0 { Log.event("webhook outbox purged", ["events": .integer(total)]) }
        return total
    }

    private func loop() {
        while true {
            let mono = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
            if mono - lastPurge >= 300 {
                lastPurge = mono
                do { try purgeExpired() } catch { Log.event("webhook outbox purge failed", level: "error", ["kind": .string("\(type(of: error))")]) }
            }
            let stop = lock.withLock {
                if stopping { running = false; lock.broadcast() }
                return stopping
            }
            if stop { return }
            var delivered = 0
            do { delivered = try deliverDue() } catch {
                Log.event("webhook delivery failed", level: "error", ["kind": .string("\(type(of: error))")])
            }
            if let depth = try? store.webhookOutboxDepth() { metrics?.setWebhookOutboxDepth(depth) }
            // A full batch: more may be due at once.
            if delivered >= settings.batch { continue }
            lock.withLock {
                if !stopping { _ = lock.wait(until: Date().addingTimeInterval(Double(settings.pollMilliseconds) / 1000)) }
            }
        }
    }

    /// Claims one batch of due deliveries and attempts each (concurrently); returns how many were attempted.
    @discardableResult
    public func deliverDue() throws -> Int {
        let claims = try store.claimWebhookDeliveries(now: clock.now(), limit: settings.batch, claimant: claimant, leaseSeconds: settings.leaseSeconds)
        guard !claims.isEmpty else { return 0 }
        DispatchQueue.concurrentPerform(iterations: claims.count) { i in attempt(claims[i]) }
        return claims.count
    }

    func attempt(_ c: WebhookClaim) {
        let d = c.delivery
        let attemptNumber = d.attempts + 1
        let post: WebhookPostResult
        if let url = URL(string: c.url), (try? WebhookURLPolicy.check(c.url, allowHTTP: settings.allowHTTP)) != nil {
            let binding = VaultBinding.webhookSecret(endpointID: d.endpointID)
            if let secretBytes = try? vault.open(c.secret, associatedData: binding) {
                let t = clock.now()
                // During a rotation's overlap the previous secret signs too (after the new one).
                let previous = c.previousSecret.flatMap { try? vault.open($0, associatedData: binding) }
                let sigs = ([secretBytes] + (previous.map { [$0] } ?? [])).map {
                    WebhookSigner.signature(secret: String(decoding: $0, as: UTF8.self), timestamp: t, body: c.body)
                }
                post = client.post(url: url, headers: [
                    "Content-Type": "application/json",
                    "User-Agent": "idvd/\(OpenIDV.version)",
                    WebhookSignature.header: WebhookSignature.headerValue(timestamp: t, signatures: sigs),
                    WebhookSignature.eventIDHeader: d.eventID,
                    WebhookSignature.eventTypeHeader: d.eventType.rawValue,
                    "IDV-Delivery-Attempt": String(attemptNumber),
                ], body: c.body, timeout: settings.timeoutSeconds)
            } else {
                post = .failure(.secretUnreadable)
            }
        } else {
            post = .failure(.urlRefused)
        }
        let now = clock.now()
        let result: WebhookAttemptResult
        var status: Int?
        var failure: WebhookFailure?
        switch post {
        case let .status(s) where (200..<300).contains(s): status = s
        case let .status(s): status = s; failure = (300..<400).contains(s) ? .redirect : .httpStatus
        case let .failure(f): failure = f
        }
        if let failure {
            let next = now + settings.backoff(afterAttempts: attemptNumber, unit: Double(UInt32.random(in: 0...UInt32.max)) / Double(UInt32.max))
            result = next - d.createdAt > settings.maxAgeSeconds ? .gaveUp(status: status, failure: failure, at: now)
                : .retry(status: status, failure: failure, at: now, nextAt: next)
        } else {
            result = .delivered(status: status ?? 200, at: now)
        }
        let recorded = (try? store.recordWebhookAttempt(deliveryID: d.deliveryID, claimant: claimant, result: result)) ?? false
        let label: String
        var fields: [String: JSONValue] = ["delivery_id": .string(d.deliveryID), "event_id": .string(d.eventID), "event_type": .string(d.eventType.rawValue),
                                           "endpoint_id": .string(d.endpointID), "attempt": .integer(attemptNumber),
                                           "status": status.map { .integer($0) } ?? .null, "error": failure.map { .string($0.rawValue) } ?? .null]
        switch result {
        case .delivered: label = "delivered"
        case let .retry(_, _, _, next): label = "retry"; fields["next_attempt_at"] = .integer(next)
        case .gaveUp: label = "gave_up"
        }
        fields["result"] = .string(label)
        if !recorded { fields["claim_lost"] = true }
        metrics?.webhookAttempt(result: label)
        Log.event("webhook delivery", level: label == "delivered" ? "info" : "warning", fields)
    }
}
