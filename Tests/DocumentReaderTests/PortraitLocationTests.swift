import FaceKit
import Foundation
import XCTest
@testable import DocumentReader
import Imaging
import IDVTools
import IDVReaders
import IDVEngine
import IDVRuntime
import IDVTestSupport

/// The portrait must be the face of the document the MRZ belongs to (`MRZDocumentFrame`), not the
/// first face anywhere in the photo: two specimens stacked in one photo, or a face pasted beside a
/// document whose own photo is covered. Real faces (Tests/Fixtures/faces, Tests/Fixtures/selfie),
/// compared by their dlib ResNet descriptors.
final class PortraitLocationTests: XCTestCase {
    static let options: DocumentReaderOptions = {
        var o = DocumentReaderOptions()
        o.referenceDate = ISO8601DateFormatter().date(from: "2026-01-01T00:00:00Z")!
        return o
    }()
    static let idA = SpecimenIdentity(documentCode: "P<", issuingState: "UTO", surname: "ERIKSSON", givenNames: "ANNA MARIA",
                                      documentNumber: "L898902C3", nationality: "UTO", birthDate: "740812", sex: "F",
                                      expiryDate: "340415", optionalData: "ZE184226B")
    static let idB = SpecimenIdentity(documentCode: "P<", issuingState: "UTO", surname: "NAKAMURA", givenNames: "KENJI",
                                      documentNumber: "X4471Y093", nationality: "UTO", birthDate: "811203", sex: "M",
                                      expiryDate: "320917", optionalData: "")

    func engine() throws -> FaceEngine {
        do { return try FaceEngine.shared() } catch { throw TestData.missing("FaceEngine unavailable (\(error)); the portrait location tests need the dlib models") }
    }

    func rgb(_ fixture: String) throws -> RGBImage {
        try DocumentImage.decode(Data(contentsOf: Paths.fixtures.appendingPathComponent(fixture))).rgb
    }

    /// Descriptor of the largest face in `image`.
    func descriptor(_ engine: FaceEngine, _ image: Imaging.Image, file: StaticString = #filePath, line: UInt = #line) throws -> [Float] {
        let faces = try engine.analyze(image, options: AnalysisOptions(landmarks68: false, embedding: true, maxFaces: 1))
        let e = try XCTUnwrap(faces.first?.embedding, "no face to describe", file: file, line: line)
        return e
    }
    func descriptor(_ engine: FaceEngine, _ image: RGBImage) throws -> [Float] {
        try descriptor(engine, Imaging.Image(rgb: image.pixels, width: image.width, height: image.height))
    }
    func distance(_ a: [Float], _ b: [Float]) -> Double {
        zip(a, b).reduce(0.0) { $0 + Double(($1.0 - $1.1) * ($1.0 - $1.1)) }.squareRoot()
    }

    /// `a` above `b` (vertical) or beside it, the rest white.
    func stack(_ a: RGBImage, _ b: RGBImage, vertical: Bool) -> RGBImage {
        let w = vertical ? max(a.width, b.width) : a.width + b.width, h = vertical ? a.height + b.height : max(a.height, b.height)
        var px = [UInt8](repeating: 255, count: w * h * 3)
        for (img, ox, oy) in [(a, 0, 0), (b, vertical ? 0 : a.width, vertical ? a.height : 0)] {
            for y in 0..<img.height {
                let src = y * img.width * 3, dst = ((y + oy) * w + ox) * 3
                px.replaceSubrange(dst..<(dst + img.width * 3), with: img.pixels[src..<(src + img.width * 3)])
            }
        }
        return RGBImage(width: w, height: h, pixels: px)
    }

    func portraitDescriptor(_ engine: FaceEngine, _ report: DocumentReport) throws -> [Float] {
        let jpeg = try XCTUnwrap(report.portraitJPEG, "no portrait returned")
        return try descriptor(engine, Imaging.Image(data: jpeg))
    }

    func testStackedSpecimensGiveThePortraitOfTheDocumentWhoseMRZWasRead() throws {
        let engine = try engine()
        let obama = try rgb("faces/obama-480p.jpg"), katie = try rgb("selfie/katie_portrait.jpg")
        let a = try SpecimenGenerator.render(Self.idA, format: .td3, portrait: obama, seed: 20)
        let b = try SpecimenGenerator.render(Self.idB, format: .td3, portrait: katie, seed: 10)
        let (dObama, dKatie) = (try descriptor(engine, obama), try descriptor(engine, katie))
        XCTAssertGreaterThan(distance(dObama, dKatie), 0.6, "the two fixtures must be different people")
        for (top, bottom) in [(a, b), (b, a)] {
            let page = try DocumentImage(rgb: stack(top.image, bottom.image, vertical: true)).jpeg(maxDimension: 10_000, quality: 90)
            let report = DocumentReader.read(pages: [page], options: Self.options)
            let surname = report.seed002.response_data.document_info.surname
            let own = surname == "ERIKSSON" ? dObama : dKatie, other = surname == "ERIKSSON" ? dKatie : dObama
            XCTAssertTrue(["ERIKSSON", "NAKAMURA"].contains(surname), "MRZ read as \(surname)")
            let p = try portraitDescriptor(engine, report)
            XCTAssertLessThan(distance(p, own), 0.5, "\(surname) on top=\(top.identity.surname): portrait is not the document's own face")
            XCTAssertGreaterThan(distance(p, other), 0.6, "\(surname) on top=\(top.identity.surname): portrait is the other document's face")
            XCTAssertEqual(report.checks.first { $0.name == "Portrait found" }?.result, .passed)
        }
    }

    func testFacePastedBesideACoveredPhotoIsNotThePortrait() throws {
        let engine = try engine()
        let katie = try rgb("selfie/katie_portrait.jpg")
        var doc = try SpecimenGenerator.render(Self.idB, format: .td3, portrait: katie, seed: 10).image
        // Cover the document's own photo (TD3 specimen portrait box: 6…38 × 16…56 mm at 12 px/mm).
        for y in 180..<680 { for x in 60..<470 { let i = (y * doc.width + x) * 3; doc.pixels[i] = 0xd0; doc.pixels[i + 1] = 0xd8; doc.pixels[i + 2] = 0xe0 } }
        let face = try Imaging.Image(data: Data(contentsOf: Paths.fixtures.appendingPathComponent("faces/obama-480p.jpg")))
        let h = doc.height, w = face.width * h / face.height
        let big = try face.resized(width: w, height: h)
        let pasted = stack(doc, RGBImage(width: big.width, height: big.height, pixels: big.pixels), vertical: false)
        XCTAssertFalse(try engine.detect(in: Imaging.Image(rgb: pasted.pixels, width: pasted.width, height: pasted.height)).isEmpty,
                       "the pasted face must be detectable, or the test shows nothing")
        let report = DocumentReader.read(pages: [try DocumentImage(rgb: pasted).jpeg(maxDimension: 10_000, quality: 90)], options: Self.options)
        XCTAssertEqual(report.seed002.response_data.document_info.surname, "NAKAMURA")
        let check = try XCTUnwrap(report.checks.first { $0.name == "Portrait found" })
        XCTAssertEqual(check.result, .failed)
        XCTAssertEqual(check.detail, "A face was found outside the document; the portrait must be the document's own photo.")
        XCTAssertNil(report.portraitJPEG)
        XCTAssertNotEqual(report.overallStatus, .valid)
        XCTAssertTrue(report.warnings.contains { $0.contains("outside the document") }, "\(report.warnings)")
    }

    func testOrdinarySpecimensStillGiveTheirPortrait() throws {
        let engine = try engine()
        let obama = try rgb("faces/obama-480p.jpg")
        let dObama = try descriptor(engine, obama)
        var rng = SeededRNG(seed: 7)
        let card = SpecimenIdentity.random(.td1, using: &rng)
        for (spec, turns) in [(try SpecimenGenerator.render(Self.idA, format: .td3, portrait: obama), 0),
                              (try SpecimenGenerator.render(Self.idA, format: .td3, portrait: obama), 1),
                              (try SpecimenGenerator.render(card, format: .td1, portrait: obama), 0)] {
            let img = try Imaging.Image(rgb: spec.image.pixels, width: spec.image.width, height: spec.image.height).rotated90(times: turns)
            let page = try DocumentImage(rgb: RGBImage(width: img.width, height: img.height, pixels: img.pixels)).jpeg(maxDimension: 10_000, quality: 90)
            let report = DocumentReader.read(pages: [page], options: Self.options)
            XCTAssertTrue(report.mrz.found, "\(spec.format) turned \(turns)")
            XCTAssertEqual(report.checks.first { $0.name == "Portrait found" }?.result, .passed, "\(spec.format) turned \(turns)")
            XCTAssertLessThan(distance(try portraitDescriptor(engine, report), dObama), 0.5, "\(spec.format) turned \(turns)")
        }
    }

    /// A point taken through `rotated90(times:)` and back lands where it started.
    func testUnrotatedUndoesQuarterTurns() throws {
        var px = [UInt8](repeating: 0, count: 5 * 3 * 3)
        px[(1 * 5 + 3) * 3] = 255                      // marked pixel at (3, 1) of a 5 × 3 image
        let img = try Imaging.Image(rgb: px, width: 5, height: 3)
        for t in -3...4 {
            let r = img.rotated90(times: t)
            let i = stride(from: 0, to: r.pixels.count, by: 3).first { r.pixels[$0] == 255 }! / 3
            let back = MRZDocumentFrame.unrotated(x: Double(i % r.width), y: Double(i / r.width), turns: t, width: 5, height: 3)
            XCTAssertEqual(back.x, 3, "turns \(t)"); XCTAssertEqual(back.y, 1, "turns \(t)")
        }
    }

    /// The whole-page search that follows an empty search inside the document runs at the portrait
    /// search's scale (6 px/mm), capped at the detector's default size and never enlarged.
    func testWholePageSearchRunsAtThePortraitScale() {
        let page = DocumentReader.wholePageSearch(width: 1500, height: 1056, pixelsPerMM: 12)
        XCTAssertEqual(page.maxDimension, 750)
        XCTAssertEqual(page.upsample, 0)
        XCTAssertEqual(page.workingScale(width: 1500, height: 1056), 0.5, accuracy: 1e-9)
        // A 6000-pixel photo at 30 px/mm would be 1200 px at 6 px/mm: the detector's 1024 caps it.
        XCTAssertEqual(DocumentReader.wholePageSearch(width: 6000, height: 4000, pixelsPerMM: 30).maxDimension, 1024)
        // A page already coarser than 6 px/mm is searched as before (the detector's defaults).
        XCTAssertEqual(DocumentReader.wholePageSearch(width: 800, height: 600, pixelsPerMM: 5), DetectionOptions())
        XCTAssertEqual(DocumentReader.wholePageSearch(width: 800, height: 600, pixelsPerMM: 0), DetectionOptions())
    }
}
