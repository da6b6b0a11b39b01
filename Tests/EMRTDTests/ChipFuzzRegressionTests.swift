@testable import EMRTD
import XCTest

/// Replays the `chip-lds` fuzz inputs through the fuzz target's own invariants (`chipViolations`,
/// Fuzz/EMRTD/ChipFuzzSupport.swift, seen here through a symlink): the seeds (`Fuzz/corpus/chip-lds/`,
/// real chip and PKI files behind a selector byte) and `Tests/Fixtures/fuzz/chip-lds/` (inputs that grew
/// the fuzz corpus, and every input a fuzzer ever failed on).
final class ChipFuzzRegressionTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func inputs(_ relative: String) throws -> [(name: String, bytes: [UInt8])] {
        let dir = Self.root.appendingPathComponent(relative)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".md") }.sorted()
        return try names.map { ($0, [UInt8](try Data(contentsOf: dir.appendingPathComponent($0)))) }
    }

    func violations(_ bytes: [UInt8]) -> [String] { bytes.withUnsafeBufferPointer { chipViolations($0) } }

    /// Every seed holds the invariants, and each real file parses with the parser its selector names
    /// (a seed that stopped parsing would leave the fuzzer exploring error paths only).
    func testSeedsHoldTheInvariantsAndParse() throws {
        let seeds = try inputs("Fuzz/corpus/chip-lds")
        XCTAssertGreaterThanOrEqual(seeds.count, 25)
        var parsers = Set<ChipParser>()
        for (name, bytes) in seeds {
            XCTAssertEqual(violations(bytes), [], name)
            let parser = ChipParser(rawValue: Int(bytes[0]) % ChipParser.allCases.count)!
            parsers.insert(parser)
            let file = Array(bytes.dropFirst())
            switch parser {
            case .ber:
                var r = BERReader(file), elements = 0
                while !r.atEnd {
                    do { _ = try r.read(); elements += 1 } catch { XCTFail("\(name): \(error)"); break }
                }
                XCTAssertGreaterThan(elements, 0, name)
            case .com: XCTAssertNoThrow(try EFCOM(file), name)
            case .dg1: XCTAssertNoThrow(try DG1(file), name)
            case .dg2: XCTAssertNoThrow(try DG2(file), name)
            case .dg11: XCTAssertNoThrow(try DG11(file), name)
            case .dg12: XCTAssertNoThrow(try DG12(file), name)
            case .dg14: XCTAssertNoThrow(try DG14(file), name)
            case .dg15: XCTAssertNoThrow(try DG15(file), name)
            case .sod: XCTAssertNoThrow(try SecurityObject(file), name)
            case .certificate: XCTAssertNoThrow(try Certificate(file), name)
            case .crl: XCTAssertNoThrow(try RevocationList(file), name)
            case .trustMaterial: XCTAssertNoThrow(try TrustMaterial(file), name)
            case .jpeg2000: XCTAssertNoThrow(try JPEG2000.decode(file, maxPixels: BEROracle.maxPixels), name)
            }
        }
        XCTAssertEqual(parsers, Set(ChipParser.allCases), "a seed for every parser")
    }

    func testRegressionInputsHoldTheInvariants() throws {
        let all = try inputs("Tests/Fixtures/fuzz/chip-lds")
        XCTAssertGreaterThanOrEqual(all.count, 20)
        for (name, bytes) in all { XCTAssertEqual(violations(bytes), [], name) }
    }

    /// The oracle is not vacuous: an error naming a byte past the input, an element outside its parent
    /// and a non-canonical length read as DER are each reported.
    func testOracleReportsBrokenResults() throws {
        XCTAssertEqual(BEROracle.errorViolations(BERError.truncatedTag(offset: 3), count: 10), [])
        XCTAssertEqual(BEROracle.errorViolations(BERError.truncatedTag(offset: 11), count: 10).count, 1)
        // 04 81 02 'AB': BER (long form for a short length), not DER; re-encoded canonically as 04 02 'AB'.
        let e = try BERReader.single([0x04, 0x81, 0x02, 0x41, 0x42])
        XCTAssertFalse(BEROracle.isDER(e))
        XCTAssertTrue(BEROracle.isDER(try BERReader.single([0x04, 0x02, 0x41, 0x42])))
        XCTAssertEqual(BEROracle.violations([0x04, 0x81, 0x02, 0x41, 0x42]), [])
        // A real DG1 re-encodes byte for byte; the same DG1 behind the DG1 selector holds every invariant.
        let dg1 = try inputs("Fuzz/corpus/chip-lds").first { $0.bytes.first == UInt8(ChipParser.dg1.rawValue) }!
        XCTAssertEqual(violations(dg1.bytes), [])
        XCTAssertEqual(DG1.encode(lines: try DG1(Array(dg1.bytes.dropFirst())).lines), Array(dg1.bytes.dropFirst()))
    }
}
