internal import CVision

// FaceKit — face analysis on dlib: detection, landmarks, 128-d embeddings, comparison and quality
// (`FaceEngine`), liveness evidence (`SelfieAnalyzer`). Images are Imaging's `Image`. There is
// deliberately no type named `FaceKit`, so `FaceKit.FaceEngine` names this module's type.

/// The dlib version the C++ shim was built against, e.g. "19.24.0".
public var dlibVersion: String { String(cString: cv_dlib_version()) }

/// A NUL-terminated C message buffer as a String.
func messageString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Limits the BLAS (OpenBLAS) used by dlib's networks to `threads` threads; false when the BLAS
/// offers no such control. For single-core benchmarks.
@discardableResult
public func setBLASThreads(_ threads: Int) -> Bool { cv_set_blas_threads(Int32(threads)) == 1 }
