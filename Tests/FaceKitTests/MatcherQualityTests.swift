import Foundation
import XCTest
@testable import FaceKit
import Imaging

final class FaceMatcherTests: XCTestCase {
    func testDistanceAndSimilarityMapping() throws {
        let a = [Float](repeating: 0.1, count: 128)
        var b = a
        b[0] += 0.3; b[1] -= 0.4
        XCTAssertEqual(try FaceMatcher.distance(a, a), 0)
        XCTAssertEqual(try FaceMatcher.distance(a, b), 0.5, accuracy: 1e-6)
        XCTAssertEqual(FaceMatcher.similarity(distance: FaceMatcher.similarityCentre), 0.5, accuracy: 1e-12)
        XCTAssertGreaterThan(FaceMatcher.similarity(distance: 0), 0.99)
        XCTAssertLessThan(FaceMatcher.similarity(distance: 1.2), 0.01)
        var last = 1.0
        for d in stride(from: 0.0, through: 2.0, by: 0.05) {
            let s = FaceMatcher.similarity(distance: d)
            XCTAssertTrue((0...1).contains(s))
            XCTAssertLessThan(s, last)
            last = s
        }
        XCTAssertThrowsError(try FaceMatcher.distance(a, Array(a.prefix(127))))
        XCTAssertThrowsError(try FaceMatcher.distance([Float.nan], [0]))
    }

    func testThresholdIsConfiguration() throws {
        let a = [Float](repeating: 0, count: 128)
        var b = a
        b[5] = 0.55
        XCTAssertFalse(try FaceMatcher.compare(a, b, policy: FaceMatchPolicy(threshold: 0.5), model: .dlibResNetV1).match)
        XCTAssertTrue(try FaceMatcher.compare(a, b, policy: FaceMatchPolicy(threshold: 0.6), model: .dlibResNetV1).match)
        XCTAssertEqual(FaceMatchPolicy.fromEnvironment(["IDV_FACE_MATCH_THRESHOLD": "0.45"]).threshold, 0.45)
        XCTAssertEqual(FaceMatchPolicy.fromEnvironment(["IDV_FACE_MATCH_THRESHOLD": "lots"]), .default)
        XCTAssertEqual(FaceMatchPolicy.fromEnvironment([:]), .default)
        let strict = FaceMatchPolicy.fromEnvironment(["IDV_FACE_MATCH_OPERATING_POINT": "fmr_0.01"])
        XCTAssertEqual(strict.operatingPoint, .fmr1in10000)
        for model in FaceDescriptorModel.allCases {
            XCTAssertEqual(strict.threshold(for: .fusedToImage, model: model),
                           FaceMatchCalibration.threshold(.fmr1in10000, for: .fusedToImage, model: model).distance)
        }
        // The default names an operating point; its threshold comes from the calibrated table of the model compared.
        let c = try FaceMatcher.compare(a, b, model: .dlibResNetV1)
        XCTAssertEqual(c.threshold, FaceMatchCalibration.threshold(.fmr1in1000, for: .imageToImage, model: .dlibResNetV1).distance)
        XCTAssertEqual(c.match, c.distance <= c.threshold)
        XCTAssertEqual(FaceMatchPolicy.default.threshold, FaceMatchCalibration.threshold(.fmr1in1000, for: .imageToImage, model: .current).distance)
    }

    func testCalibratedTableIsCompleteAndOrdered() throws {
        for model in FaceDescriptorModel.allCases {
            try checkTable(model)
        }
    }

    func checkTable(_ model: FaceDescriptorModel) throws {
        for kind in FaceComparisonKind.allCases {
            let loose = FaceMatchCalibration.threshold(.fmr1in1000, for: kind, model: model)
            let strict = FaceMatchCalibration.threshold(.fmr1in10000, for: kind, model: model)
            XCTAssertEqual(loose.model, model)
            // A lower target FMR is a smaller distance, and its measured FMR and FNMR are consistent.
            XCTAssertLessThan(strict.distance, loose.distance, "\(kind)")
            XCTAssertLessThanOrEqual(strict.measuredFMR, loose.measuredFMR, "\(kind)")
            XCTAssertGreaterThanOrEqual(strict.measuredFNMR, loose.measuredFNMR, "\(kind)")
            XCTAssertGreaterThan(strict.impostorComparisons, 10_000, "\(kind): enough impostors to resolve 0.01 %")
            XCTAssertGreaterThan(strict.genuineComparisons, 50, "\(kind)")
        }
        // Averaged descriptors lie closer together: a fused template's thresholds are below the image ones.
        for point in FaceMatchOperatingPoint.allCases {
            XCTAssertLessThan(FaceMatchCalibration.threshold(point, for: .fusedToImage, model: model).distance,
                              FaceMatchCalibration.threshold(point, for: .imageToImage, model: model).distance)
            XCTAssertLessThan(FaceMatchCalibration.threshold(point, for: .fusedToFused, model: model).distance,
                              FaceMatchCalibration.threshold(point, for: .fusedToImage, model: model).distance)
        }
    }

    func testRealFacesAtTheDefaultThresholdWithDlib() throws {
        let engine = try FaceEngineTests.engine()
        func descriptor(_ name: String) throws -> [Float] {
            try XCTUnwrap(engine.analyze(Image(data: Fixtures.face(name))).first?.embedding)
        }
        let same = try FaceMatcher.compare(descriptor("obama_small.jpg"), descriptor("obama-480p.jpg"), model: .dlibResNetV1)
        XCTAssertTrue(same.match)
        XCTAssertGreaterThan(same.similarity, 0.9)
        let different = try FaceMatcher.compare(descriptor("obama_small.jpg"), descriptor("biden_half.jpg"), model: .dlibResNetV1)
        XCTAssertFalse(different.match)
        XCTAssertLessThan(different.similarity, 0.1)
    }
}

final class FaceQualityTests: XCTestCase {
    func quality(_ image: Image) throws -> FaceQuality? {
        let engine = try FaceEngineTests.engine()
        let faces = try engine.analyze(image, options: AnalysisOptions(embedding: false))
        guard let face = faces.first else { return nil }
        return try engine.quality(of: face, in: image, faceCount: faces.count)
    }

    func testGoodPortraitHasNoIssues() throws {
        let q = try XCTUnwrap(quality(Image(data: Fixtures.face("obama-480p.jpg"))))
        XCTAssertEqual(q.faceCount, 1)
        XCTAssertFalse(q.multipleFaces)
        XCTAssertEqual(q.interEyeDistance, 48, accuracy: 6)
        XCTAssertTrue((80...200).contains(q.brightness), "\(q.brightness)")
        XCTAssertGreaterThan(q.contrast, 20)
        XCTAssertGreaterThan(q.sharpness, 40)
        XCTAssertEqual(q.issues(), [])
    }

    func testBlurLowersSharpness() throws {
        let image = try Image(data: Fixtures.face("obama-480p.jpg"))
        let sharp = try XCTUnwrap(quality(image))
        // Down to a quarter and back: the same face, optically blurred.
        let blurred = try image.resized(width: image.width / 4, height: image.height / 4).resized(width: image.width, height: image.height)
        let soft = try XCTUnwrap(quality(blurred))
        XCTAssertLessThan(soft.sharpness, sharp.sharpness / 3)
        XCTAssertTrue(soft.issues().contains(.blurred), "sharpness \(soft.sharpness)")
    }

    func testDarkImageIsFlagged() throws {
        let image = try Image(data: Fixtures.face("obama-480p.jpg"))
        let dark = try Image(rgb: image.pixels.map { UInt8(Double($0) * 0.3) }, width: image.width, height: image.height)
        let q = try XCTUnwrap(quality(dark), "the face is still found at 30 % brightness")
        XCTAssertLessThan(q.brightness, 50)
        XCTAssertTrue(q.issues().contains(.tooDark))
    }

    func testTwoFacesFlagged() throws {
        let q = try XCTUnwrap(quality(Image(data: Fixtures.face("two_people.jpg"))))
        XCTAssertEqual(q.faceCount, 2)
        XCTAssertTrue(q.issues().contains(.multipleFaces))
        var lenient = FaceQualityRequirements()
        lenient.allowMultipleFaces = true
        XCTAssertFalse(q.issues(lenient).contains(.multipleFaces))
    }

    func testTurnedHeadFlagged() throws {
        // The selfie fixture's subject turns about 30° (yaw).
        let q = try XCTUnwrap(quality(Image(data: Fixtures.face("live_exif_rotated.jpg"))))
        let yaw = try XCTUnwrap(q.yaw)
        XCTAssertGreaterThan(abs(yaw), 25)
        XCTAssertTrue(q.issues().contains(.headTurned))
    }
}
