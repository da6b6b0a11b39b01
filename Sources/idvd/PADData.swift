import FaceKit
import Foundation
import Imaging
import IDVCrypto

/// Video frames decoded once by `ffmpeg` and kept on disk, so evaluations over the same clips
/// (`idvd bench liveness`, `idvd liveness calibrate`) do not decode them again. A video's frames
/// live in `<directory>/<key>/frame_NNNN.jpg`, the key a SHA-256 of the video's absolute path,
/// size, modification time, the rate and the start offset; a folder is read as it is. The cache's
/// folders are private to the user (0700) and its files too (0600). `idvd liveness calibrate` does
/// not use it: an operator's captures are decoded in memory and never written to disk.
struct FrameCache {
    /// nil: no cache (frames are decoded into a temporary folder and removed).
    let directory: URL?

    /// `IDVD_FRAME_CACHE`, else `~/.cache/openidv/liveness-frames` (`XDG_CACHE_HOME` when set).
    static var defaultDirectory: URL {
        let env = ProcessInfo.processInfo.environment
        if let d = env["IDVD_FRAME_CACHE"], !d.isEmpty { return URL(fileURLWithPath: d, isDirectory: true) }
        let base = env["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache", isDirectory: true)
        return base.appendingPathComponent("openidv/liveness-frames", isDirectory: true)
    }

    /// Every frame of `path` (a video decoded at `fps` from `offset` seconds, scaled to at most 640 px
    /// wide as `idvd liveness analyze` does; or a folder's JPEG/PNG files in name order).
    func frames(_ path: String, fps: Double, offset: Double = 0) throws -> [Data] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { throw CLIError("no such file or folder: \(path)") }
        if isDir.boolValue { return try SelfieInput.folderFrames(URL(fileURLWithPath: path)) }
        guard let directory else { return try SelfieInput.videoFrames(path, fps: fps, start: offset, seconds: nil) }
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        let mtime = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let key = Crypto.sha256Hex("\(url.path)|\(size)|\(mtime)|\(fps)|\(offset)|640")
        let dir = directory.appendingPathComponent(key, isDirectory: true)
        let done = dir.appendingPathComponent(".complete")
        if FileManager.default.fileExists(atPath: done.path) { return try SelfieInput.folderFrames(dir) }
        let frames = try SelfieInput.videoFrames(path, fps: fps, start: offset, seconds: nil)
        // Written beside, then renamed into place: another process decoding the same video at the
        // same time finds either nothing or a complete folder.
        let partial = directory.appendingPathComponent("\(key).partial-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A cache made before it was private: closed to other users now.
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        try FileManager.default.createDirectory(at: partial, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        func write(_ data: Data, _ name: String) throws {
            let file = partial.appendingPathComponent(name).path
            guard FileManager.default.createFile(atPath: file, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw CLIError("cannot write the frame cache file \(file)")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
        for (i, f) in frames.enumerated() { try write(f, String(format: "frame_%04d.jpg", i + 1)) }
        try write(Data(url.path.utf8), ".complete")
        if FileManager.default.fileExists(atPath: dir.path), !FileManager.default.fileExists(atPath: done.path) {
            try? FileManager.default.removeItem(at: dir)   // left incomplete by an interrupted run
        }
        if (try? FileManager.default.moveItem(at: partial, to: dir)) == nil {
            try? FileManager.default.removeItem(at: partial)   // another process put it there first
        }
        return frames
    }
}

/// Cutting a capture into the sequences a PAD evaluation judges (ISO/IEC 30107-3 presentations).
enum PADWindows {
    /// Non-overlapping windows of `perWindow` frames from the start; a remainder of at least
    /// `minimumFraction` of a window (default 5/6: 2.5 s of a 3 s window) is a last, shorter window,
    /// so a clip of 2.5–3 s still counts once.
    static func cut(_ count: Int, perWindow: Int, minimumFraction: Double = 5.0 / 6.0) -> [Range<Int>] {
        guard perWindow > 0 else { return [] }
        var out: [Range<Int>] = []
        var start = 0
        while start + perWindow <= count {
            out.append(start..<(start + perWindow))
            start += perWindow
        }
        if count - start >= Int((minimumFraction * Double(perWindow)).rounded(.up)) { out.append(start..<count) }
        return out
    }
}

/// The fixed dev/eval split of the shared liveness data by person (`bench/liveness-split.json`,
/// written by `bench/liveness_split.py` before any level was tuned; docs/LIVENESS.md).
struct PADSplit: Decodable {
    /// Person id → "dev" or "eval".
    let person_split: [String: String]
    /// Bona fide clip (relative to `testdata/liveness`) → person id.
    let bona_fide_clips: [String: String]
    /// Real attack clip (relative to `testdata/liveness`) → the person shown.
    let attack_clips: [String: String]
    /// Still image (relative to `testdata`) → person id (held prints are made of them).
    let stills: [String: String]
    /// LFW people of each split, in the rule's (hash) order; held prints use the first N.
    let lfw_dev_first_by_hash: [String]
    let lfw_eval_first_by_hash: [String]

    static func load(_ path: String) throws -> PADSplit {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("no split file at \(path) (run from the repository root, or --split FILE)")
        }
        do { return try JSONDecoder().decode(PADSplit.self, from: data) } catch {
            throw CLIError("\(path) is not a liveness split file: \(error)")
        }
    }

    func split(of person: String) throws -> String {
        guard let s = person_split[person] else { throw CLIError("person \(person) is not in the split file") }
        return s
    }
}
