import Foundation
import IDVCore

/// The one table of words people read about a document: each check's name and category on the
/// wire (`checks_performed`), the sentence saying what it measured (`idvd document read`), and the
/// sentence for each reason the policy reports (`errors` / `warnings`). Used at the payload edge
/// only (IDVReports, the `idvd document` views); evidence and verdicts never carry words.
public enum DocumentWording {
    /// `checks_performed[].check_name`.
    public static func name(_ id: DocumentCheckID) -> String {
        switch id {
        case .mrzPresent: return "MRZ present"
        case .mrzReadable: return "MRZ readable"
        case .mrzCheckDigitDocumentNumber: return "MRZ check digit: document number"
        case .mrzCheckDigitBirthDate: return "MRZ check digit: birth date"
        case .mrzCheckDigitExpiryDate: return "MRZ check digit: expiry date"
        case .mrzCheckDigitOptionalData: return "MRZ check digit: optional data"
        case .mrzCompositeCheckDigit: return "MRZ composite check digit"
        case .mrzFieldsWellFormed: return "MRZ fields well-formed"
        case .requiredFieldsPresent: return "Required fields present"
        case .documentNotExpired: return "Document not expired"
        case .birthDatePlausible: return "Birth date plausible"
        case .issuingStateCodeKnown: return "Issuing state code valid"
        case .nationalityCodeKnown: return "Nationality code valid"
        case .imageSharp: return "Image sharp enough"
        case .noGlareOnMRZ: return "No glare on MRZ"
        case .resolution: return "Resolution enough"
        case .portraitFound: return "Portrait found"
        case .chipVerification: return "Chip verification"
        case .namesMatchVisualZone: return "Names match visual zone"
        }
    }

    /// `checks_performed[].category` / seed 003 `check_category`: `MRZ`, `Data`, `Image`, `Chip`.
    public static func category(_ id: DocumentCheckID) -> String {
        switch id {
        case .mrzPresent, .mrzReadable, .mrzCheckDigitDocumentNumber, .mrzCheckDigitBirthDate, .mrzCheckDigitExpiryDate,
             .mrzCheckDigitOptionalData, .mrzCompositeCheckDigit, .mrzFieldsWellFormed, .requiredFieldsPresent:
            return "MRZ"
        case .documentNotExpired, .birthDatePlausible, .issuingStateCodeKnown, .nationalityCodeKnown, .namesMatchVisualZone: return "Data"
        case .imageSharp, .noGlareOnMRZ, .resolution, .portraitFound: return "Image"
        case .chipVerification: return "Chip"
        }
    }

    /// What a check measured, in a sentence.
    public static func detail(_ c: CheckOutcome) -> String {
        let passed = c.result == .passed
        switch (c.id, c.measured) {
        case let (.mrzPresent, .page(p)): return "A machine-readable zone was found on page \(p + 1)."
        case let (.mrzPresent, .glare(f)):
            return String(format: "No machine-readable zone was found; glare covers %.0f %% of a band of the page, where it may be.", f * 100)
        case (.mrzPresent, _): return "No machine-readable zone was found."
        case (.mrzReadable, .unknownFormat): return "The text found does not form a known MRZ format."
        case let (.mrzReadable, .unclearCharacters(n)): return "\(n) character(s) are unclear and not confirmed by a check digit."
        case let (.mrzReadable, .format(f)): return "The MRZ reads as \(f)."
        case (.mrzReadable, _): return "There is no MRZ to read."
        case (.mrzCheckDigitDocumentNumber, _), (.mrzCheckDigitBirthDate, _), (.mrzCheckDigitExpiryDate, _),
             (.mrzCheckDigitOptionalData, _), (.mrzCompositeCheckDigit, _):
            let label = checkDigitLabel(c.id)
            return passed ? "The \(label) check digit holds." : "The \(label) check digit does not match the printed data."
        case let (.mrzFieldsWellFormed, .formErrors(e)):
            return "Not allowed by ICAO 9303-3: " + e.map(plain(formError:)).joined(separator: "; ") + "."
        case (.mrzFieldsWellFormed, _): return "Every MRZ field holds characters and values its ICAO 9303-3 definition allows."
        case let (.requiredFieldsPresent, .missingFields(m)) where !m.isEmpty:
            return "The MRZ has no \(fieldList(m)): ICAO 9303 makes it mandatory."
        case (.requiredFieldsPresent, _): return "The document number and the primary identifier are given."
        case let (.documentNotExpired, .expiredOn(d)): return "The document expired on \(d)."
        case let (.documentNotExpired, .validUntil(d)): return "The document is valid until \(d)."
        case (.documentNotExpired, .noExpiryDate): return "The MRZ has no expiry date."
        case (.documentNotExpired, .invalidDate): return "The expiry date in the MRZ is not a valid date."
        case (.documentNotExpired, _): return "The expiry date could not be read."
        case (.birthDatePlausible, .birthDateNotGiven): return "The MRZ gives no date of birth (allowed by ICAO 9303-3 when it is unknown)."
        case (.birthDatePlausible, .birthDatePartlyGiven):
            return "The MRZ gives the date of birth only in part (allowed by ICAO 9303-3 when it is not fully known)."
        case (.birthDatePlausible, .invalidDate): return "The birth date in the MRZ is not a valid date."
        case (.birthDatePlausible, .plausibleBirthDate): return "The birth date is a real date in the past 130 years."
        case (.birthDatePlausible, .implausibleBirthDate): return "The birth date is in the future or more than 130 years ago."
        case (.birthDatePlausible, _): return "The birth date could not be read."
        case let (.issuingStateCodeKnown, .code(code)):
            return passed ? "\(code) is a known ICAO/ISO 3166 code." : "\(code) is not a known state code."
        case let (.nationalityCodeKnown, .code(code)):
            return passed ? "\(code) is a known ICAO/ISO 3166 code." : "\(code) is not a known nationality code."
        case (.issuingStateCodeKnown, _), (.nationalityCodeKnown, _): return "The code could not be read."
        case let (.imageSharp, .sharpness(v, t)): return String(format: "MRZ edge sharpness %.2f (needs ≥ %.2f).", v, t)
        case let (.noGlareOnMRZ, .saturatedFraction(f)): return String(format: "%.1f %% of the MRZ area is saturated.", f * 100)
        case let (.resolution, .capHeight(h, m)): return String(format: "MRZ characters are %.1f px tall (needs ≥ %.0f).", h, m)
        case (.imageSharp, _), (.noGlareOnMRZ, _), (.resolution, _): return "Measured on the MRZ, which was not found."
        case let (.portraitFound, .portrait(search)): return portraitDetail(search)
        case (.portraitFound, _): return passed ? "A face was found on the document." : "No face was found on the document pages."
        case (.chipVerification, .noChipData): return "No chip data was sent with the pages."
        case let (.chipVerification, .chip(failures, mrz, signerCountry, aa)):
            if c.result == .passed || c.result == .warning {
                let base = "Passive authentication (ICAO 9303-11 §5.1) passed and DG1 equals the printed MRZ"
                switch aa {
                case let .verified(mechanism):
                    return base + "; the chip verified Active Authentication (§6.1, \(mechanism)) on this verification's own challenge: the chip is genuine."
                case .notPerformed: return base + "; Active Authentication was not run, so a copy of the chip is not excluded."
                case .notSupported: return base + "; the chip has no Active Authentication key (DG15), so a copy of the chip is not excluded."
                case .failed: return base + "; its Active Authentication cannot be checked, so a copy of the chip is not excluded."
                }
            }
            var parts = failures.map(\.rawValue)
            switch aa {
            case let .failed(f, detail): parts.append("Active Authentication \(f.rawValue) (\(detail))")
            case .notPerformed: parts.append("Active Authentication not run")
            case .notSupported: parts.append("no Active Authentication key (DG15)")
            case .verified: break
            }
            if let m = signerCountry {
                let name = m.certificate == .documentSigner ? "the document signer" : m.certificate == .csca ? "the CSCA" : "the document signer's issuer"
                parts.append("\(name) names country " + (m.countries.isEmpty ? "none" : m.countries.joined(separator: "/"))
                             + ", not the issuing state \(m.issuingState) (ICAO 9303-12)")
            }
            if case let .differs(fields) = mrz { parts.append("DG1 differs from the printed MRZ in " + fields.joined(separator: ", ")) }
            if mrz == .noDataGroup1 { parts.append("no DG1 to compare with the printed MRZ") }
            if mrz == .noPrintedMRZ { parts.append("no printed MRZ to compare DG1 with") }
            return "The chip did not verify: " + parts.joined(separator: "; ") + "."
        case (.chipVerification, _): return "This reader does not read the chip (ICAO 9303-11)."
        case let (.namesMatchVisualZone, .visualZone(search)): return visualZoneDetail(search, passed: passed)
        case (.namesMatchVisualZone, _): return "The names were not compared with the visual zone."
        }
    }

    static func nameFieldLabel(_ f: MRZNameField) -> String { f == .primaryIdentifier ? "surname" : "given name" }

    static func uncheckedFieldLabel(_ f: UncheckedField) -> String {
        switch f {
        case .documentCode: return "document code"
        case .issuingState: return "issuing state code"
        case .nationality: return "nationality code"
        case .sex: return "sex"
        }
    }

    /// A value of an unchecked field as people read it: the sex `<` as "unspecified (<)".
    static func shown(_ value: String, _ f: UncheckedField) -> String {
        f == .sex && (value == "<" || value == "X") ? "unspecified (<)" : value
    }

    static func visualZoneDetail(_ s: VisualZoneSearch, passed: Bool) -> String {
        switch s {
        case .noVisualZone: return "No visual zone with the names on the pages given."
        case .cardFrontNotGiven:
            return "The names of an ID card are printed on its front; only the MRZ side was given, and it prints none of them."
        case let .noNamesOnCardFront(page):
            return "None of the MRZ's names was found printed on the card's front (page \(page + 1)) or above the MRZ."
        case let .recogniserUnavailable(reason): return "The visual zone could not be read: \(reason)."
        case let .comparedOnCard(pages, parts):
            let detail = visualZoneDetail(.compared(parts), passed: passed).replacingOccurrences(of: "in the visual zone", with: "on the card")
            return String(detail.dropLast()) + " (page(s) " + pages.map { String($0 + 1) }.joined(separator: ", ") + ")."
        case let .compared(parts):
            let agree = parts.filter { $0.outcome == .agrees }.count
            let settled = parts.filter { $0.outcome == .settled }
            let differ = parts.filter { $0.outcome == .differs }
            let found = parts.count - parts.filter { $0.outcome == .notFound }.count
            if found == 0 { return "None of the MRZ's \(parts.count) name part(s) was found printed in the visual zone." }
            var out = "\(agree) of \(parts.count) MRZ name part(s) printed the same in the visual zone"
            for p in settled {
                out += "; the \(nameFieldLabel(p.field)) part read \(p.mrz) in the MRZ and \(p.visualZone ?? "?") in the visual zone: the "
                    + (p.winner == .visualZone ? "visual zone's" : "MRZ's") + " reading was kept"
            }
            for p in differ { out += "; the \(nameFieldLabel(p.field)) part \(p.mrz) differs from the printed \(p.visualZone ?? "?")" }
            return out + "."
        }
    }

    /// The sentence of an error or warning (`errors`, `warnings`, seed 003 `error_list` / `warning_list`).
    public static func sentence(_ r: DocumentReason) -> String {
        switch r {
        case let .finding(f): return sentence(f)
        case .expired: return "Document expired"
        case .checkDigitFailed: return "MRZ check digit failed"
        case .portraitMissing: return "No portrait found"
        case .specimenDocument: return "This is a specimen document of ICAO's fictional state Utopia (UTO), not a real one"
        case let .chip(f): return sentence(f)
        case .chipMRZMismatch: return ChipVerificationReason.mrzMismatch.sentence
        case .chipMRZNotCompared: return ChipVerificationReason.mrzNotCompared.sentence
        case let .chipActiveAuthentication(aa): return (WorkflowPolicy.reason(of: aa) ?? .genuine).sentence
        case let .cardFrontShowsNoName(page):
            return "None of the names in the MRZ was found printed on the card's front (page \(page + 1)); names have no check digit, so compare them with the card itself, or photograph its front again."
        case let .chipSignerCountryMismatch(m):
            return ChipVerificationReason.signerCountryMismatch.sentence(signerCountries: m.countries, issuingState: m.issuingState)
        case let .nameNotConfirmed(field, mrz, printed?):
            return "The \(nameFieldLabel(field)) \(mrz) in the MRZ reads \(printed) on the printed page; the MRZ's reading is the likelier, but no check digit covers names, so compare it with the document itself."
        case .nameNotConfirmed(let field, let mrz, nil):
            return "The \(nameFieldLabel(field)) \(mrz) in the MRZ was not found printed on the document; names have no check digit, so compare it with the document itself."
        case let .namesNotCompared(why): return sentence(why)
        case .chipPortraitDiffers:
            return "The portrait printed on the page does not look like the face stored on the chip; the printed photo may have been replaced. Compare the document with its holder."
        }
    }

    /// Why the MRZ's names were compared with no print, in a sentence.
    static func sentence(_ why: NamesNotCompared) -> String {
        switch why {
        case .checkOff:
            return "The names in the MRZ were not compared with the printed page (the check is switched off); names have no check digit, so compare them with the document itself."
        case .noVisualZone:
            return "The names in the MRZ could not be compared with the printed page, which is not in the photo; names have no check digit, so photograph the whole page."
        case .cardFrontNotGiven:
            return "Only the side of the card with the MRZ was sent, so its names, which have no check digit, could not be compared with the front; send the front too."
        case let .recogniserUnavailable(reason):
            return "The names in the MRZ could not be compared with the printed page: the text recogniser is not available (\(reason)); names have no check digit, so compare them with the document itself."
        }
    }

    /// The sentence of the chip's wire reason (`nfc_scan_status_reason`): `reason.sentence`, naming the
    /// countries for a signer-country mismatch.
    public static func sentence(_ reason: ChipVerificationReason, chip: ChipEvidence?, policy: WorkflowPolicy) -> String {
        if case .signerCountryMismatch = reason, let c = chip, let m = policy.signerCountryMismatch(c) {
            return reason.sentence(signerCountries: m.countries, issuingState: m.issuingState)
        }
        return reason.sentence
    }

    /// The sentence of a chip failure (from the one table of chip reasons, `ChipVerificationReason.sentence`).
    public static func sentence(_ f: ChipFailure) -> String {
        WorkflowPolicy.reason(of: f).sentence
    }

    /// The sentence of a reader finding.
    public static func sentence(_ f: DocumentFinding) -> String {
        switch f {
        case let .pageTooLarge(p, w, h, limit):
            return "Page \(p + 1) is too large: \(w)×\(h) pixels, the limit is \(limit) pixels (\(limit / 1_000_000) megapixels)."
        case let .pageUndecodable(p, reason): return "Page \(p + 1) could not be read as an image: \(reason)."
        case .glareHidesMRZ:
            return "No machine-readable zone could be read: glare covers part of the page. Tilt the document away from the light and photograph it again."
        case let .nameDiffersFromVisualZone(field, mrz, printed):
            return "The \(nameFieldLabel(field)) in the MRZ (\(mrz)) differs from the one printed on the document (\(printed)); names have no check digit, so compare them with the document itself."
        case .noMRZ:
            return "No machine-readable zone (the two or three lines of letters, digits and <<< at the bottom of the page) was found. Photograph the whole page, flat and in focus."
        case let .unclearCharacters(n):
            return "\(n) character(s) of the MRZ could not be read with confidence. Retake the photo, flat, in focus and without glare."
        case let .mrzError(detail): return "The MRZ did not check out: \(plain(formError: detail))."
        case let .checkDigitTwin(field, read, other, line, column):
            let position = line.flatMap { l in column.map { " (MRZ line \(l), position \($0))" } } ?? ""
            return "The \(field) holds '\(read)'\(position), which could also be '\(other)': the check digit cannot tell them apart. Compare it with the printed page."
        case let .mrzCorrectionUnconfirmed(field, read, corrected, line, column):
            let position = line.flatMap { l in column.map { " (MRZ line \(l), position \($0))" } } ?? ""
            return "The \(field)'s '\(read)'\(position) was changed to '\(corrected)' only because that look-alike satisfies the check digit, which a misread and an altered character do alike. Compare it with the printed page."
        case let .uncertainName(cells, total):
            let listed = cells.map { "'\($0.read)' (MRZ line \($0.line), position \($0.column)) could also be '\($0.twin)'" }
            return "The name is not certain: " + listed.joined(separator: "; ") + (total > cells.count ? "; and \(total - cells.count) more" : "")
                + ". No check digit covers names; compare the name with the printed page."
        case let .uncheckedFieldInDoubt(field, read, rival, cell):
            return "The \(uncheckedFieldLabel(field)) reads \(shown(read, field)), but it could also be \(shown(rival, field)) ('\(cell.read)' at MRZ line \(cell.line), position \(cell.column) could be '\(cell.twin)'); no check digit covers it, so compare it with the printed page."
        case let .documentCodeNotKnown(code, state):
            return "The document code \(code) is not one \(state.isEmpty ? "the issuing state" : state) is known to use, so it may be misread; no check digit covers it, so compare the document type with the printed page."
        case .documentNumberMixesOAndZero:
            return "The document number mixes the letter O and the digit 0, which look alike in OCR-B and can swap without the check digit noticing; compare it with the printed page."
        case let .missingRequiredFields(m): return "The MRZ has no \(fieldList(m)), which every travel document must carry."
        case let .expired(d): return "The document has expired (\(d))."
        case .noExpiryDate: return "The MRZ has no expiry date, so the document cannot be shown to be in force."
        case .invalidExpiryDate: return "The expiry date in the MRZ is not a valid date."
        case .birthDateNotGiven: return "The date of birth is not given."
        case .birthDatePartlyGiven: return "The date of birth is only partly given."
        case .invalidBirthDate: return "The date of birth in the MRZ is not a valid date."
        case let .implausibleBirthDate(d): return "The date of birth (\(d)) is not plausible."
        case let .unknownIssuingState(c):
            return c.isEmpty ? "The MRZ gives no issuing state code." : "The issuing state code \(c) is not a known country code."
        case let .unknownNationality(c):
            return c.isEmpty ? "The MRZ gives no nationality code." : "The nationality code \(c) is not a known country code."
        case .blurredMRZ: return "The photo is blurred around the MRZ; hold the camera still and let it focus."
        case .glareOnMRZ: return "There is glare on the MRZ; tilt the document away from the light."
        case .smallMRZ: return "The MRZ is small in the photo; move the camera closer or use a higher resolution."
        case .portraitModelsMissing: return "The portrait could not be checked: the face models are not installed."
        case let .portraitDetectorFailed(reason): return "The portrait could not be checked: the face detector failed (\(reason))."
        case let .pagesOfDifferentDocuments(pages):
            return "Pages \(pages.map { String($0 + 1) }.joined(separator: " and ")) carry the machine-readable zones of two different documents; send the pages of one document only."
        case .faceOnlyOutsideDocument:
            return "The only face in the picture is outside the document; photograph the document's own photo page alone, uncovered."
        case .noPortrait: return "No portrait was found on the document; make sure the photo page is in the picture."
        }
    }

    static func checkDigitLabel(_ id: DocumentCheckID) -> String {
        switch id {
        case .mrzCheckDigitDocumentNumber: return "document number"
        case .mrzCheckDigitBirthDate: return "birth date"
        case .mrzCheckDigitExpiryDate: return "expiry date"
        case .mrzCheckDigitOptionalData: return "optional data"
        default: return "composite"
        }
    }

    static func fieldList(_ m: [RequiredMRZField]) -> String {
        m.map { $0 == .documentNumber ? "document number" : "primary identifier (surname)" }.joined(separator: " and ")
    }

    static func portraitDetail(_ s: PortraitSearch) -> String {
        switch s {
        case .found: return "A face was found on the document."
        case .notFound: return "No face was found on the document pages."
        case .onlyOutsideDocument: return "A face was found outside the document; the portrait must be the document's own photo."
        case .detectionOff: return "Portrait detection was switched off."
        case .noPageDecoded: return "No page image could be decoded, so there was no page to look at."
        case .noPagePrepared: return "No page image could be prepared for face detection."
        case let .detectorUnavailable(_, reason): return "The face detector is not available: \(reason)."
        case .noPageSearched: return "No page could be searched for a face."
        }
    }

    /// The MRZ parser's character-set error for the sex cell in words (ICAO 9303-3 §4.7: F, M or
    /// `<`); other parser texts unchanged.
    static func plain(formError e: String) -> String {
        guard e.hasSuffix("not allowed in sex"), let colon = e.range(of: ": not allowed") else { return e }
        return "the sex field holds \(e[..<colon.lowerBound]) but ICAO 9303-3 allows only F, M or <"
    }
}
