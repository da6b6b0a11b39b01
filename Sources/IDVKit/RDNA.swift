import Foundation

/// Where and how the SDK talks to `idvd`.
public struct RDNAConfiguration: Sendable {
    /// The server, e.g. `http://127.0.0.1:8080` or `https://idv.example.com`.
    public var serverURL: URL
    /// Per-request timeout, seconds (1029 `timeout` after it).
    public var requestTimeout: TimeInterval
    /// Overrides of ``WireMapping/flows`` (seed call name → server flow name).
    public var flowNames: [String: String]
    /// Sent as `sdk_version` when the session starts.
    public var sdkVersion: String

    public init(serverURL: URL, requestTimeout: TimeInterval = 30, flowNames: [String: String] = [:], sdkVersion: String = IDVKit.version) {
        self.serverURL = serverURL
        self.requestTimeout = requestTimeout
        self.flowNames = flowNames
        self.sdkVersion = sdkVersion
    }
}

/// The SDK façade: the seeds' `RDNA` API over the `idvd` wire protocol.
///
/// Every call returns at once with an ``RDNAError`` (0 = accepted and sent; non-zero = refused
/// locally, nothing sent: 1027 not initialized, 1022 a request is already in progress, 1002 the
/// call does not answer the current challenge, 1025 bad argument or no capture provider). The real
/// result arrives later as callbacks on the chosen queue (the delegates below) and on ``events``;
/// the ``asyncAPI`` offers the same calls as `async` functions.
///
/// Thread-safe: calls may come from any thread; requests run one at a time on a private serial
/// queue; callbacks are delivered in order on the callback queue.
public final class RDNA: @unchecked Sendable {
    /// The process-wide instance (the seeds' `RDNA.sharedInstance()`).
    public static let shared = RDNA()
    public static func sharedInstance() -> RDNA { shared }

    private let lock = NSLock()
    private let work = DispatchQueue(label: "org.openidv.idvkit.work")
    private var callbackQueue: DispatchQueue = .main
    private var delegates = DelegateSet()
    private var transport: Transport?
    private var configuration: RDNAConfiguration?
    private var token: String?
    private var challenge: WireChallenge?
    private var session: WireSession?
    private var busy = false

    private var documentProvider: (any DocumentCaptureProvider)?
    private var chipProvider: (any ChipReaderProvider)?
    private var selfieProvider: (any SelfieCaptureProvider)?
    private var useBackCamera = false
    private var ldaProvider: (any LDAProvider)?
    private var ldaError: LDAError?

    /// Every callback as a typed value, in delivery order (buffers the newest 256 when nobody reads).
    public let events: AsyncStream<RDNAEvent>
    private let eventSink: AsyncStream<RDNAEvent>.Continuation

    public init() {
        (events, eventSink) = AsyncStream.makeStream(of: RDNAEvent.self, bufferingPolicy: .bufferingNewest(256))
    }

    deinit { eventSink.finish() }

    // MARK: Delegates and providers (the seeds' setters)

    public func setCallbacks(_ d: (any RDNACallbacks)?) { lock.withLock { delegates.core = d } }
    public func setIDVDocumentProcessingDelegate(_ d: (any RDNAIDVDocumentProcessingCallbacks)?) { lock.withLock { delegates.document = d } }
    public func setIDVSelfieProcessingDelegate(_ d: (any RDNAIDVSelfieProcessingCallbacks)?) { lock.withLock { delegates.selfie = d } }
    public func setIDVBiometricManagementDelegate(_ d: (any RDNAIDVBiometricManagementCallbacks)?) { lock.withLock { delegates.biometric = d } }
    public func setIDVKYCManagementDelegate(_ d: (any RDNAIDVKYCManagementCallbacks)?) { lock.withLock { delegates.kyc = d } }

    /// The document capture used after `setIDVDocumentScanProcessStartConfirmation(true, …)`.
    public func setDocumentCaptureProvider(_ p: (any DocumentCaptureProvider)?) { lock.withLock { documentProvider = p } }
    /// The eMRTD chip reading after each page capture (``FileChipReader`` on Linux, the app's NFC
    /// stack on a phone): its files travel beside the pages as `chip` and the server verifies them
    /// (docs/CHIP.md). nil (the default) or a provider returning nil: pages alone.
    public func setChipReaderProvider(_ p: (any ChipReaderProvider)?) { lock.withLock { chipProvider = p } }
    /// The selfie capture used after `setIDVSelfieProcessStartConfirmation(true, …)`.
    public func setSelfieCaptureProvider(_ p: (any SelfieCaptureProvider)?) { lock.withLock { selfieProvider = p } }

    /// The device key and presence check for LDA (``LDAProvider``). With one set, `initialize`
    /// registers the device (`POST /v1/devices`, once per server) and starts sessions bound to it;
    /// `setUserConsentForLDA(true)` enrols it and `getDeviceSignature` is answered with a signature
    /// (or the password fallback when the user declines or LDA is unavailable). Takes effect at the
    /// next `initialize`/`logOff`. Without one, LDA is off and logins use the password.
    public func setLDAProvider(_ p: (any LDAProvider)?) { lock.withLock { ldaProvider = p } }

    /// Why the last LDA step produced no signature (nil after a signature, or before any LDA step):
    /// the SDK answered the server with the password fallback (or, for `setUserConsentForLDA`,
    /// reported it as `onRequestFailed`). Ids and reasons only, never key material.
    public var lastLDAError: LDAError? { lock.withLock { ldaError } }

    /// The challenge the server is waiting for (nil when none), and whether the session is logged in.
    public var currentChallenge: WireChallenge? { lock.withLock { challenge } }
    /// The server's active-liveness challenge for the coming selfie capture: set while the server
    /// asks `getIDVSelfieProcessStartConfirmation` or `uploadIDVSelfieFrames` under active liveness
    /// (show ``RDNALivenessChallenge/instructions`` on the selfie start screen), nil under passive
    /// liveness and at every other step. The SDK hands it to the ``SelfieCaptureProvider``.
    public var pendingLivenessChallenge: RDNALivenessChallenge? {
        lock.withLock { challenge }.flatMap { RDNALivenessChallenge(payload: $0.payload) }
    }
    public var isLoggedIn: Bool { lock.withLock { session?.loggedIn ?? false } }

    typealias Completion = @Sendable ([RDNAEvent]) -> Void

    // MARK: Core

    /// Starts a session with the server: `onInitialized` then `getUser` (or `onInitializeError`).
    /// Callbacks go to `callbackQueue` (main by default). Calling it again starts over.
    @discardableResult
    public func initialize(_ configuration: RDNAConfiguration, callbackQueue: DispatchQueue = .main) -> RDNAError {
        initialize(configuration, callbackQueue: callbackQueue, completion: nil)
    }

    func initialize(_ configuration: RDNAConfiguration, callbackQueue: DispatchQueue, completion: Completion?) -> RDNAError {
        guard let scheme = configuration.serverURL.scheme?.lowercased(), ["http", "https"].contains(scheme),
              configuration.serverURL.host != nil else {
            return IDVError(.invalidArgument, "serverURL must be an http(s) URL with a host")
        }
        guard configuration.requestTimeout > 0 else { return IDVError(.invalidArgument, "requestTimeout must be positive") }
        let refused: RDNAError? = lock.withLock {
            if busy { return IDVError(.flowInProgress, "A request is in progress") }
            busy = true
            self.callbackQueue = callbackQueue
            self.configuration = configuration
            transport = Transport(baseURL: configuration.serverURL, timeout: configuration.requestTimeout)
            token = nil; challenge = nil; session = nil
            return nil
        }
        if let refused { return refused }
        work.async { [self] in
            let events: [RDNAEvent]
            do {
                let env = try startSession()
                if env.isRefusal { events = [.onInitializeError(env.error ?? IDVError(.internalError))] }
                else { events = [.onInitialized(sessionID: env.session?.sessionID ?? "")] + absorb(env, api: "initialize") }
            } catch { events = [.onInitializeError(Self.idvError(error))] }
            finish(events, completion)
        }
        return .none
    }

    /// `setUser` answers `getUser`.
    @discardableResult
    public func setUser(_ userID: String) -> RDNAError { setUser(userID, completion: nil) }
    func setUser(_ userID: String, completion: Completion?) -> RDNAError {
        guard !userID.isEmpty else { return IDVError(.invalidArgument, "the user id is empty") }
        return answer("setUser", mode: nil, completion: completion) { _ in [WireMapping.Key.userID: .string(userID)] }
    }

    /// `setActivationCode` answers `getActivationCode`.
    @discardableResult
    public func setActivationCode(_ code: String) -> RDNAError { setActivationCode(code, completion: nil) }
    func setActivationCode(_ code: String, completion: Completion?) -> RDNAError {
        guard !code.isEmpty else { return IDVError(.invalidArgument, "the activation code is empty") }
        return answer("setActivationCode", mode: nil, completion: completion) { _ in [WireMapping.Key.activationCode: .string(code)] }
    }

    /// `setPassword(_:challengeMode:)` answers `getPassword` of the same mode (0 verify, 1 set, 6/7 re-auth).
    @discardableResult
    public func setPassword(_ password: String, challengeMode: RDNAChallengeOpMode) -> RDNAError {
        setPassword(password, challengeMode: challengeMode, completion: nil)
    }
    func setPassword(_ password: String, challengeMode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        guard !password.isEmpty else { return IDVError(.invalidArgument, "the password is empty") }
        return answer("setPassword", mode: challengeMode, completion: completion) { _ in [WireMapping.Key.password: .string(password)] }
    }

    /// `setUserConsentForLDA` answers `getUserConsentForLDA` (asked after activation when the
    /// session has a registered device). `true` enrols: the ``LDAProvider`` signs
    /// `WireLDA.message(challengeID:nonce:)` after the presence check and the answer is
    /// `{"consent": true, "signature": b64}`; `false` answers `{"consent": false}`.
    /// Sync errors: 1025 when `true` but no ``LDAProvider`` is set or this session has no device.
    /// Async: a declined presence prompt → `onRequestFailed` 240, a key/library problem →
    /// `onRequestFailed` 1025 (``lastLDAError`` tells which); the challenge stays open for another
    /// answer. A signature the server rejects → `getUserConsentForLDA` again with error 1023.
    @discardableResult
    public func setUserConsentForLDA(_ shouldEnroll: Bool, challengeMode: RDNAChallengeOpMode = .verify) -> RDNAError {
        setUserConsentForLDA(shouldEnroll, completion: nil)
    }
    func setUserConsentForLDA(_ shouldEnroll: Bool, completion: Completion?) -> RDNAError {
        if shouldEnroll {
            let (p, device) = lock.withLock { (ldaProvider, session?.deviceID) }
            guard let p else { return IDVError(.invalidArgument, "LDA needs a device key: no LDAProvider is set") }
            guard device != nil else { return IDVError(.invalidArgument, "LDA needs a registered device; this session has none") }
            return answer("setUserConsentForLDA", mode: nil, completion: completion) { [self] ch in
                [WireMapping.Key.consent: true, WireMapping.Key.signature: .string(try ldaSignature(p, ch, purpose: .enrol).base64EncodedString())]
            }
        }
        return answer("setUserConsentForLDA", mode: nil, completion: completion) { _ in [WireMapping.Key.consent: .bool(false)] }
    }

    /// `resetAuthState` ends the flow in progress: before login → `getUser`; after → `onAuthStateReset`.
    @discardableResult
    public func resetAuthState() -> RDNAError { resetAuthState(completion: nil) }
    func resetAuthState(completion: Completion?) -> RDNAError {
        request("resetAuthState", completion: completion, check: { _ in nil }) { [self] tok in
            absorb(try transport!.envelope("POST", "/v1/session/reset", body: Data("{}".utf8), token: tok), api: "resetAuthState")
        }
    }

    /// `logOff` revokes the session: `onUserLoggedOff`, then a fresh session asks `getUser`.
    @discardableResult
    public func logOff(_ userID: String = "") -> RDNAError { logOff(userID, completion: nil) }
    func logOff(_ userID: String, completion: Completion?) -> RDNAError {
        request("logOff", completion: completion, check: { _ in nil }) { [self] tok in
            let env = try transport!.envelope("POST", "/v1/session/logoff", body: Data("{}".utf8), token: tok)
            var events = absorb(env, api: "logOff")
            if !env.isRefusal {
                lock.withLock { token = nil; challenge = nil; session = nil }
                let fresh = try startSession()
                events += fresh.isRefusal ? [.onRequestFailed(api: "logOff", error: fresh.error ?? IDVError(.internalError))] : absorb(fresh, api: "logOff")
            }
            return events
        }
    }

    // MARK: IDV answers (seed 002 A1–A5, seed 004)

    /// A1: answers `getIDVDocumentScanProcessStartConfirmation`. With `true` the document capture
    /// provider runs and its pages are uploaded; `false` cancels (146 pre-login, 240 post-login).
    @discardableResult
    public func setIDVDocumentScanProcessStartConfirmation(_ isConfirm: Bool, idvWorkflow: RDNAIDVWorkflow) -> RDNAError {
        setIDVDocumentScanProcessStartConfirmation(isConfirm, idvWorkflow: idvWorkflow, completion: nil)
    }
    func setIDVDocumentScanProcessStartConfirmation(_ isConfirm: Bool, idvWorkflow: RDNAIDVWorkflow, completion: Completion?) -> RDNAError {
        let provider = lock.withLock { documentProvider }
        if isConfirm && provider == nil { return IDVError(.invalidArgument, "no document capture provider is set") }
        return answer("setIDVDocumentScanProcessStartConfirmation", mode: nil, completion: completion) { [self] ch in
            guard ch.name == WireMapping.uploadIDVDocumentPages else { return [WireMapping.Key.isConfirm: .bool(isConfirm)] }
            return isConfirm ? try documentPayload(workflow: idvWorkflow) : [WireMapping.Key.cancel: true]
        }
    }

    /// `{"pages": …}` from the document capture provider, with `"chip": …` from the chip reader
    /// when one is set and reads a chip (1008 when either fails).
    private func documentPayload(workflow: RDNAIDVWorkflow) throws(IDVError) -> JSONValue {
        let (p, chips) = lock.withLock { (documentProvider, chipProvider) }
        guard let provider = p else { throw IDVError(.invalidArgument, "no document capture provider is set") }
        var payload: [String: JSONValue]
        do { payload = [WireMapping.Key.pages: WireMapping.pagesPayload(try provider.captureDocumentPages(workflow: workflow))] }
        catch { throw IDVError(.invalidImage, "document capture: \(error.message)") }
        let chip: CapturedChip?
        do { chip = try chips?.readChip(workflow: workflow) } catch { throw IDVError(.invalidImage, "chip reading: \(error.message)") }
        if let chip {
            guard let encoded = try? JSONValue(encoding: chip.payload) else { throw IDVError(.invalidImage, "chip reading: the files could not be encoded") }
            payload[WireMapping.Key.chip] = encoded
        }
        return .object(payload)
    }

    /// `{"frames": …, "fps": …}` from the selfie capture provider (1008 when it fails).
    private func selfiePayload(workflow: RDNAIDVWorkflow) throws(IDVError) -> JSONValue {
        let (p, back) = lock.withLock { (selfieProvider, useBackCamera) }
        guard let provider = p else { throw IDVError(.invalidArgument, "no selfie capture provider is set") }
        do {
            let selfie = try provider.captureSelfie(useBackCamera: back, workflow: workflow, challenge: pendingLivenessChallenge)
            return [WireMapping.Key.frames: WireMapping.framesPayload(selfie), WireMapping.Key.fps: .number(selfie.framesPerSecond)]
        } catch { throw IDVError(.invalidImage, "selfie capture: \(error.message)") }
    }

    /// A2: answers `getIDVConfirmDocumentDetails` (`false` = rescan).
    @discardableResult
    public func setIDVConfirmDocumentDetails(_ isConfirm: Bool, challenge mode: RDNAChallengeOpMode) -> RDNAError {
        setIDVConfirmDocumentDetails(isConfirm, challenge: mode, completion: nil)
    }
    func setIDVConfirmDocumentDetails(_ isConfirm: Bool, challenge mode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        answer("setIDVConfirmDocumentDetails", mode: mode, completion: completion) { _ in [WireMapping.Key.isConfirm: .bool(isConfirm)] }
    }

    /// A3: answers `getIDVSelfieProcessStartConfirmation`. With `true` the selfie provider runs and
    /// its frames are uploaded; `false` cancels.
    @discardableResult
    public func setIDVSelfieProcessStartConfirmation(_ isConfirm: Bool, useDeviceBackCamera: Bool, idvWorkflow: RDNAIDVWorkflow) -> RDNAError {
        setIDVSelfieProcessStartConfirmation(isConfirm, useDeviceBackCamera: useDeviceBackCamera, idvWorkflow: idvWorkflow, completion: nil)
    }
    func setIDVSelfieProcessStartConfirmation(_ isConfirm: Bool, useDeviceBackCamera: Bool, idvWorkflow: RDNAIDVWorkflow, completion: Completion?) -> RDNAError {
        let provider = lock.withLock { selfieProvider }
        if isConfirm && provider == nil { return IDVError(.invalidArgument, "no selfie capture provider is set") }
        return answer("setIDVSelfieProcessStartConfirmation", mode: nil, completion: completion) { [self] ch in
            lock.withLock { useBackCamera = useDeviceBackCamera }
            guard ch.name == WireMapping.uploadIDVSelfieFrames else {
                return [WireMapping.Key.isConfirm: .bool(isConfirm), WireMapping.Key.useBackCamera: .bool(useDeviceBackCamera)]
            }
            return isConfirm ? try selfiePayload(workflow: idvWorkflow) : [WireMapping.Key.cancel: true]
        }
    }

    /// A4: answers `getIDVSelfieConfirmation` with a server-offered action key
    /// (`continue-flow`, `reinit-idv-document-scan`, `reinit-idv-selfie`; `"true"` = continue).
    @discardableResult
    public func setIDVSelfieConfirmation(_ action: String, challenge mode: RDNAChallengeOpMode) -> RDNAError {
        setIDVSelfieConfirmation(action, challenge: mode, completion: nil)
    }
    func setIDVSelfieConfirmation(_ action: String, challenge mode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        guard !action.isEmpty else { return IDVError(.invalidArgument, "the action key is empty") }
        return answer("setIDVSelfieConfirmation", mode: mode, completion: completion) { _ in [WireMapping.Key.action: .string(action)] }
    }

    /// A5: answers `getIDVBiometricOptInConsent` (either answer continues the flow).
    @discardableResult
    public func setIDVBiometricOptInConsent(_ isOptIn: Bool, challenge mode: RDNAChallengeOpMode) -> RDNAError {
        setIDVBiometricOptInConsent(isOptIn, challenge: mode, completion: nil)
    }
    func setIDVBiometricOptInConsent(_ isOptIn: Bool, challenge mode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        answer("setIDVBiometricOptInConsent", mode: mode, completion: completion) { _ in [WireMapping.Key.isOptIn: .bool(isOptIn)] }
    }

    /// Seed 004: answers `onIDVOptInCapturedFrameConfirmation`.
    @discardableResult
    public func setIDVBiometricOptInConfirmation(_ status: RDNAIDVStatus) -> RDNAError {
        setIDVBiometricOptInConfirmation(status, completion: nil)
    }
    func setIDVBiometricOptInConfirmation(_ status: RDNAIDVStatus, completion: Completion?) -> RDNAError {
        answer("setIDVBiometricOptInConfirmation", mode: nil, completion: completion) { _ in [WireMapping.Key.status: .integer(status.rawValue)] }
    }

    // MARK: Post-login initiations (seeds 000, 001, 003, 004)

    @discardableResult
    public func initiateActivatedCustomerKYC(reason: String) -> RDNAError { startFlow("initiateActivatedCustomerKYC", [WireMapping.Key.reason: .string(reason)], completion: nil) }
    @discardableResult
    public func initiateIDVAdditionalDocumentScan(reason: String) -> RDNAError { startFlow("initiateIDVAdditionalDocumentScan", [WireMapping.Key.reason: .string(reason)], completion: nil) }
    @discardableResult
    public func checkIDVUserBiometricTemplateStatus() -> RDNAError { startFlow("checkIDVUserBiometricTemplateStatus", .emptyObject, completion: nil) }
    @discardableResult
    public func initiateIDVServerBiometricAuthentication(reason: String) -> RDNAError { startFlow("initiateIDVServerBiometricAuthentication", [WireMapping.Key.reason: .string(reason)], completion: nil) }
    @discardableResult
    public func initiateIDVBiometricOptIn() -> RDNAError { startFlow("initiateIDVBiometricOptIn", .emptyObject, completion: nil) }
    @discardableResult
    public func initiateIDVBiometricOptOut() -> RDNAError { startFlow("initiateIDVBiometricOptOut", .emptyObject, completion: nil) }

    /// The flow name a seed initiation starts (configuration override or ``WireMapping/flows``).
    public func flowName(for api: String) -> String? {
        lock.withLock { configuration?.flowNames[api] } ?? WireMapping.flows[api]
    }

    func startFlow(_ api: String, _ payload: JSONValue, completion: Completion?) -> RDNAError {
        guard let name = flowName(for: api) else { return IDVError(.invalidArgument, "no flow is mapped for \(api)") }
        return request(api, completion: completion, check: { [self] _ in
            guard session?.loggedIn == true else { return IDVError(.unauthenticated, "\(api) needs a logged-in user") }
            if let ch = challenge { return IDVError(.flowInProgress, "\(ch.name) is waiting for an answer") }
            return nil
        }) { [self] tok in
            let body = try transport!.encode(WireFlowStart(payload: payload))
            let path = "/v1/flows/" + (name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)
            return absorb(try transport!.envelope("POST", path, body: body, token: tok), api: api)
        }
    }

    // MARK: Machinery

    /// Checks state under the lock (session exists, not busy, `check` passes), marks busy, then
    /// runs `body` on the work queue with the token. `body` errors become `onRequestFailed`.
    private func request(_ api: String, completion: Completion?, check: (WireChallenge?) -> RDNAError?,
                         _ body: @escaping @Sendable (String) throws -> [RDNAEvent]) -> RDNAError {
        let (tok, refused): (String?, RDNAError?) = lock.withLock {
            guard let token, transport != nil else { return (nil, IDVError(.notInitialized)) }
            if busy { return (nil, IDVError(.flowInProgress, "A request is in progress")) }
            if let e = check(challenge) { return (nil, e) }
            busy = true
            return (token, nil)
        }
        if let refused { return refused }
        work.async { [self] in
            var events: [RDNAEvent]
            do { events = try body(tok!) } catch { events = [.onRequestFailed(api: api, error: Self.idvError(error))] }
            finish(events, completion)
        }
        return .none
    }

    /// An answer to the current challenge: checks locally that `api` answers it (and the mode),
    /// then builds the payload on the work queue (captures run there) and posts it.
    private func answer(_ api: String, mode: RDNAChallengeOpMode?, completion: Completion?,
                        payload: @escaping @Sendable (WireChallenge) throws -> JSONValue) -> RDNAError {
        guard let answerable = WireMapping.answers[api] else { return IDVError(.internalError, "\(api) is not mapped") }
        return request(api, completion: completion, check: { ch in
            guard let ch else { return IDVError(.wrongChallenge, "No challenge is waiting for \(api)") }
            guard answerable.contains(ch.name) else { return IDVError(.wrongChallenge, "\(api) answers \(answerable[0]), but the server asks \(ch.name)") }
            if let mode, mode.rawValue != ch.challengeMode {
                return IDVError(.wrongChallenge, "\(ch.name) has challenge mode \(ch.challengeMode), not \(mode.rawValue)")
            }
            return nil
        }) { [self] tok in
            guard let ch = lock.withLock({ challenge }) else { return [] }
            return try send(WireAnswer(to: ch, payload: try payload(ch)), api: api, token: tok)
        }
    }

    /// `POST /v1/sessions`, bound to this install's device when an ``LDAProvider`` is set and usable.
    /// A stored `device_id` the server no longer knows (1025) is registered again, once.
    private func startSession() throws(IDVError) -> WireEnvelope {
        guard let t = lock.withLock({ transport }), let cfg = lock.withLock({ configuration }) else { throw IDVError(.notInitialized) }
        let provider = lock.withLock { ldaProvider }
        var device = try provider.flatMap { p throws(IDVError) in try deviceID(p, transport: t, server: cfg.serverURL, fresh: false) }
        var env = try t.envelope("POST", "/v1/sessions", body: try t.encode(WireSessionStart(deviceID: device, sdkVersion: cfg.sdkVersion)), token: nil)
        if env.isRefusal, env.error?.code == .invalidArgument, device != nil, let p = provider {
            device = try deviceID(p, transport: t, server: cfg.serverURL, fresh: true)
            env = try t.envelope("POST", "/v1/sessions", body: try t.encode(WireSessionStart(deviceID: device, sdkVersion: cfg.sdkVersion)), token: nil)
        }
        return env
    }

    /// This install's `device_id` at `server`: the stored one, or a new registration of the
    /// provider's public key (`POST /v1/devices` → 201 `{"device_id"}`). Nil when the provider
    /// cannot give a key (``lastLDAError`` says why) or the server refuses the key; the session
    /// then has no device and logins use the password. Network failures throw.
    private func deviceID(_ p: any LDAProvider, transport t: Transport, server: URL, fresh: Bool) throws(IDVError) -> String? {
        if !fresh, let stored = p.registeredDeviceID(server: server) { return stored }
        let key: Data
        do { key = try p.publicKey() } catch {
            lock.withLock { ldaError = error }
            return nil
        }
        let body = try t.encode(WireDeviceRegistration(publicKey: key.base64EncodedString(), label: "IDVKit \(IDVKit.version)"))
        let (status, data) = try t.send("POST", "/v1/devices", body: body, token: nil)
        guard status == 201, let dev = try? JSONDecoder().decode(WireDevice.self, from: data) else {
            let refusal = (try? JSONDecoder().decode(WireEnvelope.self, from: data))?.error
            lock.withLock { ldaError = .notAvailable("the server did not register the device key (HTTP \(status)\(refusal.map { ", \($0.longErrorCode)" } ?? ""))") }
            return nil
        }
        do { try p.saveRegisteredDeviceID(dev.deviceID, server: server) } catch { lock.withLock { ldaError = error } }
        return dev.deviceID
    }

    /// The provider's signature of `WireLDA.message(challengeID:nonce:)` for `ch` (the nonce is the
    /// base64 text of `payload.nonce`). LDA failures are kept in ``lastLDAError`` and thrown as
    /// their seed error (240 declined, 1025 otherwise).
    private func ldaSignature(_ p: any LDAProvider, _ ch: WireChallenge, purpose: LDAPurpose) throws(IDVError) -> Data {
        guard let nonce = ch.payload[WireMapping.Key.nonce]?.stringValue else {
            throw IDVError(.malformedRequest, "\(ch.name) carries no nonce")
        }
        do {
            let sig = try p.sign(message: WireLDA.message(challengeID: ch.challengeID, nonce: nonce), purpose: purpose)
            lock.withLock { ldaError = nil }
            return sig
        } catch {
            lock.withLock { ldaError = error }
            throw error.sdkError
        }
    }

    /// Takes an envelope into the SDK state and turns it into events. A refusal changes nothing.
    private func absorb(_ env: WireEnvelope, api: String) -> [RDNAEvent] {
        if env.isRefusal {
            let e = env.error ?? IDVError(.internalError)
            if e.code == .unauthenticated || e.code == .sessionExpired {
                lock.withLock { challenge = nil }   // the session is gone; initialize again
            }
            return [.onRequestFailed(api: api, error: e)]
        }
        lock.withLock {
            if let t = env.session?.token { token = t }
            if let s = env.session { session = s }
            if env.challenge != nil || env.event != nil { challenge = env.challenge }
        }
        var out: [RDNAEvent] = []
        if let ev = env.event { out.append(WireMapping.event(for: ev)) }
        if let ch = env.challenge {
            let firstAsk = ch.error == nil && (ch.status?.isSuccess ?? true)
            if ch.name == WireName.getDeviceSignature {
                out += answerDeviceSignature(ch)
            } else if firstAsk && ch.name == WireMapping.uploadIDVDocumentPages, let wf = WireMapping.workflow(ch) {
                out += autoUpload(ch, api: "documentCapture") { [self] () throws(IDVError) in try documentPayload(workflow: wf) }
            } else if firstAsk && ch.name == WireMapping.uploadIDVSelfieFrames, let wf = WireMapping.workflow(ch) {
                out += autoUpload(ch, api: "selfieCapture") { [self] () throws(IDVError) in try selfiePayload(workflow: wf) }
            } else {
                out.append(WireMapping.event(for: ch))
            }
        }
        return out
    }

    /// Posts an answer on the route its challenge needs and absorbs the reply.
    private func send(_ answer: WireAnswer, api: String, token tok: String) throws(IDVError) -> [RDNAEvent] {
        guard let t = lock.withLock({ transport }) else { throw IDVError(.notInitialized) }
        let route = WireMapping.route(for: answer.challenge)
        return absorb(try t.envelope("POST", route.rawValue, body: try t.encode(answer), token: tok), api: api)
    }

    /// Answers an upload challenge with the capture provider's images (first ask after a confirm).
    /// A failed capture is reported (1008) and the challenge stays open for the app's next confirm.
    private func autoUpload(_ ch: WireChallenge, api: String, _ payload: () throws(IDVError) -> JSONValue) -> [RDNAEvent] {
        guard let tok = lock.withLock({ token }) else { return [] }
        do {
            return try send(WireAnswer(to: ch, payload: try payload()), api: api, token: tok)
        } catch {
            return [.onRequestFailed(api: api, error: error)]
        }
    }

    /// `getDeviceSignature` (LDA) is answered by the SDK itself, never shown to the app: the
    /// ``LDAProvider`` signs after the presence check (`{"signature": b64}`; the server then logs
    /// in / re-authenticates, so `getPassword` is skipped). Without a provider, when the user
    /// declines, or when LDA is unavailable it answers `{"fallback": "password"}` and the server
    /// asks `getPassword` (seed 004: cancel/failure → password). A signature the server rejects
    /// comes back as `getPassword` with error 1023.
    private func answerDeviceSignature(_ ch: WireChallenge) -> [RDNAEvent] {
        guard let tok = lock.withLock({ token }) else { return [] }
        let provider = lock.withLock { ldaProvider }
        let purpose: LDAPurpose = [ChallengeOpMode.biometricOptIn.rawValue, ChallengeOpMode.biometricOptOut.rawValue].contains(ch.challengeMode)
            ? .reauthentication : .login
        var payload: JSONValue = [WireMapping.Key.fallback: "password"]
        if let provider, let sig = try? ldaSignature(provider, ch, purpose: purpose) {
            payload = [WireMapping.Key.signature: .string(sig.base64EncodedString())]
        }
        do {
            return try send(WireAnswer(to: ch, payload: payload), api: "deviceSignature", token: tok)
        } catch {
            return [.onRequestFailed(api: "deviceSignature", error: Self.idvError(error))]
        }
    }

    static func idvError(_ e: any Error) -> IDVError { (e as? IDVError) ?? IDVError(.internalError, "unexpected \(type(of: e))") }

    private func finish(_ events: [RDNAEvent], _ completion: Completion?) {
        let (queue, d) = lock.withLock { () -> (DispatchQueue, DelegateSet) in
            busy = false
            return (callbackQueue, delegates)
        }
        for e in events { eventSink.yield(e) }
        completion?(events)
        let box = DelegateBox(d)
        queue.async { for e in events { e.dispatch(to: box.set) } }
    }
}

/// Carries the (weak) delegate references to the callback queue.
private final class DelegateBox: @unchecked Sendable {
    let set: DelegateSet
    init(_ set: DelegateSet) { self.set = set }
}
