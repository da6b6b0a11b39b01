import Foundation
import IDVCore

/// Server lifecycle events outside any request (listening, expiry sweep, shutdown, reader
/// warm-up): one JSON line on stderr through the same handler as the request path's ``Logger``
/// (`JSONLinesLogHandler.standardError`, so lines never interleave). Only ids, codes, routes and
/// numbers — never a body, token, password, image or personal data. Requests log through the
/// ``Logger`` their middleware chain hands them (IDVHTTP `Middleware`).
public enum Log {
    /// `level` is a ``Logger/Level`` raw value (`info`, `warning`, `error`, …; unknown → `info`).
    public static func event(_ msg: String, level: String = "info", _ fields: [String: JSONValue] = [:]) {
        JSONLinesLogHandler.standardError.log(level: Logger.Level(rawValue: level) ?? .info, message: msg, metadata: fields)
    }
}
