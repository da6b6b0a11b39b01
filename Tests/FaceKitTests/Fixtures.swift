import Foundation
import XCTest
import IDVTestSupport

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

    /// A folder of the shared test data, or ``TestData/missing(_:)`` naming what is missing (a failure under CI).
    static func shared(_ relative: String) throws -> URL {
        let url = sharedTestData.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw TestData.missing("shared test data \(url.path) is absent; skipping")
        }
        return url
    }
}
