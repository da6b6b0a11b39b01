import Foundation

// MARK: - getIDVSelfieConfirmation (seed 002 §6.2, ARCHITECTURE §5)

/// The `selfieDetails` JSON string of `getIDVSelfieConfirmation(_:challenge:)`: the server's verdict
/// on the selfie (liveness, face match against the document portrait) and the buttons the user may
/// press next. This is the *inner* object of seed 002 §6.2 (ARCHITECTURE §5 resolution of Q1):
///
/// ```json
/// { "response_data": { "biometric_result": {"display_text": "MATCHED", "result_criteria": "FACE_MATCH"},
///                      "face_matcher_response": {"score": 0.95},
///                      "analyze_liveness_response": {"video": {"liveness_result": {"score": 92},
///                                                              "autocapture_result": {"selfie_image": "<b64>"}}},
///                      "document_detail": {"document_info": {"portrait_image": "<b64>", "name": "JOHN DOE"}} },
///   "action_buttons": { "success_button": [{"button_text": "Continue", "key": "continue-flow"}],
///                       "failure_button": [ … ] } }
/// ```
/// The seed's own example (L2600–L2638) wraps this in ``SelfieConfirmationEnvelope``.
public struct SelfieDetails: IDVPayload {
    /// `response_data`: the analysis results.
    public var responseData: SelfieAnalysis
    /// `action_buttons`: the server-offered next steps.
    public var actionButtons: ActionButtons
    /// `user_id` (optional): read by the seed's delegate manager (L710) but absent from its example.
    public var userID: String?

    enum CodingKeys: String, CodingKey {
        case responseData = "response_data"
        case actionButtons = "action_buttons"
        case userID = "user_id"
    }

    public init(responseData: SelfieAnalysis, actionButtons: ActionButtons, userID: String? = nil) {
        self.responseData = responseData
        self.actionButtons = actionButtons
        self.userID = userID
    }

    /// The buttons the confirmation screen shows: `success_button` when the verdict is `MATCHED`,
    /// otherwise `failure_button` (seed 002 §6.3, L2986–L2995).
    public var displayedButtons: [ActionButton] {
        responseData.biometricResult.displayText.isSuccess ? actionButtons.successButton : actionButtons.failureButton
    }

    /// Whether `key` is one of the ``displayedButtons``' keys: the only answers the server accepts
    /// to this challenge (ARCHITECTURE §5; anything else is ``IDVErrorCode/actionNotOffered``).
    public func offers(_ key: IDVActionKey) -> Bool {
        displayedButtons.contains { $0.key == key }
    }
}

/// The event wrapper of the seed's selfie example (seed 002 L2600–L2638):
/// `{ "challengeMode": 8, "response_data": <SelfieDetails> }`. Kept so the seed's verbatim example
/// decodes; the SDK hands apps the inner ``SelfieDetails``.
public struct SelfieConfirmationEnvelope: IDVPayload {
    /// `challengeMode` (camelCase in the seed): the challenge this answers, e.g. 8 for activation.
    public var challengeMode: ChallengeOpMode
    /// `response_data`: the inner selfie details.
    public var responseData: SelfieDetails

    enum CodingKeys: String, CodingKey {
        case challengeMode
        case responseData = "response_data"
    }

    public init(challengeMode: ChallengeOpMode, responseData: SelfieDetails) {
        self.challengeMode = challengeMode
        self.responseData = responseData
    }
}

/// `response_data` of ``SelfieDetails`` (seed 002 §6.2). Each part except the verdict is optional:
/// the seed's screen hides what is absent (L2965), and e.g. a liveness failure has no face match.
public struct SelfieAnalysis: Codable, Equatable, Sendable {
    /// `biometric_result`: the verdict (required).
    public var biometricResult: BiometricResult
    /// `face_matcher_response`: the 1:1 comparison score.
    public var faceMatcherResponse: FaceMatcherResponse?
    /// `analyze_liveness_response`: liveness score and the auto-captured selfie.
    public var analyzeLivenessResponse: AnalyzeLivenessResponse?
    /// `document_detail`: the reference the selfie was compared with.
    public var documentDetail: SelfieDocumentDetail?

    enum CodingKeys: String, CodingKey {
        case biometricResult = "biometric_result"
        case faceMatcherResponse = "face_matcher_response"
        case analyzeLivenessResponse = "analyze_liveness_response"
        case documentDetail = "document_detail"
    }

    public init(biometricResult: BiometricResult, faceMatcherResponse: FaceMatcherResponse? = nil,
                analyzeLivenessResponse: AnalyzeLivenessResponse? = nil, documentDetail: SelfieDocumentDetail? = nil) {
        self.biometricResult = biometricResult
        self.faceMatcherResponse = faceMatcherResponse
        self.analyzeLivenessResponse = analyzeLivenessResponse
        self.documentDetail = documentDetail
    }
}

/// `biometric_result` (seed 002 §6.2, seed 001 §2.5): `{ "display_text": "MATCHED", "result_criteria": "FACE_MATCH" }`.
public struct BiometricResult: Codable, Equatable, Sendable {
    /// `display_text`: `MATCHED`, `NOT_MATCHED`, `LIVENESS_FAILED`, or any other string (kept, never a crash).
    public var displayText: BiometricVerdict
    /// `result_criteria`: what the verdict rests on, `FACE_MATCH` or `LIVENESS` (seed 002 L2606); optional.
    public var resultCriteria: BiometricResultCriteria?

    enum CodingKeys: String, CodingKey {
        case displayText = "display_text"
        case resultCriteria = "result_criteria"
    }

    public init(displayText: BiometricVerdict, resultCriteria: BiometricResultCriteria? = nil) {
        self.displayText = displayText
        self.resultCriteria = resultCriteria
    }
}

/// `face_matcher_response` (seed 002 §6.2): `{ "score": 0.95 }`.
public struct FaceMatcherResponse: Codable, Equatable, Sendable {
    /// `score`: face similarity as a fraction 0…1 (1 = identical), shown ×100 as a percentage
    /// (seed 002 L2937). Decoding and encoding reject non-finite values and values outside 0…1.
    public var score: Double

    enum CodingKeys: String, CodingKey { case score }

    public init(score: Double) { self.score = score }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        score = try container.decode(Double.self, forKey: .score)
        guard score.isFinite, (0...1).contains(score) else {
            throw DecodingError.dataCorruptedError(forKey: .score, in: container,
                                                   debugDescription: "face match score must be a fraction in 0...1")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        guard score.isFinite, (0...1).contains(score) else {
            throw EncodingError.invalidValue(score, .init(codingPath: container.codingPath + [CodingKeys.score],
                                                          debugDescription: "face match score must be a fraction in 0...1"))
        }
        try container.encode(score, forKey: .score)
    }
}

/// `analyze_liveness_response` (seed 002 §6.2): `{ "video": { "liveness_result": {…}, "autocapture_result": {…} } }`.
public struct AnalyzeLivenessResponse: Codable, Equatable, Sendable {
    /// `video`: the analysis of the captured frame sequence.
    public var video: LivenessVideo

    public init(video: LivenessVideo) { self.video = video }
}

/// `analyze_liveness_response.video` (seed 002 §6.2; `liveness_result` nested under `video` as in
/// the iOS seed, not beside it as in the React Native sibling).
public struct LivenessVideo: Codable, Equatable, Sendable {
    /// `liveness_result`: the liveness score (required).
    public var livenessResult: LivenessResult
    /// `autocapture_result`: the best frame, chosen automatically; absent when no face was captured.
    public var autocaptureResult: AutocaptureResult?

    enum CodingKeys: String, CodingKey {
        case livenessResult = "liveness_result"
        case autocaptureResult = "autocapture_result"
    }

    public init(livenessResult: LivenessResult, autocaptureResult: AutocaptureResult? = nil) {
        self.livenessResult = livenessResult
        self.autocaptureResult = autocaptureResult
    }
}

/// `liveness_result` (seed 002 §6.2): `{ "score": 92 }`.
public struct LivenessResult: Codable, Equatable, Sendable {
    /// `score`: liveness as an integer percentage 0…100 (100 = certainly a live person), shown as
    /// `"92%"` (seed 002 L2949; a non-integer would hide the row there, so it is an `Int` here).
    /// Decoding and encoding reject values outside 0…100.
    public var score: Int

    enum CodingKeys: String, CodingKey { case score }

    public init(score: Int) { self.score = score }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        score = try container.decode(Int.self, forKey: .score)
        guard (0...100).contains(score) else {
            throw DecodingError.dataCorruptedError(forKey: .score, in: container,
                                                   debugDescription: "liveness score must be an integer in 0...100")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        guard (0...100).contains(score) else {
            throw EncodingError.invalidValue(score, .init(codingPath: container.codingPath + [CodingKeys.score],
                                                          debugDescription: "liveness score must be an integer in 0...100"))
        }
        try container.encode(score, forKey: .score)
    }
}

/// `autocapture_result` (seed 002 §6.2): `{ "selfie_image": "<base64>" }`.
public struct AutocaptureResult: Codable, Equatable, Sendable {
    /// `selfie_image`: standard base64 JPEG of the selected selfie frame.
    public var selfieImage: String

    enum CodingKeys: String, CodingKey { case selfieImage = "selfie_image" }

    public init(selfieImage: String) { self.selfieImage = selfieImage }
}

/// `document_detail` (seed 002 §6.2): `{ "document_info": { "portrait_image": …, "name": … } }`.
public struct SelfieDocumentDetail: Codable, Equatable, Sendable {
    /// `document_info`: the document reference of the comparison.
    public var documentInfo: SelfieDocumentInfo

    enum CodingKeys: String, CodingKey { case documentInfo = "document_info" }

    public init(documentInfo: SelfieDocumentInfo) { self.documentInfo = documentInfo }
}

/// `document_detail.document_info` (seed 002 §6.2, L2851–L2904).
public struct SelfieDocumentInfo: Codable, Equatable, Sendable {
    /// `portrait_image`: base64 portrait cropped from the confirmed document.
    public var portraitImage: String?
    /// `name`: the holder's name as `"<given names> <surname>"` (read by the seed's screen, L2856).
    public var name: String?

    enum CodingKeys: String, CodingKey {
        case portraitImage = "portrait_image"
        case name
    }

    public init(portraitImage: String? = nil, name: String? = nil) {
        self.portraitImage = portraitImage
        self.name = name
    }
}

/// `action_buttons` (seed 002 §6.3): server-driven buttons for each verdict.
public struct ActionButtons: Codable, Equatable, Sendable {
    /// `success_button`: shown when the verdict is `MATCHED` (typically one `continue-flow`).
    public var successButton: [ActionButton]
    /// `failure_button`: shown otherwise (e.g. Continue Anyway / Rescan Document / Recapture Selfie).
    public var failureButton: [ActionButton]

    enum CodingKeys: String, CodingKey {
        case successButton = "success_button"
        case failureButton = "failure_button"
    }

    public init(successButton: [ActionButton], failureButton: [ActionButton]) {
        self.successButton = successButton
        self.failureButton = failureButton
    }
}

/// One button (seed 002 §6.3): `{ "button_text": "Continue", "key": "continue-flow" }`.
public struct ActionButton: Codable, Equatable, Sendable {
    /// `button_text`: the label.
    public var buttonText: String
    /// `key`: the action key the app passes back to `setIDVSelfieConfirmation` unchanged.
    public var key: IDVActionKey

    enum CodingKeys: String, CodingKey {
        case buttonText = "button_text"
        case key
    }

    public init(buttonText: String, key: IDVActionKey) {
        self.buttonText = buttonText
        self.key = key
    }
}
