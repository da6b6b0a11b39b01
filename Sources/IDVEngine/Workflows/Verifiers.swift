import Foundation
import IDVCore

/// One check the document reader performed (ICAO 9303 check digits, expiry, portrait, …).
public struct DocumentCheckOutcome: Sendable, Equatable {
    public enum Result: String, Sendable, Equatable { case passed = "PASSED", failed = "FAILED", warning = "WARNING", notPerformed = "NOT_PERFORMED" }
    /// e.g. `mrz_check_digit_document_number`, `mrz_composite_check_digit`, `portrait_present`.
    public var name: String
    /// e.g. `mrz`, `validity`, `image`.
    public var category: String
    public var result: Result
    public init(name: String, category: String, result: Result) {
        self.name = name
        self.category = category
        self.result = result
    }
}

/// The identity fields read from a document (ICAO 9303 MRZ field names). Dates are ISO 8601
/// `YYYY-MM-DD` (century resolved by the reader).
public struct DocumentFields: Sendable, Equatable {
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

/// What a document reader returns for the uploaded pages: one internal report from which the
/// server builds both seed shapes (seed 002 `DocumentDetails`, seed 003 `AdditionalDocumentScanDetails`).
public struct DocumentVerification: Sendable, Equatable {
    public enum Status: String, Sendable, Equatable { case valid = "VALID", invalid = "INVALID", warning = "WARNING" }
    public var fields: DocumentFields
    public var checks: [DocumentCheckOutcome]
    /// The reader's own overall verdict; the server's document policy may make it stricter.
    public var overallStatus: Status
    /// True when every MRZ check digit (and the composite) verified (ICAO 9303-3 §4.9).
    public var mrzCheckDigitsValid: Bool
    public var errors: [String]
    public var warnings: [String]
    /// The portrait cropped from the data page, JPEG; nil when none was found.
    public var portraitJPEG: Data?
    /// The page images as read (JPEG or PNG), index = page index.
    public var pageImages: [Data]
    public init(fields: DocumentFields, checks: [DocumentCheckOutcome], overallStatus: Status, mrzCheckDigitsValid: Bool,
                errors: [String] = [], warnings: [String] = [], portraitJPEG: Data?, pageImages: [Data]) {
        self.fields = fields
        self.checks = checks
        self.overallStatus = overallStatus
        self.mrzCheckDigitsValid = mrzCheckDigitsValid
        self.errors = errors
        self.warnings = warnings
        self.portraitJPEG = portraitJPEG
        self.pageImages = pageImages
    }
}

/// Reads identity documents. Production adapter: over `DocumentReader` (image → MRZ → report).
///
/// Errors: throw ``IDVError`` with `.invalidImage` (1008) for bytes that are not a decodable
/// JPEG/PNG, `.imageTooLarge` (1009), `.noDocumentFound` (1031) when no MRZ is found. The flow
/// counts such an upload as an attempt and asks again with that error. Any other error ends the
/// step as an internal error (nothing committed).
public protocol DocumentVerifying: Sendable {
    func read(pages: [Data]) throws -> DocumentVerification
}

/// What a selfie is compared with.
public enum SelfieReference: Sendable, Equatable {
    /// The confirmed document's portrait (JPEG/PNG).
    case portrait(Data)
    /// A stored face descriptor (e.g. 128-d dlib ResNet embedding).
    case template([Float])
    /// No comparison: liveness and a single face only (template enrolment).
    case none
}

/// What a selfie analyser returns for a frame sequence: raw scores; the verdict is the server's
/// (``WorkflowPolicy``).
public struct SelfieVerification: Sendable, Equatable {
    /// Face-match score 0–1 (higher is more similar); nil with reference `.none`.
    public var faceMatchScore: Double?
    /// Euclidean descriptor distance to the reference; nil with reference `.none`.
    public var distance: Double?
    /// Liveness score, integer 0–100 (ISO/IEC 30107-3 PAD: higher = more likely bona fide).
    public var livenessScore: Int
    /// Machine-readable reasons (e.g. `no_blink`, `screen_replay`), no personal data.
    public var reasons: [String]
    /// The best frame, JPEG (shown back to the user; never stored beyond retention).
    public var bestFrameJPEG: Data?
    /// The face descriptor of the best frame (stored, sealed, as the template on consent).
    public var embedding: [Float]
    /// Descriptor model name recorded with a template.
    public var model: String
    /// The nonce of the active challenge the analyser evaluated (nil in passive analysis). The
    /// flow requires it to equal the nonce it issued.
    public var challengeNonce: String?
    public init(faceMatchScore: Double?, distance: Double?, livenessScore: Int, reasons: [String] = [], bestFrameJPEG: Data?,
                embedding: [Float], model: String = "dlib_face_recognition_resnet_model_v1", challengeNonce: String? = nil) {
        self.challengeNonce = challengeNonce
        self.faceMatchScore = faceMatchScore
        self.distance = distance
        self.livenessScore = livenessScore
        self.reasons = reasons
        self.bestFrameJPEG = bestFrameJPEG
        self.embedding = embedding
        self.model = model
    }
}

/// Analyses a selfie frame sequence. Production adapter: over FaceKit's `SelfieAnalyzer`.
///
/// Errors: ``IDVError`` `.invalidImage` (1008), `.imageTooLarge` (1009), `.noFaceFound` (1032)
/// — counted as an attempt and asked again; anything else is an internal error.
public protocol SelfieVerifying: Sendable {
    func verify(frames: [Data], against reference: SelfieReference) throws -> SelfieVerification
    /// As above, judging liveness against a server-issued active challenge when `challenge` is
    /// set (`idv.liveness_mode = active`): the challenged actions, in order, within its duration,
    /// before its deadline. Default: passive analysis when `challenge` is nil; an analyser without
    /// active liveness refuses a challenge with 1030 rather than ignore it.
    func verify(frames: [Data], against reference: SelfieReference, challenge: LivenessChallenge?) throws -> SelfieVerification
    /// A fresh active liveness challenge of actions this analyser can judge, issued at `now` (Unix
    /// seconds) with `durationSeconds` of sequence time, due `deadlineSeconds` later (FaceKit: one head
    /// turn and one of blink / open mouth, in random order, with a 128-bit random nonce).
    func issueChallenge(now: Int, durationSeconds: Int, deadlineSeconds: Int) -> LivenessChallenge
}

extension SelfieVerifying {

    public func verify(frames: [Data], against reference: SelfieReference, challenge: LivenessChallenge?) throws -> SelfieVerification {
        guard challenge == nil else { throw IDVError(.internalError, "this selfie analyser cannot judge an active liveness challenge") }
        return try verify(frames: frames, against: reference)
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
    public init(documents: (any DocumentVerifying)?, selfies: (any SelfieVerifying)?, vault: any Vault, policy: WorkflowPolicy) {
        self.documents = documents
        self.selfies = selfies
        self.vault = vault
        self.policy = policy
    }
}

extension WorkflowPolicy {
    /// The server's verdict from raw selfie scores (see the type's documentation).
    public func verdict(_ v: SelfieVerification, reference: SelfieReference) -> BiometricVerdict {
        if v.livenessScore < livenessThreshold { return .livenessFailed }
        if case .none = reference { return .matched }
        guard let d = v.distance else { return .notMatched }
        return d <= faceMatchMaxDistance ? .matched : .notMatched
    }

    /// The server's document verdict: the reader's status made stricter by the document policy.
    /// Returns the status with the errors and warnings to report (codes and fixed texts only).
    public func judge(_ doc: DocumentVerification, today: String, needsPortrait: Bool) -> (status: DocumentVerification.Status, errors: [String], warnings: [String]) {
        var errors = doc.errors
        let warnings = doc.warnings
        // The policy's own findings, unless the reader already reported them in its words.
        func reported(_ words: String) -> Bool { errors.contains { $0.lowercased().contains(words) } }
        if rejectExpiredDocuments, let exp = doc.fields.dateOfExpiry, exp < today, !reported("expired") {
            errors.append("Document expired")
        }
        if rejectFailedCheckDigits, !doc.mrzCheckDigitsValid, !reported("check digit") {
            errors.append("MRZ check digit failed")
        }
        if requirePortrait, needsPortrait, doc.portraitJPEG == nil, !reported("portrait") {
            errors.append("No portrait found")
        }
        if !errors.isEmpty || doc.overallStatus == .invalid { return (.invalid, errors, warnings) }
        if !warnings.isEmpty || doc.overallStatus == .warning { return (.warning, errors, warnings) }
        return (.valid, errors, warnings)
    }
}
