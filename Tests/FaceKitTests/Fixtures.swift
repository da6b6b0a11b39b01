import Foundation
import IDVTestSupport
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

    /// A folder or file of the shared test data; when absent, ``TestData/missing(_:)`` naming it (a
    /// skip locally, a failure under CI: CI must have the data).
    static func shared(_ relative: String) throws -> URL {
        let url = sharedTestData.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else { throw TestData.missing("shared test data \(url.path) is absent") }
        return url
    }
}
