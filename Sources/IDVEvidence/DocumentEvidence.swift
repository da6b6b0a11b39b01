// Document evidence: what DocumentReader measured on the page images, in typed form. No verdicts
// and no sentences: `WorkflowPolicy` (IDVEngine) turns evidence into VALID / INVALID / WARNING and
// reason codes; the words people read come from one table at the payload edge
// (`DocumentWording`, IDVEngine).

/// The checks DocumentReader performs, by stable id. The ids are also the check's name in the
/// engine's audit; the wire shows the wording table's name (`checks_performed[].check_name`).
public enum DocumentCheckID: String, Codable, Sendable, CaseIterable {
    /// A machine-readable zone was found on a page (ICAO 9303-3 §4).
    case mrzPresent = "mrz_present"
    /// The MRZ forms a known format (TD1/TD2/TD3/MRV-A/MRV-B) and no unprotected character is unclear.
    case mrzReadable = "mrz_readable"
    /// The document-number check digit holds (ICAO 9303-3 §4.9).
    case mrzCheckDigitDocumentNumber = "mrz_check_digit_document_number"
    /// The date-of-birth check digit holds.
    case mrzCheckDigitBirthDate = "mrz_check_digit_birth_date"
    /// The date-of-expiry check digit holds.
    case mrzCheckDigitExpiryDate = "mrz_check_digit_expiry_date"
    /// The optional-data (personal number) check digit holds (TD3, ICAO 9303-4 §4.2.2).
    case mrzCheckDigitOptionalData = "mrz_check_digit_optional_data"
    /// The composite check digit holds (ICAO 9303-3 §4.9; TD1 9303-5, TD3 9303-4).
    case mrzCompositeCheckDigit = "mrz_composite_check_digit"
    /// Every field holds characters and values its ICAO 9303-3 §4 definition allows.
    case mrzFieldsWellFormed = "mrz_fields_well_formed"
    /// The mandatory data elements (document number, primary identifier) are given (ICAO 9303-3 §4.2).
    case requiredFieldsPresent = "required_fields_present"
    /// The document's date of expiry is not before the reading's reference date.
    case documentNotExpired = "document_not_expired"
    /// The date of birth is a real date, not in the future, at most 130 years back.
    case birthDatePlausible = "birth_date_plausible"
    /// The issuing state is an ISO 3166-1 alpha-3 or ICAO 9303-3 §5 code.
    case issuingStateCodeKnown = "issuing_state_code_known"
    /// The nationality is an ISO 3166-1 alpha-3 or ICAO 9303-3 §5 code.
    case nationalityCodeKnown = "nationality_code_known"
    /// The MRZ band is sharp enough (edge-sharpness figure ≥ its threshold).
    case imageSharp = "image_sharp"
    /// No glare on the MRZ band (saturated fraction ≤ 3 %).
    case noGlareOnMRZ = "no_glare_on_mrz"
    /// The MRZ characters are tall enough in pixels for OCR-B.
    case resolution = "resolution"
    /// The document's own portrait was found on the pages.
    case portraitFound = "portrait_found"
    /// The chip (ICAO 9303-10/-11) was read and verified.
    case chipVerification = "chip_verification"
    /// The MRZ's name parts were found printed in the visual zone (ICAO 9303-3 §6 transliteration):
    /// passed when every part found agrees or was settled, failed when one differs unsettled.
    case namesMatchVisualZone = "names_match_visual_zone"

    /// The id of the MRZ check digit named `name` by the MRZ module's layouts (`document_number`,
    /// `birth_date`, `expiry_date`, `optional_data`, `composite`); nil for another name.
    public init?(checkDigit name: String) {
        switch name {
        case "document_number": self = .mrzCheckDigitDocumentNumber
        case "birth_date": self = .mrzCheckDigitBirthDate
        case "expiry_date": self = .mrzCheckDigitExpiryDate
        case "optional_data": self = .mrzCheckDigitOptionalData
        case "composite": self = .mrzCompositeCheckDigit
        default: return nil
        }
    }

    /// Whether the check is one of the MRZ check digits.
    public var isCheckDigit: Bool {
        switch self {
        case .mrzCheckDigitDocumentNumber, .mrzCheckDigitBirthDate, .mrzCheckDigitExpiryDate,
             .mrzCheckDigitOptionalData, .mrzCompositeCheckDigit: return true
        default: return false
        }
    }
}

/// The result of one check.
public enum CheckResult: String, Codable, Sendable {
    case passed = "PASSED"
    case failed = "FAILED"
    /// The check ran and found something that rules out VALID without making the document INVALID — set by the
    /// policy's judgement (the chip's data authentic but the chip not proven genuine: a copy is not excluded);
    /// readers report passed or failed.
    case warning = "WARNING"
    case notPerformed = "NOT_PERFORMED"
}

/// A mandatory MRZ data element (ICAO 9303-3 §4.2).
public enum RequiredMRZField: String, Codable, Sendable {
    case documentNumber = "document_number"
    case primaryIdentifier = "primary_identifier"
}

/// How the portrait search went (`DocumentCheckID.portraitFound`).
public enum PortraitSearch: Sendable, Equatable {
    /// A face inside the document was found and cropped.
    case found
    /// The pages were searched; no face.
    case notFound
    /// A face was found, but only outside the document the MRZ belongs to (not taken).
    case onlyOutsideDocument
    /// Portrait detection was switched off (`DocumentReaderOptions.detectPortrait`).
    case detectionOff
    /// No page image could be decoded.
    case noPageDecoded
    /// No decoded page could be prepared for face detection.
    case noPagePrepared
    /// The face detector could not start; `modelsMissing` when the dlib model files are absent,
    /// `reason` the detector's error.
    case detectorUnavailable(modelsMissing: Bool, reason: String)
    /// No page was searched for another reason.
    case noPageSearched
}

/// A name field of the MRZ (ICAO 9303-3 §4.6): the primary identifier (surname) or the secondary
/// identifier (given names).
public enum MRZNameField: String, Codable, Sendable, Equatable {
    case primaryIdentifier = "primary_identifier"
    case secondaryIdentifier = "secondary_identifier"
}

/// Which reading of a name part the reader kept when the MRZ and the visual zone differed.
public enum NameSource: String, Codable, Sendable, Equatable {
    case mrz
    case visualZone = "visual_zone"
}

/// One name part (a word of a name field) of the MRZ compared with the printed visual zone.
public struct VisualZoneNamePart: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable, Equatable {
        /// The visual zone prints the same word (after ICAO 9303-3 §6 transliteration).
        case agrees
        /// The two differ and the reader settled it (`winner`): one side's letters had the other's as
        /// a real rival and the other side was sure.
        case settled
        /// The two differ and neither side can be shown right.
        case differs
        /// No word of the visual zone is near enough to compare.
        case notFound = "not_found"
    }
    public var field: MRZNameField
    /// The part as the MRZ reads it (A–Z).
    public var mrz: String
    /// The nearest visual-zone word, transliterated to A–Z (nil when `notFound`).
    public var visualZone: String?
    public var outcome: Outcome
    /// `settled` only: which reading was kept (the report's name fields carry it).
    public var winner: NameSource?
    enum CodingKeys: String, CodingKey { case field, mrz, visualZone = "visual_zone", outcome, winner }
    public init(field: MRZNameField, mrz: String, visualZone: String?, outcome: Outcome, winner: NameSource? = nil) {
        self.field = field
        self.mrz = mrz
        self.visualZone = visualZone
        self.outcome = outcome
        self.winner = winner
    }
}

/// How the visual-zone name cross-check went (`DocumentCheckID.namesMatchVisualZone`).
public enum VisualZoneSearch: Sendable, Equatable {
    /// The visual zone was read; each MRZ name part with its outcome.
    case compared([VisualZoneNamePart])
    /// No visual zone on the pages given (a page photographed too tightly around the MRZ, a format
    /// without a name field).
    case noVisualZone
    /// A TD1 card (ICAO 9303-5): its names are printed on the front, the MRZ is on the back. The
    /// card's other side and the MRZ side's own text above the MRZ were read; each MRZ name part with
    /// its outcome, and the 0-based pages whose words were compared (the front first when given).
    case comparedOnCard(pages: [Int], parts: [VisualZoneNamePart])
    /// A TD1 card's MRZ side alone: no other page was given, and the MRZ side's text above the MRZ
    /// prints none of the names.
    case cardFrontNotGiven
    /// A TD1 card's other side (0-based `page`) was read, but neither it nor the MRZ side prints any
    /// of the MRZ's name parts near enough to compare.
    case noNamesOnCardFront(page: Int)
    /// The text recogniser could not start (`reason`: e.g. the Tesseract language data is missing).
    case recogniserUnavailable(reason: String)
}

/// What a check measured: the values its result rests on (units in each case).
public enum CheckMeasurement: Sendable, Equatable {
    /// Nothing beyond the result.
    case none
    /// `mrzPresent`: the 0-based page index the MRZ was found on.
    case page(Int)
    /// `mrzReadable`: the MRZ format read (`TD1`, `TD2`, `TD3`, `MRVA`, `MRVB`).
    case format(String)
    /// `mrzReadable`: the text found forms no known MRZ format.
    case unknownFormat
    /// `mrzReadable`: this many characters are unclear and not confirmed by a check digit.
    case unclearCharacters(Int)
    /// The check could not be done because no MRZ was found.
    case noMRZ
    /// `mrzFieldsWellFormed`: the MRZ parser's errors that no check-digit check shows (its own words).
    case formErrors([String])
    /// `requiredFieldsPresent`: the mandatory elements that are missing (empty when passed).
    case missingFields([RequiredMRZField])
    /// `documentNotExpired`: valid until this ISO 8601 date.
    case validUntil(String)
    /// `documentNotExpired`: expired on this ISO 8601 date ("?" when unknown).
    case expiredOn(String)
    /// `documentNotExpired`: the MRZ's expiry date is all fillers.
    case noExpiryDate
    /// `documentNotExpired` / `birthDatePlausible`: the MRZ's date is not a valid date.
    case invalidDate
    /// `documentNotExpired` / `birthDatePlausible`: the date could not be read.
    case unreadableDate
    /// `birthDatePlausible`: a real date within the last 130 years.
    case plausibleBirthDate
    /// `birthDatePlausible`: in the future or more than 130 years back.
    case implausibleBirthDate
    /// `birthDatePlausible`: the MRZ gives no date of birth (allowed when unknown, ICAO 9303-3 §4.6).
    case birthDateNotGiven
    /// `birthDatePlausible`: the MRZ gives the date of birth only in part.
    case birthDatePartlyGiven
    /// `issuingStateCodeKnown` / `nationalityCodeKnown`: the code read.
    case code(String)
    /// `imageSharp`: the 90th percentile of the normalised gradient across the band, and the threshold.
    case sharpness(Double, threshold: Double)
    /// `noGlareOnMRZ`: the saturated fraction of the MRZ band, 0…1.
    case saturatedFraction(Double)
    /// `resolution`: MRZ cap height in pixels and the minimum.
    case capHeight(Double, minimum: Double)
    /// `portraitFound`: how the search went.
    case portrait(PortraitSearch)
    /// `chipVerification`: reading the chip is not supported by this reader.
    case chipNotSupported
    /// `chipVerification`: no chip data was sent with the pages.
    case noChipData
    /// `chipVerification`: the passive-authentication failures (empty: passed), the DG1 cross-check, the
    /// policy's signer-country finding (nil: the signers' country is the issuing state's, or nothing to compare) and
    /// Active Authentication over the step's challenge.
    case chip(failures: [ChipFailure], mrz: ChipMRZComparison, signerCountry: ChipSignerCountryMismatch? = nil,
              activeAuthentication: ActiveAuthenticationResult)
    /// `namesMatchVisualZone`: how the visual zone's names compared with the MRZ's.
    case visualZone(VisualZoneSearch)
    /// `mrzPresent`: no MRZ was found, and glare (saturated pixels) covers this share (0…1) of the
    /// page band where it was most dense — the MRZ may be under it.
    case glare(saturatedFraction: Double)
}

/// One check: id, result, measurement.
public struct CheckOutcome: Sendable, Equatable {
    public var id: DocumentCheckID
    public var result: CheckResult
    public var measured: CheckMeasurement
    public init(_ id: DocumentCheckID, _ result: CheckResult, _ measured: CheckMeasurement = .none) {
        self.id = id
        self.result = result
        self.measured = measured
    }
}

/// One MRZ cell (1-based line and column) read as `read` whose rival `twin` also got weight from
/// the OCR-B classifier (posteriors 0…1).
public struct DoubtfulCell: Codable, Sendable, Equatable {
    public var line: Int
    public var column: Int
    public var read: String
    public var twin: String
    public var confidence: Double
    public var twinConfidence: Double
    enum CodingKeys: String, CodingKey { case line, column, read, twin, confidence, twinConfidence = "twin_confidence" }
    public init(line: Int, column: Int, read: String, twin: String, confidence: Double, twinConfidence: Double) {
        self.line = line
        self.column = column
        self.read = read
        self.twin = twin
        self.confidence = confidence
        self.twinConfidence = twinConfidence
    }
}

/// An MRZ data element besides the names that no check digit covers (ICAO 9303-3 §4.9: the check
/// digits cover the document number, the dates, the optional data and, through the composite, those
/// together): a misread one passes every check. (The names, the other such element, are confirmed
/// against print: `DocumentCheckID.namesMatchVisualZone`.)
public enum UncheckedField: String, Codable, Sendable, Equatable, CaseIterable {
    /// The document code (ICAO 9303-3 §4.2.2), which gives the document type.
    case documentCode = "document_code"
    case issuingState = "issuing_state"
    case nationality
    case sex
}

/// Something the reader found that a person should hear about, in typed form (the policy decides
/// whether it makes the document INVALID or only rules out VALID; the wording table says it).
public enum DocumentFinding: Sendable, Equatable {
    /// Page `page` (0-based) declares `width` × `height` pixels, above the decoder's `limit`.
    case pageTooLarge(page: Int, width: Int, height: Int, limit: Int)
    /// Page `page` (0-based) is not a decodable JPEG/PNG; `reason` is the decoder's.
    case pageUndecodable(page: Int, reason: String)
    /// No machine-readable zone on any page (and there was a page to look at).
    case noMRZ
    /// No machine-readable zone was found and a band of the page is covered by glare
    /// (`saturatedFraction` of it, 0…1): the MRZ is likely under the reflection.
    case glareHidesMRZ(saturatedFraction: Double)
    /// The MRZ's `field` part `mrz` differs from the visual zone's `visualZone` (transliterated) and
    /// the reader could not settle which is right (names have no check digit).
    case nameDiffersFromVisualZone(field: MRZNameField, mrz: String, visualZone: String)
    /// `count` MRZ characters could not be read with confidence (no check digit confirms them).
    case unclearCharacters(count: Int)
    /// The MRZ parser reports an error (a check digit fails, a character is not allowed…); `detail`
    /// is the parser's own diagnostic (MRZ `MRZResult.errors`).
    case mrzError(detail: String)
    /// `field` holds `read` at (line, column), which could also be `other`: the check digit cannot
    /// tell them apart (ICAO 9303-3 §4.9: K/<, L/1, G/6 weigh the same modulo 10).
    case checkDigitTwin(field: String, read: String, other: String, line: Int?, column: Int?)
    /// The MRZ parser changed `read` at (line, column) of `field` to `corrected` by the look-alike
    /// table alone (no OCR evidence offered it, nothing forced it): only the check digits confirm
    /// it, and they confirm a single altered character as readily as a misread one.
    case mrzCorrectionUnconfirmed(field: String, read: String, corrected: String, line: Int?, column: Int?)
    /// Name letters whose rival the classifier gave real weight (names have no check digit); the
    /// first three cells and the total.
    case uncertainName(cells: [DoubtfulCell], total: Int)
    /// `field` (no check digit) reads `read`, but the classifier gave a character at `cell` real
    /// weight that makes another reading the field allows, `rival` (another M/F/`<` for the sex,
    /// another known country code, another document code the issuer is known to use): nothing on
    /// the MRZ can tell which is printed.
    case uncheckedFieldInDoubt(field: UncheckedField, read: String, rival: String, cell: DoubtfulCell)
    /// The document code `code` (fillers included, `PK`) is not one issuer `issuingState` is known to
    /// use (MRZ `DocumentCodes`): no check digit covers it, so it may be a misreading of another.
    case documentCodeNotKnown(code: String, issuingState: String)
    /// The document number mixes the letter O and the digit 0.
    case documentNumberMixesOAndZero
    /// Mandatory data elements missing.
    case missingRequiredFields([RequiredMRZField])
    /// The document expired on `date` (ISO 8601; "?" when unknown).
    case expired(date: String)
    /// The MRZ has no expiry date.
    case noExpiryDate
    /// The MRZ's expiry date is not a valid date.
    case invalidExpiryDate
    /// The date of birth is not given (allowed).
    case birthDateNotGiven
    /// The date of birth is only partly given (allowed).
    case birthDatePartlyGiven
    /// The MRZ's date of birth is not a valid date.
    case invalidBirthDate
    /// The date of birth `date` is not plausible (future, or more than 130 years back).
    case implausibleBirthDate(date: String)
    /// The issuing state code is not a known country code.
    case unknownIssuingState(String)
    /// The nationality code is not a known country code (and differs from the issuing state).
    case unknownNationality(String)
    /// The MRZ band is blurred.
    case blurredMRZ
    /// Glare on the MRZ band.
    case glareOnMRZ
    /// The MRZ is small in the photo.
    case smallMRZ
    /// The portrait could not be checked: the face models are not installed.
    case portraitModelsMissing
    /// The portrait could not be checked: the face detector failed (`reason`).
    case portraitDetectorFailed(reason: String)
    /// The only face in the picture is outside the document.
    case faceOnlyOutsideDocument
    /// No portrait was found on the document.
    case noPortrait
    /// Two pages (0-based `pages`, the one read first) each carry a machine-readable zone whose check
    /// digits all hold, of two different documents (document number or date of birth differ): pages
    /// of more than one document were sent together, and only the first one's MRZ was read.
    case pagesOfDifferentDocuments(pages: [Int])
}
