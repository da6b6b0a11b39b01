import Foundation
import IDVTestSupport
import XCTest
@testable import FaceKit
import Imaging

/// The shipped `Models/dlib/frontal_face_detector.dat` (dlib's detector written by `serialize`,
/// loaded with `deserialize` in milliseconds) against dlib's own `get_frontal_face_detector()`.
final class HOGDetectorFileTests: XCTestCase {
    /// Every box, score and sub-detector of the two detectors on real photographs: the faces of
    /// `testdata/faces` and the passport and ID card specimens of `testdata/mrz-images/specimens`,
    /// at the default options and, on the faces, with a lowered threshold (more, weaker detections).
    func testShippedHOGDetectorDetectsAsDlibsOwn() throws {
        let shipped = try FaceEngine(hogDetector: .shipped)
        let dlibs = try FaceEngine(hogDetector: .builtIn)
        var files: [URL] = []
        for folder in ["faces", "mrz-images/specimens"] {
            let dir = try TestData.sharedFolder(folder)
            files += try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
                .filter { ["jpg", "jpeg", "png"].contains($0.pathExtension.lowercased()) }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        }
        XCTAssertGreaterThan(files.count, 20)
        var faces = 0
        for file in files {
            let image = try Image(data: Data(contentsOf: file))
            var optionSets = [DetectionOptions()]
            if file.path.contains("/faces/") { optionSets.append(DetectionOptions(adjustThreshold: -0.5)) }
            for options in optionSets {
                let a = try shipped.detect(in: image, options: options)
                let b = try dlibs.detect(in: image, options: options)
                XCTAssertEqual(a, b, "\(file.lastPathComponent), threshold \(options.adjustThreshold)")
                faces += a.count
            }
        }
        XCTAssertGreaterThan(faces, 20, "the comparison covers real detections")
    }

    func testTheShippedFileIsTheOneHashedAndTheExportWritesItAgain() throws {
        XCTAssertEqual(try TexturePAD.sha256(ofFile: FaceEngine.bundledHOGDetector), FaceEngine.hogDetectorSHA256)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hog-\(UUID().uuidString).dat")
        defer { try? FileManager.default.removeItem(at: out) }
        XCTAssertEqual(try FaceEngine.exportHOGDetector(to: out), FaceEngine.hogDetectorSHA256)
        XCTAssertEqual(try Data(contentsOf: out), try Data(contentsOf: FaceEngine.bundledHOGDetector))
    }

    func testAnAlteredDetectorFileIsRefused() throws {
        var bytes = try Data(contentsOf: FaceEngine.bundledHOGDetector)
        bytes[bytes.count / 2] ^= 0x01
        let altered = FileManager.default.temporaryDirectory.appendingPathComponent("hog-altered-\(UUID().uuidString).dat")
        try bytes.write(to: altered)
        defer { try? FileManager.default.removeItem(at: altered) }
        XCTAssertThrowsError(try FaceEngine(hogDetector: .file(altered, sha256: FaceEngine.hogDetectorSHA256))) { error in
            guard case FaceError.modelIntegrity(let m) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(m.contains("SHA-256"), m)
        }
        let missing = altered.appendingPathExtension("absent")
        XCTAssertThrowsError(try FaceEngine(hogDetector: .file(missing, sha256: FaceEngine.hogDetectorSHA256))) { error in
            guard case FaceError.modelUnavailable = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try FaceEngine(hogDetector: .file(FaceEngine.bundledHOGDetector, sha256: "abc"))) { error in
            guard case FaceError.invalidArgument = error else { return XCTFail("\(error)") }
        }
    }
}
