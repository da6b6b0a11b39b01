import Foundation

// The cryptography the engine needs, as protocols the composition root fills (libsodium:
// IDVCrypto). The engine imports no C module: it seals through a ``Vault`` and hashes, verifies and
// draws randomness through ``EngineCrypto``.

/// The primitives of ``EngineCrypto``'s implementations (IDVCrypto `Sodium`: libsodium).
public protocol EngineCrypto: Sendable {
    /// `count` cryptographically secure random bytes.
    func randomBytes(_ count: Int) -> [UInt8]
    /// SHA-256 of `data`, 32 bytes.
    func sha256(_ data: [UInt8]) -> [UInt8]
    /// Argon2id of `password` as a self-describing string (`$argon2id$v=19$m=…,t=…,p=1$salt$hash`,
    /// random salt). Throws ``IDVServerError/internalFailure(_:)`` when memory is short.
    func hashPassword(_ password: String, parameters: Argon2Parameters) throws -> String
    /// Verifies `password` against an Argon2id string (constant time in the password).
    func verifyPassword(_ password: String, hash: String) -> Bool
    /// Verifies an Ed25519 detached signature; a key that is not 32 bytes or a signature that is not
    /// 64 bytes is simply invalid.
    func verifyEd25519(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool
    /// Constant-time equality of two byte strings (length is not secret).
    func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool
}

extension EngineCrypto {
    /// A random opaque token: `bytes` random bytes as base64url without padding (32 bytes → 43 chars).
    public func token(bytes: Int = 32) -> String { Hex.base64url(randomBytes(bytes)) }
    /// A random identifier: `bytes` random bytes as lowercase hex (16 bytes → 32 hex digits).
    public func randomID(bytes: Int = 16) -> String { Hex.encode(randomBytes(bytes)) }
    /// SHA-256 of the UTF-8 of `string`, lowercase hex — how tokens are stored at rest.
    public func sha256Hex(_ string: String) -> String { Hex.encode(sha256(Array(string.utf8))) }
}

/// Argon2id cost parameters (`crypto_pwhash` opslimit and memlimit in bytes). Production
/// default: opslimit 3, memlimit 64 MiB (≈ RFC 9106 §4 second recommendation, scaled to a login
/// server). Tests use the minimum (1, 8 KiB) through configuration.
public struct Argon2Parameters: Sendable, Equatable {
    public var opsLimit: UInt64
    public var memLimit: Int
    public init(opsLimit: UInt64, memLimit: Int) { self.opsLimit = opsLimit; self.memLimit = memLimit }
    public static let production = Argon2Parameters(opsLimit: 3, memLimit: 64 << 20)
}

/// Lowercase hex and base64url text of bytes.
public enum Hex {
    public static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Standard base64 with `+/` → `-_` and no padding (RFC 4648 §5).
    public static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Hex text (either case) → bytes; nil when not hex of even length.
    public static func decode(_ text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x57
            case 0x41...0x46: return c - 0x37
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let h = nibble(u[i]), let l = nibble(u[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }

    /// base64url without padding (RFC 4648 §5) → bytes; nil when not base64url.
    public static func base64urlDecode(_ text: String) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var b = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b.count % 4 != 0 { b += "=" }
        return Data(base64Encoded: b).map { Array($0) }
    }
}

/// A sealed (encrypted and authenticated) byte string: XChaCha20-Poly1305 (libsodium
/// `crypto_aead_xchacha20poly1305_ietf_*`, 24-byte random nonce, 16-byte tag appended to the
/// ciphertext) under the vault key named by `keyID`.
public struct SealedBox: Sendable, Equatable {
    public var ciphertext: [UInt8]
    public var nonce: [UInt8]
    public var keyID: String
    public init(ciphertext: [UInt8], nonce: [UInt8], keyID: String) {
        self.ciphertext = ciphertext
        self.nonce = nonce
        self.keyID = keyID
    }
}

/// Errors of the vault.
public enum VaultError: Error, Equatable, CustomStringConvertible {
    /// The key file is missing, unreadable or not 32 bytes (64 hex digits).
    case badKeyFile(String)
    /// Decryption failed: wrong key, wrong associated data (e.g. another user's id) or tampering.
    case authenticationFailed
    /// The sealed box names a key that is neither the vault's current key nor one of its previous keys.
    case wrongKey(String)
    /// A stored template is not a whole number of float32 values.
    case malformedTemplate

    public var description: String {
        switch self {
        case let .badKeyFile(m): return "template key file: \(m)"
        case .authenticationFailed: return "decryption failed (wrong key, wrong associated data or tampered ciphertext)"
        case let .wrongKey(k): return "sealed with key \(k), which is neither this server's key (templates.key_file) nor a previous one (templates.previous_key_files)"
        case .malformedTemplate: return "stored template is not a float32 vector"
        }
    }
}

/// Encryption at rest with associated data (ARCHITECTURE.md §2 "templates encrypted"): templates,
/// kept media, document-scan reports and session states. IDVCrypto's `TemplateVault`
/// (XChaCha20-Poly1305, key rotation) is the implementation.
///
/// Contract: ``seal(_:associatedData:)`` uses the current key (``keyID``); ``open(_:associatedData:)``
/// opens a box under the current key or one of ``previousKeyIDs`` and throws ``VaultError`` for a
/// wrong key, wrong associated data or tampering.
public protocol Vault: Sendable {
    /// Names the current key without revealing it.
    var keyID: String { get }
    /// Retired keys that still open boxes, sorted.
    var previousKeyIDs: [String] { get }
    /// Encrypts `plaintext` bound to `associatedData` under the current key.
    func seal(_ plaintext: [UInt8], associatedData: String) -> SealedBox
    /// Decrypts a box sealed with the same associated data.
    func open(_ box: SealedBox, associatedData: String) throws -> [UInt8]
}

extension Vault {
    /// Whether `box` is sealed under the current key (false: it needs ``reseal(_:associatedData:)``).
    public func isCurrent(_ box: SealedBox) -> Bool { box.keyID == keyID }

    /// Opens `box` under the key it names and seals the plaintext again under the current key
    /// (a fresh nonce); throws as ``open(_:associatedData:)``.
    public func reseal(_ box: SealedBox, associatedData: String) throws -> SealedBox {
        seal(try open(box, associatedData: associatedData), associatedData: associatedData)
    }

    /// Seals a face descriptor (e.g. the 128-d dlib embedding) as little-endian float32, bound to `userID`.
    public func sealTemplate(_ embedding: [Float], userID: String) -> SealedBox {
        var bytes = [UInt8]()
        bytes.reserveCapacity(embedding.count * 4)
        for f in embedding { withUnsafeBytes(of: f.bitPattern.littleEndian) { bytes += $0 } }
        return seal(bytes, associatedData: VaultBinding.template(userID: userID))
    }

    /// Seals a stored template's bytes as given (the analyser's versioned format), bound to `userID`.
    public func sealTemplate(bytes: [UInt8], userID: String) -> SealedBox {
        seal(bytes, associatedData: VaultBinding.template(userID: userID))
    }

    /// Opens a template sealed for `userID` as its bytes (any version).
    public func openTemplateBytes(_ box: SealedBox, userID: String) throws -> [UInt8] {
        try open(box, associatedData: VaultBinding.template(userID: userID))
    }

    /// Opens a version-1 template (bare little-endian float32) sealed for `userID`.
    public func openTemplate(_ box: SealedBox, userID: String) throws -> [Float] {
        let b = try open(box, associatedData: VaultBinding.template(userID: userID))
        guard b.count % 4 == 0 else { throw VaultError.malformedTemplate }
        return stride(from: 0, to: b.count, by: 4).map { i in
            Float(bitPattern: UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24)
        }
    }
}

/// Associated data of each kind of stored box: what the box is bound to.
public enum VaultBinding {
    /// A user's biometric template.
    public static func template(userID: String) -> String { "template:" + userID }
    /// An image kept for a flow run (`kind`: document page, portrait, selfie frame, …).
    public static func media(runID: String, kind: String) -> String { "media:\(runID):\(kind)" }
    /// The stored report of an additional document scan.
    public static func scan(scanID: String) -> String { "scan:" + scanID }
}

/// HMAC-SHA256 (RFC 2104) over ``EngineCrypto/sha256(_:)``.
public enum HMACSHA256 {
    public static func mac(key: [UInt8], message: [UInt8], crypto: any EngineCrypto) -> [UInt8] {
        var k = key.count > 64 ? crypto.sha256(key) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        let inner = crypto.sha256(k.map { $0 ^ 0x36 } + message)
        return crypto.sha256(k.map { $0 ^ 0x5C } + inner)
    }
}
