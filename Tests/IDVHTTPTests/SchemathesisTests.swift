import Foundation
import IDVTestSupport
import IDVServerTestSupport
import XCTest

/// The OpenAPI document and the server agree: schemathesis (PyPI) with every check — status codes,
/// content types, headers, response schemas, refusal of schema-violating data, acceptance of
/// schema-valid data, auth, stateful sequences over the document's links — against a real
/// `idvd serve` on loopback (`scripts/schemathesis`, config `scripts/schemathesis.toml`, seed 1).
///
/// Needs python3 with schemathesis (scripts/bootstrap installs schemathesis==4.32.5 into
/// ~/.cache/openidv/schemathesis, or `IDV_SCHEMATHESIS_DIR`, when the system's python3 lacks it). Missing, the test FAILS under CI
/// (`CI=true`) and is skipped elsewhere.
final class SchemathesisTests: XCTestCase {
    func testSchemathesisFindsNoFailureAgainstARealServer() throws {
        let root = IDVDBinary.packageRoot
        let script = root.appendingPathComponent("scripts/schemathesis").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [script, try IDVDBinary.path()]
        p.currentDirectoryURL = root
        p.environment = ProcessInfo.processInfo.environment.merging(IDVDBinary.testEnvironment) { _, n in n }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        if p.terminationStatus == 3 {   // schemathesis is not installed
            throw TestData.missing("schemathesis for python3 is missing (scripts/bootstrap installs it)")
        }
        XCTAssertEqual(p.terminationStatus, 0, String(text.suffix(6000)))
        let summary = text.split(separator: "\n").last { $0.hasPrefix("schemathesis: ") }.map(String.init) ?? ""
        let cases = Int(summary.split(separator: " ").dropFirst().first ?? "") ?? 0
        XCTAssertGreaterThan(cases, 500, summary)
        XCTAssertTrue(summary.contains(" 0 failures"), summary)
        print(summary)
    }
}
