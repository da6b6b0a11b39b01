import Foundation
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
          --jwks (a file, or an http:// URL of a server's /.well-known/jwks.json; default: the
          server of `web.public_url` is not contacted — a JWKS is required). Prints the header and
          the payload as JSON and exits 0 when the signature verifies with the key its kid names;
          prints the reason and exits 1 when it does not; 2 for a usage error.
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
        if jwksSource.hasPrefix("http://") {
            guard let url = URL(string: jwksSource), let host = url.host, let port = url.port ?? 80 as Int? else { throw CLIError("bad --jwks URL") }
            guard host == "127.0.0.1" || host == "localhost" else { throw CLIError("--jwks URL: only a loopback http:// URL is fetched; save the JWKS to a file otherwise") }
            let r = try LoopbackHTTPClient(port: port).request("GET", url.path.isEmpty ? "/.well-known/jwks.json" : url.path)
            guard r.status == 200 else { throw CLIError("--jwks URL answered \(r.status)") }
            jwksData = r.body
        } else {
            guard let d = FileManager.default.contents(atPath: jwksSource) else { throw CLIError("cannot read \(jwksSource)") }
            jwksData = d
        }
        let jwks: EvidenceJWKS
        do { jwks = try JSONDecoder().decode(EvidenceJWKS.self, from: jwksData) } catch { throw CLIError("--jwks is not a JWK Set: \(error)") }
        do {
            let (header, payload) = try CompactJWS.verify(String(decoding: record, as: UTF8.self), jwks: jwks, crypto: Sodium())
            let body = (try? JSONDecoder().decode(JSONValue.self, from: payload)) ?? .string(String(decoding: payload, as: UTF8.self))
            try CLI.printJSON(["valid": true, "header": header, "payload": body] as JSONValue)
            return 0
        } catch let e as EvidenceVerificationError {
            try CLI.printJSON(["valid": false, "reason": .string(e.description)] as JSONValue)
            return 1
        }
    }
}
