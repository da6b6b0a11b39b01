internal import CImaging
import Foundation

/// What an image's header declares, read without decoding a pixel.
public struct ImageHeader: Sendable, Equatable {
    /// `jpeg` or `png`.
    public var format: String
    /// Declared width and height, pixels (before EXIF orientation).
    public var width: Int
    public var height: Int
    public var pixels: Int { width * height }
    /// Bytes the decoder holds for the whole image whatever output size it is asked for (read from
    /// the bytes, not decoded): 0 for a baseline JPEG (DCT-scaled) and a non-interlaced PNG (row by
    /// row), whose decoding at a working size costs about the output; a progressive JPEG's DCT
    /// coefficients (libjpeg keeps every one until the last scan: 2 bytes × 64 per 8 × 8 block of each
    /// component, 3 bytes a pixel at 4:2:0, 6 at 4:4:4); an interlaced PNG's pixels twice (libpng decodes
    /// Adam7 whole, then CImaging cuts a copy to resample: 2 × 1 or 3 bytes a pixel).
    public var wholeImageBytes = 0

    /// The header of JPEG or PNG `data` (libjpeg `jpeg_read_header` / libpng `png_read_info`, through
    /// `ci_image_decode` with a pixel limit of 0: the codec stops at the size check, nothing is
    /// allocated for pixels); nil when the bytes are not a JPEG/PNG whose header reads.
    public static func read(_ data: Data) -> ImageHeader? {
        var bitmap = ci_bitmap()
        var info = ci_image_info()
        var message = [CChar](repeating: 0, count: 128)
        let status = data.withUnsafeBytes { raw -> ci_status in
            ci_image_decode(raw.bindMemory(to: UInt8.self).baseAddress, raw.count, 0, 0, &bitmap, &info, &message, message.count)
        }
        ci_free(bitmap.pixels)
        guard status == CI_ERR_TOO_MANY_PIXELS || status == CI_OK, info.width > 0, info.height > 0 else { return nil }
        let png = info.format == Int32(CI_FORMAT_PNG)
        var h = ImageHeader(format: png ? "png" : "jpeg", width: Int(info.width), height: Int(info.height))
        h.wholeImageBytes = png ? pngInterlacedBytes(data, pixels: h.pixels) : jpegProgressiveBytes(data)
        return h
    }

    /// An interlaced PNG's whole-image hold (IHDR: colour type at byte 25, interlace method at 28).
    static func pngInterlacedBytes(_ data: Data, pixels: Int) -> Int {
        let b = [UInt8](data.prefix(29))
        guard b.count == 29, b[28] != 0 else { return 0 }
        let channels = b[25] == 0 || b[25] == 4 ? 1 : 3   // grey (± alpha) decodes to grey, the rest to RGB
        return 2 * channels * pixels
    }

    /// A progressive JPEG's coefficient buffers, from its SOF2/6/10/14 segment (frame size and each
    /// component's sampling factors); 0 for any other JPEG or when the markers do not read.
    static func jpegProgressiveBytes(_ data: Data) -> Int {
        let b = [UInt8](data)
        var i = 2
        while i + 4 <= b.count {
            guard b[i] == 0xFF else { return 0 }
            let m = b[i + 1]
            if m == 0xFF { i += 1; continue }
            if m == 0x01 || (0xD0...0xD7).contains(m) { i += 2; continue }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if (0xC0...0xCF).contains(m) && m != 0xC4 && m != 0xC8 && m != 0xCC {
                guard [0xC2, 0xC6, 0xCA, 0xCE].contains(m), i + 10 <= b.count else { return 0 }
                let height = Int(b[i + 5]) << 8 | Int(b[i + 6]), width = Int(b[i + 7]) << 8 | Int(b[i + 8])
                let n = Int(b[i + 9])
                guard n > 0, i + 10 + 3 * n <= b.count else { return 0 }
                let factors = (0..<n).map { (h: max(1, Int(b[i + 11 + 3 * $0] >> 4)), v: max(1, Int(b[i + 11 + 3 * $0] & 0x0F))) }
                let hmax = factors.map(\.h).max()!, vmax = factors.map(\.v).max()!
                // Blocks of each component: its share of the frame, rounded up to whole MCUs.
                let mcuX = (width + 8 * hmax - 1) / (8 * hmax), mcuY = (height + 8 * vmax - 1) / (8 * vmax)
                return factors.reduce(0) { $0 + mcuX * $1.h * mcuY * $1.v } * 64 * 2
            }
            i += 2 + length
        }
        return 0
    }
}
