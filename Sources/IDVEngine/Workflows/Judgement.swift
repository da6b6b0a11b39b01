import Foundation
import IDVCore

// The one judge: evidence → verdict + reason codes. Every verdict the server reports (document
// VALID / INVALID / WARNING, selfie MATCHED / NOT_MATCHED / LIVENESS_FAILED) is decided here, from
// the readers' typed evidence and the `WorkflowPolicy` settings; words for people come from
// `DocumentWording` at the payload edge.

/// The server's document verdict (seed 002 `overall_status`).
public enum DocumentStatus: String, Codable, Sendable, Equatable {
    case valid = "VALID"
    case invalid = "INVALID"
    case warning = "WARNING"
}

/// Why a document is not VALID: a reader finding, or one of the policy's own rules.
public enum DocumentReason: Sendable, Equatable {
    /// Something the reader found (IDVEvidence ``DocumentFinding``).
    case finding(DocumentFinding)
    /// Policy `idv.doc.reject_expired`: the date of expiry is before today (UTC) and the reader
    /// did not report it.
    case expired
    /// Policy `idv.doc.reject_check_digits`: a check digit does not verify (or none could be
    /// checked) and the reader showed no failed check-digit check.
    case checkDigitFailed
    /// Policy `idv.doc.require_portrait`: a flow that matches a selfie needs the document portrait.
    case portraitMissing
    /// Policy `idv.doc.accept_specimen_documents` off: the issuing state or nationality is ICAO's
    /// fictional Utopia (`UTO`): a specimen, not a real document.
    case specimenDocument
    /// A passive-authentication step failed on the chip sent with the pages (docs/CHIP.md "The verdict rule").
    case chip(ChipFailure)
    /// DG1's MRZ differs from the MRZ printed on the page in these fields.
    case chipMRZMismatch([String])
    /// The chip's signer certificates do not carry DG1's issuing state as their country
    /// (``WorkflowPolicy/signerCountryMismatch(_:)``): another state's signer vouched for the document.
    case chipSignerCountryMismatch(ChipSignerCountryMismatch)
    /// Chip data was sent without DG1 (or without a printed MRZ): the chip cannot be tied to the page.
    case chipMRZNotCompared
    /// Active Authentication (ICAO 9303-11 §6.1) did not prove the chip genuine: it failed (a copy, a replayed
    /// answer, a key the issuer did not sign: errors), or it could not prove it (not run, no DG15, an algorithm that
    /// cannot be checked: "a copy is not excluded", warnings — errors under `chip.require_genuine`).
    case chipActiveAuthentication(ActiveAuthenticationResult)
    /// The chip is authentic, but the portrait printed on the page is farther from DG2's face than
    /// the match line (``WorkflowPolicy/matchThreshold(_:)`` for `image_to_image`): the printed photo
    /// may have been replaced. A warning, not an error — a printed portrait photographed through a
    /// laminate can be poor — so the relying party (or review) decides; the selfie is matched
    /// against DG2 either way.
    case chipPortraitDiffers(distance: Double, threshold: Double)
    /// A TD1 card's front was given (page, 0-based) but none of the MRZ's names was found printed on
    /// it, nor above the MRZ: the names, which have no check digit, are unconfirmed by the one page
    /// meant to show them (another card's side, or a front too poor to read). A warning.
    case cardFrontShowsNoName(page: Int)
    /// Policy `idv.doc.require_name_confirmation`: an MRZ name part (names have no check digit, ICAO
    /// 9303-3 §4.9) that no print confirms. The visual zone or the card's front was read and does not
    /// print it (`printed` nil), or prints it otherwise and the reader kept the MRZ's reading
    /// (`printed`: the printed word, transliterated to A–Z). A warning naming the part.
    case nameNotConfirmed(field: MRZNameField, mrz: String, printed: String?)
    /// Policy `idv.doc.require_name_confirmation`: the MRZ's names were compared with no print at
    /// all (`why`), so nothing confirms them. A warning.
    case namesNotCompared(NamesNotCompared)
}

/// Why the MRZ's names were compared with no print (``DocumentReason/namesNotCompared(_:)``), from the
/// reader's "Names match visual zone" evidence.
public enum NamesNotCompared: Sendable, Equatable {
    /// The reader's visual-zone check was switched off.
    case checkOff
    /// No visual zone with the names on the pages given (a photo cut tightly around the MRZ).
    case noVisualZone
    /// A TD1 card's MRZ side alone: the card prints its names on the front (ICAO 9303-5), not sent.
    case cardFrontNotGiven
    /// The text recogniser could not start (`reason`, e.g. Tesseract's language data missing).
    case recogniserUnavailable(String)
}

/// The policy's document judgement: the verdict, the reasons that are errors (they make it
/// INVALID) and warnings (they rule out VALID), and the checks as reported.
public struct DocumentJudgement: Sendable, Equatable {
    public var status: DocumentStatus
    public var errors: [DocumentReason]
    public var warnings: [DocumentReason]
    /// The reader's checks, with `documentNotExpired` failed when the policy found the document
    /// expired although the reader's reference date did not.
    public var checks: [CheckOutcome]
}

/// Why a selfie verdict is what it is (audited as `reason`).
public enum SelfieReason: String, Sendable, Equatable {
    /// MATCHED: live, and the descriptor distance is within the operating point's distance.
    case matched
    /// MATCHED with no reference (an enrolment capture): live and one face.
    case liveWithoutReference = "live_without_reference"
    /// LIVENESS_FAILED: the PAD reading is an attack (confident attack evidence, or a capture and its
    /// retake that together are not bona fide) — for evidence without typed PAD cues, the liveness
    /// score is below `idv.liveness_threshold`.
    case livenessBelowThreshold = "liveness_below_threshold"
    /// LIVENESS_FAILED: the analyser did not evaluate the challenge the server issued.
    case challengeNotEvaluated = "challenge_not_evaluated"
    /// LIVENESS_FAILED: the frames arrived after the issued challenge's deadline.
    case challengeExpired = "challenge_expired"
    /// LIVENESS_FAILED: the reflected light did not follow the issued illumination sequence
    /// (Workflows/Presence.swift).
    case presenceNotFollowed = "presence_not_followed"
    /// LIVENESS_FAILED: the frames arrived after the illumination challenge's deadline.
    case presenceExpired = "presence_expired"
    /// LIVENESS_FAILED: a frame is byte for byte a frame of an earlier upload.
    case replayedCapture = "replayed_capture"
    /// NOT_MATCHED: no comparison with the reference could be measured.
    case noComparison = "no_comparison"
    /// NOT_MATCHED: the descriptor distance is above the operating point's distance.
    case distanceAboveThreshold = "distance_above_threshold"
}

/// The policy's selfie judgement.
public struct SelfieJudgement: Sendable, Equatable {
    public var verdict: BiometricVerdict
    public var reason: SelfieReason
    /// The liveness score as reported (0 when the issued challenge was not met in time).
    public var livenessScore: Int
    /// The cues as reported: the analyser's plus the policy's challenge cues.
    public var cues: [LivenessCue]
    /// `face_matcher_response.score`, 0–1, when a comparison was measured.
    public var faceMatchScore: Double?
    /// The distance line the match was judged with (``WorkflowPolicy/matchThreshold(_:)``), when a
    /// comparison was measured.
    public var matchThreshold: Double? = nil
    /// The presence assurance of the capture (the illumination followed, a fallback, or not checked).
    public var assurance: PresenceAssurance = .notChecked
    /// The PAD reading the liveness verdict came from (nil: the score alone decided).
    public var pad: PADJudgement? = nil
    /// `biometric_result.result_criteria` (seed 002 §6.2): `LIVENESS` when liveness decided, else `FACE_MATCH`.
    public var resultCriteria: BiometricResultCriteria { BiometricResultCriteria(verdict: verdict) }
}

extension WorkflowPolicy {
    /// The UTC calendar day of `now` (Unix seconds) as ISO 8601 `YYYY-MM-DD`: "today" for expiry.
    public static func utcDay(_ now: Int) -> String {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        let d = cal.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(now)))
        return String(format: "%04d-%02d-%02d", d.year ?? 1970, d.month ?? 1, d.day ?? 1)
    }

    // MARK: Chips (docs/CHIP.md "The verdict rule")

    /// Whether a chip failure makes the document INVALID: a forged or altered chip (signature,
    /// security object, a data-group hash, DG1/DG2 not signed), a revoked document signer; and the
    /// issuer cases (CSCA unknown, a CSCA key that does not verify the DSC, no DSC, an algorithm
    /// that cannot be checked) when `chip.require_trusted_csca` is set. Every other failure rules
    /// out VALID (WARNING).
    public func isError(_ f: ChipFailure) -> Bool {
        switch f {
        case .signatureInvalid, .securityObjectDigestMismatch, .dataGroupHashMismatch, .usedDataGroupNotSigned, .documentSignerRevoked:
            return true
        case .cscaUnknown, .cscaSignatureInvalid, .documentSignerMissing, .unsupportedAlgorithm:
            return requireTrustedCSCA
        case .otherDataGroupNotSigned, .documentSignerExpired, .documentSignerNotYetValid, .cscaExpired, .cscaNotYetValid:
            return false
        }
    }

    /// The signer-country rule (ICAO 9303-12 §7.1: the CSCA's and the document signer's subject carry the
    /// issuing state's countryName, ISO 3166-1 alpha-2, and the DSC's issuer is the CSCA's subject): the first
    /// signer certificate whose country does not stand for DG1's issuing state (`expectedCountries`, compared
    /// without regard to case as RFC 5280 §7.1 compares PrintableString), in this order:
    /// - the document signer's subject — also when it names no country: ICAO 9303-12 requires one, and a
    ///   DSC without it cannot be tied to the issuing state;
    /// - the document signer's issuer name, when it names a country (the BSI 2008 test DSC's issuer
    ///   `CN=CSCA BDR TEST 19.09.07` names none; when the chain is trusted the CSCA's subject is checked);
    /// - the trusted CSCA's subject, when the chain reached one (also when it names no country).
    /// An issuing state with no known X.509 country (an ICAO Part D organisation such as `XPO`, `XXA`, an
    /// unknown code) has nothing to correspond to, so its document signer is a mismatch: no signer can be
    /// shown to be that state's. Nil when every country corresponds, or nothing was compared (no DG1, no DSC).
    public func signerCountryMismatch(_ c: ChipEvidence) -> ChipSignerCountryMismatch? {
        guard let s = c.signerCountries else { return nil }
        let expected = Set(s.expectedCountries.map { $0.uppercased() })
        func corresponds(_ values: [String]) -> Bool { !values.isEmpty && values.allSatisfy { expected.contains($0.uppercased()) } }
        if !corresponds(s.documentSigner) {
            return ChipSignerCountryMismatch(certificate: .documentSigner, countries: s.documentSigner, issuingState: s.issuingState)
        }
        if !s.documentSignerIssuer.isEmpty, !corresponds(s.documentSignerIssuer) {
            return ChipSignerCountryMismatch(certificate: .documentSignerIssuer, countries: s.documentSignerIssuer, issuingState: s.issuingState)
        }
        if let csca = s.csca, !corresponds(csca) {
            return ChipSignerCountryMismatch(certificate: .csca, countries: csca, issuingState: s.issuingState)
        }
        return nil
    }

    /// Whether the chip is authentic for the verdicts: passive authentication passed, DG1 equals the
    /// printed MRZ (``ChipEvidence/authentic``) and the signers' country is the issuing state's.
    public func chipAuthentic(_ c: ChipEvidence) -> Bool { c.authentic && signerCountryMismatch(c) == nil }

    /// Whether the chip is genuine — the strongest document evidence: authentic (``chipAuthentic(_:)``: passive
    /// authentication, DG1, the signers' country) and it proved it holds DG15's private key by signing this step's
    /// own challenge (Active Authentication verified, ICAO 9303-11 §6.1). Authentic alone means the data is the
    /// issuer's, but a copy of the chip's files is not excluded.
    public func chipGenuine(_ c: ChipEvidence) -> Bool { chipAuthentic(c) && c.activeAuthentication.verified }

    /// Whether an Active Authentication outcome makes the document INVALID: a signature that does not verify with
    /// DG15's key (a copy), one over another challenge (replayed), one from a key the SOD does not vouch for; and —
    /// under `chip.require_genuine` — anything short of verified (not run, no DG15, an algorithm that cannot be
    /// checked). Otherwise those rule out VALID ("a copy is not excluded": WARNING).
    public func isError(_ aa: ActiveAuthenticationResult) -> Bool {
        switch aa {
        case .verified: return false
        case let .failed(f, _):
            switch f {
            case .signatureInvalid, .challengeReplayed, .keyNotAuthenticated: return true
            case .unsupportedAlgorithm: return requireGenuineChip
            }
        case .notSupported, .notPerformed: return requireGenuineChip
        }
    }

    /// The wire reason of an Active Authentication outcome that is not `verified` (nil when verified).
    public static func reason(of aa: ActiveAuthenticationResult) -> ChipVerificationReason? {
        switch aa {
        case .verified: return nil
        case .notSupported: return .activeAuthenticationNotSupported
        case .notPerformed: return .activeAuthenticationNotPerformed
        case let .failed(f, _):
            switch f {
            case .signatureInvalid: return .activeAuthenticationFailed
            case .challengeReplayed: return .activeAuthenticationReplayed
            case .keyNotAuthenticated: return .activeAuthenticationKeyNotSigned
            case .unsupportedAlgorithm: return .activeAuthenticationUnsupported
            }
        }
    }

    /// The wire reason of chip evidence (`nfc_scan_status_reason`): the INVALID-making findings first — a passive
    /// authentication failure, a failed or replayed Active Authentication, a signer-country mismatch, DG1 differing
    /// from the printed MRZ, then Active Authentication short of verified under `chip.require_genuine` — then the
    /// warnings: another passive-authentication failure, DG1 not compared, Active Authentication not run or not
    /// supported; `genuine` when none holds.
    public func chipReason(_ c: ChipEvidence) -> ChipVerificationReason {
        let reason: (ChipFailure) -> ChipVerificationReason = Self.reason(of:)
        let aa = c.activeAuthentication
        if let f = c.failures.first(where: isError) { return reason(f) }
        if case .failed = aa, isError(aa), let r = Self.reason(of: aa) { return r }
        if signerCountryMismatch(c) != nil { return .signerCountryMismatch }
        if case .differs = c.mrz { return .mrzMismatch }
        if isError(aa), let r = Self.reason(of: aa) { return r }
        if let f = c.failures.first { return reason(f) }
        if !chipAuthentic(c) { return .mrzNotCompared }
        return Self.reason(of: aa) ?? .genuine
    }

    /// Whether chip evidence makes the document INVALID (seed 003 `nfc_scan_status` `ERROR`): an
    /// INVALID-making failure, a signer-country mismatch, DG1 differing from the printed MRZ, or an Active
    /// Authentication outcome that is an error (``isError(_:)-…``).
    public func chipIsError(_ c: ChipEvidence) -> Bool {
        if c.failures.contains(where: isError) || signerCountryMismatch(c) != nil || isError(c.activeAuthentication) { return true }
        if case .differs = c.mrz { return true }
        return false
    }

    /// The wire reason (`ChipVerificationReason`) of one chip failure.
    public static func reason(of f: ChipFailure) -> ChipVerificationReason {
            switch f {
            case .signatureInvalid: return .signatureInvalid
            case .securityObjectDigestMismatch: return .securityObjectDigestMismatch
            case .documentSignerMissing: return .documentSignerMissing
            case .unsupportedAlgorithm: return .unsupportedAlgorithm
            case .dataGroupHashMismatch: return .dataGroupHashMismatch
            case .usedDataGroupNotSigned, .otherDataGroupNotSigned: return .dataGroupNotSigned
            case .cscaUnknown: return .cscaUnknown
            case .cscaSignatureInvalid: return .cscaSignatureInvalid
            case .documentSignerRevoked: return .documentSignerRevoked
            case .documentSignerExpired, .documentSignerNotYetValid, .cscaExpired, .cscaNotYetValid: return .certificateNotValidNow
            }
    }

    /// Whether the chip's DG2 portrait is the selfie's face reference: passive authentication
    /// passed in full (chain to a trusted CSCA included), DG1 equals the printed MRZ, and DG2 has a face.
    public func chipPortraitUsable(_ c: ChipEvidence?) -> Bool {
        guard let c else { return false }
        return chipAuthentic(c) && c.portraitJPEG != nil
    }

    // MARK: Documents

    /// Whether a reader finding is an error (the document is INVALID) or a warning (not VALID).
    public func isError(_ f: DocumentFinding) -> Bool {
        switch f {
        case .pageTooLarge, .pageUndecodable, .noMRZ, .glareHidesMRZ, .unclearCharacters, .mrzError, .missingRequiredFields,
             .expired, .noExpiryDate, .invalidExpiryDate, .invalidBirthDate, .implausibleBirthDate, .pagesOfDifferentDocuments:
            return true
        case .checkDigitTwin, .mrzCorrectionUnconfirmed, .uncertainName, .uncheckedFieldInDoubt, .documentCodeNotKnown, .documentNumberMixesOAndZero, .birthDateNotGiven, .birthDatePartlyGiven,
             .unknownIssuingState, .unknownNationality, .blurredMRZ, .glareOnMRZ, .smallMRZ, .portraitModelsMissing,
             .portraitDetectorFailed, .faceOnlyOutsideDocument, .noPortrait, .nameDiffersFromVisualZone:
            return false
        }
    }

    /// Whether a failed check makes the document INVALID (an MRZ that is absent, unreadable, fails a
    /// check digit, is malformed or lacks a mandatory field; an expired document; an implausible
    /// birth date). Any other failed check rules out VALID.
    public func invalidates(_ id: DocumentCheckID) -> Bool {
        switch id {
        case .mrzPresent, .mrzReadable, .mrzCheckDigitDocumentNumber, .mrzCheckDigitBirthDate, .mrzCheckDigitExpiryDate,
             .mrzCheckDigitOptionalData, .mrzCompositeCheckDigit, .mrzFieldsWellFormed, .requiredFieldsPresent,
             .documentNotExpired, .birthDatePlausible:
            return true
        case .issuingStateCodeKnown, .nationalityCodeKnown, .imageSharp, .noGlareOnMRZ, .resolution, .portraitFound, .chipVerification,
             .namesMatchVisualZone:
            return false
        }
    }

    /// The server's document verdict from the reader's evidence (`today`: ISO 8601 UTC date;
    /// `needsPortrait`: the flow matches a selfie against the portrait).
    ///
    /// INVALID when any error reason holds, any invalidating check failed or the parser did not
    /// accept the MRZ; WARNING when any warning holds or any other check failed; VALID otherwise.
    /// The policy's own reasons (expiry by `today`, check digits, portrait) are added when the reader
    /// did not report the same thing.
    public func judge(_ doc: DocumentEvidence, today: String, needsPortrait: Bool) -> DocumentJudgement {
        var errors: [DocumentReason] = [], warnings: [DocumentReason] = []
        for f in doc.findings { if isError(f) { errors.append(.finding(f)) } else { warnings.append(.finding(f)) } }
        var checks = doc.checks
        let readerExpired = doc.findings.contains { if case .expired = $0 { return true }; return false }
        if rejectExpiredDocuments, let exp = doc.fields.dateOfExpiry, exp < today, !readerExpired {
            errors.append(.expired)
            if let i = checks.firstIndex(where: { $0.id == .documentNotExpired }), checks[i].result != .failed {
                checks[i] = CheckOutcome(.documentNotExpired, .failed, .expiredOn(exp))
            }
        }
        let checkDigitShown = doc.checks.contains { $0.id.isCheckDigit && $0.result == .failed }
        let mrzFound = doc.check(.mrzPresent).map { $0.result == .passed } ?? true
        if rejectFailedCheckDigits, mrzFound, !doc.mrzCheckDigitsValid, !checkDigitShown { errors.append(.checkDigitFailed) }
        if requirePortrait, needsPortrait, doc.portraitJPEG == nil, !chipPortraitUsable(doc.chip) { errors.append(.portraitMissing) }
        if !acceptSpecimenDocuments, doc.fields.issuingState == Self.specimenStateCode || doc.fields.nationality == Self.specimenStateCode {
            errors.append(.specimenDocument)
        }
        if let chip = doc.chip {
            for f in chip.failures { if isError(f) { errors.append(.chip(f)) } else { warnings.append(.chip(f)) } }
            let countryMismatch = signerCountryMismatch(chip)
            if let m = countryMismatch { errors.append(.chipSignerCountryMismatch(m)) }
            switch chip.mrz {
            case .matches: break
            case let .differs(fields): errors.append(.chipMRZMismatch(fields))
            case .noDataGroup1, .noPrintedMRZ: warnings.append(.chipMRZNotCompared)
            }
            // Active Authentication: a copy, a replayed answer or an unsigned key is an error; not proven (a copy
            // is not excluded) a warning, an error under chip.require_genuine.
            let aa = chip.activeAuthentication
            if !aa.verified { if isError(aa) { errors.append(.chipActiveAuthentication(aa)) } else { warnings.append(.chipActiveAuthentication(aa)) } }
            let authentic = chip.authentic && countryMismatch == nil
            if authentic, let m = doc.chipPortraitComparison, m.distance > matchThreshold(m) {
                warnings.append(.chipPortraitDiffers(distance: m.distance, threshold: matchThreshold(m)))
            }
            // "Chip verification" says which: PASSED genuine (authentic and Active Authentication verified), WARNING
            // authentic but a copy not excluded, FAILED when a chip finding makes the document INVALID.
            let result: CheckResult = !authentic || isError(aa) ? .failed : aa.verified ? .passed : .warning
            let outcome = CheckOutcome(.chipVerification, result,
                                       .chip(failures: chip.failures, mrz: chip.mrz, signerCountry: countryMismatch, activeAuthentication: aa))
            if let i = checks.firstIndex(where: { $0.id == .chipVerification }) { checks[i] = outcome } else { checks.append(outcome) }
        } else if let i = checks.firstIndex(where: { $0.id == .chipVerification }) {
            checks[i] = CheckOutcome(.chipVerification, .notPerformed, .noChipData)
        }
        if let i = checks.firstIndex(where: { $0.id == .namesMatchVisualZone }),
           case let .visualZone(.noNamesOnCardFront(page)) = checks[i].measured {
            checks[i].result = .failed
            warnings.append(.cardFrontShowsNoName(page: page))
        }
        if requireNameConfirmation { warnings += unconfirmedNames(doc) }
        let failed = checks.filter { $0.result == .failed }
        let invalid = !errors.isEmpty || !doc.mrzValid || failed.contains { invalidates($0.id) }
        let status: DocumentStatus = invalid ? .invalid : (warnings.isEmpty && failed.isEmpty ? .valid : .warning)
        return DocumentJudgement(status: status, errors: errors, warnings: warnings, checks: checks)
    }

    /// The reasons `idv.doc.require_name_confirmation` gives for the MRZ's names, from the reader's
    /// "Names match visual zone" evidence: one ``DocumentReason/nameNotConfirmed(field:mrz:printed:)``
    /// per name part no print confirms, or one ``DocumentReason/namesNotCompared(_:)``. A part printed
    /// the same (`agrees`), or settled in the print's favour (the report then carries the printed
    /// letters, which the OCR-B classifier also gave weight), is confirmed. A part settled for the MRZ
    /// against the print is not: the classifier's own certainty is all that chose it, and a confident
    /// misread (`EMITH` for the printed SMITH, a fresh-user trial) looks just like it. A part that
    /// differs has the reader's finding, a card front that prints none of the names
    /// ``DocumentReason/cardFrontShowsNoName(page:)``. Empty when no MRZ with a surname was read (the
    /// document is INVALID for that).
    public func unconfirmedNames(_ doc: DocumentEvidence) -> [DocumentReason] {
        guard !doc.fields.surname.isEmpty, doc.check(.mrzPresent)?.result == .passed, let names = doc.check(.namesMatchVisualZone) else { return [] }
        guard case let .visualZone(search) = names.measured else { return [.namesNotCompared(.checkOff)] }
        switch search {
        case let .compared(parts), let .comparedOnCard(_, parts):
            return parts.compactMap { p in
                switch p.outcome {
                case .agrees, .differs: return nil
                case .settled: return p.winner == .visualZone ? nil : .nameNotConfirmed(field: p.field, mrz: p.mrz, printed: p.visualZone)
                case .notFound: return .nameNotConfirmed(field: p.field, mrz: p.mrz, printed: nil)
                }
            }
        case .noVisualZone: return [.namesNotCompared(.noVisualZone)]
        case .cardFrontNotGiven: return [.namesNotCompared(.cardFrontNotGiven)]
        case let .recogniserUnavailable(reason): return [.namesNotCompared(.recogniserUnavailable(reason))]
        case .noNamesOnCardFront: return []
        }
    }

    // MARK: Selfies

    /// The distance line for a comparison: the analyser's calibrated distance for
    /// ``faceMatchOperatingPoint`` and the comparison's kind and model, else the fixed line of the
    /// distance's metric (``faceMatchMaxDistance`` for dlib's Euclidean distances,
    /// ``faceMatchMaxCosineDistance`` for the recogniser's cosine distances).
    public func matchThreshold(_ m: FaceMatchEvidence) -> Double {
        if let p = faceMatchOperatingPoint, let c = m.calibrated(p) { return c.maxDistance }
        switch m.metric {
        case .euclidean: return faceMatchMaxDistance
        case .cosine: return faceMatchMaxCosineDistance
        }
    }

    /// The capture issue that sends a selfie back to the user instead of a verdict, or nil (also
    /// when ``recaptureOnPoorCapture`` is off). Before judging (`after` nil): an issue that hides
    /// the liveness evidence (``CaptureIssue/hidesLiveness``: too dark or bright, low contrast,
    /// blurred, face too small). After the judgement `after`: an issue that only weakens the match
    /// (the face turned away), unless liveness already failed — a held print tilted to the camera
    /// is refused as not live, not asked again. The flow asks again with ``CaptureIssue/errorCode``
    /// (its sentence is the code's message).
    public func recapture(_ e: SelfieEvidence, after judgement: SelfieJudgement? = nil) -> CaptureIssue? {
        guard recaptureOnPoorCapture else { return nil }
        guard let j = judgement else { return e.captureIssues.first { $0.hidesLiveness } }
        return j.verdict == .livenessFailed ? nil : e.captureIssues.first { !$0.hidesLiveness }
    }

    /// The liveness score and cues of `e` once the policy's own checks are applied. First presence
    /// (``presenceFailure(_:presence:replayedFrames:now:cues:)``): a frame replayed from an earlier
    /// upload (`replayedFrames` > 0), or, under an issued illumination sequence (`presence`), frames
    /// past its deadline or light that did not follow it. Then, with an issued active `challenge`,
    /// the evidence must name its nonce (else `CHALLENGE_NOT_EVALUATED`) and arrive by its deadline
    /// at `now` (Unix seconds; else `CHALLENGE_EXPIRED`). Any failure sets the score to 0 and names
    /// the reason.
    public func livenessCues(_ e: SelfieEvidence, challenge: LivenessChallenge?, presence: CapturePresence = .none, replayedFrames: Int = 0,
                             now: Int) -> (score: Int, cues: [LivenessCue], reason: SelfieReason?) {
        var score = e.livenessScore
        var cues = e.livenessCues
        var challengeReason = presenceFailure(e, presence: presence, replayedFrames: replayedFrames, now: now, cues: &cues)
        if challengeReason != nil { score = 0 }
        if let challenge, challengeReason == nil {
            if e.challengeNonce != challenge.nonce {
                score = 0
                cues.append(.challengeNotEvaluated)
                challengeReason = .challengeNotEvaluated
            } else if now > challenge.expiresAt, !cues.contains(.challengeExpired) {
                score = 0
                cues.append(.challengeExpired)
                challengeReason = .challengeExpired
            }
        }
        return (score, cues, challengeReason)
    }

    /// The server's selfie verdict from the analyser's evidence against `reference`, with the
    /// presence and challenge checks of ``livenessCues(_:challenge:presence:replayedFrames:now:)``.
    ///
    /// LIVENESS_FAILED when a presence or challenge check failed (whatever the PAD reading: the
    /// capture is not shown to be made now, for this session), or when the PAD reading `pad`
    /// (``judgePAD(_:cues:score:earlier:final:)``, decided: never unsure) is an attack — without
    /// one, when the (reported) liveness score is below `livenessThreshold`; else MATCHED with no
    /// reference, or when the descriptor distance is at most ``matchThreshold(_:)``; else
    /// NOT_MATCHED. The reported liveness score agrees with the verdict
    /// (``reportedLivenessScore(_:outcome:)``; 0 after a failed check). (A capture
    /// ``recapture(_:)`` names is asked again before this is called, and so is an unsure one.)
    public func judge(_ e: SelfieEvidence, reference: MatchReference, challenge: LivenessChallenge?, presence: CapturePresence = .none,
                      replayedFrames: Int = 0, now: Int, pad: PADJudgement? = nil) -> SelfieJudgement {
        var (score, cues, challengeReason) = livenessCues(e, challenge: challenge, presence: presence, replayedFrames: replayedFrames, now: now)
        let live: Bool
        if challengeReason != nil {
            live = false
            score = 0
        } else if let pad {
            live = pad.outcome == .bonaFide
            score = reportedLivenessScore(score, outcome: live ? .bonaFide : .attack)
        } else {
            live = score >= livenessThreshold
        }
        let verdict: BiometricVerdict
        let reason: SelfieReason
        if !live {
            verdict = .livenessFailed
            reason = challengeReason ?? .livenessBelowThreshold
        } else if case .none = reference {
            verdict = .matched
            reason = .liveWithoutReference
        } else if let m = e.match {
            verdict = m.distance <= matchThreshold(m) ? .matched : .notMatched
            reason = verdict == .matched ? .matched : .distanceAboveThreshold
        } else {
            verdict = .notMatched
            reason = .noComparison
        }
        return SelfieJudgement(verdict: verdict, reason: reason, livenessScore: score, cues: cues, faceMatchScore: e.match?.score,
                               matchThreshold: e.match.map(matchThreshold), assurance: presence.assurance, pad: pad)
    }
}

extension CaptureIssue {
    /// Whether the issue makes the liveness evidence itself unreliable (the face or its texture is
    /// not seen well enough), so the capture is asked again before liveness is judged. The face
    /// turned away (`offPose`) weakens only the match.
    public var hidesLiveness: Bool { self != .offPose }

    /// The code a recapture is asked with (IDVCore `IDVErrorCode`, 1060–1065; the sentence is its
    /// `message`).
    public var errorCode: IDVErrorCode {
        switch self {
        case .tooDark: return .selfieTooDark
        case .tooBright: return .selfieTooBright
        case .blurred: return .selfieBlurred
        case .faceTooSmall: return .selfieFaceTooSmall
        case .lowContrast: return .selfieLowContrast
        case .offPose: return .selfieFaceNotFrontal
        }
    }
}
