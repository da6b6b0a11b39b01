import Foundation
import XCTest
@testable import IDVCore

/// Every JSON example in the seeds decodes into the IDVCore payload types, carries the seed's values,
/// and re-encodes to the same JSON document (Fixtures/SOURCES.md lists where each example comes from).
final class SeedExampleTests: XCTestCase {
    typealias T = PayloadTestSupport

    // MARK: The comparator itself (so the round-trip assertions below can fail)

    func testComparatorDetectsEveryKindOfDifference() throws {
        XCTAssertNil(T.difference(try T.parse(#"{"a":92,"b":[1,"x"]}"#), try T.parse(#"{"b":[1.0,"x"],"a":92.0}"#)))
        XCTAssertNotNil(T.difference(try T.parse(#"{"a":1}"#), try T.parse(#"{"a":true}"#)), "bool is not a number")
        XCTAssertNotNil(T.difference(try T.parse(#"{"a":null}"#), try T.parse(#"{}"#)), "null is not absent")
        XCTAssertNotNil(T.difference(try T.parse(#"{"a":0.95}"#), try T.parse(#"{"a":0.9500001}"#)))
        XCTAssertNotNil(T.difference(try T.parse(#"{"a":[1,2]}"#), try T.parse(#"{"a":[2,1]}"#)))
        XCTAssertNotNil(T.difference(try T.parse(#"{"a":"1"}"#), try T.parse(#"{"a":1}"#)))
        XCTAssertEqual(T.stripComments("{\"u\": \"http://x/*y*/\", // c\n \"n\": 1 /* d */}"),
                       "{\"u\": \"http://x/*y*/\", \n \"n\": 1 }")
    }

    // MARK: Seed 002 §6.1: document details (L1875–L1900)

    func testSeed002DocumentDetailsExample() throws {
        let text = try T.fixture("seed002-L1875-document-details.json")
        let details = try DocumentDetails(jsonString: text)
        let info = details.responseData.documentInfo
        XCTAssertEqual(info.surname, "DOE")
        XCTAssertEqual(info.givenName, "JOHN")
        XCTAssertEqual(info.displayName, "JOHN DOE")
        XCTAssertEqual(info.dateOfBirth, "1990-01-15")
        XCTAssertEqual(info.documentNumber, "AB123456")
        XCTAssertEqual(info.expiryDate, "2030-12-31")
        XCTAssertEqual(info.issuingCountry, "USA")
        XCTAssertEqual(info.documentType, .passport)
        XCTAssertEqual(info.portraitImage, "base64...")
        XCTAssertEqual(info.signatureImage, "base64...")
        XCTAssertNil(info.nationality)
        XCTAssertEqual(details.responseData.documentPages.map(\.pageIndex), [0, 1])
        XCTAssertEqual(details.responseData.checksPerformed,
                       [DocumentCheck(checkName: "Document Authenticity", result: .passed),
                        DocumentCheck(checkName: "Chip Verification", result: .notPerformed)])
        XCTAssertEqual(details.responseData.errors, [])
        XCTAssertEqual(details.responseData.warnings, ["Minor wear detected on document surface"])
        XCTAssertEqual(details.responseData.overallStatus, .valid)

        let encoded = try details.toJSONString()
        try T.assertSameJSON(encoded, text)
        XCTAssertEqual(try DocumentDetails(jsonString: encoded), details)
    }

    // MARK: Seed 002 §6.2: selfie details (L2600–L2638), envelope and inner object

    func testSeed002SelfieExampleEnvelopeAndInnerObject() throws {
        let text = try T.fixture("seed002-L2600-selfie-confirmation-envelope.json")
        let envelope = try SelfieConfirmationEnvelope(jsonString: text)
        XCTAssertEqual(envelope.challengeMode, .idvActivation)
        let selfie = envelope.responseData
        let analysis = selfie.responseData
        XCTAssertEqual(analysis.biometricResult.displayText, .matched)
        XCTAssertEqual(analysis.biometricResult.resultCriteria, .faceMatch)
        XCTAssertEqual(analysis.faceMatcherResponse?.score, 0.95)
        XCTAssertEqual(analysis.analyzeLivenessResponse?.video.livenessResult.score, 92)
        XCTAssertEqual(analysis.analyzeLivenessResponse?.video.autocaptureResult?.selfieImage, "base64_encoded_selfie")
        XCTAssertEqual(analysis.documentDetail?.documentInfo.portraitImage, "base64_encoded_document_photo")
        XCTAssertNil(analysis.documentDetail?.documentInfo.name)
        XCTAssertNil(selfie.userID)
        XCTAssertEqual(selfie.actionButtons.successButton, [ActionButton(buttonText: "Continue", key: .continueFlow)])
        XCTAssertEqual(selfie.actionButtons.failureButton.map(\.buttonText),
                       ["Continue Anyway", "Rescan Document", "Recapture Selfie"])
        XCTAssertEqual(selfie.actionButtons.failureButton.map(\.key), [.continueFlow, .reinitDocumentScan, .reinitSelfie])
        // MATCHED shows the success buttons only (seed 002 §6.3).
        XCTAssertEqual(selfie.displayedButtons.map(\.key), [.continueFlow])
        XCTAssertTrue(selfie.offers(.continueFlow))
        XCTAssertFalse(selfie.offers(.reinitSelfie))

        try T.assertSameJSON(try envelope.toJSONString(), text)

        // The inner object (ARCHITECTURE §5) is exactly the envelope's "response_data".
        let root = try XCTUnwrap(try T.parse(text) as? [String: Any])
        let innerData = try JSONSerialization.data(withJSONObject: try XCTUnwrap(root["response_data"]))
        let innerText = try XCTUnwrap(String(data: innerData, encoding: .utf8))
        let inner = try SelfieDetails(jsonString: innerText)
        XCTAssertEqual(inner, selfie)
        try T.assertSameJSON(try inner.toJSONString(), innerText)
    }

    // MARK: Seed 001 §6.1: template status (L523–L530)

    func testSeed001TemplateStatusExample() throws {
        let text = T.stripComments(try T.fixture("seed001-L523-template-status.jsonc"))
        let status = try BiometricTemplateStatus(jsonString: text)
        XCTAssertEqual(status.statusCode, 100)
        XCTAssertEqual(status.statusMessage, "Success")
        XCTAssertEqual(status.orchestrationUseCase, .checkTemplate)
        XCTAssertTrue(status.result)
        XCTAssertEqual(status.attemptsLeft, 5)
        XCTAssertEqual(status.userID, "user123")
        XCTAssertTrue(status.requestStatus.isSuccess)
        try T.assertSameJSON(try status.toJSONString(), text)
    }

    // MARK: Seed 001 §6.2: server biometric authentication result (L567–L587)

    func testSeed001ServerBiometricResultExample() throws {
        let text = T.stripComments(try T.fixture("seed001-L567-server-biometric-result.jsonc"))
        let result = try ServerBiometricAuthenticationResult(jsonString: text)
        XCTAssertEqual(result.video?.workflowData, SelfieWorkflowData())
        XCTAssertEqual(result.video?.metaData, SelfieCaptureMetadata())
        XCTAssertEqual(result.video?.clientVersion, "1.0")
        let audit = result.idvAuditInfo
        XCTAssertEqual(audit.reason, "Server Biometric Authentication")
        XCTAssertEqual(audit.auditMetrics.startTimestamp, 1_234_567_890)
        XCTAssertEqual(audit.auditMetrics.endTimestamp, 1_234_567_900)
        XCTAssertEqual(audit.auditMetrics.durationSeconds, 10)
        XCTAssertEqual(audit.status, .success)
        XCTAssertEqual(audit.idvAuditTransactionID, "txn_123")
        XCTAssertEqual(audit.orchestrationUseCase, .postLoginSelfieBiometric)
        XCTAssertEqual(result.purpose, "Server Biometric Authentication")
        XCTAssertEqual(result.attempts, 1)
        XCTAssertEqual(result.userID, "user123")
        XCTAssertEqual(result.attemptsLeft, 4)
        XCTAssertNil(result.biometricResult, "the seed's partial example has no biometric_result")
        XCTAssertFalse(result.isMatched, "no verdict means not matched (fail closed)")
        try T.assertSameJSON(try result.toJSONString(), text)
    }
}
