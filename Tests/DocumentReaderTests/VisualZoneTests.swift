@testable import DocumentReader
import Foundation
import IDVEngine
import IDVRuntime
import IDVEvidence
import Imaging
import IDVTestSupport
import IDVTools
import MRZ
import XCTest

/// The visual-zone name cross-check (#22): the MRZ's names compared with the names printed in the
/// VIZ, read by Tesseract; a disagreement the reader cannot settle makes the document WARNING with
/// the field named, a settled one records which source won.
final class VisualZoneTests: XCTestCase {
    static let options: DocumentReaderOptions = {
        var o = DocumentReaderOptions()
        o.detectPortrait = false
        o.referenceDate = ISO8601DateFormatter().date(from: "2019-06-01T00:00:00Z")!
        return o
    }()

    func visualZone(_ r: DocumentReport) -> (CheckOutcome, [VisualZoneNamePart])? {
        guard let c = r.check(.namesMatchVisualZone) else { return nil }
        if case let .visualZone(.compared(parts)) = c.measured { return (c, parts) }
        if case let .visualZone(.recogniserUnavailable(reason)) = c.measured { XCTFail("Tesseract unavailable: \(reason)") }
        return (c, [])
    }

    /// A rendered TD3 whose MRZ prints `mrzSurname` where the visual zone prints `id.surname` (and
    /// `mrzGivenNames` for the given names ANNA MARIA, when given).
    func render(surname: String, mrzSurname: String, mrzGivenNames: String? = nil) throws -> (DocumentReport, SpecimenIdentity) {
        var rng = SeededRNG(seed: 11)
        var id = SpecimenIdentity.random(.td3, using: &rng)
        id.surname = surname
        id.givenNames = "ANNA MARIA"
        var mrzID = id
        mrzID.surname = mrzSurname
        if let mrzGivenNames { mrzID.givenNames = mrzGivenNames }
        let spec = try SpecimenGenerator.render(id, format: .td3, pixelsPerMM: 10, mrzLines: mrzID.mrzLines(.td3))
        let jpeg = try DocumentImage(rgb: spec.image).jpeg(maxDimension: 10_000, quality: 92)
        return (DocumentReader.read(pages: [jpeg], options: Self.options), id)
    }

    /// The rendered specimen printing the same name in both zones: every part agrees; no warning from it.
    func testRenderedSpecimenNamesAgree() throws {
        let (r, _) = try render(surname: "KINGDOM", mrzSurname: "KINGDOM")
        let (check, parts) = try XCTUnwrap(visualZone(r))
        XCTAssertEqual(check.result, .passed, "\(parts)")
        XCTAssertEqual(parts.map(\.mrz), ["KINGDOM", "ANNA", "MARIA"])
        XCTAssertEqual(parts.map(\.outcome), [.agrees, .agrees, .agrees])
        XCTAssertFalse(r.findings.contains { if case .nameDiffersFromVisualZone = $0 { return true }; return false })
    }

    /// The MRZ reads KINGOOM (printed so, a clean O: the classifier gives D nothing) while the visual
    /// zone prints KINGDOM: neither side can be shown right, so the document is WARNING and the
    /// warning names the surname and both readings.
    func testMisreadNameIsAWarningNamingTheField() throws {
        let (r, _) = try render(surname: "KINGDOM", mrzSurname: "KINGOOM")
        XCTAssertEqual(r.fields.surname, "KINGOOM")
        let (check, parts) = try XCTUnwrap(visualZone(r))
        XCTAssertEqual(check.result, .failed, "\(parts)")
        XCTAssertEqual(parts.first, VisualZoneNamePart(field: .primaryIdentifier, mrz: "KINGOOM", visualZone: "KINGDOM", outcome: .differs))
        XCTAssertTrue(r.findings.contains(.nameDiffersFromVisualZone(field: .primaryIdentifier, mrz: "KINGOOM", visualZone: "KINGDOM")))
        let judged = r.judged(by: .acceptingSpecimens)
        XCTAssertEqual(judged.status, .warning)
        XCTAssertTrue(judged.warnings.map(DocumentWording.sentence).contains { $0.contains("surname") && $0.contains("KINGOOM") && $0.contains("KINGDOM") })
        // The check digits all hold: nothing but the visual zone could have seen it.
        XCTAssertEqual(r.mrz.result?.checkDigits.allSatisfy(\.valid), true)
    }

    /// An MRZ naming another person than the page (a name far from every printed word, so no part is
    /// found nearby): the name printed under the part's own caption contradicts it. Found by a
    /// fresh-user trial: the page printed NAKAMURA, the MRZ said SMITH, and the document came out
    /// VALID ("1 of 2 parts printed the same"). The surname, a given name, and the whole name.
    func testMRZNamingAnotherPersonIsAWarningNamingTheField() throws {
        let (r, _) = try render(surname: "NAKAMURA", mrzSurname: "SMITH")
        let (check, parts) = try XCTUnwrap(visualZone(r))
        XCTAssertEqual(check.result, .failed, "\(parts)")
        XCTAssertEqual(parts.first, VisualZoneNamePart(field: .primaryIdentifier, mrz: "SMITH", visualZone: "NAKAMURA", outcome: .differs))
        XCTAssertEqual(parts.dropFirst().map(\.outcome), [.agrees, .agrees])
        XCTAssertEqual(r.judged(by: .acceptingSpecimens).status, .warning)
        XCTAssertTrue(r.judged(by: .acceptingSpecimens).warnings.map(DocumentWording.sentence).contains { $0.contains("surname") && $0.contains("SMITH") && $0.contains("NAKAMURA") })

        let (g, _) = try render(surname: "NAKAMURA", mrzSurname: "NAKAMURA", mrzGivenNames: "JOHN")
        let (gc, gparts) = try XCTUnwrap(visualZone(g))
        XCTAssertEqual(gc.result, .failed, "\(gparts)")
        XCTAssertEqual(gparts.map(\.outcome), [.agrees, .differs], "\(gparts)")
        XCTAssertEqual(gparts.last?.field, .secondaryIdentifier)
        XCTAssertEqual(gparts.last?.visualZone, "ANNA MARIA")

        let (w, _) = try render(surname: "NAKAMURA", mrzSurname: "SMITH", mrzGivenNames: "JOHN")
        let (wc, wparts) = try XCTUnwrap(visualZone(w))
        XCTAssertEqual(wc.result, .failed, "\(wparts)")
        XCTAssertEqual(wparts.map(\.outcome), [.differs, .differs], "\(wparts)")
        XCTAssertEqual(w.judged(by: .acceptingSpecimens).status, .warning)
    }

    /// The contradiction rules on words alone. Under captions: only each caption's value line counts
    /// (not the next field's caption and value below it), only confident words (≥ 85), and never a
    /// word that may be a misreading of a part (ONKWO for OKONKWO) or another field's caption word.
    /// Captions unread (a blurred page): the confident line just above an agreeing given name
    /// contradicts a surname not found, and just below an agreeing surname a given name.
    func testContradictionRules() {
        func w(_ t: String, _ l: Int, _ top: Int, _ r: Int, _ b: Int, _ conf: Double = 95) -> VisualZoneWord {
            VisualZoneWord(text: t, confidence: conf, symbolConfidences: [], line: 0, left: l, top: top, right: r, bottom: b)
        }
        let parts = VisualZoneNames.parts(["P<UTOIMPOSTOR<<INGRID<<<<<<<<<<<<<<<<<<<<<<<<<"], format: .td3)
        XCTAssertEqual(parts.map(\.text), ["IMPOSTOR", "INGRID"])
        func outcome(_ words: [VisualZoneWord]) -> [VisualZoneNamePart] {
            let c = VisualZoneNames.compare(parts, words: words, posteriors: [], confidences: [])
            if let named = CardNameCaptions.valueLineNames(words) {
                return CardNameCaptions.contradicting(c, parts: parts, named: named, minimumConfidence: DocumentReader.contradictingWordConfidence) ?? c
            }
            return CardNameCaptions.adjacentLineContradicting(c, parts: parts, words: words, minimumConfidence: DocumentReader.contradictingWordConfidence) ?? c
        }
        let captioned = [w("Surname", 100, 100, 160, 110), w("/", 165, 100, 168, 110), w("Nom", 172, 100, 200, 110),
                         w("OCONNOR", 100, 116, 220, 136),
                         w("Given", 100, 150, 140, 160), w("names", 145, 150, 190, 160), w("INGRID", 100, 166, 200, 186)]
        XCTAssertEqual(outcome(captioned).map(\.outcome), [.differs, .agrees])
        XCTAssertEqual(outcome(captioned).first?.visualZone, "OCONNOR")
        // unsure of the other name: not contradicted
        var unsure = captioned
        unsure[3].confidence = 60
        XCTAssertEqual(outcome(unsure).map(\.outcome), [.notFound, .agrees])
        // the surname's own value line unread, the next field's caption and value below it are no name
        let nextField = [w("Surname", 100, 100, 160, 110), w("Nom", 172, 100, 200, 110),
                         w("Nationality", 100, 114, 170, 122), w("CESKA", 100, 124, 180, 134),
                         w("Given", 300, 100, 340, 110), w("names", 345, 100, 390, 110), w("INGRID", 300, 116, 400, 136)]
        XCTAssertEqual(outcome(nextField).map(\.outcome), [.notFound, .agrees])
        // a piece of the part (its end cut off or split) is a misreading, not another name
        let piece = [w("Surname", 100, 100, 160, 110), w("IMPOST", 100, 116, 200, 136),
                     w("Given", 100, 150, 140, 160), w("INGRID", 100, 166, 200, 186)]
        XCTAssertEqual(outcome(piece).map(\.outcome), [.notFound, .agrees])

        // captions unread (blurred page): the value lines alone
        let uncaptioned = [w("PASSPORT", 100, 20, 250, 40), w("OCONNOR", 100, 100, 220, 120), w("INGRID", 102, 150, 200, 170),
                           w("SWE", 104, 200, 150, 220)]
        XCTAssertEqual(outcome(uncaptioned).map(\.outcome), [.differs, .agrees])
        XCTAssertEqual(outcome(uncaptioned).first?.visualZone, "OCONNOR")
        // nothing above but the header, far away: nothing to contradict
        let headerOnly = [w("PASSPORT", 100, 20, 250, 40), w("INGRID", 102, 150, 200, 170)]
        XCTAssertEqual(outcome(headerOnly).map(\.outcome), [.notFound, .agrees])
        // the given names not found: the line below an agreeing surname
        let givenParts = VisualZoneNames.parts(["P<UTOOCONNOR<<JOHN<<<<<<<<<<<<<<<<<<<<<<<<<<<<"], format: .td3)
        let c = VisualZoneNames.compare(givenParts, words: uncaptioned, posteriors: [], confidences: [])
        let g = CardNameCaptions.adjacentLineContradicting(c, parts: givenParts, words: uncaptioned, minimumConfidence: 85)
        XCTAssertEqual(g?.map(\.outcome), [.agrees, .differs])
        XCTAssertEqual(g?.last?.visualZone, "INGRID")
    }

    /// The settlement rule on its own: a letter the OCR-B classifier gave the printed rival real
    /// weight is settled for the visual zone; one it gave nothing, against a word Tesseract was unsure
    /// of, for the MRZ; a sure MRZ letter against a sure printed word stays unsettled.
    func testSettlementRule() {
        let part = MRZNamePart(field: .primaryIdentifier, text: "KINGOOM", line: 0, column: 5, atFieldEnd: false)
        func posteriors(o: Double, d: Double) -> [[[Character: Double]]] {
            var row = [[Character: Double]](repeating: [:], count: 44)
            row[5 + 4] = ["O": o, "D": d]   // KINGOOM's first O (line 1, column 10)
            return [row, []]
        }
        func confidences(_ o: Double) -> [[Double]] { var row = [Double](repeating: 1, count: 44); row[9] = o; return [row, []] }
        let word = { (conf: Double) in VisualZoneWord(text: "KINGDOM", confidence: conf, symbolConfidences: [Double](repeating: 95, count: 7), line: 0) }
        // The classifier hesitated between O and D: the printed D wins.
        var out = VisualZoneNames.compare([part], words: [word(92)], posteriors: posteriors(o: 0.8, d: 0.19), confidences: confidences(0.8))
        XCTAssertEqual(out, [VisualZoneNamePart(field: .primaryIdentifier, mrz: "KINGOOM", visualZone: "KINGDOM", outcome: .settled, winner: .visualZone)])
        // The classifier was sure of O and Tesseract unsure of the word: the MRZ wins.
        out = VisualZoneNames.compare([part], words: [word(40)], posteriors: posteriors(o: 0.9999, d: 1e-6), confidences: confidences(0.9999))
        XCTAssertEqual(out.first?.winner, .mrz)
        XCTAssertEqual(out.first?.outcome, .settled)
        // Both sure: unsettled.
        out = VisualZoneNames.compare([part], words: [word(93)], posteriors: posteriors(o: 0.9999, d: 1e-6), confidences: confidences(0.9999))
        XCTAssertEqual(out.first?.outcome, .differs)
        // A word two letters off a 7-letter part is still compared; a different word is not.
        out = VisualZoneNames.compare([part], words: [VisualZoneWord(text: "PASSPORT", confidence: 95, symbolConfidences: [], line: 0)],
                                      posteriors: posteriors(o: 0.9, d: 0.1), confidences: confidences(0.9))
        XCTAssertEqual(out.first?.outcome, .notFound)
    }

    /// ICAO 9303-3 §6: printed ÆVARSDÓTTIR / Þuríður / Ösp are AEVARSDOTTIR / THURIDUR / OESP in the
    /// MRZ; printed Müller may be MUELLER or MULLER; O'Neill-Smith is ONEILL and SMITH.
    func testTransliteration() {
        XCTAssertEqual(Set(NameTransliteration.forms("Müller")), ["MUELLER", "MULLER"])
        XCTAssertEqual(NameTransliteration.forms("Ævarsdóttir"), ["AEVARSDOTTIR"])
        XCTAssertEqual(NameTransliteration.forms("Þuríður"), ["THURIDUR"])
        XCTAssertEqual(NameTransliteration.forms("O'Neill"), ["ONEILL"])
        XCTAssertEqual(NameTransliteration.words("O'Neill-Smith, Jr."), ["O'Neill", "Smith", "Jr."])
        XCTAssertEqual(NameTransliteration.forms("España"), ["ESPANA", "ESPANXXA"])
        XCTAssertEqual(NameTransliteration.forms("1971"), [])
        // An English-model recogniser reads Þ as P and drops the diacritics: the MRZ's digraphs may stand for one letter.
        XCTAssertTrue(VisualZoneNames.printedForms("THURIDUR").contains("PURIDUR"))
        XCTAssertTrue(VisualZoneNames.printedForms("AEVARSDOTTIR").contains("AVARSDOTTIR"))
    }

    /// The real specimens (../shared/testdata/mrz-images, see its README): on every TD3/TD2 page the
    /// cross-check runs and finds no unsettled disagreement (all their names are printed as in the MRZ);
    /// on TD1 MRZ sides (no front given) the text above the MRZ is read and never differs. Measured: 24 pages with a visual zone,
    /// 0 unsettled; Tesseract's own misreads (RABROUK, EROKSSON, ULESST, EXIKSSON) settled for the MRZ.
    func testRealSpecimensHaveNoUnsettledDisagreement() throws {
        let tsv = try String(decoding: Paths.sharedData("mrz-images/ground_truth.tsv"), as: UTF8.self)
        var compared = 0, agreeing = 0, td1Sides = 0, td1Confirmed = 0
        for line in tsv.split(separator: "\n") where !line.hasPrefix("#") {
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard cols.count >= 3 else { continue }
            let r = DocumentReader.read(pages: [try Paths.sharedData("mrz-images/" + cols[0])], options: Self.options)
            guard r.mrz.result?.lines == cols[2].split(separator: "|").map(String.init) else { continue }   // misread MRZs are other tests' business
            let (check, parts) = try XCTUnwrap(visualZone(r), cols[0])
            if r.mrz.result?.format == .frenchNationalID {
                XCTAssertEqual(check.result, .notPerformed, cols[0])
                continue
            }
            if r.mrz.result?.format == .td1 {
                // The MRZ side alone: its text above the MRZ is read; no false disagreement there.
                XCTAssertNotEqual(check.result, .failed, "\(cols[0]): \(String(describing: check.measured))")
                td1Sides += 1
                if check.result == .passed { td1Confirmed += 1 }
                continue
            }
            compared += 1
            XCTAssertNotEqual(check.result, .failed, "\(cols[0]): \(parts)")
            if check.result == .passed { agreeing += 1 }
        }
        print("visual zone: \(agreeing) of \(compared) exactly read TD2/TD3 specimens confirmed; TD1 MRZ sides: \(td1Confirmed) of \(td1Sides) confirmed by the text above the MRZ, none differs")
        XCTAssertGreaterThanOrEqual(compared, 15)
        XCTAssertGreaterThanOrEqual(agreeing, compared - 2, "names found in the visual zone on too few specimens")
    }

    // MARK: TD1 cards: the names on the front (ICAO 9303-5)

    /// A rendered TD1 card's two sides, JPEG: the front printing `frontSurname` (default: the
    /// identity's), the back's MRZ printing `mrzSurname` (default: the identity's).
    static func card(seed: UInt64, frontSurname: String? = nil, mrzSurname: String? = nil,
                     portrait: RGBImage? = nil) throws -> (front: Data, back: Data, identity: SpecimenIdentity) {
        var rng = SeededRNG(seed: seed)
        let id = SpecimenIdentity.random(.td1, using: &rng)
        var frontID = id, mrzID = id
        if let frontSurname { frontID.surname = frontSurname }
        if let mrzSurname { mrzID.surname = mrzSurname }
        let back = try SpecimenGenerator.render(id, format: .td1, pixelsPerMM: 10, mrzLines: mrzID.mrzLines(.td1), seed: seed, side: .back)
        let front = try SpecimenGenerator.render(frontID, format: .td1, portrait: portrait, pixelsPerMM: 10, seed: seed, side: .front)
        func jpeg(_ s: Specimen) throws -> Data { try DocumentImage(rgb: s.image).jpeg(maxDimension: 10_000, quality: 92) }
        return (try jpeg(front), try jpeg(back), id)
    }

    /// The card's search evidence and check.
    func cardSearch(_ r: DocumentReport) throws -> (CheckOutcome, VisualZoneSearch) {
        let c = try XCTUnwrap(r.check(.namesMatchVisualZone))
        guard case let .visualZone(search) = c.measured else { XCTFail("\(c.measured)"); return (c, .noVisualZone) }
        if case let .recogniserUnavailable(reason) = search { XCTFail("Tesseract unavailable: \(reason)") }
        return (c, search)
    }

    /// Both sides given (front first, as the KYC upload sends them, and the other way round): every
    /// MRZ name part agrees with the front's captioned names; the front's page is recorded.
    func testCardFrontNamesAgree() throws {
        let card = try Self.card(seed: 7)
        for (pages, frontPage) in [([card.front, card.back], 0), ([card.back, card.front], 1)] {
            let r = DocumentReader.read(pages: pages, options: Self.options)
            XCTAssertEqual(r.mrz.result?.format, .td1)
            let (check, search) = try cardSearch(r)
            guard case let .comparedOnCard(used, parts) = search else { return XCTFail("\(search)") }
            XCTAssertEqual(check.result, .passed, "\(parts)")
            XCTAssertEqual(used, [frontPage])
            let expected = VisualZoneNames.parts(r.mrz.result?.lines ?? [], format: .td1).filter { $0.text.count >= 2 }.map(\.text)
            XCTAssertEqual(parts.map(\.mrz), expected)
            XCTAssertTrue(parts.allSatisfy { $0.outcome == .agrees }, "\(parts)")
        }
    }

    /// The MRZ on the back reads KINGOOM (printed so) where the front prints KINGDOM: the document is
    /// WARNING and the warning names the surname and both readings, as for a TD3.
    func testCardFrontNameDiffersIsAWarningNamingTheField() throws {
        let card = try Self.card(seed: 7, frontSurname: "KINGDOM", mrzSurname: "KINGOOM")
        let r = DocumentReader.read(pages: [card.front, card.back], options: Self.options)
        XCTAssertEqual(r.mrz.result?.checkDigits.allSatisfy(\.valid), true)
        let (check, search) = try cardSearch(r)
        guard case let .comparedOnCard(_, parts) = search else { return XCTFail("\(search)") }
        XCTAssertEqual(check.result, .failed, "\(parts)")
        XCTAssertEqual(parts.first, VisualZoneNamePart(field: .primaryIdentifier, mrz: "KINGOOM", visualZone: "KINGDOM", outcome: .differs))
        XCTAssertTrue(r.findings.contains(.nameDiffersFromVisualZone(field: .primaryIdentifier, mrz: "KINGOOM", visualZone: "KINGDOM")))
        let judged = r.judged(by: .acceptingSpecimens)
        XCTAssertEqual(judged.status, .warning)
        XCTAssertTrue(judged.warnings.map(DocumentWording.sentence).contains { $0.contains("surname") && $0.contains("KINGOOM") && $0.contains("KINGDOM") })
    }

    /// A front whose names are not this MRZ's is a disagreement, not a missing front: another
    /// person's front beside this card's back, and this card's front with only the surname changed,
    /// make the document WARNING with the surname named and the front's words given.
    func testCardFrontOfAnotherPersonIsAWarningNamingTheField() throws {
        let card = try Self.card(seed: 7), other = try Self.card(seed: 8)
        XCTAssertNotEqual(card.identity.surname, other.identity.surname)
        let changed = try Self.card(seed: 7, frontSurname: "NAKAMURA")
        for (pages, printed) in [([other.front, card.back], other.identity.surname), ([changed.front, changed.back], "NAKAMURA")] {
            let r = DocumentReader.read(pages: pages, options: Self.options)
            XCTAssertEqual(r.mrz.result?.valid, true)
            let (check, search) = try cardSearch(r)
            guard case let .comparedOnCard(used, parts) = search else { XCTFail("\(search)"); continue }
            XCTAssertEqual(used.first, 0)
            XCTAssertEqual(check.result, .failed, "\(parts)")
            let surname = try XCTUnwrap(parts.first { $0.field == .primaryIdentifier })
            XCTAssertEqual(surname.outcome, .differs, "\(parts)")
            XCTAssertEqual(surname.mrz, card.identity.surname.split(separator: " ").first.map(String.init))
            XCTAssertTrue(surname.visualZone?.contains(printed.split(separator: " ")[0]) == true, "\(parts)")
            let judged = r.judged(by: .acceptingSpecimens)
            XCTAssertEqual(judged.status, .warning)
            XCTAssertTrue(judged.warnings.map(DocumentWording.sentence).contains { $0.contains("surname") }, "\(judged.warnings)")
        }
    }

    /// The MRZ side alone: its text above the MRZ prints no name, so the check is not performed and
    /// says the front was not given; a front without any of the names says so with its page.
    func testCardWithoutItsFront() throws {
        let card = try Self.card(seed: 7)
        var r = DocumentReader.read(pages: [card.back], options: Self.options)
        var (check, search) = try cardSearch(r)
        XCTAssertEqual(search, .cardFrontNotGiven)
        XCTAssertEqual(check.result, .notPerformed)
        // Another card's back as the "front": none of this card's names on it.
        let other = try Self.card(seed: 8)
        r = DocumentReader.read(pages: [other.back, card.back], options: Self.options)
        (check, search) = try cardSearch(r)
        XCTAssertEqual(check.result, .notPerformed, "\(search)")
        if case .noNamesOnCardFront = search {} else { XCTFail("\(search)") }
        XCTAssertTrue(DocumentWording.detail(check).contains("front"), DocumentWording.detail(check))
        // The policy: a front was given and shows none of the names — the check failed, the page named
        // as a warning; here the "front" is another card's MRZ side, so the two pages are also two
        // documents (INVALID, DocumentFinding.pagesOfDifferentDocuments). With no front given the names
        // are compared with no print: WARNING saying so (#40, idv.doc.require_name_confirmation; it was
        // VALID before, the names merely unchecked).
        let judged = r.judged(by: .acceptingSpecimens)
        XCTAssertEqual(judged.status, .invalid)
        XCTAssertEqual(judged.errors, [.finding(.pagesOfDifferentDocuments(pages: [0, 1]))])
        XCTAssertEqual(judged.checks.first { $0.id == .namesMatchVisualZone }?.result, .failed)
        guard case let .noNamesOnCardFront(frontPage) = search else { return }
        XCTAssertEqual(judged.warnings, [.cardFrontShowsNoName(page: frontPage)])
        XCTAssertTrue(DocumentWording.sentence(.cardFrontShowsNoName(page: 0)).contains("front (page 1)"))
        let backOnly = DocumentReader.read(pages: [card.back], options: Self.options).judged(by: .acceptingSpecimens)
        XCTAssertEqual(backOnly.status, .warning, "\(backOnly.warnings)")
        XCTAssertEqual(backOnly.warnings, [.namesNotCompared(.cardFrontNotGiven)])
    }

    /// Captions locate the name lines: words under "Surname / Nom" and beside "Given names:" are kept,
    /// other words of the card are not; without a caption there is nothing to locate (nil).
    func testCaptionsLocateTheNameLines() {
        func w(_ t: String, _ l: Int, _ top: Int, _ r: Int, _ b: Int) -> VisualZoneWord {
            VisualZoneWord(text: t, confidence: 90, symbolConfidences: [], line: 0, left: l, top: top, right: r, bottom: b)
        }
        let words = [w("Surname", 100, 100, 160, 110), w("/", 165, 100, 168, 110), w("Nom", 172, 100, 200, 110),
                     w("ERIKSSON", 100, 118, 200, 136),
                     w("Given", 100, 200, 140, 210), w("names:", 145, 200, 190, 210), w("ANNA", 200, 198, 250, 212),
                     w("UTOPIA", 300, 20, 400, 50), w("1.72", 100, 300, 140, 315)]
        XCTAssertEqual(CardNameCaptions.nameWords(words)?.map(\.text), ["ERIKSSON", "ANNA"])
        XCTAssertNil(CardNameCaptions.nameWords([w("UTOPIA", 300, 20, 400, 50)]))
    }

    /// Generated TD1 pairs (front + back): no false disagreement, and a corrupted MRZ surname (one
    /// letter changed, check digits still valid) is caught on every card whose front names were found.
    func testGeneratedCardPairs() throws {
        var passed = 0, notPerformed = 0, falseDiffers = 0, caught = 0, corrupted = 0
        for seed in UInt64(300)..<308 {
            let card = try Self.card(seed: seed)
            let r = DocumentReader.read(pages: [card.front, card.back], options: Self.options)
            guard r.mrz.result?.valid == true else { continue }
            let (check, search) = try cardSearch(r)
            switch check.result {
            case .passed: passed += 1
            case .failed: falseDiffers += 1; print("false differs, seed \(seed): \(search)")
            default: notPerformed += 1
            }
            // One letter of the surname's first word changed (V for vowels, A otherwise).
            var letters = Array(card.identity.surname.split(separator: " ")[0])
            letters[1] = "AEIOU".contains(letters[1]) ? "V" : "A"
            let bad = try Self.card(seed: seed, mrzSurname: String(letters) + card.identity.surname.dropFirst(letters.count))
            let rb = DocumentReader.read(pages: [bad.front, bad.back], options: Self.options)
            corrupted += 1
            if rb.check(.namesMatchVisualZone)?.result == .failed { caught += 1 }
        }
        print("TD1 pairs: \(passed) passed, \(notPerformed) not performed, \(falseDiffers) falsely differ; corrupted surnames caught \(caught) of \(corrupted)")
        XCTAssertEqual(falseDiffers, 0)
        XCTAssertGreaterThanOrEqual(passed, 6)
        XCTAssertEqual(caught, corrupted)
    }

    /// Cards whose front has a real photo in its portrait zone (`idvd specimen --sides --portrait`):
    /// read as one block with the photo, Tesseract merged the photo's rows with the name lines and
    /// lost names (a front printing another surname came out VALID, "not performed"; 4 of 30 genuine
    /// cards falsely differed). The text column beside the photo is read instead: every genuine card
    /// passes with no part differing, and on each card whose front prints another surname the
    /// surname, and only the surname, differs (the given names agree, under their own caption).
    /// Measured over seeds 1–30 through `idvd document read`: 30 of 30 genuine passed (27 with every
    /// part found), 30 of 30 changed surnames failed naming the surname, none naming a given name.
    func testCardFrontWithAPhotoPortrait() throws {
        let photo = try DocumentImage.decode(Data(contentsOf: Paths.fixtures.appendingPathComponent("selfie/katie_portrait.jpg"))).rgb
        var genuinePassed = 0, everyPartFound = 0
        for seed in UInt64(1)...6 {
            let card = try Self.card(seed: seed, portrait: photo)
            let r = DocumentReader.read(pages: [card.back, card.front], options: Self.options)
            XCTAssertEqual(r.mrz.result?.format, .td1, "seed \(seed)")
            let (check, search) = try cardSearch(r)
            guard case let .comparedOnCard(_, parts) = search else { XCTFail("seed \(seed): \(search)"); continue }
            XCTAssertFalse(parts.contains { $0.outcome == .differs }, "seed \(seed): \(parts)")
            if check.result == .passed { genuinePassed += 1 }
            if !parts.contains(where: { $0.outcome == .notFound }) { everyPartFound += 1 }

            let changed = try Self.card(seed: seed, frontSurname: "IMPOSTOR", portrait: photo)
            let rc = DocumentReader.read(pages: [changed.back, changed.front], options: Self.options)
            let (cc, cs) = try cardSearch(rc)
            XCTAssertEqual(cc.result, .failed, "seed \(seed): \(cs)")
            guard case let .comparedOnCard(_, cparts) = cs else { XCTFail("seed \(seed): \(cs)"); continue }
            let differing = cparts.filter { $0.outcome == .differs }
            XCTAssertFalse(differing.isEmpty, "seed \(seed): \(cparts)")
            XCTAssertTrue(differing.allSatisfy { $0.field == .primaryIdentifier && $0.visualZone?.contains("IMPOSTOR") == true }, "seed \(seed): \(cparts)")
            XCTAssertEqual(rc.judged(by: .acceptingSpecimens).status == .valid, false, "seed \(seed)")
        }
        print("TD1 cards with a photo portrait: \(genuinePassed) of 6 genuine passed, \(everyPartFound) with every part found")
        XCTAssertEqual(genuinePassed, 6)
        XCTAssertGreaterThanOrEqual(everyPartFound, 5)
    }

    /// A card front photographed turned otherwise than its back (a quarter turn either way, or half
    /// way round): the portrait is still found (the detector finds upright faces only, so the front is
    /// tried at each quarter turn) and its names read. Found by a fresh-user trial: a front turned 90°
    /// came out INVALID, "No portrait found". Over seeds 1-6 through `idvd document read`, fronts turned
    /// 90°, 180° and 270°: the portrait found on 18 of 18, the names passed on 16 (the other two:
    /// none found, a WARNING asking for the front again).
    func testCardFrontTurnedOtherwiseThanItsBack() throws {
        let photo = try DocumentImage.decode(Data(contentsOf: Paths.fixtures.appendingPathComponent("selfie/katie_portrait.jpg"))).rgb
        var options = Self.options
        options.detectPortrait = true
        for (seed, turns) in [(UInt64(2), 1), (UInt64(4), 3), (UInt64(6), 2)] {
            let card = try Self.card(seed: seed, portrait: photo)
            let front = try DocumentImage.decode(card.front).rgb
            let turned = try Imaging.Image(rgb: front.pixels, width: front.width, height: front.height).rotated90(times: turns).jpegData(quality: 92)
            let r = DocumentReader.read(pages: [card.back, turned], options: options)
            XCTAssertEqual(r.check(.portraitFound)?.result, .passed, "seed \(seed), \(turns) quarter turn(s)")
            XCTAssertNotNil(r.portraitJPEG, "seed \(seed)")
            let (check, search) = try cardSearch(r)
            XCTAssertEqual(check.result, .passed, "seed \(seed), \(turns) quarter turn(s): \(search)")
        }
    }

    /// A word's caption line names its field: `Surname / Nom` the surname, `Given names / Prénoms` the
    /// given names, `Name` neither.
    func testCaptionLinesNameTheirField() {
        func w(_ t: String, _ l: Int, _ top: Int, _ r: Int, _ b: Int) -> VisualZoneWord {
            VisualZoneWord(text: t, confidence: 90, symbolConfidences: [], line: 0, left: l, top: top, right: r, bottom: b)
        }
        let words = [w("Surname", 100, 100, 160, 110), w("/", 165, 100, 168, 110), w("Nom", 172, 100, 200, 110),
                     w("IMPOSTOR", 100, 118, 200, 136),
                     w("Given", 100, 150, 140, 160), w("names", 145, 150, 190, 160), w("/", 195, 150, 198, 160), w("Prénoms", 202, 150, 260, 160),
                     w("JOHN", 100, 168, 150, 186),
                     w("Name", 100, 200, 140, 210), w("OTHER", 150, 198, 210, 212)]
        let named = CardNameCaptions.captionedNames(words)
        XCTAssertEqual(named?.map(\.word.text), ["IMPOSTOR", "JOHN", "OTHER"])
        XCTAssertEqual(named?.map(\.field), [.primaryIdentifier, .secondaryIdentifier, nil])
    }

    /// Skipping Tesseract's universal ambiguity table (CTesseract/ambigs.cpp: the legacy engine's, loaded
    /// at every init, never read by LSTM recognition) changes nothing recognised: every word, its
    /// confidence, its symbols' confidences and its line are the same with and without it, on the
    /// rectified visual zones of the real TD2/TD3 specimens; and the skip really takes in this process.
    func testSkippingUniversalAmbiguitiesRecognisesTheSameWords() throws {
        let tsv = try String(decoding: Paths.sharedData("mrz-images/ground_truth.tsv"), as: UTF8.self)
        let before = VisualZoneRecogniser.universalAmbigsSkipped
        let skipping = VisualZoneRecogniser(), loading = VisualZoneRecogniser(universalAmbigs: true)
        var zones = 0, words = 0
        for line in tsv.split(separator: "\n") where !line.hasPrefix("#") {
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard cols.count >= 3 else { continue }
            let image = try DocumentImage.decode(Paths.sharedData("mrz-images/" + cols[0]))
            guard let reading = MRZReader.read(image.grey), let frame = MRZDocumentFrame(reading: reading),
                  let viz = DocumentReader.visualZoneImage(image.grey, frame: frame) else { continue }
            let a = try skipping.words(in: viz, pixelsPerMM: DocumentReader.visualZonePixelsPerMM).get()
            let b = try loading.words(in: viz, pixelsPerMM: DocumentReader.visualZonePixelsPerMM).get()
            XCTAssertEqual(a, b, cols[0])
            zones += 1
            words += a.count
        }
        XCTAssertGreaterThanOrEqual(zones, 15)
        XCTAssertGreaterThan(words, 100)
        XCTAssertEqual(VisualZoneRecogniser.universalAmbigsSkipped, before + 1, "the skipping recogniser was made once, without the table")
    }
}
