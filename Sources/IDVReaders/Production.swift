import FaceKit
import Foundation
import IDVCore
import IDVEngine
import IDVCrypto

extension IDVServices {
    /// The services `idvd serve` runs with: the vault from `templates.key_file` (default
    /// `<db.path>.key`, created 0600 when missing; ``ServerConfig/openVault()``) and the analysers this build links: FaceKit's
    /// `SelfieAnalyzer` (``FaceKitSelfieVerifier``; nil when the dlib models are missing — logged)
    /// and `DocumentReader` (``DocumentReaderVerifier``), and EMRTD's chip reader (``EMRTDChipVerifier``). Flows whose analyser is missing are not
    /// registered (``FlowRegistry/idv(_:)``).
    public static func production(config: ServerConfig) throws -> IDVServices {
        let vault = try config.openVault()
        var selfies: (any SelfieVerifying)?
        do {
            selfies = try FaceKitSelfieVerifier.production(policy: config.workflow)
        } catch {
            Log.event("selfie analyser unavailable; selfie flows not offered", level: "warning", ["reason": .string("\(type(of: error))")])
        }
        return IDVServices(documents: DocumentReaderVerifier(), selfies: selfies, vault: vault, policy: config.workflow, chips: EMRTDChipVerifier())
    }
}
