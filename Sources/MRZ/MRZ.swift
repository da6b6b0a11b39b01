/// ICAO Doc 9303 machine-readable zones: formats (TD1, TD2, TD3, MRV-A, MRV-B), check digits,
/// parsing and OCR-error correction. Pure Swift; Foundation only for dates.
///
/// Entry point: ``MRZParser`` (`MRZParser().parse(lines)` → ``MRZResult``).
public enum MRZ {
    /// The ICAO 9303 check digit of `field` (Doc 9303 Part 3, §4.9): each character's value
    /// (`0`–`9` → 0–9, `A`–`Z` → 10–35, `<` → 0) times the repeating weights 7, 3, 1, summed,
    /// modulo 10. Returns nil when `field` holds a character outside that alphabet.
    public static func checkDigit<S: StringProtocol>(_ field: S) -> Int? {
        var sum = 0
        var i = 0
        for byte in field.utf8 {
            guard let value = characterValue(byte) else { return nil }
            sum += value * weights[i % 3]
            i += 1
        }
        return sum % 10
    }

    /// The check-digit value of one MRZ byte (Doc 9303-3 §4.9), nil outside `0-9A-Z<`.
    @inline(__always)
    static func characterValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte &- UInt8(ascii: "0"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(byte &- UInt8(ascii: "A")) + 10
        case UInt8(ascii: "<"): return 0
        default: return nil
        }
    }

    static let weights = [7, 3, 1]
}
