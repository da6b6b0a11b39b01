import Foundation

/// The one store the engine holds, typed: the session and user core (``Store``), the IDV workflow
/// tables (``WorkflowStore``), the relying party's read model and review queue
/// (``RelyingPartyStore``), the webhook outbox (``WebhookStore``), verification links
/// (``VerificationLinkStore``), chip trust material (``TrustMaterialStore``) and the selfie replay
/// check's frame digests (``CaptureDigestStore``). Both stores
/// (IDVStoreSQLite, IDVStorePostgres) implement every capability, so nothing above asks at run
/// time whether a store can do something: a store that cannot does not compile as one.
public typealias EngineStore = RelyingPartyStore & WebhookStore & VerificationLinkStore & TrustMaterialStore & CaptureDigestStore & ErasureStore & SigningKeyStore & RetentionStore
