import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A relying party's webhook receiver on loopback, for tests: a plain HTTP/1.1 listener on
/// 127.0.0.1 (POSIX sockets, one thread per connection, `Connection: close`) that records every
/// request it gets and answers each with the status `respond` picks. Start it on port 0 (any free
/// port) or on a given port (to come back on the same URL after being down).
public final class WebhookReceiver: @unchecked Sendable {
    // @unchecked: the requests received and the stop flag are read and written under `lock`; the
    // listening socket is set before its thread starts.
    public struct Request: Sendable {
        public let method: String
        public let path: String
        /// Header names lowercased.
        public let headers: [String: String]
        public let body: Data
        /// When it arrived (monotonic seconds).
        public let receivedAt: Double
    }

    private let lock = NSLock()
    private var requests: [Request] = []
    private var fd: Int32 = -1
    private var stopped = false
    public private(set) var port: Int = 0
    /// Picks the status for a request (default 200); called once per request.
    private let respond: @Sendable (Request, Int) -> Int
    /// Holds each answer this long before sending it (a slow receiver), seconds.
    private let delay: Double

    /// Listens on `port` (0: any free one). `respond(request, index)` gets the request and its
    /// 0-based arrival index.
    public init(port: Int = 0, delay: Double = 0, respond: @escaping @Sendable (Request, Int) -> Int = { _, _ in 200 }) throws {
        self.respond = respond
        self.delay = delay
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw NSError(domain: "WebhookReceiver", code: Int(errno)) }
        var one: Int32 = 1
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0, listen(s, 64) == 0 else { let e = errno; Glibc.close(s); throw NSError(domain: "WebhookReceiver", code: Int(e)) }
        var bound = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) } }
        self.port = Int(UInt16(bigEndian: bound.sin_port))
        fd = s
        let t = Thread { [self] in acceptLoop(s) }
        t.start()
    }

    /// A free loopback port nobody listens on (bound, then released): a receiver that is down.
    public static func freePort() throws -> Int {
        let r = try WebhookReceiver()
        let p = r.port
        r.stop()
        return p
    }

    public var url: String { "http://127.0.0.1:\(port)/hooks/idv" }

    /// The requests received so far, in arrival order.
    public var received: [Request] { lock.withLock { requests } }

    /// Waits until `condition` holds for the received requests (true) or `timeout` passes (false).
    public func wait(timeout: Double, until condition: ([Request]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(received) { return true }
            usleep(20_000)
        }
        return condition(received)
    }

    /// Stops listening (connections in progress finish).
    public func stop() {
        let s = lock.withLock {
            let s = fd
            fd = -1
            stopped = true
            return s
        }
        if s >= 0 { shutdown(s, Int32(SHUT_RDWR)); Glibc.close(s) }
    }

    deinit { stop() }

    private func acceptLoop(_ s: Int32) {
        while true {
            let c = accept(s, nil, nil)
            if c < 0 {
                let done = lock.withLock { stopped }
                if done || (errno != EINTR && errno != ECONNABORTED) { return }
                continue
            }
            let t = Thread { [self] in serve(c) }
            t.start()
        }
    }

    private func serve(_ c: Int32) {
        defer { Glibc.close(c) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        var headerEnd: Int?
        while headerEnd == nil {
            let n = read(c, &chunk, chunk.count)
            guard n > 0 else { return }
            buf += chunk[0..<n]
            if let r = Self.find([13, 10, 13, 10], in: buf) { headerEnd = r }
            if buf.count > 1 << 20 { return }
        }
        let head = String(decoding: buf[0..<headerEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ").map(String.init)
        var headers: [String: String] = [:]
        for l in lines {
            guard let colon = l.firstIndex(of: ":") else { continue }
            headers[l[..<colon].lowercased()] = l[l.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        var body = Array(buf[(headerEnd! + 4)...])
        while body.count < length {
            let n = read(c, &chunk, min(chunk.count, length - body.count))
            guard n > 0 else { return }
            body += chunk[0..<n]
        }
        let req = Request(method: requestLine.first ?? "", path: requestLine.count > 1 ? requestLine[1] : "", headers: headers,
                          body: Data(body.prefix(length)), receivedAt: Double(DispatchTime.now().uptimeNanoseconds) / 1e9)
        let index = lock.withLock {
            requests.append(req)
            return requests.count - 1
        }
        let status = respond(req, index)
        if delay > 0 { usleep(UInt32(delay * 1_000_000)) }
        let reply = Array("HTTP/1.1 \(status) X\r\nContent-Length: 2\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nok".utf8)
        _ = reply.withUnsafeBytes { write(c, $0.baseAddress, $0.count) }
    }

    private static func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle { return i }
        return nil
    }
}
