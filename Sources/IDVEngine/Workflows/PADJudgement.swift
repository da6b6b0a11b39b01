import Foundation
import IDVCore

// Presentation-attack detection (ISO/IEC 30107-3 PAD): the policy's reading of a capture's typed PAD
// evidence. Only confident attack evidence is an attack (LIVENESS_FAILED); evidence the policy is
// unsure about — the texture near its line, too few good frames, facial action and landmark motion
// disagreeing, the face not kept in view — asks for one more capture with guidance (no attempt
// used), and the pair is then decided on the evidence of both captures. docs/LIVENESS.md.

/// The PAD settings of the policy (`idv.pad.*`; `idvd liveness calibrate` writes them for an
/// operator's own devices).
public struct PADPolicy: Sendable, Equatable {
    /// `idv.pad.texture_line`: the calibrated texture log-odds (``TextureCue/logOdds``) from which
    /// the texture speaks for a bona fide presentation — the operating point that sets APCER for the
    /// species the texture models see (prints, screens). Default −1.6: midway, on the development
    /// split, between the highest screen the texture sees (a simulated laptop screen, −1.88) and the
    /// lowest bona fide window (−1.26) (docs/LIVENESS.md); `idvd liveness calibrate` sets it for an
    /// operator's own devices.
    public var textureLine = PADPolicy.defaultTextureLine
    /// `idv.pad.unsure_margin`: a capture whose texture lies below the line by at most this much
    /// (log-odds) is unsure — asked again — rather than an attack; one at least this much above it
    /// is strong enough to call a capture without facial action and motion unsure rather than a
    /// print. Default 2.0 (log-odds: odds 7.4 : 1) (docs/LIVENESS.md).
    public var unsureMargin = PADPolicy.defaultUnsureMargin
    /// `idv.pad.min_good_frames`: texture evidence resting on fewer good frames is unsure, never a
    /// confident attack. Default 4 (of the 10 scored frames; docs/LIVENESS.md).
    public var minimumGoodFrames = PADPolicy.defaultMinimumGoodFrames
    /// `idv.pad.plane_motion_level`: how far the face must move *as a plane* (``PADEvidence/planeMotion``,
    /// inter-eye distances) for a capture without non-rigid motion to count as a flat picture moved
    /// by a hand — a held print or screen: with no facial action either, confident attack evidence
    /// (`no_sign_of_life`). Below it the face was held still: a person sitting still is never called
    /// an attack for it — without facial action the capture is unsure (`still`, asked again with
    /// guidance), and facial action on a still face (talking, blinking) is a sign of life.
    /// Default 0.16, set on the development split (`bench/pad_tune.py`, docs/LIVENESS.md): midway
    /// between the highest plane motion of a still bona fide window showing facial action (0.13) and
    /// the lowest of a simulated held print showing spurious facial action (0.19).
    public var planeMotionLevel = PADPolicy.defaultPlaneMotionLevel
    /// `idv.pad.retake_on_unsure`: ask an unsure capture again once per attempt, without using the
    /// attempt, and decide on both captures (default true). false: decide on the one capture, at the
    /// line, with no retake.
    public var retakeOnUnsure = true
    /// `idv.pad.challenge_on_unsure`: in passive mode, a capture and its retake decided without
    /// confident attack evidence but without a sign of life in either (a person holding still, or
    /// moving only as a whole) are asked once more under an active challenge (a head turn and a
    /// blink or an open mouth; no attempt used) instead of `LIVENESS_FAILED`; the three captures are
    /// then decided together (default true). false: such a pair is an attack.
    public var challengeOnUnsure = true
    /// `idv.pad.challenge_below`: in passive mode (with ``challengeOnUnsure``), a capture decided bona
    /// fide whose texture log-odds (pooled over the captures decided together) lie below this level
    /// is not accepted on passive evidence: it is asked once more under an active challenge (no
    /// attempt used; finding ``PADFinding/textureNotConclusive``), and decided together with it. A
    /// screen filling the camera's view shows a real face's life — blinks, talking, non-rigid
    /// motion — with texture the models read as bona fide as often as not; only an answered
    /// challenge tells it from a person. At or below ``textureLine`` the step-up is off.
    /// Default 2.75 (log-odds), set on the development split: just above the highest texture of a
    /// screen filling the view that the passive policy accepted there (2.73); it sends 15 of the 41
    /// development bona fide windows to a challenge (docs/LIVENESS.md "The full-frame replay").
    public var challengeBelow = PADPolicy.defaultChallengeBelow

    /// `idv.pad.challenge_window_seconds`: the liveness challenges a user may be shown (active
    /// mode's at each capture, presence's head-movement fallback, the step-up's, the one for a pair
    /// without life), `idv.biometric_attempts` of them, refill over this many seconds, counted when
    /// shown and across sessions, runs and flows — a challenge failed, left unanswered or answered
    /// by somebody else's face costs one, so a recording cannot fish for the challenge it happens to
    /// show; a run whose capture answers one and MATCHES gives its draws back. With
    /// none left a run that would show a challenge ends with 1010 ("No liveness challenge
    /// attempts left"). A bucket: `idv.biometric_attempts` at once, then one more every
    /// `challengeWindowSeconds / idv.biometric_attempts` seconds. Default
    /// 86 400 (a day).
    public var challengeWindowSeconds = 86_400

    public static let defaultTextureLine = -1.6
    public static let defaultChallengeBelow = 2.75
    public static let defaultUnsureMargin = 2.0
    public static let defaultMinimumGoodFrames = 4
    public static let defaultPlaneMotionLevel = 0.16

    public init() {}
}

/// What the policy made of the PAD evidence.
public enum PADOutcome: String, Sendable, Equatable, Codable {
    /// The evidence speaks for a live person.
    case bonaFide = "bona_fide"
    /// Not enough to decide on: one more capture is asked for (only ever on a first capture).
    case unsure
    /// Confident attack evidence (or, after a retake, the two captures together are not bona fide):
    /// `LIVENESS_FAILED`.
    case attack
    /// Decided, but the captures never showed the face well enough to judge: too few good frames
    /// (the face turned, blurred or cut off) in the capture and its retake together, and nothing
    /// else against them. Not an attack: asked again as a capture-quality problem (1065
    /// `selfieFaceNotFrontal`, or the capture's own quality issue; an attempt used), the ISO/IEC
    /// 30107-3 non-response of a presentation the PAD subsystem could not process.
    case poorCapture = "poor_capture"
    /// Asked once more under an active challenge (``PADPolicy/challengeOnUnsure``, passive mode, once
    /// per attempt): decided without confident attack evidence, but neither capture showed a sign of
    /// life (a person holding still, or moving only as a whole; texture and motion disagreeing) —
    /// only on a capture's retake; or life shown with texture that reaches the line but not
    /// ``PADPolicy/challengeBelow`` (``PADFinding/textureNotConclusive``: the step-up, on any
    /// capture). ``PADJudgement/withoutChallenge`` is the decision when no challenge can be asked.
    case challenge
}

/// Why the PAD outcome is what it is (audited as `pad_findings`; never shown to a device, so a
/// client learns nothing to tune an attack against).
public enum PADFinding: String, Sendable, Equatable, Codable, CaseIterable {
    // Confident attack evidence.
    /// The texture's log-odds lie more than ``PADPolicy/unsureMargin`` below the line on at least
    /// ``PADPolicy/minimumGoodFrames`` good frames (after a retake: the two captures' pooled
    /// log-odds lie below the line).
    case textureAttack = "texture_attack"
    /// Neither facial action nor non-rigid landmark motion while the face moved as a plane by at
    /// least ``PADPolicy/planeMotionLevel``, and the texture not strongly bona fide (at least
    /// ``PADPolicy/unsureMargin`` above the line: then the cues disagree): it moves like a flat
    /// picture in a hand and does nothing a face does (a held print or screen). Without a
    /// plane-motion measurement: neither cue while the texture is not strongly bona fide.
    case noSignOfLife = "no_sign_of_life"
    /// The server's active challenge was not answered (not seen in order, late, or not evaluated).
    case challengeFailed = "challenge_failed"
    /// Too few frames to show motion (a still).
    case insufficientFrames = "insufficient_frames"
    /// Evidence without typed cues (an analyser that reports only a score) below `idv.liveness_threshold`.
    case scoreBelowThreshold = "score_below_threshold"
    // Unsure: asked again.
    /// The texture lies below the line, but within the unsure margin.
    case textureUncertain = "texture_uncertain"
    /// Fewer good frames than ``PADPolicy/minimumGoodFrames`` (blur, the face turned or cut off):
    /// the texture cannot be read well enough to call an attack.
    case fewGoodFrames = "few_good_frames"
    /// Facial action and landmark motion disagree (one is seen, the other not) and the texture is
    /// not strong enough to settle it.
    case cuesDisagree = "cues_disagree"
    /// Neither facial action nor non-rigid motion, but the face did not move as a plane either: a
    /// person holding still (asked again, with guidance to blink and turn the head a little).
    case still
    /// The face was not kept in view on its own (lost for too long, a second face, the identity
    /// changing as the head turned).
    case faceNotKept = "face_not_kept"
    /// Life shown and the texture reaches the line, but not ``PADPolicy/challengeBelow``: what a
    /// screen filling the camera's view also shows. In passive mode the capture is asked under an
    /// active challenge (the step-up) rather than accepted on passive evidence.
    case textureNotConclusive = "texture_not_conclusive"

    /// Whether the finding is confident attack evidence.
    public var isAttack: Bool {
        switch self {
        case .textureAttack, .noSignOfLife, .challengeFailed, .insufficientFrames, .scoreBelowThreshold: return true
        case .textureUncertain, .fewGoodFrames, .cuesDisagree, .still, .faceNotKept, .textureNotConclusive: return false
        }
    }
}

/// The policy's PAD reading of one capture, or of a capture and its retake together.
public struct PADJudgement: Sendable, Equatable {
    public var outcome: PADOutcome
    /// Every finding that applied, attack findings first.
    public var findings: [PADFinding]
    /// True when decided on two captures (the unsure first one and its retake).
    public var combined: Bool
    /// The texture log-odds the outcome used (pooled over both captures when combined), nil without texture.
    public var textureLogOdds: Double?
    /// For ``PADOutcome/challenge``: the decision when no challenge can be asked (presence required
    /// with `idv.presence_fallback = refuse`, or no analyser to issue one) — an attack for captures
    /// without a sign of life, bona fide for the step-up (``PADFinding/textureNotConclusive``). The
    /// outcome itself otherwise.
    public var withoutChallenge: PADOutcome

    public init(outcome: PADOutcome, findings: [PADFinding], combined: Bool, textureLogOdds: Double?, withoutChallenge: PADOutcome? = nil) {
        self.outcome = outcome
        self.findings = findings
        self.combined = combined
        self.textureLogOdds = textureLogOdds
        self.withoutChallenge = withoutChallenge ?? (outcome == .challenge ? .attack : outcome)
    }

    /// This reading decided where no challenge is asked (presence required, no analyser to issue
    /// one, a tool that cannot retake): a ``PADOutcome/challenge`` becomes ``withoutChallenge``;
    /// any other reading is returned as it is.
    public var decidedWithoutChallenge: PADJudgement {
        var d = self
        if d.outcome == .challenge { d.outcome = withoutChallenge }
        return d
    }
}

/// The first, unsure capture's PAD evidence, kept in the flow state until its retake is judged —
/// and, when the pair was sent on to an active challenge (``PADOutcome/challenge``), the retake's
/// evidence too, until the challenged capture is judged with both.
public struct PADRetake: Sendable, Equatable, Codable {
    public var pad: PADEvidence
    public var cues: [LivenessCue]
    /// The retake's evidence, once the pair was sent on to a challenge; nil before.
    public var retake: PADEvidence?
    public var retakeCues: [LivenessCue]?
    /// For each earlier capture (the first, then the retake), whether its face matched the flow's
    /// reference (a document portrait or the stored template) at the policy's line; nil in a flow
    /// without a reference (an enrolment). The captures are decided together only while every one
    /// of them is the reference's person: life or texture shown by somebody else's face never
    /// counts for the face that is matched.
    public var matchedReference: [Bool]?
    public init(pad: PADEvidence, cues: [LivenessCue], retake: PADEvidence? = nil, retakeCues: [LivenessCue]? = nil,
                matchedReference: [Bool]? = nil, steppedUp: Bool? = nil) {
        self.steppedUp = steppedUp
        self.pad = pad
        self.cues = cues
        self.retake = retake
        self.retakeCues = retakeCues
        self.matchedReference = matchedReference
    }
    /// Set when a capture decided bona fide on passive evidence was stepped up to a challenge
    /// (``PADFinding/textureNotConclusive``): `pad` is that capture, there is no `retake`, and the
    /// next capture is the last. nil in states sealed before it existed.
    public var steppedUp: Bool?
    /// Whether the captures were already sent on to a challenge (the next capture is the last).
    public var challenged: Bool { retake != nil || steppedUp == true }
}

extension LivenessCue {
    // FaceKit's blocking reasons (`LivenessReason`), as the policy reads them.
    public static let insufficientFrames = LivenessCue("INSUFFICIENT_FRAMES")
    public static let noFace = LivenessCue("NO_FACE")
    public static let faceLost = LivenessCue("FACE_LOST")
    public static let multipleFaces = LivenessCue("MULTIPLE_FACES")
    public static let identityChanged = LivenessCue("IDENTITY_CHANGED")
    public static let challengeNotMet = LivenessCue("CHALLENGE_NOT_MET")
}

extension WorkflowPolicy {
    /// The PAD reading of a capture's evidence `e` (the policy's own challenge cues — not
    /// evaluated, expired — already in `cues`).
    ///
    /// - Parameters:
    ///   - earlier: the unsure first capture this one retakes; the two are then decided together.
    ///   - final: decide now (bona fide or attack, never unsure) even without an earlier capture
    ///     (`idv.pad.retake_on_unsure` off, or no retake left).
    ///
    /// One capture: confident attack evidence (``PADFinding/isAttack``: texture more than the
    /// margin below the line on enough good frames; neither facial action nor landmark motion while
    /// the texture is not strongly bona fide; a failed challenge; a still) → attack; else any unsure
    /// finding → unsure; else bona fide. Decided (two captures, or one with `final`): an attack
    /// finding of the last capture → attack; else bona fide when the pooled texture (the captures'
    /// log-odds weighted by their good frames, at least ``PADPolicy/minimumGoodFrames`` of them)
    /// reaches the line and some capture shows life (facial action, or every challenged action,
    /// together with non-rigid motion) with its face kept in view; poor capture
    /// (``PADOutcome/poorCapture``) when life was shown and the only thing missing is texture on
    /// enough good frames; a challenge (``PADOutcome/challenge``) when no capture showed life and
    /// no finding is confident attack evidence (passive mode, ``PADPolicy/challengeOnUnsure``, not
    /// after a challenge already: `earlier` then holds both earlier captures and the three are
    /// decided together); else attack. A capture (or pair) that would be bona fide on passive
    /// evidence with texture below ``PADPolicy/challengeBelow`` is a challenge too
    /// (``PADFinding/textureNotConclusive``, the step-up; `withoutChallenge` bona fide): the
    /// challenged capture is then decided together with the earlier ones, and must answer it. Evidence with
    /// neither a texture nor a motion cue (an analyser that reports a score only) is judged by its
    /// score against ``livenessThreshold``.
    public func judgePAD(_ e: SelfieEvidence, cues: [LivenessCue], score: Int, earlier: PADRetake? = nil,
                         final: Bool = false) -> PADJudgement {
        let p = pad
        guard let evidence = e.pad, evidence.texture != nil || evidence.motion != nil else {
            let ok = score >= livenessThreshold
            return PADJudgement(outcome: ok ? .bonaFide : .attack, findings: ok ? [] : [.scoreBelowThreshold], combined: false,
                                textureLogOdds: nil)
        }
        let now = Self.padFindings(evidence, cues: cues, policy: p)
        let decide = earlier != nil || final || !p.retakeOnUnsure
        if !decide {
            let attack = now.filter(\.isAttack)
            if !attack.isEmpty { return PADJudgement(outcome: .attack, findings: now, combined: false, textureLogOdds: evidence.texture?.logOdds) }
            if now.isEmpty, Self.stepsUp(evidence, texture: evidence.texture?.logOdds, earlier: nil, policy: p) {
                return PADJudgement(outcome: .challenge, findings: [.textureNotConclusive], combined: false,
                                    textureLogOdds: evidence.texture?.logOdds, withoutChallenge: .bonaFide)
            }
            return PADJudgement(outcome: now.isEmpty ? .bonaFide : .unsure, findings: now, combined: false, textureLogOdds: evidence.texture?.logOdds)
        }
        // Decide: on this capture alone, or on the pair.
        var findings = now.filter(\.isAttack)
        let captures = [earlier.map { ($0.pad, $0.cues) }, earlier?.retake.map { ($0, earlier?.retakeCues ?? []) }, (evidence, cues)]
            .compactMap { $0 }
        let textures = captures.compactMap(\.0.texture)
        let good = textures.reduce(0) { $0 + $1.goodFrames }
        var pooled: Double?
        if !textures.isEmpty {
            let weights = textures.map { Double(max(1, $0.goodFrames)) }
            pooled = zip(textures, weights).reduce(0) { $0 + $1.0.logOdds * $1.1 } / weights.reduce(0, +)
        }
        if let t = pooled, t < p.textureLine, !findings.contains(.textureAttack) { findings.append(.textureAttack) }
        if textures.isEmpty || good < p.minimumGoodFrames { findings.append(.fewGoodFrames) }
        let life = captures.contains { !Self.faceNotKept($0.1) && Self.showsLife($0.0, policy: p) }
        if !life, !findings.contains(.noSignOfLife) {
            findings.append(captures.allSatisfy { Self.faceNotKept($0.1) } ? .faceNotKept : .cuesDisagree)
        }
        var unique: [PADFinding] = []
        for f in findings where !unique.contains(f) { unique.append(f) }
        // Life shown, nothing against it, but the texture never read on enough good frames: a
        // capture to take again, not an attack.
        var outcome: PADOutcome = unique.isEmpty ? .bonaFide : unique == [.fewGoodFrames] ? .poorCapture : .attack
        // No sign of life in either capture, and nothing confident against them (a person holding
        // still): one more capture under an active challenge, in passive mode, once.
        if outcome == .attack, !life, earlier.map({ !$0.challenged }) ?? false, evidence.challenge == nil, p.challengeOnUnsure,
           !unique.contains(where: \.isAttack) {
            outcome = .challenge
        }
        // Life shown and the texture reaches the line, but not the step-up level: what a screen
        // filling the view shows too — once more under an active challenge (passive mode, once).
        if outcome == .bonaFide, Self.stepsUp(evidence, texture: pooled, earlier: earlier, policy: p) {
            return PADJudgement(outcome: .challenge, findings: [.textureNotConclusive], combined: earlier != nil, textureLogOdds: pooled,
                                withoutChallenge: .bonaFide)
        }
        return PADJudgement(outcome: outcome, findings: unique, combined: earlier != nil, textureLogOdds: pooled)
    }

    /// Whether a capture the evidence would accept is stepped up to an active challenge instead
    /// (``PADPolicy/challengeBelow``): passive evidence (no challenge in this capture, none asked
    /// before in the attempt), ``PADPolicy/challengeOnUnsure`` on, and `texture` (the capture's,
    /// or the captures' pooled log-odds) below the level.
    static func stepsUp(_ e: PADEvidence, texture: Double?, earlier: PADRetake?, policy p: PADPolicy) -> Bool {
        guard p.challengeOnUnsure, e.challenge == nil, !(earlier?.challenged ?? false), let t = texture else { return false }
        return t < p.challengeBelow
    }

    /// The findings of one capture (attack findings first).
    static func padFindings(_ e: PADEvidence, cues: [LivenessCue], policy p: PADPolicy) -> [PADFinding] {
        var attack: [PADFinding] = []
        var unsure: [PADFinding] = []
        if cues.contains(.insufficientFrames) { attack.append(.insufficientFrames) }
        if cues.contains(.challengeNotMet) || cues.contains(.challengeExpired) || cues.contains(.challengeNotEvaluated)
            || (e.challenge?.contains { $0 < 0.5 } ?? false) {
            attack.append(.challengeFailed)
        }
        if let t = e.texture, t.goodFrames >= p.minimumGoodFrames {
            if t.logOdds < p.textureLine - p.unsureMargin { attack.append(.textureAttack) } else if t.logOdds < p.textureLine { unsure.append(.textureUncertain) }
        } else {
            unsure.append(.fewGoodFrames)
            if let t = e.texture, t.logOdds < p.textureLine - p.unsureMargin, t.goodFrames > 0 {
                // Attack-like texture on too few good frames: not confident, still not bona fide.
                unsure.append(.textureUncertain)
            }
        }
        if faceNotKept(cues) { unsure.append(.faceNotKept) }
        let strongTexture = (e.texture.map { $0.logOdds >= p.textureLine + p.unsureMargin && $0.goodFrames >= p.minimumGoodFrames }) ?? false
        if e.challenge == nil, let motion = e.motion, (e.facialAction ?? 0) < 0.5, motion < 0.5 {
            if let plane = e.planeMotion {
                // Stillness is never an attack on its own: only a face that moved as a plane
                // without any non-rigid motion or facial action (a print or screen in a hand) is —
                // unless the texture speaks strongly for a live face: then the cues disagree.
                if plane < p.planeMotionLevel { unsure.append(.still) } else if strongTexture { unsure.append(.cuesDisagree) } else { attack.append(.noSignOfLife) }
            } else if strongTexture {
                // Without a plane-motion measurement: the cues disagree when the texture speaks strongly for a live face.
                unsure.append(.cuesDisagree)
            } else {
                attack.append(.noSignOfLife)
            }
        } else if e.motion != nil, !showsLife(e, policy: p), !attack.contains(.challengeFailed) {
            unsure.append(.cuesDisagree)
        }
        return attack + unsure
    }

    /// Facial action (or every challenged action) together with non-rigid landmark motion — or, in
    /// passive mode, facial action on a face held still (plane motion under
    /// ``PADPolicy/planeMotionLevel``: a person talking or blinking without moving the head; a print
    /// showing spurious "action" under a hand's motion moves as a plane). Strong texture never
    /// stands in for the motion: the texture models do not see a digitally made print, whose only
    /// evidence is that it moves like a plane.
    static func showsLife(_ e: PADEvidence, policy p: PADPolicy) -> Bool {
        let action = e.challenge.map { $0.min() ?? 0 } ?? e.facialAction ?? 0
        guard action >= 0.5 else { return false }
        if (e.motion ?? 0) >= 0.5 { return true }
        return e.challenge == nil && (e.planeMotion.map { $0 < p.planeMotionLevel } ?? false)
    }

    /// Whether the analyser's cues say the face was not kept in view on its own.
    static func faceNotKept(_ cues: [LivenessCue]) -> Bool {
        cues.contains(.faceLost) || cues.contains(.multipleFaces) || cues.contains(.identityChanged) || cues.contains(.noFace)
    }

    /// The liveness score reported with a PAD outcome: the analyser's score, moved to the right
    /// side of `idv.liveness_threshold` when the policy's reading differs from it (a bona fide
    /// outcome shows at least the threshold, an attack at most one below it), so what is shown
    /// never contradicts the verdict.
    public func reportedLivenessScore(_ score: Int, outcome: PADOutcome) -> Int {
        switch outcome {
        case .bonaFide: return min(100, max(score, livenessThreshold))
        case .attack: return max(0, min(score, livenessThreshold - 1))
        case .unsure, .poorCapture, .challenge: return score
        }
    }
}
