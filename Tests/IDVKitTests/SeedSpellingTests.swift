import Foundation
@testable import IDVKit
import XCTest

/// The seeds' spellings inside IDVKit, without a server: which delegate method an event reaches
/// when the codelabs spell a callback two ways, how a callback the app lacks is detected, and the
/// seed-typed values (SeedConformanceTests run the codelabs' own code end to end).
final class SeedSpellingTests: XCTestCase {
    /// Records which spelling was called.
    final class Calls: @unchecked Sendable { var names: [String] = [] }

    final class SeedConsent: RDNAIDVBiometricManagementCallbacks {
        let calls: Calls
        init(_ c: Calls) { calls = c }
        func getIDVBiometricOpt(inConsent userID: String, response: RDNAChallengeResponse, challenge mode: RDNAChallengeOpMode, error: RDNAError) {
            calls.names.append("getIDVBiometricOpt(inConsent:) \(userID) \(mode.rawValue)")
        }
    }

    final class KitConsent: RDNAIDVBiometricManagementCallbacks {
        let calls: Calls
        init(_ c: Calls) { calls = c }
        func getIDVBiometricOptInConsent(_ userID: String, response: RDNAChallengeResponse, challenge mode: RDNAChallengeOpMode, error: RDNAError) {
            calls.names.append("getIDVBiometricOptInConsent")
        }
    }

    /// Seed 002's stubs AND seed 004's implementations, as the codelabs' union has them.
    final class BothSpellings: RDNAIDVBiometricManagementCallbacks {
        let calls: Calls
        init(_ c: Calls) { calls = c }
        func onIDVOpt(inCapturedFrameConfirmation capturedImage: String) { calls.names.append("002 frame") }
        func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String) { calls.names.append("004 frame") }
        func onIDVBiometricOpt(inStatus userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) { calls.names.append("002 opt-in") }
        func onIDVBiometricOptInStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError) {
            calls.names.append("004 opt-in")
        }
        func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) { calls.names.append("002 opt-out") }
        func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, challengeMode: RDNAChallengeOpMode, error: RDNAError) {
            calls.names.append("004 opt-out")
        }
    }

    final class Seed002Only: RDNAIDVBiometricManagementCallbacks {
        let calls: Calls
        init(_ c: Calls) { calls = c }
        func onIDVOpt(inCapturedFrameConfirmation capturedImage: String) { calls.names.append("002 frame") }
        func onIDVBiometricOpt(inStatus userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) { calls.names.append("002 opt-in") }
        func onIDVBiometricOptOutStatus(_ userID: String, idvResponse: String, status: RDNARequestStatus, error: RDNAError) { calls.names.append("002 opt-out") }
    }

    final class Seed001Core: RDNACallbacks {
        let calls: Calls
        init(_ c: Calls) { calls = c }
        func onInitialized(_ response: RDNAChallengeResponse) { calls.names.append("response \(response.sessionID) \(response.status.statusCode)") }
        func onInitialized() { calls.names.append("no argument") }
    }

    final class Seed003Core: RDNACallbacks {
        let calls: Calls
        init(_ c: Calls) { calls = c }
        func onInitialized() { calls.names.append("no argument") }
        func onInitialized(_ sessionID: String) { calls.names.append("session id") }
    }

    final class KitCore: RDNACallbacks {
        let calls: Calls
        init(_ c: Calls) { calls = c }
        func onInitialized(_ sessionID: String) { calls.names.append("session id \(sessionID)") }
    }

    let response = RDNAChallengeResponse(status: .success, challengeID: "c", payloadJSON: "{}")
    let ok = RDNAError.none
    let status = RDNARequestStatus.success

    func testTheConsentReachesWhicheverSpellingTheAppImplements() {
        let calls = Calls()
        let seed = SeedConsent(calls), kit = KitConsent(calls)
        let event = RDNAEvent.getIDVBiometricOptInConsent(userID: "katie", response: response, challengeMode: .idvActivation, error: ok)
        XCTAssertTrue(event.dispatch(to: DelegateSet(biometric: seed)))
        XCTAssertTrue(event.dispatch(to: DelegateSet(biometric: kit)))
        XCTAssertEqual(calls.names, ["getIDVBiometricOpt(inConsent:) katie 8", "getIDVBiometricOptInConsent"])
    }

    func testSeed004SpellingsWinOverSeed002StubsAndSeed002AloneStillHears() {
        let calls = Calls()
        let both = BothSpellings(calls), old = Seed002Only(calls)
        let events: [RDNAEvent] = [
            .onIDVOptInCapturedFrameConfirmation(capturedImage: "b64"),
            .onIDVBiometricOptInStatus(userID: "u", idvResponse: "{}", status: status, challengeMode: .biometricOptIn, error: ok),
            .onIDVBiometricOptOutStatus(userID: "u", idvResponse: "{}", status: status, challengeMode: .biometricOptOut, error: ok),
        ]
        for e in events { XCTAssertTrue(e.dispatch(to: DelegateSet(biometric: both))) }
        XCTAssertEqual(calls.names, ["004 frame", "004 opt-in", "004 opt-out"])
        calls.names = []
        for e in events { XCTAssertTrue(e.dispatch(to: DelegateSet(biometric: old))) }
        XCTAssertEqual(calls.names, ["002 frame", "002 opt-in", "002 opt-out"])
    }

    /// The five codelab challenge callbacks without an error argument (issue #35): an app that
    /// implements IDVKit's `response:error:` spelling hears the error there (called first); one
    /// with only the seed's spelling hears that, unchanged.
    final class SeedScreens: RDNAIDVDocumentProcessingCallbacks, RDNAIDVSelfieProcessingCallbacks, RDNAIDVBiometricManagementCallbacks {
        let calls: Calls
        init(_ c: Calls) { calls = c }
        func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow) { calls.names.append("seed doc start \(idvWorkflow.rawValue)") }
        func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode) { calls.names.append("seed details") }
        func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow) { calls.names.append("seed selfie start") }
        func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode) { calls.names.append("seed selfie result") }
        func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String) { calls.names.append("seed frame") }
    }

    final class ErrorScreens: RDNAIDVDocumentProcessingCallbacks, RDNAIDVSelfieProcessingCallbacks, RDNAIDVBiometricManagementCallbacks {
        let calls: Calls
        init(_ c: Calls) { calls = c }
        func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow) { calls.names.append("seed doc start") }
        func getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow, response: RDNAChallengeResponse, error: RDNAError) {
            calls.names.append("doc start \(error.longErrorCode) \(response.status.statusCode)")
        }
        func getIDVConfirmDocumentDetails(_ documentDetails: String, challenge mode: RDNAChallengeOpMode, response: RDNAChallengeResponse, error: RDNAError) {
            calls.names.append("details \(error.longErrorCode)")
        }
        func getIDVSelfieProcessStartConfirmation(_ idvWorkflow: RDNAIDVWorkflow, response: RDNAChallengeResponse, error: RDNAError) {
            calls.names.append("selfie start \(error.longErrorCode)")
        }
        func getIDVSelfieConfirmation(_ selfieDetails: String, challenge mode: RDNAChallengeOpMode, response: RDNAChallengeResponse, error: RDNAError) {
            calls.names.append("selfie result \(error.longErrorCode)")
        }
        func onIDVOptInCapturedFrameConfirmation(_ capturedImage: String, response: RDNAChallengeResponse, error: RDNAError) {
            calls.names.append("frame \(error.longErrorCode) \(response.payloadJSON)")
        }
    }

    func testTheErrorOfAChallengeAskedAgainReachesTheResponseErrorSpelling() {
        let events: [RDNAEvent] = [
            .getIDVDocumentScanProcessStartConfirmation(idvWorkflow: .IDV_POSTLOGIN_KYC),
            .getIDVConfirmDocumentDetails(documentDetails: "{}", challengeMode: .idvPostLoginKYC),
            .getIDVSelfieProcessStartConfirmation(idvWorkflow: .IDV_POSTLOGIN_KYC),
            .getIDVSelfieConfirmation(selfieDetails: "{}", challengeMode: .idvPostLoginKYC),
            .onIDVOptInCapturedFrameConfirmation(capturedImage: "b64"),
        ]
        let refused = RDNAError(.actionNotOffered)
        let asked = RDNAChallengeResponse(status: RDNARequestStatus(statusCode: 400, statusMessage: "LIVENESS_FAILED"), challengeID: "c",
                                          payloadJSON: "{\"liveness_score\":12}")
        let calls = Calls()
        let screens = ErrorScreens(calls)
        for e in events { XCTAssertTrue(e.dispatch(to: DelegateSet(document: screens, selfie: screens, biometric: screens), challenge: (asked, refused))) }
        XCTAssertEqual(calls.names, ["doc start 1020 400", "details 1020", "selfie start 1020", "selfie result 1020", "frame 1020 {\"liveness_score\":12}"])
        // Without a context (a first ask): error 0, status 100.
        calls.names = []
        XCTAssertTrue(events[0].dispatch(to: DelegateSet(document: screens)))
        XCTAssertEqual(calls.names, ["doc start 0 100"])
        // The seeds' screens keep their spelling.
        calls.names = []
        let seed = SeedScreens(calls)
        for e in events { XCTAssertTrue(e.dispatch(to: DelegateSet(document: seed, selfie: seed, biometric: seed), challenge: (asked, refused))) }
        XCTAssertEqual(calls.names, ["seed doc start 6", "seed details", "seed selfie start", "seed selfie result", "seed frame"])
    }

    func testOnInitializedSpellingsInOrder() {
        let calls = Calls()
        let a = Seed001Core(calls), b = Seed003Core(calls), c = KitCore(calls)
        let e = RDNAEvent.onInitialized(sessionID: "s1")
        for d in [a, b, c] as [any RDNACallbacks] { XCTAssertTrue(e.dispatch(to: DelegateSet(core: d))) }
        XCTAssertEqual(calls.names, ["response s1 100", "no argument", "session id s1"])
    }

    func testACallbackNoSpellingOfWhichIsImplementedIsDetected() {
        let calls = Calls()
        let seed = SeedConsent(calls)
        // The biometric delegate implements only the consent: the server biometric result is not heard…
        let result = RDNAEvent.onIDVServerBiometricAuthenticationResult(userID: "u", idvResponse: "{}", status: status, error: ok)
        XCTAssertFalse(result.dispatch(to: DelegateSet(biometric: seed)))
        XCTAssertTrue(result.needsApp)
        XCTAssertEqual(result.callbackSpellings, ["RDNAIDVBiometricManagementCallbacks.onIDVServerBiometricAuthenticationResult(_:idvResponse:status:error:)"])
        // …nor is anything without a delegate at all.
        XCTAssertFalse(RDNAEvent.getIDVSelfieProcessStartConfirmation(idvWorkflow: .IDV_POSTLOGIN_KYC).dispatch(to: DelegateSet()))
        XCTAssertTrue(calls.names.isEmpty)
        // Notifications a flow does not wait for are never reported.
        XCTAssertFalse(RDNAEvent.onAuthStateReset.needsApp)
        XCTAssertFalse(RDNAEvent.onInitialized(sessionID: "s").needsApp)
    }

    func testSeedTypedValues() {
        let e = RDNAError(IDVError(.userCancelled))
        XCTAssertEqual(e.longErrorCode, 240)
        XCTAssertEqual(e.errorString ?? "", "User Cancelled")
        let message: String = e.errorString   // seed 000 L1110 passes it where a String is expected
        XCTAssertEqual(message, "User Cancelled")
        XCTAssertEqual(e.idvError, IDVError(.userCancelled))
        let s = RDNARequestStatus(RequestStatus(statusCode: 600, statusMessage: "No template"))
        let code: Int32 = s.statusCode        // seed 004 L1363
        XCTAssertEqual(code, 600)
        XCTAssertEqual(s.code, 600)
        XCTAssertFalse(s.isSuccess)
        XCTAssertTrue(RDNARequestStatus(statusCode: 0, statusMessage: "").isSuccess)
        XCTAssertEqual(RDNARequestStatus(RequestStatus(statusCode: Int.max, statusMessage: "")).statusCode, Int32.max)
        XCTAssertEqual(RDNAIDVStatus.RDNA_IDV_RECAPTURE.rawValue, 1)
        XCTAssertEqual(RDNAIDVStatus.cancel, .RDNA_IDV_CANCEL)
        XCTAssertEqual(RDNAIDVStatus.RDNA_IDV_APPROVED.idvStatus, .approved)
        XCTAssertEqual(RDNAIDVWorkflow.IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC.rawValue, 8)
        XCTAssertEqual(RDNAIDVWorkflow.IDV_POSTLOGIN_IDV_STEPUP_AUTH.rawValue, 9)
        XCTAssertEqual(RDNAIDVWorkflow.IDV_POSTLOGIN_OPTOUT.rawValue, 11)
        XCTAssertEqual(RDNAChallengeOpMode.CHALLENGE_OP_SET.rawValue, 1)
        XCTAssertEqual(RDNAChallengeOpMode.RDNA_IDV_API_BIOMETRIC_AND_DOCUMENT_SCAN.rawValue, 9)
    }

    func testInitializeHostAndPort() {
        XCTAssertEqual(RDNA.serverURL(host: "idv.example.com", port: 443)?.absoluteString, "https://idv.example.com:443")
        XCTAssertEqual(RDNA.serverURL(host: "http://127.0.0.1", port: 8080)?.absoluteString, "http://127.0.0.1:8080")
        XCTAssertEqual(RDNA.serverURL(host: "HTTPS://Idv.Example.com", port: UInt16(8443))?.absoluteString, "https://Idv.Example.com:8443")
        XCTAssertEqual(RDNA.serverURL(host: "::1", port: 8080)?.absoluteString, "https://[::1]:8080")
        XCTAssertNil(RDNA.serverURL(host: "", port: 8080))
        XCTAssertNil(RDNA.serverURL(host: "ftp://example.com", port: 21))
        XCTAssertNil(RDNA.serverURL(host: "example.com/path", port: 443))
        XCTAssertNil(RDNA.serverURL(host: "http://example.com:80", port: 81), "two ports")
        XCTAssertNil(RDNA.serverURL(host: "example.com", port: 0))
        XCTAssertNil(RDNA.serverURL(host: "example.com", port: 70_000))
        XCTAssertEqual(RDNA().initialize("agent", host: "", port: 1).longErrorCode, 1025)
    }
}
