import FaceKit
import Foundation
import MRZ
import XCTest
@testable import DocumentReader
import Imaging
import IDVTools
import IDVReaders
import IDVEngine
import IDVRuntime
import IDVTestSupport

/// Paths relative to the package root.
enum Paths {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent("Tests/Fixtures")
    static let shared = root.appendingPathComponent("../shared/testdata").standardized

    /// The bytes of `relativePath` under ../shared/testdata; throws ``TestData/missing(_:)`` (a skip locally, a failure under CI) naming the file when
    /// the shared test data is not there (a checkout without it skips, visibly, instead of failing).
    static func sharedData(_ relativePath: String) throws -> Data {
        let url = shared.appendingPathComponent(relativePath)
        guard let data = try? Data(contentsOf: url) else { throw TestData.missing("shared test data not found at \(url.path); skipping \(url.lastPathComponent)") }
        return data
    }
}

final class DocumentReaderTests: XCTestCase {
    /// MRZ tests: no portrait search and no visual-zone cross-check (VisualZoneTests covers it; Tesseract
    /// on each of the corpus's 260 TD3 pages would add minutes to the suite).
    static let noFace: DocumentReaderOptions = { var o = DocumentReaderOptions(); o.detectPortrait = false; o.checkVisualZone = false; return o }()
    /// Before every generated expiry date (2020…2036) and after every birth date (…2006).
    static let corpusOptions: DocumentReaderOptions = {
        var o = noFace
        o.referenceDate = ISO8601DateFormatter().date(from: "2019-06-01T00:00:00Z")!
        return o
    }()

    func jpeg(_ image: RGBImage, quality: Int = 90) throws -> Data {
        try DocumentImage(rgb: image).jpeg(maxDimension: 10_000, quality: quality)
    }

    /// The generated corpus: 520 documents (TD1 and TD3 alternately, random identities, every
    /// augmentation: any rotation including 90°/180°/270°, perspective, blur, noise, JPEG-style
    /// quantisation, lighting gradient, cluttered background), saved as JPEG and read back.
    /// Each document should either come out with every MRZ line exact, or be reported invalid;
    /// wrong readings that pass (errors no check digit can see) must stay under 2 %. At least 92 % must be exact, and
    /// at most 10 % of the exact readings may be rejected as unclear (measured 502/520 = 96.5 % and 18/502 = 3.6 %
    /// in session 3, was 71.7 % and 20 %; the goal is 99 %, see bench/DOCUMENT-BENCH.md).
    func testGeneratedCorpusFieldsExactOrHonestlyInvalid() throws {
        let count = 520
        var exact = 0, exactButRejected = 0, wrongButValid: [String] = [], failures: [String] = []
        for seed in 0..<UInt64(count) {
            var rng = SeededRNG(seed: 10_000 + seed)
            let format: SpecimenFormat = seed % 2 == 0 ? .td1 : .td3
            let id = SpecimenIdentity.random(format, using: &rng)
            var spec = try SpecimenGenerator.render(id, format: format, pixelsPerMM: 9, seed: seed)
            var aug = Augmentation.random(using: &rng)
            aug.canvasWidth = 1200; aug.canvasHeight = 900
            spec.image = aug.apply(to: spec.image, seed: seed)
            let report = DocumentReader.read(pages: [try jpeg(spec.image)], options: Self.corpusOptions)
            let got = report.mrz.result?.lines ?? []
            if got == spec.mrzLines {
                exact += 1
                XCTAssertEqual(report.fields.documentNumber, id.documentNumber)
                XCTAssertEqual(report.fields.raw["birth_date"], id.birthDate)
                if report.overallStatus == .invalid { exactButRejected += 1 }
            } else {
                failures.append("seed \(seed) rot \(Int(aug.rotationDegrees)) got \(got)")
                if report.overallStatus != .invalid { wrongButValid.append("seed \(seed): \(got) vs \(spec.mrzLines)") }
            }
        }
        print("generated corpus: \(exact)/\(count) exact; \(exactButRejected) exact readings rejected as unclear")
        XCTAssertLessThanOrEqual(Double(exactButRejected), 0.10 * Double(exact), "too many correct readings rejected as unclear")
        failures.prefix(10).forEach { print("  ", $0) }
        wrongButValid.forEach { print("  wrong but not INVALID:", $0) }
        // Measured 6/520 before the K/< rule: errors no check digit can see (a K for a final
        // filler, a confident wrong letter in a name or code). Keep them rare.
        XCTAssertLessThanOrEqual(wrongButValid.count, count / 50, "readings that are wrong but not reported INVALID")
        XCTAssertGreaterThanOrEqual(Double(exact) / Double(count), 0.92, "exact rate fell below the measured level (see the note)")
    }

    /// A document printed with a wrong check digit is INVALID and names the failed check; it is
    /// not "corrected" into a valid one.
    /// Pages of two different documents sent together (found by a fresh-user trial: two passports of
    /// two people came out VALID, the second MRZ ignored): each MRZ checks out, so the document is
    /// INVALID with the pages named. The same page twice, or a page with a card's front that has no
    /// MRZ, is one document.
    func testPagesOfTwoDocumentsAreInvalid() throws {
        var options = Self.noFace
        options.referenceDate = ISO8601DateFormatter().date(from: "2019-06-01T00:00:00Z")!
        var rng = SeededRNG(seed: 91)
        let a = SpecimenIdentity.random(.td3, using: &rng), b = SpecimenIdentity.random(.td3, using: &rng)
        XCTAssertNotEqual(a.documentNumber, b.documentNumber)
        let pageA = try jpeg(SpecimenGenerator.render(a, format: .td3).image), pageB = try jpeg(SpecimenGenerator.render(b, format: .td3).image)
        let two = DocumentReader.read(pages: [pageA, pageB], options: options)
        XCTAssertTrue(two.findings.contains(.pagesOfDifferentDocuments(pages: [0, 1])), "\(two.findings)")
        XCTAssertEqual(two.overallStatus, .invalid)
        XCTAssertTrue(two.errors.contains { $0.contains("Pages 1 and 2") && $0.contains("two different documents") }, "\(two.errors)")
        let same = DocumentReader.read(pages: [pageA, pageA], options: options)
        XCTAssertFalse(same.findings.contains { if case .pagesOfDifferentDocuments = $0 { return true }; return false }, "\(same.findings)")
        XCTAssertEqual(same.overallStatus, .valid, "\(same.findings)")
    }

    func testWrongCheckDigitIsInvalidNotCorrected() throws {
        var rng = SeededRNG(seed: 77)
        let id = SpecimenIdentity.random(.td3, using: &rng)
        var lines = id.mrzLines(.td3)
        var l2 = Array(lines[1])
        l2[19] = l2[19] == "9" ? "0" : Character(String((Int(String(l2[19]))! + 1) % 10))   // birth-date check digit
        lines[1] = String(l2)
        let spec = try SpecimenGenerator.render(id, format: .td3, mrzLines: lines)
        let report = DocumentReader.read(pages: [try jpeg(spec.image)], options: Self.noFace)
        XCTAssertEqual(report.mrz.linesRead, lines)
        XCTAssertEqual(report.overallStatus, .invalid)
        XCTAssertEqual(report.checks.first { $0.name == "MRZ check digit: birth date" }?.result, .failed)
        XCTAssertFalse(report.errors.isEmpty)
    }

    /// A document number with one character altered, printed and read without doubt, is INVALID with
    /// its check digit failed: no look-alike swap elsewhere in the number is made to fit the check
    /// digit, although the composite, which moves with the number's sum, would agree. The altered
    /// MRZs are the fresh-user trial (`GC3664958`, made valid as `G<3664958`), edits of ICAO's
    /// `L898902C3` that the text path made valid by 8→B, 0→O and C→<, 2→Z, 5→S, and two that this
    /// path made valid by a look-alike the classifier never offered: a printed O read as 0 (the
    /// number ICAO printed, not the one on this page) and a printed Z read as 2 (`L89890223`, which
    /// no one printed: C and 2 weigh the same modulo 10).
    func testAlteredDocumentNumberIsInvalidNotCorrected() throws {
        let icao1 = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", tail = "UTO7408122F1204159ZE184226B<<<<<10"
        let cases = [["P<NLDGARCIA<LOPEZ<<JOHN<<<<<<<<<<<<<<<<<<<<<", "GC36649585NLD5804122<3403015<<<<<<<<<<<<<<08"],
                     [icao1, "4898902C36" + tail], [icao1, "7898902C36" + tail], [icao1, "L89F902C36" + tail], [icao1, "L598902C36" + tail],
                     [icao1, "L8989O2C36" + tail], [icao1, "L898902Z36" + tail]]
        var options = Self.noFace
        options.referenceDate = ISO8601DateFormatter().date(from: "2010-01-01T00:00:00Z")!
        var rng = SeededRNG(seed: 10)
        let id = SpecimenIdentity.random(.td3, using: &rng)
        for lines in cases {
            let spec = try SpecimenGenerator.render(id, format: .td3, mrzLines: lines)
            let report = DocumentReader.read(pages: [try jpeg(spec.image)], options: options)
            XCTAssertEqual(report.mrz.linesRead, lines)
            XCTAssertEqual(report.mrz.result?.corrections, [], "\(lines[1])")
            XCTAssertEqual(report.mrz.result?.lines, lines)
            XCTAssertEqual(report.overallStatus, .invalid, "\(lines[1])")
            XCTAssertEqual(report.checks.first { $0.name == "MRZ check digit: document number" }?.result, .failed, "\(lines[1])")
        }
    }

    /// Renders a TD3 specimen printing exactly `lines` and reads it back (no portrait; today = 2019-06-01).
    func readPrinted(_ lines: [String]) throws -> DocumentReport {
        var rng = SeededRNG(seed: 5)
        let id = SpecimenIdentity.random(.td3, using: &rng)
        let spec = try SpecimenGenerator.render(id, format: .td3, mrzLines: lines)
        let report = DocumentReader.read(pages: [try jpeg(spec.image)], options: Self.corpusOptions)
        XCTAssertEqual(report.mrz.linesRead, lines)
        XCTAssertEqual(report.mrz.result?.checkDigits.allSatisfy(\.valid), true, "the test MRZ must have valid check digits")
        return report
    }

    func result(_ r: DocumentReport, _ name: String) -> CheckOutcome? { r.checks.first { $0.name == name } }

    /// Every INVALID verdict has a FAILED check naming why, and an error sentence.
    func assertExplained(_ r: DocumentReport, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.overallStatus, .invalid, file: file, line: line)
        XCTAssertFalse(r.checks.filter { $0.result == .failed }.isEmpty, "INVALID without a failed check", file: file, line: line)
        XCTAssertFalse(r.errors.isEmpty, file: file, line: line)
    }

    static let name1 = "P<NLDDOE<<JANE<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<"

    /// ICAO 9303-3: an expiry date all fillers cannot show the document in force (INVALID); an
    /// unknown date of birth (fillers) is allowed (WARNING). Check digits of these lines hold.
    func testExpiryDateInFillersIsInvalidAndBirthDateInFillersAWarning() throws {
        let r = try readPrinted([Self.name1, "AB12345671NLD<<<<<<0F<<<<<<0<<<<<<<<<<<<<<08"])
        assertExplained(r)
        XCTAssertNil(r.fields.expiryDate)
        XCTAssertEqual(result(r, "Document not expired")?.result, .failed)
        XCTAssertEqual(result(r, "Document not expired")?.detail, "The MRZ has no expiry date.")
        XCTAssertEqual(result(r, "Birth date plausible")?.result, .notPerformed)
        XCTAssertTrue(r.warnings.contains("The date of birth is not given."), "\(r.warnings)")
        // Birth date unknown alone: WARNING, not INVALID.
        let b = try readPrinted([Self.name1, "AB12345671NLD<<<<<<0F3012316<<<<<<<<<<<<<<06"])
        XCTAssertEqual(b.fields.expiryDate, "2030-12-31")
        XCTAssertEqual(result(b, "Document not expired")?.result, .passed)
        XCTAssertEqual(b.overallStatus, .warning)
        XCTAssertEqual(b.warnings, ["The date of birth is not given."])
        XCTAssertTrue(b.errors.isEmpty, "\(b.errors)")
    }

    /// ICAO 9303-3/-4: the document number and the primary identifier are mandatory.
    func testMissingDocumentNumberOrSurnameIsInvalid() throws {
        let s = try readPrinted(["P<NLD<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<", "AB12345671NLD9001011F3012316<<<<<<<<<<<<<<06"])
        assertExplained(s)
        XCTAssertEqual(s.fields.surname, "")
        XCTAssertEqual(result(s, "Required fields present")?.result, .failed)
        XCTAssertEqual(result(s, "Required fields present")?.detail, "The MRZ has no primary identifier (surname): ICAO 9303 makes it mandatory.")
        let n = try readPrinted([Self.name1, "<<<<<<<<<0NLD9001011F3012316<<<<<<<<<<<<<<08"])
        assertExplained(n)
        XCTAssertEqual(n.fields.documentNumber, "")
        XCTAssertEqual(result(n, "Required fields present")?.detail, "The MRZ has no document number: ICAO 9303 makes it mandatory.")
        let ok = try readPrinted([Self.name1, "AB12345671NLD9001011F3012316<<<<<<<<<<<<<<06"])
        XCTAssertEqual(ok.overallStatus, .valid)
        XCTAssertEqual(result(ok, "Required fields present")?.result, .passed)
        XCTAssertEqual(result(ok, "MRZ fields well-formed")?.result, .passed)
    }

    /// Measured pixel values appear in the JSON rounded to 0.01 px (not 31.99999999999998).
    func testCapHeightInTheJSONIsRoundedToHundredths() throws {
        let r = try readPrinted([Self.name1, "AB12345671NLD9001011F3012316<<<<<<<<<<<<<<06"])
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(DocumentReportJSON(r, judged: r.judgement))) as? [String: Any]
        let cap = try XCTUnwrap((json?["mrz"] as? [String: Any])?["cap_height_pixels"] as? Double)
        XCTAssertGreaterThan(cap, 8)
        XCTAssertEqual(cap, (r.mrz.capHeightPixels * 100).rounded() / 100)
        XCTAssertEqual(cap * 100, (cap * 100).rounded(), accuracy: 1e-6)
    }

    /// ICAO 9303-3 §4.7: sex is F, M or `<`; a Q makes the document INVALID through a visible failed check.
    func testSexOutsideFMFillerFailsAVisibleCheck() throws {
        let r = try readPrinted([Self.name1, "AB12345671NLD9001011Q3012316<<<<<<<<<<<<<<06"])
        assertExplained(r)
        let c = result(r, "MRZ fields well-formed")
        XCTAssertEqual(c?.result, .failed)
        XCTAssertEqual(c?.category, "MRZ")
        XCTAssertEqual(c?.detail, "Not allowed by ICAO 9303-3: the sex field holds 'Q' at line 2 column 21 but ICAO 9303-3 allows only F, M or <.")
        XCTAssertTrue(r.errors.contains { $0.contains("sex field holds 'Q'") }, "\(r.errors)")
    }

    func testEXIFRotatedPhotoIsReadUpright() throws {
        let data = try Data(contentsOf: Paths.fixtures.appendingPathComponent("documents/td3-exif-orientation-6.jpg"))
        let report = DocumentReader.read(pages: [data], options: Self.noFace)
        XCTAssertEqual(report.mrz.result?.lines, ["P<D<<KOWALSKA<<MARIE<CLAIRE<<<<<<<<<<<<<<<<<",
                                                  "RC39169520D<<7703207M301223563196914179<<<82"])
        XCTAssertLessThan(min(report.mrz.angleDegrees, 360 - report.mrz.angleDegrees), 3)
        XCTAssertEqual(report.fields.surname, "KOWALSKA")
    }

    func testQuarterTurnsAreRead() throws {
        var rng = SeededRNG(seed: 5)
        let id = SpecimenIdentity.random(.td1, using: &rng)
        let spec = try SpecimenGenerator.render(id, format: .td1, pixelsPerMM: 10)
        for (turn, expectedAngle) in [(1, 90.0), (2, 180.0), (3, 270.0)] {   // clockwise turns
            let g = spec.image.grey.rotated(quarterTurns: turn)
            let r = try XCTUnwrap(MRZReader.read(g), "turn \(turn)")
            XCTAssertEqual(MRZParser().parse(r.lines, alternatives: r.alternatives).lines, spec.mrzLines, "turn \(turn)")
            XCTAssertEqual(r.angleDegrees, expectedAngle, accuracy: 3, "turn \(turn)")
        }
    }

    func testImageWithoutDocument() throws {
        var rng = SeededRNG(seed: 1)
        var px = [UInt8](repeating: 0, count: 640 * 480 * 3)
        for i in px.indices { px[i] = UInt8(100 + Int(rng.next() % 60)) }
        let report = DocumentReader.read(pages: [try jpeg(RGBImage(width: 640, height: 480, pixels: px))], options: Self.noFace)
        XCTAssertFalse(report.mrz.found)
        XCTAssertEqual(report.overallStatus, .invalid)
        XCTAssertEqual(report.checks.first { $0.name == "MRZ present" }?.result, .failed)
        XCTAssertTrue(report.errors.contains { $0.contains("No machine-readable zone") })
    }

    func testFacePhotoWithoutMRZ() throws {
        let data = try Data(contentsOf: Paths.fixtures.appendingPathComponent("faces/obama-480p.jpg"))
        let report = DocumentReader.read(pages: [data])
        XCTAssertFalse(report.mrz.found)
        XCTAssertEqual(report.overallStatus, .invalid)
        XCTAssertEqual(report.pagesJPEG.count, 1)
        if (try? FaceEngine.shared()) != nil {
            XCTAssertEqual(report.checks.first { $0.name == "Portrait found" }?.result, .passed)
            XCTAssertNotNil(report.portraitJPEG)
        }
    }

    func testTruncatedEmptyAndNonImageInput() throws {
        let data = try Data(contentsOf: Paths.fixtures.appendingPathComponent("documents/td3-exif-orientation-6.jpg"))
        for (label, bytes) in [("truncated", data.prefix(data.count / 2)), ("empty", Data()), ("text", Data("hello".utf8))] {
            let report = DocumentReader.read(pages: [Data(bytes)], options: Self.noFace)
            XCTAssertEqual(report.overallStatus, .invalid, label)
            XCTAssertFalse(report.mrz.found, label)
            XCTAssertTrue(report.errors.first?.hasPrefix("Page 1 could not be read as an image") == true, "\(label): \(report.errors)")
        }
    }

    func testSeedShapes() throws {
        var rng = SeededRNG(seed: 11)
        let id = SpecimenIdentity(documentCode: "P<", issuingState: "UTO", surname: "ERIKSSON", givenNames: "ANNA MARIA",
                                  documentNumber: "L898902C3", nationality: "UTO", birthDate: "740812", sex: "F",
                                  expiryDate: "340415", optionalData: "ZE184226B")
        _ = rng.next()
        let portrait = try DocumentImage.decode(Data(contentsOf: Paths.fixtures.appendingPathComponent("faces/obama-480p.jpg"))).rgb
        let spec = try SpecimenGenerator.render(id, format: .td3, portrait: portrait)
        var options = DocumentReaderOptions()
        options.referenceDate = ISO8601DateFormatter().date(from: "2026-01-01T00:00:00Z")!
        let report = DocumentReader.read(pages: [try jpeg(spec.image)], options: options)
        let s2 = report.seed002.response_data
        XCTAssertEqual(s2.document_info.surname, "ERIKSSON")
        XCTAssertEqual(s2.document_info.given_name, "ANNA MARIA")
        XCTAssertEqual(s2.document_info.name, "ANNA MARIA ERIKSSON")
        XCTAssertEqual(s2.document_info.date_of_birth, "1974-08-12")
        XCTAssertEqual(s2.document_info.expiry_date, "2034-04-15")
        XCTAssertEqual(s2.document_info.document_type, "PASSPORT")
        XCTAssertEqual(s2.document_pages.count, 1)
        XCTAssertEqual(s2.checks_performed.first { $0.check_name == "Chip verification" }?.result, "NOT_PERFORMED")
        let faces = (try? FaceEngine.shared()) != nil
        // The ICAO example number starts with L, which the check digit cannot tell from 1 (both 1
        // modulo 10). Read with certainty (the classifier gave '1' < twinDoubtConfidence), it is not
        // in doubt: no warning about it, and the verdict is VALID unless another warning stands.
        XCTAssertTrue(report.mrz.doubtfulTwins.isEmpty, "\(report.mrz.doubtfulTwins)")
        XCTAssertFalse(s2.warnings.contains { $0.contains("holds 'L'") }, "\(s2.warnings)")
        XCTAssertEqual(report.overallStatus, s2.warnings.isEmpty ? .valid : .warning, "\(s2.errors) \(s2.warnings)")
        XCTAssertEqual(s2.overall_status, report.overallStatus.rawValue)
        if faces { XCTAssertEqual(report.overallStatus, .valid, "\(s2.warnings)") }
        XCTAssertEqual(s2.errors, [])
        if faces { XCTAssertNotNil(s2.document_info.portrait_image) }
        let s3 = report.seed003
        XCTAssertEqual(s3.identity_data["Surname and given names"], "ERIKSSON ANNA MARIA")
        XCTAssertEqual(s3.document_info.document_number, "L898902C3")
        // the rows the server's onIDVAdditionalDocumentScan carries (a fresh-user trial found them missing here)
        XCTAssertEqual(s3.identity_data["Document number"], "L898902C3")
        XCTAssertEqual(s3.identity_data["Issuing state code"], "UTO")
        XCTAssertEqual(s3.identity_data["Date of expiry"], "2034-04-15")
        XCTAssertNil(s3.document_info.issue_date)
        XCTAssertEqual(s3.document_status.overall_document_status, report.overallStatus == .valid ? "OK" : "WARNING")
        XCTAssertEqual(s3.document_status.checks_performed.first { $0.check_name == "Chip verification" }?.check_status, "NOT DONE")
        // JSON round trip of both shapes
        let d2 = try JSONEncoder().encode(report.seed002)
        let obj = try JSONSerialization.jsonObject(with: d2) as? [String: Any]
        XCTAssertNotNil((obj?["response_data"] as? [String: Any])?["document_info"])
        XCTAssertEqual(try JSONDecoder().decode(Seed003DocumentScan.self, from: JSONEncoder().encode(s3)), s3)
    }

    /// Every image of ../shared/testdata/mrz-images with a ground-truth row: the MRZ lines are
    /// exact, or the report is INVALID and names a failed check. The specimens printed with wrong
    /// check digits must come out INVALID. Prints the exact count (the benchmark reports it too).
    func testRealSpecimens() throws {
        let tsv = Paths.shared.appendingPathComponent("mrz-images/ground_truth.tsv")
        guard let text = try? String(contentsOf: tsv, encoding: .utf8) else {
            throw TestData.missing("shared test data not found at \(tsv.path); skipping the real specimens")
        }
        var exact = 0, total = 0
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard cols.count >= 4 else { continue }
            let data = try Data(contentsOf: tsv.deletingLastPathComponent().appendingPathComponent(cols[0]))
            let expected = cols[2].split(separator: "|").map(String.init)
            let report = DocumentReader.read(pages: [data], options: Self.noFace)
            total += 1
            let got = report.mrz.result?.lines ?? []
            if got == expected {
                exact += 1
            } else {
                XCTAssertEqual(report.overallStatus, .invalid, "\(cols[0]) read wrongly but not reported invalid: \(got)")
                XCTAssertTrue(report.checks.contains { $0.result == .failed } || !report.errors.isEmpty, cols[0])
            }
            if cols[3].hasPrefix("INVALID") {
                XCTAssertEqual(report.overallStatus, .invalid, "\(cols[0]) is printed with wrong check digits")
                XCTAssertFalse(report.mrz.result?.valid ?? false, cols[0])
            }
        }
        print("real specimens: \(exact)/\(total) exact")
        XCTAssertGreaterThanOrEqual(exact, 22, "regression: fewer real specimens read exactly than measured (22/33)")
    }

    /// The Icelandic specimen (truth `A0000000<0ISL6612315F…`) was read `A00000OOK0ISL…` (today,
    /// with per-document adaptation, `A00000OO<0ISL…`): two O/0
    /// swaps cancel in the 7-3-1 sum and K/< weigh the same, so every check digit holds. Before the
    /// expiry date the report must still not be VALID: the parser's K/< ambiguity reaches
    /// `warnings` in plain words, the O/0 mix is flagged, and the K the classifier doubted
    /// (runner-up `<`) is unclear, so the verdict is INVALID.
    func testCheckDigitInvisibleMisreadIsNotValid() throws {
        let data = try Data(contentsOf: Paths.fixtures.appendingPathComponent("documents/pass-isl-specimen.png"))
        var options = Self.noFace
        options.referenceDate = ISO8601DateFormatter().date(from: "2005-01-01T00:00:00Z")!   // before expiry 2009-05-26
        let report = DocumentReader.read(pages: [data], options: options)
        let truth = "A0000000"
        XCTAssertEqual(report.fields.expired, false)
        if report.fields.documentNumber == truth {
            XCTAssertNotEqual(report.overallStatus, .invalid, "read exactly: \(report.errors)")
            return
        }
        if report.fields.documentNumber == "A00000OO" {
            // Adapted to this document's own fillers, the reader takes the bold `<` for `<`; the two
            // O/0 swaps still cancel in the 7-3-1 sum, so only the O/0 mix can give it away.
            XCTAssertTrue(report.mrz.result?.valid ?? false, "every check digit holds for the misreading")
            XCTAssertNotEqual(report.overallStatus, .valid)
            XCTAssertTrue(report.warnings.contains { $0.contains("mixes the letter O and the digit 0") }, "\(report.warnings)")
            return
        }
        XCTAssertEqual(report.fields.documentNumber, "A00000OOK", "the misreading this test is about")
        XCTAssertTrue(report.mrz.result?.valid ?? false, "every check digit holds for the misreading")
        XCTAssertNotEqual(report.overallStatus, .valid)
        XCTAssertEqual(report.overallStatus, .invalid, "the doubted K makes the MRZ unreadable")
        XCTAssertTrue(report.warnings.contains { $0.contains("document number holds 'K'") && $0.contains("could also be '<'") }, "\(report.warnings)")
        XCTAssertTrue(report.warnings.contains { $0.contains("mixes the letter O and the digit 0") }, "\(report.warnings)")
        XCTAssertTrue(report.mrz.doubtfulTwins.contains { $0.line == 2 && $0.column == 9 && $0.read == "K" && $0.twin == "<" },
                      "\(report.mrz.doubtfulTwins)")
        XCTAssertEqual(report.checks.first { $0.name == "MRZ readable" }?.result, .failed)
    }

    /// Verdict rule for check-digit twins (K/<, L/1, G/6): the parser's "cannot be told from" warning
    /// counts only when the classifier gave the twin real weight. A confident `G` in a document number
    /// is settled (no warning, can be VALID); a doubted one is not settled and is a doubtful twin.
    func testTwinWarningOnlyWhenTheClassifierDoubted() {
        let lines = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "GC3664952<UTO7408122F1204159ZE184226B<<<<<10"]
        func reading(twin: Double) -> MRZReading {
            var twins = lines.map { Array(repeating: 0.0, count: $0.count) }
            twins[1][0] = twin
            return MRZReading(lines: lines, alternatives: lines.map { $0.map { _ in [] } }, confidences: lines.map { $0.map { _ in 0.99 } },
                              geometry: [], angleDegrees: 0, twinConfidences: twins)
        }
        let w = "document_number: 'G' at line 2 column 1 cannot be told from '6' by the check digit (equal weight modulo 10)"
        let classes = MRZCharacterClass.layout(lineLength: 44, lineCount: 2)
        let sure = reading(twin: 0.004), doubted = reading(twin: 0.3)
        XCTAssertTrue(DocumentReader.twinSettled(w, sure, corrected: []))
        XCTAssertTrue(DocumentReader.doubtfulTwins(sure, classes: classes).isEmpty)
        XCTAssertFalse(DocumentReader.twinSettled(w, doubted, corrected: []))
        XCTAssertEqual(DocumentReader.doubtfulTwins(doubted, classes: classes).map { "\($0.line):\($0.column) \($0.read)/\($0.twin)" }, ["2:1 G/6"])
        // A cell the parser changed, a reading without twin posteriors, or another warning: not settled.
        XCTAssertFalse(DocumentReader.twinSettled(w, sure, corrected: [1 * 1000 + 0]))
        var bare = sure
        bare.twinConfidences = []
        XCTAssertFalse(DocumentReader.twinSettled(w, bare, corrected: []))
        XCTAssertFalse(DocumentReader.twinSettled("name fills the whole field and may be truncated", sure, corrected: []))
    }

    /// `MRZReading.parserCandidates`: the read character with its confidence first, then the runner-ups
    /// with their `posteriors` (0 where missing).
    func testReadingPosteriors() {
        var r = MRZReading(lines: ["A0"], alternatives: [[["4"], ["O", "D"]]], confidences: [[0.9, 0.6]], geometry: [], angleDegrees: 0)
        r.posteriors = [[["A": 0.9, "4": 0.05], ["0": 0.6, "O": 0.35]]]
        XCTAssertEqual(r.parserCandidates, [[[MRZCandidate("A", 0.9), MRZCandidate("4", 0.05)],
                                       [MRZCandidate("0", 0.6), MRZCandidate("O", 0.35), MRZCandidate("D", 0)]]])
    }

    /// Issuing-state and nationality cells hand the parser the classifier's whole posterior (every
    /// symbol ≥ `codeCandidateFloor`, most probable first), so the parser can choose among ICAO codes:
    /// 24_pass-egy's nationality `EQY` (posteriors measured on the specimen) becomes `EGY`, listed as a
    /// `code_list` correction; the other cells keep the read character and its runner-ups.
    func testCodeCellsHandTheWholePosteriorToTheParser() {
        let lines = ["P<EGYMABROUK<<ALAAELDIN<ISMAIL<MOHAMED<<<<<<", "A000513764EQY6002202M1503151<<<<<<<<<<<<<<06"]
        var r = MRZReading(lines: lines, alternatives: lines.map { $0.map { _ in [] } }, confidences: lines.map { $0.map { _ in 0.99 } },
                           geometry: [], angleDegrees: 0)
        r.posteriors = lines.map { $0.map { [$0: 0.99] } }
        r.confidences[1][11] = 0.4854
        r.posteriors[1][11] = ["Q": 0.4854, "G": 0.4542, "4": 0.0519, "S": 0.0042, "O": 0.0017, "X": 0.00005]
        r.alternatives[1][11] = ["G", "4"]
        XCTAssertEqual(r.parserCandidates[1][11], [MRZCandidate("Q", 0.4854), MRZCandidate("G", 0.4542), MRZCandidate("4", 0.0519),
                                                   MRZCandidate("S", 0.0042), MRZCandidate("O", 0.0017)])
        XCTAssertEqual(r.parserCandidates[1][0], [MRZCandidate("A", 0.99)])
        let result = r.parsed()
        XCTAssertEqual(result.lines[1], "A000513764EGY6002202M1503151<<<<<<<<<<<<<<06")
        XCTAssertEqual(result.corrections.map { "\($0.line):\($0.column) \($0.from)→\($0.to) \($0.source)" }, ["2:12 Q→G code_list"])
        XCTAssertTrue(result.fields.nationalityKnown)
        // Without posteriors (a reading not made by MRZReader) the code stays as read.
        r.posteriors = []
        XCTAssertEqual(r.parsed().fields.nationality, "EQY")
    }

    /// id_fail.png's card is printed without its expiry check digit (`…111231AUT…`: an `A` in the
    /// check-digit cell). The numeric class forced the look-alike `4` (posterior 1.3 · 10⁻¹², measured,
    /// against A ≈ 1); no valid reading exists, so the hand-over reports what is printed (the MRZ
    /// stays invalid). A forced `0` over a read `O` at 10⁻³ of its posterior (the least measured on
    /// c1000 when the class was right) stands, valid or not.
    func testHandOverReportsTheLetterPrintedInADigitPositionWhenNothingIsValid() {
        let forced = ["IDAUT000009993<<<<<<<<<<<<<<<<", "7109094F1112314UT<<<<<<<<<<<<0", "MUSTERFRAU<<ISOLDE<<<<<<<<<<<<"]
        let printed = ["IDAUT000009993<<<<<<<<<<<<<<<<", "7109094F111231AUT<<<<<<<<<<<<0", "MUSTERFRAU<<ISOLDE<<<<<<<<<<<<"]
        var r = MRZReading(lines: forced, alternatives: forced.map { $0.map { _ in [] } }, confidences: forced.map { $0.map { _ in 0.99 } },
                           geometry: [], angleDegrees: 0)
        r.posteriors = forced.map { $0.map { [$0: 0.99] } }
        r.posteriors[1][14] = ["A": 1, "4": 1.34e-12, "X": 1.28e-12]
        r.confidences[1][14] = 1.34e-12
        XCTAssertEqual(r.asPrinted?.lines, printed)
        let h = r.handOver()
        XCTAssertEqual(h.reading.lines, printed)
        XCTAssertEqual(h.result.lines, printed)
        XCTAssertFalse(h.result.valid)
        XCTAssertTrue(h.result.errors.contains("'A' at line 2 column 15: not allowed in expiry_date_check_digit"), "\(h.result.errors)")
        XCTAssertEqual(r.parsed().lines, printed, "parsed() is the hand-over's result")
        // A forced digit the classifier gave real weight stays.
        r.posteriors[1][14] = ["A": 1, "4": 1e-3]
        r.confidences[1][14] = 1e-3
        XCTAssertNil(r.asPrinted)
        XCTAssertEqual(r.handOver().reading.lines, forced)
    }

    /// The real id_fail.png card: the report's lines as read and as parsed show the printed `A`.
    func testCardPrintedWithoutItsExpiryCheckDigitIsReportedAsPrinted() throws {
        let printed = ["IDAUT000009993<<<<<<<<<<<<<<<<", "7109094F111231AUT<<<<<<<<<<<<0", "MUSTERFRAU<<ISOLDE<<<<<<<<<<<<"]
        let data = try Paths.sharedData("mrz-images/mrz-detection/id_fail.png")
        let report = DocumentReader.read(pages: [data], options: Self.noFace)
        XCTAssertEqual(report.mrz.linesRead, printed)
        XCTAssertEqual(report.mrz.result?.lines, printed)
        XCTAssertEqual(report.overallStatus, .invalid)
    }

    /// Name letters (no check digit) whose rival letter or filler got ≥ `nameDoubtConfidence`: the
    /// posteriors are those the classifier gave c1000's specimen-100299 (`ABOULLAH`, D read as O:
    /// O 0.6165, D 0.2179, 0 0.1654) and specimen-100897 (a filler read K: K 0.6912, < 0.3086). A
    /// rival below the threshold, a digit rival, and a cell already unclear (< 0.5) are not listed.
    func testDoubtfulNameCells() {
        let lines = ["P<GBRABOULLAH<<PIERRE<ALAIN<<<<<<<<<<<<<<<<<", "XY189977I4GBR4002035M2808288<<<<<<<<<<<<<<08"]
        var r = MRZReading(lines: lines, alternatives: lines.map { $0.map { _ in [] } }, confidences: lines.map { $0.map { _ in 0.99 } },
                           geometry: [], angleDegrees: 0)
        r.posteriors = lines.map { $0.map { [$0: 0.99] } }
        let classes = MRZCharacterClass.layout(lineLength: 44, lineCount: 2)
        XCTAssertTrue(DocumentReader.doubtfulNameCells(r, classes: classes).isEmpty)
        r.confidences[0][7] = 0.6165; r.posteriors[0][7] = ["O": 0.6165, "D": 0.2179, "0": 0.1654]       // ABOULLAH
        r.confidences[0][5] = 0.9680; r.posteriors[0][5] = ["A": 0.9680, "R": 0.0264, "H": 0.0056]        // sure
        r.confidences[0][6] = 0.7; r.posteriors[0][6] = ["B": 0.7, "8": 0.3]                               // digit rival: names hold none
        r.confidences[0][10] = 0.45; r.posteriors[0][10] = ["L": 0.45, "I": 0.4]                           // unclear already
        let cells = DocumentReader.doubtfulNameCells(r, classes: classes)
        XCTAssertEqual(cells.map { "\($0.line):\($0.column) \($0.read)/\($0.twin) \($0.twinConfidence)" }, ["1:8 O/D 0.2179"])
        r.lines[0] = "P<GBRABOULLAH<<PKERRE<ALAIN<<<<<<<<<<<<<<<<<"                                           // PIERRE → PKERRE
        r.confidences[0][16] = 0.6912; r.posteriors[0][16] = ["K": 0.6912, "<": 0.3086]
        XCTAssertEqual(DocumentReader.doubtfulNameCells(r, classes: classes).map { "\($0.column) \($0.read)/\($0.twin)" }, ["8 O/D", "17 K/<"])
        r.posteriors = []
        XCTAssertTrue(DocumentReader.doubtfulNameCells(r, classes: classes).isEmpty, "no posteriors, no doubt")
    }

    /// Every MRZ warning about a check-digit-invisible character becomes a typed finding (and, from
    /// the wording table, a plain sentence); others do not.
    func testPlainAmbiguityWarnings() throws {
        let w = try XCTUnwrap(DocumentReader.twinAmbiguity("document_number: 'L' at line 1 column 7 cannot be told from '1' by the check digit (equal weight modulo 10)"))
        XCTAssertEqual(w, .checkDigitTwin(field: "document number", read: "L", other: "1", line: 1, column: 7))
        XCTAssertEqual(DocumentWording.sentence(w), "The document number holds 'L' (MRZ line 1, position 7), which could also be '1': the check digit cannot tell them apart. Compare it with the printed page.")
        XCTAssertNil(DocumentReader.twinAmbiguity("name fills the whole field and may be truncated"))
    }

    /// The MRZ parser's warning for a look-alike swap only the check digits confirm (text without
    /// posteriors) becomes a typed finding, which the policy holds a warning: never VALID.
    func testUnconfirmedCorrectionIsAWarning() throws {
        let lines = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L8989O2C36UTO7408122F1204159ZE184226B<<<<<10"]
        let parsed = MRZParser(options: .init(referenceDate: ISO8601DateFormatter().date(from: "2010-01-01T00:00:00Z")!)).parse(lines)
        XCTAssertTrue(parsed.valid, "\(parsed.errors)")
        XCTAssertEqual(parsed.corrections.map { "\($0.from)→\($0.to) \($0.source)" }, ["O→0 confusion_table"])
        let findings = parsed.warnings.compactMap(DocumentReader.unconfirmedCorrection)
        XCTAssertEqual(findings, [.mrzCorrectionUnconfirmed(field: "document number", read: "O", corrected: "0", line: 2, column: 6)])
        XCTAssertFalse(WorkflowPolicy.acceptingSpecimens.isError(findings[0]))
        XCTAssertEqual(DocumentWording.sentence(findings[0]), "The document number's 'O' (MRZ line 2, position 6) was changed to '0' only because that look-alike satisfies the check digit, which a misread and an altered character do alike. Compare it with the printed page.")
        XCTAssertNil(DocumentReader.unconfirmedCorrection(parsed.warnings.first { $0.contains("cannot be told from") } ?? "document_number: 'L' at line 2 column 1 cannot be told from '1' by the check digit (equal weight modulo 10)"))
        XCTAssertNil(DocumentReader.twinAmbiguity(parsed.warnings.first { $0.contains(MRZParser.unconfirmedPrefix) }!))
    }

    /// Non-image bytes, a truncated JPEG and a 100-megapixel PNG: the report gives the true reason
    /// (page not decodable / too large, with the limit) and never blames missing face models when
    /// they are installed.
    func testUnusablePagesGiveTheTrueReason() throws {
        let page = try Data(contentsOf: Paths.fixtures.appendingPathComponent("documents/td3-exif-orientation-6.jpg"))
        let huge = try Data(contentsOf: Paths.fixtures.appendingPathComponent("documents/black-10000x10000.png"))
        let modelsInstalled = (try? FaceEngine.shared()) != nil
        for (name, data) in [("text", Data("this is not an image at all".utf8)), ("truncated JPEG", page.prefix(2_000)), ("100 MP PNG", huge)] {
            let report = DocumentReader.read(pages: [data])
            XCTAssertEqual(report.overallStatus, .invalid, name)
            XCTAssertEqual(report.pageFailures.count, 1, name)
            if modelsInstalled {
                XCTAssertFalse(report.warnings.contains { $0.contains("not installed") }, "\(name): \(report.warnings)")
            }
            XCTAssertEqual(report.checks.first { $0.name == "Portrait found" }?.detail,
                           "No page image could be decoded, so there was no page to look at.", name)
        }
        let big = DocumentReader.read(pages: [huge])
        XCTAssertEqual(big.pageFailures, [.tooManyPixels(page: 0, width: 10_000, height: 10_000, limit: Raster.maxPixels)])
        XCTAssertTrue(big.errors.contains { $0.contains("10000×10000") && $0.contains("\(Raster.maxPixels)") }, "\(big.errors)")
    }
}

/// ICAO 9303-3 §4.6 name padding: after `<<<` every name cell is a filler.
final class NamePaddingTests: XCTestCase {
    func testLettersAfterThreeFillersInANameBecomeFillersWithTheFillerPosterior() {
        let line = Array("P<CANHAMALAINEN<<SOFIA<<<<<<<<<<<<<<<<<<<CCC")
        var chars = line
        var alts = [[Character]](repeating: [], count: line.count)
        var confs = [Double](repeating: 0.99, count: line.count)
        var ranks = [[Character: Double]](repeating: ["<": 0.99], count: line.count)
        ranks[41] = ["C": 0.7, "<": 0.3]
        ranks[42] = ["C": 0.999, "<": 0.0004]
        ranks[43] = ["C": 0.6, "<": 0.4]
        let classes = MRZCharacterClass.layout(lineLength: 44, lineCount: 2)[0]
        let changed = MRZReader.fillNamePadding(&chars, &alts, &confs, ranks: ranks, classes: classes)
        XCTAssertEqual(changed, [41, 42, 43])
        XCTAssertEqual(String(chars), "P<CANHAMALAINEN<<SOFIA<<<<<<<<<<<<<<<<<<<<<<")
        XCTAssertEqual(confs[41], 0.3)
        XCTAssertEqual(confs[42], 0.0004, "a filler the classifier doubted stays unclear")
        XCTAssertEqual(alts[42].first, "C")
    }

    func testNamesWithSingleAndDoubleFillersAreLeftAlone() {
        for text in ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "P<D<<PAPADOPOULOS<<BJORN<K<<<<<<<<<<<<<<<<<<"] {
            var chars = Array(text)
            var alts = [[Character]](repeating: [], count: 44)
            var confs = [Double](repeating: 0.9, count: 44)
            let changed = MRZReader.fillNamePadding(&chars, &alts, &confs, ranks: [], classes: MRZCharacterClass.layout(lineLength: 44, lineCount: 2)[0])
            XCTAssertEqual(changed, [], text)
            XCTAssertEqual(String(chars), text)
        }
        // TD1 line 3: `<<<` ends the name; the K after it is a filler.
        var chars = Array("ABDULLAH<<SOFIA<<<K<<<<<<<<<<<")
        var alts = [[Character]](repeating: [], count: 30)
        var confs = [Double](repeating: 0.9, count: 30)
        let changed = MRZReader.fillNamePadding(&chars, &alts, &confs, ranks: [], classes: MRZCharacterClass.layout(lineLength: 30, lineCount: 3)[2])
        XCTAssertEqual(changed, [18])
        XCTAssertEqual(confs[18], 0)
    }
}
