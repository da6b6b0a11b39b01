import IDVCore

/// The OpenIDV client SDK: the seeds' `RDNA` API over the `idvd` wire protocol.
/// Foundation (and FoundationNetworking on Linux) only, so it builds for iOS too.
///
/// - ``RDNA``: the façade (`initialize`, `setUser`, `setActivationCode`, `setPassword`, the IDV
///   `set…` answers, the post-login `initiate…` calls, `resetAuthState`, `logOff`), each returning
///   the synchronous ``RDNAError`` at once, results as callbacks.
/// - Delegates: ``RDNACallbacks`` and the four IDV protocols of the seeds; ``RDNA/events`` (an
///   `AsyncStream` of ``RDNAEvent``) and ``RDNA/asyncAPI`` for `async` code.
/// - ``WireMapping``: the one table between seed calls/callbacks and the wire protocol.
/// - Capture providers: ``DocumentCaptureProvider``, ``SelfieCaptureProvider`` (file-based
///   ``ImageFileDocumentCapture`` / ``FrameFolderSelfieCapture`` for Linux and tests).
public enum IDVKit {
    public static let version = OpenIDV.version
}
