import Foundation

/// A string vocabulary that is open-ended on the wire: the known values are cases, and any other
/// string decodes to `.other(raw)` instead of failing, and re-encodes unchanged. Equality and
/// hashing follow `rawValue`, so `.other("MATCHED") == .matched`.
///
/// A conforming enum writes only its cases, `case other(String)`, `rawValue` (the wire strings, the
/// one place they are spelled) and `knownValues`; decoding, `init(rawValue:)`, `isKnown`, `==` and
/// `hash(into:)` come from here (these defaults take the place of the synthesised `Equatable` and
/// `Hashable` members, which would tell `.other("MATCHED")` and `.matched` apart).
public protocol OpenStringVocabulary: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible
    where RawValue == String {
    /// Never fails: unknown strings become `.other`.
    init(rawValue: String)
    /// Every named (non-`.other`) case, in declaration order.
    static var knownValues: [Self] { get }
    /// The catch-all for a string outside the vocabulary, kept verbatim (the `case other(String)`).
    static func other(_ rawValue: String) -> Self
    /// False for a string outside the known vocabulary.
    var isKnown: Bool { get }
}

extension OpenStringVocabulary {
    /// The named case whose wire string is `rawValue`, else `.other(rawValue)`. Exact and
    /// case-sensitive: `"matched"` is not `MATCHED`.
    public init(rawValue: String) {
        self = Self.knownValues.first { $0.rawValue == rawValue } ?? .other(rawValue)
    }

    public init(from decoder: Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// True when `rawValue` is one of ``knownValues``' strings.
    public var isKnown: Bool { Self.knownValues.contains { $0.rawValue == rawValue } }

    /// Equal when the wire strings are equal.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawValue == rhs.rawValue }

    /// Hashes the wire string, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// The raw string.
    public var description: String { rawValue }
}

// MARK: - Selfie (seed 002 §6.2, seed 001 §2.5)

/// The face verdict `biometric_result.display_text` (seed 002 §5.4, seed 001 §2.5; ARCHITECTURE §5).
/// Only `MATCHED` is a success (seed 002 L2916: exact, case-sensitive); every other value, known or
/// not, is a failure. Unknown strings decode to `.other` and never crash.
public enum BiometricVerdict: OpenStringVocabulary {
    /// `MATCHED`: live, and the face matches the reference (document portrait or stored template).
    case matched
    /// `NOT_MATCHED`: live, but the face does not match.
    case notMatched
    /// `LIVENESS_FAILED`: the presentation-attack detection (ISO/IEC 30107-3 PAD) rejected the capture.
    case livenessFailed
    /// Any other string, kept verbatim.
    case other(String)

    /// The string on the wire.
    public var rawValue: String {
        switch self {
        case .matched: return "MATCHED"
        case .notMatched: return "NOT_MATCHED"
        case .livenessFailed: return "LIVENESS_FAILED"
        case let .other(raw): return raw
        }
    }

    /// True only for `MATCHED` (seed 002 L2916, seed 001 L968).
    public var isSuccess: Bool { self == .matched }

    /// The named cases (see ``OpenStringVocabulary/knownValues``).
    public static let knownValues: [BiometricVerdict] = [.matched, .notMatched, .livenessFailed]
}

/// The action key of a server-offered selfie-confirmation button, passed back by
/// `setIDVSelfieConfirmation(action:challengeMode:)` (seed 002 §3.1 A4, L2590–L2594; ARCHITECTURE §5).
public enum IDVActionKey: OpenStringVocabulary {
    /// `continue-flow`: accept and go on (consent in seed 002, completion in seed 000).
    case continueFlow
    /// `reinit-idv-document-scan`: scan the document again.
    case reinitDocumentScan
    /// `reinit-idv-selfie`: capture the selfie again.
    case reinitSelfie
    /// Any other string, kept verbatim (a server rejects keys it did not offer: error 1020).
    case other(String)

    /// The key an app's `setIDVSelfieConfirmation(action:)` answer stands for: `"true"` (the seeds'
    /// documented boolean form, seed 002 L1074–L1079, seed 000 L1413) means `continue-flow`
    /// (ARCHITECTURE §5); every other string maps as in ``init(rawValue:)``.
    public init(selfieConfirmationAction action: String) {
        self = action == SelfieConfirmationAnswer.continueString ? .continueFlow : IDVActionKey(rawValue: action)
    }

    /// The string on the wire.
    public var rawValue: String {
        switch self {
        case .continueFlow: return "continue-flow"
        case .reinitDocumentScan: return "reinit-idv-document-scan"
        case .reinitSelfie: return "reinit-idv-selfie"
        case let .other(raw): return raw
        }
    }

    /// The named cases (see ``OpenStringVocabulary/knownValues``).
    public static let knownValues: [IDVActionKey] = [.continueFlow, .reinitDocumentScan, .reinitSelfie]
}

/// What an app's `setIDVSelfieConfirmation(action:challengeMode:)` answer means (seed 002 §3.1 A4,
/// L1074–L1079: "true" accepts the selfie, "false" rejects it, or a server-offered action key).
public enum SelfieConfirmationAnswer: Equatable, Sendable {
    /// An action key: `"true"` is `continue-flow`, any other string as in ``IDVActionKey/init(selfieConfirmationAction:)``
    /// (a server accepts only the keys it offered).
    case action(IDVActionKey)
    /// `"false"`: the user rejects the selfie ("the SDK may allow selfie recapture or terminate based
    /// on workflow configuration"; OpenIDV's server asks for the selfie again while attempts remain).
    case reject

    /// The `"false"` of the seeds' boolean form.
    public static let rejectString = "false"
    /// The `"true"` of the seeds' boolean form (seed 000 L1413: "String value, not Bool!").
    public static let continueString = "true"

    /// Exact and case-sensitive, as the seeds pass it.
    public init(_ action: String) {
        self = action == Self.rejectString ? .reject : .action(IDVActionKey(selfieConfirmationAction: action))
    }
}

// MARK: - Documents (seed 002 §6.1, seed 003 §4.4)

/// `response_data.overall_status` of the document details (seed 002 §5.4): `VALID` (green),
/// `INVALID` (red), anything else shown as a warning (orange). Unknown strings decode to `.other`.
public enum DocumentOverallStatus: OpenStringVocabulary {
    /// `VALID`: every performed check passed and the document is not expired.
    case valid
    /// `INVALID`: at least one check failed (see `errors`).
    case invalid
    /// Any other string (e.g. `WARNING`, `UNKNOWN`), kept verbatim.
    case other(String)

    /// The string on the wire.
    public var rawValue: String {
        switch self {
        case .valid: return "VALID"
        case .invalid: return "INVALID"
        case let .other(raw): return raw
        }
    }

    /// The named cases (see ``OpenStringVocabulary/knownValues``).
    public static let knownValues: [DocumentOverallStatus] = [.valid, .invalid]
}

/// `checks_performed[].result` of the document details (seed 002 §5.4: `PASSED`, `NOT_PERFORMED`
/// in the example; `FAILED` and `WARNING` are ours). Unknown strings decode to `.other`.
public enum DocumentCheckResult: OpenStringVocabulary {
    /// `PASSED`: the check ran and the document satisfied it.
    case passed
    /// `FAILED`: the check ran and the document did not satisfy it (listed in `errors`).
    case failed
    /// `WARNING`: the check ran with a non-blocking finding (listed in `warnings`).
    case warning
    /// `NOT_PERFORMED`: the check could not run (e.g. no chip reader for Chip Verification).
    case notPerformed
    /// Any other string, kept verbatim.
    case other(String)

    /// The string on the wire.
    public var rawValue: String {
        switch self {
        case .passed: return "PASSED"
        case .failed: return "FAILED"
        case .warning: return "WARNING"
        case .notPerformed: return "NOT_PERFORMED"
        case let .other(raw): return raw
        }
    }

    /// The named cases (see ``OpenStringVocabulary/knownValues``).
    public static let knownValues: [DocumentCheckResult] = [.passed, .failed, .warning, .notPerformed]
}

/// `overall_document_status` and `checks_performed[].check_status` of the additional-document-scan
/// details (seed 003 §3, §4.4): `OK` (green), `ERROR` (red), `WARNING` / `NOT DONE` (orange), anything
/// else gray. Unknown strings decode to `.other`.
public enum DocumentScanStatus: OpenStringVocabulary {
    /// `OK`: passed (green).
    case ok
    /// `ERROR`: failed (red); the document-level hint reads "Document validation failed…".
    case error
    /// `WARNING`: passed with findings (orange).
    case warning
    /// `NOT DONE` (with a space, as the seed spells it, L1422–L1428).
    case notDone
    /// Any other string, kept verbatim (shown gray).
    case other(String)

    /// The string on the wire.
    public var rawValue: String {
        switch self {
        case .ok: return "OK"
        case .error: return "ERROR"
        case .warning: return "WARNING"
        case .notDone: return "NOT DONE"
        case let .other(raw): return raw
        }
    }

    /// The named cases (see ``OpenStringVocabulary/knownValues``).
    public static let knownValues: [DocumentScanStatus] = [.ok, .error, .warning, .notDone]
}

// MARK: - Audit (seed 001 §2.6, §2.7)

/// `idv_audit_info.status` (seed 001 §2.6): `SUCCESS` or `FAILURE`. Unknown strings decode to `.other`.
public enum AuditStatus: OpenStringVocabulary {
    /// `SUCCESS`: the transaction reached a positive outcome.
    case success
    /// `FAILURE`: it did not (mismatch, liveness failure, cancel, attempts exhausted).
    case failure
    /// Any other string, kept verbatim.
    case other(String)

    /// The string on the wire.
    public var rawValue: String {
        switch self {
        case .success: return "SUCCESS"
        case .failure: return "FAILURE"
        case let .other(raw): return raw
        }
    }

    /// The named cases (see ``OpenStringVocabulary/knownValues``).
    public static let knownValues: [AuditStatus] = [.success, .failure]
}

/// `orchestration_use_case`: which server use case produced an `idvResponse` (seed 001 §2.7).
/// The first two are the seed's; the rest follow the same naming for the other flows (ours).
/// Unknown strings decode to `.other`.
public enum OrchestrationUseCase: OpenStringVocabulary {
    /// `RDNA_IDV_CHECK_TEMPLATE`: `checkIDVUserBiometricTemplateStatus` (seed 001 L526).
    case checkTemplate
    /// `RDNA_IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC`: server biometric authentication (seed 001 L581).
    case postLoginSelfieBiometric
    /// `RDNA_IDV_POSTLOGIN_KYC` (ours, seed 000 flow).
    case postLoginKYC
    /// `RDNA_IDV_POSTLOGIN_DOC_SCAN_ONLY` (ours, seed 003 flow).
    case postLoginDocScanOnly
    /// `RDNA_IDV_POSTLOGIN_OPTIN` (ours, seed 004 opt-in).
    case postLoginOptIn
    /// `RDNA_IDV_POSTLOGIN_OPTOUT` (ours, seed 004 opt-out).
    case postLoginOptOut
    /// Any other string, kept verbatim.
    case other(String)

    /// The string on the wire.
    public var rawValue: String {
        switch self {
        case .checkTemplate: return "RDNA_IDV_CHECK_TEMPLATE"
        case .postLoginSelfieBiometric: return "RDNA_IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC"
        case .postLoginKYC: return "RDNA_IDV_POSTLOGIN_KYC"
        case .postLoginDocScanOnly: return "RDNA_IDV_POSTLOGIN_DOC_SCAN_ONLY"
        case .postLoginOptIn: return "RDNA_IDV_POSTLOGIN_OPTIN"
        case .postLoginOptOut: return "RDNA_IDV_POSTLOGIN_OPTOUT"
        case let .other(raw): return raw
        }
    }

    /// The named cases (see ``OpenStringVocabulary/knownValues``).
    public static let knownValues: [OrchestrationUseCase] = [.checkTemplate, .postLoginSelfieBiometric, .postLoginKYC, .postLoginDocScanOnly, .postLoginOptIn, .postLoginOptOut]
}

// MARK: - Opt-in confirmation (seed 004 §4.3)

/// `RDNAIDVStatus`, the argument of `setIDVBiometricOptInConfirmation(_:)` after the captured-frame
/// preview (seed 004 §2.3, §4.3, L675–L677). Travels as its raw integer; unknown integers fail to
/// decode with a clear error.
public enum IDVStatus: Int, ClosedIntVocabulary, CustomStringConvertible {
    /// `RDNA_IDV_APPROVED` (0): the user approves the captured frame; the template is enrolled.
    case approved = 0
    /// `RDNA_IDV_RECAPTURE` (1): capture the selfie again.
    case recapture = 1
    /// `RDNA_IDV_CANCEL` (2): abandon the opt-in.
    case cancel = 2

    /// The seed's constant name, e.g. `RDNA_IDV_APPROVED`.
    public var name: String {
        switch self {
        case .approved: return "RDNA_IDV_APPROVED"
        case .recapture: return "RDNA_IDV_RECAPTURE"
        case .cancel: return "RDNA_IDV_CANCEL"
        }
    }

    /// The seed's log label, e.g. `APPROVED (0)` (L1883–L1886).
    public var description: String {
        switch self {
        case .approved: return "APPROVED (0)"
        case .recapture: return "RECAPTURE (1)"
        case .cancel: return "CANCEL (2)"
        }
    }
}
