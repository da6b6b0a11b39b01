import Foundation
import XCTest
@testable import IDVCore

/// The payloads whose seeds have no JSON example (seeds 000, 003, 004) and the shapes the server
/// builds: exact snake_case keys, absent optionals never written as null, full round trips.
final class PayloadShapeTests: XCTestCase {
    typealias T = PayloadTestSupport

    /// Seed 003 §4.5 shape with Regula-style identity labels, a non-string identity value and every member.
    let additionalScanJSON = """
    {
      "version": "1.0",
      "identity_data": {
        "Surname and given names": "ERIKSSON ANNA MARIA",
        "Given name": "ANNA MARIA",
        "Surname": "ERIKSSON",
        "Date of birth": "1974-08-12",
        "Sex": "F",
        "Nationality": "UTO",
        "Age": 52,
        "Remarks": null
      },
      "document_info": {
        "document_number": "L898902C3",
        "issue_date": "2012-04-15",
        "expiry_date": "2032-04-15",
        "issuing_authority": "UTO",
        "document_images": { "front_page": "AAEC", "portrait_image": "AwQF" }
      },
      "document_status": {
        "overall_document_status": "WARNING",
        "error_list": [],
        "warning_list": ["Portrait image quality is low"],
        "checks_performed": [
          { "check_name": "MRZ Check Digits", "check_status": "OK", "check_category": "MRZ" },
          { "check_name": "Document Expiry", "check_status": "OK", "check_category": "EXPIRY" },
          { "check_name": "Chip Authentication", "check_status": "NOT DONE" }
        ],
        "is_nfc_document": true,
        "nfc_scan_status": "NOT DONE",
        "nfc_scan_status_reason": "No NFC reader on this device"
      }
    }
    """

    func testAdditionalDocumentScanRoundTrip() throws {
        let details = try AdditionalDocumentScanDetails(jsonString: additionalScanJSON)
        XCTAssertEqual(details.version, "1.0")
        XCTAssertEqual(details.identityData["Sex"], .string("F"))
        XCTAssertEqual(details.identityData["Age"], .integer(52))
        XCTAssertEqual(details.identityData["Remarks"], .null)
        XCTAssertEqual(details.displayName, "ERIKSSON ANNA MARIA")
        XCTAssertEqual(details.documentInfo.documentNumber, "L898902C3")
        XCTAssertEqual(details.documentInfo.issuingAuthority, "UTO")
        XCTAssertEqual(details.documentInfo.documentImages.frontPage, "AAEC")
        XCTAssertNil(details.documentInfo.documentImages.backPage)
        XCTAssertNil(details.documentInfo.documentImages.signatureImage)
        let status = details.documentStatus
        XCTAssertEqual(status.overallDocumentStatus, .warning)
        XCTAssertFalse(details.isDocumentOK)
        XCTAssertEqual(status.warningList, ["Portrait image quality is low"])
        XCTAssertEqual(status.checksPerformed.map(\.checkStatus), [.ok, .ok, .notDone])
        XCTAssertEqual(status.checksPerformed.map(\.checkCategory), ["MRZ", "EXPIRY", nil])
        XCTAssertEqual(status.isNFCDocument, true)
        XCTAssertEqual(status.nfcScanStatus, "NOT DONE")

        let encoded = try details.toJSONString()
        // The explicit null in identity_data is the payload's own value and survives; nothing else is null.
        try T.assertSameJSON(encoded, additionalScanJSON)
        XCTAssertEqual(encoded.components(separatedBy: "null").count - 1, 1, encoded)
        XCTAssertFalse(encoded.contains("back_page"))
        XCTAssertFalse(encoded.contains("\\/"), "slashes in base64 are not escaped")
    }

    func testAdditionalScanDisplayNameFallsBackToGivenNameAndSurname() throws {
        var details = try AdditionalDocumentScanDetails(jsonString: additionalScanJSON)
        details.identityData[AdditionalDocumentScanDetails.Label.surnameAndGivenNames] = nil
        XCTAssertEqual(details.displayName, "ANNA MARIA ERIKSSON")
        details.identityData = [:]
        XCTAssertNil(details.displayName)
    }

    func testMinimalAdditionalScanAndMissingStatus() throws {
        let minimal = #"{"identity_data":{},"document_info":{"document_images":{}},"document_status":{"overall_document_status":"ERROR","error_list":["Document expired"],"warning_list":[],"checks_performed":[]}}"#
        let details = try AdditionalDocumentScanDetails(jsonString: minimal)
        XCTAssertEqual(details.documentStatus.overallDocumentStatus, .error)
        XCTAssertEqual(details.documentStatus.errorList, ["Document expired"])
        try T.assertSameJSON(try details.toJSONString(), minimal)
        XCTAssertThrowsError(try AdditionalDocumentScanDetails(jsonString: #"{"identity_data":{},"document_info":{"document_images":{}}}"#)) { error in
            XCTAssertEqual((error as? PayloadError)?.fieldPath, "document_status")
            XCTAssertEqual((error as? PayloadError)?.kind, .missingField)
        }
    }

    func testServerBuiltSelfieDetailsOmitAbsentOptionals() throws {
        let selfie = SelfieDetails(
            responseData: SelfieAnalysis(
                biometricResult: BiometricResult(displayText: .livenessFailed, resultCriteria: .liveness),
                analyzeLivenessResponse: AnalyzeLivenessResponse(video: LivenessVideo(livenessResult: LivenessResult(score: 12))),
                documentDetail: SelfieDocumentDetail(documentInfo: SelfieDocumentInfo(portraitImage: "AAAA", name: "JOHN DOE"))),
            actionButtons: ActionButtons(
                successButton: [ActionButton(buttonText: "Continue", key: .continueFlow)],
                failureButton: [ActionButton(buttonText: "Recapture Selfie", key: .reinitSelfie)]))
        let text = try selfie.toJSONString()
        XCTAssertEqual(text, #"{"action_buttons":{"failure_button":[{"button_text":"Recapture Selfie","key":"reinit-idv-selfie"}],"success_button":[{"button_text":"Continue","key":"continue-flow"}]},"response_data":{"analyze_liveness_response":{"video":{"liveness_result":{"score":12}}},"biometric_result":{"display_text":"LIVENESS_FAILED","result_criteria":"LIVENESS"},"document_detail":{"document_info":{"name":"JOHN DOE","portrait_image":"AAAA"}}}}"#)
        XCTAssertEqual(try SelfieDetails(jsonString: text), selfie)
        XCTAssertEqual(selfie.displayedButtons.map(\.key), [.reinitSelfie])
    }

    func testDocumentDetailsWithOurExtraFields() throws {
        let details = DocumentDetails(responseData: DocumentDetailsResponse(
            documentInfo: DocumentInfo(surname: "ERIKSSON", givenName: "ANNA MARIA", dateOfBirth: "1974-08-12",
                                       documentNumber: "L898902C3", expiryDate: "2012-04-15", issuingCountry: "UTO",
                                       documentType: .passport, nationality: "UTO", sex: "F", personalNumber: "ZE184226B"),
            documentPages: [DocumentPage(pageIndex: 0, image: "AAEC/+==")],
            checksPerformed: [DocumentCheck(checkName: "Document Expiry", result: .failed, category: "EXPIRY")],
            errors: ["Document expired on 2012-04-15"], warnings: [], overallStatus: .invalid))
        let text = try details.toJSONString()
        let object = try XCTUnwrap(try T.parse(text) as? [String: Any])
        let info = try XCTUnwrap((object["response_data"] as? [String: Any])?["document_info"] as? [String: Any])
        XCTAssertEqual(Set(info.keys), ["surname", "given_name", "date_of_birth", "document_number", "expiry_date",
                                        "issuing_country", "document_type", "nationality", "sex", "personal_number"])
        XCTAssertTrue(text.contains(#""image":"AAEC/+==""#), text)
        XCTAssertEqual(try DocumentDetails(jsonString: text), details)
    }

    func testBiometricOptStatusRoundTrip() throws {
        let json = #"{"status_code":600,"status_message":"Template does not exist","orchestration_use_case":"RDNA_IDV_POSTLOGIN_OPTOUT","user_id":"jdoe","template_exists":false}"#
        let status = try BiometricOptStatus(jsonString: json)
        XCTAssertEqual(status.statusCode, 600)
        XCTAssertEqual(status.orchestrationUseCase, .postLoginOptOut)
        XCTAssertFalse(status.templateExists)
        XCTAssertNil(status.attemptsLeft)
        XCTAssertFalse(status.requestStatus.isSuccess)
        try T.assertSameJSON(try status.toJSONString(), json)

        let audited = BiometricOptStatus(
            statusCode: 100, statusMessage: "Template enrolled", orchestrationUseCase: .postLoginOptIn, userID: "jdoe",
            templateExists: true, attemptsLeft: 2,
            idvAuditInfo: IDVAuditInfo(reason: "Biometric Opt-In", auditMetrics: AuditMetrics(startTimestamp: 1_800_000_000, endTimestamp: 1_800_000_012),
                                       status: .success, idvAuditTransactionID: "txn_9", orchestrationUseCase: .postLoginOptIn))
        XCTAssertEqual(try BiometricOptStatus(jsonString: try audited.toJSONString()), audited)
        XCTAssertTrue(try audited.toJSONString().contains(#""idv_audit_transaction_id":"txn_9""#))
    }

    func testKYCResponseDualValidation() throws {
        let cancelled = #"{"user_id":"jdoe","status":{"status_code":0,"status_message":""},"error":{"long_error_code":240,"short_error_code":1,"error_string":"User Cancelled"}}"#
        let response = try KYCResponse(jsonString: cancelled)
        XCTAssertEqual(response.error.code, .userCancelled)
        XCTAssertFalse(response.isSuccess, "error 240 fails even with status 0")
        try T.assertSameJSON(try response.toJSONString(), cancelled)

        let ok = KYCResponse(userID: "jdoe", status: RequestStatus(statusCode: 100, statusMessage: "Success"), error: .none)
        XCTAssertTrue(ok.isSuccess)
        let backendFailed = KYCResponse(userID: "jdoe", status: RequestStatus(statusCode: 500, statusMessage: "Failed"), error: .none)
        XCTAssertFalse(backendFailed.isSuccess)
        XCTAssertEqual(try KYCResponse(jsonString: try ok.toJSONString()), ok)
        XCTAssertThrowsError(try KYCResponse(jsonString: #"{"user_id":"jdoe","status":{"status_code":100},"error":{"long_error_code":0,"short_error_code":0,"error_string":""}}"#)) { error in
            XCTAssertEqual("\(error)", "status.status_message: missing required field")
        }
    }

    func testChallengeResponseRoundTrip() throws {
        let json = #"{"status":{"status_code":100,"status_message":"Success"},"session":{"session_type":1,"session_id":"s-42"},"challenge_info":[{"key":"attempts_left","value":"3"}],"additional_info":{"current_workflow":10,"idv_user_role":"customer"}}"#
        let response = try ChallengeResponse(jsonString: json)
        XCTAssertEqual(response.status.statusCode, 100)
        XCTAssertEqual(response.session?.sessionID, "s-42")
        XCTAssertEqual(response.challengeInfo, [ChallengeInfoItem(key: "attempts_left", value: "3")])
        XCTAssertEqual(response.additionalInfo?["current_workflow"], .integer(10))
        try T.assertSameJSON(try response.toJSONString(), json)
        let minimal = ChallengeResponse(status: RequestStatus(statusCode: 100, statusMessage: "OK"))
        XCTAssertEqual(try minimal.toJSONString(), #"{"status":{"status_code":100,"status_message":"OK"}}"#)
    }

    func testRequestStatusAndErrorAsPayloads() throws {
        let status = try RequestStatus(jsonString: #"{"status_code":600,"status_message":"No template"}"#)
        XCTAssertEqual(status.statusCode, RequestStatus.noTemplate)
        let error = try IDVError(jsonString: try IDVError(.idvCancelledByUser).toJSONString())
        XCTAssertEqual(error.longErrorCode, 146)
        XCTAssertThrowsError(try IDVError(jsonString: #"{"long_error_code":"146"}"#)) { error in
            XCTAssertEqual("\(error)", "long_error_code: expected Int, found string")
        }
    }
}
