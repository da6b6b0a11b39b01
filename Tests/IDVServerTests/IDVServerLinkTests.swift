import IDVCrypto
import IDVHTTP
import IDVStoreSQLite
import XCTest

final class IDVServerLinkTests: XCTestCase {
    func testLinkedLibraries() {
        XCTAssertTrue(SQLiteStore.libraryVersion.hasPrefix("3."))
        XCTAssertFalse(Crypto.libsodiumVersion.isEmpty)
        XCTAssertTrue(HTTPServer.libraryVersion.hasPrefix("0.9"))
    }
}
