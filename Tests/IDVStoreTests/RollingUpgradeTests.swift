import CSQLite
import Foundation
import IDVCore
import IDVTestSupport
import IDVTools
import XCTest

/// Two versions on one database during a rolling upgrade (#38, docs/OPERATIONS.md "Upgrades"):
/// migrations only add, so a running node of the older build keeps serving — and stays ready — on
/// a schema one migration newer than its own; an older node does not start on a newer schema
/// (it would not know what the newer migrations mean), it exits naming the two versions.
///
/// The "next release" is simulated on the real SQLite file the node is serving: one more migration
/// of the kind releases ship (a new table, a new column with a default on a table the node writes),
/// applied from outside as the first new node would, with `PRAGMA user_version` moved on by one.
final class RollingUpgradeTests: XCTestCase {
    func testAnOlderNodeKeepsServingOnANewerSchemaAndAnOlderNodeDoesNotStartOnIt() throws {
        let old = try IDVDProcess()
        try old.start()
        defer { old.stop() }
        let http = LoopbackHTTPClient(port: old.port)

        let before = try session(http)
        let build = try schemaVersion(http)
        XCTAssertGreaterThan(build, 0)

        // The next release's migration, applied while the old node runs.
        try applyNextMigration(to: old.dbPath, from: build)

        // The old node keeps serving: new sessions, polling of an earlier one, and it stays ready
        // (a newer schema is not a reason to take it out of the balancer).
        let after = try session(http)
        XCTAssertNotEqual(after, before)
        for token in [before, after] {
            let r = try http.json("GET", "/v1/session", nil, bearer: token)
            XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        }
        let ready = try http.request("GET", "/readyz")
        XCTAssertEqual(ready.status, 200, String(decoding: ready.body, as: UTF8.self))
        let checks = try JSONDecoder().decode(JSONValue.self, from: ready.body)["checks"]
        XCTAssertEqual(checks?["schema"]?.stringValue, "ok")
        XCTAssertEqual(checks?["database"]?.stringValue, "ok")

        // A second node of the same (older) build does not start on the newer schema: exit status
        // non-zero, the reason on standard error, nothing changed in the database.
        let second = try IDVD.run(["serve", "--db", old.dbPath, "--port", "0"] + old.settingArguments)
        XCTAssertNotEqual(second.status, 0)
        XCTAssertTrue(second.errors.contains("schema version \(build + 1) is newer than this build (\(build))"), second.errors)
        XCTAssertEqual(try userVersion(old.dbPath), build + 1)

        // And the running node still answers after the refused start.
        XCTAssertEqual(try http.json("GET", "/v1/session", nil, bearer: after).status, 200)
    }

    /// A new session's token (`POST /v1/sessions`, 201).
    private func session(_ http: LoopbackHTTPClient) throws -> String {
        let r = try http.json("POST", "/v1/sessions", Data(#"{"sdk_version":"rolling-upgrade-test"}"#.utf8))
        XCTAssertEqual(r.status, 201, String(decoding: r.body, as: UTF8.self))
        let env = try JSONDecoder().decode(WireEnvelope.self, from: r.body)
        return try XCTUnwrap(env.session?.token)
    }

    /// The schema version `GET /healthz` reports.
    private func schemaVersion(_ http: LoopbackHTTPClient) throws -> Int {
        let body = try JSONDecoder().decode(JSONValue.self, from: http.request("GET", "/healthz").body)
        return try XCTUnwrap(body["schema_version"]?.intValue)
    }

    private func applyNextMigration(to path: String, from version: Int) throws {
        try withDatabase(path) { db in
            let sql = """
            BEGIN IMMEDIATE;
            CREATE TABLE next_release_feature (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL);
            ALTER TABLE sessions ADD COLUMN next_release_note TEXT NOT NULL DEFAULT '';
            PRAGMA user_version = \(version + 1);
            COMMIT;
            """
            var err: UnsafeMutablePointer<CChar>?
            let rc = sqlite3_exec(db, sql, nil, nil, &err)
            defer { sqlite3_free(err) }
            guard rc == SQLITE_OK else { throw Failure(message: err.map { String(cString: $0) } ?? "rc \(rc)") }
        }
    }

    private func userVersion(_ path: String) throws -> Int {
        try withDatabase(path) { db in
            var stmt: OpaquePointer?
            guard sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nil) == SQLITE_OK else { throw Failure(message: "prepare") }
            defer { sqlite3_finalize(stmt) }
            guard sqlite3_step(stmt) == SQLITE_ROW else { throw Failure(message: "step") }
            return Int(sqlite3_column_int64(stmt, 0))
        }
    }

    private func withDatabase<T>(_ path: String, _ body: (OpaquePointer) throws -> T) throws -> T {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else { throw Failure(message: "cannot open \(path)") }
        defer { sqlite3_close(db) }
        sqlite3_busy_timeout(db, 10_000)
        return try body(db)
    }

    struct Failure: Error, CustomStringConvertible { let message: String; var description: String { message } }
}
