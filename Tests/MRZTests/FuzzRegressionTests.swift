import XCTest
import MRZ

/// Replays the fuzz regression inputs (`Tests/Fixtures/fuzz/<target>/`: the seeds, every input a
/// fuzzer ever crashed on, and a sample of the inputs that grew the fuzz corpora) through the fuzz
/// targets' own invariants (`Fuzz/MRZ/FuzzSupport.swift`, seen here through a symlink).
final class FuzzRegressionTests: XCTestCase {
    let parser = MRZParser(options: .init(referenceDate: fuzzReferenceDate))

    func inputs(_ target: String) throws -> [(String, Data)] {
        let dir = Fixtures.testsDir.appendingPathComponent("Fixtures/fuzz/\(target)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        return try names.map { ($0, try Data(contentsOf: dir.appendingPathComponent($0))) }
    }

    func testTextInputs() throws {
        let all = try inputs("mrz-text")
        XCTAssertGreaterThanOrEqual(all.count, 5)
        for (name, data) in all {
            let broken = data.withUnsafeBytes { textViolations($0.bindMemory(to: UInt8.self), parser) }
            XCTAssertEqual(broken, [], name)
        }
    }

    func testDecodeInputs() throws {
        let all = try inputs("mrz-decode")
        XCTAssertGreaterThanOrEqual(all.count, 5)
        var decoded = 0
        for (name, data) in all {
            guard let input = data.withUnsafeBytes({ DecodeInput($0.bindMemory(to: UInt8.self)) }) else { continue }
            decoded += 1
            XCTAssertEqual(input.violations(parser), [], name)
        }
        XCTAssertGreaterThanOrEqual(decoded, 5)
    }

    /// The oracle is not vacuous: it catches a result that claims validity with a failing check digit
    /// and a correction missing from the corrections list.
    func testOracleCatchesBrokenResults() {
        let td3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
        var r = parser.parse(td3)
        XCTAssertEqual(Oracle.violations(r, input: td3, parser: parser), [])
        r.lines[1] = "L898902C37UTO7408122F1204159ZE184226B<<<<<10"
        XCTAssertFalse(Oracle.violations(r, input: td3, parser: parser).isEmpty)
        var silent = parser.parse(td3)
        silent.lines[0] = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<K"
        XCTAssertTrue(Oracle.violations(silent, input: td3, parser: parser).contains { $0.contains("without a correction entry") })
    }
}
