import Foundation
import XCTest
@testable import DocumentReader
import Imaging
import IDVTools
import IDVTestSupport

/// `idvd document read --jsonl` as a real process (the `idvd` binary under .build, built by `swift build`).
final class DocumentCommandTests: XCTestCase {
    func idvd() throws -> String { try IDVD.binary() }

    func run(_ args: [String]) throws -> (status: Int32, lines: [[String: Any]]) {
        let r = try IDVD.run(args)
        let lines = r.output.split(separator: "\n").map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
        }
        return (r.status, lines)
    }

    /// A missing and a truncated file each get an error line; the readable image before and after still
    /// gets its report; exit 0. A directory is read file by file, sorted by name.
    func testJSONLGoesOnPastUnreadableFilesAndReadsDirectories() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-jsonl-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SeededRNG(seed: 5)
        let id = SpecimenIdentity.random(.td3, using: &rng)
        let spec = try SpecimenGenerator.render(id, format: .td3)
        let jpeg = try DocumentImage(rgb: spec.image).jpeg(maxDimension: 10_000, quality: 90)
        let good = dir.appendingPathComponent("b.jpg"), trunc = dir.appendingPathComponent("c.jpg")
        try jpeg.write(to: good)
        try jpeg.prefix(2000).write(to: trunc)
        let missing = dir.appendingPathComponent("a-missing.jpg").path

        let r = try run(["document", "read", "--jsonl", "--no-portrait", good.path, missing, trunc.path, good.path])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.lines.count, 4)
        XCTAssertEqual(r.lines.map { $0["file"] as? String }, [good.path, missing, trunc.path, good.path])
        XCTAssertNotNil(r.lines[0]["report"])
        XCTAssertEqual(r.lines[1]["error"] as? String, "cannot read \(missing): no such file")
        XCTAssertTrue((r.lines[2]["error"] as? String ?? "").contains("could not be read as an image"), "\(r.lines[2])")
        XCTAssertNil(r.lines[2]["report"])
        XCTAssertNotNil(r.lines[3]["report"])
        let lines = (r.lines[3]["report"] as? [String: Any])?["mrz"] as? [String: Any]
        XCTAssertEqual(lines?["lines"] as? [String] ?? lines?["lines_read"] as? [String], id.mrzLines(.td3))

        let d = try run(["document", "read", "--jsonl", "--no-portrait", dir.path])
        XCTAssertEqual(d.status, 0)
        XCTAssertEqual(d.lines.map { $0["file"] as? String }, [good.path, trunc.path])
        XCTAssertNotNil(d.lines[0]["report"])
        XCTAssertNotNil(d.lines[1]["error"])

        // Without --jsonl a missing file, and a file that is not a decodable image, exit 2 with no report.
        XCTAssertEqual(try run(["document", "read", missing]).status, 2)
        let notImage = try run(["document", "read", "--no-portrait", trunc.path])
        XCTAssertEqual(notImage.status, 2)
        XCTAssertTrue(notImage.lines.isEmpty, "\(notImage.lines)")
    }

    /// One verdict rule (#22): `idvd document read` judges with the server's policy as the document step
    /// of a flow that matches a selfie — a page whose document has no portrait is INVALID there, as the
    /// server says — and, with `--flow document-scan`, as the document-scan-only flow (WARNING).
    func testNoPortraitIsJudgedAsTheServerJudgesIt() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-verdict-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SeededRNG(seed: 5)
        var id = SpecimenIdentity.random(.td3, using: &rng)
        id.issuingState = "NLD"; id.nationality = "NLD"; id.expiryDate = "351231"
        let spec = try SpecimenGenerator.render(id, format: .td3)   // the rendered portrait is a silhouette: no face
        let file = dir.appendingPathComponent("page.jpg")
        try DocumentImage(rgb: spec.image).jpeg(maxDimension: 10_000, quality: 90).write(to: file)
        func status(_ extra: [String]) throws -> String? {
            let r = try run(["document", "read", "--jsonl", file.path] + extra)
            XCTAssertEqual(r.status, 0)
            return (r.lines.first?["report"] as? [String: Any])?["overall_status"] as? String
        }
        guard try FaceKitAvailable.check() else { return }
        XCTAssertEqual(try status([]), "INVALID")
        XCTAssertEqual(try status(["--flow", "document-scan"]), "WARNING")
    }

    /// One policy (#40): `idvd document read` reads the policy's settings as `idvd serve` does —
    /// `--config FILE` (here the shipped production configuration) and `--set KEY=VALUE` with the
    /// server's keys — so a UTO specimen is INVALID there as on a production server, and a key or
    /// value the server refuses is refused here with the server's message (exit 2).
    func testPolicySettingsAreReadAsTheServerReadsThem() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-policy-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SeededRNG(seed: 5)
        var id = SpecimenIdentity.random(.td3, using: &rng)
        id.issuingState = "UTO"; id.nationality = "UTO"; id.expiryDate = "351231"
        let file = dir.appendingPathComponent("page.jpg")
        try DocumentImage(rgb: try SpecimenGenerator.render(id, format: .td3).image).jpeg(maxDimension: 10_000, quality: 90).write(to: file)
        // Without the tests' IDVD_IDV_DOC_ACCEPT_SPECIMEN_DOCUMENTS, as an operator runs it.
        let env = ProcessInfo.processInfo.environment.filter { $0.key != "IDVD_IDV_DOC_ACCEPT_SPECIMEN_DOCUMENTS" }
            .merging(["IDVD_KEY_DIR": IDVD.keyDirectory.path]) { _, n in n }
        func report(_ extra: [String]) throws -> (status: Int32, verdict: String?, errors: [String]) {
            let r = try IDVD.run(["document", "read", "--jsonl", "--flow", "document-scan", file.path] + extra, replacing: env)
            let line = r.output.split(separator: "\n").first.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
            let rep = line?["report"] as? [String: Any]
            return (r.status, rep?["overall_status"] as? String, rep?["errors"] as? [String] ?? [])
        }
        let plain = try report([])
        XCTAssertEqual(plain.status, 0)
        XCTAssertEqual(plain.verdict, "INVALID", "the code's default refuses specimens (#38): \(plain.errors)")
        XCTAssertTrue(plain.errors.contains { $0.contains("specimen") }, "\(plain.errors)")
        let production = Paths.root.appendingPathComponent("docs/idvd.production.json").path
        for extra in [["--config", production], ["--set", "idv.doc.accept_specimen_documents=false"],
                      ["--set=idv.doc.accept_specimen_documents=false", "--set", "idv.doc.reject_expired=true"]] {
            let r = try report(extra)
            XCTAssertEqual(r.status, 0, "\(extra)")
            XCTAssertEqual(r.verdict, "INVALID", "\(extra)")
            XCTAssertTrue(r.errors.contains { $0.contains("specimen") }, "\(extra): \(r.errors)")
        }
        // --set after --config wins, as for the server.
        XCTAssertNotEqual(try report(["--config", production, "--set", "idv.doc.accept_specimen_documents=true"]).verdict, "INVALID")
        // What the server refuses is refused: an unknown key, a bad value, a missing file (exit 2, no report).
        for extra in [["--set", "idv.doc.no_such_key=1"], ["--set", "idv.doc.accept_specimen_documents=maybe"],
                      ["--config", dir.appendingPathComponent("missing.json").path], ["--set", "no-equals-sign"]] {
            let r = try report(extra)
            XCTAssertEqual(r.status, 2, "\(extra)")
            XCTAssertNil(r.verdict, "\(extra)")
        }
    }
}

extension DocumentCommandTests {
    /// `--debug-strips DIR` writes what each stage saw: for a passport page its MRZ strip, cells and
    /// visual zone; for a TD1 card (both sides given) the MRZ side's strip, cells and text above the
    /// MRZ, and the front upright at the card scale Tesseract reads it at.
    func testDebugStripsWritesEveryStageImageForPagesAndCards() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-strips-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let card = try VisualZoneTests.card(seed: 41)
        let front = dir.appendingPathComponent("front.jpg"), back = dir.appendingPathComponent("back.jpg")
        try card.front.write(to: front)
        try card.back.write(to: back)
        var rng = SeededRNG(seed: 7)
        let page = dir.appendingPathComponent("page.jpg")
        try DocumentImage(rgb: try SpecimenGenerator.render(SpecimenIdentity.random(.td3, using: &rng), format: .td3).image)
            .jpeg(maxDimension: 10_000, quality: 90).write(to: page)
        let out = dir.appendingPathComponent("strips")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        XCTAssertEqual(try run(["document", "read", "--no-portrait", "--debug-strips", out.path, front.path, back.path]).status, 0)
        XCTAssertEqual(try run(["document", "read", "--no-portrait", "--debug-strips", out.path, page.path]).status, 0)
        let written = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        XCTAssertEqual(written, ["back.jpg.cells.png", "back.jpg.mrz.png", "back.jpg.viz.png", "front.jpg.front.png",
                                 "page.jpg.cells.png", "page.jpg.mrz.png", "page.jpg.viz.png"])
        // The front as Tesseract gets it: landscape, at 15 px/mm (a TD1 card is 85.6 mm wide).
        let f = try DocumentImage.decode(path: out.appendingPathComponent("front.jpg.front.png").path).grey
        XCTAssertGreaterThan(f.width, f.height)
        XCTAssertEqual(Double(f.width), 85.6 * DocumentReader.cardPixelsPerMM, accuracy: 0.25 * 85.6 * DocumentReader.cardPixelsPerMM)
    }
}

/// Whether FaceKit's models are installed (the portrait rule needs the detector).
enum FaceKitAvailable {
    static func check() throws -> Bool {
        let dir = ProcessInfo.processInfo.environment["IDV_MODELS_DIR"] ?? (NSHomeDirectory() + "/.cache/openidv/models")
        guard FileManager.default.fileExists(atPath: dir + "/shape_predictor_5_face_landmarks.dat") else {
            throw TestData.missing("dlib models not in \(dir) (scripts/bootstrap installs them)")
        }
        return true
    }
}
