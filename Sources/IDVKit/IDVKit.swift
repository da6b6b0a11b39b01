import IDVCore

/// The OpenIDV client SDK: the seeds' `RDNA` API over the `idvd` wire protocol.
/// Foundation (and FoundationNetworking on Linux) only, so it builds for iOS too.
public enum IDVKit {
    public static let version = OpenIDV.version
}
