internal import CCairo
import Imaging
import Foundation

/// An 8-bit greyscale raster, row-major, `width × height` bytes (0 = black, 255 = white).
public struct GreyImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height, "GreyImage: size mismatch")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    public init(width: Int, height: Int, fill: UInt8 = 255) {
        self.init(width: width, height: height, pixels: [UInt8](repeating: fill, count: width * height))
    }

    @inline(__always) public subscript(x: Int, y: Int) -> UInt8 {
        get { pixels[y * width + x] }
        set { pixels[y * width + x] = newValue }
    }

    /// Bilinear sample at a real position (pixel centres at integer coordinates); outside → `outside`.
    @inline(__always) public func sample(_ x: Double, _ y: Double, outside: Double = 255) -> Double {
        pixels.withUnsafeBufferPointer { p in Self.sample(p, width: width, height: height, x, y, outside: outside) }
    }

    /// `sample` on the pixels `p` of a `width` × `height` image, for loops that hold the pointer.
    @inline(__always) static func sample(_ p: UnsafeBufferPointer<UInt8>, width: Int, height: Int, _ x: Double, _ y: Double,
                                         outside: Double) -> Double {
        if !(x > -1 && y > -1 && x < Double(width) && y < Double(height)) { return outside }
        let fx = x.rounded(.down), fy = y.rounded(.down)
        let x0 = Int(fx), y0 = Int(fy)
        let ax = x - fx, ay = y - fy
        let x1 = min(x0 + 1, width - 1), y1 = min(y0 + 1, height - 1)
        let xa = max(x0, 0), ya = max(y0, 0)
        let v00 = Double(p[ya * width + xa]), v10 = Double(p[ya * width + x1])
        let v01 = Double(p[y1 * width + xa]), v11 = Double(p[y1 * width + x1])
        return (v00 * (1 - ax) + v10 * ax) * (1 - ay) + (v01 * (1 - ax) + v11 * ax) * ay
    }

    /// Area-averaging downscale by an integer factor (≥ 1).
    public func downscaled(by factor: Int) -> GreyImage {
        guard factor > 1 else { return self }
        let w = max(1, width / factor), h = max(1, height / factor)
        var out = [UInt8](repeating: 0, count: w * h)
        let n = factor * factor
        pixels.withUnsafeBufferPointer { p in
            for y in 0..<h {
                for x in 0..<w {
                    var s = 0
                    for dy in 0..<factor {
                        let row = (y * factor + dy) * width + x * factor
                        for dx in 0..<factor { s += Int(p[row + dx]) }
                    }
                    out[y * w + x] = UInt8(s / n)
                }
            }
        }
        return GreyImage(width: w, height: h, pixels: out)
    }

    /// Rotation by a multiple of 90° clockwise (`quarterTurns` 0…3).
    public func rotated(quarterTurns: Int) -> GreyImage {
        let q = ((quarterTurns % 4) + 4) % 4
        if q == 0 { return self }
        let (w, h) = q == 2 ? (width, height) : (height, width)
        var out = [UInt8](repeating: 0, count: w * h)
        for y in 0..<height {
            for x in 0..<width {
                let (nx, ny): (Int, Int)
                switch q {
                case 1: (nx, ny) = (height - 1 - y, x)
                case 2: (nx, ny) = (width - 1 - x, height - 1 - y)
                default: (nx, ny) = (y, width - 1 - x)
                }
                out[ny * w + nx] = pixels[y * width + x]
            }
        }
        return GreyImage(width: w, height: h, pixels: out)
    }
}

/// An 8-bit RGB raster, row-major, interleaved `r g b`, `width × height × 3` bytes.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height * 3, "RGBImage: size mismatch")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// ITU-R BT.601 luma.
    public var grey: GreyImage {
        var out = [UInt8](repeating: 0, count: width * height)
        pixels.withUnsafeBufferPointer { p in
            for i in 0..<(width * height) {
                let v = 299 * Int(p[3 * i]) + 587 * Int(p[3 * i + 1]) + 114 * Int(p[3 * i + 2])
                out[i] = UInt8(min(255, (v + 500) / 1000))
            }
        }
        return GreyImage(width: width, height: height, pixels: out)
    }
}

/// Errors of image input and output.
public enum RasterError: Error, Equatable, CustomStringConvertible {
    /// The bytes are not a PNG image Cairo can decode (or the file cannot be read).
    case unreadablePNG(String)
    /// The PNG could not be written.
    case unwritablePNG(String)
    /// The image is empty or too large (more than `Raster.maxPixels`).
    case badSize(width: Int, height: Int)
    /// The file cannot be read.
    case unreadableFile(String)

    public var description: String {
        switch self {
        case .unreadablePNG(let why): return "not a readable PNG image (\(why))"
        case .unwritablePNG(let why): return "cannot write PNG (\(why))"
        case .badSize(let w, let h): return "image size \(w)×\(h) is empty or too large"
        case .unreadableFile(let path): return "cannot read the file \(path)"
        }
    }
}

/// PNG input/output and Cairo surface conversion.
public enum Raster {
    /// Largest accepted image, in pixels (64 megapixels).
    public static let maxPixels = 64_000_000

    /// Decodes PNG bytes with Cairo. Throws `RasterError.unreadablePNG` on anything else.
    public static func decodePNG(_ data: Data) throws -> RGBImage {
        guard data.count >= 8, data.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw RasterError.unreadablePNG("no PNG signature")
        }
        final class Reader { var data: Data; var offset = 0; init(_ d: Data) { data = d } }
        let reader = Reader(data)
        let box = Unmanaged.passRetained(reader)
        defer { box.release() }
        let surface = cairo_image_surface_create_from_png_stream({ closure, buffer, length in
            let r = Unmanaged<Reader>.fromOpaque(closure!).takeUnretainedValue()
            let n = Int(length)
            guard r.offset + n <= r.data.count, let buffer else { return CAIRO_STATUS_READ_ERROR }
            r.data.withUnsafeBytes { raw in
                buffer.update(from: raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + r.offset, count: n)
            }
            r.offset += n
            return CAIRO_STATUS_SUCCESS
        }, box.toOpaque())
        defer { cairo_surface_destroy(surface) }
        guard let surface, cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            throw RasterError.unreadablePNG("decoder failed")
        }
        return try rgb(from: surface)
    }

    /// Reads a PNG file.
    public static func readPNG(path: String) throws -> RGBImage {
        guard let data = FileManager.default.contents(atPath: path) else { throw RasterError.unreadablePNG("cannot read \(path)") }
        return try decodePNG(data)
    }

    /// Copies a Cairo image surface (ARGB32 or RGB24) into an RGB raster; alpha is composited on white.
    package static func rgb(from surface: OpaquePointer) throws -> RGBImage {
        cairo_surface_flush(surface)
        let w = Int(cairo_image_surface_get_width(surface)), h = Int(cairo_image_surface_get_height(surface))
        guard w > 0, h > 0, w * h <= maxPixels else { throw RasterError.badSize(width: w, height: h) }
        let stride = Int(cairo_image_surface_get_stride(surface))
        let format = cairo_image_surface_get_format(surface)
        guard format == CAIRO_FORMAT_ARGB32 || format == CAIRO_FORMAT_RGB24,
              let data = cairo_image_surface_get_data(surface) else {
            throw RasterError.unreadablePNG("unsupported pixel format")
        }
        let hasAlpha = format == CAIRO_FORMAT_ARGB32
        var out = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            let row = UnsafeRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<w {
                let px = row[x]
                let a = hasAlpha ? Int((px >> 24) & 0xFF) : 255
                // premultiplied: composite on white → c + (255 - a)
                let r = Int((px >> 16) & 0xFF) + 255 - a, g = Int((px >> 8) & 0xFF) + 255 - a, b = Int(px & 0xFF) + 255 - a
                let o = (y * w + x) * 3
                out[o] = UInt8(min(255, r)); out[o + 1] = UInt8(min(255, g)); out[o + 2] = UInt8(min(255, b))
            }
        }
        return RGBImage(width: w, height: h, pixels: out)
    }

    /// A new RGB24 Cairo surface holding `image` (caller destroys it).
    package static func surface(from image: RGBImage) -> OpaquePointer {
        let s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(image.width), Int32(image.height))!
        cairo_surface_flush(s)
        let stride = Int(cairo_image_surface_get_stride(s))
        let data = cairo_image_surface_get_data(s)!
        image.pixels.withUnsafeBufferPointer { p in
            for y in 0..<image.height {
                let row = UnsafeMutableRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<image.width {
                    let o = (y * image.width + x) * 3
                    row[x] = 0xFF00_0000 | UInt32(p[o]) << 16 | UInt32(p[o + 1]) << 8 | UInt32(p[o + 2])
                }
            }
        }
        cairo_surface_mark_dirty(s)
        return s
    }

    /// Encodes an RGB raster as PNG bytes (Cairo).
    public static func encodePNG(_ image: RGBImage) throws -> Data {
        let s = surface(from: image)
        defer { cairo_surface_destroy(s) }
        final class Writer { var data = Data() }
        let writer = Writer()
        let box = Unmanaged.passRetained(writer)
        defer { box.release() }
        let status = cairo_surface_write_to_png_stream(s, { closure, bytes, length in
            let w = Unmanaged<Writer>.fromOpaque(closure!).takeUnretainedValue()
            if let bytes { w.data.append(bytes, count: Int(length)) }
            return CAIRO_STATUS_SUCCESS
        }, box.toOpaque())
        guard status == CAIRO_STATUS_SUCCESS else { throw RasterError.unwritablePNG(String(cString: cairo_status_to_string(status))) }
        return writer.data
    }

    /// Encodes a grey raster as PNG bytes.
    public static func encodePNG(_ image: GreyImage) throws -> Data {
        var rgb = [UInt8](repeating: 0, count: image.pixels.count * 3)
        for (i, v) in image.pixels.enumerated() { rgb[3 * i] = v; rgb[3 * i + 1] = v; rgb[3 * i + 2] = v }
        return try encodePNG(RGBImage(width: image.width, height: image.height, pixels: rgb))
    }
}

/// A decoded page image: RGB pixels plus the grey version the reader works on, decoded at a working
/// size (`DocumentReaderOptions.workingMaxDimension`), with the encoded source kept so a stage that
/// needs more resolution (the MRZ band, the portrait) can decode its part of the page again.
public struct DocumentImage: Sendable {
    public let rgb: RGBImage
    public let grey: GreyImage
    /// The encoded page this image was decoded from (nil for images made in memory).
    public let source: Data?
    /// Full-resolution size of the upright source, pixels (this image's own size without a source).
    public let sourceWidth: Int, sourceHeight: Int

    public init(rgb: RGBImage) {
        self.rgb = rgb
        grey = rgb.grey
        source = nil
        (sourceWidth, sourceHeight) = (rgb.width, rgb.height)
    }

    init(rgb: RGBImage, source: Data, sourceWidth: Int, sourceHeight: Int) {
        self.rgb = rgb
        grey = rgb.grey
        self.source = source
        (self.sourceWidth, self.sourceHeight) = (sourceWidth, sourceHeight)
    }

    /// This image's pixels per source pixel (1 when decoded at full size).
    public var scale: Double { Double(rgb.width) / Double(max(1, sourceWidth)) }

    /// Decodes JPEG or PNG bytes with Imaging (libjpeg/libpng), applying the EXIF orientation, so a
    /// phone photo stored sideways arrives upright. Refuses images over `maxPixels` before allocating.
    /// With `maxDimension`, a larger page is decoded scaled so its longer side is that many pixels
    /// (`Imaging.Image.decode`: DCT-scaled JPEG, PNG row by row), at a cost about that of the output.
    /// Throws `Imaging.ImageError` (`.empty`, `.notAnImage`, `.unsupportedFormat`, `.truncated`,
    /// `.tooManyPixels`, `.corrupt`).
    public static func decode(_ data: Data, maxPixels: Int = Raster.maxPixels, maxDimension: Int? = nil) throws -> DocumentImage {
        let d = try Imaging.Image.decode(data, maxPixels: maxPixels, maxDimension: maxDimension)
        return DocumentImage(rgb: RGBImage(width: d.image.width, height: d.image.height, pixels: d.image.rgbPixels),
                             source: data, sourceWidth: d.sourceWidth, sourceHeight: d.sourceHeight)
    }

    /// The part `rect` of the page (in this image's pixels) decoded again from the source with
    /// `outputPerSourcePixel` output pixels per source pixel (at most 1: the source's own resolution),
    /// and the map from the new image's pixels to this image's: page = k · pixel + (x, y). Nil without
    /// a source, when the source offers less than 1.2× this image's resolution there, or when the part
    /// cannot be decoded.
    func redecode(_ rect: PixelRect, outputPerSourcePixel t: Double) -> (image: DocumentImage, toPage: (k: Double, x: Double, y: Double))? {
        guard let source, min(1, t) > scale * 1.2 else { return nil }
        let s = scale
        // Page pixel p covers source [p/s, (p+1)/s): the rectangle in source pixels, clipped to the source.
        let x0 = max(0, Int((Double(rect.x) / s).rounded(.down))), y0 = max(0, Int((Double(rect.y) / s).rounded(.down)))
        let x1 = min(sourceWidth, Int((Double(rect.x + rect.width) / s).rounded(.up)))
        let y1 = min(sourceHeight, Int((Double(rect.y + rect.height) / s).rounded(.up)))
        guard x1 - x0 >= 8, y1 - y0 >= 8 else { return nil }
        let region = PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        let target = Int((Double(max(region.width, region.height)) * min(1, t)).rounded(.up))
        guard let d = try? Imaging.Image.decode(source, maxPixels: Int.max, maxDimension: target, region: region) else { return nil }
        let image = DocumentImage(rgb: RGBImage(width: d.image.width, height: d.image.height, pixels: d.image.rgbPixels))
        // New pixel b covers source [x0 + b/t, x0 + (b+1)/t): its centre is page pixel (x0 + (b + ½)/t)·s − ½.
        let (tx, ty) = (d.scaleX, d.scaleY)
        return (image, (s / tx, (Double(x0) + 0.5 / tx) * s - 0.5, (Double(y0) + 0.5 / ty) * s - 0.5))
    }

    /// Reads and decodes an image file. Throws `RasterError.unreadableFile` or a decoding error.
    public static func decode(path: String) throws -> DocumentImage {
        guard let data = FileManager.default.contents(atPath: path) else { throw RasterError.unreadableFile(path) }
        return try decode(data)
    }

    /// JPEG bytes of this image, scaled down so the longer side is at most `maxDimension`.
    public func jpeg(maxDimension: Int, quality: Int) throws -> Data {
        var image = try Imaging.Image(rgb: rgb.pixels, width: rgb.width, height: rgb.height)
        if max(image.width, image.height) > maxDimension { image = try image.resized(maxDimension: maxDimension) }
        return try image.jpegData(quality: quality)
    }
}
