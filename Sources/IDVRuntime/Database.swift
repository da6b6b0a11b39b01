import Foundation
import IDVCore
import IDVEngine

/// Where the server's store lives — the value of `db.path` (`--db`, `IDVD_DB`, `IDVD_DB_PATH`): a
/// SQLite file path (the embedded default), or a PostgreSQL connection URI (`postgresql://` or
/// `postgres://`, libpq's URI syntax, PostgreSQL docs §34.1.1 "Connection Strings") shared by N
/// stateless `idvd` nodes.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    public init(_ value: String) {
        let v = value.trimmingCharacters(in: .whitespaces)
        let lower = v.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") { self = .postgres(url: v) } else { self = .sqlite(path: value) }
    }

    public var isPostgres: Bool { if case .postgres = self { return true }; return false }

    /// The location with any password replaced by `***` (the `user:password@` part and a
    /// `password=` query parameter): the only form that may reach a log line, an error message or `--help`.
    public var redacted: String {
        switch self {
        case let .sqlite(path): return path
        case let .postgres(url): return Self.redact(url)
        }
    }

    public var description: String { redacted }

    /// Whether the URL carries a password (in its user info or as a `password=` parameter).
    public var urlHasPassword: Bool {
        guard case let .postgres(url) = self else { return false }
        return Self.redact(url) != url
    }

    static func redact(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        var out = String(url[..<schemeEnd.upperBound])
        let rest = url[schemeEnd.upperBound...]
        // The authority ends at the first '/' or '?'; its user info ends at its last '@'.
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                out += userInfo[..<colon] + ":***"
            } else {
                out += userInfo
            }
            out += authority[at...]
        } else {
            out += authority
        }
        var tail = String(rest[authorityEnd...])
        if let q = tail.firstIndex(of: "?") {
            let path = tail[..<q]
            let params = tail[tail.index(after: q)...].split(separator: "&", omittingEmptySubsequences: false).map { p -> String in
                let key = p.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                return key.lowercased() == "password" ? key + "=***" : String(p)
            }
            tail = path + "?" + params.joined(separator: "&")
        }
        return out + tail
    }
}

/// Settings of the store connection (`db.*`), beside ``ServerConfig/dbPath``.
public struct DatabaseSettings: Sendable, Equatable {
    /// PostgreSQL: a file holding the password (first line), mode 0600 or stricter; empty = none
    /// (then `IDVD_DB_PASSWORD`, then libpq's own `PGPASSWORD` / `~/.pgpass`).
    public var passwordFile = ""
    /// PostgreSQL: connections per node (each request holds one only while its statements run).
    public var poolSize = 8
    public init() {}
}

extension ServerConfig {
    /// ``dbPath`` as a typed location.
    public var database: DatabaseLocation { DatabaseLocation(dbPath) }

    /// The key file that seals templates, kept images and session states for this store:
    /// `templates.key_file`, or for a SQLite file the default apart from the database
    /// (``KeyLocation``; an old `<db.path>.key` is still used). With PostgreSQL there is no
    /// default — every node must read the same key — so an unset `templates.key_file` throws
    /// ``IDVServerError/configuration(_:)``.
    public func storeKeyFile() throws -> String { try keyLocation().path }

    /// Where this store's key file is and how it was chosen (`idvd admin where`, the serve log).
    public func keyLocation() throws -> KeyLocation {
        if case .postgres = database {
            guard !keys.keyFile.isEmpty else {
                throw IDVServerError.configuration("templates.key_file must be set when db.path is a PostgreSQL URL: "
                                                   + "every idvd node on the database must use the same key file")
            }
            return KeyLocation(path: keys.keyFile, source: .configured, defaultPath: nil)
        }
        return try KeyLocation.resolve(dbPath: dbPath, configured: keys.keyFile)
    }

    /// The PostgreSQL password from `IDVD_DB_PASSWORD` or `db.password_file` (first line; the file
    /// must not be readable or writable by group or others); nil when neither is set (libpq then
    /// reads `PGPASSWORD` / `~/.pgpass` itself). Throws ``IDVServerError/configuration(_:)`` for an
    /// unreadable or loosely-moded file. The password is never logged.
    public func databasePassword(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        if let p = environment["IDVD_DB_PASSWORD"], !p.isEmpty { return p }
        guard !db.passwordFile.isEmpty else { return nil }
        let path = db.passwordFile
        guard let attrs = try? FileManager.default.attributesOfItem(atPath: path),
              let mode = (attrs[.posixPermissions] as? NSNumber)?.intValue else {
            throw IDVServerError.configuration("cannot read db.password_file \(path)")
        }
        if mode & 0o077 != 0 {
            throw IDVServerError.configuration("db.password_file \(path) is readable or writable by group or others (mode "
                                               + String(mode & 0o777, radix: 8) + "); run `chmod 600 \(path)`")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw IDVServerError.configuration("cannot read db.password_file \(path)")
        }
        let first = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = first.hasSuffix("\r") ? String(first.dropLast()) : first
        guard !password.isEmpty else { throw IDVServerError.configuration("db.password_file \(path) is empty") }
        return password
    }
}
