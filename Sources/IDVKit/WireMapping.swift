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
/// | `cancelPassword(challengeMode:)` (IDVKit) | `getPassword` mode 6 or 7 (opt-in / opt-out re-authentication) | answer | `{"cancel": true}` → the flow's terminal event, 240 |
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
/// | (SDK itself, after a confirm) | `uploadIDVDocumentPages` | **upload** | `{"pages": [{"page_index": Int, "image": b64}], "chip"?: ChipFilesPayload}` from the ``DocumentCaptureProvider`` (and the ``ChipReaderProvider``, when set, given the challenge's `chip_challenge` as ``RDNAChipChallenge``: `chip.active_authentication` carries the chip's signature over it) |
/// | (SDK itself, after pages sent with `"chip_follows": true` by a ``ChipReaderAfterPages``) | `readIDVDocumentChip` | **upload** | `{"chip": ChipFilesPayload}` or `{"skip": true}` from the reader, given ``RDNAChipReadRequest`` (the AA challenge and SHA-1(MRZ_information)) |
/// | `setIDVDocumentScanProcessStartConfirmation(_:idvWorkflow:)` when `uploadIDVDocumentPages` is asked again | `uploadIDVDocumentPages` | **upload** | `true`: a new capture `{"pages": …}`; `false`: `{"cancel": true}` |
/// | `setIDVConfirmDocumentDetails(_:challenge:)` | `getIDVConfirmDocumentDetails` | answer | `{"is_confirm": Bool}` (`false`: rescan in mode 8; KYC's cancel, 240, in mode 9) |
/// | `rescanIDVDocument(challenge:)` (IDVKit) | `getIDVConfirmDocumentDetails` | answer | `{"is_confirm": false, "rescan": true}` → the document start again (every mode) |
/// | `setIDVSelfieProcessStartConfirmation(_:useDeviceBackCamera:idvWorkflow:)` | `getIDVSelfieProcessStartConfirmation` | answer | `{"is_confirm": Bool, "use_back_camera": Bool}` |
/// | (SDK itself, after a confirm) | `uploadIDVSelfieFrames` | **upload** | `{"frames": [b64], "fps": Double, "meta_data": {…}}` from the ``SelfieCaptureProvider`` (``selfieMetaData(_:useBackCamera:)``), with `"frame_times_ms": [Double]` under an illumination challenge; `{"presence": {"illumination": "unavailable" \| "declined"}}` when the provider cannot flash or the person declines (``SelfieFramesAnswer/declining(_:)``) |
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
/// `onRequestFailed` and the start callback comes again; the `upload…` challenge stays open and the
/// app's confirm captures again. A provider that throws ``CaptureError/cancelledByUser`` (the user
/// closed the camera) answers the `upload…` challenge with `{"cancel": true}`: the step is cancelled
/// as by the start screen's Close (146 before login, 240 after).
///
/// Post-login initiations (`POST /v1/flows/{name}`, body `{"payload": {...}}`; override with
/// ``RDNAConfiguration/flowNames``):
///
/// | seed call | flow | start payload | ends with |
/// |---|---|---|---|
/// | `initiateActivatedCustomerKYC(_:)` | `idv.postlogin.kyc` | `{"reason": String}` | `onIDVActivatedCustomerKYCResponse` |
/// | `initiateIDVAdditionalDocumentScan(_:)` | `idv.postlogin.document_scan` | `{"reason": String}` | `onIDVAdditionalDocumentScan` |
/// | `checkIDVUserBiometricTemplateStatus()` | `idv.template_status` | `{}` | `onIDVCheckUserBiometricTemplateStatus` |
/// | `initiateIDVServerBiometricAuthentication(_:)` | `idv.postlogin.server_biometric` | `{"reason": String}` | `onIDVServerBiometricAuthenticationResult` |
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
        "setIDVDocumentScanProcessStartConfirmation": [WireName.getIDVDocumentScanProcessStartConfirmation, uploadIDVDocumentPages,
                                                       WireName.readIDVDocumentChip],
        "documentCapture": [uploadIDVDocumentPages],
        "chipRead": [WireName.readIDVDocumentChip],
        "setIDVConfirmDocumentDetails": [WireName.getIDVConfirmDocumentDetails],
        "rescanIDVDocument": [WireName.getIDVConfirmDocumentDetails],
        "cancelPassword": [WireName.getPassword],
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

    /// Keys the SDK reads in what the server sends (challenge payloads, events). The answers it
    /// sends are typed: IDVCore's answer types (Answers.swift), encoded by ``payload(_:)``.
    public enum Key {
        public static let idvWorkflow = "idv_workflow", capturedFrame = "captured_frame", challengeMode = "challenge_mode"
    }

    /// An answer (or start payload) as the `payload` of a ``WireAnswer``. The answer types hold
    /// strings, numbers, booleans and objects of those only, so encoding cannot fail.
    public static func payload<T: Encodable>(_ answer: T) -> JSONValue {
        (try? JSONValue(encoding: answer)) ?? .emptyObject
    }

    /// The upload answer of captured document pages (``DocumentPagesAnswer``), with the chip's files when read.
    public static func documentAnswer(_ pages: [CapturedPage], chip: ChipFilesPayload? = nil, chipFollows: Bool? = nil) -> DocumentPagesAnswer {
        DocumentPagesAnswer(pages: pages.map { DocumentPagesAnswer.Page(pageIndex: $0.pageIndex, image: $0.image) }, chip: chip, chipFollows: chipFollows)
    }

    /// The upload answer of a captured selfie (``SelfieFramesAnswer``): frames oldest first, their rate, ``selfieMetaData(_:useBackCamera:)``,
    /// and — `underIllumination` — each frame's time from the start of the sequence (`frame_times_ms`, 0.1 ms).
    public static func selfieAnswer(_ selfie: CapturedSelfie, useBackCamera: Bool, underIllumination: Bool = false) -> SelfieFramesAnswer {
        SelfieFramesAnswer(frames: selfie.frames, fps: selfie.framesPerSecond, metaData: selfieMetaData(selfie, useBackCamera: useBackCamera),
                           frameTimesMs: underIllumination ? selfie.frameTimesMs.map { $0.map { ($0 * 10).rounded() / 10 } } : nil)
    }

    /// The capture's `meta_data` (seed 001 §6.2 `video.meta_data`, "device info"): what the SDK
    /// knows about the capture, nothing about the person or the device's identity —
    /// `{"sdk": "IDVKit", "sdk_version", "platform" (ios, macos, linux, …), "camera" (front/back),
    /// "frame_count", "fps"}` (IDVCore ``SelfieCaptureMetadata``).
    public static func selfieMetaData(_ selfie: CapturedSelfie, useBackCamera: Bool) -> SelfieCaptureMetadata {
        #if os(iOS)
        let platform = "ios"
        #elseif os(macOS)
        let platform = "macos"
        #elseif os(Linux)
        let platform = "linux"
        #else
        let platform = "other"
        #endif
        return SelfieCaptureMetadata(sdk: "IDVKit", sdkVersion: IDVKit.version, platform: platform, camera: useBackCamera ? "back" : "front",
                                     frameCount: selfie.frames.count, framesPerSecond: selfie.framesPerSecond)
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
        RDNAChallengeResponse(status: RDNARequestStatus(ch.status ?? RequestStatus(statusCode: RequestStatus.success, statusMessage: "Success")),
                              challengeID: ch.challengeID, payloadJSON: jsonString(ch.payload))
    }

    /// The client face of an optional wire error (no error → code 0).
    static func err(_ e: IDVError?) -> RDNAError { RDNAError(e ?? .none) }

    /// The client face of the error a challenge came back with, worded for the ask
    /// (``IDVError/worded(forAsk:)``: a 1066 whose upload request carries a `liveness_challenge`
    /// tells the person to follow the movements); no error → code 0. The app reads it as
    /// `error.errorString`; ``RDNA/currentChallenge`` keeps the wire's error as sent.
    static func err(_ ch: WireChallenge) -> RDNAError { RDNAError(ch.error.map { $0.worded(forAsk: ch.payload) } ?? .none) }

    static func workflow(_ ch: WireChallenge) -> IDVWorkflow? {
        IDVWorkflow(rawValue: ch.idvWorkflow ?? ch.payload[Key.idvWorkflow]?.intValue ?? -1)
    }

    static func unknown(_ ch: WireChallenge) -> RDNAEvent { .unknown(name: ch.name, payloadJSON: jsonString(ch.payload)) }

    /// Table 3a: challenge name → event. A challenge with an unassigned mode/workflow becomes `.unknown`.
    static let inboundChallenges: [String: @Sendable (WireChallenge) -> RDNAEvent] = [
        WireName.getUser: { .getUser(response: response($0), error: err($0.error)) },
        WireName.getActivationCode: {
            .getActivationCode(userID: $0.userID ?? "", attemptsLeft: $0.attemptsLeft, response: response($0), error: err($0.error))
        },
        WireName.getPassword: { ch in
            guard let mode = ChallengeOpMode(rawValue: ch.challengeMode) else { return unknown(ch) }
            return .getPassword(userID: ch.userID ?? "", challengeMode: mode, attemptsLeft: ch.attemptsLeft, response: response(ch), error: err(ch.error))
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
        WireName.readIDVDocumentChip: { ch in
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
            return .getIDVBiometricOptInConsent(userID: ch.userID ?? "", response: response(ch), challengeMode: mode, error: err(ch.error))
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
        IDVEventName.onIDVActivatedCustomerKYCResponse: { .onIDVActivatedCustomerKYCResponse(userID: $0.userID ?? "", status: RDNARequestStatus($0.status), error: RDNAError($0.error)) },
        IDVEventName.onIDVAdditionalDocumentScan: {
            .onIDVAdditionalDocumentScan(userID: $0.userID ?? "", documentDetails: jsonString($0.payload), status: RDNARequestStatus($0.status),
                                         challengeMode: eventMode($0, default: .idvAdditionalDocumentScan), error: RDNAError($0.error))
        },
        IDVEventName.onIDVCheckUserBiometricTemplateStatus: {
            .onIDVCheckUserBiometricTemplateStatus(userID: $0.userID ?? "", idvResponse: jsonString($0.payload), status: RDNARequestStatus($0.status), error: RDNAError($0.error))
        },
        IDVEventName.onIDVServerBiometricAuthenticationResult: {
            .onIDVServerBiometricAuthenticationResult(userID: $0.userID ?? "", idvResponse: jsonString($0.payload), status: RDNARequestStatus($0.status), error: RDNAError($0.error))
        },
        IDVEventName.onIDVBiometricOptInStatus: {
            .onIDVBiometricOptInStatus(userID: $0.userID ?? "", idvResponse: jsonString($0.payload), status: RDNARequestStatus($0.status),
                                       challengeMode: eventMode($0, default: .biometricOptIn), error: RDNAError($0.error))
        },
        IDVEventName.onIDVBiometricOptOutStatus: {
            .onIDVBiometricOptOutStatus(userID: $0.userID ?? "", idvResponse: jsonString($0.payload), status: RDNARequestStatus($0.status),
                                        challengeMode: eventMode($0, default: .biometricOptOut), error: RDNAError($0.error))
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

extension WireMapping {
    /// The flow a seed initiation starts, by its terminal event: the event the SDK delivers with an
    /// error when the flow cannot start or run (``RDNA`` "Where errors arrive").
    static func terminalEvent(forAPI api: String, error: RDNAError, status: RDNARequestStatus, userID: String) -> RDNAEvent? {
        switch api {
        case "initiateActivatedCustomerKYC": return .onIDVActivatedCustomerKYCResponse(userID: userID, status: status, error: error)
        case "initiateIDVAdditionalDocumentScan":
            return .onIDVAdditionalDocumentScan(userID: userID, documentDetails: "{}", status: status, challengeMode: .idvAdditionalDocumentScan, error: error)
        case "checkIDVUserBiometricTemplateStatus":
            return .onIDVCheckUserBiometricTemplateStatus(userID: userID, idvResponse: "{}", status: status, error: error)
        case "initiateIDVServerBiometricAuthentication":
            return .onIDVServerBiometricAuthenticationResult(userID: userID, idvResponse: "{}", status: status, error: error)
        case "initiateIDVBiometricOptIn":
            return .onIDVBiometricOptInStatus(userID: userID, idvResponse: "{}", status: status, challengeMode: .biometricOptIn, error: error)
        case "initiateIDVBiometricOptOut":
            return .onIDVBiometricOptOutStatus(userID: userID, idvResponse: "{}", status: status, challengeMode: .biometricOptOut, error: error)
        default: return nil
        }
    }

    /// The seed initiation whose flow a challenge belongs to (from its workflow, else its mode);
    /// nil for the pre-login flows (activation, workflows 0–5) and the core challenges.
    static func postLoginAPI(of ch: WireChallenge) -> String? {
        switch ch.idvWorkflow ?? ch.payload[Key.idvWorkflow]?.intValue {
        case IDVWorkflow.postLoginKYC.rawValue?: return "initiateActivatedCustomerKYC"
        case IDVWorkflow.postLoginDocScanOnly.rawValue?: return "initiateIDVAdditionalDocumentScan"
        case IDVWorkflow.postLoginSelfieBiometric.rawValue?: return "initiateIDVServerBiometricAuthentication"
        case IDVWorkflow.postLoginOptIn.rawValue?: return "initiateIDVBiometricOptIn"
        case IDVWorkflow.postLoginOptOut.rawValue?: return "initiateIDVBiometricOptOut"
        default: break
        }
        switch ChallengeOpMode(rawValue: ch.challengeMode) {
        case .idvPostLoginKYC?: return "initiateActivatedCustomerKYC"
        case .idvAdditionalDocumentScan?: return "initiateIDVAdditionalDocumentScan"
        case .idvServerBiometricAuthentication?: return "initiateIDVServerBiometricAuthentication"
        case .biometricOptIn?: return "initiateIDVBiometricOptIn"
        case .biometricOptOut?: return "initiateIDVBiometricOptOut"
        default: return nil
        }
    }
}

extension RDNAEvent {
    /// Table 4: delivers the event to the seeds' delegate method, trying the spellings in order
    /// (``CallbackProbe``). Returns false when no registered delegate implements any spelling
    /// (a delegate that is not set does not hear it, as in the seeds).
    ///
    /// `challenge`: the response and error of the challenge this event shows (``RDNA/challengeError``),
    /// for the spellings that carry them; nil gives status 100 and error 0.
    func dispatch(to d: DelegateSet, challenge: (response: RDNAChallengeResponse, error: RDNAError)? = nil) -> Bool {
        func via<D>(_ delegate: D?, _ spellings: (D) -> [() -> Void]) -> Bool {
            guard let delegate else { return false }
            return CallbackProbe.first(spellings(delegate))
        }
        let r = challenge?.response ?? RDNAChallengeResponse(status: .success, challengeID: "", payloadJSON: "{}")
        let ce = challenge?.error ?? .none
        switch self {
        case let .onInitialized(sid):
            let response = RDNAChallengeResponse(status: .success, challengeID: "", payloadJSON: "{}", sessionID: sid)
            return via(d.core) { c in [{ c.onInitialized(response) }, { c.onInitialized() }, { c.onInitialized(sid) }] }
        case let .onInitializeError(e): return via(d.core) { c in [{ c.onInitializeError(e) }] }
        case let .getUser(r, e): return via(d.core) { c in [{ c.getUser(r, error: e) }] }
        case let .getActivationCode(u, a, r, e): return via(d.core) { c in [{ c.getActivationCode(u, attemptsLeft: a, response: r, error: e) }] }
        case let .getPassword(u, m, a, r, e): return via(d.core) { c in [{ c.getPassword(u, challengeMode: m, attemptsLeft: a, response: r, error: e) }] }
        case let .getUserConsentForLDA(u, r): return via(d.core) { c in [{ c.getUserConsentForLDA(u, response: r) }] }
        case let .onUserLoggedIn(u, s, dev): return via(d.core) { c in [{ c.onUserLoggedIn(u, sessionID: s, deviceID: dev) }] }
        case let .onUserLoggedOff(u): return via(d.core) { c in [{ c.onUserLoggedOff(u) }] }
        case .onAuthStateReset: return via(d.core) { c in [{ c.onAuthStateReset() }] }
        case let .onRequestFailed(api, e): return via(d.core) { c in [{ c.onRequestFailed(api, error: e) }] }
        case let .unknown(n, p): return via(d.core) { c in [{ c.onUnknownEvent(n, payloadJSON: p) }] }
        case let .getIDVDocumentScanProcessStartConfirmation(wf):
            return via(d.document) { c in [{ c.getIDVDocumentScanProcessStartConfirmation(wf, response: r, error: ce) },
                                           { c.getIDVDocumentScanProcessStartConfirmation(wf) }] }
        case let .getIDVConfirmDocumentDetails(j, m):
            return via(d.document) { c in [{ c.getIDVConfirmDocumentDetails(j, challenge: m, response: r, error: ce) },
                                           { c.getIDVConfirmDocumentDetails(j, challenge: m) }] }
        case let .onIDVAdditionalDocumentScan(u, j, s, m, e):
            return via(d.document) { c in [{ c.onIDVAdditionalDocumentScan(u, documentDetails: j, status: s, challenge: m, error: e) }] }
        case let .getIDVSelfieProcessStartConfirmation(wf):
            return via(d.selfie) { c in [{ c.getIDVSelfieProcessStartConfirmation(wf, response: r, error: ce) }, { c.getIDVSelfieProcessStartConfirmation(wf) }] }
        case let .getIDVSelfieConfirmation(j, m):
            return via(d.selfie) { c in [{ c.getIDVSelfieConfirmation(j, challenge: m, response: r, error: ce) }, { c.getIDVSelfieConfirmation(j, challenge: m) }] }
        case let .getIDVBiometricOptInConsent(u, r, m, e):
            return via(d.biometric) { c in [{ c.getIDVBiometricOpt(inConsent: u, response: r, challenge: m, error: e) },
                                            { c.getIDVBiometricOptInConsent(u, response: r, challenge: m, error: e) }] }
        case let .onIDVCheckUserBiometricTemplateStatus(u, j, s, e):
            return via(d.biometric) { c in [{ c.onIDVCheckUserBiometricTemplateStatus(u, idvResponse: j, status: s, error: e) }] }
        case let .onIDVServerBiometricAuthenticationResult(u, j, s, e):
            return via(d.biometric) { c in [{ c.onIDVServerBiometricAuthenticationResult(u, idvResponse: j, status: s, error: e) }] }
        case let .onIDVOptInCapturedFrameConfirmation(img):
            return via(d.biometric) { c in [{ c.onIDVOptInCapturedFrameConfirmation(img, response: r, error: ce) },
                                            { c.onIDVOptInCapturedFrameConfirmation(img) }, { c.onIDVOpt(inCapturedFrameConfirmation: img) }] }
        case let .onIDVBiometricOptInStatus(u, j, s, m, e):
            return via(d.biometric) { c in [{ c.onIDVBiometricOptInStatus(u, idvResponse: j, status: s, challengeMode: m, error: e) },
                                            { c.onIDVBiometricOpt(inStatus: u, idvResponse: j, status: s, error: e) }] }
        case let .onIDVBiometricOptOutStatus(u, j, s, m, e):
            return via(d.biometric) { c in [{ c.onIDVBiometricOptOutStatus(u, idvResponse: j, status: s, challengeMode: m, error: e) },
                                            { c.onIDVBiometricOptOutStatus(u, idvResponse: j, status: s, error: e) }] }
        case let .onIDVActivatedCustomerKYCResponse(u, s, e):
            return via(d.kyc) { c in [{ c.onIDVActivatedCustomerKYCResponse(u, status: s, error: e) }] }
        }
    }

    /// The delegate method names the app could implement for this event (for the report when it
    /// implements none; the codelabs' spellings first), e.g. `getIDVBiometricOpt(inConsent:response:challenge:error:)`.
    var callbackSpellings: [String] {
        switch self {
        case .onInitialized: return ["onInitialized(_:) [RDNAChallengeResponse]", "onInitialized()", "onInitialized(_:) [String]"]
        case .onInitializeError: return ["onInitializeError(_:)"]
        case .getUser: return ["getUser(_:error:)"]
        case .getActivationCode: return ["getActivationCode(_:attemptsLeft:response:error:)"]
        case .getPassword: return ["getPassword(_:challengeMode:attemptsLeft:response:error:)"]
        case .getUserConsentForLDA: return ["getUserConsentForLDA(_:response:)"]
        case .onUserLoggedIn: return ["onUserLoggedIn(_:sessionID:deviceID:)"]
        case .onUserLoggedOff: return ["onUserLoggedOff(_:)"]
        case .onAuthStateReset: return ["onAuthStateReset()"]
        case .onRequestFailed: return ["onRequestFailed(_:error:)"]
        case .unknown: return ["onUnknownEvent(_:payloadJSON:)"]
        case .getIDVDocumentScanProcessStartConfirmation:
            return ["RDNAIDVDocumentProcessingCallbacks.getIDVDocumentScanProcessStartConfirmation(_:)",
                    "RDNAIDVDocumentProcessingCallbacks.getIDVDocumentScanProcessStartConfirmation(_:response:error:)"]
        case .getIDVConfirmDocumentDetails:
            return ["RDNAIDVDocumentProcessingCallbacks.getIDVConfirmDocumentDetails(_:challenge:)",
                    "RDNAIDVDocumentProcessingCallbacks.getIDVConfirmDocumentDetails(_:challenge:response:error:)"]
        case .onIDVAdditionalDocumentScan: return ["RDNAIDVDocumentProcessingCallbacks.onIDVAdditionalDocumentScan(_:documentDetails:status:challenge:error:)"]
        case .getIDVSelfieProcessStartConfirmation:
            return ["RDNAIDVSelfieProcessingCallbacks.getIDVSelfieProcessStartConfirmation(_:)",
                    "RDNAIDVSelfieProcessingCallbacks.getIDVSelfieProcessStartConfirmation(_:response:error:)"]
        case .getIDVSelfieConfirmation:
            return ["RDNAIDVSelfieProcessingCallbacks.getIDVSelfieConfirmation(_:challenge:)",
                    "RDNAIDVSelfieProcessingCallbacks.getIDVSelfieConfirmation(_:challenge:response:error:)"]
        case .getIDVBiometricOptInConsent:
            return ["RDNAIDVBiometricManagementCallbacks.getIDVBiometricOpt(inConsent:response:challenge:error:)",
                    "RDNAIDVBiometricManagementCallbacks.getIDVBiometricOptInConsent(_:response:challenge:error:)"]
        case .onIDVCheckUserBiometricTemplateStatus: return ["RDNAIDVBiometricManagementCallbacks.onIDVCheckUserBiometricTemplateStatus(_:idvResponse:status:error:)"]
        case .onIDVServerBiometricAuthenticationResult:
            return ["RDNAIDVBiometricManagementCallbacks.onIDVServerBiometricAuthenticationResult(_:idvResponse:status:error:)"]
        case .onIDVOptInCapturedFrameConfirmation:
            return ["RDNAIDVBiometricManagementCallbacks.onIDVOptInCapturedFrameConfirmation(_:)",
                    "RDNAIDVBiometricManagementCallbacks.onIDVOpt(inCapturedFrameConfirmation:)",
                    "RDNAIDVBiometricManagementCallbacks.onIDVOptInCapturedFrameConfirmation(_:response:error:)"]
        case .onIDVBiometricOptInStatus:
            return ["RDNAIDVBiometricManagementCallbacks.onIDVBiometricOptInStatus(_:idvResponse:status:challengeMode:error:)",
                    "RDNAIDVBiometricManagementCallbacks.onIDVBiometricOpt(inStatus:idvResponse:status:error:)"]
        case .onIDVBiometricOptOutStatus:
            return ["RDNAIDVBiometricManagementCallbacks.onIDVBiometricOptOutStatus(_:idvResponse:status:challengeMode:error:)",
                    "RDNAIDVBiometricManagementCallbacks.onIDVBiometricOptOutStatus(_:idvResponse:status:error:)"]
        case .onIDVActivatedCustomerKYCResponse: return ["RDNAIDVKYCManagementCallbacks.onIDVActivatedCustomerKYCResponse(_:status:error:)"]
        }
    }
}
