import XCTest
@testable import IDVKit

final class IDVKitLinkTests: XCTestCase {
    func testVersionMatchesCore() {
        XCTAssertEqual(IDVKit.version, "0.1.0")
    }
}
