import Foundation

// The chip step's challenge–response on the wire (ICAO 9303-11 §6.1 Active Authentication; §6.2 Chip
// Authentication as the client reports it). Defined once here for the server (IDVEngine) and the SDK (IDVKit):
//
//   uploadIDVDocumentPages challenge payload:  "chip_challenge": ChipChallengePayload
//   the upload answer's payload.chip:          ChipFilesPayload + "active_authentication": ActiveAuthenticationAnswer,
//                                              "chip_authentication": ChipAuthenticationReport

/// The server's challenge for the document's chip, in the `uploadIDVDocumentPages` challenge's payload as
/// `chip_challenge`: `{"active_authentication_challenge": "0123456789abcdef", "expires_at": 1767225600}`.
///
/// A fresh 8-byte challenge from the server's CSPRNG for every upload it asks for (a retry after an unreadable page
/// gets a new one), kept sealed in the session's flow state and never chosen by the client; it is valid for that one
/// upload answer only, and expires with the step (at the latest when the flow does, `expires_at`). The client has
/// the chip sign it (INTERNAL AUTHENTICATE) and sends the signature back in `payload.chip.active_authentication`;
/// the server verifies it with DG15's key over its own copy of the challenge.
public struct ChipChallengePayload: Codable, Equatable, Sendable {
    /// The key of this object in the challenge payload.
    public static let payloadKey = "chip_challenge"
    /// The challenge's length in bytes (ICAO 9303-11 §6.1: INTERNAL AUTHENTICATE with an 8-byte RND.IFD).
    public static let challengeBytes = 8

    /// The Active Authentication challenge: 8 bytes as 16 lowercase hexadecimal digits.
    public var activeAuthenticationChallenge: String
    /// Unix seconds after which the step no longer takes an answer (the flow's expiry).
    public var expiresAt: Int

    enum CodingKeys: String, CodingKey {
        case activeAuthenticationChallenge = "active_authentication_challenge", expiresAt = "expires_at"
    }

    public init(challenge: [UInt8], expiresAt: Int) {
        activeAuthenticationChallenge = ChipHex.encode(challenge)
        self.expiresAt = expiresAt
    }

    /// The challenge's bytes; nil when `activeAuthenticationChallenge` is not 16 hexadecimal digits.
    public var challenge: [UInt8]? {
        guard let b = ChipHex.decode(activeAuthenticationChallenge), b.count == Self.challengeBytes else { return nil }
        return b
    }
}

/// The chip's answer to the server's Active Authentication challenge, in the upload answer's `payload.chip` as
/// `active_authentication`: `{"challenge": "0123456789abcdef", "signature": "<base64>"}`.
///
/// `challenge` echoes the challenge the chip signed (it must be this step's `chip_challenge`: anything else is a
/// replayed or stale answer); `signature` is the chip's INTERNAL AUTHENTICATE response as it returned it — RSA:
/// the ISO/IEC 9796-2 signature, as long as the modulus; ECDSA: r ‖ s (BSI TR-03111). The server never takes the
/// challenge from here: it verifies the signature over the challenge it issued.
public struct ActiveAuthenticationAnswer: Codable, Equatable, Sendable {
    /// The key of this object in `payload.chip`.
    public static let payloadKey = "active_authentication"
    /// Longest signature accepted, in bytes (RSA-4096 gives 512; ECDSA on P-521, 132).
    public static let maxSignatureBytes = 1024

    /// The challenge the chip signed, 16 hexadecimal digits.
    public var challenge: String
    /// The signature, standard base64.
    public var signature: String

    public init(challenge: [UInt8], signature: Data) {
        self.challenge = ChipHex.encode(challenge)
        self.signature = signature.base64EncodedString()
    }

    /// The fields as received (checked by ``decoded()``).
    public init(challenge: String, signature: String) {
        self.challenge = challenge
        self.signature = signature
    }

    /// The challenge and signature decoded and checked: 8 bytes of hexadecimal, base64 of 1…1024 bytes.
    public func decoded() throws(ChipFilesPayload.Invalid) -> (challenge: [UInt8], signature: Data) {
        guard let c = ChipHex.decode(challenge), c.count == ChipChallengePayload.challengeBytes else {
            throw ChipFilesPayload.Invalid("chip active_authentication.challenge must be \(ChipChallengePayload.challengeBytes * 2) hexadecimal digits")
        }
        guard signature.utf8.count <= (Self.maxSignatureBytes + 2) / 3 * 4 + 4, let s = Data(base64Encoded: signature), !s.isEmpty,
              s.count <= Self.maxSignatureBytes else {
            throw ChipFilesPayload.Invalid("chip active_authentication.signature must be base64 of 1–\(Self.maxSignatureBytes) bytes")
        }
        return (c, s)
    }
}

/// Chip Authentication (ICAO 9303-11 §6.2) as the client reports it, in `payload.chip` as `chip_authentication`:
/// `verified` (the chip proved its DG14 key and secure messaging restarted with the new keys), `failed`,
/// `not_supported` (no Chip Authentication key in DG14), `not_performed`. The server did not see the exchange, so it
/// records the report (audit, evidence) and does not judge on it.
public enum ChipAuthenticationReport: String, Codable, Equatable, Sendable, CaseIterable {
    /// The key of this value in `payload.chip`.
    public static let payloadKey = "chip_authentication"

    case verified
    case failed
    case notSupported = "not_supported"
    case notPerformed = "not_performed"
}

/// Lowercase hexadecimal for the chip challenge (the wire's only hex field).
public enum ChipHex {
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }

    /// The bytes of `s` (upper or lower case, an even number of digits), or nil.
    public static func decode(_ s: String) -> [UInt8]? {
        let chars = Array(s.utf8)
        guard chars.count % 2 == 0, chars.count <= 4096 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let h = nibble(chars[i]), let l = nibble(chars[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}
