import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import XCTest

/// The policy's PAD reading (IDVEngine PADJudgement.swift, issue 34): only confident attack
/// evidence is an attack; what the policy is unsure about is asked again and the pair is decided
/// on both captures; the settings and the score shown agree with the reading.
final class PADJudgementTests: XCTestCase {
    /// A capture's evidence: texture log-odds on `good` of 15 frames, motion and facial action strengths.
    /// `plane`: how far the face moved as a plane (inter-eye distances; nil: not measured).
    func capture(texture: Double?, good: Int = 15, motion: Double? = 0.8, action: Double? = 0.9, challenge: [Double]? = nil,
                 cues: [LivenessCue] = [], score: Int = 70, plane: Double? = nil) -> SelfieEvidence {
        let pad = PADEvidence(rule: "texture-motion-v3", textureScore: nil, motionOnlyScore: nil,
                              texture: texture.map { TextureCue(logOdds: $0, goodFrames: good, scoredFrames: 15) },
                              motion: motion, facialAction: challenge == nil ? action : nil, challenge: challenge, planeMotion: plane)
        return SelfieEvidence(livenessScore: score, livenessCues: cues, match: nil, frameCount: 30, trackedFrameCount: 30,
                              framesPerSecond: 10, bestFrameJPEG: nil, embedding: [], pad: pad)
    }

    /// The default policy without the step-up (`idv.pad.challenge_below` at the line): the rules
    /// below it, read alone; the step-up's own tests use the default policy.
    static let noStepUp: WorkflowPolicy = {
        var p = WorkflowPolicy()
        p.pad.challengeBelow = p.pad.textureLine
        return p
    }()

    func read(_ e: SelfieEvidence, _ p: WorkflowPolicy = PADJudgementTests.noStepUp, earlier: SelfieEvidence? = nil, final: Bool = false) -> PADJudgement {
        p.judgePAD(e, cues: e.livenessCues, score: e.livenessScore,
                   earlier: earlier.map { PADRetake(pad: $0.pad!, cues: $0.livenessCues) }, final: final)
    }

    func testDefaults() {
        let p = PADPolicy()
        XCTAssertEqual(p.textureLine, -1.6)
        XCTAssertEqual(p.unsureMargin, 2.0)
        XCTAssertEqual(p.minimumGoodFrames, 4)
        XCTAssertEqual(p.planeMotionLevel, PADPolicy.defaultPlaneMotionLevel)
        XCTAssertTrue(p.retakeOnUnsure)
        XCTAssertEqual(p.challengeBelow, 2.75)
    }

    /// The step-up (the full-frame replay, docs/LIVENESS.md): in passive mode, evidence that would
    /// be accepted with texture below `idv.pad.challenge_below` is asked under an active challenge
    /// — decided bona fide when no challenge can be asked — and the challenged capture, decided
    /// together with it, must answer.
    func testInconclusiveTextureIsSteppedUpToAChallenge() {
        let p = WorkflowPolicy()
        let level = p.pad.challengeBelow
        // Life shown, texture between the line and the level: a challenge, on the capture itself.
        for texture in [p.pad.textureLine, 0.0, level - 0.01] {
            let r = read(capture(texture: texture, plane: 0.3), p)
            XCTAssertEqual(r.outcome, .challenge, "\(texture)")
            XCTAssertEqual(r.findings, [.textureNotConclusive])
            XCTAssertEqual(r.withoutChallenge, .bonaFide, "no challenge to ask: accepted on its evidence")
            XCTAssertFalse(r.combined)
        }
        // At the level and above: accepted on passive evidence.
        XCTAssertEqual(read(capture(texture: level, plane: 0.3), p).outcome, .bonaFide)
        XCTAssertEqual(read(capture(texture: 4.0, plane: 0.3), p).outcome, .bonaFide)
        // Off: the level at the line, or challenges off altogether.
        var off = p
        off.pad.challengeBelow = off.pad.textureLine
        XCTAssertEqual(read(capture(texture: 0.0, plane: 0.3), off).outcome, .bonaFide)
        off = p
        off.pad.challengeOnUnsure = false
        XCTAssertEqual(read(capture(texture: 0.0, plane: 0.3), off).outcome, .bonaFide)
        // A capture under a challenge (active mode, presence's fallback) is never stepped up.
        XCTAssertEqual(read(capture(texture: 0.0, challenge: [1, 1], plane: 0.3), p).outcome, .bonaFide)
        // Unsure or attack evidence keeps its own outcome.
        XCTAssertEqual(read(capture(texture: -2.0, plane: 0.3), p).outcome, .unsure)
        XCTAssertEqual(read(capture(texture: -6.0, plane: 0.3), p).outcome, .attack)
        // A pair decided bona fide on pooled texture below the level: stepped up after its retake.
        let pair = read(capture(texture: 1.0, plane: 0.3), p, earlier: capture(texture: -2.0, plane: 0.3))
        XCTAssertEqual(pair.outcome, .challenge)
        XCTAssertEqual(pair.findings, [.textureNotConclusive])
        XCTAssertTrue(pair.combined)
        XCTAssertEqual(pair.textureLogOdds ?? .nan, -0.5, accuracy: 1e-9)
        // The challenged capture, decided with the stepped-up one: answered → bona fide; not
        // answered → an attack, whatever the first capture showed; never a second step-up.
        let first = capture(texture: 1.0, plane: 0.3)
        let stepped = PADRetake(pad: first.pad!, cues: [], steppedUp: true)
        XCTAssertTrue(stepped.challenged)
        func answer(_ e: SelfieEvidence) -> PADJudgement { p.judgePAD(e, cues: e.livenessCues, score: e.livenessScore, earlier: stepped) }
        let answered = answer(capture(texture: 1.2, challenge: [1, 1], plane: 0.4))
        XCTAssertEqual(answered.outcome, .bonaFide)
        XCTAssertTrue(answered.combined)
        XCTAssertEqual(answered.textureLogOdds ?? .nan, 1.1, accuracy: 1e-9)
        let unanswered = answer(capture(texture: 1.2, challenge: [1, 0], cues: [.challengeNotMet], plane: 0.4))
        XCTAssertEqual(unanswered.outcome, .attack)
        XCTAssertEqual(unanswered.findings.first, .challengeFailed)
        // A pooled texture under the line after the challenge: an attack.
        XCTAssertEqual(answer(capture(texture: -5.0, challenge: [1, 1], plane: 0.4)).outcome, .attack)
        // The no-life challenge is an attack when it cannot be asked.
        let stillTwice = read(capture(texture: 3.0, motion: 0.2, action: 0.2, plane: 0.05), p,
                              earlier: capture(texture: 3.0, motion: 0.2, action: 0.2, plane: 0.05))
        XCTAssertEqual(stillTwice.outcome, .challenge)
        XCTAssertEqual(stillTwice.withoutChallenge, .attack)
    }

    /// A person sitting still is never called an attack for it; a flat picture moved by a hand
    /// (plane motion without non-rigid motion or facial action) is.
    func testStillnessIsUnsureAndAPlaneMovedIsAnAttack() {
        let level = PADPolicy.defaultPlaneMotionLevel
        let still = level * 0.5, moved = level * 1.5
        // Neither facial action nor non-rigid motion, the face held still: unsure, whatever the texture.
        for texture in [-0.5, 3.0] {
            let r = read(capture(texture: texture, motion: 0.2, action: 0.2, plane: still))
            XCTAssertEqual(r.outcome, .unsure)
            XCTAssertEqual(r.findings, [.still])
        }
        // The same moved as a plane (a print or screen in a hand): an attack …
        let print = read(capture(texture: 0.3, motion: 0.2, action: 0.2, plane: moved))
        XCTAssertEqual(print.outcome, .attack)
        XCTAssertEqual(print.findings, [.noSignOfLife])
        // … unless the texture speaks strongly for a live face (at least the margin above the line):
        // texture and motion disagree — unsure, asked again.
        let swaying = read(capture(texture: 0.4, motion: 0.2, action: 0.2, plane: moved))
        XCTAssertEqual(swaying.outcome, .unsure)
        XCTAssertEqual(swaying.findings, [.cuesDisagree])
        // Facial action on a face held still (talking, blinking without moving the head): a sign of life.
        XCTAssertEqual(read(capture(texture: 1.0, motion: 0.3, action: 0.9, plane: still)).outcome, .bonaFide)
        // … but not on a face moving as a plane (a print's spurious "action" under a hand): the cues disagree.
        let spurious = read(capture(texture: 1.0, motion: 0.3, action: 0.9, plane: moved))
        XCTAssertEqual(spurious.outcome, .unsure)
        XCTAssertEqual(spurious.findings, [.cuesDisagree])
        // Still, and texture far below the line: the texture decides.
        XCTAssertEqual(read(capture(texture: -6.0, motion: 0.3, action: 0.9, plane: still)).findings, [.textureAttack])
        // The retake of a still capture: decided on both — still twice without any action is not bona
        // fide, and not an attack either: one more capture under an active challenge …
        let stillTwice = read(capture(texture: 3.0, motion: 0.2, action: 0.2, plane: still),
                              earlier: capture(texture: 3.0, motion: 0.2, action: 0.2, plane: still))
        XCTAssertEqual(stillTwice.outcome, .challenge)
        XCTAssertEqual(stillTwice.findings, [.cuesDisagree])
        // (with idv.pad.challenge_on_unsure off: an attack)
        var noChallenge = WorkflowPolicy()
        noChallenge.pad.challengeOnUnsure = false
        XCTAssertEqual(read(capture(texture: 3.0, motion: 0.2, action: 0.2, plane: still), noChallenge,
                            earlier: capture(texture: 3.0, motion: 0.2, action: 0.2, plane: still)).outcome, .attack)
        // … a blink in the retake is.
        XCTAssertEqual(read(capture(texture: 3.0, motion: 0.2, action: 0.8, plane: still),
                            earlier: capture(texture: 3.0, motion: 0.2, action: 0.2, plane: still)).outcome, .bonaFide)
        // A still face is not an answered challenge: active mode still needs the non-rigid motion.
        XCTAssertEqual(read(capture(texture: 1.0, motion: 0.3, challenge: [1, 1], plane: still)).findings, [.cuesDisagree])
    }

    func testOneCapture() {
        // Texture above the line, facial action and motion: bona fide.
        XCTAssertEqual(read(capture(texture: 1.0)).outcome, .bonaFide)
        // A screen: texture far below the line on enough good frames — confident, whatever the motion says.
        let screen = read(capture(texture: -6.0))
        XCTAssertEqual(screen.outcome, .attack)
        XCTAssertEqual(screen.findings, [.textureAttack])
        // Just below the line (within the margin): unsure, not an attack.
        let near = read(capture(texture: -2.5))
        XCTAssertEqual(near.outcome, .unsure)
        XCTAssertEqual(near.findings, [.textureUncertain])
        // Attack-like texture on too few good frames: unsure (poor capture), never confident.
        let few = read(capture(texture: -6.0, good: 2))
        XCTAssertEqual(few.outcome, .unsure)
        XCTAssertEqual(few.findings, [.fewGoodFrames, .textureUncertain])
        // No facial action and no motion (a held print): an attack unless the texture is strongly bona fide.
        XCTAssertEqual(read(capture(texture: -0.5, motion: 0.2, action: 0.2)).findings, [.noSignOfLife])
        let still = read(capture(texture: 3.0, motion: 0.2, action: 0.2))
        XCTAssertEqual(still.outcome, .unsure)
        XCTAssertEqual(still.findings, [.cuesDisagree])
        // One of the two seen, the other not: the cues disagree — unsure, however strong the texture.
        XCTAssertEqual(read(capture(texture: 6.0, motion: 0.3, action: 0.9)).findings, [.cuesDisagree])
        XCTAssertEqual(read(capture(texture: 6.0, motion: 0.9, action: 0.3)).findings, [.cuesDisagree])
        // The face not kept in view: unsure.
        XCTAssertEqual(read(capture(texture: 1.0, cues: [.faceLost])).findings, [.faceNotKept])
        // A still image, a failed challenge: attacks.
        XCTAssertEqual(read(capture(texture: 1.0, cues: [.insufficientFrames])).outcome, .attack)
        let failed = read(capture(texture: 1.0, challenge: [1, 0], cues: [.challengeNotMet]))
        XCTAssertEqual(failed.outcome, .attack)
        XCTAssertEqual(failed.findings, [.challengeFailed])
        XCTAssertEqual(read(capture(texture: 1.0, challenge: [1, 1])).outcome, .bonaFide)
    }

    func testTheRetakeIsDecidedOnBothCaptures() {
        let unsure = capture(texture: -2.5)
        XCTAssertEqual(read(unsure).outcome, .unsure)
        // A clearly bona fide retake: the pooled texture (weighted by good frames) reaches the line.
        let pair = read(capture(texture: 1.5), earlier: unsure)
        XCTAssertEqual(pair.outcome, .bonaFide)
        XCTAssertTrue(pair.combined)
        XCTAssertEqual(try XCTUnwrap(pair.textureLogOdds), -0.5, accuracy: 1e-9)
        // A retake as doubtful as the first: decided — an attack, never unsure twice.
        let twice = read(capture(texture: -2.0), earlier: unsure)
        XCTAssertEqual(twice.outcome, .attack)
        XCTAssertEqual(twice.findings, [.textureAttack])
        // The pooled texture is weighted by good frames: a retake on 15 good frames outweighs 5
        // (−1.5 pooled; the plain mean, −2.0, would lie below the line).
        XCTAssertEqual(read(capture(texture: -1.0), earlier: capture(texture: -3.0, good: 5)).outcome, .bonaFide)
        // Confident attack evidence in the retake decides alone.
        XCTAssertEqual(read(capture(texture: -8.0), earlier: capture(texture: 4.0, motion: 0.3)).findings, [.textureAttack])
        // A person sitting still twice: no capture shows life, nothing confident against it — a challenge.
        let stillTwice = read(capture(texture: 4.0, motion: 0.3), earlier: capture(texture: 4.0, motion: 0.3))
        XCTAssertEqual(stillTwice.outcome, .challenge)
        XCTAssertEqual(stillTwice.findings, [.cuesDisagree])
        // … and moving in one of the two: bona fide.
        XCTAssertEqual(read(capture(texture: 4.0, motion: 0.7), earlier: capture(texture: 4.0, motion: 0.3)).outcome, .bonaFide)
        // The face lost in the first capture, kept in the retake: bona fide.
        XCTAssertEqual(read(capture(texture: 2.0), earlier: capture(texture: 2.0, cues: [.faceLost])).outcome, .bonaFide)
    }

    /// Two captures that never showed the face well enough to read its texture (turned away,
    /// blurred), with life shown and nothing against them: a capture to take again, not an attack.
    func testAFaceNeverSeenWellIsAPoorCaptureNotAnAttack() {
        let turned = capture(texture: nil, good: 0)
        XCTAssertEqual(read(turned).outcome, .unsure)
        XCTAssertEqual(read(turned).findings, [.fewGoodFrames])
        let pair = read(capture(texture: 1.0, good: 2), earlier: turned)
        XCTAssertEqual(pair.outcome, .poorCapture)
        XCTAssertEqual(pair.findings, [.fewGoodFrames])
        XCTAssertTrue(pair.combined)
        // Enough good frames between the two captures: decided on them.
        XCTAssertEqual(read(capture(texture: 1.0, good: 4), earlier: turned).outcome, .bonaFide)
        // Few good frames with attack-like pooled texture, or without any sign of life: still an attack.
        let dark = read(capture(texture: -3.0, good: 2), earlier: capture(texture: -3.0, good: 1))
        XCTAssertEqual(dark.outcome, .attack)
        XCTAssertEqual(dark.findings, [.textureAttack, .fewGoodFrames])
        // Without a sign of life either: nothing confident, so the challenge decides (below).
        let stillTurned = capture(texture: nil, good: 0, motion: 0.2, action: 0.2, plane: 0.05)
        let lifeless = read(stillTurned, earlier: stillTurned)
        XCTAssertEqual(lifeless.outcome, .challenge)
        XCTAssertEqual(lifeless.findings, [.fewGoodFrames, .cuesDisagree])
        // A poor capture's shown score is left as measured (no verdict to agree with).
        XCTAssertEqual(WorkflowPolicy().reportedLivenessScore(37, outcome: .poorCapture), 37)
    }

    /// The challenged capture is decided together with the two before it: answering the challenge
    /// (with non-rigid motion) is the sign of life they lacked; not answering it, or answering it
    /// like a plane, is an attack — never a fourth capture. Only passive captures are sent on, once.
    func testAPairWithoutLifeIsDecidedByAChallenge() {
        let still = capture(texture: 2.0, motion: 0.2, action: 0.2, plane: 0.05)
        let pair = PADRetake(pad: still.pad!, cues: [], retake: still.pad!, retakeCues: [])
        XCTAssertTrue(pair.challenged)
        func third(_ e: SelfieEvidence) -> PADJudgement { WorkflowPolicy().judgePAD(e, cues: e.livenessCues, score: e.livenessScore, earlier: pair) }
        let answered = third(capture(texture: 1.5, motion: 0.8, challenge: [1, 1], plane: 0.4))
        XCTAssertEqual(answered.outcome, .bonaFide)
        XCTAssertTrue(answered.combined)
        XCTAssertEqual(try XCTUnwrap(answered.textureLogOdds), (2.0 + 2.0 + 1.5) / 3, accuracy: 1e-9)
        let unanswered = third(capture(texture: 1.5, motion: 0.8, challenge: [1, 0], plane: 0.4))
        XCTAssertEqual(unanswered.outcome, .attack)
        XCTAssertEqual(unanswered.findings, [.challengeFailed, .cuesDisagree])
        let asAPlane = third(capture(texture: 1.5, motion: 0.2, challenge: [1, 1], plane: 0.4))
        XCTAssertEqual(asAPlane.outcome, .attack)
        XCTAssertEqual(asAPlane.findings, [.cuesDisagree])
        // Answered, but the pooled texture of the three lies below the line: an attack.
        XCTAssertEqual(third(capture(texture: -9.0, motion: 0.8, challenge: [1, 1], plane: 0.4)).findings, [.textureAttack])
        // Active mode (the retake already answered a challenge): decided on the pair, no further challenge.
        let activeStill = capture(texture: 2.0, motion: 0.2, challenge: [1, 1], plane: 0.05)
        XCTAssertEqual(read(activeStill, earlier: activeStill).outcome, .attack)
        // Pooled texture below the line is confident enough: no challenge for it.
        XCTAssertEqual(read(capture(texture: -2.5, motion: 0.2, action: 0.2, plane: 0.05),
                            earlier: capture(texture: -2.5, motion: 0.2, action: 0.2, plane: 0.05)).findings, [.textureAttack, .cuesDisagree])
        XCTAssertEqual(WorkflowPolicy().reportedLivenessScore(61, outcome: .challenge), 61)
    }

    func testWithoutRetakesTheOneCaptureIsDecided() {
        var p = Self.noStepUp
        p.pad.retakeOnUnsure = false
        XCTAssertEqual(read(capture(texture: -2.5), p).outcome, .attack)
        XCTAssertEqual(read(capture(texture: -1.0), p).outcome, .bonaFide)
        // With the step-up (the default), that one capture is asked under a challenge instead.
        p.pad.challengeBelow = PADPolicy.defaultChallengeBelow
        XCTAssertEqual(read(capture(texture: -1.0), p).outcome, .challenge)
        XCTAssertEqual(read(capture(texture: -2.5), final: true).outcome, .attack)
    }

    func testEvidenceWithoutCuesIsJudgedByItsScore() {
        let bare = SelfieEvidence(livenessScore: 49, match: nil, frameCount: 30, trackedFrameCount: 30, framesPerSecond: 10,
                                  bestFrameJPEG: nil, embedding: [])
        XCTAssertEqual(read(bare).findings, [.scoreBelowThreshold])
        var live = bare
        live.livenessScore = 50
        XCTAssertEqual(read(live).outcome, .bonaFide)
    }

    func testTheShownScoreAgreesWithTheReading() {
        let p = WorkflowPolicy()
        XCTAssertEqual(p.reportedLivenessScore(30, outcome: .bonaFide), 50)
        XCTAssertEqual(p.reportedLivenessScore(80, outcome: .bonaFide), 80)
        XCTAssertEqual(p.reportedLivenessScore(80, outcome: .attack), 49)
        XCTAssertEqual(p.reportedLivenessScore(12, outcome: .attack), 12)
        let e = capture(texture: -6.0, score: 77)
        let j = p.judge(e, reference: .none, challenge: nil, now: 0, pad: read(e))
        XCTAssertEqual(j.verdict, .livenessFailed)
        XCTAssertEqual(j.livenessScore, 49)
        let ok = capture(texture: 2.0, score: 40)
        let k = p.judge(ok, reference: .none, challenge: nil, now: 0, pad: read(ok))
        XCTAssertEqual(k.verdict, .matched)
        XCTAssertEqual(k.livenessScore, 50)
    }

    func testSettings() throws {
        func load(_ o: [String: String]) throws -> PADPolicy { try ServerConfig.load(file: nil, environment: [:], overrides: o).engine.workflow.pad }
        XCTAssertEqual(try load(["idv.pad.texture_line": "-0.8"]).textureLine, -0.8)
        XCTAssertEqual(try load(["idv.pad.unsure_margin": "1.5"]).unsureMargin, 1.5)
        XCTAssertEqual(try load(["idv.pad.min_good_frames": "6"]).minimumGoodFrames, 6)
        XCTAssertFalse(try load(["idv.pad.retake_on_unsure": "false"]).retakeOnUnsure)
        XCTAssertTrue(try load([:]).challengeOnUnsure)
        XCTAssertFalse(try load(["idv.pad.challenge_on_unsure": "false"]).challengeOnUnsure)
        XCTAssertEqual(try load([:]).challengeBelow, PADPolicy.defaultChallengeBelow)
        XCTAssertEqual(try load(["idv.pad.challenge_below": "1.5"]).challengeBelow, 1.5)
        XCTAssertThrowsError(try load(["idv.pad.challenge_below": "high"]))
        XCTAssertThrowsError(try load(["idv.pad.challenge_below": "25"]))
        XCTAssertEqual(try load(["idv.pad.plane_motion_level": "0.9"]).planeMotionLevel, 0.9)
        XCTAssertThrowsError(try load(["idv.pad.plane_motion_level": "-0.1"]))
        XCTAssertThrowsError(try load(["idv.pad.texture_line": "lots"]))
        XCTAssertThrowsError(try load(["idv.pad.unsure_margin": "-1"]))
        XCTAssertThrowsError(try load(["idv.pad.min_good_frames": "0"]))
        // A config file may carry the line as a JSON number (what `idvd liveness calibrate` writes).
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pad-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"idv.pad.texture_line": -1.23, "idv.liveness_threshold": 50}"#.utf8).write(to: file)
        let loaded = try ServerConfig.load(file: file.path, environment: [:])
        XCTAssertEqual(loaded.engine.workflow.pad.textureLine, -1.23)
        XCTAssertEqual(loaded.engine.workflow.livenessThreshold, 50)
    }
}
