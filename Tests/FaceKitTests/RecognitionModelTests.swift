import Foundation
import Imaging
import XCTest
@testable import FaceKit

/// The face recogniser (face-reidentification-retail-0095) and the 5-point regressor
/// (landmarks-regression-retail-0009) through OpenCV dnn: the SHA-256 check at load, the ONNX
/// files against Intel's own runtime on real crops, the similarity alignment, and comparisons of
/// real faces.
final class RecognitionModelTests: XCTestCase {
    static let fixtures = Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/recognition")

    /// What `bench/intel_onnx_check.py` wrote: per crop, Intel's IR outputs in OpenVINO (fp32).
    struct Reference: Decodable {
        struct Face: Decodable { let name: String; let landmarks: [Double]; let embedding: [Double] }
        let runtime: String
        let ir_vs_onnx_max_abs_difference: [String: Double]
        let faces: [Face]
    }

    func copyModels() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("reid-models-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for name in [FaceRecognizer.fileName, FaceLandmarkRegressor.fileName] {
            try FileManager.default.copyItem(at: FaceRecognizer.bundledModelsDirectory.appendingPathComponent(name), to: dir.appendingPathComponent(name))
        }
        return dir
    }

    func testBundledModelsMatchTheirPublishedHashes() throws {
        let dir = FaceRecognizer.bundledModelsDirectory
        XCTAssertEqual(try TexturePAD.sha256(ofFile: dir.appendingPathComponent(FaceRecognizer.fileName)), FaceRecognizer.sha256)
        XCTAssertEqual(try TexturePAD.sha256(ofFile: dir.appendingPathComponent(FaceLandmarkRegressor.fileName)), FaceLandmarkRegressor.sha256)
        // The licence and the provenance travel with the files.
        for name in ["LICENSE", "SOURCES.md"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path), name)
        }
        XCTAssertTrue(try String(contentsOf: dir.appendingPathComponent("SOURCES.md"), encoding: .utf8).contains(FaceRecognizer.sha256))
    }

    func testAlteredOrMissingModelIsRefusedBeforeItRuns() throws {
        let dir = try copyModels()
        defer { try? FileManager.default.removeItem(at: dir) }
        XCTAssertNoThrow(try FaceRecognizer(modelsDirectory: dir))
        // One weight byte changed: the file still parses as ONNX, so only the hash can tell.
        let url = dir.appendingPathComponent(FaceRecognizer.fileName)
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: url)
        XCTAssertThrowsError(try FaceRecognizer(modelsDirectory: dir)) { error in
            guard case FaceError.modelIntegrity(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains(FaceRecognizer.fileName), message)
            XCTAssertTrue(message.contains(FaceRecognizer.sha256), message)
        }
        try FileManager.default.removeItem(at: dir.appendingPathComponent(FaceLandmarkRegressor.fileName))
        XCTAssertThrowsError(try FaceLandmarkRegressor(modelsDirectory: dir)) { error in
            guard case FaceError.modelUnavailable(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains(FaceLandmarkRegressor.fileName), message)
        }
    }

    /// The shipped ONNX files, run by Debian's OpenCV 4.6 dnn, give what Intel's IR gives in
    /// OpenVINO's runtime (fp32) on the same crops of real faces (`bench/intel_onnx_check.py`).
    func testONNXThroughOpenCVMatchesIntelsRuntime() throws {
        let reference = try JSONDecoder().decode(Reference.self, from: Data(contentsOf: Self.fixtures.appendingPathComponent("openvino_reference.json")))
        XCTAssertEqual(reference.faces.count, 6)
        // The conversion itself: the ONNX in OpenVINO equals the IR in OpenVINO.
        XCTAssertTrue(reference.ir_vs_onnx_max_abs_difference.values.allSatisfy { $0 < 1e-5 }, "\(reference.ir_vs_onnx_max_abs_difference)")
        let recognizer = try FaceRecognizer.shared(), regressor = try FaceLandmarkRegressor.shared()
        for face in reference.faces {
            let crop = try Image(data: Data(contentsOf: Self.fixtures.appendingPathComponent(face.name + "_crop48.png")))
            let points = try regressor.rawOutputs(crop: crop)
            XCTAssertEqual(points.count, 10)
            for (a, b) in zip(points, face.landmarks) { XCTAssertEqual(Double(a), b, accuracy: 1e-4, face.name) }
            let aligned = try Image(data: Data(contentsOf: Self.fixtures.appendingPathComponent(face.name + "_aligned128.png")))
            let embedding = try recognizer.embedding(alignedFace: aligned)
            let norm = face.embedding.reduce(0) { $0 + $1 * $1 }.squareRoot()
            XCTAssertEqual(embedding.count, 256)
            var worst = 0.0
            for (a, b) in zip(embedding, face.embedding) { worst = max(worst, abs(Double(a) - b / norm)) }
            XCTAssertLessThan(worst, 1e-4, face.name)
        }
    }

    func testSimilarityTransformAndAlignment() throws {
        // Points that are the template scaled by 2, rotated by 30° and shifted: aligning undoes it exactly.
        let angle = Double.pi / 6
        let moved = FaceRecognizer.template.map { p in
            FacePoint(x: 2 * (p.x * cos(angle) - p.y * sin(angle)) + 300, y: 2 * (p.x * sin(angle) + p.y * cos(angle)) + 50)
        }
        // An image whose pixel (x, y) holds x and y in red and green at the template's scale.
        let w = 640, h = 480
        var px = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                // Back to template coordinates: the inverse of the map above.
                let dx = (Double(x) - 300) / 2, dy = (Double(y) - 50) / 2
                let tx = dx * cos(angle) + dy * sin(angle), ty = -dx * sin(angle) + dy * cos(angle)
                px[(y * w + x) * 3] = UInt8(max(0, min(255, tx.rounded())))
                px[(y * w + x) * 3 + 1] = UInt8(max(0, min(255, ty.rounded())))
            }
        }
        let aligned = try FaceRecognizer.alignedFace(in: Image(rgb: px, width: w, height: h), points: AlignmentPoints(moved))
        XCTAssertEqual(aligned.width, 128)
        let out = aligned.rgb().pixels
        for (x, y) in [(20, 20), (64, 64), (100, 110)] {
            XCTAssertEqual(Double(out[(y * 128 + x) * 3]), Double(x), accuracy: 1.5, "x at (\(x), \(y))")
            XCTAssertEqual(Double(out[(y * 128 + x) * 3 + 1]), Double(y), accuracy: 1.5, "y at (\(x), \(y))")
        }
        XCTAssertThrowsError(try AlignmentPoints([FacePoint(x: 0, y: 0)]))
        XCTAssertThrowsError(try FaceRecognizer.alignedFace(in: Image(rgb: px, width: w, height: h),
                                                            points: AlignmentPoints([FacePoint](repeating: FacePoint(x: 5, y: 5), count: 5)))) { e in
            guard case FaceError.invalidArgument = e else { return XCTFail("\(e)") }
        }
    }

    /// dlib's 68 points give the template's order: the image's left eye first, mouth corners last.
    func testFivePointsFromDlibAndTheRegressorAgree() throws {
        let engine = try FaceEngineTests.engine()
        let image = try Image(data: Fixtures.face("obama-480p.jpg"))
        let face = try XCTUnwrap(engine.analyze(image, options: AnalysisOptions(embedding: false)).first)
        let fromDlib = try XCTUnwrap(AlignmentPoints(landmarks68: face.landmarks68))
        XCTAssertLessThan(fromDlib.points[0].x, fromDlib.points[1].x)
        XCTAssertLessThan(fromDlib.points[3].x, fromDlib.points[4].x)
        XCTAssertLessThan(fromDlib.points[0].y, fromDlib.points[2].y)
        XCTAssertLessThan(fromDlib.points[2].y, fromDlib.points[3].y)
        let regressed = try FaceLandmarkRegressor.shared().points(in: image, box: face.box)
        let meanError = zip(regressed.points, fromDlib.points).map { $0.distance(to: $1) }.reduce(0, +) / 5
        XCTAssertLessThan(meanError / fromDlib.interEyeDistance, 0.1, "\(regressed.points) vs \(fromDlib.points)")
    }

    /// The same man in two photos is near, another man far, at the calibrated image-to-image lines.
    func testSamePersonNearAnotherFar() throws {
        let engine = try FaceEngineTests.engine()
        let recognizer = try FaceRecognizer.shared()
        func descriptor(_ name: String) throws -> [Float] {
            let image = try Image(data: Fixtures.face(name))
            let face = try XCTUnwrap(engine.analyze(image, options: AnalysisOptions(embedding: false)).first, name)
            let d = try recognizer.embedding(in: image, points: XCTUnwrap(AlignmentPoints(landmarks68: face.landmarks68)))
            XCTAssertEqual(d.reduce(0) { $0 + Double($1) * Double($1) }, 1, accuracy: 1e-5)
            return d
        }
        let model = FaceDescriptorModel.faceReidentification0095
        let same = try FaceMatcher.compare(descriptor("obama_small.jpg"), descriptor("obama-480p.jpg"), policy: FaceMatchPolicy(operatingPoint: .fmr1in10000), model: model)
        XCTAssertTrue(same.match, "distance \(same.distance), line \(same.threshold)")
        let other = try FaceMatcher.compare(descriptor("obama-480p.jpg"), descriptor("biden_half.jpg"), model: model)
        XCTAssertFalse(other.match, "distance \(other.distance), line \(other.threshold)")
        XCTAssertGreaterThan(other.distance, same.distance + 0.3)
        XCTAssertGreaterThan(same.similarity, 0.5)
        XCTAssertLessThan(other.similarity, 0.5)
    }
}
