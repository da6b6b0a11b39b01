import Foundation

/// How the liveness cues become one liveness score (0–100): a pure function of the cue strengths,
/// so the rule can be tested, calibrated and re-run on recorded evidence (`idvd bench liveness`
/// prints every rule's figures from one run). `docs/LIVENESS.md` says what was chosen on which data.
///
/// Every input is a strength in 0…1 whose decision line is 0.5 (see `LivenessFusion.Inputs`).
public enum LivenessFusion {
    /// A fusion rule. Raw values are recorded with the evidence (`LivenessReport.fusionRule`).
    public enum Rule: String, Sendable, Codable, CaseIterable {
        /// The method before texture PAD (`docs/LIVENESS.md`, "previous method"): every required
        /// motion cue — facial action (passive) or each challenged action (active), and the
        /// non-rigid landmark motion — must pass. Texture is ignored.
        case motion = "motion-v1"
        /// Texture PAD fused with the motion cues (chosen on the development split, docs/LIVENESS.md):
        /// facial action (or the challenge) AND texture AND non-rigid motion. The texture is the
        /// calibrated log-odds of MiniFASNet on the crops of its own detector's box (`TextureCalibration`);
        /// unlike `texture-motion-v2` (which this replaces), strong texture never stands in for the
        /// landmark motion: the texture models do not see a digitally made print at all, and motion
        /// is its only evidence. This is the analyser's one-capture summary; the server's policy
        /// reads the same cues and asks again where it is unsure (IDVEngine `judgePAD`).
        case textureMotion = "texture-motion-v3"
    }

    /// The cue strengths (0…1, decision line 0.5 each) a rule combines.
    public struct Inputs: Sendable, Hashable, Codable {
        /// Passive: the stronger of the blink and expression-dynamics strengths; nil in active mode.
        public var facialAction: Double?
        /// Active: one strength per challenged action (1 seen in order, 0 not); nil in passive mode.
        public var challenge: [Double]?
        /// Non-rigid landmark motion (`SelfieAnalyzer.motionStrength`).
        public var motion: Double
        /// Texture PAD strength (`textureStrength`); nil when no frame was scored (no model, no face).
        public var texture: Double?

        public init(facialAction: Double?, challenge: [Double]?, motion: Double, texture: Double?) {
            self.facialAction = facialAction
            self.challenge = challenge
            self.motion = motion
            self.texture = texture
        }

        enum CodingKeys: String, CodingKey {
            case facialAction = "facial_action", challenge, motion, texture
        }
    }

    /// Parameters of the texture cue (defaults chosen on the development split, `docs/LIVENESS.md`).
    public struct TextureLevels: Sendable, Hashable, Codable {
        /// Calibrated texture log-odds (`TextureEvidence.logOdds`) at the cue's decision line
        /// (strength 0.5). Default −1.6: the server policy's default `idv.pad.texture_line`, midway
        /// on the development split between the highest screen the texture sees (a simulated laptop
        /// screen, −1.88) and the lowest bona fide window (−1.26).
        public var line: Double
        /// Log-odds over which the strength goes from 0.5 to about 0.73 (and down to 0.27): the
        /// strength is the logistic function of `(logOdds − line) / scale`. Default 1.
        public var scale: Double

        public init(line: Double = -1.6, scale: Double = 1) {
            self.line = line
            self.scale = scale
        }
    }

    /// The texture strength (0…1, 0.5 at `levels.line`) of calibrated log-odds: the logistic
    /// function of `(logOdds − line) / scale`.
    public static func textureStrength(_ logOdds: Double, levels: TextureLevels) -> Double {
        let z = (logOdds - levels.line) / max(1e-6, levels.scale)
        return z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z))
    }

    /// What a rule made of the inputs.
    public struct Outcome: Sendable, Hashable, Codable {
        /// 0–100: 0 when blocked; 1–49 when a required cue failed (`49 × mean strength`); 50–100
        /// when every required cue passed (`50 + 100 × (mean strength − 0.5)`).
        public var score: Int
        /// The cues below their lines (`NO_BLINK`, `RIGID_MOTION`, `CHALLENGE_NOT_MET`, `TEXTURE_ATTACK`).
        public var failed: [LivenessReason]
    }

    /// Applies `rule`. `blocked` (a blocking reason such as no face) forces score 0.
    /// `measurable` is false when there was no motion to measure (fewer than two tracked frames):
    /// the motion cues then give no reason of their own.
    public static func apply(_ rule: Rule, _ inputs: Inputs, blocked: Bool, measurable: Bool = true) -> Outcome {
        var failed: [LivenessReason] = []
        var required: [Double] = []
        if let challenge = inputs.challenge {
            required += challenge
            if challenge.contains(where: { $0 < 0.5 }) { failed.append(.challengeNotMet) }
        } else {
            let action = inputs.facialAction ?? 0
            required.append(action)
            if action < 0.5, measurable { failed.append(.noBlink) }
        }
        switch rule {
        case .motion:
            required.append(inputs.motion)
            if inputs.motion < 0.5, measurable { failed.append(.rigidMotion) }
        case .textureMotion:
            // No scored frame (no texture evidence) fails without a texture reason of its own.
            let t = inputs.texture ?? 0
            required.append(t)
            if let texture = inputs.texture, texture < 0.5 { failed.append(.textureAttack) }
            required.append(inputs.motion)
            if inputs.motion < 0.5, measurable { failed.append(.rigidMotion) }
        }
        if blocked { return Outcome(score: 0, failed: failed) }
        let mean = required.reduce(0, +) / Double(max(1, required.count))
        let score = required.allSatisfy({ $0 >= 0.5 })
            ? min(100, max(50, 50 + Int((50 * (mean - 0.5) / 0.5).rounded())))
            : min(49, max(0, Int((49 * mean).rounded())))
        return Outcome(score: score, failed: failed)
    }
}
