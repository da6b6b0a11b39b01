import Foundation
import IDVTestSupport
import IDVTools
import XCTest

/// The Debian package, for real (#38): `scripts/make-deb` builds it (a release build with the Swift
/// runtime linked in, in its own scratch folder: `swift test` holds `.build`'s lock), apt installs it
/// on this machine, `idvd` runs as the packaged user exactly as the unit's `ExecStart` line says with
/// the unit's environment (systemd does not run here), answers `/readyz` and serves `/verify/`, the
/// installed `idvd` reads a document from another working directory, and `apt purge` removes it all.
///
/// Needs root (apt, the system user). Under CI (`CI=true`, root) it runs; elsewhere without root it
/// is skipped with the reason.
final class DebianPackageTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Failure: Error, CustomStringConvertible { let description: String }

    struct Run {
        let status: Int32
        let out: String
        let err: String
    }

    @discardableResult
    static func run(_ tool: String, _ args: [String], cwd: String? = nil, env: [String: String]? = nil) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        if let env { p.environment = env }
        // Both streams to files: a tool that fills one pipe while we read the other never blocks.
        let tmp = FileManager.default.temporaryDirectory
        let outURL = tmp.appendingPathComponent("deb-test-\(UUID().uuidString).out"), errURL = tmp.appendingPathComponent("deb-test-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outURL); try? FileManager.default.removeItem(at: errURL) }
        p.standardOutput = try FileHandle(forWritingTo: outURL)
        p.standardError = try FileHandle(forWritingTo: errURL)
        try p.run()
        p.waitUntilExit()
        let o = (try? Data(contentsOf: outURL)) ?? Data()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        return Run(status: p.terminationStatus, out: String(decoding: o, as: UTF8.self), err: String(decoding: errData, as: UTF8.self))
    }

    func testPackageBuildsInstallsServesAndPurges() throws {
        guard getuid() == 0 else {
            throw TestData.missing("the package test installs a .deb with apt and adds a system user: it needs root")
        }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("openidv-deb-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        var env = ProcessInfo.processInfo.environment
        env["DEB_COMPRESS"] = "gzip"          // fast: the test builds, installs and removes it at once
        env["DEB_COMPRESS_LEVEL"] = "1"
        env["DEB_LINTIAN"] = "0"
        let made = try Self.run(Self.root.appendingPathComponent("scripts/make-deb").path,
                                ["--out", out.path, "--scratch-path", Self.root.appendingPathComponent(".build/deb-scratch").path],
                                cwd: Self.root.path, env: env)
        XCTAssertEqual(made.status, 0, made.err.suffix(3000).description)
        let deb = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: out.path).first { $0.hasSuffix(".deb") },
                                "make-deb wrote no .deb: \(made.out)")
        XCTAssertTrue(deb.hasPrefix("openidv_") && deb.contains("_amd64") || deb.contains("_arm64"), deb)

        // The control data: Depends from dpkg-shlibdeps, no Swift toolchain needed.
        let control = try Self.run("/usr/bin/dpkg-deb", ["--field", out.appendingPathComponent(deb).path])
        XCTAssertTrue(control.out.contains("Package: openidv"), control.out)
        XCTAssertTrue(control.out.contains("libsqlite3-0"), "Depends names the shared libraries: \(control.out)")
        XCTAssertFalse(control.out.lowercased().contains("swift"), control.out)

        _ = try? Self.run("/usr/bin/apt-get", ["purge", "-y", "-qq", "openidv"])   // a package left by a killed run
        let install = try Self.run("/usr/bin/apt-get", ["install", "-y", "-qq", "--no-install-recommends", out.appendingPathComponent(deb).path],
                                   env: env.merging(["DEBIAN_FRONTEND": "noninteractive"]) { _, n in n })
        XCTAssertEqual(install.status, 0, install.err.suffix(2000).description)
        defer {
            let purge = try? Self.run("/usr/bin/apt-get", ["purge", "-y", "-qq", "openidv"])
            XCTAssertEqual(purge?.status, 0, purge?.err ?? "")
            for gone in ["/usr/bin/idvd", "/usr/bin/idv", "/usr/lib/openidv", "/usr/share/openidv", "/etc/openidv", "/var/lib/openidv",
                         "/lib/systemd/system/openidv.service"] {
                XCTAssertFalse(FileManager.default.fileExists(atPath: gone), "\(gone) is gone after apt purge")
            }
            XCTAssertNotEqual((try? Self.run("/usr/bin/getent", ["passwd", "openidv"]))?.status, 0, "the system user is gone after purge")
        }

        // What the package put where.
        let fm = FileManager.default
        XCTAssertEqual(try fm.destinationOfSymbolicLink(atPath: "/usr/bin/idvd"), "../lib/openidv/idvd")
        XCTAssertEqual(fm.contents(atPath: "/etc/openidv/idvd.json"),
                       fm.contents(atPath: Self.root.appendingPathComponent("docs/idvd.production.json").path),
                       "the installed configuration is the production one")
        let user = try Self.run("/usr/bin/getent", ["passwd", "openidv"])
        XCTAssertEqual(user.status, 0, "the system user exists")
        XCTAssertTrue(user.out.contains("/usr/sbin/nologin"), user.out)
        let state = try fm.attributesOfItem(atPath: "/var/lib/openidv")
        XCTAssertEqual((state[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        XCTAssertEqual(state[.ownerAccountName] as? String, "openidv")
        let sums = try Self.run("/usr/bin/sha256sum", ["--check", "--quiet", "SHA256SUMS"], cwd: "/usr/share/openidv/models")
        XCTAssertEqual(sums.status, 0, "the installed model files match their SHA-256 sums: \(sums.out)\(sums.err)")

        // The unit: hardened, and its ExecStart and Environment lines are what runs below.
        let unit = try String(contentsOfFile: "/lib/systemd/system/openidv.service", encoding: .utf8)
        for line in ["ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes", "CapabilityBoundingSet=", "StateDirectory=openidv",
                     "User=openidv", "UMask=0077"] {
            XCTAssertTrue(unit.split(separator: "\n").contains { $0 == line || $0.hasPrefix(line + " ") }, "the unit has \(line)")
        }
        var execStart: [String] = []
        var unitEnv: [String: String] = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        for raw in unit.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("ExecStart=") { execStart = line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init) }
            if line.hasPrefix("Environment=") {
                let kv = line.dropFirst("Environment=".count)
                if let eq = kv.firstIndex(of: "=") { unitEnv[String(kv[..<eq])] = String(kv[kv.index(after: eq)...]) }
            }
        }
        XCTAssertEqual(execStart.first, "/usr/bin/idvd")
        let port = try Self.freePort()
        unitEnv["IDVD_LISTEN_PORT"] = String(port)   // as /etc/default/openidv would set it; 8420 may be taken here

        // idvd as the unit runs it: the packaged user, the unit's working directory and environment.
        let serve = Process()
        // setpriv execs the unit's command in place (as User=/Group= do), so SIGTERM reaches idvd itself.
        serve.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        serve.arguments = ["--reuid=openidv", "--regid=openidv", "--init-groups", "--"] + execStart
        serve.currentDirectoryURL = URL(fileURLWithPath: "/var/lib/openidv")
        serve.environment = unitEnv
        let ready = Pipe()
        serve.standardOutput = ready
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("openidv-serve-\(UUID().uuidString).log")
        _ = fm.createFile(atPath: log.path, contents: nil)
        serve.standardError = try FileHandle(forWritingTo: log)
        try serve.run()
        defer {
            if serve.isRunning { serve.terminate(); serve.waitUntilExit() }
            try? fm.removeItem(at: log)
        }
        let line = try Self.readLine(ready, process: serve, timeout: 60, log: log)
        XCTAssertTrue(line.contains("\"listening\""), line)

        let http = LoopbackHTTPClient(port: port)
        // Ready once the OCR-B parameters are loaded (the production configuration warms the reader up
        // at start): polled as a balancer would, up to 60 s on a loaded machine.
        var readyz = try http.request("GET", "/readyz")
        let readyBy = Date().addingTimeInterval(60)
        while readyz.status != 200 && Date() < readyBy {
            usleep(250_000)
            readyz = try http.request("GET", "/readyz")
        }
        XCTAssertEqual(readyz.status, 200, "ready: models, OCR-B parameters and the database found where the package put them: "
                       + String(decoding: readyz.body, as: UTF8.self))
        let page = try http.request("GET", "/verify/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(String(decoding: page.body, as: UTF8.self).contains("<html"), "the hosted page is served")
        let startLog = try String(contentsOf: log, encoding: .utf8)
        XCTAssertFalse(startLog.contains("non-production setting"), "the packaged configuration is the production one: \(startLog.prefix(2000))")

        // The installed binary reads a document from any working directory, as the packaged user.
        let specimen = FileManager.default.temporaryDirectory.appendingPathComponent("openidv-page-\(UUID().uuidString).png")
        try fm.copyItem(at: Self.root.appendingPathComponent("Tests/Fixtures/documents/pass-isl-specimen.png"), to: specimen)
        defer { try? fm.removeItem(at: specimen) }
        try fm.setAttributes([.posixPermissions: 0o644], ofItemAtPath: specimen.path)
        let read = try Self.run("/usr/sbin/runuser", ["-u", "openidv", "--", "/usr/bin/idvd", "document", "read", specimen.path],
                                cwd: "/", env: ["PATH": "/usr/bin:/bin", "HOME": "/var/lib/openidv"])
        XCTAssertEqual(read.status, 0, read.err)
        let report = try JSONSerialization.jsonObject(with: Data(read.out.utf8)) as? [String: Any]
        XCTAssertNotNil(report?["mrz"], "a report with the MRZ: \(read.out.prefix(400))")
        XCTAssertTrue(read.out.contains("ISL"), "the Icelandic specimen's MRZ was read")

        // The admin tool on the packaged database, as the packaged user (its key in the state directory).
        let admin = try Self.run("/usr/sbin/runuser", ["-u", "openidv", "--", "/usr/bin/idvd", "admin", "list-users"],
                                 cwd: "/var/lib/openidv", env: unitEnv)
        XCTAssertEqual(admin.status, 0, admin.err)
        let keys = try fm.contentsOfDirectory(atPath: "/var/lib/openidv/keys")
        XCTAssertEqual(keys.count, 1, "the vault key file sits in the state directory: \(keys)")
        let keyAttributes = try fm.attributesOfItem(atPath: "/var/lib/openidv/keys/" + keys[0])
        XCTAssertEqual((keyAttributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual(keyAttributes[.ownerAccountName] as? String, "openidv")

        serve.terminate()
        serve.waitUntilExit()
        XCTAssertEqual(serve.terminationStatus, 0, "SIGTERM stops it cleanly")
    }

    static func freePort() throws -> Int {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(s) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, len) == 0 && getsockname(s, $0, &len) == 0 }
        }
        guard bound else { throw Failure(description: "no free loopback port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func readLine(_ pipe: Pipe, process: Process, timeout: TimeInterval, log: URL) throws -> String {
        var data = Data()
        let deadline = Date().addingTimeInterval(timeout)
        while !data.contains(0x0A) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty {
                guard process.isRunning, Date() < deadline else {
                    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                    throw Failure(description: "the packaged idvd did not start: \(text.suffix(2000))")
                }
                usleep(20_000)
            }
            data += chunk
        }
        return String(decoding: data.prefix(while: { $0 != 0x0A }), as: UTF8.self)
    }
}
