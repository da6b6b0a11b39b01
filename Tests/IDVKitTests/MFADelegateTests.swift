import Foundation
import IDVKit
import XCTest

/// The MFA path through the seeds' delegate API against a real `idvd` process.
final class MFADelegateTests: XCTestCase {
    let password = "Correct horse 42"

    func testActivationLogoffLoginWrongPasswordThroughDelegates() throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("alice")
        let sdk = RDNA()
        let rec = Recorder()
        sdk.setCallbacks(rec)
        sdk.setIDVDocumentProcessingDelegate(rec)
        sdk.setIDVSelfieProcessingDelegate(rec)
        sdk.setIDVKYCManagementDelegate(rec)

        // Before initialize every call is refused at once with 1027.
        XCTAssertEqual(sdk.setUser("alice").longErrorCode, 1027)

        // A flow name the server never registers, so the refusal path is tested whatever the server offers.
        let config = RDNAConfiguration(serverURL: server.url, flowNames: ["initiateActivatedCustomerKYC": "no.such.flow"])
        XCTAssertEqual(sdk.initialize(config, callbackQueue: rec.callbackQueue).longErrorCode, 0)
        guard case let .onInitialized(sid)? = rec.next() else { return XCTFail("expected onInitialized") }
        XCTAssertEqual(sid.count, 32)
        guard case let .getUser(_, e0)? = rec.next() else { return XCTFail("expected getUser") }
        XCTAssertEqual(e0.longErrorCode, 0)

        // A call that does not answer the current challenge is refused synchronously (1002), nothing sent.
        XCTAssertEqual(sdk.setPassword(password, challengeMode: .set).longErrorCode, 1002)
        XCTAssertEqual(sdk.setActivationCode(code).longErrorCode, 1002)
        XCTAssertEqual(sdk.setUser("").longErrorCode, 1025)

        // Unknown user → getUser again with 1016.
        XCTAssertEqual(sdk.setUser("nobody").longErrorCode, 0)
        guard case let .getUser(r1, e1)? = rec.next() else { return XCTFail("expected getUser again") }
        XCTAssertEqual(e1.longErrorCode, 1016)
        XCTAssertEqual(r1.status.statusCode, 400)

        XCTAssertEqual(sdk.setUser("alice").longErrorCode, 0)
        // A second call while the first is in flight is refused with 1022 (or, if the answer already
        // came back, with 1002 because getUser is no longer current).
        let second = sdk.setUser("alice").longErrorCode
        XCTAssertTrue([1022, 1002].contains(second), "\(second)")
        guard case let .getActivationCode(uid, attempts, _, e2)? = rec.next() else { return XCTFail("expected getActivationCode") }
        XCTAssertEqual(uid, "alice")
        XCTAssertEqual(attempts, 5)
        XCTAssertEqual(e2.longErrorCode, 0)

        XCTAssertEqual(sdk.setActivationCode("AAAAA-AAAAA").longErrorCode, 0)
        guard case let .getActivationCode(_, attempts2, r2, e3)? = rec.next() else { return XCTFail("expected getActivationCode again") }
        XCTAssertEqual(attempts2, 4)
        XCTAssertEqual(e3.longErrorCode, 1012)
        XCTAssertEqual(r2.status.statusCode, 400)

        XCTAssertEqual(sdk.setActivationCode(code).longErrorCode, 0)
        guard case let .getPassword(_, mode, _, _, e4)? = rec.next() else { return XCTFail("expected getPassword") }
        XCTAssertEqual(mode, .set)
        XCTAssertEqual(e4.longErrorCode, 0)
        // The mode must be echoed: verify instead of set is refused locally.
        XCTAssertEqual(sdk.setPassword(password, challengeMode: .verify).longErrorCode, 1002)
        XCTAssertEqual(sdk.setPassword("short1", challengeMode: .set).longErrorCode, 0)
        guard case let .getPassword(_, mode2, _, _, e5)? = rec.next() else { return XCTFail("expected getPassword (policy)") }
        XCTAssertEqual(mode2, .set)
        XCTAssertEqual(e5.longErrorCode, 1015)
        XCTAssertEqual(sdk.setPassword(password, challengeMode: .set).longErrorCode, 0)
        guard case let .onUserLoggedIn(u, s, _)? = rec.next() else { return XCTFail("expected onUserLoggedIn") }
        XCTAssertEqual(u, "alice")
        XCTAssertEqual(s, sid)
        XCTAssertTrue(sdk.isLoggedIn)
        XCTAssertNil(sdk.currentChallenge)

        // Log off: onUserLoggedOff, then a fresh session asks getUser.
        XCTAssertEqual(sdk.logOff("alice").longErrorCode, 0)
        guard case let .onUserLoggedOff(offUser)? = rec.next() else { return XCTFail("expected onUserLoggedOff") }
        XCTAssertEqual(offUser, "alice")
        guard case .getUser? = rec.next() else { return XCTFail("expected getUser after log-off") }
        XCTAssertFalse(sdk.isLoggedIn)

        // Login with the password; one wrong first (attempts 3 → 2).
        XCTAssertEqual(sdk.setUser("alice").longErrorCode, 0)
        guard case let .getPassword(_, vmode, a3, _, _)? = rec.next() else { return XCTFail("expected getPassword verify") }
        XCTAssertEqual(vmode, .verify)
        XCTAssertEqual(a3, 3)
        XCTAssertEqual(sdk.setPassword("Wrong password 1", challengeMode: .verify).longErrorCode, 0)
        guard case let .getPassword(_, _, a2, r6, e6)? = rec.next() else { return XCTFail("expected getPassword after wrong") }
        XCTAssertEqual(a2, 2)
        XCTAssertEqual(e6.longErrorCode, 1014)
        XCTAssertEqual(r6.status.statusCode, 400)
        XCTAssertEqual(sdk.setPassword(password, challengeMode: .verify).longErrorCode, 0)
        guard case .onUserLoggedIn("alice", _, _)? = rec.next() else { return XCTFail("expected onUserLoggedIn again") }

        // Post-login initiation reaches the server; an unknown flow is refused (1007): reported, and
        // delivered to the flow's own result callback (where the codelabs look), status 400.
        XCTAssertEqual(sdk.initiateActivatedCustomerKYC(reason: "annual review").longErrorCode, 0)
        guard case let .onRequestFailed(api, fe)? = rec.next() else { return XCTFail("expected onRequestFailed") }
        XCTAssertEqual(api, "initiateActivatedCustomerKYC")
        XCTAssertEqual(fe.longErrorCode, 1007)
        guard case let .onIDVActivatedCustomerKYCResponse("alice", ks, ke)? = rec.next() else { return XCTFail("expected the KYC response") }
        XCTAssertEqual([ke.longErrorCode, ks.code], [1007, 400])

        // resetAuthState on a logged-in session with no flow: onAuthStateReset, still logged in.
        XCTAssertEqual(sdk.resetAuthState().longErrorCode, 0)
        guard case .onAuthStateReset? = rec.next() else { return XCTFail("expected onAuthStateReset") }
        XCTAssertTrue(sdk.isLoggedIn)
        XCTAssertEqual(rec.offQueueCallbacks, 0, "every callback must arrive on the chosen queue")
    }

    func testLockAfterWrongPasswordsAndResetBeforeLogin() throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("bob")
        let sdk = RDNA()
        let rec = Recorder()
        sdk.setCallbacks(rec)
        sdk.initialize(RDNAConfiguration(serverURL: server.url), callbackQueue: rec.callbackQueue)
        _ = rec.next(); _ = rec.next()
        sdk.setUser("bob"); _ = rec.next()
        // resetAuthState before login goes back to getUser (user cleared).
        XCTAssertEqual(sdk.resetAuthState().longErrorCode, 0)
        guard case let .getUser(_, e)? = rec.next() else { return XCTFail("expected getUser after reset") }
        XCTAssertEqual(e.longErrorCode, 0)
        sdk.setUser("bob"); _ = rec.next()
        sdk.setActivationCode(code); _ = rec.next()
        sdk.setPassword(password, challengeMode: .set)
        guard case .onUserLoggedIn? = rec.next() else { return XCTFail("expected login") }
        sdk.logOff(); _ = rec.next(); _ = rec.next()
        sdk.setUser("bob"); _ = rec.next()
        var left: [Int] = []
        for _ in 0..<3 {
            XCTAssertEqual(sdk.setPassword("Not it 999", challengeMode: .verify).longErrorCode, 0)
            switch rec.next() {
            case let .getPassword(_, _, a, _, e)?: left.append(a); XCTAssertEqual(e.longErrorCode, 1014)
            case let .getUser(_, e)?: XCTAssertEqual(e.longErrorCode, 1011); left.append(0)
            default: XCTFail("unexpected")
            }
        }
        XCTAssertEqual(left, [2, 1, 0])
    }
}
