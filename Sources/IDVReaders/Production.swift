import FaceKit
import Foundation
import IDVCore
import IDVEngine
import IDVCrypto

extension IDVServices {
    /// The services `idvd serve` runs with: the vault from `templates.key_file` (default: ``KeyLocation``,
    /// apart from the database, created 0600 when missing; ``ServerConfig/openVault()``) and the analysers this build links: FaceKit's
    /// `SelfieAnalyzer` (``FaceKitSelfieVerifier``; nil when a dlib model file is missing — checked here, logged)
    /// and `DocumentReader` (``DocumentReaderVerifier``), and EMRTD's chip reader (``EMRTDChipVerifier``). Flows whose analyser is missing are not
    /// registered (``FlowRegistry/idv(_:)``).
    public static func production(config: ServerConfig) throws -> IDVServices {
        let vault = try config.openVault()
        var selfies: (any SelfieVerifying)?
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
                selfies = try FaceKitSelfieVerifier.production(policy: config.workflow)
            } catch {
                // A FaceKit error names the model file and, for an altered one, both hashes (no personal data).
                let reason = error is FaceError ? "\(error)" : "\(type(of: error))"
                Log.event("selfie analyser unavailable; selfie flows not offered", level: "warning", ["reason": .string(reason)])
            }
        }
        return IDVServices(documents: DocumentReaderVerifier(), selfies: selfies, vault: vault, policy: config.workflow, chips: EMRTDChipVerifier(),
                           costing: ImageHeaderCosting(maxFramePixels: (selfies as? FaceKitSelfieVerifier)?.analyzer.configuration.maximumFramePixels
                                                       ?? LivenessConfiguration().maximumFramePixels),
                           portraits: (selfies as? FaceKitSelfieVerifier).map { FaceKitPortraitComparer(engine: $0.analyzer.engine, recognizer: $0.analyzer.recognizer) })
    }
}
