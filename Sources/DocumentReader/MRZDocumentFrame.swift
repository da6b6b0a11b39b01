import Foundation

/// The outline of the document an MRZ belongs to, laid out in the MRZ's own frame and mapped into
/// the page image, so that a face elsewhere on the page (a second document in the same photo, a
/// face pasted beside the document) is not taken for the document's portrait.
///
/// Frame: `along` runs in the reading direction of the MRZ lines and `across` perpendicular to it
/// towards the bottom edge of the document, both in millimetres from the centre of the first cell
/// of the last MRZ line. The scale is the measured character pitch, which ICAO 9303-3 §4.2 fixes at
/// 2.54 mm (OCR-B size 1, 10 characters per inch). Document sizes and MRZ positions:
/// TD3 125 × 88 mm, 2 × 44 characters (ICAO 9303-4 §4); TD2 105 × 74 mm, 2 × 36 (9303-6 §4);
/// TD1 85.6 × 54 mm, 3 × 30 (9303-5 §4). The MRZ is centred along the document (first character
/// about 6 mm from the left edge on TD3, as 9303-4 requires), and the centre of the last line lies
/// about 6 mm (TD3, TD2) or 5 mm (TD1) above the bottom edge.
public struct MRZDocumentFrame: Sendable {
    /// Document width and height, millimetres (ICAO 9303-4/-5/-6).
    public let sizeMM: (width: Double, height: Double)
    /// True for TD1 cards, whose MRZ is on the back: there the portrait side is not known and the
    /// whole card counts; on TD3/TD2 data pages the portrait lies above the MRZ.
    public let mrzOnBack: Bool
    /// Page-image position of the centre of the first cell of the last MRZ line, pixels.
    public let originX: Double, originY: Double
    /// Unit reading direction in the page image (y down).
    public let dirX: Double, dirY: Double
    /// Measured pitch divided by 2.54 mm.
    public let pixelsPerMM: Double
    /// `across` of the first MRZ line's centre (≤ 0), millimetres.
    public let firstLineAcross: Double
    /// Allowed `along` and `across` extent of the document, millimetres, each side widened by
    /// `margin` of the document's size: perspective (the pitch is measured on the MRZ only, and a
    /// tilted photo shrinks or grows the far edge) and pitch error would otherwise cut the edge off.
    public let alongRange: ClosedRange<Double>, acrossRange: ClosedRange<Double>

    /// Share of the document's width (along) and height (across) added on each side.
    public static let margin = 0.12

    /// The frame of `reading`'s document; nil when the MRZ shape is not TD1 (3 × 30), TD2 (2 × 36)
    /// or TD3 (2 × 44), or the geometry is degenerate.
    public init?(reading: MRZReading) {
        guard let first = reading.geometry.first, let last = reading.geometry.last else { return nil }
        let n = reading.lines.first?.count ?? 0
        let (w, h, bottom): (Double, Double, Double)
        switch (reading.lines.count, n) {
        case (2, 44): (w, h, bottom) = (125, 88, 6)
        case (2, 36): (w, h, bottom) = (105, 74, 6)
        case (3, 30): (w, h, bottom) = (85.6, 54, 5)
        default: return nil
        }
        let norm = (last.dirX * last.dirX + last.dirY * last.dirY).squareRoot()
        let pitch = reading.geometry.map(\.pitch).reduce(0, +) / Double(reading.geometry.count)
        guard norm > 0, pitch > 0, pitch.isFinite else { return nil }
        sizeMM = (w, h)
        mrzOnBack = n == 30
        originX = last.originX; originY = last.originY
        dirX = last.dirX / norm; dirY = last.dirY / norm
        pixelsPerMM = pitch / 2.54
        let left = (w - Double(n) * 2.54) / 2 + 1.27   // left edge to the first cell's centre
        let mw = Self.margin * w, mh = Self.margin * h
        alongRange = (-left - mw)...(w - left + mw)
        acrossRange = (-(h - bottom) - mh)...(bottom + mh)
        let p = Self.frameCoordinates(x: first.originX, y: first.originY, originX: last.originX, originY: last.originY,
                                      dirX: last.dirX / norm, dirY: last.dirY / norm, pixelsPerMM: pitch / 2.54)
        firstLineAcross = min(0, p.across)
    }

    private static func frameCoordinates(x: Double, y: Double, originX: Double, originY: Double,
                                         dirX: Double, dirY: Double, pixelsPerMM: Double) -> (along: Double, across: Double) {
        let dx = x - originX, dy = y - originY
        // across = the reading direction turned 90° clockwise on screen (y down): towards the bottom edge.
        return ((dx * dirX + dy * dirY) / pixelsPerMM, (-dx * dirY + dy * dirX) / pixelsPerMM)
    }

    /// Page-image point (pixels) in the MRZ frame (millimetres).
    public func coordinates(x: Double, y: Double) -> (along: Double, across: Double) {
        Self.frameCoordinates(x: x, y: y, originX: originX, originY: originY, dirX: dirX, dirY: dirY, pixelsPerMM: pixelsPerMM)
    }

    /// True when a face centred at page-image point (`x`, `y`) can be this document's portrait:
    /// inside the document and, on TD3/TD2 data pages, above the MRZ.
    public func holdsPortrait(x: Double, y: Double) -> Bool {
        let p = coordinates(x: x, y: y)
        guard alongRange.contains(p.along), acrossRange.contains(p.across) else { return false }
        return mrzOnBack || p.across < firstLineAcross
    }

    /// The page-image rectangle (pixels, clipped to a `width` × `height` page; nil when none of it is
    /// on the page) enclosing every point where `holdsPortrait` can hold: the document above the
    /// MRZ on TD3/TD2 data pages, the whole card on TD1. The portrait search looks there first.
    public func portraitRegion(width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int)? {
        let across = mrzOnBack ? acrossRange : acrossRange.lowerBound...firstLineAcross
        var xs: [Double] = [], ys: [Double] = []
        for a in [alongRange.lowerBound, alongRange.upperBound] {
            for c in [across.lowerBound, across.upperBound] {
                // along · dir + across · (dir turned 90° clockwise on screen: (−dirY, dirX))
                xs.append(originX + (a * dirX - c * dirY) * pixelsPerMM)
                ys.append(originY + (a * dirY + c * dirX) * pixelsPerMM)
            }
        }
        let x0 = max(0, Int(xs.min()!.rounded(.down))), y0 = max(0, Int(ys.min()!.rounded(.down)))
        let x1 = min(width, Int(xs.max()!.rounded(.up))), y1 = min(height, Int(ys.max()!.rounded(.up)))
        guard x1 > x0, y1 > y0 else { return nil }
        return (x0, y0, x1 - x0, y1 - y0)
    }

    /// The point (`x`, `y`) of a `width` × `height` image in the image turned clockwise by `turns`
    /// quarter turns (`Imaging.Image.rotated90(times:)`); the inverse of `unrotated`.
    public static func rotated(x: Double, y: Double, turns: Int, width: Int, height: Int) -> (x: Double, y: Double) {
        let t = ((turns % 4) + 4) % 4
        var (px, py) = (x, y)
        var w = Double(width), h = Double(height)
        for _ in 0..<t {
            // One clockwise quarter turn: (x, y) → (h − 1 − y, x) in the turned image.
            (px, py) = (h - 1 - py, px)
            swap(&w, &h)
        }
        return (px, py)
    }

    /// The point (`x`, `y`) of an image that was turned clockwise by `turns` quarter turns
    /// (`Imaging.Image.rotated90(times:)`) from a `width` × `height` original, in the original's pixels.
    public static func unrotated(x: Double, y: Double, turns: Int, width: Int, height: Int) -> (x: Double, y: Double) {
        let t = ((turns % 4) + 4) % 4
        var (px, py) = (x, y)
        // Width of the image the point is in now: the original's height after an odd number of turns.
        var w = Double(t % 2 == 1 ? height : width), h = Double(t % 2 == 1 ? width : height)
        for _ in 0..<t {
            // One counter-clockwise quarter turn undoes one clockwise turn: (x, y) → (y, w − 1 − x).
            (px, py) = (py, w - 1 - px)
            swap(&w, &h)
        }
        return (px, py)
    }
}
