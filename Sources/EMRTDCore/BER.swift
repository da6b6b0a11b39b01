/// A BER-TLV tag (ISO/IEC 8825-1 §8.1.2, as ICAO 9303-10 §4.4 uses it for the LDS): class, constructed bit and
/// number, kept as the raw tag octets packed big-endian (`0x5F1F`, `0x7F61`, `0x30`, …) so LDS tags read as
/// the standard writes them.
public struct BERTag: Hashable, Sendable, CustomStringConvertible {
    /// The tag octets packed big-endian; at most 4 octets.
    public let raw: UInt32

    public init(_ raw: UInt32) { self.raw = raw }

    private var firstOctet: UInt8 {
        var r = raw
        while r > 0xFF { r >>= 8 }
        return UInt8(r)
    }
    /// ISO/IEC 8825-1 tag class: 0 universal, 1 application, 2 context-specific, 3 private.
    public var tagClass: Int { Int(firstOctet >> 6) }
    /// Whether the encoding is constructed (its value is a sequence of TLVs).
    public var isConstructed: Bool { firstOctet & 0x20 != 0 }
    public var description: String { String(raw, radix: 16, uppercase: true) }

    // Universal tags (ITU-T X.690) used by the LDS security object and DG14.
    public static let boolean = BERTag(0x01), integer = BERTag(0x02), bitString = BERTag(0x03)
    public static let octetString = BERTag(0x04), null = BERTag(0x05), objectIdentifier = BERTag(0x06)
    public static let utf8String = BERTag(0x0C), printableString = BERTag(0x13)
    public static let sequence = BERTag(0x30), set = BERTag(0x31)
}

/// Why bytes could not be read as BER-TLV. Every case names the byte offset (from the start of the input)
/// where reading stopped; nothing is read past the input and no declared length is trusted before it is
/// checked against the bytes that are there.
public enum BERError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Zero bytes where a TLV was expected.
    case empty
    /// The input ends inside a tag.
    case truncatedTag(offset: Int)
    /// A tag longer than 4 octets (the LDS never uses one).
    case tagTooLong(offset: Int)
    /// The input ends inside a length field.
    case truncatedLength(offset: Int)
    /// A length field of more than 4 octets (a length ≥ 4 GiB), or the reserved first octet 0xFF.
    case lengthFieldTooLong(offset: Int, octets: Int)
    /// The declared length runs past the end of the input (e.g. 1 GiB declared, 90 bytes present).
    case lengthExceedsInput(offset: Int, declared: UInt64, available: Int)
    /// The declared length is larger than the caller's limit.
    case lengthExceedsLimit(offset: Int, declared: UInt64, limit: Int)
    /// Indefinite length (0x80) on a primitive encoding, which X.690 §8.1.3.2 forbids.
    case indefiniteLengthOnPrimitive(offset: Int)
    /// An indefinite-length value with no end-of-contents octets before the input ends.
    case missingEndOfContents(offset: Int)
    /// Constructed values nested deeper than the limit.
    case nestingTooDeep(offset: Int, limit: Int)
    /// A different tag where the structure requires `expected`.
    case unexpectedTag(offset: Int, expected: BERTag, found: BERTag)
    /// Bytes left over after the outermost TLV.
    case trailingBytes(offset: Int, count: Int)
    /// A value that is not a valid encoding of its type (e.g. an empty INTEGER, a bad OID).
    case invalidValue(offset: Int, String)

    public var description: String {
        switch self {
        case .empty: return "no data where a TLV was expected"
        case .truncatedTag(let o): return "truncated tag at byte \(o)"
        case .tagTooLong(let o): return "tag longer than 4 bytes at byte \(o)"
        case .truncatedLength(let o): return "truncated length at byte \(o)"
        case let .lengthFieldTooLong(o, n): return "length field of \(n) bytes at byte \(o) (at most 4 are allowed)"
        case let .lengthExceedsInput(o, d, a): return "length \(d) declared at byte \(o) runs past the end of the data (\(a) bytes left)"
        case let .lengthExceedsLimit(o, d, l): return "length \(d) declared at byte \(o) exceeds the limit of \(l) bytes"
        case .indefiniteLengthOnPrimitive(let o): return "indefinite length on a primitive value at byte \(o)"
        case .missingEndOfContents(let o): return "indefinite-length value at byte \(o) has no end-of-contents"
        case let .nestingTooDeep(o, l): return "values nested deeper than \(l) levels at byte \(o)"
        case let .unexpectedTag(o, e, f): return "expected tag \(e) at byte \(o), found \(f)"
        case let .trailingBytes(o, n): return "\(n) unexpected bytes after the value ending at byte \(o)"
        case let .invalidValue(o, what): return "invalid value at byte \(o): \(what)"
        }
    }
}

/// One TLV read from a byte buffer: its tag, where its header starts, and its value's range. The buffer is
/// shared (copy-on-write), so elements and their children cost no copies.
public struct BERElement: Sendable {
    public let tag: BERTag
    /// The whole input this element was read from.
    public let buffer: [UInt8]
    /// Offset of the tag's first byte.
    public let start: Int
    /// Offsets of the value (for indefinite lengths, up to the end-of-contents octets).
    public let valueRange: Range<Int>
    /// Offset just past the element (past the end-of-contents octets for indefinite lengths).
    public let end: Int
    /// Nesting depth (0 for a top-level element).
    public let depth: Int

    /// The value octets.
    public var value: ArraySlice<UInt8> { buffer[valueRange] }
    /// The value octets as an array.
    public var valueBytes: [UInt8] { Array(buffer[valueRange]) }
    /// The element's whole encoding (tag, length, value).
    public var encoded: [UInt8] { Array(buffer[start..<end]) }

    /// The TLVs inside a constructed value, in order.
    public func children(limits: BERLimits = .default) throws -> [BERElement] {
        guard tag.isConstructed else { return [] }
        var r = BERReader(buffer, range: valueRange, depth: depth + 1, limits: limits)
        var out: [BERElement] = []
        while !r.atEnd { out.append(try r.read()) }
        return out
    }

    /// The first child with `tag`, or nil.
    public func child(_ tag: BERTag) throws -> BERElement? { try children().first { $0.tag == tag } }

    /// The first child with `tag`, or `BERError.unexpectedTag`.
    public func requireChild(_ tag: BERTag) throws -> BERElement {
        let kids = try children()
        guard let c = kids.first(where: { $0.tag == tag }) else {
            throw BERError.unexpectedTag(offset: valueRange.lowerBound, expected: tag, found: kids.first?.tag ?? BERTag(0))
        }
        return c
    }

    /// Throws unless this element has `tag`.
    @discardableResult
    public func expect(_ tag: BERTag) throws -> BERElement {
        guard self.tag == tag else { throw BERError.unexpectedTag(offset: start, expected: tag, found: self.tag) }
        return self
    }

    /// A non-negative INTEGER value that fits in an `Int` (X.690 §8.3).
    public func intValue() throws -> Int {
        guard !valueRange.isEmpty, valueRange.count <= 8 else { throw BERError.invalidValue(offset: start, "INTEGER of \(valueRange.count) bytes") }
        var v: Int64 = Int64(Int8(bitPattern: buffer[valueRange.lowerBound]))
        for b in buffer[(valueRange.lowerBound + 1)..<valueRange.upperBound] { v = (v << 8) | Int64(b) }
        return Int(v)
    }

    /// A non-negative INTEGER's magnitude, big-endian, without the sign octet (X.690 §8.3): what RSA moduli, DH
    /// values and EC parameters are. Throws for a negative or empty INTEGER or another tag.
    public func unsignedIntegerBytes() throws -> [UInt8] {
        guard tag == .integer else { throw BERError.unexpectedTag(offset: start, expected: .integer, found: tag) }
        guard let first = value.first else { throw BERError.invalidValue(offset: start, "empty INTEGER") }
        guard first & 0x80 == 0 else { throw BERError.invalidValue(offset: start, "negative INTEGER") }
        return Array(value.drop { $0 == 0 })
    }

    /// A BIT STRING's bits as octets, for a BIT STRING with no unused bits (X.690 §8.6; keys and signatures).
    public func bitStringBytes() throws -> [UInt8] {
        guard tag == .bitString else { throw BERError.unexpectedTag(offset: start, expected: .bitString, found: tag) }
        guard let unused = value.first else { throw BERError.invalidValue(offset: start, "empty BIT STRING") }
        guard unused == 0 else { throw BERError.invalidValue(offset: start, "BIT STRING with \(unused) unused bits") }
        return Array(value.dropFirst())
    }

    /// An OBJECT IDENTIFIER value in dotted form (X.690 §8.19).
    public func oidValue() throws -> String {
        guard tag == .objectIdentifier else { throw BERError.unexpectedTag(offset: start, expected: .objectIdentifier, found: tag) }
        guard let s = ObjectIdentifier.dotted(value) else { throw BERError.invalidValue(offset: start, "object identifier") }
        return s
    }
}

/// Limits applied while reading; the defaults fit every LDS file (ICAO 9303-10 §4.6: an EF is at most 64 KiB
/// for short-length readers and DG2/DG3 of a few hundred KiB with extended length).
public struct BERLimits: Sendable {
    /// The largest value length accepted, in bytes.
    public var maxLength: Int
    /// The deepest nesting of constructed values.
    public var maxDepth: Int
    public init(maxLength: Int = 16 << 20, maxDepth: Int = 48) { self.maxLength = maxLength; self.maxDepth = maxDepth }
    public static let `default` = BERLimits()
}

/// Reads consecutive BER-TLVs from a range of a byte buffer (definite and indefinite lengths, tags up to 4 octets).
public struct BERReader: Sendable {
    public let buffer: [UInt8]
    public private(set) var position: Int
    public let endIndex: Int
    let depth: Int
    let limits: BERLimits

    public init(_ buffer: [UInt8], limits: BERLimits = .default) {
        self.init(buffer, range: 0..<buffer.count, depth: 0, limits: limits)
    }

    init(_ buffer: [UInt8], range: Range<Int>, depth: Int, limits: BERLimits) {
        self.buffer = buffer; self.position = range.lowerBound; self.endIndex = range.upperBound
        self.depth = depth; self.limits = limits
    }

    public var atEnd: Bool { position >= endIndex }

    /// Reads exactly one TLV spanning the whole of `bytes`.
    public static func single(_ bytes: [UInt8], limits: BERLimits = .default) throws -> BERElement {
        guard !bytes.isEmpty else { throw BERError.empty }
        var r = BERReader(bytes, limits: limits)
        let e = try r.read()
        guard r.atEnd else { throw BERError.trailingBytes(offset: e.end, count: bytes.count - e.end) }
        return e
    }

    /// The header of the TLV at the front of `bytes` — its tag, the header's length and the declared value length
    /// (nil for the indefinite form) — without needing the value to be there: how a chip file's length is learnt
    /// from its first octets (ICAO 9303-10 §4.4). Throws for a truncated or malformed header.
    public static func header(_ bytes: [UInt8]) throws -> (tag: BERTag, headerLength: Int, valueLength: UInt64?) {
        var r = BERReader(bytes)
        let (_, tag, _, first) = try r.readTagAndFirstLengthOctet()
        if first == 0x80 { return (tag, r.position, nil) }
        let length = try r.readDefiniteLength(first, lengthOffset: r.position - 1)
        return (tag, r.position, length)
    }

    /// The tag (X.690 §8.1.2) and the first length octet; the position is left after that octet.
    mutating func readTagAndFirstLengthOctet() throws -> (start: Int, tag: BERTag, lengthOffset: Int, first: UInt8) {
        let start = position
        guard position < endIndex else { throw start == 0 ? BERError.empty : BERError.truncatedTag(offset: start) }
        // Low five bits all ones → subsequent octets with bit 8 as "more".
        var tag = UInt32(buffer[position])
        position += 1
        if tag & 0x1F == 0x1F {
            var n = 0
            while true {
                guard position < endIndex else { throw BERError.truncatedTag(offset: start) }
                let b = buffer[position]
                position += 1
                n += 1
                guard n <= 3 else { throw BERError.tagTooLong(offset: start) }
                tag = (tag << 8) | UInt32(b)
                if b & 0x80 == 0 { break }
            }
        }
        // Length (X.690 §8.1.3).
        let lengthOffset = position
        guard position < endIndex else { throw BERError.truncatedLength(offset: lengthOffset) }
        let first = buffer[position]
        position += 1
        return (start, BERTag(tag), lengthOffset, first)
    }

    /// A definite length whose first octet `first` was read (short or long form, at most 4 octets).
    mutating func readDefiniteLength(_ first: UInt8, lengthOffset: Int) throws -> UInt64 {
        if first & 0x80 == 0 { return UInt64(first) }
        let n = Int(first & 0x7F)
        guard n <= 4, first != 0xFF else { throw BERError.lengthFieldTooLong(offset: lengthOffset, octets: n) }
        guard position + n <= endIndex else { throw BERError.truncatedLength(offset: lengthOffset) }
        var length: UInt64 = 0
        for _ in 0..<n { length = (length << 8) | UInt64(buffer[position]); position += 1 }
        return length
    }

    /// Reads the next TLV.
    public mutating func read() throws -> BERElement {
        guard depth <= limits.maxDepth else { throw BERError.nestingTooDeep(offset: position, limit: limits.maxDepth) }
        let (start, t, lengthOffset, first) = try readTagAndFirstLengthOctet()
        if first == 0x80 {
            guard t.isConstructed else { throw BERError.indefiniteLengthOnPrimitive(offset: lengthOffset) }
            // Indefinite: children until the end-of-contents octets 00 00.
            let valueStart = position
            while true {
                guard position + 1 < endIndex else { throw BERError.missingEndOfContents(offset: start) }
                if buffer[position] == 0 && buffer[position + 1] == 0 {
                    let valueEnd = position
                    position += 2
                    return BERElement(tag: t, buffer: buffer, start: start, valueRange: valueStart..<valueEnd, end: position, depth: depth)
                }
                var inner = BERReader(buffer, range: position..<endIndex, depth: depth + 1, limits: limits)
                do { _ = try inner.read() } catch let e as BERError {
                    if case .truncatedTag = e { throw BERError.missingEndOfContents(offset: start) }
                    throw e
                }
                position = inner.position
            }
        }
        let length = try readDefiniteLength(first, lengthOffset: lengthOffset)
        let available = endIndex - position
        guard length <= UInt64(available) else {
            throw BERError.lengthExceedsInput(offset: lengthOffset, declared: length, available: available)
        }
        guard length <= UInt64(limits.maxLength) else {
            throw BERError.lengthExceedsLimit(offset: lengthOffset, declared: length, limit: limits.maxLength)
        }
        let valueStart = position
        position += Int(length)
        return BERElement(tag: t, buffer: buffer, start: start, valueRange: valueStart..<position, end: position, depth: depth)
    }
}

/// DER encoding (X.690 §10) for the few structures OpenIDV writes itself: specimen LDS files, the LDS
/// security object, master lists in tests.
public enum DER {
    /// The length octets of `count` (short form below 128, else long form).
    public static func length(_ count: Int) -> [UInt8] {
        precondition(count >= 0)
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var n = count
        while n > 0 { bytes.insert(UInt8(n & 0xFF), at: 0); n >>= 8 }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// One TLV with `tag` (packed big-endian octets, as `BERTag.raw`) around `value`.
    public static func tlv(_ tag: UInt32, _ value: [UInt8]) -> [UInt8] {
        var t: [UInt8] = []
        var r = tag
        repeat { t.insert(UInt8(r & 0xFF), at: 0); r >>= 8 } while r > 0
        return t + length(value.count) + value
    }

    public static func sequence(_ parts: [[UInt8]]) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }
    public static func set(_ parts: [[UInt8]]) -> [UInt8] { tlv(0x31, parts.flatMap { $0 }) }
    public static func octetString(_ v: [UInt8]) -> [UInt8] { tlv(0x04, v) }
    public static func null() -> [UInt8] { [0x05, 0x00] }

    /// A non-negative INTEGER in minimal two's-complement form.
    public static func integer(_ v: Int) -> [UInt8] {
        precondition(v >= 0)
        var bytes: [UInt8] = []
        var n = v
        repeat { bytes.insert(UInt8(n & 0xFF), at: 0); n >>= 8 } while n > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    /// A non-negative INTEGER from big-endian magnitude octets (leading zeros dropped, a zero octet added when the
    /// top bit is set, so the value stays positive; X.690 §8.3).
    public static func unsignedInteger(_ magnitude: [UInt8]) -> [UInt8] {
        var b = Array(magnitude.drop { $0 == 0 })
        if b.isEmpty { b = [0] }
        if b[0] & 0x80 != 0 { b.insert(0, at: 0) }
        return tlv(0x02, b)
    }

    /// A BIT STRING with no unused bits around `bytes` (X.690 §8.6).
    public static func bitString(_ bytes: [UInt8]) -> [UInt8] { tlv(0x03, [0] + bytes) }

    /// An OBJECT IDENTIFIER from dotted form ("2.23.136.1.1.1").
    public static func oid(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        precondition(arcs.count >= 2)
        var body: [UInt8] = []
        func base128(_ v: UInt64) -> [UInt8] {
            var out: [UInt8] = [UInt8(v & 0x7F)]
            var n = v >> 7
            while n > 0 { out.insert(UInt8(n & 0x7F) | 0x80, at: 0); n >>= 7 }
            return out
        }
        body += base128(arcs[0] * 40 + arcs[1])
        for a in arcs.dropFirst(2) { body += base128(a) }
        return tlv(0x06, body)
    }
}

/// Dotted-form conversion of OBJECT IDENTIFIER contents (X.690 §8.19).
enum ObjectIdentifier {
    static func dotted(_ v: ArraySlice<UInt8>) -> String? {
        guard !v.isEmpty, v.last! & 0x80 == 0 else { return nil }
        var arcs: [UInt64] = []
        var n: UInt64 = 0
        var started = false
        for b in v {
            if !started && b == 0x80 { return nil }   // non-minimal
            guard n <= (UInt64.max >> 7) else { return nil }
            n = (n << 7) | UInt64(b & 0x7F)
            started = true
            if b & 0x80 == 0 { arcs.append(n); n = 0; started = false }
        }
        guard let first = arcs.first else { return nil }
        let head: [UInt64] = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80]
        return (head + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }
}
