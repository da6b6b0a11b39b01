import Foundation
@_exported import IDVCore

// The seeds' type names (REL-ID `RDNA…`) over IDVCore's vocabulary, so code written against the
// codelabs compiles with at most an import change.

/// The seeds' `RDNAError`: `longErrorCode` 0 = accepted; codes in IDVCore's ``IDVErrorCode`` table.
public typealias RDNAError = IDVError
/// The seeds' `RDNARequestStatus`: 100 (or 0) success, 600 no template, 400/500 failures.
public typealias RDNARequestStatus = RequestStatus
/// The seeds' `RDNAIDVWorkflow` (raw values 0–15, see ``IDVWorkflow``).
public typealias RDNAIDVWorkflow = IDVWorkflow
/// The seeds' `RDNAChallengeOpMode` (0 verify, 1 set, 6/7 opt-in/out, 8/9/10/25 IDV).
public typealias RDNAChallengeOpMode = ChallengeOpMode

/// Seed 004 §4.3 `RDNAIDVStatus`: the answer to `onIDVOptInCapturedFrameConfirmation`.
public enum RDNAIDVStatus: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// `RDNA_IDV_APPROVED`: store the captured frame's template.
    case approved = 0
    /// `RDNA_IDV_RECAPTURE`: capture the selfie again.
    case recapture = 1
    /// `RDNA_IDV_CANCEL`: abort the opt-in (a final `onIDVBiometricOptInStatus` still follows).
    case cancel = 2

    public var description: String {
        switch self {
        case .approved: return "RDNA_IDV_APPROVED (0)"
        case .recapture: return "RDNA_IDV_RECAPTURE (1)"
        case .cancel: return "RDNA_IDV_CANCEL (2)"
        }
    }
}

/// The seeds' `RDNAChallengeResponse`: what the server said about the previous answer when it asks
/// a challenge (status 100 = fine; another status with the reason, e.g. a wrong password).
public struct RDNAChallengeResponse: Sendable, Equatable {
    /// `status.statusCode` / `status.statusMessage`.
    public var status: RDNARequestStatus
    /// The server's `challenge_id` of the challenge this response belongs to (opaque, 32 hex digits).
    public var challengeID: String
    /// The raw challenge payload as a JSON string (`"{}"` when empty).
    public var payloadJSON: String

    public init(status: RDNARequestStatus, challengeID: String, payloadJSON: String) {
        self.status = status
        self.challengeID = challengeID
        self.payloadJSON = payloadJSON
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
    public init(frames: [Data], framesPerSecond: Double) { self.frames = frames; self.framesPerSecond = framesPerSecond }
}
