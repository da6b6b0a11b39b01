import Foundation

// Presentation-attack detection (ISO/IEC 30107-3 PAD) evidence of one selfie capture, in typed form:
// what each cue measured, calibrated, with how much good material it rests on. No verdict: the
// server's policy (IDVEngine `WorkflowPolicy.judgePAD`) tells confident attack evidence from a
// capture it is unsure about (asked again with guidance) and from bona fide evidence.

/// How the liveness evidence was made and what each cue said.
public struct PADEvidence: Sendable, Equatable, Codable {
    /// The analyser's fusion rule, e.g. `texture-motion-v3` (docs/LIVENESS.md).
    public var rule: String
    /// The texture PAD models' raw sequence score, 0–1 (MiniFASNet bona fide probability aggregated
    /// over the scored frames; higher = more likely bona fide); nil when no frame was scored. Audited.
    public var textureScore: Double?
    /// The previous, motion-only rule's score on the same capture, 0–100 (audited for comparison).
    public var motionOnlyScore: Int?
    /// The texture cue, calibrated (nil: no frame could be scored, or an analyser that does not
    /// report it — the policy then judges the liveness score alone).
    public var texture: TextureCue?
    /// Non-rigid landmark motion, a strength in 0…1 whose decision line is 0.5 (FaceKit
    /// `SelfieAnalyzer.motionStrength`: the face's 68 landmarks are not explained by one homography
    /// of a flat picture); nil when not measurable (fewer than two tracked frames).
    public var motion: Double?
    /// Passive mode: facial action (a genuine blink, or the mouth or eye opening changing), a
    /// strength in 0…1 whose decision line is 0.5; nil in active mode.
    public var facialAction: Double?
    /// Active mode: one strength per challenged action (1 seen in order, 0 not); nil in passive mode.
    public var challenge: [Double]?

    public init(rule: String, textureScore: Double?, motionOnlyScore: Int?, texture: TextureCue? = nil, motion: Double? = nil,
                facialAction: Double? = nil, challenge: [Double]? = nil) {
        self.rule = rule
        self.textureScore = textureScore
        self.motionOnlyScore = motionOnlyScore
        self.texture = texture
        self.motion = motion
        self.facialAction = facialAction
        self.challenge = challenge
    }
}

/// The texture cue of one capture: how strongly the face's texture speaks for a live face rather
/// than a print or a screen, and on how many good frames that rests.
public struct TextureCue: Sendable, Equatable, Codable {
    /// Calibrated log-odds (natural logarithm) of "bona fide" against "print or screen": the median
    /// over the good frames of the per-frame MiniFASNet log-odds, mapped by the analyser's
    /// calibration fitted on the development split (FaceKit `TextureCalibration`, docs/LIVENESS.md).
    /// 0 is even odds; +2.2 is 9 : 1 for bona fide, −2.2 is 9 : 1 for an attack.
    public var logOdds: Double
    /// Frames of good quality (sharp, frontal, the face's crop inside the frame) the median rests on.
    public var goodFrames: Int
    /// Frames the texture models scored (good or not).
    public var scoredFrames: Int

    public init(logOdds: Double, goodFrames: Int, scoredFrames: Int) {
        self.logOdds = logOdds
        self.goodFrames = goodFrames
        self.scoredFrames = scoredFrames
    }

    enum CodingKeys: String, CodingKey {
        case logOdds = "log_odds", goodFrames = "good_frames", scoredFrames = "scored_frames"
    }
}
