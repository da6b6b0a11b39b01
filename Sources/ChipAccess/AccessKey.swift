import EMRTDCore
import Foundation
import MRZ

/// The MRZ fields a chip's access keys derive from (ICAO 9303-11 §9.7.2): the document number, the date of birth
/// and the date of expiry, each as printed in the MRZ.
public struct MRZKey: Sendable, Equatable {
    /// The document number without fillers, in full (more than 9 characters for TD1 long numbers).
    public let documentNumber: String
    /// Date of birth, `YYMMDD` as in the MRZ (`<` for an unknown part).
    public let dateOfBirth: String
    /// Date of expiry, `YYMMDD`.
    public let dateOfExpiry: String

    /// Throws `ChipAccessError.invalidInput` unless the number is 1–22 MRZ characters and the dates 6 digits (or `<`).
    public init(documentNumber: String, dateOfBirth: String, dateOfExpiry: String) throws {
        let number = String(documentNumber.uppercased().reversed().drop { $0 == "<" }.reversed())
        func mrzCharacters(_ s: String) -> Bool { s.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "<" } }
        guard (1...22).contains(number.count), mrzCharacters(number) else {
            throw ChipAccessError.invalidInput("a document number is 1 to 22 characters A-Z, 0-9 or <")
        }
        for (name, d) in [("date of birth", dateOfBirth), ("date of expiry", dateOfExpiry)] {
            guard d.count == 6, d.allSatisfy({ ("0"..."9").contains($0) || $0 == "<" }) else {
                throw ChipAccessError.invalidInput("the \(name) is YYMMDD as in the MRZ")
            }
        }
        self.documentNumber = number; self.dateOfBirth = dateOfBirth; self.dateOfExpiry = dateOfExpiry
    }

    /// The key fields of MRZ lines (TD1 3×30, TD2 2×36, TD3 2×44), read without OCR correction. Throws
    /// `ChipAccessError.invalidInput` when the lines are not an MRZ or lack the three fields.
    public init(mrzLines: [String]) throws {
        let lines = mrzLines.map { $0.uppercased().filter { !$0.isWhitespace } }
        let result = MRZParser(options: .init(correctionEnabled: false)).parse(lines)
        guard result.format != .unknown else { throw ChipAccessError.invalidInput("the lines are not an MRZ (TD1 3×30, TD2 2×36 or TD3 2×44 characters)") }
        let f = result.fields
        guard let birth = f.raw["birth_date"], let expiry = f.raw["expiry_date"] else {
            throw ChipAccessError.invalidInput("the MRZ has no date of birth or of expiry")
        }
        try self.init(documentNumber: f.documentNumber, dateOfBirth: birth, dateOfExpiry: expiry)
    }

    /// MRZ_information (ICAO 9303-11 §9.7.2): the document number (padded with `<` to 9 characters) and its check
    /// digit, the date of birth and its check digit, the date of expiry and its check digit — 24 characters for a
    /// 9-character number, `L898902C<369080619406236` in Appendix D.
    public var information: String {
        let number = documentNumber.count < 9 ? documentNumber + String(repeating: "<", count: 9 - documentNumber.count) : documentNumber
        func cd(_ s: String) -> String { String(MRZ.checkDigit(s) ?? 0) }
        return number + cd(number) + dateOfBirth + cd(dateOfBirth) + dateOfExpiry + cd(dateOfExpiry)
    }
}

/// SHA-1(MRZ_information), 20 octets: the one value BAC's K_seed (its first 16 octets, ICAO 9303-11 §9.7.2) and
/// PACE's MRZ password f(π) (§9.7.3, §4.4.3.3) are both derived from. A server that read the MRZ from the photo can
/// hand a terminal this digest instead of the document number and dates in the clear.
public struct MRZInformationDigest: Sendable, Equatable {
    /// SHA-1's output length.
    public static let length = 20
    /// The 20 octets.
    public let octets: [UInt8]

    /// Throws `ChipAccessError.invalidInput` unless `octets` is 20 octets long.
    public init(octets: [UInt8]) throws {
        guard octets.count == Self.length else {
            throw ChipAccessError.invalidInput("SHA-1(MRZ_information) is \(Self.length) octets, not \(octets.count)")
        }
        self.octets = octets
    }

    /// SHA-1 of `key`'s MRZ_information.
    public init(_ key: MRZKey, _ crypto: ChipCryptography) {
        octets = crypto.digest(.sha1, Array(key.information.utf8))
    }
}

/// What opens a chip: the MRZ (BAC or PACE) — its fields, or SHA-1(MRZ_information) as a server that read the MRZ
/// sends it — or the card access number printed on the document (PACE only).
public enum AccessKey: Sendable, Equatable, CustomStringConvertible {
    case mrz(MRZKey)
    /// The MRZ given as SHA-1(MRZ_information) (BAC or PACE with the MRZ password, as ``mrz(_:)``).
    case mrzDigest(MRZInformationDigest)
    /// The CAN: 6 digits (ICAO 9303-11 §4.4.1; some cards print more, so 1–12 digits are taken).
    case can(String)

    /// A CAN key; throws `ChipAccessError.invalidInput` unless `can` is 1–12 decimal digits.
    public static func canNumber(_ can: String) throws -> AccessKey {
        let digits = can.filter { !$0.isWhitespace }
        guard (1...12).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }) else {
            throw ChipAccessError.invalidInput("a CAN is the 6 digits printed on the document")
        }
        return .can(digits)
    }

    /// The PACE password reference (MSE:Set AT DO'83', ICAO 9303-11 §4.4.4.1): 1 MRZ, 2 CAN.
    public var paceReference: UInt8 {
        switch self {
        case .mrz, .mrzDigest: return 0x01
        case .can: return 0x02
        }
    }

    /// The PACE password π's key seed f(π) (ICAO 9303-11 §9.7.3): SHA-1(MRZ_information) for the MRZ, the CAN's
    /// ASCII octets for a CAN.
    public func pacePasswordSeed(_ crypto: ChipCryptography) -> [UInt8] {
        switch self {
        case .mrz(let k): return MRZInformationDigest(k, crypto).octets
        case .mrzDigest(let d): return d.octets
        case .can(let c): return Array(c.utf8)
        }
    }

    /// Never prints the key itself.
    public var description: String {
        switch self {
        case .mrz, .mrzDigest: return "MRZ"
        case .can: return "CAN"
        }
    }
}
