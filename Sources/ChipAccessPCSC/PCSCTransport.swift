import CPCSCLite
import ChipAccess
import Dispatch
import Foundation

/// A PC/SC context (pcsc-lite; PC/SC Workgroup Part 5): lists readers, waits for a card, connects. Any CCID
/// contactless reader on Linux works through it, and so does the test suite's virtual chip (pcscd with
/// vsmartcard-vpcd). pcsc-lite finds the daemon at `/run/pcscd/pcscd.comm`, or at `$PCSCLITE_CSOCK_NAME` — read
/// once per process, at the first context.
public final class PCSCContext: @unchecked Sendable {
    let context: SCARDCONTEXT

    /// Connects to the PC/SC service. Throws `ChipAccessError.noReader` when pcscd is not running.
    public init() throws {
        var ctx: SCARDCONTEXT = 0
        let rv = SCardEstablishContext(DWORD(SCARD_SCOPE_SYSTEM), nil, nil, &ctx)
        guard rv == PCSCStatus.success else {
            if rv == PCSCStatus.noService || rv == PCSCStatus.serviceStopped {
                throw ChipAccessError.noReader("no PC/SC service (pcscd is not running or not reachable)")
            }
            throw ChipAccessError.transport("SCardEstablishContext: \(PCSCStatus.describe(rv))")
        }
        context = ctx
    }

    deinit { SCardReleaseContext(context) }

    /// The names of the readers pcscd knows, in its order (empty when there are none).
    public func readers() throws -> [String] {
        var length: DWORD = 0
        var rv = SCardListReaders(context, nil, nil, &length)
        if rv == PCSCStatus.noReadersAvailable { return [] }
        guard rv == PCSCStatus.success else { throw ChipAccessError.transport("SCardListReaders: \(PCSCStatus.describe(rv))") }
        var buffer = [CChar](repeating: 0, count: Int(length))
        rv = SCardListReaders(context, nil, &buffer, &length)
        if rv == PCSCStatus.noReadersAvailable { return [] }
        guard rv == PCSCStatus.success else { throw ChipAccessError.transport("SCardListReaders: \(PCSCStatus.describe(rv))") }
        return buffer.split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }

    /// The reader to use: the one named `name` (exactly, or the only reader whose name contains it), else the first
    /// reader. Throws `ChipAccessError.noReader` when there is none or the name matches none.
    public func reader(named name: String?) throws -> String {
        let all = try readers()
        guard !all.isEmpty else { throw ChipAccessError.noReader("no PC/SC reader is connected") }
        guard let name else { return all[0] }
        if all.contains(name) { return name }
        let matches = all.filter { $0.localizedCaseInsensitiveContains(name) }
        guard matches.count == 1 else {
            throw ChipAccessError.noReader(matches.isEmpty ? "no reader named '\(name)' (readers: \(all.joined(separator: ", ")))"
                                                           : "'\(name)' names several readers: \(matches.joined(separator: ", "))")
        }
        return matches[0]
    }

    /// Waits up to `timeout` seconds for a card in `reader` (nil: any reader); returns the reader that has one.
    /// Throws `ChipAccessError.noCard` when none arrives in time, `.noReader` when there are no readers.
    public func waitForCard(in reader: String?, timeout: Double) throws -> String {
        let names = try reader.map { [$0] } ?? readers()
        guard !names.isEmpty else { throw ChipAccessError.noReader("no PC/SC reader is connected") }
        let cNames = names.map { strdup($0)! }
        defer { cNames.forEach { free($0) } }
        var states = cNames.map { n -> SCARD_READERSTATE in
            var s = SCARD_READERSTATE()
            s.szReader = UnsafePointer(n)
            s.dwCurrentState = DWORD(SCARD_STATE_UNAWARE)
            return s
        }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = max(0, deadline.timeIntervalSinceNow)
            let rv = SCardGetStatusChange(context, DWORD(remaining * 1000), &states, DWORD(states.count))
            if rv == PCSCStatus.timeout { break }
            if rv == PCSCStatus.unknownReader { throw ChipAccessError.noReader("reader '\(names.joined(separator: ", "))' is gone") }
            guard rv == PCSCStatus.success else { throw ChipAccessError.transport("SCardGetStatusChange: \(PCSCStatus.describe(rv))") }
            for (i, s) in states.enumerated() where s.dwEventState & DWORD(SCARD_STATE_PRESENT) != 0 && s.dwEventState & DWORD(SCARD_STATE_MUTE) == 0 {
                return names[i]
            }
            for i in states.indices { states[i].dwCurrentState = states[i].dwEventState & ~DWORD(SCARD_STATE_CHANGED) }
            if remaining <= 0 { break }
        }
        throw ChipAccessError.noCard("no document on \(reader.map { "'\($0)'" } ?? "any reader") within \(String(format: "%.1f", timeout)) s")
    }

    /// Whether `reader` has a card now.
    public func hasCard(in reader: String) throws -> Bool {
        let name = strdup(reader)!
        defer { free(name) }
        var state = SCARD_READERSTATE()
        state.szReader = UnsafePointer(name)
        state.dwCurrentState = DWORD(SCARD_STATE_UNAWARE)
        let rv = SCardGetStatusChange(context, 0, &state, 1)
        if rv == PCSCStatus.unknownReader { throw ChipAccessError.noReader("no reader named '\(reader)'") }
        guard rv == PCSCStatus.success || rv == PCSCStatus.timeout else { throw ChipAccessError.transport("SCardGetStatusChange: \(PCSCStatus.describe(rv))") }
        return state.dwEventState & DWORD(SCARD_STATE_PRESENT) != 0
    }

    /// Waits up to `timeout` seconds until `reader` has no card (the document was taken away); true when it has none.
    @discardableResult
    public func waitForRemoval(from reader: String, timeout: Double) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while try hasCard(in: reader) {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return true
    }

    /// One call for an app: waits up to `wait` seconds for a document on `reader` (a name or a unique part of one;
    /// nil: any reader) and connects to it with the per-APDU `timeout`. Hand the transport to `EMRTDReader`.
    public static func connectToCard(reader: String? = nil, wait: Double, timeout: Double = PCSCTransport.defaultTimeout) throws -> PCSCTransport {
        let context = try PCSCContext()
        let name = try reader.map { try context.reader(named: $0) }
        return try context.connect(to: try context.waitForCard(in: name, timeout: wait), timeout: timeout)
    }

    /// Connects to the card in `reader` exclusively (T=1 or T=0). `timeout`: the per-APDU limit, in seconds.
    public func connect(to reader: String, timeout: Double = PCSCTransport.defaultTimeout) throws -> PCSCTransport {
        var card: SCARDHANDLE = 0
        var active: DWORD = 0
        let rv = SCardConnect(context, reader, DWORD(SCARD_SHARE_EXCLUSIVE), DWORD(SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1), &card, &active)
        switch rv {
        case PCSCStatus.success: break
        case PCSCStatus.noSmartcard, PCSCStatus.removedCard: throw ChipAccessError.noCard("no document on '\(reader)'")
        case PCSCStatus.unknownReader: throw ChipAccessError.noReader("no reader named '\(reader)'")
        case PCSCStatus.sharingViolation: throw ChipAccessError.transport("the card in '\(reader)' is in use by another program")
        case PCSCStatus.unresponsiveCard, PCSCStatus.unpoweredCard: throw ChipAccessError.noCard("the card in '\(reader)' does not answer")
        default: throw ChipAccessError.transport("SCardConnect to '\(reader)': \(PCSCStatus.describe(rv))")
        }
        return PCSCTransport(context: self, card: card, protocol: active, reader: reader, timeout: timeout)
    }
}

/// One connected card: `ChipTransport` over SCardTransmit. Each APDU runs on the transport's own thread and is
/// waited for at most `timeout` seconds (`ChipAccessError.timeout`, never a hang: pcsc-lite's SCardTransmit has no
/// timeout of its own); a transport that timed out refuses further APDUs. A card gone from the field is
/// `ChipAccessError.cardRemoved`.
public final class PCSCTransport: ChipTransport, @unchecked Sendable {
    /// The default per-APDU limit: 10 s (a DG2 chunk takes milliseconds; RSA signing under a second).
    public static let defaultTimeout = 10.0

    let context: PCSCContext
    let card: SCARDHANDLE
    let activeProtocol: DWORD
    public let reader: String
    /// The per-APDU limit in seconds.
    public var timeout: Double
    /// The card's answer-to-reset (for contactless cards the reader's pseudo-ATR from the ATS).
    public let answerToReset: AnswerToReset
    private let queue: DispatchQueue
    private var broken: String?
    private var closed = false

    init(context: PCSCContext, card: SCARDHANDLE, protocol p: DWORD, reader: String, timeout: Double) {
        self.context = context
        self.card = card
        activeProtocol = p
        self.reader = reader
        self.timeout = timeout
        queue = DispatchQueue(label: "openidv.pcsc.transmit")
        var atr = [UInt8](repeating: 0, count: Int(MAX_ATR_SIZE))
        var atrLength = DWORD(atr.count)
        var state: DWORD = 0, proto: DWORD = 0, nameLength: DWORD = 0
        if SCardStatus(card, nil, &nameLength, &state, &proto, &atr, &atrLength) == PCSCStatus.success {
            answerToReset = AnswerToReset(Array(atr.prefix(Int(atrLength))))
        } else {
            answerToReset = AnswerToReset([])
        }
    }

    deinit { close() }

    public var name: String { "PC/SC reader '\(reader)'" }
    public var supportsExtendedLength: Bool { answerToReset.supportsExtendedLength }

    /// Disconnects, resetting the card (which ends any secure-messaging session on it).
    public func close() {
        guard !closed else { return }
        closed = true
        let handle = card
        if broken == nil {
            queue.sync { _ = SCardDisconnect(handle, DWORD(SCARD_RESET_CARD)) }
        } else {
            // The transmit thread may still be blocked in pcsc-lite; disconnect when it returns.
            let ctx = context
            queue.async { _ = SCardDisconnect(handle, DWORD(SCARD_RESET_CARD)); withExtendedLifetime(ctx) {} }
        }
    }

    final class Box: @unchecked Sendable { var rv: Int = 0; var out: [UInt8] = [] }

    public func transmit(_ apdu: [UInt8]) throws -> [UInt8] {
        let what = CommandAPDU(parsing: apdu)?.instructionName ?? "a command"
        if let broken { throw ChipAccessError.transport("the reader is unusable after an earlier failure (\(broken))") }
        guard !closed else { throw ChipAccessError.transport("the connection to '\(reader)' is closed") }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let handle = card, proto = activeProtocol
        queue.async {
            var response = [UInt8](repeating: 0, count: 65_548)
            var length = DWORD(response.count)
            let rv = apdu.withUnsafeBufferPointer { send in
                SCardTransmit(handle, cpcsc_pci(proto), send.baseAddress, DWORD(send.count), nil, &response, &length)
            }
            box.rv = Int(rv)
            box.out = rv == PCSCStatus.success ? Array(response.prefix(Int(length))) : []
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else {
            broken = "no answer to \(what) within \(timeout) s"
            throw ChipAccessError.timeout(command: what, seconds: timeout)
        }
        switch box.rv {
        case PCSCStatus.success:
            guard box.out.count < 2 else { return box.out }
            // vpcd (and some readers) report a lost card as a successful exchange without a status word.
            broken = "an answer without a status word"
            if cardLeft() { throw ChipAccessError.cardRemoved(during: what) }
            throw ChipAccessError.transport("the reader returned \(box.out.count) octets for \(what), without a status word")
        case PCSCStatus.removedCard, PCSCStatus.noSmartcard, PCSCStatus.resetCard:
            broken = "card removed"
            throw ChipAccessError.cardRemoved(during: what)
        case PCSCStatus.notTransacted, PCSCStatus.commError, PCSCStatus.readerUnavailable, PCSCStatus.unresponsiveCard:
            broken = PCSCStatus.describe(box.rv)
            if cardLeft() { throw ChipAccessError.cardRemoved(during: what) }
            throw ChipAccessError.transport("SCardTransmit (\(what)): \(PCSCStatus.describe(box.rv))")
        default:
            broken = PCSCStatus.describe(box.rv)
            throw ChipAccessError.transport("SCardTransmit (\(what)): \(PCSCStatus.describe(box.rv))")
        }
    }

    /// After a failed exchange: whether the reader reports the card gone within a second (pcscd polls presence).
    private func cardLeft() -> Bool {
        let name = strdup(reader)!
        defer { free(name) }
        var state = SCARD_READERSTATE()
        state.szReader = UnsafePointer(name)
        state.dwCurrentState = DWORD(SCARD_STATE_UNAWARE)
        let deadline = Date().addingTimeInterval(1.5)
        while Date() < deadline {
            let rv = SCardGetStatusChange(context.context, 500, &state, 1)
            if rv == PCSCStatus.success || rv == PCSCStatus.timeout {
                if state.dwEventState & DWORD(SCARD_STATE_EMPTY) != 0 { return true }
                state.dwCurrentState = state.dwEventState & ~DWORD(SCARD_STATE_CHANGED)
            } else {
                return rv == PCSCStatus.unknownReader
            }
        }
        return false
    }
}

/// pcsc-lite's return values (pcsclite.h; `LONG` holds the `DWORD` value) and their meanings.
public enum PCSCStatus {
    public static let success = 0
    public static let cancelled = 0x8010_0002
    public static let invalidHandle = 0x8010_0003
    public static let insufficientBuffer = 0x8010_0008
    public static let unknownReader = 0x8010_0009
    public static let timeout = 0x8010_000A
    public static let sharingViolation = 0x8010_000B
    public static let noSmartcard = 0x8010_000C
    public static let protocolMismatch = 0x8010_000F
    public static let commError = 0x8010_0013
    public static let notTransacted = 0x8010_0016
    public static let readerUnavailable = 0x8010_0017
    public static let noService = 0x8010_001D
    public static let serviceStopped = 0x8010_001E
    public static let noReadersAvailable = 0x8010_002E
    public static let unresponsiveCard = 0x8010_0066
    public static let unpoweredCard = 0x8010_0067
    public static let resetCard = 0x8010_0068
    public static let removedCard = 0x8010_0069

    public static func describe(_ rv: Int) -> String {
        let text = String(cString: pcsc_stringify_error(LONG(truncatingIfNeeded: rv)))
        return String(format: "%@ (0x%08X)", text, UInt32(truncatingIfNeeded: rv))
    }
}
