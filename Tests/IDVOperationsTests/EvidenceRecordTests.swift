import Foundation
import IDVCore
@testable import IDVEngine
@testable import IDVRuntime
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
        // The images judged, by SHA-256 of the bytes this test uploaded (never the images), each
        // with the audit entry that judged it; the policy's version, the same as in those entries.
        let judged = try XCTUnwrap(record["evidence"]?["images_judged"]?.arrayValue, "\(record)")
        let pageSHA = TestImages.key(try TestImages.obamaPassportPage()), frameSHA = TestImages.key(try TestImages.obamaSelfie())
        XCTAssertEqual(judged.filter { $0["kind"] == "document_front" }.compactMap { $0["sha256"]?.stringValue }, [pageSHA])
        let frames = judged.filter { $0["kind"] == "selfie_frame" }
        XCTAssertEqual(frames.compactMap { $0["sha256"]?.stringValue }, [frameSHA], "captureSelfie uploads the frame twice: one digest")
        XCTAssertEqual(frames.first?["count"]?.intValue, 2)
        XCTAssertEqual(judged.count, 2, "no back page, no chip in this run: \(judged)")
        let audit = try server.audit()
        for item in judged {
            let seq = try XCTUnwrap(item["audit_seq"]?.intValue)
            let entry = try XCTUnwrap(audit.first { $0.seq == seq })
            XCTAssertTrue(["idv.document_read", "idv.selfie_verified"].contains(entry.action), entry.action)
            XCTAssertTrue(entry.details["images_judged"]?.arrayValue?.contains { $0["sha256"] == item["sha256"] } ?? false)
        }
        let policy = try XCTUnwrap(record["policy"])
        let version = try XCTUnwrap(policy["version"]?.stringValue)
        XCTAssertNotNil(version.range(of: "^sha256:[0-9a-f]{64}$", options: .regularExpression), version)
        XCTAssertEqual(version, server.config.engine.workflow.version(crypto: Sodium()))
        XCTAssertEqual(policy["current_version"]?.stringValue, version)
        XCTAssertEqual(policy["settings_changed"], false)
        XCTAssertEqual(policy["settings"]?["idv.liveness_threshold"]?.intValue, server.config.engine.workflow.livenessThreshold)
        XCTAssertEqual(policy["settings"]?["idv.presence"], "off")
        let judgements = audit.filter { ["idv.document_read", "idv.selfie_verified"].contains($0.action) && $0.details["run_id"]?.stringValue == vid }
        XCTAssertEqual(judgements.count, 2)
        XCTAssertEqual(judgements.map { $0.details["policy_version"]?.stringValue }, [version, version], "the judgement's audit entry names the policy")
        // Presence off: the slot says so, with no figures.
        let presence = try XCTUnwrap(record["evidence"]?["presence"], "\(record)")
        XCTAssertEqual(presence["assurance"], "not_checked")
        XCTAssertEqual(presence["method"], "not_asked")
        XCTAssertEqual(presence["score"], .null)
        XCTAssertEqual(presence["steps_measured"], .null)
        XCTAssertEqual(presence["replayed_frames"]?.intValue, 0)
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
        let fetched = try JSONDecoder().decode(JSONValue.self, from: Data(url.output.utf8))
        XCTAssertEqual(fetched["jwks"]?["fetched"], true)
        XCTAssertEqual(fetched["jwks"]?["keys"]?.intValue, 1)
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: Data(ok.output.utf8))["jwks"]?["fetched"], false)
        // An https:// URL is fetched (here a TLS handshake with a plain-http port fails: said so,
        // exit 2); plain http from another host is refused before anything is sent.
        let tls = try IDVD.run(["evidence", "verify", recFile.path, "--jwks", "https://127.0.0.1:\(server.port)/.well-known/jwks.json"])
        XCTAssertEqual(tls.status, 2, tls.output + tls.errors)
        XCTAssertTrue(tls.errors.contains("could not be fetched"), tls.errors)
        let remote = try IDVD.run(["evidence", "verify", recFile.path, "--jwks", "http://jwks.example/.well-known/jwks.json"])
        XCTAssertEqual(remote.status, 2)
        XCTAssertTrue(remote.errors.contains("plain http:// is fetched only from this machine"), remote.errors)

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

    /// The policy's version: the same judging settings give the same version, any judging
    /// setting changed gives another; settings that judge nothing (attempts) leave it.
    func testPolicyVersionFollowsTheJudgingSettings() throws {
        let crypto = Sodium()
        let base = WorkflowPolicy()
        XCTAssertEqual(base.version(crypto: crypto), WorkflowPolicy().version(crypto: crypto))
        XCTAssertEqual(base.version(crypto: crypto), "sha256:" + Hex.encode(crypto.sha256(Array(base.canonicalJudgingSettings))))
        var threshold = base
        threshold.livenessThreshold += 1
        XCTAssertNotEqual(threshold.version(crypto: crypto), base.version(crypto: crypto))
        var pad = base
        pad.pad.textureLine = -1.5
        XCTAssertNotEqual(pad.version(crypto: crypto), base.version(crypto: crypto))
        var presence = base
        presence.presence.fallback = .refuse
        XCTAssertNotEqual(presence.version(crypto: crypto), base.version(crypto: crypto))
        var specimen = base
        specimen.acceptSpecimenDocuments.toggle()
        XCTAssertNotEqual(specimen.version(crypto: crypto), base.version(crypto: crypto))
        var attempts = base
        attempts.selfieAttempts = 5
        XCTAssertEqual(attempts.version(crypto: crypto), base.version(crypto: crypto), "attempt counts judge nothing")
        // The same through the settings table, as `idvd serve --set` applies them.
        let a = try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.liveness_threshold": "60"]).engine.workflow
        let b = try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.liveness_threshold": "60"]).engine.workflow
        let c = try ServerConfig.load(file: nil, environment: [:], overrides: ["idv.liveness_threshold": "61"]).engine.workflow
        XCTAssertEqual(a.version(crypto: crypto), b.version(crypto: crypto))
        XCTAssertNotEqual(a.version(crypto: crypto), c.version(crypto: crypto))
        XCTAssertEqual(a.judgingSettings["idv.liveness_threshold"], 60)
        // Every policy setting of the table is either in the version or deliberately not.
        let policyKeys = Set(ServerConfig.settings.map(\.key).filter { $0.hasPrefix("idv.") || $0.hasPrefix("chip.") || $0.hasPrefix("review.") })
        let judging = Set(base.judgingSettings.keys)
        XCTAssertEqual(policyKeys.subtracting(judging).subtracting(WorkflowPolicy.nonJudgingSettingKeys), [],
                       "a new setting: add it to WorkflowPolicy.judgingSettings (it judges) or nonJudgingSettingKeys (it bounds a flow)")
        XCTAssertEqual(judging.subtracting(policyKeys), [], "judgingSettings names only keys of the settings table")
        XCTAssertTrue(judging.isDisjoint(with: WorkflowPolicy.nonJudgingSettingKeys))
        // Each judging key's value is the one the table shows (`idvd serve --help`'s current value).
        let config = try ServerConfig.load(file: nil, environment: [:], overrides: [:])
        for setting in ServerConfig.settings where judging.contains(setting.key) {
            let v = try XCTUnwrap(base.judgingSettings[setting.key])
            let shown: String
            switch v {
            case let .bool(b): shown = b ? "true" : "false"
            case let .string(t): shown = t
            default: shown = v.doubleValue.map { $0 == $0.rounded() && !setting.current(config).contains(".") ? "\(Int($0))" : "\($0)" } ?? "?"
            }
            XCTAssertEqual(shown, setting.current(config), setting.key)
        }
    }

    /// `evidence.trust_framework` names the framework in the signed verified_claims (record and
    /// the user's verified claims); a value outside its alphabet is refused at start.
    func testTrustFrameworkIsTheOperatorsSetting() throws {
        XCTAssertEqual(try ServerConfig.load(file: nil, environment: [:], overrides: [:]).rp.trustFramework, "idvd")
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["evidence.trust_framework": "de aml"])) {
            XCTAssertTrue("\($0)".contains("evidence.trust_framework must be"), "\($0)")
        }
        let server = try WorkflowServer(["evidence.trust_framework": "de_aml"])
        for (path, body) in try signedAfterKYC(server, user: "evidence.framework-33", pages: [try TestImages.obamaPassportPage()]) {
            XCTAssertEqual(body["verified_claims"]?["verification"]?["trust_framework"], "de_aml", path)
        }
    }

    /// A fresh user's trial: a KYC whose first document was rejected (here expired) and recaptured
    /// with another must sign the claims of the document the run went on with, never the first one.
    func testVerifiedClaimsNameTheDocumentTheRunWentOnWithNotARejectedOne() throws {
        let server = try WorkflowServer()
        let pages = [try TestImages.expiredPassportPage(), try TestImages.obamaPassportPage()]
        for (path, body) in try signedAfterKYC(server, user: "evidence.recapture-34", pages: pages) {
            let details = body["verified_claims"]?["verification"]?["evidence"]?.arrayValue?.first?["document_details"]
            XCTAssertEqual(details?["document_number"], "P1234567", "\(path): the recaptured document, not the rejected P7654321")
            XCTAssertEqual(details?["date_of_expiry"], "2035-01-01", path)
        }
    }

    /// A completed KYC of a new user — each page of `pages` scanned in turn, every one but the last
    /// recaptured from the details screen — then its evidence record and the user's verified claims,
    /// each verified against the server's JWKS: (path, payload).
    func signedAfterKYC(_ server: WorkflowServer, user: String, pages: [Data]) throws -> [(String, JSONValue)] {
        let bank = try RelyingPartyTests.createClient(db: server.config.dbPath, scope: "read", port: server.port)
        let api = try server.loggedIn(user)
        XCTAssertEqual(try api.startFlow("idv.postlogin.kyc", ["reason": "Account opening"]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
        for (i, page) in pages.enumerated() {
            XCTAssertEqual(try api.scanDocument(page).challenge?.name, "getIDVConfirmDocumentDetails")
            if i < pages.count - 1 {
                XCTAssertEqual(try api.answer(["is_confirm": false, "rescan": true]).challenge?.name, "getIDVDocumentScanProcessStartConfirmation")
            }
        }
        try api.answer(["is_confirm": true])
        XCTAssertEqual(try api.captureSelfie(try TestImages.obamaSelfie()).challenge?.name, "getIDVSelfieConfirmation")
        XCTAssertEqual(try api.answer(["action": "continue-flow"]).challenge?.name, "getIDVBiometricOptInConsent")
        XCTAssertTrue(try XCTUnwrap(try api.answer(["is_opt_in": true]).event).payload.decode(KYCResponse.self).isSuccess)
        let vid = try XCTUnwrap(try bank.call("GET", "/v1/rp/users/\(user)/verifications").body["items"]?.arrayValue?.first?["verification_id"]?.stringValue)
        let http = LoopbackHTTPClient(port: server.port)
        let signed = try ["/v1/rp/verifications/\(vid)/evidence", "/v1/rp/users/\(user)/verified-claims"].map {
            ($0, try http.request("GET", $0, headers: ["Authorization": "Bearer \(bank.credentials)"]))
        }
        // The first signature made the first key: the JWKS is read after it.
        let jwks = try JSONDecoder().decode(EvidenceJWKS.self, from: try http.request("GET", "/.well-known/jwks.json").body)
        return try signed.map { path, r in
            XCTAssertEqual(r.status, 200, path)
            let payload = try CompactJWS.verify(String(decoding: r.body, as: UTF8.self), jwks: jwks, crypto: Sodium()).payload
            return (path, try JSONDecoder().decode(JSONValue.self, from: payload))
        }
    }

    /// The digests of an upload: page 0 the front, later pages the back, the chip's EF.SOD, each
    /// distinct frame once with its count — SHA-256 of the bytes, lowercase hex.
    func testJudgedImagesNameEachPageFrameAndTheSOD() {
        let crypto = Sodium()
        let front = Data("front page".utf8), back = Data("back page".utf8), sod = Data([0x77, 0x82, 0x01, 0x00])
        func sha(_ d: Data) -> String { Hex.encode(crypto.sha256(Array(d))) }
        XCTAssertEqual(JudgedImage.document(pages: [front, back], sod: sod, crypto: crypto),
                       [JudgedImage(kind: .documentFront, sha256: sha(front)), JudgedImage(kind: .documentBack, sha256: sha(back)),
                        JudgedImage(kind: .chipSOD, sha256: sha(sod))])
        XCTAssertEqual(sha(front), "\(TestImages.key(front))")
        let a = Data([1, 2, 3]), b = Data([4, 5])
        let frames = JudgedImage.selfie(frames: [a, b, a, a], crypto: crypto)
        XCTAssertEqual(frames, [JudgedImage(kind: .selfieFrame, sha256: sha(a), count: 3), JudgedImage(kind: .selfieFrame, sha256: sha(b))])
        XCTAssertEqual(frames[0].json, ["kind": "selfie_frame", "sha256": .string(sha(a)), "count": 3])
        XCTAssertEqual(frames[1].json, ["kind": "selfie_frame", "sha256": .string(sha(b))])
    }
}
