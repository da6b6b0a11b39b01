import Foundation
import IDVTestSupport
import VirtualEMRTD
import XCTest

/// What both end-to-end chip tests over PC/SC (ChipActivationOverPCSCTests, ChipFlowOverPCSCTests) start from:
/// a private pcscd with the vpcd reader, a real `idvd serve` trusting the specimen PKI, specimen 9's page with
/// its chip folder (`idvd specimen --chip`, AA and CA keys, CAN) and specimen 10's page — another holder, same
/// portrait — whose MRZ does not open chip 9. The caller stops `server` (``stop()``).
struct ChipFlowLab {
    let daemon: PCSCDaemon
    let server: IDVDProcess
    /// Specimen 9's page (JPEG) and chip folder; specimen 10's page.
    let page: String, chip: String, otherPage: String
    /// Chip 9's CAN, a CAN that is not it, and its MRZ lines.
    let can: String, wrongCAN: String, mrz: [String]

    /// Throws `TestData.missing` when the dlib models are absent (a failure under CI, never a skip).
    init() throws {
        let models = ProcessInfo.processInfo.environment["IDV_MODELS_DIR"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/openidv/models")
        guard FileManager.default.fileExists(atPath: models.appendingPathComponent("dlib_face_recognition_resnet_model_v1.dat").path) else {
            throw TestData.missing("dlib models not found in \(models.path) (run scripts/bootstrap)")
        }
        daemon = try ChipLab.daemon()
        server = try IDVDProcess(settings: ["shutdown.grace_seconds": "2"])
        server.environment = ["IDVD_KEY_DIR": server.dir.appendingPathComponent("keys").path]
        let dir = server.dir.appendingPathComponent("specimen").path
        let portrait = IDVD.packageRoot.appendingPathComponent("Tests/Fixtures/selfie/katie_portrait.jpg").path
        let spec = try IDVD.run(["specimen", "--format", "td3", "--seed", "9", "--out", dir, "--jpeg", "90", "--chip", "--portrait", portrait])
        XCTAssertEqual(spec.status, 0, spec.errors)
        page = dir + "/specimen-9.jpg"
        chip = dir + "/specimen-9.chip"
        let other = try IDVD.run(["specimen", "--format", "td3", "--seed", "10", "--out", dir, "--jpeg", "90", "--portrait", portrait])
        XCTAssertEqual(other.status, 0, other.errors)
        otherPage = dir + "/specimen-10.jpg"
        try server.start(timeout: 20)
        let trust = try server.admin(["trust", "import", dir + "/test-pki/csca.cer", dir + "/test-pki/csca.crl"])
        XCTAssertEqual(trust.status, 0, trust.errors)
        can = try String(contentsOfFile: chip + "/private/can.txt", encoding: .ascii).trimmingCharacters(in: .whitespacesAndNewlines)
        wrongCAN = can == "000000" ? "111111" : "000000"
        mrz = try ChipLab.mrzLines(chip)
    }

    func stop() {
        _ = server.stop(within: 15)
        try? FileManager.default.removeItem(at: server.dir)
    }
}
