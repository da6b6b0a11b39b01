import IDVCore

/// The OpenIDV client SDK: the seeds' `RDNA` API over the `idvd` wire protocol, in the five
/// codelabs' exact spellings (their own `RDNAIDVService.swift` and `RDNAIDVDelegateManager.swift`
/// compile and run unchanged with `import RELID`, docs/SEED-CONFORMANCE.md). Foundation (and
/// FoundationNetworking on Linux) only, so it builds for iOS too.
///
/// - Seed types: ``RDNAError`` (`errorString: String!`), ``RDNARequestStatus`` (`statusCode: Int32`),
///   ``RDNAChallengeResponse``, ``RDNAIDVStatus``, ``RDNAIDVDownloadStatus``; the workflows' and
///   modes' seed names (`.IDV_ACTIVATION`, `.CHALLENGE_OP_SET`, …) on ``RDNAIDVWorkflow`` / ``RDNAChallengeOpMode``.
/// - ``RDNA``: the façade (`initialize`, `setUser`, `setActivationCode`, `setPassword`, the IDV
///   `set…` answers, the post-login `initiate…` calls, `resetAuthState`, `logOff`), each returning
///   the synchronous ``RDNAError`` at once, results as callbacks.
/// - Delegates: ``RDNACallbacks`` and the four IDV protocols of the seeds; ``RDNA/events`` (an
///   `AsyncStream` of ``RDNAEvent``) and ``RDNA/asyncAPI`` for `async` code.
/// - ``WireMapping``: the one table between seed calls/callbacks and the wire protocol.
/// - Capture providers: ``DocumentCaptureProvider``, ``SelfieCaptureProvider`` (file-based
///   ``ImageFileDocumentCapture`` / ``FrameFolderSelfieCapture`` for Linux and tests). Under
///   active liveness the server's ``RDNALivenessChallenge`` (``RDNA/pendingLivenessChallenge``)
///   is handed to the selfie provider with each capture; show its instructions to the user.
/// - LDA (local device authentication): ``LDAProvider`` set with ``RDNA/setLDAProvider(_:)`` —
///   an Ed25519 device key plus a user-presence check. ``FileLDAProvider`` on Linux (key file
///   mode 0600, system libsodium loaded at run time with `dlopen`, no link-time dependency),
///   ``CryptoKitLDAProvider`` on Apple platforms (`Curve25519.Signing`); ``PlatformLDAProvider``
///   names the one of this platform. Failures are ``LDAError``s; the SDK falls back to the password.
public enum IDVKit {
    public static let version = OpenIDV.version
}
