import Foundation
import IDVCore

// What a judgement's audit entry records so that a verification's signed evidence record
// (IDVOperations Evidence/EvidenceRecord.swift; docs/DATA-PROTECTION.md "Evidence records") can
// say, years later, *what* was judged and *under which policy*: the SHA-256 of every image and
// chip file judged (never the bytes) and the version of the judging settings.

/// One input a judgement rested on, named by its SHA-256 (lowercase hex of the bytes the client
/// uploaded, after base64 decoding): never the image itself.
public struct JudgedImage: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// The first page of a document upload (the data page of a passport, the front of a card).
        case documentFront = "document_front"
        /// A later page of the same upload (a card's back; pages beyond the second count here too).
        case documentBack = "document_back"
        /// One selfie frame.
        case selfieFrame = "selfie_frame"
        /// The chip's EF.SOD (the document security object, ICAO 9303-10 §4.6.2), as sent.
        case chipSOD = "chip_sod"
    }

    public var kind: Kind
    /// SHA-256 of the bytes, 64 lowercase hex digits.
    public var sha256: String
    /// How many times these exact bytes were in the upload (a capture may repeat a frame); 1 mostly.
    public var count: Int

    public init(kind: Kind, sha256: String, count: Int = 1) {
        self.kind = kind
        self.sha256 = sha256
        self.count = count
    }

    /// `{"kind","sha256"}`, plus `"count"` when the bytes came more than once.
    public var json: JSONValue {
        var o: [String: JSONValue] = ["kind": .string(kind.rawValue), "sha256": .string(sha256)]
        if count > 1 { o["count"] = .integer(count) }
        return .object(o)
    }

    /// The document pages of one upload in order (page 0 `document_front`, later pages
    /// `document_back`) and the chip's EF.SOD when a chip was sent.
    public static func document(pages: [Data], sod: Data?, crypto: any EngineCrypto) -> [JudgedImage] {
        var out = distinct(pages.prefix(1), kind: .documentFront, crypto: crypto)
        out += distinct(pages.dropFirst(), kind: .documentBack, crypto: crypto)
        if let sod { out.append(JudgedImage(kind: .chipSOD, sha256: Hex.encode(crypto.sha256(Array(sod))))) }
        return out
    }

    /// The selfie frames of one capture, each distinct frame once, in upload order, with its count.
    public static func selfie(frames: [Data], crypto: any EngineCrypto) -> [JudgedImage] {
        distinct(frames, kind: .selfieFrame, crypto: crypto)
    }

    static func distinct<C: Collection>(_ images: C, kind: Kind, crypto: any EngineCrypto) -> [JudgedImage] where C.Element == Data {
        var out: [JudgedImage] = []
        var at: [String: Int] = [:]
        for image in images {
            let digest = Hex.encode(crypto.sha256(Array(image)))
            if let i = at[digest] { out[i].count += 1 } else {
                at[digest] = out.count
                out.append(JudgedImage(kind: kind, sha256: digest))
            }
        }
        return out
    }
}

extension WorkflowPolicy {
    /// Every setting that can change a verdict, under its settings-table key (`idvd serve --help`):
    /// face-match operating point and distances, liveness threshold and mode, PAD (`idv.pad.*`),
    /// presence (`idv.presence*`, `idv.capture_replay_seconds`), the document policy
    /// (`idv.doc.*`, `chip.require_*`), capture-quality recapture, whether a NOT_MATCHED may be
    /// continued (`idv.continue_anyway`) and the review triggers (`review.*`). Attempt counts,
    /// timeouts, upload sizes, retention, the consent text's version and template upgrades are not
    /// in it: they bound a flow, they do not judge evidence (``nonJudgingSettingKeys``; a test
    /// keeps the two lists covering every `idv.*`, `chip.*` and `review.*` setting). Numbers are
    /// JSON numbers, switches booleans, modes strings.
    public var judgingSettings: [String: JSONValue] {
        [
            "idv.face_match_operating_point": .string(faceMatchOperatingPoint?.rawValue ?? "distance"),
            "idv.face_match_max_distance": .number(faceMatchMaxDistance),
            "idv.face_match_max_cosine_distance": .number(faceMatchMaxCosineDistance),
            "idv.liveness_threshold": .integer(livenessThreshold),
            "idv.liveness_mode": .string(livenessMode),
            "idv.active_challenge_duration_seconds": .integer(activeChallengeDurationSeconds),
            "idv.active_challenge_deadline_seconds": .integer(activeChallengeDeadlineSeconds),
            "idv.selfie_recapture_on_poor_quality": .bool(recaptureOnPoorCapture),
            "idv.pad.texture_line": .number(pad.textureLine),
            "idv.pad.unsure_margin": .number(pad.unsureMargin),
            "idv.pad.min_good_frames": .integer(pad.minimumGoodFrames),
            "idv.pad.plane_motion_level": .number(pad.planeMotionLevel),
            "idv.pad.retake_on_unsure": .bool(pad.retakeOnUnsure),
            "idv.pad.challenge_on_unsure": .bool(pad.challengeOnUnsure),
            "idv.pad.challenge_below": .number(pad.challengeBelow),
            "idv.pad.challenge_window_seconds": .integer(pad.challengeWindowSeconds),
            "idv.presence": .string(presence.mode.rawValue),
            "idv.presence_fallback": .string(presence.fallback.rawValue),
            "idv.presence_deadline_seconds": .integer(presence.deadlineSeconds),
            "idv.presence_retake_p": .number(presence.retakePValue),
            "idv.capture_replay_seconds": .integer(presence.replaySeconds),
            "idv.doc.reject_expired": .bool(rejectExpiredDocuments),
            "idv.doc.reject_check_digits": .bool(rejectFailedCheckDigits),
            "idv.doc.require_portrait": .bool(requirePortrait),
            "idv.doc.require_name_confirmation": .bool(requireNameConfirmation),
            "idv.doc.accept_specimen_documents": .bool(acceptSpecimenDocuments),
            "chip.require_trusted_csca": .bool(requireTrustedCSCA),
            "chip.require_genuine": .bool(requireGenuineChip),
            "idv.continue_anyway": .bool(continueAnywayAfterNotMatched),
            "review.document_warning": .bool(review.documentWarning),
            "review.match_band": .number(review.matchBand),
            "review.liveness_band": .integer(review.livenessBand),
            "review.chip_unknown_csca": .bool(review.chipUnknownCSCA),
        ]
    }

    /// The `idv.*` settings that are deliberately not part of the policy's version.
    public static let nonJudgingSettingKeys: Set<String> = [
        "idv.upgrade_legacy_templates", "idv.optin_enrolment", "idv.document_attempts", "idv.selfie_attempts", "idv.reauth_attempts", "idv.biometric_attempts",
        "idv.lockout_seconds", "idv.flow_timeout_seconds", "idv.consent_text_version", "idv.media_retention_seconds", "idv.max_pages",
        "idv.max_frames",
    ]

    /// ``judgingSettings`` as canonical JSON: keys sorted, no blanks, `/` unescaped.
    public var canonicalJudgingSettings: Data {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? enc.encode(JSONValue.object(judgingSettings))) ?? Data()
    }

    /// The policy's version: `sha256:` and the SHA-256 (lowercase hex) of
    /// ``canonicalJudgingSettings``. The same settings give the same version on every node and
    /// every start; any change of a judging setting gives another. Recorded as `policy_version`
    /// in each judgement's audit entry (`idv.document_read`, `idv.selfie_verified`).
    public func version(crypto: any EngineCrypto) -> String {
        "sha256:" + Hex.encode(crypto.sha256(Array(canonicalJudgingSettings)))
    }
}
