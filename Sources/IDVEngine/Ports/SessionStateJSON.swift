import Foundation
import IDVCore

extension SessionFlowState {
    /// This state as the ``JSONValue`` its synthesized `Encodable` gives (``JSONValue/init(encoding:)``):
    /// the same keys (the property names of ``SessionFlowState``, ``FlowFrame`` and
    /// ``PendingChallenge``; ``IDVError`` and ``RequestStatus`` with their snake-case keys), a nil
    /// optional left out — written by hand, so sealing the state on every session write
    /// (IDVCrypto `SessionStateSealer`, with ``JSONText``) goes without `JSONEncoder`, which cost
    /// `POST /v1/sessions` about a twelfth of its CPU time. `SessionStateJSONTests` holds it equal to
    /// the synthesized encoding for every field set and unset.
    public var jsonValue: JSONValue {
        var o: [String: JSONValue] = ["stack": .array(stack.map(\.jsonValue))]
        if let c = challenge { o["challenge"] = c.jsonValue }
        return .object(o)
    }
}

extension FlowFrame {
    /// See ``SessionFlowState/jsonValue``.
    public var jsonValue: JSONValue {
        ["flow": .string(flow), "runID": .string(runID), "state": state]
    }
}

extension PendingChallenge {
    /// See ``SessionFlowState/jsonValue``.
    public var jsonValue: JSONValue {
        var o: [String: JSONValue] = [
            "challengeID": .string(challengeID), "name": .string(name), "mode": .integer(mode), "attemptsLeft": .integer(attemptsLeft),
            "payload": payload,
        ]
        if let w = workflow { o["workflow"] = .integer(w) }
        if let u = userID { o["userID"] = .string(u) }
        if let e = error {
            o["error"] = ["long_error_code": .integer(e.longErrorCode), "short_error_code": .integer(e.shortErrorCode),
                          "error_string": .string(e.errorString)]
        }
        if let s = status { o["status"] = ["status_code": .integer(s.statusCode), "status_message": .string(s.statusMessage)] }
        return .object(o)
    }
}
