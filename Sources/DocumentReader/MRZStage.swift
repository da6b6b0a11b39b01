import Foundation
import IDVEvidence
import Imaging
import MRZ

// Stage 1 of `DocumentReader.read`: the MRZ. Every page's MRZ is located and recognised, the most
// confident reading kept (a small MRZ on a page decoded below its source's resolution is read
// again from the source), handed to the parser, and checked: readable (names, codes and sex have no
// check digit, so a doubtful cell there cannot be confirmed), the check digits, well-formed and
// required fields, the dates, the country codes.

extension DocumentReading {
    /// Stage 1a: reads every page's MRZ and keeps the most confident reading (`best`). A small MRZ on
    /// a page decoded below its source's resolution is read again from the source, just its band, at
    /// the resolution the recogniser is best at; the band's reading is kept when the parser rates it
    /// higher (`MRZReader.candidateScore`). Quality is measured where it was read (`measured`).
    mutating func readMRZ() {
        for (k, img) in images.enumerated() {
            guard let r = MRZReader.read(img.grey) else { continue }
            everyReading.append((r, indices[k]))
            if best == nil || r.meanConfidence > best!.reading.meanConfidence {
                best = (r, indices[k], img)
            }
        }
        measured = best.map { ($0.image.grey, $0.reading) }
        if let b = best, let refined = DocumentReader.rereadFromSource(b.reading, b.image, options: options) {
            best = (refined.page, b.page, b.image)
            measured = (refined.band.grey, refined.reading)
        }
        lap(\.mrz)
    }

    /// Stage 1b: the MRZ handed to the parser (which may report the reading as printed,
    /// `MRZReading.handOver`) and its checks, in the report's order: present, another document's
    /// MRZ on another page, readable, the check digits, the parser's errors and ambiguity warnings,
    /// the document number's O/0 mixing, well-formed and required fields, expiry, birth date, and —
    /// when every character was read clearly — the country codes. Without an MRZ: why not (glare).
    mutating func checkMRZ() {
        guard let b = best else { return checkMissingMRZ() }
        let parser = MRZParser(options: .init(referenceDate: options.referenceDate))
        let (reading, result) = b.reading.handOver(to: parser)
        best = (reading, b.page, b.image)
        section = DocumentReport.MRZSection(found: true, pageIndex: b.page, linesRead: reading.lines, meanConfidence: reading.meanConfidence,
                                            lowConfidenceCells: reading.confidences.flatMap { $0 }.filter { $0 < 0.5 }.count,
                                            angleDegrees: reading.angleDegrees,
                                            capHeightPixels: measured?.reading.geometry.first?.capHeight ?? 0, result: nil)
        check(.mrzPresent, .passed, .page(b.page))
        // Another page's MRZ, as read, of another document: both must check out in full, so that
        // a misread cannot pass for a second document.
        if result.checkDigits.allSatisfy(\.valid), let other = DocumentReader.otherDocumentPage(result, besides: b.page, everyReading, parser: parser) {
            findings.append(.pagesOfDifferentDocuments(pages: [b.page, other].sorted()))
        }
        section.result = result
        fields = result.fields
        let classes = MRZCharacterClass.layout(lineLength: reading.lines.first?.count ?? 0, lineCount: reading.lines.count)
        let corrected = Set(result.corrections.map { ($0.line - 1) * 1000 + ($0.column - 1) })   // 1-based in MRZCorrection
        let readable = checkReadable(result, reading, classes: classes, corrected: corrected)
        checkDigitsAndAmbiguities(result, reading, classes: classes, corrected: corrected)
        checkFieldForms(result)
        checkDates(result)
        if readable { checkCountryCodes() }
    }

    /// No MRZ on any page. Glare over the MRZ hides it from the localiser: say glare, not "no MRZ",
    /// when a band of a page is saturated (`DocumentReader.glareBand`).
    private mutating func checkMissingMRZ() {
        let glare = images.map { DocumentReader.glareBand($0.grey) }.max() ?? 0
        if glare >= DocumentReader.glareBandFraction {
            check(.mrzPresent, .failed, .glare(saturatedFraction: glare))
            findings.append(.glareHidesMRZ(saturatedFraction: glare))
        } else {
            check(.mrzPresent, .failed)
            if !images.isEmpty { findings.append(.noMRZ) }
        }
        check(.mrzReadable, .notPerformed, .noMRZ)
    }

    /// The "MRZ readable" check: a known format and no unclear character. Names, codes and sex have
    /// no check digit: a doubtful cell there cannot be confirmed. Elsewhere a check digit confirms a
    /// doubtful cell, but errors can cancel (0→O twice at weights 7 and 3): three or more doubtful
    /// cells on a line count too; so does a confident-looking check-digit twin whose twin the
    /// classifier gave real weight (`section.doubtfulTwins`). `corrected`: cells the parser changed,
    /// as (line − 1) · 1000 + (column − 1). Returns whether the MRZ is readable.
    private mutating func checkReadable(_ result: MRZResult, _ reading: MRZReading, classes: [[MRZCharacterClass]], corrected: Set<Int>) -> Bool {
        var unclear = 0
        let unchecked = Set(DocumentReader.uncheckedCells(lineCount: reading.lines.count, length: reading.lines.first?.count ?? 0)
            .filter { $0.field == .documentCode || $0.field == .sex }.map { $0.line * 1000 + $0.column })
        for (l, row) in reading.confidences.enumerated() where l < classes.count {
            var guarded = 0
            for (c, p) in row.enumerated() where c < classes[l].count && p < DocumentReader.unclearConfidence && !corrected.contains(l * 1000 + c) {
                let ch = Array(reading.lines[l])[c]
                // check-digit twins (K/<, L/1, G/6) weigh the same modulo 10: no check digit tells them apart
                let twin = ch == "<" || ch == "K" || (classes[l][c] == .any && MRZReader.checkDigitTwin[ch] != nil)
                // names, codes, the document code and the sex have no check digit at all
                if classes[l][c] == .name || classes[l][c] == .code || twin || unchecked.contains(l * 1000 + c) { unclear += 1 } else { guarded += 1 }
            }
            if guarded >= 3 { unclear += guarded }
        }
        // A confident-looking twin is still doubtful when the classifier gave its twin real weight.
        section.doubtfulTwins = DocumentReader.doubtfulTwins(reading, classes: classes)
        unclear += section.doubtfulTwins.filter { $0.confidence >= DocumentReader.unclearConfidence && !corrected.contains(($0.line - 1) * 1000 + $0.column - 1) }.count
        let known = result.format != .unknown
        let readable = known && unclear == 0
        check(.mrzReadable, readable ? .passed : .failed,
              !known ? .unknownFormat : (unclear > 0 ? .unclearCharacters(unclear) : .format(result.format.rawValue)))
        if known && unclear > 0 { findings.append(.unclearCharacters(count: unclear)) }
        return readable
    }

    /// The check-digit checks (the MRZ module's layouts name exactly the five of
    /// `DocumentCheckID(checkDigit:)`), the parser's errors, the check-digit-invisible ambiguities
    /// (its warnings; a twin the classifier gave no real weight, < `twinDoubtConfidence`, is not in
    /// doubt), the doubtful name letters (`doubtfulNames`, reported after stage 4) and a document
    /// number mixing O and 0: never VALID.
    private mutating func checkDigitsAndAmbiguities(_ result: MRZResult, _ reading: MRZReading, classes: [[MRZCharacterClass]], corrected: Set<Int>) {
        for cd in result.checkDigits {
            if let id = DocumentCheckID(checkDigit: cd.name) { check(id, cd.valid ? .passed : .failed) }
        }
        for e in result.errors { findings.append(.mrzError(detail: e)) }
        for w in result.warnings where !DocumentReader.twinSettled(w, reading, corrected: corrected) {
            if let t = DocumentReader.twinAmbiguity(w) ?? DocumentReader.unconfirmedCorrection(w) { findings.append(t) }
        }
        // Names have no check digit: a letter whose rival the classifier gave real weight is unconfirmed.
        // (reported after the visual-zone cross-check, which may confirm them, at this place in the list)
        doubtfulNames = DocumentReader.doubtfulNameCells(reading, classes: classes)
        doubtfulNamesAt = findings.count
        let number = fields.documentNumber
        if number.contains("O") && number.contains("0") { findings.append(.documentNumberMixesOAndZero) }
        checkUncheckedFields(result, reading)
    }

    /// The document code, issuing state, nationality and sex (no check digit, ICAO 9303-3 §4.9): a
    /// document code the issuer is not known to use (`MRZ.DocumentCodes`), and a field whose cells
    /// give another reading the field allows real weight (`DocumentReader.uncheckedRival`). A reading
    /// the MRZ's structure rules out — an unknown code, a code the issuer does not use, a sex other
    /// than M, F or `<` — is no rival: the structure confirms the reading over it.
    private mutating func checkUncheckedFields(_ result: MRZResult, _ reading: MRZReading) {
        guard result.format != .unknown, result.format != .frenchNationalID, let line1 = result.lines.first, line1.count >= 2 else { return }
        let state = fields.issuingState
        let code = String(line1.prefix(2))
        if !DocumentCodes.isKnown(code, issuingState: state) { findings.append(.documentCodeNotKnown(code: code, issuingState: state)) }
        let cells = DocumentReader.uncheckedCells(lineCount: result.lines.count, length: line1.count)
        let lines = result.lines.map(Array.init)
        for field in UncheckedField.allCases {
            let at = cells.filter { $0.field == field }.map { (line: $0.line, column: $0.column) }
            guard !at.isEmpty, at.allSatisfy({ $0.line < lines.count && $0.column < lines[$0.line].count }) else { continue }
            let allows: (String) -> Bool
            switch field {
            case .documentCode: allows = { DocumentCodes.isKnown($0, issuingState: state) }
            case .issuingState, .nationality: allows = { c in CountryCodes.isKnown(String(c.reversed().drop { $0 == "<" }.reversed())) }
            case .sex: allows = { ["M", "F", "<"].contains($0) }
            }
            if let doubt = DocumentReader.uncheckedRival(at, lines: lines, posteriors: reading.posteriors, allows: allows) {
                findings.append(.uncheckedFieldInDoubt(field: field, read: doubt.read, rival: doubt.rival, cell: doubt.cell))
            }
        }
    }

    /// Well-formed fields (ICAO 9303-3 §4: character sets, dates, sex M/F/<): every parser error
    /// that no check-digit check shows gets a failed check of its own, so INVALID always has one.
    /// Then the mandatory data elements (ICAO 9303-3 §4.2, 9303-4/-5/-6 field tables): the document
    /// number and the primary identifier may not be all fillers (the expiry date has its own check).
    private mutating func checkFieldForms(_ result: MRZResult) {
        let known = result.format != .unknown
        let formErrors = result.errors.filter { !$0.contains("check digit") }
        let cdFailed = result.checkDigits.contains { !$0.valid }
        let unshown = !result.valid && formErrors.isEmpty && !cdFailed && known ? result.errors : formErrors
        check(.mrzFieldsWellFormed, unshown.isEmpty ? .passed : .failed, unshown.isEmpty ? .none : .formErrors(unshown))
        var missing: [RequiredMRZField] = []
        if fields.documentNumber.isEmpty { missing.append(.documentNumber) }
        if fields.surname.isEmpty { missing.append(.primaryIdentifier) }
        if known {
            check(.requiredFieldsPresent, missing.isEmpty ? .passed : .failed, .missingFields(missing))
            if !missing.isEmpty { findings.append(.missingRequiredFields(missing)) }
        }
    }

    /// The expiry date (in force at `options.referenceDate`; a document without one cannot be shown
    /// to be) and the birth date (plausible; an unknown one is allowed, ICAO 9303-3 §4.6: a warning).
    private mutating func checkDates(_ result: MRZResult) {
        let known = result.format != .unknown
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
        let birthOK = birthUnknown ? nil : DocumentReader.plausibleBirthDate(fields.birthDate, reference: options.referenceDate)
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
    }

    /// The issuing state and nationality among the known codes (only for a readable MRZ: an unclear
    /// code cell is reported as unclear, not as an unknown code).
    private mutating func checkCountryCodes() {
        check(.issuingStateCodeKnown, fields.issuingStateKnown ? .passed : .failed, .code(fields.issuingState))
        check(.nationalityCodeKnown, fields.nationalityKnown ? .passed : .failed, .code(fields.nationality))
        if !fields.issuingStateKnown { findings.append(.unknownIssuingState(fields.issuingState)) }
        if !fields.nationalityKnown && fields.nationality != fields.issuingState { findings.append(.unknownNationality(fields.nationality)) }
    }
}

extension DocumentReader {
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
    /// The cells (0-based line and column) of the fields besides the names that no check digit
    /// covers, for an MRZ of `lineCount` lines of `length` characters: the document code (columns
    /// 1–2 of line 1), the issuing state (3–5), and the nationality and sex (TD3, TD2 and MRV line 2
    /// columns 11–13 and 21, ICAO 9303-4 §4.2.2, -6, -7; TD1 line 2 columns 16–18 and 8, 9303-5).
    static func uncheckedCells(lineCount: Int, length: Int) -> [(field: UncheckedField, line: Int, column: Int)] {
        var out: [(field: UncheckedField, line: Int, column: Int)] = [(.documentCode, 0, 0), (.documentCode, 0, 1),
                                                                      (.issuingState, 0, 2), (.issuingState, 0, 3), (.issuingState, 0, 4)]
        switch (lineCount, length) {
        case (2, 44), (2, 36): out += [(.nationality, 1, 10), (.nationality, 1, 11), (.nationality, 1, 12), (.sex, 1, 20)]
        case (3, 30): out += [(.nationality, 1, 15), (.nationality, 1, 16), (.nationality, 1, 17), (.sex, 1, 7)]
        default: return []
        }
        return out
    }

    /// Least posterior of a character that, put in place of the one read in a cell of a field without a
    /// check digit (`uncheckedCells`), makes another reading the field allows, for that reading to be in
    /// doubt (`DocumentFinding.uncheckedFieldInDoubt`). Measured on the cells of these fields read
    /// right (MRZ only, before the structure filters rivals): in the c1000 corpus (seed 100000, 1000
    /// photos) a runner-up ≥ 0.05 stood in 2 of 1000 document-code second cells, 1 of 3000 nationality
    /// and 1 of 3000 issuing-state cells, no document-code first cell and no sex cell; in 300 more
    /// (seed 620000) in 2 of 900 nationality cells and nowhere else. No cell of these fields was read
    /// wrong in either, so the threshold is set low (names keep `nameDoubtConfidence`, 0.2, where a
    /// runner-up ≥ 0.05 stands in 24 of 34,500 cells).
    public static let uncheckedRivalConfidence = 0.05

    /// The strongest rival reading of the unchecked field at `cells` in `lines` (after correction): the
    /// field with one cell's character replaced by a character the classifier gave at least
    /// `uncheckedRivalConfidence` (`posteriors`, `MRZReading.posteriors`), when `allows` accepts it;
    /// nil when there is none. `read` is the field as read, `cell` the rival's cell (1-based).
    static func uncheckedRival(_ cells: [(line: Int, column: Int)], lines: [[Character]], posteriors: [[[Character: Double]]],
                               allows: (String) -> Bool) -> (read: String, rival: String, cell: DocumentReport.DoubtfulCell)? {
        let read = cells.map { lines[$0.line][$0.column] }
        var best: (read: String, rival: String, cell: DocumentReport.DoubtfulCell)?
        for (i, at) in cells.enumerated() where at.line < posteriors.count && at.column < posteriors[at.line].count {
            let cell = posteriors[at.line][at.column]
            for (ch, p) in cell.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) where ch != read[i] && p >= uncheckedRivalConfidence {
                var other = read
                other[i] = ch
                guard allows(String(other)), p > (best?.cell.twinConfidence ?? 0) else { continue }
                best = (String(read), String(other), .init(line: at.line + 1, column: at.column + 1, read: String(read[i]), twin: String(ch),
                                                          confidence: cell[read[i]] ?? 0, twinConfidence: p))
            }
        }
        return best
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
    }}
