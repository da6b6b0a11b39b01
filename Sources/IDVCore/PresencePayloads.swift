import Foundation

// Presence by screen illumination (issue #39): the wire shapes of the challenge the server issues
// with `uploadIDVSelfieFrames` and of the client's answer, defined once for the server, IDVKit and
// (mirrored in protocol.js) the hosted page. docs/WORKFLOWS.md "uploadIDVSelfieFrames", docs/PROTOCOL.md.
//
// Challenge payload (server → client):
//
//     {"max_frames": 150, "media_types": […],
//      "presence": {"illumination": [{"rgb": [255, 0, 0], "ms": 350}, …], "expires_at": 1796000223}}
//
// after a client said it cannot flash (the policy's fallback):
//
//     {"max_frames": 150, "media_types": […], "presence": {"fallback": "active"}, "liveness_challenge": {…}}
//
// Answers (client → server): the frames with each frame's capture time from the start of the
// sequence, `{"frames": [b64, …], "fps": 10, "frame_times_ms": [40.5, 140.2, …]}`; or no frames and
// `{"presence": {"illumination": "unavailable"}}` (this device cannot flash) /
// `{"presence": {"illumination": "declined"}}` (the person chose the head movements instead).

/// One step of the server's illumination sequence: `{"rgb": [r, g, b], "ms": n}` — show the colour
/// (sRGB, 0–255 per channel) full screen at maximum brightness for `ms` milliseconds.
public struct IlluminationStepPayload: Codable, Equatable, Sendable {
    /// Red, green, blue, 0–255 each.
    public var rgb: [Int]
    /// How long the colour is shown, milliseconds (100–5000).
    public var ms: Int

    public init(rgb: [Int], ms: Int) {
        self.rgb = rgb
        self.ms = ms
    }

    /// Why a step is not usable.
    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// Checks the ranges.
    /// - Throws: ``Invalid`` naming the problem.
    public func validate() throws(Invalid) {
        guard rgb.count == 3, rgb.allSatisfy({ (0...255).contains($0) }) else { throw Invalid("rgb must be three integers 0–255") }
        guard (100...5000).contains(ms) else { throw Invalid("ms must be 100–5000") }
    }

    /// `#rrggbb`, as a style sheet writes the colour.
    public var hex: String { String(format: "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]) }
}

/// What the server gave a client that cannot flash (`presence.fallback`; `idv.presence_fallback`).
public enum PresenceFallback: OpenStringVocabulary {
    /// The active head-movement challenge (`liveness_challenge`), at a lower assurance level.
    case active
    /// Passive liveness only, at a lower assurance level.
    case passive
    /// Any other value (a newer server), kept verbatim.
    case other(String)

    public var rawValue: String {
        switch self {
        case .active: return "active"
        case .passive: return "passive"
        case let .other(s): return s
        }
    }
    public static let knownValues: [PresenceFallback] = [.active, .passive]
}

/// `payload.presence` of `uploadIDVSelfieFrames`: the illumination sequence to flash while
/// capturing, or the fallback the policy gave after the client said it cannot flash. Absent when
/// the server does not check presence (`idv.presence = off`).
public struct PresenceChallengePayload: Codable, Equatable, Sendable {
    /// The sequence, in the order shown, from time 0 (the first step's start); nil under a fallback.
    public var illumination: [IlluminationStepPayload]?
    /// Unix seconds after which frames are no longer judged against the sequence (the step's
    /// deadline, `idv.presence_deadline_seconds` after the challenge).
    public var expiresAt: Int?
    /// Set instead of `illumination` after the client declined: what the capture is judged by now.
    public var fallback: PresenceFallback?

    enum CodingKeys: String, CodingKey {
        case illumination, fallback
        case expiresAt = "expires_at"
    }

    public init(illumination: [IlluminationStepPayload]? = nil, expiresAt: Int? = nil, fallback: PresenceFallback? = nil) {
        self.illumination = illumination
        self.expiresAt = expiresAt
        self.fallback = fallback
    }

    /// The `presence` key of a challenge payload.
    public static let key = "presence"

    /// The presence of a challenge's `payload`, or nil when it has none or it is malformed.
    public init?(payload: JSONValue) {
        guard let p = payload[Self.key], !p.isNull, let v = try? p.decode(PresenceChallengePayload.self) else { return nil }
        self = v
    }

    /// The sequence's length, milliseconds (0 without one).
    public var totalMilliseconds: Int { illumination?.reduce(0) { $0 + $1.ms } ?? 0 }
}

/// Why a client answered without flashing (`{"presence": {"illumination": …}}`).
public enum IlluminationDecline: OpenStringVocabulary {
    /// The device cannot flash its screen (a desk camera, a client without the feature).
    case unavailable
    /// The person chose not to (sensitivity to flashing light): the head-movement challenge instead.
    case declined
    /// Any other value: refused by the server (1001).
    case other(String)

    public var rawValue: String {
        switch self {
        case .unavailable: return "unavailable"
        case .declined: return "declined"
        case let .other(s): return s
        }
    }
    public static let knownValues: [IlluminationDecline] = [.unavailable, .declined]
}

/// `payload.presence` of an `uploadIDVSelfieFrames` answer without frames: the client did not flash.
public struct PresenceAnswerPayload: Codable, Equatable, Sendable {
    public var illumination: IlluminationDecline
    public init(illumination: IlluminationDecline) { self.illumination = illumination }
}

/// The presence fields of a selfie upload answer, by name, and their rules.
public enum PresenceAnswer {
    /// `frame_times_ms`: each frame's capture time, milliseconds from the start of the sequence.
    public static let frameTimesKey = "frame_times_ms"
    /// Earliest and latest frame time accepted, milliseconds (a capture may start a little before
    /// the sequence; none lasts a minute).
    public static let frameTimeRange: ClosedRange<Double> = -10_000...60_000

    /// Checks an answer's `frame_times_ms` for `frameCount` frames: one finite number per frame,
    /// each in ``frameTimeRange``, never decreasing.
    /// - Throws: ``PayloadError`` (`.invalidValue`) naming `frame_times_ms` or the failing element.
    public static func validate(frameTimes: [Double], frameCount: Int) throws(PayloadError) {
        guard frameTimes.count == frameCount else {
            throw PayloadError(kind: .invalidValue, fieldPath: frameTimesKey,
                               reason: "expected one time per frame (\(frameCount)), found \(frameTimes.count)")
        }
        var last = -Double.infinity
        for (i, t) in frameTimes.enumerated() {
            guard t.isFinite, frameTimeRange.contains(t) else {
                throw PayloadError(kind: .invalidValue, fieldPath: "\(frameTimesKey)[\(i)]", reason: "expected -10000…60000 ms")
            }
            guard t >= last else {
                throw PayloadError(kind: .invalidValue, fieldPath: "\(frameTimesKey)[\(i)]", reason: "frame times must not decrease")
            }
            last = t
        }
    }
}

/// How strongly a selfie capture was shown to come from a live camera in this session (recorded in
/// the audit and the run's outcome; `presence_assurance`).
public enum PresenceAssurance: String, Codable, Sendable, CaseIterable {
    /// The reflected light followed the server's illumination sequence.
    case illumination
    /// The client could not flash (or the person declined): judged by the active head-movement challenge.
    case fallbackActive = "fallback_active"
    /// The client could not flash: judged by passive liveness only.
    case fallbackPassive = "fallback_passive"
    /// The server does not check presence (`idv.presence = off`).
    case notChecked = "not_checked"
}
