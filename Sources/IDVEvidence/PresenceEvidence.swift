import Foundation

// Presence evidence: whether the light the face reflected followed the server's illumination
// sequence (issue #39). The reader measures and tests; `WorkflowPolicy` (IDVEngine) judges.

/// What the analyser measured of the screen's light on the capture: the score of the issued
/// sequence, its rank among random sequences, and how much of the sequence the frames covered
/// (FaceKit `IlluminationReport`).
public struct IlluminationMeasurement: Sendable, Equatable, Codable {
    /// Correlation (−1…1) of the face-to-background colour of each step with the step's screen colour.
    public var score: Double?
    /// The issued sequence's p-value among random sequences of the same generator: the chance that a
    /// capture made without knowledge of the sequence scores at least as well (nil when not measured).
    public var pValue: Double?
    /// Steps with at least one usable frame, of the sequence's steps.
    public var stepsMeasured: Int
    public var steps: Int
    /// Why the sequence was not followed (the reader's word, e.g. `not_distinguished`,
    /// `too_few_steps`, `weak_response`, `frame_times_invalid`); nil when followed.
    public var failure: String?

    enum CodingKeys: String, CodingKey {
        case score, steps, failure
        case pValue = "p_value"
        case stepsMeasured = "steps_measured"
    }

    public init(score: Double?, pValue: Double?, stepsMeasured: Int, steps: Int, failure: String? = nil) {
        self.score = score
        self.pValue = pValue
        self.stepsMeasured = stepsMeasured
        self.steps = steps
        self.failure = failure
    }
}

/// Presence evidence of a selfie capture (an injection defence: a recording or an injected video
/// cannot know the sequence the server chose for this session).
public enum PresenceEvidence: Sendable, Equatable {
    /// The reflected light followed the issued sequence, in order and in time, at the analyser's
    /// stated false-accept rate.
    case followed(IlluminationMeasurement)
    /// It did not (no reflection, another sequence, late, or too little of it measured).
    case notFollowed(IlluminationMeasurement)
    /// No illumination was asked of this capture, or the analyser cannot check it.
    case notOffered

    /// The measurement, when there was one.
    public var measurement: IlluminationMeasurement? {
        switch self {
        case let .followed(m), let .notFollowed(m): return m
        case .notOffered: return nil
        }
    }

    /// The word the audit records: `followed`, `not_followed`, `not_offered`.
    public var name: String {
        switch self {
        case .followed: return "followed"
        case .notFollowed: return "not_followed"
        case .notOffered: return "not_offered"
        }
    }
}
