import Foundation
import XCTest

/// Locates committed fixtures (`Tests/Fixtures`) and shared test data (`../shared/testdata`)
/// relative to this file, so tests run from any working directory.
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let faces = packageRoot.appendingPathComponent("Tests/Fixtures/faces")
    static let sharedTestData = packageRoot.appendingPathComponent("../shared/testdata").standardizedFileURL

    static func face(_ name: String) throws -> Data {
        try Data(contentsOf: faces.appendingPathComponent(name))
    }

    /// Under CI (`CI=true`) missing data fails the test; elsewhere it skips it.
    static var underCI: Bool { ProcessInfo.processInfo.environment["CI"]?.lowercased() == "true" }

    struct MissingData: Error, CustomStringConvertible { let description: String }

    /// A folder or file of the shared test data; when absent, an `XCTSkip` naming it — or, under CI,
    /// an error that fails the test (CI must have the data).
    static func shared(_ relative: String) throws -> URL {
        let url = sharedTestData.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            if underCI { throw MissingData(description: "shared test data \(url.path) is absent (CI=true: this is a failure)") }
            throw XCTSkip("shared test data \(url.path) is absent; skipping")
        }
        return url
    }
}
