import Foundation
import IDVKit

/// The sample app's selfie capture when the server asks the screen to flash an illumination
/// sequence (presence, docs/WORKFLOWS.md): a terminal on Linux has no screen facing a face and no
/// camera, so the frames of FRAME_FOLDER are handed with the sequence to `idvd presence simulate`
/// (`--flash-simulator PATH`), which renders what a phone's front camera would record under it
/// (IDVTools `PhoneCaptureSimulator`: skin reflectance, distance, ambient light, white balance and
/// exposure, noise, JPEG) and the frames' capture times. Each capture draws a new random scene, so no
/// two uploads share bytes. Without a simulator the app cannot flash: the SDK tells the server, which
/// asks again with its fallback (the head-movement challenge).
struct SimulatedFlashCapture: SelfieCaptureProvider {
    let folder: URL
    /// The `idvd` executable whose `presence simulate` renders the reflection.
    let simulator: URL
    /// The person chose the head movements instead (`selfie-start: capture FOLDER no-flash`).
    let declined: Bool
    let ui: Terminal
    /// The scene's ambient light, lux (nil: the simulator draws a random room, 50–1 000 lux).
    var ambientLux: Double? = nil

    var canFlashIllumination: Bool { true }

    func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedSelfie {
        try FrameFolderSelfieCapture(folder: folder).captureSelfie(useBackCamera: useBackCamera, workflow: workflow)
    }

    func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow, challenge: RDNALivenessChallenge?,
                       illumination: RDNAIlluminationChallenge) throws(CaptureError) -> CapturedSelfie {
        ui.fact("presence", "the screen flashes \(illumination.steps.count) colours over \(illumination.totalMilliseconds) ms")
        if declined {
            ui.fact("presence", "declined: the head-movement check instead")
            throw CaptureError.illuminationDeclined
        }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("idv-flash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let steps = illumination.steps.map { "{\"rgb\":[\($0.red),\($0.green),\($0.blue)],\"ms\":\($0.milliseconds)}" }
        let sequence = work.appendingPathComponent("sequence.json"), out = work.appendingPathComponent("frames")
        do {
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try Data("[\(steps.joined(separator: ","))]".utf8).write(to: sequence)
        } catch { throw CaptureError("cannot write the illumination sequence for the simulator") }
        let p = Process()
        p.executableURL = simulator
        p.arguments = ["presence", "simulate", folder.path, "--sequence", sequence.path, "--out", out.path]
            + (ambientLux.map { ["--ambient-lux", String(format: "%.0f", $0)] } ?? [])
        if let ambientLux { ui.fact("presence", String(format: "a dimmer room this time (simulated): %.0f lux", ambientLux)) }
        p.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        p.standardError = errors
        do { try p.run() } catch { throw CaptureError("cannot run the flash simulator \(simulator.path)") }
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw CaptureError("the flash simulator failed: \(message.split(separator: "\n").first.map(String.init) ?? "exit \(p.terminationStatus)")")
        }
        var selfie = try FrameFolderSelfieCapture(folder: out, maxFrames: 150).captureSelfie(useBackCamera: useBackCamera, workflow: workflow)
        guard let data = FileManager.default.contents(atPath: out.appendingPathComponent("frame_times_ms.json").path),
              let times = try? JSONDecoder().decode([Double].self, from: data), times.count == selfie.frames.count else {
            throw CaptureError("the flash simulator wrote no frame times")
        }
        selfie.frameTimesMs = times
        ui.fact("presence", "\(selfie.frames.count) frames captured under the flashing screen (simulated)")
        return selfie
    }
}
