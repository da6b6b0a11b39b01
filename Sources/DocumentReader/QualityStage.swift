import Foundation
import IDVEvidence

// Stage 2 of `DocumentReader.read`: the image quality of the MRZ band, measured where the MRZ was
// read (the page, or the band re-read from the source): sharpness, glare and resolution.

extension DocumentReading {
    /// Stage 2: "Image sharp enough", "No glare on MRZ" and "Resolution enough" with their figures
    /// (`mrzQuality`, `DocumentReaderOptions.minimumCapHeight`); not performed without an MRZ.
    mutating func checkImageQuality() {
        if let measured {
            let q = mrzQuality(measured.image, measured.reading)
            check(.imageSharp, q.sharp ? .passed : .failed, .sharpness(q.sharpness, threshold: MRZQuality.sharpnessThreshold))
            check(.noGlareOnMRZ, q.glare ? .failed : .passed, .saturatedFraction(q.saturatedFraction))
            let resOK = section.capHeightPixels >= options.minimumCapHeight
            check(.resolution, resOK ? .passed : .failed, .capHeight(section.capHeightPixels, minimum: options.minimumCapHeight))
            if !q.sharp { findings.append(.blurredMRZ) }
            if q.glare { findings.append(.glareOnMRZ) }
            if !resOK { findings.append(.smallMRZ) }
        } else {
            for id in [DocumentCheckID.imageSharp, .noGlareOnMRZ, .resolution] { check(id, .notPerformed, .noMRZ) }
        }
        lap(\.checks)
    }
}

/// Image-quality figures of the MRZ band.
struct MRZQuality {
    /// Glare: pixels ≥ 250 grey and ≥ 20 levels brighter than the paper (75th percentile of the band).
    /// Minimum sharpness (90th percentile of |∂I/∂x| at 12 px per cap height, over the ink–paper contrast).
    static let sharpnessThreshold = 0.22
    var sharpness: Double
    var saturatedFraction: Double
    var sharp: Bool { sharpness >= Self.sharpnessThreshold }
    var glare: Bool { saturatedFraction > 0.03 }
}

func mrzQuality(_ image: GreyImage, _ r: MRZReading) -> MRZQuality {
    var grads: [Double] = []
    var saturated = 0, total = 0
    let count = r.lines.first?.count ?? 0
    for g in r.geometry {
        let (dark, light) = OCRBClassifier.inkLevels(image, g, count: count)
        let contrast = max(light - dark, 1)
        // paper level: median of the band's brighter half; glare = saturated and well above it
        var band: [Double] = []
        for i in stride(from: 0, to: count, by: 2) {
            for bb in [-0.9, -0.3, 0.3, 0.9] {
                let (cx, cy) = g.centre(Double(i) + 0.5)
                band.append(image.sample(cx - bb * g.capHeight * g.dirY, cy + bb * g.capHeight * g.dirX))
            }
        }
        band.sort()
        let paper = band.isEmpty ? 255 : band[band.count * 3 / 4]
        let glareLevel = max(250, paper + 20)
        let step = g.capHeight / 12
        var b = -0.7 * g.capHeight
        while b <= 0.7 * g.capHeight {
            var prev: Double?
            var t = -0.5
            while t <= Double(count) - 0.5 {
                let (cx, cy) = g.centre(t)
                let v = image.sample(cx - b * g.dirY, cy + b * g.dirX)
                if v >= glareLevel { saturated += 1 }
                total += 1
                if let p = prev { grads.append(abs(v - p) / contrast) }
                prev = v
                t += step / g.pitch
            }
            b += step * 2
        }
    }
    grads.sort()
    let sharpness = grads.isEmpty ? 0 : grads[grads.count * 9 / 10]
    return MRZQuality(sharpness: sharpness, saturatedFraction: total > 0 ? Double(saturated) / Double(total) : 0)
}
