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
        return ImageHeader(format: info.format == Int32(CI_FORMAT_PNG) ? "png" : "jpeg", width: Int(info.width), height: Int(info.height))
    }
}
