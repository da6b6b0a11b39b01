import Foundation
import XCTest

/// The test harness's `idvd` processes keep their default key file (KeyLocation, `IDVD_KEY_DIR`)
/// in the harness's own temp folder, removed with it, not in ~/.local/state/openidv/keys.
final class HarnessKeyTests: XCTestCase {
    func testHarnessKeepsItsKeyFileInItsOwnFolder() throws {
        var dir: URL?
        do {
            let server = try IDVDServer()
            dir = server.dir
            _ = try server.createUser("harness-key")
            let keys = server.dir.appendingPathComponent("keys")
            let files = try FileManager.default.contentsOfDirectory(atPath: keys.path)
            XCTAssertEqual(files.filter { $0.hasSuffix(".key") }.count, 1, "\(files)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: try XCTUnwrap(dir).path), "the harness's folder (and its keys) outlived it")
    }
}
