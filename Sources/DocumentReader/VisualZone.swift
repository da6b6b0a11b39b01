import CTesseract
import Foundation
import IDVEvidence
import MRZ

// The visual zone's names, cross-checked with the MRZ's. Names carry no check digit (ICAO 9303-3
// §4.9), so a misread letter there (`KINGOOM` for KINGDOM) passes every MRZ check; the same name is
// printed in the visual inspection zone (VIZ, ICAO 9303-4 §2.3 zone II on TD3, 9303-6 on TD2). The
// reader rectifies the VIZ of the MRZ's document (`MRZDocumentFrame`), reads it with Tesseract
// (Debian libtesseract + tesseract-ocr-eng, LSTM), transliterates each printed word to the MRZ's
// A–Z as ICAO 9303-3 §6 does, and compares each MRZ name part with the nearest printed word.

/// Tesseract recognisers, one per concurrent reading (a Tesseract instance is not thread-safe), created
/// on first use (or by `prepare`) and kept for the process.
final class VisualZoneRecogniser: @unchecked Sendable {
    // @unchecked: `idle`, `failure` and `preparing` are read and written under `condition`; a
    // Tesseract handle is used by the one thread that took it.
    /// Tesseract page segmentation: 6 = one uniform block of text (on the specimens it finds more names than 3, automatic, or 11,
    /// sparse; on generated TD1 fronts 11 lost given names, nationality and sex that 6 read).
    static let pageSegmentation: Int32 = 6

    private let condition = NSCondition()
    private var idle: [OpaquePointer] = []
    private var failure: String?
    private let segmentation: Int32
    /// Recognisers being created by `prepare` (a reading waits for one rather than making its own).
    private var preparing = 0
    /// Whether Tesseract loads the legacy engine's universal ambiguity table (`ct_reader_create`).
    let universalAmbigs: Bool

    /// The recognisers of the TD3/TD2 visual zone and the TD1 card's sides (`pageSegmentation`).
    static let shared = VisualZoneRecogniser(pageSegmentation: pageSegmentation)

    /// Recognisers made without the universal ambiguity table in this process (CTesseract counts the
    /// skips; a `universalAmbigs: false` recogniser that does not add one loaded the table after all).
    static var universalAmbigsSkipped: Int { Int(ct_universal_ambigs_skipped()) }

    /// - Parameter universalAmbigs: false (the reader's) skips the table LSTM recognition never reads
    ///   (~90 % of Tesseract's init, CTesseract/ambigs.cpp); true loads it as Tesseract does (tests' A/B).
    /// - Parameter pageSegmentation: Tesseract's PSM number for every recogniser of this pool.
    init(pageSegmentation: Int32 = VisualZoneRecogniser.pageSegmentation, universalAmbigs: Bool = false) {
        segmentation = pageSegmentation
        self.universalAmbigs = universalAmbigs
    }

    /// Creates one recogniser now on a background thread, so that a reading started meanwhile (the
    /// CLI's one page: decode and MRZ first) waits for it instead of starting Tesseract itself.
    func prepare() {
        let start = condition.withLock {
            guard idle.isEmpty, preparing == 0, failure == nil else { return false }
            preparing += 1
            return true
        }
        guard start else { return }
        Thread.detachNewThread { [self] in
            let made = create()
            condition.withLock {
                preparing -= 1
                if case let .success(r) = made { idle.append(r) }
                condition.broadcast()
            }
        }
    }

    private func create() -> Result<OpaquePointer, VisualZoneRecogniserError> {
        var message = [CChar](repeating: 0, count: 256)
        let datapath = ProcessInfo.processInfo.environment["TESSDATA_PREFIX"]
        let ambigs: Int32 = universalAmbigs ? 1 : 0
        let r: OpaquePointer? = datapath.map { dp in ct_reader_create(dp, "eng", segmentation, nil, ambigs, &message, message.count) }
            ?? ct_reader_create(nil, "eng", segmentation, nil, ambigs, &message, message.count)
        guard let r else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            condition.withLock { failure = reason }
            return .failure(.init(reason: reason))
        }
        return .success(r)
    }

    /// A recogniser for the calling thread's use; nil with the reason when Tesseract cannot start.
    private func take() -> Result<OpaquePointer, VisualZoneRecogniserError> {
        let ready: Result<OpaquePointer, VisualZoneRecogniserError>? = condition.withLock {
            while idle.isEmpty && preparing > 0 && failure == nil { condition.wait() }
            if let r = idle.popLast() { return .success(r) }
            if let failure { return .failure(.init(reason: failure)) }
            return nil
        }
        return ready ?? create()
    }

    private func give(_ r: OpaquePointer) { condition.withLock { idle.append(r) } }

    /// The words Tesseract reads in `image` (8-bit grey), with their confidences.
    func words(in image: GreyImage, pixelsPerMM: Double) -> Result<[VisualZoneWord], VisualZoneRecogniserError> {
        let r: OpaquePointer
        switch take() {
        case let .success(x): r = x
        case let .failure(e): return .failure(e)
        }
        defer { give(r) }
        let capacity = 400
        var out = [ct_word](repeating: ct_word(), count: capacity)
        var message = [CChar](repeating: 0, count: 256)
        let n = image.pixels.withUnsafeBufferPointer { px in
            ct_reader_words(r, px.baseAddress, Int32(image.width), Int32(image.height), Int32(image.width),
                            Int32((pixelsPerMM * 25.4).rounded()), &out, Int32(capacity), &message, message.count)
        }
        guard n >= 0 else {
            return .failure(.init(reason: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return .success(out.prefix(Int(n)).map(Self.word))
    }

    /// How ``names(in:pixelsPerMM:settled:)`` read the zone.
    enum NameReading: Sendable, Equatable {
        /// Line by line from the top, stopping after `read` of the layout's `lines` text lines.
        case lines(read: Int, of: Int)
        /// The whole zone as one block (PSM 6), after `linesRead` lines had not settled it.
        case wholeZone(linesRead: Int)
    }

    /// Most of the zone's text lines read one by one before the whole zone is read instead: names
    /// stand in the upper part of a data page (ICAO 9303-4 §3.2, fields 06–07 after the header,
    /// type, code and number).
    static let lineBudgetFraction = 0.6

    /// The visual zone's words, read as cheaply as the names allow: Tesseract's layout analysis
    /// finds the text lines, which are recognised one by one from the top (PSM 7) until `settled`
    /// says the words so far settle every name; when it does not after ``lineBudgetFraction`` of the
    /// lines, the whole zone is recognised as one block (PSM 6, as ``words(in:pixelsPerMM:)``) and
    /// those words alone are returned — so a page whose names the first lines do not settle is judged
    /// exactly as by a whole-zone reading. 27 of 39 TD3/TD2 test pages were settled by the lines (the
    /// clean ones, e.g. after 7 of 17 lines on 100_pass-uto); busy real pages mostly fall back
    /// (bench/DOCUMENT-BENCH.md, session 8).
    ///
    /// `names`: the printed length of each MRZ name field (characters, spaces included, surname
    /// first); the lines that fit them are recognised first (`NameLines.readingOrder`), the others
    /// then from the top. Empty: every line from the top.
    func names(in image: GreyImage, pixelsPerMM: Double, names: [Int] = [],
               settled: ([VisualZoneWord]) -> Bool) -> Result<(words: [VisualZoneWord], reading: NameReading), VisualZoneRecogniserError> {
        let r: OpaquePointer
        switch take() {
        case let .success(x): r = x
        case let .failure(e): return .failure(e)
        }
        defer { give(r) }
        var message = [CChar](repeating: 0, count: 256)
        func failure() -> VisualZoneRecogniserError {
            .init(reason: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        var boxes = [ct_box](repeating: ct_box(), count: 200)
        let n = image.pixels.withUnsafeBufferPointer { px in
            ct_reader_begin(r, px.baseAddress, Int32(image.width), Int32(image.height), Int32(image.width),
                            Int32((pixelsPerMM * 25.4).rounded()), &boxes, Int32(boxes.count), &message, message.count)
        }
        defer { ct_reader_end(r) }
        guard n >= 0 else { return .failure(failure()) }
        let capacity = 400
        var out = [ct_word](repeating: ct_word(), count: capacity)
        func recognise(_ psm: Int32, _ box: ct_box, line: Int) -> [VisualZoneWord]? {
            let k = ct_reader_recognise(r, psm, box, Int32(line), &out, Int32(capacity), &message, message.count)
            guard k >= 0 else { return nil }
            return out.prefix(Int(k)).map(Self.word)
        }
        // Lines top to bottom, those that fit the names first; a small margin around each so that no
        // ascender or descender is cut.
        let sorted = boxes.prefix(Int(n)).sorted { ($0.top, $0.left) < ($1.top, $1.left) }
        let order = NameLines.readingOrder(sorted.map { LineBox(left: Int($0.left), top: Int($0.top), right: Int($0.right), bottom: Int($0.bottom)) },
                                           names: names)
        let lines = order.map { sorted[$0] }
        let budget = Int((Double(lines.count) * Self.lineBudgetFraction).rounded(.up))
        let pad = Int32(max(2, (pixelsPerMM * 0.4).rounded()))
        var words: [VisualZoneWord] = []
        var noisy = 0
        for (i, b) in lines.prefix(budget).enumerated() {
            guard let w = recognise(7, ct_box(left: b.left - pad, top: b.top - pad, right: b.right + pad, bottom: b.bottom + pad), line: i)
            else { return .failure(failure()) }
            words += w
            if settled(words) { return .success((words, .lines(read: i + 1, of: lines.count))) }
            // A line read poorly (guilloche, a tinted or busy background) means the rest will be too:
            // the whole zone, read as one block, is read better there; stop spending on lines.
            if w.isEmpty || w.map(\.confidence).reduce(0, +) / Double(w.count) < Self.poorLineConfidence {
                noisy += 1
                if noisy >= Self.poorLinesBeforeWholeZone { break }
            }
        }
        guard let whole = recognise(Self.blockSegmentation, ct_box(left: 0, top: 0, right: Int32(image.width), bottom: Int32(image.height)), line: 0)
        else { return .failure(failure()) }
        return .success((whole, .wholeZone(linesRead: min(budget, lines.count))))
    }

    /// A line whose words' mean Tesseract confidence (0–100) is under this reads poorly; after
    /// ``poorLinesBeforeWholeZone`` such lines the line phase stops (set on the real specimens, where
    /// guilloche lines read 0–50 and clean printed lines 85–96).
    static let poorLineConfidence = 60.0
    static let poorLinesBeforeWholeZone = 2

    /// PSM 6, one uniform block: the whole-zone reading of ``names(in:pixelsPerMM:settled:)``.
    static let blockSegmentation: Int32 = 6

    private static func word(_ w: ct_word) -> VisualZoneWord {
        var w = w
        let text = withUnsafeBytes(of: &w.text) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let symbols = withUnsafeBytes(of: &w.symbol_confidence) { raw in
            Array(raw.bindMemory(to: Float.self).prefix(Int(w.symbol_count))).map(Double.init)
        }
        return VisualZoneWord(text: text, confidence: Double(w.confidence), symbolConfidences: symbols, line: Int(w.line),
                              left: Int(w.left), top: Int(w.top), right: Int(w.right), bottom: Int(w.bottom))
    }
}

struct VisualZoneRecogniserError: Error, Sendable { let reason: String }

/// One word Tesseract read in the visual zone.
struct VisualZoneWord: Sendable, Equatable {
    var text: String
    /// Tesseract's word confidence, 0–100.
    var confidence: Double
    /// Per symbol (character) of `text`, 0–100.
    var symbolConfidences: [Double]
    var line: Int
    /// The word's box in the image given to Tesseract, pixels (0 when not known).
    var left = 0, top = 0, right = 0, bottom = 0
}

/// ICAO 9303-3 §6 transliteration of printed (VIZ) name text into the MRZ's A–Z: Latin letters with
/// diacritics lose them or take the recommended digraph (Ä → AE or A, Ø → OE, ß → SS, Þ → TH…);
/// punctuation (apostrophe, hyphen, comma, full stop) and spaces separate or vanish. Each printed
/// word gives every transliteration §6 allows (at most a few), since the issuing state chooses.
enum NameTransliteration {
    /// Characters with more than one allowed transliteration (ICAO 9303-3 §6, Table A "recommended"
    /// and the plain letter most states use).
    static let options: [Character: [String]] = [
        "Ä": ["AE", "A"], "Ö": ["OE", "O"], "Ü": ["UE", "U"], "Å": ["AA", "A"], "Æ": ["AE"], "Ø": ["OE"],
        "ß": ["SS"], "Þ": ["TH"], "Ð": ["D"], "Œ": ["OE"], "Ĳ": ["IJ"], "Ñ": ["N", "NXX"], "Ł": ["L"], "Đ": ["D"], "Ħ": ["H"],
        "ı": ["I"], "ŀ": ["L"], "ĸ": ["K"],
    ]

    /// The word's A–Z forms (uppercased, diacritics removed or transliterated; other characters
    /// dropped), at most 4; empty when nothing of it is a letter.
    static func forms(_ word: String) -> [String] {
        var forms = [""]
        for ch in word.uppercased() {
            if let opts = options[ch] ?? options[Character(ch.lowercased())] {
                forms = forms.flatMap { f in opts.map { f + $0 } }
                if forms.count > 4 { forms = Array(forms.prefix(4)) }
                continue
            }
            // Decompose (É → E + ◌́) and keep the base letter when it is A–Z.
            let base = String(ch).decomposedStringWithCanonicalMapping.unicodeScalars.first
            if let b = base, b.value >= 65, b.value <= 90 {
                forms = forms.map { $0 + String(Character(b)) }
            }
        }
        return forms.first?.isEmpty == false ? forms : []
    }

    /// Printed text split into words at spaces and at the punctuation §6 turns into a separator
    /// (hyphen, comma, slash); an apostrophe or full stop inside a word is dropped (O'NEILL → ONEILL).
    static func words(_ text: String) -> [String] {
        text.split { $0 == " " || $0 == "-" || $0 == "," || $0 == "/" || $0 == "\u{2010}" || $0 == "\u{2011}" }
            .map(String.init).filter { !$0.isEmpty }
    }
}

/// One name part of the MRZ: its field, its letters and the cells it occupies (0-based line and first column).
struct MRZNamePart: Sendable, Equatable {
    var field: MRZNameField
    var text: String
    var line: Int
    var column: Int
    /// The part ends at the end of the name field (the name may be truncated there, ICAO 9303-3 §4.6).
    var atFieldEnd: Bool
}

enum VisualZoneNames {
    /// The MRZ's name parts (from the lines after correction): TD3/MRV-A line 1 columns 6–44,
    /// TD2/MRV-B line 1 columns 6–36, TD1 line 3; empty for other formats.
    static func parts(_ lines: [String], format: MRZFormat) -> [MRZNamePart] {
        let (line, start): (Int, Int)
        switch format {
        case .td3, .mrvA, .td2, .mrvB: (line, start) = (0, 5)
        case .td1: (line, start) = (2, 0)
        default: return []
        }
        guard line < lines.count else { return [] }
        let chars = Array(lines[line])
        guard start < chars.count else { return [] }
        var out: [MRZNamePart] = []
        var field = MRZNameField.primaryIdentifier
        var i = start
        while i < chars.count {
            if chars[i] == "<" {
                if i + 1 < chars.count, chars[i + 1] == "<", field == .primaryIdentifier, !out.isEmpty { field = .secondaryIdentifier; i += 2; continue }
                i += 1
                continue
            }
            var j = i
            while j < chars.count, chars[j] != "<" { j += 1 }
            out.append(MRZNamePart(field: field, text: String(chars[i..<j]), line: line, column: i, atFieldEnd: j == chars.count))
            i = j
        }
        return out
    }

    /// Levenshtein alignment of `a` (MRZ) and `b` (VIZ): the distance and the substituted positions
    /// (index in `a`, index in `b`); insertions and deletions count in the distance only.
    static func align(_ a: [Character], _ b: [Character]) -> (distance: Int, substitutions: [(Int, Int)], indels: Int) {
        let n = a.count, m = b.count
        var d = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
        for i in 0...n { d[i][0] = i }
        for j in 0...m { d[0][j] = j }
        if n > 0 && m > 0 {
            for i in 1...n { for j in 1...m {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            } }
        }
        var subs: [(Int, Int)] = [], indels = 0
        var i = n, j = m
        while i > 0 || j > 0 {
            if i > 0, j > 0, d[i][j] == d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1) {
                if a[i - 1] != b[j - 1] { subs.append((i - 1, j - 1)) }
                i -= 1; j -= 1
            } else if i > 0, d[i][j] == d[i - 1][j] + 1 { indels += 1; i -= 1 } else { indels += 1; j -= 1 }
        }
        return (d[n][m], subs.reversed(), indels)
    }

    /// Most differing letters a printed word may have and still be the same name part: 1 up to 5
    /// letters, 2 from 6 (a word further away is another word of the page, not a misread).
    static func maxDistance(_ length: Int) -> Int { length >= 6 ? 2 : 1 }

    /// Settling a substitution (MRZ letter m, printed letter v): the printed letter wins when the OCR-B
    /// classifier gave it at least `rivalPosterior` at that cell (and m less than `sureMRZ`) and
    /// Tesseract read it with a symbol confidence of at least `sureSymbol`; the MRZ letter wins when the
    /// classifier gave the printed letter less than `noRival` and Tesseract's confidence in the whole
    /// word is under `sureWord`. Anything else stays unsettled. Set on the real specimens
    /// (`ground_truth.tsv`): Tesseract's misreads there (RABROUK, EROKSSON, ULESST, EXIKSSON) had
    /// symbol confidences of 80–96 but word confidences of 0–63, and the classifier gave the printed
    /// letter ≤ 5·10⁻⁶.
    static let rivalPosterior = 0.01, sureSymbol = 80.0, sureMRZ = 0.98, noRival = 0.001, sureWord = 80.0

    /// The MRZ part as a recogniser without diacritics would print it: each ICAO 9303-3 §6 digraph
    /// (AE, OE, UE, AA for Ä/Æ, Ö/Ø, Ü, Å; TH for Þ; SS for ß) may stand for one printed letter that
    /// Tesseract's English model reads as its base (A, O, U, A; Þ as P, ß as B). At most 8 forms.
    static func printedForms(_ mrz: String) -> Set<String> {
        let digraphs: [(String, String)] = [("AE", "A"), ("OE", "O"), ("UE", "U"), ("AA", "A"), ("TH", "P"), ("SS", "B")]
        var forms: Set<String> = [mrz]
        for (d, single) in digraphs where mrz.contains(d) {
            for f in Array(forms) where forms.count < 8 {
                forms.insert(f.replacingOccurrences(of: d, with: single))
            }
        }
        return forms
    }

    /// Compares each MRZ name part (of 2 letters or more) with the printed words. `posteriors` and
    /// `confidences` are the MRZ reading's (`MRZReading`), indexed like the MRZ lines.
    static func compare(_ parts: [MRZNamePart], words: [VisualZoneWord], posteriors: [[[Character: Double]]],
                        confidences: [[Double]]) -> [VisualZoneNamePart] {
        // Every printed word in each of its A–Z forms, with its per-letter confidences when the form
        // keeps the word's letters one for one.
        struct Form { let text: [Character]; let symbols: [Double]?; let confidence: Double }
        var forms: [Form] = []
        for w in words {
            for piece in NameTransliteration.words(w.text) {
                for f in NameTransliteration.forms(piece) {
                    let oneForOne = f.count == w.text.count && w.symbolConfidences.count == f.count
                    forms.append(Form(text: Array(f), symbols: oneForOne ? w.symbolConfidences : nil, confidence: w.confidence))
                }
            }
        }
        let exact = Set(forms.map { String($0.text) })
        return parts.filter { $0.text.count >= 2 }.map { part in
            let a = Array(part.text)
            if !printedForms(part.text).isDisjoint(with: exact) { return VisualZoneNamePart(field: part.field, mrz: part.text, visualZone: part.text, outcome: .agrees) }
            // A part at the end of the field may be truncated there: compare with the printed word's start.
            if part.atFieldEnd, forms.contains(where: { $0.text.count > a.count && Array($0.text.prefix(a.count)) == a }) {
                return VisualZoneNamePart(field: part.field, mrz: part.text, visualZone: part.text, outcome: .agrees)
            }
            var best: (form: Form, alignment: (distance: Int, substitutions: [(Int, Int)], indels: Int))?
            for f in forms where abs(f.text.count - a.count) <= maxDistance(a.count) && f.text.count >= 2 {
                // a printed word that is exactly another MRZ part belongs to that part
                if parts.contains(where: { $0.text == String(f.text) }) { continue }
                let al = align(a, f.text)
                if al.distance <= maxDistance(a.count), best == nil || al.distance < best!.alignment.distance { best = (f, al) }
            }
            guard let best else { return VisualZoneNamePart(field: part.field, mrz: part.text, visualZone: nil, outcome: .notFound) }
            let printed = String(best.form.text)
            // A printed word that is the part's start or end alone (cut at the zone's edge, or split by
            // the recogniser) cannot be compared.
            if best.alignment.substitutions.isEmpty, part.text.hasPrefix(printed) || part.text.hasSuffix(printed) {
                return VisualZoneNamePart(field: part.field, mrz: part.text, visualZone: nil, outcome: .notFound)
            }
            // Settle letter by letter; insertions/deletions cannot be settled from posteriors.
            guard best.alignment.indels == 0 else {
                return VisualZoneNamePart(field: part.field, mrz: part.text, visualZone: printed, outcome: .differs)
            }
            var winners = Set<NameSource>()
            for (i, j) in best.alignment.substitutions {
                let l = part.line, c = part.column + i
                let post = l < posteriors.count && c < posteriors[l].count ? posteriors[l][c] : [:]
                let m = l < confidences.count && c < confidences[l].count ? confidences[l][c] : 0
                let v = post[best.form.text[j]] ?? 0
                let symbol = best.form.symbols.map { $0[j] } ?? best.form.confidence
                if v >= rivalPosterior && symbol >= sureSymbol && m < sureMRZ {
                    winners.insert(.visualZone)
                } else if v < noRival && best.form.confidence < sureWord {
                    winners.insert(.mrz)
                } else {
                    winners.insert(.visualZone); winners.insert(.mrz)   // unsettled
                }
            }
            if winners.count == 1, let w = winners.first {
                return VisualZoneNamePart(field: part.field, mrz: part.text, visualZone: printed, outcome: .settled, winner: w)
            }
            return VisualZoneNamePart(field: part.field, mrz: part.text, visualZone: printed, outcome: .differs)
        }
    }
}

extension DocumentReader {
    /// Resolution of the rectified visual zone given to Tesseract, pixels per millimetre: VIZ text of
    /// 2–3 mm cap height becomes 20–30 px, where Tesseract's LSTM reads best.
    static let visualZonePixelsPerMM = 10.0

    /// Least Tesseract word confidence (0–100) of a captioned word that contradicts an MRZ name part
    /// not found in a data page's visual zone (``CardNameCaptions/contradicting(_:parts:named:minimumConfidence:)``).
    static let contradictingWordConfidence = 85.0

    /// The visual zone of `frame`'s document (TD3/TD2/MRV data pages: right of the portrait zone and
    /// above the MRZ, ICAO 9303-4 §2.3 / 9303-6) cut from `page` and rectified along the MRZ's
    /// direction at `visualZonePixelsPerMM`; nil for TD1 (its names are on the front: `cardCheck`) or
    /// when the zone is off the page.
    public static func visualZoneImage(_ page: GreyImage, frame: MRZDocumentFrame) -> GreyImage? {
        guard !frame.mrzOnBack else { return nil }
        let (w, h) = frame.sizeMM
        let cells = w > 110 ? 44.0 : 36.0
        let docLeft = -((w - cells * 2.54) / 2 + 1.27)
        // Zone V (the portrait) takes the left ~30 % of a TD3/TD2 data page; zones I–II the rest.
        // (Searching only the upper half, where fields 06–07 usually stand, was tried: Tesseract then
        // lost 6 of the 24 specimens' names — its layout analysis needs the whole zone.)
        let a0 = docLeft + 0.3 * w, a1 = docLeft + w - 1.5
        let c0 = -(h - 6) + 2.5, c1 = frame.firstLineAcross - 2.8
        return rectifiedZone(page, frame: frame, along: a0, a1, across: c0, c1)
    }

    /// The printed length (characters, spaces included) of the surname and of the given names as the
    /// MRZ gives them, for `NameLines.readingOrder`; a field the MRZ leaves empty is left out.
    static func printedNameLengths(_ f: MRZFields) -> [Int] {
        [f.surname, f.givenNames].filter { !$0.isEmpty }.map(\.count)
    }

    /// The visual-zone cross-check of `result`'s names (see the top of this file).
    /// `nameLinesFirst`: recognise the lines that fit the MRZ's names first (`DocumentReaderOptions.nameLinesFirst`).
    static func visualZoneCheck(page: GreyImage, reading: MRZReading, result: MRZResult, nameLinesFirst: Bool = true) -> VisualZoneSearch {
        guard let frame = MRZDocumentFrame(reading: reading), let viz = visualZoneImage(page, frame: frame) else { return .noVisualZone }
        let parts = VisualZoneNames.parts(result.lines, format: result.format)
        guard !parts.isEmpty else { return .noVisualZone }
        func compared(_ words: [VisualZoneWord]) -> [VisualZoneNamePart] {
            VisualZoneNames.compare(parts, words: words, posteriors: reading.posteriors, confidences: reading.confidences)
        }
        // The lines read so far settle the names when every part agrees letter for letter (an exact
        // printed word can only stay exact as more words come: reading on would not change it).
        switch VisualZoneRecogniser.shared.names(in: viz, pixelsPerMM: visualZonePixelsPerMM, names: nameLinesFirst ? printedNameLengths(result.fields) : [],
                                                 settled: { compared($0).allSatisfy { $0.outcome == .agrees } }) {
        case let .failure(e): return .recogniserUnavailable(reason: e.reason)
        case let .success((words, _)):
            let c = compared(words)
            guard c.contains(where: { $0.outcome == .notFound }) else { return .compared(c) }
            // A part not found is contradicted by another name the page prints where that field's
            // name stands: under its caption, or — captions unread — on the value line beside the
            // other field's agreeing name (a different name in the MRZ than on the page).
            if let named = CardNameCaptions.valueLineNames(words) {
                if let contradicted = CardNameCaptions.contradicting(c, parts: parts, named: named, minimumConfidence: contradictingWordConfidence) {
                    return .compared(contradicted)
                }
            } else if let contradicted = CardNameCaptions.adjacentLineContradicting(c, parts: parts, words: words, minimumConfidence: contradictingWordConfidence) {
                return .compared(contradicted)
            }
            return .compared(c)
        }
    }
}

extension DocumentReader {
    /// Starts, on a background thread, the one-time work a first reading with `options` would otherwise
    /// do in line: Tesseract's start (its LSTM model, ~0.1 s of one core) for the visual-zone check. A
    /// reading started meanwhile decodes the page and reads the MRZ, then waits for that recogniser
    /// instead of starting its own. For a process that reads one page (`idvd document read`); a server
    /// warms up at start instead. Does nothing when Tesseract is not needed or already started.
    public static func prepare(options: DocumentReaderOptions = .init()) {
        if options.checkVisualZone { VisualZoneRecogniser.shared.prepare() }
    }
}
