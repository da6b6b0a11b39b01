import Foundation
import IDVCore
import IDVTools
import IDVServerTestSupport
import XCTest

/// What a new operator runs into first (issue #21 item 8 and the fresh-user defects): the key file's
/// mode and place, `idvd admin where`, second-level `--help`, out-of-range ports, `create-link --port`,
/// `liveness analyze` usage errors, missing model files, and audit truncation.
final class FreshUserTests: XCTestCase {
    func tempDir() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-fresh-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: d) }
        return d
    }

    func text(_ d: Data) -> String { String(decoding: d, as: UTF8.self) }

    // MARK: Keys (item 8)

    /// The default key file lives outside the database's folder; `idvd admin where` names both.
    func testDefaultKeyLivesApartFromTheDatabaseAndAdminWhereSaysWhere() throws {
        let dir = try tempDir(), keys = try tempDir()
        let db = dir.appendingPathComponent("idvd.sqlite").path
        let env = ["IDVD_KEY_DIR": keys.path]
        let created = try IDVDBinary.run(["admin", "create-user", "una", "--db", db], environment: env)
        XCTAssertEqual(created.status, 0, text(created.stderr))
        XCTAssertFalse(FileManager.default.fileExists(atPath: db + ".key"), "no key beside the database")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".key") }, [])
        let r = try IDVDBinary.run(["admin", "where", "--db", db], environment: env)
        XCTAssertEqual(r.status, 0, text(r.stderr))
        let w = try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        XCTAssertEqual(w["database"]?["location"]?.stringValue, db)
        XCTAssertEqual(w["database"]?["engine"], "sqlite")
        let key = try XCTUnwrap(w["key_file"]?["path"]?.stringValue)
        XCTAssertTrue(key.hasPrefix(keys.path + "/idvd.sqlite-") && key.hasSuffix(".key"), key)
        XCTAssertEqual(w["key_file"]?["source"], "state_directory")
        XCTAssertEqual(w["key_file"]?["exists"], true)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int, 0o600)
        // The same database from another working directory finds the same key (the path is absolute).
        let relative = Process()
        relative.executableURL = URL(fileURLWithPath: try IDVDBinary.path())
        relative.arguments = ["admin", "where", "--db", "idvd.sqlite"]
        relative.currentDirectoryURL = dir
        relative.environment = ProcessInfo.processInfo.environment.merging(env) { _, n in n }
        let out = Pipe()
        relative.standardOutput = out
        try relative.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        relative.waitUntilExit()
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: data)["key_file"]?["path"]?.stringValue, key)
        // `admin --help` says where the key lives by default.
        let help = text(try IDVDBinary.run(["admin", "--help"]).stdout)
        XCTAssertTrue(help.contains("where") && help.contains("IDVD_KEY_DIR"), help)
    }

    /// An existing database opened without its key file (another key directory, a restore to a new
    /// host) is refused by `idvd serve` and `idvd admin`, naming both paths: a key made there would
    /// leave the templates and session states sealed under the old one unreadable. Nothing is created.
    func testAnExistingDatabaseWithoutItsKeyFileIsRefused() throws {
        let dir = try tempDir(), keys = try tempDir(), elsewhere = try tempDir()
        let db = dir.appendingPathComponent("idvd.sqlite").path
        XCTAssertEqual(try IDVDBinary.run(["admin", "create-user", "ole", "--db", db], environment: ["IDVD_KEY_DIR": keys.path]).status, 0)
        for args in [["admin", "list-users", "--db", db], ["serve", "--db", db, "--port", "0"]] {
            let r = try IDVDBinary.run(args, environment: ["IDVD_KEY_DIR": elsewhere.path])
            XCTAssertNotEqual(r.status, 0, args[0])
            let message = text(r.stderr)
            XCTAssertTrue(message.contains("exists but its key file") && message.contains(elsewhere.path) && message.contains("idvd admin new-key"), message)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path), [], "no key file was made")
        // With its own key directory it opens as before.
        XCTAssertEqual(try IDVDBinary.run(["admin", "list-users", "--db", db], environment: ["IDVD_KEY_DIR": keys.path]).status, 0)
    }

    /// A key file group or others can read (or write) is refused, naming the path and `chmod 600`;
    /// nothing is opened or changed.
    func testALooseKeyFileIsRefusedWithTheFix() throws {
        let dir = try tempDir(), keys = try tempDir()
        let db = dir.appendingPathComponent("idvd.sqlite").path
        let env = ["IDVD_KEY_DIR": keys.path]
        XCTAssertEqual(try IDVDBinary.run(["admin", "create-user", "ole", "--db", db], environment: env).status, 0)
        let key = try XCTUnwrap(JSONDecoder().decode(JSONValue.self, from: IDVDBinary.run(["admin", "where", "--db", db], environment: env).stdout)["key_file"]?["path"]?.stringValue)
        for mode in [0o644, 0o640, 0o602] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: key)
            for args in [["admin", "list-users", "--db", db], ["serve", "--db", db, "--port", "0"]] {
                let r = try IDVDBinary.run(args, environment: env)
                XCTAssertNotEqual(r.status, 0, "\(args[0]) with mode \(String(mode, radix: 8))")
                let message = text(r.stderr)
                XCTAssertTrue(message.contains(key) && message.contains("chmod 600") && message.contains("group or others"), message)
            }
            XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int, mode, "the operator's file is not altered")
        }
        // An explicit templates.key_file is checked the same way.
        let explicit = dir.appendingPathComponent("mine.key").path
        XCTAssertEqual(try IDVDBinary.run(["admin", "new-key", explicit]).status, 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o604], ofItemAtPath: explicit)
        let r = try IDVDBinary.run(["admin", "create-user", "pia", "--db", dir.appendingPathComponent("other.sqlite").path, "--set", "templates.key_file=\(explicit)"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(text(r.stderr).contains("chmod 600 \(explicit)"), text(r.stderr))
    }

    /// A database made before the key left its folder (`<db>.key` beside it) keeps working — its
    /// data still opens — and `idvd serve` and `idvd admin where` say how to move the key.
    func testAnOldKeyBesideTheDatabaseIsStillUsedWithAWarning() throws {
        let dir = try tempDir(), keys = try tempDir()
        let db = dir.appendingPathComponent("idvd.sqlite").path
        let legacy = db + ".key"
        // The old layout: the key beside the database, named explicitly as the old default was.
        XCTAssertEqual(try IDVDBinary.run(["admin", "create-user", "old", "--db", db, "--set", "templates.key_file=\(legacy)"]).status, 0)
        let env = ["IDVD_KEY_DIR": keys.path]
        let w = try JSONDecoder().decode(JSONValue.self, from: IDVDBinary.run(["admin", "where", "--db", db], environment: env).stdout)
        XCTAssertEqual(w["key_file"]?["path"]?.stringValue, legacy)
        XCTAssertEqual(w["key_file"]?["source"], "beside_database")
        let target = try XCTUnwrap(w["key_file"]?["default_path"]?.stringValue)
        let warning = try XCTUnwrap(w["key_file"]?["warning"]?.stringValue)
        XCTAssertTrue(warning.contains("mv -n \(legacy) \(target)"), warning)
        // A different key already at the default place: the advice never overwrites it.
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        XCTAssertEqual(try IDVDBinary.run(["admin", "new-key", target]).status, 0)
        let clash = try JSONDecoder().decode(JSONValue.self, from: IDVDBinary.run(["admin", "where", "--db", db], environment: env).stdout)
        let clashWarning = try XCTUnwrap(clash["key_file"]?["warning"]?.stringValue)
        XCTAssertFalse(clashWarning.contains("mv "), clashWarning)
        XCTAssertTrue(clashWarning.contains("already exists") && clashWarning.contains("templates.key_file"), clashWarning)
        try FileManager.default.removeItem(atPath: target)
        let server = try ServerProcess(dir: dir)
        server.environment = env
        try server.start()
        let api = server.client()
        try api.startSession()
        XCTAssertEqual(try api.answer(["user_id": "old"]).challenge?.name, "getActivationCode", "the old store serves")
        server.stop()
        XCTAssertTrue(server.serverLog().contains("key file beside the database"), server.serverLog())
        // Moved as advised: the same data opens from the new place, and the warning is gone.
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: legacy, toPath: target)
        let after = try JSONDecoder().decode(JSONValue.self, from: IDVDBinary.run(["admin", "where", "--db", db], environment: env).stdout)
        XCTAssertEqual(after["key_file"]?["path"]?.stringValue, target)
        XCTAssertNil(after["key_file"]?["warning"]?.stringValue)
        try server.start()
        let again = server.client()
        try again.startSession()
        XCTAssertEqual(try again.answer(["user_id": "old"]).challenge?.name, "getActivationCode")
    }

    // MARK: CLI defects

    func testOutOfRangePortsAreRefused() throws {
        for port in ["99999", "65536", "-1"] {
            let r = try IDVDBinary.run(["serve", "--db", FileManager.default.temporaryDirectory.appendingPathComponent("never-\(UUID().uuidString).sqlite").path,
                                        "--port", port])
            XCTAssertEqual(r.status, 2, port)
            XCTAssertTrue(text(r.stderr).contains("listen.port must be an integer from 0 to 65535"), text(r.stderr))
        }
    }

    func testSecondLevelHelpPrintsThatCommandsUsage() throws {
        for sub in ["create-user", "create-link", "audit", "trust", "where", "new-key"] {
            let r = try IDVDBinary.run(["admin", sub, "--help"])
            XCTAssertEqual(r.status, 0, "\(sub): \(text(r.stderr))")
            let out = text(r.stdout)
            XCTAssertTrue(out.contains("usage: idvd admin \(sub)") && out.contains("  \(sub)"), out)
            XCTAssertTrue(r.stderr.isEmpty, text(r.stderr))
        }
        XCTAssertTrue(text(try IDVDBinary.run(["admin", "create-user", "-h"]).stdout).contains("--no-idv"))
        // Other commands' subcommands: the command's usage, exit 0 (was "option --help needs a value", exit 2).
        for args in [["liveness", "analyze", "--help"], ["face", "detect", "--help"], ["bench", "server", "--help"]] {
            let r = try IDVDBinary.run(args)
            XCTAssertEqual(r.status, 0, "\(args): \(text(r.stderr))")
            XCTAssertTrue(text(r.stdout).contains("usage: idvd \(args[0])"), text(r.stdout))
        }
        // A benchmark's --help prints that benchmark's usage (its own where it has one) and runs nothing.
        for (bench, line) in [("document", "usage: idvd bench document [--corpus DIR]"), ("chip", "usage: idvd bench chip"),
                              ("payload", "usage: idvd bench payload")] {
            let r = try IDVDBinary.run(["bench", bench, "--help"])
            XCTAssertEqual(r.status, 0, "\(bench): \(text(r.stderr))")
            XCTAssertTrue(text(r.stdout).contains(line), "\(bench): \(text(r.stdout))")
            XCTAssertFalse(text(r.stdout).contains("benchmarks:"), "\(bench): the list of all benchmarks instead of its usage")
        }
        let unknown = try IDVDBinary.run(["admin", "list-users", "--nonsense", "1", "--db", "/nonexistent/x.sqlite"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(text(unknown.stderr).contains("unknown option --nonsense"), text(unknown.stderr))
        // An unknown last option is unknown, not "needs a value".
        for args in [["serve", "--frob"], ["admin", "list-users", "--frob"], ["bench", "document", "--frob"]] {
            let r = try IDVDBinary.run(args)
            XCTAssertEqual(r.status, 2, "\(args)")
            XCTAssertTrue(text(r.stderr).contains("unknown option --frob"), "\(args): \(text(r.stderr))")
        }
        // A group's subcommand gets its own lines, not the whole group's.
        let add = try IDVDBinary.run(["admin", "webhook", "add", "--help"])
        XCTAssertEqual(add.status, 0, text(add.stderr))
        XCTAssertTrue(text(add.stdout).contains("webhook add --url URL"), text(add.stdout))
        XCTAssertFalse(text(add.stdout).contains("webhook remove") || text(add.stdout).contains("webhook deliveries"), text(add.stdout))
    }

    func testCreateLinkUsesPortWhenNoPublicURLIsSet() throws {
        let dir = try tempDir()
        let db = dir.appendingPathComponent("idvd.sqlite").path
        XCTAssertEqual(try IDVDBinary.run(["admin", "create-user", "lia", "--db", db]).status, 0)
        let r = try IDVDBinary.run(["admin", "create-link", "lia", "--port", "8123", "--db", db])
        XCTAssertEqual(r.status, 0, text(r.stderr))
        let url = try XCTUnwrap(JSONDecoder().decode(JSONValue.self, from: r.stdout)["url"]?.stringValue)
        XCTAssertTrue(url.hasPrefix("http://localhost:8123/verify/#link="), url)
        let bad = try IDVDBinary.run(["admin", "create-link", "lia", "--port", "70000", "--db", db])
        XCTAssertEqual(bad.status, 2)
    }

    func testLivenessAnalyzeOnOneImageIsAUsageError() throws {
        let image = IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures").path
        let jpeg = try XCTUnwrap(FileManager.default.enumerator(atPath: image)?.compactMap { $0 as? String }.first { $0.hasSuffix(".jpg") },
                                 "a JPEG fixture")
        let r = try IDVDBinary.run(["liveness", "analyze", image + "/" + jpeg])
        XCTAssertEqual(r.status, 2, text(r.stderr))
        XCTAssertTrue(text(r.stderr).contains("is a single image") && text(r.stderr).contains("sequence of frames"), text(r.stderr))
        XCTAssertTrue(r.stdout.isEmpty)
        let empty = try tempDir()
        let none = try IDVDBinary.run(["liveness", "analyze", empty.path])
        XCTAssertEqual(none.status, 2, text(none.stderr))
        XCTAssertTrue(text(none.stderr).contains("gave 0 frames"), text(none.stderr))
    }

    /// `selfie verify` on a capture the server would step up (passive evidence with texture below
    /// `idv.pad.challenge_below`: aoc_live reads about 1.8) says so — pad_outcome `challenge`,
    /// retake_code 1066 with `retake_challenge` — and decides the verdict on the capture's own
    /// evidence, as the server does when no challenge can be asked: never LIVENESS_FAILED for it.
    func testSelfieVerifyReportsAStepUpAndDecidesOnTheEvidence() throws {
        let aoc = IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures/selfie/aoc_live")
        let r = try IDVDBinary.run(["selfie", "verify", aoc.path, "--against", aoc.appendingPathComponent("frame_001.jpg").path])
        let v = try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        XCTAssertEqual(v["pad_outcome"], "challenge", "\(v)")
        XCTAssertEqual(v["pad_findings"]?.arrayValue, ["texture_not_conclusive"])
        XCTAssertEqual(v["retake_code"]?.intValue, 1066)
        XCTAssertEqual(v["retake_challenge"], true)
        XCTAssertLessThan(try XCTUnwrap(v["texture_log_odds"]?.doubleValue), 2.75)
        XCTAssertEqual(v["display_text"], "MATCHED", "\(v)")
        XCTAssertEqual(r.status, 0)
    }

    /// `liveness analyze` prints the texture cue the server's PAD policy reads (calibrated log-odds,
    /// with its good frames of those scored) and the plane motion: on the fixture's live capture the
    /// same texture reading `selfie verify` gives (one evidence, two commands), above the default
    /// line and above a held print of the same person; the face moving as a live face does, against
    /// one frame repeated (a face held perfectly still), whose plane motion is about nothing.
    func testLivenessAnalyzePrintsTextureAndPlaneMotion() throws {
        let selfie = IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures/selfie")
        let live = selfie.appendingPathComponent("katie_live"), portrait = selfie.appendingPathComponent("katie_portrait.jpg")
        let dir = try tempDir()
        func analyze(_ path: URL) throws -> JSONValue {
            let r = try IDVDBinary.run(["liveness", "analyze", path.path])
            XCTAssertTrue([0, 1].contains(r.status), text(r.stderr))
            return try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        }
        func number(_ v: JSONValue, _ key: String) throws -> Double {
            let x = try XCTUnwrap(v[key], "\(key) in \(v)")
            return try XCTUnwrap(x.intValue.map(Double.init) ?? x.doubleValue, "\(key) is a number: \(v)")
        }
        let a = try analyze(live)
        let texture = try number(a, "texture_log_odds"), good = try number(a, "texture_good_frames")
        let scored = try number(a, "texture_scored_frames"), frames = try number(a, "frame_count")
        XCTAssertTrue(good >= 1 && good <= scored && scored <= frames, "\(a)")
        XCTAssertGreaterThan(texture, -1.6, "a live face's texture is above the default line: \(a)")
        let verify = try IDVDBinary.run(["selfie", "verify", live.path, "--against", portrait.path])
        let verified = try JSONDecoder().decode(JSONValue.self, from: verify.stdout)
        XCTAssertEqual(texture, try number(verified, "texture_log_odds"), accuracy: 1e-9, "analyze and selfie verify read one texture cue")

        let print = dir.appendingPathComponent("print")
        let made = try IDVDBinary.run(["liveness", "make-attack", "--from", portrait.path, "--out", print.path, "--frames", "30", "--seed", "7"])
        XCTAssertEqual(made.status, 0, text(made.stderr))
        XCTAssertLessThan(try number(try analyze(print), "texture_log_odds"), texture, "a print's texture reads less live than the face's")

        let still = dir.appendingPathComponent("still")
        try FileManager.default.createDirectory(at: still, withIntermediateDirectories: true)
        let first = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: live.path).filter { $0.hasSuffix(".jpg") }.sorted().first)
        for i in 1...20 {
            try FileManager.default.copyItem(at: live.appendingPathComponent(first), to: still.appendingPathComponent(String(format: "frame_%02d.jpg", i)))
        }
        let held = try analyze(still)
        XCTAssertLessThan(try number(held, "plane_motion"), 0.05, "one frame repeated barely moves as a plane: \(held)")
        XCTAssertGreaterThan(try number(a, "plane_motion"), 0.1, "the live capture's face moves: \(a)")
        XCTAssertLessThanOrEqual(try number(held, "texture_good_frames"), try number(held, "texture_scored_frames"), "\(held)")
    }

    // MARK: Missing model files

    /// Without the dlib model files `idvd serve` says so once at start, and the flows that need
    /// them answer 1033 workflowUnavailable (503) when started — not a 500/1030 half-way.
    func testMissingModelFilesAreReportedAtStartAndFlowsAnswer1033() throws {
        let server = try ServerProcess()
        server.environment["IDV_MODELS_DIR"] = try tempDir().path
        try server.start()
        let log = server.serverLog()
        XCTAssertTrue(log.contains("dlib model files missing") && log.contains("shape_predictor_68_face_landmarks.dat"), log)
        // An activation that needs IDV: asked again at getUser with 1033.
        _ = try XCTUnwrap(server.admin(["create-user", "ida"])["activation_code"]?.stringValue)
        let a = server.client()
        try a.startSession()
        let refused = try a.answer(["user_id": "ida"])
        XCTAssertEqual(refused.challenge?.name, "getUser", String(decoding: refused.raw, as: UTF8.self))
        XCTAssertEqual(refused.challenge?.error?.longErrorCode, 1033)
        // A logged-in user starting a selfie flow: 503 with 1033, nothing started.
        let code = try server.createUser("max")
        let api = server.client()
        try api.startSession()
        try api.answer(["user_id": "max"])
        try api.answer(["activation_code": .string(code)])
        XCTAssertEqual(try api.answer(["password": "Max passes 2026"]).event?.name, WireName.onUserLoggedIn)
        for flow in [FlowName.kyc, FlowName.serverBiometric, FlowName.optIn] {
            let r = try api.call("POST", "/v1/flows/\(flow)", nil)
            XCTAssertEqual(r.status, 503, flow)
            XCTAssertEqual(r.error?.longErrorCode, 1033, flow)
        }
        XCTAssertEqual(try api.call("POST", "/v1/flows/no.such.flow", nil).status, 404)
        XCTAssertEqual(try api.call("POST", "/v1/flows/\(FlowName.documentScan)", nil).status, 200, "document-only flows still run")
    }

    // MARK: Audit chain truncation (SQLite head)

    /// Deleting the newest audit entries is detected: `idvd admin audit --verify` exits 1 naming
    /// the first missing seq (the chain's head, `audit_head`, moves with every append).
    func testTruncatingTheNewestAuditEntriesIsDetected() throws {
        let dir = try tempDir()
        let db = dir.appendingPathComponent("idvd.sqlite").path
        for u in ["a1", "a2", "a3"] { XCTAssertEqual(try IDVDBinary.run(["admin", "create-user", u, "--db", db]).status, 0) }
        let ok = try JSONDecoder().decode(JSONValue.self, from: IDVDBinary.run(["admin", "audit", "--verify", "--db", db]).stdout)
        XCTAssertEqual(ok["chain_valid"], true)
        let n = try XCTUnwrap(ok["entries_checked"]?.intValue)
        XCTAssertGreaterThanOrEqual(n, 3)
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = ["python3", "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM audit_log WHERE seq = (SELECT max(seq) FROM audit_log)'); c.commit()", db]
        try sqlite.run()
        sqlite.waitUntilExit()
        XCTAssertEqual(sqlite.terminationStatus, 0)
        let r = try IDVDBinary.run(["admin", "audit", "--verify", "--db", db])
        XCTAssertEqual(r.status, 1)
        let broken = try JSONDecoder().decode(JSONValue.self, from: r.stdout)
        XCTAssertEqual(broken["chain_valid"], false)
        XCTAssertEqual(broken["first_invalid_seq"]?.intValue, n)
    }
}
