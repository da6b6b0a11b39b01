import FaceKit
import Foundation
import IDVEngine
import IDVReaders

/// `idvd bench presence --texture`: the FaceKit PAD texture evidence (MiniFASNet, calibrated
/// log-odds: `SelfieEvidence.pad?.texture?.logOdds`, what the server's selfie analyser hands the
/// PAD policy) of the bench's simulated captures under the flashing screen, beside the same
/// windows rendered without the flashes and the raw window frames — so that the policy's texture
/// line and step-up level (`idv.pad.challenge_below`), set on recordings without flashing, can be
/// read against captures taken under the presence check's sequence.
struct PresenceTexture {
    /// How the frames the texture was read on were made.
    enum Rendering: String, CaseIterable {
        case flashed = "under the sequence"
        case unflashed = "same scene, screen dark"
        case raw = "raw window frames"
    }

    struct Row {
        let split: String, variant: String, rendering: Rendering
        /// nil: no good frame (the evidence has no texture cue).
        let logOdds: Double?
        /// The illumination check of the same capture (first capture, no retake); nil where none ran.
        let followed: Bool?
    }

    let analyzer: SelfieAnalyzer

    /// The server's analysis (`LivenessConfiguration()` defaults: texture on, 10 frames scored, the
    /// models' own detector, the development calibration), without the identity descriptors and
    /// template, which the texture does not use.
    init(engine: FaceEngine) throws {
        var config = LivenessConfiguration()
        config.identitySamples = 0
        config.templateFrames = 1
        analyzer = SelfieAnalyzer(engine: engine, configuration: config, texturePAD: try TexturePAD.shared())
    }

    /// The calibrated texture log-odds of a capture (nil: no good frame), as in the server's evidence.
    func logOdds(_ frames: [Data]) throws -> Double? {
        let report = try analyzer.analyze(frames: frames)
        return FaceKitSelfieAnalyser.evidence(report, comparison: nil, framesPerSecond: report.frameRate).pad?.texture?.logOdds
    }

    /// Nearest-rank quantile of sorted values (q in 0…1).
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = max(1, Int((q * Double(sorted.count)).rounded(.up)))
        return sorted[min(sorted.count, rank) - 1]
    }

    /// The figures of one split (or "all"): per variant and rendering, the count, min / 10th
    /// percentile / median / max of the log-odds, the share below the texture line and below the
    /// step-up level, and (under the sequence) the share that passes the illumination check with
    /// texture at or above the line (what a passive policy without the step-up accepts on these two).
    static func lines(_ rows: [Row], split: String, variants: [String], policy: PADPolicy) -> [String] {
        let line = policy.textureLine, stepUp = policy.challengeBelow
        var out = ["  texture (FaceKit PAD, calibrated log-odds; first capture): n  min / p10 / median / max   "
                   + "< \(line)  < \(stepUp)  followed & ≥ \(line)"]
        func pct(_ k: Int, _ n: Int) -> String { n == 0 ? "-" : String(format: "%d/%d (%.0f %%)", k, n, 100 * Double(k) / Double(n)) }
        for rendering in Rendering.allCases {
            for v in rendering == .raw ? ["window"] : variants {
                let set = rows.filter { ($0.split == split || split == "all") && $0.variant == v && $0.rendering == rendering }
                guard !set.isEmpty else { continue }
                let t = set.compactMap(\.logOdds).sorted()
                let none = set.count - t.count
                let label = rendering == .raw ? "  raw window frames" : "  \(v), \(rendering.rawValue)"
                var s = label.padding(toLength: 56, withPad: " ", startingAt: 0) + "n \(set.count)"
                s += t.isEmpty ? "  no texture" : String(format: "  %.2f / %.2f / %.2f / %.2f", t.first!, quantile(t, 0.1), quantile(t, 0.5), t.last!)
                // A capture without a texture cue counts in neither "below" share; it is not accepted.
                s += "  " + pct(t.filter { $0 < line }.count, set.count) + "  " + pct(t.filter { $0 < stepUp }.count, set.count)
                if rendering == .flashed {
                    s += "  " + pct(set.filter { $0.followed == true && ($0.logOdds.map { $0 >= line } ?? false) }.count, set.count)
                }
                if none > 0 { s += "  (no texture cue: \(none))" }
                out.append(s)
            }
        }
        return out
    }
}
