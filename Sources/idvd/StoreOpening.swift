import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVStorePostgres
import IDVStoreSQLite

extension ServerConfig {
    /// The SQLite store of this configuration, its session states sealed under the same key files.
    func openStore() throws -> SQLiteStore {
        try SQLiteStore(path: dbPath, keyFile: storeKeyFile(), previousKeyFiles: keys.resolvedPreviousKeyFiles)
    }

    /// The PostgreSQL store of this configuration: `db.path` (a `postgresql://` URL), the password
    /// from ``databasePassword(environment:)``, `db.pool_size`, and the session-state key from
    /// ``storeKeyFile()``. Throws ``IDVServerError/configuration(_:)`` when `db.path` is not a
    /// PostgreSQL URL or `templates.key_file` is unset.
    func openPostgresStore(createSchema: Bool = true, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresStore {
        guard case let .postgres(url) = database else { throw IDVServerError.configuration("db.path is not a postgresql:// URL") }
        let settings = PostgresConnectionSettings(url: url, password: try databasePassword(environment: environment), poolSize: db.poolSize)
        return try PostgresStore(settings: settings, keyFile: try storeKeyFile(), previousKeyFiles: keys.resolvedPreviousKeyFiles,
                                 createSchema: createSchema)
    }

    /// The template/media vault of this configuration: `templates.key_file` (default for a SQLite
    /// file: ``KeyLocation``, apart from the database, created 0600 when missing; with PostgreSQL required and
    /// never created — every node must read the same key — ``ServerConfig/storeKeyFile()``) and the
    /// retired `templates.previous_key_files`.
    func openVault() throws -> TemplateVault {
        try TemplateVault.load(keyFile: storeKeyFile(), previousKeyFiles: keys.resolvedPreviousKeyFiles,
                               createIfMissing: !database.isPostgres)
    }
}

/// A store as opened: its engine (the composition root knows which) and the one typed store the
/// engine, the operations and the HTTP layer hold.
enum OpenedStore {
    case sqlite(SQLiteStore)
    case postgres(PostgresStore)

    /// The store as the rest of the server sees it.
    var store: any EngineStore {
        switch self {
        case let .sqlite(s): s
        case let .postgres(s): s
        }
    }
}

/// Opens the store `db.path` names — a SQLite file, or PostgreSQL when it is a `postgresql://` URL —
/// for `idvd serve` and every `idvd admin` command.
enum StoreOpening {
    /// Refuses a database password given on the command line (`--db`, `--set db.path=`): it would be
    /// visible to every user in `ps` and stay in shell history. Environment and config file are fine.
    static func refusePasswordOnCommandLine(_ value: String?) throws {
        guard let value, DatabaseLocation(value).urlHasPassword else { return }
        throw CLIError("the database URL on the command line carries a password (\(DatabaseLocation(value).redacted)); "
                       + "pass it in IDVD_DB_PASSWORD, db.password_file (mode 0600) or PGPASSWORD instead")
    }

    /// `mustExist`: refuse a missing database (a SQLite file that is not there, a PostgreSQL database
    /// without the OpenIDV schema) instead of creating it — every `idvd admin` command but `create-user`.
    static func open(_ config: ServerConfig, mustExist: Bool, command: String) throws -> OpenedStore {
        switch config.database {
        case let .sqlite(path):
            let exists = FileManager.default.fileExists(atPath: path)
            if mustExist, !exists {
                throw CLIError("no database at \(path): `idvd \(command)` does not create one "
                               + "(check --db / db.path; `idvd admin create-user` or `idvd serve` creates a new database)")
            }
            if exists, let key = try? config.storeKeyFile(), !FileManager.default.fileExists(atPath: key) {
                // An existing database without its key file (a restore to a new host, a key path
                // mistyped, an admin command run without the service's key directory): a new key
                // made here would leave everything sealed under the old one unreadable — templates,
                // kept images, session states, webhook secrets — and the first use would fail.
                throw CLIError("the database \(path) exists but its key file \(key) does not: restore the key file "
                               + "(`idvd admin where` says where it is expected; templates.key_file, IDVD_KEY_DIR), "
                               + "or, if the key is lost for good, make a new one with `idvd admin new-key FILE` and pass it "
                               + "as templates.key_file — data sealed under the lost key will not open")
            }
            if !exists {
                // The key file first (made when missing, as the store would): a key file the vault
                // refuses (group-readable, unreadable, a bad previous key) must not leave a new,
                // empty database behind.
                do { _ = try config.openVault() } catch { throw CLIError("\(error)") }
            }
            return .sqlite(try config.openStore())
        case .postgres:
            do {
                return .postgres(try config.openPostgresStore(createSchema: !mustExist))
            } catch let e as IDVServerError {
                throw CLIError("\(e)")
            } catch let e as StoreError {
                throw CLIError("\(e)" + (mustExist ? " (check --db / db.path)" : ""))
            }
        }
    }

    /// One log line naming the store (the URL redacted), for `idvd serve`'s stderr.
    /// PostgreSQL: also turns on the pool's statistics line at close.
    static func logOpened(_ opened: OpenedStore, config: ServerConfig) {
        var fields: [String: JSONValue] = ["schema_version": .integer((try? opened.store.schemaVersion()) ?? 0)]
        switch opened {
        case .sqlite:
            fields["engine"] = "sqlite"
            if case let .sqlite(path) = config.database { fields["path"] = .string(path) }
        case let .postgres(pg):
            fields["engine"] = "postgresql"
            fields["url"] = .string(config.database.redacted)
            fields["pool_size"] = .integer(config.db.poolSize)
            if let v = try? pg.serverVersion() { fields["server_version"] = .integer(v) }
            pg.logsStatisticsOnClose = true
        }
        if let key = try? config.keyLocation() {
            fields["key_file"] = .string(key.path)
            fields["key_source"] = .string(key.source.rawValue)
            Log.event("store opened", fields)
            if let warning = key.legacyWarning { Log.event("key file beside the database", level: "warning", ["advice": .string(warning)]) }
            return
        }
        Log.event("store opened", fields)
    }
}
