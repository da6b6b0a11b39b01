import Foundation
#if canImport(Darwin)
import Darwin
#elseif os(Linux)
import Glibc
#endif

/// Why a local device authentication (LDA) step produced no signature. The SDK never lets one
/// of these end a flow: on `getDeviceSignature` it answers `{"fallback": "password"}` (the
/// server then asks `getPassword`), and on `setUserConsentForLDA(true)` it reports the error
/// through `onRequestFailed` (the `getUserConsentForLDA` challenge stays open, so the app can
/// answer again or with `false`). ``sdkError`` gives the seed error code.
public enum LDAError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The user declined the presence prompt (seeds: LDA cancelled → password). Code 240.
    case userCancelled
    /// LDA cannot run here: no crypto library (e.g. `libsodium.so.23` missing), no presence
    /// check configured. Code 1025.
    case notAvailable(String)
    /// The key file is readable by group/others (mode wider than `0600`); it is not used. Code 1025.
    case keyFilePermissions(path: String, mode: Int)
    /// The key file is not a regular file, has the wrong size, or its halves do not belong together. Code 1025.
    case keyFileInvalid(String)
    /// The key file (or its device registrations) could not be created, read or written. Code 1025.
    case keyStorage(String)
    /// The crypto library refused to sign. Code 1025.
    case signingFailed(String)

    public var description: String {
        switch self {
        case .userCancelled: return "the user declined device authentication"
        case let .notAvailable(why): return "device authentication is not available: \(why)"
        case let .keyFilePermissions(path, mode):
            return "the LDA key file \((path as NSString).lastPathComponent) has mode \(String(mode, radix: 8)); it must be 600 (chmod 600), refusing to use it"
        case let .keyFileInvalid(why): return "the LDA key file is invalid: \(why)"
        case let .keyStorage(why): return "the LDA key file cannot be used: \(why)"
        case let .signingFailed(why): return "device signing failed: \(why)"
        }
    }

    /// The seed-style error the SDK reports for it: 240 for ``userCancelled``, 1025 otherwise.
    public var sdkError: IDVError {
        switch self {
        case .userCancelled: return IDVError(.userCancelled, description)
        default: return IDVError(.invalidArgument, description)
        }
    }
}

/// What a device signature is for; the presence prompt can say so.
public enum LDAPurpose: String, Sendable, Equatable {
    /// `setUserConsentForLDA(true)`: proving possession of the key to enable LDA (activation).
    case enrol
    /// `getDeviceSignature` at login (challenge mode 0).
    case login
    /// `getDeviceSignature` as re-authentication for biometric opt-in/opt-out (modes 6/7, seed 004).
    case reauthentication
}

/// Local device authentication: a device key (Ed25519, RFC 8032) and a user-presence check.
///
/// The SDK uses it in three places (docs/PROTOCOL.md §3, ``WireMapping``):
/// 1. `initialize`: registers ``publicKey()`` once per server with `POST /v1/devices` and keeps
///    the returned `device_id` (``registeredDeviceID(server:)``); every session starts with it.
/// 2. `setUserConsentForLDA(true)`: signs `WireLDA.message(challengeID:nonce:)` (purpose
///    ``LDAPurpose/enrol``) so the server enables LDA for this device.
/// 3. `getDeviceSignature`: signs the same message for the new challenge (``LDAPurpose/login`` or
///    ``LDAPurpose/reauthentication``); when signing throws, the SDK answers with the password fallback.
///
/// Implementations: ``CryptoKitLDAProvider`` on Apple platforms, ``FileLDAProvider`` on Linux
/// (libsodium loaded at run time). ``PlatformLDAProvider`` names the one of this platform.
public protocol LDAProvider: Sendable {
    /// The raw 32-byte Ed25519 public key; creates the key on first use.
    func publicKey() throws(LDAError) -> Data
    /// A 64-byte Ed25519 signature of `message`, only after the user confirmed presence.
    /// Throws ``LDAError/userCancelled`` when the user declines; other ``LDAError``s when the key
    /// or the crypto library cannot be used.
    func sign(message: Data, purpose: LDAPurpose) throws(LDAError) -> Data
    /// The `device_id` the server at `server` gave this key, or nil when not registered there.
    func registeredDeviceID(server: URL) -> String?
    /// Remembers (or with nil forgets) the `device_id` for `server`.
    func saveRegisteredDeviceID(_ deviceID: String?, server: URL) throws(LDAError)
}

extension LDAProvider {
    /// A short, non-secret name of the key for logs: hex of the public key's first 8 bytes.
    public func keyID() throws(LDAError) -> String {
        try publicKey().prefix(8).map { String(format: "%02x", $0) }.joined()
    }
    /// ``sign(message:purpose:)`` for a login.
    public func sign(message: Data) throws(LDAError) -> Data { try sign(message: message, purpose: .login) }
}

/// The user-presence check a file-backed provider runs before every signature: return `true`
/// when the user approved (e.g. "Approve with device key? [y/n]"), `false` when they declined.
/// Called on the SDK's work queue; it may block until the user answers.
public typealias LDAPresenceCheck = @Sendable (LDAPurpose) -> Bool

/// The on-disk key used by the file-backed providers: exactly 64 bytes, the Ed25519 seed
/// (32 bytes) followed by its public key (32 bytes) — libsodium's `crypto_sign_ed25519` secret-key
/// layout. Created with `O_CREAT | O_EXCL` and mode `0600`; a file with any group/other permission
/// bit is refused (``LDAError/keyFilePermissions(path:mode:)``). Beside it, `<file>.devices`
/// (JSON `{ server origin: device_id }`, mode `0600`) holds the device registrations.
public enum LDAKeyFile {
    public static let size = 64

    /// The file's bytes, after checking it is a regular file of mode `0600` (or stricter) and 64 bytes.
    /// Returns nil when the file does not exist.
    public static func read(_ url: URL) throws(LDAError) -> Data? {
        let attrs: [FileAttributeKey: Any]
        do { attrs = try FileManager.default.attributesOfItem(atPath: url.path) } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return nil }
            throw LDAError.keyStorage("cannot inspect \(url.lastPathComponent)")
        }
        guard (attrs[.type] as? FileAttributeType) == .typeRegular else { throw LDAError.keyFileInvalid("\(url.lastPathComponent) is not a regular file") }
        let mode = (attrs[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        guard mode & 0o077 == 0 else { throw LDAError.keyFilePermissions(path: url.path, mode: mode) }
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw LDAError.keyStorage("cannot read \(url.lastPathComponent)") }
        guard data.count == size else { throw LDAError.keyFileInvalid("\(url.lastPathComponent) has \(data.count) bytes, not \(size)") }
        return data
    }

    /// Writes a new key file with mode `0600`; fails when the file already exists (never overwrites a key).
    public static func create(_ url: URL, bytes: Data) throws(LDAError) {
        guard bytes.count == size else { throw LDAError.keyFileInvalid("a key is \(size) bytes") }
        try writeExclusive(url, bytes)
    }

    static func writeExclusive(_ url: URL, _ bytes: Data, replace: Bool = false) throws(LDAError) {
        let dir = url.deletingLastPathComponent()
        do { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
            throw LDAError.keyStorage("cannot create the folder \(dir.lastPathComponent)")
        }
        let target = replace ? dir.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)") : url
        let fd = open(target.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw LDAError.keyStorage("cannot create \(url.lastPathComponent) (errno \(errno))") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced else {
            unlink(target.path)
            throw LDAError.keyStorage("cannot write \(url.lastPathComponent)")
        }
        if replace, rename(target.path, url.path) != 0 {
            unlink(target.path)
            throw LDAError.keyStorage("cannot replace \(url.lastPathComponent)")
        }
    }

    /// Where the device registrations of `keyFile` live.
    public static func registrationsFile(_ keyFile: URL) -> URL {
        keyFile.deletingLastPathComponent().appendingPathComponent(keyFile.lastPathComponent + ".devices")
    }

    /// `scheme://host:port` of a server URL: the key of a registration.
    static func origin(_ server: URL) -> String {
        var s = (server.scheme ?? "http").lowercased() + "://" + (server.host ?? "").lowercased()
        if let p = server.port { s += ":\(p)" }
        return s
    }

    static func registrations(_ keyFile: URL) -> [String: String] {
        guard let d = try? Data(contentsOf: registrationsFile(keyFile)),
              let m = try? JSONDecoder().decode([String: String].self, from: d) else { return [:] }
        return m
    }

    static func saveRegistration(_ keyFile: URL, deviceID: String?, server: URL) throws(LDAError) {
        var m = registrations(keyFile)
        m[origin(server)] = deviceID
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        guard let d = try? enc.encode(m) else { throw LDAError.keyStorage("cannot encode the device registrations") }
        try writeExclusive(registrationsFile(keyFile), d, replace: true)
    }
}
