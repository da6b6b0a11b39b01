import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private pcscd (Debian `pcscd`, pcsc-lite 1.9) with one vsmartcard-vpcd reader, for tests and benchmarks: no
/// system service, nothing fixed machine-wide, so several can run at once.
///
/// - Its socket is its own: pcscd 1.9 has the socket path compiled in, so it is started socket-activated (the
///   systemd protocol: the listening socket as descriptor 3, `LISTEN_FDS=1`, `LISTEN_PID`), listening on
///   `<dir>/pcscd.comm`; clients find it through `PCSCLITE_CSOCK_NAME` (`environment`, `useInThisProcess()`).
/// - Its reader is its own: `<dir>/conf/vpcd` names `libifdvpcd.so` with `DEVICENAME /dev/null:P`, so vpcd
///   listens on a free TCP port P (and P + 1 for its second slot) where the virtual chip (`VPCDLink`) connects.
///   A port taken between choosing and binding makes the reader fail to start; that is detected and retried.
/// - It dies with its owner: started with `--auto-exit` and held open by a client connection of this process, so
///   a crashed test leaves it running at most 60 s.
public final class PCSCDaemon: @unchecked Sendable {
    /// The temporary folder holding the socket, the configuration and `pcscd.log`; removed by `stop()`.
    public let directory: String
    public let socketPath: String
    /// The TCP port vpcd listens on for the card of slot 0.
    public let port: UInt16
    /// The reader's PC/SC name: the friendly name and slot 00 00.
    public let readerName: String
    public var logPath: String { directory + "/pcscd.log" }
    private var pid: pid_t
    private var keepAlive: Int32
    private var stopped = false

    /// Where Debian installs the two programs.
    public static let pcscdPath = "/usr/sbin/pcscd"
    public static let vpcdDriverPath = "/usr/lib/pcsc/drivers/serial/libifdvpcd.so"

    /// The environment a PC/SC client process needs to reach this daemon.
    public var environment: [String: String] { ["PCSCLITE_CSOCK_NAME": socketPath] }

    /// Starts pcscd and waits until its reader is up. Throws `PCSCDaemonError` when pcscd or vpcd is not installed
    /// (`scripts/bootstrap` installs `pcscd` and `vsmartcard-vpcd`) or the daemon does not come up within `timeout`.
    public static func start(friendlyName: String = "OpenIDV virtual reader", timeout: Double = 20) throws -> PCSCDaemon {
        let fm = FileManager.default
        guard fm.isExecutableFile(atPath: pcscdPath) else { throw PCSCDaemonError.notInstalled("pcscd is not installed at \(pcscdPath) (Debian package pcscd)") }
        guard fm.fileExists(atPath: vpcdDriverPath) else { throw PCSCDaemonError.notInstalled("vpcd is not installed at \(vpcdDriverPath) (Debian package vsmartcard-vpcd)") }
        var lastFailure = ""
        for _ in 0..<6 {
            let directory = try makeDirectory()
            do {
                return try PCSCDaemon(directory: directory, friendlyName: friendlyName, timeout: timeout)
            } catch PCSCDaemonError.portTaken(let why) {
                lastFailure = why
                try? fm.removeItem(atPath: directory)
            } catch {
                try? fm.removeItem(atPath: directory)
                throw error
            }
        }
        throw PCSCDaemonError.startFailed("vpcd could not bind a port after 6 tries (\(lastFailure))")
    }

    /// A short private folder (a Unix socket path is at most 107 octets).
    static func makeDirectory() throws -> String {
        var base = FileManager.default.temporaryDirectory.path
        if base.utf8.count > 60 { base = "/tmp" }
        var template = Array((base + "/openidv-pcscd-XXXXXX").utf8CString)
        guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw PCSCDaemonError.startFailed("mkdtemp under \(base): \(String(cString: strerror(errno)))")
        }
        return String(cString: p)
    }

    /// Two consecutive free TCP ports P, P+1 on all interfaces (vpcd binds INADDR_ANY), chosen by the kernel.
    static func freePortPair() throws -> UInt16 {
        for _ in 0..<50 {
            let a = try bindAny(0)
            defer { close(a.fd) }
            guard a.port < 65_535, let b = try? bindAny(a.port + 1) else { continue }
            close(b.fd)
            return a.port
        }
        throw PCSCDaemonError.startFailed("no two consecutive free TCP ports")
    }

    static func bindAny(_ port: UInt16) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PCSCDaemonError.startFailed("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = INADDR_ANY
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { close(fd); throw PCSCDaemonError.portTaken("port \(port)") }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    private init(directory: String, friendlyName: String, timeout: Double) throws {
        let socketPath = directory + "/pcscd.comm"
        let port = try Self.freePortPair()
        self.directory = directory
        self.socketPath = socketPath
        self.port = port
        readerName = friendlyName + " 00 00"
        pid = 0
        keepAlive = -1
        let conf = directory + "/conf"
        try FileManager.default.createDirectory(atPath: conf, withIntermediateDirectories: true)
        try Data("""
            FRIENDLYNAME "\(friendlyName)"
            DEVICENAME   /dev/null:\(port)
            LIBPATH      \(Self.vpcdDriverPath)
            CHANNELID    \(port)

            """.utf8).write(to: URL(fileURLWithPath: conf + "/vpcd"))

        // The listening socket pcscd receives as descriptor 3.
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw PCSCDaemonError.startFailed("socket: \(String(cString: strerror(errno)))") }
        defer { close(listener) }
        try Self.withUnixAddress(socketPath) { address, length in
            guard bind(listener, address, length) == 0, listen(listener, 128) == 0 else {
                throw PCSCDaemonError.startFailed("bind \(socketPath): \(String(cString: strerror(errno)))")
            }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/pcscd.log", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, listener, 3)
        let script = "export LISTEN_PID=$$ LISTEN_FDS=1; exec \(Self.pcscdPath) --foreground --info --auto-exit --config \(conf)"
        let argv = ["/bin/sh", "-c", script]
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "LISTEN_FDS"); env.removeValue(forKey: "LISTEN_PID"); env.removeValue(forKey: "LISTEN_FDNAMES")
        var cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, "/bin/sh", &actions, nil, &cArgs, &cEnv)
        guard rc == 0 else { throw PCSCDaemonError.startFailed("posix_spawn pcscd: \(String(cString: strerror(rc)))") }
        pid = child

        // Ready when the log says so; a reader that could not bind its port is a lost race for it.
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let log = (try? String(contentsOfFile: directory + "/pcscd.log", encoding: .utf8)) ?? ""
            if log.contains("Could not initialize connection to virtual ICC") {
                terminate()
                throw PCSCDaemonError.portTaken("vpcd could not listen on port \(port) or \(port + 1)")
            }
            if log.contains("daemon ready"), !log.contains("Waiting for virtual ICC on port \(port)") {
                terminate()
                throw PCSCDaemonError.startFailed("pcscd started without the vpcd reader: \(Self.tail(log))")
            }
            if log.contains("daemon ready") { break }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                stopped = true
                throw PCSCDaemonError.startFailed("pcscd exited at start: \(Self.tail(log))")
            }
            guard Date() < deadline else {
                terminate()
                throw PCSCDaemonError.startFailed("pcscd was not ready within \(timeout) s: \(Self.tail(log))")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        // The keep-alive client: while it is connected pcscd does not auto-exit.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd >= 0 {
            try? Self.withUnixAddress(socketPath) { address, length in
                if connect(fd, address, length) == 0 { keepAlive = fd } else { close(fd) }
            }
        }
    }

    static func tail(_ log: String) -> String {
        log.split(separator: "\n").suffix(4).joined(separator: " | ")
    }

    static func withUnixAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Void) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw PCSCDaemonError.startFailed("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        try withUnsafePointer(to: &address) { p in
            try p.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Points this process's PC/SC client (pcsc-lite reads `PCSCLITE_CSOCK_NAME` once, at its first context) at
    /// this daemon. Throws when an earlier context in this process already used another socket.
    public func useInThisProcess() throws {
        if let current = getenv("PCSCLITE_CSOCK_NAME").map({ String(cString: $0) }), current != socketPath, Self.clientUsed {
            throw PCSCDaemonError.startFailed("this process's PC/SC client already uses \(current)")
        }
        setenv("PCSCLITE_CSOCK_NAME", socketPath, 1)
        Self.clientUsed = true
    }

    nonisolated(unsafe) static var clientUsed = false

    private func terminate() {
        guard !stopped else { return }
        stopped = true
        if keepAlive >= 0 { close(keepAlive); keepAlive = -1 }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<100 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
    }

    /// Stops pcscd and removes its folder.
    public func stop() {
        terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}

/// Why a private pcscd could not be started.
public enum PCSCDaemonError: Error, CustomStringConvertible {
    case notInstalled(String)
    case portTaken(String)
    case startFailed(String)

    public var description: String {
        switch self {
        case .notInstalled(let s): return s
        case .portTaken(let s): return "port taken: \(s)"
        case .startFailed(let s): return s
        }
    }
}
