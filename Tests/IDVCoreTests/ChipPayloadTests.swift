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

    /// The chip challenge and the chip's answer on the wire (ICAO 9303-11 §6.1): shapes, round trips, refusals.
    func testChipChallengeAndActiveAuthenticationAnswer() throws {
        let c = ChipChallengePayload(challenge: [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF], expiresAt: 1_767_225_600)
        let json = String(decoding: try JSONEncoder().encode(c), as: UTF8.self)
        XCTAssertTrue(json.contains(#""active_authentication_challenge":"0123456789abcdef""#), json)
        XCTAssertTrue(json.contains(#""expires_at":1767225600"#), json)
        XCTAssertEqual(try JSONDecoder().decode(ChipChallengePayload.self, from: Data(json.utf8)), c)
        XCTAssertEqual(c.challenge, [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
        XCTAssertEqual(ChipChallengePayload.payloadKey, "chip_challenge")
        // In the upload challenge's payload (DocumentUploadRequest): beside max_pages and media_types, and absent
        // from a server that verifies no chips.
        let request = DocumentUploadRequest(maxPages: 2, chipChallenge: c)
        let requestJSON = try JSONValue(encoding: request)
        XCTAssertEqual(requestJSON["chip_challenge"]?["active_authentication_challenge"]?.stringValue, "0123456789abcdef")
        XCTAssertEqual(requestJSON["max_pages"]?.intValue, 2)
        XCTAssertEqual(try requestJSON.decode(DocumentUploadRequest.self), request)
        let plain = try JSONValue(encoding: DocumentUploadRequest(maxPages: 2))
        XCTAssertNil(plain["chip_challenge"])
        XCTAssertNil(try plain.decode(DocumentUploadRequest.self).chipChallenge)
        var short = c
        short.activeAuthenticationChallenge = "0123"
        XCTAssertNil(short.challenge)

        let sig = Data((0..<256).map { UInt8($0) })
        let a = ActiveAuthenticationAnswer(challenge: [1, 2, 3, 4, 5, 6, 7, 8], signature: sig)
        let p = ChipFilesPayload(sod: Data([0x77, 0x00]), activeAuthentication: a, chipAuthentication: .notSupported)
        let text = String(decoding: try JSONEncoder().encode(p), as: UTF8.self)
        XCTAssertTrue(text.contains(#""active_authentication":{"#) && text.contains(#""challenge":"0102030405060708""#), text)
        XCTAssertTrue(text.contains(#""chip_authentication":"not_supported""#), text)
        let back = try JSONDecoder().decode(ChipFilesPayload.self, from: Data(text.utf8))
        XCTAssertEqual(back, p)
        let d = try XCTUnwrap(back.activeAuthentication).decoded()
        XCTAssertEqual(d.challenge, [1, 2, 3, 4, 5, 6, 7, 8])
        XCTAssertEqual(d.signature, sig)
        // Upper-case hex is read too; a payload without the new fields decodes as before.
        XCTAssertEqual(try ActiveAuthenticationAnswer(challenge: [0xAB, 0xCD, 0xEF, 0, 0, 0, 0, 1], signature: sig).decoded().challenge.first, 0xAB)
        XCTAssertEqual(ChipHex.decode("ABcd01"), [0xAB, 0xCD, 0x01])
        XCTAssertNil(try JSONDecoder().decode(ChipFilesPayload.self, from: Data(#"{"sod":"dwA=","data_groups":{}}"#.utf8)).activeAuthentication)

        func refused(_ challenge: String, _ signature: String) -> String {
            do { _ = try ActiveAuthenticationAnswer(challenge: challenge, signature: signature).decoded(); return "accepted" }
            catch { return error.description }
        }
        XCTAssertTrue(refused("0102030405", "AAAA").contains("16 hexadecimal digits"))
        XCTAssertTrue(refused("zz02030405060708", "AAAA").contains("16 hexadecimal digits"))
        XCTAssertTrue(refused("0102030405060708", "%%%").contains("base64 of 1–1024 bytes"))
        XCTAssertTrue(refused("0102030405060708", "").contains("base64"))
        XCTAssertTrue(refused("0102030405060708", Data(count: 1025).base64EncodedString()).contains("1–1024"))
        XCTAssertEqual(refused("0102030405060708", Data(count: 1024).base64EncodedString()), "accepted")
        // An unknown Chip Authentication outcome is not decoded (the server refuses the answer, 1001).
        XCTAssertThrowsError(try JSONDecoder().decode(ChipFilesPayload.self, from: Data(#"{"sod":"dwA=","data_groups":{},"chip_authentication":"maybe"}"#.utf8)))
        XCTAssertEqual(ChipAuthenticationReport.allCases.map(\.rawValue), ["verified", "failed", "not_supported", "not_performed"])
    }

    /// The Active Authentication reasons: their codes and sentences, one each.
    func testActiveAuthenticationReasons() {
        let aa: [ChipVerificationReason] = [.genuine, .activeAuthenticationNotPerformed, .activeAuthenticationNotSupported, .activeAuthenticationUnsupported,
                                            .activeAuthenticationFailed, .activeAuthenticationReplayed, .activeAuthenticationKeyNotSigned]
        XCTAssertEqual(aa.map(\.rawValue), ["genuine", "active_authentication_not_performed", "active_authentication_not_supported",
                                            "active_authentication_unsupported", "active_authentication_failed", "active_authentication_replayed",
                                            "active_authentication_key_not_signed"])
        XCTAssertEqual(Set(aa.map(\.sentence)).count, aa.count)
        XCTAssertTrue(ChipVerificationReason.activeAuthenticationNotPerformed.sentence.contains("not asked to prove it is not a copy"))
        XCTAssertTrue(ChipVerificationReason.activeAuthenticationFailed.sentence.contains("copy"))
        XCTAssertEqual(ChipVerificationReason(rawValue: "passed"), .other("passed"), "passive authentication alone is no longer a pass")
    }
}
