import FaceKit
import Foundation
import IDVEvidence
import Imaging

// Stage 3 of `DocumentReader.read`: the page images, turned upright by the MRZ's direction and
// scaled for the report, and the portrait — on the MRZ's page only a face inside the document the
// MRZ belongs to (`MRZDocumentFrame`), on another page (a TD1 card's front) the first face found.

extension DocumentReading {
    /// What the portrait search met on the way, for the "Portrait found" check.
    private struct PortraitSearchState {
        var checked = false
        var engineError: (any Error)?
        var unpreparedPages = 0
        var faceOnlyOutside = false
    }

    /// Stage 3: every page upright (the MRZ's page by the MRZ's quarter turns) into `pagesJPEG` (when
    /// `DocumentReaderOptions.pageImages`), the
    /// portrait searched page by page until one is found (`portrait`), and the "Portrait found" check
    /// with the true reason when it was not performed.
    mutating func findPortrait() {
        let quarter = quarterTurns
        var state = PortraitSearchState()
        for (k, img) in images.enumerated() {
            guard var page = try? Imaging.Image(rgb: img.rgb.pixels, width: img.rgb.width, height: img.rgb.height) else { state.unpreparedPages += 1; continue }
            if indices[k] == best?.page, quarter != 0 { page = page.rotated90(times: -quarter) }
            if options.pageImages, let small = try? page.resized(maxDimension: options.pageMaxDimension),
               let jpeg = try? small.jpegData(quality: options.pageJPEGQuality) {
                pagesJPEG.append(jpeg)
            }
            lap(\.pageImages)
            var engine: FaceEngine?
            if options.detectPortrait, portrait == nil {
                do { engine = try FaceEngine.shared() } catch { state.engineError = error }
            }
            if let engine {
                state.checked = true
                let faces = portraitFaces(on: &page, index: k, image: img, quarter: quarter, engine: engine, state: &state)
                if let face = faces.first {
                    let b = face.box
                    let rect = PixelRect(x: Int(b.left - 0.45 * b.width), y: Int(b.top - 0.6 * b.height),
                                         width: Int(1.9 * b.width), height: Int(2.3 * b.height))
                    if let r = rect.intersection(page.bounds), let crop = try? page.cropped(r) {
                        portrait = try? crop.jpegData(quality: options.portraitJPEGQuality)
                    }
                }
            }
            lap(\.portrait)
        }
        checkPortraitFound(state)
    }

    /// The faces on page `k` (`page`, upright by the MRZ's `quarter` turns when it is the MRZ's page)
    /// that may be its portrait, the one to take first. Where the MRZ's document is known, the search
    /// starts inside it, scaled so that a portrait is as large as the detector needs and no larger;
    /// the whole page is searched only when that finds nothing (to tell "no face" from "a face only
    /// outside"). Another page (a TD1 card's front) may have been photographed turned otherwise than
    /// the MRZ side, and the detector finds upright faces only: turned as the MRZ side was first,
    /// then the other quarter turns, until a face is found (`page` becomes the turned page).
    private func portraitFaces(on page: inout Imaging.Image, index k: Int, image img: DocumentImage, quarter: Int,
                               engine: FaceEngine, state: inout PortraitSearchState) -> [DetectedFace] {
        let frame = indices[k] == best?.page ? best.flatMap { MRZDocumentFrame(reading: $0.reading) } : nil
        var faces = options.portraitSearch == .wholePage ? []
            : frame.map { DocumentReader.facesInDocument($0, page: page, turns: -quarter, original: img.rgb, engine: engine) } ?? []
        if faces.isEmpty {
            // TD3/TD2 only: a TD1 card's portrait (ICAO 9303-5) can be too small for the frame search's
            // scale, and the whole page at the detector's default is what finds it there.
            let whole = frame.flatMap { $0.mrzOnBack ? nil : DocumentReader.wholePageSearch(width: page.width, height: page.height, pixelsPerMM: $0.pixelsPerMM) }
                ?? DetectionOptions()
            faces = (try? engine.detect(in: page, options: whole)) ?? []
        }
        if faces.isEmpty, indices[k] != best?.page {
            for t in [quarter, quarter + 2, quarter + 1, quarter + 3].map({ (($0 % 4) + 4) % 4 }) where t != 0 {
                let turned = page.rotated90(times: -t)
                if let f = try? engine.detect(in: turned), !f.isEmpty { page = turned; faces = f; break }
            }
        }
        // On the page that carries the MRZ, only a face inside the document the MRZ belongs to
        // is its portrait (`MRZDocumentFrame`: the page laid out from the MRZ's position, angle
        // and pitch); of those the largest. A face only outside it (a second document in the
        // photo, a face pasted beside a covered photo) is reported, never taken. Only the one
        // MRZ read is used: a second MRZ on the page is not searched for. On other pages (the
        // other side of a TD1 card) the first face found is taken, as before.
        if indices[k] == best?.page, let reading = best?.reading, let frame = MRZDocumentFrame(reading: reading) {
            let inside = faces.filter { f in
                let c = MRZDocumentFrame.unrotated(x: f.box.center.x, y: f.box.center.y, turns: -quarter,
                                                   width: img.rgb.width, height: img.rgb.height)
                return frame.holdsPortrait(x: c.x, y: c.y)
            }
            if inside.isEmpty && !faces.isEmpty { state.faceOnlyOutside = true }
            faces = inside.max { $0.box.width * $0.box.height < $1.box.width * $1.box.height }.map { [$0] } ?? []
        }
        return faces
    }

    /// The "Portrait found" check. When no page was searched it says the true reason: detection
    /// off, no usable page, or the face detector itself could not start.
    private mutating func checkPortraitFound(_ state: PortraitSearchState) {
        if !options.detectPortrait {
            check(.portraitFound, .notPerformed, .portrait(.detectionOff))
        } else if !state.checked {
            if images.isEmpty || state.unpreparedPages == images.count {
                check(.portraitFound, .notPerformed, .portrait(images.isEmpty ? .noPageDecoded : .noPagePrepared))
            } else if let engineError = state.engineError {
                let models: Bool
                if case FaceError.modelUnavailable = engineError { models = true } else { models = false }
                check(.portraitFound, .notPerformed, .portrait(.detectorUnavailable(modelsMissing: models, reason: "\(engineError)")))
                findings.append(models ? .portraitModelsMissing : .portraitDetectorFailed(reason: "\(engineError)"))
            } else {
                check(.portraitFound, .notPerformed, .portrait(.noPageSearched))
            }
        } else if portrait == nil && state.faceOnlyOutside {
            check(.portraitFound, .failed, .portrait(.onlyOutsideDocument))
            findings.append(.faceOnlyOutsideDocument)
        } else {
            check(.portraitFound, portrait != nil ? .passed : .failed, .portrait(portrait != nil ? .found : .notFound))
            if portrait == nil && best != nil { findings.append(.noPortrait) }
        }
    }
}

extension DocumentReader {
    /// Faces the detector finds inside `frame`'s portrait region (`MRZDocumentFrame.portraitRegion`),
    /// in `page` pixels (`page` is `original` turned clockwise by `turns` quarter turns). The region is
    /// cut from the page and scaled to `portraitSearchPixelsPerMM` (the detector's 80-pixel window
    /// then holds a portrait face of 13 mm; an ICAO 9303-3 portrait is 32–45 mm tall, its face box
    /// 15–22 mm), never enlarged, and searched without upsampling.
    static func facesInDocument(_ frame: MRZDocumentFrame, page: Imaging.Image, turns: Int, original: RGBImage,
                                engine: FaceEngine) -> [DetectedFace] {
        guard let r = frame.portraitRegion(width: original.width, height: original.height) else { return [] }
        var xs: [Double] = [], ys: [Double] = []
        for (x, y) in [(r.x, r.y), (r.x + r.width - 1, r.y), (r.x, r.y + r.height - 1), (r.x + r.width - 1, r.y + r.height - 1)] {
            let p = MRZDocumentFrame.rotated(x: Double(x), y: Double(y), turns: turns, width: original.width, height: original.height)
            xs.append(p.x); ys.append(p.y)
        }
        let rect = PixelRect(x: Int(xs.min()!), y: Int(ys.min()!), width: Int(xs.max()! - xs.min()!) + 1, height: Int(ys.max()! - ys.min()!) + 1)
        guard let cut = rect.intersection(page.bounds), let crop = try? page.cropped(cut) else { return [] }
        let z = min(1, portraitSearchPixelsPerMM / frame.pixelsPerMM)
        let w = max(1, Int((Double(crop.width) * z).rounded())), h = max(1, Int((Double(crop.height) * z).rounded()))
        guard let small = z < 1 ? try? crop.resized(width: w, height: h) : crop,
              let found = try? engine.detect(in: small, options: DetectionOptions(maxDimension: max(w, h), upsample: 0)) else { return [] }
        let (sx, sy) = (Double(crop.width) / Double(small.width), Double(crop.height) / Double(small.height))
        return found.map { f in
            var f = f
            f.box = FaceBox(left: Double(cut.x) + (f.box.left + 0.5) * sx - 0.5, top: Double(cut.y) + (f.box.top + 0.5) * sy - 0.5,
                            right: Double(cut.x) + (f.box.right + 0.5) * sx - 0.5, bottom: Double(cut.y) + (f.box.bottom + 0.5) * sy - 0.5)
            return f
        }
    }

    /// Resolution of the portrait search inside the document (`facesInDocument`), pixels per millimetre.
    static let portraitSearchPixelsPerMM = 6.0

    /// Detection options for the whole-page search that follows an empty search inside a TD3/TD2
    /// document (`facesInDocument`) on a `width` × `height` page whose MRZ document frame has
    /// `pixelsPerMM` (`MRZDocumentFrame.pixelsPerMM`). There that search only tells "no face" from "a
    /// face outside the document" (a second document, a face pasted beside a covered photo), so it
    /// runs at the same scale, `portraitSearchPixelsPerMM` (a face smaller than a data page
    /// portrait's 13 mm is no one's portrait; a TD1 card's portrait can be, and a card keeps the
    /// detector's defaults: `PortraitLocationTests.testOrdinarySpecimensStillGiveTheirPortrait`), never finer than the detector's default (`DetectionOptions.maxDimension`, 1024 px
    /// on the longer side) and never enlarged (upsampling off); a page already at or below that scale
    /// gets the defaults. A 1500 × 1056 TD3 page at 12 px/mm is searched at 750 px instead of 1024:
    /// about half the HOG work (bench/DOCUMENT-BENCH.md, session 13).
    static func wholePageSearch(width: Int, height: Int, pixelsPerMM: Double) -> DetectionOptions {
        let defaults = DetectionOptions()
        let long = max(width, height)
        let z = pixelsPerMM > 0 ? min(1, portraitSearchPixelsPerMM / pixelsPerMM) : 1
        let atScale = max(1, Int((Double(long) * z).rounded()))
        return z < 1 ? DetectionOptions(maxDimension: min(defaults.maxDimension, atScale), upsample: 0) : defaults
    }
}
