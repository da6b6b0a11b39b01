// Names shared by the server and the SDK, declared once: the IDV challenges and events the
// workflow engine adds to the core ones (``WireName`` in Wire.swift), the upload-challenge set, and
// the registry names of the flows (`POST /v1/flows/{name}`). docs/WORKFLOWS.md gives every
// challenge, answer and event.

extension WireName {
    // Challenges added by the workflow engine (docs/WORKFLOWS.md).
    /// Upload of the captured document pages (answer on `POST /v1/session/upload`):
    /// `{"pages":[{"page_index":0,"image":"<base64 JPEG/PNG>"}]}` or `{"cancel":true}`.
    public static let uploadIDVDocumentPages = "uploadIDVDocumentPages"
    /// Upload of the captured selfie frames (answer on `POST /v1/session/upload`):
    /// `{"frames":["<base64 JPEG/PNG>", …]}` or `{"cancel":true}`.
    public static let uploadIDVSelfieFrames = "uploadIDVSelfieFrames"
    /// Seed 004: the captured frame for approval; answer `{"status": 0|1|2}` (`RDNAIDVStatus`).
    public static let onIDVOptInCapturedFrameConfirmation = "onIDVOptInCapturedFrameConfirmation"
    // Terminal events.
    public static let onIDVActivatedCustomerKYCResponse = "onIDVActivatedCustomerKYCResponse"
    public static let onIDVAdditionalDocumentScan = "onIDVAdditionalDocumentScan"
    public static let onIDVCheckUserBiometricTemplateStatus = "onIDVCheckUserBiometricTemplateStatus"
    public static let onIDVServerBiometricAuthenticationResult = "onIDVServerBiometricAuthenticationResult"
    public static let onIDVBiometricOptInStatus = "onIDVBiometricOptInStatus"
    public static let onIDVBiometricOptOutStatus = "onIDVBiometricOptOutStatus"

    /// The challenges whose answers carry images and therefore go to `POST /v1/session/upload`
    /// (megabyte limit) instead of `POST /v1/session/answer` (kilobytes). Server and SDK both route
    /// by this set.
    public static let uploadChallenges: Set<String> = [uploadIDVDocumentPages, uploadIDVSelfieFrames, readIDVDocumentChip]
}

/// Registry names of the server's flows. The post-login ones are what a logged-in client starts
/// with `POST /v1/flows/{name}` (the SDK's post-login initiations, seeds 000, 001, 003, 004).
public enum FlowName {
    /// The core authentication flow (`getUser` → activation / password / LDA → `onUserLoggedIn`).
    public static let auth = "auth"
    /// Activation with IDV (seed 002; IDV workflows 0–5), run inside `auth` after the activation code.
    public static let activation = "idv.activation"
    /// Post-login KYC of an activated customer (seed 000, workflow 6).
    public static let kyc = "idv.postlogin.kyc"
    /// Additional document scan (seed 003, workflow 7).
    public static let documentScan = "idv.postlogin.document_scan"
    /// Server biometric authentication against the stored template (seed 001, workflow 8).
    public static let serverBiometric = "idv.postlogin.server_biometric"
    /// Biometric template opt-in (seed 004, workflow 10).
    public static let optIn = "idv.postlogin.optin"
    /// Biometric template opt-out (seed 004, workflow 11).
    public static let optOut = "idv.postlogin.optout"
    /// `checkIDVUserBiometricTemplateStatus`: 100 when a template exists, 600 when none.
    public static let templateStatus = "idv.template_status"

    /// The flows a logged-in client starts with `POST /v1/flows/{name}`, in the order of the seeds'
    /// post-login initiations (000 KYC, 003 document scan, 001 server biometric, 004 opt-in and
    /// opt-out, template status). The server's registry offers exactly these as client-startable
    /// (`FlowRegistry.standard()`); its refusal of another name lists them.
    public static let clientStartable: [String] = [kyc, documentScan, serverBiometric, optIn, optOut, templateStatus]
}
