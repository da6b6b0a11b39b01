import Foundation
import IDVEngine
import IDVRuntime

/// How a node connects to PostgreSQL. `url` is a libpq connection URI (`postgresql://user@host:5432/db?…`);
/// `password`, when given, is passed to libpq as its own keyword, so it never has to be in the URL
/// (nor in `ps`, nor in a log line). Without it libpq reads `PGPASSWORD` / `~/.pgpass` itself.
public struct PostgresConnectionSettings: Sendable {
    public var url: String
    public var password: String?
    /// Connections this node opens at most (``PGPool``).
    public var poolSize: Int
    /// How long a request waits for a free connection before failing, seconds.
    public var checkoutTimeoutSeconds: Double
    /// libpq `connect_timeout`, seconds.
    public var connectTimeoutSeconds: Int
    /// `lock_timeout` of every connection, milliseconds: the longest a transaction waits for the store's
    /// write lock or a row lock (SQLite's busy timeout is the same 30 s).
    public var lockTimeoutMilliseconds: Int
    /// `idle_in_transaction_session_timeout`, milliseconds: the server ends a transaction whose client
    /// went silent (a node stopped mid-transaction), so its locks do not hold up the other nodes.
    public var idleInTransactionTimeoutMilliseconds: Int

    public init(url: String, password: String? = nil, poolSize: Int = 8, checkoutTimeoutSeconds: Double = 30,
                connectTimeoutSeconds: Int = 10, lockTimeoutMilliseconds: Int = 30_000, idleInTransactionTimeoutMilliseconds: Int = 60_000) {
        self.url = url
        self.password = password
        self.poolSize = max(1, poolSize)
        self.checkoutTimeoutSeconds = checkoutTimeoutSeconds
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.lockTimeoutMilliseconds = lockTimeoutMilliseconds
        self.idleInTransactionTimeoutMilliseconds = idleInTransactionTimeoutMilliseconds
    }

    /// The URL with any password replaced by `***`.
    public var redactedURL: String { DatabaseLocation.postgres(url: url).redacted }

    /// libpq keywords: the URI first (expanded by libpq), then the ones set here, which override it.
    var keywords: [(String, String)] {
        var k: [(String, String)] = [("dbname", url)]
        if let password { k.append(("password", password)) }
        k.append(("connect_timeout", String(connectTimeoutSeconds)))
        k.append(("application_name", "idvd"))
        return k
    }
}

/// The connections of one node: at most `poolSize`, opened on demand, handed to one thread at a
/// time. A connection that broke (server restart, network) is dropped at check-in and a new one
/// opened on the next demand. Counts checkouts and the time spent waiting for a free connection.
final class PGPool: @unchecked Sendable {
    // @unchecked: the idle connections and the counters are read and written under `condition`
    // only (a condition, not a Mutex: a checkout waits on it for a free connection).
    let settings: PostgresConnectionSettings
    private let condition = NSCondition()
    private var idle: [PGConnection] = []
    private var open = 0
    private var closed = false
    private(set) var waitSeconds: Double = 0
    private(set) var checkouts = 0

    init(settings: PostgresConnectionSettings) { self.settings = settings }

    /// Opens a connection outside the pool (migrations, which hold a session-level advisory lock).
    func connect() throws -> PGConnection {
        let c = try PGConnection(keywords: settings.keywords)
        try c.execute("SET lock_timeout = \(settings.lockTimeoutMilliseconds); "
                      + "SET idle_in_transaction_session_timeout = \(settings.idleInTransactionTimeoutMilliseconds); "
                      + "SET TIME ZONE 'UTC'")
        return c
    }

    /// A connection for the calling thread; throws ``StoreError/closed`` after ``close()``, and
    /// ``StoreError/unavailable(_:_:)`` when none frees up within the checkout timeout
    /// (`.poolExhausted`) or connecting fails (`.unreachable`, `.shuttingDown`, `.tooManyConnections`).
    func checkout() throws -> PGConnection {
        let start = DispatchTime.now().uptimeNanoseconds
        let deadline = Date(timeIntervalSinceNow: settings.checkoutTimeoutSeconds)
        // Either an idle connection, or a slot to open one outside the lock (nil).
        let reused: PGConnection? = try condition.withLock {
            while true {
                if closed { throw StoreError.closed }
                if let c = idle.popLast() {
                    guard c.stillOpen() else {
                        c.close()
                        open -= 1
                        continue
                    }
                    record(start)
                    return c
                }
                if open < settings.poolSize {
                    open += 1
                    record(start)
                    return nil
                }
                if !condition.wait(until: deadline) {
                    throw StoreError.unavailable(.poolExhausted, "no free PostgreSQL connection within \(Int(settings.checkoutTimeoutSeconds)) s (db.pool_size \(settings.poolSize))")
                }
            }
        }
        if let reused { return reused }
        do { return try connect() } catch {
            condition.withLock { open -= 1; condition.signal() }
            throw error
        }
    }

    private func record(_ start: UInt64) {
        checkouts += 1
        waitSeconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Returns a connection; a broken one, or one left inside a transaction block, is closed instead.
    func checkin(_ c: PGConnection) {
        let keep = c.isHealthy && !c.inTransactionBlock
        if !keep { c.close() }
        condition.withLock {
            if keep && !closed { idle.append(c) } else {
                open -= 1
                if keep { c.close() }
            }
            condition.signal()
        }
    }

    /// Closes the idle connections and refuses new checkouts; connections in use close at check-in.
    func close() {
        let toClose = condition.withLock {
            closed = true
            let toClose = idle
            idle.removeAll()
            open -= toClose.count
            condition.broadcast()
            return toClose
        }
        toClose.forEach { $0.close() }
    }

    var isClosed: Bool { condition.withLock { closed } }
}

/// Maintenance on the server a URL names (benchmarks and tests make a database per run).
public enum PostgresServer {
    /// Creates an empty database `name` (letters, digits and `_` only) on the server of `settings`
    /// (connecting to the URL's own database); returns the URL with its database replaced by `name`.
    /// Throws ``StoreError/database(_:)``, e.g. when the role lacks CREATEDB.
    public static func createDatabase(named name: String, settings: PostgresConnectionSettings) throws -> String {
        try check(name)
        let c = try PGConnection(keywords: settings.keywords)
        defer { c.close() }
        try c.execute("CREATE DATABASE \(name)")
        return url(settings.url, database: name)
    }

    /// Drops database `name` on the server of `settings`, ending its remaining connections.
    public static func dropDatabase(named name: String, settings: PostgresConnectionSettings) throws {
        try check(name)
        let c = try PGConnection(keywords: settings.keywords)
        defer { c.close() }
        try c.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    private static func check(_ name: String) throws {
        guard !name.isEmpty, name.count <= 63, name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }),
              !(name.first?.isNumber ?? true) else {
            throw StoreError.database("a database name must be 1–63 letters, digits or _ and start with a letter")
        }
    }

    /// `url` with its database (path) replaced by `database`, query kept.
    public static func url(_ url: String, database: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let query = rest.firstIndex(of: "?").map { String(rest[$0...]) } ?? ""
        return String(url[..<schemeEnd.upperBound]) + authority + "/" + database + query
    }
}
