import XCTest
@testable import DocumentReader

final class DocumentReaderLinkTests: XCTestCase {
    func testLinkedAgainstCairo() {
        XCTAssertTrue(DocumentReader.cairoVersion.hasPrefix("1."), DocumentReader.cairoVersion)
    }
}
