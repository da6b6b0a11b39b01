import ChipAccess
import ChipAccessOpenSSL
import ChipAccessPCSC
import EMRTD
import Foundation
import IDVTestSupport
import VirtualEMRTD
import XCTest

/// The real parts these tests read chips through: one private pcscd for this test process (Debian pcscd with
/// vsmartcard-vpcd, started socket-activated on its own socket and a free vpcd port, stopped at exit), virtual
/// chips inserted into its reader over the vpcd protocol, and the `idv` and `idvd` binaries built beside the
/// tests. pcsc-lite's client reads its socket path once per process, so the daemon is shared by every test here.
enum ChipLab {
    private static let shared: Result<PCSCDaemon, Error> = {
        do {
            let d = try PCSCDaemon.start()
            try d.useInThisProcess()
            atexit { ChipLab.shutdown() }
            return .success(d)
        } catch {
            return .failure(error)
        }
    }()

    static func shutdown() { if case .success(let d) = shared { d.stop() } }

    /// The shared daemon; a missing pcscd or vpcd is `TestData.missing` (a skip locally, a failure under CI).
    static func daemon() throws -> PCSCDaemon {
        switch shared {
        case .success(let d): return d
        case .failure(let e as PCSCDaemonError):
            if case .notInstalled(let what) = e { throw TestData.missing(what) }
            throw e
        case .failure(let e): throw e
        }
    }

    /// An executable built beside the test bundle (`idv`, `idvd`).
    static func binary(_ name: String) throws -> String {
        let beside = Bundle(for: Token.self).bundleURL.deletingLastPathComponent().appendingPathComponent(name).path
        for p in [beside, TestData.packageRoot.appendingPathComponent(".build/debug/\(name)").path] where FileManager.default.isExecutableFile(atPath: p) {
            return p
        }
        throw TestData.missing("\(name) is not built beside the tests (swift build first)")
    }
    final class Token {}

    struct Run { let status: Int32; let stdout: String; let stderr: String }

    /// Runs `binary` with `arguments`; the environment adds the shared daemon's socket.
    static func run(_ binary: String, _ arguments: [String], environment extra: [String: String]? = nil) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try self.binary(binary))
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in try extra ?? daemon().environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    /// A fresh temporary folder, removed when the test ends.
    static func temporaryDirectory(_ test: XCTestCase) throws -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("chiplab-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: d) }
        return d
    }

    /// `chip` in the shared reader until the test ends: inserted, and present for PC/SC before this returns.
    @discardableResult
    static func insert(_ chip: VirtualChip, _ test: XCTestCase) throws -> VPCDLink {
        let d = try daemon()
        let link = VPCDLink(chip: chip, port: d.port)
        try link.insert(timeout: 10)
        test.addTeardownBlock { remove(link) }
        let context = try PCSCContext()
        _ = try context.waitForCard(in: d.readerName, timeout: 10)
        return link
    }

    /// Takes the card out and waits until PC/SC sees the reader empty (so the next test starts without a card).
    static func remove(_ link: VPCDLink) {
        link.remove()
        if let d = try? daemon(), let context = try? PCSCContext() { _ = try? context.waitForRemoval(from: d.readerName, timeout: 10) }
    }

    /// Reads the chip in the shared reader through PC/SC in this process.
    static func read(_ key: AccessKey, options: ChipReadOptions = ChipReadOptions(), timeout: Double = 10) throws -> ChipReadResult {
        let d = try daemon()
        let transport = try PCSCContext().connect(to: d.readerName, timeout: timeout)
        defer { transport.close() }
        return try EMRTDReader(transport: transport, crypto: OpenSSLChipCryptography()).read(key, options: options)
    }

    /// The test chips, written once per test process (RSA key generation is the slow part).
    static let chips = ChipStock()

    /// The MRZ lines of a chip folder's DG1.
    static func mrzLines(_ directory: String) throws -> [String] {
        try DG1(try ChipFiles.readFile(directory + "/DG1.bin")).lines
    }
}

/// Chip folders made once: the specimen chip (PACE ECDH-GM-AES-128 on P-256, CA ECDH AES-128, RSA-2048 AA,
/// DG2 of 40 KB so reads pass offset 32 767), its copy (another AA key), a chip without AA, one with an EC AA key,
/// and one without EF.CardAccess (BAC only).
final class ChipStock: @unchecked Sendable {
    let root: String
    private let lock = NSLock()
    private var made: [String: String] = [:]

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("chipstock-\(ProcessInfo.processInfo.processIdentifier)").path
        atexit { try? FileManager.default.removeItem(atPath: ChipLab.chips.root) }
    }

    func folder(_ name: String, _ make: (String) throws -> Void) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let d = made[name] { return d }
        let d = root + "/" + name
        try? FileManager.default.removeItem(atPath: d)
        try make(d)
        made[name] = d
        return d
    }

    func specimen() throws -> String {
        try folder("specimen") { d in
            var t = TestChip()
            t.portraitBytes = 40_000
            try t.write(to: d)
        }
    }

    func copy() throws -> String {
        let original = try specimen()
        return try folder("copy") { try TestChip.writeCopy(of: original, to: $0) }
    }

    func withoutActiveAuthentication() throws -> String {
        try folder("no-aa") { d in
            var t = TestChip()
            t.activeAuthentication = .none
            try t.write(to: d)
        }
    }

    func ecActiveAuthentication() throws -> String {
        try folder("ec-aa") { d in
            var t = TestChip()
            t.activeAuthentication = .ec(curve: "prime256v1", signature: .sha256)
            t.chipAuthentication = (ChipAuthenticationProtocol(keyAgreement: .ecdh, cipher: .tripleDES), .ec(curve: "prime256v1"))
            try t.write(to: d)
        }
    }

    /// DH Chip Authentication (the 2048-bit MODP group with a 256-bit subgroup), no AA.
    func dhChipAuthentication() throws -> String {
        try folder("dh-ca") { d in
            var t = TestChip()
            t.activeAuthentication = .none
            t.chipAuthentication = (ChipAuthenticationProtocol(keyAgreement: .dh, cipher: .aes128), .dh(group: 2))
            try t.write(to: d)
        }
    }

    func bacOnly() throws -> String {
        try folder("bac") { d in
            var t = TestChip()
            t.pace = []
            t.chipAuthentication = (ChipAuthenticationProtocol(keyAgreement: .ecdh, cipher: .aes256), .ec(curve: "brainpoolP256r1"))
            try t.write(to: d)
        }
    }
}
