import Foundation
import XCTest

/// The `idvd` command line's operator-facing papercuts, through the real binary: every command and
/// subcommand refuses an unknown option (exit 2, "unknown option --NAME") before doing anything;
/// `codes`, `openapi` and `version` have a usage and take no arguments.
final class CLIOptionTests: XCTestCase {
    func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: d) }
        return d
    }

    func text(_ d: Data) -> String { String(decoding: d, as: UTF8.self) }

    /// Each command and subcommand, and each benchmark, given `--bogus`: exit 2, the option named,
    /// nothing on stdout (no spec, no usage, no report), and no database made under --db.
    func testEveryCommandRefusesAnUnknownOption() throws {
        let dir = try tempDir()
        let db = dir.appendingPathComponent("idvd.sqlite").path
        var cases: [[String]] = [
            ["document", "--bogus"], ["document", "read", "--bogus", "x"], ["document", "read", "page.jpg", "--bogus=1"],
            ["openapi", "--bogus"], ["codes", "--bogus"], ["version", "--bogus"],
            ["mrz", "--bogus"], ["mrz", "parse", "--bogus", "x"],
            ["face", "--bogus"], ["face", "detect", "--bogus", "x"], ["face", "compare", "a", "b", "--bogus", "x"],
            ["face", "export-hog-detector", "--bogus", "x"],
            ["liveness", "--bogus"], ["liveness", "analyze", "--bogus", "x"], ["liveness", "texture", "--bogus"],
            ["liveness", "make-attack", "--bogus", "x"],
            ["selfie", "--bogus"], ["selfie", "verify", "--bogus", "x"],
            ["chip", "--bogus"], ["chip", "verify", "--bogus"],
            ["ocrb", "--bogus"], ["ocrb", "train", "--bogus", "x"], ["ocrb", "check", "--bogus", "x"],
            ["specimen", "--bogus", "x"],
            ["webhook", "--bogus"], ["webhook", "verify", "--bogus", "x"],
            ["serve", "--bogus", "x", "--db", db],
            ["bench", "--bogus"],
        ]
        let list = try IDVDBinary.run(["bench", "--list"])
        XCTAssertEqual(list.status, 0)
        let names = text(list.stdout).split(separator: "\n").map(String.init)
        XCTAssertTrue(names.contains("server") && names.contains("nodes"), text(list.stdout))
        for b in names { cases.append(["bench", b, "--bogus", "x"]) }
        for args in cases {
            let r = try IDVDBinary.run(args)
            let option = args.contains("--bogus") || args.contains("--bogus=1") ? "--bogus"
                : args.first { $0.hasPrefix("--") && $0 != "--db" }!
            XCTAssertEqual(r.status, 2, "\(args): \(text(r.stderr))")
            XCTAssertTrue(text(r.stderr).contains("unknown option \(option)"), "\(args): \(text(r.stderr))")
            XCTAssertEqual(text(r.stdout), "", "\(args): printed on stdout")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "a refused command made files")
    }

    /// `codes`, `openapi` and `version`: --help / -h print a usage line (not the JSON or the
    /// version) and exit 0; a stray argument is refused (exit 2); bare, they print as before.
    func testArgumentlessCommandsHaveUsageAndRefuseStrayArguments() throws {
        for c in ["codes", "openapi", "version"] {
            for help in ["--help", "-h"] {
                let r = try IDVDBinary.run([c, help])
                XCTAssertEqual(r.status, 0, "\(c) \(help): \(text(r.stderr))")
                XCTAssertTrue(text(r.stdout).hasPrefix("usage: idvd \(c)"), "\(c) \(help): \(text(r.stdout))")
                XCTAssertFalse(text(r.stdout).contains("{"), "\(c) \(help): JSON instead of the usage")
            }
            let stray = try IDVDBinary.run([c, "stray"])
            XCTAssertEqual(stray.status, 2, c)
            XCTAssertTrue(text(stray.stderr).contains("unexpected argument 'stray'"), "\(c): \(text(stray.stderr))")
            XCTAssertEqual(text(stray.stdout), "", c)
            let plain = try IDVDBinary.run([c])
            XCTAssertEqual(plain.status, 0, "\(c): \(text(plain.stderr))")
            XCTAssertFalse(text(plain.stdout).hasPrefix("usage:"), c)
        }
        XCTAssertTrue(text(try IDVDBinary.run(["version"]).stdout).hasPrefix("idvd "))
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: try IDVDBinary.run(["codes"]).stdout))
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: try IDVDBinary.run(["openapi"]).stdout))
    }
}
