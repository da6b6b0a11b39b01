import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 client over a POSIX TCP socket, for talking to `idvd` on loopback
/// from tests and `idvd bench server` (the load generator runs in its own process). Plain HTTP
/// only; keeps the connection alive between requests; reconnects when the server closed it.
public final class LoopbackHTTPClient {
    public struct Response: Sendable {
        public let status: Int
        public let headers: [String: String]   // lowercased names
        public let body: Data
    }

    public enum ClientError: Error, CustomStringConvertible {
        case connect(Int32), io(String), protocolError(String)
        public var description: String {
            switch self {
            case let .connect(e): return "connect failed (errno \(e))"
            case let .io(m): return "I/O: \(m)"
            case let .protocolError(m): return "protocol: \(m)"
            }
        }
    }

    public let host: String
    public let port: Int
    private var fd: Int32 = -1
    private var buffer = [UInt8]()

    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    deinit { disconnect() }

    public func disconnect() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        buffer.removeAll()
    }

    private func connect() throws {
        disconnect()
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw ClientError.connect(errno) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &addr.sin_addr)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { let e = errno; Glibc.close(s); throw ClientError.connect(e) }
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var tv = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        fd = s
    }

    /// Sends one request and reads the response. `headers` are added as given.
    public func request(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:]) throws -> Response {
        var lastError: Error = ClientError.io("no attempt")
        for attempt in 0..<2 {
            do {
                if fd < 0 { try connect() }
                try send(method, path, body: body, headers: headers)
                return try readResponse(bodyless: method == "HEAD")
            } catch let e as ClientError {
                lastError = e
                disconnect()
                if attempt == 0, case .connect = e { throw e }
            }
        }
        throw lastError
    }

    /// A JSON request; `bearer` adds `Authorization: Bearer …`.
    public func json(_ method: String, _ path: String, _ body: Data? = nil, bearer: String? = nil) throws -> Response {
        var h = ["Content-Type": "application/json"]
        if let bearer { h["Authorization"] = "Bearer \(bearer)" }
        return try request(method, path, body: body, headers: h)
    }

    private func send(_ method: String, _ path: String, body: Data?, headers: [String: String]) throws {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" } else if method == "POST" { head += "Content-Length: 0\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if let body { bytes += body }
        try writeAll(bytes)
    }

    /// Writes raw bytes (tests use it for hand-made requests).
    public func writeAll(_ bytes: [UInt8]) throws {
        if fd < 0 { try connect() }
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw ClientError.io("send failed (errno \(errno))") }
            off += n
        }
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw ClientError.io("recv failed (errno \(errno))") }
        if n == 0 { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// Reads one response (Content-Length bodies, or until close). `bodyless`: the answer to a
    /// `HEAD` request, whose `Content-Length` describes a body that is not sent (RFC 9110 §9.3.2).
    public func readResponse(bodyless: Bool = false) throws -> Response {
        let sep: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            if buffer.count >= 4 {
                for i in 0...(buffer.count - 4) where buffer[i] == 13 && Array(buffer[i..<i + 4]) == sep { headerEnd = i; break }
            }
            if headerEnd == nil { guard try fill() else { throw ClientError.io("connection closed before headers") } }
        }
        let head = String(decoding: buffer[0..<headerEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw ClientError.protocolError("bad status line") }
        var headers: [String: String] = [:]
        for l in lines {
            guard let c = l.firstIndex(of: ":") else { continue }
            headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces)
        }
        buffer.removeFirst(headerEnd! + 4)
        var body: [UInt8]
        if bodyless {
            body = []
        } else if let cl = headers["content-length"].flatMap({ Int($0) }) {
            while buffer.count < cl { guard try fill() else { throw ClientError.io("connection closed in body") } }
            body = Array(buffer[0..<cl])
            buffer.removeFirst(cl)
        } else {
            while try fill() {}
            body = buffer
            buffer.removeAll()
        }
        if headers["connection"]?.lowercased() == "close" { disconnect() }
        return Response(status: status, headers: headers, body: Data(body))
    }
}
