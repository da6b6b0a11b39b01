import Foundation
import IDVCore

/// Structured logging: one JSON line per event on stderr. Only ids, codes, routes and numbers —
/// never a body, token, password, image or personal data.
public enum Log {
    private static let lock = NSLock()

    static func write(_ fields: [String: JSONValue]) {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var data = try? enc.encode(JSONValue.object(fields)) else { return }
        data.append(0x0A)
        lock.lock(); defer { lock.unlock() }
        FileHandle.standardError.write(data)
    }

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

    /// A server lifecycle or error event with extra id/code fields.
    public static func event(_ msg: String, level: String = "info", _ fields: [String: JSONValue] = [:]) {
        var f = fields
        f["ts"] = .string(timestamp())
        f["level"] = .string(level)
        f["msg"] = .string(msg)
        write(f)
    }
}
