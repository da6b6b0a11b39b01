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
        /// facial action (or the challenge) AND texture AND (non-rigid motion OR (strong texture AND
        /// strong facial action)). A face the texture models call a print or a screen fails whatever
        /// it does. People sitting still move like a plane, so a window that looks alive on every
        /// scored frame (`TextureLevels.strong`) and shows facial action well above its line
        /// (`TextureLevels.strongAction`) passes without the non-rigid motion cue; the action margin
        /// is there because the texture models do not see a digitally made print at all.
        case textureMotion = "texture-motion-v2"
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
        /// Aggregated bona fide probability (`TextureEvidence.score`, the 10th percentile over the
        /// scored frames) at the cue's decision line (strength 0.5). Default 0.7: on the development
        /// split every bona fide window but the two of one clip reaches ≥ 0.76, 17 of 20 simulated
        /// screens filling the view stay below it.
        public var line: Double
        /// Bona fide probability from which the texture, with strong facial action, stands in for the
        /// non-rigid motion cue (strength `strongStrength`). Default 0.9.
        public var strong: Double
        /// Facial-action (or least challenge-action) strength needed for that. Default 0.6 (the line
        /// is 0.5; the weakest development bona fide window that needs it shows 0.70).
        public var strongAction: Double

        public init(line: Double = 0.7, strong: Double = 0.9, strongAction: Double = 0.6) {
            self.line = line
            self.strong = strong
            self.strongAction = strongAction
        }

        /// The strength of `strong` on the 0…1 strength scale.
        public var strongStrength: Double { LivenessFusion.textureStrength(strong, levels: self) }
    }

    /// The texture strength of an aggregated bona fide probability `p` (0…1): piecewise linear,
    /// 0 at 0, 0.5 at `levels.line`, 1 at 1.
    public static func textureStrength(_ p: Double, levels: TextureLevels) -> Double {
        let line = min(max(levels.line, 1e-6), 1 - 1e-6)
        let q = min(1, max(0, p))
        return q < line ? 0.5 * q / line : 0.5 + 0.5 * (q - line) / (1 - line)
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
    public static func apply(_ rule: Rule, _ inputs: Inputs, levels: TextureLevels = .init(), blocked: Bool,
                             measurable: Bool = true) -> Outcome {
        var failed: [LivenessReason] = []
        var required: [Double] = []
        let action: Double
        if let challenge = inputs.challenge {
            required += challenge
            action = challenge.min() ?? 0
            if challenge.contains(where: { $0 < 0.5 }) { failed.append(.challengeNotMet) }
        } else {
            action = inputs.facialAction ?? 0
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
            // Motion OR (strong texture AND strong action): counted at 0.5 when only the second holds
            // (it passes the line but adds no strength of its own).
            let substitute = t >= levels.strongStrength - 1e-9 && action >= levels.strongAction
            let motionOrTexture = substitute ? max(inputs.motion, 0.5) : inputs.motion
            required.append(motionOrTexture)
            if motionOrTexture < 0.5, measurable { failed.append(.rigidMotion) }
        }
        if blocked { return Outcome(score: 0, failed: failed) }
        let mean = required.reduce(0, +) / Double(max(1, required.count))
        let score = required.allSatisfy({ $0 >= 0.5 })
            ? min(100, max(50, 50 + Int((50 * (mean - 0.5) / 0.5).rounded())))
            : min(49, max(0, Int((49 * mean).rounded())))
        return Outcome(score: score, failed: failed)
    }
}
