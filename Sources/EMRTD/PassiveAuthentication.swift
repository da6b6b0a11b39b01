import Foundation

/// Why a passive-authentication step did not succeed. Each is its own outcome: "CSCA unknown" (no trusted CSCA
/// has the DSC's issuer name) is not "CSCA signature invalid" (a trusted CSCA has the name but its key does not
/// verify the DSC), and neither is "signature invalid" (the SOD's signature does not verify with the DSC).
/// The server's policy decides what each one means for a verdict.
public enum PassiveAuthenticationFailure: String, Codable, Sendable, CaseIterable {
    /// The SOD's signature over its signed attributes does not verify with the document signer's key.
    case signatureInvalid = "signature_invalid"
    /// The signed messageDigest attribute is not the digest of the LDS security object (the hash list was changed).
    case securityObjectDigestMismatch = "security_object_digest_mismatch"
    /// No document signer certificate: none embedded in the SOD and none in the trust material.
    case documentSignerMissing = "document_signer_missing"
    /// A signature or key algorithm OpenSSL cannot use.
    case unsupportedAlgorithm = "unsupported_algorithm"
    /// A data group's hash differs from the one the SOD signs.
    case dataGroupHashMismatch = "data_group_hash_mismatch"
    /// A data group was presented that the SOD does not list (its content is not authenticated).
    case dataGroupNotInSecurityObject = "data_group_not_in_security_object"
    /// No trusted CSCA has the document signer's issuer name.
    case cscaUnknown = "csca_unknown"
    /// Trusted CSCAs have the issuer name, but none of their keys verifies the document signer certificate.
    case cscaSignatureInvalid = "csca_signature_invalid"
    /// The CSCA's CRL lists the document signer.
    case documentSignerRevoked = "document_signer_revoked"
    case documentSignerExpired = "document_signer_expired"
    case documentSignerNotYetValid = "document_signer_not_yet_valid"
    case cscaExpired = "csca_expired"
    case cscaNotYetValid = "csca_not_yet_valid"
}

/// A certificate as evidence shows it: what it says and its SHA-256 fingerprint.
public struct CertificateSummary: Codable, Sendable, Equatable {
    public var fingerprint: String
    public var serialNumber: String
    public var info: Certificate.Info
    public init(_ c: Certificate) { fingerprint = c.fingerprint; serialNumber = c.serialHex; info = c.info }
}

/// ICAO 9303-11 §5.1 step 1–2: the SOD's CMS signature, verified with the document signer's key.
public struct SignatureEvidence: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        case valid
        case invalid
        case securityObjectDigestMismatch = "security_object_digest_mismatch"
        case documentSignerMissing = "document_signer_missing"
        case unsupportedAlgorithm = "unsupported_algorithm"
    }
    public enum DocumentSignerSource: String, Codable, Sendable { case embedded, trustMaterial = "trust_material" }
    public var outcome: Outcome
    /// OpenSSL's reason when the outcome is not `valid`.
    public var detail: String?
    public var signer: SignedData.SignerInfo?
    public var documentSignerSource: DocumentSignerSource?
}

/// ICAO 9303-11 §5.1 step 3: one data group's hash against the SOD.
public struct DataGroupHashEvidence: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        case matches
        case mismatch
        /// Presented, but the SOD lists no hash for it.
        case notInSecurityObject = "not_in_security_object"
        /// Listed in the SOD, not presented (e.g. DG3/DG4 behind Extended Access Control).
        case notPresented = "not_presented"
    }
    public var dataGroup: Int
    public var outcome: Outcome
    /// Hex; nil where there is nothing to show.
    public var signedHash: String?
    public var computedHash: String?
}

/// ICAO 9303-11 §5.1 step 2 / 9303-12 §7: the document signer certificate's issuer among the trusted CSCAs.
public struct ChainEvidence: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        /// A trusted CSCA has the issuer name and its key verifies the DSC.
        case trusted
        /// No trusted CSCA has the DSC's issuer name.
        case cscaUnknown = "csca_unknown"
        /// Trusted CSCAs have the name; none of their keys verifies the DSC (wrong key, forged DSC, old CSCA key missing).
        case cscaSignatureInvalid = "csca_signature_invalid"
        /// No document signer to check.
        case notChecked = "not_checked"
    }
    public var outcome: Outcome
    /// Trusted CSCAs with the DSC's issuer name.
    public var candidates: Int
    public var csca: CertificateSummary?
}

/// ICAO 9303-12 §7.1.4: the CSCA's CRL for the document signer.
public struct RevocationEvidence: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        case notRevoked = "not_revoked"
        case revoked
        /// No CRL from the CSCA (or none whose signature verifies).
        case noRevocationList = "no_revocation_list"
        /// The chain is not trusted, so no CRL can be authenticated.
        case notChecked = "not_checked"
    }
    public var outcome: Outcome
    public var revocationDate: Date?
    public var crlThisUpdate: Date?
    public var crlNextUpdate: Date?
    /// nextUpdate has passed at the checking time.
    public var crlStale: Bool?
    /// CRLs with the CSCA's name whose signature no trusted key of that CSCA verifies (ignored).
    public var rejectedRevocationLists: Int
}

/// Validity periods at the checking time (ICAO 9303-12 §5: a DSC is valid for its key-usage period plus the
/// validity of the documents it signed; a CSCA for the validity of every DSC it issues).
public struct ValidityEvidence: Codable, Sendable, Equatable {
    public enum Period: String, Codable, Sendable { case valid, expired, notYetValid = "not_yet_valid", notChecked = "not_checked" }
    public var checkedAt: Date
    public var documentSigner: Period
    public var csca: Period
    /// The SOD's signingTime lies within the DSC's validity (nil when the SOD has no signingTime).
    public var signingTimeWithinDocumentSignerValidity: Bool?
}

/// The countryName (X.520 id-at-countryName) of the certificates that signed the chip, as written. ICAO 9303-12
/// §7.1 requires the CSCA's subject and the document signer's subject to carry the issuing state's ISO 3166-1
/// alpha-2 code, and the document signer's issuer to be the CSCA's subject; so each value here should stand for
/// DG1's issuing state. Evidence only: comparing them with the issuing state, and what a difference means, is
/// the server's policy's (docs/CHIP.md "The signer's country").
public struct SignerCountriesEvidence: Codable, Sendable, Equatable {
    /// The document signer's subject countryName values (normally one; empty: none). Empty as well when there is
    /// no document signer.
    public var documentSigner: [String]
    /// The countryName values of the document signer's issuer name (the CSCA it names).
    public var documentSignerIssuer: [String]
    /// The subject countryName values of the trusted CSCA the chain reached; nil when the chain is not trusted.
    public var csca: [String]?

    public init(documentSigner: [String], documentSignerIssuer: [String], csca: [String]?) {
        self.documentSigner = documentSigner; self.documentSignerIssuer = documentSignerIssuer; self.csca = csca
    }
    /// The countries of `dsc` and of the trusted `csca`.
    public init(documentSigner dsc: Certificate?, csca: Certificate?) {
        self.init(documentSigner: dsc?.subjectCountries ?? [], documentSignerIssuer: dsc?.issuerCountries ?? [], csca: csca?.subjectCountries)
    }
}

/// Passive authentication (ICAO 9303-11 §5.1) of one chip: evidence per step, and the failures found.
/// `passed` means every step succeeded; what a failure means for the document is the policy's decision.
public struct PassiveAuthenticationEvidence: Codable, Sendable, Equatable {
    public var hashAlgorithm: DigestAlgorithm
    public var signature: SignatureEvidence
    public var dataGroups: [DataGroupHashEvidence]
    public var chain: ChainEvidence
    public var revocation: RevocationEvidence
    public var validity: ValidityEvidence
    public var documentSigner: CertificateSummary?
    /// The countryName of the document signer, its issuer and the trusted CSCA (not judged here).
    public var signerCountries: SignerCountriesEvidence
    public var failures: [PassiveAuthenticationFailure]
    public var passed: Bool { failures.isEmpty }

    enum CodingKeys: String, CodingKey {
        case hashAlgorithm, signature, dataGroups, chain, revocation, validity, documentSigner, signerCountries, failures, passed
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(passed, forKey: .passed)
        try c.encode(failures, forKey: .failures)
        try c.encode(hashAlgorithm, forKey: .hashAlgorithm)
        try c.encode(signature, forKey: .signature)
        try c.encode(dataGroups, forKey: .dataGroups)
        try c.encode(chain, forKey: .chain)
        try c.encode(revocation, forKey: .revocation)
        try c.encode(validity, forKey: .validity)
        try c.encodeIfPresent(documentSigner, forKey: .documentSigner)
        try c.encode(signerCountries, forKey: .signerCountries)
    }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        hashAlgorithm = try c.decode(DigestAlgorithm.self, forKey: .hashAlgorithm)
        signature = try c.decode(SignatureEvidence.self, forKey: .signature)
        dataGroups = try c.decode([DataGroupHashEvidence].self, forKey: .dataGroups)
        chain = try c.decode(ChainEvidence.self, forKey: .chain)
        revocation = try c.decode(RevocationEvidence.self, forKey: .revocation)
        validity = try c.decode(ValidityEvidence.self, forKey: .validity)
        documentSigner = try c.decodeIfPresent(CertificateSummary.self, forKey: .documentSigner)
        signerCountries = try c.decodeIfPresent(SignerCountriesEvidence.self, forKey: .signerCountries)
            ?? SignerCountriesEvidence(documentSigner: [], documentSignerIssuer: [], csca: nil)
        failures = try c.decode([PassiveAuthenticationFailure].self, forKey: .failures)
    }
    init(hashAlgorithm: DigestAlgorithm, signature: SignatureEvidence, dataGroups: [DataGroupHashEvidence], chain: ChainEvidence,
         revocation: RevocationEvidence, validity: ValidityEvidence, documentSigner: CertificateSummary?, signerCountries: SignerCountriesEvidence,
         failures: [PassiveAuthenticationFailure]) {
        self.hashAlgorithm = hashAlgorithm; self.signature = signature; self.dataGroups = dataGroups; self.chain = chain
        self.revocation = revocation; self.validity = validity; self.documentSigner = documentSigner; self.signerCountries = signerCountries
        self.failures = failures
    }
}

/// The passive-authentication steps of ICAO 9303-11 §5.1, each callable on its own (the benchmark times them).
public enum PassiveAuthentication {
    /// The document signer certificate: the embedded one the SignerInfo names, else one from the trust material.
    public static func documentSigner(of sod: SecurityObject, trust: CSCATrust) -> (Certificate, SignatureEvidence.DocumentSignerSource)? {
        let cms = sod.signedData
        guard cms.signerCount >= 1 else { return nil }
        if let c = cms.certificates.first(where: { cms.signer(0, is: $0) }) { return (c, .embedded) }
        if let c = trust.documentSigners.first(where: { cms.signer(0, is: $0) }) { return (c, .trustMaterial) }
        return nil
    }

    /// Step 1: the SOD's signature with the DSC's key.
    public static func verifySignature(_ sod: SecurityObject, documentSigner: (Certificate, SignatureEvidence.DocumentSignerSource)?) -> SignatureEvidence {
        let info = sod.signedData.signerCount >= 1 ? try? sod.signedData.signerInfo(0) : nil
        guard let (dsc, source) = documentSigner else {
            return SignatureEvidence(outcome: .documentSignerMissing,
                                     detail: sod.signedData.signerCount == 0 ? "the SOD has no SignerInfo" : "no certificate matches the SignerInfo",
                                     signer: info, documentSignerSource: nil)
        }
        switch sod.signedData.verifySigner(0, with: dsc) {
        case .valid: return SignatureEvidence(outcome: .valid, detail: nil, signer: info, documentSignerSource: source)
        case .invalid(let d): return SignatureEvidence(outcome: .invalid, detail: d, signer: info, documentSignerSource: source)
        case .contentDigestMismatch(let d): return SignatureEvidence(outcome: .securityObjectDigestMismatch, detail: d, signer: info, documentSignerSource: source)
        case .unsupported(let d): return SignatureEvidence(outcome: .unsupportedAlgorithm, detail: d, signer: info, documentSignerSource: source)
        }
    }

    /// Step 3: every presented data group's hash against the SOD, and every listed one not presented.
    public static func checkHashes(_ sod: SecurityObject, dataGroups: [Int: [UInt8]]) -> [DataGroupHashEvidence] {
        let numbers = Set(sod.dataGroupHashes.keys).union(dataGroups.keys).sorted()
        return numbers.map { n in
            let signed = sod.dataGroupHashes[n].map(Hex.string)
            guard let bytes = dataGroups[n] else {
                return DataGroupHashEvidence(dataGroup: n, outcome: .notPresented, signedHash: signed, computedHash: nil)
            }
            let computed = Hex.string(sod.hashAlgorithm.digest(bytes))
            guard let signed else { return DataGroupHashEvidence(dataGroup: n, outcome: .notInSecurityObject, signedHash: nil, computedHash: computed) }
            return DataGroupHashEvidence(dataGroup: n, outcome: signed == computed ? .matches : .mismatch, signedHash: signed, computedHash: computed)
        }
    }

    /// Step 2 (chain): the trusted CSCA that issued the DSC.
    public static func verifyChain(_ dsc: Certificate?, trust: CSCATrust) -> (ChainEvidence, Certificate?) {
        guard let dsc else { return (ChainEvidence(outcome: .notChecked, candidates: 0, csca: nil), nil) }
        var candidates = trust.cscas.filter { dsc.isIssuedByName($0) }
        // Try the CSCA whose subject key identifier the DSC names first (CSCA key rollover keeps the name).
        if let aki = dsc.authorityKeyIdentifier {
            candidates.sort { ($0.subjectKeyIdentifier == aki ? 0 : 1) < ($1.subjectKeyIdentifier == aki ? 0 : 1) }
        }
        guard !candidates.isEmpty else { return (ChainEvidence(outcome: .cscaUnknown, candidates: 0, csca: nil), nil) }
        if let csca = candidates.first(where: { dsc.isSigned(by: $0) }) {
            return (ChainEvidence(outcome: .trusted, candidates: candidates.count, csca: CertificateSummary(csca)), csca)
        }
        return (ChainEvidence(outcome: .cscaSignatureInvalid, candidates: candidates.count, csca: nil), nil)
    }

    /// Revocation: the newest CRL the CSCA signed, and whether it lists the DSC.
    public static func checkRevocation(_ dsc: Certificate?, csca: Certificate?, trust: CSCATrust, at now: Date) -> RevocationEvidence {
        guard let dsc, let csca else {
            return RevocationEvidence(outcome: .notChecked, revocationDate: nil, crlThisUpdate: nil, crlNextUpdate: nil, crlStale: nil, rejectedRevocationLists: 0)
        }
        let named = trust.crls.filter { $0.isIssuedByName(csca) }
        // A state signs its CRL with its current CSCA key (ICAO 9303-12 §7.1.4), which after a key rollover is not
        // necessarily the key that issued this DSC: any trusted CSCA with the same name may have signed it.
        let keys = [csca] + trust.cscas.filter { $0.hasSameSubject(csca) && $0.fingerprint != csca.fingerprint }
        let genuine = named.filter { crl in keys.contains { crl.isSigned(by: $0) } }
        let rejected = named.count - genuine.count
        guard let crl = genuine.max(by: { ($0.thisUpdate ?? .distantPast) < ($1.thisUpdate ?? .distantPast) }) else {
            return RevocationEvidence(outcome: .noRevocationList, revocationDate: nil, crlThisUpdate: nil, crlNextUpdate: nil, crlStale: nil, rejectedRevocationLists: rejected)
        }
        let stale = crl.nextUpdate.map { $0 < now }
        // Revocation is final: any genuine CRL listing the DSC counts, not only the newest.
        if let hit = genuine.lazy.compactMap({ c in c.revocationDate(of: dsc).map { (c, $0) } }).first {
            return RevocationEvidence(outcome: .revoked, revocationDate: hit.1, crlThisUpdate: hit.0.thisUpdate, crlNextUpdate: hit.0.nextUpdate,
                                      crlStale: stale, rejectedRevocationLists: rejected)
        }
        return RevocationEvidence(outcome: .notRevoked, revocationDate: nil, crlThisUpdate: crl.thisUpdate, crlNextUpdate: crl.nextUpdate,
                                  crlStale: stale, rejectedRevocationLists: rejected)
    }

    static func period(_ c: Certificate?, at now: Date) -> ValidityEvidence.Period {
        guard let c, let nb = c.info.notBefore, let na = c.info.notAfter else { return .notChecked }
        return now < nb ? .notYetValid : now > na ? .expired : .valid
    }

    /// Runs every step. `dataGroups` maps data group numbers to the raw EF bytes read from the chip.
    public static func verify(_ sod: SecurityObject, dataGroups: [Int: [UInt8]], trust: CSCATrust, at now: Date) -> PassiveAuthenticationEvidence {
        let signer = documentSigner(of: sod, trust: trust)
        let signature = verifySignature(sod, documentSigner: signer)
        let hashes = checkHashes(sod, dataGroups: dataGroups)
        let (chain, csca) = verifyChain(signer?.0, trust: trust)
        let revocation = checkRevocation(signer?.0, csca: csca, trust: trust, at: now)
        var signingTimeOK: Bool?
        if let t = signature.signer?.signingTime, let dsc = signer?.0 { signingTimeOK = dsc.isValid(at: t) }
        let validity = ValidityEvidence(checkedAt: now, documentSigner: period(signer?.0, at: now), csca: period(csca, at: now),
                                        signingTimeWithinDocumentSignerValidity: signingTimeOK)
        var failures: [PassiveAuthenticationFailure] = []
        switch signature.outcome {
        case .valid: break
        case .invalid: failures.append(.signatureInvalid)
        case .securityObjectDigestMismatch: failures.append(.securityObjectDigestMismatch)
        case .documentSignerMissing: failures.append(.documentSignerMissing)
        case .unsupportedAlgorithm: failures.append(.unsupportedAlgorithm)
        }
        if hashes.contains(where: { $0.outcome == .mismatch }) { failures.append(.dataGroupHashMismatch) }
        if hashes.contains(where: { $0.outcome == .notInSecurityObject }) { failures.append(.dataGroupNotInSecurityObject) }
        switch chain.outcome {
        case .cscaUnknown: failures.append(.cscaUnknown)
        case .cscaSignatureInvalid: failures.append(.cscaSignatureInvalid)
        case .trusted, .notChecked: break
        }
        if revocation.outcome == .revoked { failures.append(.documentSignerRevoked) }
        switch validity.documentSigner {
        case .expired: failures.append(.documentSignerExpired)
        case .notYetValid: failures.append(.documentSignerNotYetValid)
        case .valid, .notChecked: break
        }
        switch validity.csca {
        case .expired: failures.append(.cscaExpired)
        case .notYetValid: failures.append(.cscaNotYetValid)
        case .valid, .notChecked: break
        }
        return PassiveAuthenticationEvidence(hashAlgorithm: sod.hashAlgorithm, signature: signature, dataGroups: hashes, chain: chain,
                                             revocation: revocation, validity: validity,
                                             documentSigner: signer.map { CertificateSummary($0.0) },
                                             signerCountries: SignerCountriesEvidence(documentSigner: signer?.0, csca: csca), failures: failures)
    }
}
