import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// One thing a node needs before it can serve, checked by `GET /readyz` on every call: a name
/// (`database`, `schema`, `analysis_pool`, `face_models`, `document_reader`) and a check that
/// returns nil when ready, else a short reason in snake case (never a secret, path or value).
public struct ReadinessCheck: Sendable {
    public let name: String
    public let check: @Sendable () -> String?

    public init(name: String, check: @escaping @Sendable () -> String?) {
        self.name = name
        self.check = check
    }
}

/// `GET /readyz`: whether this node can serve now — 200 `{"status":"ready","checks":{…}}`, or 503
/// `{"status":"not_ready","reasons":["database: unreachable", …],"checks":{…}}` with
/// `Retry-After`. `/healthz` stays the cheap liveness check (the process answers); a load balancer
/// or an orchestrator sends traffic only to a ready node (docs/OPERATIONS.md).
///
/// The checks, in order: the database answers a query (a store that cannot serve counts in
/// `idvd_store_unavailable_total{reason}`); its schema is not behind this build's migrations (a
/// newer schema is ready: migrations only add, and a node of the previous version keeps serving
/// during a rolling upgrade); the analysis pool has threads; then the composition root's own
/// checks (`idvd serve`: the dlib model files found and the selfie analyser built, the OCR-B
/// parameters loaded).
public enum Readiness {
    /// Runs every check: (ready, reasons, checks) with `checks` mapping each name to `ok` or its reason.
    public static func evaluate(store: any Store, analysis: AnalysisLimiter, metrics: Metrics?,
                                extra: [ReadinessCheck]) -> (ready: Bool, reasons: [String], checks: [String: String]) {
        var checks: [(String, String?)] = []
        var databaseUp = false
        do {
            let version = try store.schemaVersion()
            databaseUp = true
            checks.append(("database", nil))
            if let build = store.buildSchemaVersion, version < build {
                checks.append(("schema", "behind: \(version) of \(build)"))
            } else {
                checks.append(("schema", nil))
            }
        } catch let StoreError.unavailable(reason, _) {
            metrics?.storeUnavailable(reason: reason.rawValue)
            checks.append(("database", reason.rawValue))
        } catch StoreError.closed {
            checks.append(("database", "closed"))
        } catch {
            checks.append(("database", "failed"))
        }
        if !databaseUp { checks.append(("schema", nil)) }   // not known; the database's reason says why
        checks.append(("analysis_pool", analysis.snapshot.threads > 0 ? nil : "no_threads"))
        for c in extra { checks.append((c.name, c.check())) }
        let reasons = checks.compactMap { name, reason in reason.map { "\(name): \($0)" } }
        var table: [String: String] = [:]
        for (name, reason) in checks { table[name] = reason ?? (name == "schema" && !databaseUp ? "unknown" : "ok") }
        return (reasons.isEmpty, reasons, table)
    }

    /// The `/readyz` answer for ``evaluate(store:analysis:metrics:extra:)``.
    static func response(store: any Store, analysis: AnalysisLimiter, metrics: Metrics?, extra: [ReadinessCheck]) -> HTTPResponse {
        let r = evaluate(store: store, analysis: analysis, metrics: metrics, extra: extra)
        var checks: [String: JSONValue] = [:]
        for (k, v) in r.checks { checks[k] = .string(v) }
        if r.ready {
            return .json(["status": "ready", "version": .string(OpenIDV.version), "checks": .object(checks)] as JSONValue)
        }
        var resp = HTTPResponse.json(["status": "not_ready", "version": .string(OpenIDV.version),
                                      "reasons": .array(r.reasons.map { .string($0) }), "checks": .object(checks)] as JSONValue, status: 503)
        resp.headers["Retry-After"] = "5"
        return resp
    }
}
