import Foundation
import IDVCore
import XCTest

final class ChipPayloadTests: XCTestCase {
    func testRoundTripsAndDecodes() throws {
        let p = ChipFilesPayload(sod: Data([0x77, 0x01, 0x00]), com: Data([0x60, 0x00]), dataGroups: [1: Data([0x61, 0x00]), 2: Data([0x75, 0x00])])
        let json = try JSONEncoder().encode(p)
        let text = String(decoding: json, as: UTF8.self)
        XCTAssertTrue(text.contains("\"data_groups\""), text)
        let back = try JSONDecoder().decode(ChipFilesPayload.self, from: json)
        XCTAssertEqual(back, p)
        let d = try back.decoded()
        XCTAssertEqual(d.sod, Data([0x77, 0x01, 0x00]))
        XCTAssertEqual(d.com, Data([0x60, 0x00]))
        XCTAssertEqual(d.dataGroups, [1: Data([0x61, 0x00]), 2: Data([0x75, 0x00])])
    }

    func testRefusesBadBase64NumbersAndSizes() throws {
        func refused(_ json: String) -> String {
            do {
                _ = try JSONDecoder().decode(ChipFilesPayload.self, from: Data(json.utf8)).decoded()
                return "accepted"
            } catch let e as ChipFilesPayload.Invalid { return e.description } catch { return "\(error)" }
        }
        XCTAssertTrue(refused(#"{"sod":"%%%","data_groups":{}}"#).contains("sod is not base64"))
        XCTAssertTrue(refused(#"{"sod":"","data_groups":{}}"#).contains("not base64"))
        XCTAssertTrue(refused(#"{"sod":"dwA=","data_groups":{"17":"YQA="}}"#).contains("not 1…16"))
        XCTAssertTrue(refused(#"{"sod":"dwA=","data_groups":{"01":"YQA="}}"#).contains("not 1…16"))
        let huge = String(repeating: "A", count: (ChipFilesPayload.maxFileBytes / 3 + 8) * 4)
        XCTAssertTrue(refused("{\"sod\":\"\(huge)\",\"data_groups\":{}}").contains("larger than 4 MiB"))
        let big = Data(repeating: 1, count: 3 * 1024 * 1024).base64EncodedString()
        XCTAssertTrue(refused("{\"sod\":\"\(big)\",\"com\":\"\(big)\",\"data_groups\":{\"1\":\"\(big)\"}}").contains("8 MiB together"))
    }

    func testReasonVocabulary() {
        for r in ChipVerificationReason.knownValues {
            XCTAssertEqual(ChipVerificationReason(rawValue: r.rawValue), r)
            XCTAssertFalse(r.sentence.isEmpty)
        }
        XCTAssertEqual(ChipVerificationReason(rawValue: "newer_reason"), .other("newer_reason"))
        // An unsigned extra data group is not said to be altered data (a fresh-user trial: an extra
        // DG15 beside a genuine chip read "The chip's data has been altered.").
        XCTAssertEqual(ChipVerificationReason.dataGroupHashMismatch.sentence, "The chip's data has been altered.")
        XCTAssertFalse(ChipVerificationReason.dataGroupNotSigned.sentence.contains("altered"))
        XCTAssertTrue(ChipVerificationReason.dataGroupNotSigned.sentence.contains("does not sign"))
        XCTAssertEqual(Set(ChipVerificationReason.knownValues.map(\.rawValue)).count, ChipVerificationReason.knownValues.count)
    }
}
