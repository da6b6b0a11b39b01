import Foundation
import XCTest

/// Where the tests' data lives, and what a test does when it is missing: committed fixtures under
/// `Tests/Fixtures` (SOURCES.md there), the shared data beside the checkout (`../shared/testdata`,
/// its README gives licences), the dlib model files, tools such as `ffmpeg`.
///
/// Missing data is a skip on a developer's machine (the test says what is missing) and a FAILURE
/// under CI (`CI` set to `true` or `1`): a CI run that silently skipped would prove nothing.
public enum TestData {
    /// The package root (the folder holding Package.swift), from this file's path.
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// `Tests/Fixtures`.
    public static let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures")
    /// `../shared/testdata` beside the checkout.
    public static let shared = packageRoot.appendingPathComponent("../shared/testdata").standardizedFileURL

    /// Whether this run is CI (`CI=true` or `CI=1`), where missing data fails instead of skipping.
    public static var underCI: Bool {
        let v = ProcessInfo.processInfo.environment["CI"]?.lowercased()
        return v == "true" || v == "1"
    }

    /// The error a test throws when `what` is missing: `XCTSkip` locally, a failure under CI.
    public static func missing(_ what: String) -> any Error {
        underCI ? MissingTestData(description: "\(what) (CI=true: missing test data fails the test)") : XCTSkip(what)
    }

    /// The bytes of `relative` under `../shared/testdata`; throws ``missing(_:)`` when absent.
    public static func sharedFile(_ relative: String) throws -> Data {
        let url = shared.appendingPathComponent(relative)
        guard let d = FileManager.default.contents(atPath: url.path) else {
            throw missing("test data \(relative) not found under \(shared.path) (../shared/testdata absent)")
        }
        return d
    }

    /// The folder `relative` under `../shared/testdata`; throws ``missing(_:)`` when absent.
    public static func sharedFolder(_ relative: String) throws -> URL {
        let url = shared.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else { throw missing("shared test data \(url.path) is absent") }
        return url
    }

    /// An executable at `path` (e.g. `/usr/bin/ffmpeg`); throws ``missing(_:)`` when absent.
    public static func tool(_ path: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw missing("\(path) is not installed") }
        return path
    }
}

/// Test data a CI run needs is missing (see ``TestData/missing(_:)``).
public struct MissingTestData: Error, CustomStringConvertible {
    public let description: String
}
