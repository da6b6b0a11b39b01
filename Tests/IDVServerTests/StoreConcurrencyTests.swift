import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVOperations
@testable import IDVStoreSQLite
import IDVServerTestSupport
import XCTest

/// The SQLite store's WAL readers beside its one writer, and the write-lock wait it measures
/// (`idvd_store_write_lock_wait_seconds` in /metrics).
final class StoreConcurrencyTests: XCTestCase {
    private func freshStore(readers: Int = 4) throws -> (SQLiteStore, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("idvd-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let store = try SQLiteStore(path: dir.appendingPathComponent("s.sqlite").path, keyFile: dir.appendingPathComponent("s.key").path, readers: readers)
        return (store, dir)
    }

    private static func user(_ id: String) -> UserRecord {
        UserRecord(userID: id, state: .active, activationRequiresIDV: false, idvWorkflow: 0, passwordHash: nil,
                   failedPasswordAttempts: 0, lockedAt: nil, createdAt: 1, updatedAt: 1)
    }

    /// While one thread holds the write transaction, another thread reads the last commit from a
    /// reader connection without waiting for it: the writer waits (up to 10 s) for that read to
    /// finish, which would never happen were reads queued behind the write lock.
    func testReadsOutsideATransactionDoNotWaitForTheWriter() throws {
        let (store, dir) = try freshStore()
        defer { store.close(); try? FileManager.default.removeItem(at: dir) }
        XCTAssertEqual(store.readerCount, 4)
        try store.createUser(Self.user("before"))
        let inside = DispatchSemaphore(value: 0), readDone = DispatchSemaphore(value: 0)
        let seen = LockedBox<(before: Bool, uncommitted: Bool)>()
        let readFinishedWhileWriterHeld = LockedBox<Bool>()
        let writer = Thread {
            try? store.withTransaction {
                try store.createUser(StoreConcurrencyTests.user("uncommitted"))
                XCTAssertNotNil(try store.user("uncommitted"), "the writer's own reads see its transaction")
                inside.signal()
                readFinishedWhileWriterHeld.value = readDone.wait(timeout: .now() + 10) == .success
            }
        }
        writer.start()
        XCTAssertEqual(inside.wait(timeout: .now() + 10), .success)
        let routingBefore = store.readRouting
        seen.value = (try store.user("before") != nil, try store.user("uncommitted") != nil)
        readDone.signal()
        while readFinishedWhileWriterHeld.value == nil || store.isInTransaction { usleep(1000) }
        XCTAssertEqual(readFinishedWhileWriterHeld.value, true, "a read waited for the write transaction")
        XCTAssertEqual(seen.value?.before, true, "the reader sees the last commit")
        XCTAssertEqual(seen.value?.uncommitted, false, "the reader does not see the open transaction")
        XCTAssertEqual(store.readRouting.onReaders - routingBefore.onReaders, 2)
        XCTAssertNotNil(try store.user("uncommitted"), "committed after")
    }

    /// A transaction that waits for another's lock shows in the wait histogram; an uncontended
    /// one waits ~nothing. The histogram's count is one per transaction and per lone write.
    func testWriteLockWaitIsMeasured() throws {
        let (store, dir) = try freshStore()
        defer { store.close(); try? FileManager.default.removeItem(at: dir) }
        let base = try XCTUnwrap(store.writeLockWaits())
        try store.withTransaction { try store.createUser(Self.user("a")) }
        var h = try XCTUnwrap(store.writeLockWaits())
        XCTAssertEqual(h.count - base.count, 1)
        let holding = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? store.withTransaction {
                holding.signal()
                usleep(1_000_000)   // hold the write lock 1 s (b starts well before it ends, even on a loaded machine)
            }
        }
        holder.start()
        XCTAssertEqual(holding.wait(timeout: .now() + 10), .success)
        try store.withTransaction { try store.createUser(Self.user("b")) }   // waits for the holder
        h = try XCTUnwrap(store.writeLockWaits())
        XCTAssertEqual(h.count - base.count, 3, "a, the holder, b")
        XCTAssertGreaterThan(h.sum - base.sum, 0.1, "b waited for the holder's 1 s")
        // /metrics text carries it.
        let text = Metrics().render(inFlight: 0, queued: 0, storeWriteLockWaits: h)
        XCTAssertTrue(text.contains("# TYPE idvd_store_write_lock_wait_seconds histogram"))
        XCTAssertTrue(text.contains("idvd_store_write_lock_wait_seconds_count \(h.count)\n"))
        XCTAssertTrue(text.contains(#"idvd_store_write_lock_wait_seconds_bucket{le="+Inf"} \#(h.count)"#))
    }

    /// A real idvd process serves the histogram at GET /metrics, and it counts the session's transactions.
    func testMetricsEndpointServesTheWriteLockWait() throws {
        let server = try ServerProcess()
        try server.start()
        defer { server.stop() }
        let api = server.client()
        try api.startSession()
        let r = try api.call("GET", "/metrics")
        XCTAssertEqual(r.status, 200)
        let text = String(decoding: r.raw, as: UTF8.self)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("idvd_store_write_lock_wait_seconds_count ") })
        XCTAssertGreaterThanOrEqual(Int(line.split(separator: " ").last ?? "") ?? 0, 1, String(line))
    }
}

/// A value set on one thread and read on another.
final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T?
    var value: T? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
