import Foundation
@testable import Imaging
import XCTest

/// ``ImageHeader``: width and height from the header alone, for the cost of an upload.
final class ImageHeaderTests: XCTestCase {
    func testReadsPNGAndJPEGSizesAndRefusesOtherBytes() throws {
        let gray = try Image(gray: [UInt8](repeating: 90, count: 300 * 200), width: 300, height: 200)
        XCTAssertEqual(ImageHeader.read(try gray.pngData()), ImageHeader(format: "png", width: 300, height: 200))
        XCTAssertEqual(ImageHeader.read(try gray.jpegData()), ImageHeader(format: "jpeg", width: 300, height: 200))
        XCTAssertNil(ImageHeader.read(Data("not an image".utf8)))
        XCTAssertNil(ImageHeader.read(Data()))
    }

    /// A PNG declaring 100 000 × 100 000 pixels (10 gigapixels) whose data is cut after the header:
    /// its size is read, nothing is decoded or allocated.
    func testReadsTheDeclaredSizeOfAHugeTruncatedPNG() throws {
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 255), UInt8((v >> 8) & 255), UInt8(v & 255)] }
        png += be32(100_000) + be32(100_000) + [8, 0, 0, 0, 0] + [0, 0, 0, 0]
        XCTAssertEqual(ImageHeader.read(png)?.pixels, 10_000_000_000)
    }
}
