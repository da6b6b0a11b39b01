import Foundation

// Chip evidence: what the eMRTD reader (EMRTD, ICAO 9303-10/-11) found on the chip files sent with
// the document pages, in typed form. No verdict: `WorkflowPolicy` (IDVEngine) decides what each
// failure means for the document (docs/CHIP.md "The verdict rule").

/// The eMRTD files as a client sent them (ICAO 9303-10 LDS1 elementary files, bytes exactly as read), with what
/// the chip answered to the step's challenge.
public struct ChipData: Sendable, Equatable {
    /// EF.SOD (the document security object).
    public var sod: Data
    /// EF.COM (not signed; optional).
    public var com: Data?
    /// Data group number (1…16) → the EF's bytes.
    public var dataGroups: [Int: Data]
    /// The chip's Active Authentication response as the client sent it: the challenge it says the chip signed
    /// (8 bytes; the server checks it is its own) and the signature. nil: the client did not run AA.
    public var activeAuthentication: ClientActiveAuthentication?
    /// Chip Authentication (ICAO 9303-11 §6.2) as the client reports it; nil: not reported.
    public var reportedChipAuthentication: ReportedChipAuthentication?
    public init(sod: Data, com: Data? = nil, dataGroups: [Int: Data] = [:], activeAuthentication: ClientActiveAuthentication? = nil,
                reportedChipAuthentication: ReportedChipAuthentication? = nil) {
        self.sod = sod
        self.com = com
        self.dataGroups = dataGroups
        self.activeAuthentication = activeAuthentication
        self.reportedChipAuthentication = reportedChipAuthentication
    }
}

/// An Active Authentication response (ICAO 9303-11 §6.1) as a client sent it.
public struct ClientActiveAuthentication: Sendable, Equatable {
    /// The challenge the client says the chip signed (8 bytes).
    public var challenge: [UInt8]
    /// The chip's INTERNAL AUTHENTICATE response (RSA ISO/IEC 9796-2 signature, or ECDSA r ‖ s).
    public var signature: Data
    public init(challenge: [UInt8], signature: Data) {
        self.challenge = challenge
        self.signature = signature
    }
}

/// Chip Authentication as the client reports it (the server did not see the exchange: recorded, not judged).
public enum ReportedChipAuthentication: String, Sendable, Equatable, CaseIterable {
    case verified, failed, notSupported = "not_supported", notPerformed = "not_performed"
}

/// What Active Authentication (ICAO 9303-11 §6.1) showed for the chip, over the server's own challenge for this
/// step. Evidence: the policy decides what each outcome means (docs/CHIP.md "The verdict rule").
public enum ActiveAuthenticationResult: Sendable, Equatable {
    /// The signature verifies with DG15's key — authenticated by passive authentication — over this step's challenge:
    /// a chip holding the private key answered. `mechanism`: `rsa-iso9796-2-sha256`, `ecdsa-plain-sha256`, …
    case verified(mechanism: String)
    /// A signature was sent and is not accepted; `detail` is the reader's own fault code (`iso9796_2_bad_padding`,
    /// `digest_mismatch`, `signature_length`, …) for the audit.
    case failed(ActiveAuthenticationFailure, detail: String)
    /// The chip has no DG15: it cannot prove it is not a copy.
    case notSupported
    /// The chip has a DG15, but no signature was sent (the client did not run AA).
    case notPerformed

    /// Whether the chip proved it holds DG15's private key on this step's challenge.
    public var verified: Bool { if case .verified = self { return true }; return false }
    /// `verified`, `failed`, `not_supported`, `not_performed` (the audit's `active_authentication`).
    public var code: String {
        switch self {
        case .verified: return "verified"
        case .failed: return "failed"
        case .notSupported: return "not_supported"
        case .notPerformed: return "not_performed"
        }
    }
}

/// Why an Active Authentication signature was not accepted, one case per meaning for the verdict.
public enum ActiveAuthenticationFailure: String, Sendable, Equatable, CaseIterable {
    /// The signature does not verify with DG15's key over this step's challenge: another key made it (a copy of the
    /// chip's files answered by another chip or by software), or its bytes were altered, truncated or padded.
    case signatureInvalid = "signature_invalid"
    /// The signature answers another challenge: the client says the chip signed a challenge this step did not issue
    /// (an earlier session's, or none was issued), or the chip's own key signed a message whose hash is not that of
    /// this step's challenge (ISO/IEC 9796-2 recovers a well-formed message: only the challenge differs).
    case challengeReplayed = "challenge_replayed"
    /// A signature was sent but DG15 is not authenticated by passive authentication (the SOD's signature did not
    /// verify, or DG15's hash is not the one the SOD signs, or the SOD does not list DG15): its key proves nothing.
    case keyNotAuthenticated = "key_not_authenticated"
    /// DG15's key or the signature's algorithm cannot be checked (neither RSA nor EC, an unsupported hash, an EC key
    /// whose DG14 names no ActiveAuthenticationInfo algorithm).
    case unsupportedAlgorithm = "unsupported_algorithm"
}

/// Why a passive-authentication step (ICAO 9303-11 §5.1) did not succeed, one case per outcome:
/// "CSCA unknown" (no trusted CSCA has the document signer's issuer name) is not "CSCA signature
/// invalid" (one has the name, but its key does not verify the DSC), nor "signature invalid".
public enum ChipFailure: String, Codable, Sendable, CaseIterable {
    /// The SOD's CMS signature does not verify with the document signer's key.
    case signatureInvalid = "signature_invalid"
    /// The signed messageDigest attribute is not the digest of the LDS security object.
    case securityObjectDigestMismatch = "security_object_digest_mismatch"
    /// No document signer certificate: none embedded in the SOD, none in the trust material.
    case documentSignerMissing = "document_signer_missing"
    /// A signature or key algorithm that cannot be checked.
    case unsupportedAlgorithm = "unsupported_algorithm"
    /// A data group's hash differs from the one the SOD signs.
    case dataGroupHashMismatch = "data_group_hash_mismatch"
    /// DG1 or DG2 was presented but the SOD does not list it (what the flow uses is not authenticated).
    case usedDataGroupNotSigned = "used_data_group_not_signed"
    /// Another presented data group is not listed in the SOD.
    case otherDataGroupNotSigned = "other_data_group_not_signed"
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

/// DG1's MRZ compared with the MRZ read from the page (ICAO 9303-10 §4.7.1: DG1 is the MRZ).
public enum ChipMRZComparison: Sendable, Equatable {
    /// Equal (whitespace and case ignored).
    case matches
    /// Different; the MRZ fields that differ (`document_number`, `birth_date`, …; `lines` when the layouts differ).
    case differs([String])
    /// No DG1 was sent (or it could not be parsed): nothing to compare.
    case noDataGroup1
    /// The page gave no MRZ lines to compare with.
    case noPrintedMRZ
}

/// The countries of the certificates that signed the chip, beside DG1's issuing state: the evidence of
/// ICAO 9303-12 §7.1's rule that the CSCA's and the document signer's subject carry the issuing state's
/// country (countryName, ISO 3166-1 alpha-2) and that the document signer's issuer is the CSCA's subject.
/// Values as the certificates write them; the comparison is the policy's (`WorkflowPolicy.signerCountryMismatch`).
public struct ChipSignerCountries: Sendable, Equatable {
    /// DG1's issuing state (ICAO 9303-3 §5 code, fillers removed: `NLD`, `D`, `UTO`).
    public var issuingState: String
    /// The countryName values (upper case) that issuing state's certificates carry (`NLD` → `NL`, `D` → `DE`,
    /// `RKS` → `XK`, `KS`; MRZ `CountryCodes.x509CountryNames`); empty when none is known.
    public var expectedCountries: [String]
    /// The document signer's subject countryName values (empty: it has none).
    public var documentSigner: [String]
    /// The countryName values of the document signer's issuer name.
    public var documentSignerIssuer: [String]
    /// The trusted CSCA's subject countryName values; nil when the chain to a trusted CSCA was not established.
    public var csca: [String]?

    public init(issuingState: String, expectedCountries: [String], documentSigner: [String], documentSignerIssuer: [String], csca: [String]?) {
        self.issuingState = issuingState
        self.expectedCountries = expectedCountries
        self.documentSigner = documentSigner
        self.documentSignerIssuer = documentSignerIssuer
        self.csca = csca
    }
}

/// Which signer certificate's country does not stand for DG1's issuing state, what it says, and the issuing
/// state (codes only): the policy's finding (`WorkflowPolicy.signerCountryMismatch`).
public struct ChipSignerCountryMismatch: Sendable, Equatable {
    public enum Certificate: String, Sendable, Equatable {
        /// The document signer's subject.
        case documentSigner = "document_signer"
        /// The document signer's issuer name (the CSCA it names).
        case documentSignerIssuer = "document_signer_issuer"
        /// The trusted CSCA's subject.
        case csca
    }
    public var certificate: Certificate
    /// The certificate's countryName values; empty when it has none.
    public var countries: [String]
    /// DG1's issuing state.
    public var issuingState: String
    public init(certificate: Certificate, countries: [String], issuingState: String) {
        self.certificate = certificate
        self.countries = countries
        self.issuingState = issuingState
    }
}

/// What the chip reader found: the passive-authentication failures (empty: passed), the DG1
/// cross-check, the data groups presented and the portrait (DG2's first face, re-encoded as JPEG
/// for the face matcher).
public struct ChipEvidence: Sendable, Equatable {
    /// Every failed step, in ICAO 9303-11 order (signature, hashes, chain, revocation, validity).
    public var failures: [ChipFailure]
    public var mrz: ChipMRZComparison
    /// Data group numbers presented, ascending.
    public var dataGroups: [Int]
    /// The SOD's hash algorithm (`SHA-256`, …).
    public var hashAlgorithm: String
    /// SHA-256 fingerprints (hex) of the document signer and the CSCA it chains to, when known.
    public var documentSignerFingerprint: String?
    public var cscaFingerprint: String?
    /// DG2's first face as JPEG; nil when DG2 was not sent or has no decodable face.
    public var portraitJPEG: Data?
    /// Files presented that could not be parsed (their hashes are still checked), by name (`DG2`, `EF.COM`).
    public var unparsedFiles: [String]
    /// The signer certificates' countries and DG1's issuing state; nil when there is no DG1 or no document
    /// signer (nothing to compare: the MRZ comparison or `documentSignerMissing` already says why).
    public var signerCountries: ChipSignerCountries?
    /// Active Authentication over the step's own challenge (ICAO 9303-11 §6.1).
    public var activeAuthentication: ActiveAuthenticationResult
    /// Chip Authentication as the client reported it (recorded, not judged); nil: not reported.
    public var reportedChipAuthentication: ReportedChipAuthentication?

    public init(failures: [ChipFailure], mrz: ChipMRZComparison, dataGroups: [Int], hashAlgorithm: String,
                documentSignerFingerprint: String? = nil, cscaFingerprint: String? = nil, portraitJPEG: Data? = nil,
                unparsedFiles: [String] = [], signerCountries: ChipSignerCountries? = nil,
                activeAuthentication: ActiveAuthenticationResult, reportedChipAuthentication: ReportedChipAuthentication? = nil) {
        self.activeAuthentication = activeAuthentication
        self.reportedChipAuthentication = reportedChipAuthentication
        self.failures = failures
        self.mrz = mrz
        self.dataGroups = dataGroups
        self.hashAlgorithm = hashAlgorithm
        self.documentSignerFingerprint = documentSignerFingerprint
        self.cscaFingerprint = cscaFingerprint
        self.portraitJPEG = portraitJPEG
        self.unparsedFiles = unparsedFiles
        self.signerCountries = signerCountries
    }

    /// Passive authentication passed (every step) and DG1 equals the printed MRZ. The policy adds its
    /// signer-country rule (`WorkflowPolicy.chipAuthentic`), which is what the verdicts use; a genuine chip is
    /// also one that verified Active Authentication (`WorkflowPolicy.chipGenuine`).
    public var authentic: Bool { failures.isEmpty && mrz == .matches }
}
