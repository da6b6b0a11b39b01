import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IDVCore
import IDVCrypto
import IDVEngine
import IDVOperations
import IDVTools

extension Command {
    /// `idvd evidence verify FILE [--jwks FILE|URL]`: checks a signed evidence record (or a
    /// verified-claims JWS) offline against a JWK Set (docs/DATA-PROTECTION.md "Evidence records").
    static let evidence = Command(name: "evidence", summary: "verify a signed evidence record offline (evidence verify FILE --jwks FILE|URL)") { args in
        let usage = """
        usage: idvd evidence verify FILE [--jwks FILE|URL]
          Checks the compact JWS in FILE (`GET /v1/rp/verifications/{id}/evidence`, or
          `/v1/rp/users/{id}/verified-claims`; `-` reads standard input) against the JWK Set in
          --jwks: a file, an https:// URL (a server's /.well-known/jwks.json, fetched once with a
          10-second limit, no redirect followed, the certificate checked against the system's
          trust store), or an http:// URL on this machine (127.0.0.1, ::1, localhost; plain http
          from elsewhere is refused: anyone on the path could swap the keys). Only the JWK Set is
          fetched: the record is read from FILE, and nothing else is contacted. A JWKS is required.
          Prints the header, the payload and where the keys came from as JSON and exits 0 when the
          signature verifies with the key its kid names; prints the reason and exits 1 when it does
          not; 2 for a usage error or keys that could not be had.
        """
        if args.contains("--help") || args.contains("-h") { print(usage); return 0 }
        let (opts, pos) = try CLI.parseOptions(args, valued: ["jwks"], command: "evidence")
        guard pos.count == 2, pos[0] == "verify" else { throw CLIError(usage) }
        guard let jwksSource = opts["jwks"] else { throw CLIError("--jwks FILE|URL is required\n\(usage)") }
        let record: Data
        if pos[1] == "-" { record = FileHandle.standardInput.readDataToEndOfFile() } else {
            guard let d = FileManager.default.contents(atPath: pos[1]) else { throw CLIError("cannot read \(pos[1])") }
            record = d
        }
        let jwksData: Data
        let fetched: Bool
        if jwksSource.lowercased().hasPrefix("http://") || jwksSource.lowercased().hasPrefix("https://") {
            jwksData = try JWKSFetch.get(jwksSource)
            fetched = true
        } else {
            guard let d = FileManager.default.contents(atPath: jwksSource) else { throw CLIError("cannot read the JWKS file \(jwksSource)") }
            jwksData = d
            fetched = false
        }
        let jwks: EvidenceJWKS
        do { jwks = try JSONDecoder().decode(EvidenceJWKS.self, from: jwksData) } catch {
            throw CLIError("--jwks \(jwksSource) is not a JWK Set ({\"keys\":[…]} of OKP/Ed25519 keys): \(error)")
        }
        let keys: JSONValue = ["source": .string(jwksSource), "fetched": .bool(fetched), "keys": .integer(jwks.keys.count)]
        do {
            let (header, payload) = try CompactJWS.verify(String(decoding: record, as: UTF8.self), jwks: jwks, crypto: Sodium())
            let body = (try? JSONDecoder().decode(JSONValue.self, from: payload)) ?? .string(String(decoding: payload, as: UTF8.self))
            try CLI.printJSON(["valid": true, "header": header, "payload": body, "jwks": keys] as JSONValue)
            return 0
        } catch let e as EvidenceVerificationError {
            try CLI.printJSON(["valid": false, "reason": .string(e.description), "jwks": keys] as JSONValue)
            return 1
        }
    }
}

/// Fetches a JWK Set for `idvd evidence verify --jwks URL`: one GET, https to any host (the
/// certificate checked by FoundationNetworking/libcurl against the system's trust store), http
/// only to this machine, 10 seconds at most, no redirect followed, 1 MiB at most. Every failure is
/// a ``CLIError`` saying which URL and why.
enum JWKSFetch {
    static let timeoutSeconds = 10
    static let maxBytes = 1 << 20

    private final class NoRedirect: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            completionHandler(nil)
        }
    }

    private final class Box: @unchecked Sendable {
        var data: Data?
        var status: Int?
        var error: Error?
    }

    static func get(_ source: String) throws -> Data {
        guard let url = URL(string: source), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw CLIError("--jwks \(source) is not a URL")
        }
        if scheme == "http", !["127.0.0.1", "::1", "[::1]", "localhost"].contains(host.lowercased()) {
            throw CLIError("--jwks \(source): plain http:// is fetched only from this machine (127.0.0.1, ::1, localhost); use the server's https:// URL, or save its /.well-known/jwks.json to a file")
        }
        let cfg = URLSessionConfiguration.ephemeral
        cfg.timeoutIntervalForRequest = TimeInterval(timeoutSeconds)
        cfg.timeoutIntervalForResource = TimeInterval(timeoutSeconds)
        let session = URLSession(configuration: cfg, delegate: NoRedirect(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        var req = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: TimeInterval(timeoutSeconds))
        req.setValue("application/json", forHTTPHeaderField: "Accept")
        let box = Box(), done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: req) { data, response, error in
            box.data = data
            box.status = (response as? HTTPURLResponse)?.statusCode
            box.error = error
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + .seconds(timeoutSeconds + 2)) == .timedOut {
            task.cancel()
            throw CLIError("--jwks \(source): no answer within \(timeoutSeconds) s")
        }
        if let e = box.error, box.status == nil { throw CLIError("--jwks \(source) could not be fetched: \(e.localizedDescription)") }
        guard let status = box.status else { throw CLIError("--jwks \(source) could not be fetched") }
        guard status == 200 else {
            throw CLIError("--jwks \(source) answered HTTP \(status)\((300..<400).contains(status) ? " (a redirect: not followed; give the final URL)" : "")")
        }
        let data = box.data ?? Data()
        guard data.count <= maxBytes else { throw CLIError("--jwks \(source): the answer is over \(maxBytes) bytes, not a JWK Set") }
        return data
    }
}
