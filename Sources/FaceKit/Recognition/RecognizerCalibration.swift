import Foundation

extension FaceMatchCalibration {
    /// The calibrated cosine distances of `FaceRecognizer` (face-reidentification-retail-0095
    /// aligned by the 5 points of dlib's 68; version-3 templates, portraits), from `idvd bench face`
    /// on LFW (deep-funnelled, `../shared/testdata/lfw`, 3 811 images of 2 086 people): fitted at
    /// each target FMR on every cross-identity comparison of the **fit** people of the fixed split
    /// `bench/lfw-split.txt` (1 241 people, `pairs.txt` folds 1–3), and measured on its **eval**
    /// people (845 people, folds 4–5), never used for fitting. Each threshold is the fitted value
    /// rounded down to 4 decimals. bench/face.md has the run.
    ///
    /// - `imageToImage`: one image against the next image of the same person (942 genuine) or any
    ///   image of another person (2 218 544 impostor comparisons).
    /// - `fusedToImage`: one image against the fused descriptor (mean of the unit descriptors) of
    ///   the 3 images following it (461 genuine) or of 3 images of another person (766 330
    ///   impostor). A selfie's template fuses up to `LivenessConfiguration.templateFrames` frames of
    ///   one 3 s capture, far less diverse than 3 independent photos; the fused-to-image thresholds
    ///   lie below the image-to-image ones, so its FMR stays at or below the target whichever of the
    ///   two it resembles (docs/LIVENESS.md, "Face template and matching").
    /// - `fusedToFused`: the fusion of 3 images against that of the 3 after them (people with ≥ 6
    ///   images; 238 genuine) or against another person's (27 375 impostor): too few impostors to
    ///   resolve FMR 0.01 % on the eval people (none was seen).
    ///
    /// The fit people include a look-alike cluster (two Chinese leaders photographed 15 and 12
    /// times, 0.41–0.45 apart) that sets the 0.01 % points; the eval people's FMR at them is below
    /// the target (0.0037 % image-to-image, 0.0005 % fused-to-image).
    public static let recognizerTable: [CalibratedThreshold] = [
        CalibratedThreshold(model: .faceReidentification0095, kind: .imageToImage, operatingPoint: .fmr1in1000, distance: 0.6568,
                            measuredFMR: 1648.0 / 2_218_544, impostorComparisons: 2_218_544, measuredFNMR: 20.0 / 942, genuineComparisons: 942),
        CalibratedThreshold(model: .faceReidentification0095, kind: .imageToImage, operatingPoint: .fmr1in10000, distance: 0.5648,
                            measuredFMR: 82.0 / 2_218_544, impostorComparisons: 2_218_544, measuredFNMR: 42.0 / 942, genuineComparisons: 942),
        CalibratedThreshold(model: .faceReidentification0095, kind: .fusedToImage, operatingPoint: .fmr1in1000, distance: 0.6403,
                            measuredFMR: 447.0 / 766_330, impostorComparisons: 766_330, measuredFNMR: 2.0 / 461, genuineComparisons: 461),
        CalibratedThreshold(model: .faceReidentification0095, kind: .fusedToImage, operatingPoint: .fmr1in10000, distance: 0.5173,
                            measuredFMR: 4.0 / 766_330, impostorComparisons: 766_330, measuredFNMR: 9.0 / 461, genuineComparisons: 461),
        // Fitted on 116 005 impostor comparisons of the fit people; the eval people hold 27 375.
        CalibratedThreshold(model: .faceReidentification0095, kind: .fusedToFused, operatingPoint: .fmr1in1000, distance: 0.5634,
                            measuredFMR: 0, impostorComparisons: 27_375, measuredFNMR: 0, genuineComparisons: 238),
        CalibratedThreshold(model: .faceReidentification0095, kind: .fusedToFused, operatingPoint: .fmr1in10000, distance: 0.3864,
                            measuredFMR: 0, impostorComparisons: 27_375, measuredFNMR: 2.0 / 238, genuineComparisons: 238),
    ]

    /// Centre and scale (cosine distance) of the recogniser's display similarity
    /// (`FaceMatcher.similarity`): the logistic curve is 0.5 at 0.65 (about the image-to-image line
    /// at FMR 0.1 %), 0.99 at the LFW genuine median (0.30) and 0.01 at the impostor median (1.0).
    public static let recognizerSimilarity = (centre: 0.65, scale: 0.08)
}
