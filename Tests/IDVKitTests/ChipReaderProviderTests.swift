import Foundation
import IDVTestSupport
import IDVKit
import XCTest

/// `FileChipReader` reads a chip's EF files from a folder under every naming the samples use.
final class ChipReaderProviderTests: XCTestCase {
    static let emrtd = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/testdata/emrtd").standardized

    func sample(_ name: String) throws -> URL {
        let u = Self.emrtd.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: u.path) else {
            throw TestData.missing("shared eMRTD sample missing: \(u.path)")
        }
        return u
    }

    func testReadsJMRTDFileIdentifierAndDatagroupNames() throws {
        let nl = try FileChipReader(folder: try sample("nld-specimen-2006-loes-meulendijk")).readChip(workflow: .postLoginDocScanOnly)
        XCTAssertEqual(nl?.dataGroups.keys.sorted(), [1, 2, 15])
        XCTAssertEqual(nl?.sod.count, 1782)
        XCTAssertEqual(nl?.com?.count, 23)
        let bsi = try FileChipReader(folder: try sample("bsi2008-erika-mustermann")).readChip(workflow: .postLoginDocScanOnly)
        XCTAssertEqual(bsi?.dataGroups.keys.sorted(), [1, 2, 3, 4, 14, 15])
        XCTAssertEqual(bsi?.dataGroups[1]?.count, 93)
    }

    func testSpecimenNamesAndRefusals() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("chip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data([0x61, 0x00]).write(to: dir.appendingPathComponent("DG1.bin"))
        XCTAssertThrowsError(try FileChipReader(folder: dir).readChip(workflow: .postLoginDocScanOnly)) { e in
            XCTAssertTrue("\(e)".contains("no EF_SOD.bin"), "\(e)")
        }
        try Data([0x77, 0x00]).write(to: dir.appendingPathComponent("EF_SOD.bin"))
        try Data().write(to: dir.appendingPathComponent("DG2.bin"))
        XCTAssertThrowsError(try FileChipReader(folder: dir).readChip(workflow: .postLoginDocScanOnly)) { e in
            XCTAssertTrue("\(e)".contains("DG2.bin is empty"), "\(e)")
        }
        try FileManager.default.removeItem(at: dir.appendingPathComponent("DG2.bin"))
        let chip = try FileChipReader(folder: dir).readChip(workflow: .postLoginDocScanOnly)
        XCTAssertEqual(chip, CapturedChip(sod: Data([0x77, 0x00]), dataGroups: [1: Data([0x61, 0x00])]))
        XCTAssertThrowsError(try FileChipReader(folder: dir.appendingPathComponent("absent")).readChip(workflow: .postLoginDocScanOnly))
    }
}
