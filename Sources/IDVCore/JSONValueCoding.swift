import Foundation

// `Codable` straight to and from a ``JSONValue`` tree, without the JSON text in between: a typed
// answer is read out of a request's payload in one walk of the tree the request body was parsed
// into (a selfie upload's megabytes of base64 are not printed and parsed again), and a flow's
// state becomes the `JSONValue` its session keeps in one walk of the value.
//
// The mapping is `JSONEncoder` / `JSONDecoder`'s with their default strategies, so a value coded
// here and one coded through JSON text agree: keys as declared, `Data` as standard base64,
// `Date` as seconds since 2001-01-01 (`deferredToDate`), non-finite floats refused, an integral
// JSON number readable as a floating-point value and a number with a zero fraction as an integer.

extension JSONValue {
    /// Builds the value an `Encodable` encodes to (the tree `JSONEncoder` would print).
    /// Throws `EncodingError.invalidValue` for a non-finite floating-point value.
    public init<T: Encodable>(encoding value: T) throws {
        self = try JSONValueEncoding.encode(value, codingPath: [])
    }

    /// Decodes this value as `type`, as `JSONDecoder` would decode its JSON text. Throws
    /// `DecodingError` naming the coding path of what is missing or of the wrong type.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONValueDecoding(value: self, codingPath: []).decodeValue(T.self)
    }
}

// MARK: - Decoding

/// One position in the tree being decoded (a `Decoder`).
struct JSONValueDecoding: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case let .object(members) = value else { throw mismatch([String: JSONValue].self, "an object") }
        return KeyedDecodingContainer(KeyedReader<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case let .array(elements) = value else { throw mismatch([JSONValue].self, "an array") }
        return UnkeyedReader(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleReader(decoder: self) }

    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected \(expected), found \(value.kindName)."))
    }

    /// `T` at this position; the types JSON has a form for are read directly.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self { return value as! T }
        if T.self == Data.self {
            guard case let .string(s) = value else { throw mismatch(Data.self, "a base64 string") }
            guard let d = Data(base64Encoded: s) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Encountered Data is not valid Base64."))
            }
            return d as! T
        }
        if T.self == Date.self { return Date(timeIntervalSinceReferenceDate: try SingleReader(decoder: self).decode(Double.self)) as! T }
        if T.self == URL.self {
            let s = try SingleReader(decoder: self).decode(String.self)
            guard let u = URL(string: s) else { throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Invalid URL string.")) }
            return u as! T
        }
        return try T(from: self)
    }

    func child(_ value: JSONValue, _ key: any CodingKey) -> JSONValueDecoding {
        JSONValueDecoding(value: value, codingPath: codingPath + [key])
    }
}

private struct KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func member(_ key: Key) throws -> JSONValue {
        guard let v = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
        }
        return v
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).isNull }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try JSONValueDecoding(value: member(key), codingPath: codingPath + [key]).decodeValue(T.self)
    }

    // An absent key and an explicit `null` both decode an optional as nil, as `JSONDecoder` does.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let v = members[key.stringValue], !v.isNull else { return nil }
        return try JSONValueDecoding(value: v, codingPath: codingPath + [key]).decodeValue(T.self)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONValueDecoding(value: member(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoding(value: member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONValueDecoding(value: members["super"] ?? .null, codingPath: codingPath + [JSONValueKey("super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoding(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedReader: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    mutating func next(_ type: Any.Type) throws -> JSONValueDecoding {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [JSONValueKey(index: currentIndex)],
                                                          debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return JSONValueDecoding(value: elements[currentIndex], codingPath: codingPath + [JSONValueKey(index: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(T.self).decodeValue(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next([String: JSONValue].self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next([JSONValue].self).unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next(JSONValue.self) }
}

private struct SingleReader: SingleValueDecodingContainer {
    let decoder: JSONValueDecoding
    var codingPath: [any CodingKey] { decoder.codingPath }
    var value: JSONValue { decoder.value }

    func decodeNil() -> Bool { value.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case let .bool(b) = value else { throw decoder.mismatch(type, "a boolean") }
        return b
    }

    func decode(_ type: String.Type) throws -> String {
        guard case let .string(s) = value else { throw decoder.mismatch(type, "a string") }
        return s
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case let .number(x): return x
        case let .integer(n): return Double(n)
        default: throw decoder.mismatch(type, "a number")
        }
    }

    func decode(_ type: Float.Type) throws -> Float {
        let x = try decode(Double.self)
        guard x.isFinite, abs(x) <= Double(Float.greatestFiniteMagnitude) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Number \(x) does not fit in Float."))
        }
        return Float(x)
    }

    /// An integer of type `T`: a JSON integer, or a number with no fraction, that fits.
    func integer<T: BinaryInteger & FixedWidthInteger>(_ type: T.Type) throws -> T {
        switch value {
        case let .integer(n):
            guard let v = T(exactly: n) else { throw overflow(type) }
            return v
        case let .number(x):
            guard x.isFinite, x.rounded() == x, let v = T(exactly: x) else { throw overflow(type) }
            return v
        default:
            throw decoder.mismatch(type, "an integer")
        }
    }

    func overflow(_ type: Any.Type) -> DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Number \(value) does not fit in \(type)."))
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(T.self) }
}

/// A coding key for array positions and `super`.
struct JSONValueKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string; intValue = nil }
    init(index: Int) { stringValue = "Index \(index)"; intValue = index }
    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(index: intValue) }
}

// MARK: - Encoding

/// Encodes a value into a ``JSONValue`` tree: each container writes into a shared box that the
/// encoder turns into the value once the value has encoded itself.
enum JSONValueEncoding {
    static func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue {
        switch value {
        case let v as JSONValue: return v
        case let d as Data: return .string(d.base64EncodedString())
        case let d as Date: return try number(d.timeIntervalSinceReferenceDate, codingPath)
        case let u as URL: return .string(u.absoluteString)
        default:
            let encoder = JSONValueEncoder(codingPath: codingPath)
            try value.encode(to: encoder)
            return encoder.result ?? .object([:])
        }
    }

    /// A floating-point value as the tree JSON text would give back: `JSONEncoder` prints an
    /// integral value without a fraction (`30.0` as `30`), which reads back as an integer.
    static func number(_ x: Double, _ codingPath: [any CodingKey]) throws -> JSONValue {
        guard x.isFinite else {
            throw EncodingError.invalidValue(x, .init(codingPath: codingPath, debugDescription: "Unable to encode \(x) directly in JSON."))
        }
        if x.rounded() == x, abs(x) < 9e15 { return .integer(Int(x)) }
        return .number(x)
    }
}

/// The box a container writes into.
private final class Slot {
    var value: JSONValue?
    var members: [String: Slot]?
    var elements: [Slot]?

    var resolved: JSONValue? {
        if let members { return .object(members.compactMapValues(\.resolved)) }
        if let elements { return .array(elements.compactMap(\.resolved)) }
        return value
    }
}

private final class JSONValueEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let slot: Slot

    init(codingPath: [any CodingKey], slot: Slot = Slot()) {
        self.codingPath = codingPath
        self.slot = slot
    }

    var result: JSONValue? { slot.resolved }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if slot.members == nil { slot.members = [:] }
        return KeyedEncodingContainer(KeyedWriter<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if slot.elements == nil { slot.elements = [] }
        return UnkeyedWriter(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleWriter(slot: slot, codingPath: codingPath) }
}

private struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: Slot
    let codingPath: [any CodingKey]

    func put(_ key: Key) -> Slot {
        let s = Slot()
        slot.members?[key.stringValue] = s
        return s
    }

    mutating func encodeNil(forKey key: Key) throws { put(key).value = .null }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        put(key).value = try JSONValueEncoding.encode(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let s = put(key)
        s.members = [:]
        return KeyedEncodingContainer(KeyedWriter<NestedKey>(slot: s, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let s = put(key)
        s.elements = []
        return UnkeyedWriter(slot: s, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let s = Slot()
        slot.members?["super"] = s
        return JSONValueEncoder(codingPath: codingPath + [JSONValueKey("super")], slot: s)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { JSONValueEncoder(codingPath: codingPath + [key], slot: put(key)) }
}

private struct UnkeyedWriter: UnkeyedEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]
    var count: Int { slot.elements?.count ?? 0 }

    func append() -> Slot {
        let s = Slot()
        slot.elements?.append(s)
        return s
    }

    mutating func encodeNil() throws { append().value = .null }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = JSONValueKey(index: count)
        append().value = try JSONValueEncoding.encode(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = JSONValueKey(index: count)
        let s = append()
        s.members = [:]
        return KeyedEncodingContainer(KeyedWriter<NestedKey>(slot: s, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = JSONValueKey(index: count)
        let s = append()
        s.elements = []
        return UnkeyedWriter(slot: s, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let key = JSONValueKey(index: count)
        return JSONValueEncoder(codingPath: codingPath + [key], slot: append())
    }
}

private struct SingleWriter: SingleValueEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { slot.value = .null }
    mutating func encode(_ value: Bool) throws { slot.value = .bool(value) }
    mutating func encode(_ value: String) throws { slot.value = .string(value) }
    mutating func encode(_ value: Double) throws { slot.value = try JSONValueEncoding.number(value, codingPath) }
    mutating func encode(_ value: Float) throws { slot.value = try JSONValueEncoding.number(Double(value), codingPath) }
    mutating func encode(_ value: Int) throws { slot.value = .integer(value) }
    mutating func encode(_ value: Int8) throws { slot.value = .integer(Int(value)) }
    mutating func encode(_ value: Int16) throws { slot.value = .integer(Int(value)) }
    mutating func encode(_ value: Int32) throws { slot.value = .integer(Int(value)) }
    mutating func encode(_ value: Int64) throws { slot.value = .integer(Int(value)) }
    mutating func encode(_ value: UInt8) throws { slot.value = .integer(Int(value)) }
    mutating func encode(_ value: UInt16) throws { slot.value = .integer(Int(value)) }
    mutating func encode(_ value: UInt32) throws { slot.value = .integer(Int(value)) }

    /// Unsigned values beyond `Int.max` have no ``JSONValue/integer(_:)`` form; JSON text would
    /// print them exactly, a `Double` cannot hold them all, so they are refused.
    mutating func encode(_ value: UInt) throws { slot.value = try wide(value) }
    mutating func encode(_ value: UInt64) throws { slot.value = try wide(value) }

    func wide<T: BinaryInteger>(_ value: T) throws -> JSONValue {
        guard let n = Int(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) is beyond Int.max"))
        }
        return .integer(n)
    }

    mutating func encode<T: Encodable>(_ value: T) throws { slot.value = try JSONValueEncoding.encode(value, codingPath: codingPath) }
}
