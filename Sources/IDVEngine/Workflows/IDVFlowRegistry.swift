import Foundation
import IDVCore

// MARK: - Registry

extension FlowRegistry {
    /// The core registry plus the IDV flows this build can run: the template-status check and
    /// opt-out always; the document flows when `services.documents` is set; the selfie flows when
    /// `services.selfies` is set; activation with IDV (workflows 0–5) when both are.
    public static func idv(_ services: IDVServices) -> FlowRegistry {
        var r = FlowRegistry.standard()
        r.registerIDV(services)
        return r
    }

    /// Every IDV flow, whether or not its analysers are present — for maintenance that only
    /// closes runs (`idvd admin purge-expired`), never for serving.
    public static func idvMaintenance(vault: any Vault) -> FlowRegistry {
        var r = FlowRegistry.standard()
        r.registerIDV(IDVServices(documents: nil, selfies: nil, vault: vault), includeUnavailable: true)
        return r
    }

    public mutating func registerIDV(_ services: IDVServices, includeUnavailable: Bool = false) {
        self.services = services
        let documents = services.documents != nil || includeUnavailable
        let selfies = services.selfies != nil || includeUnavailable
        if documents && selfies {
            register(IdentityFlow(.activation, services: services), activationFor: IDVWorkflow.allCases.filter(\.isPreLogin))
            register(IdentityFlow(.kyc, services: services))
        } else {
            unavailable.formUnion([IdentityFlow(.activation, services: services).name, IdentityFlow(.kyc, services: services).name])
        }
        if documents { register(DocumentScanFlow(services: services)) } else { unavailable.insert(DocumentScanFlow(services: services).name) }
        if selfies {
            register(ServerBiometricFlow(services: services))
            register(OptInFlow(services: services))
        } else {
            unavailable.formUnion([ServerBiometricFlow(services: services).name, OptInFlow(services: services).name])
        }
        register(OptOutFlow(services: services))
        register(TemplateStatusFlow(services: services))
    }
}
