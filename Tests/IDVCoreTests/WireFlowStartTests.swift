import Foundation
import IDVCore
import XCTest

/// `POST /v1/flows/{name}`'s body (`WireFlowStart`): `payload` may be left out when decoding,
/// and is always written when encoding (the shape the SDK sends).
final class WireFlowStartTests: XCTestCase {
    func testPayloadIsOptionalOnDecodeAndAlwaysEncoded() throws {
        XCTAssertEqual(try JSONDecoder().decode(WireFlowStart.self, from: Data("{}".utf8)).payload, .emptyObject)
        XCTAssertEqual(try JSONDecoder().decode(WireFlowStart.self, from: Data(#"{"payload":null}"#.utf8)).payload, .emptyObject)
        XCTAssertEqual(try JSONDecoder().decode(WireFlowStart.self, from: Data(#"{"payload":{"reason":"KYC"}}"#.utf8)).payload, ["reason": "KYC"])
        XCTAssertEqual(String(decoding: try JSONEncoder().encode(WireFlowStart()), as: UTF8.self), #"{"payload":{}}"#)
        let reason = WireFlowStart(payload: ["reason": "Account opening"])
        XCTAssertEqual(try JSONDecoder().decode(WireFlowStart.self, from: try JSONEncoder().encode(reason)), reason)
        // Not an object at all is still a decoding error (the server answers 1001).
        XCTAssertThrowsError(try JSONDecoder().decode(WireFlowStart.self, from: Data("[]".utf8)))
    }
}
