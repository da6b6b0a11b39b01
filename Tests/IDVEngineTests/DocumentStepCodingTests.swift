import Foundation
import IDVCore
@testable import IDVEngine
import XCTest

/// The document step's sealed state with its chip challenge: round trips, and a state sealed before the chip
/// challenge existed (`{"upload":{}}`, a session in flight across an upgrade) still opens, with no challenge.
final class DocumentStepCodingTests: XCTestCase {
    func testChipChallengeRidesWithTheUploadStepAndOldStatesStillDecode() throws {
        let c = ChipChallengePayload(challenge: [9, 8, 7, 6, 5, 4, 3, 2], expiresAt: 1_767_225_600)
        let step = DocumentStep.upload(chipChallenge: c)
        let data = try JSONEncoder().encode(step)
        XCTAssertEqual(try JSONDecoder().decode(DocumentStep.self, from: data), step)
        XCTAssertEqual(try JSONDecoder().decode(DocumentStep.self, from: Data(#"{"upload":{}}"#.utf8)), .upload(chipChallenge: nil))
        XCTAssertEqual(try JSONDecoder().decode(DocumentStep.self, from: Data(#"{"start":{}}"#.utf8)), .start)
        XCTAssertNotEqual(DocumentStep.upload(chipChallenge: c), .upload(chipChallenge: nil))
    }
}
