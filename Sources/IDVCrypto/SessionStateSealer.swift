import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// Seals a session's flow state (the flow stack and the current challenge with its payload —
/// document page images, portrait, best selfie frame, document fields, a server-issued liveness
/// challenge) at rest. XChaCha20-Poly1305 (libsodium) under a subkey derived with `crypto_kdf`
/// (context `"idvsessn"`, subkey 1) from the server's key file (`templates.key_file`), so the
/// session-state key is not the template key; associated data `session-state:<session_id>`, so a
/// state copied onto another session's row does not open.
///
/// Stored form (the `sessions.state` column, a BLOB): `0x01 ‖ key id (16 ASCII hex) ‖ nonce (24) ‖
/// ciphertext+tag`. A TEXT value is a state written before sealing existed (read once, sealed on
/// the next write). Shared by both stores (IDVStoreSQLite, IDVStorePostgres), so a state sealed by one
/// opens in the other under the same key file.
public struct SessionStateSealer: Sendable {
    /// The derived session-state vault (its `keyID` names the subkey, not the key file's key).
    package let vault: TemplateVault
    static let version: UInt8 = 1

    /// A sealer over `masterKey`'s derived session-state subkey.
    public init(masterKey vault: TemplateVault) throws {
        self.vault = try vault.derived(context: "idvsessn", subkeyID: 1)
    }

    /// The sealer for a store at `dbPath`: the key file `keyFile` (created 0600 when missing; nil:
    /// the default of ``KeyLocation``, apart from the database, or an old `<db.path>.key`) and
    /// the `previousKeyFiles` whose states it still opens (key rotation); an in-memory database
    /// (`:memory:`) gets a random key that lives with the process.
    public static func forStore(dbPath: String, keyFile: String?, previousKeyFiles: [String] = []) throws -> SessionStateSealer {
        if dbPath == ":memory:" || dbPath.isEmpty {
            return try SessionStateSealer(masterKey: TemplateVault(key: Crypto.randomBytes(32)))
        }
        return try SessionStateSealer(masterKey: TemplateVault.load(keyFile: keyFile ?? KeyLocation.resolve(dbPath: dbPath, configured: "").path, previousKeyFiles: previousKeyFiles,
                                                                    createIfMissing: true))
    }

    /// Whether a stored state is sealed under the current key (false also for a malformed one).
    public func isCurrent(_ bytes: [UInt8]) -> Bool {
        bytes.count > 17 && bytes[0] == Self.version && String(decoding: bytes[1..<17], as: UTF8.self) == vault.keyID
    }

    /// Opens a stored state of `sessionID` under the key it names and seals it under the current key.
    public func reseal(_ bytes: [UInt8], sessionID: String) throws -> [UInt8] {
        try seal(open(bytes, sessionID: sessionID), sessionID: sessionID)
    }

    static func associatedData(_ sessionID: String) -> String { "session-state:" + sessionID }

    /// Seals the JSON of `state` for `sessionID`.
    public func seal(_ state: SessionFlowState, sessionID: String) throws -> [UInt8] {
        let box = vault.seal(Array(try JSONEncoder().encode(state)), associatedData: Self.associatedData(sessionID))
        return [Self.version] + Array(box.keyID.utf8) + box.nonce + box.ciphertext
    }

    /// Opens a stored state of `sessionID`; throws ``VaultError`` when it was sealed for another
    /// session, under another key, or altered.
    public func open(_ bytes: [UInt8], sessionID: String) throws -> SessionFlowState {
        guard bytes.count > 1 + 16 + 24, bytes[0] == Self.version else { throw VaultError.authenticationFailed }
        let keyID = String(decoding: bytes[1..<17], as: UTF8.self)
        let box = SealedBox(ciphertext: Array(bytes[41...]), nonce: Array(bytes[17..<41]), keyID: keyID)
        let plain = try vault.open(box, associatedData: Self.associatedData(sessionID))
        return try JSONDecoder().decode(SessionFlowState.self, from: Data(plain))
    }
}
