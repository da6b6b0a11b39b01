import Foundation
import IDVEngine

/// Where the key file of a SQLite store lives when `templates.key_file` is not set, and why.
///
/// The key is kept apart from the database so that a copy of the data folder (a backup, a
/// support bundle) does not carry the key that opens its templates, kept images and session
/// states. The default is a per-database file in the user's state directory:
///
///     <key dir>/<database file name>-<16 hex digits: FNV-1a 64 of the database's absolute path>.key
///
/// with `<key dir>` the first of `IDVD_KEY_DIR`, `$XDG_STATE_HOME/openidv/keys`,
/// `$HOME/.local/state/openidv/keys` (created mode 0700 when the key is created).
///
/// **Migration from the old default** (`<db.path>.key`, beside the database, before this
/// version): when that file exists it is still used — nothing sealed under it becomes unreadable —
/// and `idvd serve` logs a warning (``legacyWarning``) that says how to move it; `idvd admin where`
/// prints the same advice. Moving it is one `mv` to ``defaultPath``, or setting `templates.key_file`.
public struct KeyLocation: Sendable, Equatable {
    /// How the path was chosen.
    public enum Source: String, Sendable, Codable {
        /// `templates.key_file` (or `IDVD_TEMPLATES_KEY_FILE`).
        case configured
        /// The default in the state directory.
        case stateDirectory = "state_directory"
        /// `<db.path>.key` beside the database: the default before the key left the database folder.
        case besideDatabase = "beside_database"
        /// An in-memory database: a random key that lives with the process.
        case inMemory = "in_memory"
    }

    /// The key file used.
    public let path: String
    public let source: Source
    /// Where the key goes by default for this database (the state directory), even when another is used.
    public let defaultPath: String?

    /// The key location for the SQLite database at `dbPath` with `templates.key_file` = `configured`
    /// (empty: not set). Throws ``IDVServerError/configuration(_:)`` when no key directory can be
    /// named (no `IDVD_KEY_DIR`, `XDG_STATE_HOME` nor `HOME`).
    public static func resolve(dbPath: String, configured: String,
                               environment: [String: String] = ProcessInfo.processInfo.environment) throws -> KeyLocation {
        if dbPath == ":memory:" || dbPath.isEmpty { return KeyLocation(path: "", source: .inMemory, defaultPath: nil) }
        let fallback = try? defaultPath(dbPath: dbPath, environment: environment)
        if !configured.isEmpty { return KeyLocation(path: configured, source: .configured, defaultPath: fallback) }
        let legacy = dbPath + ".key"
        if FileManager.default.fileExists(atPath: legacy) {
            return KeyLocation(path: legacy, source: .besideDatabase, defaultPath: fallback)
        }
        guard let fallback else {
            throw IDVServerError.configuration("cannot choose a key file location: set templates.key_file (IDVD_TEMPLATES_KEY_FILE) "
                                               + "or IDVD_KEY_DIR (neither XDG_STATE_HOME nor HOME is set)")
        }
        return KeyLocation(path: fallback, source: .stateDirectory, defaultPath: fallback)
    }

    /// The directory default keys go in (see the type's documentation), or nil when none can be named.
    public static func keyDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let d = environment["IDVD_KEY_DIR"], !d.isEmpty { return d }
        if let x = environment["XDG_STATE_HOME"], x.hasPrefix("/") { return x + "/openidv/keys" }
        if let h = environment["HOME"], !h.isEmpty { return h + "/.local/state/openidv/keys" }
        return nil
    }

    /// The default key file of the database at `dbPath` (its absolute, symlink-resolved directory
    /// names it, so `./idvd.sqlite` and `/srv/idvd/idvd.sqlite` from another directory agree).
    public static func defaultPath(dbPath: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        guard let dir = keyDirectory(environment: environment) else {
            throw IDVServerError.configuration("no key directory: set IDVD_KEY_DIR or templates.key_file")
        }
        let url = URL(fileURLWithPath: dbPath)
        let parent = url.deletingLastPathComponent().resolvingSymlinksInPath().standardizedFileURL.path
        let absolute = (parent.hasSuffix("/") ? parent : parent + "/") + url.lastPathComponent
        var h: UInt64 = 0xcbf29ce484222325
        for b in absolute.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        let hex = String(h, radix: 16)
        return dir + "/" + url.lastPathComponent + "-" + String(repeating: "0", count: 16 - hex.count) + hex + ".key"
    }

    /// The warning `idvd serve` logs and `idvd admin where` prints for a key beside its database, or nil.
    public var legacyWarning: String? {
        guard source == .besideDatabase else { return nil }
        let target = defaultPath ?? "<a directory outside the database folder>"
        // `mv -n` never replaces a file already there (another key: replacing it would lose what it sealed).
        if let d = defaultPath, FileManager.default.fileExists(atPath: d) {
            return "the key file \(path) sits beside the database, so a copy of the data folder carries the key too; "
                + "a different file already exists at the default place \(d) — do not overwrite it: set templates.key_file "
                + "to where you move \(path) instead"
        }
        return "the key file \(path) sits beside the database, so a copy of the data folder carries the key too; move it out: "
            + "`mkdir -p -m 700 \((target as NSString).deletingLastPathComponent) && mv -n \(path) \(target)` "
            + "(or set templates.key_file to where you keep it)"
    }
}

/// The key files of the store and vault (`templates.key_file`, `templates.previous_key_files`):
/// process configuration, never seen by the engine (``EngineSettings`` holds no path).
public struct KeySettings: Sendable, Equatable {
    /// File holding the 32-byte template/media key (64 hex digits, mode 0600). Empty: the default
    /// of ``KeyLocation`` (apart from the database; an old `<db.path>.key` is still used), created
    /// with mode 0600 when missing.
    public var keyFile = ""
    /// Comma-separated key files of retired keys (key rotation): boxes sealed under them still open,
    /// and `idvd admin rekey` re-seals them under ``keyFile``. Empty: none.
    public var previousKeyFiles = ""

    public init() {}

    /// The key file actually used for a SQLite store at `dbPath` (``KeyLocation/resolve(dbPath:configured:environment:)``;
    /// `<db.path>.key` only when no key directory can be named — ``ServerConfig/storeKeyFile()`` refuses that case).
    public func resolvedKeyFile(dbPath: String) -> String {
        (try? KeyLocation.resolve(dbPath: dbPath, configured: keyFile).path) ?? dbPath + ".key"
    }

    /// The retired key files (``previousKeyFiles`` split at commas, blanks dropped).
    public var resolvedPreviousKeyFiles: [String] {
        previousKeyFiles.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
