import Foundation

/// An IDV workflow, `RDNAIDVWorkflow` in the seeds. The raw value travels on the wire and in the
/// seeds' API (`getIDVDocumentScanProcessStartConfirmation(_ idvWorkflow:)`).
///
/// Raw values: ARCHITECTURE.md §1 and the seed specifications' appendix (sibling codelabs).
/// 12 and 14 are unassigned: decoding them throws ``IDVCoreError/unknownRawValue(type:value:)``.
public enum IDVWorkflow: Int, ClosedIntVocabulary, CustomStringConvertible {
    /// Seed 002: MFA activation with IDV (document → selfie → consent → password).
    case activation = 0
    case activationWithTemplate = 1
    case additionalDeviceWithTemplate = 2
    case additionalDeviceWithoutTemplate = 3
    case accountRecoveryWithTemplate = 4
    case accountRecoveryWithoutTemplate = 5
    /// Seed 000: post-login KYC for an activated customer.
    case postLoginKYC = 6
    /// Seed 003: post-login additional document scan (document only).
    case postLoginDocScanOnly = 7
    /// Seed 001: server biometric authentication against the stored template.
    case postLoginSelfieBiometric = 8
    case stepUpAuthentication = 9
    /// Seed 004: biometric template opt-in.
    case postLoginOptIn = 10
    /// Seed 004: biometric template opt-out.
    case postLoginOptOut = 11
    case postLoginAgentKYC = 13
    case loginSelfieBiometric = 15

    /// The seeds' constant name, e.g. `IDV_ACTIVATION`.
    public var name: String {
        switch self {
        case .activation: return "IDV_ACTIVATION"
        case .activationWithTemplate: return "IDV_ACTIVATION_WITH_TEMPLATE"
        case .additionalDeviceWithTemplate: return "IDV_ADDITIONAL_DEVICE_WITH_TEMPLATE"
        case .additionalDeviceWithoutTemplate: return "IDV_ADDITIONAL_DEVICE_WITHOUT_TEMPLATE"
        case .accountRecoveryWithTemplate: return "IDV_ACCOUNT_RECOVERY_WITH_TEMPLATE"
        case .accountRecoveryWithoutTemplate: return "IDV_ACCOUNT_RECOVERY_WITHOUT_TEMPLATE"
        case .postLoginKYC: return "IDV_POSTLOGIN_KYC"
        case .postLoginDocScanOnly: return "IDV_POSTLOGIN_DOC_SCAN_ONLY"
        case .postLoginSelfieBiometric: return "IDV_POSTLOGIN_SELFIE_BIOMETRIC"
        case .stepUpAuthentication: return "IDV_STEP_UP_AUTHENTICATION"
        case .postLoginOptIn: return "IDV_POSTLOGIN_OPTIN"
        case .postLoginOptOut: return "IDV_POSTLOGIN_OPTOUT"
        case .postLoginAgentKYC: return "IDV_POSTLOGIN_AGENT_KYC"
        case .loginSelfieBiometric: return "IDV_LOGIN_SELFIE_BIOMETRIC"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }

    /// Pre-login workflows (0–5) cancel with 146 and return to `getUser`; post-login ones end with
    /// their terminal event and 240 (ARCHITECTURE.md §5).
    public var isPreLogin: Bool { rawValue <= 5 }
}

/// A challenge operation mode, `RDNAChallengeOpMode` in the seeds: which question the server is
/// asking. The client echoes back the mode it received; it never invents one.
public enum ChallengeOpMode: Int, ClosedIntVocabulary, CustomStringConvertible {
    /// `CHALLENGE_OP_VERIFY`: verify an existing password (login). Also the seeds' default raw value.
    case verify = 0
    /// `CHALLENGE_OP_SET`: set a new password (end of activation).
    case set = 1
    /// Seed 004: re-authentication and confirmation for biometric template opt-in.
    case biometricOptIn = 6
    /// Seed 004: re-authentication for biometric template opt-out.
    case biometricOptOut = 7
    /// Seed 002: pre-login IDV during activation.
    case idvActivation = 8
    /// Seed 000: post-login KYC (`RDNA_IDV_API_BIOMETRIC_AND_DOCUMENT_SCAN`).
    case idvPostLoginKYC = 9
    /// Seed 003: post-login additional document scan.
    case idvAdditionalDocumentScan = 10
    /// Seed 001: server biometric authentication ("always 25").
    case idvServerBiometricAuthentication = 25

    public var name: String {
        switch self {
        case .verify: return "CHALLENGE_OP_VERIFY"
        case .set: return "CHALLENGE_OP_SET"
        case .biometricOptIn: return "IDV_BIOMETRIC_OPT_IN"
        case .biometricOptOut: return "IDV_BIOMETRIC_OPT_OUT"
        case .idvActivation: return "IDV_ACTIVATION"
        case .idvPostLoginKYC: return "IDV_POSTLOGIN_KYC"
        case .idvAdditionalDocumentScan: return "IDV_ADDITIONAL_DOCUMENT_SCAN"
        case .idvServerBiometricAuthentication: return "IDV_SERVER_BIOMETRIC_AUTHENTICATION"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }
}

/// A vocabulary that travels as its raw integer and is closed: an unassigned integer is an error,
/// never a value (unlike ``OpenStringVocabulary``). A conforming enum lists its cases with their
/// raw values; checked construction and decoding come from here.
public protocol ClosedIntVocabulary: RawRepresentable, CaseIterable, Codable, Sendable where RawValue == Int {}

extension ClosedIntVocabulary {
    /// Creates a value from its raw integer.
    /// - Throws: ``IDVCoreError/unknownRawValue(type:value:)`` for an unassigned integer.
    public init(validating rawValue: Int) throws {
        guard let value = Self(rawValue: rawValue) else {
            throw IDVCoreError.unknownRawValue(type: "\(Self.self)", value: rawValue)
        }
        self = value
    }

    /// Decodes the raw integer.
    /// - Throws: `DecodingError.dataCorrupted` naming the type, the integer and the assigned ones.
    public init(from decoder: Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(Int.self)
        guard let value = Self(rawValue: raw) else {
            let assigned = Self.allCases.map { String($0.rawValue) }.joined(separator: ", ")
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "unknown \(Self.self) raw value \(raw) (assigned: \(assigned))"))
        }
        self = value
    }
}

/// Errors raised by IDVCore itself.
public enum IDVCoreError: Error, Equatable, CustomStringConvertible {
    case unknownRawValue(type: String, value: Int)

    public var description: String {
        switch self {
        case let .unknownRawValue(type, value): return "unknown \(type) raw value \(value)"
        }
    }
}
