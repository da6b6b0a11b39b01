import Foundation

/// The committed face fixtures (`Tests/Fixtures/faces`, SOURCES.md there), located from this file.
enum Fixtures {
    static let faces = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/faces")

    static func face(_ name: String) throws -> Data { try Data(contentsOf: faces.appendingPathComponent(name)) }
}
