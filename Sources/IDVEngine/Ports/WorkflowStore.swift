import Foundation
import IDVCore

/// A user's biometric template: the face descriptor, sealed (``Vault``), never the image.
public struct BiometricTemplateRecord: Sendable, Equatable {
    public var userID: String
    public var sealed: SealedBox
    /// Descriptor model, e.g. `dlib_face_recognition_resnet_model_v1`.
    public var model: String
    /// The consent it was created under (``ConsentRecord/consentID``).
    public var consentID: String
    public var createdAt: Int
    public init(userID: String, sealed: SealedBox, model: String, consentID: String, createdAt: Int) {
        self.userID = userID
        self.sealed = sealed
        self.model = model
        self.consentID = consentID
        self.createdAt = createdAt
    }
}

/// A recorded consent decision: who, when, in which flow (and IDV workflow), which text version,
/// and whether it was granted or refused.
public struct ConsentRecord: Sendable, Equatable, Codable {
    public var consentID: String
    public var userID: String
    /// `biometric_template` (``ConsentRecord/biometricTemplate``).
    public var kind: String
    public var granted: Bool
    public var sessionID: String?
    public var runID: String?
    public var flow: String
    public var idvWorkflow: Int?
    public var textVersion: String
    public var recordedAt: Int

    /// The consent kind of a biometric template.
    public static let biometricTemplate = "biometric_template"

    enum CodingKeys: String, CodingKey {
        case consentID = "consent_id", userID = "user_id", kind, granted, sessionID = "session_id", runID = "run_id", flow
        case idvWorkflow = "idv_workflow", textVersion = "text_version", recordedAt = "recorded_at"
    }

    public init(consentID: String, userID: String, kind: String, granted: Bool, sessionID: String?, runID: String?, flow: String,
                idvWorkflow: Int?, textVersion: String, recordedAt: Int) {
        self.consentID = consentID
        self.userID = userID
        self.kind = kind
        self.granted = granted
        self.sessionID = sessionID
        self.runID = runID
        self.flow = flow
        self.idvWorkflow = idvWorkflow
        self.textVersion = textVersion
        self.recordedAt = recordedAt
    }
}

/// One document scan with its reason; the report (personal data) is sealed.
public struct DocumentScanRecord: Sendable, Equatable {
    public var scanID: String
    public var userID: String?
    public var sessionID: String?
    public var runID: String?
    public var idvWorkflow: Int?
    public var reason: String
    /// `VALID` / `INVALID` / `WARNING` (``DocumentStatus``).
    public var overallStatus: String
    /// The sealed document report (seed 003 JSON without page images), associated data `scan:<scan_id>`.
    public var sealedReport: SealedBox?
    public var createdAt: Int
    public init(scanID: String, userID: String?, sessionID: String?, runID: String?, idvWorkflow: Int?, reason: String,
                overallStatus: String, sealedReport: SealedBox?, createdAt: Int) {
        self.scanID = scanID
        self.userID = userID
        self.sessionID = sessionID
        self.runID = runID
        self.idvWorkflow = idvWorkflow
        self.reason = reason
        self.overallStatus = overallStatus
        self.sealedReport = sealedReport
        self.createdAt = createdAt
    }
}

/// An image or derived biometric kept during a flow (document pages, portrait, best selfie frame,
/// selfie descriptor, document report), sealed with associated data `media:<run_id>:<kind>`.
/// Deleted when the flow ends, or `idv.media_retention_seconds` later.
public struct MediaRecord: Sendable, Equatable {
    public var mediaID: String
    public var runID: String
    public var kind: MediaKind
    public var sealed: SealedBox
    public var createdAt: Int
    /// nil while the flow runs; set when it ends (deleted at or after this time).
    public var expiresAt: Int?
    public init(mediaID: String, runID: String, kind: MediaKind, sealed: SealedBox, createdAt: Int, expiresAt: Int? = nil) {
        self.mediaID = mediaID
        self.runID = runID
        self.kind = kind
        self.sealed = sealed
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// The store methods of the IDV workflow engine (tables of migrations 1–2). ``SQLiteStore``
/// conforms; every method is atomic.
public protocol WorkflowStore: Store {
    func biometricTemplate(userID: String) throws -> BiometricTemplateRecord?
    /// Stores the user's template, replacing any previous one (one per user).
    func saveBiometricTemplate(_ record: BiometricTemplateRecord) throws
    /// Erases the user's template; false when there was none.
    @discardableResult func deleteBiometricTemplate(userID: String) throws -> Bool
    func recordConsent(_ consent: ConsentRecord) throws
    func consents(userID: String) throws -> [ConsentRecord]
    func saveDocumentScan(_ scan: DocumentScanRecord) throws
    func documentScans(userID: String) throws -> [DocumentScanRecord]
    func saveMedia(_ media: MediaRecord) throws
    func media(_ mediaID: String) throws -> MediaRecord?
    func mediaCount(runID: String) throws -> Int
    /// At flow end: deletes the run's media now (`keepUntil` nil) or marks it to expire then.
    func releaseMedia(runID: String, keepUntil: Int?) throws
    /// Deletes media whose retention ended; returns how many.
    @discardableResult func purgeExpiredMedia(now: Int) throws -> Int
    /// Outcomes of the user's ended runs of `flow` since `since`, newest first.
    func flowOutcomes(userID: String, flow: String, since: Int) throws -> [FlowOutcome]

    // MARK: Key rotation (`idvd admin rekey`)
    /// How many stored boxes are sealed under `vault`'s current key, under one of its previous keys,
    /// and under a key it does not hold, per table (session states by the store's own sealer).
    func sealedInventory(vault: any Vault) throws -> SealedInventory
    /// Re-seals every box not under `vault`'s current key — templates, document-scan reports, kept
    /// media, session states — in transactions of at most `batchSize` rows, each row written only if
    /// it is unchanged since it was read. Throws ``VaultError/wrongKey(_:)`` (that batch rolled back)
    /// when a box names a key the vault does not hold. Returns the rows re-sealed per table.
    func resealUnderCurrentKey(vault: any Vault, batchSize: Int) throws -> [String: Int]
}

/// Stored sealed boxes by the key that opens them, per table (`biometric_templates`,
/// `document_scans`, `idv_media`, `sessions`): counts only, never key material.
public struct SealedInventory: Codable, Sendable, Equatable {
    public var current: [String: Int] = [:]
    public var previous: [String: Int] = [:]
    /// Boxes under a key that is neither the current nor a previous key: they cannot be opened.
    public var unknown: [String: Int] = [:]
    public init() {}
}
