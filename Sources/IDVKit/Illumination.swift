import Foundation
import IDVCore

/// One step of the server's illumination sequence: show this colour full screen, at maximum
/// brightness, for `milliseconds` (IDVCore ``IlluminationStepPayload`` on the wire).
public struct RDNAIlluminationStep: Sendable, Equatable {
    /// sRGB, 0–255 each.
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var milliseconds: Int

    public init(red: UInt8, green: UInt8, blue: UInt8, milliseconds: Int) {
        self.red = red
        self.green = green
        self.blue = blue
        self.milliseconds = milliseconds
    }
}

/// The server's illumination challenge for one selfie capture (`payload.presence.illumination` of
/// `uploadIDVSelfieFrames`, docs/WORKFLOWS.md): a random colour sequence, chosen by the server for
/// this capture only, that the screen must flash while the front camera records. The face, close to
/// the screen, reflects each colour; the server checks that the frames follow the sequence in order
/// and in time, so a recording or an injected video cannot pass (docs/LIVENESS.md "Presence").
///
/// A provider that can flash (``SelfieCaptureProvider/canFlashIllumination``) shows ``steps`` one
/// after the other from the moment it calls time 0, records with the front camera throughout, and
/// returns each frame's capture time in milliseconds from that moment
/// (``CapturedSelfie/frameTimesMs``). Before it starts it shows ``photosensitivityWarning`` and lets
/// the person choose the head-movement check instead (throw ``CaptureError/illuminationDeclined``).
public struct RDNAIlluminationChallenge: Sendable, Equatable {
    /// The colours, in order, from time 0.
    public var steps: [RDNAIlluminationStep]
    /// After this (server clock) the frames are no longer judged against the sequence.
    public var expiresAt: Date?

    public init(steps: [RDNAIlluminationStep], expiresAt: Date?) {
        self.steps = steps
        self.expiresAt = expiresAt
    }

    /// The challenge of an `uploadIDVSelfieFrames` payload, or nil when it asks for none (presence
    /// off, or a fallback after the client said it cannot flash) or it is malformed.
    public init?(payload: JSONValue) {
        guard let p = PresenceChallengePayload(payload: payload), let steps = p.illumination, !steps.isEmpty,
              steps.allSatisfy({ (try? $0.validate()) != nil }) else { return nil }
        self.steps = steps.map { RDNAIlluminationStep(red: UInt8($0.rgb[0]), green: UInt8($0.rgb[1]), blue: UInt8($0.rgb[2]), milliseconds: $0.ms) }
        expiresAt = p.expiresAt.map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    /// The sequence's length, milliseconds: record at least this long (and a frame interval more).
    public var totalMilliseconds: Int { steps.reduce(0) { $0 + $1.milliseconds } }

    /// When each step starts, milliseconds from time 0.
    public var onsetsMs: [Int] {
        var t = 0
        return steps.map { s in defer { t += s.milliseconds }; return t }
    }

    /// The step shown at `milliseconds` from time 0 (nil before 0 or after the end).
    public func step(at milliseconds: Double) -> RDNAIlluminationStep? {
        guard milliseconds >= 0 else { return nil }
        var end = 0.0
        for s in steps {
            end += Double(s.milliseconds)
            if milliseconds < end { return s }
        }
        return nil
    }

    /// What to tell the person before the screen flashes (WCAG 2.1 §2.3: the steps change at most
    /// 3.3 times a second, but full-screen colour changes can still affect people with
    /// photosensitive epilepsy).
    public static let photosensitivityWarning = "Your screen will flash bright colours for about 3 seconds while the camera records. "
        + "If flashing light can affect you, choose the head-movement check instead."
}

extension CaptureError {
    /// The person chose not to have the screen flash (the photosensitivity warning's other choice):
    /// the SDK tells the server (`{"presence": {"illumination": "declined"}}`) and the server asks
    /// for the capture again with its fallback (usually the head-movement challenge).
    public static let illuminationDeclined: CaptureError = CaptureError("the person chose the head-movement check instead of the flashing screen")
}
