import Imaging

/// The project's seeded generator (SplitMix64, Imaging): specimens, augmentations and OCR-B
/// training draw from it, so they are reproducible bit for bit from a seed.
public typealias SeededRNG = SplitMix64
