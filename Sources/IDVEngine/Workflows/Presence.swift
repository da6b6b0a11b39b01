import Foundation
import IDVCore

// Presence the server can check (issue #39): the selfie upload challenge carries a server-chosen,
// single-use illumination sequence (`payload.presence.illumination`, IDVCore PresencePayloads.swift)
// that the client's screen flashes while it records; the analyser measures whether the face's
// reflected light followed it (IDVEvidence `PresenceEvidence`); this policy judges. A client that
// cannot flash says so and gets the policy's fallback, at a lower assurance recorded in the audit
// and the run's outcome. Frames byte-for-byte equal to frames of an earlier upload (their digests
// are kept `idv.capture_replay_seconds` in the store) fail too. docs/WORKFLOWS.md, docs/LIVENESS.md.
//
// The sequence lives in the pending challenge's payload, which the session row keeps sealed
// (docs/PROTOCOL.md §5): the answer's parse reads it from there, never from the client, and it is
// used up with the challenge (every ask of `uploadIDVSelfieFrames` carries a new one).

/// The presence settings (`idv.presence*`, `idv.capture_replay_seconds`), part of ``WorkflowPolicy``.
public struct PresencePolicy: Sendable, Equatable {
    /// What the server asks of a selfie capture.
    public enum Mode: String, Sendable, CaseIterable {
        /// A server-chosen illumination sequence the screen flashes during the capture (default).
        case illumination
        /// Nothing: presence is not checked (assurance `not_checked`).
        case off
    }

    /// What a client that cannot flash (or a person who declines) gets instead.
    public enum Fallback: String, Sendable, CaseIterable {
        /// The active head-movement challenge (`liveness_challenge`), assurance `fallback_active` (default).
        case active
        /// Passive liveness, assurance `fallback_passive`.
        case passive
        /// Nothing: the capture must follow the illumination (the decline is refused with 1070).
        case refuse
    }

    public var mode = Mode.illumination
    public var fallback = Fallback.active
    /// The frames must arrive within this many seconds of the challenge; later, the sequence is
    /// not followed (`PRESENCE_EXPIRED`). Default 120.
    public var deadlineSeconds = 120
    /// How long the digests of every judged capture's frames are kept, seconds; a frame equal byte
    /// for byte to one of them fails the capture (`REPLAYED_FRAMES`). 0 = no replay check. Default
    /// 604 800 (7 days).
    public var replaySeconds = 604_800
    /// A capture whose reflected light was measured on enough steps but did not reach the
    /// analyser's false-accept line, with a p-value at most this (its rank among random sequences,
    /// IDVEvidence `IlluminationMeasurement.pValue`), is unsure — a real face in bright surroundings
    /// or held far from the screen, whose reflection is faint — and is asked again once per attempt
    /// under a new sequence (1071 `presenceRetake`), no attempt used. 0 = never: every capture that
    /// did not follow is LIVENESS_FAILED. A capture made without knowledge of the sequence has a
    /// uniform p-value, so it reaches the retake with probability at most this, and the false-accept
    /// rate of the two captures together is at most FAR × (1 + retakePValue) (1.1 × 0.001 by
    /// default). Default 0.1 (docs/LIVENESS.md "Presence": the bona fide captures rejected in
    /// bright light had p 0.0015–0.097).
    public var retakePValue = 0.1

    public init() {}

    /// Whether a capture whose light was not shown to follow its sequence, at `pValue` (nil: not
    /// measured), is asked again under ``retakePValue`` (`idvd bench presence` applies the same rule).
    public func retakes(pValue: Double?) -> Bool {
        guard retakePValue > 0, let p = pValue else { return false }
        return p <= retakePValue
    }
}

/// A capture's illumination as the analyser needs it: the issued steps and each frame's time.
public struct IlluminationCapture: Sendable, Equatable {
    /// The sequence the server issued (from the sealed pending challenge).
    public var steps: [IlluminationStepPayload]
    /// Each frame's capture time, milliseconds from the start of the sequence (the client's `frame_times_ms`).
    public var frameTimesMs: [Double]
    public init(steps: [IlluminationStepPayload], frameTimesMs: [Double]) {
        self.steps = steps
        self.frameTimesMs = frameTimesMs
    }
}

/// What the server asked of a capture, as the answer's parse found it in the pending challenge.
public enum CapturePresence: Sendable, Equatable {
    /// Nothing (`idv.presence = off`, or an analyser that cannot check illumination).
    case none
    /// The issued sequence, its deadline (Unix seconds) and the frames' times.
    case illumination(IlluminationCapture, expiresAt: Int)
    /// The client declined; the capture is judged by the fallback.
    case fallback(PresenceFallback)

    /// The assurance a live capture judged under this presence reaches.
    public var assurance: PresenceAssurance {
        switch self {
        case .none: return .notChecked
        case .illumination: return .illumination
        case .fallback(.active): return .fallbackActive
        case .fallback: return .fallbackPassive
        }
    }

    /// The analyser's input (nil unless a sequence was issued).
    public var illumination: IlluminationCapture? {
        if case let .illumination(c, _) = self { return c }
        return nil
    }
}

extension LivenessCue {
    /// The flow's presence cues (the policy adds them; the reader never does):
    /// the reflected light did not follow the issued illumination sequence.
    public static let illuminationNotFollowed = LivenessCue("ILLUMINATION_NOT_FOLLOWED")
    /// The frames arrived after the illumination challenge's deadline.
    public static let presenceExpired = LivenessCue("PRESENCE_EXPIRED")
    /// A frame is byte for byte a frame of an earlier upload.
    public static let replayedFrames = LivenessCue("REPLAYED_FRAMES")
}

extension WorkflowPolicy {
    /// The presence part of the selfie verdict: the reason a capture fails presence (with its cue
    /// added to `cues`), or nil when it passes. In order: a frame replayed from an earlier upload
    /// (`replayedFrames` > 0); an issued sequence past its deadline at `now` (Unix seconds); the
    /// evidence not `.followed` under an issued sequence. A fallback or no presence adds nothing
    /// here (the fallback's challenge is judged as any active challenge).
    public func presenceFailure(_ e: SelfieEvidence, presence: CapturePresence, replayedFrames: Int, now: Int,
                                cues: inout [LivenessCue]) -> SelfieReason? {
        if replayedFrames > 0 {
            cues.append(.replayedFrames)
            return .replayedCapture
        }
        guard case let .illumination(_, expiresAt) = presence else { return nil }
        if now > expiresAt {
            cues.append(.presenceExpired)
            return .presenceExpired
        }
        if case .followed = e.presence { return nil }
        cues.append(.illuminationNotFollowed)
        return .presenceNotFollowed
    }
}

extension WorkflowPolicy {
    /// Whether a capture that failed presence (`reason`, from ``presenceFailure(_:presence:replayedFrames:now:cues:)``)
    /// is unsure rather than refused: its light was not shown to follow the sequence, but it was
    /// measured (a p-value exists: enough steps held a face) and ranks within
    /// ``PresencePolicy/retakePValue`` — the policy asks it again once (1071). A replayed or late
    /// capture, or one not measured, is never unsure.
    public func presenceUnsure(_ e: SelfieEvidence, reason: SelfieReason?) -> Bool {
        guard reason == .presenceNotFollowed, case let .notFollowed(m) = e.presence else { return false }
        return presence.retakes(pValue: m.pValue)
    }
}

/// The digests the engine keeps of judged captures' frames (SQLite and PostgreSQL migration 12,
/// `capture_digests`): the first 16 bytes of SHA-256 of a frame's bytes, as 32 hex digits.
public protocol CaptureDigestStore: Sendable {
    /// How many of `digests` are kept and not expired at `now` (Unix seconds).
    func knownCaptureDigests(_ digests: [String], now: Int) throws -> Int
    /// Keeps `digests` until `expiresAt` (a digest kept already keeps its first sighting).
    func recordCaptureDigests(_ digests: [String], seenAt: Int, expiresAt: Int) throws
    /// Deletes the digests expired at `now`; returns how many.
    @discardableResult
    func purgeExpiredCaptureDigests(now: Int) throws -> Int
}

extension IDVFlowSteps {
    /// The `presence` of a fresh `uploadIDVSelfieFrames` ask: a new illumination sequence from the
    /// analyser, due `idv.presence_deadline_seconds` after `now`; nil when presence is off or the
    /// analyser cannot check illumination.
    func freshPresence(now: Int, _ env: FlowEnv) -> PresenceChallengePayload? {
        guard env.policy.presence.mode == .illumination, let steps = services.selfies?.issueIllumination() else { return nil }
        return PresenceChallengePayload(illumination: steps, expiresAt: now + env.policy.presence.deadlineSeconds)
    }

    /// The presence of an upload answer, read against the pending challenge `ch` (the sealed copy of
    /// what the server asked): frames with `frame_times_ms` under an issued sequence are judged
    /// against it; frames without times under an issued sequence decline it (nil: the caller asks
    /// the fallback); under a fallback or no presence, the frames are judged as asked. 1001 for
    /// malformed times.
    static func capturePresence(_ a: SelfieFramesAnswer, _ ch: PendingChallenge, frameCount: Int) throws -> CapturePresence? {
        if let times = a.frameTimesMs {
            do { try PresenceAnswer.validate(frameTimes: times, frameCount: frameCount) } catch {
                throw IDVError(.malformedRequest, "payload.\(error.description)")
            }
        }
        guard let asked = ch.presence else { return CapturePresence.none }
        if let fallback = asked.fallback { return .fallback(fallback) }
        guard let steps = asked.illumination else { return CapturePresence.none }
        guard let times = a.frameTimesMs else { return nil }
        return .illumination(IlluminationCapture(steps: steps, frameTimesMs: times), expiresAt: asked.expiresAt ?? Int.max)
    }

    /// The decline of an upload answer without frames (`{"presence": {"illumination": …}}`), or nil
    /// when the answer has no `presence`. 1001 for anything but a known decline, or a decline of a
    /// challenge that issued no sequence.
    static func presenceDecline(_ a: SelfieFramesAnswer, _ ch: PendingChallenge) throws -> IlluminationDecline? {
        guard let d = a.presence else { return nil }
        guard d.illumination.isKnown else {
            throw IDVError(.malformedRequest, "payload.presence must be {\"illumination\": \"unavailable\"} or {\"illumination\": \"declined\"}")
        }
        guard ch.presence?.illumination != nil else {
            throw IDVError(.malformedRequest, "payload.presence declines an illumination sequence, but this challenge issued none")
        }
        return d.illumination
    }

    /// A declined illumination sequence (`how`: `unavailable`, `declined`, `no_frame_times`): the same
    /// upload asked again, no attempt used, with the policy's fallback — the head-movement challenge
    /// (`active`), passive liveness (`passive`) — or, under `refuse`, a fresh sequence with 1070.
    /// The head-movement fallback keeps the capture's `pending` challenge when it has one (active
    /// liveness: no frames were judged, so nothing was learnt from it, and a decline is no new draw
    /// of the user's challenges). Audited `idv.presence_declined`.
    func declinePresence(_ r: IDVRun, how: String, pending: LivenessChallenge?, now: Int, _ env: FlowEnv,
                         _ effects: inout [Effect]) -> StepResult<SelfieStep> {
        effects.append(audit(r, "presence_declined", ["how": .string(how), "fallback": .string(env.policy.presence.fallback.rawValue)]))
        switch env.policy.presence.fallback {
        case .refuse:
            return askSelfieUpload(r, challenge: nil, now: now, env, error: IDVError(.presenceRequired))
        case .active:
            return askSelfieUpload(r, challenge: pending ?? issueChallenge(now: now, env), now: now, env,
                                   presence: PresenceChallengePayload(fallback: .active))
        case .passive:
            return askSelfieUpload(r, challenge: nil, now: now, env, presence: PresenceChallengePayload(fallback: .passive))
        }
    }
}

extension PendingChallenge {
    /// The presence the server asked with an `uploadIDVSelfieFrames` challenge (its sealed
    /// ``SelfieUploadRequest/presence``); nil for any other challenge or none asked.
    var presence: PresenceChallengePayload? { try? payload.decode(SelfieUploadRequest.self).presence }
}

/// The replay check's digests.
public enum CaptureDigests {
    /// The distinct digests of a capture's frames, sorted: the first 16 bytes of SHA-256 of each
    /// frame's bytes, as 32 hex digits (a frame repeated inside one capture counts once).
    public static func of(_ frames: [Data], crypto: any EngineCrypto) -> [String] {
        Array(Set(frames.map { Hex.encode(Array(crypto.sha256(Array($0)).prefix(16))) })).sorted()
    }
}
