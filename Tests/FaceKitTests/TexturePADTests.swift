import Foundation
import Imaging
import XCTest
@testable import FaceKit

/// The MiniFASNet texture PAD models through OpenCV dnn: the SHA-256 check at load, the upstream
/// input protocol, and scores on a real live still and a real print attack (Silent-Face-Anti-Spoofing
/// samples, committed fixtures).
final class TexturePADTests: XCTestCase {
    func copyModels() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pad-models-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for m in TexturePADModel.allCases {
            try FileManager.default.copyItem(at: TexturePAD.bundledModelsDirectory.appendingPathComponent(m.fileName),
                                             to: dir.appendingPathComponent(m.fileName))
        }
        return dir
    }

    func testBundledModelsMatchTheirPublishedHashes() throws {
        for m in TexturePADModel.allCases {
            XCTAssertEqual(try TexturePAD.sha256(ofFile: TexturePAD.bundledModelsDirectory.appendingPathComponent(m.fileName)), m.sha256)
        }
        XCTAssertNoThrow(try TexturePAD())
    }

    func testTamperedModelIsRefusedBeforeItRuns() throws {
        let dir = try copyModels()
        defer { try? FileManager.default.removeItem(at: dir) }
        // One weight byte changed in the middle of the V1SE file: the file still parses as ONNX,
        // so only the hash can tell.
        let url = dir.appendingPathComponent(TexturePADModel.miniFASNetV1SE.fileName)
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: url)
        XCTAssertThrowsError(try TexturePAD(modelsDirectory: dir)) { error in
            guard case FaceError.modelIntegrity(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains(TexturePADModel.miniFASNetV1SE.fileName), message)
            XCTAssertTrue(message.contains(TexturePADModel.miniFASNetV1SE.sha256), message)
        }
    }

    func testMissingModelIsNamed() throws {
        let dir = try copyModels()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.removeItem(at: dir.appendingPathComponent(TexturePADModel.miniFASNetV2.fileName))
        XCTAssertThrowsError(try TexturePAD(modelsDirectory: dir)) { error in
            guard case FaceError.modelUnavailable(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains(TexturePADModel.miniFASNetV2.fileName), message)
        }
    }

    func testCropFollowsTheUpstreamProtocol() {
        // A 100×100 box at the centre of a 640×480 image, scale 2.7: 270×270 about the centre.
        let box = FaceBox(left: 270, top: 190, right: 370, bottom: 290)
        XCTAssertEqual(TexturePAD.cropRect(width: 640, height: 480, box: box, scale: 2.7), PixelRect(x: 185, y: 105, width: 271, height: 271))
        // Scale 4 would need 400×400: it fits (479 rows), so the crop is shifted only if it crosses an edge.
        let corner = FaceBox(left: 10, top: 10, right: 110, bottom: 110)
        let r = try! XCTUnwrap(TexturePAD.cropRect(width: 640, height: 480, box: corner, scale: 4))
        XCTAssertEqual(r.x, 0)
        XCTAssertEqual(r.y, 0)
        XCTAssertEqual(r.width, 401)
        // A scale the image cannot hold is capped to the image (height − 1) / box height.
        let capped = try! XCTUnwrap(TexturePAD.cropRect(width: 640, height: 480, box: box, scale: 10))
        XCTAssertEqual(capped.height, 480)
        XCTAssertNil(TexturePAD.cropRect(width: 640, height: 480, box: FaceBox(left: 5, top: 5, right: 5, bottom: 9), scale: 2.7))
    }

    func testLiveStillScoresBonaFidePrintScoresAttack() throws {
        let engine = try FaceEngineTests.engine()
        let pad = try TexturePAD.shared()
        func score(_ name: String) throws -> TextureScore {
            let image = try Image(data: Fixtures.face(name))
            let face = try XCTUnwrap(engine.detect(in: image).first, "a face in \(name)")
            return try pad.score(in: image, box: face.box)
        }
        let live = try score("live_exif_rotated.jpg")
        let print = try score("print_attack_exif_rotated.jpg")
        XCTAssertEqual(live.perModel.count, 2)
        XCTAssertGreaterThan(live.bonaFide, 0.9, "\(live)")
        XCTAssertLessThan(print.bonaFide, 0.5, "\(print)")
        XCTAssertEqual(live.bonaFide, live.perModel.reduce(0, +) / 2, accuracy: 1e-9)
    }

    /// The models' own detector (Silent-Face-Anti-Spoofing's RetinaFace, Caffe): its SHA-256 is
    /// checked before it is parsed; on the upstream samples it finds the face with a box taller and
    /// looser than dlib's; the models score the samples as upstream publishes them (image_T1 real,
    /// image_F1 a print).
    func testTheModelsOwnDetectorGivesTheirCrops() throws {
        let engine = try FaceEngineTests.engine()
        let pad = try TexturePAD.shared()
        let detector = try PADFaceDetector.shared()
        func detected(_ name: String) throws -> (TextureScore, PADFaceDetector.Detection, FaceBox) {
            let image = try Image(data: Fixtures.face(name))
            let dlib = try XCTUnwrap(engine.detect(in: image).first, "a face in \(name)").box
            let rgb = image.rgbPixels
            let found = try rgb.withUnsafeBufferPointer { try detector.detect(rgb: $0, width: image.width, height: image.height) }
            let d = try XCTUnwrap(PADFaceDetector.matching(found, tracked: dlib), "the detector finds the face in \(name)")
            return (try pad.score(in: image, box: d.box), d, dlib)
        }
        let (live, liveBox, dlib) = try detected("live_exif_rotated.jpg")
        XCTAssertGreaterThan(liveBox.confidence, 0.9)
        XCTAssertGreaterThan(liveBox.box.height, dlib.height * 1.1, "the detector's box reaches above the brows")
        XCTAssertGreaterThan(liveBox.box.height, liveBox.box.width)
        XCTAssertGreaterThan(live.bonaFide, 0.9, "\(live)")
        let (print, printBox, _) = try detected("print_attack_exif_rotated.jpg")
        XCTAssertGreaterThan(printBox.confidence, 0.9)
        XCTAssertLessThan(print.bonaFide, 0.5, "\(print)")
        // A region holding no face: nothing matches.
        XCTAssertNil(PADFaceDetector.matching([], tracked: dlib))
    }

    func testTamperedDetectorIsRefusedBeforeItRuns() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pad-detector-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for f in [PADFaceDetector.prototxt.name, PADFaceDetector.weights.name] {
            try FileManager.default.copyItem(at: TexturePAD.bundledModelsDirectory.appendingPathComponent(f), to: dir.appendingPathComponent(f))
        }
        XCTAssertNoThrow(try PADFaceDetector(modelsDirectory: dir))
        let url = dir.appendingPathComponent(PADFaceDetector.weights.name)
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: url)
        XCTAssertThrowsError(try PADFaceDetector(modelsDirectory: dir)) { error in
            guard case FaceError.modelIntegrity(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains(PADFaceDetector.weights.sha256), message)
        }
        try FileManager.default.removeItem(at: url)
        XCTAssertThrowsError(try PADFaceDetector(modelsDirectory: dir)) { error in
            guard case FaceError.modelUnavailable(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains(PADFaceDetector.weights.name), message)
        }
    }

    func testBoxOutsideTheImageIsRefused() throws {
        let pad = try TexturePAD.shared()
        let image = try Image(gray: [UInt8](repeating: 90, count: 64 * 64), width: 64, height: 64)
        XCTAssertThrowsError(try pad.score(in: image, box: FaceBox(left: 10, top: 10, right: 10, bottom: 30)))
        // A grey image with a plausible box scores (no face needed: the model sees only pixels).
        let s = try pad.score(in: image, box: FaceBox(left: 16, top: 16, right: 48, bottom: 48))
        XCTAssertTrue((0...1).contains(s.bonaFide))
    }
}
