import Foundation
import IDVCore

/// Why a capture produced nothing usable. The SDK reports it as `onRequestFailed` with code 1008
/// (`invalidImage`) and the message, and asks the start confirmation again, so the user can try again.
///
/// ``cancelledByUser`` is different: the user left the camera or scanner (the codelabs' native
/// capture screens have their own close button, spec 002 Q8). The SDK then cancels the step as the
/// start screen's Close does — before login the flow ends with 146 and `getUser`, after login with
/// the flow's terminal event and 240 — instead of leaving the start screen "processing".
public struct CaptureError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    /// True for ``cancelledByUser``.
    public var isUserCancellation: Bool
    public init(_ message: String) { self.message = message; isUserCancellation = false }
    /// The user closed the capture.
    public static let cancelledByUser: CaptureError = {
        var e = CaptureError("the user cancelled the capture")
        e.isUserCancellation = true
        return e
    }()
    public var description: String { message }
}

/// Captures the pages of an identity document after `setIDVDocumentScanProcessStartConfirmation(true, …)`.
/// On a phone: the camera UI. Returns the pages in order (front = page 0).
public protocol DocumentCaptureProvider: Sendable {
    func captureDocumentPages(workflow: RDNAIDVWorkflow) throws(CaptureError) -> [CapturedPage]
}

/// Captures a short selfie frame sequence after `setIDVSelfieProcessStartConfirmation(true, …)`
/// (the seeds' liveness "video"; e.g. ~3 s at 10 fps).
///
/// When the server runs active liveness (`idv.liveness_mode = active`), every capture comes with
/// the server's ``RDNALivenessChallenge``: the provider shows its ``RDNALivenessChallenge/instructions``
/// to the user and records while they perform the actions, in order, within
/// ``RDNALivenessChallenge/durationSeconds``. Providers that implement only the two-argument method
/// keep working; the server then judges their frames against the challenge all the same (and a
/// sequence without the actions fails liveness with `CHALLENGE_*` reasons).
///
/// Presence (docs/WORKFLOWS.md "uploadIDVSelfieFrames"): the server may ask the screen to flash a
/// colour sequence during the capture (``RDNAIlluminationChallenge``). A provider that can —
/// ``canFlashIllumination`` true — gets it in the four-argument method, flashes it full screen while
/// recording and returns the frames' times (``CapturedSelfie/frameTimesMs``). For one that cannot
/// (the default), the SDK tells the server so, and the server asks again with its fallback (the
/// head-movement challenge, at a lower assurance level) — never a silent pass.
public protocol SelfieCaptureProvider: Sendable {
    func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedSelfie
    /// The capture the SDK calls: `challenge` is the server's active-liveness challenge for this
    /// capture, nil under passive liveness. The default ignores it and calls the two-argument method.
    func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow, challenge: RDNALivenessChallenge?) throws(CaptureError) -> CapturedSelfie
    /// Whether this provider flashes the screen for an ``RDNAIlluminationChallenge`` (a phone or
    /// computer whose screen faces the person). Default false.
    var canFlashIllumination: Bool { get }
    /// The capture under an illumination challenge (only called when ``canFlashIllumination``):
    /// show ``RDNAIlluminationChallenge/photosensitivityWarning`` (throw
    /// ``CaptureError/illuminationDeclined`` when the person chooses the head movements instead),
    /// then flash the steps while recording, and return the frames with ``CapturedSelfie/frameTimesMs``.
    /// The default calls the three-argument method (frames without times: the server then treats the
    /// sequence as not flashed).
    func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow, challenge: RDNALivenessChallenge?,
                       illumination: RDNAIlluminationChallenge) throws(CaptureError) -> CapturedSelfie
}

extension SelfieCaptureProvider {
    public func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow, challenge: RDNALivenessChallenge?) throws(CaptureError) -> CapturedSelfie {
        try captureSelfie(useBackCamera: useBackCamera, workflow: workflow)
    }

    public var canFlashIllumination: Bool { false }

    public func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow, challenge: RDNALivenessChallenge?,
                              illumination: RDNAIlluminationChallenge) throws(CaptureError) -> CapturedSelfie {
        try captureSelfie(useBackCamera: useBackCamera, workflow: workflow, challenge: challenge)
    }
}

/// One action of an active-liveness challenge (ISO/IEC 30107-3 challenge–response PAD), as the
/// server names it in `liveness_challenge.actions`. Unknown names (a newer server) decode to `.other`.
public enum RDNALivenessAction: OpenStringVocabulary {
    /// `TURN_LEFT`: turn the head to the user's own left.
    case turnLeft
    /// `TURN_RIGHT`: turn the head to the user's own right.
    case turnRight
    /// `BLINK`: blink once.
    case blink
    /// `OPEN_MOUTH`: open the mouth.
    case openMouth
    /// Any other name, kept verbatim.
    case other(String)

    /// The string on the wire.
    public var rawValue: String {
        switch self {
        case .turnLeft: return "TURN_LEFT"
        case .turnRight: return "TURN_RIGHT"
        case .blink: return "BLINK"
        case .openMouth: return "OPEN_MOUTH"
        case let .other(s): return s
        }
    }

    /// The named cases (see ``OpenStringVocabulary/knownValues``).
    public static let knownValues: [RDNALivenessAction] = [.turnLeft, .turnRight, .blink, .openMouth]

    /// What to tell the user, as an imperative phrase ("turn your head to your left").
    public var instruction: String {
        switch self {
        case .turnLeft: return "turn your head to your left"
        case .turnRight: return "turn your head to your right"
        case .blink: return "blink once"
        case .openMouth: return "open your mouth"
        case let .other(s): return s.lowercased().replacingOccurrences(of: "_", with: " ")
        }
    }
}

/// The server's active-liveness challenge for one selfie capture (the `liveness_challenge` of the
/// `getIDVSelfieProcessStartConfirmation` and `uploadIDVSelfieFrames` payloads, docs/PROTOCOL.md).
/// The server keeps the challenge it issued and judges the frames against it; the client cannot
/// choose or alter it, and a challenge is used up by the capture that answers it (a retake gets a
/// new one).
public struct RDNALivenessChallenge: Sendable, Equatable, Codable {
    /// The server's random nonce for this challenge (32 lowercase hex digits).
    public var nonce: String
    /// Actions to perform, in this order.
    public var actions: [RDNALivenessAction]
    /// Longest sequence time, in seconds, from the first frame to the last action.
    public var durationSeconds: Double
    /// When the challenge expires (server clock); frames arriving later fail with `CHALLENGE_EXPIRED`.
    public var expiresAt: Date

    enum CodingKeys: String, CodingKey { case nonce, actions, durationSeconds = "duration_seconds", expiresAt = "expires_at" }

    public init(nonce: String, actions: [RDNALivenessAction], durationSeconds: Double, expiresAt: Date) {
        self.nonce = nonce
        self.actions = actions
        self.durationSeconds = durationSeconds
        self.expiresAt = expiresAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        nonce = try c.decode(String.self, forKey: .nonce)
        actions = try c.decode([RDNALivenessAction].self, forKey: .actions)
        durationSeconds = try c.decode(Double.self, forKey: .durationSeconds)
        expiresAt = Date(timeIntervalSince1970: TimeInterval(try c.decode(Int.self, forKey: .expiresAt)))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(nonce, forKey: .nonce)
        try c.encode(actions, forKey: .actions)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(Int(expiresAt.timeIntervalSince1970), forKey: .expiresAt)
    }

    /// The challenge in the shape of a `liveness_challenge` payload, or nil when `payload` has none
    /// (passive liveness) or it is malformed.
    public init?(payload: JSONValue) {
        guard let c = payload["liveness_challenge"], let v = try? c.decode(RDNALivenessChallenge.self) else { return nil }
        self = v
    }

    /// One sentence for the user, e.g. "Look at the camera, then turn your head to your left, then
    /// blink once, within 6 seconds."
    public var instructions: String {
        let steps = actions.map(\.instruction).joined(separator: ", then ")
        let secs = durationSeconds == durationSeconds.rounded() ? String(Int(durationSeconds)) : String(format: "%.1f", durationSeconds)
        return "Look at the camera, then \(steps), within \(secs) seconds."
    }
}

/// Image files: JPEG (`FF D8 FF`) or PNG (`89 50 4E 47 0D 0A 1A 0A`), checked by magic bytes.
public enum ImageFiles {
    /// Largest accepted image file (the server's upload limit applies to the whole answer).
    public static let maxBytes = 8 * 1024 * 1024

    public static func isImage(_ d: Data) -> Bool {
        let b = [UInt8](d.prefix(8))
        if b.count >= 3, b[0] == 0xFF, b[1] == 0xD8, b[2] == 0xFF { return true }
        return b == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    }

    /// Reads one image file, with a clear error for a missing, empty, huge or non-image file.
    public static func read(_ url: URL) throws(CaptureError) -> Data {
        let attrs: [FileAttributeKey: Any]
        do { attrs = try FileManager.default.attributesOfItem(atPath: url.path) } catch {
            throw CaptureError("cannot read \(url.lastPathComponent): no such file")
        }
        let size = (attrs[.size] as? NSNumber)?.intValue ?? 0
        guard size > 0 else { throw CaptureError("\(url.lastPathComponent) is empty") }
        guard size <= maxBytes else { throw CaptureError("\(url.lastPathComponent) is larger than \(maxBytes / 1_048_576) MiB") }
        let d: Data
        do { d = try Data(contentsOf: url) } catch { throw CaptureError("cannot read \(url.lastPathComponent)") }
        guard isImage(d) else { throw CaptureError("\(url.lastPathComponent) is not a JPEG or PNG image") }
        return d
    }
}

/// Linux/desktop document capture: the page images are files (front first).
public struct ImageFileDocumentCapture: DocumentCaptureProvider {
    public let pageFiles: [URL]
    public init(pageFiles: [URL]) { self.pageFiles = pageFiles }

    public func captureDocumentPages(workflow: RDNAIDVWorkflow) throws(CaptureError) -> [CapturedPage] {
        guard !pageFiles.isEmpty else { throw CaptureError("no document page files were given") }
        guard pageFiles.count <= 2 else { throw CaptureError("a document has at most 2 pages (front, back); got \(pageFiles.count)") }
        var pages: [CapturedPage] = []
        for (i, f) in pageFiles.enumerated() { pages.append(CapturedPage(pageIndex: i, image: try ImageFiles.read(f))) }
        return pages
    }
}

/// Linux/desktop selfie capture: a folder of frames (`*.jpg`, `*.jpeg`, `*.png`), taken in file-name
/// order, at most `maxFrames`, played as `framesPerSecond` (e.g. `ffmpeg -i clip.mp4 -vf fps=10 dir/%03d.jpg`).
public struct FrameFolderSelfieCapture: SelfieCaptureProvider {
    public let folder: URL
    public let framesPerSecond: Double
    public let maxFrames: Int
    public init(folder: URL, framesPerSecond: Double = 10, maxFrames: Int = 60) {
        self.folder = folder
        self.framesPerSecond = framesPerSecond
        self.maxFrames = maxFrames
    }

    public func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedSelfie {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder.path) } catch {
            throw CaptureError("cannot read the frame folder \(folder.lastPathComponent)")
        }
        let frames = names.filter { ["jpg", "jpeg", "png"].contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
        guard !frames.isEmpty else { throw CaptureError("the frame folder \(folder.lastPathComponent) has no JPEG/PNG frames") }
        var out: [Data] = []
        for n in frames.prefix(maxFrames) { out.append(try ImageFiles.read(folder.appendingPathComponent(n))) }
        return CapturedSelfie(frames: out, framesPerSecond: framesPerSecond)
    }
}
