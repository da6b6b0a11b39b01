import Foundation
import IDVCore

/// The IDV workflow engine's settings: verdict thresholds, document policy, the `action_buttons`
/// policy, attempt limits, the flow timeout, consent text version and image retention. Part of
/// ``EngineSettings`` (`settings.workflow`); each has a config-file key, an `IDVD_…` environment
/// variable and an `idvd serve --set key=value` option (`idv.*`, `chip.*`, `review.*`; the table is
/// IDVRuntime's `SettingsTable`).
///
/// Verdicts are computed only here, from the analysers' raw scores (ARCHITECTURE.md §2: the server
/// is the only judge):
/// - a selfie capture with a capture-quality issue (too dark, too bright, blurred, face too small,
///   low contrast, off pose) is asked again with that reason (`idv.selfie_recapture_on_poor_quality`);
/// - `LIVENESS_FAILED` when the liveness score (0–100, ISO/IEC 30107-3 PAD: FaceKit's fused
///   texture + motion score) is below `idv.liveness_threshold`;
/// - else `MATCHED` when the face descriptor distance is at most the analyser's calibrated distance
///   of `idv.face_match_operating_point` for the comparison's kind and model (or, when the operating
///   point is `distance` or the evidence carries no calibration, `idv.face_match_max_distance` for
///   dlib's Euclidean distances and `idv.face_match_max_cosine_distance` for the recogniser's);
/// - else `NOT_MATCHED`.
public struct WorkflowPolicy: Sendable, Equatable {
    /// Largest Euclidean distance between 128-d face descriptors (dlib ResNet v1) that still
    /// matches. Default ``lfwCalibratedMaxDistance`` (0.55, FaceKit's `FaceMatchPolicy.lfwCalibratedThreshold`,
    /// chosen at FMR 0.1 % on LFW impostor pairs: FMR 0.11 %, FNMR 8.7 %, ISO/IEC 19795-1), the
    /// same line `idvd face compare` uses (a test in IDVReaders keeps the two equal). Configurable
    /// (`idv.face_match_max_distance`); dlib's accuracy-optimal 0.6 trades FMR 0.56 % for FNMR 2.3 %.
    public var faceMatchMaxDistance = WorkflowPolicy.lfwCalibratedMaxDistance
    /// The LFW-calibrated descriptor distance line (dlib ResNet v1), FaceKit's `FaceMatchPolicy.lfwCalibratedThreshold`.
    public static let lfwCalibratedMaxDistance = 0.55
    /// Largest cosine distance between the face recogniser's descriptors
    /// (face-reidentification-retail-0095: portraits, version-3 templates) that still matches when
    /// ``faceMatchOperatingPoint`` is `distance` or the evidence carries no calibration
    /// (`idv.face_match_max_cosine_distance`). Default ``recognizerMaxCosineDistance``.
    public var faceMatchMaxCosineDistance = WorkflowPolicy.recognizerMaxCosineDistance
    /// FaceKit's image-to-image line of the recogniser at FMR 0.1 % (LFW, fitted on the fit people of
    /// `bench/lfw-split.txt`; a test in IDVReaders keeps the two equal).
    public static let recognizerMaxCosineDistance = 0.657
    /// A version-1/2 stored template (dlib's descriptor) is replaced by the capture's version-3
    /// template when the user matches it confidently in a biometric authentication against it
    /// (`idv.upgrade_legacy_templates`, default true; ``replacesStoredTemplate(_:judgement:storedModel:)``).
    public var upgradeLegacyTemplates = true
    /// Whether biometric opt-in (seed 004) may enrol a template (`idv.optin_enrolment`, default
    /// true). Opt-in re-authenticates with LDA or the password and enrols whatever live face it is
    /// shown — it has no reference — so whoever holds the password can opt out and enrol his own
    /// face (docs/LIMITS.md). Off: opt-in answers 1033 and templates are enrolled only with consent
    /// after a selfie that MATCHED an identity document (KYC, activation with IDV).
    public var optInEnrolment = true
    /// The face-match operating point (ISO/IEC 19795-1): the verdict uses the distance the analyser
    /// calibrated for this target FMR and the comparison's kind (``FaceMatchEvidence/calibration``).
    /// Default `fmr_0.1` (NIST SP 800-63B's ceiling). FaceKit's figures for the recogniser
    /// (face-reidentification-retail-0095, version-3 templates; LFW, lines fitted on the fit people
    /// of `bench/lfw-split.txt`, measured on its eval people; docs/LIVENESS.md, bench/face.md): a
    /// selfie's fused template against a portrait (fused↔image) at `fmr_0.1`: cosine distance
    /// 0.6403, FMR 0.058 %, FNMR 0.43 %; at `fmr_0.01`: 0.5173, FMR 0.0005 %, FNMR 1.95 %; against a
    /// fused stored template (fused↔fused): 0.5634 / 0.3864. Version-1/2 templates are judged at
    /// dlib's own lines. nil (`distance`): the fixed ``faceMatchMaxDistance`` (or
    /// ``faceMatchMaxCosineDistance``) for every comparison.
    public var faceMatchOperatingPoint: MatchOperatingPoint? = .fmr1in1000
    /// A selfie capture the analyser reports unfit to decide on (``SelfieEvidence/captureIssues``)
    /// is asked again with the code (1060–1065), counting an attempt, instead of being
    /// judged. Default true.
    public var recaptureOnPoorCapture = true
    /// Liveness score threshold (integer 0–100); below it the verdict is `LIVENESS_FAILED` for
    /// evidence that carries no typed PAD cues (with them, ``pad`` decides: PADJudgement.swift).
    public var livenessThreshold = 50
    /// Presentation-attack detection: what is a confident attack, what is unsure and asked again
    /// (`idv.pad.*`, PADJudgement.swift; docs/LIVENESS.md).
    public var pad = PADPolicy()
    /// Document policy: an expired document (date of expiry before today, UTC) is INVALID.
    public var rejectExpiredDocuments = true
    /// Document policy: a failed MRZ check digit (ICAO 9303-3 §4.9) makes the document INVALID.
    public var rejectFailedCheckDigits = true
    /// Document policy: flows that match a selfie need the document portrait; none → INVALID.
    public var requirePortrait = true
    /// Document policy (`idv.doc.accept_specimen_documents`): a document of ICAO's fictional state
    /// Utopia (`UTO`, ICAO 9303-3 §5: specimens only) as issuing state or nationality is judged like a
    /// real one. A test-deployment setting, OFF by default (as in the production configuration
    /// `docs/idvd.production.json`): a UTO document is INVALID (`DocumentReason.specimenDocument`).
    /// The demo, the tests and the specimen tools turn it on explicitly; `idvd serve` logs a warning
    /// at start while it is on.
    public var acceptSpecimenDocuments = false
    /// Document policy (`idv.doc.require_name_confirmation`): the MRZ's names, which no check digit
    /// covers (ICAO 9303-3 §4.9), are VALID only when print confirms them — every name part printed
    /// the same in the visual zone or on a TD1 card's front (or settled in the print's favour).
    /// A part not found printed, printed otherwise, or names compared with no print at all (a card's
    /// MRZ side alone, a photo without the visual zone) make the document WARNING, naming the part
    /// (``unconfirmedNames(_:)``). Default true; false judges the names as before #40 (only a part
    /// that differs rules out VALID).
    public var requireNameConfirmation = true
    /// ICAO 9303-3 §5's code of the fictional state on specimen documents.
    public static let specimenStateCode = "UTO"
    /// `action_buttons` policy: offer "Continue Anyway" (`continue-flow`) after `NOT_MATCHED`
    /// (never after `LIVENESS_FAILED`). A continued unmatched flow never creates a template and
    /// reports status 400 where the flow reports a status.
    public var continueAnywayAfterNotMatched = false
    /// Document uploads allowed per flow (each upload, readable or not, uses one).
    public var documentAttempts = 3
    /// Selfie captures allowed per flow.
    public var selfieAttempts = 3
    /// Password re-authentication attempts in the opt-in/opt-out flows.
    public var reauthAttempts = 3
    /// Consecutive failed server biometric authentications before the user must wait
    /// `idv.lockout_seconds` (reported as `attempts_left`).
    public var biometricAttempts = 5
    public var biometricLockoutSeconds = 900
    /// An IDV flow answered after this many seconds from its start ends with 1019 `flowExpired`.
    public var flowTimeoutSeconds = 900
    /// Version of the biometric consent text shown with `getIDVBiometricOptInConsent`; recorded
    /// with every consent.
    public var consentTextVersion = "openidv-biometric-consent-1"
    /// Seconds uploaded images (document pages, portrait, selfie frames — encrypted) are kept
    /// after their flow ends. 0 (default): deleted when the flow ends.
    public var mediaRetentionSeconds = 0
    /// Largest number of document pages / selfie frames accepted in one upload.
    public var maxPages = 2
    public var maxFrames = 150
    /// Liveness evidence (issue 6: both modes always available, chosen here): `passive` (default;
    /// unprompted blink and non-rigid motion) or `active` (the selfie start carries a server-issued
    /// ``LivenessChallenge`` and the frames must show its actions in order).
    public var livenessMode = "passive"
    /// Active mode: sequence time allowed for the challenged actions, seconds (FaceKit default 6).
    public var activeChallengeDurationSeconds = 6
    /// Active mode: the frames must arrive within this many seconds of the challenge's issue.
    public var activeChallengeDeadlineSeconds = 120

    public var activeLiveness: Bool { livenessMode == "active" }
    /// `chip.require_trusted_csca`: a chip whose document signer does not chain to a trusted CSCA
    /// (unknown CSCA, a CSCA key that does not verify it, no DSC, an algorithm that cannot be
    /// checked) makes the document INVALID instead of WARNING (docs/CHIP.md "The verdict rule").
    public var requireTrustedCSCA = false
    /// `chip.require_genuine`: a chip that did not prove itself genuine by Active Authentication over the step's
    /// challenge (ICAO 9303-11 §6.1) — the client did not run it, the chip has no DG15 key, or its algorithm cannot
    /// be checked — makes the document INVALID instead of WARNING ("a copy is not excluded"). A failed or replayed
    /// Active Authentication is INVALID whatever this says (docs/CHIP.md "The verdict rule"). Default false.
    public var requireGenuineChip = false
    /// Which evidence sends a KYC to human review instead of a decision (`review.*`; RelyingParty/Review.swift).
    public var review = ReviewPolicy()
    /// Presence: the illumination challenge, its fallback and the replay check (`idv.presence*`,
    /// `idv.capture_replay_seconds`; Workflows/Presence.swift).
    public var presence = PresencePolicy()

    public init() {}

    /// The scores a device may be shown (seed 002's selfie confirmation, seed 004's captured frame):
    /// only for a `MATCHED` verdict, the face match rounded to 0.01 and the liveness score to a
    /// multiple of 5 — an attack verdict (`LIVENESS_FAILED`, `NOT_MATCHED`) shows none, so the
    /// device is no oracle to tune a presentation attack or an impostor against. The exact scores
    /// stay in the audit. nil: show no score.
    public static func shownScores(_ j: SelfieJudgement) -> (faceMatch: Double?, liveness: Int)? {
        guard j.verdict == .matched else { return nil }
        let face = j.faceMatchScore.map { min(1, max(0, ($0 * 100).rounded() / 100)) }
        return (face, min(100, max(0, Int((Double(j.livenessScore) / 5).rounded()) * 5)))
    }

    /// Liveness reasons a device may be shown with `LIVENESS_FAILED`: only those that tell a real
    /// person what to do differently (the challenged actions not seen or too late, no face, the
    /// face left the frame or another one came in, too few frames) — never which presentation-attack
    /// cue fired (`NO_BLINK`, `RIGID_MOTION`, `TEXTURE_ATTACK`, `LOW_SCORE`…), which stays in the audit.
    public static func retryHints(_ j: SelfieJudgement) -> [String] {
        j.cues.map(\.rawValue).filter(retryHintCues.contains)
    }

    /// The cues ``retryHints(_:)`` keeps.
    /// The presence cues `ILLUMINATION_NOT_FOLLOWED` and `PRESENCE_EXPIRED` are hints too (a real
    /// person held the phone too far, stood in bright light or waited too long); `REPLAYED_FRAMES`
    /// is not (no camera records the same bytes twice).
    public static let retryHintCues: Set<String> = ["CHALLENGE_NOT_MET", "CHALLENGE_EXPIRED", "CHALLENGE_NOT_EVALUATED", "INSUFFICIENT_FRAMES",
                                                    "NO_FACE", "FACE_LOST", "MULTIPLE_FACES", "ILLUMINATION_NOT_FOLLOWED", "PRESENCE_EXPIRED"]
}
