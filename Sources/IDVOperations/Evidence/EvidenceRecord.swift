import Foundation
import IDVCore
import IDVEngine

// The evidence record of one verification and the OpenID Connect for Identity Assurance 1.0
// `verified_claims` (issue #37 items 3 and 4; docs/DATA-PROTECTION.md "Evidence records").

extension RelyingPartyAPI {
    /// The signer over this engine's store and vault; 1001 (internal) when the server has no vault.
    public func signer() throws -> EvidenceSigner {
        guard let vault = engine.registry.services?.vault else { throw IDVError(.internalError, "this server holds no vault key to sign evidence with") }
        return EvidenceSigner(store: store, vault: vault, crypto: engine.crypto)
    }

    /// The evidence record of verification `id` as JSON (what ``signedEvidence(_:)`` signs):
    ///
    /// - `record_version` 1, `iss` (`web.public_url`), `iat` (Unix seconds), `sub` (the user id);
    /// - `verification`: the decision — flow, outcome, reason (error) code, times, review;
    /// - `evidence`: the document result (checks, chip passive/active authentication reason), the
    ///   selfie result (liveness score 0–100, face-match score and the operating point
    ///   `match_threshold`), consent and template, and each judged document report with its images
    ///   replaced by their SHA-256 (`image_sha256`: hex of the decoded bytes) — never the images;
    /// - `evidence.images_judged`: the SHA-256 of every document page, selfie frame and chip EF.SOD
    ///   the judgements rested on (``imagesJudged(_:)``); `evidence.presence`: the presence
    ///   assurance and its figures (``presence(_:)``);
    /// - `policy`: the version of the judging settings that decided (also in each judgement's audit
    ///   entry), the settings themselves while they are still this server's, and the operating
    ///   points the decision was judged with (``policyObject(_:)``);
    /// - `audit`: the verification's audit entries (`seq`, `action`, `hash`) and the chain head at
    ///   signing, anchoring the record in the hash chain (docs/AUDIT-CHAIN.md);
    /// - `verified_claims` (OIDC4IDA 1.0 §5) when a document was read: see ``verifiedClaims(_:time:)``.
    public func evidenceRecord(_ id: String, now: Int) throws -> JSONValue {
        let view = try verification(id)
        let r = try run(id)
        let entries = try auditOf(r)
        var evidence: [String: JSONValue] = [:]
        if let d = view.document { evidence["document"] = try JSONValue(encoding: d) }
        if let s = view.selfie { evidence["selfie"] = try JSONValue(encoding: s) }
        if let c = view.consent { evidence["consent"] = .bool(c) }
        if let t = view.templateCreated { evidence["template_created"] = .bool(t) }
        evidence["document_reports"] = .array(view.documents.map { scan in
            var o: [String: JSONValue] = ["scan_id": .string(scan.scanID), "overall_status": .string(scan.overallStatus), "created_at": .integer(scan.createdAt)]
            if let rep = scan.report { o["report"] = Self.imagesDigested(rep, crypto: engine.crypto) }
            return .object(o)
        })
        evidence["images_judged"] = .array(Self.imagesJudged(entries))
        if let presence = Self.presence(entries) { evidence["presence"] = presence }
        var policy = policyObject(entries)
        if let t = view.selfie?.matchThreshold { policy["match_threshold"] = .number(t) }
        // The switch as it judged: today's value only while the judging settings are unchanged since
        // (the version says so); otherwise unknown here — the version names the policy that judged.
        policy["specimen_documents_accepted"] = policy["settings_changed"] == .bool(false)
            ? .bool(config.engine.workflow.acceptSpecimenDocuments) : .null
        var record: [String: JSONValue] = [
            "record_version": 1, "iss": .string(config.web.publicURL.isEmpty ? "idvd" : config.web.publicURL), "iat": .integer(now),
            "verification": try JSONValue(encoding: view.verification), "evidence": .object(evidence), "policy": .object(policy),
            "audit": ["entries": .array(entries.map { ["seq": .integer($0.seq), "at": .integer($0.at), "action": .string($0.action), "hash": .string($0.hash)] }),
                      "chain_head": try chainHead()],
        ]
        if let tx = view.transactionID { record["transaction_id"] = .string(tx) }
        if let u = r.userID { record["sub"] = .string(u) }
        // Verified claims only for a verification that ended `completed`: a run still open, failed,
        // abandoned or NOT_MATCHED verified no one, even when its document was read.
        if view.verification.outcome == .completed,
           let claims = Self.verifiedClaims(view, time: view.verification.endedAt ?? view.verification.startedAt, processID: tx(view),
                                              trustFramework: config.rp.trustFramework) {
            record["verified_claims"] = claims
        }
        return .object(record)
    }

    /// The judgement entries of a run: `idv.document_read` and `idv.selfie_verified`, oldest first.
    static let judgementActions: Set<String> = ["idv.document_read", "idv.selfie_verified"]

    /// `images_judged`: each judgement's ``JudgedImage`` list (`kind`: `document_front`,
    /// `document_back`, `selfie_frame`, `chip_sod`; `sha256`: hex of the uploaded bytes; `count`
    /// when repeated) with the `audit_seq` of the entry that judged it, oldest first.
    static func imagesJudged(_ entries: [AuditEntry]) -> [JSONValue] {
        entries.filter { judgementActions.contains($0.action) }.flatMap { e in
            (e.details["images_judged"]?.arrayValue ?? []).map { item -> JSONValue in
                guard var o = item.objectValue else { return item }
                o["audit_seq"] = .integer(e.seq)
                return .object(o)
            }
        }
    }

    /// The presence evidence of the run's last judged selfie (`idv.selfie_verified` with a
    /// verdict): `assurance` (`illumination`, `fallback_active`, `fallback_passive`,
    /// `not_checked`), `method` (what was asked: `not_asked` or the analyser's measurement name),
    /// `score` (0–1, how well the reflected light followed the sequence), `p_value` (chance of
    /// that fit by accident), `steps_measured`/`steps` (illumination steps seen / issued), and
    /// `replayed_frames`; nil when no selfie was judged. Figures are those the engine audited.
    static func presence(_ entries: [AuditEntry]) -> JSONValue? {
        guard let d = entries.last(where: { $0.action == "idv.selfie_verified" && $0.details["presence_assurance"] != nil })?.details else { return nil }
        var o: [String: JSONValue] = ["assurance": d["presence_assurance"] ?? .null, "method": d["presence"] ?? .null,
                                      "score": d["presence_score"] ?? .null, "p_value": d["presence_p"] ?? .null,
                                      "replayed_frames": d["replayed_frames"] ?? .null]
        o["steps_measured"] = .null
        o["steps"] = .null
        if let steps = d["presence_steps"]?.stringValue {
            let parts = steps.split(separator: "/").compactMap { Int($0) }
            if parts.count == 2 { (o["steps_measured"], o["steps"]) = (.integer(parts[0]), .integer(parts[1])) }
        }
        return .object(o)
    }

    /// `policy`: `version` — the `policy_version` of the run's last judgement entry (the SHA-256
    /// of the judging settings' canonical JSON, ``WorkflowPolicy/version(crypto:)``), or this
    /// server's when nothing was judged yet; `versions` — every version the run's judgements
    /// recorded (one, unless the settings changed mid-run); `current_version` — this server's now;
    /// `settings` — the judging settings (``WorkflowPolicy/judgingSettings``) when they are the
    /// ones that judged (`current_version` == `version`). When the settings changed since, the
    /// record carries the version only (`settings_changed` true): the version still identifies the
    /// policy, and the operator's configuration history names its settings.
    func policyObject(_ entries: [AuditEntry]) -> [String: JSONValue] {
        let current = config.engine.workflow.version(crypto: engine.crypto)
        var seen: [String] = []
        for e in entries where Self.judgementActions.contains(e.action) {
            if let v = e.details["policy_version"]?.stringValue, seen.last != v { seen.append(v) }
        }
        let version = seen.last ?? current
        var p: [String: JSONValue] = ["version": .string(version), "current_version": .string(current),
                                      "versions": .array(seen.map { .string($0) })]
        if version == current {
            p["settings"] = .object(config.engine.workflow.judgingSettings)
            p["settings_changed"] = false
        } else {
            p["settings_changed"] = true
        }
        return p
    }

    func tx(_ v: RPVerificationView) -> String { v.transactionID ?? v.verification.verificationID }

    func chainHead() throws -> JSONValue {
        guard let last = try store.auditEntries(limit: 1).last else { return .null }
        return ["seq": .integer(last.seq), "hash": .string(last.hash)]
    }

    /// The record of ``evidenceRecord(_:now:)`` as a compact JWS (EdDSA, the current key's `kid`).
    public func signedEvidence(_ id: String) throws -> String {
        let now = engine.clock.now()
        return try signer().sign(Self.canonical(try evidenceRecord(id, now: now)), now: now)
    }

    /// The user's newest verification that read a document, as a signed JWT-shaped JWS whose
    /// payload is `{"iss","sub","iat","verification_id","verified_claims"}`; 1016 for an unknown
    /// user, 1007 (404) when no verification of the user read a document.
    public func signedVerifiedClaims(userID: String) throws -> String {
        _ = try userState(userID)
        let now = engine.clock.now()
        let runs = try store.flowRuns(userID: userID, flows: Self.verificationFlows, since: nil, until: nil, after: nil, limit: 200)
        for r in runs where r.outcome == .completed {
            let view = try verification(r.runID)
            if let claims = Self.verifiedClaims(view, time: r.endedAt ?? r.startedAt, processID: tx(view), trustFramework: config.rp.trustFramework) {
                let payload: JSONValue = ["iss": .string(config.web.publicURL.isEmpty ? "idvd" : config.web.publicURL), "sub": .string(userID), "iat": .integer(now),
                                          "verification_id": .string(r.runID), "verified_claims": claims]
                return try signer().sign(Self.canonical(payload), now: now)
            }
        }
        throw IDVError(.notFound, "No completed verification of this user read a document")
    }

    static func canonical(_ v: JSONValue) throws -> Data {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try enc.encode(v)
    }

    /// `document_images` members (base64 images) replaced by `{"image_sha256": hex}` of the decoded bytes.
    static func imagesDigested(_ report: JSONValue, crypto: any EngineCrypto) -> JSONValue {
        guard var o = report.objectValue else { return report }
        if var info = o["document_info"]?.objectValue, let images = info["document_images"]?.objectValue {
            var digests: [String: JSONValue] = [:]
            for (k, v) in images {
                if let b64 = v.stringValue, let bytes = Data(base64Encoded: b64) { digests[k] = ["image_sha256": .string(Hex.encode(crypto.sha256(Array(bytes))))] }
            }
            info["document_images"] = .object(digests)
            o["document_info"] = .object(info)
        }
        return .object(o)
    }

    /// OpenID Connect for Identity Assurance 1.0 `verified_claims` (§5: `verification` with
    /// `trust_framework`, `time`, `verification_process`, `evidence` of type `document` with
    /// `check_details` and `document_details`; `claims`) from the verification's first judged
    /// document report. Checked against OpenID Identity Assurance Schema Definition 1.0 (final,
    /// https://openid.net/specs/openid-ida-verified-claims-1_0.html, §5 and its Appendix C
    /// examples) and the IDA predefined values. Check methods: `vri` (the document's images,
    /// taken remotely under visible light, inspected: visual and MRZ checks — not `vpip`, which
    /// is an inspection of the physical document in person), `vcrypt` (the chip's signatures
    /// verified: passive authentication, the chip verdict `genuine`), `bvr` (the holder's face
    /// matched the document's portrait remotely). Countries and nationalities are ICAO 9303 codes
    /// as the schema allows; dates are `YYYY-MM-DD` (a date in another form is left out rather
    /// than sent malformed); the issuing authority, when the report names one, is `issuer.name`.
    /// `trust_framework` is the operator's `evidence.trust_framework` (default `idvd`). The claims
    /// come from the run's last judged document report (the one the run went on with); nil when
    /// there is none.
    static func verifiedClaims(_ view: RPVerificationView, time: Int, processID: String, trustFramework: String) -> JSONValue? {
        // The run's last judged document: the one its flow went on with (an earlier one was rejected
        // or recaptured), whose portrait the selfie was matched against — never an earlier report.
        guard let report = view.documents.last?.report else { return nil }
        let id = report["identity_data"]?.objectValue ?? [:]
        let info = report["document_info"]?.objectValue ?? [:]
        func s(_ v: JSONValue?) -> String? { v?.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
        typealias L = AdditionalDocumentScanDetails.Label
        let iso = ISO8601DateFormatter()
        let at = iso.string(from: Date(timeIntervalSince1970: TimeInterval(time)))
        var checks: [JSONValue] = [["check_method": "vri"]]
        if view.document?.chip == "genuine" { checks.append(["check_method": "vcrypt"]) }
        if view.selfie?.result == "MATCHED" { checks.append(["check_method": "bvr"]) }
        var details: [String: JSONValue] = [:]
        let number = s(info["document_number"]) ?? s(id[L.documentNumber])
        if let number { details["document_number"] = .string(number) }
        let kind = (s(info["document_type"]) ?? "").lowercased()
        details["type"] = .string(kind.contains("id") ? "idcard" : "passport")
        var issuer: [String: JSONValue] = [:]
        if let c = s(id[L.issuingStateCode]) ?? s(info["issuing_country"]) { issuer["country_code"] = .string(c) }
        if let a = s(info["issuing_authority"]), a != issuer["country_code"]?.stringValue { issuer["name"] = .string(a) }
        if !issuer.isEmpty { details["issuer"] = .object(issuer) }
        if let d = Self.idaDate(s(info["issue_date"])) { details["date_of_issuance"] = .string(d) }
        if let d = Self.idaDate(s(info["expiry_date"]) ?? s(id[L.dateOfExpiry])) { details["date_of_expiry"] = .string(d) }
        var claims: [String: JSONValue] = [:]
        // Seed 003 labels (`identity_data`), else seed 002's `document_info` fields.
        if let g = s(id[L.givenName]) ?? s(info["given_name"]) { claims["given_name"] = .string(g) }
        if let f = s(id[L.surname]) ?? s(info["surname"]) { claims["family_name"] = .string(f) }
        if let b = Self.idaDate(s(id[L.dateOfBirth]) ?? s(info["date_of_birth"])) { claims["birthdate"] = .string(b) }
        if let n = s(id[L.nationality]) ?? s(info["nationality"]) { claims["nationalities"] = [.string(n)] }
        guard number != nil || !claims.isEmpty else { return nil }
        return [
            "verification": [
                "trust_framework": .string(trustFramework),
                "time": .string(at),
                "verification_process": .string(processID),
                "evidence": [["type": "document", "check_details": .array(checks), "time": .string(at), "document_details": .object(details)]],
            ],
            "claims": .object(claims),
        ]
    }

    /// A date as the IDA schema and OpenID Connect Core write it, `YYYY-MM-DD`, from that form or
    /// `DD.MM.YYYY` / `DD/MM/YYYY`; nil for anything else (an MRZ's two-digit year is ambiguous).
    static func idaDate(_ v: String?) -> String? {
        guard let v = v?.trimmingCharacters(in: .whitespaces) else { return nil }
        let d = Array(v)
        func digits(_ r: Range<Int>) -> Bool { r.allSatisfy { d[$0].isASCII && d[$0].isNumber } }
        if d.count == 10, d[4] == "-", d[7] == "-", digits(0..<4), digits(5..<7), digits(8..<10) { return v }
        if d.count == 10, d[2] == d[5], d[2] == "." || d[2] == "/", digits(0..<2), digits(3..<5), digits(6..<10) {
            return String(d[6..<10]) + "-" + String(d[3..<5]) + "-" + String(d[0..<2])
        }
        return nil
    }
}
