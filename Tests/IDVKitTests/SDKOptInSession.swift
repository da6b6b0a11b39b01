import Foundation
import IDVKit
import IDVTestSupport
import XCTest

// The SDK tests' common start against a real `idvd`: a fresh SDK with a user activated and logged
// in, then seed 004's opt-in up to the selfie start screen (ActiveLivenessSDKTests, PresenceSDKTests).
extension IDVDServer {
    /// A fresh SDK with `user` created, activated (its one-time code) and logged in with `password`
    /// as the new password.
    func sdkLoggedIn(_ user: String, password: String) async throws -> (RDNA, RDNAAsyncAPI) {
        let code = try createUser(user)
        let sdk = RDNA()
        let api = sdk.asyncAPI
        _ = try await api.initialize(RDNAConfiguration(serverURL: url, requestTimeout: 120))
        _ = try await api.setUser(user)
        _ = try await api.setActivationCode(code)
        let ev = try await api.setPassword(password, challengeMode: .set)
        XCTAssertEqual(ev.last?.name, "onUserLoggedIn")
        return (sdk, api)
    }
}

extension RDNAAsyncAPI {
    /// Seed 004 opt-in up to the selfie start screen (the password re-authentication answered);
    /// returns the events of the last step. A server without the IDV workflows (1007) is missing data.
    @discardableResult
    func optInToSelfieStart(password: String) async throws -> [RDNAEvent] {
        var ev = try await initiateIDVBiometricOptIn()
        if case let .onRequestFailed(_, e)? = ev.last, e.longErrorCode == 1007 {
            throw TestData.missing("this idvd does not offer the IDV workflows (1007: \(e.errorString ?? ""))")
        }
        guard case .getPassword(_, .biometricOptIn, _, _, _)? = ev.last else { XCTFail("\(ev.map(\.name))"); return ev }
        ev = try await setPassword(password, challengeMode: .biometricOptIn)
        XCTAssertEqual(ev.last, .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginOptIn))
        return ev
    }
}
