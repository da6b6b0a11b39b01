import Foundation
import IDVEvidence
import MRZ

// The names of a TD1 card (ICAO 9303-5): the MRZ is on the back, the holder's names are printed on
// the front (9303-5 §2, zone II, fields 04–05 "Surname" / "Given name(s)", each with its caption).
// The card's other uploaded page is read with Tesseract (one block, PSM 6), turned as the MRZ
// side was and resampled to `DocumentReader.cardPixelsPerMM` on the MRZ side's scale (both
// sides photographed with the same camera); the words under or beside a name caption are compared
// with the MRZ's name parts by the same rules as the TD3/TD2 visual zone (`VisualZoneNames.compare`).
// The MRZ side's own text above the MRZ is read too: some cards print the names (or the name at
// birth) there; uncaptioned, it can only confirm a name, never contradict one. A front with a
// photo left of its text (zone V) is read again as its text column alone (`textColumn`): beside a
// photo, one block merges the photo's rows with the name lines. At most nine Tesseract calls per
// document: the front and its column turned as the MRZ side was, then half way round, then a quarter
// turn either way (a front photographed turned otherwise), each only when the turns before found
// neither a caption nor a name, and the MRZ side unless the front showed every name part.

enum CardNameCaptions {
    /// Captions (A–Z forms, `NameTransliteration.forms`) of the surname field (ICAO 9303-5 field 04)
    /// in ICAO 9303-5's English and French and the larger issuing languages (German `Name` is the
    /// surname too, but English `Name` is not: it stays in ``neutral``).
    static let surnameCaptions: Set<String> = [
        "SURNAME", "SURNAMES", "NOM", "NOMS", "NACHNAME", "FAMILIENNAME", "APELLIDO", "APELLIDOS", "COGNOME",
        "ACHTERNAAM", "EFTERNAMN", "NAZWISKO", "SUKUNIMI", "PRIJMENI", "APELIDO", "APELIDOS", "EPONYMO",
    ]
    /// Captions of the given-names field (ICAO 9303-5 field 05).
    static let givenNameCaptions: Set<String> = [
        "GIVEN", "FORENAME", "FORENAMES", "PRENOM", "PRENOMS", "VORNAME", "VORNAMEN", "NOMBRE", "NOMBRES", "NOME", "NOMI",
        "VOORNAMEN", "FORNAMN", "IMIONA", "ETUNIMET", "JMENO", "ONOMA",
    ]
    /// Captions that introduce a name without saying which (`Name`, `Names`).
    static let neutral: Set<String> = ["NAME", "NAMES"]
    static let captions = surnameCaptions.union(givenNameCaptions).union(neutral)
    /// Words of the other fields' captions of a data page (ICAO 9303-4 §2.3 zone I–II: nationality,
    /// sex, dates and place of birth, issue and expiry, authority, document number), English and
    /// French: never a name, even on a name's value line (pages that print two fields side by side).
    static let otherFieldCaptionWords: Set<String> = [
        "NATIONALITY", "NATIONALITE", "SEX", "SEXE", "DATE", "BIRTH", "NAISSANCE", "PLACE", "LIEU", "ISSUE", "DELIVRANCE",
        "EXPIRY", "EXPIRATION", "AUTHORITY", "AUTORITE", "PASSPORT", "PASSEPORT", "TYPE", "CODE", "NUMBER", "NO", "DOCUMENT",
        "PERSONAL", "PERSONNEL", "HOLDER", "SIGNATURE", "TITULAIRE", "HEIGHT", "TAILLE",
    ]

    /// Whether `word` is (or, split at `/`, holds) a name caption.
    static func isCaption(_ word: VisualZoneWord) -> Bool {
        NameTransliteration.words(word.text).contains { piece in NameTransliteration.forms(piece).contains { captions.contains($0) } }
    }

    /// The name field a caption word names: nil for a neutral caption (`Name`) or a non-caption.
    static func field(ofCaption word: VisualZoneWord) -> MRZNameField? {
        let forms = NameTransliteration.words(word.text).flatMap(NameTransliteration.forms)
        let surname = forms.contains { surnameCaptions.contains($0) }, given = forms.contains { givenNameCaptions.contains($0) }
        return surname == given ? nil : (surname ? .primaryIdentifier : .secondaryIdentifier)
    }

    /// The words where a card prints its names: for each caption word (boxes known), the words to its
    /// right on its line and those whose centre lies below it within 2.5 caption heights and that overlap
    /// it sideways (within 2 caption heights); caption words themselves and words without a letter are
    /// left out. nil when no caption is found (the caller then compares every word).
    static func nameWords(_ words: [VisualZoneWord]) -> [VisualZoneWord]? {
        captionedNames(words)?.map(\.word)
    }

    /// ``nameWords(_:)`` with the field each word's caption line names: the captions on the line of the
    /// nearest caption word above or left of it (`Given names / Prénoms` is the given names; `Surname /
    /// Nom` the surname); nil when that line's captions name neither field or both.
    static func captionedNames(_ words: [VisualZoneWord]) -> [(word: VisualZoneWord, field: MRZNameField?)]? {
        let captionWords = words.filter { isCaption($0) && $0.bottom > $0.top }
        guard !captionWords.isEmpty else { return nil }
        func centreY(_ w: VisualZoneWord) -> Double { Double(w.top + w.bottom) / 2 }
        func height(_ w: VisualZoneWord) -> Double { Double(w.bottom - w.top) }
        /// The field of the caption line `c` stands on.
        func lineField(_ c: VisualZoneWord) -> MRZNameField? {
            let fields = Set(captionWords.filter { abs(centreY($0) - centreY(c)) < 0.6 * height(c) }.compactMap(field(ofCaption:)))
            return fields.count == 1 ? fields.first : nil
        }
        var out: [(word: VisualZoneWord, field: MRZNameField?)] = []
        // words without a letter (a lone `/`, dates, numbers) are no name
        for w in words where !isCaption(w) && w.bottom > w.top
            && NameTransliteration.words(w.text).contains(where: { !NameTransliteration.forms($0).isEmpty }) {
            let cy = centreY(w)
            let near = captionWords.filter { c in
                let h = height(c), ccy = centreY(c)
                let sameLine = abs(cy - ccy) < 0.6 * h && w.left >= c.right
                // below: the value line under a caption line ("Surname / Nom" over "ERIKSSON"), overlapping it
                let below = cy > Double(c.bottom) && cy <= Double(c.bottom) + 2.5 * h
                    && Double(w.right) >= Double(c.left) - 2 * h && Double(w.left) <= Double(c.right) + 2 * h
                return sameLine || below
            }
            // The caption line nearest above (or beside) the word names its field.
            if let nearest = near.min(by: { abs(cy - centreY($0)) < abs(cy - centreY($1)) }) {
                out.append((w, lineField(nearest)))
            }
        }
        return out
    }

    /// ``captionedNames(_:)`` kept to each caption's value line: a word beside its caption, or on the
    /// first line of text below it. A word with another line between it and its caption (the next
    /// field's caption and value, on pages that print captions small and close: `03 Nationality` then
    /// `CESKA REPUBLIKA` under `02 Given names` on a Czech passport) is left out. `words`: every word
    /// read, in the image's pixels.
    static func valueLineNames(_ words: [VisualZoneWord]) -> [(word: VisualZoneWord, field: MRZNameField?)]? {
        guard let named = captionedNames(words) else { return nil }
        let captionWords = words.filter { isCaption($0) && $0.bottom > $0.top }
        func centreY(_ w: VisualZoneWord) -> Double { Double(w.top + w.bottom) / 2 }
        func height(_ w: VisualZoneWord) -> Double { Double(w.bottom - w.top) }
        func overlapsSideways(_ a: VisualZoneWord, _ b: VisualZoneWord) -> Bool { a.right >= b.left && a.left <= b.right }
        return named.filter { entry in
            let w = entry.word, cy = centreY(w)
            if NameTransliteration.words(w.text).contains(where: { NameTransliteration.forms($0).contains { otherFieldCaptionWords.contains($0) } }) {
                return false
            }
            // its caption: the nearest caption word above or beside it (as captionedNames chose)
            guard let c = captionWords.filter({ c in
                let h = height(c)
                return (abs(cy - centreY(c)) < 0.6 * h && w.left >= c.right)
                    || (cy > Double(c.bottom) && cy <= Double(c.bottom) + 2.5 * h
                        && Double(w.right) >= Double(c.left) - 2 * h && Double(w.left) <= Double(c.right) + 2 * h)
            }).min(by: { abs(cy - centreY($0)) < abs(cy - centreY($1)) }) else { return false }
            if abs(cy - centreY(c)) < 0.6 * height(c) { return true }   // beside it
            // below it: nothing read between the caption's bottom and the word's top, over the word's width
            return !words.contains { x in
                x != w && x.bottom > x.top && centreY(x) > Double(c.bottom) && Double(x.bottom) < Double(w.top) + 0.25 * height(w)
                    && overlapsSideways(x, w)
            }
        }
    }

    /// Whether the printed `word` (A–Z) may be a misreading of one of `parts` rather than another name:
    /// a piece of one (a part cut at an edge or split by the recogniser) or within
    /// ``VisualZoneNames/maxDistance(_:)`` letters of one.
    static func misread(of parts: [MRZNamePart], _ word: String) -> Bool {
        parts.contains { p in
            p.text.contains(word) || VisualZoneNames.align(Array(p.text), Array(word)).distance <= VisualZoneNames.maxDistance(p.text.count)
        }
    }

    /// Uncaptioned data pages (captions too small or blurred for Tesseract, names read): ICAO 9303-4
    /// §3.2 prints the surname (zone II field 06) on a value line just above the given names (field
    /// 07), aligned on the same left edge. When one field's part agrees with a located word and a part
    /// of the other field is not found, the confident words (word confidence ≥ `minimumConfidence`,
    /// letters only, no caption word, none that a part explains) on the nearest line above (for the
    /// surname) or below (for the given names) that word — within 3 of its heights, starting within
    /// 2 of them of its left edge — contradict that part, which becomes `.differs`. nil when none is.
    static func adjacentLineContradicting(_ compared: [VisualZoneNamePart], parts: [MRZNamePart], words: [VisualZoneWord],
                                          minimumConfidence: Double) -> [VisualZoneNamePart]? {
        let located = words.filter { $0.bottom > $0.top }
        func centreY(_ w: VisualZoneWord) -> Double { Double(w.top + w.bottom) / 2 }
        func forms(_ w: VisualZoneWord) -> [String] { NameTransliteration.words(w.text).flatMap(NameTransliteration.forms) }
        /// A located word printing an agreeing part of `field`.
        func anchor(_ field: MRZNameField) -> VisualZoneWord? {
            let agreeing = compared.filter { $0.field == field && $0.outcome == .agrees }
            return located.first { w in
                let f = Set(forms(w))
                return agreeing.contains { !VisualZoneNames.printedForms($0.mrz).isDisjoint(with: f) }
            }
        }
        let explained = Set(compared.compactMap(\.visualZone) + parts.map(\.text))
        func contradicting(near a: VisualZoneWord, above: Bool) -> [String] {
            let h = Double(a.bottom - a.top), cy = centreY(a)
            let candidates = located.filter { w in
                let d = above ? cy - centreY(w) : centreY(w) - cy
                return d > 0.6 * h && d <= 3 * h && abs(Double(w.left - a.left)) <= 2 * h
            }
            guard let nearest = candidates.min(by: { abs(centreY($0) - cy) < abs(centreY($1) - cy) }) else { return [] }
            let line = located.filter { abs(centreY($0) - centreY(nearest)) < 0.6 * h && $0.left >= nearest.left }
            return line.filter { w in
                w.confidence >= minimumConfidence && !isCaption(w)
                    && !forms(w).contains { otherFieldCaptionWords.contains($0) || explained.contains($0) || misread(of: parts, $0) }
                    && NameTransliteration.words(w.text).allSatisfy { piece in NameTransliteration.forms(piece).contains { $0.count >= 2 } }
            }.compactMap { forms($0).first }
        }
        var out = compared, differs = false
        for i in out.indices where out[i].outcome == .notFound {
            let surname = out[i].field == .primaryIdentifier
            guard let a = anchor(surname ? .secondaryIdentifier : .primaryIdentifier) else { continue }
            let read = contradicting(near: a, above: surname)
            guard !read.isEmpty else { continue }
            out[i] = VisualZoneNamePart(field: out[i].field, mrz: out[i].mrz, visualZone: read.joined(separator: " "), outcome: .differs)
            differs = true
        }
        return differs ? out : nil
    }

    /// The parts `compared` left `.notFound` that captioned words contradict: a document that prints
    /// names under its captions, none of them near a part the MRZ has (another document's page, or a
    /// name changed on one side), makes each such part `.differs`, with the words under its own
    /// field's caption (`Surname`, `Given names`; a neutral `Name` counts for both) that no part
    /// explains. A word explains nothing when it is a part of the MRZ or the printed form already
    /// compared with one. Only words of at least 2 letters whose Tesseract word confidence is at
    /// least `minimumConfidence` (0–100) count. nil when no part is contradicted.
    /// `named`: ``captionedNames(_:)``'s words with their fields.
    static func contradicting(_ compared: [VisualZoneNamePart], parts: [MRZNamePart],
                              named: [(word: VisualZoneWord, field: MRZNameField?)], minimumConfidence: Double = 0) -> [VisualZoneNamePart]? {
        let explained = Set(compared.compactMap(\.visualZone) + parts.map(\.text))
        func unexplained(_ field: MRZNameField) -> [String] {
            named.filter { ($0.field == field || $0.field == nil) && $0.word.confidence >= minimumConfidence }
                .flatMap { NameTransliteration.words($0.word.text) }.filter { piece in
                    let forms = NameTransliteration.forms(piece)
                    return forms.contains { $0.count >= 2 } && !forms.contains { explained.contains($0) || misread(of: parts, $0) }
                }.compactMap { NameTransliteration.forms($0).first }
        }
        var out = compared, differs = false
        for i in out.indices where out[i].outcome == .notFound {
            let read = unexplained(out[i].field)
            guard !read.isEmpty else { continue }
            out[i] = VisualZoneNamePart(field: out[i].field, mrz: out[i].mrz, visualZone: read.joined(separator: " "), outcome: .differs)
            differs = true
        }
        return differs ? out : nil
    }
}

extension DocumentReader {
    /// Longest side of the card front given to Tesseract, pixels (a TD1 card at
    /// `cardPixelsPerMM` is 1284 px wide; the rest of the photo is kept up to this size).
    static let cardFrontMaxDimension = 2400

    /// Resolution of the card front given to Tesseract, pixels per millimetre: a TD1 card prints its
    /// captions at ~1 mm and its values at ~1.8 mm, smaller than a passport's; on generated fronts at
    /// 10 px/mm Tesseract misread the captions (`Sumame`) and lost given names, at 15 it read them all.
    static let cardPixelsPerMM = 15.0

    /// The page area of `frame` between `a0…a1` (along) and `c0…c1` (across), millimetres, rectified at
    /// `visualZonePixelsPerMM` and flattened; nil when less than half of it lies on the page.
    static func rectifiedZone(_ page: GreyImage, frame: MRZDocumentFrame, along a0: Double, _ a1: Double,
                              across c0: Double, _ c1: Double) -> GreyImage? {
        guard a1 > a0, c1 > c0 else { return nil }
        let r = visualZonePixelsPerMM
        let outW = Int(((a1 - a0) * r).rounded()), outH = Int(((c1 - c0) * r).rounded())
        guard outW >= 16, outH >= 16 else { return nil }
        var px = [UInt8](repeating: 255, count: outW * outH)
        var inside = 0
        let k = frame.pixelsPerMM
        page.pixels.withUnsafeBufferPointer { p in
            px.withUnsafeMutableBufferPointer { out in
                for y in 0..<outH {
                    let c = c0 + (Double(y) + 0.5) / r
                    for x in 0..<outW {
                        let a = a0 + (Double(x) + 0.5) / r
                        let sx = frame.originX + (a * frame.dirX - c * frame.dirY) * k
                        let sy = frame.originY + (a * frame.dirY + c * frame.dirX) * k
                        let v = GreyImage.sample(p, width: page.width, height: page.height, sx, sy, outside: -1)
                        if v >= 0 { inside += 1; out[y * outW + x] = UInt8(min(255, max(0, v.rounded()))) }
                    }
                }
            }
        }
        // Mostly off the page (a tightly cropped photo of the MRZ alone): nothing to read.
        guard inside * 2 >= outW * outH else { return nil }
        return flattened(GreyImage(width: outW, height: outH, pixels: px), window: Int(3 * r))
    }

    /// The text area of a TD1 card's MRZ side above the MRZ (ICAO 9303-5 zone VI-less back: the whole
    /// card width less 1.5 mm each side, from 2 mm below the top edge to 2.8 mm above the first MRZ
    /// line's centre); nil for TD3/TD2 frames or when it is off the page.
    public static func cardMRZSideTextImage(_ page: GreyImage, frame: MRZDocumentFrame) -> GreyImage? {
        guard frame.mrzOnBack else { return nil }
        let (w, h) = frame.sizeMM
        let docLeft = -((w - 30 * 2.54) / 2 + 1.27)
        return rectifiedZone(page, frame: frame, along: docLeft + 1.5, docLeft + w - 1.5,
                             across: -(h - 5) + 2, frame.firstLineAcross - 2.8)
    }

    /// The card's other side as Tesseract gets it: `page` turned clockwise by `quarterTurns`, resampled
    /// from `pixelsPerMM` (the MRZ side's scale, clamped to a factor of 0.4–2.5) to
    /// `cardPixelsPerMM`, at most `cardFrontMaxDimension` on its longer side, and flattened.
    public static func cardFrontImage(_ page: GreyImage, quarterTurns: Int, pixelsPerMM: Double) -> GreyImage? {
        let turned = page.rotated(quarterTurns: quarterTurns)
        guard turned.width >= 16, turned.height >= 16, pixelsPerMM > 0 else { return nil }
        var f = min(2.5, max(0.4, cardPixelsPerMM / pixelsPerMM))
        f = min(f, Double(cardFrontMaxDimension) / Double(max(turned.width, turned.height)))
        let outW = max(16, Int((Double(turned.width) * f).rounded())), outH = max(16, Int((Double(turned.height) * f).rounded()))
        var px = [UInt8](repeating: 255, count: outW * outH)
        turned.pixels.withUnsafeBufferPointer { p in
            px.withUnsafeMutableBufferPointer { out in
                for y in 0..<outH {
                    let sy = (Double(y) + 0.5) / f - 0.5
                    for x in 0..<outW {
                        let v = GreyImage.sample(p, width: turned.width, height: turned.height, (Double(x) + 0.5) / f - 0.5, sy, outside: 255)
                        out[y * outW + x] = UInt8(min(255, max(0, v.rounded())))
                    }
                }
            }
        }
        return flattened(GreyImage(width: outW, height: outH, pixels: px), window: Int(3 * cardPixelsPerMM))
    }

    /// `front` with everything left of its text column blanked (white), when that column starts more
    /// than 10 mm from the left edge (room for a portrait); nil otherwise, or when no word was read
    /// well. The column starts 1 mm left of the leftmost caption word or well-read word (Tesseract's
    /// confidence ≥ 85, three letters or more: the photo's texture reads as short words under 65).
    static func textColumn(_ front: GreyImage, words: [VisualZoneWord]) -> GreyImage? {
        let anchors = words.filter { w in
            w.right > w.left && (CardNameCaptions.isCaption(w) || (w.confidence >= 85 && w.text.filter(\.isLetter).count >= 3))
        }
        guard let left = anchors.map(\.left).min() else { return nil }
        let x0 = left - Int(cardPixelsPerMM.rounded())
        guard Double(x0) > 10 * cardPixelsPerMM, x0 < front.width else { return nil }
        var px = front.pixels
        for y in 0..<front.height {
            let row = y * front.width
            for x in 0..<x0 { px[row + x] = 255 }
        }
        return GreyImage(width: front.width, height: front.height, pixels: px)
    }

    /// The names of a TD1 card cross-checked with its MRZ (see the top of this file). `pages`: every
    /// decoded page with its 0-based index; `mrzPage` the index of the MRZ side; `quarterTurns` the
    /// turn that makes the MRZ side upright (applied to the other side too).
    static func cardCheck(pages: [(index: Int, grey: GreyImage)], mrzPage: Int, reading: MRZReading, result: MRZResult,
                          frame: MRZDocumentFrame, quarterTurns: Int) -> VisualZoneSearch {
        let parts = VisualZoneNames.parts(result.lines, format: result.format)
        guard !parts.isEmpty else { return .noVisualZone }
        func found(_ c: [VisualZoneNamePart]) -> Int { c.filter { $0.outcome != .notFound }.count }
        func compare(_ words: [VisualZoneWord]) -> [VisualZoneNamePart] {
            VisualZoneNames.compare(parts, words: words, posteriors: reading.posteriors, confidences: reading.confidences)
        }
        // The front: the first other page.
        var frontWords: [VisualZoneWord] = []
        var frontFields: [MRZNameField?] = []
        var frontCaptioned = false
        let front = pages.first { $0.index != mrzPage }
        if let front {
            // Turned as the MRZ side, then half way round, then the quarter turns (a front
            // photographed turned otherwise than the back).
            for extra in [0, 2, 1, 3] {
                guard let img = cardFrontImage(front.grey, quarterTurns: -quarterTurns + extra, pixelsPerMM: frame.pixelsPerMM) else { break }
                var words: [VisualZoneWord]
                switch VisualZoneRecogniser.shared.words(in: img, pixelsPerMM: cardPixelsPerMM) {
                case let .failure(e): return .recogniserUnavailable(reason: e.reason)
                case let .success(w): words = w
                }
                // The text column alone when something stands left of the captions (the portrait, zone
                // V, on most cards): read as one block beside it, Tesseract merges the photo's rows
                // with the name lines and loses names (`IMPOSTOR` read `ae`).
                if let column = textColumn(img, words: words) {
                    switch VisualZoneRecogniser.shared.words(in: column, pixelsPerMM: cardPixelsPerMM) {
                    case let .failure(e): return .recogniserUnavailable(reason: e.reason)
                    case let .success(w):
                        if w.filter(CardNameCaptions.isCaption).count >= words.filter(CardNameCaptions.isCaption).count { words = w }
                    }
                }
                let named = CardNameCaptions.captionedNames(words)
                frontWords = named?.map(\.word) ?? words
                frontFields = named?.map(\.field) ?? words.map { _ in nil }
                frontCaptioned = named != nil
                // Turned the wrong way round, Tesseract finds neither a caption nor a name.
                if named != nil || found(compare(words)) > 0 { break }
            }
        }
        // The MRZ side's own text above the MRZ. Without a caption there it may print other people's
        // names (parents, `HIJO DE JUAN / MARTA` on Spanish cards) and dates (`MAR` beside MAX): its
        // words then only confirm a part the front did not show (an exact agreement), never differ.
        var sideNamed: [VisualZoneWord] = [], sideLoose: [VisualZoneWord] = []
        // (Not read when the front showed every part: one Tesseract call less.)
        let frontShowsAll = front != nil && !compare(frontWords).contains { $0.outcome == .notFound }
        if !frontShowsAll, let mrzSide = pages.first(where: { $0.index == mrzPage }), let img = cardMRZSideTextImage(mrzSide.grey, frame: frame) {
            switch VisualZoneRecogniser.shared.words(in: img, pixelsPerMM: visualZonePixelsPerMM) {
            case let .failure(e): return .recogniserUnavailable(reason: e.reason)
            case let .success(words):
                if let named = CardNameCaptions.nameWords(words) { sideNamed = named } else { sideLoose = words }
            }
        }
        var compared = compare(frontWords + sideNamed)
        var sideUsed = !sideNamed.isEmpty && found(compare(sideNamed)) > 0
        if !sideLoose.isEmpty {
            for (i, loose) in compare(sideLoose).enumerated() where compared[i].outcome == .notFound && loose.outcome == .agrees {
                compared[i] = loose
                sideUsed = true
            }
        }
        // A captioned front that prints names, none of them near a part the MRZ has (another card's
        // front, or one whose names were changed): each such part differs from the front's words
        // that no part explains. Only the captioned words count; an uncaptioned front, or the MRZ
        // side's text, prints too much else to contradict a name.
        // Each part is compared with the words under its own field's caption (`Surname`, `Given
        // names`); words under a caption naming neither (`Name`) count for both.
        if let front, frontCaptioned,
           let contradicted = CardNameCaptions.contradicting(compared, parts: parts, named: Array(zip(frontWords, frontFields)),
                                                             minimumConfidence: contradictingWordConfidence) {
            var used = [front.index]
            if sideUsed { used.append(mrzPage) }
            return .comparedOnCard(pages: used, parts: contradicted)
        }
        if found(compared) == 0 {
            return front.map { .noNamesOnCardFront(page: $0.index) } ?? .cardFrontNotGiven
        }
        var used: [Int] = []
        if let front, found(compare(frontWords)) > 0 { used.append(front.index) }
        if sideUsed { used.append(mrzPage) }
        return .comparedOnCard(pages: used, parts: compared)
    }
}
