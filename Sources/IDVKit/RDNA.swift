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
/// call does not answer the current challenge, 1004 a post-login call before login, 1025 bad
/// argument or no capture provider). The real result arrives later as callbacks on the chosen
/// queue (the delegates below) and on ``events``; the ``asyncAPI`` offers the same calls as
/// `async` functions.
///
/// **Where errors arrive.** An asynchronous failure reaches `onRequestFailed(api, error)` and, as
/// the codelabs expect, the flow's own callback:
/// - a refused answer (the server changed nothing), a capture that failed (1008), an LDA step that
///   failed: the same challenge again, with the error where the callback has an `error` argument
///   (`getUser`, `getActivationCode`, `getPassword`, the consent) — and, for the five codelab
///   callbacks that have none, in their `response:error:` spelling and in ``challengeError``
///   (Delegates.swift: "The error of a challenge asked again");
/// - a network error (1028) or timeout (1029): the SDK asks the server where the session stands
///   (`GET /v1/session`) and delivers that (the same or the next challenge; the same one carries
///   the error); when the server cannot be reached, the same challenge again with the error;
/// - an `initiate…`/`check…` call that the server refuses or cannot be reached: the flow's terminal
///   event with the error (e.g. `onIDVActivatedCustomerKYCResponse(_, 400, 1022)`);
/// - an expired or revoked session (1003/1004) during a post-login flow: the flow's terminal event.
///
/// **A flow the app left.** The codelabs leave some screens without an SDK call (seed 000's KYC
/// selfie confirmation and consent Close only navigate back, §1.5/§1.6: "no event fires"). When the
/// app then starts another flow, the server ends the open one (240, audited `idv.superseded`) and
/// names its terminal event in the answer; IDVKit logs it and does not deliver it, so the app
/// never hears a "failed" result for a run it already left before the new flow's first callback.
///
/// **Missing callbacks.** When the app registered delegates (or core callbacks) but implements no
/// spelling of a callback a running flow needs — a challenge, a terminal event, `onInitializeError`
/// — the SDK logs it (``setLogHandler(_:)``) and reports `onRequestFailed(name, 1034)` at once. For a
/// challenge (other than `getUser`) it then ends the flow on the server (`resetAuthState`) and
/// delivers the end where the codelabs look: a post-login flow's terminal event with 1034 (status
/// 400), or `getUser` with 1034 before login. Calls made through ``asyncAPI`` return their events to
/// the caller and are never reported.
///
/// Thread-safe: calls may come from any thread; requests run one at a time on a private serial
/// queue; callbacks are delivered in order on the callback queue.
public final class RDNA: @unchecked Sendable {
    // @unchecked: the mutable state below is read and written under `lock`, or on the serial `work` queue.
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
    private var logHandler: (@Sendable (String) -> Void)?

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

    /// The delegates registered now (weak references), for tests.
    var registeredDelegates: DelegateSet { lock.withLock { delegates } }

    /// The document capture used after `setIDVDocumentScanProcessStartConfirmation(true, …)`.
    public func setDocumentCaptureProvider(_ p: (any DocumentCaptureProvider)?) { lock.withLock { documentProvider = p } }
    /// The eMRTD chip reading after each page capture (``FileChipReader`` on Linux, the app's NFC
    /// stack on a phone): it gets the server's chip challenge (``RDNAChipChallenge``) to have the chip
    /// sign (Active Authentication); its files and the signature travel beside the pages as `chip` and
    /// the server verifies them (docs/CHIP.md). nil (the default) or a provider returning nil: pages alone.
    public func setChipReaderProvider(_ p: (any ChipReaderProvider)?) { lock.withLock { chipProvider = p } }
    /// The selfie capture used after `setIDVSelfieProcessStartConfirmation(true, …)`.
    public func setSelfieCaptureProvider(_ p: (any SelfieCaptureProvider)?) { lock.withLock { selfieProvider = p } }

    /// The device key and presence check for LDA (``LDAProvider``). With one set, `initialize`
    /// registers the device (`POST /v1/devices`, once per server) and starts sessions bound to it;
    /// `setUserConsentForLDA(true)` enrols it and `getDeviceSignature` is answered with a signature
    /// (or the password fallback when the user declines or LDA is unavailable). Takes effect at the
    /// next `initialize`/`logOff`. Without one, LDA is off and logins use the password.
    public func setLDAProvider(_ p: (any LDAProvider)?) { lock.withLock { ldaProvider = p } }

    /// Where the SDK's log lines go (missing callbacks, abandoned flows): nil (the default) writes
    /// them to standard error. Lines carry callback names and codes only, never user data.
    public func setLogHandler(_ h: (@Sendable (String) -> Void)?) { lock.withLock { logHandler = h } }

    func log(_ line: String) {
        if let h = lock.withLock({ logHandler }) { h(line) } else { FileHandle.standardError.write(Data("IDVKit: \(line)\n".utf8)) }
    }

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
    /// The server's illumination challenge for the coming selfie capture (presence): set while the
    /// server asks `uploadIDVSelfieFrames` with `presence.illumination`, nil otherwise (presence off,
    /// a fallback, or another step). The SDK hands it to a ``SelfieCaptureProvider`` that can flash;
    /// an app may show ``RDNAIlluminationChallenge/photosensitivityWarning`` ahead.
    public var pendingIlluminationChallenge: RDNAIlluminationChallenge? {
        lock.withLock { challenge }.flatMap { $0.name == WireMapping.uploadIDVSelfieFrames ? RDNAIlluminationChallenge(payload: $0.payload) : nil }
    }
    /// The server's chip challenge for the coming document upload (``RDNAChipChallenge``): set while the
    /// server asks `uploadIDVDocumentPages` on a server that verifies chips, nil at every other step. The
    /// SDK hands it to the ``ChipReaderProvider``.
    public var pendingChipChallenge: RDNAChipChallenge? {
        lock.withLock { challenge }.flatMap { RDNAChipChallenge(payload: $0.payload) }
    }
    /// The server's request to read the chip after the pages (``RDNAChipReadRequest``): set while the server asks
    /// `readIDVDocumentChip`, nil at every other step. The SDK hands it to the ``ChipReaderAfterPages`` reader.
    public var pendingChipReadRequest: RDNAChipReadRequest? {
        lock.withLock { challenge }.flatMap { $0.name == WireName.readIDVDocumentChip ? RDNAChipReadRequest(payload: $0.payload) : nil }
    }
    public var isLoggedIn: Bool { lock.withLock { session?.loggedIn ?? false } }

    /// Why the challenge now waiting was asked again: the error of the previous answer — a refusal
    /// (e.g. 1020 an action not offered), a capture that failed (1008) or was rejected by the
    /// server (1031 no machine-readable zone, 1060–1065 a selfie too dark/blurred/…), a network
    /// failure (1028) or timeout (1029) — or code 0 on a first ask and when no challenge waits.
    /// The same value as the `error` of the challenge's callback; the five codelab callbacks
    /// without an error argument receive it in their `response:error:` spelling (Delegates.swift),
    /// and a screen that gets only the seed's spelling reads it here. The server's status on a
    /// re-ask (400 "The document is not valid; scan a valid document") is in
    /// ``currentChallenge``'s `status`.
    public var challengeError: RDNAError { lock.withLock { RDNAError(challenge?.error ?? .none) } }

    typealias Completion = @Sendable ([RDNAEvent]) -> Void

    // MARK: Core

    /// Starts a session with the server: `onInitialized` then `getUser` (or `onInitializeError`).
    /// Callbacks go to `callbackQueue` (main by default). Calling it again starts over.
    @discardableResult
    public func initialize(_ configuration: RDNAConfiguration, callbackQueue: DispatchQueue = .main) -> RDNAError {
        initialize(configuration, callbackQueue: callbackQueue, completion: nil)
    }

    /// Seed 003 L291's `rdna.initialize(relid, host: host, port: port)`: starts a session with the
    /// server at `host`:`port`, callbacks on the main queue (as ``initialize(_:callbackQueue:)``).
    ///
    /// - `relid`: the connection profile's agent identity (REL-ID's `agent_info`). OpenIDV servers
    ///   identify an app by its session, so IDVKit accepts it and does not send it.
    /// - `host`: a host name or address (`idv.example.com`, `127.0.0.1`, `::1`) — HTTPS — or a URL
    ///   with its scheme (`http://127.0.0.1` for a plain-HTTP `idvd` on loopback).
    /// - `port`: 1–65535.
    ///
    /// Sync errors: 1025 for an empty host, a URL that is not http(s), or a port out of range.
    @discardableResult
    public func initialize<Port: BinaryInteger>(_ relid: String, host: String, port: Port) -> RDNAError {
        guard let url = Self.serverURL(host: host, port: port) else {
            return RDNAError(.invalidArgument, "host must be a host name or an http(s) URL, and port 1–65535")
        }
        return initialize(RDNAConfiguration(serverURL: url), callbackQueue: .main)
    }

    /// The server ``initialize(_:host:port:)`` connects to: `https://host:port`, or
    /// `scheme://host:port` when `host` names its scheme (`http`/`https`); an IPv6 address gets its
    /// brackets. Nil for an empty host, another scheme, a path, a second port or a port outside 1–65535.
    public static func serverURL<Port: BinaryInteger>(host: String, port: Port) -> URL? {
        guard port >= 1, port <= 65535 else { return nil }
        let h = host.trimmingCharacters(in: .whitespaces)
        guard !h.isEmpty else { return nil }
        var c: URLComponents
        if h.contains("://") {
            guard let parsed = URLComponents(string: h), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  let name = parsed.host, !name.isEmpty, parsed.port == nil else { return nil }
            c = URLComponents()
            c.scheme = scheme
            c.host = name
        } else {
            guard !h.contains("/") else { return nil }
            c = URLComponents()
            c.scheme = "https"
            c.host = h.contains(":") && !h.hasPrefix("[") ? "[\(h)]" : h
        }
        c.port = Int(port)
        return c.url
    }

    func initialize(_ configuration: RDNAConfiguration, callbackQueue: DispatchQueue, completion: Completion?) -> RDNAError {
        guard let scheme = configuration.serverURL.scheme?.lowercased(), ["http", "https"].contains(scheme),
              configuration.serverURL.host != nil else {
            return RDNAError(.invalidArgument, "serverURL must be an http(s) URL with a host")
        }
        guard configuration.requestTimeout > 0 else { return RDNAError(.invalidArgument, "requestTimeout must be positive") }
        let refused: RDNAError? = lock.withLock {
            if busy { return RDNAError(.flowInProgress, "A request is in progress") }
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
                if env.isRefusal { events = [.onInitializeError(RDNAError(env.error ?? IDVError(.internalError)))] }
                else { events = [.onInitialized(sessionID: env.session?.sessionID ?? "")] + absorb(env, api: "initialize") }
            } catch { events = [.onInitializeError(RDNAError(Self.idvError(error)))] }
            finish(events, completion)
        }
        return .none
    }

    /// `setUser` answers `getUser`.
    @discardableResult
    public func setUser(_ userID: String) -> RDNAError { setUser(userID, completion: nil) }
    func setUser(_ userID: String, completion: Completion?) -> RDNAError {
        guard !userID.isEmpty else { return RDNAError(.invalidArgument, "the user id is empty") }
        return answer("setUser", mode: nil, completion: completion) { _ in WireMapping.payload(UserAnswer(userID: userID)) }
    }

    /// `setActivationCode` answers `getActivationCode`.
    @discardableResult
    public func setActivationCode(_ code: String) -> RDNAError { setActivationCode(code, completion: nil) }
    func setActivationCode(_ code: String, completion: Completion?) -> RDNAError {
        guard !code.isEmpty else { return RDNAError(.invalidArgument, "the activation code is empty") }
        return answer("setActivationCode", mode: nil, completion: completion) { _ in WireMapping.payload(ActivationCodeAnswer(activationCode: code)) }
    }

    /// `setPassword(_:challengeMode:)` answers `getPassword` of the same mode (0 verify, 1 set, 6/7 re-auth).
    @discardableResult
    public func setPassword(_ password: String, challengeMode: RDNAChallengeOpMode) -> RDNAError {
        setPassword(password, challengeMode: challengeMode, completion: nil)
    }
    func setPassword(_ password: String, challengeMode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        guard !password.isEmpty else { return RDNAError(.invalidArgument, "the password is empty") }
        return answer("setPassword", mode: challengeMode, completion: completion) { _ in WireMapping.payload(PasswordAnswer(password: password)) }
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
            guard let p else { return RDNAError(.invalidArgument, "LDA needs a device key: no LDAProvider is set") }
            guard device != nil else { return RDNAError(.invalidArgument, "LDA needs a registered device; this session has none") }
            return answer("setUserConsentForLDA", mode: nil, completion: completion) { [self] ch in
                WireMapping.payload(LDAConsentAnswer(consent: true, signature: try ldaSignature(p, ch, purpose: .enrol).base64EncodedString()))
            }
        }
        return answer("setUserConsentForLDA", mode: nil, completion: completion) { _ in WireMapping.payload(LDAConsentAnswer(consent: false)) }
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
                events += fresh.isRefusal ? [.onRequestFailed(api: "logOff", error: RDNAError(fresh.error ?? IDVError(.internalError)))] : absorb(fresh, api: "logOff")
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
        if isConfirm && provider == nil { return RDNAError(.invalidArgument, "no document capture provider is set") }
        return answer("setIDVDocumentScanProcessStartConfirmation", mode: nil, completion: completion) { [self] ch in
            if ch.name == WireName.readIDVDocumentChip {
                return isConfirm ? try chipPayload(workflow: idvWorkflow, request: RDNAChipReadRequest(payload: ch.payload)) : WireMapping.payload(CancelAnswer())
            }
            guard ch.name == WireMapping.uploadIDVDocumentPages else { return WireMapping.payload(ConfirmAnswer(isConfirm: isConfirm)) }
            return isConfirm ? try documentPayload(workflow: idvWorkflow, challenge: RDNAChipChallenge(payload: ch.payload)) : WireMapping.payload(CancelAnswer())
        }
    }

    /// `{"pages": …}` from the document capture provider, with `"chip": …` from the chip reader
    /// when one is set and reads a chip (1008 when either fails) — the reader gets the server's chip
    /// `challenge` for Active Authentication — or `{"cancel": true}` when the user left the capture
    /// (``CaptureError/cancelledByUser``).
    private func documentPayload(workflow: RDNAIDVWorkflow, challenge: RDNAChipChallenge?) throws(IDVError) -> JSONValue {
        let (p, chips) = lock.withLock { (documentProvider, chipProvider) }
        guard let provider = p else { throw IDVError(.invalidArgument, "no document capture provider is set") }
        let pages: [CapturedPage]
        do { pages = try provider.captureDocumentPages(workflow: workflow) }
        catch where error.isUserCancellation { return WireMapping.payload(CancelAnswer()) }
        catch { throw IDVError(.invalidImage, "document capture: \(error.message)") }
        // A reader keyed by the server reads after the pages (the server asks readIDVDocumentChip); only a server
        // that verifies chips (it issued a challenge) is asked to.
        if chips is any ChipReaderAfterPages, challenge != nil {
            return WireMapping.payload(WireMapping.documentAnswer(pages, chipFollows: true))
        }
        let chip: CapturedChip?
        do { chip = try chips?.readChip(workflow: workflow, challenge: challenge) } catch { throw IDVError(.invalidImage, "chip reading: \(error.message)") }
        return WireMapping.payload(WireMapping.documentAnswer(pages, chip: chip?.payload))
    }

    /// The `readIDVDocumentChip` answer: the chip files from the ``ChipReaderAfterPages`` reader given the server's
    /// request, `{"skip": true}` when none is set or it read no chip, `{"cancel": true}` when the user left.
    private func chipPayload(workflow: RDNAIDVWorkflow, request: RDNAChipReadRequest?) throws(IDVError) -> JSONValue {
        guard let reader = lock.withLock({ chipProvider }) as? any ChipReaderAfterPages, let request else {
            return WireMapping.payload(DocumentChipAnswer(chip: nil))
        }
        let chip: CapturedChip?
        do { chip = try reader.readChip(workflow: workflow, request: request) }
        catch where error.isUserCancellation { return WireMapping.payload(CancelAnswer()) }
        catch { throw IDVError(.invalidImage, "chip reading: \(error.message)") }
        return WireMapping.payload(DocumentChipAnswer(chip: chip?.payload))
    }

    /// `{"frames": …, "fps": …, "meta_data": …}` from the selfie capture provider (1008 when it
    /// fails), or `{"cancel": true}` when the user left the capture. Under an illumination challenge
    /// (``pendingIlluminationChallenge``): a provider that can flash captures with it and the frames'
    /// times go as `frame_times_ms`; one that cannot answers `{"presence": {"illumination":
    /// "unavailable"}}`, a person who declines `… "declined"` (the server asks again with its fallback).
    private func selfiePayload(workflow: RDNAIDVWorkflow) throws(IDVError) -> JSONValue {
        let (p, back) = lock.withLock { (selfieProvider, useBackCamera) }
        guard let provider = p else { throw IDVError(.invalidArgument, "no selfie capture provider is set") }
        let illumination = pendingIlluminationChallenge
        if illumination != nil, !provider.canFlashIllumination {
            return WireMapping.payload(SelfieFramesAnswer.declining(.unavailable))
        }
        let answer: SelfieFramesAnswer
        do {
            let selfie: CapturedSelfie
            if let illumination {
                selfie = try provider.captureSelfie(useBackCamera: back, workflow: workflow, challenge: pendingLivenessChallenge, illumination: illumination)
            } else {
                selfie = try provider.captureSelfie(useBackCamera: back, workflow: workflow, challenge: pendingLivenessChallenge)
            }
            answer = WireMapping.selfieAnswer(selfie, useBackCamera: back, underIllumination: illumination != nil)
        } catch where error == .illuminationDeclined {
            return WireMapping.payload(SelfieFramesAnswer.declining(.declined))
        } catch where error.isUserCancellation {
            return WireMapping.payload(CancelAnswer())
        } catch { throw IDVError(.invalidImage, "selfie capture: \(error.message)") }
        if let times = answer.frameTimesMs, times.count != answer.frames?.count {
            throw IDVError(.invalidImage, "selfie capture: \(times.count) frame times for \(answer.frames?.count ?? 0) frames")
        }
        return WireMapping.payload(answer)
    }

    /// A2: answers `getIDVConfirmDocumentDetails`: `true` confirms; `false` rescans in activation
    /// (mode 8) and is the cancel API in KYC (mode 9: the flow ends with 240, seed 000 L1265) — a
    /// Recapture button calls ``rescanIDVDocument(challenge:)``.
    @discardableResult
    public func setIDVConfirmDocumentDetails(_ isConfirm: Bool, challenge mode: RDNAChallengeOpMode) -> RDNAError {
        setIDVConfirmDocumentDetails(isConfirm, challenge: mode, completion: nil)
    }
    func setIDVConfirmDocumentDetails(_ isConfirm: Bool, challenge mode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        answer("setIDVConfirmDocumentDetails", mode: mode, completion: completion) { _ in WireMapping.payload(DocumentDetailsAnswer(isConfirm: isConfirm)) }
    }

    /// The details screen's **Recapture** (seed 000 L1821 "Recapture to rescan", seed 002 L2138):
    /// answers `getIDVConfirmDocumentDetails` with `{"is_confirm": false, "rescan": true}`; the
    /// server asks `getIDVDocumentScanProcessStartConfirmation` again while document attempts
    /// remain (then the flow ends with 1010). In mode 8 the same as
    /// `setIDVConfirmDocumentDetails(false, challenge: 8)`; in KYC (mode 9) that call is the Close
    /// button's cancel API (240, seed 000 L1265), so Recapture needs this one. Sync errors as
    /// ``setIDVConfirmDocumentDetails(_:challenge:)`` (1002 when the details are not waiting).
    @discardableResult
    public func rescanIDVDocument(challenge mode: RDNAChallengeOpMode) -> RDNAError { rescanIDVDocument(challenge: mode, completion: nil) }
    func rescanIDVDocument(challenge mode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        answer("rescanIDVDocument", mode: mode, completion: completion) { _ in
            WireMapping.payload(DocumentDetailsAnswer(isConfirm: false, rescan: true))
        }
    }

    /// Cancels the password dialog of biometric opt-in or opt-out (seed 004's
    /// `PasswordValidationDialogViewController.onCancel` → `handlePasswordCancel()`, L1197, whose
    /// body the codelab does not show): answers `getPassword` of mode 6 or 7 with
    /// `{"cancel": true}`; the flow ends with its terminal event (`onIDVBiometricOptInStatus` /
    /// `onIDVBiometricOptOutStatus`, error 240, status 400) and nothing changes on the server.
    /// Sync errors: 1025 for another mode (a login or activation password is left with
    /// ``resetAuthState()``), 1002 when no such `getPassword` is waiting.
    @discardableResult
    public func cancelPassword(challengeMode mode: RDNAChallengeOpMode) -> RDNAError { cancelPassword(challengeMode: mode, completion: nil) }
    func cancelPassword(challengeMode mode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        guard mode == .biometricOptIn || mode == .biometricOptOut else {
            return RDNAError(.invalidArgument, "only the opt-in/opt-out password (mode 6 or 7) can be cancelled; use resetAuthState for mode \(mode.rawValue)")
        }
        return answer("cancelPassword", mode: mode, completion: completion) { _ in WireMapping.payload(CancelAnswer()) }
    }

    /// A3: answers `getIDVSelfieProcessStartConfirmation`. With `true` the selfie provider runs and
    /// its frames are uploaded; `false` cancels.
    @discardableResult
    public func setIDVSelfieProcessStartConfirmation(_ isConfirm: Bool, useDeviceBackCamera: Bool, idvWorkflow: RDNAIDVWorkflow) -> RDNAError {
        setIDVSelfieProcessStartConfirmation(isConfirm, useDeviceBackCamera: useDeviceBackCamera, idvWorkflow: idvWorkflow, completion: nil)
    }
    func setIDVSelfieProcessStartConfirmation(_ isConfirm: Bool, useDeviceBackCamera: Bool, idvWorkflow: RDNAIDVWorkflow, completion: Completion?) -> RDNAError {
        let provider = lock.withLock { selfieProvider }
        if isConfirm && provider == nil { return RDNAError(.invalidArgument, "no selfie capture provider is set") }
        return answer("setIDVSelfieProcessStartConfirmation", mode: nil, completion: completion) { [self] ch in
            lock.withLock { useBackCamera = useDeviceBackCamera }
            guard ch.name == WireMapping.uploadIDVSelfieFrames else {
                return WireMapping.payload(SelfieStartAnswer(isConfirm: isConfirm, useBackCamera: useDeviceBackCamera))
            }
            return isConfirm ? try selfiePayload(workflow: idvWorkflow) : WireMapping.payload(CancelAnswer())
        }
    }

    /// A4: answers `getIDVSelfieConfirmation` with a server-offered action key
    /// (`continue-flow`, `reinit-idv-document-scan`, `reinit-idv-selfie`; `"true"` = continue).
    @discardableResult
    public func setIDVSelfieConfirmation(_ action: String, challenge mode: RDNAChallengeOpMode) -> RDNAError {
        setIDVSelfieConfirmation(action, challenge: mode, completion: nil)
    }
    func setIDVSelfieConfirmation(_ action: String, challenge mode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        guard !action.isEmpty else { return RDNAError(.invalidArgument, "the action key is empty") }
        return answer("setIDVSelfieConfirmation", mode: mode, completion: completion) { _ in WireMapping.payload(SelfieConfirmationActionAnswer(action: action)) }
    }

    /// A5: answers `getIDVBiometricOptInConsent` (either answer continues the flow).
    @discardableResult
    public func setIDVBiometricOptInConsent(_ isOptIn: Bool, challenge mode: RDNAChallengeOpMode) -> RDNAError {
        setIDVBiometricOptInConsent(isOptIn, challenge: mode, completion: nil)
    }
    func setIDVBiometricOptInConsent(_ isOptIn: Bool, challenge mode: RDNAChallengeOpMode, completion: Completion?) -> RDNAError {
        answer("setIDVBiometricOptInConsent", mode: mode, completion: completion) { _ in WireMapping.payload(OptInConsentAnswer(isOptIn: isOptIn)) }
    }

    /// Seed 004: answers `onIDVOptInCapturedFrameConfirmation`.
    @discardableResult
    public func setIDVBiometricOptInConfirmation(_ status: RDNAIDVStatus) -> RDNAError {
        setIDVBiometricOptInConfirmation(status, completion: nil)
    }
    func setIDVBiometricOptInConfirmation(_ status: RDNAIDVStatus, completion: Completion?) -> RDNAError {
        answer("setIDVBiometricOptInConfirmation", mode: nil, completion: completion) { _ in WireMapping.payload(FrameConfirmationAnswer(status: status.rawValue)) }
    }

    // MARK: Post-login initiations (seeds 000, 001, 003, 004)
    //
    // The seeds call them without an argument label (`rdna.initiateActivatedCustomerKYC(reason)`,
    // seed 000 L543; seed 001 L356; seed 003 L389); the labelled forms are Swift-style aliases.
    // Each starts a server flow (``WireMapping/flows``) on a logged-in session; a flow the app left
    // open (e.g. a KYC selfie confirmation closed without an SDK call, seed 000 §1.5) is the
    // server's to end when another starts.

    /// Seed 000: starts the post-login KYC (workflow 6, mode 9) → `onIDVActivatedCustomerKYCResponse`.
    @discardableResult
    public func initiateActivatedCustomerKYC(_ reason: String) -> RDNAError {
        startFlow("initiateActivatedCustomerKYC", WireMapping.payload(IDVFlowStartPayload(reason: reason)), completion: nil)
    }
    @discardableResult
    public func initiateActivatedCustomerKYC(reason: String) -> RDNAError { initiateActivatedCustomerKYC(reason) }

    /// Seed 003: starts the additional document scan (workflow 7, mode 10) → `onIDVAdditionalDocumentScan`.
    @discardableResult
    public func initiateIDVAdditionalDocumentScan(_ reason: String) -> RDNAError {
        startFlow("initiateIDVAdditionalDocumentScan", WireMapping.payload(IDVFlowStartPayload(reason: reason)), completion: nil)
    }
    @discardableResult
    public func initiateIDVAdditionalDocumentScan(reason: String) -> RDNAError { initiateIDVAdditionalDocumentScan(reason) }

    /// Seeds 001/004: asks whether the user has a biometric template → `onIDVCheckUserBiometricTemplateStatus` (100 / 600).
    @discardableResult
    public func checkIDVUserBiometricTemplateStatus() -> RDNAError { startFlow("checkIDVUserBiometricTemplateStatus", .emptyObject, completion: nil) }

    /// Seed 001: starts server biometric authentication (workflow 8, mode 25) → `onIDVServerBiometricAuthenticationResult`.
    @discardableResult
    public func initiateIDVServerBiometricAuthentication(_ reason: String) -> RDNAError {
        startFlow("initiateIDVServerBiometricAuthentication", WireMapping.payload(IDVFlowStartPayload(reason: reason)), completion: nil)
    }
    @discardableResult
    public func initiateIDVServerBiometricAuthentication(reason: String) -> RDNAError { initiateIDVServerBiometricAuthentication(reason) }

    /// Seed 004: starts the biometric opt-in (workflow 10, mode 6) → `onIDVBiometricOptInStatus`.
    @discardableResult
    public func initiateIDVBiometricOptIn() -> RDNAError { startFlow("initiateIDVBiometricOptIn", .emptyObject, completion: nil) }
    /// Seed 004: starts the biometric opt-out (workflow 11, mode 7) → `onIDVBiometricOptOutStatus`.
    @discardableResult
    public func initiateIDVBiometricOptOut() -> RDNAError { startFlow("initiateIDVBiometricOptOut", .emptyObject, completion: nil) }

    /// The flow name a seed initiation starts (configuration override or ``WireMapping/flows``).
    public func flowName(for api: String) -> String? {
        lock.withLock { configuration?.flowNames[api] } ?? WireMapping.flows[api]
    }

    func startFlow(_ api: String, _ payload: JSONValue, completion: Completion?) -> RDNAError {
        guard let name = flowName(for: api) else { return RDNAError(.invalidArgument, "no flow is mapped for \(api)") }
        return request(api, completion: completion, check: { [self] _ in
            guard session?.loggedIn == true else { return RDNAError(.unauthenticated, "\(api) needs a logged-in user") }
            return nil
        }) { [self] tok in
            let path = "/v1/flows/" + (name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)
            let env: WireEnvelope
            do {
                env = try transport!.envelope("POST", path, body: try transport!.encode(WireFlowStart(payload: payload)), token: tok)
            } catch {
                // The request may or may not have reached the server: ask where the session stands.
                let e = Self.idvError(error)
                if let now = resync(token: tok), now.challenge != nil || now.event != nil {
                    return [.onRequestFailed(api: api, error: RDNAError(e))] + absorb(now, api: api)
                }
                return [.onRequestFailed(api: api, error: RDNAError(e))] + flowFailed(api, e)
            }
            if env.isRefusal {
                let e = env.error ?? IDVError(.internalError)
                if e.code == .unauthenticated || e.code == .sessionExpired { lock.withLock { challenge = nil } }
                return [.onRequestFailed(api: api, error: RDNAError(e))] + flowFailed(api, e)
            }
            return absorb(env, api: api)
        }
    }

    /// The flow's terminal event carrying `e` (status 500 for network/timeouts/server failures,
    /// 400 otherwise), so the codelabs' result handlers hear it (``RDNA`` "Where errors arrive").
    private func flowFailed(_ api: String, _ e: IDVError) -> [RDNAEvent] {
        let code = [.networkError, .timeout, .internalError].contains(e.code) ? RequestStatus.failed : RequestStatus.unableToProcess
        let user = lock.withLock { session?.userID } ?? ""
        return WireMapping.terminalEvent(forAPI: api, error: RDNAError(e), status: RDNARequestStatus(statusCode: Int32(code), statusMessage: e.errorString),
                                         userID: user).map { [$0] } ?? []
    }

    // MARK: Machinery

    /// Checks state under the lock (session exists, not busy, `check` passes), marks busy, then
    /// runs `body` on the work queue with the token. `body` errors become `onRequestFailed`.
    private func request(_ api: String, completion: Completion?, check: (WireChallenge?) -> RDNAError?,
                         _ body: @escaping @Sendable (String) throws -> [RDNAEvent]) -> RDNAError {
        let (tok, refused): (String?, RDNAError?) = lock.withLock {
            guard let token, transport != nil else { return (nil, RDNAError(.notInitialized)) }
            if busy { return (nil, RDNAError(.flowInProgress, "A request is in progress")) }
            if let e = check(challenge) { return (nil, e) }
            busy = true
            return (token, nil)
        }
        if let refused { return refused }
        work.async { [self] in
            var events: [RDNAEvent]
            do { events = try body(tok!) } catch { events = [.onRequestFailed(api: api, error: RDNAError(Self.idvError(error)))] }
            finish(events, completion)
        }
        return .none
    }

    /// An answer to the current challenge: checks locally that `api` answers it (and the mode),
    /// then builds the payload on the work queue (captures run there) and posts it. A failure is
    /// delivered where the seeds look for it (``answerFailed(_:_:challenge:token:)``).
    private func answer(_ api: String, mode: RDNAChallengeOpMode?, completion: Completion?,
                        payload: @escaping @Sendable (WireChallenge) throws -> JSONValue) -> RDNAError {
        guard let answerable = WireMapping.answers[api] else { return RDNAError(.internalError, "\(api) is not mapped") }
        return request(api, completion: completion, check: { ch in
            guard let ch else { return RDNAError(.wrongChallenge, "No challenge is waiting for \(api)") }
            guard answerable.contains(ch.name) else { return RDNAError(.wrongChallenge, "\(api) answers \(answerable[0]), but the server asks \(ch.name)") }
            if let mode, mode.rawValue != ch.challengeMode {
                return RDNAError(.wrongChallenge, "\(ch.name) has challenge mode \(ch.challengeMode), not \(mode.rawValue)")
            }
            return nil
        }) { [self] tok in
            guard let ch = lock.withLock({ challenge }) else { return [] }
            do {
                return try send(WireAnswer(to: ch, payload: try payload(ch)), api: api, token: tok)
            } catch {
                return answerFailed(api, Self.idvError(error), challenge: ch, token: tok)
            }
        }
    }

    /// An answer that could not be made or carried (capture, LDA, network, timeout): network
    /// failures first ask the server where the session stands; otherwise the challenge is still
    /// open and comes again with the error.
    private func answerFailed(_ api: String, _ e: IDVError, challenge ch: WireChallenge, token tok: String, resync allowed: Bool = true) -> [RDNAEvent] {
        let failed = RDNAEvent.onRequestFailed(api: api, error: RDNAError(e))
        if allowed, e.code == .networkError || e.code == .timeout, let now = resync(token: tok), !now.isRefusal {
            let events = absorb(now, api: api, resync: false)
            // The answer never arrived: the same challenge is shown again, saying why.
            if now.challenge?.challengeID == ch.challengeID, now.challenge?.error == nil { attach(e, to: ch.challengeID) }
            return [failed] + events
        }
        return [failed] + again(ch, e)
    }

    /// A refused answer (nothing changed on the server): the same challenge again with the error;
    /// a stale challenge (1002/1005) first asks the server for the current one; a session that is
    /// gone (1003/1004) ends a post-login flow with its terminal event.
    private func answerRefused(_ api: String, _ e: IDVError, challenge ch: WireChallenge, token tok: String?, resync allowed: Bool) -> [RDNAEvent] {
        let failed = RDNAEvent.onRequestFailed(api: api, error: RDNAError(e))
        switch e.code {
        case .unauthenticated?, .sessionExpired?:
            lock.withLock { challenge = nil }   // the session is gone; initialize again
            return [failed] + (WireMapping.postLoginAPI(of: ch).map { flowFailed($0, e) } ?? [])
        case .wrongChallenge?, .replayedAnswer?:
            if allowed, let tok, let now = resync(token: tok), !now.isRefusal { return [failed] + absorb(now, api: api, resync: false) }
            return [failed]
        case .analysisBusy?, .analysisInProgress?, .uploadTooCostly?:
            // The server was busy (1100/1101: its error_string says after how many seconds to retry)
            // or the capture is too large to analyse (1102): nothing changed there, the upload
            // challenge comes back with the error so the app captures or sends again.
            return [failed] + again(ch, e)
        default:
            return [failed] + again(ch, e)
        }
    }

    /// `ch` delivered again with `e` as its error (the callback shows it where it has an error argument).
    private func again(_ ch: WireChallenge, _ e: IDVError) -> [RDNAEvent] {
        var c = ch
        c.error = e
        if c.name == WireName.getDeviceSignature { return [] }
        attach(e, to: ch.challengeID)
        return [WireMapping.event(for: c)]
    }

    /// Records `e` as the error of the waiting challenge when it is still `challengeID` (what
    /// ``challengeError`` and the callbacks' `response:error:` spellings report).
    private func attach(_ e: IDVError, to challengeID: String) {
        lock.withLock { if challenge?.challengeID == challengeID { challenge?.error = e } }
    }

    /// `GET /v1/session`: the session and its current challenge as the server sees them; nil when
    /// the server cannot be reached (or answers something else than an envelope).
    private func resync(token tok: String) -> WireEnvelope? {
        guard let t = lock.withLock({ transport }) else { return nil }
        return try? t.envelope("GET", "/v1/session", body: nil, token: tok)
    }

    /// `POST /v1/sessions`, bound to this install's device when an ``LDAProvider`` is set and usable.
    /// A stored `device_id` the server no longer knows (1120; 1025 from servers before it) is registered again, once.
    private func startSession() throws(IDVError) -> WireEnvelope {
        guard let t = lock.withLock({ transport }), let cfg = lock.withLock({ configuration }) else { throw IDVError(.notInitialized) }
        let provider = lock.withLock { ldaProvider }
        var device = try provider.flatMap { p throws(IDVError) in try deviceID(p, transport: t, server: cfg.serverURL, fresh: false) }
        var env = try t.envelope("POST", "/v1/sessions", body: try t.encode(WireSessionStart(deviceID: device, sdkVersion: cfg.sdkVersion)), token: nil)
        if env.isRefusal, env.error?.code == .deviceNotFound || env.error?.code == .invalidArgument, device != nil, let p = provider {
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
        guard let nonce = try? ch.payload.decode(LDAChallengePayload.self).nonce else {
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

    /// Takes an envelope into the SDK state and turns it into events. A refusal changes nothing
    /// (``answerRefused(_:_:challenge:token:resync:)`` decides what the app hears).
    private func absorb(_ env: WireEnvelope, api: String, answering asked: WireChallenge? = nil, resync allowed: Bool = true) -> [RDNAEvent] {
        if env.isRefusal {
            let e = env.error ?? IDVError(.internalError)
            if let asked { return answerRefused(api, e, challenge: asked, token: lock.withLock { token }, resync: allowed) }
            if e.code == .unauthenticated || e.code == .sessionExpired {
                lock.withLock { challenge = nil }   // the session is gone; initialize again
            }
            return [.onRequestFailed(api: api, error: RDNAError(e))]
        }
        lock.withLock {
            if let t = env.session?.token { token = t }
            if let s = env.session { session = s }
            if env.challenge != nil || env.event != nil { challenge = env.challenge }
        }
        var out: [RDNAEvent] = []
        if let ended = env.ended {
            // A flow the app left without an SDK call (seed 000 §1.5/§1.6), ended by the server as
            // this request started another: not delivered (``RDNA`` "A flow the app left").
            log("the server ended a flow the app had left open (\(ended.name), \(ended.error.longErrorCode)) as \(api) started another; not delivered")
        }
        if let ev = env.event { out.append(WireMapping.event(for: ev)) }
        if let ch = env.challenge {
            let firstAsk = ch.error == nil && (ch.status?.isSuccess ?? true)
            if ch.name == WireName.getDeviceSignature {
                out += answerDeviceSignature(ch)
            } else if firstAsk && ch.name == WireMapping.uploadIDVDocumentPages, let wf = WireMapping.workflow(ch) {
                out += autoUpload(ch, api: "documentCapture") { [self] () throws(IDVError) in
                    try documentPayload(workflow: wf, challenge: RDNAChipChallenge(payload: ch.payload))
                }
            } else if firstAsk && ch.name == WireName.readIDVDocumentChip, let wf = WireMapping.workflow(ch) {
                out += autoUpload(ch, api: "chipRead") { [self] () throws(IDVError) in
                    try chipPayload(workflow: wf, request: RDNAChipReadRequest(payload: ch.payload))
                }
            } else if firstAsk && ch.name == WireMapping.uploadIDVSelfieFrames && !Self.fallbackNeedsInstructions(ch),
                      let wf = WireMapping.workflow(ch) {
                out += autoUpload(ch, api: "selfieCapture") { [self] () throws(IDVError) in try selfiePayload(workflow: wf) }
            } else {
                out.append(WireMapping.event(for: ch))
            }
        }
        return out
    }

    /// Whether `ch` is presence's head-movement fallback (`presence.fallback = active` with a
    /// `liveness_challenge`: the server's ask after the client could not flash or the person declined
    /// the flashing). The person must be told the actions before the capture, so it goes to the app as
    /// the selfie start screen (`getIDVSelfieProcessStartConfirmation`, ``pendingLivenessChallenge``
    /// set) and is captured when the app confirms, not at once.
    static func fallbackNeedsInstructions(_ ch: WireChallenge) -> Bool {
        PresenceChallengePayload(payload: ch.payload)?.fallback == .active && RDNALivenessChallenge(payload: ch.payload) != nil
    }

    /// Posts an answer on the route its challenge needs and absorbs the reply (a refusal comes back
    /// as the same challenge with the error, see ``answerRefused(_:_:challenge:token:resync:)``).
    private func send(_ answer: WireAnswer, api: String, token tok: String, resync allowed: Bool = true) throws(IDVError) -> [RDNAEvent] {
        guard let t = lock.withLock({ transport }), let asked = lock.withLock({ challenge }) else { throw IDVError(.notInitialized) }
        let route = WireMapping.route(for: answer.challenge)
        return absorb(try t.envelope("POST", route.rawValue, body: try t.encode(answer), token: tok), api: api, answering: asked, resync: allowed)
    }

    /// Answers an upload challenge with the capture provider's images (first ask after a confirm).
    /// A failed capture is reported (1008) and the start challenge comes again (the upload
    /// challenge stays open; the app's next confirm captures again).
    private func autoUpload(_ ch: WireChallenge, api: String, _ payload: () throws(IDVError) -> JSONValue) -> [RDNAEvent] {
        guard let tok = lock.withLock({ token }) else { return [] }
        do {
            return try send(WireAnswer(to: ch, payload: try payload()), api: api, token: tok, resync: false)
        } catch {
            return answerFailed(api, error, challenge: ch, token: tok, resync: false)
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
        var payload = WireMapping.payload(DeviceSignatureAnswer.fallbackToPassword)
        if let provider, let sig = try? ldaSignature(provider, ch, purpose: purpose) {
            payload = WireMapping.payload(DeviceSignatureAnswer(signature: sig.base64EncodedString()))
        }
        do {
            return try send(WireAnswer(to: ch, payload: payload), api: "deviceSignature", token: tok, resync: false)
        } catch {
            return [.onRequestFailed(api: "deviceSignature", error: RDNAError(error))]
        }
    }

    static func idvError(_ e: any Error) -> IDVError {
        if let e = e as? IDVError { return e }
        if let e = e as? RDNAError { return e.idvError }
        return IDVError(.internalError, "unexpected \(type(of: e))")
    }

    private func finish(_ events: [RDNAEvent], _ completion: Completion?) {
        let (queue, d, waiting) = lock.withLock { () -> (DispatchQueue, DelegateSet, WireChallenge?) in
            busy = false
            return (callbackQueue, delegates, challenge)
        }
        for e in events { eventSink.yield(e) }
        completion?(events)
        let box = DelegateBox(d)
        let report = completion == nil && d.any
        // The response and error of the waiting challenge, for the callbacks' `response:error:` spellings.
        let context = waiting.map { (response: WireMapping.response($0), error: WireMapping.err($0)) }
        queue.async { [self] in
            for e in events where !e.dispatch(to: box.set, challenge: e.isChallenge ? context : nil) && report && e.needsApp {
                unhandled(e, box.set)
            }
        }
    }

    // MARK: Missing callbacks

    /// A callback a running flow needs that the app implements in no spelling: log it, report it
    /// (`onRequestFailed(name, 1034)`) and, for a challenge other than `getUser`, end the flow on
    /// the server and deliver the end where the codelabs look (``RDNA`` "Missing callbacks").
    /// Runs on the callback queue.
    private func unhandled(_ e: RDNAEvent, _ d: DelegateSet) {
        let spellings = e.callbackSpellings.joined(separator: " or ")
        let err = RDNAError(.callbackNotImplemented, "The app does not implement \(spellings), which the running flow needs (\(e.name))")
        log("\(e.name) arrived but the app implements none of \(spellings); reported as onRequestFailed 1034")
        let report = RDNAEvent.onRequestFailed(api: e.name, error: err)
        eventSink.yield(report)
        _ = report.dispatch(to: d)
        guard e.isChallenge else { return }
        if case .getUser = e { return }
        let asked = lock.withLock { challenge }
        let refused = request("resetAuthState", completion: nil, check: { _ in nil }) { [self] tok in
            let env = try transport!.envelope("POST", "/v1/session/reset", body: Data("{}".utf8), token: tok)
            var events = absorb(env, api: "resetAuthState")
            guard !env.isRefusal else { return events }
            if let asked, let api = WireMapping.postLoginAPI(of: asked) {
                log("ended the \(api) flow (\(e.name) has no callback in the app); delivering its terminal event with 1034")
                events.removeAll { if case .onAuthStateReset = $0 { return true } else { return false } }
                events += WireMapping.terminalEvent(forAPI: api, error: err, status: RDNARequestStatus(statusCode: Int32(RequestStatus.unableToProcess),
                                                                                                      statusMessage: err.errorString),
                                                    userID: lock.withLock { session?.userID } ?? "").map { [$0] } ?? []
            } else {
                log("ended the flow before login (\(e.name) has no callback in the app); delivering getUser with 1034")
                events = events.map { if case let .getUser(r, _) = $0 { return .getUser(response: r, error: err) } else { return $0 } }
            }
            return events
        }
        if !refused.isSuccess { log("could not end the flow after \(e.name): \(refused.longErrorCode)") }
    }
}

/// Carries the (weak) delegate references to the callback queue.
private final class DelegateBox: @unchecked Sendable {
    // @unchecked: immutable; the delegates it carries are called on the callback queue only.
    let set: DelegateSet
    init(_ set: DelegateSet) { self.set = set }
}
