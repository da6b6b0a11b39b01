import Foundation
import IDVCore
import IDVEngine
import IDVRuntime

extension HTTPResponse {
    /// A 1100/1101 refusal: the envelope of its ``IDVError`` with `Retry-After: <seconds>` (RFC 9110 §10.2.3).
    public static func refusal(_ e: AnalysisRefusal, requestID: String) -> HTTPResponse {
        var r = refusal(e.error, requestID: requestID)
        r.headers["Retry-After"] = String(e.retryAfterSeconds)
        return r
    }
}
