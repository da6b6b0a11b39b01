import Foundation

/// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): a small, fast, seeded generator, so that attacks,
/// specimens, augmentations and classifier training are reproducible bit for bit from a seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [a, b), from the top 53 bits of one draw.
    public mutating func uniform(_ a: Double, _ b: Double) -> Double {
        a + (b - a) * Double(next() >> 11) * 0x1.0p-53
    }

    /// Standard normal (Box–Muller; two uniform draws per value).
    public mutating func gaussian() -> Double {
        let u1 = max(uniform(0, 1), 1e-300), u2 = uniform(0, 1)
        return (-2 * Foundation.log(u1)).squareRoot() * Foundation.cos(2 * Double.pi * u2)
    }
}
