import Foundation
import IDVCore
import IDVCrypto
import IDVEngine

// The SQL of both stores, written once (issue #36): the statements, the row mapping, the audit
// chain and the key-rotation loops live here, as default implementations of the engine's store
// protocols over a small interface each store provides — run a statement, run a transaction, and
// a dialect (placeholders, `max`/`GREATEST`, row locks, the blob type's name). IDVStoreSQLite and
// IDVStorePostgres keep what really differs: connections, transactions and their locks,
// migrations, and the few statements that use PostgreSQL's `SKIP LOCKED` to share work across nodes.
//
// Statements are written in SQLite's spelling: `?` placeholders (numbered in order), `max(a, b)`
// for the larger of two values. ``SQLDialect/render(_:)`` turns them into the database's own.

/// A value bound to a statement parameter or read from a result column.
public enum SQLCell: Sendable, Equatable {
    case null
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case text(String)
    case bytes([UInt8])

    public init(_ s: String?) { self = s.map { .text($0) } ?? .null }
    public init(_ i: Int?) { self = i.map { .int(Int64($0)) } ?? .null }
    public init(_ b: Bool) { self = .bool(b) }
    public init(_ b: [UInt8]?) { self = b.map { .bytes($0) } ?? .null }

    /// The integer this cell holds, if it holds one (for a raw look at a table).
    public var int: Int? { if case let .int(v) = self { return Int(v) }; return nil }
    /// The text this cell holds, if it holds text.
    public var text: String? { if case let .text(s) = self { return s }; return nil }
}

/// One result row. The accessors check the column: a column that is missing, `NULL` where a value
/// is required, or of another type than the one asked throws ``StoreError/database(_:)`` naming
/// the column index — a schema that drifted from the code fails loudly on both databases, never
/// reads as 0 or "". A boolean reads from a `boolean` column or a 0/1 integer (SQLite has no
/// boolean type); a text column of an enumeration reads only as one of its values.
public struct SQLRow: Sendable, Equatable {
    public let cells: [SQLCell]
    public init(_ cells: [SQLCell]) { self.cells = cells }

    func bad(_ i: Int, _ want: String) -> StoreError {
        .database("column \(i) is not \(want) (\(cells.indices.contains(i) ? "\(cells[i])".prefix(12) : "missing"))")
    }

    public func isNull(_ i: Int) -> Bool { cells.indices.contains(i) && cells[i] == .null }

    public func int(_ i: Int) throws -> Int {
        guard let v = try optionalInt(i) else { throw bad(i, "a non-null integer") }
        return v
    }

    public func optionalInt(_ i: Int) throws -> Int? {
        guard cells.indices.contains(i) else { throw bad(i, "an integer") }
        switch cells[i] {
        case .null: return nil
        case let .int(v): return Int(v)
        default: throw bad(i, "an integer")
        }
    }

    public func bool(_ i: Int) throws -> Bool {
        guard cells.indices.contains(i) else { throw bad(i, "a boolean") }
        switch cells[i] {
        case let .bool(b): return b
        case let .int(v) where v == 0 || v == 1: return v == 1
        default: throw bad(i, "a boolean")
        }
    }

    public func double(_ i: Int) throws -> Double {
        guard cells.indices.contains(i) else { throw bad(i, "a number") }
        switch cells[i] {
        case let .double(x): return x
        case let .int(v): return Double(v)
        default: throw bad(i, "a number")
        }
    }

    public func text(_ i: Int) throws -> String {
        guard let v = try optionalText(i) else { throw bad(i, "non-null text") }
        return v
    }

    public func optionalText(_ i: Int) throws -> String? {
        guard cells.indices.contains(i) else { throw bad(i, "text") }
        switch cells[i] {
        case .null: return nil
        case let .text(s): return s
        default: throw bad(i, "text")
        }
    }

    public func bytes(_ i: Int) throws -> [UInt8] {
        guard let v = try optionalBytes(i) else { throw bad(i, "non-null bytes") }
        return v
    }

    public func optionalBytes(_ i: Int) throws -> [UInt8]? {
        guard cells.indices.contains(i) else { throw bad(i, "bytes") }
        switch cells[i] {
        case .null: return nil
        case let .bytes(b): return b
        default: throw bad(i, "bytes")
        }
    }

    /// A text column holding one of `T`'s raw values.
    public func value<T: RawRepresentable>(_ i: Int, as type: T.Type) throws -> T where T.RawValue == String {
        guard let v = T(rawValue: try text(i)) else { throw bad(i, "a \(T.self) value") }
        return v
    }

    /// A nullable text column holding one of `T`'s raw values.
    public func optionalValue<T: RawRepresentable>(_ i: Int, as type: T.Type) throws -> T? where T.RawValue == String {
        guard let raw = try optionalText(i) else { return nil }
        guard let v = T(rawValue: raw) else { throw bad(i, "a \(T.self) value") }
        return v
    }
}

/// What one statement returned: its rows, and the rows it changed (`sqlite3_changes`, `PQcmdTuples`).
public struct SQLResult: Sendable {
    public var rows: [SQLRow]
    public var affected: Int
    public init(rows: [SQLRow], affected: Int) {
        self.rows = rows
        self.affected = affected
    }
}

/// How a database spells what SQL leaves to it.
public struct SQLDialect: Sendable {
    /// `$1, $2, …` (PostgreSQL) instead of `?` placeholders (SQLite).
    public let numberedPlaceholders: Bool
    /// The function of the larger of two values: `max` (SQLite), `GREATEST` (PostgreSQL).
    public let greatest: String
    /// What a `SELECT` that will be updated in its transaction ends with: nothing on SQLite (its
    /// write transactions hold the whole database), ` FOR UPDATE` on PostgreSQL (the row lock).
    public let forUpdate: String
    /// The column type of sealed bytes in DDL: `BLOB` / `BYTEA`.
    public let blobType: String
    /// The column that orders rows of one table as they were inserted: SQLite's `rowid`, the
    /// `ord` identity column the PostgreSQL tables carry.
    public let insertionOrder: String
    /// The key id inside a sealed session state (`0x01 ‖ 16-character key id ‖ …`, ``SessionStateSealer``), as text.
    public let sessionStateKeyID: String
    /// The condition that a `sessions.state` is sealed (SQLite still reads states stored as JSON
    /// text before sealing existed; PostgreSQL has only sealed ones).
    public let sessionStateSealed: String

    public static let sqlite = SQLDialect(numberedPlaceholders: false, greatest: "max", forUpdate: "", blobType: "BLOB",
                                          insertionOrder: "rowid", sessionStateKeyID: "CAST(substr(state, 2, 16) AS TEXT)",
                                          sessionStateSealed: "typeof(state) = 'blob'")
    public static let postgres = SQLDialect(numberedPlaceholders: true, greatest: "GREATEST", forUpdate: " FOR UPDATE", blobType: "BYTEA",
                                            insertionOrder: "ord", sessionStateKeyID: "encode(substring(state from 2 for 16), 'escape')",
                                            sessionStateSealed: "TRUE")

    /// `sql`, written with `?` placeholders and `max(` for the larger of two values, in this
    /// dialect: each `?` outside a string literal numbered `$n` in order, `max(` → `GREATEST(`.
    /// Pure and cheap; the stores cache prepared statements by the text it returns.
    public func render(_ sql: String) -> String {
        guard numberedPlaceholders else { return sql }
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var n = 0
        var inString = false
        var rest = Substring(sql)
        while let c = rest.first {
            if !inString, rest.hasPrefix("max(") {
                out += greatest + "("
                rest = rest.dropFirst(4)
                continue
            }
            rest = rest.dropFirst()
            if c == "'" { inString.toggle() }
            if c == "?", !inString {
                n += 1
                out += "$\(n)"
            } else {
                out.append(c)
            }
        }
        return out
    }
}

/// A store the shared SQL runs on (IDVStoreSQLite `SQLiteStore`, IDVStorePostgres `PostgresStore`).
/// Conforming gives every method of ``EngineStore`` a default implementation written once here;
/// a store overrides a method only where its database does the job differently.
public protocol SQLDatabase: EngineStore {
    /// How this database spells placeholders, `GREATEST` and row locks.
    var dialect: SQLDialect { get }
    /// Seals and opens `sessions.state` (one key per store; ``SessionStateSealer``).
    var stateSealer: SessionStateSealer { get }
    /// Runs one statement written with `?` placeholders (``SQLDialect/render(_:)`` is the store's
    /// to apply) inside the calling thread's transaction when there is one.
    @discardableResult
    func run(_ sql: String, _ params: [SQLCell]) throws -> SQLResult
    /// Notes that a sealed session state was opened (the one-pass instrumentation of SQLite; a no-op elsewhere).
    func noteSessionStateOpened()
    /// Called in ``resealUnderCurrentKey(vault:batchSize:)`` once every session state is under the
    /// current key (PostgreSQL records that key; nothing elsewhere).
    func sessionStatesResealed() throws
}

extension SQLDatabase {
    public func noteSessionStateOpened() {}

    /// Runs a statement that takes no parameter.
    @discardableResult
    public func run(_ sql: String) throws -> SQLResult { try run(sql, []) }

    /// The rows of a statement.
    public func rows(_ sql: String, _ params: [SQLCell] = []) throws -> [SQLRow] {
        try run(sql, params).rows
    }

    /// The first row of a statement, if any.
    public func row(_ sql: String, _ params: [SQLCell] = []) throws -> SQLRow? {
        try run(sql, params).rows.first
    }

    /// The single integer a statement returns (a `count(*)`); 0 when it returns no row.
    public func count(_ sql: String, _ params: [SQLCell] = []) throws -> Int {
        try row(sql, params)?.int(0) ?? 0
    }
}
