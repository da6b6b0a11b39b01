import Foundation
import IDVCore
import XCTest
import IDVTestSupport
import IDVServerTestSupport

/// HTTPS with a certificate and key file (libmicrohttpd + GnuTLS), checked with curl against the CA.
final class TLSTests: XCTestCase {
    func run(_ tool: String, _ args: [String]) throws -> (Int32, Data) {
        guard FileManager.default.isExecutableFile(atPath: tool) else { throw TestData.missing("\(tool) is not installed; TLS test skipped") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let d = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, d)
    }

    func testHTTPSWithCertificateFiles() throws {
        let server = try ServerProcess()
        let cert = server.dir.appendingPathComponent("cert.pem").path
        let key = server.dir.appendingPathComponent("key.pem").path
        let (rc, _) = try run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                                   "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        XCTAssertEqual(rc, 0)
        server.settings["tls.cert"] = cert
        server.settings["tls.key"] = key
        try server.start()
        let (ok, body) = try run("/usr/bin/curl", ["-s", "--cacert", cert, "https://127.0.0.1:\(server.port)/healthz"])
        XCTAssertEqual(ok, 0)
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: body)["status"], "ok")
        // Plain HTTP on the TLS port gets no HTTP answer.
        let (plain, _) = try run("/usr/bin/curl", ["-s", "-m", "3", "http://127.0.0.1:\(server.port)/healthz"])
        XCTAssertNotEqual(plain, 0)
        XCTAssertEqual(server.stop(), 0)
    }
}
