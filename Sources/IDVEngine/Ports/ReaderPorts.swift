import Foundation
import IDVCore
@_exported import IDVEvidence

// The engine's side of the readers: the evidence they hand over (IDVEvidence types and the two
// reports below) and the analyser protocols the composition root fills (IDVReaders: FaceKit and
// DocumentReader; test doubles in IDVTestSupport). Evidence only: the verdicts are
// `WorkflowPolicy`'s (Judgement.swift).

/// Reads identity documents. Production adapter: over `DocumentReader` (image → MRZ → evidence).
///
/// Errors: throw ``IDVError`` with `.invalidImage` (1008) for bytes that are not a decodable
/// JPEG/PNG, `.imageTooLarge` (1009), `.noDocumentFound` (1031) when no MRZ is found. The flow
/// counts such an upload as an attempt and asks again with that error. Any other error ends the
/// step as an internal error (nothing committed).
public protocol DocumentReading: Sendable {
    func read(pages: [Data]) throws -> DocumentEvidence
}


/// Verifies eMRTD chip files (production adapter: IDVReaders `EMRTDChipVerifier` over EMRTD).
///
/// Passive authentication (ICAO 9303-11 §5.1) against `trust` at `now` (Unix seconds), DG1 against
/// the printed MRZ `printedMRZ` (empty: no comparison), DG2's portrait decoded (JPEG or JPEG 2000)
/// and re-encoded as JPEG, and Active Authentication (§6.1) of the chip's signature in
/// `chip.activeAuthentication` over `challenge` — the step's own (8 bytes; nil: none was issued, so
/// any signature answers another challenge) — with DG15's key once passive authentication verified
/// DG15's hash. Errors: ``IDVError`` `.chipDataUnreadable` (1050) when EF.SOD is not a
/// usable security object (truncated TLV, lengths past the end, garbage CMS) — the answer is refused
/// and nothing is stored; anything else is an internal error.
public protocol ChipVerifying: Sendable {
    func verify(_ chip: ChipData, challenge: [UInt8]?, printedMRZ: [String], trust: [TrustMaterialRecord], now: Int) throws -> ChipEvidence
    /// SHA-1(MRZ_information) of the printed MRZ's lines (ICAO 9303-11 §9.7.2: document number, date of birth and
    /// date of expiry with their check digits), 20 octets — the chip's BAC/PACE access key; nil when the lines are not
    /// an MRZ with those fields.
    func mrzInformationDigest(printedMRZ: [String]) -> [UInt8]?
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
public protocol SelfieAnalysing: Sendable {
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

extension SelfieAnalysing {
    public func issueIllumination() -> [IlluminationStepPayload]? { nil }

    public func analyze(frames: [Data], framesPerSecond: Double?, against reference: MatchReference,
                        challenge: LivenessChallenge?, illumination: IlluminationCapture?) throws -> SelfieEvidence {
        try analyze(frames: frames, framesPerSecond: framesPerSecond, against: reference, challenge: challenge)
    }
}

/// The readers and the vault the IDV flows and the engine measure with (the store and the
/// settings come separately: ``FlowEngine/store``, ``FlowEnv/settings``). A reader that is nil
/// (this build or machine has none) leaves the flows that need it unregistered.
public struct IDVServices: Sendable {
    public var documents: (any DocumentReading)?
    public var selfies: (any SelfieAnalysing)?
    public var vault: any Vault
    /// The chip verifier (nil: chip data in a document answer is refused with 1033).
    public var chips: (any ChipVerifying)?
    /// Costs uploads from their images' headers before the analysers decode them (Ports/AnalysisPorts.swift);
    /// nil: every upload costs nothing (test doubles).
    public var costing: (any UploadCosting)?
    /// Compares the printed portrait with an authentic chip's (nil: not compared).
    public var portraits: (any PortraitComparing)?
    public init(documents: (any DocumentReading)?, selfies: (any SelfieAnalysing)?, vault: any Vault,
                chips: (any ChipVerifying)? = nil, costing: (any UploadCosting)? = nil, portraits: (any PortraitComparing)? = nil) {
        self.portraits = portraits
        self.chips = chips
        self.costing = costing
        self.documents = documents
        self.selfies = selfies
        self.vault = vault
    }
}

