internal import CSodium
import Foundation
import IDVEngine
import IDVRuntime

/// Cryptographic primitives of the server, all from libsodium: random tokens, SHA-256 digests,
/// Argon2id password hashing (`crypto_pwhash`), Ed25519 signature verification (`crypto_sign`) and
/// constant-time comparison (`sodium_memcmp`).
public enum Crypto {
    /// Initialises libsodium once; safe to call many times from any thread.
    public static let ready: Bool = sodium_init() >= 0

    /// `count` cryptographically secure random bytes (`randombytes_buf`).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        precondition(ready)
        guard count > 0 else { return [] }
        var b = [UInt8](repeating: 0, count: count)
        b.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return b
    }

    /// A random opaque token: `bytes` random bytes as base64url without padding (32 bytes → 43 chars).
    public static func token(bytes: Int = 32) -> String { base64url(randomBytes(bytes)) }

    /// A random identifier: `bytes` random bytes as lowercase hex (16 bytes → 32 hex digits).
    public static func randomID(bytes: Int = 16) -> String { hex(randomBytes(bytes)) }

    /// SHA-256 (`crypto_hash_sha256`) of `data`, 32 bytes.
    public static func sha256(_ data: [UInt8]) -> [UInt8] {
        precondition(ready)
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = data.withUnsafeBufferPointer { d in crypto_hash_sha256(&out, d.baseAddress, UInt64(d.count)) }
        return out
    }

    /// SHA-256 of the UTF-8 of `string`, lowercase hex — how tokens are stored at rest.
    public static func sha256Hex(_ string: String) -> String { hex(sha256(Array(string.utf8))) }

    /// Constant-time equality of two byte strings (length is not secret).
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in sodium_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 } }
    }

    /// Argon2id cost parameters (the engine's ``Argon2Parameters``).
    public typealias Argon2Parameters = IDVEngine.Argon2Parameters

    /// Hashes a password with Argon2id into libsodium's self-describing string
    /// (`$argon2id$v=19$m=…,t=…,p=1$salt$hash`, random salt). Throws `internalError` when memory is short.
    public static func hashPassword(_ password: String, parameters: Argon2Parameters) throws -> String {
        precondition(ready)
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        let n = UInt64(password.utf8.count)
        let rc = password.withCString { cp in
            crypto_pwhash_str_alg(&out, cp, n, parameters.opsLimit, parameters.memLimit, crypto_pwhash_ALG_ARGON2ID13)
        }
        guard rc == 0 else { throw IDVServerError.internalFailure("argon2id hashing failed (memory)") }
        return cStringArray(out)
    }

    /// Verifies a password against an Argon2id string (`crypto_pwhash_str_verify`, constant time in the password).
    public static func verifyPassword(_ password: String, hash: String) -> Bool {
        precondition(ready)
        let n = UInt64(password.utf8.count)
        return hash.withCString { h in
            password.withCString { cp in crypto_pwhash_str_verify(h, cp, n) == 0 }
        }
    }

    /// Verifies an Ed25519 detached signature (`crypto_sign_verify_detached`). A key that is not 32
    /// bytes or a signature that is not 64 bytes is simply invalid.
    public static func verifyEd25519(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        precondition(ready)
        guard signature.count == Int(crypto_sign_BYTES), publicKey.count == Int(crypto_sign_PUBLICKEYBYTES) else { return false }
        return message.withUnsafeBufferPointer { m in
            crypto_sign_verify_detached(signature, m.baseAddress, UInt64(m.count), publicKey) == 0
        }
    }

    /// A fresh Ed25519 key pair (public 32 bytes, secret 64 bytes) — for tests, benchmarks and tools.
    public static func ed25519KeyPair() -> (publicKey: [UInt8], secretKey: [UInt8]) {
        precondition(ready)
        var pk = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        var sk = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
        crypto_sign_keypair(&pk, &sk)
        return (pk, sk)
    }

    /// An Ed25519 detached signature of `message` (64 bytes) — for tests, benchmarks and tools.
    public static func signEd25519(message: [UInt8], secretKey: [UInt8]) -> [UInt8] {
        precondition(ready)
        var sig = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
        _ = message.withUnsafeBufferPointer { m in crypto_sign_detached(&sig, nil, m.baseAddress, UInt64(m.count), secretKey) }
        return sig
    }

    /// HMAC-SHA256 (RFC 2104 over SHA-256; libsodium `crypto_auth_hmacsha256_init/update/final`,
    /// which takes a key of any length) of `message` under `key`, 32 bytes. Webhook signatures
    /// (IDVCore ``WebhookSignature``, docs/WEBHOOKS.md).
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        precondition(ready)
        var state = crypto_auth_hmacsha256_state()
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        _ = crypto_auth_hmacsha256_init(&state, key, key.count)
        _ = crypto_auth_hmacsha256_update(&state, message, UInt64(message.count))
        crypto_auth_hmacsha256_final(&state, &out)
        return out
    }

    public static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    public static func base64url(_ bytes: [UInt8]) -> String { Hex.base64url(bytes) }

    /// The libsodium version linked, e.g. "1.0.18".
    public static var libsodiumVersion: String { String(cString: sodium_version_string()) }
}

extension Argon2Parameters {
    /// libsodium's minimum (opslimit 1, 8 KiB): tests and benchmarks only.
    public static let minimum = Argon2Parameters(opsLimit: UInt64(crypto_pwhash_opslimit_min()), memLimit: Int(crypto_pwhash_memlimit_min()))
}

/// The engine's ``EngineCrypto`` over libsodium (``Crypto``).
public struct Sodium: EngineCrypto {
    public init() { precondition(Crypto.ready, "libsodium failed to initialise") }
    public func randomBytes(_ count: Int) -> [UInt8] { Crypto.randomBytes(count) }
    public func sha256(_ data: [UInt8]) -> [UInt8] { Crypto.sha256(data) }
    public func hashPassword(_ password: String, parameters: Argon2Parameters) throws -> String {
        try Crypto.hashPassword(password, parameters: parameters)
    }
    public func verifyPassword(_ password: String, hash: String) -> Bool { Crypto.verifyPassword(password, hash: hash) }
    public func verifyEd25519(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        Crypto.verifyEd25519(signature: signature, message: message, publicKey: publicKey)
    }
    public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool { Crypto.constantTimeEqual(a, b) }
}

extension AuditEntry {
    /// The chain hash of an entry with these fields: SHA-256 hex of
    /// `prev_hash|seq|at|action|user_id|session_id|details` (what every store writes and verifies).
    public static func chainHash(prevHash: String, seq: Int, at: Int, action: String, userID: String?, sessionID: String?, detailsJSON: String) -> String {
        Crypto.sha256Hex("\(prevHash)|\(seq)|\(at)|\(action)|\(userID ?? "")|\(sessionID ?? "")|\(detailsJSON)")
    }
}

/// The NUL-terminated text in a C char buffer.
func cStringArray(_ a: [CChar]) -> String {
    String(decoding: a.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
