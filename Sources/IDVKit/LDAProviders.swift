import Foundation
import Synchronization
#if canImport(CryptoKit)
import CryptoKit
#endif
#if os(Linux)
import Glibc
#endif

#if canImport(CryptoKit)
/// Apple platforms: Ed25519 with CryptoKit's `Curve25519.Signing`.
///
/// The key lives in a file (``LDAKeyFile`` layout, mode `0600`) — acceptable for this sample SDK;
/// a production app should keep it in the Keychain (`kSecAttrAccessibleWhenUnlockedThisDeviceOnly`)
/// or the Secure Enclave, and use LocalAuthentication (Face ID / Touch ID) as the presence check.
/// Here `presence` is the app's closure (e.g. an `LAContext.evaluatePolicy` wrapper).
public struct CryptoKitLDAProvider: LDAProvider {
    public let keyFile: URL
    public let presence: LDAPresenceCheck

    public init(keyFile: URL, presence: @escaping LDAPresenceCheck) {
        self.keyFile = keyFile
        self.presence = presence
    }

    private func key() throws(LDAError) -> Curve25519.Signing.PrivateKey {
        if let bytes = try LDAKeyFile.read(keyFile) {
            guard let k = try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes.prefix(32)),
                  k.publicKey.rawRepresentation == bytes.suffix(32) else {
                throw LDAError.keyFileInvalid("its public half does not belong to its seed")
            }
            return k
        }
        let k = Curve25519.Signing.PrivateKey()
        try LDAKeyFile.create(keyFile, bytes: k.rawRepresentation + k.publicKey.rawRepresentation)
        return k
    }

    public func publicKey() throws(LDAError) -> Data { try key().publicKey.rawRepresentation }

    public func sign(message: Data, purpose: LDAPurpose) throws(LDAError) -> Data {
        let k = try key()
        guard presence(purpose) else { throw LDAError.userCancelled }
        do { return try k.signature(for: message) } catch { throw LDAError.signingFailed("CryptoKit refused to sign") }
    }

    public func registeredDeviceID(server: URL) -> String? { LDAKeyFile.registrations(keyFile)[LDAKeyFile.origin(server)] }
    public func saveRegisteredDeviceID(_ deviceID: String?, server: URL) throws(LDAError) {
        try LDAKeyFile.saveRegistration(keyFile, deviceID: deviceID, server: server)
    }
}

/// The LDA provider of this platform.
public typealias PlatformLDAProvider = CryptoKitLDAProvider
#endif

#if os(Linux)
/// libsodium's Ed25519 functions, loaded at run time with `dlopen`/`dlsym` so that IDVKit has no
/// link-time dependency (Debian package `libsodium23`, installed by scripts/bootstrap).
/// Handles stay open for the life of the process (one per library name).
final class Sodium: @unchecked Sendable {
    // @unchecked: immutable C function pointers into libsodium, which is thread-safe after sodium_init.
    typealias InitFn = @convention(c) () -> Int32
    typealias KeypairFn = @convention(c) (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) -> Int32
    typealias SeedKeypairFn = @convention(c) (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?) -> Int32
    typealias SignFn = @convention(c) (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt64>?, UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>?) -> Int32

    let keypair: KeypairFn
    let seedKeypair: SeedKeypairFn
    let signDetached: SignFn

    private init(keypair: KeypairFn, seedKeypair: SeedKeypairFn, signDetached: SignFn) {
        self.keypair = keypair
        self.seedKeypair = seedKeypair
        self.signDetached = signDetached
    }

    /// The libraries loaded so far, by name.
    private static let loaded = Mutex<[String: Sodium]>([:])

    /// The library `name` (e.g. `libsodium.so.23`), initialised; ``LDAError/notAvailable(_:)`` when
    /// it cannot be loaded or lacks a symbol.
    static func load(_ name: String) throws(LDAError) -> Sodium {
        try loaded.withLock { (loaded: inout [String: Sodium]) throws(LDAError) -> Sodium in
            if let s = loaded[name] { return s }
            guard let h = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
                throw LDAError.notAvailable("\(name) cannot be loaded (install the libsodium23 package)")
            }
            func sym<T>(_ n: String, _ t: T.Type) throws(LDAError) -> T {
                guard let p = dlsym(h, n) else { throw LDAError.notAvailable("\(name) has no \(n)") }
                return unsafeBitCast(p, to: t)
            }
            let initFn = try sym("sodium_init", InitFn.self)
            guard initFn() >= 0 else { throw LDAError.notAvailable("sodium_init failed") }
            let s = Sodium(keypair: try sym("crypto_sign_ed25519_keypair", KeypairFn.self),
                           seedKeypair: try sym("crypto_sign_ed25519_seed_keypair", SeedKeypairFn.self),
                           signDetached: try sym("crypto_sign_ed25519_detached", SignFn.self))
            loaded[name] = s
            return s
        }
    }
}

/// Linux: an Ed25519 key in a file (``LDAKeyFile`` layout, created with mode `0600`; a file with
/// wider permissions is refused), signing with the system libsodium (`crypto_sign_ed25519_*`)
/// loaded at run time. The presence check is the app's closure (the sample app asks
/// "Approve with device key? [y/n]").
///
/// Errors: ``LDAError/notAvailable(_:)`` when libsodium cannot be loaded (the SDK then falls back to
/// the password), ``LDAError/keyFilePermissions(path:mode:)``, ``LDAError/keyFileInvalid(_:)``,
/// ``LDAError/keyStorage(_:)``, ``LDAError/userCancelled``.
public struct FileLDAProvider: LDAProvider {
    public let keyFile: URL
    public let presence: LDAPresenceCheck
    /// The shared library to load (default `libsodium.so.23`).
    public let library: String

    public init(keyFile: URL, library: String = "libsodium.so.23", presence: @escaping LDAPresenceCheck) {
        self.keyFile = keyFile
        self.library = library
        self.presence = presence
    }

    /// The 64-byte secret key (seed ‖ public key), created on first use; checked for consistency.
    private func secretKey(_ na: Sodium) throws(LDAError) -> [UInt8] {
        if let bytes = try LDAKeyFile.read(keyFile) {
            let sk = [UInt8](bytes)
            var pk = [UInt8](repeating: 0, count: 32), check = [UInt8](repeating: 0, count: 64)
            guard na.seedKeypair(&pk, &check, Array(sk[0..<32])) == 0, pk == Array(sk[32..<64]) else {
                throw LDAError.keyFileInvalid("its public half does not belong to its seed")
            }
            return sk
        }
        var pk = [UInt8](repeating: 0, count: 32), sk = [UInt8](repeating: 0, count: 64)
        guard na.keypair(&pk, &sk) == 0 else { throw LDAError.signingFailed("crypto_sign_ed25519_keypair failed") }
        try LDAKeyFile.create(keyFile, bytes: Data(sk))
        return sk
    }

    public func publicKey() throws(LDAError) -> Data {
        // The public key is the file's second half; without the file, libsodium makes the key.
        if let bytes = try LDAKeyFile.read(keyFile) { return bytes.suffix(32) }
        return Data(try secretKey(try Sodium.load(library))[32..<64])
    }

    public func sign(message: Data, purpose: LDAPurpose) throws(LDAError) -> Data {
        let na = try Sodium.load(library)
        let sk = try secretKey(na)
        guard presence(purpose) else { throw LDAError.userCancelled }
        var sig = [UInt8](repeating: 0, count: 64)
        var len: UInt64 = 0
        let rc = message.withUnsafeBytes { m in
            na.signDetached(&sig, &len, m.bindMemory(to: UInt8.self).baseAddress, UInt64(m.count), sk)
        }
        guard rc == 0, len == 64 else { throw LDAError.signingFailed("crypto_sign_ed25519_detached returned \(rc)") }
        return Data(sig)
    }

    public func registeredDeviceID(server: URL) -> String? { LDAKeyFile.registrations(keyFile)[LDAKeyFile.origin(server)] }
    public func saveRegisteredDeviceID(_ deviceID: String?, server: URL) throws(LDAError) {
        try LDAKeyFile.saveRegistration(keyFile, deviceID: deviceID, server: server)
    }
}

/// The LDA provider of this platform.
public typealias PlatformLDAProvider = FileLDAProvider
#endif
