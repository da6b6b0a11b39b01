import Foundation
import IDVKit
import XCTest

/// The MFA path through the async API and the event stream against a real `idvd` process.
final class MFAAsyncTests: XCTestCase {
    let password = "Async pass 77"

    func testActivationLogoffLoginThroughAsyncAPI() async throws {
        let server = try IDVDServer()
        try server.start()
        let code = try server.createUser("carol")
        let sdk = RDNA()
        let api = sdk.asyncAPI

        do { _ = try await api.setUser("carol"); XCTFail("expected 1027") } catch { XCTAssertEqual(error.longErrorCode, 1027) }

        var ev = try await api.initialize(RDNAConfiguration(serverURL: server.url,
                                                            flowNames: ["initiateIDVServerBiometricAuthentication": "no.such.flow"]))
        XCTAssertEqual(ev.map(\.name), ["onInitialized", "getUser"])
        ev = try await api.setUser("carol")
        guard case let .getActivationCode("carol", 5, _, e)? = ev.last else { return XCTFail("\(ev)") }
        XCTAssertEqual(e.longErrorCode, 0)
        ev = try await api.setActivationCode(code.lowercased())
        guard case .getPassword(_, .set, _, _, _)? = ev.last else { return XCTFail("\(ev)") }
        do { _ = try await api.setPassword(password, challengeMode: .verify); XCTFail("expected 1002") } catch { XCTAssertEqual(error.longErrorCode, 1002) }
        ev = try await api.setPassword(password, challengeMode: .set)
        guard case .onUserLoggedIn("carol", _, _)? = ev.last else { return XCTFail("\(ev)") }

        ev = try await api.logOff("carol")
        XCTAssertEqual(ev.map(\.name), ["onUserLoggedOff", "getUser"])
        ev = try await api.setUser("carol")
        guard case .getPassword(_, .verify, 3, _, _)? = ev.last else { return XCTFail("\(ev)") }
        ev = try await api.setPassword("nope nope 1", challengeMode: .verify)
        guard case let .getPassword(_, .verify, 2, _, we)? = ev.last else { return XCTFail("\(ev)") }
        XCTAssertEqual(we.longErrorCode, 1014)
        ev = try await api.setPassword(password, challengeMode: .verify)
        XCTAssertEqual(ev.map(\.name), ["onUserLoggedIn"])

        // Post-login initiation of a flow the server does not offer (mapped to an unknown name): refusal as an event.
        // Reported, and delivered to the flow's own result callback with status 400.
        ev = try await api.initiateIDVServerBiometricAuthentication(reason: "payment")
        guard case let .onRequestFailed("initiateIDVServerBiometricAuthentication", fe)? = ev.first else { return XCTFail("\(ev)") }
        XCTAssertEqual(fe.longErrorCode, 1007)
        guard case let .onIDVServerBiometricAuthenticationResult("carol", _, rs, re)? = ev.last, ev.count == 2 else { return XCTFail("\(ev)") }
        XCTAssertEqual([re.longErrorCode, rs.code], [1007, 400])

        // The event stream saw the same events in the same order.
        var streamed: [String] = []
        for await e in sdk.events {
            streamed.append(e.name)
            if streamed.count == 12 { break }
        }
        XCTAssertEqual(streamed, ["onInitialized", "getUser", "getActivationCode", "getPassword", "onUserLoggedIn",
                                  "onUserLoggedOff", "getUser", "getPassword", "getPassword", "onUserLoggedIn", "onRequestFailed",
                                  "onIDVServerBiometricAuthenticationResult"])
    }
}
