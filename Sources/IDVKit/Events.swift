import Foundation

/// Every callback the SDK can deliver, as one typed value. The delegate API receives these as the
/// seeds' protocol methods (``RDNAEvent/dispatch(to:)`` in WireMapping.swift); the async API
/// returns them and publishes them on ``RDNA/events``.
///
/// Challenges (`get…`) wait for the app's answer through the matching `set…` call; notifications
/// (`on…`) need no answer.
public enum RDNAEvent: Sendable, Equatable {
    // MARK: Core (REL-ID MFA)
    /// `initialize` finished: a session exists on the server (public, non-secret `sessionID`).
    case onInitialized(sessionID: String)
    /// `initialize` failed (network, refusal); nothing is running.
    case onInitializeError(RDNAError)
    /// `getUser`: the server asks who the user is. `error` says why a previous attempt ended
    /// (e.g. 1016 unknown user, 1011 locked, 146 IDV cancelled); 0 on a first ask.
    case getUser(response: RDNAChallengeResponse, error: RDNAError)
    /// `getActivationCode` for `userID`, with the attempts the code has left.
    case getActivationCode(userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError)
    /// `getPassword`: mode 1 set (activation), 0 verify (login), 6/7 re-authentication for
    /// biometric opt-in/opt-out. After a wrong password it comes again with fewer `attemptsLeft`
    /// (−1 = no limit) and `error` 1014; a policy refusal carries 1015.
    case getPassword(userID: String, challengeMode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError)
    /// `getUserConsentForLDA`: enable local device authentication on this device?
    case getUserConsentForLDA(userID: String, response: RDNAChallengeResponse)
    /// Login succeeded (activation or returning user).
    case onUserLoggedIn(userID: String, sessionID: String, deviceID: String?)
    /// The session was logged off; a fresh session and `getUser` follow.
    case onUserLoggedOff(userID: String?)
    /// `resetAuthState` on a logged-in session ended the flow in progress (the session stays logged in).
    case onAuthStateReset
    /// A request was refused by the server (nothing changed there) or could not be carried out
    /// (1028 network, 1029 timeout, 1008 capture): `api` names the seed call that caused it. The
    /// current challenge, if any, is still open.
    case onRequestFailed(api: String, error: RDNAError)

    // MARK: IDV document processing (RDNAIDVDocumentProcessingCallbacks)
    case getIDVDocumentScanProcessStartConfirmation(idvWorkflow: RDNAIDVWorkflow)
    /// `documentDetails`: seed 002 §6.1 JSON (``DocumentDetails``).
    case getIDVConfirmDocumentDetails(documentDetails: String, challengeMode: RDNAChallengeOpMode)
    /// Seed 003 result: `documentDetails` is the ``AdditionalDocumentScanDetails`` JSON.
    case onIDVAdditionalDocumentScan(userID: String, documentDetails: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError)

    // MARK: IDV selfie processing (RDNAIDVSelfieProcessingCallbacks)
    case getIDVSelfieProcessStartConfirmation(idvWorkflow: RDNAIDVWorkflow)
    /// `selfieDetails`: the inner object of seed 002 §6.2 (``SelfieDetails``).
    case getIDVSelfieConfirmation(selfieDetails: String, challengeMode: RDNAChallengeOpMode)

    // MARK: IDV biometric management (RDNAIDVBiometricManagementCallbacks)
    case getIDVBiometricOptInConsent(userID: String, response: RDNAChallengeResponse, challengeMode: RDNAChallengeOpMode, error: RDNAError)
    /// Seed 004/001: `status` 100 template exists, 600 none; `idvResponse` the JSON body.
    case onIDVCheckUserBiometricTemplateStatus(userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError)
    case onIDVServerBiometricAuthenticationResult(userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Seed 004: the captured frame (base64 JPEG) to approve, recapture or cancel.
    case onIDVOptInCapturedFrameConfirmation(capturedImage: String)
    case onIDVBiometricOptInStatus(userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError)
    case onIDVBiometricOptOutStatus(userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError)

    // MARK: IDV KYC management (RDNAIDVKYCManagementCallbacks)
    case onIDVActivatedCustomerKYCResponse(userID: String, status: RDNARequestStatus, error: RDNAError)

    // MARK: Anything else
    /// A challenge or event this SDK version does not know (name as sent by the server); the app
    /// can show it, and ``RDNA/resetAuthState()`` leaves it.
    case unknown(name: String, payloadJSON: String)

    /// The seed callback name of this event (e.g. `getPassword`, `onUserLoggedIn`).
    public var name: String {
        switch self {
        case .onInitialized: return "onInitialized"
        case .onInitializeError: return "onInitializeError"
        case .getUser: return WireName.getUser
        case .getActivationCode: return WireName.getActivationCode
        case .getPassword: return WireName.getPassword
        case .getUserConsentForLDA: return WireName.getUserConsentForLDA
        case .onUserLoggedIn: return WireName.onUserLoggedIn
        case .onUserLoggedOff: return WireName.onUserLoggedOff
        case .onAuthStateReset: return WireName.onAuthStateReset
        case .onRequestFailed: return "onRequestFailed"
        case .getIDVDocumentScanProcessStartConfirmation: return WireName.getIDVDocumentScanProcessStartConfirmation
        case .getIDVConfirmDocumentDetails: return WireName.getIDVConfirmDocumentDetails
        case .onIDVAdditionalDocumentScan: return IDVEventName.onIDVAdditionalDocumentScan
        case .getIDVSelfieProcessStartConfirmation: return WireName.getIDVSelfieProcessStartConfirmation
        case .getIDVSelfieConfirmation: return WireName.getIDVSelfieConfirmation
        case .getIDVBiometricOptInConsent: return WireName.getIDVBiometricOptInConsent
        case .onIDVCheckUserBiometricTemplateStatus: return IDVEventName.onIDVCheckUserBiometricTemplateStatus
        case .onIDVServerBiometricAuthenticationResult: return IDVEventName.onIDVServerBiometricAuthenticationResult
        case .onIDVOptInCapturedFrameConfirmation: return IDVEventName.onIDVOptInCapturedFrameConfirmation
        case .onIDVBiometricOptInStatus: return IDVEventName.onIDVBiometricOptInStatus
        case .onIDVBiometricOptOutStatus: return IDVEventName.onIDVBiometricOptOutStatus
        case .onIDVActivatedCustomerKYCResponse: return IDVEventName.onIDVActivatedCustomerKYCResponse
        case let .unknown(name, _): return name
        }
    }

    /// The callback's error (0 when the callback carries none).
    public var error: RDNAError {
        switch self {
        case let .onInitializeError(e), let .onRequestFailed(_, e): return e
        case let .getUser(_, e), let .getActivationCode(_, _, _, e), let .getPassword(_, _, _, _, e): return e
        case let .onIDVAdditionalDocumentScan(_, _, _, _, e), let .getIDVBiometricOptInConsent(_, _, _, e): return e
        case let .onIDVCheckUserBiometricTemplateStatus(_, _, _, e), let .onIDVServerBiometricAuthenticationResult(_, _, _, e): return e
        case let .onIDVBiometricOptInStatus(_, _, _, _, e), let .onIDVBiometricOptOutStatus(_, _, _, _, e): return e
        case let .onIDVActivatedCustomerKYCResponse(_, _, e): return e
        default: return .none
        }
    }

    /// The callback's request status, when it carries one.
    public var status: RDNARequestStatus? {
        switch self {
        case let .onIDVAdditionalDocumentScan(_, _, s, _, _), let .onIDVCheckUserBiometricTemplateStatus(_, _, s, _),
             let .onIDVServerBiometricAuthenticationResult(_, _, s, _), let .onIDVBiometricOptInStatus(_, _, s, _, _),
             let .onIDVBiometricOptOutStatus(_, _, s, _, _), let .onIDVActivatedCustomerKYCResponse(_, s, _):
            return s
        case let .getUser(r, _), let .getActivationCode(_, _, r, _), let .getPassword(_, _, _, r, _),
             let .getIDVBiometricOptInConsent(_, r, _, _), let .getUserConsentForLDA(_, r):
            return r.status
        default: return nil
        }
    }

    /// True for the challenges the app must answer.
    public var isChallenge: Bool {
        switch self {
        case .getUser, .getActivationCode, .getPassword, .getUserConsentForLDA, .getIDVDocumentScanProcessStartConfirmation,
             .getIDVConfirmDocumentDetails, .getIDVSelfieProcessStartConfirmation, .getIDVSelfieConfirmation,
             .getIDVBiometricOptInConsent, .onIDVOptInCapturedFrameConfirmation:
            return true
        default: return false
        }
    }

    /// True for the events that end a flow (login, or an IDV flow's result).
    public var isTerminal: Bool {
        switch self {
        case .onUserLoggedIn, .onIDVAdditionalDocumentScan, .onIDVCheckUserBiometricTemplateStatus, .onIDVServerBiometricAuthenticationResult,
             .onIDVBiometricOptInStatus, .onIDVBiometricOptOutStatus, .onIDVActivatedCustomerKYCResponse:
            return true
        default: return false
        }
    }

    /// True when a running flow waits for the app to hear this callback: every challenge, every
    /// terminal event, and `onInitializeError` (nothing runs after it). An app using the delegate
    /// API that implements no spelling of such a callback is told at once (``RDNA``).
    public var needsApp: Bool {
        if isChallenge || isTerminal { return true }
        if case .onInitializeError = self { return true }
        return false
    }
}

/// Names of the IDV terminal/notification events on the wire: the seeds' `on…` callback names
/// (the server's workflow engine sends them as ``WireEvent/name``; the opt-in frame review is a
/// challenge of that name because it needs an answer). Declared once in IDVCore (``WireName``).
public enum IDVEventName {
    public static let onIDVActivatedCustomerKYCResponse = WireName.onIDVActivatedCustomerKYCResponse
    public static let onIDVAdditionalDocumentScan = WireName.onIDVAdditionalDocumentScan
    public static let onIDVCheckUserBiometricTemplateStatus = WireName.onIDVCheckUserBiometricTemplateStatus
    public static let onIDVServerBiometricAuthenticationResult = WireName.onIDVServerBiometricAuthenticationResult
    public static let onIDVOptInCapturedFrameConfirmation = WireName.onIDVOptInCapturedFrameConfirmation
    public static let onIDVBiometricOptInStatus = WireName.onIDVBiometricOptInStatus
    public static let onIDVBiometricOptOutStatus = WireName.onIDVBiometricOptOutStatus
}
