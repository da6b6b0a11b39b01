import Foundation

/// The modern Swift face of the SDK: the same calls as ``RDNA``, as `async` functions that return
/// the events the call produced (in order; usually one: the next challenge or the terminal event)
/// and throw the synchronous ``RDNAError`` when the call is refused at once. Server refusals,
/// network errors (1028) and timeouts (1029) come back as an ``RDNAEvent/onRequestFailed(api:error:)``
/// or ``RDNAEvent/onInitializeError(_:)`` element, exactly as the delegate API reports them. The
/// events also go to ``RDNA/events`` and to any registered delegates.
///
/// ```swift
/// let sdk = RDNA()
/// var step = try await sdk.asyncAPI.initialize(config)          // [onInitialized, getUser]
/// step = try await sdk.asyncAPI.setUser("alice")                // [getActivationCode(…)]
/// ```
public struct RDNAAsyncAPI: Sendable {
    let rdna: RDNA

    private func run(_ start: (@escaping RDNA.Completion) -> RDNAError) async throws(RDNAError) -> [RDNAEvent] {
        let result: Result<[RDNAEvent], RDNAError> = await withCheckedContinuation { cont in
            let e = start { events in cont.resume(returning: .success(events)) }
            if !e.isSuccess { cont.resume(returning: .failure(e)) }
        }
        return try result.get()
    }

    public func initialize(_ configuration: RDNAConfiguration) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.initialize(configuration, callbackQueue: .global(), completion: $0) }
    }
    public func setUser(_ userID: String) async throws(RDNAError) -> [RDNAEvent] { try await run { rdna.setUser(userID, completion: $0) } }
    public func setActivationCode(_ code: String) async throws(RDNAError) -> [RDNAEvent] { try await run { rdna.setActivationCode(code, completion: $0) } }
    public func setPassword(_ password: String, challengeMode: RDNAChallengeOpMode) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.setPassword(password, challengeMode: challengeMode, completion: $0) }
    }
    public func setUserConsentForLDA(_ shouldEnroll: Bool) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.setUserConsentForLDA(shouldEnroll, completion: $0) }
    }
    public func resetAuthState() async throws(RDNAError) -> [RDNAEvent] { try await run { rdna.resetAuthState(completion: $0) } }
    public func logOff(_ userID: String = "") async throws(RDNAError) -> [RDNAEvent] { try await run { rdna.logOff(userID, completion: $0) } }

    public func setIDVDocumentScanProcessStartConfirmation(_ isConfirm: Bool, idvWorkflow: RDNAIDVWorkflow) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.setIDVDocumentScanProcessStartConfirmation(isConfirm, idvWorkflow: idvWorkflow, completion: $0) }
    }
    public func setIDVConfirmDocumentDetails(_ isConfirm: Bool, challenge mode: RDNAChallengeOpMode) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.setIDVConfirmDocumentDetails(isConfirm, challenge: mode, completion: $0) }
    }
    public func rescanIDVDocument(challenge mode: RDNAChallengeOpMode) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.rescanIDVDocument(challenge: mode, completion: $0) }
    }
    public func cancelPassword(challengeMode mode: RDNAChallengeOpMode) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.cancelPassword(challengeMode: mode, completion: $0) }
    }
    public func setIDVSelfieProcessStartConfirmation(_ isConfirm: Bool, useDeviceBackCamera: Bool, idvWorkflow: RDNAIDVWorkflow) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.setIDVSelfieProcessStartConfirmation(isConfirm, useDeviceBackCamera: useDeviceBackCamera, idvWorkflow: idvWorkflow, completion: $0) }
    }
    public func setIDVSelfieConfirmation(_ action: String, challenge mode: RDNAChallengeOpMode) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.setIDVSelfieConfirmation(action, challenge: mode, completion: $0) }
    }
    public func setIDVBiometricOptInConsent(_ isOptIn: Bool, challenge mode: RDNAChallengeOpMode) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.setIDVBiometricOptInConsent(isOptIn, challenge: mode, completion: $0) }
    }
    public func setIDVBiometricOptInConfirmation(_ status: RDNAIDVStatus) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.setIDVBiometricOptInConfirmation(status, completion: $0) }
    }

    public func initiateActivatedCustomerKYC(reason: String) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.startFlow("initiateActivatedCustomerKYC", WireMapping.payload(IDVFlowStartPayload(reason: reason)), completion: $0) }
    }
    public func initiateIDVAdditionalDocumentScan(reason: String) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.startFlow("initiateIDVAdditionalDocumentScan", WireMapping.payload(IDVFlowStartPayload(reason: reason)), completion: $0) }
    }
    public func checkIDVUserBiometricTemplateStatus() async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.startFlow("checkIDVUserBiometricTemplateStatus", .emptyObject, completion: $0) }
    }
    public func initiateIDVServerBiometricAuthentication(reason: String) async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.startFlow("initiateIDVServerBiometricAuthentication", WireMapping.payload(IDVFlowStartPayload(reason: reason)), completion: $0) }
    }
    public func initiateIDVBiometricOptIn() async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.startFlow("initiateIDVBiometricOptIn", .emptyObject, completion: $0) }
    }
    public func initiateIDVBiometricOptOut() async throws(RDNAError) -> [RDNAEvent] {
        try await run { rdna.startFlow("initiateIDVBiometricOptOut", .emptyObject, completion: $0) }
    }
}

extension RDNA {
    /// The `async` API over this instance.
    public var asyncAPI: RDNAAsyncAPI { RDNAAsyncAPI(rdna: self) }
}
