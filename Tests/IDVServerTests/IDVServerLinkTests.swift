import XCTest
@testable import IDVServer

final class IDVServerLinkTests: XCTestCase {
    func testLinkedLibraries() {
        let v = IDVServer.libraryVersions
        XCTAssertTrue(v["sqlite"]?.hasPrefix("3.") ?? false)
        XCTAssertNotNil(v["libsodium"])
        XCTAssertTrue(v["libmicrohttpd"]?.hasPrefix("0.9") ?? false)
    }
}
