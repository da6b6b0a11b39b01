import Foundation

// The answers a client sends (`WireAnswer.payload`), one `Codable` type per challenge: the wire
// shape declared once, encoded by the SDK (IDVKit `RDNA`) and decoded by the server's flows (one
// walk of the request's JSON tree, ``JSONValue/decode(_:)``). Which type answers which challenge:
// ``ChallengeAnswer/challenges``. Ranges and limits the server configures (pages, frames, password
// length) are the server's to check; these types fix the names and JSON types only.
//
// | challenge | answer |
// |---|---|
// | `getUser` | ``UserAnswer`` |
// | `getActivationCode` | ``ActivationCodeAnswer`` |
// | `getPassword` | ``PasswordAnswer`` |
// | `getUserConsentForLDA` | ``LDAConsentAnswer`` |
// | `getDeviceSignature` | ``DeviceSignatureAnswer`` |
// | `getIDVDocumentScanProcessStartConfirmation` | ``ConfirmAnswer`` |
// | `getIDVConfirmDocumentDetails` | ``DocumentDetailsAnswer`` |
// | `uploadIDVDocumentPages` | ``DocumentPagesAnswer`` |
// | `readIDVDocumentChip` | ``DocumentChipAnswer`` |
// | `getIDVSelfieProcessStartConfirmation` | ``SelfieStartAnswer`` |
// | `uploadIDVSelfieFrames` | ``SelfieFramesAnswer`` |
// | `getIDVSelfieConfirmation` | ``SelfieConfirmationActionAnswer`` |
// | `getIDVBiometricOptInConsent` | ``OptInConsentAnswer`` |
// | `onIDVOptInCapturedFrameConfirmation` | ``FrameConfirmationAnswer`` |

/// An answer payload type and the challenges it answers.
public protocol ChallengeAnswer: Codable, Equatable, Sendable {
    /// The challenge names (``WireName``) this payload answers.
    static var challenges: [String] { get }
}

/// Any answer may carry `"cancel": true` where the step can be left (the upload, re-authentication
/// and capture challenges): the flow ends as by its start screen's Close (146 before login, 240 after).
public struct CancelAnswer: Codable, Equatable, Sendable {
    public var cancel: Bool?
    public init(cancel: Bool? = true) { self.cancel = cancel }
    /// True when the answer asks to cancel.
    public var cancelled: Bool { cancel == true }
}

/// `getUser`: `{"user_id": String}` (seed `setUser(_:)`).
public struct UserAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getUser]
    public var userID: String
    enum CodingKeys: String, CodingKey { case userID = "user_id" }
    public init(userID: String) { self.userID = userID }
}

/// `getActivationCode`: `{"activation_code": String}` (seed `setActivationCode(_:)`).
public struct ActivationCodeAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getActivationCode]
    public var activationCode: String
    enum CodingKeys: String, CodingKey { case activationCode = "activation_code" }
    public init(activationCode: String) { self.activationCode = activationCode }
}

/// `getPassword` (every mode): `{"password": String}` (seed `setPassword(_:challengeMode:)`); in
/// re-authentication (seed 004 modes 6/7) `{"cancel": true}` instead leaves the flow.
public struct PasswordAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getPassword]
    public var password: String?
    public var cancel: Bool?
    public init(password: String) { self.password = password }
}

/// `getUserConsentForLDA`: `{"consent": false}`, or `{"consent": true, "signature": base64}` — the
/// device's Ed25519 signature over ``WireLDA/message(challengeID:nonce:)`` enrolling it.
public struct LDAConsentAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getUserConsentForLDA]
    public var consent: Bool
    /// Standard base64 of the 64-byte signature; required with consent.
    public var signature: String?
    public init(consent: Bool, signature: String? = nil) {
        self.consent = consent
        self.signature = signature
    }
}

/// `getDeviceSignature`: `{"signature": base64}` over ``WireLDA/message(challengeID:nonce:)``, or
/// `{"fallback": "password"}` (no provider, the user declined, LDA unavailable); in
/// re-authentication `{"cancel": true}` leaves the flow.
public struct DeviceSignatureAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getDeviceSignature]
    /// The one fallback the server knows.
    public static let passwordFallback = "password"
    /// Standard base64 of the 64-byte Ed25519 signature.
    public var signature: String?
    public var fallback: String?
    public var cancel: Bool?
    public init(signature: String? = nil, fallback: String? = nil) {
        self.signature = signature
        self.fallback = fallback
    }
    /// `{"fallback": "password"}`.
    public static let fallbackToPassword = DeviceSignatureAnswer(fallback: passwordFallback)
    /// True when the client asks for the password instead.
    public var fallsBackToPassword: Bool { fallback == Self.passwordFallback }
}

/// `getIDVDocumentScanProcessStartConfirmation`: `{"is_confirm": Bool}`.
public struct ConfirmAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getIDVDocumentScanProcessStartConfirmation]
    public var isConfirm: Bool
    enum CodingKeys: String, CodingKey { case isConfirm = "is_confirm" }
    public init(isConfirm: Bool) { self.isConfirm = isConfirm }
}

/// `getIDVConfirmDocumentDetails`: `{"is_confirm": Bool, "rescan"?: Bool}`. `rescan: true` is the
/// details screen's "Recapture" (seed 000 L1821, seed 002 L2138): the server asks for the pages
/// again, whatever `is_confirm` says (the SDK sends `false` with it). Without `rescan`, KYC reads
/// `is_confirm: false` as the Close button's cancel (seed 000 L1265, status 240).
public struct DocumentDetailsAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getIDVConfirmDocumentDetails]
    public var isConfirm: Bool
    /// True for "Recapture": scan the document again.
    public var rescan: Bool?
    enum CodingKeys: String, CodingKey { case isConfirm = "is_confirm", rescan }
    public init(isConfirm: Bool, rescan: Bool? = nil) {
        self.isConfirm = isConfirm
        self.rescan = rescan
    }
}

/// `uploadIDVDocumentPages` (upload route): `{"pages": [{"page_index": Int, "image": base64}],
/// "chip"?: ChipFilesPayload}` — JPEG or PNG page images, standard base64; or `{"cancel": true}`.
public struct DocumentPagesAnswer: ChallengeAnswer {
    public static let challenges = [WireName.uploadIDVDocumentPages]

    /// One page: its index (0 = the data page; absent: its position in `pages`) and image.
    public struct Page: Codable, Equatable, Sendable {
        public var pageIndex: Int?
        public var image: String
        enum CodingKeys: String, CodingKey { case pageIndex = "page_index", image }
        public init(pageIndex: Int?, image: Data) {
            self.pageIndex = pageIndex
            self.image = image.base64EncodedString()
        }
    }

    public var pages: [Page]?
    /// The eMRTD chip files read beside the pages (ICAO 9303-10), when the client read the chip.
    public var chip: ChipFilesPayload?
    /// `"chip_follows": true`: the client reads the chip after the pages (IDVCore ``DocumentChipReadRequest``): the
    /// server reads the pages, then asks `readIDVDocumentChip` with the MRZ's access digest. Not with `chip`.
    public var chipFollows: Bool?
    public var cancel: Bool?
    enum CodingKeys: String, CodingKey { case pages, chip, chipFollows = "chip_follows", cancel }
    public init(pages: [Page], chip: ChipFilesPayload? = nil, chipFollows: Bool? = nil) {
        self.pages = pages
        self.chip = chip
        self.chipFollows = chipFollows
    }
}

/// `getIDVSelfieProcessStartConfirmation`: `{"is_confirm": Bool, "use_back_camera"?: Bool}`.
public struct SelfieStartAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getIDVSelfieProcessStartConfirmation]
    public var isConfirm: Bool
    public var useBackCamera: Bool?
    enum CodingKeys: String, CodingKey { case isConfirm = "is_confirm", useBackCamera = "use_back_camera" }
    public init(isConfirm: Bool, useBackCamera: Bool? = nil) {
        self.isConfirm = isConfirm
        self.useBackCamera = useBackCamera
    }
}

/// `uploadIDVSelfieFrames` (upload route): `{"frames": [base64], "fps"?: Double, "meta_data"?: {…},
/// "frame_times_ms"?: [Double]}` — JPEG or PNG frames, oldest first, played at `fps` frames per
/// second; `meta_data` is what the SDK knows about the capture (``SelfieCaptureMetadata``, kept
/// only as the server sanitises it); `frame_times_ms` each frame's capture time, milliseconds from
/// the start of the challenge's illumination sequence (``PresenceAnswer/validate(frameTimes:frameCount:)``).
/// Or, with no frames, `{"presence": {"illumination": "unavailable" | "declined"}}`: this client did
/// not flash the sequence (``PresenceAnswerPayload``). Or `{"cancel": true}`.
public struct SelfieFramesAnswer: ChallengeAnswer {
    public static let challenges = [WireName.uploadIDVSelfieFrames]
    public var frames: [String]?
    /// Frames per second of the capture.
    public var fps: Double?
    /// Any JSON object; the server keeps ``SelfieCaptureMetadata/init(sanitising:)`` of it.
    public var metaData: JSONValue?
    /// Each frame's capture time, milliseconds from the start of the illumination sequence.
    public var frameTimesMs: [Double]?
    /// The client's decline of the illumination sequence (sent instead of frames).
    public var presence: PresenceAnswerPayload?
    public var cancel: Bool?
    enum CodingKeys: String, CodingKey { case frames, fps, metaData = "meta_data", frameTimesMs = "frame_times_ms", presence, cancel }
    public init(frames: [Data], fps: Double?, metaData: SelfieCaptureMetadata?, frameTimesMs: [Double]? = nil) {
        self.frames = frames.map { $0.base64EncodedString() }
        self.fps = fps
        self.metaData = metaData.flatMap { try? JSONValue(encoding: $0) }
        self.frameTimesMs = frameTimesMs
    }

    /// `{"presence": {"illumination": …}}`: the client did not flash the sequence (`unavailable`:
    /// it cannot; `declined`: the person chose the head movements instead).
    public static func declining(_ why: IlluminationDecline) -> SelfieFramesAnswer {
        var a = SelfieFramesAnswer(frames: [], fps: nil, metaData: nil)
        a.frames = nil
        a.presence = PresenceAnswerPayload(illumination: why)
        return a
    }

    /// `{"cancel": true}`: the user left the capture.
    public static let cancelled: SelfieFramesAnswer = {
        var a = SelfieFramesAnswer(frames: [], fps: nil, metaData: nil)
        a.frames = nil
        a.cancel = true
        return a
    }()
}

/// `getIDVSelfieConfirmation`: `{"action": String}` — an offered key, `"true"` (= `continue-flow`)
/// or `"false"` (reject the selfie); ``SelfieConfirmationAnswer`` reads it.
public struct SelfieConfirmationActionAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getIDVSelfieConfirmation]
    public var action: String
    public init(action: String) { self.action = action }
}

/// `getIDVBiometricOptInConsent`: `{"is_opt_in": Bool}`.
public struct OptInConsentAnswer: ChallengeAnswer {
    public static let challenges = [WireName.getIDVBiometricOptInConsent]
    public var isOptIn: Bool
    enum CodingKeys: String, CodingKey { case isOptIn = "is_opt_in" }
    public init(isOptIn: Bool) { self.isOptIn = isOptIn }
}

/// `onIDVOptInCapturedFrameConfirmation`: `{"status": 0 approved | 1 recapture | 2 cancel}` (``IDVStatus``).
public struct FrameConfirmationAnswer: ChallengeAnswer {
    public static let challenges = [WireName.onIDVOptInCapturedFrameConfirmation]
    public var status: Int
    public init(status: Int) { self.status = status }
}

/// The `payload` of `getDeviceSignature` and `getUserConsentForLDA`: the nonce the device signs
/// with the challenge id (``WireLDA/message(challengeID:nonce:)``).
public struct LDAChallengePayload: Codable, Equatable, Sendable {
    /// 32 random bytes, standard base64.
    public var nonce: String
    public init(nonce: String) { self.nonce = nonce }
}

/// The start input of an IDV flow: the client's `POST /v1/flows/{name}` payload (`reason`), or for
/// activation the auth flow's call (`user_id`, `idv_workflow`).
public struct IDVFlowStartPayload: Codable, Equatable, Sendable {
    /// Why the flow runs (1–128 characters; audited, and returned in `idv_audit_info.reason`).
    public var reason: String?
    /// Activation only: the user being activated.
    public var userID: String?
    /// Activation only: the user's ``IDVWorkflow`` raw value (0–5).
    public var idvWorkflow: Int?
    enum CodingKeys: String, CodingKey { case reason, userID = "user_id", idvWorkflow = "idv_workflow" }
    public init(reason: String? = nil, userID: String? = nil, idvWorkflow: Int? = nil) {
        self.reason = reason
        self.userID = userID
        self.idvWorkflow = idvWorkflow
    }
}

extension JSONValue {
    /// This payload as the answer type `T`; `DecodingError` becomes a sentence naming the field
    /// (`payload.pages[0].image must be a string`, `payload.user_id is required`) for 1001 refusals.
    public func decodeAnswer<T: Decodable>(_ type: T.Type) throws(AnswerShapeError) -> T {
        do { return try decode(T.self) } catch let e as DecodingError {
            throw AnswerShapeError(e)
        } catch {
            throw AnswerShapeError(reason: "payload is not a valid answer")
        }
    }
}

/// Why a payload is not the answer its challenge expects, in words naming the field.
public struct AnswerShapeError: Error, Equatable, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
    public init(reason: String) { self.reason = reason }

    init(_ e: DecodingError) {
        func path(_ p: [any CodingKey]) -> String {
            p.reduce("payload") { s, k in k.intValue.map { "\(s)[\($0)]" } ?? "\(s).\(k.stringValue)" }
        }
        switch e {
        case let .keyNotFound(key, c): reason = "\(path(c.codingPath + [key])) is required"
        case let .valueNotFound(_, c): reason = "\(path(c.codingPath)) is required"
        case let .typeMismatch(type, c):
            let expected: String
            switch type {
            case is Bool.Type: expected = "a boolean"
            case is String.Type: expected = "a string"
            case is Double.Type, is Float.Type: expected = "a number"
            case is Int.Type: expected = "an integer"
            case is [String: JSONValue].Type: expected = "an object"
            case is [JSONValue].Type: expected = "an array"
            default: expected = "\(type)"
            }
            reason = "\(path(c.codingPath)) must be \(expected)"
        case let .dataCorrupted(c): reason = "\(path(c.codingPath)): \(c.debugDescription)"
        @unknown default: reason = "payload is not a valid answer"
        }
    }
}
