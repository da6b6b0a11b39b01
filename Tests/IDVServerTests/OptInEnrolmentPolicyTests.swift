import Foundation
import IDVCore
import IDVEngine
import IDVServerTestSupport
import IDVTestSupport
import XCTest

/// `idv.optin_enrolment = false`: biometric opt-in (seed 004) enrols nothing — it has no reference
/// face, so whoever holds the password could opt out and enrol his own face (a fresh-user trial
/// did) — and answers 1033 before any run starts; opt-out and the template status still work.
final class OptInEnrolmentPolicyTests: XCTestCase {
    func testOptInOffAnswers1033AndLeavesTheTemplate() throws {
        let analyser = try PADUnsureOutcomesTests.ScriptedPADAnalyser()
        let server = try WorkflowServer(["idv.optin_enrolment": "false"], selfies: analyser)
        let api = try server.loggedIn("otto")
        let refused = try api.startFlow("idv.postlogin.optin")
        XCTAssertNil(refused.challenge)
        XCTAssertEqual(refused.error?.longErrorCode, IDVErrorCode.workflowUnavailable.rawValue, "\(String(describing: refused.error))")
        XCTAssertTrue(refused.error?.errorString.contains("idv.optin_enrolment") ?? false, "\(String(describing: refused.error))")
        XCTAssertEqual(try api.startFlow(FlowName.templateStatus).event?.status.statusCode, RequestStatus.noTemplate)
        XCTAssertFalse(try server.audit().contains { $0.action == "idv.flow_started" && $0.details["orchestration_use_case"] == "RDNA_IDV_POSTLOGIN_OPTIN" },
                       "no run was started")
        // Opt-out answers as it does with no template (nothing to erase).
        XCTAssertEqual(try api.startFlow("idv.postlogin.optout").event?.name, "onIDVBiometricOptOutStatus")
    }
}
