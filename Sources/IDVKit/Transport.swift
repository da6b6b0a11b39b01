import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Blocking JSON-over-HTTP(S) to `idvd`, used from the SDK's serial work queue. Every failure
/// becomes an ``IDVError`` with a clear code, never a hang: 1029 `timeout` after
/// ``RDNAConfiguration/requestTimeout``; 1028 `networkError` when the server cannot be reached or
/// its answer is unreadable; the server's own refusal otherwise.
final class Transport: @unchecked Sendable {
    // @unchecked: immutable after init; URLSession is thread-safe.
    let baseURL: URL
    let session: URLSession
    let timeout: TimeInterval

    init(baseURL: URL, timeout: TimeInterval) {
        self.baseURL = baseURL
        self.timeout = timeout
        let cfg = URLSessionConfiguration.ephemeral
        cfg.timeoutIntervalForRequest = timeout
        cfg.timeoutIntervalForResource = timeout * 4
        cfg.httpCookieAcceptPolicy = .never
        cfg.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: cfg)
    }

    deinit { session.invalidateAndCancel() }

    private final class Box: @unchecked Sendable {
        // @unchecked: written by the completion handler before it signals the semaphore `send` waits on, read after.
        var data: Data?
        var response: URLResponse?
        var error: Error?
    }

    /// Sends `body` (JSON) to `path`; returns the HTTP status and body.
    func send(_ method: String, _ path: String, body: Data?, token: String?) throws(IDVError) -> (status: Int, body: Data) {
        guard let url = URL(string: path, relativeTo: baseURL) else { throw IDVError(.invalidArgument, "bad path \(path)") }
        var req = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        req.httpMethod = method
        req.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            req.httpBody = body
            req.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let token { req.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: req) { d, r, e in
            box.data = d; box.response = r; box.error = e
            done.signal()
        }
        task.resume()
        // The session's own timeout fires first; this guard only protects against a stuck stack.
        if done.wait(timeout: .now() + timeout * 4 + 5) == .timedOut {
            task.cancel()
            throw IDVError(.timeout, "The server did not answer within \(Int(timeout)) s")
        }
        if let e = box.error {
            if let u = e as? URLError, u.code == .timedOut { throw IDVError(.timeout, "The server did not answer within \(Int(timeout)) s") }
            throw IDVError(.networkError, "The server could not be reached (\(Self.describe(e)))")
        }
        guard let http = box.response as? HTTPURLResponse else { throw IDVError(.networkError, "No HTTP answer") }
        return (http.statusCode, box.data ?? Data())
    }

    static func describe(_ e: Error) -> String {
        if let u = e as? URLError { return "URLError \(u.code.rawValue)" }
        return String(describing: type(of: e))
    }

    /// Sends and decodes a ``WireEnvelope``. A refusal comes back as the envelope (``WireEnvelope/isRefusal``).
    func envelope(_ method: String, _ path: String, body: Data?, token: String?) throws(IDVError) -> WireEnvelope {
        let (status, data) = try send(method, path, body: body, token: token)
        do {
            return try JSONDecoder().decode(WireEnvelope.self, from: data)
        } catch {
            throw IDVError(.networkError, "The server's answer (HTTP \(status)) is not an OpenIDV envelope")
        }
    }

    func encode<T: Encodable>(_ v: T) throws(IDVError) -> Data {
        do { return try JSONEncoder().encode(v) } catch { throw IDVError(.internalError, "could not encode the request") }
    }
}
