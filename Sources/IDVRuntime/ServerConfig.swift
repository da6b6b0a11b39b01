import Foundation
import IDVCore
import IDVEngine

/// The server's configuration. Sources, later ones win: built-in defaults → a JSON config file
/// (a flat object of the setting keys in ``ServerConfig/settings``, e.g. `{"db.path": "/var/lib/idvd/idvd.sqlite"}`) →
/// environment variables (`IDVD_…`) → command-line overrides. `idvd serve --help` prints the table.
///
/// The engine sees only ``engine`` (``EngineSettings``: session lifetimes, attempts, Argon2id,
/// limits, the workflow policy); everything else here belongs to the process: where to listen,
/// TLS, the database and its key files, the HTTP edge, the analysis pool, the web page, the
/// relying-party API and webhook delivery.
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
    /// The key files that seal templates, kept images and session states (`templates.*`, KeyLocation.swift).
    public var keys = KeySettings()
    /// Body limit of ordinary JSON routes, bytes.
    public var bodyLimit = 64 * 1024
    /// Body limit of routes that carry images (answers of IDV capture challenges), bytes.
    public var uploadLimit = 16 * 1024 * 1024
    /// Interval of the expiry sweep in `idvd serve` (IDVOperations `FlowEngine.purgeExpired(batch:)`); 0 = off.
    public var sessionSweepSeconds = 60
    public var shutdownGraceSeconds = 10
    public var logRequests = true
    /// `idvd serve`: load the document reader's OCR-B classifier parameters in the background at start
    /// (IDVReaders `DocumentReaderAdapter.warmUp()`, a few ms), so a broken build shows at start.
    public var documentsWarmUp = true
    /// What the engine and its flows see: sessions, attempts, Argon2id, abuse limits, the workflow policy.
    public var engine = EngineSettings()
    /// The hosted verification page and its links (ServiceSettings.swift).
    public var web = WebSettings()
    /// The analysis pool and its admission (`analysis.*`, AnalysisAdmission.swift).
    public var analysis = AnalysisSettings()
    /// Slow and numerous clients: header deadline, body rate, connections per address (`http.*`, AnalysisAdmission.swift).
    public var clients = ClientLimits()
    /// The relying-party API (ServiceSettings.swift).
    public var rp = RelyingPartySettings()
    /// Webhook delivery (ServiceSettings.swift; docs/WEBHOOKS.md).
    public var webhooks = WebhookSettings()

    public init() {}

    /// One configurable setting: file key, environment variable, description, and how to apply it
    /// (built by ``SettingsTable``, the one builder).
    public struct Setting: Sendable {
        public let key: String
        public let env: String
        public let summary: String
        let apply: @Sendable (inout ServerConfig, String) throws -> Void
        let current: @Sendable (ServerConfig) -> String
    }

    static func envName(_ key: String) -> String {
        "IDVD_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// Every setting, in `--help` order (SettingsTable.swift).
    public static let settings: [Setting] = SettingsTable.all

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
                case let .number(x): text = String(x)
                default: throw IDVServerError.configuration("config file \(file): '\(k)' must be a string, number or boolean")
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
