import Foundation
import IDVKit

// The codelabs' service layer: `RDNAService` / `RDNAIDVService` (thin wrappers over the SDK that
// log the synchronous result) and the delegate managers that turn SDK callbacks into closures the
// coordinator registers (`RDNADelegateManager` / `RDNAIDVDelegateManager`).

/// Wraps the SDK calls; every call returns the synchronous `RDNAError` (0 = accepted).
final class IDVService: @unchecked Sendable {
    // @unchecked: immutable after init; RDNA is thread-safe and Terminal only prints.
    let rdna: RDNA
    let ui: Terminal
    /// `--flash-simulator`: the `idvd` that renders a capture under the server's illumination sequence.
    let flashSimulator: URL?
    init(rdna: RDNA, ui: Terminal, flashSimulator: URL? = nil) { self.rdna = rdna; self.ui = ui; self.flashSimulator = flashSimulator }

    @discardableResult
    private func log(_ api: String, _ e: RDNAError) -> RDNAError {
        ui.fact("sync", "\(api) → \(e.longErrorCode)\(e.isSuccess ? "" : " (\(e.errorString ?? ""))")")
        return e
    }

    func initialize(_ url: URL, timeout: TimeInterval, queue: DispatchQueue) -> RDNAError {
        log("initialize", rdna.initialize(RDNAConfiguration(serverURL: url, requestTimeout: timeout), callbackQueue: queue))
    }
    @discardableResult func setUser(_ u: String) -> RDNAError { log("setUser", rdna.setUser(u)) }
    @discardableResult func setActivationCode(_ c: String) -> RDNAError { log("setActivationCode", rdna.setActivationCode(c)) }
    @discardableResult func setPassword(_ p: String, _ m: RDNAChallengeOpMode) -> RDNAError { log("setPassword", rdna.setPassword(p, challengeMode: m)) }
    @discardableResult func setUserConsentForLDA(_ b: Bool) -> RDNAError { log("setUserConsentForLDA", rdna.setUserConsentForLDA(b)) }
    @discardableResult func resetAuthState() -> RDNAError { log("resetAuthState", rdna.resetAuthState()) }
    @discardableResult func logOff(_ u: String) -> RDNAError { log("logOff", rdna.logOff(u)) }

    @discardableResult func setIDVDocumentScanProcessStartConfirmation(_ b: Bool, _ wf: RDNAIDVWorkflow, pages: [URL]) -> RDNAError {
        rdna.setDocumentCaptureProvider(pages.isEmpty ? nil : ImageFileDocumentCapture(pageFiles: pages))
        return log("setIDVDocumentScanProcessStartConfirmation", rdna.setIDVDocumentScanProcessStartConfirmation(b, idvWorkflow: wf))
    }
    @discardableResult func setIDVConfirmDocumentDetails(_ b: Bool, _ m: RDNAChallengeOpMode) -> RDNAError {
        log("setIDVConfirmDocumentDetails", rdna.setIDVConfirmDocumentDetails(b, challenge: m))
    }
    @discardableResult func rescanIDVDocument(_ m: RDNAChallengeOpMode) -> RDNAError { log("rescanIDVDocument", rdna.rescanIDVDocument(challenge: m)) }
    @discardableResult func cancelPassword(_ m: RDNAChallengeOpMode) -> RDNAError { log("cancelPassword", rdna.cancelPassword(challengeMode: m)) }
    /// `dimmerRoom`: the simulated scene's ambient light is drawn from an ordinary indoor 50–300 lux
    /// (the person moved away from bright light, as 1071 asks), not the simulator's 50–1 000.
    @discardableResult func setIDVSelfieProcessStartConfirmation(_ b: Bool, back: Bool, _ wf: RDNAIDVWorkflow, frames: URL?,
                                                                 noFlash: Bool = false, dimmerRoom: Bool = false) -> RDNAError {
        rdna.setSelfieCaptureProvider(frames.map { folder -> any SelfieCaptureProvider in
            // The screen "flashes" through the simulator when there is one; else the app cannot flash.
            flashSimulator.map {
                SimulatedFlashCapture(folder: folder, simulator: $0, declined: noFlash, ui: ui,
                                      ambientLux: dimmerRoom ? exp(Double.random(in: Foundation.log(50.0)...Foundation.log(300.0))) : nil)
            } ?? FrameFolderSelfieCapture(folder: folder)
        })
        return log("setIDVSelfieProcessStartConfirmation", rdna.setIDVSelfieProcessStartConfirmation(b, useDeviceBackCamera: back, idvWorkflow: wf))
    }
    @discardableResult func setIDVSelfieConfirmation(_ a: String, _ m: RDNAChallengeOpMode) -> RDNAError {
        log("setIDVSelfieConfirmation", rdna.setIDVSelfieConfirmation(a, challenge: m))
    }
    @discardableResult func setIDVBiometricOptInConsent(_ b: Bool, _ m: RDNAChallengeOpMode) -> RDNAError {
        log("setIDVBiometricOptInConsent", rdna.setIDVBiometricOptInConsent(b, challenge: m))
    }
    @discardableResult func setIDVBiometricOptInConfirmation(_ s: RDNAIDVStatus) -> RDNAError {
        log("setIDVBiometricOptInConfirmation", rdna.setIDVBiometricOptInConfirmation(s))
    }
    @discardableResult func initiateActivatedCustomerKYC(_ r: String) -> RDNAError { log("initiateActivatedCustomerKYC", rdna.initiateActivatedCustomerKYC(reason: r)) }
    @discardableResult func initiateIDVAdditionalDocumentScan(_ r: String) -> RDNAError {
        log("initiateIDVAdditionalDocumentScan", rdna.initiateIDVAdditionalDocumentScan(reason: r))
    }
    @discardableResult func checkIDVUserBiometricTemplateStatus() -> RDNAError { log("checkIDVUserBiometricTemplateStatus", rdna.checkIDVUserBiometricTemplateStatus()) }
    @discardableResult func initiateIDVServerBiometricAuthentication(_ r: String) -> RDNAError {
        log("initiateIDVServerBiometricAuthentication", rdna.initiateIDVServerBiometricAuthentication(reason: r))
    }
    @discardableResult func initiateIDVBiometricOptIn() -> RDNAError { log("initiateIDVBiometricOptIn", rdna.initiateIDVBiometricOptIn()) }
    @discardableResult func initiateIDVBiometricOptOut() -> RDNAError { log("initiateIDVBiometricOptOut", rdna.initiateIDVBiometricOptOut()) }
}

/// Receives every SDK callback (all five protocols) and forwards it as one typed event to the
/// closure the coordinator registered — the seeds' delegate managers, collapsed into one.
///
/// The five challenges whose codelab spelling has no error argument are received in IDVKit's
/// `response:error:` spelling, so the screen shown again after a refused answer, an unusable
/// capture or a lost network says why (``ChallengeNotice``).
final class DelegateManager: RDNACallbacks, RDNAIDVDocumentProcessingCallbacks, RDNAIDVSelfieProcessingCallbacks,
    RDNAIDVBiometricManagementCallbacks, RDNAIDVKYCManagementCallbacks, @unchecked Sendable {
    // @unchecked: `onEvent` is set once before the SDK is started, then only read on the callback queue.
    var onEvent: ((RDNAEvent, ChallengeNotice?) -> Void)?

    func register(with rdna: RDNA) {
        rdna.setCallbacks(self)
        rdna.setIDVDocumentProcessingDelegate(self)
        rdna.setIDVSelfieProcessingDelegate(self)
        rdna.setIDVBiometricManagementDelegate(self)
        rdna.setIDVKYCManagementDelegate(self)
    }

    private func send(_ e: RDNAEvent, _ notice: ChallengeNotice? = nil) { onEvent?(e, notice) }

    func onInitialized(_ sessionID: String) { send(.onInitialized(sessionID: sessionID)) }
    func onInitializeError(_ error: RDNAError) { send(.onInitializeError(error)) }
    func getUser(_ response: RDNAChallengeResponse, error: RDNAError) { send(.getUser(response: response, error: error)) }
    func getActivationCode(_ userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) {
        send(.getActivationCode(userID: userID, attemptsLeft: attemptsLeft, response: response, error: error))
    }
    func getPassword(_ userID: String, challengeMode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) {
        send(.getPassword(userID: userID, challengeMode: challengeMode, attemptsLeft: attemptsLeft, response: response, error: error))
    }
    func getUserConsentForLDA(_ userID: String, response: RDNAChallengeResponse) { send(.getUserConsentForLDA(userID: userID, response: response)) }
    func onUserLoggedIn(_ userID: String, sessionID: String, deviceID: String?) { send(.onUserLoggedIn(userID: userID, sessionID: sessionID, deviceID: deviceID)) }
    func onUserLoggedOff(_ userID: String?) { send(.onUserLoggedOff(userID: userID)) }
    func onAuthStateReset() { send(.onAuthStateReset) }
    func onRequestFailed(_ api: String, error: RDNAError) { send(.onRequestFailed(api: api, error: error)) }
    func onUnknownEvent(_ name: String, payloadJSON: String) { send(.unknown(name: name, payloadJSON: payloadJSON)) }
    func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow, response: RDNAChallengeResponse, error: RDNAError) {
        send(.getIDVDocumentScanProcessStartConfirmation(idvWorkflow: idvWorkflow), ChallengeNotice(response: response, error: error))
    }
    func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode, response: RDNAChallengeResponse, error: RDNAError) {
        send(.getIDVConfirmDocumentDetails(documentDetails: documentDetails, challengeMode: mode), ChallengeNotice(response: response, error: error))
    }
    func onIDVAdditionalDocumentScan(_ userID: String, documentDetails: String, status: RDNARequestStatus, challenge mode: RDNAChallengeOpMode, error: RDNAError) {
        send(.onIDVAdditionalDocumentScan(userID: userID, documentDetails: documentDetails, status: status, challengeMode: mode, error: error))
    }
    func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow, response: RDNAChallengeResponse, error: RDNAError) {
        send(.getIDVSelfieProcessStartConfirmation(idvWorkflow: idvWorkflow), ChallengeNotice(response: response, error: error))
    }
    func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode, response: RDNAChallengeResponse, error: RDNAError) {
        send(.getIDVSelfieConfirmation(selfieDetails: selfieDetails, challengeMode: mode), ChallengeNotice(response: response, error: error))
    }
    func getIDVBiometricOptInConsent(_ userID: String, response: RDNAChallengeResponse, challenge mode: RDNAChallengeOpMode, error: RDNAError) {
        send(.getIDVBiometricOptInConsent(userID: userID, response: response, challengeMode: mode, error: error))
    }
    func onIDVCheckUserBiometricTemplateStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) {
        send(.onIDVCheckUserBiometricTemplateStatus(userID: userID, idvResponse: idvResponse, status: status, error: error))
    }
    func onIDVServerBiometricAuthenticationResult(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) {
        send(.onIDVServerBiometricAuthenticationResult(userID: userID, idvResponse: idvResponse, status: status, error: error))
    }
    func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String, response: RDNAChallengeResponse, error: RDNAError) {
        send(.onIDVOptInCapturedFrameConfirmation(capturedImage: capturedImage), ChallengeNotice(response: response, error: error))
    }
    func onIDVBiometricOptInStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError) {
        send(.onIDVBiometricOptInStatus(userID: userID, idvResponse: idvResponse, status: status, challengeMode: challengeMode, error: error))
    }
    func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError) {
        send(.onIDVBiometricOptOutStatus(userID: userID, idvResponse: idvResponse, status: status, challengeMode: challengeMode, error: error))
    }
    func onIDVActivatedCustomerKYCResponse(_ userID: String, status: RDNARequestStatus, error: RDNAError) {
        send(.onIDVActivatedCustomerKYCResponse(userID: userID, status: status, error: error))
    }
}

/// What IDVKit delivers with a challenge asked again (the `response:error:` spellings): the error of
/// the previous answer (0 on a first ask) and the server's status and payload.
struct ChallengeNotice {
    let response: RDNAChallengeResponse
    let error: RDNAError

    /// The sentences the screen's error banner shows: the error, then the server's status message
    /// when it is not a success (e.g. 400 "The document is not valid; scan a valid document"),
    /// then the liveness reasons of a capture that was not live.
    var problems: [String] {
        var out: [String] = []
        if !error.isSuccess { out.append("\(error.longErrorCode) \(error.errorString ?? "")") }
        if !response.status.isSuccess, let m = response.status.statusMessage, !m.isEmpty { out.append("\(response.status.statusCode) \(m)") }
        let payload = (try? JSONDecoder().decode(JSONValue.self, from: Data(response.payloadJSON.utf8))) ?? .emptyObject
        for r in payload["liveness_reasons"]?.arrayValue?.compactMap(\.stringValue) ?? [] { out.append("liveness: \(r)") }
        return out
    }
}
