import Foundation
import IDVCore

/// The server's configuration. Sources, later ones win: built-in defaults → a JSON config file
/// (a flat object of the setting keys below, e.g. `{"db.path": "/var/lib/idvd/idvd.sqlite"}`) →
/// environment variables (`IDVD_…`) → command-line overrides. `idvd serve --help` prints the table.
public struct ServerConfig: Sendable, Equatable {
    public var listenAddress = "127.0.0.1"
    /// 0 picks a free port (printed on the ready line).
    public var port = 8420
    public var threads = 4
    /// Handler threads for the routes that may take long (every route but health, metrics and the
    /// OpenAPI document): password hashing, face matching and document reading run there, never on
    /// libmicrohttpd's pool threads, so a slow request holds up no other connection.
    public var workers = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
    public var tlsCertPath: String?
    public var tlsKeyPath: String?
    /// A SQLite file, or a `postgresql://` URL (``DatabaseLocation``); `IDVD_DB` is an alias of `IDVD_DB_PATH`.
    public var dbPath = "idvd.sqlite"
    /// The store connection's other settings (`db.password_file`, `db.pool_size`; Database.swift).
    public var db = DatabaseSettings()
    /// Body limit of ordinary JSON routes, bytes.
    public var bodyLimit = 64 * 1024
    /// Body limit of routes that carry images (answers of IDV capture challenges), bytes.
    public var uploadLimit = 16 * 1024 * 1024
    public var sessionIdleSeconds = 900
    public var sessionAbsoluteSeconds = 12 * 3600
    /// Interval of the expiry sweep in `idvd serve` (``FlowEngine/purgeExpired(batch:)``); 0 = off.
    public var sessionSweepSeconds = 60
    public var activationCodeTTLSeconds = 72 * 3600
    public var activationCodeAttempts = 5
    public var passwordAttempts = 3
    public var passwordMinLength = 8
    public var argon2OpsLimit = 3
    public var argon2MemLimitKiB = 64 * 1024
    public var shutdownGraceSeconds = 10
    public var logRequests = true
    /// `idvd serve`: load the document reader's OCR-B classifier parameters in the background at start
    /// (``DocumentReaderVerifier/warmUp()``, a few ms), so a broken build shows at start.
    public var documentsWarmUp = true
    /// The IDV workflow engine's settings (Workflows/WorkflowPolicy.swift).
    public var workflow = WorkflowPolicy()
    /// The hosted verification page and its links (Links/VerificationLinks.swift).
    public var web = WebSettings()
    /// The analysis pool and its admission (`analysis.*`, Analysis.swift).
    public var analysis = AnalysisSettings()
    /// Slow and numerous clients: header deadline, body rate, connections per address (`http.*`, Analysis.swift).
    public var clients = ClientLimits()
    /// The relying-party API (RelyingParty/APIClients.swift).
    public var rp = RelyingPartySettings()
    /// Webhook delivery (Webhooks/Outbox.swift; docs/WEBHOOKS.md).
    public var webhooks = WebhookSettings()
    /// Abuse limits: session creation, failed authentication, user locks (Limits/AbuseLimits.swift, docs/LIMITS.md).
    public var limits = LimitSettings()

    public init() {}

    public var argon2: Argon2Parameters {
        Argon2Parameters(opsLimit: UInt64(argon2OpsLimit), memLimit: argon2MemLimitKiB * 1024)
    }

    /// One configurable setting: file key, environment variable, description, and how to apply it.
    public struct Setting: Sendable {
        public let key: String
        public let env: String
        public let summary: String
        let apply: @Sendable (inout ServerConfig, String) throws -> Void
        let current: @Sendable (ServerConfig) -> String
    }

    private static func int(_ key: String, _ kp: WritableKeyPath<ServerConfig, Int> & Sendable, min: Int, max: Int = .max,
                            _ summary: String) -> Setting {
        Setting(key: key, env: envName(key), summary: summary, apply: { c, v in
            guard let n = Int(v.trimmingCharacters(in: .whitespaces)), n >= min, n <= max else {
                throw IDVServerError.configuration(max == .max ? "\(key) must be an integer ≥ \(min), got '\(v)'"
                                                               : "\(key) must be an integer from \(min) to \(max), got '\(v)'")
            }
            c[keyPath: kp] = n
        }, current: { "\($0[keyPath: kp])" })
    }

    private static func bool(_ key: String, _ kp: WritableKeyPath<ServerConfig, Bool> & Sendable, _ summary: String) -> Setting {
        Setting(key: key, env: envName(key), summary: summary, apply: { c, v in
            switch v.lowercased() {
            case "1", "true", "yes", "on": c[keyPath: kp] = true
            case "0", "false", "no", "off": c[keyPath: kp] = false
            default: throw IDVServerError.configuration("\(key) must be true or false, got '\(v)'")
            }
        }, current: { $0[keyPath: kp] ? "true" : "false" })
    }

    private static func string(_ key: String, _ kp: WritableKeyPath<ServerConfig, String> & Sendable, _ summary: String) -> Setting {
        Setting(key: key, env: envName(key), summary: summary, apply: { c, v in
            guard !v.isEmpty else { throw IDVServerError.configuration("\(key) must not be empty") }
            c[keyPath: kp] = v
        }, current: { $0[keyPath: kp] })
    }

    private static func optionalString(_ key: String, _ kp: WritableKeyPath<ServerConfig, String?> & Sendable, _ summary: String) -> Setting {
        Setting(key: key, env: envName(key), summary: summary, apply: { c, v in c[keyPath: kp] = v.isEmpty ? nil : v },
                current: { $0[keyPath: kp] ?? "" })
    }

    static func envName(_ key: String) -> String {
        "IDVD_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// Every setting, in `--help` order.
    public static let settings: [Setting] = [
        string("listen.address", \.listenAddress, "IPv4 address to listen on"),
        int("listen.port", \.port, min: 0, max: 65535, "TCP port, 0–65535 (0 = any free port)"),
        int("http.threads", \.threads, min: 1, "libmicrohttpd thread-pool size (epoll): network I/O and the quick routes"),
        int("http.workers", \.workers, min: 1, "handler threads for the routes that may take long (hashing, face match, document read); default 2 × cores, at least 4"),
        optionalString("tls.cert", \.tlsCertPath, "PEM certificate file; with tls.key enables HTTPS"),
        optionalString("tls.key", \.tlsKeyPath, "PEM private-key file"),
        string("db.path", \.dbPath, "SQLite database file, or a postgresql:// URL (no password in it: see db.password_file); also IDVD_DB; created/migrated at start"),
        int("limits.body_bytes", \.bodyLimit, min: 256, "body limit of JSON routes, bytes"),
        int("limits.upload_bytes", \.uploadLimit, min: 1024, "body limit of image-carrying routes, bytes"),
        int("session.idle_seconds", \.sessionIdleSeconds, min: 1, "session idle expiry, seconds"),
        int("session.absolute_seconds", \.sessionAbsoluteSeconds, min: 1, "session absolute expiry, seconds"),
        int("session.sweep_seconds", \.sessionSweepSeconds, min: 0, "idvd serve: purge expired/revoked sessions (closing their flow runs as expired) every N seconds; 0 = never"),
        int("activation.code_ttl_seconds", \.activationCodeTTLSeconds, min: 1, "activation-code lifetime, seconds"),
        int("activation.code_attempts", \.activationCodeAttempts, min: 1, "wrong activation codes one client may send for a user before it backs off (limits.backoff_seconds, doubling); the code itself stays usable"),
        int("password.attempts", \.passwordAttempts, min: 1, "wrong passwords one client may send for a user before it backs off (limits.backoff_seconds, doubling); the user locks at password.lock_threshold"),
        int("password.min_length", \.passwordMinLength, min: 1, "password policy: minimum length (characters)"),
        int("argon2.opslimit", \.argon2OpsLimit, min: 1, "Argon2id passes (crypto_pwhash opslimit)"),
        int("argon2.memlimit_kib", \.argon2MemLimitKiB, min: 8, "Argon2id memory, KiB (crypto_pwhash memlimit)"),
        int("shutdown.grace_seconds", \.shutdownGraceSeconds, min: 0, "on SIGTERM/SIGINT: wait this long for in-flight requests"),
        bool("log.requests", \.logRequests, "one JSON log line per request (true/false)"),
        bool("documents.warm_up", \.documentsWarmUp, "idvd serve: load the OCR-B classifier's shipped parameters (a few ms) in the background at start, not at the first document upload (true/false)"),
    ] + DatabaseSettings.settings + WorkflowPolicy.settings + PresencePolicy.settings + WebSettings.settings + ReviewPolicy.settings + RelyingPartySettings.settings + WebhookSettings.settings + LimitSettings.settings
      + AnalysisSettings.settings + ClientLimits.settings

    /// Applies one setting by key; throws on an unknown key or a bad value.
    public mutating func set(_ key: String, _ value: String) throws {
        guard let s = Self.settings.first(where: { $0.key == key }) else {
            throw IDVServerError.configuration("unknown setting '\(key)' (known: \(Self.settings.map(\.key).joined(separator: ", ")))")
        }
        try s.apply(&self, value)
    }

    /// Builds a configuration from an optional JSON file, then the environment, then `overrides`.
    public static func load(file: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                            overrides: [String: String] = [:]) throws -> ServerConfig {
        var c = ServerConfig()
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw IDVServerError.configuration("cannot read config file \(file)")
            }
            guard let obj = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
                throw IDVServerError.configuration("config file \(file) is not a flat JSON object")
            }
            for (k, v) in obj.sorted(by: { $0.key < $1.key }) {
                let text: String
                switch v {
                case let .bool(b): text = b ? "true" : "false"
                case let .integer(i): text = String(i)
                case let .string(x): text = x
                default: throw IDVServerError.configuration("config file \(file): '\(k)' must be a string, integer or boolean")
                }
                try c.set(k, text)
            }
        }
        // IDVD_DB is the short name of IDVD_DB_PATH (the longer one wins when both are set).
        if environment["IDVD_DB_PATH"] == nil, let v = environment["IDVD_DB"] { try c.set("db.path", v) }
        for s in settings {
            if let v = environment[s.env] { try s.apply(&c, v) }
        }
        for (k, v) in overrides.sorted(by: { $0.key < $1.key }) { try c.set(k, v) }
        return c
    }

    /// The settings table for `--help`: key, environment variable, default, description.
    public static var helpTable: String {
        let d = ServerConfig()
        var s = ""
        for x in settings {
            // Never truncate (padding(toLength:) cuts longer strings): at least one space after each column.
            s += "  " + x.key.padding(toLength: max(28, x.key.count + 1), withPad: " ", startingAt: 0)
                + x.env.padding(toLength: max(34, x.env.count + 1), withPad: " ", startingAt: 0)
                + x.summary + " [default: \(x.current(d).isEmpty ? "none" : x.current(d))]\n"
        }
        return s
    }
}
