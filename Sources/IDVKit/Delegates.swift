import Foundation

// The seeds' delegate protocols. Every method has an empty default, so an app implements only the
// callbacks it uses (the seeds' "stubs"). Callbacks arrive on the queue given to
// `RDNA.initialize(…, callbackQueue:)` (main by default), one at a time, in server order.

/// The core (MFA) callbacks: REL-ID's `RDNACallbacks`.
public protocol RDNACallbacks: AnyObject {
    func onInitialized(_ sessionID: String)
    func onInitializeError(_ error: RDNAError)
    func getUser(_ response: RDNAChallengeResponse, error: RDNAError)
    func getActivationCode(_ userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError)
    func getPassword(_ userID: String, challengeMode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError)
    func getUserConsentForLDA(_ userID: String, response: RDNAChallengeResponse)
    func onUserLoggedIn(_ userID: String, sessionID: String, deviceID: String?)
    func onUserLoggedOff(_ userID: String?)
    func onAuthStateReset()
    /// A refusal (the server changed nothing), a network error (1028), a timeout (1029) or a
    /// capture failure (1008): `api` is the seed call that caused it.
    func onRequestFailed(_ api: String, error: RDNAError)
    /// A challenge or event unknown to this SDK version.
    func onUnknownEvent(_ name: String, payloadJSON: String)
}

extension RDNACallbacks {
    public func onInitialized(_ sessionID: String) {}
    public func onInitializeError(_ error: RDNAError) {}
    public func getUser(_ response: RDNAChallengeResponse, error: RDNAError) {}
    public func getActivationCode(_ userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) {}
    public func getPassword(_ userID: String, challengeMode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) {}
    public func getUserConsentForLDA(_ userID: String, response: RDNAChallengeResponse) {}
    public func onUserLoggedIn(_ userID: String, sessionID: String, deviceID: String?) {}
    public func onUserLoggedOff(_ userID: String?) {}
    public func onAuthStateReset() {}
    public func onRequestFailed(_ api: String, error: RDNAError) {}
    public func onUnknownEvent(_ name: String, payloadJSON: String) {}
}

/// Seed 002 §4.2 `RDNAIDVDocumentProcessingCallbacks`.
public protocol RDNAIDVDocumentProcessingCallbacks: AnyObject {
    func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow)
    func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode)
    func onIDVAdditionalDocumentScan(_ userID: String, documentDetails: String, status: RDNARequestStatus, challenge mode: RDNAChallengeOpMode, error: RDNAError)
}

extension RDNAIDVDocumentProcessingCallbacks {
    public func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow) {}
    public func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode) {}
    public func onIDVAdditionalDocumentScan(_ userID: String, documentDetails: String, status: RDNARequestStatus, challenge mode: RDNAChallengeOpMode, error: RDNAError) {}
}

/// Seed 002 §4.2 `RDNAIDVSelfieProcessingCallbacks`.
public protocol RDNAIDVSelfieProcessingCallbacks: AnyObject {
    func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow)
    func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode)
}

extension RDNAIDVSelfieProcessingCallbacks {
    public func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow) {}
    public func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode) {}
}

/// Seed 002/001/004 `RDNAIDVBiometricManagementCallbacks`.
public protocol RDNAIDVBiometricManagementCallbacks: AnyObject {
    func getIDVBiometricOptInConsent(_ userID: String, response: RDNAChallengeResponse, challenge mode: RDNAChallengeOpMode, error: RDNAError)
    func onIDVCheckUserBiometricTemplateStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError)
    func onIDVServerBiometricAuthenticationResult(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError)
    func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String)
    func onIDVBiometricOptInStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError)
    func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError)
}

extension RDNAIDVBiometricManagementCallbacks {
    public func getIDVBiometricOptInConsent(_ userID: String, response: RDNAChallengeResponse, challenge mode: RDNAChallengeOpMode, error: RDNAError) {}
    public func onIDVCheckUserBiometricTemplateStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) {}
    public func onIDVServerBiometricAuthenticationResult(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) {}
    public func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String) {}
    public func onIDVBiometricOptInStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError) {}
    public func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError) {}
}

/// Seed 000 `RDNAIDVKYCManagementCallbacks`.
public protocol RDNAIDVKYCManagementCallbacks: AnyObject {
    func onIDVActivatedCustomerKYCResponse(_ userID: String, status: RDNARequestStatus, error: RDNAError)
}

extension RDNAIDVKYCManagementCallbacks {
    public func onIDVActivatedCustomerKYCResponse(_ userID: String, status: RDNARequestStatus, error: RDNAError) {}
}

/// The registered delegates (weak), read on the callback queue.
struct DelegateSet {
    weak var core: (any RDNACallbacks)?
    weak var document: (any RDNAIDVDocumentProcessingCallbacks)?
    weak var selfie: (any RDNAIDVSelfieProcessingCallbacks)?
    weak var biometric: (any RDNAIDVBiometricManagementCallbacks)?
    weak var kyc: (any RDNAIDVKYCManagementCallbacks)?
}
