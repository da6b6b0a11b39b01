import Foundation

/// The eMRTD chip files a client sends beside the document page images (ICAO 9303-10 LDS1 elementary files,
/// base64 of the bytes exactly as read): `{"sod": "…", "com": "…", "data_groups": {"1": "…", "2": "…"}}`, and what
/// the chip answered to the step's challenge: `"active_authentication": {"challenge", "signature"}`
/// (``ActiveAuthenticationAnswer``) and the client's Chip Authentication outcome `"chip_authentication"`
/// (``ChipAuthenticationReport``), both optional. EF.SOD is required; the server verifies everything (passive
/// authentication, ICAO 9303-11 §5.1; Active Authentication over its own challenge, §6.1).
public struct ChipFilesPayload: Codable, Equatable, Sendable {
    /// EF.SOD, base64.
    public var sod: String
    /// EF.COM, base64 (optional: it is not signed).
    public var com: String?
    /// Data group number "1"…"16" → the EF's bytes, base64.
    public var dataGroups: [String: String]
    /// The chip's signature over the step's `chip_challenge` (nil: Active Authentication not run).
    public var activeAuthentication: ActiveAuthenticationAnswer?
    /// Chip Authentication as the client ran it (nil: not reported).
    public var chipAuthentication: ChipAuthenticationReport?

    enum CodingKeys: String, CodingKey {
        case sod, com, dataGroups = "data_groups", activeAuthentication = "active_authentication", chipAuthentication = "chip_authentication"
    }

    /// Largest decoded EF accepted (DG2/DG3 stay far below).
    public static let maxFileBytes = 4 * 1024 * 1024
    /// Largest sum of decoded EFs accepted.
    public static let maxTotalBytes = 8 * 1024 * 1024

    public init(sod: Data, com: Data? = nil, dataGroups: [Int: Data] = [:], activeAuthentication: ActiveAuthenticationAnswer? = nil,
                chipAuthentication: ChipAuthenticationReport? = nil) {
        self.sod = sod.base64EncodedString()
        self.com = com?.base64EncodedString()
        self.dataGroups = Dictionary(uniqueKeysWithValues: dataGroups.map { (String($0.key), $0.value.base64EncodedString()) })
        self.activeAuthentication = activeAuthentication
        self.chipAuthentication = chipAuthentication
    }

    /// Why chip files in an answer are unusable (the step answers with `invalidImage`-style errors; nothing stored).
    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
        init(_ s: String) { description = s }
    }

    /// The decoded files, checked: valid base64, data group numbers 1…16, sizes within the limits, EF.SOD not empty.
    public func decoded() throws(Invalid) -> (sod: Data, com: Data?, dataGroups: [Int: Data]) {
        var total = 0
        func decode(_ s: String, _ name: String) throws(Invalid) -> Data {
            // 4 base64 characters carry 3 bytes: refuse before decoding what cannot fit.
            guard s.utf8.count / 4 * 3 <= Self.maxFileBytes + 3 else { throw Invalid("chip file \(name) is larger than \(Self.maxFileBytes / 1_048_576) MiB") }
            guard let d = Data(base64Encoded: s), !d.isEmpty else { throw Invalid("chip file \(name) is not base64 data") }
            guard d.count <= Self.maxFileBytes else { throw Invalid("chip file \(name) is larger than \(Self.maxFileBytes / 1_048_576) MiB") }
            total += d.count
            guard total <= Self.maxTotalBytes else { throw Invalid("chip files are larger than \(Self.maxTotalBytes / 1_048_576) MiB together") }
            return d
        }
        let s = try decode(sod, "sod")
        let c: Data? = try com.map { (v: String) throws(Invalid) -> Data in try decode(v, "com") }
        var groups: [Int: Data] = [:]
        for (k, v) in dataGroups {
            guard let n = Int(k), (1...16).contains(n), String(n) == k else { throw Invalid("chip data group \"\(k)\" is not 1…16") }
            groups[n] = try decode(v, "DG\(n)")
        }
        return (s, c, groups)
    }
}

/// `nfc_scan_status_reason` (seed 003 NFC rows; the seeds give no value set): why the chip verification
/// came out as it did. Machine-readable on the wire; `sentence` is the one table of words for people.
/// `nfc_scan_status` itself uses the seed-003 status vocabulary (``DocumentScanStatus``: `OK`, `WARNING`,
/// `ERROR`, `NOT DONE`). Unknown strings decode to `.other`.
public enum ChipVerificationReason: OpenStringVocabulary {
    /// No chip data was sent with the pages.
    case noChipData
    /// Passive authentication passed, DG1 equals the printed MRZ, and the chip verified Active Authentication over
    /// the server's own challenge: the chip is genuine (ICAO 9303-11 §5.1 and §6.1).
    case genuine
    /// Passive authentication passed and DG1 equals the printed MRZ, but the chip did not prove it is not a copy: the
    /// client did not run Active Authentication although the chip has a DG15 key.
    case activeAuthenticationNotPerformed
    /// Passive authentication passed and DG1 equals the printed MRZ, but the chip has no Active Authentication key
    /// (no DG15), so a copy of its files cannot be told from it.
    case activeAuthenticationNotSupported
    /// Active Authentication's signature or key uses an algorithm that cannot be checked.
    case activeAuthenticationUnsupported
    /// The chip's Active Authentication signature does not verify with its DG15 key over the server's challenge:
    /// another key made it — a copy of a genuine chip's files behind another chip or software.
    case activeAuthenticationFailed
    /// The Active Authentication signature answers another challenge than this step's: an earlier session's answer
    /// replayed (or a stale one).
    case activeAuthenticationReplayed
    /// An Active Authentication signature was sent, but DG15 is not one the chip's security object signs: its key
    /// proves nothing.
    case activeAuthenticationKeyNotSigned
    /// The chip files could not be parsed (no usable EF.SOD).
    case unreadable
    case signatureInvalid
    case securityObjectDigestMismatch
    case dataGroupHashMismatch
    /// DG1 or DG2 was sent but the SOD does not sign it.
    case dataGroupNotSigned
    /// DG1's MRZ differs from the MRZ printed on the page.
    case mrzMismatch
    /// No DG1 was sent (or no MRZ was read from the page): the chip cannot be tied to the page.
    case mrzNotCompared
    case documentSignerRevoked
    case cscaUnknown
    case cscaSignatureInvalid
    case documentSignerMissing
    case certificateNotValidNow
    case unsupportedAlgorithm
    /// The country of the certificates that signed the chip (the document signer's subject or issuer, the
    /// trusted CSCA's subject) is not the document's issuing state, or the document signer names no country
    /// (ICAO 9303-12 §7.1): another state's signer vouched for this document.
    case signerCountryMismatch
    case other(String)

    public var rawValue: String {
        switch self {
        case .noChipData: return "no_chip_data"
        case .genuine: return "genuine"
        case .activeAuthenticationNotPerformed: return "active_authentication_not_performed"
        case .activeAuthenticationNotSupported: return "active_authentication_not_supported"
        case .activeAuthenticationUnsupported: return "active_authentication_unsupported"
        case .activeAuthenticationFailed: return "active_authentication_failed"
        case .activeAuthenticationReplayed: return "active_authentication_replayed"
        case .activeAuthenticationKeyNotSigned: return "active_authentication_key_not_signed"
        case .unreadable: return "unreadable"
        case .signatureInvalid: return "signature_invalid"
        case .securityObjectDigestMismatch: return "security_object_digest_mismatch"
        case .dataGroupHashMismatch: return "data_group_hash_mismatch"
        case .dataGroupNotSigned: return "data_group_not_signed"
        case .mrzMismatch: return "mrz_mismatch"
        case .mrzNotCompared: return "mrz_not_compared"
        case .documentSignerRevoked: return "document_signer_revoked"
        case .cscaUnknown: return "csca_unknown"
        case .cscaSignatureInvalid: return "csca_signature_invalid"
        case .documentSignerMissing: return "document_signer_missing"
        case .certificateNotValidNow: return "certificate_not_valid_now"
        case .unsupportedAlgorithm: return "unsupported_algorithm"
        case .signerCountryMismatch: return "signer_country_mismatch"
        case let .other(s): return s
        }
    }

    public static let knownValues: [ChipVerificationReason] = [
        .noChipData, .genuine, .activeAuthenticationNotPerformed, .activeAuthenticationNotSupported, .activeAuthenticationUnsupported,
        .activeAuthenticationFailed, .activeAuthenticationReplayed, .activeAuthenticationKeyNotSigned, .unreadable, .signatureInvalid, .securityObjectDigestMismatch, .dataGroupHashMismatch,
        .dataGroupNotSigned, .mrzMismatch, .mrzNotCompared, .documentSignerRevoked, .cscaUnknown, .cscaSignatureInvalid,
        .documentSignerMissing, .certificateNotValidNow, .unsupportedAlgorithm, .signerCountryMismatch,
    ]

    /// The sentence shown to a person (the seed-003 "Reason" row).
    public var sentence: String {
        switch self {
        case .noChipData: return "The document's chip was not read."
        case .genuine: return "The chip is genuine: its data is authentic, matches the document, and the chip proved it holds its own key."
        case .activeAuthenticationNotPerformed:
            return "The chip's data is authentic and matches the document, but the chip was not asked to prove it is not a copy (Active Authentication was not run)."
        case .activeAuthenticationNotSupported:
            return "The chip's data is authentic and matches the document, but this chip cannot prove it is not a copy (it has no Active Authentication key)."
        case .activeAuthenticationUnsupported:
            return "The chip's data is authentic, but its proof that it is not a copy uses a method that cannot be checked."
        case .activeAuthenticationFailed: return "The chip failed to prove it holds its own key: it may be a copy of a genuine chip."
        case .activeAuthenticationReplayed: return "The chip's response was made for another verification, not this one: it may have been replayed."
        case .activeAuthenticationKeyNotSigned: return "The chip's key for proving it is genuine is not signed by the issuer, so it proves nothing."
        case .unreadable: return "The chip's data could not be read."
        case .signatureInvalid, .securityObjectDigestMismatch: return "The chip's signature is not valid."
        case .dataGroupHashMismatch: return "The chip's data has been altered."
        case .dataGroupNotSigned: return "The chip holds a data group its security object does not sign, so that data cannot be trusted."
        case .mrzMismatch: return "The chip's data does not match the printed document."
        case .mrzNotCompared: return "The chip's data could not be compared with the printed document."
        case .documentSignerRevoked: return "The chip was signed with a revoked certificate."
        case .cscaUnknown, .cscaSignatureInvalid, .documentSignerMissing: return "The chip's issuer could not be confirmed."
        case .certificateNotValidNow: return "The chip's signing certificate is not valid at this time."
        case .unsupportedAlgorithm: return "The chip uses a signature method that cannot be checked."
        case .signerCountryMismatch: return "The chip was signed by another country than the one that issued the document."
        case .other: return "The chip could not be verified."
        }
    }

    /// The sentence of `signerCountryMismatch` naming the countries (codes only): the one a certificate of the
    /// signer carries (`signerCountries`, X.509 countryName; empty: it names none) and the document's issuing
    /// state (ICAO 9303-3 §5 code). Any other reason: `sentence`.
    public func sentence(signerCountries: [String], issuingState: String) -> String {
        guard case .signerCountryMismatch = self else { return sentence }
        if signerCountries.isEmpty {
            return "The chip's signing certificate names no country, so it cannot be shown to come from \(issuingState), the document's issuing state."
        }
        return "The chip was signed by a certificate of country \(signerCountries.joined(separator: "/")), not of \(issuingState), the state that issued the document; another state cannot vouch for it."
    }
}
