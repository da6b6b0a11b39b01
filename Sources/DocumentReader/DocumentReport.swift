import FaceKit
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
    public enum PortraitSearchStart: String, Sendable, CaseIterable { case documentFrame = "document", wholePage = "page" }
    public init() {}
}

extension DocumentReader {
    /// Reads one or two page images (JPEG/PNG bytes, any orientation) into a document report.
    /// Never throws for image content: undecodable pages become findings in the report (and the
    /// MRZ is then not present), so the caller always has evidence to judge.
    public static func read(pages: [Data], options: DocumentReaderOptions = .init()) -> DocumentReport {
        var findings: [DocumentFinding] = []
        var decoded: [(Int, DocumentImage)] = []
        var failures: [DocumentReport.PageFailure] = []
        let started = DispatchTime.now().uptimeNanoseconds
        for (i, data) in pages.enumerated() {
            do { decoded.append((i, try DocumentImage.decode(data, maxDimension: options.workingMaxDimension))) } catch let ImageError.tooManyPixels(w, h, limit) {
                failures.append(.tooManyPixels(page: i, width: w, height: h, limit: limit))
                findings.append(.pageTooLarge(page: i, width: w, height: h, limit: limit))
            } catch {
                failures.append(.undecodable(page: i, reason: "\(error)"))
                findings.append(.pageUndecodable(page: i, reason: "\(error)"))
            }
        }
        let decodeTime = seconds(since: started)
        var report = read(images: decoded.map(\.1), pageIndices: decoded.map(\.0), options: options, initialFindings: findings)
        report.pageFailures = failures
        report.timing.decode = decodeTime
        return report
    }

    /// Reads decoded page images into a document report.
    public static func read(images: [DocumentImage], pageIndices: [Int]? = nil, options: DocumentReaderOptions = .init(),
                            initialFindings: [DocumentFinding] = []) -> DocumentReport {
        var findings = initialFindings
        var checks: [CheckOutcome] = []
        var timing = DocumentReport.Timing()
        var stage = DispatchTime.now().uptimeNanoseconds
        /// Adds the time since the last lap to `slot`.
        func lap(_ slot: WritableKeyPath<DocumentReport.Timing, Double>) {
            let now = DispatchTime.now().uptimeNanoseconds
            timing[keyPath: slot] += Double(now - stage) / 1e9
            stage = now
        }
        let indices = pageIndices ?? Array(images.indices)
        // 1. MRZ: read every page, keep the most confident reading.
        var best: (reading: MRZReading, page: Int, image: DocumentImage)?
        var everyReading: [(reading: MRZReading, page: Int)] = []
        for (k, img) in images.enumerated() {
            guard let r = MRZReader.read(img.grey) else { continue }
            everyReading.append((r, indices[k]))
            if best == nil || r.meanConfidence > best!.reading.meanConfidence {
                best = (r, indices[k], img)
            }
        }
        // A small MRZ on a page decoded below its source's resolution is read again from the source,
        // just its band, at the resolution the recogniser is best at; the band's reading is kept when
        // the parser rates it higher (`MRZReader.candidateScore`). Quality is measured where it was read.
        var measured: (image: GreyImage, reading: MRZReading)? = best.map { ($0.image.grey, $0.reading) }
        if let b = best, let refined = Self.rereadFromSource(b.reading, b.image, options: options) {
            best = (refined.page, b.page, b.image)
            measured = (refined.band.grey, refined.reading)
        }
        lap(\.mrz)
        // The hand-over to the parser may report the reading as printed (`MRZReading.handOver`).
        let parser = MRZParser(options: .init(referenceDate: options.referenceDate))
        var handed: MRZResult?
        if let b = best {
            let h = b.reading.handOver(to: parser)
            best = (h.reading, b.page, b.image)
            handed = h.result
        }
        var section = DocumentReport.MRZSection(found: best != nil, pageIndex: best?.page, linesRead: best?.reading.lines ?? [],
                                                meanConfidence: best?.reading.meanConfidence ?? 0,
                                                lowConfidenceCells: best?.reading.confidences.flatMap { $0 }.filter { $0 < 0.5 }.count ?? 0,
                                                angleDegrees: best?.reading.angleDegrees ?? 0,
                                                capHeightPixels: measured?.reading.geometry.first?.capHeight ?? 0, result: nil)
        var fields = MRZFields()
        var doubtfulNames: [DocumentReport.DoubtfulCell] = [], doubtfulNamesAt = 0
        func check(_ id: DocumentCheckID, _ result: CheckResult, _ measured: CheckMeasurement = .none) {
            checks.append(CheckOutcome(id, result, measured))
        }
        if let best {
            check(.mrzPresent, .passed, .page(best.page))
            let result = handed ?? best.reading.parsedAsRead(by: parser)
            // Another page's MRZ, as read, of another document: both must check out in full, so that
            // a misread cannot pass for a second document.
            if result.checkDigits.allSatisfy(\.valid), let other = Self.otherDocumentPage(result, besides: best.page, everyReading, parser: parser) {
                findings.append(.pagesOfDifferentDocuments(pages: [best.page, other].sorted()))
            }
            section.result = result
            fields = result.fields
            // Names, codes and sex have no check digit: a doubtful cell there cannot be confirmed.
            let classes = MRZCharacterClass.layout(lineLength: best.reading.lines.first?.count ?? 0, lineCount: best.reading.lines.count)
            // Elsewhere a check digit confirms a doubtful cell, but errors can cancel (0→O twice at
            // weights 7 and 3): three or more doubtful cells on a line count too.
            let corrected = Set(result.corrections.map { ($0.line - 1) * 1000 + ($0.column - 1) })   // 1-based in MRZCorrection
            var unclear = 0
            for (l, row) in best.reading.confidences.enumerated() where l < classes.count {
                var guarded = 0
                for (c, p) in row.enumerated() where c < classes[l].count && p < Self.unclearConfidence && !corrected.contains(l * 1000 + c) {
                    let ch = Array(best.reading.lines[l])[c]
                    // check-digit twins (K/<, L/1, G/6) weigh the same modulo 10: no check digit tells them apart
                    let twin = ch == "<" || ch == "K" || (classes[l][c] == .any && MRZReader.checkDigitTwin[ch] != nil)
                    if classes[l][c] == .name || classes[l][c] == .code || twin { unclear += 1 } else { guarded += 1 }
                }
                if guarded >= 3 { unclear += guarded }
            }
            // A confident-looking twin is still doubtful when the classifier gave its twin real weight.
            section.doubtfulTwins = Self.doubtfulTwins(best.reading, classes: classes)
            unclear += section.doubtfulTwins.filter { $0.confidence >= Self.unclearConfidence && !corrected.contains(($0.line - 1) * 1000 + $0.column - 1) }.count
            let known = result.format != .unknown
            let readable = known && unclear == 0
            check(.mrzReadable, readable ? .passed : .failed,
                  !known ? .unknownFormat : (unclear > 0 ? .unclearCharacters(unclear) : .format(result.format.rawValue)))
            if known && unclear > 0 { findings.append(.unclearCharacters(count: unclear)) }
            // The MRZ module's layouts name exactly the five check digits of `DocumentCheckID(checkDigit:)`.
            for cd in result.checkDigits {
                if let id = DocumentCheckID(checkDigit: cd.name) { check(id, cd.valid ? .passed : .failed) }
            }
            for e in result.errors { findings.append(.mrzError(detail: e)) }
            // Check-digit-invisible ambiguity (the parser's warnings) and O/0 mixing: never VALID. A
            // twin the classifier gave no real weight (< twinDoubtConfidence) is not in doubt.
            for w in result.warnings where !twinSettled(w, best.reading, corrected: corrected) {
                if let t = twinAmbiguity(w) ?? unconfirmedCorrection(w) { findings.append(t) }
            }
            // Names have no check digit: a letter whose rival the classifier gave real weight is unconfirmed.
            // (reported after the visual-zone cross-check, which may confirm them, at this place in the list)
            doubtfulNames = Self.doubtfulNameCells(best.reading, classes: classes)
            doubtfulNamesAt = findings.count
            let number = fields.documentNumber
            if number.contains("O") && number.contains("0") { findings.append(.documentNumberMixesOAndZero) }
            // Well-formed fields (ICAO 9303-3 §4: character sets, dates, sex M/F/<): every parser error
            // that no check-digit check shows gets a failed check of its own, so INVALID always has one.
            let formErrors = result.errors.filter { !$0.contains("check digit") }
            let cdFailed = result.checkDigits.contains { !$0.valid }
            let unshown = !result.valid && formErrors.isEmpty && !cdFailed && known ? result.errors : formErrors
            check(.mrzFieldsWellFormed, unshown.isEmpty ? .passed : .failed, unshown.isEmpty ? .none : .formErrors(unshown))
            // Mandatory data elements (ICAO 9303-3 §4.2, 9303-4/-5/-6 field tables): the document number
            // and the primary identifier may not be all fillers. (The expiry date has its own check below.)
            var missing: [RequiredMRZField] = []
            if fields.documentNumber.isEmpty { missing.append(.documentNumber) }
            if fields.surname.isEmpty { missing.append(.primaryIdentifier) }
            if known {
                check(.requiredFieldsPresent, missing.isEmpty ? .passed : .failed, .missingFields(missing))
                if !missing.isEmpty { findings.append(.missingRequiredFields(missing)) }
            }
            // data checks
            let expiryRaw = fields.raw["expiry_date"] ?? ""
            let birthRaw = fields.raw["birth_date"] ?? ""
            if let expired = fields.expired {
                check(.documentNotExpired, expired ? .failed : .passed,
                      expired ? .expiredOn(fields.expiryDate ?? "?") : .validUntil(fields.expiryDate ?? "?"))
                if expired { findings.append(.expired(date: fields.expiryDate ?? "?")) }
            } else if !expiryRaw.isEmpty && expiryRaw.allSatisfy({ $0 == "<" }) || expiryRaw.prefix(2) == "<<" {
                // A document without an expiry date cannot be shown to be in force.
                check(.documentNotExpired, .failed, .noExpiryDate)
                findings.append(.noExpiryDate)
            } else if known && !expiryRaw.isEmpty {
                check(.documentNotExpired, .failed, .invalidDate)
                findings.append(.invalidExpiryDate)
            } else {
                check(.documentNotExpired, .notPerformed, .unreadableDate)
            }
            // An unknown date of birth is allowed (ICAO 9303-3 §4.6: unknown parts are fillers): a warning.
            let birthUnknown = birthRaw.contains("<") && result.errors.allSatisfy { !$0.hasPrefix("birth_date") }
            let birthOK = birthUnknown ? nil : plausibleBirthDate(fields.birthDate, reference: options.referenceDate)
            if birthUnknown {
                if fields.birthDate == nil {
                    check(.birthDatePlausible, .notPerformed, .birthDateNotGiven)
                    findings.append(.birthDateNotGiven)
                } else {
                    check(.birthDatePlausible, .notPerformed, .birthDatePartlyGiven)
                    findings.append(.birthDatePartlyGiven)
                }
            } else if birthOK == nil && known && !birthRaw.isEmpty {
                check(.birthDatePlausible, .failed, .invalidDate)
                findings.append(.invalidBirthDate)
            } else {
                check(.birthDatePlausible, birthOK == nil ? .notPerformed : (birthOK! ? .passed : .failed),
                      birthOK == nil ? .unreadableDate : (birthOK! ? .plausibleBirthDate : .implausibleBirthDate))
            }
            if birthOK == false { findings.append(.implausibleBirthDate(date: fields.birthDate ?? "?")) }
            if readable {
                check(.issuingStateCodeKnown, fields.issuingStateKnown ? .passed : .failed, .code(fields.issuingState))
                check(.nationalityCodeKnown, fields.nationalityKnown ? .passed : .failed, .code(fields.nationality))
                if !fields.issuingStateKnown { findings.append(.unknownIssuingState(fields.issuingState)) }
                if !fields.nationalityKnown && fields.nationality != fields.issuingState { findings.append(.unknownNationality(fields.nationality)) }
            }
        } else {
            // Glare over the MRZ hides it from the localiser: say glare, not "no MRZ", when a band of a
            // page is saturated (`glareBand`).
            let glare = images.map { Self.glareBand($0.grey) }.max() ?? 0
            if glare >= Self.glareBandFraction {
                check(.mrzPresent, .failed, .glare(saturatedFraction: glare))
                findings.append(.glareHidesMRZ(saturatedFraction: glare))
            } else {
                check(.mrzPresent, .failed)
                if !images.isEmpty { findings.append(.noMRZ) }
            }
            check(.mrzReadable, .notPerformed, .noMRZ)
        }
        // 2. Image quality on the MRZ.
        if let measured {
            let q = mrzQuality(measured.image, measured.reading)
            check(.imageSharp, q.sharp ? .passed : .failed, .sharpness(q.sharpness, threshold: MRZQuality.sharpnessThreshold))
            check(.noGlareOnMRZ, q.glare ? .failed : .passed, .saturatedFraction(q.saturatedFraction))
            let resOK = section.capHeightPixels >= options.minimumCapHeight
            check(.resolution, resOK ? .passed : .failed, .capHeight(section.capHeightPixels, minimum: options.minimumCapHeight))
            if !q.sharp { findings.append(.blurredMRZ) }
            if q.glare { findings.append(.glareOnMRZ) }
            if !resOK { findings.append(.smallMRZ) }
        } else {
            for id in [DocumentCheckID.imageSharp, .noGlareOnMRZ, .resolution] { check(id, .notPerformed, .noMRZ) }
        }
        // 3. Portrait and page images (upright by the MRZ direction).
        let quarter = best.map { Int((($0.reading.angleDegrees / 90).rounded())) % 4 } ?? 0
        var pagesJPEG: [Data] = []
        var portrait: Data?
        var portraitChecked = false
        var engineError: (any Error)?
        var unpreparedPages = 0
        var faceOnlyOutside = false
        lap(\.checks)
        for (k, img) in images.enumerated() {
            guard var page = try? Imaging.Image(rgb: img.rgb.pixels, width: img.rgb.width, height: img.rgb.height) else { unpreparedPages += 1; continue }
            if indices[k] == best?.page, quarter != 0 { page = page.rotated90(times: -quarter) }
            if let small = try? page.resized(maxDimension: options.pageMaxDimension), let jpeg = try? small.jpegData(quality: options.pageJPEGQuality) {
                pagesJPEG.append(jpeg)
            }
            lap(\.pageImages)
            var engine: FaceEngine?
            if options.detectPortrait, portrait == nil {
                do { engine = try FaceEngine.shared() } catch { engineError = error }
            }
            if let engine {
                portraitChecked = true
                let frame = indices[k] == best?.page ? best.flatMap { MRZDocumentFrame(reading: $0.reading) } : nil
                // Where the MRZ's document is known, the search starts inside it, scaled so that a
                // portrait is as large as the detector needs and no larger; the whole page is searched
                // only when that finds nothing (to tell "no face" from "a face only outside").
                var faces = options.portraitSearch == .wholePage ? []
                    : frame.map { Self.facesInDocument($0, page: page, turns: -quarter, original: img.rgb, engine: engine) } ?? []
                if faces.isEmpty { faces = (try? engine.detect(in: page)) ?? [] }
                // Another page (a TD1 card's front) may have been photographed turned otherwise than
                // the MRZ side, and the detector finds upright faces only: turned as the MRZ side
                // was first, then the other quarter turns, until a face is found.
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
                    if inside.isEmpty && !faces.isEmpty { faceOnlyOutside = true }
                    faces = inside.max { $0.box.width * $0.box.height < $1.box.width * $1.box.height }.map { [$0] } ?? []
                }
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
        if !options.detectPortrait {
            check(.portraitFound, .notPerformed, .portrait(.detectionOff))
        } else if !portraitChecked {
            // Say the true reason: no usable page, or the face detector itself could not start.
            if images.isEmpty || unpreparedPages == images.count {
                check(.portraitFound, .notPerformed, .portrait(images.isEmpty ? .noPageDecoded : .noPagePrepared))
            } else if let engineError {
                let models: Bool
                if case FaceError.modelUnavailable = engineError { models = true } else { models = false }
                check(.portraitFound, .notPerformed, .portrait(.detectorUnavailable(modelsMissing: models, reason: "\(engineError)")))
                findings.append(models ? .portraitModelsMissing : .portraitDetectorFailed(reason: "\(engineError)"))
            } else {
                check(.portraitFound, .notPerformed, .portrait(.noPageSearched))
            }
        } else if portrait == nil && faceOnlyOutside {
            check(.portraitFound, .failed, .portrait(.onlyOutsideDocument))
            findings.append(.faceOnlyOutsideDocument)
        } else {
            check(.portraitFound, portrait != nil ? .passed : .failed, .portrait(portrait != nil ? .found : .notFound))
            if portrait == nil && best != nil { findings.append(.noPortrait) }
        }
        // 4. Names against the visual zone (names have no check digit).
        if !options.checkVisualZone {
            check(.namesMatchVisualZone, .notPerformed, .none)
        } else if let best, let result = section.result, result.format != .unknown {
            // TD1: the names are on the card's front (the other page) and perhaps above the MRZ (`cardCheck`).
            let search: VisualZoneSearch
            if let frame = MRZDocumentFrame(reading: best.reading), frame.mrzOnBack {
                search = Self.cardCheck(pages: images.indices.map { (indices[$0], images[$0].grey) }, mrzPage: best.page,
                                        reading: best.reading, result: result, frame: frame, quarterTurns: quarter)
            } else {
                search = Self.visualZoneCheck(page: best.image.grey, reading: best.reading, result: result)
            }
            var confirmed: [MRZNamePart] = []
            var outcome = CheckResult.notPerformed
            let comparedParts: [VisualZoneNamePart]?
            switch search {
            case let .compared(p), let .comparedOnCard(_, p): comparedParts = p
            default: comparedParts = nil
            }
            if let compared = comparedParts {
                let parts = VisualZoneNames.parts(result.lines, format: result.format)
                for c in compared {
                    switch c.outcome {
                    case .agrees, .settled:
                        if outcome == .notPerformed { outcome = .passed }
                        confirmed += parts.filter { $0.field == c.field && $0.text == c.mrz }
                        if c.outcome == .settled, c.winner == .visualZone, let printed = c.visualZone {
                            // The settled name is the printed one: the report's field carries it.
                            func replaced(_ s: String) -> String {
                                var words = s.split(separator: " ").map(String.init)
                                if let i = words.firstIndex(of: c.mrz) { words[i] = printed }
                                return words.joined(separator: " ")
                            }
                            if c.field == .primaryIdentifier { fields.surname = replaced(fields.surname) } else { fields.givenNames = replaced(fields.givenNames) }
                        }
                    case .differs:
                        outcome = .failed
                        findings.append(.nameDiffersFromVisualZone(field: c.field, mrz: c.mrz, visualZone: c.visualZone ?? ""))
                    case .notFound: break
                    }
                }
            }
            check(.namesMatchVisualZone, outcome == .passed && confirmed.isEmpty ? .notPerformed : outcome, .visualZone(search))
            // A doubtful name letter inside a part the visual zone printed the same (or settled) is confirmed.
            doubtfulNames = doubtfulNames.filter { d in
                !confirmed.contains { $0.line == d.line - 1 && d.column - 1 >= $0.column && d.column - 1 < $0.column + $0.text.count }
            }
        } else {
            check(.namesMatchVisualZone, .notPerformed, .visualZone(.noVisualZone))
        }
        if !doubtfulNames.isEmpty {
            findings.insert(.uncertainName(cells: Array(doubtfulNames.prefix(3)), total: doubtfulNames.count), at: min(doubtfulNamesAt, findings.count))
        }
        lap(\.visualZone)
        check(.chipVerification, .notPerformed, .chipNotSupported)
        var report = DocumentReport(mrz: section, fields: fields, portraitJPEG: portrait, pagesJPEG: pagesJPEG, checks: checks, findings: findings,
                                    referenceDate: options.referenceDate)
        report.timing = timing
        return report
    }

    /// A page band (`glareBand`) at least this saturated says glare.
    static let glareBandFraction = 0.25

    /// Glare on a page without a readable MRZ: the largest share of saturated pixels (≥ 250, on a page
    /// whose median is ≤ 235, so a white scan's paper is not glare) in any of the page's bands of an
    /// eighth of its height (its width for a page on its side: both directions are tried), sampled
    /// every other pixel. 0 for bright pages.
    static func glareBand(_ g: GreyImage) -> Double {
        guard g.width >= 16, g.height >= 16 else { return 0 }
        var histogram = [Int](repeating: 0, count: 256)
        var rows = [Int](repeating: 0, count: 8), cols = [Int](repeating: 0, count: 8)
        var n = 0
        g.pixels.withUnsafeBufferPointer { p in
            for y in stride(from: 0, to: g.height, by: 2) {
                let band = y * 8 / g.height
                for x in stride(from: 0, to: g.width, by: 2) {
                    let v = p[y * g.width + x]
                    histogram[Int(v)] += 1
                    n += 1
                    if v >= 250 { rows[band] += 1; cols[x * 8 / g.width] += 1 }
                }
            }
        }
        var below = 0, median = 255
        for (v, c) in histogram.enumerated() { below += c; if below * 2 >= n { median = v; break } }
        guard median <= 235 else { return 0 }
        let perBand = Double(n) / 8
        return Double(max(rows.max() ?? 0, cols.max() ?? 0)) / perBand
    }

    static func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    /// `reading` of `image` read again from the page's source when its cap height is under
    /// `DocumentReaderOptions.rereadCapHeight` and the source has more resolution: the band around the
    /// MRZ lines (one pitch beyond the line ends, 1.5 cap heights beyond the outer lines) decoded at
    /// `rereadTargetCapHeight`, read by `MRZReader.read`, and kept when `MRZReader.candidateScore`
    /// rates it above the page's reading. Returns the band, its reading (band pixels) and the same
    /// reading in page pixels; nil when nothing better came of it.
    static func rereadFromSource(_ reading: MRZReading, _ image: DocumentImage, options: DocumentReaderOptions)
        -> (band: DocumentImage, reading: MRZReading, page: MRZReading)? {
        guard image.source != nil, image.scale < 1, let cap = reading.geometry.first?.capHeight, cap > 0,
              cap < options.rereadCapHeight, let count = reading.lines.first?.count, count > 0 else { return nil }
        var xs: [Double] = [], ys: [Double] = []
        for g in reading.geometry {
            for i in [-1.0, Double(count)] {
                let (cx, cy) = g.centre(i)
                for b in [-1.5, 1.5] { xs.append(cx - b * g.capHeight * g.dirY); ys.append(cy + b * g.capHeight * g.dirX) }
            }
        }
        let x0 = max(0, Int(xs.min()!.rounded(.down))), y0 = max(0, Int(ys.min()!.rounded(.down)))
        let x1 = min(image.rgb.width, Int(xs.max()!.rounded(.up)) + 1), y1 = min(image.rgb.height, Int(ys.max()!.rounded(.up)) + 1)
        guard x1 > x0, y1 > y0 else { return nil }
        let t = image.scale * options.rereadTargetCapHeight / cap
        guard let (band, map) = image.redecode(PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0), outputPerSourcePixel: t),
              let again = MRZReader.read(band.grey) else { return nil }
        let parser = MRZParser(options: .init(correctionEnabled: false))
        guard MRZReader.candidateScore(again, parser: parser).score > MRZReader.candidateScore(reading, parser: parser).score else { return nil }
        return (band, again, again.mapped(k: map.k, x: map.x, y: map.y))
    }

    /// The first page other than `page` whose MRZ, parsed as read (no correction), has every check
    /// digit holding and is of
    /// another document than `result` (document number or date of birth differ; ICAO 9303-3 §4.2).
    static func otherDocumentPage(_ result: MRZResult, besides page: Int, _ readings: [(reading: MRZReading, page: Int)],
                                  parser: MRZParser) -> Int? {
        let strict = MRZParser(options: .init(referenceDate: parser.options.referenceDate, correctionEnabled: false))
        for (r, p) in readings where p != page {
            let other = r.parsedAsRead(by: strict)
            guard other.format != .unknown, !other.checkDigits.isEmpty, other.checkDigits.allSatisfy(\.valid) else { continue }
            if other.fields.documentNumber != result.fields.documentNumber || other.fields.birthDate != result.fields.birthDate { return p }
        }
        return nil
    }

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

    /// Below this posterior a character without check-digit protection counts as unclear.
    public static let unclearConfidence = 0.5

    /// A cell holding one of a check-digit twin pair (K/<, L/1, G/6, `MRZReader.checkDigitTwin`)
    /// counts as unclear when the classifier's posterior for the twin is at least this large:
    /// the check digit cannot settle it and the recogniser itself was not sure. Set from the 33 real
    /// specimens (`idvd bench document`): correctly read twins got ≤ 0.066, the misread K of
    /// `100_pass-isl.png` 0.18–0.20.
    public static let twinDoubtConfidence = 0.1

    /// A name letter read with at least `unclearConfidence` (below it the cell is unclear anyway) is
    /// still unconfirmed when the classifier gave another letter or the filler at least this much:
    /// no check digit covers names, so a D read as O (`ABOULLAH`, `OUBOIS`) would otherwise pass.
    /// Chosen on the full c1000 corpus (seed 100000; 11 wrong-but-not-flagged readings, 844 exact
    /// ones not flagged): 0.1 flags 10 of the 11 and 55 exact readings, 0.2 flags 9 and 22 (2.6 %),
    /// 0.3 flags 5 and 8; on the 33 real specimens 0.2 flags no exact reading. Held-out /tmp/geom-c2
    /// (seed 200000) was not used.
    public static let nameDoubtConfidence = 0.2

    /// Name cells (class `.name`) read as a letter with confidence ≥ `unclearConfidence` whose best
    /// rival letter or filler got ≥ `nameDoubtConfidence` in `posteriors` (1-based line and column;
    /// `twin` holds the rival). Empty for readings without posteriors.
    static func doubtfulNameCells(_ r: MRZReading, classes: [[MRZCharacterClass]]) -> [DocumentReport.DoubtfulCell] {
        var out: [DocumentReport.DoubtfulCell] = []
        for (l, line) in r.lines.enumerated() where l < classes.count && l < r.posteriors.count && l < r.confidences.count {
            for (c, ch) in Array(line).enumerated() where c < classes[l].count && classes[l][c] == .name && ch.isLetter
                && c < r.posteriors[l].count && c < r.confidences[l].count && r.confidences[l][c] >= unclearConfidence {
                let rival = r.posteriors[l][c].filter { $0.key != ch && ($0.key.isLetter || $0.key == "<") }.max { ($0.value, $1.key) < ($1.value, $0.key) }
                guard let rival, rival.value >= nameDoubtConfidence else { continue }
                out.append(.init(line: l + 1, column: c + 1, read: String(ch), twin: String(rival.key),
                                 confidence: r.confidences[l][c], twinConfidence: rival.value))
            }
        }
        return out
    }

    /// Cells of the document-number / optional-data fields (class `.any`, not the document code or
    /// sex) whose check-digit twin got at least `twinDoubtConfidence` from the classifier.
    static func doubtfulTwins(_ r: MRZReading, classes: [[MRZCharacterClass]]) -> [DocumentReport.DoubtfulCell] {
        var out: [DocumentReport.DoubtfulCell] = []
        let lineCount = r.lines.count, length = r.lines.first?.count ?? 0
        for (l, line) in r.lines.enumerated() where l < classes.count && l < r.twinConfidences.count {
            let chars = Array(line)
            for c in chars.indices where c < classes[l].count && c < r.twinConfidences[l].count && classes[l][c] == .any {
                // document code (first two cells) and sex hold no check-digit-protected data
                if l == 0 && c < 2 { continue }
                if (lineCount == 2 && l == 1 && c == 20) || (lineCount == 3 && length == 30 && l == 1 && c == 7) { continue }
                guard let twin = MRZReader.checkDigitTwin[chars[c]], r.twinConfidences[l][c] >= twinDoubtConfidence else { continue }
                // a `<` inside a filler run is settled by the layout (`MRZReader`'s lone-K rule), not by the classifier
                if chars[c] == "<" && (c == 0 || chars[c - 1] == "<") && (c + 1 == chars.count || chars[c + 1] == "<") { continue }
                out.append(.init(line: l + 1, column: c + 1, read: String(chars[c]), twin: String(twin),
                                 confidence: r.confidences[l][c], twinConfidence: r.twinConfidences[l][c]))
            }
        }
        return out
    }

    /// Whether a parser warning "… at line L column C cannot be told from …" concerns a cell the
    /// classifier read without doubt: its check-digit twin got < `twinDoubtConfidence` and the parser
    /// did not change the cell. False for other warnings and when the reading has no twin posteriors.
    static func twinSettled(_ w: String, _ r: MRZReading, corrected: Set<Int>) -> Bool {
        guard w.contains("cannot be told from") else { return false }
        let words = w.split(separator: " ")
        guard let i = words.firstIndex(of: "line"), i + 3 < words.count, words[i + 2] == "column",
              let line = Int(words[i + 1]), let column = Int(words[i + 3]), line >= 1, column >= 1 else { return false }
        let l = line - 1, c = column - 1
        guard l < r.twinConfidences.count, c < r.twinConfidences[l].count, !corrected.contains(l * 1000 + c) else { return false }
        return r.twinConfidences[l][c] < twinDoubtConfidence
    }

    /// The parts of an MRZ parser warning "FIELD: 'X' at line L column C … 'Y' …": the field (spaces
    /// for underscores), the first and second quoted characters ("?" when missing) and the 1-based
    /// position when given.
    static func warningParts(_ w: String) -> (field: String, first: String, second: String, line: Int?, column: Int?) {
        let field = w.prefix { $0 != ":" }.replacingOccurrences(of: "_", with: " ")
        let quoted = w.split(separator: "'", omittingEmptySubsequences: false)
        let first = quoted.count > 1 ? String(quoted[1]) : "?", second = quoted.count > 3 ? String(quoted[3]) : "?"
        let words = w.split(separator: " ")
        var line: Int?, column: Int?
        if let i = words.firstIndex(of: "line"), i + 3 < words.count, words[i + 2] == "column" {
            line = Int(words[i + 1])
            column = Int(words[i + 3])
        }
        return (field, first, second, line, column)
    }

    /// The MRZ parser's "FIELD: 'X' at line L column C cannot be told from 'Y' by the check digit"
    /// warning as a typed finding; nil for other warnings.
    static func twinAmbiguity(_ w: String) -> DocumentFinding? {
        guard w.contains("cannot be told from") else { return nil }
        let p = warningParts(w)
        return .checkDigitTwin(field: p.field, read: p.first, other: p.second, line: p.line, column: p.column)
    }

    /// The MRZ parser's "FIELD: 'X' at line L column C was corrected to 'Y' by the look-alike table
    /// alone, …" warning (`MRZParser.unconfirmedPrefix`) as a typed finding; nil for other warnings.
    static func unconfirmedCorrection(_ w: String) -> DocumentFinding? {
        guard w.contains(" \(MRZParser.unconfirmedPrefix) ") else { return nil }
        let p = warningParts(w)
        return .mrzCorrectionUnconfirmed(field: p.field, read: p.first, corrected: p.second, line: p.line, column: p.column)
    }

    /// nil when unknown; false when in the future or > 130 years before `reference`.
    static func plausibleBirthDate(_ iso: String?, reference: Date) -> Bool? {
        guard let iso, iso.count >= 4, let year = Int(iso.prefix(4)) else { return nil }
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        let now = cal.dateComponents([.year, .month, .day], from: reference)
        let today = String(format: "%04d-%02d-%02d", now.year ?? 2000, now.month ?? 1, now.day ?? 1)
        return iso <= today && (now.year ?? 2000) - year <= 130
    }
}

/// Image-quality figures of the MRZ band.
struct MRZQuality {
    /// Glare: pixels ≥ 250 grey and ≥ 20 levels brighter than the paper (75th percentile of the band).
    /// Minimum sharpness (90th percentile of |∂I/∂x| at 12 px per cap height, over the ink–paper contrast).
    static let sharpnessThreshold = 0.22
    var sharpness: Double
    var saturatedFraction: Double
    var sharp: Bool { sharpness >= Self.sharpnessThreshold }
    var glare: Bool { saturatedFraction > 0.03 }
}

func mrzQuality(_ image: GreyImage, _ r: MRZReading) -> MRZQuality {
    var grads: [Double] = []
    var saturated = 0, total = 0
    let count = r.lines.first?.count ?? 0
    for g in r.geometry {
        let (dark, light) = OCRBClassifier.inkLevels(image, g, count: count)
        let contrast = max(light - dark, 1)
        // paper level: median of the band's brighter half; glare = saturated and well above it
        var band: [Double] = []
        for i in stride(from: 0, to: count, by: 2) {
            for bb in [-0.9, -0.3, 0.3, 0.9] {
                let (cx, cy) = g.centre(Double(i) + 0.5)
                band.append(image.sample(cx - bb * g.capHeight * g.dirY, cy + bb * g.capHeight * g.dirX))
            }
        }
        band.sort()
        let paper = band.isEmpty ? 255 : band[band.count * 3 / 4]
        let glareLevel = max(250, paper + 20)
        let step = g.capHeight / 12
        var b = -0.7 * g.capHeight
        while b <= 0.7 * g.capHeight {
            var prev: Double?
            var t = -0.5
            while t <= Double(count) - 0.5 {
                let (cx, cy) = g.centre(t)
                let v = image.sample(cx - b * g.dirY, cy + b * g.dirX)
                if v >= glareLevel { saturated += 1 }
                total += 1
                if let p = prev { grads.append(abs(v - p) / contrast) }
                prev = v
                t += step / g.pitch
            }
            b += step * 2
        }
    }
    grads.sort()
    let sharpness = grads.isEmpty ? 0 : grads[grads.count * 9 / 10]
    return MRZQuality(sharpness: sharpness, saturatedFraction: total > 0 ? Double(saturated) / Double(total) : 0)
}

extension MRZReading {
    /// Per-cell candidates with posteriors in the shape `MRZParser.parse(_:posteriors:)` takes: the
    /// read character with `confidences[l][c]`, then `alternatives[l][c]` with their posteriors
    /// from `posteriors[l][c]` (0 for a look-alike the classifier gave nothing). Issuing-state and
    /// nationality cells (no check digit; the parser chooses among ICAO codes by posterior) list every
    /// symbol with posterior ≥ `codeCandidateFloor` instead, most probable first, at most 15.
    public var parserCandidates: [[[MRZCandidate]]] {
        let classes = MRZCharacterClass.layout(lineLength: lines.first?.count ?? 0, lineCount: lines.count)
        return lines.enumerated().map { l, line in
            Array(line).enumerated().map { c, ch in
                var out = [MRZCandidate(ch, l < confidences.count && c < confidences[l].count ? confidences[l][c] : 0)]
                let post = l < posteriors.count && c < posteriors[l].count ? posteriors[l][c] : [:]
                if l < classes.count, c < classes[l].count, classes[l][c] == .code, !post.isEmpty {
                    let ranked = post.filter { $0.key != ch && $0.value >= Self.codeCandidateFloor }.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
                    return out + ranked.prefix(15).map { MRZCandidate($0.key, $0.value) }
                }
                if l < alternatives.count, c < alternatives[l].count {
                    for a in alternatives[l][c] where a != ch { out.append(MRZCandidate(a, post[a] ?? 0)) }
                }
                return out
            }
        }
    }

    /// Least posterior of a code-cell candidate handed to the parser: below it the classifier's tail
    /// carries no usable evidence (the parser spreads the unlisted rest evenly).
    public static let codeCandidateFloor = 1e-4

    /// Least posterior, relative to the classifier's top symbol, of a character the position's class
    /// chose over it (`MRZCharacterClass.choose`: a digit for a letter in a date or check digit, a
    /// letter for a digit in a name) for the choice to stand in a reading that finds no valid
    /// parse. Measured on the final readings of the c1000 corpus (35 class-forced cells, `O`→`0` in
    /// dates, `0`→`O` in codes and names, `T`→`1`, every one printed as forced): the least had 1.4 · 10⁻³
    /// of the top's posterior; on the real specimens id_fail's printed `A` in the expiry check digit
    /// gives the forced `4` 1.3 · 10⁻¹². 10⁻⁸ lies five orders of magnitude below the first and four
    /// above the second.
    public static let forcedChoiceFloor = 1e-8

    /// The reading with every cell whose class-forced character had less than `forcedChoiceFloor` of
    /// the classifier's top symbol's posterior set back to that symbol (its confidence the top's
    /// posterior, the forced character first among its alternatives); nil when there is none or the
    /// reading has no posteriors.
    public var asPrinted: MRZReading? {
        guard !posteriors.isEmpty else { return nil }
        let classes = MRZCharacterClass.layout(lineLength: lines.first?.count ?? 0, lineCount: lines.count)
        // Whether the class rules the symbol out (and so forced another): other position rules (name
        // padding, a lone K between fillers) are not undone.
        func forbids(_ cls: MRZCharacterClass, _ ch: Character) -> Bool {
            switch cls {
            case .numeric: return ch.isLetter
            case .name: return ch.isNumber
            case .code: return ch == "0"
            case let .documentCode(allowed): return !allowed.contains(ch)
            case .any: return false
            }
        }
        var out = self, changed = false
        for l in lines.indices where l < posteriors.count && l < classes.count {
            var chars = Array(lines[l])
            for c in chars.indices where c < posteriors[l].count && c < classes[l].count {
                guard let top = posteriors[l][c].max(by: { ($0.value, $1.key) < ($1.value, $0.key) }), top.key != chars[c],
                      forbids(classes[l][c], top.key) else { continue }
                let forced = posteriors[l][c][chars[c]] ?? 0
                guard forced < Self.forcedChoiceFloor * top.value else { continue }
                if l < out.alternatives.count, c < out.alternatives[l].count {
                    out.alternatives[l][c] = [chars[c]] + out.alternatives[l][c].filter { $0 != chars[c] && $0 != top.key }
                }
                if l < out.confidences.count, c < out.confidences[l].count { out.confidences[l][c] = top.value }
                chars[c] = top.key
                changed = true
            }
            out.lines[l] = String(chars)
        }
        return changed ? out : nil
    }

    /// The reading handed to the parser and its parse. The reading as recognised, unless it parses
    /// invalid and some cell's class forced a character the classifier gave (next to) nothing
    /// (`asPrinted`): then no valid reading exists either way, and the report shows what is printed
    /// (id_fail.png, a card printed without its expiry check digit: `…111231AUT…`, not `…1112314UT…`).
    public func handOver(to parser: MRZParser = MRZParser()) -> (reading: MRZReading, result: MRZResult) {
        let result = parsedAsRead(by: parser)
        guard !result.valid, let printed = asPrinted else { return (self, result) }
        return (printed, printed.parsedAsRead(by: parser))
    }

    /// The reading parsed and check-digit-corrected as `DocumentReader.read` does it: `handOver(to:)`'s
    /// result.
    public func parsed(by parser: MRZParser = MRZParser()) -> MRZResult { handOver(to: parser).result }

    /// This reading parsed and check-digit-corrected: from the posteriors (maximum a posteriori,
    /// `MRZParser.parse(_:posteriors:)`) when the reading has them, else from the ranked alternatives.
    func parsedAsRead(by parser: MRZParser) -> MRZResult {
        return posteriors.isEmpty ? parser.parse(lines, alternatives: alternatives) : parser.parse(lines, posteriors: parserCandidates)
    }
}
