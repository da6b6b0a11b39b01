import Foundation
import XCTest
@testable import Imaging

final class ImageTests: XCTestCase {
    func testDecodesJPEGFixture() throws {
        let image = try Image(data: Fixtures.face("obama_small.jpg"))
        XCTAssertEqual(image.width, 320)
        XCTAssertEqual(image.height, 240)
        XCTAssertEqual(image.format, .rgb)
        XCTAssertEqual(image.pixels.count, 320 * 240 * 3)
        XCTAssertEqual(image.grayPixels.count, 320 * 240)
        // A real photograph is neither flat nor saturated.
        let mean = image.grayPixels.reduce(0) { $0 + Int($1) } / image.grayPixels.count
        XCTAssertTrue((40...220).contains(mean), "mean grey \(mean)")
    }

    func testAppliesEXIFOrientation() throws {
        let data = try Fixtures.face("live_exif_rotated.jpg")
        let stored = try Image(data: data, applyOrientation: false)
        XCTAssertEqual([stored.width, stored.height], [640, 480])
        let upright = try Image(data: data)
        XCTAssertEqual([upright.width, upright.height], [480, 640], "orientation 6 turns the image a quarter")
        XCTAssertEqual(upright, stored.rotated90(times: 1))
        // The top-left pixel of the upright image is the bottom-left of the stored one.
        XCTAssertEqual(Array(upright.pixels[0..<3]), Array(stored.pixels[(479 * 640 * 3)..<(479 * 640 * 3 + 3)]))
    }

    func testPixelOperations() throws {
        // 3×2 RGB with distinct pixels.
        let rgb: [UInt8] = (0..<18).map { UInt8($0 * 10) }
        let image = try Image(rgb: rgb, width: 3, height: 2)
        let cw = image.rotated90(times: 1)
        XCTAssertEqual([cw.width, cw.height], [2, 3])
        XCTAssertEqual(Array(cw.pixels[0..<3]), [90, 100, 110], "top-left after a clockwise turn is the old bottom-left")
        XCTAssertEqual(image.rotated90(times: 4), image)
        XCTAssertEqual(image.rotated90(times: -1), image.rotated90(times: 3))
        XCTAssertEqual(image.rotated90(times: 2).rotated90(times: 2), image)
        let crop = try image.cropped(PixelRect(x: 1, y: 1, width: 5, height: 5))
        XCTAssertEqual([crop.width, crop.height], [2, 1])
        XCTAssertEqual(crop.pixels, [120, 130, 140, 150, 160, 170])
        XCTAssertThrowsError(try image.cropped(PixelRect(x: 3, y: 0, width: 2, height: 2)))
        let gray = image.grayscale()
        XCTAssertEqual(gray.format, .gray)
        let expected: Int = (587 * 10 + 114 * 20 + 500) / 1000
        XCTAssertEqual(Int(gray.pixels[0]), expected)
        let g0 = gray.pixels[0]
        XCTAssertEqual(Array(gray.rgb().pixels[0..<3]), [g0, g0, g0])
        XCTAssertThrowsError(try Image(rgb: [1, 2, 3], width: 2, height: 1)) { error in
            guard case ImageError.invalidArgument = error else { return XCTFail("\(error)") }
        }
    }

    func testResizeAveragesAndKeepsFlatColour() throws {
        let flat = try Image(rgb: [UInt8](repeating: 77, count: 64 * 48 * 3), width: 64, height: 48)
        let small = try flat.resized(width: 13, height: 7)
        XCTAssertEqual([small.width, small.height], [13, 7])
        XCTAssertTrue(small.pixels.allSatisfy { $0 == 77 })
        let big = try flat.resized(width: 100, height: 90)
        XCTAssertTrue(big.pixels.allSatisfy { $0 == 77 })
        // Halving a 2×1 black/white checker averages to mid grey.
        let checker = try Image(gray: [0, 255, 0, 255], width: 4, height: 1)
        XCTAssertEqual(try checker.resized(width: 2, height: 1).pixels, [128, 128])
        let photo = try Image(data: Fixtures.face("obama-480p.jpg"))
        let fit = try photo.resized(maxDimension: 400)
        XCTAssertEqual([fit.width, fit.height], [400, 225])
    }

    func testEncodeDecodeRoundTrip() throws {
        let photo = try Image(data: Fixtures.face("obama_small.jpg"))
        let png = try photo.pngData()
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        XCTAssertEqual(try Image(data: png), photo, "PNG is lossless")
        let jpeg = try photo.jpegData(quality: 92)
        let back = try Image(data: jpeg)
        XCTAssertEqual([back.width, back.height], [320, 240])
        let meanError = zip(back.pixels, photo.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } / photo.pixels.count
        XCTAssertLessThan(meanError, 6)
        let grayPNG = try photo.grayscale().pngData()
        XCTAssertEqual(try Image(data: grayPNG).format, .gray)
        XCTAssertThrowsError(try photo.jpegData(quality: 0))
    }

    // MARK: Bad input

    func testZeroBytes() {
        XCTAssertThrowsError(try Image(data: Data())) { XCTAssertEqual($0 as? ImageError, .empty) }
    }

    func testTextBytes() {
        let text = Data("This is plainly a text file, not a photograph.\n".utf8)
        XCTAssertThrowsError(try Image(data: text)) { XCTAssertEqual($0 as? ImageError, .notAnImage) }
    }

    func testOtherFormatIsNamed() {
        let gif = Data("GIF89a".utf8) + Data(repeating: 0, count: 20)
        XCTAssertThrowsError(try Image(data: gif)) { XCTAssertEqual($0 as? ImageError, .unsupportedFormat("GIF")) }
    }

    func testTruncatedJPEG() throws {
        let data = try Fixtures.face("obama_small.jpg")
        for fraction in [0.5, 0.9] {
            let cut = data.prefix(Int(Double(data.count) * fraction))
            XCTAssertThrowsError(try Image(data: cut)) { XCTAssertEqual($0 as? ImageError, .truncated, "cut at \(fraction)") }
        }
        XCTAssertThrowsError(try Image(data: data.prefix(100))) { XCTAssertEqual($0 as? ImageError, .truncated) }
    }

    func testTruncatedPNG() throws {
        let png = try Image(data: Fixtures.face("obama_small.jpg")).pngData()
        XCTAssertThrowsError(try Image(data: png.prefix(png.count / 2))) { XCTAssertEqual($0 as? ImageError, .truncated) }
    }

    func testPNGBombRefusedBeforeAllocation() {
        // 60 000 × 60 000 RGB declared (10.8 GB of pixels) in a file of under 100 bytes.
        let bomb = PNGBytes.make(width: 60_000, height: 60_000)
        XCTAssertLessThan(bomb.count, 100)
        XCTAssertThrowsError(try Image(data: bomb)) {
            XCTAssertEqual($0 as? ImageError, .tooManyPixels(width: 60_000, height: 60_000, limit: Image.defaultMaxPixels))
        }
    }

    func testPixelLimitIsConfigurable() throws {
        let data = try Fixtures.face("obama_small.jpg")
        XCTAssertThrowsError(try Image(data: data, maxPixels: 320 * 240 - 1)) {
            XCTAssertEqual($0 as? ImageError, .tooManyPixels(width: 320, height: 240, limit: 320 * 240 - 1))
        }
        XCTAssertNoThrow(try Image(data: data, maxPixels: 320 * 240))
    }

    func testCorruptJPEGBody() throws {
        var data = try Fixtures.face("obama_small.jpg")
        // Overwrite the frame header (SOF) segment's marker to garble the stream structure.
        let bytes = [UInt8](data)
        if let sof = (2..<bytes.count - 1).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }) {
            data[sof + 5] = 0; data[sof + 6] = 0 // height 0
        }
        XCTAssertThrowsError(try Image(data: data)) { error in
            guard case ImageError.corrupt = error else { return XCTFail("\(error)") }
        }
    }
}

/// Builds minimal PNG byte streams (signature, IHDR, one tiny IDAT, IEND) with correct CRCs.
enum PNGBytes {
    static func make(width: UInt32, height: UInt32) -> Data {
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var ihdr = Data()
        ihdr.append(contentsOf: be(width)); ihdr.append(contentsOf: be(height))
        ihdr.append(contentsOf: [8, 2, 0, 0, 0]) // 8-bit RGB
        data.append(chunk("IHDR", ihdr))
        data.append(chunk("IDAT", Data([0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]))) // empty zlib stream
        data.append(chunk("IEND", Data()))
        return data
    }
    static func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }
    static func chunk(_ type: String, _ body: Data) -> Data {
        var d = Data(be(UInt32(body.count)))
        let typed = Data(type.utf8) + body
        d.append(typed)
        d.append(contentsOf: be(crc32(typed)))
        return d
    }
    static func crc32(_ data: Data) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in data {
            c ^= UInt32(b)
            for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }
}

final class ImageFuzzTests: XCTestCase {
    /// Deterministic byte mutations of real JPEG and PNG files: every outcome is an image or an
    /// `ImageError`, never a crash or another error type.
    func testMutatedFilesNeverCrash() throws {
        let jpeg = try Fixtures.face("obama_small.jpg")
        let png = try Image(data: jpeg).resized(width: 80, height: 60).pngData()
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int { state = state &* 6364136223846793005 &+ 1442695040888963407; return Int(state >> 33) }
        var decoded = 0, refused = 0
        for original in [jpeg, png] {
            for round in 0..<150 {
                var bytes = [UInt8](original)
                for _ in 0..<(1 + round % 8) { bytes[next() % bytes.count] = UInt8(next() & 255) }
                if round % 5 == 0 { bytes = Array(bytes.prefix(next() % bytes.count)) }
                do {
                    let image = try Image(data: Data(bytes), maxPixels: 4_000_000)
                    XCTAssertEqual(image.pixels.count, image.width * image.height * image.channels)
                    decoded += 1
                } catch is ImageError {
                    refused += 1
                }
            }
        }
        XCTAssertEqual(decoded + refused, 300)
        XCTAssertGreaterThan(refused, 0)
    }
}
