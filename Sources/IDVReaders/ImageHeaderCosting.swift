import DocumentReader
import FaceKit
import Foundation
import IDVEngine
import Imaging

/// The production ``UploadCosting``: every image's width × height from its header (Imaging
/// ``ImageHeader``, no pixel decoded). Memory model, from how the readers hold images:
/// - selfie frames are decoded one after another (FaceKit `SelfieAnalyzer`): the largest frame's
///   pixels × ``bytesPerPixel`` (RGB decode, its RGB and grey copies, detection and crop buffers);
/// - document pages are all decoded and kept for the report (DocumentReader): every page's pixels ×
///   ``bytesPerPixel``.
/// An image whose header does not read, or that is over its reader's own per-image limit, costs
/// nothing here: the reader refuses it (1008, 1009 — asked again, one attempt used) before it
/// allocates pixel memory.
public struct ImageHeaderCosting: UploadCosting {
    /// Estimated bytes a decoded pixel costs the readers at their peak.
    public static let bytesPerPixel = 12
    /// The document reader's per-page limit (DocumentReader `Raster.maxPixels`).
    public var maxPagePixels: Int
    /// The selfie analyser's per-frame limit (FaceKit `LivenessConfiguration.maximumFramePixels`).
    public var maxFramePixels: Int

    public init(maxPagePixels: Int = Raster.maxPixels, maxFramePixels: Int = LivenessConfiguration().maximumFramePixels) {
        self.maxPagePixels = maxPagePixels
        self.maxFramePixels = maxFramePixels
    }

    /// The pixels `data` declares, or 0 when its reader refuses it before decoding.
    static func pixels(_ data: Data, limit: Int) -> Int {
        guard let p = ImageHeader.read(data)?.pixels, p <= limit else { return 0 }
        return p
    }

    public func cost(pages: [Data]) -> AnalysisCost {
        let pixels = pages.reduce(0) { $0 + Self.pixels($1, limit: maxPagePixels) }
        return AnalysisCost(pixels: pixels, bytes: pixels * Self.bytesPerPixel)
    }

    public func cost(frames: [Data]) -> AnalysisCost {
        var total = 0, largest = 0
        for f in frames {
            let p = Self.pixels(f, limit: maxFramePixels)
            total += p
            largest = max(largest, p)
        }
        return AnalysisCost(pixels: total, bytes: largest * Self.bytesPerPixel)
    }
}
