import XCTest
@testable import IDVCore

final class RawValueTests: XCTestCase {
    func testWorkflowRawValuesOneByOne() {
        let expected: [Int: String] = [
            0: "IDV_ACTIVATION", 1: "IDV_ACTIVATION_WITH_TEMPLATE", 2: "IDV_ADDITIONAL_DEVICE_WITH_TEMPLATE",
            3: "IDV_ADDITIONAL_DEVICE_WITHOUT_TEMPLATE", 4: "IDV_ACCOUNT_RECOVERY_WITH_TEMPLATE",
            5: "IDV_ACCOUNT_RECOVERY_WITHOUT_TEMPLATE", 6: "IDV_POSTLOGIN_KYC", 7: "IDV_POSTLOGIN_DOC_SCAN_ONLY",
            8: "IDV_POSTLOGIN_SELFIE_BIOMETRIC", 9: "IDV_STEP_UP_AUTHENTICATION", 10: "IDV_POSTLOGIN_OPTIN",
            11: "IDV_POSTLOGIN_OPTOUT", 13: "IDV_POSTLOGIN_AGENT_KYC", 15: "IDV_LOGIN_SELFIE_BIOMETRIC",
        ]
        for raw in -1...16 {
            if let name = expected[raw] {
                XCTAssertEqual(IDVWorkflow(rawValue: raw)?.name, name, "raw \(raw)")
            } else {
                XCTAssertNil(IDVWorkflow(rawValue: raw), "raw \(raw) must be unassigned")
                XCTAssertThrowsError(try IDVWorkflow(validating: raw)) { error in
                    XCTAssertEqual(error as? IDVCoreError, .unknownRawValue(type: "IDVWorkflow", value: raw))
                }
            }
        }
        XCTAssertEqual(IDVWorkflow.allCases.count, expected.count)
        XCTAssertTrue(IDVWorkflow.accountRecoveryWithoutTemplate.isPreLogin)
        XCTAssertFalse(IDVWorkflow.postLoginKYC.isPreLogin)
    }

    func testChallengeModesOneByOne() {
        XCTAssertEqual(ChallengeOpMode(rawValue: 0), .verify)
        XCTAssertEqual(ChallengeOpMode(rawValue: 1), .set)
        XCTAssertEqual(ChallengeOpMode(rawValue: 6), .biometricOptIn)
        XCTAssertEqual(ChallengeOpMode(rawValue: 7), .biometricOptOut)
        XCTAssertEqual(ChallengeOpMode(rawValue: 8), .idvActivation)
        XCTAssertEqual(ChallengeOpMode(rawValue: 9), .idvPostLoginKYC)
        XCTAssertEqual(ChallengeOpMode(rawValue: 10), .idvAdditionalDocumentScan)
        XCTAssertEqual(ChallengeOpMode(rawValue: 25), .idvServerBiometricAuthentication)
        XCTAssertNil(ChallengeOpMode(rawValue: 2))
        XCTAssertNil(ChallengeOpMode(rawValue: 24))
        XCTAssertThrowsError(try ChallengeOpMode(validating: 2)) { error in
            XCTAssertEqual(error as? IDVCoreError, .unknownRawValue(type: "ChallengeOpMode", value: 2))
        }
        XCTAssertEqual(try JSONDecoder().decode([ChallengeOpMode].self, from: Data("[25,0]".utf8)), [.idvServerBiometricAuthentication, .verify])
        XCTAssertThrowsError(try JSONDecoder().decode([ChallengeOpMode].self, from: Data("[24]".utf8))) { error in
            guard case let DecodingError.dataCorrupted(context)? = error as? DecodingError else { return XCTFail("\(error)") }
            XCTAssertEqual(context.debugDescription, "unknown ChallengeOpMode raw value 24 (assigned: 0, 1, 6, 7, 8, 9, 10, 25)")
        }
    }

    func testUnknownWorkflowDecodesToClearError() {
        XCTAssertThrowsError(try JSONDecoder().decode([IDVWorkflow].self, from: Data("[6, 12]".utf8))) { error in
            guard case let DecodingError.dataCorrupted(ctx) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(ctx.debugDescription.contains("unknown IDVWorkflow raw value 12"), ctx.debugDescription)
        }
        XCTAssertEqual(try JSONDecoder().decode([IDVWorkflow].self, from: Data("[6, 7, 8]".utf8)),
                       [.postLoginKYC, .postLoginDocScanOnly, .postLoginSelfieBiometric])
    }

    func testSeedErrorCodes() {
        XCTAssertEqual(IDVError.none.longErrorCode, 0)
        XCTAssertTrue(IDVError.none.isSuccess)
        XCTAssertEqual(IDVError(.idvCancelledByUser).longErrorCode, 146)
        XCTAssertEqual(IDVError(.idvCancelledByUser).errorString, "IDV identity verification canceled by user")
        XCTAssertEqual(IDVError(.userCancelled).longErrorCode, 240)
        XCTAssertEqual(IDVError(.userCancelled).errorString, "User Cancelled")
        XCTAssertEqual(IDVError(.userCancelled).shortErrorCode, IDVErrorCategory.cancelled.rawValue)
        // Our own codes never collide with the seeds' and are unique.
        let ours = IDVErrorCode.allCases.filter { $0.rawValue > 240 }.map(\.rawValue)
        XCTAssertTrue(ours.allSatisfy { $0 >= 1001 })
        XCTAssertEqual(Set(IDVErrorCode.allCases.map(\.rawValue)).count, IDVErrorCode.allCases.count)
    }

    func testRequestStatusDualValidation() {
        XCTAssertTrue(RequestStatus(statusCode: 100, statusMessage: "").isSuccess)
        XCTAssertTrue(RequestStatus(statusCode: 0, statusMessage: "").isSuccess)
        XCTAssertFalse(RequestStatus(statusCode: 600, statusMessage: "").isSuccess)
        XCTAssertFalse(RequestStatus(statusCode: 500, statusMessage: "").isSuccess)
    }
}
