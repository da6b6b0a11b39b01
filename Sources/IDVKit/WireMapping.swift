import Foundation

/// THE single place where the seeds' API meets the wire protocol (docs: IDVCore/Wire.swift,
/// docs/PROTOCOL.md). Three tables and one switch:
///
/// 1. ``answers`` — seed API call → the challenge it answers, the route, and the answer payload keys.
/// 2. ``flows`` — seed post-login initiation → `POST /v1/flows/{name}` flow name and start payload.
/// 3. ``inboundChallenges`` / ``inboundEvents`` — wire challenge/event name → ``RDNAEvent``.
/// 4. ``RDNAEvent/dispatch(to:)`` — ``RDNAEvent`` → the seeds' delegate method.
///
/// Aligned with the workflow engine's docs/WORKFLOWS.md (branch `workflow`).
///
/// Answer payloads (JSON object keys; images are standard base64 of the encoded JPEG/PNG bytes):
///
/// | seed call | answers challenge | route | payload |
/// |---|---|---|---|
/// | `setUser(_:)` | `getUser` | answer | `{"user_id": String}` |
/// | `setActivationCode(_:)` | `getActivationCode` | answer | `{"activation_code": String}` |
/// | `setPassword(_:challengeMode:)` | `getPassword` (same mode: 0, 1, 6, 7) | answer | `{"password": String}` |
/// | `setUserConsentForLDA(_:challengeMode:)` | `getUserConsentForLDA` | answer | `false`: `{"consent": false}`; `true`: `{"consent": true, "signature": b64}` from the ``LDAProvider`` (enrol) |
/// | (SDK itself) | `getDeviceSignature` | answer | `{"signature": b64}` from the ``LDAProvider`` after user presence; `{"fallback": "password"}` without a provider, when the user declines or LDA is unavailable |
/// | (SDK itself, at `initialize` with an ``LDAProvider``) | — | `POST /v1/devices` | `{"public_key": b64 raw 32 bytes, "label": String}` → `device_id`, sent as `WireSessionStart.device_id` |
///
/// LDA signatures are Ed25519 over `WireLDA.message(challengeID:nonce:)` (the challenge's own
/// `challenge_id` and `payload.nonce`). Server answers: a valid login signature → `onUserLoggedIn`
/// (no `getPassword`); valid re-authentication (seed 004 modes 6/7) → the flow continues without
/// `getPassword`; fallback → `getPassword`; an invalid signature → `getPassword` with error 1023
/// (`getUserConsentForLDA` again with 1023 when enrolling).
/// | `setIDVDocumentScanProcessStartConfirmation(_:idvWorkflow:)` | `getIDVDocumentScanProcessStartConfirmation` | answer | `{"is_confirm": Bool}` |
/// | (SDK itself, after a confirm) | `uploadIDVDocumentPages` | **upload** | `{"pages": [{"page_index": Int, "image": b64}]}` from the ``DocumentCaptureProvider`` |
/// | `setIDVDocumentScanProcessStartConfirmation(_:idvWorkflow:)` when `uploadIDVDocumentPages` is asked again | `uploadIDVDocumentPages` | **upload** | `true`: a new capture `{"pages": …}`; `false`: `{"cancel": true}` |
/// | `setIDVConfirmDocumentDetails(_:challenge:)` | `getIDVConfirmDocumentDetails` | answer | `{"is_confirm": Bool}` |
/// | `setIDVSelfieProcessStartConfirmation(_:useDeviceBackCamera:idvWorkflow:)` | `getIDVSelfieProcessStartConfirmation` | answer | `{"is_confirm": Bool, "use_back_camera": Bool}` |
/// | (SDK itself, after a confirm) | `uploadIDVSelfieFrames` | **upload** | `{"frames": [b64], "fps": Double}` from the ``SelfieCaptureProvider`` |
/// | `setIDVSelfieProcessStartConfirmation(…)` when `uploadIDVSelfieFrames` is asked again | `uploadIDVSelfieFrames` | **upload** | `true`: `{"frames": …}`; `false`: `{"cancel": true}` |
/// | `setIDVSelfieConfirmation(_:challenge:)` | `getIDVSelfieConfirmation` | answer | `{"action": String}` (an offered key; `"true"` = `continue-flow`) |
/// | `setIDVBiometricOptInConsent(_:challenge:)` | `getIDVBiometricOptInConsent` | answer | `{"is_opt_in": Bool}` |
/// | `setIDVBiometricOptInConfirmation(_:)` | `onIDVOptInCapturedFrameConfirmation` | answer | `{"status": 0 approved, 1 recapture, 2 cancel}` |
///
/// "upload" = `POST /v1/session/upload` (megabyte limit), "answer" = `POST /v1/session/answer`.
/// Every answer also echoes `challenge_id`, `challenge` and `challenge_mode` (``WireAnswer``).
///
/// Captures: the app never sees the upload challenges. The first `upload…` after the app's
/// confirm is answered by the SDK with its capture provider. When the server asks `upload…` AGAIN
/// (the previous capture was rejected: `error` 1008/1009/1031/1032, or `status` 400
/// `LIVENESS_FAILED` in opt-in) the SDK shows the app the start callback again
/// (`getIDVDocumentScanProcessStartConfirmation` / `getIDVSelfieProcessStartConfirmation`; the
/// reason is in ``RDNA/currentChallenge``'s `error`/`status`), and the app's confirm (new capture)
/// or cancel answers the `upload…` challenge. A capture provider that fails reports 1008 through
/// `onRequestFailed`; the `upload…` challenge stays open and the app's confirm captures again.
///
/// Post-login initiations (`POST /v1/flows/{name}`, body `{"payload": {...}}`; override with
/// ``RDNAConfiguration/flowNames``):
///
/// | seed call | flow | start payload | ends with |
/// |---|---|---|---|
/// | `initiateActivatedCustomerKYC(reason:)` | `idv.postlogin.kyc` | `{"reason": String}` | `onIDVActivatedCustomerKYCResponse` |
/// | `initiateIDVAdditionalDocumentScan(reason:)` | `idv.postlogin.document_scan` | `{"reason": String}` | `onIDVAdditionalDocumentScan` |
/// | `checkIDVUserBiometricTemplateStatus()` | `idv.template_status` | `{}` | `onIDVCheckUserBiometricTemplateStatus` |
/// | `initiateIDVServerBiometricAuthentication(reason:)` | `idv.postlogin.server_biometric` | `{"reason": String}` | `onIDVServerBiometricAuthenticationResult` |
/// | `initiateIDVBiometricOptIn()` | `idv.postlogin.optin` | `{}` | `onIDVBiometricOptInStatus` |
/// | `initiateIDVBiometricOptOut()` | `idv.postlogin.optout` | `{}` | `onIDVBiometricOptOutStatus` |
///
/// Inbound: a challenge's `payload` is handed to the app as the seed's JSON string unchanged
/// (`getIDVConfirmDocumentDetails` → ``DocumentDetails``, `getIDVSelfieConfirmation` →
/// ``SelfieDetails``); an IDV event's `payload` is the callback's `idvResponse`/`documentDetails`
/// string, its `status`/`error` the callback's status and error, and `payload.challenge_mode` (when
/// present) its challenge mode. `onIDVOptInCapturedFrameConfirmation` is a challenge whose payload
/// is `{"captured_frame": b64, "liveness_score": Int}`.
public enum WireMapping {
    public enum Route: String, Sendable {
        case answer = "/v1/session/answer"
        case upload = "/v1/session/upload"
    }

    /// The upload challenges of the workflow engine (answered by the SDK's capture providers).
    public static let uploadIDVDocumentPages = WireName.uploadIDVDocumentPages
    public static let uploadIDVSelfieFrames = WireName.uploadIDVSelfieFrames

    /// The route of an answer to `challenge`: image-carrying challenges (``WireName/uploadChallenges``)
    /// go to the upload route.
    public static func route(for challenge: String) -> Route {
        WireName.uploadChallenges.contains(challenge) ? .upload : .answer
    }

    /// Table 1: seed call → the challenges it may answer (the first is its own; the others are the
    /// re-asked upload challenges, see above).
    public static let answers: [String: [String]] = [
        "setUser": [WireName.getUser],
        "setActivationCode": [WireName.getActivationCode],
        "setPassword": [WireName.getPassword],
        "setUserConsentForLDA": [WireName.getUserConsentForLDA],
        "deviceSignature": [WireName.getDeviceSignature],
        "setIDVDocumentScanProcessStartConfirmation": [WireName.getIDVDocumentScanProcessStartConfirmation, uploadIDVDocumentPages],
        "documentCapture": [uploadIDVDocumentPages],
        "setIDVConfirmDocumentDetails": [WireName.getIDVConfirmDocumentDetails],
        "setIDVSelfieProcessStartConfirmation": [WireName.getIDVSelfieProcessStartConfirmation, uploadIDVSelfieFrames],
        "selfieCapture": [uploadIDVSelfieFrames],
        "setIDVSelfieConfirmation": [WireName.getIDVSelfieConfirmation],
        "setIDVBiometricOptInConsent": [WireName.getIDVBiometricOptInConsent],
        "setIDVBiometricOptInConfirmation": [IDVEventName.onIDVOptInCapturedFrameConfirmation],
    ]

    /// Table 2: seed post-login initiation → default flow name (``RDNAConfiguration/flowNames`` overrides).
    public static let flows: [String: String] = [
        "initiateActivatedCustomerKYC": FlowName.kyc,
        "initiateIDVAdditionalDocumentScan": FlowName.documentScan,
        "checkIDVUserBiometricTemplateStatus": FlowName.templateStatus,
        "initiateIDVServerBiometricAuthentication": FlowName.serverBiometric,
        "initiateIDVBiometricOptIn": FlowName.optIn,
        "initiateIDVBiometricOptOut": FlowName.optOut,
    ]

    /// Payload keys of the answers (so the table above and the code cannot drift apart).
    public enum Key {
        public static let userID = "user_id", activationCode = "activation_code", password = "password"
        public static let consent = "consent", signature = "signature", fallback = "fallback"
        public static let isConfirm = "is_confirm", idvWorkflow = "idv_workflow", pages = "pages"
        public static let pageIndex = "page_index", image = "image", frames = "frames", fps = "fps"
        public static let useBackCamera = "use_back_camera", action = "action", isOptIn = "is_opt_in"
        public static let status = "status", reason = "reason", capturedFrame = "captured_frame", cancel = "cancel"
        public static let nonce = "nonce", challengeMode = "challenge_mode"
    }

    /// Document pages as the upload payload's `pages` array.
    public static func pagesPayload(_ pages: [CapturedPage]) -> JSONValue {
        .array(pages.map { .object([Key.pageIndex: .integer($0.pageIndex), Key.image: .string($0.image.base64EncodedString())]) })
    }

    /// Selfie frames as the upload payload's `frames` array (oldest first).
    public static func framesPayload(_ selfie: CapturedSelfie) -> JSONValue {
        .array(selfie.frames.map { .string($0.base64EncodedString()) })
    }

    // MARK: Inbound

    /// JSON text of a payload (sorted keys; `{}` when empty).
    static func jsonString(_ v: JSONValue) -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let d = try? enc.encode(v) else { return "{}" }
        return String(decoding: d, as: UTF8.self)
    }

    static func response(_ ch: WireChallenge) -> RDNAChallengeResponse {
        RDNAChallengeResponse(status: ch.status ?? RequestStatus(statusCode: RequestStatus.success, statusMessage: "Success"),
                              challengeID: ch.challengeID, payloadJSON: jsonString(ch.payload))
    }

    static func workflow(_ ch: WireChallenge) -> IDVWorkflow? {
        IDVWorkflow(rawValue: ch.idvWorkflow ?? ch.payload[Key.idvWorkflow]?.intValue ?? -1)
    }

    static func unknown(_ ch: WireChallenge) -> RDNAEvent { .unknown(name: ch.name, payloadJSON: jsonString(ch.payload)) }

    /// Table 3a: challenge name → event. A challenge with an unassigned mode/workflow becomes `.unknown`.
    static let inboundChallenges: [String: @Sendable (WireChallenge) -> RDNAEvent] = [
        WireName.getUser: { .getUser(response: response($0), error: $0.error ?? .none) },
        WireName.getActivationCode: {
            .getActivationCode(userID: $0.userID ?? "", attemptsLeft: $0.attemptsLeft, response: response($0), error: $0.error ?? .none)
        },
        WireName.getPassword: { ch in
            guard let mode = ChallengeOpMode(rawValue: ch.challengeMode) else { return unknown(ch) }
            return .getPassword(userID: ch.userID ?? "", challengeMode: mode, attemptsLeft: ch.attemptsLeft, response: response(ch), error: ch.error ?? .none)
        },
        WireName.getUserConsentForLDA: { .getUserConsentForLDA(userID: $0.userID ?? "", response: response($0)) },
        WireName.getIDVDocumentScanProcessStartConfirmation: { ch in
            guard let wf = workflow(ch) else { return unknown(ch) }
            return .getIDVDocumentScanProcessStartConfirmation(idvWorkflow: wf)
        },
        uploadIDVDocumentPages: { ch in
            guard let wf = workflow(ch) else { return unknown(ch) }
            return .getIDVDocumentScanProcessStartConfirmation(idvWorkflow: wf)
        },
        uploadIDVSelfieFrames: { ch in
            guard let wf = workflow(ch) else { return unknown(ch) }
            return .getIDVSelfieProcessStartConfirmation(idvWorkflow: wf)
        },
        WireName.getIDVConfirmDocumentDetails: { ch in
            guard let mode = ChallengeOpMode(rawValue: ch.challengeMode) else { return unknown(ch) }
            return .getIDVConfirmDocumentDetails(documentDetails: jsonString(ch.payload), challengeMode: mode)
        },
        WireName.getIDVSelfieProcessStartConfirmation: { ch in
            guard let wf = workflow(ch) else { return unknown(ch) }
            return .getIDVSelfieProcessStartConfirmation(idvWorkflow: wf)
        },
        WireName.getIDVSelfieConfirmation: { ch in
            guard let mode = ChallengeOpMode(rawValue: ch.challengeMode) else { return unknown(ch) }
            return .getIDVSelfieConfirmation(selfieDetails: jsonString(ch.payload), challengeMode: mode)
        },
        WireName.getIDVBiometricOptInConsent: { ch in
            guard let mode = ChallengeOpMode(rawValue: ch.challengeMode) else { return unknown(ch) }
            return .getIDVBiometricOptInConsent(userID: ch.userID ?? "", response: response(ch), challengeMode: mode, error: ch.error ?? .none)
        },
        IDVEventName.onIDVOptInCapturedFrameConfirmation: {
            .onIDVOptInCapturedFrameConfirmation(capturedImage: $0.payload[Key.capturedFrame]?.stringValue ?? "")
        },
    ]

    static func eventMode(_ ev: WireEvent, default d: ChallengeOpMode) -> ChallengeOpMode {
        ev.payload[Key.challengeMode]?.intValue.flatMap { ChallengeOpMode(rawValue: $0) } ?? d
    }

    /// Table 3b: event name → event.
    static let inboundEvents: [String: @Sendable (WireEvent) -> RDNAEvent] = [
        WireName.onUserLoggedIn: {
            .onUserLoggedIn(userID: $0.userID ?? $0.payload["user_id"]?.stringValue ?? "",
                            sessionID: $0.payload["session_id"]?.stringValue ?? "", deviceID: $0.payload["device_id"]?.stringValue)
        },
        WireName.onUserLoggedOff: { .onUserLoggedOff(userID: $0.userID) },
        WireName.onAuthStateReset: { _ in .onAuthStateReset },
        IDVEventName.onIDVActivatedCustomerKYCResponse: { .onIDVActivatedCustomerKYCResponse(userID: $0.userID ?? "", status: $0.status, error: $0.error) },
        IDVEventName.onIDVAdditionalDocumentScan: {
            .onIDVAdditionalDocumentScan(userID: $0.userID ?? "", documentDetails: jsonString($0.payload), status: $0.status,
                                         challengeMode: eventMode($0, default: .idvAdditionalDocumentScan), error: $0.error)
        },
        IDVEventName.onIDVCheckUserBiometricTemplateStatus: {
            .onIDVCheckUserBiometricTemplateStatus(userID: $0.userID ?? "", idvResponse: jsonString($0.payload), status: $0.status, error: $0.error)
        },
        IDVEventName.onIDVServerBiometricAuthenticationResult: {
            .onIDVServerBiometricAuthenticationResult(userID: $0.userID ?? "", idvResponse: jsonString($0.payload), status: $0.status, error: $0.error)
        },
        IDVEventName.onIDVBiometricOptInStatus: {
            .onIDVBiometricOptInStatus(userID: $0.userID ?? "", idvResponse: jsonString($0.payload), status: $0.status,
                                       challengeMode: eventMode($0, default: .biometricOptIn), error: $0.error)
        },
        IDVEventName.onIDVBiometricOptOutStatus: {
            .onIDVBiometricOptOutStatus(userID: $0.userID ?? "", idvResponse: jsonString($0.payload), status: $0.status,
                                        challengeMode: eventMode($0, default: .biometricOptOut), error: $0.error)
        },
    ]

    /// A challenge as the app sees it.
    public static func event(for challenge: WireChallenge) -> RDNAEvent {
        inboundChallenges[challenge.name]?(challenge) ?? unknown(challenge)
    }

    /// A wire event as the app sees it.
    public static func event(for wire: WireEvent) -> RDNAEvent {
        inboundEvents[wire.name]?(wire) ?? .unknown(name: wire.name, payloadJSON: jsonString(wire.payload))
    }
}

extension RDNAEvent {
    /// Table 4: delivers the event to the seeds' delegate method (a delegate that is not set
    /// simply does not hear it, as in the seeds).
    func dispatch(to d: DelegateSet) {
        switch self {
        case let .onInitialized(sid): d.core?.onInitialized(sid)
        case let .onInitializeError(e): d.core?.onInitializeError(e)
        case let .getUser(r, e): d.core?.getUser(r, error: e)
        case let .getActivationCode(u, a, r, e): d.core?.getActivationCode(u, attemptsLeft: a, response: r, error: e)
        case let .getPassword(u, m, a, r, e): d.core?.getPassword(u, challengeMode: m, attemptsLeft: a, response: r, error: e)
        case let .getUserConsentForLDA(u, r): d.core?.getUserConsentForLDA(u, response: r)
        case let .onUserLoggedIn(u, s, dev): d.core?.onUserLoggedIn(u, sessionID: s, deviceID: dev)
        case let .onUserLoggedOff(u): d.core?.onUserLoggedOff(u)
        case .onAuthStateReset: d.core?.onAuthStateReset()
        case let .onRequestFailed(api, e): d.core?.onRequestFailed(api, error: e)
        case let .unknown(n, p): d.core?.onUnknownEvent(n, payloadJSON: p)
        case let .getIDVDocumentScanProcessStartConfirmation(wf): d.document?.getIDVDocumentScanProcessStartConfirmation(wf)
        case let .getIDVConfirmDocumentDetails(j, m): d.document?.getIDVConfirmDocumentDetails(j, challenge: m)
        case let .onIDVAdditionalDocumentScan(u, j, s, m, e):
            d.document?.onIDVAdditionalDocumentScan(u, documentDetails: j, status: s, challenge: m, error: e)
        case let .getIDVSelfieProcessStartConfirmation(wf): d.selfie?.getIDVSelfieProcessStartConfirmation(wf)
        case let .getIDVSelfieConfirmation(j, m): d.selfie?.getIDVSelfieConfirmation(j, challenge: m)
        case let .getIDVBiometricOptInConsent(u, r, m, e): d.biometric?.getIDVBiometricOptInConsent(u, response: r, challenge: m, error: e)
        case let .onIDVCheckUserBiometricTemplateStatus(u, j, s, e): d.biometric?.onIDVCheckUserBiometricTemplateStatus(u, idvResponse: j, status: s, error: e)
        case let .onIDVServerBiometricAuthenticationResult(u, j, s, e):
            d.biometric?.onIDVServerBiometricAuthenticationResult(u, idvResponse: j, status: s, error: e)
        case let .onIDVOptInCapturedFrameConfirmation(img): d.biometric?.onIDVOptInCapturedFrameConfirmation(img)
        case let .onIDVBiometricOptInStatus(u, j, s, m, e): d.biometric?.onIDVBiometricOptInStatus(u, idvResponse: j, status: s, challengeMode: m, error: e)
        case let .onIDVBiometricOptOutStatus(u, j, s, m, e): d.biometric?.onIDVBiometricOptOutStatus(u, idvResponse: j, status: s, challengeMode: m, error: e)
        case let .onIDVActivatedCustomerKYCResponse(u, s, e): d.kyc?.onIDVActivatedCustomerKYCResponse(u, status: s, error: e)
        }
    }
}
