import EMRTDCore
import Foundation

/// The access-control protocols (ICAO 9303-11 §4).
public enum AccessProtocol: String, Sendable, Codable, Hashable {
    /// Basic Access Control (§4.3).
    case bac = "BAC"
    /// Password Authenticated Connection Establishment (§4.4).
    case pace = "PACE"
}

/// Why reading a chip failed. Each case says what happened in words a person holding the document can act on
/// (`description`); none carries key material, MRZ data or a CAN.
public enum ChipAccessError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The chip refused the MRZ or CAN: BAC's EXTERNAL AUTHENTICATE or PACE's mutual authentication failed
    /// (status 6300 / 63Cx, or 6982 where a chip answers so). `triesLeft` from 63Cx when the chip says.
    case accessDenied(AccessProtocol, status: StatusWord, triesLeft: Int?)
    /// No PC/SC service, no reader, or the named reader does not exist.
    case noReader(String)
    /// No chip in the reader's field within the wait.
    case noCard(String)
    /// The chip left the field (or the card was reset) in the middle of an exchange.
    case cardRemoved(during: String)
    /// No response within the per-APDU timeout.
    case timeout(command: String, seconds: Double)
    /// The chip offers only protocols this reader does not implement (PACE Integrated Mapping, a curve it does
    /// not know, DH Chip Authentication keys with unknown parameters, …) or refused a parameter.
    case unsupportedProtocol(String)
    /// Secure messaging failed: the response's MAC does not verify (a wrong key or send sequence counter), a data
    /// object is missing or malformed, or the chip reported an SM error and ended the session.
    case secureMessaging(String)
    /// A mutual-authentication step the terminal checks failed (the chip's BAC cryptogram or PACE token does not
    /// verify, or its public key is invalid): the chip is not the one holding that password, or is faulty.
    case authenticationFailed(String)
    /// The chip answered a command with an unexpected status word.
    case unexpectedStatus(command: String, status: StatusWord)
    /// A response that does not have the structure the standard gives it.
    case malformedResponse(String)
    /// The transport failed (a PC/SC or CoreNFC error other than the ones above).
    case transport(String)
    /// The caller's input cannot be used (an MRZ without valid check digits, a CAN that is not 6 digits, …).
    case invalidInput(String)
    /// A cryptographic primitive failed.
    case crypto(String)

    public var description: String {
        switch self {
        case let .accessDenied(p, sw, tries):
            let left = tries.map { " (\($0) tries left)" } ?? ""
            return "access denied: the chip refused the \(p == .pace ? "password (MRZ or CAN)" : "MRZ") with \(p.rawValue) (status \(sw))\(left); check the document number, birth date and expiry date, or the CAN"
        case .noReader(let s): return "no reader: \(s)"
        case .noCard(let s): return "no card: \(s)"
        case .cardRemoved(let during): return "the card was removed during \(during); hold the document still on the reader and read it again"
        case let .timeout(command, seconds): return "the chip did not answer \(command) within \(String(format: "%.1f", seconds)) s"
        case .unsupportedProtocol(let s): return "unsupported protocol: \(s)"
        case .secureMessaging(let s): return "secure messaging failed: \(s)"
        case .authenticationFailed(let s): return "authentication failed: \(s)"
        case let .unexpectedStatus(command, sw): return "the chip answered \(command) with status \(sw)"
        case .malformedResponse(let s): return "malformed response: \(s)"
        case .transport(let s): return "reader error: \(s)"
        case .invalidInput(let s): return "unusable input: \(s)"
        case .crypto(let s): return "cryptography failed: \(s)"
        }
    }

    /// Whether the failure is the access key's (wrong MRZ or CAN).
    public var isAccessDenied: Bool { if case .accessDenied = self { return true } else { return false } }
}

/// Runs `body`, turning a `ChipCryptoError` or a `SecurityInfoError` into a `ChipAccessError`.
func chipCrypto<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let e as ChipCryptoError { throw ChipAccessError.crypto(e.detail) }
}
