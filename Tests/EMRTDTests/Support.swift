import EMRTD
import Foundation
import IDVTestSupport
import XCTest

/// Where the shared eMRTD samples are (../shared/testdata/emrtd beside the checkout), and the rule for when
/// they are missing (``TestData/missing(_:)``): under CI a missing file fails the test; elsewhere it skips, naming the file.
enum Samples {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let root = packageRoot.appendingPathComponent("../shared/testdata/emrtd").standardized

    struct Missing: Error, CustomStringConvertible { let description: String }

    static func path(_ relative: String, under base: URL = root) throws -> String {
        let p = base.appendingPathComponent(relative).path
        guard FileManager.default.fileExists(atPath: p) else {
            throw TestData.missing("shared eMRTD sample not found at \(p)")
        }
        return p
    }

    /// A file under ../shared/testdata (not only emrtd/).
    static func testdata(_ relative: String) throws -> String { try path(relative, under: root.deletingLastPathComponent()) }

    static func bytes(_ relative: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: try path(relative)))) }

    static func day(_ s: String) -> Date { TestPKI.day(s).addingTimeInterval(12 * 3600) }
}

/// `idvd` commands run to completion (IDVTestSupport ``IDVD``), stderr as text.
enum IDVDCommand {
    static func run(_ args: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
        let r = try IDVD.run(args)
        return (r.status, r.stdout, r.errors)
    }
}

/// A fresh temporary directory, removed at the end of the test.
func temporaryDirectory(_ test: XCTestCase) throws -> String {
    let d = FileManager.default.temporaryDirectory.appendingPathComponent("emrtd-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: d) }
    return d
}
