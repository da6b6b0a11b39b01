import Foundation
@_exported import IDVCore

// The seeds' SDK types (REL-ID `RDNA…`), spelled and shaped as the five codelabs use them, so their
// `RDNAIDVService.swift`, `RDNAIDVDelegateManager.swift` and screens compile unchanged against
// IDVKit with `import RELID` (the `RELID` module re-exports IDVKit). docs/SEED-CONFORMANCE.md lists
// every item with the seed lines that use it.
//
// The wire vocabulary underneath is IDVCore's (``IDVError``, ``RequestStatus``, ``IDVWorkflow``,
// ``ChallengeOpMode``); these types are its client-side face.

/// The seeds' `RDNAError`: the synchronous answer of every SDK call and the error part of every
/// callback. `longErrorCode` 0 = accepted / no error; the codes are IDVCore's one table
/// (``IDVErrorCode``: 146 and 240 are the seeds', 1001 and above OpenIDV's).
///
/// `errorString` is an implicitly unwrapped `String!`, as the Objective-C SDK the codelabs were
/// written against imports it: the seeds both write `error.errorString ?? ""` (seed 000 L549, seed
/// 002 L983) and pass it where a `String` is expected (seed 000 L1110, seed 004 L1345). IDVKit never
/// leaves it nil.
public struct RDNAError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 0 = no error; otherwise an ``IDVErrorCode`` raw value.
    public var longErrorCode: Int
    /// The code's family (``IDVErrorCategory`` raw value).
    public var shortErrorCode: Int
    /// A sentence for the user (never nil in IDVKit).
    public var errorString: String!

    public init(longErrorCode: Int, shortErrorCode: Int, errorString: String) {
        self.longErrorCode = longErrorCode
        self.shortErrorCode = shortErrorCode
        self.errorString = errorString
    }

    /// The client face of a wire error.
    public init(_ error: IDVError) {
        self.init(longErrorCode: error.longErrorCode, shortErrorCode: error.shortErrorCode, errorString: error.errorString)
    }

    /// An error for a named code, with its default message unless `message` is given.
    public init(_ code: IDVErrorCode, _ message: String? = nil) { self.init(IDVError(code, message)) }

    /// No error (code 0, "Success").
    public static let none = RDNAError(.none)

    /// The named code, or nil for a code outside IDVCore's table.
    public var code: IDVErrorCode? { IDVErrorCode(rawValue: longErrorCode) }
    /// `longErrorCode == 0`.
    public var isSuccess: Bool { longErrorCode == 0 }
    /// The verification was sent to human review (1130): not a failure, not yet a success — the
    /// relying party's backend hears the decision server to server; show "we are reviewing it".
    public var isUnderReview: Bool { code == .verificationUnderReview }
    /// The server refused the call because a limit holds (1110 too many new sessions from this
    /// device or network, 1111 too many failed passwords or activation codes — HTTP 429 with
    /// `Retry-After`): nothing changed; the same challenge comes again with this error, whose
    /// ``errorString`` says when to retry. Wait that long before calling again.
    public var isThrottled: Bool { code == .sessionRateLimited || code == .authThrottled }
    /// The wire form.
    public var idvError: IDVError {
        IDVError(longErrorCode: longErrorCode, shortErrorCode: shortErrorCode, errorString: errorString ?? "")
    }
    public var description: String { "\(errorString ?? "") (\(longErrorCode))" }
}

/// The seeds' `RDNARequestStatus`: the back end's verdict on a request. `statusCode` 100 (or 0)
/// success, 600 no biometric template, 400 unable to process, 500 failed (ARCHITECTURE.md §4).
///
/// `statusCode` is an `Int32` (seed 004 L1363 keeps it in an `Int32`; seed 001 L803 converts it
/// with `Int(status.statusCode)`); `statusMessage` is a `String!` (seed 001 L795 writes
/// `status.statusMessage ?? "nil"`, L812 passes it as a `String`). IDVKit never leaves it nil.
public struct RDNARequestStatus: Equatable, Sendable, CustomStringConvertible {
    public var statusCode: Int32
    public var statusMessage: String!

    public init(statusCode: Int32, statusMessage: String) {
        self.statusCode = statusCode
        self.statusMessage = statusMessage
    }

    /// The client face of a wire status (codes beyond `Int32` are clamped; OpenIDV's are 0–600).
    public init(_ status: RequestStatus) {
        self.init(statusCode: Int32(clamping: status.statusCode), statusMessage: status.statusMessage)
    }

    /// Status 100 "Success".
    public static let success = RDNARequestStatus(statusCode: Int32(RequestStatus.success), statusMessage: "Success")

    /// Seed 000 §3.5: success is status 100 or 0.
    public var isSuccess: Bool { statusCode == 100 || statusCode == 0 }
    /// The status code as an `Int`.
    public var code: Int { Int(statusCode) }
    public var description: String { "\(statusMessage ?? "") (\(statusCode))" }
}

/// The seeds' `RDNAIDVWorkflow` (raw values 0–15, see ``IDVWorkflow``). The seeds' constant names
/// are members: `.IDV_ACTIVATION`, `.IDV_POSTLOGIN_KYC`, … (below).
public typealias RDNAIDVWorkflow = IDVWorkflow
/// The seeds' `RDNAChallengeOpMode` (0 verify, 1 set, 6/7 opt-in/out, 8/9/10/25 IDV). The seeds
/// build it with `RDNAChallengeOpMode(rawValue: 0)!` and compare `rawValue`s.
public typealias RDNAChallengeOpMode = ChallengeOpMode

// The seeds' spellings of the workflows: `var idvWorkflow: RDNAIDVWorkflow = .IDV_ACTIVATION`
// (seed 000 L1138), `idvWorkflow == .IDV_ACTIVATION` (L1178), and the `switch idvWorkflow`
// of seed 002's start screens (L1694–L1708, L2376–L2440), which also spell workflow 8 and 9
// `IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC` and `IDV_POSTLOGIN_IDV_STEPUP_AUTH`.
extension IDVWorkflow {
    public static let IDV_ACTIVATION = IDVWorkflow.activation
    public static let IDV_ACTIVATION_WITH_TEMPLATE = IDVWorkflow.activationWithTemplate
    public static let IDV_ADDITIONAL_DEVICE_WITH_TEMPLATE = IDVWorkflow.additionalDeviceWithTemplate
    public static let IDV_ADDITIONAL_DEVICE_WITHOUT_TEMPLATE = IDVWorkflow.additionalDeviceWithoutTemplate
    public static let IDV_ACCOUNT_RECOVERY_WITH_TEMPLATE = IDVWorkflow.accountRecoveryWithTemplate
    public static let IDV_ACCOUNT_RECOVERY_WITHOUT_TEMPLATE = IDVWorkflow.accountRecoveryWithoutTemplate
    public static let IDV_POSTLOGIN_KYC = IDVWorkflow.postLoginKYC
    public static let IDV_POSTLOGIN_DOC_SCAN_ONLY = IDVWorkflow.postLoginDocScanOnly
    /// Seed 002 L2418's name for workflow 8.
    public static let IDV_POSTLOGIN_IDV_SELFIE_BIOMETRIC = IDVWorkflow.postLoginSelfieBiometric
    /// IDVCore's name for workflow 8 (``IDVWorkflow/name``).
    public static let IDV_POSTLOGIN_SELFIE_BIOMETRIC = IDVWorkflow.postLoginSelfieBiometric
    /// Seed 002 L2424's name for workflow 9.
    public static let IDV_POSTLOGIN_IDV_STEPUP_AUTH = IDVWorkflow.stepUpAuthentication
    /// IDVCore's name for workflow 9.
    public static let IDV_STEP_UP_AUTHENTICATION = IDVWorkflow.stepUpAuthentication
    public static let IDV_POSTLOGIN_OPTIN = IDVWorkflow.postLoginOptIn
    public static let IDV_POSTLOGIN_OPTOUT = IDVWorkflow.postLoginOptOut
    public static let IDV_POSTLOGIN_AGENT_KYC = IDVWorkflow.postLoginAgentKYC
    public static let IDV_LOGIN_SELFIE_BIOMETRIC = IDVWorkflow.loginSelfieBiometric
}

// The seeds' names of challenge modes: seed 002 L1229 (`.CHALLENGE_OP_SET`, `.CHALLENGE_OP_VERIFY`),
// seed 000 L525 (`RDNA_IDV_API_BIOMETRIC_AND_DOCUMENT_SCAN` = 9).
extension ChallengeOpMode {
    public static let CHALLENGE_OP_VERIFY = ChallengeOpMode.verify
    public static let CHALLENGE_OP_SET = ChallengeOpMode.set
    public static let RDNA_IDV_API_BIOMETRIC_AND_DOCUMENT_SCAN = ChallengeOpMode.idvPostLoginKYC
}

/// Seed 004 §4.3 `RDNAIDVStatus`: the answer to `onIDVOptInCapturedFrameConfirmation`, with the
/// seed's case names (`case .RDNA_IDV_APPROVED:` in seed 004 L697, `RDNAIDVStatus.RDNA_IDV_RECAPTURE`
/// in L1383). ``approved``, ``recapture`` and ``cancel`` are Swift-style aliases.
public enum RDNAIDVStatus: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// Store the captured frame's template.
    case RDNA_IDV_APPROVED = 0
    /// Capture the selfie again (another `onIDVOptInCapturedFrameConfirmation` follows).
    case RDNA_IDV_RECAPTURE = 1
    /// Abort the opt-in (a final `onIDVBiometricOptInStatus` with 240 still follows).
    case RDNA_IDV_CANCEL = 2

    public static let approved = RDNAIDVStatus.RDNA_IDV_APPROVED
    public static let recapture = RDNAIDVStatus.RDNA_IDV_RECAPTURE
    public static let cancel = RDNAIDVStatus.RDNA_IDV_CANCEL

    /// The wire value (IDVCore's ``IDVStatus``).
    public var idvStatus: IDVStatus { IDVStatus(rawValue: rawValue) ?? .cancel }

    public var description: String {
        switch self {
        case .RDNA_IDV_APPROVED: return "RDNA_IDV_APPROVED (0)"
        case .RDNA_IDV_RECAPTURE: return "RDNA_IDV_RECAPTURE (1)"
        case .RDNA_IDV_CANCEL: return "RDNA_IDV_CANCEL (2)"
        }
    }
}

/// Seed 002 L675 `RDNAIDVDownloadStatus`, the status argument of
/// `onDatabaseDownloadProgress(_:databaseID:)`. The codelabs' SDK downloads a document-recognition
/// database to the phone; OpenIDV reads documents on the server, so IDVKit has no such database and
/// never calls that callback. The type exists so the codelabs' delegate managers compile.
public enum RDNAIDVDownloadStatus: Int, Sendable, CaseIterable {
    case RDNA_IDV_DOWNLOAD_STARTED = 0
    case RDNA_IDV_DOWNLOAD_IN_PROGRESS = 1
    case RDNA_IDV_DOWNLOAD_COMPLETED = 2
    case RDNA_IDV_DOWNLOAD_FAILED = 3
}

/// The seeds' `RDNAChallengeResponse`: what the server said about the previous answer when it asks
/// a challenge (status 100 = fine; another status with the reason, e.g. a wrong password), and the
/// session it belongs to (the argument of `onInitialized(_ response:)`, seed 001 L472).
public struct RDNAChallengeResponse: Sendable, Equatable {
    /// `status.statusCode` / `status.statusMessage` (seed 002 L742 reads `response.status.statusCode`).
    public var status: RDNARequestStatus
    /// The server's `challenge_id` of the challenge this response belongs to (opaque, 32 hex
    /// digits; empty for `onInitialized`).
    public var challengeID: String
    /// The raw challenge payload as a JSON string (`"{}"` when empty).
    public var payloadJSON: String
    /// The public, non-secret session id (empty when not known).
    public var sessionID: String

    public init(status: RDNARequestStatus, challengeID: String, payloadJSON: String, sessionID: String = "") {
        self.status = status
        self.challengeID = challengeID
        self.payloadJSON = payloadJSON
        self.sessionID = sessionID
    }
}

/// One captured document page: `page_index` 0 = front, 1 = back (seed 002 §6.1) and the encoded
/// image bytes (JPEG or PNG, unchanged from the capture source).
public struct CapturedPage: Sendable, Equatable {
    public var pageIndex: Int
    public var image: Data
    public init(pageIndex: Int, image: Data) { self.pageIndex = pageIndex; self.image = image }
}

/// A selfie capture: a short frame sequence (the seeds' liveness "video"), oldest frame first,
/// each an encoded JPEG/PNG, taken at `framesPerSecond`.
public struct CapturedSelfie: Sendable, Equatable {
    public var frames: [Data]
    public var framesPerSecond: Double
    /// Under an illumination challenge: each frame's capture time, milliseconds from the start of the
    /// sequence (sent as `frame_times_ms`); nil when the screen did not flash.
    public var frameTimesMs: [Double]?
    public init(frames: [Data], framesPerSecond: Double, frameTimesMs: [Double]? = nil) {
        self.frames = frames
        self.framesPerSecond = framesPerSecond
        self.frameTimesMs = frameTimesMs
    }
}
