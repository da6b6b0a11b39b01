import Foundation
import IDVCore

/// A ``JSONValue`` written as JSON text directly, the bytes `JSONEncoder` with `.sortedKeys` and
/// `.withoutEscapingSlashes` writes for it (object keys in UTF-8 byte order; `"`, `\`, LF, CR and TAB
/// escaped; other characters as they are). Light answers (`/healthz`, small JSON objects) are built as
/// `JSONValue`s on every request; going through `JSONEncoder` cost them about a fifth of their CPU time.
///
/// Only where the two spellings are certain to agree: a value holding a non-integer number (whose
/// spelling differs, e.g. `100.0` against `100`) or a string with another control character returns
/// nil, and the caller uses `JSONEncoder`.
enum JSONText {
    /// The JSON text of `value`, or nil where the caller must use `JSONEncoder`.
    static func encode(_ value: JSONValue) -> Data? {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        guard write(value, to: &out) else { return nil }
        return Data(out)
    }

    private static func write(_ value: JSONValue, to out: inout [UInt8]) -> Bool {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case let .bool(b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case let .integer(n): out.append(contentsOf: String(n).utf8)
        case .number: return false
        case let .string(text): return quote(text, to: &out)
        case let .array(items):
            out.append(0x5B)
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(0x2C) }
                guard write(item, to: &out) else { return false }
            }
            out.append(0x5D)
        case let .object(members):
            out.append(0x7B)
            for (i, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if i > 0 { out.append(0x2C) }
                guard quote(key, to: &out) else { return false }
                out.append(0x3A)
                guard write(members[key]!, to: &out) else { return false }
            }
            out.append(0x7D)
        }
        return true
    }

    /// A JSON string literal; false for a control character other than LF, CR and TAB.
    private static func quote(_ text: String, to out: inout [UInt8]) -> Bool {
        out.append(0x22)
        for b in text.utf8 {
            switch b {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(0x6E)
            case 0x0D: out.append(0x5C); out.append(0x72)
            case 0x09: out.append(0x5C); out.append(0x74)
            case 0..<0x20, 0x7F: return false
            default: out.append(b)
            }
        }
        out.append(0x22)
        return true
    }
}
