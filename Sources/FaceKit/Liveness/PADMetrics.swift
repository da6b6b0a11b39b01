import Foundation

/// ISO/IEC 30107-3 error rates with exact binomial (Clopper–Pearson) confidence intervals, as the
/// liveness bench and `idvd liveness calibrate` report them.
///
/// APCER (attack presentation classification error rate) is counted per PAI species: the share of
/// that species' attack presentations classified bona fide. BPCER (bona fide presentation
/// classification error rate): the share of bona fide presentations classified as attacks.
public struct PADErrorRate: Sendable, Hashable, Codable {
    /// Presentations classified wrongly.
    public var errors: Int
    /// Presentations of the kind.
    public var total: Int
    /// The rate `errors / total` (0 when there is none).
    public var rate: Double { total == 0 ? 0 : Double(errors) / Double(total) }
    /// The two-sided 95 % Clopper–Pearson interval of the rate (`ClopperPearson.interval`).
    public var interval95: ClosedRange<Double> { ClopperPearson.interval(errors: errors, total: total, confidence: 0.95) }

    public init(errors: Int, total: Int) {
        self.errors = errors
        self.total = total
    }

    /// "12.5 % (1/8) [0.3–52.7]": rate, counts and the 95 % interval, in percent.
    public var formatted: String {
        guard total > 0 else { return "n/a (0 presentations)" }
        let i = interval95
        return String(format: "%5.1f %% (%d/%d) [%.1f–%.1f]", 100 * rate, errors, total, 100 * i.lowerBound, 100 * i.upperBound)
    }
}

/// Exact (Clopper & Pearson 1934) confidence interval of a binomial proportion: the bounds are the
/// proportions at which observing `errors` or more (lower) / `errors` or fewer (upper) has
/// probability (1 − confidence) / 2. With 0 errors the lower bound is 0 and the upper bound is
/// 1 − ((1 − confidence) / 2)^(1/total) — e.g. 0 of 45 gives [0, 7.9 %] at 95 %. ISO/IEC 30107-3
/// reports error rates with such intervals because PAD test sets are small.
public enum ClopperPearson {
    /// The interval (0…1). `total` 0 gives 0…1; `errors` is clamped to 0…total.
    public static func interval(errors: Int, total: Int, confidence: Double = 0.95) -> ClosedRange<Double> {
        guard total > 0 else { return 0...1 }
        let k = min(max(0, errors), total)
        let alpha = 1 - min(max(confidence, 0.5), 0.999999)
        let lower = k == 0 ? 0 : solve { p in 1 - binomialCDF(k - 1, total, p) - alpha / 2 }   // P(X ≥ k) = α/2, increasing in p
        let upper = k == total ? 1 : solve { p in alpha / 2 - binomialCDF(k, total, p) }        // P(X ≤ k) = α/2, decreasing in p
        return lower...max(lower, upper)
    }

    /// P(X ≤ k) for X ~ Binomial(n, p), summed in log space (n up to millions).
    public static func binomialCDF(_ k: Int, _ n: Int, _ p: Double) -> Double {
        if k < 0 { return 0 }
        if k >= n { return 1 }
        if p <= 0 { return 1 }
        if p >= 1 { return 0 }
        let lp = log(p), lq = log1p(-p)
        let base = logGamma(Double(n) + 1)
        var terms: [Double] = []
        terms.reserveCapacity(k + 1)
        for i in 0...k {
            terms.append(base - logGamma(Double(i) + 1) - logGamma(Double(n - i) + 1) + Double(i) * lp + Double(n - i) * lq)
        }
        let top = terms.max() ?? 0
        return min(1, exp(top) * terms.reduce(0) { $0 + exp($1 - top) })
    }

    /// ln Γ(x) for x > 0 (Glibc's `lgamma`; the sign is always positive there).
    static func logGamma(_ x: Double) -> Double {
        let value: Double = lgamma(x)
        return value
    }

    /// The root in (0, 1) of an increasing function `f`, by bisection to 1e-12.
    static func solve(_ f: (Double) -> Double) -> Double {
        var lo = 0.0, hi = 1.0
        for _ in 0..<80 {
            let mid = (lo + hi) / 2
            if f(mid) < 0 { lo = mid } else { hi = mid }
        }
        return (lo + hi) / 2
    }
}
