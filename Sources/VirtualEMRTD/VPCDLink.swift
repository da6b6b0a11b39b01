import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The virtual chip's side of vsmartcard's vpcd protocol (virtualsmartcard/src/vpcd: the pcscd driver
/// `libifdvpcd.so` listens on a TCP port, the virtual card connects to it): messages are a 2-octet big-endian length
/// and that many octets. A 1-octet message is a control: 00 power off, 01 power on, 02 reset (no answer), 04 the ATR
/// (answered with the ATR); any longer message is a command APDU, answered with the response APDU. Connecting
/// inserts the card into the reader; closing the connection removes it.
///
/// The link serves one `VirtualChip` on its own thread. `insert()` connects (retrying while pcscd has not bound the
/// port yet), `remove()` disconnects; a chip fault can remove the card or stop answering mid-exchange.
public final class VPCDLink: @unchecked Sendable {
    public let chip: VirtualChip
    public let host: String
    public let port: UInt16
    private let lock = NSLock()
    private var socket: Int32 = -1
    private var thread: Thread?
    private var generation = 0
    /// Set once the chip stopped answering (a `stopAnswering` fault); the link holds the connection until removed.
    public private(set) var stalled = false

    public init(chip: VirtualChip, host: String = "127.0.0.1", port: UInt16) {
        self.chip = chip; self.host = host; self.port = port
    }

    deinit { remove() }

    /// Whether the card is in the reader (connected to vpcd).
    public var isInserted: Bool { lock.lock(); defer { lock.unlock() }; return socket >= 0 }

    /// Connects to vpcd (the card enters the field), retrying for up to `timeout` seconds.
    public func insert(timeout: Double = 10) throws {
        lock.lock()
        defer { lock.unlock() }
        guard socket < 0 else { return }
        let deadline = Date().addingTimeInterval(timeout)
        var lastError = ""
        while true {
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw VPCDError.socket("socket: \(String(cString: strerror(errno)))") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if rc == 0 {
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                socket = fd
                break
            }
            lastError = String(cString: strerror(errno))
            close(fd)
            guard Date() < deadline else { throw VPCDError.socket("cannot reach vpcd at \(host):\(port): \(lastError)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        chip.reset()
        stalled = false
        generation += 1
        let fd = socket, gen = generation
        let t = Thread { [weak self] in self?.serve(fd, generation: gen) }
        t.name = "openidv.vpcd"
        thread = t
        t.start()
    }

    /// Disconnects (the card leaves the field).
    public func remove() {
        lock.lock()
        let fd = socket
        socket = -1
        generation += 1
        lock.unlock()
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    private func serve(_ fd: Int32, generation gen: Int) {
        func current() -> Bool { lock.lock(); defer { lock.unlock() }; return generation == gen }
        loop: while current() {
            guard let message = readMessage(fd) else { break }
            if message.count == 1 {
                switch message[0] {
                case 0x04: _ = writeMessage(fd, chip.answerToReset)
                case 0x00, 0x01, 0x02: chip.reset()
                default: break
                }
                continue
            }
            switch chip.process(message) {
            case .respond(let r): if !writeMessage(fd, r) { break loop }
            case .removeCard:
                if current() { remove() }
                return
            case .stopAnswering:
                stalled = true
                // Hold the connection without answering until the card is removed.
                while current() { Thread.sleep(forTimeInterval: 0.05) }
                return
            }
        }
        if current() { remove() }
    }

    private func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            // vpcd 0.8 (Debian) writes a message's length and its octets in two sends; with Nagle on its side and
            // delayed ACKs on this one every APDU would wait ~40 ms for an ACK. Quick ACKs (re-armed before each read,
            // Linux clears them) remove that wait, so exchanges cost what pcscd and the chip cost.
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), Int32(TCP_QUICKACK), &one, socklen_t(MemoryLayout<Int32>.size))
            let n = out.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, count - got, 0) }
            if n <= 0 { return nil }
            got += n
        }
        return out
    }

    private func readMessage(_ fd: Int32) -> [UInt8]? {
        guard let header = readExactly(fd, 2) else { return nil }
        let length = Int(header[0]) << 8 | Int(header[1])
        return length == 0 ? [] : readExactly(fd, length)
    }

    private func writeMessage(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        guard bytes.count <= 0xFFFF else { return false }
        let frame = [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        var sent = 0
        while sent < frame.count {
            let n = frame.withUnsafeBytes { send(fd, $0.baseAddress! + sent, frame.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }
}

/// Why the vpcd link could not be set up.
public enum VPCDError: Error, CustomStringConvertible {
    case socket(String)
    public var description: String { switch self { case .socket(let s): return s } }
}
