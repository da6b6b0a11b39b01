import Foundation
import IDVServerTestSupport
import XCTest
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
@testable import IDVHTTP
import IDVReaders
@testable import IDVStoreSQLite
import IDVTools

/// `documents.warm_up` (default true): `idvd serve` loads the document reader's OCR-B classifier
/// (its offline-trained parameters) on a background thread at start, and logs `document reader
/// ready` with the time it took. The server answers meanwhile.
final class DocumentWarmUpTests: XCTestCase {
    func testServeLoadsTheDocumentReaderInTheBackgroundAtStart() throws {
        let server = try ServerProcess(settings: ["documents.warm_up": "true"])
        try server.start()
        defer { _ = server.stop() }
        // The server answers whether or not the load has ended.
        XCTAssertEqual(try server.client().call("GET", "/healthz").status, 200)
        let deadline = Date().addingTimeInterval(120)
        var line: Substring?
        while line == nil, Date() < deadline {
            line = server.serverLog().split(separator: "\n").first { $0.contains("\"document reader ready\"") }
            if line == nil { usleep(100_000) }
        }
        let entry = try XCTUnwrap(line, "no 'document reader ready' in the log:\n\(server.serverLog())")
        let fields = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(entry.utf8)) as? [String: Any])
        let ms = try XCTUnwrap(fields["load_ms"] as? Int)
        XCTAssertGreaterThanOrEqual(ms, 0)
        XCTAssertEqual(fields["level"] as? String, "info")
    }

    func testWarmUpSettingDefaultsOnAndIsValidated() throws {
        XCTAssertTrue(try ServerConfig.load(file: nil, environment: [:]).documentsWarmUp)
        XCTAssertFalse(try ServerConfig.load(file: nil, environment: ["IDVD_DOCUMENTS_WARM_UP": "false"]).documentsWarmUp)
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["documents.warm_up": "maybe"])) { error in
            XCTAssertTrue("\(error)".contains("documents.warm_up must be true or false, got 'maybe'"), "\(error)")
        }
        // log.requests shares the same parser.
        XCTAssertFalse(try ServerConfig.load(file: nil, environment: [:], overrides: ["log.requests": "off"]).logRequests)
    }
}
