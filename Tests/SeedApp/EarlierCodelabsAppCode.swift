import Foundation
import RELID

// App code the five codelabs USE but never show: it comes from the earlier codelabs of their
// learning path ("Complete REL-ID Initialization Flow Codelab", "Complete Activation & Login Flow
// Codelab", seed 002 L3–L4), which are not among the seeds. Written here, by us, to exactly the
// shapes the seeds use, and nothing more:
//
// - `RDNAService.shared.resetAuthState()` → `RDNAError` (seed 000 L1180, seed 002 L3262),
//   `RDNAService.shared.setPassword(_:challengeMode:)` (seed 004 L1217), `RDNAService.shared.initialize`
//   (seed 002 L66), and the MFA answers `setUser`/`setActivationCode` the coordinator calls
//   (spec 002 §3.3 [IMPLIED]).
// - `RDNADelegateManager.shared` with the closures `onInitialized` (seed 002 L1530: `{ response in … }`)
//   and `onGetPassword` (seed 004 L1013's type), and the other MFA closures AppCoordinator uses
//   (`onGetUser`, `onGetPassword`, `onUserLoggedIn`, seed 002 L465). Like the seeds' IDV delegate
//   manager it dispatches every callback to the main queue. Like every codelab, it implements no
//   `onRequestFailed`: errors must reach the app through the flows' own callbacks.
// - `RDNAIDVService.setIDVCallback()` (seed 001 L474, seed 004 L969: "Register main IDV callback
//   (REQUIRED)"), whose body no seed shows. IDVKit needs no such registration (the four
//   `setIDV…Delegate` calls are the registration), so this stand-in only answers success.
//
// None of this is seed code, and none of it works around the SDK: it is the app the seeds assume.

/// The earlier codelabs' MFA service layer.
final class RDNAService {
    static let shared = RDNAService()
    private let rdna = RDNA.sharedInstance()

    private init() {}

    /// Starts the SDK with the connection profile's values (agent_info.json in the codelabs),
    /// the core callbacks going to `RDNADelegateManager.shared`.
    func initialize(relid: String, host: String, port: Int) -> RDNAError {
        rdna.setCallbacks(RDNADelegateManager.shared)
        return rdna.initialize(relid, host: host, port: port)
    }

    func setUser(_ userName: String) -> RDNAError { rdna.setUser(userName) }
    func setActivationCode(_ activationCode: String) -> RDNAError { rdna.setActivationCode(activationCode) }
    func setPassword(_ password: String, challengeMode: RDNAChallengeOpMode) -> RDNAError { rdna.setPassword(password, challengeMode: challengeMode) }
    func resetAuthState() -> RDNAError { rdna.resetAuthState() }
    func logOff(_ userID: String) -> RDNAError { rdna.logOff(userID) }
}

/// The earlier codelabs' MFA delegate manager: core callbacks → closures on the main queue.
final class RDNADelegateManager: NSObject, RDNACallbacks {
    static let shared = RDNADelegateManager()

    var onInitialized: ((_ response: RDNAChallengeResponse) -> Void)?
    var onInitializeError: ((_ error: RDNAError) -> Void)?
    var onGetUser: ((_ response: RDNAChallengeResponse, _ error: RDNAError) -> Void)?
    var onGetActivationCode: ((_ userID: String, _ attemptsLeft: Int, _ response: RDNAChallengeResponse, _ error: RDNAError) -> Void)?
    var onGetPassword: ((_ userID: String, _ challengeMode: RDNAChallengeOpMode, _ attemptsLeft: Int, _ response: RDNAChallengeResponse, _ error: RDNAError) -> Void)?
    var onGetUserConsentForLDA: ((_ userID: String, _ response: RDNAChallengeResponse) -> Void)?
    var onUserLoggedIn: ((_ userID: String) -> Void)?
    var onUserLoggedOff: ((_ userID: String?) -> Void)?
    var onAuthStateResetHandler: (() -> Void)?

    private override init() {
        super.init()
    }

    func onInitialized(_ response: RDNAChallengeResponse) {
        DispatchQueue.main.async { [weak self] in self?.onInitialized?(response) }
    }
    func onInitializeError(_ error: RDNAError) {
        DispatchQueue.main.async { [weak self] in self?.onInitializeError?(error) }
    }
    func getUser(_ response: RDNAChallengeResponse, error: RDNAError) {
        DispatchQueue.main.async { [weak self] in self?.onGetUser?(response, error) }
    }
    func getActivationCode(_ userID: String, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) {
        DispatchQueue.main.async { [weak self] in self?.onGetActivationCode?(userID, attemptsLeft, response, error) }
    }
    func getPassword(_ userID: String, challengeMode: RDNAChallengeOpMode, attemptsLeft: Int, response: RDNAChallengeResponse, error: RDNAError) {
        DispatchQueue.main.async { [weak self] in self?.onGetPassword?(userID, challengeMode, attemptsLeft, response, error) }
    }
    func getUserConsentForLDA(_ userID: String, response: RDNAChallengeResponse) {
        DispatchQueue.main.async { [weak self] in self?.onGetUserConsentForLDA?(userID, response) }
    }
    func onUserLoggedIn(_ userID: String, sessionID: String, deviceID: String?) {
        DispatchQueue.main.async { [weak self] in self?.onUserLoggedIn?(userID) }
    }
    func onUserLoggedOff(_ userID: String?) {
        DispatchQueue.main.async { [weak self] in self?.onUserLoggedOff?(userID) }
    }
    func onAuthStateReset() {
        DispatchQueue.main.async { [weak self] in self?.onAuthStateResetHandler?() }
    }
}

extension RDNAIDVService {
    /// Seeds 001 L474 and 004 L969 call it before registering delegates; no seed shows its body.
    func setIDVCallback() -> RDNAError { RDNAError(longErrorCode: 0, shortErrorCode: 0, errorString: "Success") }
}
