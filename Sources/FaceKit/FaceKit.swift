import CVision

/// Face analysis on dlib: detection, landmarks, 128-d embeddings, comparison, quality, liveness.
public enum FaceKit {
    /// The dlib version the C++ shim was built against, e.g. "19.24.0".
    public static var dlibVersion: String { String(cString: cv_dlib_version()) }
}
