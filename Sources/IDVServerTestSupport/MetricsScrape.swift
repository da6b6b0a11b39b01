import Foundation
import IDVTools

/// `GET /metrics` of a running `idvd` on loopback, read as figures.
public enum MetricsScrape {
    /// The Prometheus text exposition of `127.0.0.1:port/metrics` as `name{labels} → value`
    /// (comment lines skipped; a line whose last field is not a number is left out).
    public static func values(port: Int) throws -> [String: Double] {
        let r = try LoopbackHTTPClient(port: port).request("GET", "/metrics")
        var out: [String: Double] = [:]
        for line in String(decoding: r.body, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let sp = line.lastIndex(of: " "), let v = Double(line[line.index(after: sp)...]) else { continue }
            out[String(line[..<sp])] = v
        }
        return out
    }
}
