import Foundation
import XCTest
@testable import IDVCore

/// Verdicts, action keys, statuses and the other string vocabularies: known values map to cases,
/// unknown strings decode without crashing and re-encode unchanged.
final class PayloadVocabularyTests: XCTestCase {
    typealias T = PayloadTestSupport

    private func selfie(verdict: String) -> String {
        #"{"response_data":{"biometric_result":{"display_text":""# + verdict + #""},"face_matcher_response":{"score":0.41}},"action_buttons":{"success_button":[{"button_text":"Continue","key":"continue-flow"}],"failure_button":[{"button_text":"Recapture Selfie","key":"reinit-idv-selfie"},{"button_text":"Rescan Document","key":"reinit-idv-document-scan"}]}}"#
    }

    func testKnownVerdicts() throws {
        XCTAssertEqual(try SelfieDetails(jsonString: selfie(verdict: "MATCHED")).responseData.biometricResult.displayText, .matched)
        XCTAssertEqual(try SelfieDetails(jsonString: selfie(verdict: "NOT_MATCHED")).responseData.biometricResult.displayText, .notMatched)
        XCTAssertEqual(try SelfieDetails(jsonString: selfie(verdict: "LIVENESS_FAILED")).responseData.biometricResult.displayText, .livenessFailed)
        XCTAssertTrue(BiometricVerdict.matched.isSuccess)
        XCTAssertFalse(BiometricVerdict.notMatched.isSuccess)
        XCTAssertFalse(BiometricVerdict.livenessFailed.isSuccess)
    }

    func testUnknownVerdictDecodesAndRoundTrips() throws {
        for raw in ["SPOOF_SUSPECTED", "matched", "", "MATCHED ", "🙂"] {
            let text = selfie(verdict: raw)
            let details = try SelfieDetails(jsonString: text)
            XCTAssertEqual(details.responseData.biometricResult.displayText, .other(raw))
            XCTAssertEqual(details.responseData.biometricResult.displayText.rawValue, raw)
            XCTAssertFalse(details.responseData.biometricResult.displayText.isSuccess, "only exact MATCHED succeeds: \(raw)")
            // A failed or unknown verdict shows the failure buttons (seed 002 §6.3).
            XCTAssertEqual(details.displayedButtons.map(\.key), [.reinitSelfie, .reinitDocumentScan])
            XCTAssertTrue(details.offers(.reinitSelfie))
            XCTAssertFalse(details.offers(.continueFlow))
            try T.assertSameJSON(try details.toJSONString(), text)
        }
        // Equality follows the raw string.
        XCTAssertEqual(BiometricVerdict.other("MATCHED"), .matched)
        XCTAssertTrue(BiometricVerdict.other("MATCHED").isKnown)
        XCTAssertFalse(BiometricVerdict(rawValue: "matched").isKnown, "case-sensitive (seed 002 L2916)")
        XCTAssertEqual(BiometricVerdict(rawValue: "MATCHED"), .matched)
    }

    func testVocabulariesEncodeAsPlainStrings() throws {
        let button = ActionButton(buttonText: "Rescan Document", key: .reinitDocumentScan)
        let data = try JSONEncoder().encode(button)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["key"] as? String, "reinit-idv-document-scan")
        let check = DocumentCheck(checkName: "Chip Verification", result: .other("SKIPPED"), category: "CHIP")
        let checkObject = try XCTUnwrap(try JSONSerialization.jsonObject(with: JSONEncoder().encode(check)) as? [String: Any])
        XCTAssertEqual(checkObject["result"] as? String, "SKIPPED")
        XCTAssertEqual(checkObject["category"] as? String, "CHIP")
    }

    func testActionKeys() {
        XCTAssertEqual(IDVActionKey(rawValue: "continue-flow"), .continueFlow)
        XCTAssertEqual(IDVActionKey(rawValue: "reinit-idv-document-scan"), .reinitDocumentScan)
        XCTAssertEqual(IDVActionKey(rawValue: "reinit-idv-selfie"), .reinitSelfie)
        XCTAssertEqual(IDVActionKey.knownValues.map(\.rawValue), ["continue-flow", "reinit-idv-document-scan", "reinit-idv-selfie"])
        // The wire mapping is exact; the answer mapping turns "true" into continue-flow (ARCHITECTURE §5).
        XCTAssertEqual(IDVActionKey(rawValue: "true"), .other("true"))
        XCTAssertEqual(IDVActionKey(selfieConfirmationAction: "true"), .continueFlow)
        XCTAssertEqual(IDVActionKey(selfieConfirmationAction: "continue-flow"), .continueFlow)
        XCTAssertEqual(IDVActionKey(selfieConfirmationAction: "reinit-idv-selfie"), .reinitSelfie)
        XCTAssertEqual(IDVActionKey(selfieConfirmationAction: "false"), .other("false"))
        XCTAssertEqual(IDVActionKey(selfieConfirmationAction: "TRUE"), .other("TRUE"))
        XCTAssertEqual(IDVActionKey(selfieConfirmationAction: ""), .other(""))
        // The seeds' boolean form: "false" rejects the selfie (seed 002 A4), exact and case-sensitive.
        XCTAssertEqual(SelfieConfirmationAnswer("false"), .reject)
        XCTAssertEqual(SelfieConfirmationAnswer("true"), .action(.continueFlow))
        XCTAssertEqual(SelfieConfirmationAnswer("reinit-idv-selfie"), .action(.reinitSelfie))
        XCTAssertEqual(SelfieConfirmationAnswer("FALSE"), .action(.other("FALSE")))
    }

    /// The capture's meta_data as the server keeps it: known, well-formed fields only.
    func testSelfieCaptureMetadataSanitising() throws {
        let full = try XCTUnwrap(SelfieCaptureMetadata(sanitising: ["sdk": "IDVKit", "sdk_version": "0.9.0+linux", "platform": "linux",
                                                                    "camera": "back", "frame_count": 30, "fps": 10, "name": "Katie Hill"]))
        XCTAssertEqual(full, SelfieCaptureMetadata(sdk: "IDVKit", sdkVersion: "0.9.0+linux", platform: "linux", camera: "back",
                                                   frameCount: 30, framesPerSecond: 10))
        XCTAssertEqual(try JSONValue(encoding: full), ["sdk": "IDVKit", "sdk_version": "0.9.0+linux", "platform": "linux", "camera": "back",
                                                      "frame_count": 30, "fps": 10])
        let odd = try XCTUnwrap(SelfieCaptureMetadata(sanitising: ["sdk": "Katie's phone", "sdk_version": .string(String(repeating: "9", count: 33)),
                                                                   "platform": "", "camera": "FRONT", "frame_count": 10_001, "fps": 0]))
        XCTAssertEqual(odd, SelfieCaptureMetadata())
        XCTAssertNil(SelfieCaptureMetadata(sanitising: "iPhone"))
        XCTAssertNil(SelfieCaptureMetadata(sanitising: [1, 2]))
    }

    func testIDVStatusRawValues() throws {
        XCTAssertEqual(IDVStatus(rawValue: 0), .approved)
        XCTAssertEqual(IDVStatus(rawValue: 1), .recapture)
        XCTAssertEqual(IDVStatus(rawValue: 2), .cancel)
        XCTAssertNil(IDVStatus(rawValue: 3))
        XCTAssertNil(IDVStatus(rawValue: -1))
        XCTAssertEqual(IDVStatus.allCases.map(\.name), ["RDNA_IDV_APPROVED", "RDNA_IDV_RECAPTURE", "RDNA_IDV_CANCEL"])
        XCTAssertEqual(IDVStatus.recapture.description, "RECAPTURE (1)")
        XCTAssertThrowsError(try IDVStatus(validating: 3)) { error in
            XCTAssertEqual(error as? IDVCoreError, .unknownRawValue(type: "IDVStatus", value: 3))
        }
        XCTAssertEqual(try JSONDecoder().decode([IDVStatus].self, from: Data("[2,0,1]".utf8)), [.cancel, .approved, .recapture])
        XCTAssertThrowsError(try JSONDecoder().decode([IDVStatus].self, from: Data("[0,7]".utf8))) { error in
            guard case let DecodingError.dataCorrupted(context)? = error as? DecodingError else { return XCTFail("\(error)") }
            XCTAssertEqual(context.debugDescription, "unknown IDVStatus raw value 7 (assigned: 0, 1, 2)")
        }
    }

    /// Each known case decodes to itself, not to an equal-by-string `.other` (a `switch` must see it).
    func testKnownStringsDecodeToNamedCases() throws {
        func check<V: OpenStringVocabulary>(_ type: V.Type, count: Int, file: StaticString = #filePath, line: UInt = #line) throws {
            XCTAssertEqual(V.knownValues.count, count, "\(V.self)", file: file, line: line)
            XCTAssertEqual(Set(V.knownValues.map(\.rawValue)).count, count, "\(V.self) raw values unique", file: file, line: line)
            // A named case has no payload; `.other(raw)` carries one. `isKnown` and `==` follow the
            // string, so only the payload tells the two apart.
            func isNamedCase(_ value: V) -> Bool { Mirror(reflecting: value).children.isEmpty }
            for value in V.knownValues {
                XCTAssertTrue(value.isKnown, file: file, line: line)
                XCTAssertTrue(isNamedCase(value), "\(V.self) \(value.rawValue) listed as .other", file: file, line: line)
                let decoded = V(rawValue: value.rawValue)
                XCTAssertTrue(isNamedCase(decoded), "\(V.self) \(value.rawValue) decoded as .other", file: file, line: line)
                let viaJSON = try XCTUnwrap(try JSONDecoder().decode([V].self, from: JSONEncoder().encode([value])).first)
                XCTAssertTrue(isNamedCase(viaJSON), "\(V.self) \(value.rawValue) JSON-decoded as .other", file: file, line: line)
                XCTAssertEqual(viaJSON, value, file: file, line: line)
            }
            let unknown = V(rawValue: "NO_SUCH_VALUE")
            XCTAssertFalse(unknown.isKnown, file: file, line: line)
            XCTAssertFalse(isNamedCase(unknown), file: file, line: line)
            XCTAssertEqual(unknown.rawValue, "NO_SUCH_VALUE", file: file, line: line)
        }
        try check(BiometricVerdict.self, count: 3)
        try check(IDVActionKey.self, count: 3)
        try check(DocumentOverallStatus.self, count: 2)
        try check(DocumentCheckResult.self, count: 4)
        try check(DocumentScanStatus.self, count: 4)
        try check(AuditStatus.self, count: 2)
        try check(OrchestrationUseCase.self, count: 6)

        let verdict = try SelfieDetails(jsonString: selfie(verdict: "LIVENESS_FAILED")).responseData.biometricResult.displayText
        switch verdict {
        case .livenessFailed: break
        default: XCTFail("LIVENESS_FAILED must decode to .livenessFailed")
        }
    }

    func testDocumentAndAuditVocabularies() {
        XCTAssertEqual(DocumentOverallStatus(rawValue: "VALID"), .valid)
        XCTAssertEqual(DocumentOverallStatus(rawValue: "INVALID"), .invalid)
        XCTAssertEqual(DocumentOverallStatus(rawValue: "UNKNOWN"), .other("UNKNOWN"))
        XCTAssertEqual(DocumentCheckResult(rawValue: "NOT_PERFORMED"), .notPerformed)
        XCTAssertEqual(DocumentCheckResult(rawValue: "FAILED"), .failed)
        XCTAssertEqual(DocumentScanStatus(rawValue: "NOT DONE"), .notDone)
        XCTAssertEqual(DocumentScanStatus.notDone.rawValue, "NOT DONE")
        XCTAssertEqual(DocumentScanStatus(rawValue: "NOT_DONE"), .other("NOT_DONE"))
        XCTAssertEqual(AuditStatus(rawValue: "FAILURE"), .failure)
        XCTAssertEqual(OrchestrationUseCase(rawValue: "RDNA_IDV_CHECK_TEMPLATE"), .checkTemplate)
        XCTAssertEqual(OrchestrationUseCase.postLoginOptOut.rawValue, "RDNA_IDV_POSTLOGIN_OPTOUT")
        XCTAssertEqual(Set([BiometricVerdict.matched, .other("MATCHED"), .notMatched]).count, 2)
    }

    func testJSONValueKeepsIntegersAndCompareNumbersByValue() throws {
        XCTAssertEqual(JSONValue.integer(92), .number(92.0))
        XCTAssertNotEqual(JSONValue.integer(1), .bool(true))
        XCTAssertNotEqual(JSONValue.null, .string(""))
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"a":92,"b":0.5,"c":[true,null,"x"]}"#.utf8))
        guard case let .object(object) = value, case .integer(92)? = object["a"], case .number(0.5)? = object["b"] else {
            return XCTFail("unexpected tree: \(value.displayText)")
        }
        let encoded = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        XCTAssertTrue(encoded.contains("\"a\":92"), encoded)
        XCTAssertEqual(object["c"], .array([.bool(true), .null, .string("x")]))
        XCTAssertEqual(JSONValue.string("M").displayText, "M")
        XCTAssertEqual(JSONValue.integer(7).displayText, "7")
        XCTAssertEqual(JSONValue.string("secret").description, "JSONValue(string)", "description never shows content")
    }
}
