import Foundation

/// Any JSON value, kept exactly as it arrived so it can be re-encoded unchanged.
///
/// Used where the seeds leave a part of a payload open: the label → value map `identity_data` of
/// seed 003 §4.2, the opaque `video.workflow_data` / `video.meta_data` objects of seed 001 §6.2, and
/// `additional_info` of a challenge response. Integers and fractional numbers are kept apart
/// (`integer` / `number`) so `92` re-encodes as `92`, not `92.0`; equality compares numbers by value,
/// so `.integer(92) == .number(92.0)`.
public enum JSONValue: Codable, Equatable, Sendable, CustomStringConvertible {
    /// JSON `null`.
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// A JSON number without fraction or exponent that fits in `Int`.
    case integer(Int)
    /// Any other JSON number (finite).
    case number(Double)
    /// A JSON string.
    case string(String)
    /// A JSON array, in order.
    case array([JSONValue])
    /// A JSON object (key order is not significant in JSON and is not kept).
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "expected a JSON value"))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(value): try container.encode(value)
        case let .integer(value): try container.encode(value)
        case let .number(value): try container.encode(value)
        case let .string(value): try container.encode(value)
        case let .array(value): try container.encode(value)
        case let .object(value): try container.encode(value)
        }
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)): return a == b
        default:
            if let a = lhs.doubleValue, let b = rhs.doubleValue {
                if case let (.integer(x), .integer(y)) = (lhs, rhs) { return x == y }
                return a == b
            }
            return false
        }
    }

    /// The JSON type name used in error messages: `null`, `bool`, `number`, `string`, `array`, `object`.
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .integer, .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// The string, for `.string`; nil otherwise.
    public var stringValue: String? {
        if case let .string(value) = self { return value }
        return nil
    }

    /// The number as a `Double`, for `.integer` and `.number`; nil otherwise.
    public var doubleValue: Double? {
        switch self {
        case let .integer(value): return Double(value)
        case let .number(value): return value
        default: return nil
        }
    }

    /// The value as display text: strings as they are, numbers and booleans in JSON spelling,
    /// `null` as an empty string, arrays and objects as compact JSON.
    public var displayText: String {
        switch self {
        case .null: return ""
        case let .bool(value): return value ? "true" : "false"
        case let .integer(value): return String(value)
        case let .number(value): return String(value)
        case let .string(value): return value
        case .array, .object:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(self)).flatMap { String(data: $0, encoding: .utf8) } ?? ""
        }
    }

    /// The JSON kind only; never the content (payloads carry personal data, see COMMON.md).
    public var description: String { "JSONValue(\(kindName))" }
}

// MARK: - Building and reading values (the wire protocol's payloads, docs/PROTOCOL.md)

extension JSONValue: Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral,
    ExpressibleByNilLiteral, ExpressibleByFloatLiteral {
    /// The empty object `{}`.
    public static let emptyObject = JSONValue.object([:])

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// Hashes numbers by value, consistent with `==` (`.integer(92)` equals `.number(92.0)`).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case let .bool(value): hasher.combine(value)
        case let .integer(value): hasher.combine(Double(value))
        case let .number(value): hasher.combine(value)
        case let .string(value): hasher.combine(value)
        case let .array(value): hasher.combine(value)
        case let .object(value): hasher.combine(value)
        }
    }

    /// The member `key` of an object, or nil (also for non-objects).
    public subscript(key: String) -> JSONValue? {
        if case let .object(members) = self { return members[key] }
        return nil
    }

    public var boolValue: Bool? { if case let .bool(value) = self { return value }; return nil }

    /// The number as an `Int` when it is integral and exactly representable; nil otherwise.
    public var intValue: Int? {
        switch self {
        case let .integer(value): return value
        case let .number(value) where value.rounded() == value && abs(value) < 9e15: return Int(value)
        default: return nil
        }
    }

    public var objectValue: [String: JSONValue]? { if case let .object(value) = self { return value }; return nil }
    public var arrayValue: [JSONValue]? { if case let .array(value) = self { return value }; return nil }
    public var isNull: Bool { if case .null = self { return true }; return false }

}
