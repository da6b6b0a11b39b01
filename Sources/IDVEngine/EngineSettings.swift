import Foundation
import IDVCore

/// Everything the engine and its flows may read of the operator's configuration: session
/// lifetimes, password and activation-code attempts, the Argon2id cost, the abuse limits and the
/// workflow policy. Never the listen address, TLS files, key files or database — those are the
/// process's (IDVRuntime `ServerConfig`, which composes this value as `engine`).
///
/// Flows see it as ``FlowEnv/settings`` (and in ``Flow/parse(_:answer:challenge:settings:)`` and
/// ``Flow/evidence(_:input:settings:)``); the engine holds the one value it was built with
/// (``FlowEngine/settings``), so every flow of a server judges with the same settings.
public struct EngineSettings: Sendable, Equatable {
    /// A session expires this long after its last request, seconds (`session.idle_seconds`).
    public var sessionIdleSeconds = 900
    /// A session expires this long after it started, whatever its use, seconds (`session.absolute_seconds`).
    public var sessionAbsoluteSeconds = 12 * 3600
    /// An activation code expires this long after it is issued, seconds (`activation.code_ttl_seconds`).
    public var activationCodeTTLSeconds = 72 * 3600
    /// Wrong activation codes one client may send for a user before it backs off (`activation.code_attempts`).
    public var activationCodeAttempts = 5
    /// Wrong passwords one client may send for a user before it backs off (`password.attempts`);
    /// the user itself locks at ``LimitSettings/passwordLockThreshold``.
    public var passwordAttempts = 3
    /// The shortest new password, characters (`password.min_length`; ``PasswordPolicy``).
    public var passwordMinLength = 8
    /// Argon2id passes, libsodium `crypto_pwhash` opslimit (`argon2.opslimit`).
    public var argon2OpsLimit = 3
    /// Argon2id memory, KiB, libsodium `crypto_pwhash` memlimit / 1024 (`argon2.memlimit_kib`).
    public var argon2MemLimitKiB = 64 * 1024
    /// The abuse limits: session creation, failed authentication, user locks (docs/LIMITS.md).
    public var limits = LimitSettings()
    /// The IDV workflow policy: verdict thresholds, document rules, attempts, retention (the only judge).
    public var workflow = WorkflowPolicy()
    /// How long each class of personal data is kept (`retention.*`; docs/DATA-PROTECTION.md).
    public var retention = RetentionSettings()

    public init() {}

    /// The Argon2id cost of hashing and verifying a password (``argon2OpsLimit``, ``argon2MemLimitKiB`` in bytes).
    public var argon2: Argon2Parameters {
        Argon2Parameters(opsLimit: UInt64(argon2OpsLimit), memLimit: argon2MemLimitKiB * 1024)
    }
}
