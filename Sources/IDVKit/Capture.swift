import Foundation

/// Why a capture produced nothing usable. The SDK reports it as `onRequestFailed` with code 1008
/// (`invalidImage`) and the message; the challenge stays open, so the user can try again.
public struct CaptureError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Captures the pages of an identity document after `setIDVDocumentScanProcessStartConfirmation(true, …)`.
/// On a phone: the camera UI. Returns the pages in order (front = page 0).
public protocol DocumentCaptureProvider: Sendable {
    func captureDocumentPages(workflow: RDNAIDVWorkflow) throws(CaptureError) -> [CapturedPage]
}

/// Captures a short selfie frame sequence after `setIDVSelfieProcessStartConfirmation(true, …)`
/// (the seeds' liveness "video"; e.g. ~3 s at 10 fps).
public protocol SelfieCaptureProvider: Sendable {
    func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedSelfie
}

/// Image files: JPEG (`FF D8 FF`) or PNG (`89 50 4E 47 0D 0A 1A 0A`), checked by magic bytes.
public enum ImageFiles {
    /// Largest accepted image file (the server's upload limit applies to the whole answer).
    public static let maxBytes = 8 * 1024 * 1024

    public static func isImage(_ d: Data) -> Bool {
        let b = [UInt8](d.prefix(8))
        if b.count >= 3, b[0] == 0xFF, b[1] == 0xD8, b[2] == 0xFF { return true }
        return b == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    }

    /// Reads one image file, with a clear error for a missing, empty, huge or non-image file.
    public static func read(_ url: URL) throws(CaptureError) -> Data {
        let attrs: [FileAttributeKey: Any]
        do { attrs = try FileManager.default.attributesOfItem(atPath: url.path) } catch {
            throw CaptureError("cannot read \(url.lastPathComponent): no such file")
        }
        let size = (attrs[.size] as? NSNumber)?.intValue ?? 0
        guard size > 0 else { throw CaptureError("\(url.lastPathComponent) is empty") }
        guard size <= maxBytes else { throw CaptureError("\(url.lastPathComponent) is larger than \(maxBytes / 1_048_576) MiB") }
        let d: Data
        do { d = try Data(contentsOf: url) } catch { throw CaptureError("cannot read \(url.lastPathComponent)") }
        guard isImage(d) else { throw CaptureError("\(url.lastPathComponent) is not a JPEG or PNG image") }
        return d
    }
}

/// Linux/desktop document capture: the page images are files (front first).
public struct ImageFileDocumentCapture: DocumentCaptureProvider {
    public let pageFiles: [URL]
    public init(pageFiles: [URL]) { self.pageFiles = pageFiles }

    public func captureDocumentPages(workflow: RDNAIDVWorkflow) throws(CaptureError) -> [CapturedPage] {
        guard !pageFiles.isEmpty else { throw CaptureError("no document page files were given") }
        guard pageFiles.count <= 2 else { throw CaptureError("a document has at most 2 pages (front, back); got \(pageFiles.count)") }
        var pages: [CapturedPage] = []
        for (i, f) in pageFiles.enumerated() { pages.append(CapturedPage(pageIndex: i, image: try ImageFiles.read(f))) }
        return pages
    }
}

/// Linux/desktop selfie capture: a folder of frames (`*.jpg`, `*.jpeg`, `*.png`), taken in file-name
/// order, at most `maxFrames`, played as `framesPerSecond` (e.g. `ffmpeg -i clip.mp4 -vf fps=10 dir/%03d.jpg`).
public struct FrameFolderSelfieCapture: SelfieCaptureProvider {
    public let folder: URL
    public let framesPerSecond: Double
    public let maxFrames: Int
    public init(folder: URL, framesPerSecond: Double = 10, maxFrames: Int = 60) {
        self.folder = folder
        self.framesPerSecond = framesPerSecond
        self.maxFrames = maxFrames
    }

    public func captureSelfie(useBackCamera: Bool, workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedSelfie {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder.path) } catch {
            throw CaptureError("cannot read the frame folder \(folder.lastPathComponent)")
        }
        let frames = names.filter { ["jpg", "jpeg", "png"].contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
        guard !frames.isEmpty else { throw CaptureError("the frame folder \(folder.lastPathComponent) has no JPEG/PNG frames") }
        var out: [Data] = []
        for n in frames.prefix(maxFrames) { out.append(try ImageFiles.read(folder.appendingPathComponent(n))) }
        return CapturedSelfie(frames: out, framesPerSecond: framesPerSecond)
    }
}
