import XCTest
import IDVCrypto
@testable import IDVStoreSQLite

/// Several processes (here: threads with their own connections) opening a store that does not
/// exist yet: one creates the schema and the key, the others use them.
final class FirstOpenRaceTests: XCTestCase {
    func testEightConcurrentFirstOpensShareOneSchemaAndOneKey() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("first-open-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for round in 0..<40 {
            let path = dir.appendingPathComponent("store-\(round).sqlite").path
            let results = LockedResults()
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                do {
                    let vault = try TemplateVault.load(keyFile: path + ".key", createIfMissing: true)
                    let store = try SQLiteStore(path: path, readers: 0)
                    results.add(.success((try store.schemaVersion(), vault.keyID)))
                    store.close()
                } catch { results.add(.failure(error)) }
            }
            let outcomes = results.all
            XCTAssertEqual(outcomes.count, 8)
            let values = try outcomes.map { try $0.get() }
            XCTAssertEqual(Set(values.map(\.0)), [SQLiteStore.migrations.count], "round \(round): every opener sees the latest schema")
            XCTAssertEqual(Set(values.map(\.1)).count, 1, "round \(round): one key for all")
            XCTAssertEqual(try TemplateVault.load(keyFile: path + ".key", createIfMissing: false).keyID, values[0].1)
        }
    }
}

private final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Result<(Int, String), Error>] = []
    func add(_ r: Result<(Int, String), Error>) { lock.lock(); items.append(r); lock.unlock() }
    var all: [Result<(Int, String), Error>] { lock.lock(); defer { lock.unlock() }; return items }
}
