import Foundation
import IDVTestSupport
import XCTest
@testable import FaceKit
import Imaging

/// Real faces (committed fixtures from `ageitgey/face_recognition` and Silent-Face-Anti-Spoofing)
/// through the real dlib models. Skips with a message when the models are not installed.
final class FaceEngineTests: XCTestCase {
    static func engine() throws -> FaceEngine {
        let dir = FaceEngine.defaultModelsDirectory
        for model in FaceModel.allCases where !FileManager.default.fileExists(atPath: dir.appendingPathComponent(model.rawValue).path) {
            throw TestData.missing("dlib model \(model.rawValue) is not in \(dir.path); run scripts/bootstrap")
        }
        return try FaceEngine.shared()
    }

    func analysis(_ name: String, _ options: AnalysisOptions = .init()) throws -> [FaceAnalysis] {
        try Self.engine().analyze(Image(data: Fixtures.face(name)), options: options)
    }

    func distance(_ a: [Float], _ b: [Float]) -> Double {
        zip(a, b).reduce(0.0) { $0 + Double(($1.0 - $1.1) * ($1.0 - $1.1)) }.squareRoot()
    }

    func testSamePersonIsCloseDifferentPeopleAreFar() throws {
        let obamaSmall = try XCTUnwrap(analysis("obama_small.jpg").first?.embedding)
        let obama480 = try XCTUnwrap(analysis("obama-480p.jpg").first?.embedding)
        let biden = try XCTUnwrap(analysis("biden_half.jpg").first?.embedding)
        XCTAssertEqual(obamaSmall.count, 128)
        XCTAssertLessThan(distance(obamaSmall, obama480), 0.45)
        XCTAssertGreaterThan(distance(obamaSmall, biden), 0.7)
        // The descriptor is not unit length; dlib's are about 1.4 long.
        let norm = obamaSmall.reduce(0.0) { $0 + Double($1 * $1) }.squareRoot()
        XCTAssertTrue((1.0...2.0).contains(norm), "norm \(norm)")
    }

    func testTwoFacesReportedWithBoxesOnEachPerson() throws {
        let faces = try analysis("two_people.jpg", AnalysisOptions(embedding: true))
        XCTAssertEqual(faces.count, 2)
        let centres = faces.map(\.box.center.x).sorted()
        XCTAssertLessThan(centres[0], 563, "one face in the left half")
        XCTAssertGreaterThan(centres[1], 563, "one face in the right half")
        // The left person is Obama, the right Biden: cross-check with the single portraits.
        let obama = try XCTUnwrap(analysis("obama_small.jpg").first?.embedding)
        let left = try XCTUnwrap(faces.min { $0.box.center.x < $1.box.center.x }?.embedding)
        let right = try XCTUnwrap(faces.max { $0.box.center.x < $1.box.center.x }?.embedding)
        XCTAssertLessThan(distance(obama, left), distance(obama, right))
        for face in faces {
            XCTAssertGreaterThan(face.confidence, 0)
            XCTAssertGreaterThan(face.box.width, 100)
        }
    }

    func testCNNDetectorFindsTheSameTwoFaces() throws {
        let image = try Image(data: Fixtures.face("two_people.jpg"))
        let hog = try Self.engine().detect(in: image)
        let cnn = try Self.engine().detect(in: image, options: DetectionOptions(detector: .cnn))
        XCTAssertEqual(cnn.count, 2)
        for face in cnn {
            XCTAssertEqual(face.detector, .cnn)
            XCTAssertGreaterThan(hog.map { $0.box.iou(face.box) }.max() ?? 0, 0.5)
        }
    }

    func testNoFaceInARealImageWithoutFaces() throws {
        // The lower part of the two-person photograph: suits and folded arms, no face.
        let image = try Image(data: Fixtures.face("two_people.jpg")).cropped(PixelRect(x: 0, y: 320, width: 1126, height: 341))
        XCTAssertEqual(try Self.engine().analyze(image), [])
        XCTAssertEqual(try Self.engine().detect(in: image, options: .init(detector: .cnn)), [])
    }

    func testEXIFRotatedSelfieIsUprightBeforeDetection() throws {
        let data = try Fixtures.face("live_exif_rotated.jpg")
        let upright = try Self.engine().analyze(Image(data: data))
        XCTAssertEqual(upright.count, 1)
        // Stored sideways (orientation ignored) the frontal detector sees no face.
        XCTAssertEqual(try Self.engine().detect(in: Image(data: data, applyOrientation: false)).count, 0)
        let face = try XCTUnwrap(upright.first)
        XCTAssertGreaterThan(face.box.height, 100)
    }

    func testLandmarkMeasures() throws {
        let face = try XCTUnwrap(analysis("obama_small.jpg").first)
        XCTAssertEqual(face.landmarks5.count, 5)
        XCTAssertEqual(face.landmarks68.count, 68)
        let grown = face.box.expanded(by: 0.25)
        for p in face.landmarks68 {
            XCTAssertTrue(p.x >= grown.left && p.x <= grown.right && p.y >= grown.top && p.y <= grown.bottom, "\(p) outside \(face.box)")
        }
        // Open eyes, closed lips, a frontal official portrait.
        XCTAssertTrue((0.18...0.4).contains(face.rightEyeAspectRatio), "\(face.rightEyeAspectRatio)")
        XCTAssertTrue((0.18...0.4).contains(face.leftEyeAspectRatio), "\(face.leftEyeAspectRatio)")
        XCTAssertLessThan(face.mouthAspectRatio, 0.35)
        let pose = try XCTUnwrap(face.pose)
        XCTAssertLessThan(abs(pose.yaw), 10)
        XCTAssertLessThan(abs(pose.roll), 10)
        XCTAssertLessThan(abs(pose.pitch), 20)
        // 5-point and 68-point eye centres agree.
        XCTAssertEqual(FaceLandmarks.interEyeDistance(face.landmarks5), face.interEyeDistance, accuracy: 0.15 * face.interEyeDistance)
    }

    func testPoseSignsFollowTheImage() throws {
        let image = try Image(data: Fixtures.face("two_people.jpg"))
        let engine = try Self.engine()
        let options = AnalysisOptions(embedding: false)
        let faces = try engine.analyze(image, options: options)
        let mirrored = try engine.analyze(image.flippedHorizontally(), options: options)
        XCTAssertEqual(faces.count, 2)
        XCTAssertEqual(mirrored.count, 2)
        for face in faces {
            // The same face in the mirrored image: its box mirrored about the vertical centre line.
            let cx = Double(image.width) - face.box.center.x
            let twin = try XCTUnwrap(mirrored.min { abs($0.box.center.x - cx) < abs($1.box.center.x - cx) })
            let p = try XCTUnwrap(face.pose), q = try XCTUnwrap(twin.pose)
            XCTAssertGreaterThan(abs(p.yaw), 5, "these faces are turned")
            XCTAssertEqual(p.yaw, -q.yaw, accuracy: 6, "mirroring negates yaw")
            XCTAssertEqual(p.roll, -q.roll, accuracy: 6, "mirroring negates roll")
            XCTAssertEqual(p.pitch, q.pitch, accuracy: 6, "mirroring keeps pitch")
            // Roll has the sign of the eye line's slope (positive: image-right eye higher) and is
            // near it; with yaw and pitch both about 20° the two differ by a few degrees.
            let (a, b) = try XCTUnwrap(FaceLandmarks.eyeCentres(face.landmarks68))
            let eyeLine = atan2(-(b.y - a.y), b.x - a.x) * 180 / .pi
            XCTAssertEqual(p.roll.sign, eyeLine.sign)
            XCTAssertEqual(p.roll, eyeLine, accuracy: 8)
        }
    }

    func testAlignedChipIsTheDescriptorInput() throws {
        let image = try Image(data: Fixtures.face("obama-480p.jpg"))
        let face = try XCTUnwrap(Self.engine().analyze(image).first)
        let chip = try Self.engine().alignedChip(in: image, landmarks: face.landmarks5)
        XCTAssertEqual([chip.width, chip.height], [150, 150])
        // The chip of a face is a face again, found near its centre.
        let big = try chip.resized(width: 300, height: 300)
        let again = try XCTUnwrap(Self.engine().detect(in: big).first)
        XCTAssertEqual(again.box.center.x, 150, accuracy: 30)
    }

    func testConcurrentCallsGiveTheSameDescriptor() throws {
        let engine = try Self.engine()
        let image = try Image(data: Fixtures.face("obama_small.jpg"))
        let reference = try XCTUnwrap(engine.analyze(image).first?.embedding)
        let results = ResultBox()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            results.append(Result { try engine.analyze(image).first?.embedding })
        }
        XCTAssertEqual(results.values.count, 4)
        for r in results.values { XCTAssertEqual(try r.get(), reference) }
        XCTAssertGreaterThanOrEqual(engine.workerCount, 1)
    }

    func testMissingModelNamesTheFileAndTheFix() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("facekit-no-models-\(getpid())")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let engine = try FaceEngine(modelsDirectory: empty)
        let image = try Image(data: Fixtures.face("obama_small.jpg"))
        XCTAssertEqual(try engine.detect(in: image).count, 1, "HOG needs no model file")
        XCTAssertThrowsError(try engine.analyze(image)) { error in
            guard case FaceError.modelUnavailable(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("shape_predictor_5_face_landmarks.dat"), message)
            XCTAssertTrue(message.contains("scripts/bootstrap"), message)
        }
        XCTAssertThrowsError(try engine.preload([.descriptor])) { error in
            XCTAssertTrue("\(error)".contains("dlib_face_recognition_resnet_model_v1.dat"))
        }
    }

    func testBadArgumentsAreErrorsNotCrashes() throws {
        let engine = try Self.engine()
        let image = try Image(data: Fixtures.face("obama_small.jpg"))
        XCTAssertThrowsError(try engine.landmarks(in: image, box: FaceBox(left: 10, top: 10, right: 5, bottom: 20)))
        XCTAssertThrowsError(try engine.landmarks(in: image, box: FaceBox(left: 0, top: 0, right: 50, bottom: 50), count: 7))
        XCTAssertThrowsError(try engine.embedding(in: image, landmarks: [FacePoint(x: 1, y: 1)]))
        // A tiny image has no face and no failure.
        XCTAssertEqual(try engine.analyze(Image(gray: [UInt8](repeating: 128, count: 4), width: 2, height: 2)), [])
    }
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Result<[Float]?, Error>] = []
    func append(_ r: Result<[Float]?, Error>) { lock.lock(); items.append(r); lock.unlock() }
    var values: [Result<[Float]?, Error>] { lock.lock(); defer { lock.unlock() }; return items }
}
