import XCTest
@testable import FaceKit

final class FaceKitLinkTests: XCTestCase {
    func testLinkedAgainstDlib19() {
        XCTAssertTrue(FaceKit.dlibVersion.hasPrefix("19."), FaceKit.dlibVersion)
    }
}
