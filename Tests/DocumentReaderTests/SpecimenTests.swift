import MRZ
import XCTest
@testable import DocumentReader
import IDVTools

final class SpecimenTests: XCTestCase {
    /// Every generated identity gives MRZ lines of the right shape whose check digits all hold and
    /// whose fields parse back to the identity (ICAO 9303 via the MRZ parser).
    func testGeneratedMRZParsesBackToTheIdentity() {
        var rng = SeededRNG(seed: 42)
        let parser = MRZParser(options: .init(correctionEnabled: false))
        for k in 0..<400 {
            let format: SpecimenFormat = k % 2 == 0 ? .td1 : .td3
            let id = SpecimenIdentity.random(format, using: &rng)
            let lines = id.mrzLines(format)
            XCTAssertEqual(lines.count, format.lineCount)
            XCTAssertTrue(lines.allSatisfy { $0.count == format.lineLength }, "\(lines)")
            let r = parser.parse(lines)
            XCTAssertTrue(r.valid, "\(lines) \(r.errors)")
            XCTAssertEqual(r.format.rawValue, format == .td1 ? "TD1" : "TD3")
            XCTAssertEqual(r.fields.documentNumber, id.documentNumber)
            XCTAssertEqual(r.fields.surname, id.surname.replacingOccurrences(of: "-", with: " "))
            XCTAssertEqual(r.fields.raw["birth_date"], id.birthDate)
            XCTAssertEqual(r.fields.raw["expiry_date"], id.expiryDate)
        }
    }

    func testICAOExampleTD3() {
        // ICAO 9303-4 Appendix A: Anna Maria Eriksson, Utopia.
        let id = SpecimenIdentity(documentCode: "P<", issuingState: "UTO", surname: "ERIKSSON", givenNames: "ANNA MARIA",
                                  documentNumber: "L898902C3", nationality: "UTO", birthDate: "740812", sex: "F",
                                  expiryDate: "120415", optionalData: "ZE184226B")
        XCTAssertEqual(id.mrzLines(.td3), ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
                                           "L898902C36UTO7408122F1204159ZE184226B<<<<<10"])
    }

    func testRenderingHasTheDocumentSizeAndReadsBack() throws {
        var rng = SeededRNG(seed: 3)
        for format in SpecimenFormat.allCases {
            let id = SpecimenIdentity.random(format, using: &rng)
            let s = try SpecimenGenerator.render(id, format: format)
            XCTAssertEqual(s.image.width, Int((format.sizeMM.width * 12).rounded()))
            let r = try XCTUnwrap(MRZReader.read(s.image.grey))
            XCTAssertEqual(MRZParser().parse(r.lines, alternatives: r.alternatives).lines, s.mrzLines)
        }
    }

    func testAugmentationIsDeterministicPerSeed() throws {
        var rng = SeededRNG(seed: 9)
        let s = try SpecimenGenerator.render(SpecimenIdentity.random(.td1, using: &rng), format: .td1, pixelsPerMM: 6)
        var a = Augmentation.random(using: &rng)
        a.canvasWidth = 400; a.canvasHeight = 300
        XCTAssertEqual(a.apply(to: s.image, seed: 5), a.apply(to: s.image, seed: 5))
        XCTAssertNotEqual(a.apply(to: s.image, seed: 5), a.apply(to: s.image, seed: 6))
    }

    func testPNGRoundTrip() throws {
        var rng = SeededRNG(seed: 1)
        let s = try SpecimenGenerator.render(SpecimenIdentity.random(.td3, using: &rng), format: .td3, pixelsPerMM: 4)
        XCTAssertEqual(try Raster.decodePNG(Raster.encodePNG(s.image)), s.image)
        XCTAssertThrowsError(try Raster.decodePNG(Data("not a png".utf8)))
    }
}
