internal import CSodium
import IDVEngine
import IDVRuntime
import Foundation

/// Encryption at rest for biometric templates and kept images (ARCHITECTURE.md §2 "templates
/// encrypted"). One 32-byte key from a key file (`templates.key_file`); the associated data binds
/// each box to its owner (a template to its user id, an image to its flow run and kind), so a box
/// copied onto another row does not decrypt.
///
/// Key rotation: a vault may also hold *previous* keys (`templates.previous_key_files`). It seals
/// with the current key only and opens a box under whichever key its `keyID` names, so a server
/// keeps working while `idvd admin rekey` re-seals the stored boxes (``reseal(_:associatedData:)``);
/// afterwards the previous key files can be removed.
public final class TemplateVault: Vault {
    private let key: [UInt8]
    /// First 16 hex digits of SHA-256 of the key: names the key without revealing it.
    public let keyID: String
    /// Retired keys that still open boxes, by key id.
    private let previous: [String: TemplateVault]

    /// A vault over `key` (exactly 32 bytes) that also opens boxes sealed under `previous` vaults' keys.
    public init(key: [UInt8], previous: [TemplateVault] = []) throws {
        _ = Crypto.ready
        guard key.count == Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES) else {
            throw VaultError.badKeyFile("the key must be 32 bytes, got \(key.count)")
        }
        self.key = key
        keyID = String(Crypto.hex(Crypto.sha256(key)).prefix(16))
        var byID: [String: TemplateVault] = [:]
        for p in previous where p.keyID != keyID {
            byID[p.keyID] = p
            for (id, q) in p.previous where id != keyID { byID[id] = q }
        }
        self.previous = byID
    }

    /// Key ids of the previous keys this vault still opens, sorted.
    public var previousKeyIDs: [String] { previous.keys.sorted() }

    /// The current key file plus previous ones (each 64 hex digits; they must exist).
    public static func load(keyFile path: String, previousKeyFiles: [String], createIfMissing: Bool) throws -> TemplateVault {
        let current = try load(keyFile: path, createIfMissing: createIfMissing)
        guard !previousKeyFiles.isEmpty else { return current }
        return try TemplateVault(key: current.key, previous: previousKeyFiles.map { try load(keyFile: $0, createIfMissing: false) })
    }

    /// Loads the key file (64 hex digits, surrounding whitespace ignored). With `createIfMissing`
    /// a missing file is created with a fresh random key, mode 0600 (its directory, when missing,
    /// mode 0700). A key file that group or others may read or write is refused
    /// (``VaultError/badKeyFile(_:)`` naming the path, its mode and `chmod 600`): whoever reads it
    /// opens every template, kept image and session state.
    public static func load(keyFile path: String, createIfMissing: Bool) throws -> TemplateVault {
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) {
            if createIfMissing {
                let dir = (path as NSString).deletingLastPathComponent
                if !dir.isEmpty, !fm.fileExists(atPath: dir) {
                    try? fm.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                }
            }
            guard createIfMissing else { throw VaultError.badKeyFile("\(path) does not exist") }
            // Created exclusively: of several processes starting on a new store at once, one writes
            // the key and the others read that one (never two keys, one overwriting the other).
            if let created = try? create(keyFile: path) { return created }
            guard fm.fileExists(atPath: path) else { throw VaultError.badKeyFile("cannot create \(path)") }
        }
        var contents = fm.contents(atPath: path)
        // A key file another process created an instant ago may not hold its 65 bytes yet: up to 1 s.
        if createIfMissing { for _ in 0..<100 where (contents?.count ?? 0) < 64 { usleep(10_000); contents = fm.contents(atPath: path) } }
        guard let data = contents else { throw VaultError.badKeyFile("cannot read \(path)") }
        try refuseLooseMode(path)
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let key = Hex.decode(text), key.count == 32 else {
            throw VaultError.badKeyFile("\(path) must hold 64 hexadecimal digits (a 32-byte key)")
        }
        return try TemplateVault(key: key)
    }

    /// Writes a new random key to `path` (64 hex digits and a newline, mode 0600, created exclusively:
    /// an existing file is never overwritten) and returns its vault. `idvd admin new-key` — the one key
    /// file several nodes on one PostgreSQL database share. Throws ``VaultError/badKeyFile(_:)``.
    public static func create(keyFile path: String) throws -> TemplateVault {
        let fd = createExclusively(path, mode: 0o600)
        guard fd >= 0 else {
            throw VaultError.badKeyFile(errno == EEXIST ? "\(path) already exists (a key file is never overwritten)"
                                                        : "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        fchmod(fd, 0o600)
        let key = Crypto.randomBytes(32)
        let text = Array((Crypto.hex(key) + "\n").utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        Foundation.close(fd)
        guard written == text.count else {
            unlink(path)
            throw VaultError.badKeyFile("cannot write \(path)")
        }
        return try TemplateVault(key: key)
    }

    /// Throws ``VaultError/badKeyFile(_:)`` when `path` is readable or writable by group or others.
    static func refuseLooseMode(_ path: String) throws {
        var st = stat()
        guard stat(path, &st) == 0 else { throw VaultError.badKeyFile("cannot read \(path)") }
        let mode = Int(st.st_mode) & 0o777
        if mode & 0o077 != 0 {
            throw VaultError.badKeyFile("the key file \(path) is readable or writable by group or others (mode "
                                        + String(mode, radix: 8) + "); run `chmod 600 \(path)`")
        }
    }

    /// A vault over a subkey derived from this vault's key with libsodium's `crypto_kdf`
    /// (BLAKE2b; `context` exactly 8 ASCII characters, `subkeyID` the subkey number), so one key
    /// file serves several purposes without one purpose's ciphertext opening under another's key.
    /// Used for the session flow state (``SessionStateSealer``, context `"idvsessn"`).
    public func derived(context: String, subkeyID: UInt64) throws -> TemplateVault {
        let ctx = Array(context.utf8)
        guard ctx.count == Int(crypto_kdf_CONTEXTBYTES) else {
            throw VaultError.badKeyFile("the key-derivation context must be \(crypto_kdf_CONTEXTBYTES) bytes")
        }
        var sub = [UInt8](repeating: 0, count: 32)
        let rc = ctx.map { CChar(bitPattern: $0) }.withUnsafeBufferPointer { c in
            crypto_kdf_derive_from_key(&sub, sub.count, subkeyID, c.baseAddress!, key)
        }
        guard rc == 0 else { throw VaultError.badKeyFile("key derivation failed") }
        return try TemplateVault(key: sub, previous: previous.values.sorted { $0.keyID < $1.keyID }.map { try $0.derived(context: context, subkeyID: subkeyID) })
    }

    /// Encrypts `plaintext` bound to `associatedData`.
    public func seal(_ plaintext: [UInt8], associatedData: String) -> SealedBox {
        let nonce = Crypto.randomBytes(Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES))
        var out = [UInt8](repeating: 0, count: plaintext.count + Int(crypto_aead_xchacha20poly1305_ietf_ABYTES))
        var outLen: UInt64 = 0
        let ad = Array(associatedData.utf8)
        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(&out, &outLen, plaintext, UInt64(plaintext.count), ad, UInt64(ad.count), nil, nonce, key)
        return SealedBox(ciphertext: Array(out.prefix(Int(outLen))), nonce: nonce, keyID: keyID)
    }

    /// Decrypts a box sealed with the same key and associated data; throws
    /// ``VaultError/authenticationFailed`` otherwise.
    public func open(_ box: SealedBox, associatedData: String) throws -> [UInt8] {
        guard box.keyID == keyID else {
            guard let old = previous[box.keyID] else { throw VaultError.wrongKey(box.keyID) }
            return try old.open(box, associatedData: associatedData)
        }
        guard box.nonce.count == Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES),
              box.ciphertext.count >= Int(crypto_aead_xchacha20poly1305_ietf_ABYTES) else { throw VaultError.authenticationFailed }
        var out = [UInt8](repeating: 0, count: box.ciphertext.count)
        var outLen: UInt64 = 0
        let ad = Array(associatedData.utf8)
        let rc = crypto_aead_xchacha20poly1305_ietf_decrypt(&out, &outLen, nil, box.ciphertext, UInt64(box.ciphertext.count),
                                                            ad, UInt64(ad.count), box.nonce, key)
        guard rc == 0 else { throw VaultError.authenticationFailed }
        return Array(out.prefix(Int(outLen)))
    }

    /// Associated data of each kind of stored box (``VaultBinding``).
    public typealias Binding = VaultBinding
}

/// `open(2)` with `O_CREAT | O_EXCL` (at file scope: inside the vault `open` names its decryption).
private func createExclusively(_ path: String, mode: mode_t) -> Int32 { open(path, O_WRONLY | O_CREAT | O_EXCL, mode) }
