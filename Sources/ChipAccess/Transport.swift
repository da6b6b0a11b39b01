import EMRTDCore
import Foundation

/// A link to a contactless chip that carries one APDU at a time: PC/SC on Linux (`ChipAccessPCSC.PCSCTransport`),
/// CoreNFC's ISO 7816 tag on iOS (`CoreNFCTransport`), or a virtual chip in process.
///
/// Implementations bound every exchange by a timeout (throwing `ChipAccessError.timeout`, never blocking longer)
/// and report a chip that left the field as `ChipAccessError.cardRemoved`.
public protocol ChipTransport: AnyObject {
    /// Sends one command APDU's octets; returns the response's octets (data ‖ SW1 SW2).
    func transmit(_ apdu: [UInt8]) throws -> [UInt8]
    /// Whether the chip takes extended length fields (ISO/IEC 7816-4 §5.1; from the ATR's card capabilities).
    var supportsExtendedLength: Bool { get }
    /// A name for messages ("PC/SC reader 'Virtual PCD 00 00'").
    var name: String { get }
}

/// ISO/IEC 7816-3 §8 answer-to-reset: the historical bytes and what their card-capabilities object says. Contactless
/// readers build an ATR from the ATS or ATQB (PC/SC Part 3 §3.1.3.2.3): `3B 8n 80 01 <historical bytes> TCK`.
public struct AnswerToReset: Sendable, Equatable {
    public var bytes: [UInt8]
    /// The historical bytes, or empty when the ATR cannot be read.
    public var historicalBytes: [UInt8]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        historicalBytes = Self.historical(bytes) ?? []
    }

    static func historical(_ atr: [UInt8]) -> [UInt8]? {
        guard atr.count >= 2, atr[0] == 0x3B || atr[0] == 0x3F else { return nil }
        let k = Int(atr[1] & 0x0F)
        // T0's high nibble says which of TA1…TD1 follow; each TDi's high nibble the next group's.
        var indicator = atr[1] >> 4
        var i = 2
        while true {
            var td: UInt8?
            for bit in 0..<4 where indicator & (1 << bit) != 0 {
                guard i < atr.count else { return nil }
                if bit == 3 { td = atr[i] }
                i += 1
            }
            guard let next = td else { break }
            indicator = next >> 4
        }
        guard i + k <= atr.count else { return nil }
        return Array(atr[i..<(i + k)])
    }

    /// ISO/IEC 7816-4 §12.1.1.9: the third software function table of the card-capabilities compact-TLV object
    /// (tag 7, historical bytes in category 80), bit 7 (0x40): extended Lc and Le fields.
    public var supportsExtendedLength: Bool { Self.supportsExtendedLength(historicalBytes: historicalBytes) }

    /// The same answer from the historical bytes alone (CoreNFC gives an ISO 14443-4 tag's ATS historical bytes).
    public static func supportsExtendedLength(historicalBytes: [UInt8]) -> Bool {
        guard historicalBytes.first == 0x80 else { return false }
        var i = 1
        while i < historicalBytes.count {
            let tag = historicalBytes[i] >> 4, length = Int(historicalBytes[i] & 0x0F)
            guard i + 1 + length <= historicalBytes.count else { return false }
            if tag == 0x7, length >= 3 { return historicalBytes[i + 3] & 0x40 != 0 }
            i += 1 + length
        }
        return false
    }
}

/// One APDU exchanged: what was sent and received and how long it took (for the benchmark's per-APDU cost).
public struct APDUExchange: Sendable {
    public var command: CommandAPDU
    public var status: StatusWord
    /// Octets on the wire, both ways (the protected form under secure messaging).
    public var bytesSent: Int
    public var bytesReceived: Int
    /// Wall time of the transport round trip(s), in seconds.
    public var seconds: Double
}

/// The APDU layer over a transport: ISO/IEC 7816-4 response chaining (61xx → GET RESPONSE) and wrong-Le retries
/// (6Cxx), and secure messaging once a session is established. Counts what it exchanges.
public final class APDUChannel {
    public let transport: ChipTransport
    let crypto: ChipCryptography
    /// The secure-messaging session, once BAC, PACE or Chip Authentication established one.
    public var secureMessaging: SecureMessaging?
    /// Whether protected and plain commands may use extended length fields.
    public var extendedLength: Bool
    /// Every exchange, in order, when `recordsExchanges` is set (the benchmark's per-APDU figures).
    public private(set) var exchanges: [APDUExchange] = []
    public var recordsExchanges = false
    /// Commands sent (GET RESPONSE included) and octets each way.
    public private(set) var commandCount = 0
    public private(set) var bytesSent = 0
    public private(set) var bytesReceived = 0

    /// The largest response accepted in total through 61xx chaining (a DG is at most a few hundred KiB; one
    /// response far less).
    static let responseLimit = 70_000

    public init(transport: ChipTransport, crypto: ChipCryptography) {
        self.transport = transport
        self.crypto = crypto
        extendedLength = transport.supportsExtendedLength
    }

    /// Sends `command` (protected when a secure-messaging session is up) and returns the plain response.
    public func send(_ command: CommandAPDU) throws -> ResponseAPDU {
        let started = Date()
        let before = (bytesSent, bytesReceived)
        let response: ResponseAPDU
        if let sm = secureMessaging {
            let wantsLongResponse = (command.ne ?? 0) > 223
            let protected = try sm.protect(command, extended: extendedLength && (command.isExtended || wantsLongResponse))
            let raw = try exchange(protected, retryWrongLength: false)
            response = try sm.unprotect(raw)
        } else {
            response = try exchange(command, retryWrongLength: true)
        }
        if recordsExchanges {
            exchanges.append(APDUExchange(command: command, status: response.status, bytesSent: bytesSent - before.0,
                                          bytesReceived: bytesReceived - before.1, seconds: Date().timeIntervalSince(started)))
        }
        return response
    }

    /// Sends without secure messaging even when a session is up (GET RESPONSE does not take it; tests use it to
    /// show a chip refuses plain commands after access control).
    public func sendPlain(_ command: CommandAPDU) throws -> ResponseAPDU { try exchange(command, retryWrongLength: true) }

    func transmit(_ command: CommandAPDU) throws -> ResponseAPDU {
        let bytes = command.encoded
        let raw = try transport.transmit(bytes)
        commandCount += 1
        bytesSent += bytes.count
        bytesReceived += raw.count
        guard let r = ResponseAPDU(raw) else {
            throw ChipAccessError.malformedResponse("\(raw.count) octets in answer to \(command.instructionName), at least 2 (the status word) expected")
        }
        return r
    }

    func exchange(_ command: CommandAPDU, retryWrongLength: Bool) throws -> ResponseAPDU {
        var r = try transmit(command)
        if retryWrongLength, let exact = r.status.exactLength {
            var again = command
            again.ne = exact
            r = try transmit(again)
        }
        guard r.status.moreDataAvailable != nil else { return r }
        var data = r.data
        while let more = r.status.moreDataAvailable {
            guard data.count <= Self.responseLimit else { throw ChipAccessError.malformedResponse("a chained response longer than \(Self.responseLimit) octets") }
            r = try transmit(CommandAPDU(cla: command.cla & 0x80, ins: 0xC0, p1: 0, p2: 0, ne: more))
            data += r.data
        }
        return ResponseAPDU(data: data, status: r.status)
    }

    /// Forgets the exchanges recorded so far.
    public func resetRecording() { exchanges = [] }
}
