import Foundation
import IDVCore
import IDVStoreSQL
@testable import IDVStorePostgres
import IDVTestSupport
import XCTest

/// Issue #37: erasure on PostgreSQL. A person with a history (activation, then login, on a real
/// `idvd serve`, a second live session, a verification link) is erased with `idvd admin
/// erase-user`; then every column of every table of the database is searched for the user id
/// (text columns as text, byte columns as bytes) and none names them, and the audit chain verifies.
final class PostgresErasureTests: XCTestCase {
    private var databases: [String] = []
    private var clusters: [Cluster] = []
    let password = "correct horse 1"

    override func tearDown() {
        clusters.forEach { $0.nodes.forEach { $0.kill() } }
        clusters.removeAll()
        databases.forEach(ScratchPostgres.drop)
        databases.removeAll()
    }

    /// Every (table, column) of the database holding `needle`, with the count of rows.
    func tablesNaming(_ needle: String, _ store: PostgresStore) throws -> [String: Int] {
        let columns = try store.query("""
            SELECT table_name, column_name, data_type FROM information_schema.columns
            WHERE table_schema = current_schema() ORDER BY table_name, column_name
            """).rows
        XCTAssertGreaterThan(columns.count, 50, "every table's columns")
        var found: [String: Int] = [:]
        for c in columns {
            let table = try c.text(0), column = try c.text(1), type = try c.text(2)
            let condition = type == "bytea" ? "position(convert_to($1, 'UTF8') in \"\(column)\") > 0"
                                            : "strpos(\"\(column)\"::text, $1) > 0"
            let n = try store.query("SELECT count(*) FROM \"\(table)\" WHERE \(condition)", [.text(needle)]).rows.first?.int(0) ?? 0
            if n > 0 { found["\(table).\(column)"] = n }
        }
        return found
    }

    func testEraseUserLeavesNoRowNamingThePersonAndTheAuditVerifies() throws {
        let server = try ScratchPostgres.require()
        let url = try ScratchPostgres.freshDatabase()
        databases.append(url)
        let c = try Cluster(url: url, password: server.password)
        clusters.append(c)
        let node = try c.start(1)[0]
        let user = "pg.erasable-5d0c3a"
        let code = try c.createUser(user)
        // Activation (device bound, password set), then a second, logged-in session.
        for activationCode in [code, nil] {
            let client = node.client()
            try client.startSession()
            for _ in 0..<8 {
                guard let ch = client.last?.challenge else { break }
                let payload = try XCTUnwrap(ch.answer(user: user, code: activationCode, password: password), "unexpected challenge \(ch.name)")
                let r = try client.answer(payload)
                XCTAssertEqual(r.code, 0, "\(ch.name): \(String(describing: r.envelope?.error))")
                if r.challenge == nil { break }
            }
        }
        let link = try c.admin(["create-link", user, "--flow", "idv.postlogin.kyc"])
        XCTAssertEqual(link.status, 0, link.stderr)

        let store = try PostgresStore(settings: PostgresConnectionSettings(url: url, password: server.password, poolSize: 2),
                                      keyFile: c.keyFile, previousKeyFiles: [], createSchema: false)
        defer { store.close() }
        let before = try tablesNaming(user, store)
        for t in ["users.user_id", "sessions.user_id", "activation_codes.user_id", "verification_links.user_id", "audit_subjects.user_id"] {
            XCTAssertNotNil(before[t], "\(t) names the user before: \(before)")
        }

        let erased = try c.admin(["erase-user", user])
        XCTAssertEqual(erased.status, 0, erased.stderr)
        XCTAssertEqual(erased.json?["user_id"]?.stringValue, user)
        XCTAssertEqual(try tablesNaming(user, store), [:], "no row names the erased user")
        XCTAssertEqual(try c.admin(["erase-user", user]).json, erased.json, "the same receipt again")
        let audit = try c.verifyAudit()
        XCTAssertTrue(audit.valid, "the chain verifies after the erasure")
        XCTAssertGreaterThan(audit.entries, 3)
    }
}
