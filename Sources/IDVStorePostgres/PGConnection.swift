internal import CPostgres
import Foundation
import IDVEngine
import IDVRuntime
import IDVStoreSQL

/// The SQLSTATE classes the store acts on (PostgreSQL Appendix A, "Error Codes").
enum PGErrorClass {
    /// 23505 unique_violation, 23503 foreign_key_violation: ``StoreError/conflict(_:)``.
    static let conflicts: Set<String> = ["23505", "23503"]
    /// 40001 serialization_failure, 40P01 deadlock_detected: the transaction was rolled back by the
    /// server; the store's write lock makes them unexpected (they would mean a lock-order bug).
    static let rolledBack: Set<String> = ["40001", "40P01"]

    /// The failures that mean "the database cannot serve for now" (``StoreError/unavailable(_:_:)``,
    /// 503 with Retry-After at the HTTP edge), by SQLSTATE: class 08 (connection exception),
    /// 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300
    /// too_many_connections, 40001/40P01 (rolled back), 55P03 lock_not_available (`lock_timeout`:
    /// another node's writer held the write lock that long). An empty SQLSTATE on a connection that
    /// is no longer healthy is a lost connection. Nil: any other failure (a bug or a broken database).
    static func unavailability(sqlstate state: String, connectionLost: Bool) -> StoreUnavailability? {
        switch state {
        case "57P01", "57P02", "57P03": return .shuttingDown
        case "53300": return .tooManyConnections
        case "55P03": return .busy
        case _ where rolledBack.contains(state): return .writeConflict
        case _ where state.hasPrefix("08"): return .unreachable
        case "": return connectionLost ? .unreachable : nil
        default: return nil
        }
    }

    /// A failed connection attempt: libpq gives no SQLSTATE there, only the server's message
    /// ("sorry, too many clients already", "the database system is shutting down / starting up /
    /// in recovery mode") or the socket's ("Connection refused", "timeout expired").
    static func unavailability(connectMessage m: String) -> StoreUnavailability {
        if m.contains("too many clients") || m.contains("remaining connection slots are reserved") { return .tooManyConnections }
        if m.contains("shutting down") || m.contains("starting up") || m.contains("recovery mode") || m.contains("not yet accepting connections") {
            return .shuttingDown
        }
        return .unreachable
    }
}

/// One libpq connection (`PGconn`), used by one thread at a time (the pool hands it out). Prepared
/// statements are created on first use and cached per SQL text for the life of the connection.
/// Error messages name the statement's first words and the SQLSTATE, never parameter values.
final class PGConnection {
    private var conn: OpaquePointer?
    private var prepared: [String: String] = [:]
    /// Set by a failed statement inside a transaction (PostgreSQL then refuses every statement until
    /// ROLLBACK): the first error, rethrown at COMMIT if the caller swallowed it.
    var transactionError: StoreError?

    /// Connects with libpq keyword/value pairs (`dbname` first holding the URI, expanded by libpq).
    /// Throws ``StoreError/database(_:)`` with libpq's message (which never contains the password).
    init(keywords: [(String, String)]) throws {
        let keys = keywords.map { strdup($0.0) } + [nil]
        let values = keywords.map { strdup($0.1) } + [nil]
        defer { (keys + values).forEach { free($0) } }
        let c: OpaquePointer? = keys.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in
                PQconnectdbParams(k.baseAddress, v.baseAddress, 1)
            }
        }
        guard let c else { throw StoreError.database("cannot connect to PostgreSQL: out of memory") }
        guard PQstatus(c) == CONNECTION_OK else {
            let msg = String(cString: PQerrorMessage(c)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(c)
            throw StoreError.unavailable(PGErrorClass.unavailability(connectMessage: msg), "cannot connect to PostgreSQL: \(msg)")
        }
        conn = c
    }

    deinit { close() }

    func close() {
        if let conn { PQfinish(conn) }
        conn = nil
        prepared.removeAll()
    }

    /// False once the server closed the connection or the socket broke; the pool then discards it.
    var isHealthy: Bool { conn.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Reads, without blocking, whatever the server sent while the connection sat idle: false when
    /// it has closed the connection (restart, `pg_terminate_backend`, idle timeout) — the pool then
    /// opens another instead of failing the next statement.
    func stillOpen() -> Bool {
        guard let conn else { return false }
        // A server that ended the connection sent its FATAL message and then closed the socket: the
        // first read takes the message, the next one meets the end of the stream.
        for _ in 0..<2 where PQconsumeInput(conn) == 0 { return false }
        return PQstatus(conn) == CONNECTION_OK
    }

    /// Whether the server considers this connection inside a transaction block (`PQtransactionStatus`).
    var inTransactionBlock: Bool {
        guard let conn else { return false }
        let s = PQtransactionStatus(conn)
        return s == PQTRANS_INTRANS || s == PQTRANS_INERROR
    }

    /// The server's version number, e.g. 150018 for 15.18.
    var serverVersion: Int { conn.map { Int(PQserverVersion($0)) } ?? 0 }

    private static func label(_ sql: String) -> String {
        sql.split(whereSeparator: { $0 == " " || $0 == "\n" }).prefix(3).joined(separator: " ")
    }

    /// Runs one or more statements without parameters (simple query protocol): DDL, BEGIN/COMMIT.
    func execute(_ sql: String) throws {
        guard let conn else { throw StoreError.closed }
        let res = PQexec(conn, sql)
        defer { PQclear(res) }
        try check(res, sql)
    }

    /// Runs a prepared statement (prepared on first use) and decodes its rows.
    @discardableResult
    func query(_ sql: String, _ params: [SQLCell] = []) throws -> SQLResult {
        guard let conn else { throw StoreError.closed }
        let name: String
        if let n = prepared[sql] {
            name = n
        } else {
            name = "s\(prepared.count + 1)"
            let res = PQprepare(conn, name, sql, 0, nil)
            defer { PQclear(res) }
            try check(res, sql)
            prepared[sql] = name
        }
        // One buffer holds every parameter (text NUL-terminated, bytea raw); libpq copies it.
        var lengths = [Int32](repeating: 0, count: params.count)
        var formats = [Int32](repeating: 0, count: params.count)
        var encoded = [[UInt8]?](repeating: nil, count: params.count)
        for (i, p) in params.enumerated() {
            switch p {
            case .null: encoded[i] = nil
            case let .int(v): encoded[i] = Array(String(v).utf8) + [0]
            case let .double(v): encoded[i] = Array(String(v).utf8) + [0]
            case let .text(s): encoded[i] = Array(s.utf8) + [0]
            case let .bool(b): encoded[i] = Array((b ? "t" : "f").utf8) + [0]
            case let .bytes(b): encoded[i] = b; formats[i] = 1
            }
            lengths[i] = Int32(encoded[i]?.count ?? 0)
        }
        let total = encoded.reduce(0) { $0 + ($1?.count ?? 0) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(total, 1), alignment: 1)
        defer { buffer.deallocate() }
        var pointers = [UnsafePointer<CChar>?](repeating: nil, count: params.count)
        var offset = 0
        for (i, e) in encoded.enumerated() {
            guard let e else { continue }
            e.withUnsafeBytes { buffer.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: e.count) }
            pointers[i] = UnsafePointer(buffer.advanced(by: offset).assumingMemoryBound(to: CChar.self))
            offset += e.count
        }
        let res = PQexecPrepared(conn, name, Int32(params.count), pointers, lengths, formats, 1)
        defer { PQclear(res) }
        try check(res, sql)
        return try decode(res)
    }

    private func check(_ res: OpaquePointer?, _ sql: String) throws {
        let status = res.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK { return }
        let state = res.flatMap { cpg_sqlstate($0) }.map { String(cString: $0) } ?? ""
        let primary = res.flatMap { cpg_primary_message($0) }.map { String(cString: $0) }
            ?? conn.map { String(cString: PQerrorMessage($0)).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "no connection"
        let error: StoreError
        if PGErrorClass.conflicts.contains(state) {
            let constraint = res.flatMap { cpg_constraint($0) }.map { String(cString: $0) } ?? "constraint"
            error = .conflict("\(constraint) (SQLSTATE \(state))")
        } else if let reason = PGErrorClass.unavailability(sqlstate: state, connectionLost: !isHealthy) {
            error = .unavailable(reason, "\(Self.label(sql)) failed (SQLSTATE \(state.isEmpty ? "none" : state)): \(primary)")
        } else {
            // PostgreSQL's primary messages for failures name objects and types, not parameter values
            // (those appear in DETAIL, which is not read here).
            error = .database("\(Self.label(sql)) failed (SQLSTATE \(state.isEmpty ? "none" : state)): \(primary)")
        }
        if inTransactionBlock, transactionError == nil { transactionError = error }
        throw error
    }

    private static let int2: UInt32 = 21, int4: UInt32 = 23, int8: UInt32 = 20, bool: UInt32 = 16
    private static let textTypes: Set<UInt32> = [25, 1043, 19, 1042]
    private static let bytea: UInt32 = 17, void: UInt32 = 2278

    private func decode(_ res: OpaquePointer?) throws -> SQLResult {
        guard let res else { return SQLResult(rows: [], affected: 0) }
        let affected = Int(String(cString: PQcmdTuples(res))) ?? 0
        let n = Int(PQntuples(res)), m = Int(PQnfields(res))
        guard n > 0 else { return SQLResult(rows: [], affected: affected) }
        let types = (0..<m).map { UInt32(PQftype(res, Int32($0))) }
        var rows: [SQLRow] = []
        rows.reserveCapacity(n)
        for r in 0..<Int32(n) {
            var cells: [SQLCell] = []
            cells.reserveCapacity(m)
            for c in 0..<m {
                let ci = Int32(c)
                if PQgetisnull(res, r, ci) == 1 { cells.append(.null); continue }
                let len = Int(PQgetlength(res, r, ci))
                let raw = UnsafeRawBufferPointer(start: PQgetvalue(res, r, ci), count: len)
                func bigEndian(_ size: Int) -> Int64 {
                    var v: Int64 = 0
                    for b in raw.prefix(size) { v = v << 8 | Int64(b) }
                    // sign-extend the narrower types
                    let shift = Int64(64 - 8 * size)
                    return shift > 0 ? (v << shift) >> shift : v
                }
                switch types[c] {
                case Self.int8 where len == 8: cells.append(.int(bigEndian(8)))
                case Self.int4 where len == 4: cells.append(.int(bigEndian(4)))
                case Self.int2 where len == 2: cells.append(.int(bigEndian(2)))
                case Self.bool where len == 1: cells.append(.bool(raw[0] != 0))
                case Self.bytea: cells.append(.bytes(Array(raw)))
                case Self.void: cells.append(.null)
                case let t where Self.textTypes.contains(t): cells.append(.text(String(decoding: raw, as: UTF8.self)))
                default: throw StoreError.database("column \(c) has a type this store does not read (oid \(types[c]))")
                }
            }
            rows.append(SQLRow(cells))
        }
        return SQLResult(rows: rows, affected: affected)
    }
}
