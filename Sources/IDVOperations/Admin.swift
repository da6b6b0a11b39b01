import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

/// Administrative operations on the store (the `idvd admin …` commands). Every change is audited.
public struct Admin {
    public let store: any EngineStore
    public let config: ServerConfig
    /// Draws the activation codes and their salts.
    public let crypto: any EngineCrypto
    public init(store: any EngineStore, config: ServerConfig, crypto: any EngineCrypto) { self.store = store; self.config = config; self.crypto = crypto }

    /// What `create-user` and `reset-user` print: the one-time activation code, shown once.
    public struct IssuedCode: Codable, Sendable {
        public let userID: String
        public let activationCode: String
        public let expiresAt: Int
        public let attempts: Int
        public let activationRequiresIDV: Bool
        public let idvWorkflow: Int
        enum CodingKeys: String, CodingKey {
            case userID = "user_id", activationCode = "activation_code", expiresAt = "expires_at", attempts
            case activationRequiresIDV = "activation_requires_idv", idvWorkflow = "idv_workflow"
        }
    }

    /// User ids: 1–128 characters of letters, digits and `. _ - @`.
    public static func validUserID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 128 && id.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) && $0.isASCII || "._-@".unicodeScalars.contains($0)
        }
    }

    /// Creates a user pending activation and issues its activation code. Throws 1025 for a bad
    /// id or workflow, 1026 when the id is taken.
    public func createUser(_ userID: String, activationRequiresIDV: Bool = true, idvWorkflow: IDVWorkflow = .activation,
                           now: Int = Int(Date().timeIntervalSince1970)) throws -> IssuedCode {
        guard Self.validUserID(userID) else { throw IDVError(.invalidArgument, "user id must be 1–128 characters of letters, digits and . _ - @") }
        guard idvWorkflow.isPreLogin else { throw IDVError(.invalidArgument, "activation workflow must be a pre-login workflow (0–5)") }
        return try store.withTransaction {
            if try store.user(userID) != nil { throw IDVError(.userExists) }
            try store.createUser(UserRecord(userID: userID, activationRequiresIDV: activationRequiresIDV,
                                            idvWorkflow: idvWorkflow.rawValue, createdAt: now, updatedAt: now))
            let (code, rec) = ActivationCodes.issue(userID: userID, now: now, settings: config.engine, crypto: crypto)
            try store.saveActivationCode(rec)
            try store.appendAudit(action: "admin.create_user", userID: userID, sessionID: nil,
                                  details: ["activation_requires_idv": .bool(activationRequiresIDV), "idv_workflow": .integer(idvWorkflow.rawValue)], at: now)
            return IssuedCode(userID: userID, activationCode: code, expiresAt: rec.expiresAt, attempts: rec.attemptsLeft,
                              activationRequiresIDV: activationRequiresIDV, idvWorkflow: idvWorkflow.rawValue)
        }
    }

    /// Resets a user to pending activation: clears the password and lock, unbinds devices (LDA off),
    /// revokes sessions, issues a new activation code. Throws 1016 for an unknown user.
    public func resetUser(_ userID: String, now: Int = Int(Date().timeIntervalSince1970)) throws -> IssuedCode {
        try store.withTransaction {
            guard var user = try store.user(userID) else { throw IDVError(.userNotFound) }
            user.state = .pendingActivation
            user.passwordHash = nil
            user.failedPasswordAttempts = 0
            user.lockedAt = nil
            user.updatedAt = now
            try store.saveUser(user)
            for var d in try store.devices(userID: userID) {
                d.userID = nil
                d.ldaEnabled = false
                try store.saveDevice(d)
            }
            let revoked = try store.revokeSessions(userID: userID, at: now)
            let (code, rec) = ActivationCodes.issue(userID: userID, now: now, settings: config.engine, crypto: crypto)
            try store.saveActivationCode(rec)
            try store.appendAudit(action: "admin.reset_user", userID: userID, sessionID: nil, details: ["sessions_revoked": .integer(revoked)], at: now)
            return IssuedCode(userID: userID, activationCode: code, expiresAt: rec.expiresAt, attempts: rec.attemptsLeft,
                              activationRequiresIDV: user.activationRequiresIDV, idvWorkflow: user.idvWorkflow)
        }
    }

    /// What `unlock-user` prints.
    public struct Unlocked: Codable, Sendable {
        public let userID: String
        public let state: String
        /// Whether the user was locked (or counting wrong passwords) before.
        public let wasLocked: Bool
        /// The wrong-password count before the unlock (it is zero after).
        public let failedPasswordAttemptsCleared: Int
        /// Clients' back-offs for this user that were cleared (counters in the store).
        public let clientBackoffsCleared: Int
        enum CodingKeys: String, CodingKey {
            case userID = "user_id", state, wasLocked = "was_locked", failedPasswordAttemptsCleared = "failed_password_attempts_cleared"
            case clientBackoffsCleared = "client_backoffs_cleared"
        }
    }

    /// The operator's path out of a password lock (``PasswordLockout``): the user is active again
    /// with the wrong-password count zeroed — the password, devices, sessions and template are kept
    /// (no new activation code; `reset-user` is for a forgotten password). Audited
    /// `admin.unlock_user`. Every client's back-off for the user ends too (the counters in the store;
    /// a client's failure budget across users stays, docs/LIMITS.md). Throws 1016 for an unknown user, 1025 for a user
    /// still pending activation.
    public func unlockUser(_ userID: String, now: Int = Int(Date().timeIntervalSince1970)) throws -> Unlocked {
        try store.withTransaction {
            guard var user = try store.user(userID) else { throw IDVError(.userNotFound) }
            guard user.state != .pendingActivation, user.passwordHash != nil else {
                throw IDVError(.invalidArgument, "user \(userID) is pending activation: nothing to unlock")
            }
            let before = user.failedPasswordAttempts
            let wasLocked = user.state == .locked
            user.state = .active
            user.failedPasswordAttempts = 0
            user.lockedAt = nil
            user.updatedAt = now
            try store.saveUser(user)
            let cleared = try store.deleteLimitCounters(keyPrefix: AbuseLimits.userPairPrefix(userID, crypto: crypto))
            try store.appendAudit(action: "admin.unlock_user", userID: userID, sessionID: nil,
                                  details: ["was_locked": .bool(wasLocked), "failed_attempts": .integer(before),
                                            "client_backoffs_cleared": .integer(cleared)], at: now)
            return Unlocked(userID: userID, state: user.state.rawValue, wasLocked: wasLocked, failedPasswordAttemptsCleared: before,
                            clientBackoffsCleared: cleared)
        }
    }

    /// One row of `list-users` (no secrets).
    public struct UserRow: Codable, Sendable {
        public let userID: String
        public let state: String
        public let activationRequiresIDV: Bool
        public let idvWorkflow: Int
        public let failedPasswordAttempts: Int
        public let devices: Int
        public let createdAt: Int
        /// When a password lock ends (Unix seconds; absent when not locked, or locked until unlocked: `locked_until_unlocked`).
        public var lockedUntil: Int? = nil
        enum CodingKeys: String, CodingKey {
            case userID = "user_id", state, activationRequiresIDV = "activation_requires_idv", idvWorkflow = "idv_workflow"
            case failedPasswordAttempts = "failed_password_attempts", devices, createdAt = "created_at", lockedUntil = "locked_until"
        }
    }

    public func listUsers() throws -> [UserRow] {
        try store.users().map { u in
            UserRow(userID: u.userID, state: u.state.rawValue, activationRequiresIDV: u.activationRequiresIDV, idvWorkflow: u.idvWorkflow,
                    failedPasswordAttempts: u.failedPasswordAttempts, devices: try store.devices(userID: u.userID).count, createdAt: u.createdAt,
                    lockedUntil: PasswordLockout.lockedUntil(u, config.engine.limits).flatMap { $0 == Int.max ? nil : $0 })
        }
    }

    /// What `rekey` prints: key ids (never keys), the boxes per table before, re-sealed, and after.
    public struct RekeyReport: Codable, Sendable {
        public let keyID: String
        public let previousKeyIDs: [String]
        public let before: SealedInventory
        public let resealed: [String: Int]
        public let after: SealedInventory
        enum CodingKeys: String, CodingKey {
            case keyID = "key_id", previousKeyIDs = "previous_key_ids", before, resealed, after
        }
    }

    /// Key rotation: re-seals every stored template, document-scan report, kept image and session
    /// state that is not under `vault`'s current key (`templates.key_file`), opening it with the
    /// previous key it names (`templates.previous_key_files`); audited as `admin.rekey` with the
    /// counts. Refuses, changing nothing, when a box is under a key the vault does not hold
    /// (``IDVServerError/configuration(_:)`` naming the tables). Safe beside a running server: each
    /// row is rewritten only if unchanged since it was read.
    public func rekey(vault: any Vault, now: Int = Int(Date().timeIntervalSince1970)) throws -> RekeyReport {
        let before = try withWebhookSecrets(store.sealedInventory(vault: vault), vault: vault)
        guard before.unknown.isEmpty else {
            let tables = before.unknown.sorted { $0.key < $1.key }.map { "\($0.value) in \($0.key)" }.joined(separator: ", ")
            throw IDVServerError.configuration("boxes sealed under a key that is neither templates.key_file nor one of templates.previous_key_files "
                                               + "(\(tables)); nothing was changed — add the old key file to templates.previous_key_files")
        }
        var resealed = try store.resealUnderCurrentKey(vault: vault, batchSize: 200)
        resealed["webhook_endpoints"] = try resealWebhookSecrets(vault: vault)
        let after = try withWebhookSecrets(store.sealedInventory(vault: vault), vault: vault)
        var details: [String: JSONValue] = ["key_id": .string(vault.keyID)]
        for (table, n) in resealed { details["resealed_" + table] = .integer(n) }
        try store.appendAudit(action: "admin.rekey", userID: nil, sessionID: nil, details: .object(details), at: now)
        return RekeyReport(keyID: vault.keyID, previousKeyIDs: vault.previousKeyIDs, before: before, resealed: resealed, after: after)
    }
}
