import Foundation
import IDVCore
import IDVKit
import XCTest
import IDVTestSupport

/// A selfie capture provider that hands out one frame folder per capture, in order.
final class SequenceSelfieCapture: SelfieCaptureProvider, @unchecked Sendable {
    private let folders: [URL]
    private let lock = NSLock()
    private var next = 0
    init(_ folders: [URL]) { self.folders = folders }
    var captures: Int { lock.withLock { next } }

    func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedSelfie {
        let folder = lock.withLock { () -> URL in
            defer { next += 1 }
            return folders[min(next, folders.count - 1)]
        }
        return try FrameFolderSelfieCapture(folder: folder).captureSelfie(useBackCamera: useBackCamera, workflow: workflow)
    }
}

/// Issue 34 through the SDK against a real `idvd` (real FaceKit): a capture the server's PAD policy
/// is unsure about — the face leaves the view for a second — reaches the app as the selfie
/// challenge again (`getIDVSelfieProcessStartConfirmation`) with 1066 and its guidance on
/// ``RDNA/currentChallenge``, no attempt used; the next capture is decided with it.
final class PADRetakeSDKTests: XCTestCase {
    let password = "Retake, not refused 2026"

    /// `katie_live` with frames 11–21 replaced by an empty grey scene (made by Debian's ffmpeg).
    func faceAwayFolder() throws -> URL {
        let ffmpeg = try TestData.tool("/usr/bin/ffmpeg")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pad-retake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let source = Paths.fixtures.appendingPathComponent("katie_live")
        let names = try FileManager.default.contentsOfDirectory(atPath: source.path).filter { $0.hasSuffix(".jpg") }.sorted()
        XCTAssertEqual(names.count, 30)
        let grey = dir.appendingPathComponent("grey.jpg.tmp")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ffmpeg)
        p.arguments = ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=c=gray:s=384x384", "-frames:v", "1", "-f", "mjpeg", grey.path]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        for (i, name) in names.enumerated() {
            let from = (10..<21).contains(i) ? grey : source.appendingPathComponent(name)
            try FileManager.default.copyItem(at: from, to: dir.appendingPathComponent(name))
        }
        try FileManager.default.removeItem(at: grey)
        return dir
    }

    func testAnUnsureCaptureComesBackAsTheSelfieChallengeWithGuidanceAndNoAttemptUsed() async throws {
        let away = try faceAwayFolder()
        defer { try? FileManager.default.removeItem(at: away) }
        let server = try IDVDServer()
        try server.start()
        defer { server.stop() }
        let code = try server.createUser("ruth")
        let sdk = RDNA()
        let api = sdk.asyncAPI
        _ = try await api.initialize(RDNAConfiguration(serverURL: server.url, requestTimeout: 120))
        _ = try await api.setUser("ruth")
        _ = try await api.setActivationCode(code)
        let login = try await api.setPassword(password, challengeMode: .set)
        XCTAssertEqual(login.last?.name, "onUserLoggedIn")
        let capture = SequenceSelfieCapture([away, Paths.fixtures.appendingPathComponent("katie_live")])
        sdk.setSelfieCaptureProvider(capture)

        var ev = try await api.initiateIDVBiometricOptIn()
        if case let .onRequestFailed(_, e)? = ev.last, e.longErrorCode == 1007 {
            throw TestData.missing("this idvd does not offer the IDV workflows (1007: \(e.errorString ?? ""))")
        }
        ev = try await api.setPassword(password, challengeMode: .biometricOptIn)
        XCTAssertEqual(ev.last, .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginOptIn))
        let attempts = try XCTUnwrap(sdk.currentChallenge).attemptsLeft

        // The face leaves the view: not an attack, a retake — the same selfie screen, with the guidance.
        ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginOptIn)
        XCTAssertEqual(ev.last, .getIDVSelfieProcessStartConfirmation(idvWorkflow: .postLoginOptIn), "\(ev.map(\.name))")
        let retake = try XCTUnwrap(sdk.currentChallenge)
        XCTAssertEqual(retake.name, "uploadIDVSelfieFrames")
        XCTAssertEqual(retake.error?.longErrorCode, 1066)
        XCTAssertEqual(retake.error?.errorString, IDVErrorCode.selfieRetake.message)
        XCTAssertTrue(retake.error?.errorString.contains("keep your face in the frame") == true)
        XCTAssertEqual(retake.attemptsLeft, attempts, "the retake uses no attempt")
        XCTAssertTrue(retake.status?.isSuccess ?? true, "no verdict was reached: \(String(describing: retake.status))")

        // The retake, the whole capture: decided with the first one — live, the frame to confirm.
        ev = try await api.setIDVSelfieProcessStartConfirmation(true, useDeviceBackCamera: false, idvWorkflow: .postLoginOptIn)
        guard case .onIDVOptInCapturedFrameConfirmation? = ev.last else { return XCTFail("\(ev.map(\.name)) \(String(describing: sdk.currentChallenge?.error))") }
        XCTAssertEqual(capture.captures, 2)
    }
}
