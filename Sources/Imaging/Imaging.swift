// Imaging — image decoding and pixel operations beneath the readers (FaceKit, DocumentReader):
// `Image` (JPEG/PNG decode with a pixel limit checked before allocation, EXIF orientation, resize,
// crop, grey/RGB, JPEG/PNG encode) over libjpeg-turbo and libpng through the CImaging C shim, and
// `SplitMix64`, the seeded generator that makes synthesised images (attacks, specimens,
// augmentations, training lines) reproducible bit for bit.

/// A NUL-terminated C message buffer as a String.
func messageString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
