import Foundation

// MARK: - onIDVCheckUserBiometricTemplateStatus (seed 001 §6.1, seed 004 §2.1)

/// The `idvResponse` JSON string of `onIDVCheckUserBiometricTemplateStatus` (seed 001 §6.1,
/// example L523–L530): whether the user has a stored biometric template.
///
/// Shape: `{ "status_code": 100, "status_message": "Success", "orchestration_use_case":
/// "RDNA_IDV_CHECK_TEMPLATE", "result": true, "attempts_left": 5, "user_id": "user123" }`.
public struct BiometricTemplateStatus: IDVPayload {
    /// `status_code`: same as `RDNARequestStatus.statusCode`: 100 template exists, 600 none,
    /// 400 / 500 unable to process / failed (seed 001 §2.3).
    public var statusCode: Int
    /// `status_message`: same as `RDNARequestStatus.statusMessage`.
    public var statusMessage: String
    /// `orchestration_use_case`: `RDNA_IDV_CHECK_TEMPLATE`.
    public var orchestrationUseCase: OrchestrationUseCase
    /// `result`: true if the template exists.
    public var result: Bool
    /// `attempts_left`: remaining server-biometric authentication attempts.
    public var attemptsLeft: Int
    /// `user_id`: the user the status is about.
    public var userID: String

    enum CodingKeys: String, CodingKey {
        case statusCode = "status_code"
        case statusMessage = "status_message"
        case orchestrationUseCase = "orchestration_use_case"
        case result
        case attemptsLeft = "attempts_left"
        case userID = "user_id"
    }

    public init(statusCode: Int, statusMessage: String, orchestrationUseCase: OrchestrationUseCase = .checkTemplate,
                result: Bool, attemptsLeft: Int, userID: String) {
        self.statusCode = statusCode
        self.statusMessage = statusMessage
        self.orchestrationUseCase = orchestrationUseCase
        self.result = result
        self.attemptsLeft = attemptsLeft
        self.userID = userID
    }

    /// The status as the callback's `RDNARequestStatus`.
    public var requestStatus: RequestStatus { RequestStatus(statusCode: statusCode, statusMessage: statusMessage) }
}

// MARK: - onIDVServerBiometricAuthenticationResult (seed 001 §6.2)

/// The `idvResponse` JSON string of `onIDVServerBiometricAuthenticationResult` (seed 001 §6.2,
/// example L567–L587, which the seed itself calls "partial"): the outcome of re-proving identity
/// with a selfie against the stored template (workflow 8, challenge mode 25).
///
/// Shape: `{ "video": {…}, "idv_audit_info": {…}, "purpose": "…", "attempts": 1, "user_id": "…",
/// "attempts_left": 4, "biometric_result": {"display_text": "MATCHED"} }`.
public struct ServerBiometricAuthenticationResult: IDVPayload {
    /// `video`: description of the captured selfie video (optional; the seed's example has it; our
    /// server sends `workflow_data` with the number of frames received, the capture's sanitised
    /// `meta_data` and `client_version` — never the frames).
    public var video: ServerBiometricVideo?
    /// `idv_audit_info`: the audit record of this authentication.
    public var idvAuditInfo: IDVAuditInfo
    /// `purpose`: the `reason` passed to `initiateIDVServerBiometricAuthentication`.
    public var purpose: String
    /// `attempts`: attempts used so far in this authentication (1 = first).
    public var attempts: Int
    /// `user_id`.
    public var userID: String
    /// `attempts_left`: attempts remaining before the server refuses (at 0 the flow ends).
    public var attemptsLeft: Int
    /// `biometric_result`: the verdict (`MATCHED` is the only success, seed 001 L968). Missing from the
    /// seed's partial example but read by all its code, so optional here; our server always sends it.
    public var biometricResult: BiometricResult?
    /// `face_matcher_response`: 1:1 score against the template, 0…1 (ours, optional; same shape as seed 002).
    public var faceMatcherResponse: FaceMatcherResponse?
    /// `analyze_liveness_response`: liveness score 0…100 (ours, optional; same shape as seed 002).
    public var analyzeLivenessResponse: AnalyzeLivenessResponse?

    enum CodingKeys: String, CodingKey {
        case video
        case idvAuditInfo = "idv_audit_info"
        case purpose, attempts
        case userID = "user_id"
        case attemptsLeft = "attempts_left"
        case biometricResult = "biometric_result"
        case faceMatcherResponse = "face_matcher_response"
        case analyzeLivenessResponse = "analyze_liveness_response"
    }

    public init(video: ServerBiometricVideo? = nil, idvAuditInfo: IDVAuditInfo, purpose: String, attempts: Int,
                userID: String, attemptsLeft: Int, biometricResult: BiometricResult? = nil,
                faceMatcherResponse: FaceMatcherResponse? = nil, analyzeLivenessResponse: AnalyzeLivenessResponse? = nil) {
        self.video = video
        self.idvAuditInfo = idvAuditInfo
        self.purpose = purpose
        self.attempts = attempts
        self.userID = userID
        self.attemptsLeft = attemptsLeft
        self.biometricResult = biometricResult
        self.faceMatcherResponse = faceMatcherResponse
        self.analyzeLivenessResponse = analyzeLivenessResponse
    }

    /// The seed's reference success rule (L968): `biometric_result.display_text == "MATCHED"`.
    /// Without a `biometric_result` this is false (fail closed, unlike the seed's fail-open L948).
    public var isMatched: Bool { biometricResult?.displayText.isSuccess ?? false }
}

/// `video` of ``ServerBiometricAuthenticationResult`` (seed 001 §6.2: `workflow_data` "frames,
/// rotation, workflow", `meta_data` "device info", `client_version`).
public struct ServerBiometricVideo: Codable, Equatable, Sendable {
    /// `workflow_data`: the workflow and how many frames the capture sent.
    public var workflowData: SelfieWorkflowData?
    /// `meta_data`: the capture's device info as the SDK sent it (sanitised by the server).
    public var metaData: SelfieCaptureMetadata?
    /// `client_version`: capture client version, e.g. `"1.0"`.
    public var clientVersion: String?

    enum CodingKeys: String, CodingKey {
        case workflowData = "workflow_data"
        case metaData = "meta_data"
        case clientVersion = "client_version"
    }

    public init(workflowData: SelfieWorkflowData? = nil, metaData: SelfieCaptureMetadata? = nil, clientVersion: String? = nil) {
        self.workflowData = workflowData
        self.metaData = metaData
        self.clientVersion = clientVersion
    }
}

/// `video.workflow_data` of seed 001 §6.2 ("frames, rotation, workflow").
public struct SelfieWorkflowData: Codable, Equatable, Sendable {
    /// `workflow`: the ``IDVWorkflow`` raw value (8 for server biometric authentication).
    public var workflow: Int?
    /// `frames`: how many frames the capture uploaded (0 when none was).
    public var frames: Int?
    /// `rotation`: degrees the frames were rotated by, when known (OpenIDV's server does not rotate).
    public var rotation: Int?

    public init(workflow: Int? = nil, frames: Int? = nil, rotation: Int? = nil) {
        self.workflow = workflow
        self.frames = frames
        self.rotation = rotation
    }
}

/// The capture's `meta_data`: what the SDK knows about a selfie capture ("device info", seed 001
/// §6.2), sent with `uploadIDVSelfieFrames` and returned in `video.meta_data`. Nothing about the
/// person or the device's identity.
///
/// Shape: `{"sdk": "IDVKit", "sdk_version": "0.9.0", "platform": "ios", "camera": "front",
/// "frame_count": 30, "fps": 10}`; every field optional.
public struct SelfieCaptureMetadata: Codable, Equatable, Sendable {
    /// `sdk`: the capturing SDK's name, e.g. `IDVKit`.
    public var sdk: String?
    /// `sdk_version`, e.g. `0.9.0`.
    public var sdkVersion: String?
    /// `platform`: `ios`, `macos`, `linux`, `android`, `web`, …
    public var platform: String?
    /// `camera`: `front` or `back`.
    public var camera: String?
    /// `frame_count`: frames in the capture.
    public var frameCount: Int?
    /// `fps`: the capture's frame rate, frames per second.
    public var framesPerSecond: Double?

    enum CodingKeys: String, CodingKey {
        case sdk, platform, camera
        case sdkVersion = "sdk_version"
        case frameCount = "frame_count"
        case framesPerSecond = "fps"
    }

    public init(sdk: String? = nil, sdkVersion: String? = nil, platform: String? = nil, camera: String? = nil,
                frameCount: Int? = nil, framesPerSecond: Double? = nil) {
        self.sdk = sdk
        self.sdkVersion = sdkVersion
        self.platform = platform
        self.camera = camera
        self.frameCount = frameCount
        self.framesPerSecond = framesPerSecond
    }

    /// The known fields of a client's `meta_data` object, each kept only when well-formed: `sdk`,
    /// `sdk_version`, `platform` 1–32 characters of `[A-Za-z0-9._+-]`; `camera` `front`/`back`;
    /// `frame_count` 0…10 000; `fps` in (0, 240]. Everything else (unknown keys, other values) is
    /// dropped, so what the server stores and returns is bounded and says nothing about a person.
    /// Nil when `json` is not an object.
    public init?(sanitising json: JSONValue) {
        guard let o = json.objectValue else { return nil }
        func word(_ key: String) -> String? {
            guard let s = o[key]?.stringValue, (1...32).contains(s.count),
                  s.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._+-".unicodeScalars.contains($0)) })
            else { return nil }
            return s
        }
        sdk = word(CodingKeys.sdk.rawValue)
        sdkVersion = word(CodingKeys.sdkVersion.rawValue)
        platform = word(CodingKeys.platform.rawValue)
        camera = o[CodingKeys.camera.rawValue]?.stringValue.flatMap { ["front", "back"].contains($0) ? $0 : nil }
        frameCount = o[CodingKeys.frameCount.rawValue]?.intValue.flatMap { (0...10_000).contains($0) ? $0 : nil }
        framesPerSecond = o[CodingKeys.framesPerSecond.rawValue]?.doubleValue.flatMap { $0 > 0 && $0 <= 240 ? $0 : nil }
    }
}

/// `idv_audit_info` (seed 001 §6.2, L573–L582): the audit record of one IDV transaction.
public struct IDVAuditInfo: Codable, Equatable, Sendable {
    /// `reason`: the caller's stated reason, e.g. `"Server Biometric Authentication"`.
    public var reason: String
    /// `audit_metrics`: start and end times.
    public var auditMetrics: AuditMetrics
    /// `status`: `SUCCESS` or `FAILURE` (the seed's docs call it "CRITICAL").
    public var status: AuditStatus
    /// `idv_audit_transaction_id`: unique id of the transaction in the audit log, e.g. `txn_123`.
    public var idvAuditTransactionID: String
    /// `orchestration_use_case`, e.g. `RDNA_IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC`.
    public var orchestrationUseCase: OrchestrationUseCase

    enum CodingKeys: String, CodingKey {
        case reason
        case auditMetrics = "audit_metrics"
        case status
        case idvAuditTransactionID = "idv_audit_transaction_id"
        case orchestrationUseCase = "orchestration_use_case"
    }

    public init(reason: String, auditMetrics: AuditMetrics, status: AuditStatus, idvAuditTransactionID: String,
                orchestrationUseCase: OrchestrationUseCase) {
        self.reason = reason
        self.auditMetrics = auditMetrics
        self.status = status
        self.idvAuditTransactionID = idvAuditTransactionID
        self.orchestrationUseCase = orchestrationUseCase
    }
}

/// `audit_metrics` (seed 001 §6.2): `{ "start_timestamp": 1234567890, "end_timestamp": 1234567900 }`.
public struct AuditMetrics: Codable, Equatable, Sendable {
    /// `start_timestamp`: Unix time in seconds (UTC) when the transaction started.
    public var startTimestamp: Int
    /// `end_timestamp`: Unix time in seconds (UTC) when it ended.
    public var endTimestamp: Int

    enum CodingKeys: String, CodingKey {
        case startTimestamp = "start_timestamp"
        case endTimestamp = "end_timestamp"
    }

    public init(startTimestamp: Int, endTimestamp: Int) {
        self.startTimestamp = startTimestamp
        self.endTimestamp = endTimestamp
    }

    /// Duration in seconds (`end_timestamp - start_timestamp`).
    public var durationSeconds: Int { endTimestamp - startTimestamp }
}

// MARK: - onIDVBiometricOptInStatus / onIDVBiometricOptOutStatus (seed 004 §3.1)

/// The `idvResponse` JSON string of `onIDVBiometricOptInStatus` (challenge mode 6) and
/// `onIDVBiometricOptOutStatus` (mode 7) (seed 004 §3.1). The seed passes this string but never
/// shows or parses it (§5); the shape is ours, modelled on the template status of seed 001 §6.1.
///
/// Shape: `{ "status_code": 100, "status_message": "…", "orchestration_use_case": "RDNA_IDV_POSTLOGIN_OPTIN",
/// "user_id": "…", "template_exists": true, "attempts_left": 2, "idv_audit_info": {…} }`.
public struct BiometricOptStatus: IDVPayload {
    /// `status_code`: 100 success; opt-out also 400 unable to process, 500 deletion failed,
    /// 600 no template (seed 004 §4.4).
    public var statusCode: Int
    /// `status_message`.
    public var statusMessage: String
    /// `orchestration_use_case`: `RDNA_IDV_POSTLOGIN_OPTIN` or `RDNA_IDV_POSTLOGIN_OPTOUT`.
    public var orchestrationUseCase: OrchestrationUseCase
    /// `user_id`.
    public var userID: String
    /// `template_exists`: whether the user has a stored template *after* the operation.
    public var templateExists: Bool
    /// `attempts_left`: remaining selfie attempts (opt-in), when relevant.
    public var attemptsLeft: Int?
    /// `idv_audit_info`: the audit record of the operation, when recorded.
    public var idvAuditInfo: IDVAuditInfo?

    enum CodingKeys: String, CodingKey {
        case statusCode = "status_code"
        case statusMessage = "status_message"
        case orchestrationUseCase = "orchestration_use_case"
        case userID = "user_id"
        case templateExists = "template_exists"
        case attemptsLeft = "attempts_left"
        case idvAuditInfo = "idv_audit_info"
    }

    public init(statusCode: Int, statusMessage: String, orchestrationUseCase: OrchestrationUseCase, userID: String,
                templateExists: Bool, attemptsLeft: Int? = nil, idvAuditInfo: IDVAuditInfo? = nil) {
        self.statusCode = statusCode
        self.statusMessage = statusMessage
        self.orchestrationUseCase = orchestrationUseCase
        self.userID = userID
        self.templateExists = templateExists
        self.attemptsLeft = attemptsLeft
        self.idvAuditInfo = idvAuditInfo
    }

    /// The status as the callback's `RDNARequestStatus`.
    public var requestStatus: RequestStatus { RequestStatus(statusCode: statusCode, statusMessage: statusMessage) }
}

// MARK: - onIDVActivatedCustomerKYCResponse (seed 000 §2 E6)

/// The terminal event of post-login KYC, `onIDVActivatedCustomerKYCResponse(_ userID:, status:, error:)`
/// (seed 000 §2 E6, §4), as one JSON object: `{ "user_id": "…", "status": {"status_code": 100,
/// "status_message": "…"}, "error": {"long_error_code": 0, "short_error_code": 0, "error_string": "…"} }`.
/// A cancel ends the flow with `long_error_code` 240 (seed 000 §3.3).
public struct KYCResponse: IDVPayload {
    /// `user_id`.
    public var userID: String
    /// `status`: the back end's verdict (100 or 0 success).
    public var status: RequestStatus
    /// `error`: the SDK/API error (0 none, 240 user cancelled).
    public var error: IDVError
    /// `idv_audit_info` (ours, optional): the audit record of the KYC transaction.
    public var idvAuditInfo: IDVAuditInfo?

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case status, error
        case idvAuditInfo = "idv_audit_info"
    }

    public init(userID: String, status: RequestStatus, error: IDVError, idvAuditInfo: IDVAuditInfo? = nil) {
        self.userID = userID
        self.status = status
        self.error = error
        self.idvAuditInfo = idvAuditInfo
    }

    /// Seed 000 §3.5 dual validation: `long_error_code == 0` and `status_code` ∈ {100, 0}.
    public var isSuccess: Bool { error.isSuccess && status.isSuccess }
    /// The server sent the KYC to human review (1130 `verificationUnderReview`, status 400): not
    /// decided; the relying party hears the decision server to server.
    public var isUnderReview: Bool { error.longErrorCode == IDVErrorCode.verificationUnderReview.rawValue }
}

// MARK: - RDNAChallengeResponse

/// The seeds' `RDNAChallengeResponse` as JSON (given to `getIDVBiometricOptInConsent`, `getPassword`,
/// `onInitialized`). The seeds read only `status.statusCode` / `status.statusMessage` (seed 002 §5.3,
/// seed 004 §3.3); the other members follow the sibling React Native codelab's type (seed 002
/// Appendix A, [EXT]) in snake_case and are optional.
public struct ChallengeResponse: IDVPayload {
    /// `status`: the back end's verdict on the previous answer (100 OK).
    public var status: RequestStatus
    /// `session`: the session the challenge belongs to.
    public var session: ChallengeSession?
    /// `challenge_info`: key/value pairs describing the challenge.
    public var challengeInfo: [ChallengeInfoItem]?
    /// `additional_info`: open object (e.g. `current_workflow`, `idv_user_role`, `idv_audit_info`).
    public var additionalInfo: [String: JSONValue]?

    enum CodingKeys: String, CodingKey {
        case status, session
        case challengeInfo = "challenge_info"
        case additionalInfo = "additional_info"
    }

    public init(status: RequestStatus, session: ChallengeSession? = nil, challengeInfo: [ChallengeInfoItem]? = nil,
                additionalInfo: [String: JSONValue]? = nil) {
        self.status = status
        self.session = session
        self.challengeInfo = challengeInfo
        self.additionalInfo = additionalInfo
    }
}

/// `session` of ``ChallengeResponse``: `{ "session_type": 1, "session_id": "…" }`.
public struct ChallengeSession: Codable, Equatable, Sendable {
    /// `session_type`: 0 application session, 1 user session ([EXT] REL-ID convention).
    public var sessionType: Int
    /// `session_id`: opaque id (never the bearer token).
    public var sessionID: String

    enum CodingKeys: String, CodingKey {
        case sessionType = "session_type"
        case sessionID = "session_id"
    }

    public init(sessionType: Int, sessionID: String) {
        self.sessionType = sessionType
        self.sessionID = sessionID
    }
}

/// One `challenge_info` element: `{ "key": "…", "value": "…" }`.
public struct ChallengeInfoItem: Codable, Equatable, Sendable {
    /// `key`: the item's name.
    public var key: String
    /// `value`: the item's value, as text.
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

// MARK: - Existing vocabulary as payloads

/// `RDNARequestStatus` as a standalone JSON payload: `{ "status_code": 100, "status_message": "…" }`.
extension RequestStatus: IDVPayload {}

/// `RDNAError` as a standalone JSON payload: `{ "long_error_code": 0, "short_error_code": 0, "error_string": "…" }`.
extension IDVError: IDVPayload {}
