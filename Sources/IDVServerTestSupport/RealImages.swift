import Foundation
import IDVTestSupport

/// The committed real selfie fixtures (`Tests/Fixtures/selfie`, sources in its README) and the
/// dlib model check that every test running the real FaceKit analyser makes first.
public enum RealImages {
    /// `Tests/Fixtures/selfie`: frame folders (`katie_live`, `aoc_live`, `katie_turn`, …) and
    /// `katie_portrait.jpg`.
    public static let fixtures = IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures/selfie")

    /// The JPEG frames of fixture folder `dir`, in file-name order (at least 10; otherwise
    /// ``TestData/missing(_:)``: a failure under CI, a skip elsewhere).
    public static func frames(_ dir: String) throws -> [Data] {
        let d = fixtures.appendingPathComponent(dir)
        let names = try FileManager.default.contentsOfDirectory(atPath: d.path).filter { $0.hasSuffix(".jpg") }.sorted()
        guard names.count >= 10 else { throw TestData.missing("selfie fixture \(dir) missing") }
        return try names.map { try Data(contentsOf: d.appendingPathComponent($0)) }
    }

    /// `katie_portrait.jpg`: one still portrait (JPEG bytes).
    public static func portrait() throws -> Data { try Data(contentsOf: fixtures.appendingPathComponent("katie_portrait.jpg")) }

    /// Throws ``TestData/missing(_:)`` unless the dlib models are where `idvd` looks for them
    /// (`IDV_MODELS_DIR`, default `~/.cache/openidv/models`; `scripts/bootstrap` puts them there).
    public static func requireModels() throws {
        let dir = ProcessInfo.processInfo.environment["IDV_MODELS_DIR"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/openidv/models")
        guard FileManager.default.fileExists(atPath: dir.appendingPathComponent("dlib_face_recognition_resnet_model_v1.dat").path) else {
            throw TestData.missing("dlib models not found in \(dir.path) (run scripts/bootstrap)")
        }
    }
}
