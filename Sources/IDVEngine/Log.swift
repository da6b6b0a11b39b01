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

    /// JSON string literal of `s` (quotes, backslash and control characters escaped).
    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20: out += "\\u00" + (u.value < 16 ? "0" : "") + String(u.value, radix: 16)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    /// The per-request line: `{"ts","level","msg":"request","request_id","method","route","status","error_code",
    /// "outcome_error_code","duration_ms"}`. `error_code` is the refusal's code (0 for an answered request);
    /// `outcome_error_code` the code the answered challenge or event carries (e.g. 1014, 1011, 1008; 0 when none).
    /// `route` is the route PATTERN (e.g. `/v1/flows/{name}`), never the raw path.
    public static func request(id: String, method: String, route: String, status: Int, errorCode: Int, outcomeErrorCode: Int = 0, seconds: Double) {
        let ms = (seconds * 1e5).rounded() / 100
        let line = "{\"duration_ms\":\(ms),\"error_code\":\(errorCode),\"level\":\"info\",\"method\":\(quoted(method)),\"msg\":\"request\","
            + "\"outcome_error_code\":\(outcomeErrorCode),"
            + "\"request_id\":\(quoted(id)),\"route\":\(quoted(route)),\"status\":\(status),\"ts\":\"\(timestamp())\"}\n"
        lock.lock(); defer { lock.unlock() }
        FileHandle.standardError.write(Data(line.utf8))
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
