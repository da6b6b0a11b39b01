import Foundation
import IDVEvidence
import Imaging
import MRZ

// The reader gives evidence only (IDVEvidence: `CheckOutcome`, `DocumentFinding`): no verdict and
// no sentences. `WorkflowPolicy` (IDVEngine) judges VALID / INVALID / WARNING from it, with the rule
// that was once `overall_status` here: INVALID when no MRZ is found or read (including any name or
// country-code character below `DocumentReader.unclearConfidence`, since those have no check digit),
// when any MRZ check digit (including the composite) fails or the MRZ is otherwise malformed, when
// the document has expired, when the birth date is not plausible, or when a document-number /
// optional-data character is one of a check-digit twin pair (K/<, L/1, G/6: equal value modulo 10,
// ICAO 9303-3 §4.9) and the classifier gave its twin ≥ `DocumentReader.twinDoubtConfidence` (it
// counts as unclear); never VALID when an image-quality check failed, no portrait was found, a
// country code is unknown, a check-digit twin the classifier gave weight is in doubt, the document
// number mixes O and 0, or a name letter's rival got ≥ `DocumentReader.nameDoubtConfidence`.

/// The internal document report: what was read and measured, from which the policy judges and the
/// seed 002 and seed 003 shapes are produced.
public struct DocumentReport: Sendable {
    /// The MRZ as read and parsed.
    public struct MRZSection: Codable, Sendable {
        /// Whether an MRZ-like block of text was found on any page.
        public var found: Bool
        /// Index of the page it was found on.
        public var pageIndex: Int?
        /// The lines as recognised, before check-digit correction.
        public var linesRead: [String]
        /// Mean per-character confidence (0…1) and the number of cells below 0.5.
        public var meanConfidence: Double
        public var lowConfidenceCells: Int
        /// Text direction on the page, degrees (0 = upright, 90 = page turned clockwise, …).
        public var angleDegrees: Double
        /// Cap height of the MRZ characters in page pixels.
        public var capHeightPixels: Double
        /// The parser's result (lines after confirmed corrections, format, fields, check digits).
        public var result: MRZResult?
        /// Document-number / optional-data cells the check digit cannot confirm (a check-digit twin
        /// read with its twin at ≥ `DocumentReader.twinDoubtConfidence`); each counts as unclear.
        public var doubtfulTwins: [DoubtfulCell] = []

        enum CodingKeys: String, CodingKey {
            case found, pageIndex = "page_index", linesRead = "lines_read", meanConfidence = "mean_confidence"
            case lowConfidenceCells = "low_confidence_cells", angleDegrees = "angle_degrees"
            case capHeightPixels = "cap_height_pixels", result, doubtfulTwins = "doubtful_twins"
        }
    }

    /// One MRZ cell whose check-digit twin or rival also got weight (IDVEvidence ``DoubtfulCell``).
    public typealias DoubtfulCell = IDVEvidence.DoubtfulCell

    public var mrz: MRZSection
    /// The document's data from the MRZ (empty when none was read).
    public var fields: MRZFields
    /// The portrait cropped from the page with a margin, JPEG; nil when no face was found.
    public var portraitJPEG: Data?
    /// The page images, upright, scaled down to `DocumentReaderOptions.pageMaxDimension`, JPEG.
    public var pagesJPEG: [Data]
    /// Every check performed, in a fixed order, with what it measured.
    public var checks: [CheckOutcome]
    /// What a person should hear about, in the order found (the policy classes each as an error
    /// or a warning; the wording table says it).
    public var findings: [DocumentFinding]
    /// Pages that could not be decoded (0-based index and why); also in `findings`.
    public var pageFailures: [PageFailure] = []
    /// "Today" of the reading (`DocumentReaderOptions.referenceDate`): the expiry and birth-date
    /// checks were measured against it.
    public var referenceDate = Date()
    /// Where the reading's time went (for `idvd bench document`; not part of any payload).
    public var timing = Timing()

    /// Seconds spent in each stage of `DocumentReader.read` (wall clock, one thread).
    public struct Timing: Sendable, Equatable {
        /// Decoding the page images at the working size (`DocumentReaderOptions.workingMaxDimension`).
        public var decode = 0.0
        /// Locating and recognising the MRZ on every page, the re-read from the source included.
        public var mrz = 0.0
        /// Parsing, field checks and the MRZ band's image quality.
        public var checks = 0.0
        /// Turning pages upright and encoding the report's page images (`pagesJPEG`).
        public var pageImages = 0.0
        /// The portrait search (face detection) and the portrait crop.
        public var portrait = 0.0
        /// The visual-zone name cross-check (Tesseract).
        public var visualZone = 0.0
        public init() {}
        /// All stages.
        public var total: Double { decode + mrz + checks + pageImages + portrait + visualZone }
    }

    /// The outcome of check `id`, if it was performed.
    public func check(_ id: DocumentCheckID) -> CheckOutcome? { checks.first { $0.id == id } }

    /// Why a page image could not be used.
    public enum PageFailure: Sendable, Equatable {
        /// The declared size exceeds the decoder's pixel limit (`Raster.maxPixels`): refused before decoding.
        case tooManyPixels(page: Int, width: Int, height: Int, limit: Int)
        /// Not a decodable JPEG/PNG (wrong bytes, truncated, corrupt); `reason` is the decoder's.
        case undecodable(page: Int, reason: String)
    }
}

/// Settings of `DocumentReader.read`.
public struct DocumentReaderOptions: Sendable {
    /// Whether to make the report's page images (`DocumentReport.pagesJPEG`: each page upright, scaled
    /// to `pageMaxDimension`, JPEG). Default true (the flows send them on); a caller that does not use
    /// them (`idvd document read` without `--images`) saves their resize and encoding (~30 ms of one
    /// core for a 1500 × 1056 page).
    public var pageImages = true
    /// Longest side of the page images in the report, pixels.
    public var pageMaxDimension = 1280
    public var pageJPEGQuality = 80
    public var portraitJPEGQuality = 90
    /// "Today" for the expiry and birth-date checks.
    public var referenceDate = Date()
    /// Whether to look for the portrait with FaceKit (needs the dlib models).
    public var detectPortrait = true
    /// Below this cap height (pixels) the resolution check fails (OCR-B at 10 cpi needs ≈ 8 px).
    public var minimumCapHeight = 8.0
    /// Pages whose longer side exceeds this are decoded scaled to it (`DocumentImage.decode`: DCT-scaled
    /// JPEG, PNG row by row), which bounds time and memory per page; a small MRZ is read again from the
    /// source's own pixels (`rereadCapHeight`). 2400 keeps every bench image (≤ 1874 px) at its own
    /// size. nil: every page at its own size (the decode before this option; A/B figures only).
    public var workingMaxDimension: Int? = 2400
    /// An MRZ read with a smaller cap height (pixels) on a page decoded below its source's resolution
    /// is read again from the source (`DocumentReport.rereadFromSource`) …
    public var rereadCapHeight = 18.0
    /// … at this cap height (or the source's own, if less): the glyph-shape specialists measure E/F
    /// from 16 px (`GlyphShapeModel.minimumBarCapHeight`), and the training lines reach 28 px pitch.
    public var rereadTargetCapHeight = 24.0
    /// Where the portrait search starts. `.documentFrame` (default): inside the document the MRZ
    /// belongs to (`MRZDocumentFrame.portraitRegion`), at `DocumentReader.portraitSearchPixelsPerMM`,
    /// the whole page only when that finds no face; `.wholePage`: the whole page at FaceKit's default
    /// size (the search before this option existed; kept for `idvd bench document` A/B figures).
    public var portraitSearch = PortraitSearchStart.documentFrame
    /// Whether to read the visual zone's names with Tesseract and cross-check them with the MRZ's
    /// (`DocumentCheckID.namesMatchVisualZone`). Default true.
    public var checkVisualZone = true
    /// Whether the visual zone's text lines that fit the MRZ's names are recognised first
    /// (`NameLines.readingOrder`, #40) rather than every line from the top (false: the order before;
    /// kept for `idvd bench document --name-lines top` A/B figures). Default true.
    public var nameLinesFirst = true
    public enum PortraitSearchStart: String, Sendable, CaseIterable { case documentFrame = "document", wholePage = "page" }
    public init() {}
}

