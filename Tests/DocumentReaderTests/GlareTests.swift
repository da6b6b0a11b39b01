@testable import DocumentReader
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVEvidence
import IDVReaders
import IDVTools
import XCTest

/// Glare over the whole MRZ (#22): reported as glare (evidence `glareHidesMRZ`, upload code 1080
/// `documentGlare`), not as "no MRZ"; a page without an MRZ and without glare is still "no MRZ".
final class GlareTests: XCTestCase {
    /// A rendered TD3 page, dimmed as a photo of paper is, with a saturated reflection (a soft-edged white ellipse) over its MRZ.
    func glaredPage() throws -> Data {
        var rng = SeededRNG(seed: 21)
        let id = SpecimenIdentity.random(.td3, using: &rng)
        var img = try SpecimenGenerator.render(id, format: .td3, pixelsPerMM: 8).image
        let (w, h) = (img.width, img.height)
        // Photographed paper is not white (≈ 210 here); the reflection saturates the sensor.
        for i in img.pixels.indices { img.pixels[i] = UInt8(Double(img.pixels[i]) * 0.82) }
        let cx = Double(w) / 2, cy = Double(h) * 0.86, rx = Double(w) * 0.62, ry = Double(h) * 0.2
        for y in 0..<h {
            for x in 0..<w {
                let d = ((Double(x) - cx) / rx) * ((Double(x) - cx) / rx) + ((Double(y) - cy) / ry) * ((Double(y) - cy) / ry)
                guard d < 1.3 else { continue }
                let t = d < 1 ? 1.0 : (1.3 - d) / 0.3   // saturated core, a soft rim
                for k in 0..<3 {
                    let o = (y * w + x) * 3 + k
                    img.pixels[o] = UInt8(min(255, Double(img.pixels[o]) * (1 - t) + 255 * t))
                }
            }
        }
        return try DocumentImage(rgb: img).jpeg(maxDimension: 10_000, quality: 90)
    }

    func testGlareOverTheMRZIsReportedAsGlare() throws {
        var o = DocumentReaderOptions()
        o.detectPortrait = false
        let r = DocumentReader.read(pages: [try glaredPage()], options: o)
        XCTAssertFalse(r.mrz.found)
        guard case let .glare(fraction)? = r.check(.mrzPresent)?.measured else { return XCTFail("\(String(describing: r.check(.mrzPresent)))") }
        XCTAssertGreaterThanOrEqual(fraction, DocumentReader.glareBandFraction)
        XCTAssertEqual(r.check(.mrzPresent)?.result, .failed)
        XCTAssertTrue(r.findings.contains { if case .glareHidesMRZ = $0 { return true }; return false })
        XCTAssertFalse(r.findings.contains(.noMRZ))
        let judged = r.judged(by: .acceptingSpecimens)
        XCTAssertEqual(judged.status, .invalid)
        XCTAssertTrue(judged.errors.map(DocumentWording.sentence).contains { $0.contains("glare") })
        // The flows' reader answers with the retryable upload code 1080, not 1031.
        XCTAssertThrowsError(try DocumentReaderAdapter(options: o).read(pages: [try glaredPage()])) { e in
            XCTAssertEqual((e as? IDVError)?.code, .documentGlare, "\(e)")
            // The message says what to do (as `idvd codes` does for 1080).
            XCTAssertEqual((e as? IDVError)?.errorString, "No machine-readable zone could be read: glare covers part of the page. "
                           + "Tilt the document away from the light and photograph it again.")
        }
    }

    /// A photo with no document and no glare: still "no MRZ" (1031).
    func testAPageWithoutMRZOrGlareIsNoMRZ() throws {
        let face = try Data(contentsOf: Paths.fixtures.appendingPathComponent("faces/obama-480p.jpg"))
        var o = DocumentReaderOptions()
        o.detectPortrait = false
        let r = DocumentReader.read(pages: [face], options: o)
        XCTAssertTrue(r.findings.contains(.noMRZ))
        XCTAssertEqual(r.check(.mrzPresent)?.measured, CheckMeasurement.none)
        XCTAssertThrowsError(try DocumentReaderAdapter(options: o).read(pages: [face])) { e in
            XCTAssertEqual((e as? IDVError)?.code, .noDocumentFound, "\(e)")
            XCTAssertTrue((e as? IDVError)?.errorString.hasSuffix("was found. Photograph the whole page, flat and in focus.") == true, "\(e)")
        }
    }
}
