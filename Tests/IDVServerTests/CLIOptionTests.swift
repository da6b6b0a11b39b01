import Foundation
import IDVServerTestSupport
import XCTest

/// The `idvd` command line's operator-facing papercuts, through the real binary: every command and
/// subcommand refuses an unknown option (exit 2, "unknown option --NAME") before doing anything;
/// `codes`, `openapi` and `version` have a usage and take no arguments; `admin audit --limit` is
/// checked; and a typo does not leave a new, empty database behind.
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
            ["liveness", "make-attack", "--bogus", "x"], ["liveness", "calibrate", "--bogus", "x"],
            ["selfie", "--bogus"], ["selfie", "verify", "--bogus", "x"],
            ["chip", "--bogus"], ["chip", "verify", "--bogus"], ["chip", "verify", "--sod=x.bin", "--bogus=1"],
            ["chip", "emulate", "--bogus"],
            ["ocrb", "--bogus"], ["ocrb", "train", "--bogus", "x"], ["ocrb", "check", "--bogus", "x"],
            ["specimen", "--bogus", "x"],
            ["webhook", "--bogus"], ["webhook", "verify", "--bogus", "x"],
            ["serve", "--bogus", "x", "--db", db],
            ["bench", "--bogus"],
            ["admin", "--bogus"],
        ]
        for sub in ["create-user u1", "create-link u1", "list-users", "reset-user u1", "unlock-user u1", "audit", "purge-expired", "retention", "rekey",
                    "new-key k", "trust list", "trust import f", "trust remove x", "where", "rp-client create", "rp-client list",
                    "rp-client revoke c", "review list", "review show c", "review decide c", "webhook add", "webhook list",
                    "webhook rotate-secret e", "webhook remove e", "webhook deliveries", "webhook redeliver e"] {
            cases.append(["admin"] + sub.split(separator: " ").map(String.init) + ["--bogus", "x", "--db", db])
        }
        // An option another admin subcommand takes is still unknown here.
        cases += [["admin", "list-users", "--limit", "3", "--db", db], ["admin", "create-user", "u1", "--verify", "--db", db],
                  ["admin", "review", "list", "--decision", "approve", "--db", db], ["admin", "webhook", "add", "--limit", "3", "--db", db]]
        let list = try IDVDBinary.run(["bench", "--list"])
        XCTAssertEqual(list.status, 0)
        let names = text(list.stdout).split(separator: "\n").map(String.init)
        XCTAssertTrue(names.contains("server") && names.contains("nodes"), text(list.stdout))
        for b in names { cases.append(["bench", b, "--bogus", "x"]) }
        // A single-dash word is a mistyped option, not a file name.
        cases += [["document", "read", "-x"], ["specimen", "-x"], ["codes", "-x"], ["document", "-x"], ["mrz", "parse", "-q"], ["face", "detect", "img.jpg", "-v"],
                  ["admin", "create-user", "-u", "--db", db]]
        for args in cases {
            let r = try IDVDBinary.run(args)
            let option = args.contains("--bogus") || args.contains("--bogus=1") ? "--bogus"
                : args.first { $0.hasPrefix("-") && $0 != "--db" }!
            XCTAssertEqual(r.status, 2, "\(args): \(text(r.stderr))")
            XCTAssertTrue(text(r.stderr).contains("unknown option \(option)"), "\(args): \(text(r.stderr))")
            XCTAssertEqual(text(r.stdout), "", "\(args): printed on stdout")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "a refused command made files")
        // A benchmark (and liveness make-attack) takes options only: a stray argument is refused, nothing runs.
        for args in names.map({ ["bench", $0, "stray"] }) + [["liveness", "make-attack", "--from", "a.jpg", "--out", dir.path, "stray"]] {
            let r = try IDVDBinary.run(args)
            XCTAssertEqual(r.status, 2, "\(args): \(text(r.stderr))")
            XCTAssertTrue(text(r.stderr).contains("unexpected argument 'stray'"), "\(args): \(text(r.stderr))")
            XCTAssertEqual(text(r.stdout), "", "\(args): printed on stdout")
        }
        // -h is --help where a command's own parse reads it (specimen exited 2 with its usage).
        let h = try IDVDBinary.run(["specimen", "-h"])
        XCTAssertEqual(h.status, 0, text(h.stderr))
        XCTAssertTrue(text(h.stdout).hasPrefix("usage: idvd specimen"), text(h.stdout))
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

    /// `admin audit --limit`: -5, 0, abc and 1.5 are refused with one clear message (exit 2); a
    /// positive N prints at most N entries.
    func testAuditLimitMustBeAPositiveInteger() throws {
        let dir = try tempDir()
        let db = dir.appendingPathComponent("idvd.sqlite").path
        for u in ["ada", "bob", "cy"] {
            let r = try IDVDBinary.run(["admin", "create-user", u, "--db", db])
            XCTAssertEqual(r.status, 0, text(r.stderr))
        }
        for bad in ["-5", "0", "abc", "1.5", ""] {
            let r = try IDVDBinary.run(["admin", "audit", "--limit", bad, "--db", db])
            XCTAssertEqual(r.status, 2, "--limit \(bad): \(text(r.stderr))")
            XCTAssertTrue(text(r.stderr).contains("--limit must be a positive integer"), "--limit \(bad): \(text(r.stderr))")
            XCTAssertEqual(text(r.stdout), "")
        }
        let r = try IDVDBinary.run(["admin", "audit", "--limit", "2", "--db", db])
        XCTAssertEqual(r.status, 0, text(r.stderr))
        let entries = try XCTUnwrap((try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])?["entries"] as? [Any])
        XCTAssertEqual(entries.count, 2)
        let verify = try IDVDBinary.run(["admin", "audit", "--verify", "--limit=1", "--db", db])
        XCTAssertEqual(verify.status, 0, text(verify.stderr))
    }

    /// `admin create-user` and `serve` check their arguments, settings and key file before they open
    /// (and so create) the SQLite file, and `serve` removes the file it created when it then cannot
    /// listen: a typo leaves no idvd.sqlite behind. The valid command still creates it.
    func testTyposLeaveNoNewDatabase() throws {
        let dir = try tempDir()
        let db = dir.appendingPathComponent("idvd.sqlite").path
        let looseKey = dir.appendingPathComponent("loose.key").path
        XCTAssertTrue(FileManager.default.createFile(atPath: looseKey, contents: Data(repeating: 7, count: 32),
                                                     attributes: [.posixPermissions: 0o644]))
        let cases: [[String]] = [
            ["admin", "create-user", "--db", db],
            ["admin", "create-user", "ada", "bob", "--db", db],
            ["admin", "create-user", "a b", "--db", db],
            ["admin", "create-user", "ada", "--workflow", "9", "--db", db],
            ["admin", "create-user", "ada", "--workflow", "x", "--db", db],
            ["admin", "create-user", "ada", "--set", "no.such_setting=1", "--db", db],
            ["admin", "create-user", "ada", "--set", "templates.key_file=\(looseKey)", "--db", db],
            ["serve", "stray", "--db", db],
            ["serve", "--port", "http", "--db", db],
            ["serve", "--set", "no.such_setting=1", "--db", db],
            ["serve", "--set", "templates.key_file=\(looseKey)", "--port", "0", "--db", db],
        ]
        for args in cases {
            let r = try IDVDBinary.run(args)
            XCTAssertNotEqual(r.status, 0, "\(args): \(text(r.stdout))")
            XCTAssertFalse(FileManager.default.fileExists(atPath: db), "\(args) left \(db) behind: \(text(r.stderr))")
            try? FileManager.default.removeItem(atPath: db)
        }
        // A start that fails at the listening socket (the port is another server's) removes the file it made.
        let other = try ServerProcess()
        try other.start()
        defer { _ = other.stop() }
        let taken = try IDVDBinary.run(["serve", "--port", "\(other.port)", "--set", "documents.warm_up=false", "--db", db])
        XCTAssertNotEqual(taken.status, 0, text(taken.stdout))
        XCTAssertFalse(FileManager.default.fileExists(atPath: db), "a failed start left \(db) behind: \(text(taken.stderr))")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("idvd.sqlite") }, [])
        let ok = try IDVDBinary.run(["admin", "create-user", "ada", "--workflow", "1", "--no-idv", "--db", db])
        XCTAssertEqual(ok.status, 0, text(ok.stderr))
        XCTAssertTrue(FileManager.default.fileExists(atPath: db))
    }

    /// `idvd bench NAME --help`: its usage lines list every option its parse accepts (the table
    /// below, read from each benchmark's parse code), and every option they list is accepted
    /// (`--OPTION 1 --bogus` is refused for --bogus, not for OPTION; nothing runs).
    func testBenchUsageListsEveryOptionItAccepts() throws {
        let accepted: [String: Set<String>] = [
            "payload": ["image-kb", "iterations"],
            "server": ["seconds", "connections", "threads", "light-argon2", "no-wrk", "server", "heavy", "uploaders", "frames", "light"],
            "mrz": ["count"],
            "face": ["pairs", "images", "limit", "threads", "repeat", "cache", "stage-image", "probe-images", "split", "measure-cache",
                     "variants", "weighted", "stages-only", "lfw-only", "with-pairs"],
            "workflow": ["frames", "iterations", "document"],
            "document": ["corpus", "truth", "limit", "jsonl", "working-size", "portrait-search", "name-lines", "processes", "page", "portrait", "passporteye"],
            "liveness": ["data", "split", "fps", "threshold", "max-frames", "seconds", "lfw", "dump", "study", "texture-frames", "only",
                         "no-frame-cache", "verbose", "no-simulated", "config"],
            "ocrb": ["seed", "lines", "train"],
            "nodes": ["seconds", "connections", "nodes", "argon2", "db", "server", "async-commit", "set"],
            "audit": ["records", "writers", "appends", "db", "async-commit"],
            "chip": ["iterations", "samples"],
            "chip-read": ["iterations", "sizes", "quick"],
            "webhooks": ["events", "batch", "poll-ms"],
            "presence": ["data", "split", "windows", "scenes", "lux", "delays", "far", "min-score", "guard", "draws", "clips", "dump", "verbose", "retake-p", "variants", "texture"],
        ]
        let names = text(try IDVDBinary.run(["bench", "--list"]).stdout).split(separator: "\n").map(String.init)
        XCTAssertEqual(Set(names), Set(accepted.keys), "a benchmark without a row here")
        let option = try NSRegularExpression(pattern: "--[a-z0-9-]+")
        for name in names {
            let r = try IDVDBinary.run(["bench", name, "--help"])
            XCTAssertEqual(r.status, 0, "\(name): \(text(r.stderr))")
            // The usage block: the "usage:" line and its continuation lines ("[…", "idvd bench …").
            var block: [String] = []
            for line in text(r.stdout).split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                let t = line.trimmingCharacters(in: .whitespaces)
                if block.isEmpty ? t.hasPrefix("usage: idvd bench \(name)") : (t.hasPrefix("[") || t.hasPrefix("idvd bench \(name)")) {
                    block.append(line)
                } else if !block.isEmpty { break }
            }
            let usage = block.joined(separator: "\n")
            let listed = Set(option.matches(in: usage, range: NSRange(usage.startIndex..., in: usage)).map {
                String(usage[Range($0.range, in: usage)!].dropFirst(2))
            })
            XCTAssertEqual(listed.subtracting(["help"]), accepted[name], "\(name): usage lists \(listed.sorted()) in:\n\(usage)")
            for o in listed.sorted() {
                let t = try IDVDBinary.run(["bench", name, "--\(o)", o == "set" ? "a=b" : "1", "--bogus"])
                XCTAssertEqual(t.status, 2, "bench \(name) --\(o)")
                XCTAssertTrue(text(t.stderr).contains("unknown option --bogus"), "bench \(name) --\(o): \(text(t.stderr))")
            }
        }
    }
}
