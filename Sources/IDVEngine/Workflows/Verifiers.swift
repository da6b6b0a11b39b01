import Foundation
import IDVCore
@_exported import IDVEvidence

// The engine's side of the readers: the evidence they hand over (IDVEvidence types and the two
// reports below) and the analyser protocols the composition root fills (IDVReaders: FaceKit and
// DocumentReader; test doubles in IDVTestSupport). Evidence only: the verdicts are
// `WorkflowPolicy`'s (Judgement.swift).

/// The identity fields read from a document (ICAO 9303 MRZ field names). Dates are ISO 8601
/// `YYYY-MM-DD` (century resolved by the reader).
public struct DocumentFields: Sendable, Equatable {
    /// The MRZ document code (ICAO 9303 Part 3 §4.2.2), e.g. `P`, `I`, `ID`, `V`; the wire's
    /// `document_type` is its ``DocumentKind``.
    public var documentType: String
    /// `TD1`, `TD2`, `TD3`, `MRVA`, `MRVB`.
    public var format: String
    public var issuingState: String
    public var surname: String
    public var givenNames: String
    public var documentNumber: String
    public var nationality: String?
    public var dateOfBirth: String?
    public var sex: String?
    public var dateOfExpiry: String?
    public var personalNumber: String?
    public init(documentType: String, format: String, issuingState: String, surname: String, givenNames: String, documentNumber: String,
                nationality: String? = nil, dateOfBirth: String? = nil, sex: String? = nil, dateOfExpiry: String? = nil, personalNumber: String? = nil) {
        self.documentType = documentType
        self.format = format
        self.issuingState = issuingState
        self.surname = surname
        self.givenNames = givenNames
        self.documentNumber = documentNumber
        self.nationality = nationality
        self.dateOfBirth = dateOfBirth
        self.sex = sex
        self.dateOfExpiry = dateOfExpiry
        self.personalNumber = personalNumber
    }
}

/// What a document reader returns for the uploaded pages: the fields read and the evidence —
/// checks with what they measured, findings — from which the policy judges and one internal report
/// builds both seed shapes (seed 002 `DocumentDetails`, seed 003 `AdditionalDocumentScanDetails`).
public struct DocumentVerification: Sendable, Equatable {
    public var fields: DocumentFields
    /// Every check the reader performed (IDVEvidence ``CheckOutcome``).
    public var checks: [CheckOutcome]
    /// What the reader found that a person should hear about, in the order found.
    public var findings: [DocumentFinding]
    /// True when the MRZ parser accepted the MRZ: a known format, every check digit holding, every
    /// field well-formed (ICAO 9303-3 §4).
    public var mrzValid: Bool
    /// True when every MRZ check digit (and the composite) verified (ICAO 9303-3 §4.9).
    public var mrzCheckDigitsValid: Bool
    /// The portrait cropped from the data page, JPEG; nil when none was found.
    public var portraitJPEG: Data?
    /// The page images as read (JPEG or PNG), index = page index.
    public var pageImages: [Data]
    /// The MRZ lines as read and corrected from the page (empty when none), for the DG1 cross-check.
    public var mrzLines: [String]
    /// What the chip reader found on the chip files sent with the pages; nil when none were sent.
    public var chip: ChipEvidence?
    /// The portrait printed on the page compared with the chip's DG2 face (``PortraitComparing``):
    /// nil when there was no chip portrait, no printed portrait, no comparer, or no face in one of them.
    public var chipPortraitComparison: FaceMatchEvidence?
    public init(fields: DocumentFields, checks: [CheckOutcome], findings: [DocumentFinding] = [], mrzValid: Bool,
                mrzCheckDigitsValid: Bool, portraitJPEG: Data?, pageImages: [Data], mrzLines: [String] = [], chip: ChipEvidence? = nil) {
        self.mrzLines = mrzLines
        self.chip = chip
        self.fields = fields
        self.checks = checks
        self.findings = findings
        self.mrzValid = mrzValid
        self.mrzCheckDigitsValid = mrzCheckDigitsValid
        self.portraitJPEG = portraitJPEG
        self.pageImages = pageImages
    }

    /// The outcome of check `id`, if the reader performed it.
    public func check(_ id: DocumentCheckID) -> CheckOutcome? { checks.first { $0.id == id } }
}

/// Reads identity documents. Production adapter: over `DocumentReader` (image → MRZ → evidence).
///
/// Errors: throw ``IDVError`` with `.invalidImage` (1008) for bytes that are not a decodable
/// JPEG/PNG, `.imageTooLarge` (1009), `.noDocumentFound` (1031) when no MRZ is found. The flow
/// counts such an upload as an attempt and asks again with that error. Any other error ends the
/// step as an internal error (nothing committed).
public protocol DocumentVerifying: Sendable {
    func read(pages: [Data]) throws -> DocumentVerification
}

/// One piece of operator-loaded chip trust material as the store keeps it (CSCA certificate,
/// CSCA master list, CRL, document signer certificate, ICAO PKD LDIF; docs/CHIP.md "Trust management").
public struct TrustMaterialRecord: Sendable, Equatable {
    /// `tm_` + the first 16 hex digits of `sha256`.
    public var id: String
    /// `csca_certificate`, `master_list`, `crl`, `document_signer_certificate`, `ldif` (EMRTD `TrustMaterialKind`).
    public var kind: String
    /// SHA-256 of `bytes`, hex (a file is kept once).
    public var sha256: String
    /// The file as imported.
    public var bytes: Data
    /// What it contributes: CSCA certificates, CRLs, document signer certificates.
    public var cscas: Int
    public var crls: Int
    public var documentSigners: Int
    /// The file name it was imported from (no directory), for the operator's listing.
    public var sourceName: String
    /// Unix seconds.
    public var importedAt: Int
    public init(id: String, kind: String, sha256: String, bytes: Data, cscas: Int, crls: Int, documentSigners: Int, sourceName: String, importedAt: Int) {
        self.id = id
        self.kind = kind
        self.sha256 = sha256
        self.bytes = bytes
        self.cscas = cscas
        self.crls = crls
        self.documentSigners = documentSigners
        self.sourceName = sourceName
        self.importedAt = importedAt
    }
}

/// Verifies eMRTD chip files (production adapter: IDVReaders `EMRTDChipVerifier` over EMRTD).
///
/// Passive authentication (ICAO 9303-11 §5.1) against `trust` at `now` (Unix seconds), DG1 against
/// the printed MRZ `printedMRZ` (empty: no comparison), DG2's portrait decoded (JPEG or JPEG 2000)
/// and re-encoded as JPEG. Errors: ``IDVError`` `.chipDataUnreadable` (1050) when EF.SOD is not a
/// usable security object (truncated TLV, lengths past the end, garbage CMS) — the answer is refused
/// and nothing is stored; anything else is an internal error.
public protocol ChipVerifying: Sendable {
    func verify(_ chip: ChipData, printedMRZ: [String], trust: [TrustMaterialRecord], now: Int) throws -> ChipEvidence
}

/// Compares the portrait printed on a document page with the chip's DG2 face (production adapter:
/// IDVReaders `FaceKitPortraitComparer`, dlib ResNet descriptors, kind `image_to_image` with
/// FaceKit's calibrated distances). Evidence only: the policy judges
/// (``WorkflowPolicy/judge(_:today:needsPortrait:)``, reason `chipPortraitDiffers`). Returns nil
/// when either image holds no face; throws for undecodable images.
public protocol PortraitComparing: Sendable {
    func compare(printed: Data, chip: Data) throws -> FaceMatchEvidence?
}

/// What a selfie is compared with.
public enum MatchReference: Sendable, Equatable {
    /// The confirmed document's portrait (JPEG/PNG).
    case portrait(Data)
    /// The user's stored template, as the analyser wrote it (``SelfieEvidence/template``: FaceKit
    /// `FaceTemplate` version 2, or the bare 128 little-endian float32 of a version-1 template
    /// stored before multi-frame templates); the analyser decodes it.
    case template(Data)
    /// No comparison: liveness and a single face only (template enrolment).
    case none
}

/// Analyses a selfie frame sequence. Production adapter: over FaceKit's `SelfieAnalyzer`.
///
/// Errors: ``IDVError`` `.invalidImage` (1008), `.imageTooLarge` (1009), `.noFaceFound` (1032)
/// — counted as an attempt and asked again; anything else is an internal error.
public protocol SelfieVerifying: Sendable {
    /// The evidence of `frames` (JPEG/PNG each, in capture order) played at `framesPerSecond`
    /// (the client's `fps`; nil: the analyser's default), compared with `reference`, and — when
    /// `challenge` is set (`idv.liveness_mode = active`) — judged for the challenged actions, in
    /// order, within its duration. An analyser without active liveness refuses a challenge with
    /// 1030 rather than ignore it.
    func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                 challenge: LivenessChallenge?) throws -> SelfieEvidence
    /// A fresh active liveness challenge of actions this analyser can judge, issued at `now` (Unix
    /// seconds) with `durationSeconds` of sequence time, due `deadlineSeconds` later (FaceKit: one head
    /// turn and one of blink / open mouth, in random order, with a 128-bit random nonce).
    func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge
    /// A fresh illumination sequence for the next capture (presence, docs/LIVENESS.md "Presence"):
    /// drawn with a cryptographically secure generator from the design this analyser checks against
    /// (FaceKit: 8 steps of 7 colours, 300–400 ms each); nil when the analyser cannot check
    /// illumination (the default), and the server then asks for none.
    func issueIllumination() -> [IlluminationStepPayload]?
    /// ``analyze(frames:framesPerSecond:against:challenge:)`` with the capture's illumination: when
    /// `illumination` is set, the evidence's ``SelfieEvidence/presence`` says whether the reflected
    /// light followed its steps at its frame times. The default analyses without it (`.notOffered`).
    func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                 challenge: LivenessChallenge?, illumination: IlluminationCapture?) throws -> SelfieEvidence
}

extension SelfieVerifying {
    public func issueIllumination() -> [IlluminationStepPayload]? { nil }

    public func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                        challenge: LivenessChallenge?, illumination: IlluminationCapture?) throws -> SelfieEvidence {
        try analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
    }
}

/// A server-issued active liveness challenge (ISO/IEC 30107-3 challenge-response PAD), kept in the
/// sealed flow state and shown to the client in the selfie start and upload payloads as
/// `liveness_challenge`; the client cannot choose it.
public struct LivenessChallenge: Sendable, Equatable, Codable {
    /// 128-bit random nonce, 32 lowercase hex digits.
    public var nonce: String
    /// Actions to perform in this order: `TURN_LEFT`, `TURN_RIGHT`, `BLINK`, `OPEN_MOUTH` (FaceKit `ChallengeAction`).
    public var actions: [String]
    /// Longest sequence time, seconds, from the first frame to the last action.
    public var durationSeconds: Double
    /// How long after issue the frames may arrive, seconds.
    public var deadlineSeconds: Int
    /// Unix seconds after which the challenge is expired (issue time + `deadlineSeconds`).
    public var expiresAt: Int

    enum CodingKeys: String, CodingKey {
        case nonce, actions, durationSeconds = "duration_seconds", deadlineSeconds = "deadline_seconds", expiresAt = "expires_at"
    }

    public init(nonce: String, actions: [String], durationSeconds: Double, deadlineSeconds: Int, expiresAt: Int) {
        self.nonce = nonce
        self.actions = actions
        self.durationSeconds = durationSeconds
        self.deadlineSeconds = deadlineSeconds
        self.expiresAt = expiresAt
    }
}

/// Everything the IDV flows use besides the store: the analysers (nil when this build has none —
/// the flows that need one are then not registered), the vault and the policy.
public struct IDVServices: Sendable {
    public var documents: (any DocumentVerifying)?
    public var selfies: (any SelfieVerifying)?
    public var vault: any Vault
    public var policy: WorkflowPolicy
    /// The chip verifier (nil: chip data in a document answer is refused with 1033).
    public var chips: (any ChipVerifying)?
    /// Costs uploads from their images' headers before the analysers decode them (Analysis.swift);
    /// nil: every upload costs nothing (test doubles).
    public var costing: (any UploadCosting)?
    /// Compares the printed portrait with an authentic chip's (nil: not compared).
    public var portraits: (any PortraitComparing)?
    public init(documents: (any DocumentVerifying)?, selfies: (any SelfieVerifying)?, vault: any Vault, policy: WorkflowPolicy,
                chips: (any ChipVerifying)? = nil, costing: (any UploadCosting)? = nil, portraits: (any PortraitComparing)? = nil) {
        self.portraits = portraits
        self.chips = chips
        self.costing = costing
        self.documents = documents
        self.selfies = selfies
        self.vault = vault
        self.policy = policy
    }
}


/// Where the operator's chip trust material is kept (SQLite migration 5 `trust_material`). A store
/// without it serves chips with no trust (every chip is `csca_unknown`).
public protocol TrustMaterialStore: Sendable {
    /// Every record, oldest first.
    func trustMaterials() throws -> [TrustMaterialRecord]
    /// Adds `record`; false (nothing changed) when a record with the same `sha256` is kept already.
    func addTrustMaterial(_ record: TrustMaterialRecord) throws -> Bool
    /// Removes the record `id`; false when there is none.
    func removeTrustMaterial(id: String) throws -> Bool
}
