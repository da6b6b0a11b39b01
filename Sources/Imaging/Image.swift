internal import CImaging
import Foundation

/// Why image bytes or an image operation were refused. Each case is distinct so callers can map it
/// to their own error code; `description` is a clear sentence for a user or a log (no pixel data).
public enum ImageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Zero bytes of input.
    case empty
    /// The bytes carry no JPEG or PNG signature (text, random data, …).
    case notAnImage
    /// A recognised image format that is not supported (GIF, WebP, BMP, TIFF, HEIF, JPEG 2000).
    case unsupportedFormat(String)
    /// The data ends before the image does.
    case truncated
    /// The declared width × height exceeds the limit; refused before any pixel memory is allocated.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// The decoder rejected the data (detail from libjpeg/libpng).
    case corrupt(String)
    /// A pixel buffer, size, rectangle or option that does not fit the operation.
    case invalidArgument(String)
    /// Memory could not be allocated.
    case outOfMemory
    /// Encoding to JPEG/PNG failed (detail from the encoder).
    case encodingFailed(String)

    public var description: String {
        switch self {
        case .empty: return "no image data (zero bytes)"
        case .notAnImage: return "not an image: the data has no JPEG or PNG signature"
        case .unsupportedFormat(let name): return "unsupported image format: \(name) (JPEG and PNG are supported)"
        case .truncated: return "truncated image: the data ends before the image is complete"
        case let .tooManyPixels(w, h, limit): return "image of \(w)×\(h) pixels exceeds the limit of \(limit) pixels"
        case .corrupt(let detail): return "corrupt image: \(detail)"
        case .invalidArgument(let detail): return "invalid image argument: \(detail)"
        case .outOfMemory: return "out of memory processing the image"
        case .encodingFailed(let detail): return "image encoding failed: \(detail)"
        }
    }
}

/// A rectangle in pixel coordinates: origin top-left, `x` to the right, `y` down.
public struct PixelRect: Sendable, Hashable, Codable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    /// The overlap with `other`, or nil when they do not overlap.
    public func intersection(_ other: PixelRect) -> PixelRect? {
        let x0 = max(x, other.x), y0 = max(y, other.y)
        let x1 = min(x + width, other.x + other.width), y1 = min(y + height, other.y + other.height)
        return x1 > x0 && y1 > y0 ? PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0) : nil
    }
}

/// An 8-bit raster image, upright (EXIF orientation already applied), either greyscale (1 channel)
/// or RGB (3 channels, interleaved R, G, B), row-major with no row padding.
///
/// Decoding uses libjpeg-turbo and libpng through the CImaging shim; pixel operations run in C++
/// at -O2. The value is immutable and `Sendable`; operations return new images.
public struct Image: Sendable, Equatable {
    /// Pixel layout of `pixels`.
    public enum PixelFormat: Int, Sendable, Codable {
        case gray = 1
        case rgb = 3
        /// Bytes per pixel.
        public var channels: Int { rawValue }
    }

    /// Decoding limit used when the caller gives none: 40 megapixels.
    public static let defaultMaxPixels = 40_000_000

    /// Width in pixels (after orientation).
    public let width: Int
    /// Height in pixels (after orientation).
    public let height: Int
    /// Pixel layout.
    public let format: PixelFormat
    /// `width × height × format.channels` bytes, row-major, interleaved.
    public let pixels: [UInt8]

    /// Bytes per pixel (1 or 3).
    public var channels: Int { format.channels }
    /// Size as a rectangle at the origin.
    public var bounds: PixelRect { PixelRect(x: 0, y: 0, width: width, height: height) }

    /// Decodes JPEG or PNG `data` and applies its EXIF orientation (JPEG APP1 / PNG eXIf, tags 1…8).
    ///
    /// - Parameters:
    ///   - maxPixels: refuse images whose declared width × height exceeds this, before allocating.
    ///   - applyOrientation: false keeps the stored pixel order.
    /// - Throws: `ImageError.empty`, `.notAnImage`, `.unsupportedFormat`, `.truncated`,
    ///   `.tooManyPixels`, `.corrupt`, `.outOfMemory`.
    public init(data: Data, maxPixels: Int = Image.defaultMaxPixels, applyOrientation: Bool = true) throws {
        var bitmap = ci_bitmap()
        var info = ci_image_info()
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { raw -> ci_status in
            ci_image_decode(raw.bindMemory(to: UInt8.self).baseAddress, raw.count, UInt64(max(0, maxPixels)),
                            applyOrientation ? 1 : 0, &bitmap, &info, &message, message.count)
        }
        defer { ci_free(bitmap.pixels) }
        guard status == CI_OK, let base = bitmap.pixels else {
            throw ImageError(status: status, message: messageString(message),
                             width: Int(info.width), height: Int(info.height), limit: maxPixels)
        }
        width = Int(bitmap.width)
        height = Int(bitmap.height)
        format = bitmap.channels == 1 ? .gray : .rgb
        pixels = Array(UnsafeBufferPointer(start: base, count: width * height * Int(bitmap.channels)))
    }

    /// An image decoded at the size a stage needs (`Image.decode(_:maxPixels:applyOrientation:maxDimension:region:)`),
    /// with the size of the image it came from.
    public struct Decoded: Sendable {
        /// The decoded pixels: `region` (the whole image when nil) scaled so its longer side is at most
        /// the requested `maxDimension`.
        public let image: Image
        /// The full-resolution size of the upright source image, pixels.
        public let sourceWidth: Int
        public let sourceHeight: Int
        /// The part of the upright source decoded, full-resolution pixels.
        public let region: PixelRect
        /// Output pixels per source pixel along x (≤ 1).
        public var scaleX: Double { Double(image.width) / Double(region.width) }
        /// Output pixels per source pixel along y (≤ 1).
        public var scaleY: Double { Double(image.height) / Double(region.height) }
    }

    /// Decodes JPEG or PNG `data` at the resolution a stage needs: `region` of the upright image
    /// (full-resolution pixels; nil for all of it) scaled so that its longer side is at most
    /// `maxDimension` pixels (nil: full resolution), at a cost about that of the output. JPEG uses
    /// libjpeg-turbo's DCT scaling by m/8 and decodes only the scanlines and iMCU columns of the
    /// region; PNG is read row by row, each row resampled as it arrives, so peak memory is about the
    /// output's (interlaced PNGs and progressive JPEGs are the exception: they are held whole while
    /// decoding). Area averaging gives the exact size: round(w·s) × round(h·s), s = min(1,
    /// maxDimension / max(w, h)). The pixel limit applies to the declared size, before allocating.
    ///
    /// - Throws: the errors of `init(data:maxPixels:applyOrientation:)`, and
    ///   `ImageError.invalidArgument` when `region` is not inside the image or `maxDimension` < 1.
    public static func decode(_ data: Data, maxPixels: Int = Image.defaultMaxPixels, applyOrientation: Bool = true,
                              maxDimension: Int? = nil, region: PixelRect? = nil) throws -> Decoded {
        if let maxDimension, maxDimension < 1 { throw ImageError.invalidArgument("maxDimension must be at least 1 (got \(maxDimension))") }
        if let r = region, r.x < 0 || r.y < 0 || r.width < 1 || r.height < 1 || r.x > Int(Int32.max) - r.width || r.y > Int(Int32.max) - r.height {
            throw ImageError.invalidArgument("decode region \(r) is not a rectangle inside the image")
        }
        var request = ci_decode_request()
        request.max_pixels = UInt64(max(0, maxPixels))
        request.apply_orientation = applyOrientation ? 1 : 0
        request.max_dimension = Int32(clamping: maxDimension ?? 0)
        if let r = region {
            (request.region_x, request.region_y, request.region_width, request.region_height) = (Int32(r.x), Int32(r.y), Int32(r.width), Int32(r.height))
        }
        var bitmap = ci_bitmap()
        var info = ci_image_info()
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { raw -> ci_status in
            ci_image_decode_request(raw.bindMemory(to: UInt8.self).baseAddress, raw.count, &request, &bitmap, &info, &message, message.count)
        }
        defer { ci_free(bitmap.pixels) }
        guard status == CI_OK, let base = bitmap.pixels else {
            throw ImageError(status: status, message: messageString(message),
                             width: Int(info.width), height: Int(info.height), limit: maxPixels)
        }
        let swap = applyOrientation && info.orientation >= 5
        let sw = Int(swap ? info.height : info.width), sh = Int(swap ? info.width : info.height)
        let w = Int(bitmap.width), h = Int(bitmap.height)
        let image = Image(unchecked: Array(UnsafeBufferPointer(start: base, count: w * h * Int(bitmap.channels))),
                          width: w, height: h, format: bitmap.channels == 1 ? .gray : .rgb)
        return Decoded(image: image, sourceWidth: sw, sourceHeight: sh, region: region ?? PixelRect(x: 0, y: 0, width: sw, height: sh))
    }

    /// Wraps interleaved RGB bytes (`width × height × 3`).
    /// - Throws: `ImageError.invalidArgument` when the count does not match or a side is not positive.
    public init(rgb: [UInt8], width: Int, height: Int) throws {
        try self.init(pixels: rgb, width: width, height: height, format: .rgb)
    }

    /// Wraps greyscale bytes (`width × height`).
    /// - Throws: `ImageError.invalidArgument` when the count does not match or a side is not positive.
    public init(gray: [UInt8], width: Int, height: Int) throws {
        try self.init(pixels: gray, width: width, height: height, format: .gray)
    }

    /// Wraps a pixel buffer of the given layout.
    public init(pixels: [UInt8], width: Int, height: Int, format: PixelFormat) throws {
        guard width > 0, height > 0, width <= Int(Int32.max), height <= Int(Int32.max) else {
            throw ImageError.invalidArgument("width and height must be positive (got \(width)×\(height))")
        }
        let (n, overflow) = width.multipliedReportingOverflow(by: height * format.channels)
        guard !overflow, pixels.count == n else {
            throw ImageError.invalidArgument("\(pixels.count) bytes do not make a \(width)×\(height) \(format) image")
        }
        self.width = width
        self.height = height
        self.format = format
        self.pixels = pixels
    }

    /// Trusted construction (the package's own pixel operations; sizes not re-checked).
    package init(unchecked pixels: [UInt8], width: Int, height: Int, format: PixelFormat) {
        self.width = width; self.height = height; self.format = format; self.pixels = pixels
    }

    /// Interleaved RGB bytes (`width × height × 3`); greyscale images are replicated to three channels.
    public var rgbPixels: [UInt8] {
        if format == .rgb { return pixels }
        let count = width * height
        return [UInt8](unsafeUninitializedCapacity: count * 3) { buffer, initialized in
            pixels.withUnsafeBufferPointer { ci_gray_to_rgb($0.baseAddress, count, buffer.baseAddress) }
            initialized = count * 3
        }
    }

    /// Greyscale bytes (`width × height`), ITU-R BT.601 luma for RGB images.
    public var grayPixels: [UInt8] {
        if format == .gray { return pixels }
        let count = width * height
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            pixels.withUnsafeBufferPointer { ci_rgb_to_gray($0.baseAddress, count, buffer.baseAddress) }
            initialized = count
        }
    }

    /// This image as greyscale (ITU-R BT.601 luma).
    public func grayscale() -> Image {
        format == .gray ? self : Image(unchecked: grayPixels, width: width, height: height, format: .gray)
    }

    /// This image as RGB (grey replicated).
    public func rgb() -> Image {
        format == .rgb ? self : Image(unchecked: rgbPixels, width: width, height: height, format: .rgb)
    }

    /// Resampled to `width × height` pixels: area averaging along an axis that shrinks, bilinear
    /// interpolation along one that grows.
    /// - Throws: `ImageError.invalidArgument` for a non-positive size or one above 65 535 a side.
    public func resized(width newWidth: Int, height newHeight: Int) throws -> Image {
        guard newWidth > 0, newHeight > 0, newWidth <= 65_535, newHeight <= 65_535 else {
            throw ImageError.invalidArgument("cannot resize to \(newWidth)×\(newHeight)")
        }
        let c = channels
        var status = CI_OK
        let out = [UInt8](unsafeUninitializedCapacity: newWidth * newHeight * c) { buffer, initialized in
            status = pixels.withUnsafeBufferPointer {
                ci_image_resize($0.baseAddress, Int32(width), Int32(height), Int32(c),
                                buffer.baseAddress, Int32(newWidth), Int32(newHeight))
            }
            initialized = status == CI_OK ? newWidth * newHeight * c : 0
        }
        guard status == CI_OK else { throw status == CI_ERR_OUT_OF_MEMORY ? ImageError.outOfMemory : ImageError.invalidArgument("resize failed") }
        return Image(unchecked: out, width: newWidth, height: newHeight, format: format)
    }

    /// Scaled, keeping the aspect ratio, so the longer side is at most `maxDimension` pixels; `self`
    /// when it already fits.
    public func resized(maxDimension: Int) throws -> Image {
        let long = max(width, height)
        guard long > maxDimension else { return self }
        let scale = Double(maxDimension) / Double(long)
        return try resized(width: max(1, Int((Double(width) * scale).rounded())),
                           height: max(1, Int((Double(height) * scale).rounded())))
    }

    /// The part of the image inside `rect`, clipped to the image bounds.
    /// - Throws: `ImageError.invalidArgument` when `rect` does not overlap the image.
    public func cropped(_ rect: PixelRect) throws -> Image {
        guard let r = rect.intersection(bounds) else {
            throw ImageError.invalidArgument("crop rectangle \(rect) lies outside the \(width)×\(height) image")
        }
        if r == bounds { return self }
        let c = channels
        let out = [UInt8](unsafeUninitializedCapacity: r.width * r.height * c) { buffer, initialized in
            _ = pixels.withUnsafeBufferPointer {
                ci_image_crop($0.baseAddress, Int32(width), Int32(height), Int32(c),
                              Int32(r.x), Int32(r.y), Int32(r.width), Int32(r.height), buffer.baseAddress)
            }
            initialized = r.width * r.height * c
        }
        return Image(unchecked: out, width: r.width, height: r.height, format: format)
    }

    /// Rotated clockwise by `times` quarter turns (negative turns counter-clockwise).
    public func rotated90(times: Int) -> Image {
        let turns = ((times % 4) + 4) % 4
        guard turns != 0 else { return self }
        return oriented(exifOrientation: [1, 6, 3, 8][turns])
    }

    /// Mirrored left–right.
    public func flippedHorizontally() -> Image { oriented(exifOrientation: 2) }

    /// The transform of EXIF orientation tag `exifOrientation` (1…8) applied, as a viewer would
    /// display an image carrying that tag.
    public func oriented(exifOrientation: Int) -> Image {
        guard (2...8).contains(exifOrientation) else { return self }
        let c = channels
        let out = [UInt8](unsafeUninitializedCapacity: pixels.count) { buffer, initialized in
            _ = pixels.withUnsafeBufferPointer {
                ci_image_orient($0.baseAddress, Int32(width), Int32(height), Int32(c), Int32(exifOrientation), buffer.baseAddress)
            }
            initialized = pixels.count
        }
        let swap = exifOrientation >= 5
        return Image(unchecked: out, width: swap ? height : width, height: swap ? width : height, format: format)
    }

    /// Baseline JPEG (libjpeg-turbo), `quality` 1…100 (90 by default).
    /// - Throws: `ImageError.invalidArgument` (quality, sides above 65 500), `.encodingFailed`.
    public func jpegData(quality: Int = 90) throws -> Data {
        try encode { src, message in
            var bytes = ci_bytes()
            let s = ci_encode_jpeg(src, Int32(width), Int32(height), Int32(channels), Int32(quality), &bytes, message, 256)
            return (s, bytes)
        }
    }

    /// 8-bit PNG (libpng).
    /// - Throws: `ImageError.encodingFailed`.
    public func pngData() throws -> Data {
        try encode { src, message in
            var bytes = ci_bytes()
            let s = ci_encode_png(src, Int32(width), Int32(height), Int32(channels), &bytes, message, 256)
            return (s, bytes)
        }
    }

    private func encode(_ body: (UnsafePointer<UInt8>?, UnsafeMutablePointer<CChar>) -> (ci_status, ci_bytes)) throws -> Data {
        var message = [CChar](repeating: 0, count: 256)
        let (status, bytes) = pixels.withUnsafeBufferPointer { src in
            message.withUnsafeMutableBufferPointer { body(src.baseAddress, $0.baseAddress!) }
        }
        defer { ci_free(bytes.data) }
        let text = messageString(message)
        switch status {
        case CI_OK:
            guard let data = bytes.data else { throw ImageError.encodingFailed("no output") }
            return Data(bytes: data, count: bytes.count)
        case CI_ERR_INVALID_ARGUMENT: throw ImageError.invalidArgument(text)
        case CI_ERR_OUT_OF_MEMORY: throw ImageError.outOfMemory
        default: throw ImageError.encodingFailed(text)
        }
    }
}

extension Image: CustomStringConvertible {
    public var description: String { "Image(\(width)×\(height) \(format))" }
}

extension ImageError {
    fileprivate init(status: ci_status, message: String, width: Int, height: Int, limit: Int) {
        switch status {
        case CI_ERR_EMPTY: self = .empty
        case CI_ERR_NOT_IMAGE: self = .notAnImage
        case CI_ERR_UNSUPPORTED_FORMAT:
            self = .unsupportedFormat(message.components(separatedBy: " images are").first ?? message)
        case CI_ERR_TRUNCATED: self = .truncated
        case CI_ERR_TOO_MANY_PIXELS: self = .tooManyPixels(width: width, height: height, limit: limit)
        case CI_ERR_OUT_OF_MEMORY: self = .outOfMemory
        case CI_ERR_INVALID_ARGUMENT: self = .invalidArgument(message)
        default: self = .corrupt(message.isEmpty ? "decoder failure" : message)
        }
    }
}
