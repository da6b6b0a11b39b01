import Foundation

// What the server asks with the capture challenges (`payload` of a ``WireChallenge``), typed: the
// engine encodes these, the SDK and the hosted page read them. docs/WORKFLOWS.md lists each.

/// A server-issued active liveness challenge (ISO/IEC 30107-3 challenge-response PAD), kept in the
/// sealed flow state and shown to the client in the selfie start and upload payloads as
/// `liveness_challenge`; the client cannot choose it.
public struct LivenessChallenge: Sendable, Equatable, Codable {
    /// 128-bit random nonce, 32 lowercase hex digits.
    public var nonce: String
    /// Actions to perform in this order: `TURN_LEFT`, `TURN_RIGHT`, `BLINK`, `OPEN_MOUTH` (FaceKit `ChallengeAction`).
    public var actions: [String]
    /// Longest sequence time, seconds, from the first frame to the last action.
    public var durationSeconds: Double
    /// How long after issue the frames may arrive, seconds.
    public var deadlineSeconds: Int
    /// Unix seconds after which the challenge is expired (issue time + `deadlineSeconds`).
    public var expiresAt: Int

    enum CodingKeys: String, CodingKey {
        case nonce, actions, durationSeconds = "duration_seconds", deadlineSeconds = "deadline_seconds", expiresAt = "expires_at"
    }

    public init(nonce: String, actions: [String], durationSeconds: Double, deadlineSeconds: Int, expiresAt: Int) {
        self.nonce = nonce
        self.actions = actions
        self.durationSeconds = durationSeconds
        self.deadlineSeconds = deadlineSeconds
        self.expiresAt = expiresAt
    }
}

/// The `payload` of `getIDVDocumentScanProcessStartConfirmation` and
/// `getIDVSelfieProcessStartConfirmation`: the run's workflow and, for a selfie under active
/// liveness, the capture's server-issued challenge.
public struct CaptureStartPayload: Codable, Equatable, Sendable {
    /// The run's ``IDVWorkflow`` raw value.
    public var idvWorkflow: Int
    /// Active liveness (`idv.liveness_mode = active`): the actions the frames must show.
    public var livenessChallenge: LivenessChallenge?
    enum CodingKeys: String, CodingKey { case idvWorkflow = "idv_workflow", livenessChallenge = "liveness_challenge" }
    public init(idvWorkflow: Int, livenessChallenge: LivenessChallenge? = nil) {
        self.idvWorkflow = idvWorkflow
        self.livenessChallenge = livenessChallenge
    }
}

/// The `payload` of `uploadIDVDocumentPages`: what the server accepts in the ``DocumentPagesAnswer``,
/// and, when the server verifies chips, the chip's Active Authentication challenge.
public struct DocumentUploadRequest: Codable, Equatable, Sendable {
    /// Most pages in one upload (`idv.max_pages`).
    public var maxPages: Int
    /// The image types accepted (`image/jpeg`, `image/png`).
    public var mediaTypes: [String]
    /// `chip_challenge` (``ChipChallengePayload``): a fresh 8-byte challenge for the chip to sign (ICAO 9303-11
    /// §6.1), valid for this one upload; absent when the server verifies no chips.
    public var chipChallenge: ChipChallengePayload?
    enum CodingKeys: String, CodingKey { case maxPages = "max_pages", mediaTypes = "media_types", chipChallenge = "chip_challenge" }
    public init(maxPages: Int, mediaTypes: [String] = CaptureMediaTypes.accepted, chipChallenge: ChipChallengePayload? = nil) {
        self.maxPages = maxPages
        self.mediaTypes = mediaTypes
        self.chipChallenge = chipChallenge
    }
}

/// The `payload` of `uploadIDVSelfieFrames`: what the server accepts in the ``SelfieFramesAnswer``,
/// the capture's challenge under active liveness (or a presence fallback), its presence challenge,
/// and after a `LIVENESS_FAILED` capture (opt-in)
/// the reasons a person can act on.
public struct SelfieUploadRequest: Codable, Equatable, Sendable {
    /// Most frames in one upload (`idv.max_frames`).
    public var maxFrames: Int
    /// The image types accepted (`image/jpeg`, `image/png`).
    public var mediaTypes: [String]
    public var livenessChallenge: LivenessChallenge?
    /// Liveness cues a person can act on (`CHALLENGE_NOT_MET`, `NO_FACE`, …), never the attack cues.
    public var livenessReasons: [String]?
    /// Presence (PresencePayloads.swift): the illumination sequence to flash while capturing, or
    /// the fallback given after the client said it cannot flash; nil when the server checks none.
    public var presence: PresenceChallengePayload?
    enum CodingKeys: String, CodingKey {
        case maxFrames = "max_frames", mediaTypes = "media_types", livenessChallenge = "liveness_challenge", livenessReasons = "liveness_reasons"
        case presence
    }
    public init(maxFrames: Int, mediaTypes: [String] = CaptureMediaTypes.accepted, livenessChallenge: LivenessChallenge? = nil,
                livenessReasons: [String]? = nil, presence: PresenceChallengePayload? = nil) {
        self.maxFrames = maxFrames
        self.mediaTypes = mediaTypes
        self.livenessChallenge = livenessChallenge
        self.livenessReasons = livenessReasons
        self.presence = presence
    }
}

/// The image types the capture uploads accept.
public enum CaptureMediaTypes {
    public static let accepted = ["image/jpeg", "image/png"]
}
