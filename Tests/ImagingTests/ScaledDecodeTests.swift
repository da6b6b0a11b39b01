import Foundation
import XCTest
@testable import Imaging

/// Decoding at the resolution a stage needs (`Image.decode(_:maxPixels:applyOrientation:maxDimension:region:)`):
/// JPEG by libjpeg-turbo's DCT scaling and scanline/iMCU cropping, PNG row by row; EXIF orientation
/// read by libexif.
final class ScaledDecodeTests: XCTestCase {
    /// A 960 × 720 test card: a white page with a black square (x 300–419, y 200–319), a grey bar
    /// along the bottom and a red mark near the top-left corner.
    static let card: Image = {
        let w = 960, h = 720
        var px = [UInt8](repeating: 255, count: w * h * 3)
        func fill(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, _ c: (UInt8, UInt8, UInt8)) {
            for y in y0..<y1 { for x in x0..<x1 { let o = (y * w + x) * 3; px[o] = c.0; px[o + 1] = c.1; px[o + 2] = c.2 } }
        }
        fill(300, 200, 420, 320, (0, 0, 0))
        fill(0, 660, 960, 720, (128, 128, 128))
        fill(40, 40, 80, 80, (220, 30, 30))
        return try! Image(rgb: px, width: w, height: h)
    }()

    /// Centroid of dark pixels (grey < 64) of `image`.
    func darkCentroid(_ image: Image) -> (x: Double, y: Double) {
        let g = image.grayPixels
        var sx = 0.0, sy = 0.0, n = 0.0
        for y in 0..<image.height { for x in 0..<image.width where g[y * image.width + x] < 64 { sx += Double(x); sy += Double(y); n += 1 } }
        return (sx / n, sy / n)
    }

    func meanAbsoluteDifference(_ a: Image, _ b: Image) -> Double {
        XCTAssertEqual([a.width, a.height, a.channels], [b.width, b.height, b.channels])
        return zip(a.pixels, b.pixels).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(a.pixels.count)
    }

    func testWholeImageAtFullSizeIsThePlainDecode() throws {
        for data in [try Self.card.jpegData(quality: 92), try Self.card.pngData()] {
            let d = try Image.decode(data)
            XCTAssertEqual(d.image, try Image(data: data))
            XCTAssertEqual([d.sourceWidth, d.sourceHeight], [960, 720])
            XCTAssertEqual(d.region, PixelRect(x: 0, y: 0, width: 960, height: 720))
            XCTAssertEqual(d.scaleX, 1)
        }
    }

    func testScaledDecodeKeepsGeometryAndLooksLikeAResize() throws {
        for (name, data) in [("jpeg", try Self.card.jpegData(quality: 92)), ("png", try Self.card.pngData())] {
            let full = try Image(data: data)
            for m in [480, 240, 317, 100] {
                let d = try Image.decode(data, maxDimension: m)
                XCTAssertEqual(d.image.width, m, name)
                XCTAssertEqual(d.image.height, Int((720.0 * Double(m) / 960).rounded()), name)
                XCTAssertEqual(d.scaleX, Double(m) / 960, accuracy: 1e-9)
                // The square's centre (359.5, 259.5) lands where the scale puts it.
                let c = darkCentroid(d.image)
                XCTAssertEqual(c.x, (359.5 + 0.5) * d.scaleX - 0.5, accuracy: 0.75, "\(name) \(m)")
                XCTAssertEqual(c.y, (259.5 + 0.5) * d.scaleY - 0.5, accuracy: 0.75, "\(name) \(m)")
                let resized = try full.resized(width: d.image.width, height: d.image.height)
                XCTAssertLessThan(meanAbsoluteDifference(d.image, resized), 3, "\(name) \(m)")
            }
            // Never enlarged.
            XCTAssertEqual(try Image.decode(data, maxDimension: 5000).image, full)
        }
    }

    func testRegionDecodeEqualsACrop() throws {
        let rect = PixelRect(x: 250, y: 150, width: 300, height: 230)
        for (name, data) in [("jpeg", try Self.card.jpegData(quality: 92)), ("png", try Self.card.pngData())] {
            let full = try Image(data: data)
            let d = try Image.decode(data, region: rect)
            XCTAssertEqual(d.region, rect)
            XCTAssertLessThan(meanAbsoluteDifference(d.image, try full.cropped(rect)), 0.05, name)
            // A region scaled down: the square fills the same share of it.
            let small = try Image.decode(data, maxDimension: 100, region: rect)
            XCTAssertEqual([small.image.width, small.image.height], [100, 77])
            let c = darkCentroid(small.image)
            XCTAssertEqual(c.x, (359.5 - 250 + 0.5) * small.scaleX - 0.5, accuracy: 0.75, name)
            XCTAssertEqual(c.y, (259.5 - 150 + 0.5) * small.scaleY - 0.5, accuracy: 0.75, name)
        }
        XCTAssertThrowsError(try Image.decode(try Self.card.pngData(), region: PixelRect(x: 900, y: 0, width: 100, height: 10))) {
            guard case ImageError.invalidArgument = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try Image.decode(try Self.card.pngData(), maxDimension: 0))
    }

    /// With EXIF orientation 6 (stored sideways) the region and the size are those of the upright image.
    func testRegionOfAnOrientedJPEG() throws {
        let data = try Fixtures.face("live_exif_rotated.jpg")
        let upright = try Image(data: data)
        XCTAssertEqual([upright.width, upright.height], [480, 640])
        let rect = PixelRect(x: 100, y: 300, width: 200, height: 120)
        let d = try Image.decode(data, region: rect)
        XCTAssertEqual([d.sourceWidth, d.sourceHeight], [480, 640])
        XCTAssertLessThan(meanAbsoluteDifference(d.image, try upright.cropped(rect)), 0.05)
        let half = try Image.decode(data, maxDimension: 320)
        XCTAssertEqual([half.image.width, half.image.height], [240, 320])
        XCTAssertLessThan(meanAbsoluteDifference(half.image, try upright.resized(width: 240, height: 320)), 4)
    }

    /// The document reader's 10,000 × 10,000 black PNG: scaled row by row to 500 × 500 it is still black.
    func testLargePNGRowByRow() throws {
        let url = Fixtures.faces.deletingLastPathComponent().appendingPathComponent("documents/black-10000x10000.png")
        let data = try Data(contentsOf: url)
        let d = try Image.decode(data, maxPixels: 100_000_000, maxDimension: 500)
        XCTAssertEqual([d.image.width, d.image.height], [500, 500])
        XCTAssertTrue(d.image.pixels.allSatisfy { $0 == 0 })
        XCTAssertEqual([d.sourceWidth, d.sourceHeight], [10_000, 10_000])
        XCTAssertThrowsError(try Image.decode(data, maxDimension: 500)) {   // the default 40 MP limit still applies
            guard case ImageError.tooManyPixels(10_000, 10_000, _) = $0 else { return XCTFail("\($0)") }
        }
    }

    func testTruncatedDataInEveryPath() throws {
        let jpeg = try Self.card.jpegData(quality: 90), png = try Self.card.pngData()
        for data in [jpeg.prefix(jpeg.count / 2), png.prefix(png.count / 2)] {
            for request in [(Int?.none, PixelRect?.none), (200, nil), (nil, PixelRect(x: 0, y: 600, width: 960, height: 100))] {
                XCTAssertThrowsError(try Image.decode(Data(data), maxDimension: request.0, region: request.1)) {
                    guard case ImageError.truncated = $0 else { return XCTFail("\($0)") }
                }
            }
        }
    }
}
