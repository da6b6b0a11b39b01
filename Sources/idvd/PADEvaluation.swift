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
    var isBonaFide: Bool { species == Species.bonaFide }

    init(species: String, capture: String, window: Int, report: LivenessReport, counted: Bool = true) {
        self.species = species
        self.capture = capture
        self.window = window
        self.counted = counted
        evidence = FaceKitSelfieAnalyser.evidence(report, comparison: nil, framesPerSecond: report.frameRate)
        acquired = report.bestFrameEmbedding != nil || !evidence.captureIssues.isEmpty
    }
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
    var accepted: Bool { judged && final.outcome == .bonaFide }
    /// Decided an attack: `LIVENESS_FAILED`.
    var rejected: Bool { judged && final.outcome == .attack }
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
            guard first.outcome == .unsure else { return PADDecision(first: first, final: first, retakeSimulated: false) }
            // The retake is the next window the server would judge (one with a face).
            let windows = (byCapture["\(p.species)|\(p.capture)"] ?? [i]).filter { $0 == i || presentations[$0].acquired }
            guard windows.count > 1, let k = windows.firstIndex(of: i), let pad = p.evidence.pad else {
                return PADDecision(first: first, final: policy.judgePAD(p.evidence, cues: cues, score: score, final: true), retakeSimulated: false)
            }
            let next = presentations[windows[(k + 1) % windows.count]]
            let (s2, c2, _) = policy.livenessCues(next.evidence, challenge: nil, now: 0)
            let pair = policy.judgePAD(next.evidence, cues: c2, score: s2, earlier: PADRetake(pad: pad, cues: cues))
            return PADDecision(first: first, final: pair, retakeSimulated: true)
        }
    }

    /// Rates per species under `policy`: BPCER (bona fide decided an attack), the bona fide
    /// non-response rate (asked again for capture quality, never classified: no face found, a
    /// quality issue, or a pair decided a poor capture), the share of bona fide presentations asked
    /// to retake, and APCER per attack species (attacks decided bona fide). Every rate's
    /// denominator is every counted presentation of its kind.
    struct Rates {
        var bpcer: PADErrorRate
        var bpnrr: PADErrorRate
        var retakes: PADErrorRate
        var retakesNotSimulated: Int
        var apcer: [(species: String, rate: PADErrorRate)]
        var maxAPCER: Double { apcer.map(\.rate.rate).max() ?? 0 }
    }

    func rates(_ policy: WorkflowPolicy, species order: [String]) -> Rates {
        let d = decisions(policy)
        let bona = presentations.indices.filter { presentations[$0].isBonaFide && presentations[$0].counted }
        var apcer: [(String, PADErrorRate)] = []
        for s in order where s != Species.bonaFide {
            let idx = presentations.indices.filter { presentations[$0].species == s && presentations[$0].counted }
            guard !idx.isEmpty else { continue }
            apcer.append((s, PADErrorRate(errors: idx.filter { d[$0].accepted }.count, total: idx.count)))
        }
        return Rates(bpcer: PADErrorRate(errors: bona.filter { d[$0].rejected }.count, total: bona.count),
                     bpnrr: PADErrorRate(errors: bona.filter { d[$0].nonResponse }.count, total: bona.count),
                     retakes: PADErrorRate(errors: bona.filter { d[$0].retaken }.count, total: bona.count),
                     retakesNotSimulated: bona.filter { d[$0].retaken && !d[$0].retakeSimulated }.count, apcer: apcer)
    }

    /// The lowest texture line (log-odds) at which no attack species' APCER exceeds `target`, over
    /// the candidate lines just above each attack presentation's texture log-odds (and the policy's
    /// own line); nil when none reaches it (an attack the texture cannot stop at any line).
    func line(forAPCER target: Double, policy: WorkflowPolicy, species order: [String]) -> Double? {
        var candidates = Set(presentations.filter { !$0.isBonaFide && $0.counted }.compactMap { $0.evidence.pad?.texture?.logOdds }
            .map { (($0 + 0.005) * 100).rounded(.up) / 100 })
        candidates.insert(policy.pad.textureLine)
        for t in candidates.sorted() {
            var p = policy
            p.pad.textureLine = t
            if rates(p, species: order).maxAPCER <= target + 1e-12 { return t }
        }
        return nil
    }
}
