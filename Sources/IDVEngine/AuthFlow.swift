import Foundation
import IDVCore

/// Password policy (documented in docs/PROTOCOL.md §Passwords): at least `password.min_length`
/// characters (default 8) and at most 128 characters and 512 bytes of UTF-8; at least one letter
/// and one digit; no control characters; not equal to the user id (case-insensitive). Any password
/// answer over ``maxAnswerBytes`` bytes is refused (1001) before anything is hashed.
public enum PasswordPolicy {
    /// Largest new password, UTF-8 bytes.
    public static let maxBytes = 512
    /// Largest password answer accepted at all (verify, set, re-authenticate), characters and UTF-8 bytes.
    public static let maxAnswerBytes = 1024

    /// nil when `password` meets the policy, else the reason (safe to show; never contains the password).
    public static func violation(_ password: String, userID: String, minLength: Int) -> String? {
        let n = password.count
        if n < minLength { return "The password must have at least \(minLength) characters" }
        if n > 128 { return "The password must have at most 128 characters" }
        if password.utf8.count > maxBytes { return "The password must have at most \(maxBytes) bytes (UTF-8)" }
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

    /// A new code and its record (hash, salt, expiry, and `attempts_left` = the identity-verification
    /// runs it may start, `activation.idv_runs`).
    public static func issue(userID: String, now: Int, settings: EngineSettings, crypto: any EngineCrypto) -> (code: String, record: ActivationCodeRecord) {
        let raw = crypto.randomBytes(10).map { alphabet[Int($0) & 31] }
        let code = String(raw[0..<5]) + "-" + String(raw[5..<10])
        let salt = crypto.randomID()
        let rec = ActivationCodeRecord(userID: userID, codeHash: hash(code, salt: salt, crypto: crypto), salt: salt,
                                       expiresAt: now + settings.activationCodeTTLSeconds,
                                       attemptsLeft: settings.limits.activationIDVRuns, createdAt: now)
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

    // MARK: Typed answers (IDVCore Answers.swift)

    /// `value` (the answer's `key`) when it has 1…`max` characters and at most `max` UTF-8 bytes; 1001 otherwise.
    static func bounded(_ value: String, _ key: String, max: Int) throws -> String {
        guard !value.isEmpty, value.count <= max else { throw IDVError(.malformedRequest, "payload.\(key) must have 1–\(max) characters") }
        guard value.utf8.count <= max else { throw IDVError(.malformedRequest, "payload.\(key) must have at most \(max) bytes (UTF-8)") }
        return value
    }

    public func parse(_ state: State, answer a: WireAnswer, challenge: PendingChallenge, settings: EngineSettings) throws -> Input {
        switch state {
        case .user:
            return .userID(try Self.bounded(answer(a, as: UserAnswer.self).userID, "user_id", max: 128).trimmingCharacters(in: .whitespaces))
        case .activationCode:
            return .activationCode(try Self.bounded(answer(a, as: ActivationCodeAnswer.self).activationCode, "activation_code", max: 64))
        case .setPassword, .verifyPassword:
            guard let pw = try answer(a, as: PasswordAnswer.self).password else { throw IDVError(.malformedRequest, "payload.password (string) is required") }
            return .password(try Self.bounded(pw, "password", max: PasswordPolicy.maxAnswerBytes))
        case .lda:
            let lda = try answer(a, as: DeviceSignatureAnswer.self)
            if lda.fallsBackToPassword { return .ldaFallback }
            guard let sig = lda.signature else {
                throw IDVError(.malformedRequest, "payload.signature (base64) or payload.fallback = \"password\" is required")
            }
            return .ldaSignature(sig, challengeID: challenge.challengeID, nonce: challenge.nonce)
        case .ldaConsent:
            let consent = try answer(a, as: LDAConsentAnswer.self)
            if consent.consent && consent.signature == nil { throw IDVError(.malformedRequest, "payload.signature (base64) is required with consent") }
            return .ldaConsent(consent.consent, signature: consent.signature, challengeID: challenge.challengeID, nonce: challenge.nonce)
        case .idv: throw IDVError(.internalError, "auth flow in unexpected step")
        }
    }

    public func subject(_ state: State, input: Input?) -> String? {
        if case .user = state, case let .userID(id)? = input { return id }
        return state.userID
    }

    public func startSubject(_ input: JSONValue, session: SessionFacts) -> String? { nil }

    /// Passwords and activation codes go past the engine's abuse limits first (1111 while the client backs off).
    public func credential(_ state: State, input: Input) -> (kind: CredentialKind, userID: String)? {
        switch (state, input) {
        case let (.verifyPassword(uid), .password): return (.password, uid)
        case let (.activationCode(uid), .activationCode): return (.activationCode, uid)
        case let (.lda(uid), .ldaSignature): return (.deviceSignature, uid)
        default: return nil
        }
    }

    /// Argon2id outside the transaction: hash a new password that meets the policy, or verify one.
    public func evidence(_ state: State, input: Input, settings: EngineSettings) -> EvidenceRequest {
        guard case let .password(pw) = input else { return .none }
        switch state {
        case let .setPassword(uid):
            return PasswordPolicy.violation(pw, userID: uid, minLength: settings.passwordMinLength) == nil ? .passwordHash(pw) : .none
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

    /// Wrong passwords left before this client backs off for `user`, or the user locks (whichever is first).
    static func passwordsLeft(_ user: UserRecord, clientFailures: Int, facts: Facts, env: FlowEnv) -> Int {
        max(0, min(env.settings.passwordAttempts - clientFailures, env.settings.limits.passwordLockThreshold - user.failedPasswordAttempts))
    }

    func askVerifyPassword(_ user: UserRecord, facts: Facts, env: FlowEnv, clientFailures: Int? = nil, error: IDVError? = nil,
                           _ effects: [Effect] = []) -> Transition<State> {
        .ask(.verifyPassword(userID: user.userID),
             ChallengeSpec(name: WireName.getPassword, mode: ChallengeOpMode.verify.rawValue,
                           attemptsLeft: Self.passwordsLeft(user, clientFailures: clientFailures ?? facts.client.passwordFailures, facts: facts, env: env),
                           userID: user.userID,
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
                                                 payload: env.ldaChallenge()), effects)
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
        case let (.activationCode(uid), .activationCode(typed)): return try answerActivationCode(typed, userID: uid, facts: facts, env: env)
        case let (.setPassword(uid), .password(pw)): return try answerSetPassword(pw, userID: uid, evidence: evidence, facts: facts, env: env)
        case (.verifyPassword, .password): return answerVerifyPassword(evidence: evidence, facts: facts, env: env)
        case (.lda, .ldaFallback):
            guard let user = facts.user else { return askUser(error: IDVError(.userNotFound)) }
            return askVerifyPassword(user, facts: facts, env: env)
        case let (.lda(uid), .ldaSignature(sig, cid, nonce)):
            guard let user = facts.user else { return askUser(error: IDVError(.userNotFound)) }
            if let refusal = Self.lockRefusal(user, facts: facts, env: env) { return askUser(error: refusal.error, refusal.effects) }
            guard user.state != .pendingActivation else { return askUser(error: IDVError(.userLocked)) }
            guard Self.signatureValid(sig, challengeID: cid, nonce: nonce, facts: facts, env: env) else {
                // Counted like a wrong password for this client (back-off, failure budget), not
                // against the user: the password asked next is the user's own lock-out path.
                return askVerifyPassword(user, facts: facts, env: env,
                                         error: IDVError(.deviceSignatureInvalid, "LDA failed; enter the password instead"),
                                         [Self.audit("lda.signature_invalid", uid), .credentialFailed(.deviceSignature, userID: uid)])
            }
            return Self.login(user, facts: facts, [.credentialSucceeded(.deviceSignature, userID: uid)])
        case let (.ldaConsent(uid), .ldaConsent(consent, sig, cid, nonce)):
            guard let user = facts.user else { return askUser(error: IDVError(.userNotFound)) }
            var effects: [Effect] = []
            if consent, let sig {
                guard Self.signatureValid(sig, challengeID: cid, nonce: nonce, facts: facts, env: env) else {
                    return .ask(state, ChallengeSpec(name: WireName.getUserConsentForLDA, attemptsLeft: Self.unlimited, userID: uid,
                                                     payload: env.ldaChallenge(), error: IDVError(.deviceSignatureInvalid)))
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
        if let refusal = Self.lockRefusal(user, facts: facts, env: env) { return askUser(error: refusal.error, refusal.effects) }
        switch user.state {
        case .pendingActivation:
            guard let code = facts.activationCode, code.usedAt == nil, code.expiresAt > facts.now else {
                return askUser(error: IDVError(.activationCodeExpired, "The activation code has expired or was used; ask for a new one"))
            }
            guard code.attemptsLeft > 0 || !user.activationRequiresIDV else { return askUser(error: IDVError(.activationRunsExhausted)) }
            if let until = facts.client.codeBlockedUntil, until > facts.now {
                return askUser(error: IDVError(.authThrottled, "Too many wrong activation codes from this device or network; "
                                               + PasswordLockout.retryText(until: until, now: facts.now)),
                               [.limitRefused(.authBackoff)])
            }
            if user.activationRequiresIDV && env.activationIDV[user.idvWorkflow] == nil {
                return askUser(error: IDVError(.workflowUnavailable,
                    "Activation of this user needs IDV workflow \(user.idvWorkflow), which this server does not offer"))
            }
            return .ask(.activationCode(userID: id), ChallengeSpec(name: WireName.getActivationCode, attemptsLeft: Self.codesLeft(code, user, facts: facts, env: env),
                                                                   userID: id),
                        [.setSessionUser(id)])
        case .active, .locked:
            if let d = facts.device, d.userID == id, d.ldaEnabled { return askLDA(userID: id, env: env, [.setSessionUser(id)]) }
            return askVerifyPassword(user, facts: facts, env: env, [.setSessionUser(id)])
        }
    }

    /// `attempts_left` of `getActivationCode`: the wrong codes this client may still send for the user
    /// before it backs off, and (users activating with IDV) the identity-verification runs the code may still start.
    static func codesLeft(_ code: ActivationCodeRecord, _ user: UserRecord, facts: Facts, env: FlowEnv, clientFailures: Int? = nil) -> Int {
        let typing = env.settings.activationCodeAttempts - (clientFailures ?? facts.client.codeFailures)
        return max(0, user.activationRequiresIDV ? min(typing, code.attemptsLeft) : typing)
    }

    /// The 1011 a locked user, or a client backing off for the user, gets instead of a password
    /// challenge, with its effects (a client's back-off is counted as an `auth_backoff` refusal; a
    /// locked user is the account's state, not a limit); nil when neither holds.
    static func lockRefusal(_ user: UserRecord, facts: Facts, env: FlowEnv) -> (error: IDVError, effects: [Effect])? {
        if let until = PasswordLockout.lockedUntil(user, env.settings.limits), until > facts.now {
            let when = until == Int.max ? "ask support to unlock it" : PasswordLockout.retryText(until: until, now: facts.now) + ", or ask support to unlock it"
            return (IDVError(.userLocked, "The user is locked after too many wrong passwords; " + when), [])
        }
        if user.state != .pendingActivation, let until = facts.client.passwordBlockedUntil, until > facts.now {
            return (IDVError(.userLocked, "Too many wrong passwords from this device or network; " + PasswordLockout.retryText(until: until, now: facts.now)),
                    [.limitRefused(.authBackoff)])
        }
        return nil
    }

    // MARK: getActivationCode

    func answerActivationCode(_ typed: String, userID uid: String, facts: Facts, env: FlowEnv) throws -> Transition<State> {
        guard var code = facts.activationCode, code.usedAt == nil, code.expiresAt > facts.now else {
            return askUser(error: IDVError(.activationCodeExpired, "The activation code has expired or was used; ask for a new one"))
        }
        guard let user = facts.user else { return askUser(error: IDVError(.userNotFound)) }
        guard ActivationCodes.matches(typed, record: code, crypto: env.crypto) else {
            // A wrong code never uses the code up (a stranger must not kill it): the client that sent
            // it backs off for this user after `activation.code_attempts` (docs/LIMITS.md).
            let failures = facts.client.codeFailures + 1
            let left = Self.codesLeft(code, user, facts: facts, env: env, clientFailures: failures)
            if failures >= env.settings.activationCodeAttempts {
                return askUser(error: IDVError(.authThrottled, "Too many wrong activation codes from this device or network; "
                                               + PasswordLockout.retryText(until: facts.now + facts.client.nextCodeBackoff, now: facts.now)),
                               [.credentialFailed(.activationCode, userID: uid),
                                Self.audit("activation.code_backoff", uid, ["backoff_seconds": .integer(facts.client.nextCodeBackoff)]),
                                .countOutcome(flow: name, outcome: .activationAttemptsExhausted)])
            }
            return .ask(.activationCode(userID: uid),
                        ChallengeSpec(name: WireName.getActivationCode, attemptsLeft: left, userID: uid,
                                      error: IDVError(.invalidActivationCode),
                                      status: Self.status(RequestStatus.unableToProcess, IDVErrorCode.invalidActivationCode.message)),
                        [.credentialFailed(.activationCode, userID: uid), Self.audit("activation.code_wrong", uid, ["attempts_left": .integer(left)])])
        }
        // Right code. It is bound to this session (not consumed) until activation completes; a
        // live binding held by another session refuses it — never two sessions on one code.
        if let other = code.boundSessionID, other != facts.session.sessionID, (code.boundUntil ?? 0) > facts.now {
            return askUser(error: IDVError(.activationCodeExpired,
                "The activation code is in use in another session; finish or cancel it there, or wait until that session expires"),
                           [Self.audit("activation.code_in_use", uid)])
        }
        if user.activationRequiresIDV {
            // Each identity-verification run the code starts uses one of its `activation.idv_runs`.
            guard code.attemptsLeft > 0 else {
                return askUser(error: IDVError(.activationRunsExhausted), [.credentialSucceeded(.activationCode, userID: uid),
                                                                           Self.audit("activation.idv_runs_exhausted", uid)])
            }
            guard env.activationIDV[user.idvWorkflow] != nil else { return askUser(error: IDVError(.workflowUnavailable)) }
            code.attemptsLeft -= 1
        }
        code.boundSessionID = facts.session.sessionID
        code.boundUntil = facts.session.absoluteExpiresAt
        let bound: [Effect] = [.saveActivationCode(code), .credentialSucceeded(.activationCode, userID: uid),
                               Self.audit("activation.code_accepted", uid, user.activationRequiresIDV ? ["idv_runs_left": .integer(code.attemptsLeft)] : [:])]
        if user.activationRequiresIDV {
            guard let idvFlow = env.activationIDV[user.idvWorkflow] else { return askUser(error: IDVError(.workflowUnavailable), bound) }
            // The IDV hook: the workflow engine's flow runs here, on top of this one.
            return Transition(.call(.idv(userID: uid), flow: idvFlow, input: try JSONValue(encoding: IDVFlowStartPayload(userID: uid, idvWorkflow: user.idvWorkflow))),
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
        // stays usable for the identity-verification runs it has left (`activation.idv_runs`) until it expires.
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
        if let why = PasswordPolicy.violation(pw, userID: uid, minLength: env.settings.passwordMinLength) {
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
                                                                payload: env.ldaChallenge()), effects)
        }
        return Self.login(user, facts: facts, effects)
    }

    func answerVerifyPassword(evidence: Evidence, facts: Facts, env: FlowEnv) -> Transition<State> {
        guard let user = facts.user, user.state != .pendingActivation else { return askUser(error: IDVError(.userNotFound)) }
        if let refusal = Self.lockRefusal(user, facts: facts, env: env) { return askUser(error: refusal.error, refusal.effects) }
        guard evidence.passwordMatches == true else {
            let wrong = Self.wrongPassword(user, facts: facts, env: env)
            if let refusal = wrong.refusal { return askUser(error: refusal, wrong.effects) }
            return askVerifyPassword(wrong.user, facts: facts, env: env, clientFailures: facts.client.passwordFailures + 1,
                                     error: IDVError(.invalidPassword), wrong.effects)
        }
        return Self.login(user, facts: facts, Self.rightPassword(user, facts: facts))
    }

    /// One wrong password for `user` from the request's client, on any path that checks one (login,
    /// the LDA fallback, opt-in/opt-out re-authentication): the user's count (locked temporarily at
    /// `password.lock_threshold`, ``PasswordLockout``) and the client's (it backs off for the user
    /// after `password.attempts`). `refusal`: the 1011 to answer when either holds now.
    static func wrongPassword(_ user: UserRecord, facts: Facts, env: FlowEnv) -> (user: UserRecord, refusal: IDVError?, effects: [Effect]) {
        let (u, locked) = PasswordLockout.failed(user, now: facts.now, env.settings.limits)
        var effects: [Effect] = [.saveUser(u), .credentialFailed(.password, userID: u.userID)]
        if locked {
            let until = PasswordLockout.lockedUntil(u, env.settings.limits) ?? facts.now
            effects += [audit("user.locked", u.userID, ["failed_attempts": .integer(u.failedPasswordAttempts), "locked_until": .integer(until)]),
                        .countOutcome(flow: FlowName.auth, outcome: .locked)]
            return (u, lockRefusal(u, facts: facts, env: env)?.error, effects)
        }
        let clientFailures = facts.client.passwordFailures + 1
        if clientFailures >= env.settings.passwordAttempts {
            let seconds = facts.client.nextPasswordBackoff
            effects += [audit("password.client_backoff", u.userID, ["failed_attempts": .integer(u.failedPasswordAttempts), "backoff_seconds": .integer(seconds)]),
                        .countOutcome(flow: FlowName.auth, outcome: .backedOff)]
            return (u, IDVError(.userLocked, "Too many wrong passwords from this device or network; "
                                + PasswordLockout.retryText(until: facts.now + seconds, now: facts.now)), effects)
        }
        effects.append(audit("password.wrong", u.userID, ["attempts_left": .integer(passwordsLeft(u, clientFailures: clientFailures, facts: facts, env: env))]))
        return (u, nil, effects)
    }

    /// A right password for `user`: the counts zeroed and a lock that had ended lifted (audited).
    static func rightPassword(_ user: UserRecord, facts: Facts) -> [Effect] {
        var effects: [Effect] = [.credentialSucceeded(.password, userID: user.userID)]
        if let u = PasswordLockout.succeeded(user, now: facts.now) {
            effects.insert(.saveUser(u), at: 0)
            if user.state == .locked { effects.append(audit("user.unlocked", user.userID, ["by": "lock_ended"])) }
        }
        return effects
    }
}
