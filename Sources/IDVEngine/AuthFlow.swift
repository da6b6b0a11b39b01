import Foundation
import IDVCore

/// Password policy (documented in docs/PROTOCOL.md §Passwords): at least `password.min_length`
/// characters (default 8) and at most 128; at least one letter and one digit; no control
/// characters; not equal to the user id (case-insensitive).
public enum PasswordPolicy {
    /// nil when `password` meets the policy, else the reason (safe to show; never contains the password).
    public static func violation(_ password: String, userID: String, minLength: Int) -> String? {
        let n = password.count
        if n < minLength { return "The password must have at least \(minLength) characters" }
        if n > 128 { return "The password must have at most 128 characters" }
        if password.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) {
            return "The password must not contain control characters"
        }
        if !password.contains(where: { $0.isLetter }) || !password.contains(where: { $0.isNumber }) {
            return "The password must contain at least one letter and one digit"
        }
        if password.lowercased() == userID.lowercased() { return "The password must differ from the user id" }
        return nil
    }
}

/// Activation codes: generation and constant-time checking. A code is 10 characters of the
/// Crockford base32 alphabet (no I, L, O, U; ≈ 50 bits), shown as `XXXXX-XXXXX`; the hyphen,
/// spaces and case are ignored on input. Stored as SHA-256 of a 16-byte random salt and the code.
public enum ActivationCodes {
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// A new code and its record (hash, salt, expiry, attempts).
    public static func issue(userID: String, now: Int, config: ServerConfig, crypto: any EngineCrypto) -> (code: String, record: ActivationCodeRecord) {
        let raw = crypto.randomBytes(10).map { alphabet[Int($0) & 31] }
        let code = String(raw[0..<5]) + "-" + String(raw[5..<10])
        let salt = crypto.randomID()
        let rec = ActivationCodeRecord(userID: userID, codeHash: hash(code, salt: salt, crypto: crypto), salt: salt,
                                       expiresAt: now + config.activationCodeTTLSeconds,
                                       attemptsLeft: config.activationCodeAttempts, createdAt: now)
        return (code, rec)
    }

    static func normalise(_ code: String) -> String {
        code.uppercased().filter { !$0.isWhitespace && $0 != "-" }
    }

    static func hash(_ code: String, salt: String, crypto: any EngineCrypto) -> String {
        crypto.sha256Hex(salt + ":" + normalise(code))
    }

    /// Constant-time comparison of a typed code with the stored hash.
    public static func matches(_ code: String, record: ActivationCodeRecord, crypto: any EngineCrypto) -> Bool {
        let a = Array(hash(code, salt: record.salt, crypto: crypto).utf8)
        let b = Array(record.codeHash.utf8)
        return crypto.constantTimeEqual(a, b)
    }
}

/// The core authentication flow (`auth`), the base the IDV workflows extend:
///
/// ```
/// getUser ─┬─ pending activation ─► getActivationCode ─► [IDV sub-flow if the user's flag is on]
///          │                                           ─► getPassword(mode 1 SET) ─► [getUserConsentForLDA] ─► onUserLoggedIn
///          └─ active ─┬─ device bound with LDA ─► getDeviceSignature ─(fallback/invalid)─► getPassword(0)
///                     └─ otherwise ─► getPassword(mode 0 VERIFY) ─► onUserLoggedIn
/// ```
/// Failures that end a step return to `getUser` carrying the reason (1010, 1011, 1013, 146 …).
/// Argon2id (hashing a new password, verifying one) is evidence: measured before the transaction.
public struct AuthFlow: Flow {
    public static let name = FlowName.auth
    public var name: String { Self.name }
    public init() {}

    /// Where the flow waits, with the user it is about.
    public enum State: Codable, Sendable, Equatable {
        case user
        case activationCode(userID: String)
        /// The activation IDV sub-flow runs on top.
        case idv(userID: String)
        case setPassword(userID: String)
        case verifyPassword(userID: String)
        case lda(userID: String)
        case ldaConsent(userID: String)

        var userID: String? {
            switch self {
            case .user: return nil
            case let .activationCode(u), let .idv(u), let .setPassword(u), let .verifyPassword(u), let .lda(u), let .ldaConsent(u): return u
            }
        }
    }

    /// The answers, typed.
    public enum Input: Sendable {
        case userID(String)
        case activationCode(String)
        case password(String)
        /// `getDeviceSignature`: the signature over the challenge, or the password instead.
        case ldaSignature(String, challengeID: String, nonce: String?)
        case ldaFallback
        /// `getUserConsentForLDA`: consent and (with consent) the enrolment signature.
        case ldaConsent(Bool, signature: String?, challengeID: String, nonce: String?)
    }

    static let unlimited = -1
    static func status(_ code: Int, _ message: String) -> RequestStatus { RequestStatus(statusCode: code, statusMessage: message) }

    // MARK: Typed answers

    static func requiredString(_ answer: WireAnswer, _ key: String, max: Int) throws -> String {
        guard let v = answer.payload[key]?.stringValue else {
            throw IDVError(.malformedRequest, "payload.\(key) (string) is required")
        }
        guard !v.isEmpty, v.count <= max else { throw IDVError(.malformedRequest, "payload.\(key) must have 1–\(max) characters") }
        return v
    }

    public func parse(_ state: State, answer: WireAnswer, challenge: PendingChallenge) throws -> Input {
        switch state {
        case .user: return .userID(try Self.requiredString(answer, "user_id", max: 128).trimmingCharacters(in: .whitespaces))
        case .activationCode: return .activationCode(try Self.requiredString(answer, "activation_code", max: 64))
        case .setPassword, .verifyPassword: return .password(try Self.requiredString(answer, "password", max: 1024))
        case .lda:
            if answer.payload["fallback"]?.stringValue == "password" { return .ldaFallback }
            guard let sig = answer.payload["signature"]?.stringValue else {
                throw IDVError(.malformedRequest, "payload.signature (base64) or payload.fallback = \"password\" is required")
            }
            return .ldaSignature(sig, challengeID: challenge.challengeID, nonce: challenge.payload["nonce"]?.stringValue)
        case .ldaConsent:
            guard let consent = answer.payload["consent"]?.boolValue else { throw IDVError(.malformedRequest, "payload.consent (boolean) is required") }
            let sig = answer.payload["signature"]?.stringValue
            if consent && sig == nil { throw IDVError(.malformedRequest, "payload.signature (base64) is required with consent") }
            return .ldaConsent(consent, signature: sig, challengeID: challenge.challengeID, nonce: challenge.payload["nonce"]?.stringValue)
        case .idv: throw IDVError(.internalError, "auth flow in unexpected step")
        }
    }

    public func subject(_ state: State, input: Input?) -> String? {
        if case .user = state, case let .userID(id)? = input { return id }
        return state.userID
    }

    public func startSubject(_ input: JSONValue, session: SessionFacts) -> String? { nil }

    /// Argon2id outside the transaction: hash a new password that meets the policy, or verify one.
    public func evidence(_ state: State, input: Input, config: ServerConfig) -> EvidenceRequest {
        guard case let .password(pw) = input else { return .none }
        switch state {
        case let .setPassword(uid):
            return PasswordPolicy.violation(pw, userID: uid, minLength: config.passwordMinLength) == nil ? .passwordHash(pw) : .none
        case .verifyPassword: return .passwordCheck(pw)
        default: return .none
        }
    }

    // MARK: Steps

    public func start(_ input: JSONValue, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        askUser()
    }

    /// `getUser`, optionally carrying why the previous attempt ended (the session's user cleared).
    func askUser(error: IDVError? = nil, _ effects: [Effect] = []) -> Transition<State> {
        .ask(.user, ChallengeSpec(name: WireName.getUser, attemptsLeft: Self.unlimited, payload: .emptyObject, error: error,
                                  status: error.map { Self.status(RequestStatus.unableToProcess, $0.errorString) }),
             effects + [.setSessionUser(nil)])
    }

    func askVerifyPassword(_ user: UserRecord, limit: Int, error: IDVError? = nil, _ effects: [Effect] = []) -> Transition<State> {
        .ask(.verifyPassword(userID: user.userID),
             ChallengeSpec(name: WireName.getPassword, mode: ChallengeOpMode.verify.rawValue,
                           attemptsLeft: max(0, limit - user.failedPasswordAttempts), userID: user.userID,
                           error: error, status: error.map { Self.status(RequestStatus.unableToProcess, $0.errorString) }
                               ?? Self.status(RequestStatus.success, "Success")), effects)
    }

    func askSetPassword(userID: String, error: IDVError? = nil, _ effects: [Effect] = []) -> Transition<State> {
        .ask(.setPassword(userID: userID),
             ChallengeSpec(name: WireName.getPassword, mode: ChallengeOpMode.set.rawValue, attemptsLeft: Self.unlimited, userID: userID, error: error,
                           status: error.map { Self.status(RequestStatus.unableToProcess, $0.errorString) } ?? Self.status(RequestStatus.success, "Success")),
             effects)
    }

    func askLDA(userID: String, env: FlowEnv, _ effects: [Effect] = []) -> Transition<State> {
        .ask(.lda(userID: userID), ChallengeSpec(name: WireName.getDeviceSignature, attemptsLeft: 1, userID: userID,
                                                 payload: ["nonce": .string(env.nonce())]), effects)
    }

    static func audit(_ action: String, _ userID: String?, _ details: [String: JSONValue] = [:]) -> Effect {
        .audit(AuditAction(action), userID: userID, details: details)
    }

    /// The login: `onUserLoggedIn` and the effects that mark the session logged in.
    static func login(_ user: UserRecord, facts: Facts, _ effects: [Effect] = []) -> Transition<State> {
        let event = WireEvent(name: WireName.onUserLoggedIn, userID: user.userID,
                              payload: ["user_id": .string(user.userID), "session_id": .string(facts.session.sessionID),
                                        "device_id": facts.session.deviceID.map { .string($0) } ?? .null])
        return .finish(FlowResult(outcome: .loggedIn, event: event), effects + [.logIn(userID: user.userID)])
    }

    /// Whether `signatureB64` is the session device's Ed25519 signature over the challenge
    /// (``WireLDA/message(challengeID:nonce:)``).
    static func signatureValid(_ signatureB64: String, challengeID: String, nonce: String?, facts: Facts, env: FlowEnv) -> Bool {
        guard let d = facts.device, let key = Data(base64Encoded: d.publicKey), let sig = Data(base64Encoded: signatureB64),
              let nonce else { return false }
        let msg = WireLDA.message(challengeID: challengeID, nonce: nonce)
        return env.crypto.verifyEd25519(signature: Array(sig), message: Array(msg), publicKey: Array(key))
    }

    public func reduce(_ state: State, input: Input, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        switch (state, input) {
        case let (.user, .userID(id)): return answerUser(id, facts: facts, env: env)
        case let (.activationCode(uid), .activationCode(typed)): return answerActivationCode(typed, userID: uid, facts: facts, env: env)
        case let (.setPassword(uid), .password(pw)): return try answerSetPassword(pw, userID: uid, evidence: evidence, facts: facts, env: env)
        case (.verifyPassword, .password): return answerVerifyPassword(evidence: evidence, facts: facts, env: env)
        case (.lda, .ldaFallback):
            guard let user = facts.user else { return askUser(error: IDVError(.userNotFound)) }
            return askVerifyPassword(user, limit: env.config.passwordAttempts)
        case let (.lda(uid), .ldaSignature(sig, cid, nonce)):
            guard let user = facts.user else { return askUser(error: IDVError(.userNotFound)) }
            guard user.state == .active else { return askUser(error: IDVError(.userLocked)) }
            guard Self.signatureValid(sig, challengeID: cid, nonce: nonce, facts: facts, env: env) else {
                return askVerifyPassword(user, limit: env.config.passwordAttempts,
                                         error: IDVError(.deviceSignatureInvalid, "LDA failed; enter the password instead"),
                                         [Self.audit("lda.signature_invalid", uid)])
            }
            return Self.login(user, facts: facts)
        case let (.ldaConsent(uid), .ldaConsent(consent, sig, cid, nonce)):
            guard let user = facts.user else { return askUser(error: IDVError(.userNotFound)) }
            var effects: [Effect] = []
            if consent, let sig {
                guard Self.signatureValid(sig, challengeID: cid, nonce: nonce, facts: facts, env: env) else {
                    return .ask(state, ChallengeSpec(name: WireName.getUserConsentForLDA, attemptsLeft: Self.unlimited, userID: uid,
                                                     payload: ["nonce": .string(env.nonce())], error: IDVError(.deviceSignatureInvalid)))
                }
                if var d = facts.device {
                    d.ldaEnabled = true
                    effects.append(.saveDevice(d))
                }
                effects.append(Self.audit("lda.enabled", uid, ["device_id": facts.session.deviceID.map { .string($0) } ?? .null]))
            }
            return Self.login(user, facts: facts, effects)
        default:
            throw IDVError(.internalError, "auth flow in unexpected step")
        }
    }

    // MARK: getUser

    func answerUser(_ id: String, facts: Facts, env: FlowEnv) -> Transition<State> {
        guard let user = facts.user else { return askUser(error: IDVError(.userNotFound)) }
        switch user.state {
        case .locked:
            return askUser(error: IDVError(.userLocked, "The user is locked after too many failed attempts; contact support"))
        case .pendingActivation:
            guard let code = facts.activationCode, code.usedAt == nil, code.attemptsLeft > 0, code.expiresAt > facts.now else {
                return askUser(error: IDVError(.activationCodeExpired, "The activation code has expired or was used; ask for a new one"))
            }
            if user.activationRequiresIDV && env.activationIDV[user.idvWorkflow] == nil {
                return askUser(error: IDVError(.workflowUnavailable,
                    "Activation of this user needs IDV workflow \(user.idvWorkflow), which this server does not offer"))
            }
            return .ask(.activationCode(userID: id), ChallengeSpec(name: WireName.getActivationCode, attemptsLeft: code.attemptsLeft, userID: id),
                        [.setSessionUser(id)])
        case .active:
            if let d = facts.device, d.userID == id, d.ldaEnabled { return askLDA(userID: id, env: env, [.setSessionUser(id)]) }
            return askVerifyPassword(user, limit: env.config.passwordAttempts, [.setSessionUser(id)])
        }
    }

    // MARK: getActivationCode

    func answerActivationCode(_ typed: String, userID uid: String, facts: Facts, env: FlowEnv) -> Transition<State> {
        guard var code = facts.activationCode, code.usedAt == nil, code.expiresAt > facts.now, code.attemptsLeft > 0 else {
            return askUser(error: IDVError(.activationCodeExpired, "The activation code has expired or was used; ask for a new one"))
        }
        guard ActivationCodes.matches(typed, record: code, crypto: env.crypto) else {
            code.attemptsLeft -= 1
            if code.attemptsLeft <= 0 {
                return askUser(error: IDVError(.attemptsExhausted, "No activation-code attempts left; ask for a new code"),
                               [.saveActivationCode(code), Self.audit("activation.code_exhausted", uid),
                                .countOutcome(flow: name, outcome: .activationAttemptsExhausted)])
            }
            return .ask(.activationCode(userID: uid),
                        ChallengeSpec(name: WireName.getActivationCode, attemptsLeft: code.attemptsLeft, userID: uid,
                                      error: IDVError(.invalidActivationCode),
                                      status: Self.status(RequestStatus.unableToProcess, IDVErrorCode.invalidActivationCode.message)),
                        [.saveActivationCode(code), Self.audit("activation.code_wrong", uid, ["attempts_left": .integer(code.attemptsLeft)])])
        }
        // Right code. It is bound to this session (not consumed) until activation completes; a
        // live binding held by another session refuses it — never two sessions on one code.
        if let other = code.boundSessionID, other != facts.session.sessionID, (code.boundUntil ?? 0) > facts.now {
            return askUser(error: IDVError(.activationCodeExpired,
                "The activation code is in use in another session; finish or cancel it there, or wait until that session expires"),
                           [Self.audit("activation.code_in_use", uid)])
        }
        code.boundSessionID = facts.session.sessionID
        code.boundUntil = facts.session.absoluteExpiresAt
        let bound: [Effect] = [.saveActivationCode(code), Self.audit("activation.code_accepted", uid)]
        guard let user = facts.user else { return askUser(error: IDVError(.userNotFound), bound) }
        if user.activationRequiresIDV {
            guard let idvFlow = env.activationIDV[user.idvWorkflow] else { return askUser(error: IDVError(.workflowUnavailable), bound) }
            // The IDV hook: the workflow engine's flow runs here, on top of this one.
            return Transition(.call(.idv(userID: uid), flow: idvFlow, input: ["user_id": .string(uid), "idv_workflow": .integer(user.idvWorkflow)]),
                              bound)
        }
        return askSetPassword(userID: uid, bound)
    }

    public func resume(_ state: State, child: String, result: FlowResult, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        guard case let .idv(uid) = state else { throw IDVError(.internalError, "auth flow resumed in step \(state)") }
        if result.outcome == .completed {
            return askSetPassword(userID: uid, [Self.audit("activation.idv_completed", uid, ["flow": .string(child)])])
        }
        var effects = [Self.audit("activation.idv_ended", uid, ["flow": .string(child), "outcome": .string(result.outcome.rawValue),
                                                                "error_code": .integer(result.errorCode)])]
        // IDV ended without success (cancel, attempts exhausted, expiry): release the code, which
        // stays usable under its own wrong-code counter and expiry.
        if var code = facts.activationCode, code.usedAt == nil, code.boundSessionID == facts.session.sessionID {
            code.boundSessionID = nil
            code.boundUntil = nil
            effects += [.saveActivationCode(code), Self.audit("activation.code_released", uid)]
        }
        let err = IDVErrorCode(rawValue: result.errorCode).map { IDVError($0) } ?? IDVError(.idvCancelledByUser)
        return askUser(error: err, effects)
    }

    // MARK: getPassword

    func answerSetPassword(_ pw: String, userID uid: String, evidence: Evidence, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        if let why = PasswordPolicy.violation(pw, userID: uid, minLength: env.config.passwordMinLength) {
            return askSetPassword(userID: uid, error: IDVError(.passwordPolicy, why))
        }
        guard var user = facts.user, user.state == .pendingActivation else {
            return askUser(error: IDVError(.userNotFound, "The user is no longer waiting for activation"))
        }
        // Activation completes: consume the code this session holds (and only if it still holds it).
        guard var code = facts.activationCode, code.usedAt == nil, code.boundSessionID == facts.session.sessionID else {
            return askUser(error: IDVError(.activationCodeExpired, "The activation code is no longer held by this session; enter it again"))
        }
        guard let hash = evidence.passwordHash else { throw IDVError(.internalError, "the new password was not hashed") }
        code.usedAt = facts.now
        code.boundSessionID = nil
        code.boundUntil = nil
        user.passwordHash = hash
        user.state = .active
        user.failedPasswordAttempts = 0
        user.updatedAt = facts.now
        var effects: [Effect] = [.saveActivationCode(code), .saveUser(user), Self.audit("user.activated", uid)]
        if var d = facts.device {
            d.userID = uid
            d.ldaEnabled = false
            effects.append(.saveDevice(d))
            return .ask(.ldaConsent(userID: uid), ChallengeSpec(name: WireName.getUserConsentForLDA, attemptsLeft: Self.unlimited, userID: uid,
                                                                payload: ["nonce": .string(env.nonce())]), effects)
        }
        return Self.login(user, facts: facts, effects)
    }

    func answerVerifyPassword(evidence: Evidence, facts: Facts, env: FlowEnv) -> Transition<State> {
        guard var user = facts.user, user.state != .pendingActivation else { return askUser(error: IDVError(.userNotFound)) }
        let limit = env.config.passwordAttempts
        if user.state == .locked { return askUser(error: IDVError(.userLocked)) }
        guard evidence.passwordMatches == true else {
            user.failedPasswordAttempts += 1
            user.updatedAt = facts.now
            if user.failedPasswordAttempts >= limit {
                user.state = .locked
                user.lockedAt = facts.now
                return askUser(error: IDVError(.userLocked, "Too many wrong passwords; the user is locked"),
                               [.saveUser(user), Self.audit("user.locked", user.userID, ["failed_attempts": .integer(user.failedPasswordAttempts)]),
                                .countOutcome(flow: name, outcome: .locked)])
            }
            return askVerifyPassword(user, limit: limit, error: IDVError(.invalidPassword),
                                     [.saveUser(user), Self.audit("password.wrong", user.userID, ["attempts_left": .integer(limit - user.failedPasswordAttempts)])])
        }
        var effects: [Effect] = []
        if user.failedPasswordAttempts != 0 {
            user.failedPasswordAttempts = 0
            user.updatedAt = facts.now
            effects.append(.saveUser(user))
        }
        return Self.login(user, facts: facts, effects)
    }
}
