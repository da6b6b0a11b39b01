import Foundation
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVReaders
import Imaging
import XCTest

/// ``ImageHeaderCosting``'s model of document pages, from headers alone (PNG headers cut after IHDR:
/// nothing to decode): working pixels × 16 bytes + 32 MiB, what a decoder holds whole, and every
/// header's pixels toward the request limit — one over the reader's per-page limit included.
final class ImageHeaderCostingTests: XCTestCase {
    static func pngHeader(_ width: UInt32, _ height: UInt32, colour: UInt8 = 2, interlaced: Bool = false) -> Data {
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 255), UInt8((v >> 8) & 255), UInt8(v & 255)] }
        return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
                    + be32(width) + be32(height) + [8, colour, 0, 0, interlaced ? 1 : 0] + [0, 0, 0, 0])
    }

    func testPagesCostTheirWorkingPixelsAndEveryHeaderCountsTowardThePixelLimit() {
        let costing = ImageHeaderCosting()
        let overhead = ImageHeaderCosting.analysisOverheadBytes
        XCTAssertEqual(overhead, 32 << 20)
        // A 4608 × 3456 card pair: 2400 × 1800 working pixels each. 164 MiB, under the default 320.
        let pair = costing.cost(pages: [Self.pngHeader(4608, 3456), Self.pngHeader(4608, 3456)])
        XCTAssertEqual(pair, AnalysisCost(pixels: 2 * 4608 * 3456, bytes: 2 * 2400 * 1800 * 16 + overhead))
        XCTAssertEqual(Double(pair.bytes) / 1_048_576, 163.8, accuracy: 0.05)   // "164 MiB" in docs/PROTOCOL.md §7
        XCTAssertLessThan(pair.bytes, AnalysisSettings().maxAnalysisBytes)
        // An 8000 × 6000 photo costs what a 4608 × 3456 one does; a page under the working size its own pixels.
        XCTAssertEqual(costing.cost(pages: [Self.pngHeader(8000, 6000)]).bytes, 2400 * 1800 * 16 + overhead)
        XCTAssertEqual(costing.cost(pages: [Self.pngHeader(1600, 1200)]).bytes, 1600 * 1200 * 16 + overhead)
        // Interlaced: libpng decodes it whole, CImaging cuts a copy — 2 × 3 bytes a source pixel more.
        XCTAssertEqual(costing.cost(pages: [Self.pngHeader(4608, 3456, interlaced: true)]).bytes,
                       2400 * 1800 * 16 + 6 * 4608 * 3456 + overhead)
        // Over the reader's per-page limit (64 MP): never decoded (no memory), but its pixels count, so
        // the admission refuses it with 1102 instead of the reader's 1009.
        let huge = costing.cost(pages: [Self.pngHeader(10_392, 7_794)])
        XCTAssertEqual(huge, AnalysisCost(pixels: 10_392 * 7_794, bytes: 0))
        XCTAssertGreaterThan(huge.pixels, AnalysisSettings().maxRequestPixels)
        // Not an image: nothing (the reader refuses it with 1008).
        XCTAssertEqual(costing.cost(pages: [Data("not an image".utf8)]), .zero)
        // Decoded in full (no working size): 16 bytes a source pixel.
        XCTAssertEqual(ImageHeaderCosting(pageWorkingMaxDimension: nil).cost(pages: [Self.pngHeader(4608, 3456)]).bytes,
                       4608 * 3456 * 16 + overhead)
    }

    /// Selfie frames: the largest frame within the per-frame limit × 12 bytes; every frame's pixels count.
    func testFramesCostTheLargestFrameAndEveryFrameCountsTowardThePixelLimit() {
        let costing = ImageHeaderCosting(maxFramePixels: 4_000_000)
        let frames = [Self.pngHeader(640, 480), Self.pngHeader(2000, 2000), Self.pngHeader(3000, 2000)]
        XCTAssertEqual(costing.cost(frames: frames), AnalysisCost(pixels: 640 * 480 + 4_000_000 + 6_000_000, bytes: 4_000_000 * 12))
    }
}
