import CMicroHTTPD
import CSQLite
import CSodium

/// The `idvd` server: HTTP, workflow engine, authentication, stores.
public enum IDVServer {
    /// Versions of the C libraries the server is linked against.
    public static var libraryVersions: [String: String] {
        [
            "libmicrohttpd": String(cString: cmhd_version()),
            "sqlite": String(cString: sqlite3_libversion()),
            "libsodium": String(cString: sodium_version_string()),
        ]
    }
}
