import FaceKit
import Foundation
import IDVEngine
import IDVReaders

/// One judged sequence of a PAD evaluation (ISO/IEC 30107-3 presentation): its species (or bona
/// fide), the capture it was cut from and its window there, and the analyser's evidence as the
/// server's policy sees it.
struct PADPresentation {
    let species: String
    /// The capture (clip, print, folder) the window was cut from: a retake is another window of it.
    let capture: String
    let window: Int
    var evidence: SelfieEvidence
    /// false for a window cut only to stand in for a retake (the end of a clip too short for two
    /// windows of its own): it is never counted itself.
    var counted = true
    /// false when the server would not judge the capture at all: no face in any frame and no
    /// capture-quality issue to explain it (`FaceKitSelfieAnalyser` answers 1032 `noFaceFound`, a
    /// retryable upload error).
    let acquired: Bool
    /// How many of a challenge's actions the window answers, in order (FaceKit
    /// `SelfieAnalyzer.completedActions` over its frames); nil when the evaluation has no analyser.
    let answers: (([ChallengeAction]) -> Int)?
    var isBonaFide: Bool { species == Species.bonaFide }

    init(species: String, capture: String, window: Int, report: LivenessReport, counted: Bool = true, analyzer: SelfieAnalyzer? = nil) {
        self.species = species
        self.capture = capture
        self.window = window
        self.counted = counted
        evidence = FaceKitSelfieAnalyser.evidence(report, comparison: nil, framesPerSecond: report.frameRate)
        acquired = report.bestFrameEmbedding != nil || !evidence.captureIssues.isEmpty
        answers = analyzer.map { a in
            { actions in
                let challenge = ActiveChallenge(nonce: "bench", actions: actions, duration: Double(report.frameCount) / max(1, report.frameRate),
                                                deadline: .distantFuture)
                return a.completedActions(challenge, frames: report.frames, blinks: report.blinks).count
            }
        }
    }

    /// This window as the answer to the active challenge `actions`: the challenge's strengths (1
    /// for each action answered in order, else 0) in place of the facial action, and
    /// `CHALLENGE_NOT_MET` when not all were; nil without an analyser.
    func answering(_ actions: [ChallengeAction]) -> SelfieEvidence? {
        guard let answers else { return nil }
        let done = answers(actions)
        var e = evidence
        e.pad?.challenge = actions.indices.map { $0 < done ? 1.0 : 0.0 }
        e.pad?.facialAction = nil
        if done < actions.count { e.livenessCues.append(.challengeNotMet) }
        e.challengeNonce = nil
        return e
    }

    /// The 8 challenges the server can issue (`ActiveChallenge.random`): a head turn and a blink or
    /// an open mouth, in either order.
    static let challenges: [[ChallengeAction]] = {
        var out: [[ChallengeAction]] = []
        for t in [ChallengeAction.turnLeft, .turnRight] { for o in [ChallengeAction.blink, .openMouth] { out += [[t, o], [o, t]] } }
        return out
    }()
}

/// What the policy decided on one presentation, with the retake the flow would ask for.
struct PADDecision {
    /// The reading of the capture alone (bona fide, unsure or attack).
    let first: PADJudgement
    /// The decision (bona fide or attack): the first reading when it was not unsure, else the pair
    /// of the capture and its retake (the next window of the same capture), else — when the capture
    /// has no other window — the capture alone, decided.
    let final: PADJudgement
    /// Whether a retake was asked for, and whether another window stood in for it.
    var retaken: Bool { judged && first.outcome == .unsure }
    let retakeSimulated: Bool
    /// false: the server answers the capture with a capture-quality error before any PAD decision
    /// (no face found, or an issue that hides the liveness evidence: too dark, blurred, …).
    var judged = true
    /// When the capture or the pair was sent on to an active challenge (``PADOutcome/challenge``):
    /// the captures decided together — the challenged one the next window after them, answering
    /// one challenge chosen for it — or nil when not measured (a bona fide recording was not made answering
    /// challenges, so its outcome is unknown; or the evaluation has no analyser).
    var challenged: PADJudgement?
    /// Sent on to a challenge.
    var askedChallenge: Bool { judged && final.outcome == .challenge }
    var accepted: Bool { judged && (final.outcome == .bonaFide || challenged?.outcome == .bonaFide) }
    /// Decided an attack: `LIVENESS_FAILED`.
    var rejected: Bool { judged && (final.outcome == .attack || challenged.map { $0.outcome != .bonaFide } ?? false) }
    /// ISO/IEC 30107-3 non-response: asked again for capture quality, never classified (not
    /// judged, or the pair decided ``PADOutcome/poorCapture``).
    var nonResponse: Bool { !judged || final.outcome == .poorCapture }
}

/// The server's PAD decisions over a set of presentations and the ISO/IEC 30107-3 rates they give —
/// the one evaluation `idvd bench liveness` and `idvd liveness calibrate` both print.
struct PADEvaluation {
    let presentations: [PADPresentation]

    /// The decision of every presentation under `policy` (in order). A presentation the policy is
    /// unsure about is retaken with the next window of the same capture (the first after the last).
    func decisions(_ policy: WorkflowPolicy) -> [PADDecision] {
        var byCapture: [String: [Int]] = [:]
        for (i, p) in presentations.enumerated() { byCapture["\(p.species)|\(p.capture)", default: []].append(i) }
        return presentations.enumerated().map { i, p in
            let (score, cues, _) = policy.livenessCues(p.evidence, challenge: nil, now: 0)
            guard p.acquired, policy.recapture(p.evidence) == nil else {
                let first = policy.judgePAD(p.evidence, cues: cues, score: score, final: true)
                return PADDecision(first: first, final: first, retakeSimulated: false, judged: false)
            }
            let first = policy.judgePAD(p.evidence, cues: cues, score: score)
            // The retake is the next window the server would judge (one with a face).
            let windows = (byCapture["\(p.species)|\(p.capture)"] ?? [i]).filter { $0 == i || presentations[$0].acquired }
            // Stepped up to a challenge at once: an attack repeats itself (the next window; a clip
            // of one window, itself again) against one of the 8 challenges, decided together with
            // the first.
            if first.outcome == .challenge, let pad = p.evidence.pad {
                var decision = PADDecision(first: first, final: first, retakeSimulated: false)
                if !p.isBonaFide, let k = windows.firstIndex(of: i) {
                    decision.challenged = challenged(presentations[windows[(k + 1) % windows.count]], p, policy,
                                                     earlier: PADRetake(pad: pad, cues: cues, steppedUp: true))
                }
                return decision
            }
            guard first.outcome == .unsure else { return PADDecision(first: first, final: first, retakeSimulated: false) }
            guard windows.count > 1, let k = windows.firstIndex(of: i), let pad = p.evidence.pad else {
                return PADDecision(first: first, final: policy.judgePAD(p.evidence, cues: cues, score: score, final: true), retakeSimulated: false)
            }
            let next = presentations[windows[(k + 1) % windows.count]]
            let (s2, c2, _) = policy.livenessCues(next.evidence, challenge: nil, now: 0)
            let pair = policy.judgePAD(next.evidence, cues: c2, score: s2, earlier: PADRetake(pad: pad, cues: cues))
            var decision = PADDecision(first: first, final: pair, retakeSimulated: true)
            // Sent on to a challenge: an attack repeats itself (the window after the retake) against
            // one of the 8 challenges, chosen per window; a bona fide recording cannot follow one.
            if pair.outcome == .challenge, !p.isBonaFide, let pad2 = next.evidence.pad {
                decision.challenged = challenged(presentations[windows[(k + 2) % windows.count]], p, policy,
                                                 earlier: PADRetake(pad: pad, cues: cues, retake: pad2, retakeCues: c2))
            }
            return decision
        }
    }

    /// The decision on `window` answering the challenge drawn for presentation `p` (one of the 8,
    /// chosen per window by its name), together with the `earlier` captures; nil without an analyser.
    func challenged(_ window: PADPresentation, _ p: PADPresentation, _ policy: WorkflowPolicy, earlier: PADRetake) -> PADJudgement? {
        let actions = PADPresentation.challenges[Self.stableIndex("\(p.capture)#\(p.window)", PADPresentation.challenges.count)]
        guard let e = window.answering(actions) else { return nil }
        let (score, cues, _) = policy.livenessCues(e, challenge: nil, now: 0)
        return policy.judgePAD(e, cues: cues, score: score, earlier: earlier)
    }

    /// A deterministic index in 0..<n for `key` (FNV-1a), the same on every run and machine.
    static func stableIndex(_ key: String, _ n: Int) -> Int {
        var h: UInt64 = 0xcbf29ce484222325
        for b in key.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return Int(h % UInt64(n))
    }

    /// Rates per species under `policy`: BPCER (bona fide decided an attack), the bona fide
    /// non-response rate (asked again for capture quality, never classified: no face found, a
    /// quality issue, or a pair decided a poor capture), the share of bona fide presentations asked
    /// to retake, the share sent on to a challenge, and APCER per attack species (attacks decided bona
    /// fide; an attack sent on to a challenge that could not be evaluated counts as accepted). Every rate's
    /// denominator is every counted presentation of its kind.
    struct Rates {
        var bpcer: PADErrorRate
        var bpnrr: PADErrorRate
        /// Bona fide presentations sent on to an active challenge (their outcome not measured).
        var challenged: PADErrorRate
        var retakes: PADErrorRate
        var retakesNotSimulated: Int
        var apcer: [(species: String, rate: PADErrorRate)]
        /// Per attack species, the share the server asks again for quality (never classified).
        var apnrr: [String: PADErrorRate]
        var maxAPCER: Double { apcer.map(\.rate.rate).max() ?? 0 }
    }

    func rates(_ policy: WorkflowPolicy, species order: [String]) -> Rates {
        let d = decisions(policy)
        let bona = presentations.indices.filter { presentations[$0].isBonaFide && presentations[$0].counted }
        var apcer: [(String, PADErrorRate)] = []
        var apnrr: [String: PADErrorRate] = [:]
        for s in order where s != Species.bonaFide {
            let idx = presentations.indices.filter { presentations[$0].species == s && presentations[$0].counted }
            guard !idx.isEmpty else { continue }
            apcer.append((s, PADErrorRate(errors: idx.filter { d[$0].accepted || (d[$0].askedChallenge && d[$0].challenged == nil) }.count,
                                                total: idx.count)))
            apnrr[s] = PADErrorRate(errors: idx.filter { d[$0].nonResponse }.count, total: idx.count)
        }
        return Rates(bpcer: PADErrorRate(errors: bona.filter { d[$0].rejected }.count, total: bona.count),
                     bpnrr: PADErrorRate(errors: bona.filter { d[$0].nonResponse }.count, total: bona.count),
                     challenged: PADErrorRate(errors: bona.filter { d[$0].askedChallenge }.count, total: bona.count),
                     retakes: PADErrorRate(errors: bona.filter { d[$0].retaken }.count, total: bona.count),
                     retakesNotSimulated: bona.filter { d[$0].retaken && !d[$0].retakeSimulated }.count, apcer: apcer,
                     apnrr: apnrr)
    }

    /// The lowest step-up level (`idv.pad.challenge_below`, log-odds) at which no attack species'
    /// APCER exceeds `target` under `policy`'s line — the line itself when no step-up is needed —
    /// over the candidate levels just above each attack presentation's texture log-odds; nil when
    /// none reaches it (an attack that answers its challenges, or one the texture line lets through
    /// without passive evidence to step up).
    func challengeLevel(forAPCER target: Double, policy: WorkflowPolicy, species order: [String]) -> Double? {
        lowest(\.pad.challengeBelow, from: policy.pad.textureLine, forAPCER: target, policy: policy, species: order)
    }

    /// The lowest texture line (log-odds) at which no attack species' APCER exceeds `target`, over
    /// the candidate lines just above each attack presentation's texture log-odds (and the policy's
    /// own line); nil when none reaches it (an attack the texture cannot stop at any line).
    func line(forAPCER target: Double, policy: WorkflowPolicy, species order: [String]) -> Double? {
        lowest(\.pad.textureLine, from: -.infinity, forAPCER: target, policy: policy, species: order)
    }

    /// The lowest value of the setting at `key` at which no attack species' APCER exceeds `target`:
    /// tried at the policy's own line and just above each attack presentation's texture log-odds
    /// (rounded up to 0.01) above `floor`, in increasing order.
    private func lowest(_ key: WritableKeyPath<WorkflowPolicy, Double>, from floor: Double, forAPCER target: Double,
                        policy: WorkflowPolicy, species order: [String]) -> Double? {
        var candidates = Set(presentations.filter { !$0.isBonaFide && $0.counted }.compactMap { $0.evidence.pad?.texture?.logOdds }
            .map { (($0 + 0.005) * 100).rounded(.up) / 100 }.filter { $0 > floor })
        candidates.insert(policy.pad.textureLine)
        for t in candidates.sorted() {
            var p = policy
            p[keyPath: key] = t
            if rates(p, species: order).maxAPCER <= target + 1e-12 { return t }
        }
        return nil
    }
}
