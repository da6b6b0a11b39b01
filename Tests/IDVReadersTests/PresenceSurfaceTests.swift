import FaceKit
import Foundation
import IDVServerTestSupport
import IDVTools
import Imaging
import XCTest

/// The phone-camera simulator's presentation surfaces (IDVTools `PhoneCaptureSimulator.Surface`)
/// measured by FaceKit's illumination check, on a real clip (Tests/Fixtures/selfie/katie_live): the
/// same frames rendered as a person, as a print filling the view, as a replay screen filling the
/// view and as a print held with the room around it, under one issued sequence in one scene. No
/// models: the face box is the clip's, fixed.
final class PresenceSurfaceTests: XCTestCase {
    /// katie_live's face (dlib HOG, `idvd face detect` on frames 1, 8, 15 and 30; 384 × 384 frames).
    static let box = FaceBox(left: 93.5, top: 118.5, right: 317, bottom: 342)

    struct Measured { let report: IlluminationReport; let lightEffect: Double }

    /// Renders the clip on `surface` under `sequence` and checks it: the report, and what the screen's
    /// light did to the face-to-background ratio — the largest difference, over the steps and channels,
    /// between the per-step mean log ratios of this capture and of the same one with the screen dark.
    func measure(_ surface: PhoneCaptureSimulator.Surface, scene: PhoneCaptureScene, sequence: IlluminationSequence,
                 frames: [Image], times: [Double]) throws -> Measured {
        let lit = try check(surface, scene: scene, shown: sequence, judged: sequence, frames: frames, times: times)
        let dark = try check(surface, scene: scene, shown: nil, judged: sequence, frames: frames, times: times)
        var effect = 0.0
        for (a, b) in zip(lit.responses, dark.responses) {
            guard let a, let b else { continue }
            for ch in 0..<3 { effect = max(effect, abs(a[ch] - b[ch])) }
        }
        return Measured(report: lit, lightEffect: effect)
    }

    func check(_ surface: PhoneCaptureSimulator.Surface, scene: PhoneCaptureScene, shown: IlluminationSequence?,
               judged: IlluminationSequence, frames: [Image], times: [Double]) throws -> IlluminationReport {
        let capture = try PhoneCaptureSimulator(scene: scene).capture(frames: frames, captureTimesMs: times,
                                                                      faces: frames.map { _ in Self.box }, sequence: shown,
                                                                      surface: surface, seed: 11)
        let samples = try capture.frames.map { jpeg -> IlluminationSample? in
            let image = try Image(data: jpeg, maxPixels: 4_000_000)
            return image.rgbPixels.withUnsafeBufferPointer {
                IlluminationSample.measure(rgb: $0, width: image.width, height: image.height, box: Self.box)
            }
        }
        return IlluminationCheck.evaluate(samples: samples, frameTimesMs: capture.frameTimesMs, sequence: judged)
    }

    func testAFlatSurfaceFillingTheViewDoesNotMoveTheFaceToBackgroundRatio() throws {
        let dir = IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures/selfie/katie_live")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jpg") }.sorted()
        let source = try names.map { try Image(data: Data(contentsOf: dir.appendingPathComponent($0)), maxPixels: 4_000_000) }
        XCTAssertEqual(source.count, 30)
        var g = SplitMix64(seed: 2026)
        // An indoor scene: 200 lux, 3 400 K, a 600-nit phone screen of 0.0091 m² at 0.30 m (the
        // screen's light on the face ≈ 61 lux, 30 % of the ambient), the wall 1.5 m away.
        var scene = PhoneCaptureScene.random(using: &g, ambientLux: 200...200)
        scene.ambientKelvin = 3400
        scene.screenNits = 600
        scene.screenAreaM2 = 0.0091
        scene.faceDistanceM = 0.30
        scene.backgroundDistanceM = 1.5
        scene.specular = 0.03
        let sequence = IlluminationDesign().random(using: &g)
        let count = Int(((Double(sequence.totalMilliseconds) + 100 - 40) / 100).rounded(.up))
        let times = (0..<count).map { 40 + Double($0) * 100 }
        let frames = (0..<count).map { i -> Image in
            let k = i % 58
            return source[k < 30 ? k : 58 - k]
        }

        // Measured (this scene, seed 11): the person's ratio score 0.91, the light moving its steps by
        // up to 0.48; the matte print's ratio score −0.06 (0.03), its colour score 0.85 (p 0.0005); the
        // glossy print's ratio score −0.20; the screen's −0.52, its colour score 0.56 (p 0.011); the
        // held print's ratio score 0.91, the light moving its steps by up to 0.46.

        // The person: the near face takes the screen's light, the far wall little of it — the ratio follows.
        let person = try measure(.person, scene: scene, sequence: sequence, frames: frames, times: times)
        XCTAssertTrue(person.report.followed, "\(person.report)")
        XCTAssertGreaterThan(person.report.ratioScore ?? 0, 0.8)
        XCTAssertGreaterThan(person.lightEffect, 0.1)

        // A matte print: the paper's face and its background take the same light, so the light leaves
        // the ratio where the unlit print has it (JPEG and sensor noise aside) and its score is chance.
        let matte = try measure(.printFillingView(gloss: 0), scene: scene, sequence: sequence, frames: frames, times: times)
        XCTAssertLessThan(matte.lightEffect, person.lightEffect / 10, "\(matte.report)")
        XCTAssertLessThan(abs(matte.report.ratioScore ?? 9), 0.3)
        // Glossy paper and a replay screen's glass add a uniform part to every pixel: it moves the
        // darker region's level more. Here the face is brighter than its background, so the ratio
        // moves against the light (where the face is the darker one, it moves with it: the bench).
        let glossy = try measure(.printFillingView(gloss: 0.02), scene: scene, sequence: sequence, frames: frames, times: times)
        XCTAssertLessThan(glossy.report.ratioScore ?? 9, 0, "\(glossy.report)")
        let screen = try measure(.screenFillingView(glare: 0.05), scene: scene, sequence: sequence, frames: frames, times: times)
        XCTAssertLessThan(screen.report.ratioScore ?? 9, -0.3, "\(screen.report)")

        // A print held with the room around it (the sheet 0.2 face boxes past the face, nearer than
        // FaceKit's background patch, which starts 0.35 box widths beside the box): the patch is the
        // far room, so the ratio follows the light as for a person.
        let held = try measure(.printHeld(gloss: 0, margin: 0.2), scene: scene, sequence: sequence, frames: frames, times: times)
        XCTAssertGreaterThan(held.report.ratioScore ?? 0, 0.8, "\(held.report)")
        XCTAssertGreaterThan(held.lightEffect, person.lightEffect / 2)
        XCTAssertTrue(held.report.followed, "\(held.report)")

        // The face's own colour (the check's chroma view) follows the screen's light on any surface the
        // light reaches: the check scores the larger of its two views, so the print is followed here
        // (docs/LIVENESS.md "Flat prints and screens filling the view").
        XCTAssertGreaterThan(matte.report.chromaScore ?? 0, 0.8)
        XCTAssertTrue(matte.report.followed, "\(matte.report)")
    }
}
