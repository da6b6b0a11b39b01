import Foundation
import Imaging

// The selfie's face template and its comparison with a reference: which frames are embedded and
// fused, the identity-consistency distance, the reference's template (a portrait or a stored
// template of any version), and the dlib probe a version-1/2 stored template is compared with.

extension SelfieAnalyzer {
    /// What the capture's embeddings give (`analyze` copies it into the report).
    struct CaptureEmbeddings {
        var bestJPEG: Data?
        /// The recogniser's descriptor of the best frame (unit length).
        var bestEmbedding: [Float]?
        /// The capture's version-3 template: the embedded template frames' descriptors fused with
        /// their quality weights.
        var template: FaceTemplate?
        var templateFrames: [Int] = []
        var templateWeights: [Double] = []
        /// Largest cosine distance between an embedded frame and the best frame.
        var identityDistance: Double?
    }

    /// The recogniser: the one given at init, else the shared bundled one.
    func activeRecognizer() throws -> FaceRecognizer { try recognizer ?? FaceRecognizer.shared() }

    /// Embeds the template frames (`templatePicks`) and the evenly spread identity samples not
    /// among them with the recogniser (`FaceRecognizer`, aligned by the 5 points from each frame's
    /// 68 landmarks, which tracking measured already), fuses the template frames' descriptors
    /// with `FaceTemplate.qualityWeight` and measures identity consistency against the best frame.
    /// Encodes the best frame's JPEG on the way (it is decoded here anyway).
    func captureEmbeddings(_ observations: [Observation], frames: [Data], best: Observation,
                           times: inout SelfieStageTimes) throws -> CaptureEmbeddings {
        let config = configuration
        let recognizer = try activeRecognizer()
        let tracked = observations.filter { $0.face != nil }
        let picks = templatePicks(observations, best: best)
        var identityPicks: [Int] = []
        if config.identitySamples > 0, tracked.count > 1 {
            let step = Double(tracked.count - 1) / Double(max(1, config.identitySamples - 1))
            identityPicks = Set((0..<config.identitySamples).map { tracked[min(tracked.count - 1, Int((Double($0) * step).rounded()))].summary.index })
                .subtracting(picks).sorted()
        }
        var out = CaptureEmbeddings()
        var descriptors: [Int: [Float]] = [:]
        for index in picks + identityPicks {
            guard let face = observations[index].face, let points = AlignmentPoints(landmarks68: face.landmarks68) else { continue }
            let tDecode = Self.cpuNow()
            let image = try decode(frames[index], index: index)
            let tEmbed = Self.cpuNow()
            times.decode += tEmbed - tDecode
            descriptors[index] = try recognizer.embedding(in: image, points: points)
            times.embed += Self.cpuNow() - tEmbed
            if index == best.summary.index {
                let tJPEG = Self.cpuNow()
                out.bestJPEG = try image.jpegData(quality: config.bestFrameJPEGQuality)
                times.encode += Self.cpuNow() - tJPEG
            }
        }
        out.bestEmbedding = descriptors[best.summary.index]
        let fused = picks.filter { descriptors[$0] != nil }
        let bestSharpness = fused.compactMap { observations[$0].summary.sharpness }.max() ?? 0
        out.templateFrames = fused
        out.templateWeights = fused.map {
            FaceTemplate.qualityWeight(sharpness: observations[$0].summary.sharpness, bestSharpness: bestSharpness, pose: observations[$0].summary.pose)
        }
        out.template = try? FaceTemplate.fused(fused.compactMap { descriptors[$0] }, weights: out.templateWeights, model: recognizer.model)
        if let bestEmbedding = out.bestEmbedding {
            for (index, d) in descriptors where index != best.summary.index {
                let distance = (try? recognizer.model.metric.distance(d, bestEmbedding)) ?? .infinity
                out.identityDistance = max(out.identityDistance ?? 0, distance)
            }
        }
        return out
    }

    /// Frames whose descriptors are fused into the capture's template, best first: the best frame,
    /// then, by the best frame's quality measure (`frameQuality`), every eyes-open frame whose
    /// quality is at least `templateQualityFloor` × the best frame's and which lies at least
    /// `templateFrameSpacing` frames from every frame already picked (neighbouring frames are near
    /// copies), up to `templateFrames`. A steady, sharp capture fuses up to `templateFrames`
    /// frames; a capture with blur or turns fuses only its good ones.
    func templatePicks(_ observations: [Observation], best: Observation) -> [Int] {
        let config = configuration
        let tracked = observations.filter { $0.face != nil }
        let maxSharp = tracked.compactMap(\.summary.sharpness).max() ?? 0
        let openLevel = LivenessCues.median(tracked.compactMap(\.summary.eyeAspectRatio))
        let bestQuality = frameQuality(best, maxSharp: maxSharp, openLevel: openLevel)
        let ranked = tracked.filter { o in
            openLevel <= 0 || (o.summary.eyeAspectRatio ?? 0) >= 0.85 * openLevel
        }.map { ($0, frameQuality($0, maxSharp: maxSharp, openLevel: openLevel)) }
            .filter { $0.1 >= config.templateQualityFloor * bestQuality }
            .sorted { $0.1 > $1.1 }
        var picks = [best.summary.index]
        for (o, _) in ranked where picks.count < config.templateFrames {
            let i = o.summary.index
            if picks.allSatisfy({ abs($0 - i) >= config.templateFrameSpacing }) { picks.append(i) }
        }
        return picks
    }

    /// Liveness, then the 1:1 comparison of the capture with `reference`: evidence only (the
    /// verdict is the server's policy's, IDVEngine `WorkflowPolicy`).
    ///
    /// The capture's version-3 template (`LivenessReport.template`, the recogniser's descriptors of
    /// its good frames fused) is compared with a portrait's or a version-3 template's descriptor in
    /// cosine distance. A version-1 or -2 stored template (dlib's descriptor) is compared with a
    /// dlib probe made from the same capture (`legacyProbe`): it still verifies, in dlib's units,
    /// until the person's next capture replaces it.
    ///
    /// - Returns: the liveness report, the distance, its model and the comparison's kind (nil
    ///   without a face in the frames).
    /// - Throws: `LivenessError.invalidReference`, `.referenceHasNoFace`, `.invalidTemplate` (checked
    ///   before the frames), and everything `analyze` throws.
    public func verify(frames: [Data], against reference: SelfieReference, challenge: ActiveChallenge? = nil,
                       now: Date = Date()) throws -> SelfieComparison {
        let referenceTemplate = try template(of: reference)
        let report = try analyze(frames: frames, challenge: challenge, now: now)
        var c = SelfieComparison(faceMatchScore: 0, distance: nil, liveness: report)
        let probe: FaceTemplate?
        if referenceTemplate.model == .dlibResNetV1 {
            let t0 = Self.cpuNow()
            probe = try legacyProbe(report, frames: frames)
            c.legacyProbeSeconds = Self.cpuNow() - t0
        } else {
            probe = c.probe
        }
        if let probe {
            let d = (try? FaceMatcher.distance(probe, referenceTemplate)) ?? .infinity
            c.distance = d
            c.model = referenceTemplate.model
            c.faceMatchScore = SelfieMatching.score(distance: d, model: referenceTemplate.model)
            c.kind = FaceComparisonKind.of(probe, referenceTemplate)
            c.comparedProbe = probe
        }
        return c
    }

    /// The capture as dlib's descriptor, for a version-1/2 stored template: dlib's 5 landmarks and
    /// 128-d descriptor of the capture's template frames (the first `legacyProbeFrames`, best
    /// first), fused with their quality weights — the version-2 template this capture would have
    /// made. nil without a face.
    func legacyProbe(_ report: LivenessReport, frames: [Data]) throws -> FaceTemplate? {
        let picks = Array(zip(report.templateFrameIndices, report.templateWeights).prefix(configuration.legacyProbeFrames))
        var descriptors: [[Float]] = []
        var weights: [Double] = []
        for (index, weight) in picks {
            guard index < report.frames.count, let box = report.frames[index].box else { continue }
            let image = try decode(frames[index], index: index)
            let five = try engine.landmarks(in: image, box: box, count: 5)
            descriptors.append(try engine.embedding(in: image, landmarks: five))
            weights.append(weight)
        }
        guard !descriptors.isEmpty else { return nil }
        return try FaceTemplate.fused(descriptors, weights: weights, model: .dlibResNetV1)
    }

    /// The reference as a template: a portrait's largest face as the recogniser's descriptor
    /// (`embedding(of:)`), or the stored template as given (checked: its model's length, finite).
    public func template(of reference: SelfieReference) throws -> FaceTemplate {
        switch reference {
        case .template(let t):
            do { try t.validate() } catch let e as FaceTemplateError { throw LivenessError.invalidTemplate(e.description) }
            return t
        case .portrait:
            return FaceTemplate(descriptor: try embedding(of: reference), model: try activeRecognizer().model)
        }
    }

    /// The descriptor of the reference: for a portrait (JPEG/PNG, e.g. the document's or the
    /// chip's DG2 face) the recogniser's descriptor of its largest face, aligned by the 5 points of
    /// dlib's 68 landmarks — found in the image as given, else on a grey canvas 50 % larger (a
    /// portrait cropped to the face leaves the detector no margin); for a template, its descriptor.
    public func embedding(of reference: SelfieReference) throws -> [Float] {
        switch reference {
        case .template:
            return try template(of: reference).descriptor
        case .portrait(let data):
            let image: Image
            do { image = try Image(data: data) } catch let e as ImageError { throw LivenessError.invalidReference(e) }
            let options = AnalysisOptions(landmarks68: true, embedding: false, maxFaces: 1)
            for candidate in [image, try PortraitCanvas.padded(image)] {
                if let face = try engine.analyze(candidate, options: options).first, let points = AlignmentPoints(landmarks68: face.landmarks68) {
                    return try activeRecognizer().embedding(in: candidate, points: points)
                }
            }
            throw LivenessError.referenceHasNoFace
        }
    }
}

/// A portrait cropped to the face — a document's printed photo, a chip's DG2 face — leaves a face
/// detector's window no room around the face; placed on a margin it is found.
public enum PortraitCanvas {
    /// `image` centred on a mid-grey (128) canvas 50 % larger in each dimension, RGB.
    /// - Throws: `ImageError` when the canvas would exceed the decoder's limits.
    public static func padded(_ image: Image) throws -> Image {
        let rgb = image.rgb()
        let w = image.width * 3 / 2, h = image.height * 3 / 2, x0 = (w - image.width) / 2, y0 = (h - image.height) / 2
        var px = [UInt8](repeating: 128, count: w * h * 3)
        rgb.pixels.withUnsafeBufferPointer { src in
            for y in 0..<image.height {
                let s = y * image.width * 3, d = ((y0 + y) * w + x0) * 3
                px.replaceSubrange(d..<d + image.width * 3, with: src[s..<s + image.width * 3])
            }
        }
        return try Image(rgb: px, width: w, height: h)
    }
}
