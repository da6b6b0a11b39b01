import XCTest
import MRZ

// Replaced by the MRZ issue's tests.
final class MRZPlaceholderTests: XCTestCase {
    func testModuleImports() { XCTAssertNotNil(MRZ.self as Any) }
}
