import Foundation
import XCTest

/// The codelabs' screens (UIKit view controllers and coordinators, Tests/SeedScreens/<codelab>/,
/// extracted verbatim by scripts/extract-seed-swift) type-check against IDVKit — every SDK call,
/// callback closure, enum case and type they use — with 0 errors.
///
/// Linux has no UIKit and no Objective-C runtime, which the screens' `@IBOutlet`/`@IBAction` need,
/// so they are not compiled into a binary: `swiftc -typecheck -enable-objc-interop` checks them
/// against declaration-only UIKit and ObjectiveC stubs (Tests/SeedScreens/UIKit, …/ObjectiveC),
/// together with the SeedApp target's sources (the seeds' service and delegate manager) and the
/// built `RELID`/`IDVKit` modules. Each folder's ElidedInTheSeed.swift declares what the codelab's
/// screens call but elide (listed in docs/SEED-CONFORMANCE.md §4).
final class SeedScreensTypecheckTests: XCTestCase {
    static let interop = ["-Xfrontend", "-enable-objc-interop", "-Xfrontend", "-disable-objc-attr-requires-foundation-module"]
    static let root = Paths.packageRoot.appendingPathComponent("Tests")
    nonisolated(unsafe) static var stubs: URL?

    /// The built modules (RELID, IDVKit, IDVCore) beside the test bundle (on Linux the bundle URL is
    /// the build folder itself; on Apple platforms the `.xctest` inside it).
    static var modules: URL {
        let b = Bundle(for: SeedScreensTypecheckTests.self).bundleURL
        let candidates = [b.appendingPathComponent("Modules"), b.deletingLastPathComponent().appendingPathComponent("Modules")]
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("RELID.swiftmodule").path) } ?? candidates[0]
    }

    static func swiftc(_ args: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["swiftc"] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    /// The UIKit and ObjectiveC stub modules, built once per run.
    static func stubModules() throws -> URL {
        if let stubs { return stubs }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("seed-screens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, file) in [("ObjectiveC", "SeedScreens/ObjectiveC/ObjectiveC.swift"), ("UIKit", "SeedScreens/UIKit/UIKit.swift")] {
            let r = try swiftc(["-emit-module", "-module-name", name, "-parse-as-library", "-I", dir.path] + interop
                + ["-o", dir.appendingPathComponent("\(name).swiftmodule").path, root.appendingPathComponent(file).path])
            guard r.status == 0 else { throw NSError(domain: "stub", code: Int(r.status), userInfo: [NSLocalizedDescriptionKey: r.output]) }
        }
        stubs = dir
        return dir
    }

    static func swiftFiles(_ folder: String) throws -> [String] {
        let dir = root.appendingPathComponent(folder)
        return try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") }.sorted()
            .map { dir.appendingPathComponent($0).path }
    }

    /// Type-checks `folders` with the SeedApp sources; returns the errors (empty = none).
    func typecheck(_ folders: [String], interop: Bool = true, extra: [String] = []) throws -> [String] {
        guard FileManager.default.fileExists(atPath: Self.modules.appendingPathComponent("RELID.swiftmodule").path) else {
            throw Paths.missing("RELID.swiftmodule not found in \(Self.modules.path) (build the package first)")
        }
        let stubs = try Self.stubModules()
        let sources = try Self.swiftFiles("SeedApp") + Self.swiftFiles("SeedApp/Seeds") + folders.flatMap { try Self.swiftFiles($0) } + extra
        let r = try Self.swiftc(["-typecheck", "-wmo", "-swift-version", "5", "-module-name", "SeedScreens",
                                 "-I", Self.modules.path, "-I", stubs.path] + (interop ? Self.interop : []) + sources)
        let errors = r.output.split(separator: "\n").filter { $0.contains(": error:") }.map(String.init)
        if r.status != 0 && errors.isEmpty { return ["swiftc exited \(r.status): \(r.output.suffix(2000))"] }
        return errors
    }

    func testSeed000Screens() throws { let e = try typecheck(["SeedScreens/000", "SeedScreens/Shared"]); XCTAssertEqual(e, [], e.joined(separator: "\n")) }
    func testSeed001Screens() throws { let e = try typecheck(["SeedScreens/001", "SeedScreens/Shared"]); XCTAssertEqual(e, [], e.joined(separator: "\n")) }
    func testSeed002ScreensAndCoordinator() throws { let e = try typecheck(["SeedScreens/002", "SeedScreens/Shared"]); XCTAssertEqual(e, [], e.joined(separator: "\n")) }
    func testSeed003ScreensAndCoordinator() throws { let e = try typecheck(["SeedScreens/003", "SeedScreens/Shared"]); XCTAssertEqual(e, [], e.joined(separator: "\n")) }
    func testSeed003UIColorHexHelper() throws { let e = try typecheck(["SeedScreens/003-helpers"], interop: false); XCTAssertEqual(e, [], e.joined(separator: "\n")) }
    func testSeed004OptInScreens() throws { let e = try typecheck(["SeedScreens/004-optin", "SeedScreens/Shared"]); XCTAssertEqual(e, [], e.joined(separator: "\n")) }
    func testSeed004OptOutScreens() throws { let e = try typecheck(["SeedScreens/004-optout", "SeedScreens/Shared"]); XCTAssertEqual(e, [], e.joined(separator: "\n")) }

    /// The check can fail: a screen using a spelling IDVKit lacks is caught (here a workflow case
    /// the codelabs never use, and the old labelled-only call shape of an initiation).
    func testTheCheckCatchesAWrongSpelling() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("seed-screens-wrong-\(UUID().uuidString).swift")
        defer { try? FileManager.default.removeItem(at: file) }
        try """
        import UIKit
        import RELID
        final class WrongScreen: UIViewController {
            @IBOutlet weak var startButton: UIButton!
            var idvWorkflow: RDNAIDVWorkflow = .IDV_NO_SUCH_WORKFLOW
            @IBAction func start(_ sender: UIButton) { _ = RDNA.sharedInstance().initiateActivatedCustomerKYC(reasons: "x") }
        }
        """.write(to: file, atomically: true, encoding: .utf8)
        let errors = try typecheck(["SeedScreens/Shared"], extra: [file.path])
        XCTAssertEqual(errors.count, 2, errors.joined(separator: "\n"))
        XCTAssertTrue(errors.contains { $0.contains("IDV_NO_SUCH_WORKFLOW") }, "\(errors)")
    }
}
