import Foundation
import XCTest
@testable import MRZ
import IDVTestSupport

/// Shared helpers for the MRZ tests: fixture paths (relative to this file, so `swift test` finds them
/// from any working directory) and a parser with a fixed reference date.
enum Fixtures {
    static let testsDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let mrzDir = testsDir.appendingPathComponent("Fixtures/mrz")
    /// `../shared/testdata` beside the package root.
    static let sharedTestData = testsDir.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/testdata")

    static func text(_ name: String) throws -> String {
        try String(contentsOf: mrzDir.appendingPathComponent(name), encoding: .utf8)
    }

    static func sharedFile(_ relative: String) throws -> URL {
        let url = sharedTestData.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw TestData.missing("shared test data absent: \(url.path) (see Tests/Fixtures/SOURCES.md)")
        }
        return url
    }
}

/// 2026-06-15 UTC: dates in the fixtures and the generator resolve against this.
let referenceDate: Date = {
    var c = DateComponents(); c.year = 2026; c.month = 6; c.day = 15
    var cal = Calendar(identifier: .gregorian); cal.timeZone = TimeZone(identifier: "UTC")!
    return cal.date(from: c)!
}()

func parser(correct: Bool = true, window: Int = 20) -> MRZParser {
    MRZParser(options: .init(referenceDate: referenceDate, expiryWindowYears: window, correctionEnabled: correct))
}
