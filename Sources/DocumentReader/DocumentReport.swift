import FaceKit
import Imaging
import Foundation
import MRZ

/// The result of one check in a document report.
public enum CheckResult: String, Codable, Sendable {
    case passed = "PASSED"
    case failed = "FAILED"
    case notPerformed = "NOT_PERFORMED"
}

/// One entry of `checks_performed`: a stable name, a category (`MRZ`, `Data`, `Image`, `Chip`),
/// the result, and a sentence saying why.
public struct DocumentCheck: Codable, Sendable, Equatable {
    public var name: String
    public var category: String
    public var result: CheckResult
    public var detail: String
}

/// The document verdict (seed 002 `overall_status`).
///
/// Rule: **INVALID** when no MRZ is found or read (including any name or country-code character
/// below `DocumentReader.unclearConfidence`, since those have no check digit), when any MRZ check digit (including the
/// composite) fails or the MRZ is otherwise malformed, when the document has expired, or when the
/// birth date is not plausible, or when a document-number / optional-data character is one of a
/// check-digit twin pair (K/<, L/1, G/6: equal value modulo 10, ICAO 9303-3 §4.9) and the classifier
/// gave its twin ≥ `DocumentReader.twinDoubtConfidence` (it counts as unclear). **WARNING** when
/// the MRZ is valid but an image-quality check failed (sharpness, glare, resolution), no portrait
/// was found, a country code is unknown, the MRZ parser reports a character the check digit cannot
/// tell from its twin *and* the classifier gave that twin weight (≥ `DocumentReader.twinDoubtConfidence`
/// — a twin read with certainty, like the G of `GC3664952` or ICAO's `L898902C3`, is not in doubt; the
/// warning reaches `warnings` in plain words), the document number mixes the letter O and the
/// digit 0, or a name letter's rival got ≥ `DocumentReader.nameDoubtConfidence` (names have no
/// check digit). Any entry in `warnings` rules out VALID. The MRZ is parsed with the classifier's per-cell
/// posteriors (`MRZParser.parse(_:posteriors:)`, maximum-a-posteriori correction).
/// **VALID** otherwise. (Characters corrected with check digits are listed in `mrz.corrections`.)
public enum DocumentStatus: String, Codable, Sendable {
    case valid = "VALID"
    case invalid = "INVALID"
    case warning = "WARNING"
}

/// The internal document report, from which the seed 002 and seed 003 shapes are produced.
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

    /// One MRZ cell (1-based line and column) read as `read` whose check-digit twin `twin` also got
    /// weight from the OCR-B classifier (posteriors 0…1).
    public struct DoubtfulCell: Codable, Sendable, Equatable {
        public var line: Int
        public var column: Int
        public var read: String
        public var twin: String
        public var confidence: Double
        public var twinConfidence: Double
        enum CodingKeys: String, CodingKey { case line, column, read, twin, confidence, twinConfidence = "twin_confidence" }
    }

    public var mrz: MRZSection
    /// The document's data from the MRZ (empty when none was read).
    public var fields: MRZFields
    /// The portrait cropped from the page with a margin, JPEG; nil when no face was found.
    public var portraitJPEG: Data?
    /// The page images, upright, scaled down to `DocumentReaderOptions.pageMaxDimension`, JPEG.
    public var pagesJPEG: [Data]
    public var checks: [DocumentCheck]
    public var errors: [String]
    public var warnings: [String]
    public var overallStatus: DocumentStatus
    /// Pages that could not be decoded (0-based index and why); their sentences are also in `errors`.
    public var pageFailures: [PageFailure] = []

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
    public init() {}
}

extension DocumentReader {
    /// Reads one or two page images (JPEG/PNG bytes, any orientation) into a document report.
    /// Never throws for image content: undecodable pages become errors in the report
    /// (`overall_status` INVALID) so the caller always has a verdict to show.
    public static func read(pages: [Data], options: DocumentReaderOptions = .init()) -> DocumentReport {
        var errors: [String] = [], warnings: [String] = []
        var decoded: [(Int, DocumentImage)] = []
        var failures: [DocumentReport.PageFailure] = []
        for (i, data) in pages.enumerated() {
            do { decoded.append((i, try DocumentImage.decode(data))) } catch let ImageError.tooManyPixels(w, h, limit) {
                failures.append(.tooManyPixels(page: i, width: w, height: h, limit: limit))
                errors.append("Page \(i + 1) is too large: \(w)×\(h) pixels, the limit is \(limit) pixels (\(limit / 1_000_000) megapixels).")
            } catch {
                failures.append(.undecodable(page: i, reason: "\(error)"))
                errors.append("Page \(i + 1) could not be read as an image: \(error).")
            }
        }
        var report = read(images: decoded.map(\.1), pageIndices: decoded.map(\.0), options: options, initialErrors: errors, initialWarnings: warnings)
        report.pageFailures = failures
        return report
    }

    /// Reads decoded page images into a document report.
    public static func read(images: [DocumentImage], pageIndices: [Int]? = nil, options: DocumentReaderOptions = .init(),
                            initialErrors: [String] = [], initialWarnings: [String] = []) -> DocumentReport {
        var errors = initialErrors, warnings = initialWarnings
        var checks: [DocumentCheck] = []
        let indices = pageIndices ?? Array(images.indices)
        // 1. MRZ: read every page, keep the most confident reading.
        var best: (reading: MRZReading, page: Int, image: DocumentImage)?
        for (k, img) in images.enumerated() {
            if let r = MRZReader.read(img.grey), best == nil || r.meanConfidence > best!.reading.meanConfidence {
                best = (r, indices[k], img)
            }
        }
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
                                                capHeightPixels: best?.reading.geometry.first?.capHeight ?? 0, result: nil)
        var fields = MRZFields()
        func check(_ name: String, _ category: String, _ result: CheckResult, _ detail: String) {
            checks.append(DocumentCheck(name: name, category: category, result: result, detail: detail))
        }
        if let best {
            check("MRZ present", "MRZ", .passed, "A machine-readable zone was found on page \(best.page + 1).")
            let result = handed ?? best.reading.parsedAsRead(by: parser)
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
            check("MRZ readable", "MRZ", readable ? .passed : .failed,
                  !known ? "The text found does not form a known MRZ format."
                  : (unclear > 0 ? "\(unclear) character(s) are unclear and not confirmed by a check digit."
                                 : "The MRZ reads as \(result.format.rawValue)."))
            if known && unclear > 0 {
                errors.append("\(unclear) character(s) of the MRZ could not be read with confidence. Retake the photo, flat, in focus and without glare.")
            }
            for cd in result.checkDigits {
                let label = cd.name.replacingOccurrences(of: "_", with: " ")
                check(cd.name == "composite" ? "MRZ composite check digit" : "MRZ check digit: \(label)", "MRZ",
                      cd.valid ? .passed : .failed,
                      cd.valid ? "The \(label) check digit holds." : "The \(label) check digit does not match the printed data.")
            }
            for e in result.errors { errors.append(e.hasSuffix("not allowed in sex") ? "The MRZ did not check out: \(plain(formError: e))." : plain(mrzError: e)) }
            // Check-digit-invisible ambiguity (the parser's warnings) and O/0 mixing: never VALID. A
            // twin the classifier gave no real weight (< twinDoubtConfidence) is not in doubt.
            for w in result.warnings where !twinSettled(w, best.reading, corrected: corrected) {
                if let p = plain(mrzAmbiguity: w) { warnings.append(p) }
            }
            // Names have no check digit: a letter whose rival the classifier gave real weight is unconfirmed.
            let names = Self.doubtfulNameCells(best.reading, classes: classes)
            if !names.isEmpty {
                let cells = names.prefix(3).map { "'\($0.read)' (MRZ line \($0.line), position \($0.column)) could also be '\($0.twin)'" }
                warnings.append("The name is not certain: " + cells.joined(separator: "; ") + (names.count > 3 ? "; and \(names.count - 3) more" : "")
                                + ". No check digit covers names; compare the name with the printed page.")
            }
            let number = fields.documentNumber
            if number.contains("O") && number.contains("0") {
                warnings.append("The document number mixes the letter O and the digit 0, which look alike in OCR-B and can swap without the check digit noticing; compare it with the printed page.")
            }
            // Well-formed fields (ICAO 9303-3 §4: character sets, dates, sex M/F/<): every parser error
            // that no check-digit check shows gets a failed check of its own, so INVALID always has one.
            let formErrors = result.errors.filter { !$0.contains("check digit") }
            let cdFailed = result.checkDigits.contains { !$0.valid }
            let unshown = !result.valid && formErrors.isEmpty && !cdFailed && known ? result.errors : formErrors
            check("MRZ fields well-formed", "MRZ", unshown.isEmpty ? .passed : .failed,
                  unshown.isEmpty ? "Every MRZ field holds characters and values its ICAO 9303-3 definition allows."
                                  : "Not allowed by ICAO 9303-3: " + unshown.map(plain(formError:)).joined(separator: "; ") + ".")
            // Mandatory data elements (ICAO 9303-3 §4.2, 9303-4/-5/-6 field tables): the document number
            // and the primary identifier may not be all fillers. (The expiry date has its own check below.)
            var missing: [String] = []
            if fields.documentNumber.isEmpty { missing.append("document number") }
            if fields.surname.isEmpty { missing.append("primary identifier (surname)") }
            if known {
                check("Required fields present", "MRZ", missing.isEmpty ? .passed : .failed,
                      missing.isEmpty ? "The document number and the primary identifier are given."
                                      : "The MRZ has no \(missing.joined(separator: " and ")): ICAO 9303 makes it mandatory.")
                if !missing.isEmpty { errors.append("The MRZ has no \(missing.joined(separator: " and ")), which every travel document must carry.") }
            }
            // data checks
            let expiryRaw = fields.raw["expiry_date"] ?? ""
            let birthRaw = fields.raw["birth_date"] ?? ""
            if let expired = fields.expired {
                check("Document not expired", "Data", expired ? .failed : .passed,
                      expired ? "The document expired on \(fields.expiryDate ?? "?")." : "The document is valid until \(fields.expiryDate ?? "?").")
                if expired { errors.append("The document has expired (\(fields.expiryDate ?? "?")).") }
            } else if !expiryRaw.isEmpty && expiryRaw.allSatisfy({ $0 == "<" }) || expiryRaw.prefix(2) == "<<" {
                // A document without an expiry date cannot be shown to be in force.
                check("Document not expired", "Data", .failed, "The MRZ has no expiry date.")
                errors.append("The MRZ has no expiry date, so the document cannot be shown to be in force.")
            } else if known && !expiryRaw.isEmpty {
                check("Document not expired", "Data", .failed, "The expiry date in the MRZ is not a valid date.")
                errors.append("The expiry date in the MRZ is not a valid date.")
            } else {
                check("Document not expired", "Data", .notPerformed, "The expiry date could not be read.")
            }
            // An unknown date of birth is allowed (ICAO 9303-3 §4.6: unknown parts are fillers): a warning.
            let birthUnknown = birthRaw.contains("<") && result.errors.allSatisfy { !$0.hasPrefix("birth_date") }
            let birthOK = birthUnknown ? nil : plausibleBirthDate(fields.birthDate, reference: options.referenceDate)
            if birthUnknown {
                if fields.birthDate == nil {
                    check("Birth date plausible", "Data", .notPerformed, "The MRZ gives no date of birth (allowed by ICAO 9303-3 when it is unknown).")
                    warnings.append("The date of birth is not given.")
                } else {
                    check("Birth date plausible", "Data", .notPerformed, "The MRZ gives the date of birth only in part (allowed by ICAO 9303-3 when it is not fully known).")
                    warnings.append("The date of birth is only partly given.")
                }
            } else if birthOK == nil && known && !birthRaw.isEmpty {
                check("Birth date plausible", "Data", .failed, "The birth date in the MRZ is not a valid date.")
                errors.append("The date of birth in the MRZ is not a valid date.")
            } else {
                check("Birth date plausible", "Data", birthOK == nil ? .notPerformed : (birthOK! ? .passed : .failed),
                      birthOK == nil ? "The birth date could not be read." : (birthOK! ? "The birth date is a real date in the past 130 years." : "The birth date is in the future or more than 130 years ago."))
            }
            if birthOK == false { errors.append("The date of birth (\(fields.birthDate ?? "?")) is not plausible.") }
            if readable {
                check("Issuing state code valid", "Data", fields.issuingStateKnown ? .passed : .failed,
                      fields.issuingStateKnown ? "\(fields.issuingState) is a known ICAO/ISO 3166 code." : "\(fields.issuingState) is not a known state code.")
                check("Nationality code valid", "Data", fields.nationalityKnown ? .passed : .failed,
                      fields.nationalityKnown ? "\(fields.nationality) is a known ICAO/ISO 3166 code." : "\(fields.nationality) is not a known nationality code.")
                if !fields.issuingStateKnown { warnings.append("The issuing state code \(fields.issuingState) is not a known country code.") }
                if !fields.nationalityKnown && fields.nationality != fields.issuingState { warnings.append("The nationality code \(fields.nationality) is not a known country code.") }
            }
        } else {
            check("MRZ present", "MRZ", .failed, "No machine-readable zone was found.")
            check("MRZ readable", "MRZ", .notPerformed, "There is no MRZ to read.")
            if !images.isEmpty {
                errors.append("No machine-readable zone (the two or three lines of letters, digits and <<< at the bottom of the page) was found. Photograph the whole page, flat and in focus.")
            }
        }
        // 2. Image quality on the MRZ.
        if let best {
            let q = mrzQuality(best.image.grey, best.reading)
            check("Image sharp enough", "Image", q.sharp ? .passed : .failed,
                  String(format: "MRZ edge sharpness %.2f (needs ≥ %.2f).", q.sharpness, MRZQuality.sharpnessThreshold))
            check("No glare on MRZ", "Image", q.glare ? .failed : .passed,
                  String(format: "%.1f %% of the MRZ area is saturated.", q.saturatedFraction * 100))
            let resOK = section.capHeightPixels >= options.minimumCapHeight
            check("Resolution enough", "Image", resOK ? .passed : .failed,
                  String(format: "MRZ characters are %.1f px tall (needs ≥ %.0f).", section.capHeightPixels, options.minimumCapHeight))
            if !q.sharp { warnings.append("The photo is blurred around the MRZ; hold the camera still and let it focus.") }
            if q.glare { warnings.append("There is glare on the MRZ; tilt the document away from the light.") }
            if !resOK { warnings.append("The MRZ is small in the photo; move the camera closer or use a higher resolution.") }
        } else {
            for name in ["Image sharp enough", "No glare on MRZ", "Resolution enough"] {
                check(name, "Image", .notPerformed, "Measured on the MRZ, which was not found.")
            }
        }
        // 3. Portrait and page images (upright by the MRZ direction).
        let quarter = best.map { Int((($0.reading.angleDegrees / 90).rounded())) % 4 } ?? 0
        var pagesJPEG: [Data] = []
        var portrait: Data?
        var portraitChecked = false
        var engineError: (any Error)?
        var unpreparedPages = 0
        var faceOnlyOutside = false
        for (k, img) in images.enumerated() {
            guard var page = try? Imaging.Image(rgb: img.rgb.pixels, width: img.rgb.width, height: img.rgb.height) else { unpreparedPages += 1; continue }
            if indices[k] == best?.page, quarter != 0 { page = page.rotated90(times: -quarter) }
            if let small = try? page.resized(maxDimension: options.pageMaxDimension), let jpeg = try? small.jpegData(quality: options.pageJPEGQuality) {
                pagesJPEG.append(jpeg)
            }
            var engine: FaceEngine?
            if options.detectPortrait, portrait == nil {
                do { engine = try FaceEngine.shared() } catch { engineError = error }
            }
            if let engine {
                portraitChecked = true
                var faces = (try? engine.detect(in: page)) ?? []
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
        }
        if !options.detectPortrait {
            check("Portrait found", "Image", .notPerformed, "Portrait detection was switched off.")
        } else if !portraitChecked {
            // Say the true reason: no usable page, or the face detector itself could not start.
            if images.isEmpty || unpreparedPages == images.count {
                check("Portrait found", "Image", .notPerformed, images.isEmpty ? "No page image could be decoded, so there was no page to look at."
                                                                               : "No page image could be prepared for face detection.")
            } else if let engineError {
                let models: Bool
                if case FaceError.modelUnavailable = engineError { models = true } else { models = false }
                check("Portrait found", "Image", .notPerformed, "The face detector is not available: \(engineError).")
                warnings.append(models ? "The portrait could not be checked: the face models are not installed."
                                       : "The portrait could not be checked: the face detector failed (\(engineError)).")
            } else {
                check("Portrait found", "Image", .notPerformed, "No page could be searched for a face.")
            }
        } else if portrait == nil && faceOnlyOutside {
            check("Portrait found", "Image", .failed, "A face was found outside the document; the portrait must be the document's own photo.")
            warnings.append("The only face in the picture is outside the document; photograph the document's own photo page alone, uncovered.")
        } else {
            check("Portrait found", "Image", portrait != nil ? .passed : .failed,
                  portrait != nil ? "A face was found on the document." : "No face was found on the document pages.")
            if portrait == nil && best != nil { warnings.append("No portrait was found on the document; make sure the photo page is in the picture.") }
        }
        check("Chip verification", "Chip", .notPerformed, "Reading the chip (ICAO 9303-11) is not supported yet.")

        // 4. Verdict.
        let failed = Set(checks.filter { $0.result == .failed }.map(\.name))
        let mrzValid = section.result?.valid ?? false
        let invalid = best == nil || !mrzValid || failed.contains("Document not expired") || failed.contains("Birth date plausible")
            || failed.contains { $0.hasPrefix("MRZ") } || failed.contains("Required fields present")
        let status: DocumentStatus = invalid ? .invalid : (warnings.isEmpty && failed.isEmpty ? .valid : .warning)
        return DocumentReport(mrz: section, fields: fields, portraitJPEG: portrait, pagesJPEG: pagesJPEG, checks: checks,
                              errors: errors, warnings: warnings, overallStatus: status)
    }

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

    /// Plain words for the MRZ parser's "… cannot be told from … by the check digit" warnings; nil for others.
    static func plain(mrzAmbiguity w: String) -> String? {
        guard w.contains("cannot be told from") else { return nil }
        let field = w.prefix { $0 != ":" }.replacingOccurrences(of: "_", with: " ")
        let quoted = w.split(separator: "'", omittingEmptySubsequences: false)
        let read = quoted.count > 1 ? quoted[1] : "?", other = quoted.count > 3 ? quoted[3] : "?"
        // "… at line 2 column 9 cannot …" → "line 2, position 9"
        let words = w.split(separator: " ")
        var position = ""
        if let i = words.firstIndex(of: "line"), i + 3 < words.count, words[i + 2] == "column" {
            position = " (MRZ line \(words[i + 1]), position \(words[i + 3]))"
        }
        return "The \(field) holds '\(read)'\(position), which could also be '\(other)': the check digit cannot tell them apart. Compare it with the printed page."
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

    /// The parser's character-set error for the sex cell in words (ICAO 9303-3 §4.7: F, M or `<`);
    /// other errors unchanged.
    static func plain(formError e: String) -> String {
        guard e.hasSuffix("not allowed in sex"), let colon = e.range(of: ": not allowed") else { return e }
        return "the sex field holds \(e[..<colon.lowerBound]) but ICAO 9303-3 allows only F, M or <"
    }

    static func plain(mrzError e: String) -> String {
        "The MRZ did not check out: \(e)."
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
