import ChipAccess
import EMRTDCore
import XCTest

/// Replays the `chip-sm` fuzz inputs through the target's own invariants (`chipSMViolations`,
/// Fuzz/ChipAccess/ChipSMFuzzSupport.swift, seen here through a symlink): the seeds (`Fuzz/corpus/chip-sm/`) and
/// `Tests/Fixtures/fuzz/chip-sm/` (inputs that grew the fuzz corpus, and every input a fuzzer ever failed on).
final class ChipSMFuzzRegressionTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func inputs(_ relative: String) throws -> [(name: String, bytes: [UInt8])] {
        let dir = Self.root.appendingPathComponent(relative)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".md") }.sorted()
        return try names.map { ($0, [UInt8](try Data(contentsOf: dir.appendingPathComponent($0)))) }
    }

    func violations(_ bytes: [UInt8]) -> [String] { bytes.withUnsafeBufferPointer { chipSMViolations($0) } }

    /// Every seed holds the invariants, each parser has seeds, and the real files parse with theirs.
    func testSeedsHoldTheInvariantsAndParse() throws {
        let seeds = try inputs("Fuzz/corpus/chip-sm")
        XCTAssertGreaterThanOrEqual(seeds.count, 20)
        var parsers = Set<ChipSMParser>()
        for (name, bytes) in seeds {
            XCTAssertEqual(violations(bytes), [], name)
            let parser = ChipSMParser(rawValue: Int(bytes[0]) % ChipSMParser.allCases.count)!
            parsers.insert(parser)
            let data = Array(bytes.dropFirst(2))
            switch parser {
            case .cardAccess: XCTAssertNoThrow(try SecurityInfos(cardAccess: data), name)
            case .dg14: XCTAssertNoThrow(try SecurityInfos(dg14: data), name)
            case .dg15: XCTAssertNoThrow(try SubjectPublicKeyInfo(dg15: data), name)
            case .commandAPDU: XCTAssertNotNil(CommandAPDU(parsing: data), name)
            default: break
            }
        }
        XCTAssertEqual(parsers, Set(ChipSMParser.allCases), "a seed for every parser")
    }

    func testRegressionInputsHoldTheInvariants() throws {
        let all = try inputs("Tests/Fixtures/fuzz/chip-sm")
        XCTAssertGreaterThanOrEqual(all.count, 20)
        for (name, bytes) in all { XCTAssertEqual(violations(bytes), [], name) }
    }

    /// The oracle is not vacuous: a re-encoding that changes the values, and a response MAC from other keys, are caught.
    func testOracleReportsBrokenResults() throws {
        let g1 = try SecurityInfos(cardAccess: Bytes.hex("31143012060A04007F0007020204020202010202010D"))
        XCTAssertEqual(reencodingViolations(g1) { try SecurityInfos(cardAccess: $0.encoded) }, [])
        XCTAssertEqual(reencodingViolations(g1) { _ in SecurityInfos([]) }.count, 1)
        // A response made with the harness's own keys (which a fuzzer cannot produce) is reported as a forged MAC;
        // under another cipher's keys it is refused, which is no violation.
        let protected = try SecureMessaging(keys: ChipSMFixtures.keys(1), crypto: ChipSMFixtures.crypto)
            .protectResponse(ResponseAPDU(data: [1, 2, 3], status: .success), ins: 0xB0)
        XCTAssertEqual(violations([0, 1] + protected.encoded).count, 1)
        XCTAssertEqual(violations([0, 2] + protected.encoded), [])
    }
}
