internal import CCairo
import DocumentReader
import Foundation
import MRZ

/// The two document layouts the specimen generator renders (ICAO Doc 9303 Part 4 TD3 passport
/// data page 125 × 88 mm; Part 5 TD1 card 85.60 × 53.98 mm).
public enum SpecimenFormat: String, Codable, Sendable, CaseIterable {
    case td1, td3

    /// Characters per MRZ line (TD1 30 × 3, TD3 44 × 2).
    public var lineLength: Int { self == .td1 ? 30 : 44 }
    public var lineCount: Int { self == .td1 ? 3 : 2 }
    /// Physical size in millimetres.
    public var sizeMM: (width: Double, height: Double) { self == .td1 ? (85.6, 53.98) : (125, 88) }
}

/// Which side of a TD1 card a rendering shows (ICAO 9303-5: the names and the portrait on the front,
/// the MRZ on the back). TD3 data pages have one side (`render` ignores the side for them).
public enum SpecimenSide: String, Codable, Sendable, CaseIterable {
    /// Header, portrait and the visual-zone fields with their captions (surname, given names,
    /// nationality, dates, sex, document number); no MRZ.
    case front
    /// A few non-name fields (height, date of issue, authority) above the MRZ.
    case back
}

/// The fictional identity printed on a specimen. Dates are `YYMMDD`; codes are ICAO 9303-3 §5
/// three-letter codes (the generator uses `UTO`, Utopia, and a few real ones).
public struct SpecimenIdentity: Codable, Sendable, Equatable {
    public var documentCode: String      // "P<", "I<", "ID", "AC"…
    public var issuingState: String
    public var surname: String
    public var givenNames: String
    public var documentNumber: String    // up to 9 characters A–Z 0–9
    public var nationality: String
    public var birthDate: String
    public var sex: String               // "M", "F" or "<"
    public var expiryDate: String
    public var optionalData: String      // TD3 personal number (≤ 14) / TD1 line 1 optional (≤ 15)
    public var optionalData2: String     // TD1 line 2 optional (≤ 11); unused in TD3

    public init(documentCode: String, issuingState: String, surname: String, givenNames: String,
                documentNumber: String, nationality: String, birthDate: String, sex: String,
                expiryDate: String, optionalData: String = "", optionalData2: String = "") {
        self.documentCode = documentCode; self.issuingState = issuingState; self.surname = surname
        self.givenNames = givenNames; self.documentNumber = documentNumber; self.nationality = nationality
        self.birthDate = birthDate; self.sex = sex; self.expiryDate = expiryDate
        self.optionalData = optionalData; self.optionalData2 = optionalData2
    }

    /// The ICAO 9303 name field: `SURNAME<<GIVEN<NAMES`, letters only, padded with `<` or truncated to `length`.
    static func nameField(_ surname: String, _ given: String, length: Int) -> String {
        func clean(_ s: String) -> String {
            String(s.uppercased().map { $0 == " " || $0 == "-" ? "<" : $0 }.filter { ("A"..."Z").contains($0) || $0 == "<" })
        }
        var s = clean(surname)
        if !given.isEmpty { s += "<<" + clean(given) }
        return pad(s, length)
    }

    static func pad(_ s: String, _ n: Int) -> String {
        let t = String(s.uppercased().map { $0 == " " ? "<" : $0 }.prefix(n))
        return t + String(repeating: "<", count: n - t.count)
    }

    static func cd(_ s: String) -> String { String(MRZ.checkDigit(s) ?? 0) }

    /// The MRZ lines with ICAO 9303 check digits (Part 4 §4.2.2 for TD3, Part 5 §4.2.2 for TD1).
    public func mrzLines(_ format: SpecimenFormat) -> [String] {
        let code = Self.pad(documentCode, 2), state = Self.pad(issuingState, 3), nat = Self.pad(nationality, 3)
        let doc = Self.pad(documentNumber, 9), dob = Self.pad(birthDate, 6), exp = Self.pad(expiryDate, 6)
        let sx = Self.pad(sex, 1)
        switch format {
        case .td3:
            let l1 = code + state + Self.nameField(surname, givenNames, length: 39)
            let opt = Self.pad(optionalData, 14)
            let docF = doc + Self.cd(doc), dobF = dob + Self.cd(dob), expF = exp + Self.cd(exp), optF = opt + Self.cd(opt)
            let composite = Self.cd(docF + dobF + expF + optF)
            return [l1, docF + nat + dobF + sx + expF + optF + composite]
        case .td1:
            let opt1 = Self.pad(optionalData, 15), opt2 = Self.pad(optionalData2, 11)
            let l1 = code + state + doc + Self.cd(doc) + opt1
            let l2head = dob + Self.cd(dob) + sx + exp + Self.cd(exp) + nat + opt2
            let composite = Self.cd(String(l1.dropFirst(5)) + dob + Self.cd(dob) + exp + Self.cd(exp) + opt2)
            return [l1, l2head + composite, Self.nameField(surname, givenNames, length: 30)]
        }
    }

    private static let surnames = ["ERIKSSON", "VAN DER BERG", "OKONKWO", "NAKAMURA", "GARCIA LOPEZ", "SMITH", "MUELLER",
                                   "KOWALSKA", "DUBOIS", "ROSSI", "HAMALAINEN", "OCONNOR", "PAPADOPOULOS", "NGUYEN",
                                   "SILVA", "JOHANSSON", "MARTIN", "ABDULLAH", "LINDQVIST", "SCHNEIDER", "MONTGOMERY WILLIAMSON"]
    private static let given = ["ANNA MARIA", "JOHN", "LI", "FATIMA", "PIERRE ALAIN", "OLGA", "KWAME", "SOFIA", "MAX",
                                "INGRID", "YUKI", "CARLOS EDUARDO", "ZOE", "AHMED", "ELENA", "BJORN", "CHIDI", "MARIE CLAIRE"]
    private static let states = ["UTO", "UTO", "UTO", "D<<", "FRA", "NLD", "ESP", "ITA", "CAN", "NZL", "GBR", "SWE", "XXA"]

    /// A random fictional identity (deterministic for a seeded generator).
    public static func random(_ format: SpecimenFormat, using rng: inout SeededRNG) -> SpecimenIdentity {
        func pick<T>(_ a: [T]) -> T { a[Int(rng.next() % UInt64(a.count))] }
        func digits(_ n: Int) -> String { String((0..<n).map { _ in Character(String(rng.next() % 10)) }) }
        func date(_ y0: Int, _ y1: Int) -> String {
            let y = y0 + Int(rng.next() % UInt64(y1 - y0 + 1)), m = 1 + Int(rng.next() % 12), d = 1 + Int(rng.next() % 28)
            return String(format: "%02d%02d%02d", y % 100, m, d)
        }
        let alnum = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var docNo = String((0..<2).map { _ in pick(Array("ABCDEFGHJKLMNPRSTUVWXYZ")) }) + digits(6)
        docNo += String(pick(alnum))
        if rng.next() % 4 == 0 { docNo = String(docNo.prefix(8)) }   // shorter numbers end in a filler
        let state = pick(states)
        let nat = rng.next() % 5 == 0 ? pick(states) : state
        let sex = ["M", "F", "F", "M", "<"][Int(rng.next() % 5)]
        let opt = rng.next() % 2 == 0 ? "" : digits(Int(4 + rng.next() % 8))
        return SpecimenIdentity(
            documentCode: format == .td3 ? "P<" : pick(["I<", "ID", "AC", "IR"]),
            issuingState: state, surname: pick(surnames),
            givenNames: pick(given), documentNumber: docNo, nationality: nat,
            birthDate: date(1940, 2006), sex: sex, expiryDate: date(2020, 2036),
            optionalData: opt, optionalData2: format == .td1 && rng.next() % 3 == 0 ? digits(5) : "")
    }
}

/// A rendered specimen: the image, its identity, and the MRZ lines printed on it.
public struct Specimen: Sendable {
    public let format: SpecimenFormat
    public let identity: SpecimenIdentity
    public let mrzLines: [String]
    public var image: RGBImage
}

/// Renders fictional specimen documents with Cairo and the OCR-B font (Debian `fonts-ocr-b`,
/// ISO 1073-2) for integration tests and corpora. The MRZ is 10 characters per inch (pitch 2.54 mm)
/// as ICAO 9303-3 §4.2 requires; the visual zone is an approximation of the ICAO layouts.
public enum SpecimenGenerator {
    /// Pixels per millimetre of the unaugmented rendering (default 12 → TD3 1500 × 1056 px).
    public static let defaultPixelsPerMM = 12.0

    /// Renders `identity` as a `format` document. `portrait` (any size) is centre-cropped into the
    /// portrait box; without one a neutral silhouette is drawn. Pass `mrzLines` to print other text
    /// (e.g. deliberately wrong check digits) in the MRZ. `side` (TD1 only): render the card's front or
    /// back alone, as a real card prints them; nil renders everything on one side (the corpora's layout).
    public static func render(_ identity: SpecimenIdentity, format: SpecimenFormat, portrait: RGBImage? = nil,
                              pixelsPerMM: Double = defaultPixelsPerMM, mrzLines: [String]? = nil,
                              seed: UInt64 = 1, side: SpecimenSide? = nil) throws -> Specimen {
        let side = format == .td1 ? side : nil
        let lines = mrzLines ?? identity.mrzLines(format)
        let (wmm, hmm) = format.sizeMM
        let W = Int((wmm * pixelsPerMM).rounded()), H = Int((hmm * pixelsPerMM).rounded())
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(W), Int32(H))!
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        cairo_scale(cr, pixelsPerMM, pixelsPerMM)   // draw in millimetres
        var rng = SeededRNG(seed: seed)

        // Background: pale tint with a gradient and guilloche curves.
        let tint = format == .td3 ? (0.93, 0.95, 0.90) : (0.90, 0.93, 0.97)
        let grad = cairo_pattern_create_linear(0, 0, wmm, hmm)!
        cairo_pattern_add_color_stop_rgb(grad, 0, tint.0, tint.1, tint.2)
        cairo_pattern_add_color_stop_rgb(grad, 1, tint.0 - 0.04, tint.1 - 0.02, tint.2 + 0.02)
        cairo_set_source(cr, grad)
        cairo_paint(cr)
        cairo_pattern_destroy(grad)
        cairo_set_line_width(cr, 0.12)
        for k in 0..<14 {
            let phase = rng.uniform(0, 6.28), amp = rng.uniform(2, 6), period = rng.uniform(18, 40)
            let y0 = Double(k) * hmm / 14 + 2
            cairo_set_source_rgba(cr, 0.55, 0.7, 0.6, 0.35)
            cairo_move_to(cr, 0, y0 + amp * sin(phase))
            var x = 0.0
            while x <= wmm { cairo_line_to(cr, x, y0 + amp * sin(phase + x / period * 6.28)); x += 1 }
            cairo_stroke(cr)
        }
        // The MRZ clear zone stays white-ish (ICAO 9303-3 §4.2: no background printing that hinders reading).
        let mrzTop = format == .td3 ? hmm - 18.5 : hmm - 17.5
        if side != .front {
            cairo_set_source_rgb(cr, 0.97, 0.97, 0.95)
            cairo_rectangle(cr, 0, mrzTop, wmm, hmm - mrzTop)
            cairo_fill(cr)
        }

        // Header.
        let country = identity.issuingState == "UTO" ? "UTOPIA" : "SPECIMEN · \(identity.issuingState.replacingOccurrences(of: "<", with: ""))"
        let title = format == .td3 ? "PASSPORT / PASSEPORT" : "IDENTITY CARD / CARTE D'IDENTITÉ"
        cairo_set_source_rgb(cr, 0.15, 0.25, 0.45)
        sans(cr, bold: true, size: format == .td3 ? 4.2 : 3.2)
        cairo_move_to(cr, format == .td3 ? 40 : 28, format == .td3 ? 8 : 5.5)
        cairo_show_text(cr, country)
        sans(cr, bold: false, size: format == .td3 ? 2.6 : 2.0)
        cairo_move_to(cr, format == .td3 ? 40 : 28, format == .td3 ? 12 : 8.6)
        cairo_show_text(cr, title)

        if side == .back {
            // The back: fields without names above the MRZ.
            let back: [(String, String)] = [
                ("Height / Taille", String(format: "%.2f m", 1.5 + Double(rng.next() % 45) / 100)),
                ("Date of issue / Date de délivrance", "\(1 + rng.next() % 28) MAR \(String(identity.expiryDate.prefix(2)))"),
                ("Authority / Autorité", "MINISTRY OF THE INTERIOR"),
            ]
            var by = 14.0
            for (label, value) in back {
                cairo_set_source_rgb(cr, 0.35, 0.35, 0.4)
                sans(cr, bold: false, size: 1.05)
                cairo_move_to(cr, 6, by)
                cairo_show_text(cr, label)
                cairo_set_source_rgb(cr, 0.05, 0.05, 0.08)
                sans(cr, bold: true, size: 1.8)
                cairo_move_to(cr, 6, by + 1.95)
                cairo_show_text(cr, value)
                by += 5
            }
        } else {
            // Portrait.
            let (px, py, pw, ph) = portraitBoxMM(format)
            try drawPortrait(cr, portrait, x: px, y: py, w: pw, h: ph)

            // Visual inspection zone fields.
            func date(_ s: String) -> String {
                guard s.count == 6 else { return s }
                let a = Array(s)
                let months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
                let m = Int(String(a[2...3])) ?? 1
                return "\(String(a[4...5])) \(months[max(0, min(11, m - 1))]) \(String(a[0...1]))"
            }
            let fields: [(String, String)] = [
                ("Surname / Nom", identity.surname), ("Given names / Prénoms", identity.givenNames),
                ("Nationality / Nationalité", identity.nationality.replacingOccurrences(of: "<", with: "")),
                ("Date of birth / Date de naissance", date(identity.birthDate)), ("Sex / Sexe", identity.sex == "<" ? "X" : identity.sex),
                ("Document no. / No du document", identity.documentNumber), ("Date of expiry / Date d'expiration", date(identity.expiryDate)),
            ]
            let fx = format == .td3 ? 42.0 : 28.0
            var fy = format == .td3 ? 18.0 : 11.6
            let step = format == .td3 ? 7.6 : 3.55
            for (label, value) in fields {
                cairo_set_source_rgb(cr, 0.35, 0.35, 0.4)
                sans(cr, bold: false, size: format == .td3 ? 1.8 : 1.05)
                cairo_move_to(cr, fx, fy)
                cairo_show_text(cr, label)
                cairo_set_source_rgb(cr, 0.05, 0.05, 0.08)
                sans(cr, bold: true, size: format == .td3 ? 3.0 : 1.8)
                cairo_move_to(cr, fx, fy + (format == .td3 ? 3.4 : 1.95))
                cairo_show_text(cr, value)
                fy += step
            }
        }

        // Machine-readable zone in OCR-B: pitch 2.54 mm (ICAO 9303-3 §4.2.1).
        let pitch = 2.54
        cairo_select_font_face(cr, "OCR B", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        // nominal size from the unhinted advance (measured at size 100 without this context's scale)
        cairo_set_font_size(cr, pitch / OCRBClassifier.fontMetrics.advance)
        cairo_set_source_rgb(cr, 0.02, 0.02, 0.03)
        let left = (wmm - Double(format.lineLength) * pitch) / 2
        let spacing = format == .td3 ? 6.35 : 4.6
        let lastBaseline = hmm - (format == .td3 ? 4.2 : 3.0)
        for (i, line) in lines.enumerated() where side != .front {
            let baseline = lastBaseline - Double(lines.count - 1 - i) * spacing
            for (j, ch) in line.enumerated() {
                cairo_move_to(cr, left + Double(j) * pitch, baseline)
                cairo_show_text(cr, String(ch))
            }
        }
        let image = try Raster.rgb(from: surface)
        return Specimen(format: format, identity: identity, mrzLines: lines, image: image)
    }

    /// The portrait box (x, y, width, height) in millimetres from the document's top-left corner.
    public static func portraitBoxMM(_ format: SpecimenFormat) -> (x: Double, y: Double, width: Double, height: Double) {
        format == .td3 ? (6.0, 16.0, 32.0, 40.0) : (3.5, 10.5, 22.0, 27.0)
    }

    /// The printed portrait cut out of an unaugmented rendering at `pixelsPerMM` (what the chip's DG2 holds).
    public static func portrait(of specimen: Specimen, pixelsPerMM: Double = defaultPixelsPerMM) -> RGBImage {
        let b = portraitBoxMM(specimen.format)
        let x0 = Int((b.x * pixelsPerMM).rounded()) + 2, y0 = Int((b.y * pixelsPerMM).rounded()) + 2
        let w = min(Int((b.width * pixelsPerMM).rounded()) - 4, specimen.image.width - x0)
        let h = min(Int((b.height * pixelsPerMM).rounded()) - 4, specimen.image.height - y0)
        var out = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            let src = ((y0 + y) * specimen.image.width + x0) * 3
            out.replaceSubrange(y * w * 3..<(y + 1) * w * 3, with: specimen.image.pixels[src..<src + w * 3])
        }
        return RGBImage(width: w, height: h, pixels: out)
    }

    private static func sans(_ cr: OpaquePointer, bold: Bool, size: Double) {
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, size)
    }

    private static func drawPortrait(_ cr: OpaquePointer, _ portrait: RGBImage?, x: Double, y: Double, w: Double, h: Double) throws {
        cairo_save(cr)
        cairo_rectangle(cr, x, y, w, h)
        cairo_clip(cr)
        if let portrait, portrait.width > 0, portrait.height > 0 {
            let s = Raster.surface(from: portrait)
            defer { cairo_surface_destroy(s) }
            // centre-crop to the box aspect ratio
            let scale = max(w / Double(portrait.width), h / Double(portrait.height))
            cairo_translate(cr, x + (w - Double(portrait.width) * scale) / 2, y + (h - Double(portrait.height) * scale) / 2)
            cairo_scale(cr, scale, scale)
            cairo_set_source_surface(cr, s, 0, 0)
            cairo_paint(cr)
        } else {
            cairo_set_source_rgb(cr, 0.82, 0.85, 0.88)
            cairo_paint(cr)
            cairo_set_source_rgb(cr, 0.45, 0.48, 0.52)
            cairo_save(cr)   // head
            cairo_translate(cr, x + w / 2, y + h * 0.38)
            cairo_scale(cr, w * 0.22, h * 0.22)
            cairo_arc(cr, 0, 0, 1, 0, 2 * Double.pi)
            cairo_restore(cr)
            cairo_fill(cr)
            cairo_save(cr)   // shoulders
            cairo_translate(cr, x + w / 2, y + h * 1.02)
            cairo_scale(cr, w * 0.48, h * 0.36)
            cairo_arc(cr, 0, 0, 1, 0, 2 * Double.pi)
            cairo_restore(cr)
            cairo_fill(cr)
        }
        cairo_restore(cr)
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.35)
        cairo_set_line_width(cr, 0.2)
        cairo_rectangle(cr, x, y, w, h)
        cairo_stroke(cr)
    }
}
