import CCairo

/// Page image → document report (MRZ, fields, portrait, checks), and the specimen generator.
public enum DocumentReader {
    /// The Cairo version used by the specimen generator, e.g. "1.16.0".
    public static var cairoVersion: String { String(cString: cairo_version_string()) }
}
