import DocumentReader
import FaceKit
import Foundation
import IDVEngine
import IDVRuntime
import Imaging

/// The production ``UploadCosting``: every image's width × height from its header (Imaging
/// ``ImageHeader``, no pixel decoded), and a memory model of how the readers hold images.
///
/// Pixels (`analysis.max_request_megapixels`): every image whose header reads counts, summed over the
/// request, including one over its reader's per-image limit — such an upload is refused with 1102
/// before anything is decoded, as docs/PROTOCOL.md §7 says, and uses no attempt.
///
/// Memory (`analysis.max_analysis_mib`):
/// - document pages (DocumentReader) are decoded at the working size
///   (`DocumentReaderOptions.workingMaxDimension`, 2400 px on the longer side: a baseline JPEG
///   DCT-scaled by libjpeg, a PNG resampled row by row), so a page costs its *working* pixels ×
///   ``pageBytesPerWorkingPixel``, all pages summed, plus ``analysisOverheadBytes`` once; a
///   progressive JPEG or an interlaced PNG adds what its decoder holds whole
///   (``ImageHeader/wholeImageBytes``).
///   Measured with `/usr/bin/time -f %M idvd document read` (release build, card photos at 65 % of the
///   frame, JPEG q 3 from ffmpeg): a process that reads no MRZ peaks at 73 MB (the models); a single
///   page peaks at 92 MB at 1.08 M working pixels, 155 MB at 4.32 M, 250 MB at 9.72 M, 376 MB at
///   17.3 M (`--working-size` 1200 … 4800 on an 8000 × 6000 photo): 17.5 bytes a working pixel over
///   the 73 MB; the second page of a pair adds 18 … 68 MB (it is held, not analysed at the same
///   time). A 4608 × 3456 TD1 pair peaks at 146 … 168 MB (JPEG and PNG), an 8000 × 6000 pair at
///   173 MB, i.e. 73 … 100 MB over the models, estimated here at 164 MiB; the same 4608 × 3456
///   pair decoded in full (`--working-size full`) peaks at 257 MB (≈ 3.8 bytes a source pixel more).
///   A 4608 × 3456 page as an interlaced (Adam7) PNG peaks at 216 MB against 118 MB non-interlaced:
///   98 MB more, the model's 6 bytes a source pixel (95 MB). A progressive JPEG was not measured (no
///   encoder at hand); its figure is libjpeg's coefficient buffers.
/// - selfie frames are decoded in full one after another (FaceKit `SelfieAnalyzer`): the largest
///   frame's pixels × ``frameBytesPerPixel`` (RGB decode, its RGB and grey copies, detection and
///   crop buffers).
/// An image whose header does not read, or that is over its reader's own per-image limit, adds no
/// memory: the reader never decodes it (1008, 1009).
public struct ImageHeaderCosting: UploadCosting {
    /// Estimated bytes a selfie frame's pixel costs the analyser at its peak.
    public static let frameBytesPerPixel = 12
    /// Estimated bytes a document page's working pixel costs the reader (measured 17.5 for the page
    /// being read, ≈ 4 for a page held: 16 for every page is above every measured pair).
    public static let pageBytesPerWorkingPixel = 16
    /// Estimated bytes a document read needs beyond its pages' pixels (Tesseract's recogniser for the
    /// visual zone, the MRZ band and portrait re-decoded from the source, the report's JPEGs).
    public static let analysisOverheadBytes = 32 << 20
    /// The document reader's per-page limit (DocumentReader `Raster.maxPixels`).
    public var maxPagePixels: Int
    /// The selfie analyser's per-frame limit (FaceKit `LivenessConfiguration.maximumFramePixels`).
    public var maxFramePixels: Int
    /// The document reader's working size (`DocumentReaderOptions.workingMaxDimension`; nil: full size).
    public var pageWorkingMaxDimension: Int?

    public init(maxPagePixels: Int = Raster.maxPixels, maxFramePixels: Int = LivenessConfiguration().maximumFramePixels,
                pageWorkingMaxDimension: Int? = DocumentReaderOptions().workingMaxDimension) {
        self.maxPagePixels = maxPagePixels
        self.maxFramePixels = maxFramePixels
        self.pageWorkingMaxDimension = pageWorkingMaxDimension
    }

    /// Pixels of a `width` × `height` image decoded so its longer side is at most `maxDimension`
    /// (as CImaging's plan rounds them).
    static func workingPixels(width: Int, height: Int, maxDimension: Int?) -> Int {
        let long = max(width, height)
        guard let d = maxDimension, long > d else { return width * height }
        let s = Double(d) / Double(long)
        return max(1, Int((Double(width) * s).rounded())) * max(1, Int((Double(height) * s).rounded()))
    }

    public func cost(pages: [Data]) -> AnalysisCost {
        var pixels = 0, bytes = 0
        for page in pages {
            guard let h = ImageHeader.read(page) else { continue }
            pixels += h.pixels
            guard h.pixels <= maxPagePixels else { continue }
            bytes += Self.workingPixels(width: h.width, height: h.height, maxDimension: pageWorkingMaxDimension) * Self.pageBytesPerWorkingPixel
                + h.wholeImageBytes
        }
        return AnalysisCost(pixels: pixels, bytes: bytes > 0 ? bytes + Self.analysisOverheadBytes : 0)
    }

    public func cost(frames: [Data]) -> AnalysisCost {
        var total = 0, largest = 0
        for f in frames {
            guard let p = ImageHeader.read(f)?.pixels else { continue }
            total += p
            if p <= maxFramePixels { largest = max(largest, p) }
        }
        return AnalysisCost(pixels: total, bytes: largest * Self.frameBytesPerPixel)
    }
}
