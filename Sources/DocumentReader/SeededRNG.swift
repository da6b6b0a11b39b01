import FaceKit

/// The project's seeded generator (SplitMix64, defined in FaceKit beside the attack synthesis that
/// uses it too): specimens, augmentations and OCR-B training draw from it, so they are reproducible
/// bit for bit from a seed.
public typealias SeededRNG = SplitMix64
