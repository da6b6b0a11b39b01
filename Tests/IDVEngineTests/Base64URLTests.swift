import Foundation
import IDVCrypto
import IDVEngine
import XCTest

/// `Hex.base64url` (tokens, webhook secrets, cursors) writes RFC 4648 §5 exactly as Foundation's
/// base64 with `+/` → `-_` and the padding dropped did, for every length and every byte.
final class Base64URLTests: XCTestCase {
    func foundation(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    func testSameTextAsFoundationForEveryLengthAndByte() {
        XCTAssertEqual(Hex.base64url([]), "")
        XCTAssertEqual(Hex.base64url(Array("f".utf8)), "Zg")          // RFC 4648 §10, unpadded
        XCTAssertEqual(Hex.base64url(Array("fo".utf8)), "Zm8")
        XCTAssertEqual(Hex.base64url(Array("foo".utf8)), "Zm9v")
        XCTAssertEqual(Hex.base64url(Array("foobar".utf8)), "Zm9vYmFy")
        XCTAssertEqual(Hex.base64url([0xFB, 0xFF, 0xBF]), "-_-_")      // the two URL-safe characters
        for n in 0...70 {
            let bytes = Crypto.randomBytes(n)
            XCTAssertEqual(Hex.base64url(bytes), foundation(bytes), "\(n) bytes")
            XCTAssertEqual(Hex.base64urlDecode(Hex.base64url(bytes)), bytes)
        }
        let every = (0...255).map { UInt8($0) }
        XCTAssertEqual(Hex.base64url(every), foundation(every))
        XCTAssertEqual(Sodium().token().count, 43)
    }
}
