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

    /// What the decoder holds whole whatever the working size: nothing for a baseline JPEG or a
    /// non-interlaced PNG (decoded scaled, row by row); an interlaced PNG's pixels twice (RGB: 6 bytes
    /// a pixel); a progressive JPEG's coefficients (2 bytes × 64 per block of each component: 3 bytes
    /// a pixel at 4:2:0).
    func testWholeImageBytesOfProgressiveAndInterlacedImages() throws {
        let gray = try Image(gray: [UInt8](repeating: 90, count: 300 * 200), width: 300, height: 200)
        XCTAssertEqual(ImageHeader.read(try gray.pngData())?.wholeImageBytes, 0)
        XCTAssertEqual(ImageHeader.read(try gray.jpegData())?.wholeImageBytes, 0)
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 255), UInt8((v >> 8) & 255), UInt8(v & 255)] }
        let ihdr: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
        let interlacedRGB = Data(ihdr + be32(4000) + be32(3000) + [8, 2, 0, 0, 1] + [0, 0, 0, 0])
        XCTAssertEqual(ImageHeader.read(interlacedRGB)?.wholeImageBytes, 2 * 3 * 12_000_000)
        let interlacedGrey = Data(ihdr + be32(4000) + be32(3000) + [8, 0, 0, 0, 1] + [0, 0, 0, 0])
        XCTAssertEqual(ImageHeader.read(interlacedGrey)?.wholeImageBytes, 2 * 12_000_000)
        // SOI, APP0 (skipped), SOF2 4000 × 3000 with Y 2×2, Cb 1×1, Cr 1×1 (4:2:0).
        let app0: [UInt8] = [0xFF, 0xE0, 0x00, 0x06, 0x4A, 0x46, 0x49, 0x46]
        let sof2: [UInt8] = [0xFF, 0xC2, 0x00, 0x11, 8, 0x0B, 0xB8, 0x0F, 0xA0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        XCTAssertEqual(ImageHeader.jpegProgressiveBytes(Data([0xFF, 0xD8] + app0 + sof2)), (250 * 188 * 4 + 2 * 250 * 188) * 64 * 2)
        var baseline = sof2
        baseline[1] = 0xC0
        XCTAssertEqual(ImageHeader.jpegProgressiveBytes(Data([0xFF, 0xD8] + app0 + baseline)), 0)
    }
}
