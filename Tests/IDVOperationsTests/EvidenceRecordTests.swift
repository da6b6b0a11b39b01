import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import IDVCrypto
import IDVTools
import IDVTestSupport
import IDVServerTestSupport
import XCTest

/// Issue #37 items 3 and 4: each verification's signed evidence record and the user's OIDC4IDA
/// verified_claims, checked by an independent JOSE library (Debian python3-jwcrypto) against the
/// server's JWKS, and by `idvd evidence verify`; a one-byte change fails both.
final class EvidenceRecordTests: XCTestCase {
    /// python3-jwcrypto: verifies `jws` against the JWK Set `jwks`; prints the payload, exit 1 when invalid.
    static let jwcryptoVerify = """
    import sys, json
    from jwcrypto import jwk, jws
    keys = jwk.JWKSet.from_json(open(sys.argv[1]).read())
    token = jws.JWS()
    token.deserialize(open(sys.argv[2]).read().strip())
    kid = token.jose_header.get('kid')
    key = keys.get_key(kid)
    if key is None: sys.exit('no key ' + str(kid))
    try:
        token.verify(key, alg='EdDSA')
    except Exception as e:
        print('INVALID', e); sys.exit(1)
    print(token.payload.decode())
    """

    func python(_ script: String, _ args: [String]) throws -> (status: Int32, out: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", script] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let d = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: d, as: UTF8.self))
    }

    func testEvidenceRecordAndVerifiedClaimsVerifyWithJwcryptoAndAByteChangeFails() throws {
        let server = try WorkflowServer()
        let db = server.config.dbPath
        let bank = try RelyingPartyTests.createClient(db: db, scope: "read", port: server.port)
        let user = "evidence.person-31"
        let api = try server.loggedIn(user)
        XCTAssertEqual(try api.startFlow("idv.postlogin.kyc", ["reason": "Account opening"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(try api.scanDocument(try TestImages.obamaPassportPage()).challenge?.name, "getIDVConfirmDocumentDetails")
        try api.answer(["is_confirm": true])
        let selfie = try api.captureSelfie(try TestImages.obamaSelfie())
        XCTAssertEqual(selfie.challenge?.name, "getIDVSelfieConfirmation", "\(String(describing: selfie.error)) \(String(describing: selfie.event))")
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).challenge?.name, "getIDVBiometricOptInConsent")
        let last = try api.answer(["is_opt_in": true])
        XCTAssertTrue(try XCTUnwrap(last.event).payload.decode(KYCResponse.self).isSuccess)
        let list = try bank.call("GET", "/v1/rp/users/\(user)/verifications")
        let vid = try XCTUnwrap(list.body["items"]?.arrayValue?.first?["verification_id"]?.stringValue, "\(list.body)")

        let http = LoopbackHTTPClient(port: server.port)
        let ev = try http.request("GET", "/v1/rp/verifications/\(vid)/evidence", headers: ["Authorization": "Bearer \(bank.credentials)"])
        XCTAssertEqual(ev.status, 200, String(decoding: ev.body, as: UTF8.self))
        XCTAssertEqual(ev.headers["content-type"], "application/jose")
        let compact = String(decoding: ev.body, as: UTF8.self)
        XCTAssertEqual(compact.split(separator: ".").count, 3)
        XCTAssertEqual(try http.request("GET", "/v1/rp/verifications/\(vid)/evidence").status, 401)
        let jwksResp = try http.request("GET", "/.well-known/jwks.json")
        XCTAssertEqual(jwksResp.status, 200)
        let jwks = try JSONDecoder().decode(JSONValue.self, from: jwksResp.body)
        let key = try XCTUnwrap(jwks["keys"]?.arrayValue?.first)
        XCTAssertEqual(key["kty"], "OKP")
        XCTAssertEqual(key["crv"], "Ed25519")

        let dir = server.dir
        let jwksFile = dir.appendingPathComponent("jwks.json"), recFile = dir.appendingPathComponent("evidence.jws")
        try jwksResp.body.write(to: jwksFile)
        try ev.body.write(to: recFile)
        let checked = try python(Self.jwcryptoVerify, [jwksFile.path, recFile.path])
        XCTAssertEqual(checked.status, 0, checked.out)
        let record = try JSONDecoder().decode(JSONValue.self, from: Data(checked.out.utf8))
        XCTAssertEqual(record["verification"]?["verification_id"]?.stringValue, vid)
        XCTAssertEqual(record["sub"]?.stringValue, user)
        XCTAssertNotNil(record["verification"]?["flow"], "\(String(describing: last.challenge?.name)) \(String(describing: last.event?.name))")
        XCTAssertEqual(record["evidence"]?["selfie"]?["result"], "MATCHED")
        XCTAssertNotNil(record["evidence"]?["selfie"]?["match_threshold"]?.doubleValue, "the operating point")
        XCTAssertFalse(record["audit"]?["entries"]?.arrayValue?.isEmpty ?? true)
        let firstHash = try XCTUnwrap(record["audit"]?["entries"]?.arrayValue?.first?["hash"]?.stringValue)
        XCTAssertTrue(try server.audit().contains { $0.hash == firstHash }, "anchored in the chain")
        XCTAssertFalse(checked.out.contains("/9j/"), "no image in the record")
        let vc = try XCTUnwrap(record["verified_claims"])
        XCTAssertEqual(vc["verification"]?["trust_framework"], "idvd")
        XCTAssertEqual(vc["verification"]?["evidence"]?.arrayValue?.first?["type"], "document")
        XCTAssertNotNil(vc["verification"]?["evidence"]?.arrayValue?.first?["document_details"]?["document_number"]?.stringValue)
        XCTAssertNotNil(vc["claims"]?["family_name"]?.stringValue, "\(vc) \(record["evidence"]?["document_reports"] ?? .null)")
        // The shape of OpenID Identity Assurance Schema Definition 1.0 (final): a remote image check is `vri`, dates YYYY-MM-DD.
        let evidence = try XCTUnwrap(vc["verification"]?["evidence"]?.arrayValue?.first)
        let methods = evidence["check_details"]?.arrayValue?.compactMap { $0["check_method"]?.stringValue } ?? []
        XCTAssertEqual(methods.first, "vri", "\(evidence)")
        XCTAssertTrue(Set(methods).isSubset(of: ["vri", "vcrypt", "bvr"]), "\(methods)")
        XCTAssertNotNil(evidence["document_details"]?["issuer"]?["country_code"]?.stringValue, "\(evidence)")
        let ymd = #"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"#
        for date in [vc["claims"]?["birthdate"], evidence["document_details"]?["date_of_expiry"]].compactMap({ $0?.stringValue }) {
            XCTAssertNotNil(date.range(of: ymd, options: .regularExpression), date)
        }
        XCTAssertNotNil(vc["verification"]?["time"]?.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) })

        // idvd evidence verify: valid, then a one-byte change in the payload fails (both verifiers).
        let ok = try IDVD.run(["evidence", "verify", recFile.path, "--jwks", jwksFile.path])
        XCTAssertEqual(ok.status, 0, ok.output + ok.errors)
        var bytes = Array(ev.body)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        let i = dots[0] + 5
        bytes[i] = bytes[i] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let tampered = dir.appendingPathComponent("tampered.jws")
        try Data(bytes).write(to: tampered)
        let bad = try IDVD.run(["evidence", "verify", tampered.path, "--jwks", jwksFile.path])
        XCTAssertEqual(bad.status, 1, bad.output)
        XCTAssertNotEqual(try python(Self.jwcryptoVerify, [jwksFile.path, tampered.path]).status, 0)
        let url = try IDVD.run(["evidence", "verify", recFile.path, "--jwks", "http://127.0.0.1:\(server.port)/.well-known/jwks.json"])
        XCTAssertEqual(url.status, 0, url.output + url.errors)

        // Verified claims of the user, signed the same way.
        let claims = try http.request("GET", "/v1/rp/users/\(user)/verified-claims", headers: ["Authorization": "Bearer \(bank.credentials)"])
        let verificationJSON = String(decoding: try JSONEncoder().encode(record["verification"] ?? .null), as: UTF8.self)
        XCTAssertEqual(record["verification"]?["outcome"], "completed", "\(verificationJSON) last: \(String(describing: last.challenge?.name)) \(String(describing: last.event))")
        XCTAssertEqual(claims.status, 200, String(decoding: claims.body, as: UTF8.self))
        let cFile = dir.appendingPathComponent("claims.jws")
        try claims.body.write(to: cFile)
        let c = try python(Self.jwcryptoVerify, [jwksFile.path, cFile.path])
        XCTAssertEqual(c.status, 0, c.out)
        let payload = try JSONDecoder().decode(JSONValue.self, from: Data(c.out.utf8))
        XCTAssertEqual(payload["verified_claims"], vc)
        XCTAssertEqual(payload["sub"]?.stringValue, user)
        let stranger = try http.request("GET", "/v1/rp/users/nobody-here/verified-claims", headers: ["Authorization": "Bearer \(bank.credentials)"])
        XCTAssertEqual(stranger.status, 404)

        // A verification still open (document read, no selfie yet) is signed too, but verified no one: no claims.
        let open = "evidence.open-32"
        let openAPI = try server.loggedIn(open)
        XCTAssertEqual(try openAPI.startFlow("idv.postlogin.kyc", ["reason": "Account opening"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        XCTAssertEqual(try openAPI.scanDocument(try TestImages.obamaPassportPage()).challenge?.name, "getIDVConfirmDocumentDetails")
        let openList = try bank.call("GET", "/v1/rp/users/\(open)/verifications")
        let openID = try XCTUnwrap(openList.body["items"]?.arrayValue?.first?["verification_id"]?.stringValue, "\(openList.body)")
        let openEv = try http.request("GET", "/v1/rp/verifications/\(openID)/evidence", headers: ["Authorization": "Bearer \(bank.credentials)"])
        XCTAssertEqual(openEv.status, 200)
        let openFile = dir.appendingPathComponent("open.jws")
        try openEv.body.write(to: openFile)
        let openChecked = try python(Self.jwcryptoVerify, [jwksFile.path, openFile.path])
        XCTAssertEqual(openChecked.status, 0, openChecked.out)
        let openRecord = try JSONDecoder().decode(JSONValue.self, from: Data(openChecked.out.utf8))
        XCTAssertNil(openRecord["verification"]?["outcome"])
        XCTAssertNil(openRecord["verified_claims"], "an open verification carries no verified claims")
        XCTAssertEqual(try http.request("GET", "/v1/rp/users/\(open)/verified-claims", headers: ["Authorization": "Bearer \(bank.credentials)"]).status, 404)

        // Rotation: a new key signs, the old one stays listed and the old record still verifies.
        let rotated = try IDVD.run(["admin", "evidence-key", "rotate", "--db", db])
        XCTAssertEqual(rotated.status, 0, rotated.errors)
        let jwks2 = try http.request("GET", "/.well-known/jwks.json")
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: jwks2.body)["keys"]?.arrayValue?.count, 2)
        try jwks2.body.write(to: jwksFile)
        XCTAssertEqual(try python(Self.jwcryptoVerify, [jwksFile.path, recFile.path]).status, 0)
        let ev2 = try http.request("GET", "/v1/rp/verifications/\(vid)/evidence", headers: ["Authorization": "Bearer \(bank.credentials)"])
        let kid2 = try XCTUnwrap(Hex.base64urlDecode(String(String(decoding: ev2.body, as: UTF8.self).split(separator: ".")[0])))
        XCTAssertNotEqual(try JSONDecoder().decode(JSONValue.self, from: Data(kid2))["kid"], key["kid"], "the new key signs")
        XCTAssertNil(try server.store.verifyAuditChain())
    }
}
