import Foundation
import IDVCore

/// A logger value in swift-log's shape (`Logger`, `Logger.Level`, `Logger.Metadata`, `LogHandler`;
/// swift-log cannot be fetched here, so the API is copied and a later swap is mechanical): a
/// label, a level, metadata carried to every entry (e.g. `request_id`, `session_id`), and a
/// handler that writes. Pass it down; never construct one in library code.
///
/// What may be logged: ids, codes, routes, counts, durations. Never a body, token, password,
/// image, base64, name, date of birth, document number or embedding.
public struct Logger: Sendable {
    /// Severity, lowest first (syslog-like, as swift-log).
    public enum Level: String, Codable, Sendable, CaseIterable, Comparable {
        case trace, debug, info, notice, warning, error, critical

        /// Position in the order above.
        var rank: Int {
            switch self {
            case .trace: return 0
            case .debug: return 1
            case .info: return 2
            case .notice: return 3
            case .warning: return 4
            case .error: return 5
            case .critical: return 6
            }
        }

        public static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }
    }

    /// Key → value; values are JSON (ids and codes only).
    public typealias Metadata = [String: JSONValue]

    public var label: String
    /// Entries below this level are dropped.
    public var logLevel: Level
    /// Carried to every entry.
    public var metadata: Metadata
    public var handler: any LogHandler

    public init(label: String, level: Level = .info, metadata: Metadata = [:], handler: any LogHandler = JSONLinesLogHandler.standardError) {
        self.label = label
        logLevel = level
        self.metadata = metadata
        self.handler = handler
    }

    /// This logger with `value` under `key` in its metadata (e.g. a request's id).
    public func with(_ key: String, _ value: JSONValue) -> Logger {
        var l = self
        l.metadata[key] = value
        return l
    }

    /// Logs `message` at `level` with the logger's metadata and `fields` (fields win).
    public func log(_ level: Level, _ message: String, _ fields: Metadata = [:]) {
        guard level >= logLevel else { return }
        handler.log(level: level, message: message, metadata: metadata.merging(fields) { _, new in new })
    }

    public func debug(_ message: String, _ fields: Metadata = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: Metadata = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: Metadata = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: Metadata = [:]) { log(.error, message, fields) }

    /// A logger that drops everything (tests, tools).
    public static let disabled = Logger(label: "disabled", level: .critical, handler: NullLogHandler())
}

/// Where log entries go.
public protocol LogHandler: Sendable {
    func log(level: Logger.Level, message: String, metadata: Logger.Metadata)
}

/// One JSON object per line — `{"level":…,"msg":…,"ts":…, …metadata}`, sorted keys — written
/// whole (one `write` per line, lines never interleave). The line is built before the lock is
/// taken, by a writer of its own (no `JSONEncoder` per line): a request's line costs microseconds
/// and threads logging at once wait only for each other's `write`.
public final class JSONLinesLogHandler: LogHandler, @unchecked Sendable {
    // @unchecked: `handle` is written under `lock` only.
    private let lock = NSLock()
    private let handle: FileHandle

    public init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// Lines on stderr (what `idvd serve` logs).
    public static let standardError = JSONLinesLogHandler(FileHandle.standardError)

    public func log(level: Logger.Level, message: String, metadata: Logger.Metadata) {
        var fields = metadata
        fields["ts"] = .string(Self.timestamp())
        fields["level"] = .string(level.rawValue)
        fields["msg"] = .string(message)
        var line: [UInt8] = []
        line.reserveCapacity(256)
        Self.write(.object(fields), to: &line)
        line.append(0x0A)
        let data = Data(line)
        lock.withLock { handle.write(data) }
    }

    /// `value` as JSON text, object keys sorted (what `JSONEncoder` with `.sortedKeys,
    /// .withoutEscapingSlashes` prints, up to the spelling of numbers); a non-finite number is `null`.
    static func write(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case let .bool(b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case let .integer(n): out.append(contentsOf: String(n).utf8)
        case let .number(x): out.append(contentsOf: (x.isFinite ? "\(x)" : "null").utf8)
        case let .string(text): quote(text, to: &out)
        case let .array(items):
            out.append(0x5B)
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(0x2C) }
                write(item, to: &out)
            }
            out.append(0x5D)
        case let .object(members):
            out.append(0x7B)
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out.append(0x2C) }
                quote(key, to: &out)
                out.append(0x3A)
                write(members[key]!, to: &out)
            }
            out.append(0x7D)
        }
    }

    /// A JSON string literal: quote, backslash and control characters escaped (RFC 8259 §7).
    static func quote(_ text: String, to out: inout [UInt8]) {
        out.append(0x22)
        for b in text.utf8 {
            switch b {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(0x6E)
            case 0x0D: out.append(0x5C); out.append(0x72)
            case 0x09: out.append(0x5C); out.append(0x74)
            case 0..<0x20: out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hexDigit(b >> 4), hexDigit(b & 0x0F)])
            default: out.append(b)
            }
        }
        out.append(0x22)
    }

    /// The lowercase hexadecimal digit of `n` (0...15) as an ASCII byte.
    private static func hexDigit(_ n: UInt8) -> UInt8 { n < 10 ? 0x30 + n : 0x61 + n - 10 }

    /// UTC timestamp with milliseconds, e.g. `2026-11-29T12:57:03.806Z` (gmtime_r; no formatter allocation).
    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = tm()
        var secs = ts.tv_sec
        gmtime_r(&secs, &t)
        func p(_ v: Int32, _ w: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, w - s.count)) + s }
        return "\(p(t.tm_year + 1900, 4))-\(p(t.tm_mon + 1, 2))-\(p(t.tm_mday, 2))T\(p(t.tm_hour, 2)):\(p(t.tm_min, 2)):\(p(t.tm_sec, 2)).\(p(Int32(ts.tv_nsec / 1_000_000), 3))Z"
    }
}

/// Drops every entry.
public struct NullLogHandler: LogHandler {
    public init() {}
    public func log(level: Logger.Level, message: String, metadata: Logger.Metadata) {}
}

/// Keeps entries in memory (tests read what was logged).
public final class MemoryLogHandler: LogHandler, @unchecked Sendable {
    // @unchecked: `entries` is read and written under `lock` only.
    private let lock = NSLock()
    private var stored: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] = []
    public init() {}
    public func log(level: Logger.Level, message: String, metadata: Logger.Metadata) {
        lock.withLock { stored.append((level, message, metadata)) }
    }
    public var entries: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] {
        lock.withLock { stored }
    }
}
