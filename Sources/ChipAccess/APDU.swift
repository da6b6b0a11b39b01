import Foundation
import EMRTDCore

/// An ISO/IEC 7816-4 command APDU (§5.1): header, optional command data (Nc octets) and the expected response
/// length Ne. Encoded with short length fields (Nc ≤ 255, Ne ≤ 256) unless the data or Ne need extended ones
/// (Nc ≤ 65 535, Ne ≤ 65 536) or `extended` asks for them.
public struct CommandAPDU: Sendable, Equatable, CustomStringConvertible {
    public var cla: UInt8
    public var ins: UInt8
    public var p1: UInt8
    public var p2: UInt8
    public var data: [UInt8]
    /// Ne, the most response-data octets the terminal accepts: nil = no Le field; 256 is short Le `00`, 65 536
    /// extended Le `0000`.
    public var ne: Int?
    /// Force extended length fields even when short ones would do.
    public var extended: Bool

    public init(cla: UInt8 = 0x00, ins: UInt8, p1: UInt8, p2: UInt8, data: [UInt8] = [], ne: Int? = nil, extended: Bool = false) {
        self.cla = cla; self.ins = ins; self.p1 = p1; self.p2 = p2; self.data = data; self.ne = ne; self.extended = extended
    }

    /// Whether the encoding uses extended length fields.
    public var isExtended: Bool { extended || data.count > 255 || (ne ?? 0) > 256 }

    /// The octets sent to the card (ISO/IEC 7816-4 §5.1, cases 1, 2S/2E, 3S/3E, 4S/4E).
    public var encoded: [UInt8] {
        precondition(data.count <= 65_535 && (ne ?? 0) <= 65_536 && (ne ?? 1) >= 1, "APDU lengths out of range")
        var out: [UInt8] = [cla, ins, p1, p2]
        if isExtended {
            if !data.isEmpty {
                out += [0x00, UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data
                if let ne { out += [UInt8((ne & 0xFFFF) >> 8), UInt8(ne & 0xFF)] }
            } else if let ne {
                out += [0x00, UInt8((ne & 0xFFFF) >> 8), UInt8(ne & 0xFF)]
            }
        } else {
            if !data.isEmpty { out += [UInt8(data.count)] + data }
            if let ne { out.append(UInt8(ne & 0xFF)) }
        }
        return out
    }

    /// Parses a command APDU as a card receives it; nil when the length fields do not match the octets.
    public init?(parsing b: [UInt8]) {
        guard b.count >= 4 else { return nil }
        cla = b[0]; ins = b[1]; p1 = b[2]; p2 = b[3]
        data = []; ne = nil; extended = false
        let body = Array(b[4...])
        if body.isEmpty { return }
        if body.count == 1 { ne = body[0] == 0 ? 256 : Int(body[0]); return }
        if body[0] != 0 {
            let lc = Int(body[0])
            if body.count == 1 + lc { data = Array(body[1...]); return }
            if body.count == 2 + lc { data = Array(body[1...lc]); ne = body[lc + 1] == 0 ? 256 : Int(body[lc + 1]); return }
            return nil
        }
        // Extended: 00 then two octets.
        extended = true
        guard body.count >= 3 else { return nil }
        let n = Int(body[1]) << 8 | Int(body[2])
        if body.count == 3 { ne = n == 0 ? 65_536 : n; return }
        guard n > 0 else { return nil }
        if body.count == 3 + n { data = Array(body[3...]); return }
        if body.count == 5 + n {
            data = Array(body[3..<(3 + n)])
            let le = Int(body[3 + n]) << 8 | Int(body[4 + n])
            ne = le == 0 ? 65_536 : le
            return
        }
        return nil
    }

    /// The instruction's name for messages (`SELECT`, `READ BINARY`, `GENERAL AUTHENTICATE`, …).
    public var instructionName: String {
        switch ins {
        case 0xA4: return "SELECT"
        case 0xB0, 0xB1: return "READ BINARY"
        case 0x84: return "GET CHALLENGE"
        case 0x82: return "EXTERNAL AUTHENTICATE"
        case 0x88: return "INTERNAL AUTHENTICATE"
        case 0x22: return "MANAGE SECURITY ENVIRONMENT"
        case 0x86, 0x87: return "GENERAL AUTHENTICATE"
        case 0xC0: return "GET RESPONSE"
        default: return String(format: "INS %02X", ins)
        }
    }

    /// Header and lengths only: command data (keys, cryptograms) is never printed.
    public var description: String {
        String(format: "%@ (%02X %02X %02X %02X, Nc %d, Ne %@)", instructionName, cla, ins, p1, p2, data.count, ne.map { "\($0)" } ?? "none")
    }
}

/// An ISO/IEC 7816-4 response APDU (§5.1): response data and the status word SW1-SW2.
public struct ResponseAPDU: Sendable, Equatable {
    public var data: [UInt8]
    public var status: StatusWord

    public init(data: [UInt8] = [], status: StatusWord) { self.data = data; self.status = status }

    /// Splits the octets a card returned; nil for fewer than two.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return nil }
        data = Array(bytes.dropLast(2))
        status = StatusWord(sw1: bytes[bytes.count - 2], sw2: bytes[bytes.count - 1])
    }

    public var encoded: [UInt8] { data + [status.sw1, status.sw2] }
}

/// SW1-SW2 (ISO/IEC 7816-4 §5.6), with the meanings ICAO 9303-11 relies on.
public struct StatusWord: Sendable, Hashable, CustomStringConvertible {
    public var value: UInt16
    public init(_ value: UInt16) { self.value = value }
    public init(sw1: UInt8, sw2: UInt8) { value = UInt16(sw1) << 8 | UInt16(sw2) }
    public var sw1: UInt8 { UInt8(value >> 8) }
    public var sw2: UInt8 { UInt8(value & 0xFF) }

    public static let success = StatusWord(0x9000)
    /// End of file reached before Ne octets were read (a warning: the data is returned).
    public static let endOfFile = StatusWord(0x6282)
    public static let authenticationFailed = StatusWord(0x6300)
    public static let wrongLength = StatusWord(0x6700)
    public static let securityStatusNotSatisfied = StatusWord(0x6982)
    public static let authenticationMethodBlocked = StatusWord(0x6983)
    public static let conditionsNotSatisfied = StatusWord(0x6985)
    public static let secureMessagingDataObjectsMissing = StatusWord(0x6987)
    public static let secureMessagingDataObjectsIncorrect = StatusWord(0x6988)
    public static let incorrectData = StatusWord(0x6A80)
    public static let functionNotSupported = StatusWord(0x6A81)
    public static let fileNotFound = StatusWord(0x6A82)
    public static let incorrectParameters = StatusWord(0x6A86)
    public static let referencedDataNotFound = StatusWord(0x6A88)
    public static let wrongParameters = StatusWord(0x6B00)
    public static let instructionNotSupported = StatusWord(0x6D00)
    public static let classNotSupported = StatusWord(0x6E00)
    public static let noPreciseDiagnosis = StatusWord(0x6F00)

    /// 9000, or a 62xx / 63xx warning that still carries the response (62xx: data may be shorter than asked).
    public var isSuccess: Bool { value == 0x9000 }
    /// 61xx: more response data is waiting; GET RESPONSE with Ne = SW2 (0: 256) fetches it.
    public var moreDataAvailable: Int? { sw1 == 0x61 ? (sw2 == 0 ? 256 : Int(sw2)) : nil }
    /// 6Cxx: wrong Le; the card says how many octets it has (SW2; 0: 256).
    public var exactLength: Int? { sw1 == 0x6C ? (sw2 == 0 ? 256 : Int(sw2)) : nil }
    /// 6300 or 63Cx: the authentication (the key or password) was wrong; 63Cx says x tries are left.
    public var isAuthenticationFailure: Bool { value == 0x6300 || (sw1 == 0x63 && sw2 & 0xF0 == 0xC0) }

    public var description: String {
        let hex = String(format: "%04X", value)
        return meaning.map { "\(hex) (\($0))" } ?? hex
    }

    /// What the status word means (ISO/IEC 7816-4 Tables 5–6), or nil for one without a name here.
    public var meaning: String? {
        switch value {
        case 0x9000: return "success"
        case 0x6282: return "end of file reached before the expected length"
        case 0x6300: return "authentication failed"
        case 0x6581: return "memory failure"
        case 0x6700: return "wrong length"
        case 0x6881: return "logical channel not supported"
        case 0x6882: return "secure messaging not supported"
        case 0x6982: return "security status not satisfied"
        case 0x6983: return "authentication method blocked"
        case 0x6984: return "reference data not usable"
        case 0x6985: return "conditions of use not satisfied"
        case 0x6986: return "command not allowed (no current EF)"
        case 0x6987: return "expected secure messaging data objects missing"
        case 0x6988: return "incorrect secure messaging data objects"
        case 0x6A80: return "incorrect parameters in the command data field"
        case 0x6A81: return "function not supported"
        case 0x6A82: return "file or application not found"
        case 0x6A86: return "incorrect parameters P1-P2"
        case 0x6A88: return "referenced data or reference data not found"
        case 0x6B00: return "wrong parameters P1-P2 (offset outside the file)"
        case 0x6D00: return "instruction not supported"
        case 0x6E00: return "class not supported"
        case 0x6F00: return "no precise diagnosis"
        default:
            if sw1 == 0x61 { return "\(moreDataAvailable!) more octets available" }
            if sw1 == 0x6C { return "wrong Le; \(exactLength!) octets available" }
            if sw1 == 0x63, sw2 & 0xF0 == 0xC0 { return "authentication failed, \(sw2 & 0x0F) tries left" }
            return nil
        }
    }
}
