import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

extension HTTPResponse {
    /// The refusal of any error a request's handling threw — the one mapping the chain's
    /// error-to-envelope stage, the chains' last resort and the analysis pool's admission use:
    /// - an ``IDVError``: its envelope, the HTTP status ``HTTPStatus/of(_:)``;
    /// - a ``ThrottledError`` (1110, 1111) or an ``AnalysisRefusal`` (1100, 1101): the same, with
    ///   `Retry-After: <seconds>` (RFC 9110 §10.2.3);
    /// - a ``StoreError/unavailable(_:_:)``: 503 1038 `storeUnavailable` with the `Retry-After` of
    ///   its reason (``StoreUnavailability/retryAfterSeconds``);
    /// - anything else: 1030 `internalError` (the caller logs its kind).
    public static func refusal(_ error: any Error, requestID: String) -> HTTPResponse {
        switch error {
        case let e as IDVError:
            return refusal(e, requestID: requestID)
        case let t as ThrottledError:
            return refusal(t.error, requestID: requestID, retryAfter: t.retryAfterSeconds)
        case let a as AnalysisRefusal:
            return refusal(a.error, requestID: requestID, retryAfter: a.retryAfterSeconds)
        case let StoreError.unavailable(reason, _):
            return refusal(IDVError(.storeUnavailable), requestID: requestID, retryAfter: reason.retryAfterSeconds)
        default:
            return refusal(IDVError(.internalError), requestID: requestID)
        }
    }

    static func refusal(_ error: IDVError, requestID: String, retryAfter seconds: Int) -> HTTPResponse {
        var r = refusal(error, requestID: requestID)
        r.headers["Retry-After"] = String(seconds)
        return r
    }

    /// Whether `error` is a refusal of the request as sent (answered with its own code) rather
    /// than a fault of the server (1030, logged).
    static func isRefusal(_ error: any Error) -> Bool {
        error is IDVError || error is ThrottledError || error is AnalysisRefusal
    }
}
