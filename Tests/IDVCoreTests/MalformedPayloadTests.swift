import Foundation
import XCTest
@testable import IDVCore

/// Malformed payloads fail with a PayloadError that names the failing field, never crash, and never
/// echo payload values.
final class MalformedPayloadTests: XCTestCase {
    typealias T = PayloadTestSupport

    /// The seed 002 document example with one edit applied to its parsed tree.
    private func documentJSON(_ edit: (inout [String: Any]) -> Void) throws -> String {
        var root = try XCTUnwrap(try T.parse(try T.fixture("seed002-L1875-document-details.json")) as? [String: Any])
        edit(&root)
        return String(decoding: try JSONSerialization.data(withJSONObject: root), as: UTF8.self)
    }

    private func selfieJSON(_ edit: (inout [String: Any]) -> Void) throws -> String {
        let envelope = try XCTUnwrap(try T.parse(try T.fixture("seed002-L2600-selfie-confirmation-envelope.json")) as? [String: Any])
        var root = try XCTUnwrap(envelope["response_data"] as? [String: Any])
        edit(&root)
        return String(decoding: try JSONSerialization.data(withJSONObject: root), as: UTF8.self)
    }

    private func expectError<P: IDVPayload>(_ type: P.Type, _ json: String, kind: PayloadError.Kind, path: String,
                                            reason: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let decoded = try P(jsonString: json)
            XCTFail("decoded \(P.self) unexpectedly: \(decoded)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
            XCTAssertEqual(error.fieldPath, path, "\(error)", file: file, line: line)
            if let reason { XCTAssertEqual(error.reason, reason, file: file, line: line) }
            XCTAssertEqual(error.description, "\(error.fieldPath): \(error.reason)", file: file, line: line)
        }
    }

    private func setDocumentInfo(_ root: inout [String: Any], _ key: String, _ value: Any?) {
        var data = root["response_data"] as! [String: Any]
        var info = data["document_info"] as! [String: Any]
        info[key] = value
        data["document_info"] = info
        root["response_data"] = data
    }

    // MARK: Wrong type

    func testWrongTypeNamesTheField() throws {
        let json = try documentJSON { setDocumentInfo(&$0, "expiry_date", 20301231) }
        expectError(DocumentDetails.self, json, kind: .typeMismatch,
                    path: "response_data.document_info.expiry_date", reason: "expected String, found number")
        XCTAssertThrowsError(try DocumentDetails(jsonString: json)) { error in
            XCTAssertEqual("\(error)", "response_data.document_info.expiry_date: expected String, found number")
        }
    }

    func testWrongTypeInsideArrayNamesTheIndex() throws {
        let json = try documentJSON { root in
            var data = root["response_data"] as! [String: Any]
            data["document_pages"] = [["page_index": 0, "image": "a"], ["page_index": "1", "image": "b"]]
            root["response_data"] = data
        }
        expectError(DocumentDetails.self, json, kind: .typeMismatch,
                    path: "response_data.document_pages[1].page_index", reason: "expected Int, found string")
    }

    func testFractionalNumberForIntegerFieldNamesTheField() throws {
        // Foundation's JSONDecoder reports this at the root as "not valid JSON"; ours names the field.
        let json = #"{"response_data":{"biometric_result":{"display_text":"MATCHED"},"analyze_liveness_response":{"video":{"liveness_result":{"score":92.5}}}},"action_buttons":{"success_button":[],"failure_button":[]}}"#
        expectError(SelfieDetails.self, json, kind: .typeMismatch,
                    path: "response_data.analyze_liveness_response.video.liveness_result.score",
                    reason: "expected Int, found non-integer or out-of-range number")
    }

    func testObjectWhereArrayExpected() throws {
        let json = try documentJSON { root in
            var data = root["response_data"] as! [String: Any]
            data["warnings"] = ["text": "x"]
            root["response_data"] = data
        }
        expectError(DocumentDetails.self, json, kind: .typeMismatch, path: "response_data.warnings",
                    reason: "expected array, found object")
    }

    func testNullForRequiredField() throws {
        let json = try documentJSON { setDocumentInfo(&$0, "surname", NSNull()) }
        expectError(DocumentDetails.self, json, kind: .typeMismatch, path: "response_data.document_info.surname",
                    reason: "expected String, found null")
    }

    func testBoolIsNotANumber() throws {
        let json = #"{"status_code":true,"status_message":"Success","orchestration_use_case":"RDNA_IDV_CHECK_TEMPLATE","result":true,"attempts_left":5,"user_id":"u"}"#
        expectError(BiometricTemplateStatus.self, json, kind: .typeMismatch, path: "status_code",
                    reason: "expected Int, found bool")
        let json2 = #"{"status_code":100,"status_message":"Success","orchestration_use_case":"RDNA_IDV_CHECK_TEMPLATE","result":1,"attempts_left":5,"user_id":"u"}"#
        expectError(BiometricTemplateStatus.self, json2, kind: .typeMismatch, path: "result",
                    reason: "expected Bool, found number")
    }

    // MARK: Missing required field

    func testMissingRequiredFieldNamesIt() throws {
        expectError(DocumentDetails.self, try documentJSON { setDocumentInfo(&$0, "surname", nil) },
                    kind: .missingField, path: "response_data.document_info.surname", reason: "missing required field")
        expectError(DocumentDetails.self, try documentJSON { $0["response_data"] = nil },
                    kind: .missingField, path: "response_data")
        expectError(SelfieDetails.self, try selfieJSON { $0["action_buttons"] = nil },
                    kind: .missingField, path: "action_buttons")
        expectError(SelfieDetails.self, try selfieJSON { root in
            var buttons = root["action_buttons"] as! [String: Any]
            buttons["failure_button"] = [["button_text": "Continue Anyway"]]
            root["action_buttons"] = buttons
        }, kind: .missingField, path: "action_buttons.failure_button[0].key")
    }

    func testOptionalFieldsMayBeAbsent() throws {
        // date_of_birth, expiry_date and the images are optional; removing them still decodes.
        let json = try documentJSON { root in
            for key in ["date_of_birth", "expiry_date", "portrait_image", "signature_image"] { setDocumentInfo(&root, key, nil) }
        }
        let details = try DocumentDetails(jsonString: json)
        XCTAssertNil(details.responseData.documentInfo.expiryDate)
        XCTAssertNil(details.responseData.documentInfo.portraitImage)
        XCTAssertFalse(try details.toJSONString().contains("expiry_date"))
    }

    // MARK: Not JSON, empty, wrong root

    func testNotJSON() {
        for text in ["{", "hello", "{\"response_data\": }", "{'a': 1}", "{\"a\":1} trailing"] {
            expectError(DocumentDetails.self, text, kind: .notJSON, path: "$", reason: "not valid JSON")
        }
        XCTAssertThrowsError(try DocumentDetails(jsonData: Data([0x7B, 0xFF, 0xFE, 0x7D]))) { error in
            XCTAssertEqual((error as? PayloadError)?.kind, .notJSON)
        }
    }

    func testEmptyString() {
        for text in ["", "   ", "\n\t "] {
            expectError(SelfieDetails.self, text, kind: .empty, path: "$", reason: "empty payload, expected a JSON object")
        }
    }

    func testRootIsNotAnObject() {
        expectError(DocumentDetails.self, "[]", kind: .typeMismatch, path: "$", reason: "expected object, found array")
        expectError(DocumentDetails.self, "42", kind: .typeMismatch, path: "$", reason: "expected object, found number")
        expectError(DocumentDetails.self, "null", kind: .typeMismatch, path: "$", reason: "expected object, found null")
        expectError(DocumentDetails.self, "\"x\"", kind: .typeMismatch, path: "$", reason: "expected object, found string")
    }

    // MARK: Out-of-range and unknown values

    func testScoresOutOfRangeAreInvalidValues() throws {
        let liveness = try selfieJSON { root in
            var data = root["response_data"] as! [String: Any]
            data["analyze_liveness_response"] = ["video": ["liveness_result": ["score": 101]]]
            root["response_data"] = data
        }
        expectError(SelfieDetails.self, liveness, kind: .invalidValue,
                    path: "response_data.analyze_liveness_response.video.liveness_result.score",
                    reason: "liveness score must be an integer in 0...100")
        let face = try selfieJSON { root in
            var data = root["response_data"] as! [String: Any]
            data["face_matcher_response"] = ["score": 95]
            root["response_data"] = data
        }
        expectError(SelfieDetails.self, face, kind: .invalidValue, path: "response_data.face_matcher_response.score",
                    reason: "face match score must be a fraction in 0...1")
    }

    func testUnknownChallengeModeInEnvelope() throws {
        let text = try T.fixture("seed002-L2600-selfie-confirmation-envelope.json")
            .replacingOccurrences(of: "\"challengeMode\": 8", with: "\"challengeMode\": 12")
        expectError(SelfieConfirmationEnvelope.self, text, kind: .invalidValue, path: "challengeMode")
    }

    // MARK: Encoding failures name the field too

    func testEncodingNonFiniteOrOutOfRangeScoreNamesTheField() {
        let analysis = SelfieAnalysis(biometricResult: BiometricResult(displayText: .matched),
                                      faceMatcherResponse: FaceMatcherResponse(score: .nan))
        let selfie = SelfieDetails(responseData: analysis, actionButtons: ActionButtons(successButton: [], failureButton: []))
        XCTAssertThrowsError(try selfie.toJSONString()) { error in
            XCTAssertEqual((error as? PayloadError)?.kind, .notEncodable)
            XCTAssertEqual((error as? PayloadError)?.fieldPath, "response_data.face_matcher_response.score")
        }
        var liveness = selfie
        liveness.responseData.faceMatcherResponse = nil
        liveness.responseData.analyzeLivenessResponse = AnalyzeLivenessResponse(video: LivenessVideo(livenessResult: LivenessResult(score: -1)))
        XCTAssertThrowsError(try liveness.toJSONString()) { error in
            XCTAssertEqual((error as? PayloadError)?.fieldPath,
                           "response_data.analyze_liveness_response.video.liveness_result.score")
        }
    }

    // MARK: Errors carry no payload values; hostile input never crashes

    func testErrorsNeverEchoPayloadValues() throws {
        let json = try documentJSON { setDocumentInfo(&$0, "document_number", 987_654_321) }
        XCTAssertThrowsError(try DocumentDetails(jsonString: json)) { error in
            let text = "\(error) \((error as? PayloadError)?.idvError.errorString ?? "")"
            XCTAssertFalse(text.contains("987654321"), text)
            XCTAssertTrue(text.contains("response_data.document_info.document_number"), text)
            XCTAssertEqual((error as? PayloadError)?.idvError.longErrorCode, IDVErrorCode.malformedRequest.rawValue)
        }
        let nameAsNumber = try documentJSON { setDocumentInfo(&$0, "surname", ["DOE"]) }
        XCTAssertThrowsError(try DocumentDetails(jsonString: nameAsNumber)) { error in
            XCTAssertFalse("\(error)".contains("DOE"))
        }
    }

    func testDeeplyNestedInputFailsCleanly() {
        // 100 000 nested arrays inside an open identity_data value: rejected or decoded, never a crash.
        let depth = 100_000
        let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let json = #"{"identity_data":{"x":"# + nested + #"},"document_info":{"document_images":{}},"document_status":{"overall_document_status":"OK","error_list":[],"warning_list":[],"checks_performed":[]}}"#
        XCTAssertThrowsError(try AdditionalDocumentScanDetails(jsonString: json)) { error in
            XCTAssertEqual((error as? PayloadError)?.kind, .notJSON)
        }
    }

    func testEveryTruncationOfASeedExampleFailsWithAnError() throws {
        let text = try T.fixture("seed002-L1875-document-details.json")
        var failures = 0
        for length in stride(from: 0, to: text.count - 1, by: 7) {
            do {
                _ = try DocumentDetails(jsonString: String(text.prefix(length)))
                XCTFail("truncation at \(length) decoded")
            } catch {
                failures += 1
                XCTAssertTrue(error.kind == .notJSON || error.kind == .empty, "\(error)")
            }
        }
        XCTAssertGreaterThan(failures, 100)
    }
}
