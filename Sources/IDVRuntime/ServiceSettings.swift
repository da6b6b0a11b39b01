import Foundation
import IDVCore
import IDVEngine

/// Settings of the relying-party API (`rp.*`; appended to ``ServerConfig/settings``).
public struct RelyingPartySettings: Sendable, Equatable {
    /// Requests per minute one API client may send (a token bucket of this size refilled at this
    /// rate, per `idvd` process); above it 429 with 1133 and `Retry-After`.
    public var requestsPerMinute = 600
    /// Lifetime of a link `POST /v1/rp/verifications` creates when the request names none, seconds.
    public var linkTTLSeconds = 24 * 3600

    public init() {}

    static let settings: [ServerConfig.Setting] = [
        ServerConfig.Setting(key: "rp.rate_limit_per_minute", env: ServerConfig.envName("rp.rate_limit_per_minute"),
                             summary: "requests per minute one relying-party API client may send (per idvd process); above it 429 (1133)",
                             apply: { c, v in
                                 guard let n = Int(v.trimmingCharacters(in: .whitespaces)), n >= 1, n <= 1_000_000 else {
                                     throw IDVServerError.configuration("rp.rate_limit_per_minute must be an integer in 1…1000000, got '\(v)'")
                                 }
                                 c.rp.requestsPerMinute = n
                             }, current: { "\($0.rp.requestsPerMinute)" }),
    ]
}

/// Settings of the hosted page and its links (`web.*`, `links.*`; appended to ``ServerConfig/settings``).
public struct WebSettings: Sendable, Equatable {
    /// Serve the page under `/verify/` (default on).
    public var enabled = true
    /// Serve the page from this folder instead of the bundled assets (empty = bundled).
    public var assetsDirectory = ""
    /// The page's public origin for the links `create-link` prints, e.g. `https://idv.example.com`
    /// (empty = built from `listen.address`, `listen.port` and TLS).
    public var publicURL = ""
    /// Lifetime of a verification link when `create-link` gets no `--ttl`, seconds.
    public var linkTTLSeconds = 24 * 3600
    /// The longest lifetime a link may have, seconds (30 days).
    public static let maxLinkTTLSeconds = 30 * 24 * 3600

    public init() {}

    static let settings: [ServerConfig.Setting] = [
        ServerConfig.Setting(key: "web.enabled", env: ServerConfig.envName("web.enabled"),
                             summary: "serve the hosted verification page under /verify/ (true/false)",
                             apply: { c, v in
                                 switch v.lowercased() {
                                 case "1", "true", "yes", "on": c.web.enabled = true
                                 case "0", "false", "no", "off": c.web.enabled = false
                                 default: throw IDVServerError.configuration("web.enabled must be true or false, got '\(v)'")
                                 }
                             }, current: { $0.web.enabled ? "true" : "false" }),
        ServerConfig.Setting(key: "web.assets_dir", env: ServerConfig.envName("web.assets_dir"),
                             summary: "serve the page from this folder (index.html, app.js, …) instead of the bundled assets",
                             apply: { c, v in c.web.assetsDirectory = v }, current: { $0.web.assetsDirectory }),
        ServerConfig.Setting(key: "web.public_url", env: ServerConfig.envName("web.public_url"),
                             summary: "public origin of the page for the links create-link prints, e.g. https://idv.example.com",
                             apply: { c, v in
                                 let t = v.trimmingCharacters(in: .whitespaces)
                                 guard t.isEmpty || t.hasPrefix("https://") || t.hasPrefix("http://") else {
                                     throw IDVServerError.configuration("web.public_url must start with https:// (or http://), got '\(v)'")
                                 }
                                 c.web.publicURL = t.hasSuffix("/") ? String(t.dropLast()) : t
                             }, current: { $0.web.publicURL }),
        ServerConfig.Setting(key: "links.ttl_seconds", env: ServerConfig.envName("links.ttl_seconds"),
                             summary: "lifetime of a verification link (create-link without --ttl), seconds",
                             apply: { c, v in
                                 guard let n = Int(v.trimmingCharacters(in: .whitespaces)), n >= 1, n <= WebSettings.maxLinkTTLSeconds else {
                                     throw IDVServerError.configuration("links.ttl_seconds must be an integer in 1…\(WebSettings.maxLinkTTLSeconds), got '\(v)'")
                                 }
                                 c.web.linkTTLSeconds = n
                             }, current: { "\($0.web.linkTTLSeconds)" }),
    ]
}

/// Delivery settings (`webhooks.*`; appended to ``ServerConfig/settings``).
public struct WebhookSettings: Sendable, Equatable {
    /// Run the delivery worker in this `idvd serve` (default on; every node may run it).
    public var deliver = true
    /// Allow plain `http://` endpoints on non-loopback hosts (default off: https, or http to loopback).
    public var allowHTTP = false
    /// How often the worker looks for due deliveries, milliseconds.
    public var pollMilliseconds = 1000
    /// One attempt's time limit (connect + answer), seconds.
    public var timeoutSeconds = 10
    /// First retry after this many seconds; each later one doubles it (with jitter), up to `retryMaxSeconds`.
    public var retryBaseSeconds = 10
    public var retryMaxSeconds = 3600
    /// Give up on a delivery this long after its event, seconds (3 days).
    public var maxAgeSeconds = 3 * 24 * 3600
    /// Deliveries claimed per poll.
    public var batch = 16
    /// Keep events and their delivery log this long after the event, seconds (30 days); a pending
    /// delivery keeps its event regardless.
    public var retentionSeconds = 30 * 24 * 3600

    public init() {}

    /// The lease of a claim: long enough for one attempt, short enough that a node killed
    /// mid-attempt holds nothing up for long.
    public var leaseSeconds: Int { 2 * timeoutSeconds + 10 }

    /// Seconds to wait before attempt `attempts + 1` after `attempts` failed ones: the
    /// exponential back-off `base · 2^(attempts-1)` capped at `retryMaxSeconds`, with "equal
    /// jitter" (half fixed, half uniformly random; `unit` in [0, 1)), at least 1.
    public func backoff(afterAttempts attempts: Int, unit: Double) -> Int {
        let exp = Double(retryBaseSeconds) * pow(2, Double(max(0, min(attempts - 1, 30))))
        let capped = min(exp, Double(retryMaxSeconds))
        return max(1, Int((capped / 2 + capped / 2 * min(max(unit, 0), 1)).rounded()))
    }

    static func int(_ key: String, _ kp: WritableKeyPath<WebhookSettings, Int> & Sendable, min: Int, _ summary: String) -> ServerConfig.Setting {
        ServerConfig.Setting(key: key, env: ServerConfig.envName(key), summary: summary, apply: { c, v in
            guard let n = Int(v.trimmingCharacters(in: .whitespaces)), n >= min else {
                throw IDVServerError.configuration("\(key) must be an integer ≥ \(min), got '\(v)'")
            }
            c.webhooks[keyPath: kp] = n
        }, current: { "\($0.webhooks[keyPath: kp])" })
    }

    static func bool(_ key: String, _ kp: WritableKeyPath<WebhookSettings, Bool> & Sendable, _ summary: String) -> ServerConfig.Setting {
        ServerConfig.Setting(key: key, env: ServerConfig.envName(key), summary: summary, apply: { c, v in
            switch v.lowercased() {
            case "1", "true", "yes", "on": c.webhooks[keyPath: kp] = true
            case "0", "false", "no", "off": c.webhooks[keyPath: kp] = false
            default: throw IDVServerError.configuration("\(key) must be true or false, got '\(v)'")
            }
        }, current: { $0.webhooks[keyPath: kp] ? "true" : "false" })
    }

    static let settings: [ServerConfig.Setting] = [
        bool("webhooks.deliver", \.deliver, "idvd serve: deliver the webhook outbox from this node (true/false; any number of nodes may)"),
        bool("webhooks.allow_http", \.allowHTTP, "allow plain http:// webhook URLs to non-loopback hosts (default: https, or http to 127.0.0.1/::1/localhost only)"),
        int("webhooks.poll_ms", \.pollMilliseconds, min: 10, "how often the delivery worker looks for due deliveries, milliseconds"),
        int("webhooks.timeout_seconds", \.timeoutSeconds, min: 1, "one delivery attempt's time limit, seconds"),
        int("webhooks.retry_base_seconds", \.retryBaseSeconds, min: 1, "first retry delay, seconds; doubles per attempt (equal jitter)"),
        int("webhooks.retry_max_seconds", \.retryMaxSeconds, min: 1, "longest retry delay, seconds"),
        int("webhooks.max_age_seconds", \.maxAgeSeconds, min: 1, "give up delivering an event this long after it, seconds"),
        int("webhooks.batch", \.batch, min: 1, "deliveries claimed per poll"),
        int("webhooks.retention_seconds", \.retentionSeconds, min: 60, "keep delivered/failed events and their delivery log this long, seconds"),
    ]
}

/// Which webhook URLs an endpoint may have: absolute `https://`, or `http://` to a loopback host
/// (127.0.0.0/8, `::1`, `localhost`) — or to any host with `webhooks.allow_http`. No user info
/// (credentials) in the URL, no fragment. Throws 1140 otherwise.
public enum WebhookURLPolicy {
    public static func check(_ text: String, allowHTTP: Bool) throws {
        guard text.count <= 2048, let u = URLComponents(string: text), let scheme = u.scheme?.lowercased(), let host = u.host, !host.isEmpty else {
            throw IDVError(.webhookURLRefused, "The webhook URL is not an absolute URL")
        }
        guard u.user == nil, u.password == nil else { throw IDVError(.webhookURLRefused, "The webhook URL must not carry credentials") }
        guard u.fragment == nil else { throw IDVError(.webhookURLRefused, "The webhook URL must not have a fragment") }
        switch scheme {
        case "https": return
        case "http":
            if allowHTTP || isLoopback(host) { return }
            throw IDVError(.webhookURLRefused, "Plain http is allowed only to a loopback address (set webhooks.allow_http to allow it)")
        default:
            throw IDVError(.webhookURLRefused, "The webhook URL must be https")
        }
    }

    public static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h == "::1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
