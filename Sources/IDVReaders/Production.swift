import FaceKit
import Foundation
import IDVCore
import IDVEngine
import IDVRuntime
import IDVCrypto

extension IDVServices {
    /// The services `idvd serve` runs with: `vault` (idvd opens it from `templates.key_file`) and the
    /// readers this build links, FaceKit's
    /// `SelfieAnalyzer` (``FaceKitSelfieAnalyser``; nil when a dlib model file is missing — checked here, logged)
    /// and `DocumentReader` (``DocumentReaderAdapter``), and EMRTD's chip reader (``EMRTDChipVerifier``). Flows whose analyser is missing are not
    /// registered (``FlowRegistry/idv(_:)``).
    /// `policy` sets the analyser's liveness threshold and frame limit (``FaceKitSelfieAnalyser/production(policy:)``).
    public static func production(vault: any Vault, policy: WorkflowPolicy) -> IDVServices {
        var selfies: (any SelfieAnalysing)?
        // The model files are checked here, at start (the engine loads them lazily): when one is
        // missing the selfie flows are not offered — starting one answers 1033 workflowUnavailable —
        // instead of failing mid-way with 1030 at the first selfie.
        let missing = FaceEngine.missingModels()
        if !missing.isEmpty {
            Log.event("selfie analyser unavailable: dlib model files missing; selfie flows not offered (1033)", level: "error",
                      ["models_directory": .string(FaceEngine.defaultModelsDirectory.path),
                       "missing": .array(missing.map { .string($0.rawValue) }),
                       "fix": "run scripts/bootstrap, or set IDV_MODELS_DIR to the folder holding them"])
        } else {
            do {
                selfies = try FaceKitSelfieAnalyser.production(policy: policy)
            } catch {
                // A FaceKit error names the model file and, for an altered one, both hashes (no personal data).
                let reason = error is FaceError ? "\(error)" : "\(type(of: error))"
                Log.event("selfie analyser unavailable; selfie flows not offered", level: "warning", ["reason": .string(reason)])
            }
        }
        return IDVServices(documents: DocumentReaderAdapter(), selfies: selfies, vault: vault, chips: EMRTDChipVerifier(),
                           costing: ImageHeaderCosting(maxFramePixels: (selfies as? FaceKitSelfieAnalyser)?.analyzer.configuration.maximumFramePixels
                                                       ?? LivenessConfiguration().maximumFramePixels),
                           portraits: (selfies as? FaceKitSelfieAnalyser).map { FaceKitPortraitComparer(engine: $0.analyzer.engine, recognizer: $0.analyzer.recognizer) })
    }
}
