import Foundation

// The seeds' delegate protocols, with every method the five codelabs declare (seed 002 L618–L828
// lists the four IDV protocols in full; seeds 000, 001, 003 and 004 add their own spellings).
//
// Every method has a default, so an app implements only the callbacks it uses (the seeds' "stubs").
// The default is not silent: it tells the SDK that the app does not implement the callback. Where
// the codelabs spell one callback two ways (seed 002's Objective-C-style `getIDVBiometricOpt(inConsent:…)`
// and IDVKit's `getIDVBiometricOptInConsent(_:…)`; seed 004's `onIDVBiometricOptInStatus(…challengeMode:…)`
// and seed 002's `onIDVBiometricOpt(inStatus:…)`; seed 001's `onInitialized(_ response:)`, seed
// 003's `onInitialized()` and IDVKit's `onInitialized(_ sessionID:)`), the SDK calls the first
// spelling the app implements (the order is in each method's documentation). When the app
// implements none of them and the callback is one a running flow needs (a challenge, or the flow's
// terminal event), the SDK reports it at once — a log line and `onRequestFailed(name, 1034)` — and
// ends the flow where it can, delivering the error where the codelabs look for it
// (``RDNA`` "Missing callbacks").
//
// Callbacks arrive on the queue given to `initialize` (main by default), one at a time, in server order.
//
// **The error of a challenge asked again.** Five of the codelabs' challenge callbacks have no error
// argument — `getIDVDocumentScanProcessStartConfirmation(_:)`, `getIDVConfirmDocumentDetails(_:challenge:)`,
// `getIDVSelfieProcessStartConfirmation(_:)`, `getIDVSelfieConfirmation(_:challenge:)` and
// `onIDVOptInCapturedFrameConfirmation(_:)` — so a screen shown again after a refused answer, an
// unreadable page, a rejected capture or a lost network could not say why. Each has a second
// spelling with `response: RDNAChallengeResponse, error: RDNAError` (the shape of the seeds' own
// `getPassword`/`getActivationCode`: `error` the failure, 0 on a first ask; `response.status` the
// server's status, e.g. 400 "The document is not valid; scan a valid document";
// `response.payloadJSON` the challenge payload), called FIRST when the app implements it; an app
// that implements only the seed's spelling gets that one, unchanged. A screen that cannot be
// reached through its delegate reads the same error from ``RDNA/challengeError``.

/// Marks, on the calling thread, that a protocol's default implementation ran (the app does not
/// implement that callback), so the dispatcher can try the next spelling or report it.
enum CallbackProbe {
    private static let key = "org.openidv.idvkit.callback-not-implemented"

    /// Called by every default implementation below.
    static func notImplemented() { Thread.current.threadDictionary[key] = true }

    /// Runs the spellings in order until one is implemented by the app; false when none is.
    static func first(_ spellings: [() -> Void]) -> Bool {
        let d = Thread.current.threadDictionary
        defer { d.removeObject(forKey: key) }
        for call in spellings {
            d.removeObject(forKey: key)
            call()
            if d[key] == nil { return true }
        }
        return false
    }
}

/// The core (MFA) callbacks: REL-ID's `RDNACallbacks`.
public protocol RDNACallbacks: AnyObject {
    /// `initialize` finished: a session exists on the server. Seed 001 L472's spelling, called
    /// first: `response.status` is 100 and `response.sessionID` the public session id.
    func onInitialized(_ response: RDNAChallengeResponse)
    /// Seed 003 L1722's spelling, called when the app does not implement `onInitialized(_ response:)`.
    func onInitialized()
    /// IDVKit's spelling (public session id), called when the app implements neither seed spelling.
    func onInitialized(_ sessionID: String)
    func onInitializeError(_ error: RDNAError)
    func getUser(_ response: RDNAChallengeResponse, error: RDNAError)
    func getActivationCode(_ userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError)
    func getPassword(_ userID: String, challengeMode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError)
    func getUserConsentForLDA(_ userID: String, response: RDNAChallengeResponse)
    func onUserLoggedIn(_ userID: String, sessionID: String, deviceID: String?)
    func onUserLoggedOff(_ userID: String?)
    func onAuthStateReset()
    /// A refusal (the server changed nothing), a network error (1028), a timeout (1029), a
    /// capture failure (1008) or a callback the app does not implement (1034): `api` is the seed
    /// call (or callback) concerned. The flow's own callback hears the same error too (``RDNA``).
    func onRequestFailed(_ api: String, error: RDNAError)
    /// A challenge or event unknown to this SDK version.
    func onUnknownEvent(_ name: String, payloadJSON: String)
}

extension RDNACallbacks {
    public func onInitialized(_ response: RDNAChallengeResponse) { CallbackProbe.notImplemented() }
    public func onInitialized() { CallbackProbe.notImplemented() }
    public func onInitialized(_ sessionID: String) { CallbackProbe.notImplemented() }
    public func onInitializeError(_ error: RDNAError) { CallbackProbe.notImplemented() }
    public func getUser(_ response: RDNAChallengeResponse, error: RDNAError) { CallbackProbe.notImplemented() }
    public func getActivationCode(_ userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) { CallbackProbe.notImplemented() }
    public func getPassword(_ userID: String, challengeMode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func getUserConsentForLDA(_ userID: String, response: RDNAChallengeResponse) { CallbackProbe.notImplemented() }
    public func onUserLoggedIn(_ userID: String, sessionID: String, deviceID: String?) { CallbackProbe.notImplemented() }
    public func onUserLoggedOff(_ userID: String?) { CallbackProbe.notImplemented() }
    public func onAuthStateReset() { CallbackProbe.notImplemented() }
    public func onRequestFailed(_ api: String, error: RDNAError) { CallbackProbe.notImplemented() }
    public func onUnknownEvent(_ name: String, payloadJSON: String) { CallbackProbe.notImplemented() }
}

/// Seed 002 L618–L678 `RDNAIDVDocumentProcessingCallbacks` (6 methods).
public protocol RDNAIDVDocumentProcessingCallbacks: AnyObject {
    /// The server asks whether to start the document scan (workflow 0–5 activation, 6 KYC, 7
    /// additional scan). Answer with `setIDVDocumentScanProcessStartConfirmation(_:idvWorkflow:)`.
    /// Asked again after an unusable capture or an INVALID document was confirmed.
    func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow)
    /// The same callback with why it is asked again (called first when implemented; see the note
    /// at the top of this file): `error` 1008/1031/1080 for an unusable page, 1028/1029 when the
    /// answer could not reach the server, a refusal's code, 0 on a first ask; `response.status` 400
    /// with the server's sentence after an INVALID document was confirmed.
    func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow, response: RDNAChallengeResponse, error: RDNAError)
    /// The document details (seed 002 §6.1 JSON, ``DocumentDetails``) to confirm. Answer with
    /// `setIDVConfirmDocumentDetails(_:challenge:)`, or ``RDNA/rescanIDVDocument(challenge:)`` for
    /// the Recapture button.
    func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode)
    /// The same callback with the error of a refused or undelivered answer (called first when implemented).
    func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode, response: RDNAChallengeResponse, error: RDNAError)
    /// Declared by the codelabs' SDK; IDVKit's capture providers report a cancelled capture as a
    /// failed capture (1008), so IDVKit never calls it.
    func getIDVDocumentProcessCanceled()
    /// Declared by the codelabs' SDK; in OpenIDV a rescan is the start challenge asked again, so
    /// IDVKit never calls it.
    func getIDVRescanDocumentConfirmation()
    /// Seed 003: the additional document scan ended (`documentDetails`: seed 003's JSON,
    /// ``AdditionalDocumentScanDetails``; 240 when cancelled).
    func onIDVAdditionalDocumentScan(_ userID: String, documentDetails: String, status: RDNARequestStatus, challenge mode: RDNAChallengeOpMode, error: RDNAError)
    /// Declared by the codelabs' SDK for its on-phone document database; OpenIDV reads documents on
    /// the server, so IDVKit never calls it.
    func onDatabaseDownloadProgress(_ status: RDNAIDVDownloadStatus, databaseID: String)
}

extension RDNAIDVDocumentProcessingCallbacks {
    public func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow) { CallbackProbe.notImplemented() }
    public func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow, response: RDNAChallengeResponse, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode) { CallbackProbe.notImplemented() }
    public func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode, response: RDNAChallengeResponse,
                                             error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func getIDVDocumentProcessCanceled() { CallbackProbe.notImplemented() }
    public func getIDVRescanDocumentConfirmation() { CallbackProbe.notImplemented() }
    public func onIDVAdditionalDocumentScan(_ userID: String, documentDetails: String, status: RDNARequestStatus, challenge mode: RDNAChallengeOpMode, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func onDatabaseDownloadProgress(_ status: RDNAIDVDownloadStatus, databaseID: String) { CallbackProbe.notImplemented() }
}

/// Seed 002 L680–L725 `RDNAIDVSelfieProcessingCallbacks` (2 methods).
public protocol RDNAIDVSelfieProcessingCallbacks: AnyObject {
    /// The server asks whether to start the selfie capture (workflows 0–6, 8, 10). Answer with
    /// `setIDVSelfieProcessStartConfirmation(_:useDeviceBackCamera:idvWorkflow:)`.
    func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow)
    /// The same callback with why it is asked again (called first when implemented): `error`
    /// 1060–1065 for a capture too dark, blurred, small or turned away, 1032 no face, 1008 a capture
    /// that failed, 1028/1029 a lost network, 0 on a first ask; 1066 the liveness check was unsure
    /// (not an attack) — with ``RDNA/pendingLivenessChallenge`` set, the capture was sent on to an
    /// active challenge and `error.errorString` says to follow the movements shown — 1071 the screen's colours were seen on the face too faintly (bright
    /// surroundings), 1070 the capture must be taken under the flashing screen — for these three show
    /// `error.errorString` (the guidance) and call `setIDVSelfieProcessStartConfirmation(true, …)`
    /// again: the retake uses no attempt, and under presence the SDK hands the new challenge's colour
    /// sequence to the capture provider (``RDNA/pendingIlluminationChallenge``). `response.status` 400
    /// `LIVENESS_FAILED` with `liveness_reasons` in `response.payloadJSON` when an opt-in capture
    /// was not live. After the capture provider could not flash or the person declined the flashing,
    /// the server's head-movement fallback comes here too (`error` 0, ``RDNA/pendingLivenessChallenge``
    /// set): show its instructions, then confirm to capture. An app implementing only the one-argument
    /// form gets the same screen again without the reason; implement this one to show the guidance.
    func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow, response: RDNAChallengeResponse, error: RDNAError)
    /// The selfie result (the inner object of seed 002 §6.2, ``SelfieDetails``). Answer with
    /// `setIDVSelfieConfirmation(_:challenge:)` and an offered action key.
    func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode)
    /// The same callback with the error of a refused or undelivered answer (e.g. 1020, an action
    /// the server did not offer) (called first when implemented).
    func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode, response: RDNAChallengeResponse, error: RDNAError)
}

extension RDNAIDVSelfieProcessingCallbacks {
    public func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow) { CallbackProbe.notImplemented() }
    public func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow, response: RDNAChallengeResponse, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode) { CallbackProbe.notImplemented() }
    public func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode, response: RDNAChallengeResponse, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
}

/// Seed 002 L727–L797 `RDNAIDVBiometricManagementCallbacks`, with seeds 001 and 004's methods.
public protocol RDNAIDVBiometricManagementCallbacks: AnyObject {
    /// Consent to store the biometric template (activation mode 8, KYC mode 9). Seed 002 L738 /
    /// seed 000 L1609's spelling, called first.
    func getIDVBiometricOpt(inConsent userID: String, response: RDNAChallengeResponse, challenge mode: RDNAChallengeOpMode, error: RDNAError)
    /// IDVKit's spelling of the same callback, called when the app does not implement the seeds'.
    func getIDVBiometricOptInConsent(_ userID: String, response: RDNAChallengeResponse, challenge mode: RDNAChallengeOpMode, error: RDNAError)
    /// Declared by the codelabs' SDK (seed 002 L758); opt-out in OpenIDV re-authenticates with
    /// `getPassword` mode 7 instead, so IDVKit never calls it.
    func getIDVBiometricOptOutConsent(_ userID: String, attemptsLeft: Int32, challenge mode: RDNAChallengeOpMode, idvResponse: String,
                                      status: [AnyHashable: Any], challengeResponse response: RDNAChallengeResponse, error: RDNAError)
    /// Declared by the codelabs' SDK (seed 002 L762); IDVKit never calls it (templates are made on the server).
    func onIDVBiometricTemplateUploadStatus(_ uploadResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Declared by the codelabs' SDK (seed 002 L766); the template status arrives as
    /// `onIDVCheckUserBiometricTemplateStatus`, so IDVKit never calls it.
    func getIDVUserBiometricTemplateStatusResponse(_ statusResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Declared by the codelabs' SDK (seed 002 L770); deletion arrives as `onIDVBiometricOptOutStatus`,
    /// so IDVKit never calls it.
    func onIDVBiometricTemplateDeleteStatus(_ deleteResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Declared by the codelabs' SDK (seed 002 L774); IDVKit never calls it.
    func getIDVBiometricConsentModifyOptionsConfirmation(_ userID: String, challenge mode: RDNAChallengeOpMode, idvResponse: String,
                                                         status: [AnyHashable: Any], response: RDNAChallengeResponse, error: RDNAError)
    /// Seed 001/004: `status` 100 template exists, 600 none; `idvResponse` seed 001 §6.1 JSON.
    func onIDVCheckUserBiometricTemplateStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Seed 001: the server's verdict on the selfie against the stored template (240 when cancelled).
    func onIDVServerBiometricAuthenticationResult(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Seed 004 L892's spelling, called first: the captured frame (base64 JPEG) to approve,
    /// recapture or cancel with `setIDVBiometricOptInConfirmation(_:)`.
    func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String)
    /// Seed 002 L786's spelling of the same callback, called when the app does not implement seed 004's.
    func onIDVOpt(inCapturedFrameConfirmation capturedImage: String)
    /// The same callback with the error of a refused or undelivered answer, called before both
    /// seed spellings when implemented; `response.payloadJSON` carries `liveness_score`.
    func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String, response: RDNAChallengeResponse, error: RDNAError)
    /// Seed 004 L903's spelling, called first: the opt-in ended (`challengeMode` 6).
    func onIDVBiometricOptInStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError)
    /// Seed 002 L790's spelling, called when the app does not implement seed 004's.
    func onIDVBiometricOpt(inStatus userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Seed 004 L924's spelling, called first: the opt-out ended (`challengeMode` 7).
    func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError)
    /// Seed 002 L794's spelling (no mode), called when the app does not implement seed 004's.
    func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError)
}

extension RDNAIDVBiometricManagementCallbacks {
    public func getIDVBiometricOpt(inConsent userID: String, response: RDNAChallengeResponse, challenge mode: RDNAChallengeOpMode, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func getIDVBiometricOptInConsent(_ userID: String, response: RDNAChallengeResponse, challenge mode: RDNAChallengeOpMode, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func getIDVBiometricOptOutConsent(_ userID: String, attemptsLeft: Int32, challenge mode: RDNAChallengeOpMode, idvResponse: String,
                                             status: [AnyHashable: Any], challengeResponse response: RDNAChallengeResponse, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func onIDVBiometricTemplateUploadStatus(_ uploadResponse: String, status: RDNARequestStatus, error: RDNAError) { CallbackProbe.notImplemented() }
    public func getIDVUserBiometricTemplateStatusResponse(_ statusResponse: String, status: RDNARequestStatus, error: RDNAError) { CallbackProbe.notImplemented() }
    public func onIDVBiometricTemplateDeleteStatus(_ deleteResponse: String, status: RDNARequestStatus, error: RDNAError) { CallbackProbe.notImplemented() }
    public func getIDVBiometricConsentModifyOptionsConfirmation(_ userID: String, challenge mode: RDNAChallengeOpMode, idvResponse: String,
                                                                status: [AnyHashable: Any], response: RDNAChallengeResponse, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func onIDVCheckUserBiometricTemplateStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func onIDVServerBiometricAuthenticationResult(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String) { CallbackProbe.notImplemented() }
    public func onIDVOpt(inCapturedFrameConfirmation capturedImage: String) { CallbackProbe.notImplemented() }
    public func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String, response: RDNAChallengeResponse, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func onIDVBiometricOptInStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func onIDVBiometricOpt(inStatus userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
    public func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) {
        CallbackProbe.notImplemented()
    }
}

/// Seed 002 L799–L828 `RDNAIDVKYCManagementCallbacks` (6 methods); seed 000 uses the KYC response.
public protocol RDNAIDVKYCManagementCallbacks: AnyObject {
    /// Declared by the codelabs' SDK; IDVKit never calls it.
    func onIDVKYCDataSubmittedResponse(_ kycResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Declared by the codelabs' SDK; IDVKit never calls it.
    func getIDVKYCStatus(_ kycStatusResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Declared by the codelabs' SDK; IDVKit never calls it.
    func onIDVKYCDataDeletedResponse(_ kycDeleteResponse: String, status: RDNARequestStatus, error: RDNAError)
    /// Seed 000: the post-login KYC ended (0/100 success; 240 cancelled).
    func onIDVActivatedCustomerKYCResponse(_ userID: String, status: RDNARequestStatus, error: RDNAError)
    /// Declared by the codelabs' SDK (agent-assisted KYC, workflow 13, not offered); IDVKit never calls it.
    func onIDVAgentKYCResponse(_ userID: String, forUserID: String, status: RDNARequestStatus, error: RDNAError)
    /// Declared by the codelabs' SDK; IDVKit never calls it.
    func onIDVKYCProgress(_ status: String)
}

extension RDNAIDVKYCManagementCallbacks {
    public func onIDVKYCDataSubmittedResponse(_ kycResponse: String, status: RDNARequestStatus, error: RDNAError) { CallbackProbe.notImplemented() }
    public func getIDVKYCStatus(_ kycStatusResponse: String, status: RDNARequestStatus, error: RDNAError) { CallbackProbe.notImplemented() }
    public func onIDVKYCDataDeletedResponse(_ kycDeleteResponse: String, status: RDNARequestStatus, error: RDNAError) { CallbackProbe.notImplemented() }
    public func onIDVActivatedCustomerKYCResponse(_ userID: String, status: RDNARequestStatus, error: RDNAError) { CallbackProbe.notImplemented() }
    public func onIDVAgentKYCResponse(_ userID: String, forUserID: String, status: RDNARequestStatus, error: RDNAError) { CallbackProbe.notImplemented() }
    public func onIDVKYCProgress(_ status: String) { CallbackProbe.notImplemented() }
}

/// The registered delegates (weak), read on the callback queue.
struct DelegateSet {
    weak var core: (any RDNACallbacks)?
    weak var document: (any RDNAIDVDocumentProcessingCallbacks)?
    weak var selfie: (any RDNAIDVSelfieProcessingCallbacks)?
    weak var biometric: (any RDNAIDVBiometricManagementCallbacks)?
    weak var kyc: (any RDNAIDVKYCManagementCallbacks)?

    /// True when the app registered any delegate (it uses the delegate API, so a callback it
    /// does not implement is worth reporting).
    var any: Bool { core != nil || document != nil || selfie != nil || biometric != nil || kyc != nil }
}
