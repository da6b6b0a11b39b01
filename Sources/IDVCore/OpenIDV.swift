/// Facts about this build of OpenIDV.
public enum OpenIDV {
    /// Semantic version of the platform (server, SDK and wire protocol move together).
    public static let version = "0.1.0"
}
