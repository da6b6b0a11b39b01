import Foundation

/// Exact (Clopper–Pearson) confidence intervals for an error rate measured as `errors` of `trials`
/// (C. J. Clopper & E. S. Pearson, "The use of confidence or fiducial limits illustrated in the case
/// of the binomial", Biometrika 26(4), 1934): the bounds are quantiles of beta distributions,
/// `lower = B⁻¹(α/2; x, n − x + 1)`, `upper = B⁻¹(1 − α/2; x + 1, n − x)`, with 0 and 1 at the edges.
/// How the benchmarks state false accepts and false rejects (ISO/IEC 19795-1 §7.4 asks for intervals).
public struct BinomialInterval: Sendable, Equatable {
    public var errors: Int
    public var trials: Int
    /// The observed rate (0 when there were no trials).
    public var rate: Double { trials == 0 ? 0 : Double(errors) / Double(trials) }
    public var lower: Double
    public var upper: Double
    /// The coverage, e.g. 0.95.
    public var confidence: Double

    /// The interval of `errors` in `trials` (0 ≤ errors ≤ trials) at `confidence` (in (0, 1)).
    public init(errors: Int, trials: Int, confidence: Double = 0.95) {
        precondition(trials >= 0 && (0...max(0, trials)).contains(errors) && confidence > 0 && confidence < 1)
        self.errors = errors
        self.trials = trials
        self.confidence = confidence
        let alpha = 1 - confidence
        guard trials > 0 else { lower = 0; upper = 1; return }
        let x = Double(errors), n = Double(trials)
        lower = errors == 0 ? 0 : Self.betaQuantile(alpha / 2, x, n - x + 1)
        upper = errors == trials ? 1 : Self.betaQuantile(1 - alpha / 2, x + 1, n - x)
    }

    /// "1.2 % (3/250; 95 % CI 0.25–3.5 %)".
    public var description: String {
        func pct(_ v: Double) -> String {
            let p = 100 * v
            return p == 0 ? "0" : p < 0.1 ? String(format: "%.3f", p) : p < 10 ? String(format: "%.2f", p) : String(format: "%.1f", p)
        }
        return "\(pct(rate)) % (\(errors)/\(trials); \(Int((confidence * 100).rounded())) % CI \(pct(lower))–\(pct(upper)) %)"
    }

    /// The `p` quantile of Beta(a, b), by bisection on the regularised incomplete beta function.
    static func betaQuantile(_ p: Double, _ a: Double, _ b: Double) -> Double {
        var lo = 0.0, hi = 1.0
        for _ in 0..<200 {
            let mid = (lo + hi) / 2
            if regularizedBeta(mid, a, b) < p { lo = mid } else { hi = mid }
            if hi - lo < 1e-12 { break }
        }
        return (lo + hi) / 2
    }

    /// I_x(a, b), the regularised incomplete beta function (continued fraction, modified Lentz;
    /// the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where it converges faster).
    static func regularizedBeta(_ x: Double, _ a: Double, _ b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let lnBeta: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let lnFront: Double = lnBeta + a * log(x) + b * log(1 - x)
        if x < (a + 1) / (a + b + 2) { return exp(lnFront) * continuedFraction(x, a, b) / a }
        return 1 - exp(lnFront) * continuedFraction(1 - x, b, a) / b
    }

    static func continuedFraction(_ x: Double, _ a: Double, _ b: Double) -> Double {
        let tiny = 1e-300
        var c = 1.0, d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        for m in 1...500 {
            let m = Double(m)
            let even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
            d = 1 + even * d; if abs(d) < tiny { d = tiny }
            c = 1 + even / c; if abs(c) < tiny { c = tiny }
            d = 1 / d; h *= d * c
            let odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            d = 1 + odd * d; if abs(d) < tiny { d = tiny }
            c = 1 + odd / c; if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-14 { break }
        }
        return h
    }
}
