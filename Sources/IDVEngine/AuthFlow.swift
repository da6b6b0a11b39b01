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
public struct AuthFlow: Flow {
    public static let name = "auth"
    public var name: String { Self.name }
    public init() {}

    enum Step: String { case user, activationCode = "activation_code", idv, setPassword = "set_password", verifyPassword = "verify_password", lda, ldaConsent = "lda_consent" }

    static let unlimited = -1
    static func status(_ code: Int, _ message: String) -> RequestStatus { RequestStatus(statusCode: code, statusMessage: message) }

    /// `getUser`, optionally carrying why the previous attempt ended.
    func askUser(_ ctx: FlowContext, frame: inout FlowFrame, error: IDVError? = nil) -> FlowStep {
        frame.step = Step.user.rawValue
        frame.data = [:]
        ctx.setUser(nil)
        return .ask(ChallengeSpec(name: WireName.getUser, attemptsLeft: Self.unlimited, payload: .emptyObject, error: error,
                                  status: error.map { Self.status(RequestStatus.unableToProcess, $0.errorString) }))
    }

    public func start(_ ctx: FlowContext, frame: inout FlowFrame, input: JSONValue) throws -> FlowStep {
        askUser(ctx, frame: &frame)
    }

    static func requiredString(_ answer: WireAnswer, _ key: String, max: Int) throws -> String {
        guard let v = answer.payload[key]?.stringValue else {
            throw IDVError(.malformedRequest, "payload.\(key) (string) is required")
        }
        guard !v.isEmpty, v.count <= max else { throw IDVError(.malformedRequest, "payload.\(key) must have 1–\(max) characters") }
        return v
    }

    func userID(_ frame: FlowFrame) throws -> String {
        guard let u = frame.data["user_id"]?.stringValue else { throw IDVError(.internalError, "auth flow lost its user") }
        return u
    }

    public func answer(_ ctx: FlowContext, frame: inout FlowFrame, challenge: WireChallenge, answer: WireAnswer) throws -> FlowStep {
        switch Step(rawValue: frame.step) {
        case .user: return try answerUser(ctx, frame: &frame, answer: answer)
        case .activationCode: return try answerActivationCode(ctx, frame: &frame, answer: answer)
        case .setPassword: return try answerSetPassword(ctx, frame: &frame, answer: answer)
        case .verifyPassword: return try answerVerifyPassword(ctx, frame: &frame, answer: answer)
        case .lda: return try answerLDA(ctx, frame: &frame, challenge: challenge, answer: answer)
        case .ldaConsent: return try answerLDAConsent(ctx, frame: &frame, challenge: challenge, answer: answer)
        case .idv, .none: throw IDVError(.internalError, "auth flow in unexpected step")
        }
    }

    // MARK: getUser

    func answerUser(_ ctx: FlowContext, frame: inout FlowFrame, answer: WireAnswer) throws -> FlowStep {
        let id = try Self.requiredString(answer, "user_id", max: 128).trimmingCharacters(in: .whitespaces)
        guard let user = try ctx.store.user(id) else { return askUser(ctx, frame: &frame, error: IDVError(.userNotFound)) }
        switch user.state {
        case .locked:
            return askUser(ctx, frame: &frame, error: IDVError(.userLocked, "The user is locked after too many failed attempts; contact support"))
        case .pendingActivation:
            guard let code = try ctx.store.activationCode(userID: id), code.usedAt == nil, code.attemptsLeft > 0, code.expiresAt > ctx.now else {
                return askUser(ctx, frame: &frame, error: IDVError(.activationCodeExpired, "The activation code has expired or was used; ask for a new one"))
            }
            if user.activationRequiresIDV && ctx.registry.activationIDV[user.idvWorkflow] == nil {
                return askUser(ctx, frame: &frame, error: IDVError(.workflowUnavailable,
                    "Activation of this user needs IDV workflow \(user.idvWorkflow), which this server does not offer"))
            }
            ctx.setUser(id)
            frame.data = ["user_id": .string(id)]
            frame.step = Step.activationCode.rawValue
            return .ask(ChallengeSpec(name: WireName.getActivationCode, attemptsLeft: code.attemptsLeft, userID: id))
        case .active:
            ctx.setUser(id)
            frame.data = ["user_id": .string(id)]
            if let did = ctx.session.deviceID, let d = try ctx.store.device(did), d.userID == id, d.ldaEnabled {
                return askLDA(ctx, frame: &frame, userID: id)
            }
            return askVerifyPassword(user, limit: ctx.config.passwordAttempts, frame: &frame)
        }
    }

    func askVerifyPassword(_ user: UserRecord, limit: Int, frame: inout FlowFrame, error: IDVError? = nil) -> FlowStep {
        frame.step = Step.verifyPassword.rawValue
        return .ask(ChallengeSpec(name: WireName.getPassword, mode: ChallengeOpMode.verify.rawValue,
                                  attemptsLeft: max(0, limit - user.failedPasswordAttempts), userID: user.userID,
                                  error: error, status: error.map { Self.status(RequestStatus.unableToProcess, $0.errorString) }
                                      ?? Self.status(RequestStatus.success, "Success")))
    }

    // MARK: getActivationCode

    func answerActivationCode(_ ctx: FlowContext, frame: inout FlowFrame, answer: WireAnswer) throws -> FlowStep {
        let typed = try Self.requiredString(answer, "activation_code", max: 64)
        let uid = try userID(frame)
        guard var code = try ctx.store.activationCode(userID: uid), code.usedAt == nil, code.expiresAt > ctx.now, code.attemptsLeft > 0 else {
            return askUser(ctx, frame: &frame, error: IDVError(.activationCodeExpired, "The activation code has expired or was used; ask for a new one"))
        }
        guard ActivationCodes.matches(typed, record: code, crypto: ctx.crypto) else {
            code.attemptsLeft -= 1
            try ctx.store.saveActivationCode(code)
            if code.attemptsLeft <= 0 {
                try ctx.audit("activation.code_exhausted", userID: uid)
                ctx.countOutcome(flow: name, outcome: "activation_attempts_exhausted")
                return askUser(ctx, frame: &frame, error: IDVError(.attemptsExhausted, "No activation-code attempts left; ask for a new code"))
            }
            try ctx.audit("activation.code_wrong", userID: uid, ["attempts_left": .integer(code.attemptsLeft)])
            return .ask(ChallengeSpec(name: WireName.getActivationCode, attemptsLeft: code.attemptsLeft, userID: uid,
                                      error: IDVError(.invalidActivationCode),
                                      status: Self.status(RequestStatus.unableToProcess, IDVErrorCode.invalidActivationCode.message)))
        }
        // Right code. It is bound to this session (not consumed) until activation completes; a
        // live binding held by another session refuses it — never two sessions on one code.
        if let other = code.boundSessionID, other != ctx.session.sessionID, (code.boundUntil ?? 0) > ctx.now {
            try ctx.audit("activation.code_in_use", userID: uid)
            return askUser(ctx, frame: &frame, error: IDVError(.activationCodeExpired,
                "The activation code is in use in another session; finish or cancel it there, or wait until that session expires"))
        }
        code.boundSessionID = ctx.session.sessionID
        code.boundUntil = ctx.session.absoluteExpiresAt
        try ctx.store.saveActivationCode(code)
        try ctx.audit("activation.code_accepted", userID: uid)
        guard let user = try ctx.store.user(uid) else { return askUser(ctx, frame: &frame, error: IDVError(.userNotFound)) }
        if user.activationRequiresIDV {
            guard let idvFlow = ctx.registry.activationIDV[user.idvWorkflow] else {
                return askUser(ctx, frame: &frame, error: IDVError(.workflowUnavailable))
            }
            // The IDV hook: the workflow engine's flow runs here, on top of this one.
            frame.step = Step.idv.rawValue
            return .call(flow: idvFlow, input: ["user_id": .string(uid), "idv_workflow": .integer(user.idvWorkflow)])
        }
        return askSetPassword(frame: &frame, userID: uid)
    }

    func askSetPassword(frame: inout FlowFrame, userID: String, error: IDVError? = nil) -> FlowStep {
        frame.step = Step.setPassword.rawValue
        return .ask(ChallengeSpec(name: WireName.getPassword, mode: ChallengeOpMode.set.rawValue, attemptsLeft: Self.unlimited,
                                  userID: userID, error: error,
                                  status: error.map { Self.status(RequestStatus.unableToProcess, $0.errorString) } ?? Self.status(RequestStatus.success, "Success")))
    }

    public func resume(_ ctx: FlowContext, frame: inout FlowFrame, child: String, result: FlowResult) throws -> FlowStep {
        guard frame.step == Step.idv.rawValue else { throw IDVError(.internalError, "auth flow resumed in step \(frame.step)") }
        let uid = try userID(frame)
        if result.outcome == "completed" {
            try ctx.audit("activation.idv_completed", userID: uid, ["flow": .string(child)])
            return askSetPassword(frame: &frame, userID: uid)
        }
        try ctx.audit("activation.idv_ended", userID: uid, ["flow": .string(child), "outcome": .string(result.outcome), "error_code": .integer(result.errorCode)])
        // IDV ended without success (cancel, attempts exhausted, expiry): release the code, which
        // stays usable under its own wrong-code counter and expiry.
        if var code = try ctx.store.activationCode(userID: uid), code.usedAt == nil, code.boundSessionID == ctx.session.sessionID {
            code.boundSessionID = nil
            code.boundUntil = nil
            try ctx.store.saveActivationCode(code)
            try ctx.audit("activation.code_released", userID: uid)
        }
        let err = IDVErrorCode(rawValue: result.errorCode).map { IDVError($0) } ?? IDVError(.idvCancelledByUser)
        return askUser(ctx, frame: &frame, error: err)
    }

    // MARK: getPassword

    /// Argon2id (hashing a new password, verifying one) outside the store transaction.
    public func prepare(_ ctx: FlowContext, frame: FlowFrame, challenge: WireChallenge, answer: WireAnswer) {
        guard let pw = answer.payload["password"]?.stringValue, pw.utf8.count <= 1024, let uid = frame.data["user_id"]?.stringValue else { return }
        switch Step(rawValue: frame.step) {
        case .setPassword:
            guard PasswordPolicy.violation(pw, userID: uid, minLength: ctx.config.passwordMinLength) == nil else { return }
            _ = try? ctx.precomputed("argon2-hash") { try ctx.crypto.hashPassword(pw, parameters: ctx.config.argon2) }
        case .verifyPassword:
            guard let h = (try? ctx.store.user(uid))?.passwordHash else { return }
            _ = try? ctx.precomputed("argon2-verify:" + h) { ctx.crypto.verifyPassword(pw, hash: h) }
        default:
            return
        }
    }

    func answerSetPassword(_ ctx: FlowContext, frame: inout FlowFrame, answer: WireAnswer) throws -> FlowStep {
        let pw = try Self.requiredString(answer, "password", max: 1024)
        let uid = try userID(frame)
        if let why = PasswordPolicy.violation(pw, userID: uid, minLength: ctx.config.passwordMinLength) {
            return askSetPassword(frame: &frame, userID: uid, error: IDVError(.passwordPolicy, why))
        }
        guard var user = try ctx.store.user(uid), user.state == .pendingActivation else {
            return askUser(ctx, frame: &frame, error: IDVError(.userNotFound, "The user is no longer waiting for activation"))
        }
        // Activation completes: consume the code this session holds (and only if it still holds it).
        guard var code = try ctx.store.activationCode(userID: uid), code.usedAt == nil, code.boundSessionID == ctx.session.sessionID else {
            return askUser(ctx, frame: &frame, error: IDVError(.activationCodeExpired, "The activation code is no longer held by this session; enter it again"))
        }
        code.usedAt = ctx.now
        code.boundSessionID = nil
        code.boundUntil = nil
        try ctx.store.saveActivationCode(code)
        user.passwordHash = try ctx.precomputed("argon2-hash") { try ctx.crypto.hashPassword(pw, parameters: ctx.config.argon2) }
        user.state = .active
        user.failedPasswordAttempts = 0
        user.updatedAt = ctx.now
        try ctx.store.saveUser(user)
        try ctx.audit("user.activated", userID: uid)
        if let did = ctx.session.deviceID, var d = try ctx.store.device(did) {
            d.userID = uid
            d.ldaEnabled = false
            try ctx.store.saveDevice(d)
            frame.step = Step.ldaConsent.rawValue
            return .ask(ChallengeSpec(name: WireName.getUserConsentForLDA, attemptsLeft: Self.unlimited, userID: uid,
                                      payload: ["nonce": .string(Data(ctx.crypto.randomBytes(32)).base64EncodedString())]))
        }
        return .finish(FlowResult(outcome: "logged_in", event: try ctx.login(user: user)))
    }

    func answerVerifyPassword(_ ctx: FlowContext, frame: inout FlowFrame, answer: WireAnswer) throws -> FlowStep {
        let pw = try Self.requiredString(answer, "password", max: 1024)
        let uid = try userID(frame)
        guard var user = try ctx.store.user(uid), user.state != .pendingActivation else {
            return askUser(ctx, frame: &frame, error: IDVError(.userNotFound))
        }
        let limit = ctx.config.passwordAttempts
        if user.state == .locked {
            return askUser(ctx, frame: &frame, error: IDVError(.userLocked))
        }
        let ok = try user.passwordHash.map { h in try ctx.precomputed("argon2-verify:" + h) { ctx.crypto.verifyPassword(pw, hash: h) } } ?? false
        if !ok {
            user.failedPasswordAttempts += 1
            user.updatedAt = ctx.now
            if user.failedPasswordAttempts >= limit {
                user.state = .locked
                user.lockedAt = ctx.now
                try ctx.store.saveUser(user)
                try ctx.audit("user.locked", userID: uid, ["failed_attempts": .integer(user.failedPasswordAttempts)])
                ctx.countOutcome(flow: name, outcome: "locked")
                return askUser(ctx, frame: &frame, error: IDVError(.userLocked, "Too many wrong passwords; the user is locked"))
            }
            try ctx.store.saveUser(user)
            try ctx.audit("password.wrong", userID: uid, ["attempts_left": .integer(limit - user.failedPasswordAttempts)])
            return askVerifyPassword(user, limit: limit, frame: &frame, error: IDVError(.invalidPassword))
        }
        if user.failedPasswordAttempts != 0 {
            user.failedPasswordAttempts = 0
            user.updatedAt = ctx.now
            try ctx.store.saveUser(user)
        }
        return .finish(FlowResult(outcome: "logged_in", event: try ctx.login(user: user)))
    }

    // MARK: LDA

    func askLDA(_ ctx: FlowContext, frame: inout FlowFrame, userID: String, error: IDVError? = nil) -> FlowStep {
        frame.step = Step.lda.rawValue
        return .ask(ChallengeSpec(name: WireName.getDeviceSignature, attemptsLeft: 1, userID: userID,
                                  payload: ["nonce": .string(Data(ctx.crypto.randomBytes(32)).base64EncodedString())], error: error))
    }

    static func signatureValid(_ ctx: FlowContext, challenge: WireChallenge, signatureB64: String) throws -> Bool {
        guard let did = ctx.session.deviceID, let d = try ctx.store.device(did),
              let key = Data(base64Encoded: d.publicKey), let sig = Data(base64Encoded: signatureB64),
              let nonce = challenge.payload["nonce"]?.stringValue else { return false }
        let msg = WireLDA.message(challengeID: challenge.challengeID, nonce: nonce)
        return ctx.crypto.verifyEd25519(signature: Array(sig), message: Array(msg), publicKey: Array(key))
    }

    func answerLDA(_ ctx: FlowContext, frame: inout FlowFrame, challenge: WireChallenge, answer: WireAnswer) throws -> FlowStep {
        let uid = try userID(frame)
        guard let user = try ctx.store.user(uid) else { return askUser(ctx, frame: &frame, error: IDVError(.userNotFound)) }
        if answer.payload["fallback"]?.stringValue == "password" {
            return askVerifyPassword(user, limit: ctx.config.passwordAttempts, frame: &frame)
        }
        guard let sig = answer.payload["signature"]?.stringValue else {
            throw IDVError(.malformedRequest, "payload.signature (base64) or payload.fallback = \"password\" is required")
        }
        guard user.state == .active else { return askUser(ctx, frame: &frame, error: IDVError(.userLocked)) }
        guard try Self.signatureValid(ctx, challenge: challenge, signatureB64: sig) else {
            try ctx.audit("lda.signature_invalid", userID: uid)
            return askVerifyPassword(user, limit: ctx.config.passwordAttempts, frame: &frame,
                                     error: IDVError(.deviceSignatureInvalid, "LDA failed; enter the password instead"))
        }
        return .finish(FlowResult(outcome: "logged_in", event: try ctx.login(user: user)))
    }

    func answerLDAConsent(_ ctx: FlowContext, frame: inout FlowFrame, challenge: WireChallenge, answer: WireAnswer) throws -> FlowStep {
        let uid = try userID(frame)
        guard let consent = answer.payload["consent"]?.boolValue else { throw IDVError(.malformedRequest, "payload.consent (boolean) is required") }
        let sig = answer.payload["signature"]?.stringValue
        if consent && sig == nil { throw IDVError(.malformedRequest, "payload.signature (base64) is required with consent") }
        guard let user = try ctx.store.user(uid) else { return askUser(ctx, frame: &frame, error: IDVError(.userNotFound)) }
        if consent, let sig {
            guard try Self.signatureValid(ctx, challenge: challenge, signatureB64: sig) else {
                return .ask(ChallengeSpec(name: WireName.getUserConsentForLDA, attemptsLeft: Self.unlimited, userID: uid,
                                          payload: ["nonce": .string(Data(ctx.crypto.randomBytes(32)).base64EncodedString())],
                                          error: IDVError(.deviceSignatureInvalid)))
            }
            if let did = ctx.session.deviceID, var d = try ctx.store.device(did) {
                d.ldaEnabled = true
                try ctx.store.saveDevice(d)
            }
            try ctx.audit("lda.enabled", userID: uid, ["device_id": ctx.session.deviceID.map { .string($0) } ?? .null])
        }
        return .finish(FlowResult(outcome: "logged_in", event: try ctx.login(user: user)))
    }
}
