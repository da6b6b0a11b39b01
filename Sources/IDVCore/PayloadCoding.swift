import Foundation

/// Why a payload could not be decoded or encoded, naming the field that failed.
///
/// `fieldPath` is the dotted path of the failing field from the payload root, with array indexes in
/// brackets (`response_data.document_pages[1].image`); `$` is the payload root itself (empty input,
/// not JSON, not an object). `reason` says what was expected and what was found
/// (`expected String, found number`). Neither ever contains payload *values* (names, dates, images),
/// only keys, JSON kinds and codes, so the error may be logged (COMMON.md house rules).
public struct PayloadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; each gets a distinct value so callers can map it to an error code.
    public enum Kind: String, Sendable, Equatable {
        /// The input was empty (or only whitespace).
        case empty
        /// The input is not valid UTF-8 JSON.
        case notJSON
        /// A field has the wrong JSON type (including `null` where a value is required).
        case typeMismatch
        /// A required field is absent.
        case missingField
        /// A field has the right type but a value outside its range or vocabulary.
        case invalidValue
        /// Encoding failed (a non-finite number, for instance).
        case notEncodable
    }

    /// The kind of failure.
    public var kind: Kind
    /// Dotted path of the failing field, `$` for the root.
    public var fieldPath: String
    /// What was expected and what was found, without the value itself.
    public var reason: String

    public init(kind: Kind, fieldPath: String, reason: String) {
        self.kind = kind
        self.fieldPath = fieldPath
        self.reason = reason
    }

    /// `<fieldPath>: <reason>`, e.g. `response_data.document_info.expiry_date: expected String, found number`.
    public var description: String { "\(fieldPath): \(reason)" }

    /// The error code the server answers a malformed payload with (``IDVErrorCode/malformedRequest``).
    public var idvError: IDVError { IDVError(.malformedRequest, "malformed payload: \(description)") }
}

/// A JSON payload of the seeds' API, passed between server, SDK and app as a JSON *string*
/// (`documentDetails`, `selfieDetails`, `idvResponse`, …). Keys are the seeds' snake_case keys.
///
/// Conforming types get ``init(jsonString:)`` / ``init(jsonData:)`` (decoding with field-naming
/// ``PayloadError``s) and ``toJSONString()`` / ``toJSONData()`` (compact UTF-8 JSON with sorted
/// keys and unescaped slashes; absent optionals are omitted, never written as `null`).
public protocol IDVPayload: Codable, Equatable, Sendable {}

extension IDVPayload {
    /// Decodes a payload from its JSON text.
    /// - Throws: ``PayloadError`` naming the failing field: `.empty` for "" or whitespace,
    ///   `.notJSON`, `.typeMismatch`, `.missingField`, `.invalidValue`.
    public init(jsonString: String) throws(PayloadError) {
        try self.init(jsonData: Data(jsonString.utf8))
    }

    /// Decodes a payload from UTF-8 JSON bytes. Errors as for ``init(jsonString:)``.
    public init(jsonData: Data) throws(PayloadError) {
        let tree = try PayloadCoding.parse(jsonData)
        do {
            self = try Self(from: JSONTreeDecoder(value: tree, codingPath: []))
        } catch let error as DecodingError {
            throw PayloadCoding.payloadError(from: error, tree: tree)
        } catch let error as PayloadError {
            throw error
        } catch {
            throw PayloadError(kind: .invalidValue, fieldPath: "$", reason: "\(type(of: error))")
        }
    }

    /// The payload as compact UTF-8 JSON bytes.
    /// - Throws: ``PayloadError`` `.notEncodable` naming the field (e.g. a NaN score).
    public func toJSONData() throws(PayloadError) -> Data {
        do {
            return try PayloadCoding.encoder.encode(self)
        } catch let EncodingError.invalidValue(_, context) {
            throw PayloadError(kind: .notEncodable, fieldPath: PayloadCoding.path(context.codingPath),
                               reason: "value cannot be written as JSON (non-finite number?)")
        } catch {
            throw PayloadError(kind: .notEncodable, fieldPath: "$", reason: "\(type(of: error))")
        }
    }

    /// The payload as the JSON string the seeds' callbacks carry. Errors as for ``toJSONData()``.
    public func toJSONString() throws(PayloadError) -> String {
        // JSONEncoder always produces UTF-8.
        String(decoding: try toJSONData(), as: UTF8.self)
    }
}

/// The shared encoder / parser and the DecodingError → PayloadError translation.
enum PayloadCoding {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Parses bytes into a ``JSONValue`` tree, or throws `.empty` / `.notJSON` at `$`.
    static func parse(_ data: Data) throws(PayloadError) -> JSONValue {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw PayloadError(kind: .empty, fieldPath: "$", reason: "empty payload, expected a JSON object")
        }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw PayloadError(kind: .notJSON, fieldPath: "$", reason: "not valid JSON")
        }
    }

    /// `a.b[2].c` from a coding path; `$` for the root.
    static func path(_ codingPath: [CodingKey]) -> String {
        var result = ""
        for key in codingPath {
            if let index = key.intValue, key.stringValue == "Index \(index)" {
                result += "[\(index)]"
            } else {
                result += result.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return result.isEmpty ? "$" : result
    }

    static func payloadError(from error: DecodingError, tree: JSONValue) -> PayloadError {
        switch error {
        case let .keyNotFound(key, context):
            return PayloadError(kind: .missingField, fieldPath: path(context.codingPath + [key]),
                                reason: "missing required field")
        case let .typeMismatch(_, context):
            return PayloadError(kind: .typeMismatch, fieldPath: path(context.codingPath),
                                reason: context.debugDescription)
        case let .valueNotFound(_, context):
            return PayloadError(kind: .typeMismatch, fieldPath: path(context.codingPath),
                                reason: context.debugDescription)
        case let .dataCorrupted(context):
            return PayloadError(kind: .invalidValue, fieldPath: path(context.codingPath),
                                reason: context.debugDescription)
        @unknown default:
            return PayloadError(kind: .invalidValue, fieldPath: "$", reason: "undecodable payload")
        }
    }
}

// MARK: - Decoding from a parsed JSON tree

/// A `Decoder` over a ``JSONValue`` tree. It exists because Foundation's JSONDecoder on Linux reports
/// a fractional number for an `Int` field as "not valid JSON" at the root, losing the field path;
/// here every failure carries its exact coding path and an `expected X, found Y` description.
struct JSONTreeDecoder: Decoder {
    let value: JSONValue
    let codingPath: [CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case let .object(object) = value else {
            throw JSONTreeDecoder.mismatch("object", value, codingPath)
        }
        return KeyedDecodingContainer(KeyedTreeContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        guard case let .array(array) = value else {
            throw JSONTreeDecoder.mismatch("array", value, codingPath)
        }
        return UnkeyedTreeContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer {
        SingleTreeContainer(value: value, codingPath: codingPath)
    }

    static func mismatch(_ expected: String, _ found: JSONValue, _ path: [CodingKey]) -> DecodingError {
        if case .null = found {
            return .valueNotFound(Any.self, .init(codingPath: path, debugDescription: "expected \(expected), found null"))
        }
        return .typeMismatch(Any.self, .init(codingPath: path, debugDescription: "expected \(expected), found \(found.kindName)"))
    }

    // Scalar conversions shared by the three containers.

    static func bool(_ value: JSONValue, _ path: [CodingKey]) throws -> Bool {
        guard case let .bool(result) = value else { throw mismatch("Bool", value, path) }
        return result
    }

    static func string(_ value: JSONValue, _ path: [CodingKey]) throws -> String {
        guard case let .string(result) = value else { throw mismatch("String", value, path) }
        return result
    }

    static func double(_ value: JSONValue, _ path: [CodingKey]) throws -> Double {
        guard let result = value.doubleValue else { throw mismatch("number", value, path) }
        return result
    }

    static func integer<T: FixedWidthInteger>(_ value: JSONValue, _ path: [CodingKey]) throws -> T {
        let name = T.self == Int.self ? "Int" : "\(T.self)"
        switch value {
        case let .integer(raw):
            guard let result = T(exactly: raw) else {
                throw DecodingError.typeMismatch(T.self, .init(codingPath: path,
                    debugDescription: "expected \(name), found integer out of range"))
            }
            return result
        case let .number(raw):
            guard let result = T(exactly: raw) else {
                throw DecodingError.typeMismatch(T.self, .init(codingPath: path,
                    debugDescription: "expected \(name), found non-integer or out-of-range number"))
            }
            return result
        default:
            throw mismatch(name, value, path)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, path: [CodingKey]) throws -> T {
        switch type {
        case is JSONValue.Type: return value as! T
        case is String.Type: return try string(value, path) as! T
        case is Bool.Type: return try bool(value, path) as! T
        case is Double.Type: return try double(value, path) as! T
        case is Int.Type: return try integer(value, path) as Int as! T
        default: return try T(from: JSONTreeDecoder(value: value, codingPath: path))
        }
    }
}

/// A coding key for array positions and dictionary keys.
struct TreeKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) { self.stringValue = "Index \(intValue)"; self.intValue = intValue }
    init(index: Int) { self.init(intValue: index) }
}

struct KeyedTreeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let codingPath: [CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing required field"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try value(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try JSONTreeDecoder.bool(value(key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try JSONTreeDecoder.string(value(key), codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try JSONTreeDecoder.double(value(key), codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try JSONTreeDecoder.double(value(key), codingPath + [key])) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try JSONTreeDecoder.integer(value(key), codingPath + [key]) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try JSONTreeDecoder.decode(type, from: value(key), path: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> {
        try JSONTreeDecoder(value: value(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        try JSONTreeDecoder(value: value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> Decoder {
        JSONTreeDecoder(value: object["super"] ?? .null, codingPath: codingPath + [TreeKey(stringValue: "super")])
    }

    func superDecoder(forKey key: Key) throws -> Decoder {
        JSONTreeDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

struct UnkeyedTreeContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let codingPath: [CodingKey]
    var currentIndex = 0

    init(array: [JSONValue], codingPath: [CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func next() throws -> (JSONValue, [CodingKey]) {
        let path = codingPath + [TreeKey(index: currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: path, debugDescription: "array ended early"))
        }
        defer { currentIndex += 1 }
        return (array[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        if case .null = array[currentIndex] {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next()
        return try JSONTreeDecoder.decode(type, from: value, path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next()
        return try JSONTreeDecoder(value: value, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer {
        let (value, path) = try next()
        return try JSONTreeDecoder(value: value, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> Decoder {
        let (value, path) = try next()
        return JSONTreeDecoder(value: value, codingPath: path)
    }
}

struct SingleTreeContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [CodingKey]

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try JSONTreeDecoder.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try JSONTreeDecoder.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try JSONTreeDecoder.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try JSONTreeDecoder.double(value, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try JSONTreeDecoder.integer(value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try JSONTreeDecoder.integer(value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try JSONTreeDecoder.integer(value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try JSONTreeDecoder.integer(value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try JSONTreeDecoder.integer(value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try JSONTreeDecoder.integer(value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try JSONTreeDecoder.integer(value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try JSONTreeDecoder.integer(value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try JSONTreeDecoder.integer(value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try JSONTreeDecoder.integer(value, codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONTreeDecoder.decode(type, from: value, path: codingPath)
    }
}
