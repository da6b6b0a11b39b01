import Foundation
import IDVCore
import IDVEngine

/// Settings of the relying-party API (`rp.*`).
public struct RelyingPartySettings: Sendable, Equatable {
    /// Requests per minute one API client may send (a token bucket of this size refilled at this
    /// rate, per `idvd` process); above it 429 with 1133 and `Retry-After`.
    public var requestsPerMinute = 600
    /// Lifetime of a link `POST /v1/rp/verifications` creates when the request names none, seconds.
    public var linkTTLSeconds = 24 * 3600
    /// `evidence.trust_framework`: the `trust_framework` of the OpenID Connect for Identity
    /// Assurance 1.0 `verified_claims` the server signs (evidence records and
    /// `GET /v1/rp/users/{user_id}/verified-claims`) — the framework under which the operator
    /// verifies, e.g. `de_aml`, `uk_tfida` or `eidas` (IDA predefined values) or its own name.
    /// Default `idvd`. 1–64 characters from `A–Z a–z 0–9 _ . : -`.
    public var trustFramework = RelyingPartySettings.defaultTrustFramework
    public static let defaultTrustFramework = "idvd"

    /// Whether `v` is a `trust_framework` value this server signs: 1–64 characters of `A–Z a–z 0–9 _ . : -`.
    public static func isTrustFramework(_ v: String) -> Bool {
        (1...64).contains(v.count) && v.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_.:-".contains($0)) }
    }

    public init() {}

}

/// Settings of the hosted page and its links (`web.*`, `links.*`).
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

}

/// Delivery settings (`webhooks.*`).
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

extension ServerConfig {
    /// The page's origin for printed links: ``WebSettings/publicURL``, else this server's own
    /// address (`localhost` for a loopback or wildcard listen address).
    public var webOrigin: String {
        if !web.publicURL.isEmpty { return web.publicURL }
        let host = ["127.0.0.1", "0.0.0.0"].contains(listenAddress) ? "localhost" : listenAddress
        return "\(tlsCertPath != nil ? "https" : "http")://\(host):\(port)"
    }
}
