import Foundation
import XCTest
@testable import IDVCore

/// The seeds' spellings of `document_type` (seed 002 §6.1) and `result_criteria` (seed 002 §6.2).
final class DocumentKindTests: XCTestCase {
    func testICAODocumentCodesBecomeTheSeedsWords() {
        XCTAssertEqual(DocumentKind(icaoDocumentCode: "P").rawValue, "PASSPORT")
        XCTAssertEqual(DocumentKind(icaoDocumentCode: "P<"), .passport)
        XCTAssertEqual(DocumentKind(icaoDocumentCode: "PD"), .passport)
        for code in ["I", "I<", "ID", "A", "AC", "C", "IR"] { XCTAssertEqual(DocumentKind(icaoDocumentCode: code).rawValue, "ID_CARD", code) }
        XCTAssertEqual(DocumentKind(icaoDocumentCode: "V").rawValue, "VISA")
        XCTAssertEqual(DocumentKind(icaoDocumentCode: "v<"), .visa)
        // Nothing is lost: another code stays as it is.
        XCTAssertEqual(DocumentKind(icaoDocumentCode: "D1"), .other("D1"))
        XCTAssertEqual(DocumentKind(icaoDocumentCode: ""), .other(""))
        XCTAssertEqual(try JSONDecoder().decode(DocumentKind.self, from: Data("\"ID_CARD\"".utf8)), .idCard)
        XCTAssertEqual(String(decoding: try JSONEncoder().encode(DocumentKind.visa), as: UTF8.self), "\"VISA\"")
    }

    func testResultCriteriaFollowTheVerdict() {
        XCTAssertEqual(BiometricResultCriteria(verdict: .matched).rawValue, "FACE_MATCH")
        XCTAssertEqual(BiometricResultCriteria(verdict: .notMatched).rawValue, "FACE_MATCH")
        XCTAssertEqual(BiometricResultCriteria(verdict: .livenessFailed).rawValue, "LIVENESS")
        XCTAssertEqual(BiometricResultCriteria(rawValue: "face_match"), .other("face_match"), "exact and case-sensitive, as the seeds compare")
        XCTAssertEqual(BiometricResultCriteria.knownValues, [.faceMatch, .liveness])
    }
}
