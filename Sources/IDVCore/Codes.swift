import Foundation

/// Every error code OpenIDV uses, in one table. `longErrorCode` values 0, 146 and 240 are the
/// seeds'; 1001 and above are ours. `shortErrorCode` is the code's ``IDVErrorCategory``.
///
/// | code | name | meaning |
/// |---|---|---|
/// | 0 | `none` | accepted / no error |
/// | 146 | `idvCancelledByUser` | IDV identity verification cancelled by user (pre-login flows) |
/// | 240 | `userCancelled` | user cancelled (post-login flows) |
/// | 1001 | `malformedRequest` | the body is not valid JSON or lacks a required field |
/// | 1002 | `wrongChallenge` | the answer names a challenge other than the current one |
/// | 1003 | `sessionExpired` | the session passed its idle or absolute expiry |
/// | 1004 | `unauthenticated` | no session, or an unknown or revoked token |
/// | 1005 | `replayedAnswer` | this answer (challenge id) was already consumed |
/// | 1006 | `payloadTooLarge` | the body exceeds the route's limit |
/// | 1007 | `notFound` | unknown route or resource |
/// | 1008 | `invalidImage` | bytes are not a decodable JPEG/PNG, or are truncated |
/// | 1009 | `imageTooLarge` | the image exceeds the pixel limit |
/// | 1010 | `attemptsExhausted` | no attempts left for this step; the flow ended |
/// | 1011 | `userLocked` | the user is locked after too many failed attempts |
/// | 1012 | `invalidActivationCode` | wrong activation code |
/// | 1013 | `activationCodeExpired` | the activation code expired or was used |
/// | 1014 | `invalidPassword` | wrong password |
/// | 1015 | `passwordPolicy` | the new password does not meet the policy |
/// | 1016 | `userNotFound` | no such user |
/// | 1017 | `templateNotFound` | the user has no biometric template |
/// | 1018 | `templateExists` | the user already has a biometric template |
/// | 1019 | `flowExpired` | the IDV flow passed its timeout |
/// | 1020 | `actionNotOffered` | an action key the server did not offer |
/// | 1021 | `noActiveFlow` | the call needs a flow in progress and there is none |
/// | 1022 | `flowInProgress` | another flow is already in progress on this session |
/// | 1023 | `deviceSignatureInvalid` | the LDA signature does not verify |
/// | 1024 | `methodNotAllowed` | the route exists but not for this HTTP method |
/// | 1025 | `invalidArgument` | a value is out of range (unknown workflow, mode, empty user name) |
/// | 1026 | `userExists` | the user name is taken |
/// | 1027 | `notInitialized` | the SDK was used before `initialize` completed |
/// | 1028 | `networkError` | the server could not be reached |
/// | 1029 | `timeout` | the server did not answer in time |
/// | 1030 | `internalError` | the server failed; nothing was changed |
/// | 1031 | `noDocumentFound` | no machine-readable zone was found in the images: photograph the whole page, flat and in focus |
/// | 1032 | `noFaceFound` | no face was found where one was required |
/// | 1033 | `workflowUnavailable` | the user's activation needs an IDV workflow this server does not offer |
/// | 1034 | `callbackNotImplemented` | the app does not implement a callback the running flow needs (IDVKit) |
/// | 1038 | `storeUnavailable` | the server cannot reach its database for now (unreachable, shutting down, out of connections, a conflict between writers): send the same request again after `Retry-After` seconds (an answer that did commit before the connection broke is then refused as replayed, 1005, never applied twice) |
/// | 1039 | `unsupportedMediaType` | the request body is not JSON by its `Content-Type` (send `Content-Type: application/json`, or no `Content-Type`) |
/// | 1040 | `linkInvalid` | the verification link is unknown, expired or already used |
/// | 1050 | `chipDataUnreadable` | the eMRTD chip files sent are not usable (EF.SOD is not a security object; ICAO 9303-10 §4.6.2) |
/// | 1060 | `selfieTooDark` | the selfie capture is too dark to decide on: take it again |
/// | 1061 | `selfieTooBright` | the selfie capture is over-exposed: take it again |
/// | 1062 | `selfieBlurred` | the selfie capture is blurred: take it again |
/// | 1063 | `selfieFaceTooSmall` | the face is too small in the selfie capture: take it again |
/// | 1064 | `selfieLowContrast` | the selfie capture has too little contrast: take it again |
/// | 1065 | `selfieFaceNotFrontal` | the face in the selfie capture is turned away: take it again |
/// | 1066 | `selfieRetake` | the liveness check was unsure about the capture (not an attack): take it again, no attempt used; when the upload request asked again carries a `liveness_challenge` (the capture sent on to an active challenge) people read ``IDVErrorCode/selfieRetakeChallengeMessage`` instead (``IDVError/worded(forAsk:)``) |
/// | 1070 | `presenceRequired` | the selfie must be taken while the screen flashes the server's colours (`idv.presence_fallback = refuse`): no other way is offered |
/// | 1071 | `presenceRetake` | the screen's colours were seen on the face, but too faintly to tell them from chance (bright surroundings, the phone held far): take it again under a new sequence, no attempt used |
/// | 1080 | `documentGlare` | no machine-readable zone could be read and glare covers a band of the page: take it again |
/// | 1100 | `analysisBusy` | the server's analysis pool (or its memory budget) is full: send the same upload again after `Retry-After` seconds |
/// | 1101 | `analysisInProgress` | this session or user already has an analysis running or queued: wait for its answer, then retry |
/// | 1102 | `uploadTooCostly` | the upload's images hold more pixels (summed over the request) or need more memory than one analysis may use |
/// | 1130 | `verificationUnderReview` | the verification was sent to human review; the decision follows server to server |
/// | 1131 | `clientUnauthenticated` | relying-party API: no, unknown or revoked client credentials |
/// | 1132 | `scopeForbidden` | relying-party API: the client's scopes do not allow this call |
/// | 1133 | `clientRateLimited` | relying-party API: the client sent more requests than its rate allows; retry later |
/// | 1134 | `invalidCursor` | relying-party API: the pagination cursor or a time filter is not valid |
/// | 1135 | `reviewAlreadyDecided` | the review case was already decided |
/// | 1140 | `webhookURLRefused` | a webhook endpoint URL is not absolute https (plain http only to loopback, or with `webhooks.allow_http`) |
/// | 1141 | `webhookEndpointNotFound` | no webhook endpoint has that id |
/// | 1142 | `webhookEventNotFound` | no webhook event has that id (redeliver) |
/// | 1110 | `sessionRateLimited` | too many new sessions from this client address or device: retry after `Retry-After` seconds (HTTP 429) |
/// | 1111 | `authThrottled` | too many failed passwords or activation codes from this client (for this user, or across users): retry after `Retry-After` seconds (HTTP 429) |
/// | 1112 | `activationRunsExhausted` | the activation code has started as many identity-verification runs as it allows: ask for a new code |
/// | 1120 | `deviceNotFound` | the `device_id` a session start names is not registered (register it again: `POST /v1/devices`) |
public enum IDVErrorCode: Int, CaseIterable, Sendable, Codable {
    case none = 0
    case idvCancelledByUser = 146
    case userCancelled = 240
    case malformedRequest = 1001
    case wrongChallenge = 1002
    case sessionExpired = 1003
    case unauthenticated = 1004
    case replayedAnswer = 1005
    case payloadTooLarge = 1006
    case notFound = 1007
    case invalidImage = 1008
    case imageTooLarge = 1009
    case attemptsExhausted = 1010
    case userLocked = 1011
    case invalidActivationCode = 1012
    case activationCodeExpired = 1013
    case invalidPassword = 1014
    case passwordPolicy = 1015
    case userNotFound = 1016
    case templateNotFound = 1017
    case templateExists = 1018
    case flowExpired = 1019
    case actionNotOffered = 1020
    case noActiveFlow = 1021
    case flowInProgress = 1022
    case deviceSignatureInvalid = 1023
    case methodNotAllowed = 1024
    case invalidArgument = 1025
    case userExists = 1026
    case notInitialized = 1027
    case networkError = 1028
    case timeout = 1029
    case internalError = 1030
    case noDocumentFound = 1031
    case noFaceFound = 1032
    case workflowUnavailable = 1033
    case callbackNotImplemented = 1034
    case storeUnavailable = 1038
    case unsupportedMediaType = 1039
    case linkInvalid = 1040
    case chipDataUnreadable = 1050
    case selfieTooDark = 1060
    case selfieTooBright = 1061
    case selfieBlurred = 1062
    case selfieFaceTooSmall = 1063
    case selfieLowContrast = 1064
    case selfieFaceNotFrontal = 1065
    case selfieRetake = 1066
    case presenceRequired = 1070
    case presenceRetake = 1071
    case documentGlare = 1080
    case analysisBusy = 1100
    case analysisInProgress = 1101
    case uploadTooCostly = 1102
    case verificationUnderReview = 1130
    case clientUnauthenticated = 1131
    case scopeForbidden = 1132
    case clientRateLimited = 1133
    case invalidCursor = 1134
    case reviewAlreadyDecided = 1135
    case webhookURLRefused = 1140
    case webhookEndpointNotFound = 1141
    case webhookEventNotFound = 1142
    case sessionRateLimited = 1110
    case authThrottled = 1111
    case activationRunsExhausted = 1112
    case deviceNotFound = 1120

    /// The default human-readable message for the code.
    public var message: String {
        switch self {
        case .none: return "Success"
        case .idvCancelledByUser: return "IDV identity verification canceled by user"
        case .userCancelled: return "User Cancelled"
        case .malformedRequest: return "The request is malformed"
        case .wrongChallenge: return "The answer does not match the current challenge"
        case .sessionExpired: return "The session has expired"
        case .unauthenticated: return "Not authenticated"
        case .replayedAnswer: return "This answer was already submitted"
        case .payloadTooLarge: return "The request body is too large"
        case .notFound: return "Not found"
        case .invalidImage: return "The image could not be decoded"
        case .imageTooLarge: return "The image has too many pixels"
        case .attemptsExhausted: return "No attempts left"
        case .userLocked: return "The user is locked"
        case .invalidActivationCode: return "The activation code is not valid"
        case .activationCodeExpired: return "The activation code has expired"
        case .invalidPassword: return "The password is not correct"
        case .passwordPolicy: return "The password does not meet the policy"
        case .userNotFound: return "The user does not exist"
        case .templateNotFound: return "No biometric template exists for the user"
        case .templateExists: return "A biometric template already exists for the user"
        case .flowExpired: return "The identity verification flow has expired"
        case .actionNotOffered: return "That action was not offered"
        case .noActiveFlow: return "No flow is in progress"
        case .flowInProgress: return "Another flow is in progress"
        case .deviceSignatureInvalid: return "The device signature is not valid"
        case .methodNotAllowed: return "Method not allowed"
        case .invalidArgument: return "An argument is out of range"
        case .userExists: return "The user already exists"
        case .notInitialized: return "The SDK is not initialized"
        case .networkError: return "The server could not be reached"
        case .timeout: return "The server did not answer in time"
        case .internalError: return "Internal server error"
        case .noDocumentFound: return "No machine-readable zone was found: photograph the whole page, flat and in focus, and take it again"
        case .noFaceFound: return "No face was found"
        case .workflowUnavailable: return "The identity verification workflow is not available"
        case .callbackNotImplemented: return "The app does not implement a callback the flow needs"
        case .storeUnavailable: return "The service is briefly unavailable: try again in a moment"
        case .unsupportedMediaType: return "The request body must be JSON (Content-Type: application/json)"
        case .linkInvalid: return "The verification link is not valid: it is unknown, has expired or was already used"
        case .chipDataUnreadable: return "The document's chip data could not be read"
        case .selfieTooDark: return "The selfie is too dark to check: move to a brighter place and take it again"
        case .selfieTooBright: return "The selfie is too bright to check: move out of direct light and take it again"
        case .selfieBlurred: return "The selfie is blurred: hold the phone still and take it again"
        case .selfieFaceTooSmall: return "Your face is too small in the selfie: hold the phone closer and take it again"
        case .selfieLowContrast: return "The selfie has too little contrast to check: face the light and take it again"
        case .selfieFaceNotFrontal: return "Your face is turned away in the selfie: look straight at the camera and take it again"
        case .selfieRetake: return "We could not check the selfie well enough: hold the phone at eye level in even light, keep your face in the frame, look at the camera, blink and turn your head a little, and take it again"
        case .presenceRequired: return "This check needs your screen to flash colours while the front camera records: take the selfie on a phone or computer whose screen faces you"
        case .presenceRetake: return "We could not see your screen's colours on your face clearly: move away from bright light or a window, hold the phone a little closer, and take it again"
        case .documentGlare: return "Glare hides the machine-readable zone: tilt the document away from the light and take it again"
        case .analysisBusy: return "The server is busy analysing other uploads: send the same upload again in a moment"
        case .analysisInProgress: return "An upload of yours is still being analysed: wait for its answer, then try again"
        case .uploadTooCostly: return "The upload's images are too large to analyse: send fewer or smaller images"
        case .verificationUnderReview: return "Your verification is being reviewed; you will be told the result"
        case .clientUnauthenticated: return "The API client credentials are missing, unknown or revoked"
        case .scopeForbidden: return "The API client's scopes do not allow this call"
        case .clientRateLimited: return "Too many requests from this API client; retry later"
        case .invalidCursor: return "The pagination cursor or time filter is not valid"
        case .reviewAlreadyDecided: return "The review case was already decided"
        case .webhookURLRefused: return "The webhook URL must be absolute https (plain http only to a loopback address, or with webhooks.allow_http)"
        case .webhookEndpointNotFound: return "No webhook endpoint has that id"
        case .webhookEventNotFound: return "No webhook event has that id"
        case .sessionRateLimited: return "Too many new sessions from this device or network: wait a moment and try again"
        case .authThrottled: return "Too many failed attempts from this device or network: wait a moment and try again"
        case .activationRunsExhausted: return "This activation code has no identity-verification attempts left: ask for a new code"
        case .deviceNotFound: return "The device is not registered on this server"
        }
    }

    /// The sentence for a 1066 (`selfieRetake`) whose upload request carries a `liveness_challenge`:
    /// the policy sent the capture on to an active challenge (after an unsure capture, or at once
    /// when a capture's texture is not conclusive; under active liveness every retake carries a fresh
    /// challenge too), so the person is told to follow the movements, not only to take it again. The
    /// code and the wire stay 1066 with ``message``; the edge that shows the sentence chooses this one
    /// from the ask's payload (``IDVError/worded(forAsk:)``).
    public static let selfieRetakeChallengeMessage =
        "One more check: keep your face in the frame and follow the movements shown on the screen"

    /// The category reported as `shortErrorCode`.
    public var category: IDVErrorCategory {
        switch self {
        case .none: return .none
        case .idvCancelledByUser, .userCancelled: return .cancelled
        case .malformedRequest, .unsupportedMediaType, .payloadTooLarge, .notFound, .methodNotAllowed, .invalidArgument, .clientRateLimited,
             .invalidCursor, .webhookURLRefused, .webhookEndpointNotFound, .webhookEventNotFound, .deviceNotFound: return .request
        case .sessionExpired, .unauthenticated, .userLocked, .invalidActivationCode, .activationCodeExpired,
             .invalidPassword, .passwordPolicy, .userNotFound, .userExists, .deviceSignatureInvalid, .linkInvalid,
             .clientUnauthenticated, .scopeForbidden, .authThrottled, .activationRunsExhausted: return .authentication
        case .sessionRateLimited: return .request
        case .invalidImage, .imageTooLarge, .noDocumentFound, .noFaceFound, .chipDataUnreadable, .selfieTooDark, .selfieTooBright, .selfieBlurred,
             .selfieFaceTooSmall, .selfieLowContrast, .selfieFaceNotFrontal, .selfieRetake, .presenceRequired, .presenceRetake, .documentGlare: return .media
        case .wrongChallenge, .replayedAnswer, .attemptsExhausted, .templateNotFound, .templateExists,
             .flowExpired, .actionNotOffered, .noActiveFlow, .flowInProgress, .workflowUnavailable, .verificationUnderReview,
             .reviewAlreadyDecided: return .flow
        case .notInitialized, .networkError, .timeout, .callbackNotImplemented: return .client
        case .internalError, .storeUnavailable, .analysisBusy, .analysisInProgress: return .server
        case .uploadTooCostly: return .media
        }
    }
}

/// The `shortErrorCode` of an ``IDVError``: which family a `longErrorCode` belongs to.
public enum IDVErrorCategory: Int, Sendable, Codable {
    case none = 0, cancelled = 1, request = 2, authentication = 3, media = 4, flow = 5, client = 6, server = 7
}

/// The seeds' `RDNAError`: the synchronous answer of every API call and the error part of every
/// callback. `longErrorCode == 0` means accepted / no error.
public struct IDVError: Codable, Equatable, Sendable, Error, CustomStringConvertible {
    public var longErrorCode: Int
    public var shortErrorCode: Int
    public var errorString: String

    enum CodingKeys: String, CodingKey {
        case longErrorCode = "long_error_code", shortErrorCode = "short_error_code", errorString = "error_string"
    }

    public init(longErrorCode: Int, shortErrorCode: Int, errorString: String) {
        self.longErrorCode = longErrorCode
        self.shortErrorCode = shortErrorCode
        self.errorString = errorString
    }

    /// An error for a named code, with its default message unless `message` is given.
    public init(_ code: IDVErrorCode, _ message: String? = nil) {
        self.init(longErrorCode: code.rawValue, shortErrorCode: code.category.rawValue,
                  errorString: message ?? code.message)
    }

    /// No error (code 0).
    public static let none = IDVError(.none)

    /// The named code, or nil for a code outside the table.
    public var code: IDVErrorCode? { IDVErrorCode(rawValue: longErrorCode) }
    public var isSuccess: Bool { longErrorCode == 0 }
    public var description: String { "\(errorString) (\(longErrorCode))" }
}

extension IDVError {
    /// This error worded for the ask it came back with (`payload`: the payload of the challenge asked
    /// again): a 1066 (`selfieRetake`) whose payload carries a `liveness_challenge` object reads
    /// ``IDVErrorCode/selfieRetakeChallengeMessage``; every other error, and a 1066 without a
    /// challenge, is returned unchanged. Code and category are never changed.
    public func worded(forAsk payload: JSONValue) -> IDVError {
        guard code == .selfieRetake, case .object? = payload["liveness_challenge"] else { return self }
        return IDVError(longErrorCode: longErrorCode, shortErrorCode: shortErrorCode, errorString: IDVErrorCode.selfieRetakeChallengeMessage)
    }
}

/// The seeds' `RDNARequestStatus`: the back-end's verdict on a request. Success is 100 (or 0);
/// 600 means "no biometric template"; 400 unable to process; 500 failed.
public struct RequestStatus: Codable, Equatable, Sendable {
    public var statusCode: Int
    public var statusMessage: String

    enum CodingKeys: String, CodingKey { case statusCode = "status_code", statusMessage = "status_message" }

    public init(statusCode: Int, statusMessage: String) {
        self.statusCode = statusCode
        self.statusMessage = statusMessage
    }

    public static let success = 100
    public static let noTemplate = 600
    public static let unableToProcess = 400
    public static let failed = 500

    /// Seed 000 §3.5: success is status 100 or 0.
    public var isSuccess: Bool { statusCode == 100 || statusCode == 0 }
}
