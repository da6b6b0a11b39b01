import Foundation
import IDVCore

// How flows read what a client sent and what they asked: an answer's payload decoded once as its
// challenge's answer type (IDVCore Answers.swift, shared with the SDK), never by string key.

/// The payload of `a` as `T`, or 1001 `malformedRequest` naming the field that is missing or of
/// the wrong type (``AnswerShapeError``).
public func answer<T: Decodable>(_ a: WireAnswer, as type: T.Type) throws -> T {
    do { return try a.payload.decodeAnswer(T.self) } catch {
        throw IDVError(.malformedRequest, error.reason)
    }
}

/// Whether the answer is `{"cancel": true}` (``CancelAnswer``: the `cancel` member read alone, so a
/// cancel is a cancel whatever else the payload holds); 1001 when `cancel` is not a boolean.
public func isCancel(_ a: WireAnswer) throws -> Bool {
    try answer(a, as: CancelAnswer.self).cancelled
}

extension PendingChallenge {
    /// The nonce of an LDA challenge's payload (``LDAChallengePayload``); nil for any other challenge.
    var nonce: String? { try? payload.decode(LDAChallengePayload.self).nonce }
}

extension FlowEnv {
    /// The payload of a fresh LDA challenge (`getDeviceSignature`, `getUserConsentForLDA`): a new nonce.
    func ldaChallenge() -> JSONValue {
        (try? JSONValue(encoding: LDAChallengePayload(nonce: nonce()))) ?? .emptyObject
    }
}
