import Foundation

// The OpenIDV wire protocol between the SDK (IDVKit) and the server (idvd): request and response
// envelopes, Codable, snake_case on the wire. The full protocol (routes, challenge sequence, error
// codes, extension points) is in docs/PROTOCOL.md; the HTTP API in openapi.json.
//
// Every server answer is a ``WireEnvelope``: EITHER the next ``WireChallenge`` the client must
// answer, OR a terminal/notification ``WireEvent`` — plus an ``IDVError`` when the request was
// REFUSED (a refusal changes nothing on the server). The client answers the current challenge with a
// ``WireAnswer`` naming its `challenge_id` and challenge name.

/// Challenge and event names used on the wire. They are the seeds' callback names; flows added
/// later (the IDV workflow engine) use the seeds' names too (`getIDVConfirmDocumentDetails`, …).
public enum WireName {
    // MARK: Challenges of the core (authentication) flow
    /// Asks for the user name. Answer payload: `{"user_id": String}`.
    public static let getUser = "getUser"
    /// Asks for the one-time activation code. Answer payload: `{"activation_code": String}`.
    public static let getActivationCode = "getActivationCode"
    /// Asks for the password; `challenge_mode` 0 verify, 1 set (activation), 6/7 biometric
    /// opt-in/opt-out re-authentication. Answer payload: `{"password": String}`.
    public static let getPassword = "getPassword"
    /// Asks whether to enable LDA on this device. Challenge payload `{"nonce": base64}`; answer
    /// `{"consent": Bool, "signature": base64?}` — with consent the signature over
    /// ``WireLDA/message(challengeID:nonce:)`` by the device key is required.
    public static let getUserConsentForLDA = "getUserConsentForLDA"
    /// LDA: asks the device to sign a nonce with its Ed25519 key after local (biometric/PIN) unlock.
    /// Challenge payload `{"nonce": base64}`; answer `{"signature": base64}` or
    /// `{"fallback": "password"}` for the password instead.
    public static let getDeviceSignature = "getDeviceSignature"

    // MARK: Challenges of the IDV flows (seeds 000–004; added by the workflow engine)
    public static let getIDVDocumentScanProcessStartConfirmation = "getIDVDocumentScanProcessStartConfirmation"
    public static let getIDVConfirmDocumentDetails = "getIDVConfirmDocumentDetails"
    public static let getIDVSelfieProcessStartConfirmation = "getIDVSelfieProcessStartConfirmation"
    public static let getIDVSelfieConfirmation = "getIDVSelfieConfirmation"
    public static let getIDVBiometricOptInConsent = "getIDVBiometricOptInConsent"

    // MARK: Events
    /// Login (activation or returning user) succeeded. Payload `{"user_id", "device_id", "session_id"}`.
    public static let onUserLoggedIn = "onUserLoggedIn"
    /// The session was logged off (revoked).
    public static let onUserLoggedOff = "onUserLoggedOff"
    /// `resetAuthState` ended the flow in progress; the next challenge follows in the same envelope
    /// only for sessions that are not logged in (`getUser`).
    public static let onAuthStateReset = "onAuthStateReset"
}

/// The next question the server asks. The client must answer exactly this challenge (by
/// `challenge_id` and `name`) with a ``WireAnswer``.
public struct WireChallenge: Codable, Equatable, Sendable {
    /// Challenge name, e.g. `getPassword` (``WireName``).
    public var name: String
    /// A fresh random nonce (32 hex digits) for every challenge issued; an answer names it.
    public var challengeID: String
    /// `RDNAChallengeOpMode` raw value (``ChallengeOpMode``); 0 when the challenge has no mode.
    public var challengeMode: Int
    /// `RDNAIDVWorkflow` raw value (``IDVWorkflow``) when the challenge belongs to an IDV workflow.
    public var idvWorkflow: Int?
    /// Attempts the client has left for this challenge (server configuration; seeds' `attemptsLeft`).
    public var attemptsLeft: Int
    /// The user the challenge is about, once known.
    public var userID: String?
    /// Challenge-specific data (generic JSON; shapes in docs/PROTOCOL.md and the payload types).
    public var payload: JSONValue
    /// The verdict on the previous answer when the server asks again (e.g. 1014 wrong password with
    /// one attempt fewer). `nil` or code 0 on a first ask. Unlike ``WireEnvelope/error`` this is not
    /// a refusal: the previous answer was judged and counted.
    public var error: IDVError?
    /// The seeds' `RDNAChallengeResponse.status` (100 when the previous answer was fine).
    public var status: RequestStatus?

    enum CodingKeys: String, CodingKey {
        case name, challengeID = "challenge_id", challengeMode = "challenge_mode", idvWorkflow = "idv_workflow"
        case attemptsLeft = "attempts_left", userID = "user_id", payload, error, status
    }

    public init(name: String, challengeID: String, challengeMode: Int = 0, idvWorkflow: Int? = nil,
                attemptsLeft: Int, userID: String? = nil, payload: JSONValue = .emptyObject,
                error: IDVError? = nil, status: RequestStatus? = nil) {
        self.name = name
        self.challengeID = challengeID
        self.challengeMode = challengeMode
        self.idvWorkflow = idvWorkflow
        self.attemptsLeft = attemptsLeft
        self.userID = userID
        self.payload = payload
        self.error = error
        self.status = status
    }
}

/// A terminal or notification event (the seeds' `on…` callbacks), e.g. `onUserLoggedIn`.
public struct WireEvent: Codable, Equatable, Sendable {
    public var name: String
    public var userID: String?
    /// The seeds' `RDNAError` of the callback (0 on success; 146/240 on cancel).
    public var error: IDVError
    /// The seeds' `RDNARequestStatus` of the callback.
    public var status: RequestStatus
    public var payload: JSONValue

    enum CodingKeys: String, CodingKey { case name, userID = "user_id", error, status, payload }

    public init(name: String, userID: String? = nil, error: IDVError = .none,
                status: RequestStatus = RequestStatus(statusCode: RequestStatus.success, statusMessage: "Success"),
                payload: JSONValue = .emptyObject) {
        self.name = name
        self.userID = userID
        self.error = error
        self.status = status
        self.payload = payload
    }
}

/// What the server says about the caller's session.
public struct WireSession: Codable, Equatable, Sendable {
    /// The bearer token — present ONLY in the answer that created the session. Send it as
    /// `Authorization: Bearer <token>` on every later request. Never logged; hashed at rest.
    public var token: String?
    /// A public, non-secret session identifier (for support and logs).
    public var sessionID: String
    public var userID: String?
    public var deviceID: String?
    public var loggedIn: Bool
    /// Unix seconds after which an idle session expires (moves with every request).
    public var idleExpiresAt: Int
    /// Unix seconds after which the session expires whatever happens.
    public var absoluteExpiresAt: Int

    enum CodingKeys: String, CodingKey {
        case token, sessionID = "session_id", userID = "user_id", deviceID = "device_id", loggedIn = "logged_in"
        case idleExpiresAt = "idle_expires_at", absoluteExpiresAt = "absolute_expires_at"
    }

    public init(token: String? = nil, sessionID: String, userID: String? = nil, deviceID: String? = nil,
                loggedIn: Bool, idleExpiresAt: Int, absoluteExpiresAt: Int) {
        self.token = token
        self.sessionID = sessionID
        self.userID = userID
        self.deviceID = deviceID
        self.loggedIn = loggedIn
        self.idleExpiresAt = idleExpiresAt
        self.absoluteExpiresAt = absoluteExpiresAt
    }
}

/// Every JSON answer of the session routes. Exactly one of `challenge` / `event` is set on success
/// (both nil only for a logged-in session with no flow in progress); `error` (code ≠ 0) means the
/// request was refused and NOTHING changed on the server.
public struct WireEnvelope: Codable, Equatable, Sendable {
    /// The request id (also in the `X-Request-Id` header and the server's log line).
    public var requestID: String
    public var session: WireSession?
    public var challenge: WireChallenge?
    public var event: WireEvent?
    public var error: IDVError?
    /// The terminal event of a post-login flow this request ENDED before doing what it asked: a
    /// flow the app left open (e.g. a KYC whose selfie confirmation it closed without an SDK call,
    /// seed 000 §1.5) when it started another with `POST /v1/flows/{name}`. The client delivers it
    /// first, then ``event`` / ``challenge`` (issue #15). Absent otherwise.
    public var ended: WireEvent?

    enum CodingKeys: String, CodingKey { case requestID = "request_id", session, challenge, event, error, ended }

    public init(requestID: String, session: WireSession? = nil, challenge: WireChallenge? = nil,
                event: WireEvent? = nil, error: IDVError? = nil, ended: WireEvent? = nil) {
        self.requestID = requestID
        self.session = session
        self.challenge = challenge
        self.event = event
        self.error = error
        self.ended = ended
    }

    /// True when the request was refused (``error`` with a non-zero code).
    public var isRefusal: Bool { (error?.longErrorCode ?? 0) != 0 }
}

/// The client's answer to the current challenge (`POST /v1/session/answer`).
public struct WireAnswer: Codable, Equatable, Sendable {
    /// The `challenge_id` of the challenge being answered.
    public var challengeID: String
    /// The challenge name being answered (must equal the current challenge's name).
    public var challenge: String
    /// Optional echo of the challenge mode; when present it must equal the challenge's.
    public var challengeMode: Int?
    public var payload: JSONValue

    enum CodingKeys: String, CodingKey { case challengeID = "challenge_id", challenge, challengeMode = "challenge_mode", payload }

    public init(challengeID: String, challenge: String, challengeMode: Int? = nil, payload: JSONValue = .emptyObject) {
        self.challengeID = challengeID
        self.challenge = challenge
        self.challengeMode = challengeMode
        self.payload = payload
    }

    /// An answer to `challenge` (copies its id, name and mode).
    public init(to challenge: WireChallenge, payload: JSONValue) {
        self.init(challengeID: challenge.challengeID, challenge: challenge.name,
                  challengeMode: challenge.challengeMode, payload: payload)
    }
}

/// `POST /v1/devices`: registers an SDK install's Ed25519 public key.
public struct WireDeviceRegistration: Codable, Equatable, Sendable {
    /// Raw 32-byte Ed25519 public key, standard base64.
    public var publicKey: String
    /// A label for the device (optional, shown to admins; not personal data).
    public var label: String?
    enum CodingKeys: String, CodingKey { case publicKey = "public_key", label }
    public init(publicKey: String, label: String? = nil) { self.publicKey = publicKey; self.label = label }
    /// An optional field is absent or a string: an explicit `null` is refused (openapi.json says string).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        publicKey = try c.decode(String.self, forKey: .publicKey)
        label = try c.decodeAbsentOrValue(String.self, forKey: .label)
    }
}

/// Answer of `POST /v1/devices`.
public struct WireDevice: Codable, Equatable, Sendable {
    public var deviceID: String
    enum CodingKeys: String, CodingKey { case deviceID = "device_id" }
    public init(deviceID: String) { self.deviceID = deviceID }
}

/// `POST /v1/sessions`: starts a session (the SDK's `initialize`).
public struct WireSessionStart: Codable, Equatable, Sendable {
    /// A device registered with `POST /v1/devices` (optional; LDA needs it).
    public var deviceID: String?
    public var sdkVersion: String?
    enum CodingKeys: String, CodingKey { case deviceID = "device_id", sdkVersion = "sdk_version" }
    public init(deviceID: String? = nil, sdkVersion: String? = nil) { self.deviceID = deviceID; self.sdkVersion = sdkVersion }
    /// Each field is absent or a string: an explicit `null` is refused (openapi.json says string).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        deviceID = try c.decodeAbsentOrValue(String.self, forKey: .deviceID)
        sdkVersion = try c.decodeAbsentOrValue(String.self, forKey: .sdkVersion)
    }
}

extension KeyedDecodingContainer {
    /// nil when `key` is absent; its value otherwise — `null` throws `DecodingError.valueNotFound`
    /// (unlike `decodeIfPresent`, which reads `null` as absent).
    func decodeAbsentOrValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        contains(key) ? try decode(T.self, forKey: key) : nil
    }
}

/// `POST /v1/flows/{name}`: starts a post-login flow on a logged-in session (e.g. KYC with a reason).
///
/// Shape: `{"payload": {…}}`. `payload` may be left out (or null) when decoding — `{}`, like an
/// empty body, starts the flow with an empty object — and is always written when encoding.
public struct WireFlowStart: Codable, Equatable, Sendable {
    public var payload: JSONValue
    enum CodingKeys: String, CodingKey { case payload }
    public init(payload: JSONValue = .emptyObject) { self.payload = payload }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        payload = try c.decodeIfPresent(JSONValue.self, forKey: .payload) ?? .emptyObject
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(payload, forKey: .payload)
    }
}

/// Local device authentication (LDA) signatures: what exactly the device signs.
public enum WireLDA {
    /// The bytes a device signs with its Ed25519 key to answer `getDeviceSignature` or to enable LDA
    /// in `getUserConsentForLDA`: UTF-8 of `"OpenIDV-LDA-v1:" + challenge_id + ":" + nonce` (nonce as
    /// the base64 text the server sent). Binding the challenge id makes a signature single-use.
    public static func message(challengeID: String, nonce: String) -> Data {
        Data("OpenIDV-LDA-v1:\(challengeID):\(nonce)".utf8)
    }
}
